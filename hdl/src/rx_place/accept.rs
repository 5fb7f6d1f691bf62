//! The connection window's update ([`ConnAccept`] and its two halves).

use rust_hdl::prelude::*;

use crate::rx_path::LeadOnes;

/// The connection window after accepting a PSN (`ConnBitmap::accept`, a
/// 256-PSN window; bit `p` for the PSNs `p` mod 256), combinational: the
/// PSN's bit is set; the run of set bits from the cumulative point `cum`
/// upward, circularly, is how far `cum` moves, and those bits are cleared.
/// No rotation: the run ends at the first clear bit at or above `cum`'s
/// bit, or, when every bit from there up is set, at the first clear bit
/// below it (the run wraps); all bits set is a run of 256. Two leading-ones
/// counts ([`LeadOnes`]) between [`AccPre`] and [`AccPost`]. The window
/// carries its mask `ge` (the bits at or above `cum`'s, `!0 << cum[7:0]`)
/// so no shift by `cum` precedes the counts, and the new `cum`'s low byte
/// is the first clear bit itself (no adder after them); the new mask is
/// not an output: it is the mask of the new `cum`, which
/// [`PlaceConn`](super::PlaceConn) decodes from the low byte. Computed while
/// `en` (a datagram is in the verdict stage), whether or not its PSN is
/// accepted, so the verdict reaches only the last multiplexer (`take`):
/// without it the window is unchanged.
#[derive(LogicBlock, Default)]
pub struct ConnAccept {
    /// Compute this cycle.
    pub en: Signal<In, Bit>,
    /// The PSN is accepted: else the outputs are the inputs.
    pub take: Signal<In, Bit>,
    /// Cumulative connection PSN before.
    pub cum: Signal<In, Bits<32>>,
    /// Bitmap before.
    pub bm: Signal<In, Bits<256>>,
    /// Mask before: the bits at or above `cum`'s (`!0 << cum[7:0]`).
    pub ge: Signal<In, Bits<256>>,
    /// The accepted PSN's low 8 bits.
    pub psn: Signal<In, Bits<8>>,
    /// Cumulative connection PSN after.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after.
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
}

impl Logic for ConnAccept {
    #[hdl_gen]
    fn update(&mut self) {
        self.pre.en.next = self.en.val();
        self.pre.bm.next = self.bm.val();
        self.pre.ge.next = self.ge.val();
        self.pre.psn.next = self.psn.val();
        self.lo.en.next = self.en.val();
        self.lo.v.next = self.pre.b.val();
        self.hi.en.next = self.en.val();
        self.hi.v.next = self.pre.b_hi.val();
        self.post.en.next = self.en.val();
        self.post.take.next = self.take.val();
        self.post.cum.next = self.cum.val();
        self.post.bm.next = self.bm.val();
        self.post.ge.next = self.ge.val();
        self.post.b.next = self.pre.b.val();
        self.post.z_lo.next = self.lo.count.val();
        self.post.z_hi.next = self.hi.count.val();
        self.new_cum.next = self.post.new_cum.val();
        self.new_bm.next = self.post.new_bm.val();
        self.z.next = self.post.first.val();
        self.all.next = self.lo.count.val().get_bit(8);
        self.wrap.next = self.hi.count.val().get_bit(8);
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

/// [`ConnAccept`] after its counts: the run and the cleared bitmap.
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
    z: Signal<Local, Bits<8>>,
    up: Signal<Local, Bits<24>>,
    lt: Signal<Local, Bits<256>>,
    keep: Signal<Local, Bits<256>>,
    // `lt` in two halves: the bits below `z` within its group, the groups
    // below `z`'s, the group being built.
    t_lo: Signal<Local, Bits<16>>,
    t_hi: Signal<Local, Bits<16>>,
    grp: Signal<Local, Bits<16>>,
}

impl Logic for AccPost {
    #[hdl_gen]
    fn update(&mut self) {
        self.new_cum.next = self.cum.val();
        self.new_bm.next = self.bm.val();
        self.first.next = 0.into();
        self.z.next = 0.into();
        self.up.next = 0.into();
        self.lt.next = 0.into();
        self.keep.next = 0.into();
        self.t_lo.next = 0.into();
        self.t_hi.next = 0.into();
        self.grp.next = 0.into();
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
            if self.z_hi.val().get_bit(8) {
                self.keep.next = !self.keep.val();
            }
            self.first.next = self.z.val();
            if self.take.val() {
                self.new_cum.next = (bit_cast::<32, 24>(self.cum.val().get_bits::<24>(8)) << 8)
                    | bit_cast::<32, 8>(self.z.val());
                if self.z_hi.val().get_bit(8) {
                    // Wrapped (or all 256 set): `z` in the next 256.
                    self.new_cum.next =
                        (bit_cast::<32, 24>(self.up.val()) << 8) | bit_cast::<32, 8>(self.z.val());
                }
                self.new_bm.next = self.b.val() & self.keep.val();
            }
        }
    }
}
