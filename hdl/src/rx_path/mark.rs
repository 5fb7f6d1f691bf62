//! One arrival's update of a path state ([`PathMark`] and its parts).

use rust_hdl::prelude::*;

use super::LeadOnes;

/// Register stages of a split [`PathMark`] ([`PathMark::new`]): its result
/// comes this many cycles after the arrival.
pub const MARK_STAGES: usize = 3;

/// The engine's `RxPath::mark` for one arrival, on a path state kept with
/// its bitmap shift deferred: the logical SACK bitmap is bits `k .. k + 256`
/// of `raw` (512 bits, zero above), so the shift an arrival makes is
/// applied by the next one, beside its leading-ones count rather than
/// after it.
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
/// moved, except for slides past the whole bitmap. A duplicate or an
/// arrival out of window gives the state unchanged (`raw >> k`, `k` = 0).
///
/// Four parts: [`MarkPre`] (the distance, the case, `raw >> k`, `cum` and
/// `k` offset for the count), [`MarkMask`] (the bitmap to count, whether
/// `cum` moves), two [`LeadOnes`], [`MarkPost`] (the count added to the
/// offsets, the choices).
/// Combinational by default (`valid` = `en`, the result in the arrival's
/// cycle). Split ([`PathMark::new`]`(true)`), a register after each of
/// the first three parts: the result comes [`MARK_STAGES`] cycles after
/// `en`, with `valid`; the inputs are taken in `en`'s cycle only, and each
/// stage register holds until the next arrival, so arrivals must be at
/// least [`MARK_STAGES`] cycles apart; and the state must come normalised
/// (`k` = 0, `raw`'s bits from 256 up clear: `k` and the high half are not
/// read), so the split mark has no shift and counts 256 bits.
///
/// Each part computes only while its enable is high (an arrival in that
/// stage); otherwise its outputs are 0, so Verilator skips the wide shifts
/// and counts in idle cycles.
#[derive(LogicBlock)]
pub struct PathMark {
    /// Clock (the stage registers, when split).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no arrival in the stages.
    pub rst: Signal<In, Bit>,
    /// An arrival this cycle: compute the mark.
    pub en: Signal<In, Bit>,
    /// Cumulative path PSN before the arrival.
    pub cum: Signal<In, Bits<32>>,
    /// Bitmap before the arrival, shift not yet applied.
    pub raw: Signal<In, Bits<512>>,
    /// Its pending shift (0..=257; split: not read, taken as 0).
    pub k: Signal<In, Bits<9>>,
    /// The arrival's path PSN.
    pub psn: Signal<In, Bits<32>>,
    /// The outputs below hold an arrival's result (else they are 0).
    pub valid: Signal<Out, Bit>,
    /// Verdict ([`PathVerdict`](super::PathVerdict)).
    pub code: Signal<Out, Bits<2>>,
    /// Cumulative path PSN after the arrival.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after the arrival, shift not yet applied.
    pub new_raw: Signal<Out, Bits<512>>,
    /// Its pending shift.
    pub new_k: Signal<Out, Bits<9>>,
    pre: MarkPre,
    mask: MarkMask,
    lo: LeadOnes,
    hi: LeadOnes,
    post: MarkPost,
    c_split: Constant<Bit>,
    // Stage A (loaded in the arrival's cycle): its inputs, `MarkPre`'s outputs.
    va: DFF<Bit>,
    a_raw: DFF<Bits<512>>,
    a_cum: DFF<Bits<32>>,
    a_km: DFF<Bits<10>>,
    a_base: DFF<Bits<32>>,
    a_psn: DFF<Bits<32>>,
    a_d: DFF<Bits<32>>,
    a_slide: DFF<Bit>,
    a_sn: DFF<Bit>,
    a_start: DFF<Bits<10>>,
    a_idx: DFF<Bits<8>>,
    a_norm: DFF<Bits<256>>,
    // Stage B: `MarkMask`'s outputs.
    vb: DFF<Bit>,
    b_masked: DFF<Bits<512>>,
    b_hit: DFF<Bit>,
    b_seen: DFF<Bit>,
    b_at: DFF<Bit>,
    // Stage C: the counts.
    vc: DFF<Bit>,
    c_lo: DFF<Bits<9>>,
    c_hi: DFF<Bits<9>>,
}

