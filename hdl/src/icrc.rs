//! ICRC: CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320, initial and
//! final value all ones) over the 40-byte pseudo-header and the UDP payload
//! except its 4-byte trailer, as `metaroce_proto::compute_icrc` defines it.
//!
//! [`IcrcCheck`] computes it as the frame streams past, one beat per cycle,
//! with every CRC step a fixed XOR matrix generated here at emit time from
//! [`crc_byte`] (the CRC is linear, so each function below is fixed by its
//! value on unit vectors), and a Rust model of the same registers for
//! rust-hdl's own simulator:
//! * every beat, whole or partial, goes through one full-beat matrix, the
//!   lanes beyond its byte count zeroed: a partial last beat of `n` bytes
//!   leaves the register `B - n` zero bytes ahead of the true CRC, which the
//!   verdict undoes;
//! * the trailer is covered like any other byte (where it starts is only
//!   known at the end of the frame); the block keeps the last 4 bytes seen
//!   (`held`). The CRC register `c` before the trailer `t` is right exactly
//!   when `c = !t` (read big-endian), and feeding `t` after it gives a fixed
//!   affine function of `t`, so the verdict compares the register with that
//!   function of `held` (advanced by the missing lanes of the last beat);
//! * the pseudo-header, zero-padded at its front to whole beats, is taken one
//!   beat-sized chunk per beat from the frame's first beat on (the ports'
//!   values sampled with the first beat): chunk `k`'s share of the CRC,
//!   advanced to the end of beat `k`, is the same fixed matrix of the chunk
//!   for every `k` (the chunk is followed by the pad length of bytes up to
//!   there), registered (`pend`) and added to the register before the next
//!   beat (the CRC of a concatenation from two starting values is the XOR of
//!   the two), so it is never in series with the beat's own matrix. A frame
//!   long enough to pass the framing checks (36 bytes) has a beat for every
//!   chunk.
//!
//! `Affine` gives the ACK generator its whole ICRC as one matrix
//! ([`crate::AckGen`]); `Affine` and `advance` give the TX builder its
//! matrices ([`crate::TxBuild`]). Every matrix is a set of constant rows
//! in a native rust-hdl kernel, one reduction XOR per output bit.

use rust_hdl::prelude::*;

use crate::helpers::EnReg;

/// The reflected CRC-32 polynomial.
pub const POLY: u32 = 0xEDB8_8320;

/// One byte into a reflected CRC-32 register: the golden step every CRC
/// matrix here is generated from.
pub fn crc_byte(mut c: u32, b: u8) -> u32 {
    c ^= u32::from(b);
    for _ in 0..8 {
        c = (c >> 1) ^ (POLY & 0u32.wrapping_sub(c & 1));
    }
    c
}

/// The CRC register after the `bytes` bytes of a whole beat, as a map of
/// the register and the beat: inputs 0..32 are the register, input
/// `32 + 8j + b` is bit `b` of lane `j` of the beat. The same matrix
/// [`IcrcCheck`] applies to every beat; the TX builder's beat matrices.
pub(crate) fn beat_map(bytes: usize) -> Affine {
    Affine::of(32 + 8 * bytes, |x| feed(le32(x), &x[4..]))
}

/// `n` zero bytes into the CRC register.
fn zeros(c: u32, n: usize) -> u32 {
    (0..n).fold(c, |c, _| crc_byte(c, 0))
}

/// One zero byte taken back out of the CRC register: the inverse of
/// `crc_byte(x, 0) = (x >> 8) ^ T[x & 0xFF]` (`T[i] = crc_byte(i, 0)`),
/// whose top byte is that of `T[x & 0xFF]`, which names `x & 0xFF`: the
/// top bytes of the 256 table entries are all different.
fn unzero(c: u32) -> u32 {
    let low = (0..256u32)
        .find(|&i| crc_byte(i, 0) >> 24 == c >> 24)
        .expect("CRC-32 table top bytes are a permutation");
    (c ^ crc_byte(low, 0)) << 8 | low
}

