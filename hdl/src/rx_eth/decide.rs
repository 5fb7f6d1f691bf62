//! Verdict stages V5 and V6 of [`RxEth`](super::RxEth) ([`RxEthDecide`]):
//! the reason, and where the payload lies in the buffer.

use rust_hdl::prelude::*;

use super::EthDrop;
use super::links::{RecordOut, RulesIn};
use crate::helpers::{konst, native_block};

native_block! {
    /// V5 (registers, t + 6), from V4: where the payload lies in the
    /// buffer (its first beat, the beat of its last byte from the frame's
    /// start, the realignment shift code). V6 (registers, t + 7): the
    /// reason, a priority encoder of V4's rule bits and the checksum's
    /// `ok` (first failure wins); the event (`ev_*`, t + 8 at the block's
    /// ports) and the frame's records (`m_rec`).
    RxEthDecide [B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the stages empty."]
        rst: Signal<In, Bit>,
        #[doc = "V4's rule bits and lengths."]
        s_rules: RulesIn,
        #[doc = "V5: the IPv4 header checksum is right."]
        ok: Signal<In, Bit>,
        #[doc = "One pulse per frame: its verdict is in `ev_reason` (a register)."]
        ev_valid: Signal<Out, Bit>,
        #[doc = "[`EthDrop`] code (a register)."]
        ev_reason: Signal<Out, Bits<4>>,
        #[doc = "V6's records."]
        m_rec: RecordOut,
    }
    state {
        // V5: buffer addresses of the payload.
        e_v: DFF<Bit>,
        e_v4: DFF<Bit>,
        e_rules: DFF<Bits<16>>,
        e_first: DFF<Bits<16>>,
        e_hb: DFF<Bits<16>>,
        e_endb: DFF<Bits<16>>,
        e_q: DFF<Bits<4>>,
        e_plen: DFF<Bits<16>>,
        e_start: DFF<Bits<16>>,
        e_end: DFF<Bits<16>>,
        e_ps: DFF<Bits<306>>,
        // V6: the verdict and the records to queue.
        f_v: DFF<Bit>,
        f_acc: DFF<Bit>,
        f_single: DFF<Bit>,
        f_first: DFF<Bits<16>>,
        f_last: DFF<Bits<16>>,
        f_end: DFF<Bits<16>>,
        f_q: DFF<Bits<4>>,
        f_plen: DFF<Bits<16>>,
        f_ps: DFF<Bits<306>>,
        ev_v: DFF<Bit>,
        ev_r: DFF<Bits<4>>,
        hb16: Signal<Local, Bits<16>>,
        reason: Signal<Local, Bits<4>>,
    }
    consts {
        c_lb: Constant<Bits<16>> = konst(B.trailing_zeros() as usize),
        c_qmask: Constant<Bits<4>> = konst(B / 4 - 1),
        c_truncated: Constant<Bits<4>> = konst(EthDrop::Truncated as usize),
        c_ether_type: Constant<Bits<4>> = konst(EthDrop::EtherType as usize),
        c_bad_ip_header: Constant<Bits<4>> = konst(EthDrop::BadIpHeader as usize),
        c_bad_checksum: Constant<Bits<4>> = konst(EthDrop::BadChecksum as usize),
        c_fragment: Constant<Bits<4>> = konst(EthDrop::Fragment as usize),
        c_ext_header: Constant<Bits<4>> = konst(EthDrop::ExtHeader as usize),
        c_protocol: Constant<Bits<4>> = konst(EthDrop::Protocol as usize),
        c_trailing: Constant<Bits<4>> = konst(EthDrop::TrailingBytes as usize),
        c_udp_length: Constant<Bits<4>> = konst(EthDrop::UdpLength as usize),
        c_port_drop: Constant<Bits<4>> = konst(EthDrop::Port as usize),
        c_no_payload: Constant<Bits<4>> = konst(EthDrop::NoPayload as usize),
        c_too_long: Constant<Bits<4>> = konst(EthDrop::TooLong as usize),
    }
}

