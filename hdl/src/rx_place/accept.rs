//! The connection window's update ([`ConnAccept`] and its two halves).

use rust_hdl::prelude::*;

use crate::rx_path::LeadOnes;

/// The connection window after accepting a PSN (`ConnBitmap::accept`, a
/// 256-PSN window; bit `p` for the PSNs `p` mod 256): the PSN's bit is set;
/// the run of set bits from the cumulative point `cum` upward, circularly,
/// is how far `cum` moves, and those bits are cleared.
/// No rotation: the run ends at the first clear bit at or above `cum`'s
/// bit, or, when every bit from there up is set, at the first clear bit
/// below it (the run wraps); all bits set is a run of 256. Two leading-ones
/// counts ([`LeadOnes`]) between [`AccPre`] and [`AccPost`]. The window
/// carries its mask `ge` (the bits at or above `cum`'s, `!0 << cum[7:0]`)
/// so no shift by `cum` precedes the counts, and the new `cum`'s low byte
/// is the first clear bit itself (no adder after them); the new mask is
/// not an output: it is the mask of the new `cum`, which
/// [`PlaceConn`](super::PlaceConn) decodes from the low byte. Computed while
/// `en` (a datagram is in the verdict stage, S3), whether or not its PSN is
/// accepted, so the verdict reaches only the last multiplexer (`take`):
/// without it the window is unchanged.
///
/// Combinational in S3 ([`ConnAccept::new`] with `split` false), or split
/// over three cycles (`split` true, for datagrams at least three cycles
/// apart): [`AccPre`] in S2 on the `x_*` inputs, its `b` and `b_hi`
/// registered for S3's counts; the counts, `z`, `all`, `wrap` and
/// `new_cum` in S3; the new bitmap (`new_bm`) in S4, [`AccBits`] (the
/// bitmap half of [`AccPost`]) again on S3's `b`, mask, `z`, wrap and
/// verdict registered, so neither the decode nor the thermometer is in a
/// cycle with the counts.
#[derive(LogicBlock)]
pub struct ConnAccept {
    /// Clock (the split's registers).
    pub clock: Signal<In, Clock>,
    /// Compute this cycle (S3).
    pub en: Signal<In, Bit>,
    /// The PSN is accepted: else the outputs are the inputs.
    pub take: Signal<In, Bit>,
    /// Cumulative connection PSN before.
    pub cum: Signal<In, Bits<32>>,
    /// Bitmap before (S3; not read when split).
    pub bm: Signal<In, Bits<256>>,
    /// Mask before: the bits at or above `cum`'s (`!0 << cum[7:0]`).
    pub ge: Signal<In, Bits<256>>,
    /// The accepted PSN's low 8 bits (S3; not read when split).
    pub psn: Signal<In, Bits<8>>,
    /// Split: a datagram is in S2 (load [`AccPre`]'s results).
    pub x_en: Signal<In, Bit>,
    /// Split: S2's bitmap before (the window S3 will see).
    pub x_bm: Signal<In, Bits<256>>,
    /// Split: S2's mask before.
    pub x_ge: Signal<In, Bits<256>>,
    /// Split: S2's PSN (low 8 bits).
    pub x_psn: Signal<In, Bits<8>>,
    /// Cumulative connection PSN after.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after (split: the cycle after, S4).
    pub new_bm: Signal<Out, Bits<256>>,
    /// The first clear bit at or above `cum`'s, else below it (the new
    /// `cum`'s low byte when the PSN is accepted); `cum`'s own when all
    /// 256 bits are set.
    pub z: Signal<Out, Bits<8>>,
    /// Every bit of `b` is set.
    pub all: Signal<Out, Bit>,
    /// The run wraps past bit 255.
    pub wrap: Signal<Out, Bit>,
    pre: AccPre,
    lo: LeadOnes,
    hi: LeadOnes,
    post: AccPost,
    c_split: Constant<Bit>,
    // Split: S3's `b` and `b_hi` (from S2), and S4's inputs.
    r_b: DFF<Bits<256>>,
    r_bhi: DFF<Bits<256>>,
    l_en: DFF<Bit>,
    l_take: DFF<Bit>,
    l_b: DFF<Bits<256>>,
    l_ge: DFF<Bits<256>>,
    l_z: DFF<Bits<8>>,
    l_wrap: DFF<Bit>,
    late: AccBits,
    // The counts' inputs.
    s_b: Signal<Local, Bits<256>>,
    s_bhi: Signal<Local, Bits<256>>,
}

