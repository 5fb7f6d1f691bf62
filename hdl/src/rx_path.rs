//! Per-path receive tracking: for each path, the cumulative path PSN
//! (`cum`, the first PSN not yet received), the 256-bit SACK bitmap above it
//! (bit `i` is PSN `cum + 1 + i`, as `metaroce_proto::Sack`), and the
//! received and CE-marked packet counters, updated per arrival with the
//! rules of the engine's `RxPath::mark` and `Rx::on_path_arrival`
//! ([`PathMark`], shared by both blocks here).
//!
//! * [`RxPathTable`]: the tracker of the receive core, one entry per
//!   (QP slot, path) in block RAM, with the ACK fields the engine keeps per
//!   path (echo timestamp, reply port, ECE) and the pending-ACK queue;
//! * [`RxPathRegs`]: one QP's paths in registers, a standalone block that
//!   checks the mark rules alone ([`rx_path_verilog`], `metaroce-sim-tb`'s
//!   `rx_path` bench).
//!
//! Native rust-hdl: kernels, rust-hdl's `RAM` for the state and
//! [`LutRam`] for the ACK queue; rust-hdl's own simulator runs both blocks
//! (the tests below, against the engine). Verified under Verilator
//! (`metaroce-sim-tb`) against the engine.

use rust_hdl::prelude::*;

use crate::helpers::LutRam;
use crate::rx_place::QPS;

/// Paths per QP: the engine's `metaroce_firmware::MAX_PATHS`.
pub const MAX_PATHS: usize = 64;

/// Verdict per arrival of the standalone tracker (`res_code`), the engine's
/// `PathMark`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PathVerdict {
    /// First arrival: state updated, counted.
    New = 0,
    /// Behind `cum` or already in the bitmap: counted, state unchanged.
    Duplicate = 1,
    /// 2^30 or more ahead of `cum`: dropped, nothing changes.
    OutOfWindow = 2,
}

impl PathVerdict {
    /// Every verdict.
    pub const ALL: [PathVerdict; 3] = [Self::New, Self::Duplicate, Self::OutOfWindow];
}

/// Number of consecutive set bits of `v` from bit 0 (0..=256): the lowest
/// clear bit, found radix 4 (per nibble, then per 4 nibbles, ...), four
/// levels of a 4-way priority choice rather than eight chained halvings.
/// Counts only while `en` is high, else `count` is 0: Verilator then skips
/// the tree in cycles without an arrival.
#[derive(LogicBlock, Default)]
pub struct LeadOnes {
    /// Count this cycle (else `count` is 0).
    pub en: Signal<In, Bit>,
    /// The vector.
    pub v: Signal<In, Bits<256>>,
    /// Its number of leading (low-end) ones.
    pub count: Signal<Out, Bits<9>>,
    // Per level: a group is all ones (`f*`), else its count (`c*`).
    f1: Signal<Local, Bits<64>>,
    c1: Signal<Local, Bits<128>>,
    f2: Signal<Local, Bits<16>>,
    c2: Signal<Local, Bits<64>>,
    f3: Signal<Local, Bits<4>>,
    c3: Signal<Local, Bits<24>>,
    nib: Signal<Local, Bits<4>>,
    kk: Signal<Local, Bits<2>>,
    c2s: Signal<Local, Bits<2>>,
    c3s: Signal<Local, Bits<4>>,
    g4: Signal<Local, Bits<4>>,
    g6: Signal<Local, Bits<6>>,
    cnt: Signal<Local, Bits<9>>,
}

impl Logic for LeadOnes {
    #[hdl_gen]
    fn update(&mut self) {
        self.f1.next = 0.into();
        self.c1.next = 0.into();
        self.f2.next = 0.into();
        self.c2.next = 0.into();
        self.f3.next = 0.into();
        self.c3.next = 0.into();
        self.nib.next = 0.into();
        self.kk.next = 0.into();
        self.c2s.next = 0.into();
        self.c3s.next = 0.into();
        self.g4.next = 0.into();
        self.g6.next = 0.into();
        self.cnt.next = 0.into();
        if self.en.val() {
            for j in 0..64 {
                self.nib.next = self.v.val().get_bits::<4>(4 * j);
                self.f1.next = self.f1.val().replace_bit(j, self.nib.val().all());
                if !self.nib.val().get_bit(0) {
                    self.c1.next = self.c1.val();
                } else if !self.nib.val().get_bit(1) {
                    self.c1.next = self.c1.val().replace_bit(2 * j, true);
                } else if !self.nib.val().get_bit(2) {
                    self.c1.next = self.c1.val().replace_bit(2 * j + 1, true);
                } else {
                    self.c1.next = self.c1.val().replace_bit(2 * j, true);
                    self.c1.next = self.c1.val().replace_bit(2 * j + 1, true);
                }
            }
            for j in 0..16 {
                self.nib.next = self.f1.val().get_bits::<4>(4 * j);
                self.f2.next = self.f2.val().replace_bit(j, self.nib.val().all());
                if !self.nib.val().get_bit(0) {
                    self.kk.next = 0.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j);
                } else if !self.nib.val().get_bit(1) {
                    self.kk.next = 1.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j + 2);
                } else if !self.nib.val().get_bit(2) {
                    self.kk.next = 2.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j + 4);
                } else {
                    self.kk.next = 3.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j + 6);
                }
                self.g4.next =
                    bit_cast::<4, 2>(self.c2s.val()) | (bit_cast::<4, 2>(self.kk.val()) << 2);
                self.c2.next =
                    self.c2.val() | (bit_cast::<64, 4>(self.g4.val()) << (4 * j).to_bits::<8>());
            }
            for j in 0..4 {
                self.nib.next = self.f2.val().get_bits::<4>(4 * j);
                self.f3.next = self.f3.val().replace_bit(j, self.nib.val().all());
                if !self.nib.val().get_bit(0) {
                    self.kk.next = 0.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j);
                } else if !self.nib.val().get_bit(1) {
                    self.kk.next = 1.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j + 4);
                } else if !self.nib.val().get_bit(2) {
                    self.kk.next = 2.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j + 8);
                } else {
                    self.kk.next = 3.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j + 12);
                }
                self.g6.next =
                    bit_cast::<6, 4>(self.c3s.val()) | (bit_cast::<6, 2>(self.kk.val()) << 4);
                self.c3.next =
                    self.c3.val() | (bit_cast::<24, 6>(self.g6.val()) << (6 * j).to_bits::<8>());
            }
            self.cnt.next = 256.into();
            if !self.f3.val().get_bit(0) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(0));
            } else if !self.f3.val().get_bit(1) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(6));
                self.cnt.next = self.cnt.val().replace_bit(6, true);
            } else if !self.f3.val().get_bit(2) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(12));
                self.cnt.next = self.cnt.val().replace_bit(7, true);
            } else if !self.f3.val().get_bit(3) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(18));
                self.cnt.next = self.cnt.val().replace_bit(6, true);
                self.cnt.next = self.cnt.val().replace_bit(7, true);
            }
        }
        self.count.next = self.cnt.val();
    }
}

