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
//! * the pseudo-header CRC, advanced over one whole beat, is a fixed affine
//!   function of the pseudo-header ports: it is computed in parallel with the
//!   first beat, registered (`pend`) and added to the register afterwards
//!   (the CRC of a concatenation from two starting values is the XOR of the
//!   two), so it is never in series with the beat's own matrix.
//!
//! `crc_fn` is a whole fixed-length CRC as one matrix (the ACK
//! generator's); `Affine` and `advance` give the TX builder its
//! matrices ([`crate::TxBuild`]).

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

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

/// Verilog function `name(x)`: the finished CRC-32 (initial and final
/// value all ones) of the `bytes` bytes of `x`, byte 0 in the top bits, as
/// one fixed XOR matrix (one reduction XOR per output bit, like
/// [`IcrcCheck`]'s) rather than a chain of byte steps.
pub(crate) fn crc_fn(name: &str, bytes: usize) -> String {
    crc_map(bytes).function(name)
}

/// The CRC register after the `bytes` bytes of a whole beat, as a map of
/// the register and the beat: inputs 0..32 are the register, input
/// `32 + 8j + b` is bit `b` of lane `j` of the beat. The same matrix
/// [`IcrcCheck`] applies to every beat; the TX builder's beat matrices.
pub(crate) fn beat_map(bytes: usize) -> Affine {
    Affine::of(32 + 8 * bytes, |x| feed(le32(x), &x[4..]))
}

/// The map of [`crc_fn`]: `x` bit `i` is bit `i % 8` of byte `bytes - 1 -
/// i / 8` of the message.
fn crc_map(bytes: usize) -> Affine {
    Affine::of(8 * bytes, |x| {
        let msg: Vec<u8> = x.iter().rev().copied().collect();
        !feed(u32::MAX, &msg)
    })
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

/// `pend` after a first beat: the CRC of the 40 pseudo-header bytes `ph`
/// from the initial value, advanced over the `b` bytes of a whole beat.
fn pseudo_pend(ph: &[u8; 40], b: usize) -> u32 {
    zeros(feed(u32::MAX, ph), b)
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

    /// Verilog statements setting the 32-bit `lhs` to the map of the
    /// vector `input`, one reduction XOR over a constant mask per output bit
    /// (indented for a function body).
    fn statements(&self, lhs: &str, input: &str) -> String {
        let bits = self.cols.len();
        let mut out = String::new();
        for o in 0..32 {
            let mask: String = (0..bits.div_ceil(4))
                .rev()
                .map(|d| {
                    let nibble = (0..4)
                        .filter(|b| 4 * d + b < bits && self.cols[4 * d + b] >> o & 1 == 1)
                        .fold(0u32, |n, b| n | 1 << b);
                    char::from_digit(nibble, 16).unwrap_or('0')
                })
                .collect();
            let k = if self.k >> o & 1 == 1 { " ^ 1'b1" } else { "" };
            out += &format!("        {lhs}[{o}] = ^({input} & {bits}'h{mask}){k};\n");
        }
        out
    }

    /// Verilog function `name(x)` computing the map.
    fn function(&self, name: &str) -> String {
        format!(
            "function [31:0] {name}(input [{top}:0] x);\n    begin\n{body}    end\nendfunction\n",
            top = self.cols.len() - 1,
            body = self.statements(name, "x"),
        )
    }
}

/// Bytes `x[..4]` as a little-endian word.
pub(crate) fn le32(x: &[u8]) -> u32 {
    u32::from_le_bytes([x[0], x[1], x[2], x[3]])
}

/// ICRC check of one frame streaming past in `W`-bit beats (`B = W / 8`
/// lanes). It watches the beats its parent accepts; see the module docs for
/// the scheme. Every beat but a frame's last must be whole.
///
/// All state is registered and `ok` is a function of the registers and
/// `check` only (which the parent drives from a register), so the parent can
/// drive the inputs and read `ok` in one kernel without a combinational
/// loop.
#[derive(LogicBlock, Default)]
pub struct IcrcCheck<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// A beat is accepted this cycle.
    pub beat: Signal<In, Bit>,
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
    /// The parent reads `ok` this cycle. Only the Verilog uses it: `ok` is
    /// X in the other cycles, so a simulator evaluates the verdict matrix
    /// once per frame rather than every cycle.
    pub check: Signal<In, Bit>,
    /// With `check`, after a frame's last beat (until the next beat):
    /// `held`, read big-endian, equals the CRC of the bytes before it.
    pub ok: Signal<Out, Bit>,
    // CRC register over the bytes so far, trailer included, the
    // pseudo-header's share excepted while it is still in `pend`.
    crc: Signal<Local, Bits<32>>,
    // The pseudo-header's share after a first beat, zero after any other:
    // the CRC state is `crc ^ pend`.
    pend: Signal<Local, Bits<32>>,
    // The last 4 bytes accepted, first byte in bits 7..0: after a frame's
    // last beat, its trailer.
    held: Signal<Local, Bits<32>>,
    // Lanes missing from the last beat (`B - count`).
    missing: Signal<Local, Bits<16>>,
}

