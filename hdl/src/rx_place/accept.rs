//! The connection window's update ([`ConnAccept`] and its two halves).

use rust_hdl::prelude::*;

use crate::rx_path::LeadOnes;

/// The connection bitmap after accepting a PSN (`ConnBitmap::accept`, a
/// 256-PSN window; bit `p` for the PSNs `p` mod 256), combinational: the
/// PSN's bit is set; the run of set bits from the cumulative point `cum`
/// upward, circularly, is how far `cum` moves, and those bits are cleared.
/// No rotation: the run ends at the first clear bit at or above `cum`'s
/// bit, or, when every bit from there up is set, at the first clear bit
/// below it (the run wraps); all bits set is a run of 256. Two leading-ones
/// counts ([`LeadOnes`]) between [`AccPre`] and [`AccPost`]. Computed
/// while `en` (a datagram is in the verdict stage), whether or not its PSN
/// is accepted, so the verdict reaches only the last multiplexer (`take`):
/// otherwise `new_cum` is `cum` and `new_bm` 0.
#[derive(LogicBlock, Default)]
pub struct ConnAccept {
    /// Compute this cycle.
    pub en: Signal<In, Bit>,
    /// The PSN is accepted: else `new_cum` is `cum`.
    pub take: Signal<In, Bit>,
    /// Cumulative connection PSN before.
    pub cum: Signal<In, Bits<32>>,
    /// Bitmap before.
    pub bm: Signal<In, Bits<256>>,
    /// The accepted PSN's low 8 bits.
    pub psn: Signal<In, Bits<8>>,
    /// Cumulative connection PSN after.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after.
    pub new_bm: Signal<Out, Bits<256>>,
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
        self.pre.at.next = self.cum.val().get_bits::<8>(0);
        self.pre.psn.next = self.psn.val();
        self.lo.en.next = self.en.val();
        self.lo.v.next = self.pre.b.val();
        self.hi.en.next = self.en.val();
        self.hi.v.next = self.pre.b_hi.val();
        self.post.en.next = self.en.val();
        self.post.take.next = self.take.val();
        self.post.cum.next = self.cum.val();
        self.post.b.next = self.pre.b.val();
        self.post.ge.next = self.pre.ge.val();
        self.post.z_lo.next = self.lo.count.val();
        self.post.z_hi.next = self.hi.count.val();
        self.new_cum.next = self.post.new_cum.val();
        self.new_bm.next = self.post.new_bm.val();
    }
}

/// [`ConnAccept`] before its counts: the bitmap with the PSN's bit set
/// (`b`), the bits at or above `at` (`ge`), and `b` with the bits below
/// `at` set (`b_hi`); 0 unless `en`.
#[derive(LogicBlock, Default)]
pub struct AccPre {
    /// Compute (else every output is 0).
    pub en: Signal<In, Bit>,
    /// Bitmap before.
    pub bm: Signal<In, Bits<256>>,
    /// The cumulative point's bit.
    pub at: Signal<In, Bits<8>>,
    /// The PSN's bit.
    pub psn: Signal<In, Bits<8>>,
    /// `bm` with the PSN's bit set.
    pub b: Signal<Out, Bits<256>>,
    /// Bits `at..256`.
    pub ge: Signal<Out, Bits<256>>,
    /// `b` with bits `0..at` set.
    pub b_hi: Signal<Out, Bits<256>>,
    g: Signal<Local, Bits<256>>,
}

impl Logic for AccPre {
    #[hdl_gen]
    fn update(&mut self) {
        self.b.next = 0.into();
        self.ge.next = 0.into();
        self.b_hi.next = 0.into();
        self.g.next = 0.into();
        if self.en.val() {
            self.g.next = (!self.g.val()) << self.at.val();
            self.b.next = self.bm.val().replace_bit(self.psn.val().index(), true);
            self.ge.next = self.g.val();
            self.b_hi.next =
                self.bm.val().replace_bit(self.psn.val().index(), true) | !self.g.val();
        }
    }
}

/// [`ConnAccept`] after its counts: the run and the cleared bitmap.
#[derive(LogicBlock, Default)]
pub struct AccPost {
    /// Compute (else `new_cum` = `cum`, `new_bm` = 0).
    pub en: Signal<In, Bit>,
    /// The PSN is accepted (else `new_cum` = `cum`).
    pub take: Signal<In, Bit>,
    /// Cumulative connection PSN before.
    pub cum: Signal<In, Bits<32>>,
    /// [`AccPre::b`].
    pub b: Signal<In, Bits<256>>,
    /// [`AccPre::ge`].
    pub ge: Signal<In, Bits<256>>,
    /// Leading ones of `b`.
    pub z_lo: Signal<In, Bits<9>>,
    /// Leading ones of `b` with the bits below `cum`'s set.
    pub z_hi: Signal<In, Bits<9>>,
    /// Cumulative connection PSN after.
    pub new_cum: Signal<Out, Bits<32>>,
    /// Bitmap after.
    pub new_bm: Signal<Out, Bits<256>>,
    z: Signal<Local, Bits<8>>,
    run: Signal<Local, Bits<8>>,
    lt: Signal<Local, Bits<256>>,
}

impl Logic for AccPost {
    #[hdl_gen]
    fn update(&mut self) {
        self.new_cum.next = self.cum.val();
        self.new_bm.next = 0.into();
        self.z.next = 0.into();
        self.run.next = 0.into();
        self.lt.next = 0.into();
        if self.en.val() {
            // The first clear bit at or above `cum`'s, else below it.
            self.z.next = self.z_hi.val().get_bits::<8>(0);
            if self.z_hi.val().get_bit(8) {
                self.z.next = self.z_lo.val().get_bits::<8>(0);
            }
            // The run, 8 bits (wraps), and the bits 0..z.
            self.run.next = self.z.val() - self.cum.val().get_bits::<8>(0);
            self.lt.next = !((!self.lt.val()) << self.z.val());
            if self.z_lo.val().get_bit(8) {
                self.new_cum.next = self.cum.val() + 256;
            } else if self.z_hi.val().get_bit(8) {
                self.new_cum.next = self.cum.val() + bit_cast::<32, 8>(self.run.val());
                self.new_bm.next = self.b.val() & !(self.ge.val() | self.lt.val());
            } else {
                self.new_cum.next = self.cum.val() + bit_cast::<32, 8>(self.run.val());
                self.new_bm.next = self.b.val() & !(self.ge.val() & self.lt.val());
            }
            if !self.take.val() {
                self.new_cum.next = self.cum.val();
            }
        }
    }
}