/// The engine's `RxPath::mark` for one arrival, combinational, on a path
/// state kept with its bitmap shift deferred: the logical SACK bitmap is
/// bits `k .. k + 256` of `raw` (512 bits, zero above), so the shift an
/// arrival makes is applied by the next one, beside its leading-ones
/// count rather than after it.
///
/// With `d = psn - cum`: `d ≥ 2^31` is a duplicate, `2^30 ≤ d < 2^31` out of
/// window; `d = 0` moves `cum` over itself and the run of set bits after it;
/// `1 ≤ d ≤ 256` sets bit `d - 1` (a duplicate if set); `256 < d < 2^30`
/// slides the window up by `n = d - 256`, and on over the run of set bits
/// from bit `n - 1` when that PSN had arrived, then sets the PSN's bit
/// (`d = 257` with every bit set lands on `cum` itself). So one
/// leading-ones count of `raw` with the bits below `k` (plus `n` when
/// sliding) set; the new state is `raw >> k` (the previous shift, from
/// registers) with the PSN's bit `d - 1` set, and `k` = how far `cum`
/// moved, except for slides past the whole bitmap.
/// [`MarkPre`] comes before the count, [`MarkPost`] after it.
///
/// Computed only while `en` is high (an arrival); otherwise every output is
/// 0, so Verilator skips the wide shifts and counts in idle cycles.
#[derive(LogicBlock, Default)]
pub struct PathMark {
    /// An arrival this cycle: compute the mark (else every output is 0).
    pub en: Signal<In, Bit>,
    /// Cumulative path PSN before the arrival.
    pub cum: Signal<In, Bits<32>>,
    /// Bitmap before the arrival, shift not yet applied.
    pub raw: Signal<In, Bits<512>>,
    /// Its pending shift (0..=257).
    pub k: Signal<In, Bits<9>>,
    /// The arrival's path PSN.
    pub psn: Signal<In, Bits<32>>,
    /// Verdict ([`PathVerdict`]).
    pub code: Signal<Out, Bits<2>>,
    /// Cumulative path PSN after a new arrival.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after a new arrival, shift not yet applied.
    pub new_raw: Signal<Out, Bits<512>>,
    /// Its pending shift.
    pub new_k: Signal<Out, Bits<9>>,
    pre: MarkPre,
    lo: LeadOnes,
    hi: LeadOnes,
    post: MarkPost,
}

impl Logic for PathMark {
    #[hdl_gen]
    fn update(&mut self) {
        self.pre.en.next = self.en.val();
        self.lo.en.next = self.en.val();
        self.hi.en.next = self.en.val();
        self.post.en.next = self.en.val();
        self.pre.cum.next = self.cum.val();
        self.pre.raw.next = self.raw.val();
        self.pre.k.next = self.k.val();
        self.pre.psn.next = self.psn.val();
        self.lo.v.next = self.pre.masked.val().get_bits::<256>(0);
        self.hi.v.next = self.pre.masked.val().get_bits::<256>(256);
        self.post.cum.next = self.cum.val();
        self.post.k.next = self.k.val();
        self.post.psn.next = self.psn.val();
        self.post.d.next = self.pre.d.val();
        self.post.hit.next = self.pre.hit.val();
        self.post.slide.next = self.pre.slide.val();
        self.post.seen.next = self.pre.seen.val();
        self.post.norm.next = self.pre.norm.val();
        self.post.lo.next = self.lo.count.val();
        self.post.hi.next = self.hi.count.val();
        self.code.next = self.post.code.val();
        self.new_cum.next = self.post.new_cum.val();
        self.new_raw.next = self.post.new_raw.val();
        self.new_k.next = self.post.new_k.val();
    }
}

/// First half of [`PathMark`]: the distance `d`, the case, the bitmap to
/// count leading ones of (bits below `k`, or `k + n` when sliding by `n`,
/// set), and the bitmap with its pending shift applied; all 0 unless `en`.
#[derive(LogicBlock)]
pub struct MarkPre {
    /// Compute this cycle (else every output is 0).
    pub en: Signal<In, Bit>,
    /// Cumulative path PSN.
    pub cum: Signal<In, Bits<32>>,
    /// Bitmap, shift pending.
    pub raw: Signal<In, Bits<512>>,
    /// Pending shift.
    pub k: Signal<In, Bits<9>>,
    /// Path PSN.
    pub psn: Signal<In, Bits<32>>,
    /// `psn - cum`.
    pub d: Signal<Out, Bits<32>>,
    /// Logical bit `d - 1 mod 256` is set (the PSN, or `n - 1` when sliding).
    pub hit: Signal<Out, Bit>,
    /// `256 < d < 2^30`.
    pub slide: Signal<Out, Bit>,
    /// Sliding by `n ≤ 256` and PSN `cum + n` (the new `cum`) had arrived.
    pub seen: Signal<Out, Bit>,
    /// `raw` with its bits below the count's start set.
    pub masked: Signal<Out, Bits<512>>,
    /// The logical bitmap: `raw >> k`, 256 bits.
    pub norm: Signal<Out, Bits<256>>,
    c_ones: Constant<Bits<512>>,
    dd: Signal<Local, Bits<32>>,
    near: Signal<Local, Bit>,
    start: Signal<Local, Bits<10>>,
    idx: Signal<Local, Bits<8>>,
    ridx: Signal<Local, Bits<10>>,
}

impl Default for MarkPre {
    fn default() -> Self {
        Self {
            en: Default::default(),
            cum: Default::default(),
            raw: Default::default(),
            k: Default::default(),
            psn: Default::default(),
            d: Default::default(),
            hit: Default::default(),
            slide: Default::default(),
            seen: Default::default(),
            masked: Default::default(),
            norm: Default::default(),
            c_ones: Constant::new(Bits::<512>::mask()),
            dd: Default::default(),
            near: Default::default(),
            start: Default::default(),
            idx: Default::default(),
            ridx: Default::default(),
        }
    }
}

impl Logic for MarkPre {
    #[hdl_gen]
    fn update(&mut self) {
        self.dd.next = 0.into();
        self.d.next = 0.into();
        self.norm.next = 0.into();
        self.idx.next = 0.into();
        self.ridx.next = 0.into();
        self.hit.next = false;
        self.slide.next = false;
        self.near.next = false;
        self.start.next = 0.into();
        self.seen.next = false;
        self.masked.next = 0.into();
        if self.en.val() {
            self.dd.next = self.psn.val() - self.cum.val();
            self.d.next = self.dd.val();
            self.norm.next = bit_cast::<256, 512>(self.raw.val() >> self.k.val());
            // Logical bit d - 1 (in the window) and bit n - 1 (sliding by
            // n = d - 256, 257 ≤ d ≤ 512) are the same bit: n - 1 ≡ d - 1 mod
            // 256; raw bit k + that.
            // (8 bits first, as in the engine: d = 256 gives 255.)
            self.idx.next = self.dd.val().get_bits::<8>(0) - 1;
            self.ridx.next = bit_cast::<10, 9>(self.k.val()) + bit_cast::<10, 8>(self.idx.val());
            self.hit.next = false;
            if !self.ridx.val().get_bit(9) {
                self.hit.next = self
                    .raw
                    .val()
                    .get_bit(self.ridx.val().get_bits::<9>(0).index());
            }
            self.slide.next =
                !self.dd.val().get_bit(31) & !self.dd.val().get_bit(30) & (self.dd.val() > 256);
            self.near.next = self.dd.val() <= 512;
            // The count starts at k, or at k + n when sliding by n ≤ 256.
            self.start.next = bit_cast::<10, 9>(self.k.val());
            if self.slide.val() & self.near.val() {
                self.start.next =
                    bit_cast::<10, 9>(self.k.val()) + (self.dd.val().get_bits::<10>(0) - 256);
            }
            self.seen.next = self.slide.val() & self.near.val() & self.hit.val();
            self.masked.next = self.raw.val() | !(self.c_ones.val() << self.start.val());
        }
    }
}