impl PathMark {
    /// The mark, combinational (`split` false) or over [`MARK_STAGES`]
    /// register stages (`split` true).
    pub fn new(split: bool) -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            en: Default::default(),
            cum: Default::default(),
            raw: Default::default(),
            k: Default::default(),
            psn: Default::default(),
            valid: Default::default(),
            code: Default::default(),
            new_cum: Default::default(),
            new_raw: Default::default(),
            new_k: Default::default(),
            pre: Default::default(),
            mask: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            post: MarkPost::new(split),
            c_split: Constant::new(split),
            va: Default::default(),
            a_raw: Default::default(),
            a_cum: Default::default(),
            a_km: Default::default(),
            a_base: Default::default(),
            a_psn: Default::default(),
            a_d: Default::default(),
            a_slide: Default::default(),
            a_sn: Default::default(),
            a_start: Default::default(),
            a_idx: Default::default(),
            a_norm: Default::default(),
            vb: Default::default(),
            b_masked: Default::default(),
            b_hit: Default::default(),
            b_seen: Default::default(),
            b_at: Default::default(),
            vc: Default::default(),
            c_lo: Default::default(),
            c_hi: Default::default(),
        }
    }
}

impl Default for PathMark {
    fn default() -> Self {
        Self::new(false)
    }
}

impl Logic for PathMark {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, va, a_raw, a_cum, a_km, a_base, a_psn, a_d, a_slide, a_sn, a_start, a_idx,
            a_norm, vb, b_masked, b_hit, b_seen, b_at, vc, c_lo, c_hi
        );
        // Stage A, the arrival's cycle.
        self.pre.en.next = self.en.val();
        self.pre.cum.next = self.cum.val();
        self.pre.raw.next = self.raw.val();
        self.pre.k.next = self.k.val();
        self.pre.psn.next = self.psn.val();
        // Combinational: every part in the same cycle.
        self.mask.en.next = self.en.val();
        self.mask.raw.next = self.raw.val();
        self.mask.start.next = self.pre.start.val();
        self.mask.norm.next = self.pre.norm.val();
        self.mask.idx.next = self.pre.idx.val();
        self.mask.sn.next = self.pre.sn.val();
        self.mask.d.next = self.pre.d.val();
        self.lo.en.next = self.en.val();
        self.hi.en.next = self.en.val();
        self.lo.v.next = self.mask.masked.val().get_bits::<256>(0);
        self.hi.v.next = self.mask.masked.val().get_bits::<256>(256);
        self.post.en.next = self.en.val();
        self.post.cum.next = self.cum.val();
        self.post.km.next = self.pre.km.val();
        self.post.base.next = self.pre.base.val();
        self.post.psn.next = self.psn.val();
        self.post.d.next = self.pre.d.val();
        self.post.slide.next = self.pre.slide.val();
        self.post.norm.next = self.pre.norm.val();
        self.post.hit.next = self.mask.hit.val();
        self.post.seen.next = self.mask.seen.val();
        self.post.at_cum.next = self.mask.at_cum.val();
        self.post.lo.next = self.lo.count.val();
        self.post.hi.next = self.hi.count.val();
        self.valid.next = self.en.val();
        // Split: stage B from A's registers, C from B's, the result from
        // all three (each holds until the next arrival).
        if self.c_split.val() {
            // The state is normalised (k = 0, bits from 256 up clear): the
            // count starts at bit n ≤ 256, so the high half counts nothing.
            self.pre.raw.next = bit_cast::<512, 256>(self.raw.val().get_bits::<256>(0));
            self.pre.k.next = 0.into();
            self.mask.en.next = self.va.q.val();
            self.mask.raw.next = self.a_raw.q.val();
            self.mask.start.next = self.a_start.q.val();
            self.mask.norm.next = self.a_norm.q.val();
            self.mask.idx.next = self.a_idx.q.val();
            self.mask.sn.next = self.a_sn.q.val();
            self.mask.d.next = self.a_d.q.val();
            self.lo.en.next = self.vb.q.val();
            self.hi.en.next = self.vb.q.val();
            self.lo.v.next = self.b_masked.q.val().get_bits::<256>(0);
            self.hi.v.next = 0.into();
            self.post.en.next = self.vc.q.val();
            self.post.cum.next = self.a_cum.q.val();
            self.post.km.next = self.a_km.q.val();
            self.post.base.next = self.a_base.q.val();
            self.post.psn.next = self.a_psn.q.val();
            self.post.d.next = self.a_d.q.val();
            self.post.slide.next = self.a_slide.q.val();
            self.post.norm.next = self.a_norm.q.val();
            self.post.hit.next = self.b_hit.q.val();
            self.post.seen.next = self.b_seen.q.val();
            self.post.at_cum.next = self.b_at.q.val();
            self.post.lo.next = self.c_lo.q.val();
            self.post.hi.next = self.c_hi.q.val();
            self.valid.next = self.vc.q.val();
            if self.en.val() {
                self.a_raw.d.next = bit_cast::<512, 256>(self.raw.val().get_bits::<256>(0));
                self.a_cum.d.next = self.cum.val();
                self.a_km.d.next = self.pre.km.val();
                self.a_base.d.next = self.pre.base.val();
                self.a_psn.d.next = self.psn.val();
                self.a_d.d.next = self.pre.d.val();
                self.a_slide.d.next = self.pre.slide.val();
                self.a_sn.d.next = self.pre.sn.val();
                self.a_start.d.next = self.pre.start.val();
                self.a_idx.d.next = self.pre.idx.val();
                self.a_norm.d.next = self.pre.norm.val();
            }
            if self.va.q.val() {
                self.b_masked.d.next = self.mask.masked.val();
                self.b_hit.d.next = self.mask.hit.val();
                self.b_seen.d.next = self.mask.seen.val();
                self.b_at.d.next = self.mask.at_cum.val();
            }
            if self.vb.q.val() {
                self.c_lo.d.next = self.lo.count.val();
                self.c_hi.d.next = self.hi.count.val();
            }
        }
        self.va.d.next = self.c_split.val() & self.en.val();
        self.vb.d.next = self.va.q.val();
        self.vc.d.next = self.vb.q.val();
        if self.rst.val() {
            self.va.d.next = false;
            self.vb.d.next = false;
            self.vc.d.next = false;
        }
        self.code.next = self.post.code.val();
        self.new_cum.next = self.post.new_cum.val();
        self.new_raw.next = self.post.new_raw.val();
        self.new_k.next = self.post.new_k.val();
    }
}

