//! Verdict stage V2 of [`RxEth`](super::RxEth) ([`RxEthHead`]): a
//! frame's header fields, and its IPv4 header checksum.

use rust_hdl::prelude::*;

use super::cksum::RxEthCksum;
use super::links::{FieldsOut, WindowIn};
use crate::helpers::{SWAPS_128, konst, low_halves, native_block};

native_block! {
    /// V2 (registers, t + 3, `m_fields`), from V1's window: the header
    /// fields in network order, the addresses (IPv4 mapped into IPv6), the
    /// UDP header behind IHL·4 or 40 bytes, the frame's byte count. Its
    /// child [`RxEthCksum`] checks the IPv4 header checksum of the same
    /// window, three stages longer (`ok`, V5).
    RxEthHead [B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the stage empties."]
        rst: Signal<In, Bit>,
        #[doc = "V1's window."]
        s_win: WindowIn,
        #[doc = "V2's fields."]
        m_fields: FieldsOut,
        #[doc = "V5: the IPv4 header checksum is right (a register, [`RxEthCksum`])."]
        ok: Signal<Out, Bit>,
    }
    state {
        cksum: RxEthCksum,
        b_v: DFF<Bit>,
        b_vlan: DFF<Bit>,
        b_v4: DFF<Bit>,
        b_v6: DFF<Bit>,
        b_frag: DFF<Bit>,
        b_tl: DFF<Bit>,
        b_ver: DFF<Bits<4>>,
        b_ihl: DFF<Bits<4>>,
        b_len: DFF<Bits<16>>,
        b_tot: DFF<Bits<17>>,
        b_iphl: DFF<Bits<7>>,
        b_nh: DFF<Bits<8>>,
        b_ecn: DFF<Bits<2>>,
        b_src: DFF<Bits<128>>,
        b_dst: DFF<Bits<128>>,
        b_sport: DFF<Bits<16>>,
        b_dport: DFF<Bits<16>>,
        b_ulen: DFF<Bits<16>>,
        b_start: DFF<Bits<16>>,
        b_end: DFF<Bits<16>>,
        ipw: Signal<Local, Bits<528>>,
        v4: Signal<Local, Bit>,
        ihl: Signal<Local, Bits<4>>,
        udp: Signal<Local, Bits<48>>,
        ip_a: Signal<Local, Bits<128>>,
        ip_b: Signal<Local, Bits<128>>,
    }
    consts {
        c_lb: Constant<Bits<16>> = konst(B.trailing_zeros() as usize),
        c_mapped: Constant<Bits<128>> = Constant::new(Bits::<128>::from(0xFFFFu64) << 32),
        c_lo: [Constant<Bits<128>>; 4] = SWAPS_128.map(low_halves),
        c_sh: [Constant<Bits<8>>; 4] = SWAPS_128.map(konst),
    }
}