/// Second half of [`PathMark`]: from the leading-ones count, the new `cum`,
/// the new bitmap (shift pending) and the verdict; all 0 unless `en`.
#[derive(LogicBlock)]
pub struct MarkPost {
    /// Compute this cycle (else every output is 0).
    pub en: Signal<In, Bit>,
    /// Cumulative path PSN.
    pub cum: Signal<In, Bits<32>>,
    /// Pending shift of the bitmap.
    pub k: Signal<In, Bits<9>>,
    /// Path PSN.
    pub psn: Signal<In, Bits<32>>,
    /// [`MarkPre::d`].
    pub d: Signal<In, Bits<32>>,
    /// [`MarkPre::hit`].
    pub hit: Signal<In, Bit>,
    /// [`MarkPre::slide`].
    pub slide: Signal<In, Bit>,
    /// [`MarkPre::seen`].
    pub seen: Signal<In, Bit>,
    /// [`MarkPre::norm`].
    pub norm: Signal<In, Bits<256>>,
    /// Leading ones of the low half of [`MarkPre::masked`].
    pub lo: Signal<In, Bits<9>>,
    /// Leading ones of its high half.
    pub hi: Signal<In, Bits<9>>,
    /// Verdict ([`PathVerdict`]).
    pub code: Signal<Out, Bits<2>>,
    /// Cumulative path PSN after a new arrival.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after a new arrival, shift pending.
    pub new_raw: Signal<Out, Bits<512>>,
    /// Its pending shift.
    pub new_k: Signal<Out, Bits<9>>,
    c_one: Constant<Bits<512>>,
    at_cum: Signal<Local, Bit>,
    z: Signal<Local, Bits<10>>,
    zp: Signal<Local, Bits<9>>,
    pos: Signal<Local, Bits<9>>,
}

impl Default for MarkPost {
    fn default() -> Self {
        Self {
            en: Default::default(),
            cum: Default::default(),
            k: Default::default(),
            psn: Default::default(),
            d: Default::default(),
            hit: Default::default(),
            slide: Default::default(),
            seen: Default::default(),
            norm: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            code: Default::default(),
            new_cum: Default::default(),
            new_raw: Default::default(),
            new_k: Default::default(),
            c_one: Constant::new(1.into()),
            at_cum: Default::default(),
            z: Default::default(),
            zp: Default::default(),
            pos: Default::default(),
        }
    }
}

impl Logic for MarkPost {
    #[hdl_gen]
    fn update(&mut self) {
        self.z.next = 0.into();
        self.zp.next = 0.into();
        self.at_cum.next = false;
        self.pos.next = 0.into();
        self.new_raw.next = 0.into();
        self.new_k.next = 0.into();
        self.new_cum.next = 0.into();
        self.code.next = 0.into();
        if self.en.val() {
            // Leading ones of the 512-bit vector; minus k: of the logical bitmap.
            self.z.next = bit_cast::<10, 9>(self.lo.val());
            if self.lo.val() == 256 {
                self.z.next = bit_cast::<10, 9>(self.hi.val()) + 256;
            }
            self.zp.next = bit_cast::<9, 10>(self.z.val() - bit_cast::<10, 9>(self.k.val()) + 1);
            self.at_cum.next = (self.d.val() == 0)
                | (self.seen.val() & (self.d.val() == 257) & (self.zp.val() == 257));
            // The PSN's bit d - 1 of the logical bitmap before the shift (d ≤
            // 512 whenever it is used).
            self.pos.next = bit_cast::<9, 32>(self.d.val() - 1);
            self.new_raw.next =
                bit_cast::<512, 256>(self.norm.val()) | (self.c_one.val() << self.pos.val());
            self.new_k.next = 0.into();
            self.new_cum.next = self.cum.val();
            if self.at_cum.val() {
                self.new_raw.next = bit_cast::<512, 256>(self.norm.val());
                self.new_k.next = self.zp.val();
                self.new_cum.next = self.cum.val() + bit_cast::<32, 9>(self.zp.val());
                if self.slide.val() {
                    self.new_raw.next = 0.into();
                    self.new_k.next = 0.into();
                    self.new_cum.next = self.psn.val() + 1;
                }
            } else if self.seen.val() {
                self.new_k.next = self.zp.val();
                self.new_cum.next = self.cum.val() + bit_cast::<32, 9>(self.zp.val());
            } else if self.slide.val() {
                self.new_cum.next = self.psn.val() - 256;
                if self.d.val() < 512 {
                    self.new_k.next = bit_cast::<9, 8>(self.d.val().get_bits::<8>(0));
                } else {
                    self.new_raw.next = self.c_one.val() << 255;
                }
            }
            self.code.next = 0.into();
            if !self.d.val().get_bit(31) & self.d.val().get_bit(30) {
                self.code.next = 2.into();
            } else if self.d.val().get_bit(31)
                | (!self.slide.val() & !self.at_cum.val() & self.hit.val())
            {
                self.code.next = 1.into();
            }
        }
    }
}

/// One QP's `P` paths (`PB` = log2 `P` address bits) in registers, the
/// mark rules alone: one arrival per cycle (`ev_*`), its verdict
/// registered (`res_*`, the cycle after), a path's state on a
/// combinational read port (`rd_*`).
#[derive(LogicBlock)]
pub struct RxPathRegs<const P: usize, const PB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every path back to zero.
    pub rst: Signal<In, Bit>,
    /// An arrival this cycle.
    pub ev_valid: Signal<In, Bit>,
    /// Its path.
    pub ev_path: Signal<In, Bits<PB>>,
    /// Its path PSN.
    pub ev_psn: Signal<In, Bits<32>>,
    /// It was CE-marked.
    pub ev_ce: Signal<In, Bit>,
    /// A verdict (the cycle after an arrival).
    pub res_valid: Signal<Out, Bit>,
    /// The arrival's path.
    pub res_path: Signal<Out, Bits<PB>>,
    /// Its verdict ([`PathVerdict`]).
    pub res_code: Signal<Out, Bits<2>>,
    /// Path to read.
    pub rd_path: Signal<In, Bits<PB>>,
    /// Its cumulative path PSN.
    pub rd_cum: Signal<Out, Bits<32>>,
    /// Its SACK bitmap.
    pub rd_sack: Signal<Out, Bits<256>>,
    /// Its received-packet count.
    pub rd_rx_count: Signal<Out, Bits<32>>,
    /// Its CE-marked packet count.
    pub rd_ce_count: Signal<Out, Bits<32>>,
    file: PathFile<P, PB>,
    v: DFF<Bit>,
    path: DFF<Bits<PB>>,
    code: DFF<Bits<2>>,
    mark: PathMark,
    c_lo: Constant<Bits<352>>,
    rx_n: Signal<Local, Bits<32>>,
    upd: Signal<Local, Bits<352>>,
    shifted: Signal<Local, Bits<256>>,
}

impl<const P: usize, const PB: usize> Default for RxPathRegs<P, PB> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            ev_valid: Default::default(),
            ev_path: Default::default(),
            ev_psn: Default::default(),
            ev_ce: Default::default(),
            res_valid: Default::default(),
            res_path: Default::default(),
            res_code: Default::default(),
            rd_path: Default::default(),
            rd_cum: Default::default(),
            rd_sack: Default::default(),
            rd_rx_count: Default::default(),
            rd_ce_count: Default::default(),
            file: Default::default(),
            v: Default::default(),
            path: Default::default(),
            code: Default::default(),
            mark: Default::default(),
            c_lo: Constant::new(Bits::<352>::mask() >> 32),
            rx_n: Default::default(),
            upd: Default::default(),
            shifted: Default::default(),
        }
    }
}

