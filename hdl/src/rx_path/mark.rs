//! One arrival's update of a path state ([`PathMark`] and its two halves).

use rust_hdl::prelude::*;

use super::LeadOnes;

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
    /// Verdict ([`PathVerdict`](super::PathVerdict)).
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
    /// Verdict ([`PathVerdict`](super::PathVerdict)).
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