/// The CRC register `c` moved `n` zero bytes forward (`n >= 0`: fed `n`
/// zero bytes) or back (`n < 0`: the register that `-n` zero bytes would
/// have turned into `c`). Linear, and invertible because the polynomial
/// has a constant term.
pub(crate) fn advance(c: u32, n: isize) -> u32 {
    if n >= 0 {
        zeros(c, n.unsigned_abs())
    } else {
        (0..n.unsigned_abs()).fold(c, |c, _| unzero(c))
    }
}

/// `bytes`, in order, into the CRC register `c`.
pub(crate) fn feed(c: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(c, |c, &b| crc_byte(c, b))
}

/// Pseudo-header bytes (spec §4: addresses, ports, UDP length, two zero
/// bytes).
const PSEUDO_BYTES: usize = 40;

/// Beat-sized chunks the pseudo-header takes with `b`-byte beats, zero
/// bytes ahead of it making up the first.
pub(crate) const fn chunks(b: usize) -> usize {
    PSEUDO_BYTES.div_ceil(b)
}

/// `pend` after the beat that takes pseudo-header chunk `chunk` (`b` bytes,
/// first byte first) of the frame's `chunks(b)`: its share of the CRC
/// (from a zero register, which the zero pad before the pseudo-header
/// leaves at zero) advanced to the end of that beat, which is
/// `chunks(b) * b` bytes after the chunk whatever its place; plus, with the
/// first chunk, the initial value's share: the initial value before the 40
/// bytes of the pseudo-header (not the pad) advanced to the end of the
/// first beat.
fn chunk_pend(chunk: &[u8], first: bool) -> u32 {
    let padded = chunks(chunk.len()) * chunk.len();
    let init = if first {
        zeros(u32::MAX, PSEUDO_BYTES + chunk.len())
    } else {
        0
    };
    zeros(feed(0, chunk), padded) ^ init
}

/// Where chunk `k` (`k < chunks(b)`, `b = w / 8`) starts in a 512-bit
/// pseudo-header vector that holds the 40 bytes with byte 0 at bits
/// 319..312 and zeros above (the padded chunks from the top), for
/// `w`-bit beats.
pub(crate) fn chunk_offsets(w: usize) -> [Constant<Bits<16>>; 8] {
    std::array::from_fn(|k| Constant::new((w * chunks(w / 8).saturating_sub(k + 1)).to_bits()))
}

/// The map of a `b`-byte pseudo-header chunk (its first byte at the top of
/// the input) to its share of the CRC advanced to the end of the beat that
/// takes it (`chunk_pend` of any chunk but the first).
pub(crate) fn chunk_map(b: usize) -> Affine {
    Affine::of(8 * b, |x| {
        let chunk: Vec<u8> = x.iter().rev().copied().collect();
        chunk_pend(&chunk, false)
    })
}

/// What the register holds after a frame whose trailer is `held` (first
/// byte in bits 7..0) when the trailer is right: the trailer fed after its
/// own expected CRC (`!held`, read big-endian), then the `missing` zero
/// lanes of the last beat.
fn verdict_want(held: u32, missing: usize) -> u32 {
    zeros(feed(!held.swap_bytes(), &held.to_le_bytes()), missing)
}

/// A GF(2) affine map from `cols.len()` input bits to 32 bits:
/// `k ^ (XOR of cols[i] over the set input bits i)`.
pub(crate) struct Affine {
    /// The map's value at zero.
    pub(crate) k: u32,
    /// The map's linear part: the output bits each input bit flips.
    cols: Vec<u32>,
}