/// First part of [`PathMark`]: the distance `d`, the case, where the
/// leading-ones count starts (`k`, or `k + n` when sliding by `n ≤ 256`),
/// the logical bitmap `raw >> k`, and the offsets that turn the count `z`
/// into how far `cum` moves (`z - k + 1`) and its new value; all 0 unless
/// `en`.
#[derive(LogicBlock, Default)]
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
    /// `256 < d < 2^30`.
    pub slide: Signal<Out, Bit>,
    /// Sliding by `n = d - 256 ≤ 256` (the old bit `n - 1` is in the bitmap).
    pub sn: Signal<Out, Bit>,
    /// First bit of `raw` the count looks at.
    pub start: Signal<Out, Bits<10>>,
    /// `d - 1 mod 256`: the PSN's logical bit, or `n - 1` when sliding by
    /// `n ≤ 256` (the same bit).
    pub idx: Signal<Out, Bits<8>>,
    /// The logical bitmap: `raw >> k`, 256 bits.
    pub norm: Signal<Out, Bits<256>>,
    /// `k - 1` (mod 2^10): `cum` moves by the count minus this.
    pub km: Signal<Out, Bits<10>>,
    /// `cum - k + 1`: `cum` plus the count is `cum` moved.
    pub base: Signal<Out, Bits<32>>,
    dd: Signal<Local, Bits<32>>,
}

impl Logic for MarkPre {
    #[hdl_gen]
    fn update(&mut self) {
        self.dd.next = 0.into();
        self.d.next = 0.into();
        self.norm.next = 0.into();
        self.idx.next = 0.into();
        self.slide.next = false;
        self.sn.next = false;
        self.start.next = 0.into();
        self.km.next = 0.into();
        self.base.next = 0.into();
        if self.en.val() {
            self.km.next = bit_cast::<10, 9>(self.k.val()) - 1;
            self.base.next = self.cum.val() - bit_cast::<32, 9>(self.k.val()) + 1;
            self.dd.next = self.psn.val() - self.cum.val();
            self.d.next = self.dd.val();
            self.norm.next = bit_cast::<256, 512>(self.raw.val() >> self.k.val());
            // (8 bits first, as in the engine: d = 256 gives 255.)
            self.idx.next = self.dd.val().get_bits::<8>(0) - 1;
            self.slide.next =
                !self.dd.val().get_bit(31) & !self.dd.val().get_bit(30) & (self.dd.val() > 256);
            self.sn.next = self.slide.val() & (self.dd.val() <= 512);
            self.start.next = bit_cast::<10, 9>(self.k.val());
            if self.sn.val() {
                self.start.next =
                    bit_cast::<10, 9>(self.k.val()) + (self.dd.val().get_bits::<10>(0) - 256);
            }
        }
    }
}

