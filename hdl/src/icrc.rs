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
//! The Verilog functions [`CRC_BYTE_FN`], [`PSEUDO_CRC_FN`] and
//! [`crc_range_fn`] are the byte-serial forms the TX builder uses;
//! [`crc_fn`] is a whole fixed-length CRC as one matrix (the ACK
//! generator's), [`beat_crc_fn`] the whole-beat matrix (the TX builder's
//! beats whose every lane is covered).

use rust_hdl::prelude::*;

/// The reflected CRC-32 polynomial.
pub const POLY: u32 = 0xEDB8_8320;

/// One byte into a reflected CRC-32 register (the Rust model of the Verilog
/// function `crc_byte`).
pub fn crc_byte(mut c: u32, b: u8) -> u32 {
    c ^= u32::from(b);
    for _ in 0..8 {
        c = (c >> 1) ^ (POLY & 0u32.wrapping_sub(c & 1));
    }
    c
}

/// Verilog function `crc_byte(c, b)`: one byte into the CRC register (the
/// Verilog twin of [`crc_byte`]), for the byte-serial CRCs of the TX builder
/// and the ACK generator. The 8 shift steps are linear in the low byte
/// `y = c[7:0] ^ b`, so they are written as the XOR of one constant per set
/// bit of `y` (`crc_byte(0, 1 << m)`, checked by a test) on top of `c >> 8`:
/// the same function, but 8 independent terms for a simulator instead of a
/// chain of 8 dependent steps.
/// The functions take ANSI argument lists: `sim-tb`'s port parser reads
/// lines starting with `input` as ports of a top module.
pub(crate) const CRC_BYTE_FN: &str = "function [31:0] crc_byte(input [31:0] c, input [7:0] b);
    reg [7:0] y;
    begin
        y = c[7:0] ^ b;
        crc_byte = {8'd0, c[31:8]}
            ^ ({32{y[0]}} & 32'h77073096)
            ^ ({32{y[1]}} & 32'hEE0E612C)
            ^ ({32{y[2]}} & 32'h076DC419)
            ^ ({32{y[3]}} & 32'h0EDB8832)
            ^ ({32{y[4]}} & 32'h1DB71064)
            ^ ({32{y[5]}} & 32'h3B6E20C8)
            ^ ({32{y[6]}} & 32'h76DC4190)
            ^ ({32{y[7]}} & 32'hEDB88320);
    end
endfunction
";

/// Verilog function `pseudo_crc(ph)`: the CRC register after the 40
/// pseudo-header bytes `ph` (byte 0 in bits 319..312), from the initial
/// value. Needs [`CRC_BYTE_FN`].
pub(crate) const PSEUDO_CRC_FN: &str = "function [31:0] pseudo_crc(input [319:0] ph);
    integer i;
    reg [31:0] x;
    begin
        x = 32'hFFFFFFFF;
        for (i = 0; i < 40; i = i + 1)
            x = crc_byte(x, ph[319 - 8*i -: 8]);
        pseudo_crc = x;
    end
endfunction
";

/// Verilog function `crc_range(c0, d, lo, hi)` over a word of `bytes` bytes
/// (byte 0 in bits 7..0): feeds bytes `lo..hi` of `d`, in order, into the
/// CRC register `c0`. Needs [`CRC_BYTE_FN`].
pub(crate) fn crc_range_fn(bytes: usize) -> String {
    format!(
        "function [31:0] crc_range(input [31:0] c0, input [{top}:0] d, input [15:0] lo, input [15:0] hi);
    integer j;
    reg [31:0] x;
    begin
        x = c0;
        for (j = 0; j < {bytes}; j = j + 1)
            if ((j >= lo) && (j < hi))
                x = crc_byte(x, d[8*j +: 8]);
        crc_range = x;
    end
endfunction
",
        top = 8 * bytes - 1,
    )
}

/// Verilog function `name(x)`: the finished CRC-32 (initial and final
/// value all ones) of the `bytes` bytes of `x`, byte 0 in the top bits, as
/// one fixed XOR matrix (one reduction XOR per output bit, like
/// [`IcrcCheck`]'s) rather than a chain of [`CRC_BYTE_FN`] steps.
pub(crate) fn crc_fn(name: &str, bytes: usize) -> String {
    crc_map(bytes).function(name)
}

/// Verilog function `name(x)`: the CRC register after the `bytes` bytes of
/// a whole beat, `x = {beat, c}` with the register `c` in bits 31..0 and
/// beat byte `j` (lane order) in bits `32 + 8j + 7 .. 32 + 8j`: one fixed
/// XOR matrix, the same one [`IcrcCheck`] applies to every beat.
pub(crate) fn beat_crc_fn(name: &str, bytes: usize) -> String {
    beat_map(bytes).function(name)
}

/// The map of [`beat_crc_fn`].
fn beat_map(bytes: usize) -> Affine {
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

/// `bytes`, in order, into the CRC register `c`.
fn feed(c: u32, bytes: &[u8]) -> u32 {
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
struct Affine {
    k: u32,
    cols: Vec<u32>,
}

impl Affine {
    /// The map of an affine `f` over `bits` input bits, passed to `f` as
    /// bytes (bit `i` in bit `i % 8` of byte `i / 8`), from its value at zero
    /// and on every unit vector.
    fn of(bits: usize, f: impl Fn(&[u8]) -> u32) -> Self {
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
fn le32(x: &[u8]) -> u32 {
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
        Verilog::Custom(format!(
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
    fn crc_byte_fn_has_the_byte_step_of_each_bit() {
        for m in 0..8 {
            let term = format!("{{32{{y[{m}]}}}} & 32'h{:08X}", crc_byte(0, 1 << m));
            assert!(CRC_BYTE_FN.contains(&term), "{term}");
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