impl Affine {
    /// The map of an affine `f` over `bits` input bits, passed to `f` as
    /// bytes (bit `i` in bit `i % 8` of byte `i / 8`), from its value at zero
    /// and on every unit vector.
    pub(crate) fn of(bits: usize, f: impl Fn(&[u8]) -> u32) -> Self {
        let zero = vec![0u8; bits.div_ceil(8)];
        let k = f(&zero);
        let cols = (0..bits)
            .map(|i| {
                let mut x = zero.clone();
                x[i / 8] |= 1 << (i % 8);
                f(&x) ^ k
            })
            .collect();
        Self { k, cols }
    }

    /// Output bit `o` of the linear part as a mask over the inputs
    /// `from..from + N`: bit `i` set when input `from + i` flips output `o`
    /// (inputs past the map's last are 0). Output bit `o` of the map of `x`
    /// is then `k[o] ^ XOR(x & mask)`, a rust-hdl kernel's `(x & mask).xor()`.
    pub(crate) fn row<const N: usize>(&self, o: usize, from: usize) -> Bits<N> {
        (0..N)
            .filter(|&i| self.cols.get(from + i).is_some_and(|c| c >> o & 1 == 1))
            .fold(Bits::default(), |m, i| m.replace_bit(i, true))
    }
}

/// Bytes `x[..4]` as a little-endian word.
pub(crate) fn le32(x: &[u8]) -> u32 {
    u32::from_le_bytes([x[0], x[1], x[2], x[3]])
}

/// Bits of a row of the verdict matrices: 32 per missing-lane count
/// `0..=64`.
const WANT_BITS: usize = 32 * 65;