impl ConnAccept {
    /// The update in S3 alone (`split` false), or split over S2, S3 and S4.
    pub fn new(split: bool) -> Self {
        Self {
            clock: Default::default(),
            en: Default::default(),
            take: Default::default(),
            cum: Default::default(),
            bm: Default::default(),
            ge: Default::default(),
            psn: Default::default(),
            x_en: Default::default(),
            x_bm: Default::default(),
            x_ge: Default::default(),
            x_psn: Default::default(),
            new_cum: Default::default(),
            new_bm: Default::default(),
            z: Default::default(),
            all: Default::default(),
            wrap: Default::default(),
            pre: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            post: Default::default(),
            c_split: Constant::new(split),
            r_b: Default::default(),
            r_bhi: Default::default(),
            l_en: Default::default(),
            l_take: Default::default(),
            l_b: Default::default(),
            l_ge: Default::default(),
            l_z: Default::default(),
            l_wrap: Default::default(),
            late: Default::default(),
            s_b: Default::default(),
            s_bhi: Default::default(),
        }
    }
}

impl Logic for ConnAccept {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_b, r_bhi, l_en, l_take, l_b, l_ge, l_z, l_wrap
        );
        // The PSN's bit and the mask: in S3, or in S2 and registered.
        self.pre.en.next = self.en.val();
        self.pre.bm.next = self.bm.val();
        self.pre.ge.next = self.ge.val();
        self.pre.psn.next = self.psn.val();
        self.s_b.next = self.pre.b.val();
        self.s_bhi.next = self.pre.b_hi.val();
        if self.c_split.val() {
            self.pre.en.next = self.x_en.val();
            self.pre.bm.next = self.x_bm.val();
            self.pre.ge.next = self.x_ge.val();
            self.pre.psn.next = self.x_psn.val();
            if self.x_en.val() {
                self.r_b.d.next = self.pre.b.val();
                self.r_bhi.d.next = self.pre.b_hi.val();
            }
            self.s_b.next = self.r_b.q.val();
            self.s_bhi.next = self.r_bhi.q.val();
        }
        self.lo.en.next = self.en.val();
        self.lo.v.next = self.s_b.val();
        self.hi.en.next = self.en.val();
        self.hi.v.next = self.s_bhi.val();
        self.post.en.next = self.en.val();
        self.post.take.next = self.take.val();
        self.post.cum.next = self.cum.val();
        self.post.bm.next = self.bm.val();
        self.post.ge.next = self.ge.val();
        self.post.b.next = self.s_b.val();
        self.post.z_lo.next = self.lo.count.val();
        self.post.z_hi.next = self.hi.count.val();
        self.new_cum.next = self.post.new_cum.val();
        self.new_bm.next = self.post.new_bm.val();
        self.z.next = self.post.first.val();
        self.all.next = self.lo.count.val().get_bit(8);
        self.wrap.next = self.hi.count.val().get_bit(8);
        // Split: the new bitmap in S4, from S3's registered inputs.
        self.l_en.d.next = self.c_split.val() & self.en.val();
        if self.c_split.val() & self.en.val() {
            self.l_take.d.next = self.take.val();
            self.l_b.d.next = self.s_b.val();
            self.l_ge.d.next = self.ge.val();
            self.l_z.d.next = self.post.first.val();
            self.l_wrap.d.next = self.hi.count.val().get_bit(8);
        }
        self.late.en.next = self.l_en.q.val();
        self.late.take.next = self.l_take.q.val();
        self.late.bm.next = self.l_b.q.val();
        self.late.ge.next = self.l_ge.q.val();
        self.late.b.next = self.l_b.q.val();
        self.late.z.next = self.l_z.q.val();
        self.late.wrap.next = self.l_wrap.q.val();
        if self.c_split.val() {
            self.new_bm.next = self.late.new_bm.val();
        }
    }
}