impl<const P: usize, const PB: usize> Logic for RxPathRegs<P, PB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, v, path, code);
        self.file.clock.next = self.clock.val();
        self.file.rst.next = self.rst.val();
        self.file.sel.next = self.ev_path.val();
        self.file.rd_sel.next = self.rd_path.val();
        self.mark.en.next = self.ev_valid.val();
        self.mark.cum.next = self.file.cur.val().get_bits::<32>(0);
        self.mark.raw.next = bit_cast::<512, 256>(self.file.cur.val().get_bits::<256>(32));
        self.mark.k.next = 0.into();
        self.mark.psn.next = self.ev_psn.val();
        // Counted unless out of window; the state moves when new.
        self.upd.next = bit_cast::<352, 288>(self.file.cur.val().get_bits::<288>(0));
        self.shifted.next = 0.into();
        if self.ev_valid.val() & (self.mark.code.val() == 0) {
            self.shifted.next =
                bit_cast::<256, 512>(self.mark.new_raw.val() >> self.mark.new_k.val());
            self.upd.next = bit_cast::<352, 32>(self.mark.new_cum.val())
                | (bit_cast::<352, 256>(self.shifted.val()) << 32);
        }
        // The count's + 1 in 32 bits (it wraps as the engine's), not 352.
        self.rx_n.next = self.file.cur.val().get_bits::<32>(288) + 1;
        self.upd.next = self.upd.val()
            | (bit_cast::<352, 32>(self.rx_n.val()) << 288)
            | (bit_cast::<352, 32>(self.file.cur.val().get_bits::<32>(320)) << 320);
        if self.ev_ce.val() {
            self.upd.next = (self.upd.val() & self.c_lo.val())
                | (bit_cast::<352, 32>(self.file.cur.val().get_bits::<32>(320) + 1) << 320);
        }
        self.file.we.next = self.ev_valid.val() & (self.mark.code.val() != 2);
        self.file.wdata.next = self.upd.val();
        self.v.d.next = self.ev_valid.val();
        self.path.d.next = self.ev_path.val();
        self.code.d.next = self.mark.code.val();
        if self.rst.val() {
            self.v.d.next = false;
            self.path.d.next = 0.into();
            self.code.d.next = 0.into();
        }
        self.res_valid.next = self.v.q.val();
        self.res_path.next = self.path.q.val();
        self.res_code.next = self.code.q.val();
        self.rd_cum.next = self.file.rd.val().get_bits::<32>(0);
        self.rd_sack.next = self.file.rd.val().get_bits::<256>(32);
        self.rd_rx_count.next = self.file.rd.val().get_bits::<32>(288);
        self.rd_ce_count.next = self.file.rd.val().get_bits::<32>(320);
    }
}

/// The path states of [`RxPathRegs`] ({ce\[31:0\], rx\[31:0\], sack\[255:0\],
/// cum\[31:0\]} per path): two combinational read ports, one write port.
#[derive(LogicBlock)]
pub struct PathFile<const P: usize, const PB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every state zero.
    pub rst: Signal<In, Bit>,
    /// Path of the event port (read and write).
    pub sel: Signal<In, Bits<PB>>,
    /// Its state.
    pub cur: Signal<Out, Bits<352>>,
    /// Write `wdata` to path `sel` at the clock edge.
    pub we: Signal<In, Bit>,
    /// Write data.
    pub wdata: Signal<In, Bits<352>>,
    /// Path of the read port.
    pub rd_sel: Signal<In, Bits<PB>>,
    /// Its state.
    pub rd: Signal<Out, Bits<352>>,
    st: [DFF<Bits<352>>; P],
}

impl<const P: usize, const PB: usize> Default for PathFile<P, PB> {
    fn default() -> Self {
        assert_eq!(1 << PB, P, "PathFile: P must be 2^PB");
        Self {
            clock: Default::default(),
            rst: Default::default(),
            sel: Default::default(),
            cur: Default::default(),
            we: Default::default(),
            wdata: Default::default(),
            rd_sel: Default::default(),
            rd: Default::default(),
            st: std::array::from_fn(|_| Default::default()),
        }
    }
}

impl<const P: usize, const PB: usize> Logic for PathFile<P, PB> {
    #[hdl_gen]
    fn update(&mut self) {
        self.cur.next = 0.into();
        self.rd.next = 0.into();
        for i in 0..P {
            self.st[i].clock.next = self.clock.val();
            self.st[i].d.next = self.st[i].q.val();
            if self.sel.val().index() == i {
                self.cur.next = self.st[i].q.val();
                if self.we.val() {
                    self.st[i].d.next = self.wdata.val();
                }
            }
            if self.rd_sel.val().index() == i {
                self.rd.next = self.st[i].q.val();
            }
            if self.rst.val() {
                self.st[i].d.next = 0.into();
            }
        }
    }
}

/// Verilog source of the standalone tracker ([`RxPathRegs`]) for `paths`
/// paths of one QP (a power of two, 2 to [`MAX_PATHS`]); top module `top`,
/// ports as the block's fields.
///
/// # Panics
/// If `paths` is not a power of two in 2..=[`MAX_PATHS`].
pub fn rx_path_verilog(paths: usize) -> String {
    fn emit<U: Block>(mut uut: U) -> String {
        uut.connect_all();
        generate_verilog(&uut)
    }
    match paths {
        2 => emit(RxPathRegs::<2, 1>::default()),
        4 => emit(RxPathRegs::<4, 2>::default()),
        8 => emit(RxPathRegs::<8, 3>::default()),
        16 => emit(RxPathRegs::<16, 4>::default()),
        32 => emit(RxPathRegs::<32, 5>::default()),
        64 => emit(RxPathRegs::<64, 6>::default()),
        other => panic!("unsupported path count {other}"),
    }
}

/// Entries of [`RxPathTable`]: one per (QP slot, path).
pub const ENTRIES: usize = QPS * MAX_PATHS;

/// Bits of an entry's state in RAM: {echo_ts\[63:0\], ce\[31:0\], rx\[31:0\],
/// sack\[255:0\], cum\[31:0\]}.
const SW: usize = 416;

/// Bits of an entry's state in the pipeline (S2, W1), the bitmap's shift
/// pending ([`PathMark`]): {echo_ts\[63:0\], ce\[31:0\], rx\[31:0\], k\[8:0\],
/// raw\[511:0\], cum\[31:0\]}.
const UW: usize = 681;

