//! Verdict stage V3 of [`RxEth`](super::RxEth) ([`RxEthPack`]): the
//! pseudo fields packed, the lengths the rules compare.

use rust_hdl::prelude::*;

use super::links::{FieldsIn, PackedOut};
use crate::helpers::native_block;

native_block! {
    /// V3 (registers, t + 4, `m_v3`), from V2's fields: the pseudo fields
    /// packed in the queue's layout (source IP [0..128), destination IP
    /// [128..256), ports [256..272) and [272..288), UDP length [288..304),
    /// ECN [304..306)), the bytes from the IP header on, the frame shorter
    /// than its Ethernet header; the other fields carried on.
    RxEthPack []
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the stage empties."]
        rst: Signal<In, Bit>,
        #[doc = "V2's fields."]
        s_fields: FieldsIn,
        #[doc = "V3's registers."]
        m_v3: PackedOut,
    }
    state {
        c_v: DFF<Bit>,
        c_vlan: DFF<Bit>,
        c_v4: DFF<Bit>,
        c_v6: DFF<Bit>,
        c_frag: DFF<Bit>,
        c_tl: DFF<Bit>,
        c_short: DFF<Bit>,
        c_ver: DFF<Bits<4>>,
        c_ihl: DFF<Bits<4>>,
        c_len: DFF<Bits<16>>,
        c_tot: DFF<Bits<17>>,
        c_iphl: DFF<Bits<7>>,
        c_nh: DFF<Bits<8>>,
        c_ps: DFF<Bits<306>>,
        c_lip: DFF<Bits<17>>,
        c_start: DFF<Bits<16>>,
        c_end: DFF<Bits<16>>,
        l2: Signal<Local, Bits<17>>,
    }
    consts {}
}

impl Logic for RxEthPack {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, c_v, c_vlan, c_v4, c_v6, c_frag, c_tl, c_short, c_ver, c_ihl, c_len,
            c_tot, c_iphl, c_nh, c_ps, c_lip, c_start, c_end
        );
        // The bytes from the IP header on; shorter than the Ethernet header.
        self.c_v.d.next = self.s_fields.v.val();
        self.c_vlan.d.next = self.s_fields.vlan.val();
        self.c_v4.d.next = self.s_fields.v4.val();
        self.c_v6.d.next = self.s_fields.v6.val();
        self.c_frag.d.next = self.s_fields.frag.val();
        self.c_tl.d.next = self.s_fields.tl.val();
        self.c_ver.d.next = self.s_fields.ver.val();
        self.c_ihl.d.next = self.s_fields.ihl.val();
        self.c_len.d.next = self.s_fields.len.val();
        self.c_tot.d.next = self.s_fields.tot.val();
        self.c_iphl.d.next = self.s_fields.iphl.val();
        self.c_nh.d.next = self.s_fields.nh.val();
        self.c_start.d.next = self.s_fields.start.val();
        self.c_end.d.next = self.s_fields.end.val();
        self.c_ps.d.next = bit_cast::<306, 128>(self.s_fields.src.val())
            | (bit_cast::<306, 128>(self.s_fields.dst.val()) << 128)
            | (bit_cast::<306, 16>(self.s_fields.sport.val()) << 256)
            | (bit_cast::<306, 16>(self.s_fields.dport.val()) << 272)
            | (bit_cast::<306, 16>(self.s_fields.ulen.val()) << 288)
            | (bit_cast::<306, 2>(self.s_fields.ecn.val()) << 304);
        self.l2.next = 14.into();
        if self.s_fields.vlan.val() {
            self.l2.next = 18.into();
        }
        self.c_lip.d.next = bit_cast::<17, 16>(self.s_fields.len.val()) - self.l2.val();
        self.c_short.d.next = (self.s_fields.len.val() < 14)
            | (self.s_fields.vlan.val() & (self.s_fields.len.val() < 18));

        self.m_v3.v.next = self.c_v.q.val();
        self.m_v3.vlan.next = self.c_vlan.q.val();
        self.m_v3.v4.next = self.c_v4.q.val();
        self.m_v3.v6.next = self.c_v6.q.val();
        self.m_v3.frag.next = self.c_frag.q.val();
        self.m_v3.tl.next = self.c_tl.q.val();
        self.m_v3.short.next = self.c_short.q.val();
        self.m_v3.ver.next = self.c_ver.q.val();
        self.m_v3.ihl.next = self.c_ihl.q.val();
        self.m_v3.len.next = self.c_len.q.val();
        self.m_v3.tot.next = self.c_tot.q.val();
        self.m_v3.iphl.next = self.c_iphl.q.val();
        self.m_v3.nh.next = self.c_nh.q.val();
        self.m_v3.ps.next = self.c_ps.q.val();
        self.m_v3.lip.next = self.c_lip.q.val();
        self.m_v3.start.next = self.c_start.q.val();
        self.m_v3.end.next = self.c_end.q.val();
        if self.rst.val() {
            self.c_v.d.next = false;
        }
    }
}