/// ICRC check of one frame streaming past in `W`-bit beats (`B = W / 8`
/// lanes). It watches the beats its parent accepts; see the module docs for
/// the scheme. Every beat but a frame's last must be whole, and the verdict
/// holds for frames of at least `chunks(B)` beats (one per pseudo-header
/// chunk), which every frame of 33 bytes or more has; the parser calls
/// shorter ones truncated whatever the ICRC.
///
/// All state is registered and `ok` is a function of the registers and
/// `check` only (which the parent drives from a register), so the parent can
/// drive the inputs and read `ok` in one kernel without a combinational
/// loop. Native rust-hdl: the matrices are constant rows, each output bit
/// a reduction XOR of the inputs under its row.
#[derive(LogicBlock)]
pub struct IcrcCheck<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// A beat is accepted this cycle.
    pub beat: Signal<In, Bit>,
    /// A beat is offered this cycle (set whenever `beat` is; from
    /// registers, where `beat` also depends on the parent's flow control):
    /// the matrices are evaluated only then, from registers and `offer`,
    /// so a simulator evaluates them once per cycle, not again in the pass
    /// for the flow control's inputs.
    pub offer: Signal<In, Bit>,
    /// It is the frame's first beat (the pseudo-header seeds the CRC).
    pub first: Signal<In, Bit>,
    /// Beat data, AXI-Stream lane order.
    pub data: Signal<In, Bits<W>>,
    /// Valid bytes in the beat (from the packed `tkeep`).
    pub count: Signal<In, Bits<16>>,
    /// Pseudo-header: source IP (IPv4 mapped into IPv6), network order.
    pub src_ip: Signal<In, Bits<128>>,
    /// Pseudo-header: destination IP.
    pub dst_ip: Signal<In, Bits<128>>,
    /// Pseudo-header: UDP source port (after any rewrite: the path entropy).
    pub src_port: Signal<In, Bits<16>>,
    /// Pseudo-header: UDP destination port.
    pub dst_port: Signal<In, Bits<16>>,
    /// Pseudo-header: UDP length (8 + payload bytes, saturated at 65535).
    pub udp_len: Signal<In, Bits<16>>,
    /// The parent reads `ok` this cycle: the verdict matrix is evaluated
    /// only then (`ok` is low in the other cycles), so a simulator does so
    /// once per frame rather than every cycle.
    pub check: Signal<In, Bit>,
    /// With `check`, after a frame's last beat (until the next beat):
    /// `held`, read big-endian, equals the CRC of the bytes before it.
    pub ok: Signal<Out, Bit>,
    // CRC register over the bytes so far, trailer included, the
    // pseudo-header's share excepted while it is still in `pend`.
    crc: EnReg<Bits<32>>,
    // The pseudo-header's share after a first beat, zero after any other:
    // the CRC state is `crc ^ pend`.
    pend: EnReg<Bits<32>>,
    // The last 4 bytes accepted, first byte in bits 7..0: after a frame's
    // last beat, its trailer.
    held: DFF<Bits<32>>,
    // Lanes missing from the last beat (`B - count`), masked to the bits
    // that count can take (`0..=B`): the verdict tables are indexed by a
    // small count, a few-input function per row bit, not a shifter.
    missing: DFF<Bits<16>>,
    // Pseudo-header chunks still to take after the first (`1..chunks`: the
    // next one's index, past them: none).
    step: DFF<Bits<4>>,
    // The pseudo-header sampled with the first beat, as `phv`.
    ph: DFF<Bits<512>>,
    // The state the beat goes into, the beat's lanes below `count`, the
    // pseudo-header (its 40 bytes, byte 0 at bits 319..312, zero above: the
    // padded chunks from the top), this beat's chunk, a matrix result.
    state: Signal<Local, Bits<32>>,
    lanes: Signal<Local, Bits<W>>,
    phv: Signal<Local, Bits<512>>,
    chunk: Signal<Local, Bits<W>>,
    acc: Signal<Local, Bits<32>>,
    // The beat matrix's result (the CRC register after the beat) and the
    // chunk matrix's (`pend` after it), while `offer`.
    bx: Signal<Local, Bits<32>>,
    px: Signal<Local, Bits<32>>,
    // Where the verdict matrix for `missing` lanes starts in a row.
    at: Signal<Local, Bits<12>>,
    // Row `o` of the beat matrix over the register and over the lanes.
    c_beat_z: [Constant<Bits<32>>; 32],
    c_beat_d: [Constant<Bits<W>>; 32],
    // The chunk matrix (the chunk's first byte at the top): its rows, and
    // the initial value's share (first chunk only); where chunk `k` is in
    // `phv` (`k < chunks`), and how many chunks there are.
    c_pend: [Constant<Bits<W>>; 32],
    c_pend0: Constant<Bits<32>>,
    c_chunk_at: [Constant<Bits<16>>; 8],
    c_chunks: Constant<Bits<4>>,
    // The verdict matrices: row `o` of the one for `m` missing lanes at
    // bits `32m..`, and their values at zero at bits `32m..`.
    c_want: [Constant<Bits<WANT_BITS>>; 32],
    c_want0: Constant<Bits<WANT_BITS>>,
    c_ff: Constant<Bits<W>>,
    c_lanes: Constant<Bits<16>>,
    c_mask: Constant<Bits<16>>,
}

/// The 32 rows of `map` over its inputs `from..from + N`, as constants.
pub(crate) fn rows<const N: usize>(map: &Affine, from: usize) -> [Constant<Bits<N>>; 32] {
    std::array::from_fn(|o| Constant::new(map.row::<N>(o, from)))
}

