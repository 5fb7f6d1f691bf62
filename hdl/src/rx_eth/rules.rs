//! Verdict stage V4 of [`RxEth`](super::RxEth) ([`RxEthRules`]):
//! every rule as a registered bit, and the configured UDP port.

use rust_hdl::prelude::*;

use super::PAD_MAX;
use super::links::{PackedIn, RulesOut};
use crate::helpers::{konst, native_block};

/// IPv6 next-header values of extension headers (`etherparse`'s
/// `IpNumber::is_ipv6_ext_header_value`).
const EXT_HEADERS: [usize; 11] = [0, 43, 44, 50, 51, 60, 135, 139, 140, 253, 254];

native_block! {
    /// V4 (registers, t + 5, `m_rules`), from V3: every rule as its own bit, in
    /// the order the verdict tries them (the checksum, [`super::cksum`],
    /// is not among them), the header and payload lengths. The UDP
    /// destination port accepted is a register here, written by `cfg_*`.
    RxEthRules []
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the stage empties, the default port."]
        rst: Signal<In, Bit>,
        #[doc = "V3's lengths and packed fields."]
        s_v3: PackedIn,
        #[doc = "Write `cfg_port` as the accepted UDP destination port."]
        cfg_port_we: Signal<In, Bit>,
        #[doc = "UDP destination port to accept."]
        cfg_port: Signal<In, Bits<16>>,
        #[doc = "V4's rule bits and lengths."]
        m_rules: RulesOut,
    }
    state {
        // V4: every rule as a registered bit, the lengths.
        d_v: DFF<Bit>,
        d_v4: DFF<Bit>,
        d_rules: DFF<Bits<16>>,
        d_hlen: DFF<Bits<16>>,
        d_plen: DFF<Bits<16>>,
        d_ps: DFF<Bits<306>>,
        d_start: DFF<Bits<16>>,
        d_end: DFF<Bits<16>>,
        port: DFF<Bits<16>>,
        l2: Signal<Local, Bits<17>>,
        iphl17: Signal<Local, Bits<17>>,
        ulen17: Signal<Local, Bits<17>>,
        ext: Signal<Local, Bit>,
        bits: Signal<Local, Bits<16>>,
    }
    consts {
        c_ext: [Constant<Bits<8>>; 11] = EXT_HEADERS.map(konst),
        c_pad_max: Constant<Bits<16>> = konst(PAD_MAX),
        c_port: Constant<Bits<16>> = konst(metaroce_proto::DEFAULT_UDP_PORT as usize),
    }
}

impl Logic for RxEthRules {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, d_v, d_v4, d_rules, d_hlen, d_plen, d_ps, d_start, d_end, port
        );
        // ---- V4: every rule as a registered bit. ----
        self.d_v.d.next = self.s_v3.v.val();
        self.d_v4.d.next = self.s_v3.v4.val();
        // Rules, one bit each, in the order the verdict tries them: too
        // long 0, short for Ethernet 1, EtherType 2, short for IPv4 3 and
        // IPv6 4, bad version/IHL 5, short for IHL 6, total < IHL 7, short
        // for the total 8, fragment 9, extension header 10, protocol 11,
        // trailing bytes 12, UDP length 13, port 14, no payload 15 (the
        // checksum comes between 8 and 9, a stage later).
        self.bits.next = 0.into();
        self.bits.next = self.bits.val().replace_bit(0, self.s_v3.tl.val());
        self.bits.next = self.bits.val().replace_bit(1, self.s_v3.short.val());
        self.d_ps.d.next = self.s_v3.ps.val();
        self.d_start.d.next = self.s_v3.start.val();
        self.d_end.d.next = self.s_v3.end.val();
        self.iphl17.next = bit_cast::<17, 7>(self.s_v3.iphl.val());
        self.bits.next = self
            .bits
            .val()
            .replace_bit(2, !self.s_v3.v4.val() & !self.s_v3.v6.val());
        self.bits.next = self
            .bits
            .val()
            .replace_bit(3, self.s_v3.v4.val() & (self.s_v3.lip.val() < 20));
        self.bits.next = self
            .bits
            .val()
            .replace_bit(4, self.s_v3.v6.val() & (self.s_v3.lip.val() < 40));
        if self.s_v3.v4.val() {
            self.bits.next = self
                .bits
                .val()
                .replace_bit(5, (self.s_v3.ver.val() != 4) | (self.s_v3.ihl.val() < 5));
        } else {
            self.bits.next = self.bits.val().replace_bit(5, self.s_v3.ver.val() != 6);
        }
        self.bits.next = self
            .bits
            .val()
            .replace_bit(6, self.s_v3.lip.val() < self.iphl17.val());
        self.bits.next = self
            .bits
            .val()
            .replace_bit(7, self.s_v3.tot.val() < self.iphl17.val());
        self.bits.next = self
            .bits
            .val()
            .replace_bit(8, self.s_v3.lip.val() < self.s_v3.tot.val());
        self.bits.next = self
            .bits
            .val()
            .replace_bit(9, self.s_v3.v4.val() & self.s_v3.frag.val());
        self.ext.next = false;
        for j in 0..11 {
            if self.s_v3.nh.val() == self.c_ext[j].val() {
                self.ext.next = true;
            }
        }
        self.bits.next = self
            .bits
            .val()
            .replace_bit(10, self.s_v3.v6.val() & self.ext.val());
        self.bits.next = self.bits.val().replace_bit(11, self.s_v3.nh.val() != 17);
        self.bits.next = self.bits.val().replace_bit(
            12,
            (self.s_v3.lip.val() > self.s_v3.tot.val())
                & (self.s_v3.len.val() > self.c_pad_max.val()),
        );
        self.ulen17.next = bit_cast::<17, 16>(self.s_v3.ps.val().get_bits::<16>(288));
        self.bits.next = self.bits.val().replace_bit(
            13,
            (self.s_v3.tot.val() < (self.iphl17.val() + 8))
                | (self.ulen17.val() != (self.s_v3.tot.val() - self.iphl17.val())),
        );
        self.bits.next = self.bits.val().replace_bit(
            14,
            self.s_v3.ps.val().get_bits::<16>(272) != self.port.q.val(),
        );
        self.bits.next = self
            .bits
            .val()
            .replace_bit(15, self.s_v3.tot.val() == (self.iphl17.val() + 8));
        self.d_rules.d.next = self.bits.val();
        self.l2.next = 14.into();
        if self.s_v3.vlan.val() {
            self.l2.next = 18.into();
        }
        self.d_hlen.d.next =
            (bit_cast::<16, 17>(self.l2.val()) + bit_cast::<16, 7>(self.s_v3.iphl.val())) + 8;
        self.d_plen.d.next =
            (bit_cast::<16, 17>(self.s_v3.tot.val()) - bit_cast::<16, 7>(self.s_v3.iphl.val())) - 8;
        self.m_rules.v.next = self.d_v.q.val();
        self.m_rules.v4.next = self.d_v4.q.val();
        self.m_rules.rules.next = self.d_rules.q.val();
        self.m_rules.hlen.next = self.d_hlen.q.val();
        self.m_rules.plen.next = self.d_plen.q.val();
        self.m_rules.ps.next = self.d_ps.q.val();
        self.m_rules.start.next = self.d_start.q.val();
        self.m_rules.end.next = self.d_end.q.val();
        if self.cfg_port_we.val() {
            self.port.d.next = self.cfg_port.val();
        }

        if self.rst.val() {
            self.d_v.d.next = false;
            self.port.d.next = self.c_port.val();
        }
    }
}