/// Second part of [`PathMark`]: whether the logical bit `idx` is set,
/// `raw` with its bits below the count's start set, and whether `cum`
/// moves (`at_cum`, before the count: see below); all 0 unless `en`.
#[derive(LogicBlock)]
pub struct MarkMask {
    /// Compute this cycle (else every output is 0).
    pub en: Signal<In, Bit>,
    /// Bitmap, shift pending.
    pub raw: Signal<In, Bits<512>>,
    /// [`MarkPre::start`].
    pub start: Signal<In, Bits<10>>,
    /// [`MarkPre::norm`].
    pub norm: Signal<In, Bits<256>>,
    /// [`MarkPre::idx`].
    pub idx: Signal<In, Bits<8>>,
    /// [`MarkPre::sn`].
    pub sn: Signal<In, Bit>,
    /// [`MarkPre::d`].
    pub d: Signal<In, Bits<32>>,
    /// Logical bit `idx` is set (the PSN, or `n - 1` when sliding).
    pub hit: Signal<Out, Bit>,
    /// Sliding by `n ≤ 256` and PSN `cum + n` (the new `cum`) had arrived.
    pub seen: Signal<Out, Bit>,
    /// `raw` with its bits below `start` set.
    pub masked: Signal<Out, Bits<512>>,
    /// The arrival moves `cum`: `d = 0`, or `d = 257` (sliding by one) with
    /// every logical bit set. (The engine's test is the count reaching the
    /// window's end, `z - k + 1 = 257`: with bit `k` masked and bits from
    /// `k + 256` up clear, that is the whole logical bitmap set; so it
    /// needs no count.)
    pub at_cum: Signal<Out, Bit>,
    c_ones: Constant<Bits<512>>,
}

impl Default for MarkMask {
    fn default() -> Self {
        Self {
            en: Default::default(),
            raw: Default::default(),
            start: Default::default(),
            norm: Default::default(),
            idx: Default::default(),
            sn: Default::default(),
            d: Default::default(),
            hit: Default::default(),
            seen: Default::default(),
            masked: Default::default(),
            at_cum: Default::default(),
            c_ones: Constant::new(Bits::<512>::mask()),
        }
    }
}

impl Logic for MarkMask {
    #[hdl_gen]
    fn update(&mut self) {
        self.hit.next = false;
        self.seen.next = false;
        self.masked.next = 0.into();
        self.at_cum.next = false;
        if self.en.val() {
            self.hit.next = self.norm.val().get_bit(self.idx.val().index());
            self.seen.next = self.sn.val() & self.hit.val();
            self.masked.next = self.raw.val() | !(self.c_ones.val() << self.start.val());
            self.at_cum.next = (self.d.val() == 0)
                | (self.seen.val() & (self.d.val() == 257) & self.norm.val().all());
        }
    }
}

/// Last part of [`PathMark`]: from the leading-ones count `z`, the new
/// `cum` (`base + z`, one adder) and pending shift (`z - km`), the new
/// bitmap (shift pending) and the verdict, every choice made by flags of
/// earlier parts; all 0 unless `en`.
#[derive(LogicBlock)]
pub struct MarkPost {
    /// Compute this cycle (else every output is 0).
    pub en: Signal<In, Bit>,
    /// Cumulative path PSN.
    pub cum: Signal<In, Bits<32>>,
    /// [`MarkPre::km`].
    pub km: Signal<In, Bits<10>>,
    /// [`MarkPre::base`].
    pub base: Signal<In, Bits<32>>,
    /// Path PSN.
    pub psn: Signal<In, Bits<32>>,
    /// [`MarkPre::d`].
    pub d: Signal<In, Bits<32>>,
    /// [`MarkMask::hit`].
    pub hit: Signal<In, Bit>,
    /// [`MarkPre::slide`].
    pub slide: Signal<In, Bit>,
    /// [`MarkMask::seen`].
    pub seen: Signal<In, Bit>,
    /// [`MarkMask::at_cum`].
    pub at_cum: Signal<In, Bit>,
    /// [`MarkPre::norm`].
    pub norm: Signal<In, Bits<256>>,
    /// Leading ones of the low half of [`MarkMask::masked`].
    pub lo: Signal<In, Bits<9>>,
    /// Leading ones of its high half.
    pub hi: Signal<In, Bits<9>>,
    /// Verdict ([`PathVerdict`](super::PathVerdict)).
    pub code: Signal<Out, Bits<2>>,
    /// Cumulative path PSN after a new arrival.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after a new arrival, shift pending. Split
    /// ([`MarkPost::new`]): in two parts, the bitmap without the PSN's bit
    /// (bits 255..0) and that bit (bit 265: set, bits 264..256: its
    /// position), which the table's write-back shift (`PathNorm`) places after
    /// the shift; no 512-bit decoder here.
    pub new_raw: Signal<Out, Bits<512>>,
    /// Its pending shift.
    pub new_k: Signal<Out, Bits<9>>,
    c_split: Constant<Bit>,
    c_one: Constant<Bits<512>>,
    z: Signal<Local, Bits<10>>,
    zp: Signal<Local, Bits<9>>,
    moved: Signal<Local, Bits<32>>,
    pos: Signal<Local, Bits<9>>,
    bm: Signal<Local, Bits<256>>,
    set: Signal<Local, Bit>,
}