/// The receive core's path tracker: one entry per (QP slot, path), address
/// `qp << 6 | path`, in two block RAMs (rust-hdl `RAM`, registered reads)
/// with one write port (both written alike) and one read port each: A for
/// arrivals, B for ACKs.
///
/// Pipeline, one arrival per cycle, in step with `RxPlace`:
/// * S0: `rd_addr` (the packet's QP slot and path) is read from RAM A;
/// * S1: `rd_cum` is the entry's `cum`, forwarded from the S2 update in
///   flight, then from the two updates not yet in the RAM read of S0 (the
///   write-back registers W1 and W2), so back-to-back arrivals on one entry
///   see each other; `RxPlace` decides the path window from it;
/// * S2: the event (`ev_*`, `RxPlace`'s verdict event): when `ev_track`, the
///   entry is updated as `Rx::on_path_arrival` does ([`PathMark`],
///   `rx_count` + 1, `ce_count` + CE, echo timestamp = max, reply port,
///   ECE) into W1, and queued for an ACK unless already queued.
///   `ev_qhit` records `ev_conn_cum` as the QP's connection cumulative PSN
///   and `ev_live` as whether the QP still receives (sends ACKs);
/// * W1: the update is written to both RAMs (a register between the mark
///   and the RAMs' inputs); W2 holds it one more cycle for S1's forwarding.
///
/// The mark itself is one cycle (S2 to S2 through S1's forwarding): an
/// arrival needs the state its predecessor on the same entry left, and
/// `RxPlace` needs the resulting `cum` in the next cycle.
///
/// ACK port: `aq_valid` says the queue is not empty; `aq_pop` takes its
/// head, and in the next cycle (only) `ak_*` hold that entry's fields as of
/// before this cycle's arrival (so an arrival in the same cycle re-queues
/// it), its ECE flag (cleared), and its QP's connection cumulative PSN and
/// liveness.
#[derive(LogicBlock, Default)]
pub struct RxPathTable {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every entry back to zero, queue empty.
    pub rst: Signal<In, Bit>,
    /// S0: entry to read (`qp << 6 | path`).
    pub rd_addr: Signal<In, Bits<8>>,
    /// S0: a read this cycle (`RxPlace::trk_rd_en`); S1's forwarding mux
    /// and `rd_cum` are computed only after one (`rd_cum` is 0 otherwise).
    pub rd_en: Signal<In, Bit>,
    /// S1: that entry's cumulative path PSN.
    pub rd_cum: Signal<Out, Bits<32>>,
    /// S2: verdict event.
    pub ev_valid: Signal<In, Bit>,
    /// S2: the engine path-tracks this packet (not out of window).
    pub ev_track: Signal<In, Bit>,
    /// S2: the packet's QP was found; `ev_conn_cum` is valid.
    pub ev_qhit: Signal<In, Bit>,
    /// S2: path PSN.
    pub ev_psn: Signal<In, Bits<32>>,
    /// S2: sender timestamp.
    pub ev_ts: Signal<In, Bits<64>>,
    /// S2: UDP source port (the ACK's destination port).
    pub ev_port: Signal<In, Bits<16>>,
    /// S2: IP ECN CE mark.
    pub ev_ce: Signal<In, Bit>,
    /// S2: the QP's connection cumulative PSN after the verdict.
    pub ev_conn_cum: Signal<In, Bits<32>>,
    /// S2: the QP is still RTR or RTS after the verdict.
    pub ev_live: Signal<In, Bit>,
    /// An entry waits for an ACK.
    pub aq_valid: Signal<Out, Bit>,
    /// Take the head of the ACK queue.
    pub aq_pop: Signal<In, Bit>,
    /// ACK: QP slot.
    pub ak_qp: Signal<Out, Bits<2>>,
    /// ACK: path.
    pub ak_path: Signal<Out, Bits<6>>,
    /// ACK: cumulative path PSN.
    pub ak_cum: Signal<Out, Bits<32>>,
    /// ACK: SACK bitmap.
    pub ak_sack: Signal<Out, Bits<256>>,
    /// ACK: packets received on the path.
    pub ak_rx: Signal<Out, Bits<32>>,
    /// ACK: CE-marked packets received on the path.
    pub ak_ce: Signal<Out, Bits<32>>,
    /// ACK: largest timestamp received on the path.
    pub ak_ts: Signal<Out, Bits<64>>,
    /// ACK: UDP source port of the path's last packet.
    pub ak_port: Signal<Out, Bits<16>>,
    /// ACK: a CE mark arrived since the path's last ACK.
    pub ak_ece: Signal<Out, Bit>,
    /// ACK: the QP's connection cumulative PSN.
    pub ak_conn_cum: Signal<Out, Bits<32>>,
    /// ACK: the QP was still RTR or RTS at its last event (else no ACK:
    /// the engine's failed QP sends none).
    pub ak_live: Signal<Out, Bit>,
    // State RAMs: A = state word, B = {reply port, state word}.
    ram_a: RAM<Bits<SW>, 8>,
    ram_b: RAM<Bits<{ SW + 16 }>, 8>,
    // Pending-ACK queue: each entry at most once, so it never overflows.
    queue: LutRam<8, 8>,
    mark: PathMark,
    // S1: the address read in S0, and whether the entry was ever written.
    a1: DFF<Bits<8>>,
    rd_seen: DFF<Bit>,
    rd_v: DFF<Bit>,
    // S2: the entry and its state before the event.
    a2: DFF<Bits<8>>,
    old: DFF<Bits<UW>>,
    // Write-back: W1 (being written to the RAMs), W2 (written last edge).
    w1: DFF<Bits<{ UW + 16 }>>,
    w1_addr: DFF<Bits<8>>,
    w1_v: DFF<Bit>,
    w2: DFF<Bits<SW>>,
    w2_addr: DFF<Bits<8>>,
    w2_v: DFF<Bit>,
    // Per entry: written since reset, queued, CE since the last ACK.
    seen: DFF<Bits<ENTRIES>>,
    pend: DFF<Bits<ENTRIES>>,
    ece: DFF<Bits<ENTRIES>>,
    // Per QP slot: connection cumulative PSN, still receiving.
    conn_cum: [DFF<Bits<32>>; QPS],
    live: DFF<Bits<QPS>>,
    q_wr: DFF<Bits<9>>,
    q_rd: DFF<Bits<9>>,
    // ACK fields taken at a pop; `k_fwd`: the entry's state is W1's.
    k_qp: DFF<Bits<2>>,
    k_path: DFF<Bits<6>>,
    k_ece: DFF<Bit>,
    k_conn: DFF<Bits<32>>,
    k_live: DFF<Bit>,
    k_fwd: DFF<Bit>,
    k_w: DFF<Bits<{ SW + 16 }>>,
    rx_n: Signal<Local, Bits<32>>,
    ce_n: Signal<Local, Bits<32>>,
    ts_n: Signal<Local, Bits<64>>,
    upd: Signal<Local, Bits<UW>>,
    s1: Signal<Local, Bits<UW>>,
    nw: Signal<Local, Bits<SW>>,
    wn: Signal<Local, Bits<{ SW + 16 }>>,
    shifted: Signal<Local, Bits<256>>,
    head: Signal<Local, Bits<8>>,
    pop: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    fl: Signal<Local, Bits<ENTRIES>>,
    kd: Signal<Local, Bits<{ SW + 16 }>>,
}