impl<const B: usize> Logic for RxEthDecide<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, e_v, e_v4, e_rules, e_first, e_hb, e_endb, e_q, e_plen, e_start, e_end,
            e_ps, f_v, f_acc, f_single, f_first, f_last, f_end, f_q, f_plen, f_ps, ev_v, ev_r
        );
        // ---- V5: where the payload is in the buffer. ----
        self.e_v.d.next = self.s_rules.v.val();
        self.e_v4.d.next = self.s_rules.v4.val();
        self.e_rules.d.next = self.s_rules.rules.val();
        self.e_plen.d.next = self.s_rules.plen.val();
        self.e_start.d.next = self.s_rules.start.val();
        self.e_end.d.next = self.s_rules.end.val();
        self.e_ps.d.next = self.s_rules.ps.val();
        self.hb16.next = self.s_rules.hlen.val() >> self.c_lb.val();
        self.e_hb.d.next = self.hb16.val();
        self.e_first.d.next = self.s_rules.start.val() + self.hb16.val();
        self.e_endb.d.next = (self.s_rules.hlen.val() + self.s_rules.plen.val()) - 1;
        self.e_q.d.next = bit_cast::<4, 16>(self.s_rules.hlen.val() >> 2) & self.c_qmask.val();

        // ---- V6: the reason (first failure wins) and the records. ----
        self.reason.next = 0.into();
        if self.e_rules.q.val().get_bit(0) {
            self.reason.next = self.c_too_long.val();
        } else if self.e_rules.q.val().get_bit(1) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_rules.q.val().get_bit(2) {
            self.reason.next = self.c_ether_type.val();
        } else if self.e_rules.q.val().get_bit(3) | self.e_rules.q.val().get_bit(4) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_rules.q.val().get_bit(5) {
            self.reason.next = self.c_bad_ip_header.val();
        } else if self.e_rules.q.val().get_bit(6) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_rules.q.val().get_bit(7) {
            self.reason.next = self.c_bad_ip_header.val();
        } else if self.e_rules.q.val().get_bit(8) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_v4.q.val() & !self.ok.val() {
            self.reason.next = self.c_bad_checksum.val();
        } else if self.e_rules.q.val().get_bit(9) {
            self.reason.next = self.c_fragment.val();
        } else if self.e_rules.q.val().get_bit(10) {
            self.reason.next = self.c_ext_header.val();
        } else if self.e_rules.q.val().get_bit(11) {
            self.reason.next = self.c_protocol.val();
        } else if self.e_rules.q.val().get_bit(12) {
            self.reason.next = self.c_trailing.val();
        } else if self.e_rules.q.val().get_bit(13) {
            self.reason.next = self.c_udp_length.val();
        } else if self.e_rules.q.val().get_bit(14) {
            self.reason.next = self.c_port_drop.val();
        } else if self.e_rules.q.val().get_bit(15) {
            self.reason.next = self.c_no_payload.val();
        }
        self.ev_v.d.next = self.e_v.q.val();
        self.ev_r.d.next = self.reason.val();
        self.ev_valid.next = self.ev_v.q.val();
        self.ev_reason.next = self.ev_r.q.val();
        self.f_v.d.next = self.e_v.q.val();
        self.f_acc.d.next = self.reason.val() == 0;
        self.hb16.next = self.e_endb.q.val() >> self.c_lb.val();
        self.f_single.d.next = self.e_hb.q.val() == self.hb16.val();
        self.f_first.d.next = self.e_first.q.val();
        self.f_last.d.next = self.e_start.q.val() + self.hb16.val();
        self.f_end.d.next = self.e_end.q.val();
        self.f_q.d.next = self.e_q.q.val();
        self.f_plen.d.next = self.e_plen.q.val();
        self.f_ps.d.next = self.e_ps.q.val();
        self.m_rec.v.next = self.f_v.q.val();
        self.m_rec.acc.next = self.f_acc.q.val();
        self.m_rec.single.next = self.f_single.q.val();
        self.m_rec.first.next = self.f_first.q.val();
        self.m_rec.last.next = self.f_last.q.val();
        self.m_rec.end.next = self.f_end.q.val();
        self.m_rec.q.next = self.f_q.q.val();
        self.m_rec.plen.next = self.f_plen.q.val();
        self.m_rec.ps.next = self.f_ps.q.val();

        if self.rst.val() {
            self.e_v.d.next = false;
            self.f_v.d.next = false;
            self.ev_v.d.next = false;
        }
    }
}