/// [`ConnAccept`] before its counts: the bitmap with the PSN's bit set
/// (`b`), and `b` with the bits below the cumulative point set (`b_hi`);
/// the PSN's bit is set only while `en`. The bit is decoded in two halves
/// (the bit within its 16-bit group, and the group), so each output bit is
/// one small function of its inputs, not a shifter's.
#[derive(LogicBlock, Default)]
pub struct AccPre {
    /// Compute (else the PSN's bit is not set).
    pub en: Signal<In, Bit>,
    /// Bitmap before.
    pub bm: Signal<In, Bits<256>>,
    /// The bits at or above the cumulative point's.
    pub ge: Signal<In, Bits<256>>,
    /// The PSN's bit.
    pub psn: Signal<In, Bits<8>>,
    /// `bm` with the PSN's bit set.
    pub b: Signal<Out, Bits<256>>,
    /// `b` with the bits outside `ge` set.
    pub b_hi: Signal<Out, Bits<256>>,
    // The PSN's bit within its group; the PSN's bit of 256.
    oh: Signal<Local, Bits<16>>,
    dec: Signal<Local, Bits<256>>,
}

impl Logic for AccPre {
    #[hdl_gen]
    fn update(&mut self) {
        self.oh.next = 0.into();
        self.dec.next = 0.into();
        if self.en.val() {
            self.oh.next = self.oh.val().replace_bit(0, true) << self.psn.val().get_bits::<4>(0);
            for h in 0..16 {
                if self.psn.val().get_bits::<4>(4).index() == h {
                    self.dec.next = bit_cast::<256, 16>(self.oh.val()) << (16 * h).to_bits::<8>();
                }
            }
        }
        self.b.next = self.bm.val() | self.dec.val();
        self.b_hi.next = self.bm.val() | self.dec.val() | !self.ge.val();
    }
}

/// [`ConnAccept`] after its counts: the run's end and the new cumulative
/// PSN, and the cleared bitmap ([`AccBits`]).
#[derive(LogicBlock, Default)]
pub struct AccPost {
    /// Compute (else the outputs are the window before).
    pub en: Signal<In, Bit>,
    /// The PSN is accepted (else the outputs are the window before).
    pub take: Signal<In, Bit>,
    /// Cumulative connection PSN before.
    pub cum: Signal<In, Bits<32>>,
    /// Bitmap before.
    pub bm: Signal<In, Bits<256>>,
    /// Mask before (the bits at or above `cum`'s).
    pub ge: Signal<In, Bits<256>>,
    /// [`AccPre::b`].
    pub b: Signal<In, Bits<256>>,
    /// Leading ones of `b`.
    pub z_lo: Signal<In, Bits<9>>,
    /// Leading ones of `b` with the bits below `cum`'s set.
    pub z_hi: Signal<In, Bits<9>>,
    /// Cumulative connection PSN after.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after.
    pub new_bm: Signal<Out, Bits<256>>,
    /// The first clear bit at or above `cum`'s, else below it (`cum`'s
    /// own when all 256 are set).
    pub first: Signal<Out, Bits<8>>,
    bits: AccBits,
    z: Signal<Local, Bits<8>>,
    up: Signal<Local, Bits<24>>,
}

impl Logic for AccPost {
    #[hdl_gen]
    fn update(&mut self) {
        self.new_cum.next = self.cum.val();
        self.first.next = 0.into();
        self.z.next = 0.into();
        self.up.next = 0.into();
        if self.en.val() {
            // The first clear bit at or above `cum`'s, else below it, else
            // (all 256 set) `cum`'s own.
            self.z.next = self.z_hi.val().get_bits::<8>(0);
            if self.z_hi.val().get_bit(8) {
                self.z.next = self.z_lo.val().get_bits::<8>(0);
                if self.z_lo.val().get_bit(8) {
                    self.z.next = self.cum.val().get_bits::<8>(0);
                }
            }
            // `cum`'s upper bits plus one: the run wraps past bit 255.
            self.up.next = self.cum.val().get_bits::<24>(8) + 1;
            self.first.next = self.z.val();
            if self.take.val() {
                self.new_cum.next = (bit_cast::<32, 24>(self.cum.val().get_bits::<24>(8)) << 8)
                    | bit_cast::<32, 8>(self.z.val());
                if self.z_hi.val().get_bit(8) {
                    // Wrapped (or all 256 set): `z` in the next 256.
                    self.new_cum.next =
                        (bit_cast::<32, 24>(self.up.val()) << 8) | bit_cast::<32, 8>(self.z.val());
                }
            }
        }
        self.bits.en.next = self.en.val();
        self.bits.take.next = self.take.val();
        self.bits.bm.next = self.bm.val();
        self.bits.ge.next = self.ge.val();
        self.bits.b.next = self.b.val();
        self.bits.z.next = self.z.val();
        self.bits.wrap.next = self.z_hi.val().get_bit(8);
        self.new_bm.next = self.bits.new_bm.val();
    }
}

