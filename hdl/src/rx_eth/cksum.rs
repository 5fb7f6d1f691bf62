//! The IPv4 header checksum of [`RxEth`](super::RxEth) ([`RxEthCksum`]),
//! verdict stages V2 to V5.

use rust_hdl::prelude::*;

use crate::helpers::native_block;

native_block! {
    /// The IPv4 header checksum check of the frame whose V1 window is on
    /// `hdr4`, as an adder tree of a couple of levels per stage: V2 the 30
    /// header words (the checksum word and words past IHL·4 bytes as 0)
    /// summed in pairs; V3 and V4 two more levels each; V5 (`ok`, a
    /// register, t + 6) the end-around carry folded and compared with the
    /// checksum (`fold == ~checksum`, or `~checksum − 1` when the fold
    /// carries). The words are summed in lane order: the ones'-complement
    /// sum does not depend on byte order. Every frame goes through; the
    /// verdict reads `ok` for IPv4 frames only.
    RxEthCksum []
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "V1's IPv4 header (its 60 bytes at most, byte o at bit 8·o)."]
        hdr4: Signal<In, Bits<480>>,
        #[doc = "V5: the checksum is right (a register)."]
        ok: Signal<Out, Bit>,
    }
    state {
        b_s1: [DFF<Bits<17>>; 15],
        b_cks: DFF<Bits<16>>,
        c_s3: [DFF<Bits<19>>; 4],
        c_cksn: DFF<Bits<16>>,
        c_cksm: DFF<Bits<16>>,
        d_s5: DFF<Bits<21>>,
        d_cksn: DFF<Bits<16>>,
        d_cksm: DFF<Bits<16>>,
        e_ok: DFF<Bit>,
        ihl: Signal<Local, Bits<4>>,
        nw: Signal<Local, Bits<5>>,
        w16: Signal<Local, Bits<16>>,
        word: Signal<Local, Bits<17>>,
        fold: Signal<Local, Bits<17>>,
    }
    consts {}
}

impl Logic for RxEthCksum {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, b_cks, c_cksn, c_cksm, d_s5, d_cksn, d_cksm, e_ok
        );
        for j in 0..15 {
            self.b_s1[j].clock.next = self.clock.val();
            self.b_s1[j].d.next = self.b_s1[j].q.val();
        }
        for j in 0..4 {
            self.c_s3[j].clock.next = self.clock.val();
            self.c_s3[j].d.next = self.c_s3[j].q.val();
        }
        // ---- V2: the header's words in lane order, summed in pairs. ----
        self.b_cks.d.next = self.hdr4.val().get_bits::<16>(80);
        self.ihl.next = self.hdr4.val().get_bits::<4>(0);
        self.nw.next = bit_cast::<5, 4>(self.ihl.val()) << 1;
        for j in 0..15 {
            self.w16.next = 0.into();
            if ((2 * j) != 5) & ((2 * j).to_bits::<5>() < self.nw.val()) {
                self.w16.next = self.hdr4.val().get_bits::<16>(32 * j);
            }
            self.word.next = bit_cast::<17, 16>(self.w16.val());
            self.w16.next = 0.into();
            if ((2 * j + 1) != 5) & ((2 * j + 1).to_bits::<5>() < self.nw.val()) {
                self.w16.next = self.hdr4.val().get_bits::<16>(32 * j + 16);
            }
            self.b_s1[j].d.next = self.word.val() + bit_cast::<17, 16>(self.w16.val());
        }

        // ---- V3: two more adder levels. ----
        self.c_cksn.d.next = !self.b_cks.q.val();
        self.c_cksm.d.next = !self.b_cks.q.val() - 1;
        self.c_s3[0].d.next = (bit_cast::<19, 17>(self.b_s1[0].q.val())
            + bit_cast::<19, 17>(self.b_s1[1].q.val()))
            + (bit_cast::<19, 17>(self.b_s1[2].q.val()) + bit_cast::<19, 17>(self.b_s1[3].q.val()));
        self.c_s3[1].d.next = (bit_cast::<19, 17>(self.b_s1[4].q.val())
            + bit_cast::<19, 17>(self.b_s1[5].q.val()))
            + (bit_cast::<19, 17>(self.b_s1[6].q.val()) + bit_cast::<19, 17>(self.b_s1[7].q.val()));
        self.c_s3[2].d.next = (bit_cast::<19, 17>(self.b_s1[8].q.val())
            + bit_cast::<19, 17>(self.b_s1[9].q.val()))
            + (bit_cast::<19, 17>(self.b_s1[10].q.val())
                + bit_cast::<19, 17>(self.b_s1[11].q.val()));
        self.c_s3[3].d.next = (bit_cast::<19, 17>(self.b_s1[12].q.val())
            + bit_cast::<19, 17>(self.b_s1[13].q.val()))
            + bit_cast::<19, 17>(self.b_s1[14].q.val());

        // ---- V4: the last two levels. ----
        self.d_cksn.d.next = self.c_cksn.q.val();
        self.d_cksm.d.next = self.c_cksm.q.val();
        self.d_s5.d.next = (bit_cast::<21, 19>(self.c_s3[0].q.val())
            + bit_cast::<21, 19>(self.c_s3[1].q.val()))
            + (bit_cast::<21, 19>(self.c_s3[2].q.val()) + bit_cast::<21, 19>(self.c_s3[3].q.val()));

        // ---- V5: the sum folded and compared. ----
        // The ones'-complement sum is the 21-bit sum with its carries
        // folded back in; `~fold == checksum` is compared as `fold ==
        // ~checksum` (no end-around carry) or `fold == ~checksum - 1`.
        self.fold.next = bit_cast::<17, 16>(self.d_s5.q.val().get_bits::<16>(0))
            + bit_cast::<17, 5>(self.d_s5.q.val().get_bits::<5>(16));
        if self.fold.val().get_bit(16) {
            self.e_ok.d.next = self.fold.val().get_bits::<16>(0) == self.d_cksm.q.val();
        } else {
            self.e_ok.d.next = self.fold.val().get_bits::<16>(0) == self.d_cksn.q.val();
        }
        self.ok.next = self.e_ok.q.val();
    }
}
