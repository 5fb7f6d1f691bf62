//! The checksums of [`AckFrame`](super::AckFrame) ([`AckFrameCksum`]):
//! the IPv4 header checksum and the IPv6 UDP checksum of the captured
//! datagram, in two stages.

use rust_hdl::prelude::*;

use super::links::{CksOut, GramIn, SumIn};
use crate::helpers::{konst, native_block};

native_block! {
    /// Once the datagram is whole: C1 the partial sums (the IPv4 header's
    /// register words, its captured words; the IPv6 pseudo-header's
    /// source words, destination words, and the payload sum with ports
    /// and lengths), C2 their sum folded twice (end-around carry) and
    /// complemented (the UDP checksum 0xFFFF where it comes out as 0),
    /// into registers; held until the frame loads (`m_cks.clear`).
    AckFrameCksum[]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the stages start again."]
        rst: Signal<In, Bit>,
        #[doc = "The datagram's length and addressing."]
        s_gram: GramIn,
        #[doc = "A whole datagram waits; its payload sum."]
        s_sum: SumIn,
        #[doc = "The configured local IPv4 address (IPv4 header sum)."]
        reg_local_ip: Signal<In, Bits<32>>,
        #[doc = "The configured local IPv6 address (pseudo-header sum)."]
        reg_local_ip6: Signal<In, Bits<128>>,
        #[doc = "The configured TTL (IPv4 header sum)."]
        reg_ttl: Signal<In, Bits<8>>,
        #[doc = "The configured DSCP (IPv4 header sum)."]
        reg_dscp: Signal<In, Bits<6>>,
        #[doc = "The checksums (registers); the frame's load."]
        m_cks: CksOut,
    }
    state {
        // Stages (0: C1 next, 1: C2 next, 2: done) and their registers.
        ck_st: DFF<Bits<2>>,
        a4_reg: DFF<Bits<20>>,
        a4_cap: DFF<Bits<20>>,
        a6_src: DFF<Bits<20>>,
        a6_dst: DFF<Bits<20>>,
        a6_rest: DFF<Bits<26>>,
        ck4: DFF<Bits<16>>,
        ck6: DFF<Bits<16>>,
        // Temporaries.
        ulen: Signal<Local, Bits<16>>,
        word: Signal<Local, Bits<16>>,
        sum_src: Signal<Local, Bits<20>>,
        sum_dst: Signal<Local, Bits<20>>,
        s32: Signal<Local, Bits<32>>,
        f17: Signal<Local, Bits<17>>,
        f16: Signal<Local, Bits<16>>,
    }
    consts {
        // IPv4 header words that are constants: 0x4500 | TOS (ECT(0), the
        // DSCP added), 28 of the total length, DF, protocol 17.
        k_ip4_fix: Constant<Bits<20>> = konst(0x4502 + 28 + 0x4000 + 17),
    }
}

impl Logic for AckFrameCksum {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ck_st, a4_reg, a4_cap, a6_src, a6_dst, a6_rest, ck4, ck6
        );
        self.ulen.next = bit_cast::<16, 8>(self.s_gram.n.val()) + 8;
        self.word.next = 0.into();
        self.sum_src.next = 0.into();
        self.sum_dst.next = 0.into();
        self.s32.next = 0.into();
        self.f17.next = 0.into();
        self.f16.next = 0.into();
        if self.s_sum.full.val() & (self.ck_st.q.val() == 0) {
            self.ck_st.d.next = 1.into();
            self.a4_reg.d.next = self.k_ip4_fix.val()
                + bit_cast::<20, 8>(bit_cast::<8, 6>(self.reg_dscp.val()) << 2)
                + (bit_cast::<20, 8>(self.reg_ttl.val()) << 8)
                + bit_cast::<20, 16>(self.reg_local_ip.val().get_bits::<16>(16))
                + bit_cast::<20, 16>(self.reg_local_ip.val().get_bits::<16>(0));
            self.a4_cap.d.next = bit_cast::<20, 8>(self.s_gram.n.val())
                + bit_cast::<20, 16>(self.s_gram.dip.val().get_bits::<16>(16))
                + bit_cast::<20, 16>(self.s_gram.dip.val().get_bits::<16>(0));
            for i in 0..8 {
                self.word.next = self.reg_local_ip6.val().get_bits::<16>(16 * i);
                self.sum_src.next = self.sum_src.val() + bit_cast::<20, 16>(self.word.val());
                self.word.next = self.s_gram.dip.val().get_bits::<16>(16 * i);
                self.sum_dst.next = self.sum_dst.val() + bit_cast::<20, 16>(self.word.val());
            }
            self.a6_src.d.next = self.sum_src.val();
            self.a6_dst.d.next = self.sum_dst.val();
            self.a6_rest.d.next = bit_cast::<26, 24>(self.s_sum.sum.val())
                + bit_cast::<26, 16>(self.s_gram.sport.val())
                + bit_cast::<26, 16>(self.s_gram.dport.val())
                + (bit_cast::<26, 16>(self.ulen.val()) << 1)
                + 17;
        }
        if self.ck_st.q.val() == 1 {
            self.ck_st.d.next = 2.into();
            self.s32.next =
                bit_cast::<32, 20>(self.a4_reg.q.val()) + bit_cast::<32, 20>(self.a4_cap.q.val());
            self.f17.next = bit_cast::<17, 16>(self.s32.val().get_bits::<16>(0))
                + bit_cast::<17, 16>(self.s32.val().get_bits::<16>(16));
            self.f16.next = self.f17.val().get_bits::<16>(0)
                + bit_cast::<16, 1>(self.f17.val().get_bits::<1>(16));
            self.ck4.d.next = !self.f16.val();
            self.s32.next = bit_cast::<32, 20>(self.a6_src.q.val())
                + bit_cast::<32, 20>(self.a6_dst.q.val())
                + bit_cast::<32, 26>(self.a6_rest.q.val());
            self.f17.next = bit_cast::<17, 16>(self.s32.val().get_bits::<16>(0))
                + bit_cast::<17, 16>(self.s32.val().get_bits::<16>(16));
            self.f16.next = self.f17.val().get_bits::<16>(0)
                + bit_cast::<16, 1>(self.f17.val().get_bits::<1>(16));
            self.ck6.d.next = !self.f16.val();
            if self.f16.val() == 0xFFFF {
                self.ck6.d.next = self.f16.val();
            }
        }
        if self.m_cks.clear.val() | self.rst.val() {
            self.ck_st.d.next = 0.into();
        }
        self.m_cks.ready.next = self.ck_st.q.val() == 2;
        self.m_cks.ck4.next = self.ck4.q.val();
        self.m_cks.ck6.next = self.ck6.q.val();
    }
}