impl<const W: usize, const B: usize> Default for IcrcCheck<W, B> {
    fn default() -> Self {
        assert!(
            W == 8 * B && (1..=64).contains(&B),
            "IcrcCheck<{W}, {B}>: W must be 8 * B, B at most 64"
        );
        let beat = beat_map(B);
        // `x` holds the chunk's first byte at the top.
        let pend = chunk_map(B);
        let n = chunks(B);
        let wants: Vec<Affine> = (0..=B)
            .map(|m| Affine::of(32, |x| verdict_want(le32(x), m)))
            .collect();
        let mut want0 = Bits::<WANT_BITS>::default();
        for (m, map) in wants.iter().enumerate() {
            for i in 0..32 {
                want0 = want0.replace_bit(32 * m + i, map.k >> i & 1 == 1);
            }
        }
        Self {
            clock: Default::default(),
            beat: Default::default(),
            offer: Default::default(),
            first: Default::default(),
            data: Default::default(),
            count: Default::default(),
            src_ip: Default::default(),
            dst_ip: Default::default(),
            src_port: Default::default(),
            dst_port: Default::default(),
            udp_len: Default::default(),
            check: Default::default(),
            ok: Default::default(),
            crc: Default::default(),
            pend: Default::default(),
            held: Default::default(),
            missing: Default::default(),
            step: Default::default(),
            ph: Default::default(),
            state: Default::default(),
            lanes: Default::default(),
            phv: Default::default(),
            chunk: Default::default(),
            acc: Default::default(),
            bx: Default::default(),
            px: Default::default(),
            at: Default::default(),
            c_beat_z: rows(&beat, 0),
            c_beat_d: rows(&beat, 32),
            c_pend: rows(&pend, 0),
            c_pend0: Constant::new(u64::from(chunk_pend(&vec![0; B], true)).to_bits()),
            c_chunk_at: chunk_offsets(W),
            c_chunks: Constant::new(n.to_bits()),
            c_want: std::array::from_fn(|o| {
                let mut row = Bits::<WANT_BITS>::default();
                for (m, map) in wants.iter().enumerate() {
                    for i in 0..32 {
                        row = row.replace_bit(32 * m + i, map.row::<32>(o, 0).get_bit(i));
                    }
                }
                Constant::new(row)
            }),
            c_want0: Constant::new(want0),
            c_ff: Constant::new(0xFFu64.to_bits()),
            c_lanes: Constant::new(B.to_bits()),
            c_mask: Constant::new(((B + 1).next_power_of_two() - 1).to_bits()),
        }
    }
}