impl MarkPost {
    /// `new_raw` as one bitmap, or in two parts when `split`.
    pub fn new(split: bool) -> Self {
        Self {
            en: Default::default(),
            cum: Default::default(),
            km: Default::default(),
            base: Default::default(),
            psn: Default::default(),
            d: Default::default(),
            hit: Default::default(),
            slide: Default::default(),
            seen: Default::default(),
            at_cum: Default::default(),
            norm: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            code: Default::default(),
            new_cum: Default::default(),
            new_raw: Default::default(),
            new_k: Default::default(),
            c_split: Constant::new(split),
            c_one: Constant::new(1.into()),
            z: Default::default(),
            zp: Default::default(),
            moved: Default::default(),
            pos: Default::default(),
            bm: Default::default(),
            set: Default::default(),
        }
    }
}

impl Logic for MarkPost {
    #[hdl_gen]
    fn update(&mut self) {
        self.z.next = 0.into();
        self.zp.next = 0.into();
        self.moved.next = 0.into();
        self.pos.next = 0.into();
        self.bm.next = 0.into();
        self.set.next = false;
        self.new_raw.next = 0.into();
        self.new_k.next = 0.into();
        self.new_cum.next = 0.into();
        self.code.next = 0.into();
        if self.en.val() {
            // Leading ones of the 512-bit vector (the low half counts 256
            // only when all ones); minus k: of the logical bitmap.
            self.z.next = bit_cast::<10, 9>(self.lo.val());
            if self.lo.val().get_bit(8) {
                self.z.next = bit_cast::<10, 9>(self.hi.val()) + 256;
            }
            // How far `cum` moves (z - k + 1), and where to.
            self.zp.next = bit_cast::<9, 10>(self.z.val() - self.km.val());
            self.moved.next = self.base.val() + bit_cast::<32, 10>(self.z.val());
            // The PSN's bit d - 1 of the logical bitmap before the shift (d ≤
            // 512 whenever it is used).
            self.pos.next = bit_cast::<9, 32>(self.d.val() - 1);
            // (Not behind `cum` nor out of window: those leave the state.)
            self.bm.next = self.norm.val();
            self.set.next = !self.d.val().get_bit(31) & !self.d.val().get_bit(30);
            self.new_k.next = 0.into();
            self.new_cum.next = self.cum.val();
            if self.at_cum.val() {
                self.set.next = false;
                self.new_k.next = self.zp.val();
                self.new_cum.next = self.moved.val();
                if self.slide.val() {
                    self.bm.next = 0.into();
                    self.new_k.next = 0.into();
                    self.new_cum.next = self.psn.val() + 1;
                }
            } else if self.seen.val() {
                self.new_k.next = self.zp.val();
                self.new_cum.next = self.moved.val();
            } else if self.slide.val() {
                self.new_cum.next = self.psn.val() - 256;
                if self.d.val() < 512 {
                    self.new_k.next = bit_cast::<9, 8>(self.d.val().get_bits::<8>(0));
                } else {
                    self.bm.next = 0.into();
                    self.pos.next = 255.into();
                }
            }
            self.new_raw.next = bit_cast::<512, 256>(self.bm.val());
            if self.c_split.val() {
                self.new_raw.next =
                    self.new_raw.val() | (bit_cast::<512, 9>(self.pos.val()) << 256);
                if self.set.val() {
                    self.new_raw.next = self.new_raw.val().replace_bit(265, true);
                }
            } else if self.set.val() {
                self.new_raw.next = self.new_raw.val() | (self.c_one.val() << self.pos.val());
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