impl<const B: usize> Logic for RxEthHead<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, b_v, b_vlan, b_v4, b_v6, b_frag, b_tl, b_ver, b_ihl, b_len, b_tot, b_iphl,
            b_nh, b_ecn, b_src, b_dst, b_sport, b_dport, b_ulen, b_start, b_end
        );
        // ---- V2: header fields (network order). ----
        // `ipw` is the frame from the IP header on, byte o at bit 8 * o.
        self.ipw.next = self.s_win.ipw.val();
        // The IPv4 header checksum, beside V2 … V5.
        self.cksum.clock.next = self.clock.val();
        self.cksum.hdr4.next = self.ipw.val().get_bits::<480>(0);
        self.ok.next = self.cksum.ok.val();
        self.v4.next = self.s_win.et.val() == 0x0008;
        self.ihl.next = self.ipw.val().get_bits::<4>(0);
        self.b_v.d.next = self.s_win.v.val();
        // The fields load with a frame's window only (`v`), and hold
        // otherwise: the later stages read them with `v` only (a simulator
        // skips the address reversal and the UDP choice in the other
        // cycles).
        self.ip_a.next = 0.into();
        self.ip_b.next = 0.into();
        self.udp.next = 0.into();
        if self.s_win.v.val() {
            self.b_vlan.d.next = self.s_win.vlan.val();
            self.b_tl.d.next = self.s_win.tl.val();
            self.b_start.d.next = self.s_win.start.val();
            self.b_end.d.next = self.s_win.end.val();
            self.b_v4.d.next = self.v4.val();
            self.b_v6.d.next = self.s_win.et.val() == 0xDD86;
            self.b_ihl.d.next = self.ihl.val();
            self.b_ver.d.next = self.ipw.val().get_bits::<4>(4);
            self.b_len.d.next = (self.s_win.beats.val() << self.c_lb.val()) + self.s_win.kc.val();
            // IPv4 flags and fragment offset (bytes 6-7): MF, offset ≠ 0.
            self.b_frag.d.next = self.ipw.val().get_bit(53)
                | self.ipw.val().get_bits::<5>(48).any()
                | self.ipw.val().get_bits::<8>(56).any();
            // Addresses, byte-reversed into network order: IPv6's 16 bytes, or
            // IPv4's 4 at the top (so that they end in the low bytes), each
            // reversed by four swap steps.
            if self.v4.val() {
                self.b_tot.d.next = (bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(16)) << 8)
                    | bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(24));
                self.b_iphl.d.next = bit_cast::<7, 4>(self.ihl.val()) << 2;
                self.b_nh.d.next = self.ipw.val().get_bits::<8>(72);
                self.b_ecn.d.next = self.ipw.val().get_bits::<2>(8);
                self.ip_a.next = bit_cast::<128, 32>(self.ipw.val().get_bits::<32>(96)) << 96;
                self.ip_b.next = bit_cast::<128, 32>(self.ipw.val().get_bits::<32>(128)) << 96;
            } else {
                self.b_tot.d.next = ((bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(32)) << 8)
                    | bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(40)))
                    + 40;
                self.b_iphl.d.next = 40.into();
                self.b_nh.d.next = self.ipw.val().get_bits::<8>(48);
                self.b_ecn.d.next = self.ipw.val().get_bits::<2>(12);
                self.ip_a.next = self.ipw.val().get_bits::<128>(64);
                self.ip_b.next = self.ipw.val().get_bits::<128>(192);
            }
            for k in 0..4 {
                self.ip_a.next = ((self.ip_a.val() & self.c_lo[k].val()) << self.c_sh[k].val())
                    | ((self.ip_a.val() >> self.c_sh[k].val()) & self.c_lo[k].val());
                self.ip_b.next = ((self.ip_b.val() & self.c_lo[k].val()) << self.c_sh[k].val())
                    | ((self.ip_b.val() >> self.c_sh[k].val()) & self.c_lo[k].val());
            }
            if self.v4.val() {
                self.ip_a.next = self.ip_a.val() | self.c_mapped.val();
                self.ip_b.next = self.ip_b.val() | self.c_mapped.val();
            }
            self.b_src.d.next = self.ip_a.val();
            self.b_dst.d.next = self.ip_b.val();
            // The UDP header right after the IP header (IHL·4 or 40 bytes in).
            self.udp.next = self.ipw.val().get_bits::<48>(320);
            if self.v4.val() {
                self.udp.next = 0.into();
                for j in 5..16 {
                    if self.ihl.val() == j.to_bits::<4>() {
                        self.udp.next = self.ipw.val().get_bits::<48>(32 * j);
                    }
                }
            }
            self.b_sport.d.next = (bit_cast::<16, 8>(self.udp.val().get_bits::<8>(0)) << 8)
                | bit_cast::<16, 8>(self.udp.val().get_bits::<8>(8));
            self.b_dport.d.next = (bit_cast::<16, 8>(self.udp.val().get_bits::<8>(16)) << 8)
                | bit_cast::<16, 8>(self.udp.val().get_bits::<8>(24));
            self.b_ulen.d.next = (bit_cast::<16, 8>(self.udp.val().get_bits::<8>(32)) << 8)
                | bit_cast::<16, 8>(self.udp.val().get_bits::<8>(40));
        }
        self.m_fields.v.next = self.b_v.q.val();
        self.m_fields.vlan.next = self.b_vlan.q.val();
        self.m_fields.v4.next = self.b_v4.q.val();
        self.m_fields.v6.next = self.b_v6.q.val();
        self.m_fields.frag.next = self.b_frag.q.val();
        self.m_fields.tl.next = self.b_tl.q.val();
        self.m_fields.ver.next = self.b_ver.q.val();
        self.m_fields.ihl.next = self.b_ihl.q.val();
        self.m_fields.len.next = self.b_len.q.val();
        self.m_fields.tot.next = self.b_tot.q.val();
        self.m_fields.iphl.next = self.b_iphl.q.val();
        self.m_fields.nh.next = self.b_nh.q.val();
        self.m_fields.ecn.next = self.b_ecn.q.val();
        self.m_fields.src.next = self.b_src.q.val();
        self.m_fields.dst.next = self.b_dst.q.val();
        self.m_fields.sport.next = self.b_sport.q.val();
        self.m_fields.dport.next = self.b_dport.q.val();
        self.m_fields.ulen.next = self.b_ulen.q.val();
        self.m_fields.start.next = self.b_start.q.val();
        self.m_fields.end.next = self.b_end.q.val();

        if self.rst.val() {
            self.b_v.d.next = false;
        }
    }
}