/// The bitmap after the run ([`AccPost`]'s half, and S4 of a split
/// [`ConnAccept`]).
///
/// The bits cleared are the run, the circular range from `cum`'s bit up to
/// the first clear bit `z`: `ge & lt` when the run does not wrap (`lt`, the
/// bits below `z`, holds every bit below `cum`'s), `ge | lt` when it wraps
/// (then `z` is below `cum`'s bit, so `ge` and `lt` are disjoint): in both
/// cases the bits kept are `ge ^ lt`, inverted when the run wraps. All 256
/// set is taken as a wrap to `cum`'s own bit (`lt = !ge`), which clears
/// every bit and moves `cum` by 256. So each bit of the new bitmap is one
/// small function of its own bits and two shared signals.
#[derive(LogicBlock, Default)]
pub struct AccBits {
    /// Compute (else the output is the bitmap before).
    pub en: Signal<In, Bit>,
    /// The PSN is accepted (else the output is the bitmap before).
    pub take: Signal<In, Bit>,
    /// Bitmap before.
    pub bm: Signal<In, Bits<256>>,
    /// Mask before (the bits at or above `cum`'s).
    pub ge: Signal<In, Bits<256>>,
    /// [`AccPre::b`].
    pub b: Signal<In, Bits<256>>,
    /// The run's end ([`AccPost::first`]).
    pub z: Signal<In, Bits<8>>,
    /// The run wraps past bit 255 (or all 256 are set).
    pub wrap: Signal<In, Bit>,
    /// Bitmap after.
    pub new_bm: Signal<Out, Bits<256>>,
    lt: Signal<Local, Bits<256>>,
    keep: Signal<Local, Bits<256>>,
    // `lt` in two halves: the bits below `z` within its group, the groups
    // below `z`'s, the group being built.
    t_lo: Signal<Local, Bits<16>>,
    t_hi: Signal<Local, Bits<16>>,
    grp: Signal<Local, Bits<16>>,
}

impl Logic for AccBits {
    #[hdl_gen]
    fn update(&mut self) {
        self.new_bm.next = self.bm.val();
        self.lt.next = 0.into();
        self.keep.next = 0.into();
        self.t_lo.next = 0.into();
        self.t_hi.next = 0.into();
        self.grp.next = 0.into();
        if self.en.val() {
            // The bits 0..z: per 16-bit group, all of a group below `z`'s,
            // those below `z` in `z`'s.
            self.t_lo.next = !((!self.t_lo.val()) << self.z.val().get_bits::<4>(0));
            self.t_hi.next = !((!self.t_hi.val()) << self.z.val().get_bits::<4>(4));
            for h in 0..16 {
                self.grp.next = 0.into();
                if self.t_hi.val().get_bit(h) {
                    self.grp.next = 0xFFFF.into();
                }
                if self.z.val().get_bits::<4>(4).index() == h {
                    self.grp.next = self.t_lo.val();
                }
                self.lt.next = self.lt.val()
                    | (bit_cast::<256, 16>(self.grp.val()) << (16 * h).to_bits::<8>());
            }
            // The bits kept: those outside the run from `cum`'s bit to `z`.
            self.keep.next = self.ge.val() ^ self.lt.val();
            if self.wrap.val() {
                self.keep.next = !self.keep.val();
            }
            if self.take.val() {
                self.new_bm.next = self.b.val() & self.keep.val();
            }
        }
    }
}