impl<const W: usize, const B: usize> Logic for IcrcCheck<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, held, missing, step, ph);
        // The CRC registers load with an accepted beat (`beat`, which reads
        // the parent's flow control); their values come from registers and
        // `offer` alone (`EnReg`), so a simulator computes the matrices
        // once per cycle, not again in the pass for the flow control's
        // inputs.
        self.crc.clock.next = self.clock.val();
        self.crc.en.next = false;
        self.pend.clock.next = self.clock.val();
        self.pend.en.next = false;
        self.state.next = 0.into();
        self.lanes.next = 0.into();
        self.phv.next = 0.into();
        self.chunk.next = 0.into();
        self.acc.next = 0.into();
        self.bx.next = 0.into();
        self.px.next = 0.into();
        self.at.next = 0.into();
        if self.offer.val() {
            // The beat matrix over the state and the lanes below `count`.
            if !self.first.val() {
                self.state.next = self.crc.q.val() ^ self.pend.q.val();
            }
            for j in 0..B {
                if self.count.val() > j.to_bits::<16>() {
                    self.lanes.next = self.lanes.val()
                        | (self.data.val() & (self.c_ff.val() << (8 * j).to_bits::<16>()));
                }
            }
            for o in 0..32 {
                self.bx.next = self.bx.val().replace_bit(
                    o,
                    (self.state.val() & self.c_beat_z[o].val()).xor()
                        ^ (self.lanes.val() & self.c_beat_d[o].val()).xor(),
                );
            }
            // The pseudo-header chunk this beat takes, if any: the first
            // from the ports, the others from their copy.
            if self.first.val() {
                self.phv.next = (bit_cast::<512, 16>(self.udp_len.val()) << 16)
                    | (bit_cast::<512, 16>(self.dst_port.val()) << 32)
                    | (bit_cast::<512, 16>(self.src_port.val()) << 48)
                    | (bit_cast::<512, 128>(self.dst_ip.val()) << 64)
                    | (bit_cast::<512, 128>(self.src_ip.val()) << 192);
                self.chunk.next = self
                    .phv
                    .val()
                    .get_bits::<W>(self.c_chunk_at[0].val().index());
            } else if self.step.q.val() < self.c_chunks.val() {
                // At least one test, so that `ph` is read at every width
                // (with one chunk, `step` is never below it here).
                for k in 1..chunks(B).max(2) {
                    if self.step.q.val() == k.to_bits::<4>() {
                        self.chunk.next = self
                            .ph
                            .q
                            .val()
                            .get_bits::<W>(self.c_chunk_at[k].val().index());
                    }
                }
            }
            for o in 0..32 {
                self.px.next = self
                    .px
                    .val()
                    .replace_bit(o, (self.chunk.val() & self.c_pend[o].val()).xor());
            }
            if self.first.val() {
                self.px.next = self.px.val() ^ self.c_pend0.val();
            }
        }
        self.crc.d.next = self.bx.val();
        self.pend.d.next = self.px.val();
        if self.beat.val() {
            self.crc.en.next = true;
            self.pend.en.next = true;
            if self.first.val() {
                self.ph.d.next = self.phv.val();
                self.step.d.next = 1.into();
            } else if self.step.q.val() < self.c_chunks.val() {
                self.step.d.next = self.step.q.val() + 1;
            }
            // The last 4 bytes of `held` and the beat's `count`: a
            // constant choice per count (a simulator takes one, where a
            // shift by `8 * count` would shift the whole vector).
            for j in 1..4usize {
                if self.count.val() == j.to_bits::<16>() {
                    self.held.d.next = (self.held.q.val() >> (8 * j).to_bits::<16>())
                        | (self.data.val().get_bits::<32>(0) << (32 - 8 * j).to_bits::<16>());
                }
            }
            for j in 4..(B + 1) {
                if self.count.val() == j.to_bits::<16>() {
                    self.held.d.next = self.data.val().get_bits::<32>(8 * j - 32);
                }
            }
            self.missing.d.next = (self.c_lanes.val() - self.count.val()) & self.c_mask.val();
        }
        // Only when the parent reads it: the register a right trailer
        // `held` gives, by missing lanes, against the CRC state.
        self.ok.next = false;
        if self.check.val() {
            self.at.next = bit_cast::<12, 16>(self.missing.q.val()) << 5;
            for o in 0..32 {
                self.acc.next = self.acc.val().replace_bit(
                    o,
                    (self.held.q.val()
                        & self.c_want[o].val().get_bits::<32>(self.at.val().index()))
                    .xor(),
                );
            }
            self.ok.next = (self.crc.q.val() ^ self.pend.q.val())
                == (self.acc.val() ^ self.c_want0.val().get_bits::<32>(self.at.val().index()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn advance_moves_the_register_both_ways() {
        for (c, n) in [(0xDEAD_BEEF_u32, 1), (0x1234_5678, 34), (u32::MAX, 62)] {
            assert_eq!(advance(advance(c, n), -n), c);
            assert_eq!(advance(c, n), (0..n).fold(c, |c, _| crc_byte(c, 0)));
        }
    }

    #[test]
    fn crc_byte_gives_the_crc32_check_value() {
        let c = b"123456789".iter().fold(u32::MAX, |c, &b| crc_byte(c, b));
        assert_eq!(!c, 0xCBF4_3926);
    }

    #[test]
    fn affine_maps_match_their_functions() {
        // The emitted equations are the maps; the model uses the functions.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        };
        let eval = |a: &Affine, x: &[u8]| {
            (0..a.cols.len())
                .filter(|i| x[i / 8] >> (i % 8) & 1 == 1)
                .fold(a.k, |k, i| k ^ a.cols[i])
        };
        let beat = beat_map(8);
        let want = Affine::of(32, |x| verdict_want(le32(x), 3));
        for _ in 0..100 {
            let x: Vec<u8> = (0..12).map(|_| next()).collect();
            assert_eq!(eval(&beat, &x), feed(le32(&x), &x[4..]));
            assert_eq!(eval(&want, &x), verdict_want(le32(&x), 3));
        }
        // The check value of CRC-32 as one map, message byte 0 in bits 7..0.
        let crc = Affine::of(72, |x| !feed(u32::MAX, x));
        assert_eq!(eval(&crc, b"123456789"), 0xCBF4_3926);
    }

    /// The 40 pseudo-header bytes of the ports' values.
    fn pseudo_bytes(src: u128, dst: u128, sport: u16, dport: u16, ulen: u16) -> [u8; 40] {
        let mut ph = [0u8; 40];
        ph[..16].copy_from_slice(&src.to_be_bytes());
        ph[16..32].copy_from_slice(&dst.to_be_bytes());
        ph[32..34].copy_from_slice(&sport.to_be_bytes());
        ph[34..36].copy_from_slice(&dport.to_be_bytes());
        ph[36..38].copy_from_slice(&ulen.to_be_bytes());
        ph
    }

    /// Streams `frames` (pseudo-header ports, bytes) through rust-hdl's
    /// simulator of `IcrcCheck<64, 8>`, a cycle with `check` after each
    /// frame's last beat; the verdicts.
    fn verdicts(frames: Vec<([u128; 2], [u16; 3], Vec<u8>)>) -> Vec<bool> {
        let out = Arc::new(Mutex::new(Vec::new()));
        let result = out.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<IcrcCheck<64, 8>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<IcrcCheck<64, 8>>| {
            let mut x = sim.init()?;
            wait_clock_false!(sim, clock, x);
            for (ips, ports, bytes) in &frames {
                x.src_ip.next = ips[0].to_bits();
                x.dst_ip.next = ips[1].to_bits();
                x.src_port.next = u64::from(ports[0]).to_bits();
                x.dst_port.next = u64::from(ports[1]).to_bits();
                x.udp_len.next = u64::from(ports[2]).to_bits();
                for (i, chunk) in bytes.chunks(8).enumerate() {
                    let mut beat = [0xEEu8; 8];
                    beat[..chunk.len()].copy_from_slice(chunk);
                    x.beat.next = true;
                    x.offer.next = true;
                    x.first.next = i == 0;
                    x.data.next = u64::from_le_bytes(beat).to_bits();
                    x.count.next = (chunk.len() as u64).to_bits();
                    wait_clock_true!(sim, clock, x);
                    wait_clock_false!(sim, clock, x);
                }
                x.beat.next = false;
                x.offer.next = false;
                x.check.next = true;
                x = sim.wait(1, x)?;
                out.lock().unwrap().push(x.ok.val());
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                x.check.next = false;
            }
            sim.done(x)
        });
        let mut uut = IcrcCheck::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 1_000_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_finds_the_trailer_across_beats() {
        // Frames of 36 (the shortest the parser does not call truncated) to
        // 70 bytes (whole and partial last beats), covered bytes then their
        // big-endian ICRC; each again with one covered byte flipped, and
        // with the trailer flipped.
        let mut frames = Vec::new();
        let mut want = Vec::new();
        for len in [36usize, 37, 39, 40, 41, 44, 45, 48, 64, 70] {
            let ips = [0x0a00_0001u128 + len as u128, 0xffff_0a00_0002];
            let ports = [0xC000 + len as u16, 4791, 8 + len as u16];
            let ph = pseudo_bytes(ips[0], ips[1], ports[0], ports[1], ports[2]);
            let covered: Vec<u8> = (0..len - 4).map(|i| (i * 37 + len) as u8).collect();
            let icrc = !feed(feed(u32::MAX, &ph), &covered);
            let mut good = covered.clone();
            good.extend_from_slice(&icrc.to_be_bytes());
            for flip in [None, Some(0), Some(len - 1)] {
                let mut f = good.clone();
                if let Some(i) = flip {
                    f[i] ^= 0x10;
                }
                want.push(flip.is_none());
                frames.push((ips, ports, f));
            }
        }
        assert_eq!(verdicts(frames), want);
    }
}