impl<const W: usize, const B: usize> IcrcCheck<W, B> {
    /// The 40 pseudo-header bytes of the current inputs.
    fn pseudo_bytes(&self) -> [u8; 40] {
        let mut out = [0u8; 40];
        for i in 0..16 {
            out[i] = self.src_ip.val().get_bits::<8>(120 - 8 * i).to_u8();
            out[16 + i] = self.dst_ip.val().get_bits::<8>(120 - 8 * i).to_u8();
        }
        for (k, v) in [self.src_port.val(), self.dst_port.val(), self.udp_len.val()]
            .into_iter()
            .enumerate()
        {
            out[32 + 2 * k] = v.get_bits::<8>(8).to_u8();
            out[33 + 2 * k] = v.get_bits::<8>(0).to_u8();
        }
        out
    }

    /// Byte `j` of `held ++ data` (held bytes first).
    fn joined(&self, j: usize) -> u8 {
        if j < 4 {
            self.held.val().get_bits::<8>(8 * j).to_u8()
        } else {
            self.data.val().get_bits::<8>(8 * (j - 4)).to_u8()
        }
    }
}

impl<const W: usize, const B: usize> Logic for IcrcCheck<W, B> {
    fn update(&mut self) {
        let word = |s: &Signal<Local, Bits<32>>| s.val().to_u64() as u32;
        if self.clock.pos_edge() && self.beat.val() {
            let n = (self.count.val().to_u64() as usize).min(B);
            let state = if self.first.val() {
                0
            } else {
                word(&self.crc) ^ word(&self.pend)
            };
            let lanes: Vec<u8> = (0..B)
                .map(|j| if j < n { self.joined(4 + j) } else { 0 })
                .collect();
            let pend = if self.first.val() {
                pseudo_pend(&self.pseudo_bytes(), B)
            } else {
                0
            };
            let held = u32::from_le_bytes([0, 1, 2, 3].map(|k| self.joined(n + k)));
            self.crc.next = u64::from(feed(state, &lanes)).to_bits();
            self.pend.next = u64::from(pend).to_bits();
            self.held.next = u64::from(held).to_bits();
            self.missing.next = (B - n).to_bits();
        }
        let missing = (self.missing.val().to_u64() as usize).min(B);
        self.ok.next =
            word(&self.crc) ^ word(&self.pend) == verdict_want(word(&self.held), missing);
    }

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "IcrcCheck: W must be 8 * B");
        self.crc.connect();
        self.pend.connect();
        self.held.connect();
        self.missing.connect();
        self.ok.connect();
    }

    fn hdl(&self) -> Verilog {
        let beat = beat_map(B);
        // `ph` holds pseudo-header byte 0 at the top, without the two zero
        // bytes at the end.
        let pend = Affine::of(304, |x| {
            let mut ph = [0u8; 40];
            for (p, b) in ph.iter_mut().take(38).enumerate() {
                *b = x[37 - p];
            }
            pseudo_pend(&ph, B)
        });
        // Each matrix is a function called where its result is used: in the
        // branch that loads the register (the beat and pseudo-header
        // matrices) or in the case arm of the `missing` value (the verdict
        // matrices). Synthesis sees the same logic as continuous
        // assignments; a simulator evaluates only the matrix in use, and only
        // in a cycle that needs it.
        let lanes: String = (0..B)
            .map(|j| {
                format!(
                    "        x[{at} +: 8] = (n > 16'd{j}) ? d[{l} +: 8] : 8'd0;\n",
                    at = 32 + 8 * j,
                    l = 8 * j
                )
            })
            .collect();
        let wants: String = (0..=B)
            .map(|m| Affine::of(32, |x| verdict_want(le32(x), m)).function(&format!("want_{m}")))
            .collect();
        let cases: String = (0..=B)
            .map(|m| format!("            16'd{m}: want = want_{m}(held);\n"))
            .collect();
        hand_written(format!(
            "// The CRC register after a beat `d` of `n` bytes from the state `s`:
// the lanes beyond `n` zeroed, then the beat matrix over {{lanes, s}}.
function [31:0] beat_crc(input [{top}:0] d, input [15:0] n, input [31:0] s);
    reg [{in_top}:0] x;
    begin
{lanes}        x[31:0] = s;
{beat_eq}    end
endfunction
// Pseudo-header (byte 0 at the top) to its share of the CRC.
{pend_fn}always @(posedge clock) begin
    if (beat) begin
        crc <= beat_crc(data, count, first ? 32'd0 : (crc ^ pend));
        // A default then a conditional load, not an if/else: Verilator
        // turns an if/else of two loads into one conditional expression
        // and evaluates the matrix on every beat.
        pend <= 32'd0;
        if (first)
            pend <= pend_next({{src_ip, dst_ip, src_port, dst_port, udp_len}});
        held <= {{data, held}} >> (8*count);
        missing <= 16'd{B} - count;
    end
end
// The register a right trailer `held` gives, by missing lanes.
{wants}// Only when the parent reads it (`check`): a default then a conditional
// block, so that a simulator skips the matrix in the other cycles.
reg [31:0] want;
always @(*) begin
    want = 32'bx;
    ok = 1'bx;
    if (check) begin
        case (missing)
{cases}            default: want = want_0(held);
        endcase
        ok = ((crc ^ pend) == want);
    end
end
",
            top = W - 1,
            in_top = W + 31,
            beat_eq = beat.statements("beat_crc", "x"),
            pend_fn = pend.function("pend_next"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let whole = crc_map(12);
        for _ in 0..100 {
            let x: Vec<u8> = (0..12).map(|_| next()).collect();
            assert_eq!(eval(&beat, &x), feed(le32(&x), &x[4..]));
            assert_eq!(eval(&want, &x), verdict_want(le32(&x), 3));
            let msg: Vec<u8> = x.iter().rev().copied().collect();
            assert_eq!(eval(&whole, &x), !feed(u32::MAX, &msg));
        }
        // The check value of CRC-32, message byte 0 in the top bits.
        let digits: Vec<u8> = b"123456789".iter().rev().copied().collect();
        assert_eq!(eval(&crc_map(9), &digits), 0xCBF4_3926);
    }

    #[test]
    fn check_model_finds_the_trailer_across_beats() {
        // A 13-byte frame, 9 covered bytes then a big-endian ICRC, over
        // 8-byte beats. The ICRC is computed here from the pseudo-header
        // bytes the model builds, so this checks the streaming, not the
        // pseudo-header layout (the Verilator bench checks that).
        let mut chk = IcrcCheck::<64, 8>::default();
        chk.src_ip.next = 0x0a00_0001u64.to_bits();
        chk.udp_len.next = 21u64.to_bits();
        chk.src_ip.update_all();
        chk.udp_len.update_all();
        let seed = chk
            .pseudo_bytes()
            .iter()
            .fold(u32::MAX, |c, &b| crc_byte(c, b));
        let icrc = !b"123456789".iter().fold(seed, |c, &b| crc_byte(c, b));
        let mut frame = b"123456789".to_vec();
        frame.extend_from_slice(&icrc.to_be_bytes());
        for (i, chunk) in frame.chunks(8).enumerate() {
            let mut beat = [0xEEu8; 8];
            beat[..chunk.len()].copy_from_slice(chunk);
            chk.beat.next = true;
            chk.data.next = u64::from_le_bytes(beat).to_bits();
            chk.count.next = (chunk.len() as u64).to_bits();
            chk.first.next = i == 0;
            for s in [&mut chk.beat, &mut chk.first] {
                s.update_all();
            }
            chk.data.update_all();
            chk.count.update_all();
            chk.clock.next = Clock::from(false);
            chk.clock.update_all();
            chk.clock.next = Clock::from(true);
            chk.clock.update_all();
            chk.update();
        }
        assert!(
            chk.ok.next,
            "crc {:?} held {:?}",
            chk.crc.next, chk.held.next
        );
        // One flipped covered byte fails it.
        chk.held.next = (u64::from(u32::from_le_bytes(icrc.to_be_bytes())) ^ 1).to_bits();
        chk.clock.next = Clock::from(false);
        chk.clock.update_all();
        chk.update();
        assert!(!chk.ok.next);
    }
}