impl Logic for RxPathTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, a1, rd_seen, rd_v, a2, old, w1, w1_addr, w1_v, w2, w2_addr, w2_v, seen,
            pend, ece, live, q_wr, q_rd, k_qp, k_path, k_ece, k_conn, k_live, k_fwd, k_w
        );
        for i in 0..QPS {
            self.conn_cum[i].clock.next = self.clock.val();
            self.conn_cum[i].d.next = self.conn_cum[i].q.val();
        }
        self.ram_a.read_clock.next = self.clock.val();
        self.ram_a.write_clock.next = self.clock.val();
        self.ram_b.read_clock.next = self.clock.val();
        self.ram_b.write_clock.next = self.clock.val();
        self.queue.clock.next = self.clock.val();

        // ---- S2: the update of a tracked event (`ev_valid & ev_track`). ----
        // Written out from the ports wherever it is used, never through a
        // local: Verilator splits the kernel into groups of statements
        // linked by the locals they share, and a shared "tracked" local
        // would tie the mark's inputs to its outputs (UNOPTFLAT) and this
        // stage to the ACK port's input-driven logic, evaluated again at
        // every input change. The wide work (mark, `upd`) is done only
        // for a tracked event; `upd` is 0 otherwise (not used then).
        self.mark.en.next = self.ev_valid.val() & self.ev_track.val();
        self.mark.cum.next = self.old.q.val().get_bits::<32>(0);
        self.mark.raw.next = self.old.q.val().get_bits::<512>(32);
        self.mark.k.next = self.old.q.val().get_bits::<9>(544);
        self.mark.psn.next = self.ev_psn.val();
        self.rx_n.next = 0.into();
        self.ce_n.next = 0.into();
        self.ts_n.next = 0.into();
        self.upd.next = 0.into();
        if self.ev_valid.val() & self.ev_track.val() {
            self.rx_n.next = self.old.q.val().get_bits::<32>(553) + 1;
            self.ce_n.next = self.old.q.val().get_bits::<32>(585);
            if self.ev_ce.val() {
                self.ce_n.next = self.old.q.val().get_bits::<32>(585) + 1;
            }
            self.ts_n.next = self.old.q.val().get_bits::<64>(617);
            if self.ev_ts.val() > self.old.q.val().get_bits::<64>(617) {
                self.ts_n.next = self.ev_ts.val();
            }
            self.upd.next = bit_cast::<UW, 553>(self.old.q.val().get_bits::<553>(0));
            if self.mark.code.val() == 0 {
                self.upd.next = bit_cast::<UW, 32>(self.mark.new_cum.val())
                    | (bit_cast::<UW, 512>(self.mark.new_raw.val()) << 32)
                    | (bit_cast::<UW, 9>(self.mark.new_k.val()) << 544);
            }
            self.upd.next = self.upd.val()
                | (bit_cast::<UW, 32>(self.rx_n.val()) << 553)
                | (bit_cast::<UW, 32>(self.ce_n.val()) << 585)
                | (bit_cast::<UW, 64>(self.ts_n.val()) << 617);
        }

        // ---- S1: the freshest state of the entry read in S0 (after a read only). ----
        self.nw.next = 0.into();
        self.s1.next = 0.into();
        if self.rd_v.q.val() {
            if self.rd_seen.q.val() {
                self.nw.next = self.ram_a.read_data.val();
            }
            if self.w2_v.q.val() & (self.w2_addr.q.val() == self.a1.q.val()) {
                self.nw.next = self.w2.q.val();
            }
            // From the RAM side: the bitmap's shift done (k = 0).
            self.s1.next = bit_cast::<UW, 288>(self.nw.val().get_bits::<288>(0))
                | (bit_cast::<UW, 128>(self.nw.val().get_bits::<128>(288)) << 553);
            if self.w1_v.q.val() & (self.w1_addr.q.val() == self.a1.q.val()) {
                self.s1.next = self.w1.q.val().get_bits::<UW>(0);
            }
            if self.ev_valid.val() & self.ev_track.val() & (self.a2.q.val() == self.a1.q.val()) {
                self.s1.next = self.upd.val();
            }
        }
        self.rd_cum.next = self.s1.val().get_bits::<32>(0);
        self.old.d.next = self.s1.val();
        self.a2.d.next = self.a1.q.val();

        // ---- S0: read. ----
        self.a1.d.next = self.rd_addr.val();
        self.rd_v.d.next = self.rd_en.val();
        self.rd_seen.d.next = self.seen.q.val().get_bit(self.rd_addr.val().index());
        self.ram_a.read_address.next = self.rd_addr.val();

        // ---- Write-back: W1 applies the pending shift. ----
        // W1 is loaded, and `wn` computed (else 0), only when valid: both
        // are used only then (the RAM writes, W2 and the ACK port's `k_w`
        // all follow `w1_v`).
        if self.ev_valid.val() & self.ev_track.val() {
            self.w1.d.next = bit_cast::<{ UW + 16 }, UW>(self.upd.val())
                | (bit_cast::<{ UW + 16 }, 16>(self.ev_port.val()) << 681);
        }
        self.w1_addr.d.next = self.a2.q.val();
        self.w1_v.d.next = self.ev_valid.val() & self.ev_track.val();
        self.shifted.next = 0.into();
        self.wn.next = 0.into();
        if self.w1_v.q.val() {
            self.shifted.next = bit_cast::<256, 512>(
                self.w1.q.val().get_bits::<512>(32) >> self.w1.q.val().get_bits::<9>(544),
            );
            self.wn.next = bit_cast::<{ SW + 16 }, 32>(self.w1.q.val().get_bits::<32>(0))
                | (bit_cast::<{ SW + 16 }, 256>(self.shifted.val()) << 32)
                | (bit_cast::<{ SW + 16 }, 144>(self.w1.q.val().get_bits::<144>(553)) << 288);
        }
        self.w2.d.next = self.wn.val().get_bits::<SW>(0);
        self.w2_addr.d.next = self.w1_addr.q.val();
        self.w2_v.d.next = self.w1_v.q.val();
        self.ram_a.write_enable.next = self.w1_v.q.val();
        self.ram_a.write_address.next = self.w1_addr.q.val();
        self.ram_a.write_data.next = self.wn.val().get_bits::<SW>(0);
        self.ram_b.write_enable.next = self.w1_v.q.val();
        self.ram_b.write_address.next = self.w1_addr.q.val();
        self.ram_b.write_data.next = self.wn.val();
        if self.ev_valid.val() & self.ev_track.val() {
            self.seen.d.next = self.seen.q.val().replace_bit(self.a2.q.val().index(), true);
        }
        if self.ev_valid.val() & self.ev_qhit.val() {
            for i in 0..QPS {
                if self.a2.q.val().get_bits::<2>(6).index() == i {
                    self.conn_cum[i].d.next = self.ev_conn_cum.val();
                }
            }
            self.live.d.next = self
                .live
                .q
                .val()
                .replace_bit(self.a2.q.val().get_bits::<2>(6).index(), self.ev_live.val());
        }

        // ---- ACK queue: a pop in the same cycle as an arrival comes first. ----
        self.head.next = self.queue.read_data.val();
        self.aq_valid.next = self.q_wr.q.val() != self.q_rd.q.val();
        self.pop.next = self.aq_pop.val() & (self.q_wr.q.val() != self.q_rd.q.val());
        self.push.next = self.ev_valid.val()
            & self.ev_track.val()
            & (!self.pend.q.val().get_bit(self.a2.q.val().index())
                | (self.pop.val() & (self.head.val() == self.a2.q.val())));
        self.queue.read_address.next = self.q_rd.q.val().get_bits::<8>(0);
        self.queue.write_enable.next = self.push.val();
        self.queue.write_address.next = self.q_wr.q.val().get_bits::<8>(0);
        self.queue.write_data.next = self.a2.q.val();
        self.ram_b.read_address.next = self.head.val();
        self.fl.next = self.pend.q.val();
        if self.pop.val() {
            self.fl.next = self.fl.val().replace_bit(self.head.val().index(), false);
        }
        if self.push.val() {
            self.fl.next = self.fl.val().replace_bit(self.a2.q.val().index(), true);
            self.q_wr.d.next = self.q_wr.q.val() + 1;
        }
        self.pend.d.next = self.fl.val();
        self.fl.next = self.ece.q.val();
        if self.pop.val() {
            self.fl.next = self.fl.val().replace_bit(self.head.val().index(), false);
        }
        if self.ev_valid.val() & self.ev_track.val() & self.ev_ce.val() {
            self.fl.next = self.fl.val().replace_bit(self.a2.q.val().index(), true);
        }
        self.ece.d.next = self.fl.val();
        if self.pop.val() {
            self.q_rd.d.next = self.q_rd.q.val() + 1;
            self.k_qp.d.next = self.head.val().get_bits::<2>(6);
            self.k_path.d.next = self.head.val().get_bits::<6>(0);
            self.k_ece.d.next = self.ece.q.val().get_bit(self.head.val().index());
            for i in 0..QPS {
                if self.head.val().get_bits::<2>(6).index() == i {
                    self.k_conn.d.next = self.conn_cum[i].q.val();
                }
            }
            self.k_live.d.next = self
                .live
                .q
                .val()
                .get_bit(self.head.val().get_bits::<2>(6).index());
            self.k_fwd.d.next = self.w1_v.q.val() & (self.w1_addr.q.val() == self.head.val());
            self.k_w.d.next = self.wn.val();
        }
        self.kd.next = self.ram_b.read_data.val();
        if self.k_fwd.q.val() {
            self.kd.next = self.k_w.q.val();
        }
        self.ak_qp.next = self.k_qp.q.val();
        self.ak_path.next = self.k_path.q.val();
        self.ak_ece.next = self.k_ece.q.val();
        self.ak_conn_cum.next = self.k_conn.q.val();
        self.ak_live.next = self.k_live.q.val();
        self.ak_cum.next = self.kd.val().get_bits::<32>(0);
        self.ak_sack.next = self.kd.val().get_bits::<256>(32);
        self.ak_rx.next = self.kd.val().get_bits::<32>(288);
        self.ak_ce.next = self.kd.val().get_bits::<32>(320);
        self.ak_ts.next = self.kd.val().get_bits::<64>(352);
        self.ak_port.next = self.kd.val().get_bits::<16>(416);

        if self.rst.val() {
            self.seen.d.next = 0.into();
            self.pend.d.next = 0.into();
            self.ece.d.next = 0.into();
            self.live.d.next = 0.into();
            self.q_wr.d.next = 0.into();
            self.q_rd.d.next = 0.into();
            self.w1_v.d.next = false;
            self.w2_v.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaroce_firmware::{Nic, NicConfig, QpConfig, QpTransition, RemoteEnd, RxMeta, VecMemory};
    use metaroce_proto::{Ext, Flags, Opcode, Packet, PseudoHeader, Repr, Sack};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::{Arc, Mutex};

    #[test]
    fn verilog_emits() {
        for paths in [4, 8, 64] {
            let v = rx_path_verilog(paths);
            let bits = paths.trailing_zeros() - 1;
            assert!(v.contains("module top("), "{paths}");
            assert!(v.contains(&format!("[{bits}:0] ev_path;")), "{paths}");
        }
        assert!(crate::rx_path_table_verilog().contains("module top("));
        assert_eq!(ENTRIES, 256);
    }

    /// A path's state as the engine's ACK for it reports it.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
    struct State {
        cum: u32,
        sack: Sack,
        rx: u32,
        ce: u32,
    }

    /// The engine: one QP in RTR, every arrival a PROBE (which only
    /// touches the path tracker); its ACK carries the path's state.
    struct Engine {
        nic: Nic,
        mem: VecMemory,
        qpn: u32,
        buf: Vec<u8>,
    }

    const PEER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const LOCAL: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
    const PEER_QPN: u32 = 0x55;

    impl Engine {
        fn new() -> Self {
            let mut nic = Nic::new(NicConfig {
                local_ip: IpAddr::V4(LOCAL),
                qp: QpConfig::default(),
                ..NicConfig::default()
            });
            let pd = nic.alloc_pd();
            let qpn = nic.create_qp(pd, None).unwrap();
            nic.modify_qp(qpn, QpTransition::Init).unwrap();
            let remote = RemoteEnd {
                qpn: PEER_QPN,
                ip: IpAddr::V4(PEER),
                udp_port: metaroce_proto::DEFAULT_UDP_PORT,
                initial_psn: 0,
            };
            nic.modify_qp(qpn, QpTransition::Rtr(remote)).unwrap();
            let (mem, buf) = (VecMemory::new(0x1000, 4096), vec![0; 4096]);
            Engine { nic, mem, qpn, buf }
        }

        /// The arrival of `psn` on `path`: the path's state after it, or
        /// `None` when out of window (`path_window` moved, no ACK).
        fn arrive(&mut self, path: u16, psn: u32, ce: bool) -> Option<State> {
            let repr = Repr {
                opcode: Opcode::Probe,
                flags: Flags::ACK_REQ,
                dst_qpn: self.qpn,
                src_qpn: PEER_QPN,
                stream: 0,
                path,
                conn_psn: 0,
                path_psn: psn,
                timestamp: 0,
                ext: Ext::None,
            };
            let port = metaroce_proto::DEFAULT_UDP_PORT;
            let pseudo = PseudoHeader::new(IpAddr::V4(PEER), port, IpAddr::V4(LOCAL), port);
            let mut bytes = vec![0u8; repr.buffer_len(0)];
            repr.emit(&mut bytes, 0).unwrap();
            Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
            let meta = RxMeta {
                src_ip: IpAddr::V4(PEER),
                src_port: port,
                dst_ip: IpAddr::V4(LOCAL),
                dst_port: port,
                ecn_ce: ce,
            };
            let before = self.nic.drops().path_window;
            self.nic.handle_datagram(0, &bytes, meta, &mut self.mem);
            let oow = self.nic.drops().path_window != before;
            let mut state = None;
            while let Some(t) = self.nic.poll_transmit(0, &mut self.buf, &mut self.mem) {
                let p = Packet::new_checked(&self.buf[..t.len]).unwrap();
                if let Ok(Repr {
                    opcode: Opcode::Ack,
                    ext: Ext::Ack(a),
                    ..
                }) = Repr::parse(&p)
                {
                    state = Some(State {
                        cum: a.path_cum,
                        sack: a.sack,
                        rx: a.rx_count,
                        ce: a.ce_count,
                    });
                }
            }
            assert_eq!(oow, state.is_none(), "an ACK unless out of window");
            state
        }
    }

    /// Random arrivals on `paths` paths, bursts on two of them so that
    /// back-to-back events share state: in order, lost, reordered,
    /// repeated, jumps of 257..600 and up to 2^30, stale, absurd.
    fn arrivals(seed: u64, n: usize, paths: u16) -> Vec<(u16, u32, bool)> {
        let mut r = SmallRng::seed_from_u64(seed);
        let mut head = vec![0u32; paths as usize];
        (0..n)
            .map(|_| {
                let path = if r.gen_bool(0.6) {
                    r.gen_range(0..2)
                } else {
                    r.gen_range(0..paths)
                };
                let h = &mut head[path as usize];
                let psn = match r.gen_range(0..100) {
                    0..=49 => {
                        *h = h.wrapping_add(1);
                        h.wrapping_sub(1)
                    }
                    50..=64 => {
                        *h = h.wrapping_add(r.gen_range(2..8));
                        h.wrapping_sub(1)
                    }
                    65..=79 => h.wrapping_sub(r.gen_range(1..64)),
                    80..=86 => {
                        *h = h.wrapping_add(r.gen_range(257..600));
                        *h
                    }
                    87..=89 => {
                        *h = h.wrapping_add(r.gen_range(600..1 << 30));
                        *h
                    }
                    90..=95 => h.wrapping_sub(r.gen_range(1000..1 << 31)),
                    _ => h.wrapping_add(r.gen_range(1 << 30..1 << 31)),
                };
                (path, psn, r.gen_bool(0.2))
            })
            .collect()
    }

    fn sack_bits(s: &Sack) -> Bits<256> {
        let mut b = Bits::<256>::default();
        for i in 0..256 {
            if s.get(i) {
                b = b.replace_bit(i as usize, true);
            }
        }
        b
    }

    #[test]
    fn rust_hdl_model_of_the_standalone_tracker_matches_the_engine() {
        type Uut = RxPathRegs<8, 3>;
        let evs = arrivals(7, 1500, 8);
        let mut engine = Engine::new();
        let expect: Vec<_> = evs
            .iter()
            .map(|&(p, psn, ce)| engine.arrive(p, psn, ce))
            .collect();
        let fails = Arc::new(Mutex::new(Vec::<String>::new()));
        let out = fails.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<Uut>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<Uut>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            let mut last: Vec<State> = vec![State::default(); 8];
            for (i, (&(path, psn, ce), want)) in evs.iter().zip(&expect).enumerate() {
                x.ev_valid.next = true;
                x.ev_path.next = (path as u64).into();
                x.ev_psn.next = (psn as u64).into();
                x.ev_ce.next = ce;
                x.rd_path.next = (path as u64).into();
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                x.ev_valid.next = false;
                x = sim.wait(1, x)?;
                let code = x.res_code.val().index() as u8;
                let now = match want {
                    None => last[path as usize],
                    Some(s) => *s,
                };
                let verdict = match want {
                    None => PathVerdict::OutOfWindow,
                    Some(s) if (s.cum, s.sack) == (last[path as usize].cum, last[path as usize].sack) => {
                        PathVerdict::Duplicate
                    }
                    Some(_) => PathVerdict::New,
                } as u8;
                let got = (
                    x.rd_cum.val().index() as u32,
                    x.rd_sack.val(),
                    x.rd_rx_count.val().index() as u32,
                    x.rd_ce_count.val().index() as u32,
                );
                if code != verdict
                    || !x.res_valid.val()
                    || got != (now.cum, sack_bits(&now.sack), now.rx, now.ce)
                {
                    out.lock().unwrap().push(format!(
                        "event {i} (path {path}, psn {psn:#x}): code {code} want {verdict}, cum {:#x} want {:#x}",
                        got.0, now.cum
                    ));
                }
                last[path as usize] = now;
            }
            sim.done(x)
        });
        sim.run(Box::new(Uut::default()), 100_000).unwrap();
        let f = fails.lock().unwrap();
        assert!(
            f.is_empty(),
            "{} mismatches, first: {:?}",
            f.len(),
            &f[..f.len().min(5)]
        );
    }

    #[test]
    fn rust_hdl_model_of_the_table_matches_the_engine() {
        // One engine QP behind QP slot 2; arrivals in RxPlace's timing
        // (read in S0, `cum` checked in S1, event in S2), mostly one per
        // cycle; ACKs popped at random and checked against the engine's
        // state after the events before the pop's cycle.
        let evs = arrivals(11, 1200, 8);
        let mut engine = Engine::new();
        let expect: Vec<_> = evs
            .iter()
            .map(|&(p, psn, ce)| engine.arrive(p, psn, ce))
            .collect();
        let fails = Arc::new(Mutex::new(Vec::<String>::new()));
        let out = fails.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<RxPathTable>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<RxPathTable>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            let mut rng = SmallRng::seed_from_u64(3);
            let slot = 2u64;
            // State per path before each event, after the events so far,
            // and the (cycle, path, state, ts, port) history for the ACKs.
            let mut cur: Vec<(State, u64, u16)> = vec![(State::default(), 0, 0); 8];
            let mut before = Vec::new();
            let mut ts = vec![0u64; evs.len()];
            for (i, &(p, _, _)) in evs.iter().enumerate() {
                before.push(cur[p as usize].0);
                ts[i] = rng.gen_range(0..1000);
                if let Some(s) = expect[i] {
                    let c = &mut cur[p as usize];
                    *c = (s, c.1.max(ts[i]), 1000 + i as u16);
                }
            }
            // Issue cycle of each event (S0); S2 two cycles later.
            let mut at = Vec::new();
            let mut c = 0usize;
            for _ in &evs {
                at.push(c);
                c += if rng.gen_bool(0.8) { 1 } else { rng.gen_range(2..4) };
            }
            let end = c + 2 + 300;
            let mut hist: Vec<(usize, u16, (State, u64, u16))> = Vec::new();
            let mut now: Vec<(State, u64, u16)> = vec![(State::default(), 0, 0); 8];
            let (mut s0, mut s1, mut s2) = (0usize, 0usize, 0usize);
            let mut popped: Option<usize> = None;
            for cycle in 0..end {
                // Inputs of this cycle.
                x.rd_addr.next = 0.into();
                x.rd_en.next = false;
                if s0 < evs.len() && at[s0] == cycle {
                    x.rd_addr.next = ((slot << 6) | evs[s0].0 as u64).into();
                    x.rd_en.next = true;
                }
                x.ev_valid.next = false;
                x.ev_track.next = false;
                let ev = s2 < evs.len() && at[s2] + 2 == cycle;
                if ev {
                    let (p, psn, ce) = evs[s2];
                    x.ev_valid.next = true;
                    x.ev_track.next = expect[s2].is_some();
                    x.ev_qhit.next = true;
                    x.ev_psn.next = (psn as u64).into();
                    x.ev_ts.next = ts[s2].into();
                    x.ev_port.next = (1000 + s2 as u64).into();
                    x.ev_ce.next = ce;
                    x.ev_conn_cum.next = (s2 as u64).into();
                    x.ev_live.next = true;
                    let _ = p;
                }
                let pop = x.aq_valid.val() && rng.gen_bool(0.3);
                x.aq_pop.next = pop;
                x = sim.wait(1, x)?;
                // S1: the cum RxPlace sees.
                if s1 < evs.len() && at[s1] + 1 == cycle {
                    let want = before[s1].cum;
                    if x.rd_cum.val().index() as u32 != want {
                        out.lock().unwrap().push(format!(
                            "event {s1}: S1 cum {:#x} want {want:#x}",
                            x.rd_cum.val().index()
                        ));
                    }
                    s1 += 1;
                }
                // The ACK popped in the previous cycle.
                if let Some(pc) = popped.take() {
                    let p = x.ak_path.val().index() as u16;
                    let want = hist
                        .iter()
                        .rev()
                        .find(|h| h.1 == p && h.0 < pc)
                        .map(|h| h.2)
                        .unwrap_or_default();
                    let got = (
                        x.ak_cum.val().index() as u32,
                        x.ak_sack.val(),
                        x.ak_rx.val().index() as u32,
                        x.ak_ce.val().index() as u32,
                        x.ak_ts.val().to_u64(),
                        x.ak_port.val().index() as u16,
                    );
                    let w = &want.0;
                    if x.ak_qp.val().index() as u64 != slot
                        || !x.ak_live.val()
                        || got != (w.cum, sack_bits(&w.sack), w.rx, w.ce, want.1, want.2)
                    {
                        out.lock().unwrap().push(format!(
                            "ACK of path {p} popped in cycle {pc}: cum {:#x} rx {} want cum {:#x} rx {}",
                            got.0, got.2, w.cum, w.rx
                        ));
                    }
                }
                if pop {
                    popped = Some(cycle);
                }
                if s0 < evs.len() && at[s0] == cycle {
                    s0 += 1;
                }
                if ev {
                    let p = evs[s2].0 as usize;
                    if let Some(s) = expect[s2] {
                        now[p] = (s, now[p].1.max(ts[s2]), 1000 + s2 as u16);
                        hist.push((cycle, p as u16, now[p]));
                    }
                    s2 += 1;
                }
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            if x.aq_valid.val() {
                out.lock().unwrap().push("queue not drained".into());
            }
            let _ = cur;
            sim.done(x)
        });
        sim.run(Box::new(RxPathTable::default()), 1_000_000)
            .unwrap();
        let f = fails.lock().unwrap();
        assert!(
            f.is_empty(),
            "{} mismatches, first: {:?}",
            f.len(),
            &f[..f.len().min(5)]
        );
    }
}
