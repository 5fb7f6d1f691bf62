//! The descriptor side's two stages ([`TxSide`]): what a FIFO entry needs
//! besides its headers.

use rust_hdl::prelude::*;

use super::matrices::port_rows;
use super::{HLEN, SIDE_BITS};
use crate::helpers::{konst, native_block};

native_block! {
    /// Stages D1 and D2 of [`TxBuild`](super::TxBuild) for `B`-lane
    /// beats: an accepted descriptor's lengths in, its FIFO entry's
    /// computed part out two cycles later (`out_v`, `out_idx`,
    /// `out_side`). D1 takes the path's entropy from the table (read at
    /// the accept) and computes the lengths and the IPv4 checksum (one
    /// end-around-carry add of the payload length to the configured sum
    /// for the descriptor's ECN and header size); D2 adds the source port
    /// and UDP length to the pseudo-header CRC (one XOR matrix over 32
    /// bits) and packs the entry. Entry layout: payload bytes [0, 16),
    /// source port [16, 32), UDP length [32, 48), IP length field
    /// [48, 64), IPv4 checksum [64, 80), ICRC offset [80, 96), frame
    /// length [96, 112), trailing zero lanes of the last covered beat
    /// [112, 120), CRC seed [120, 152), ECN [152], MSG [153].
    TxSide [B]
    check { (8..=64).contains(&B), "TxSide<{B}>: B must be 8..=64 lanes" }
    let port = port_rows(B);
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the stages."]
        rst: Signal<In, Bit>,
        #[doc = "A descriptor is accepted."]
        in_v: Signal<In, Bit>,
        #[doc = "Its FIFO entry."]
        in_idx: Signal<In, Bits<2>>,
        #[doc = "Its payload bytes."]
        in_plen: Signal<In, Bits<16>>,
        #[doc = "It has a MSG extension."]
        in_msg: Signal<In, Bit>,
        #[doc = "It is ECN-capable."]
        in_ecn: Signal<In, Bit>,
        #[doc = "The entropy table's entry for its path (the cycle after `in_v`)."]
        ent_data: Signal<In, Bits<16>>,
        #[doc = "IPv6, else IPv4 (configured)."]
        ipv6: Signal<In, Bit>,
        #[doc = "The configured IPv4 header sums ([`super::regs::TxRegs`]'s `cks`)."]
        cks: Signal<In, Bits<64>>,
        #[doc = "The configured pseudo-header CRC at the end of the first beat."]
        cr_first: Signal<In, Bits<32>>,
        #[doc = "An entry's computed part is ready."]
        out_v: Signal<Out, Bit>,
        #[doc = "Its FIFO entry."]
        out_idx: Signal<Out, Bits<2>>,
        #[doc = "The computed part (layout above)."]
        out_side: Signal<Out, Bits<SIDE_BITS>>,
    }
    state {
        // D1: the accepted descriptor's entry, lengths and flags.
        d1_v: DFF<Bit>,
        d1_idx: DFF<Bits<2>>,
        d1_plen: DFF<Bits<16>>,
        d1_msg: DFF<Bit>,
        d1_ecn: DFF<Bit>,
        // D2: lengths, checksum, source port.
        d2_v: DFF<Bit>,
        d2_idx: DFF<Bits<2>>,
        d2_plen: DFF<Bits<16>>,
        d2_msg: DFF<Bit>,
        d2_ecn: DFF<Bit>,
        d2_sport: DFF<Bits<16>>,
        d2_ulen: DFF<Bits<16>>,
        d2_l3: DFF<Bits<16>>,
        d2_cks: DFF<Bits<16>>,
        d2_end: DFF<Bits<16>>,
        d2_tend: DFF<Bits<16>>,
        // Combinational temporaries.
        kind: Signal<Local, Bits<2>>,
        sel: Signal<Local, Bits<2>>,
        w16: Signal<Local, Bits<16>>,
        s17: Signal<Local, Bits<17>>,
        inc: Signal<Local, Bits<16>>,
        ones: Signal<Local, Bits<16>>,
        m16: Signal<Local, Bits<16>>,
        m32: Signal<Local, Bits<32>>,
        w32: Signal<Local, Bits<32>>,
        acc: Signal<Local, Bits<32>>,
    }
    consts {
        c_bm1: Constant<Bits<8>> = konst(B - 1),
        c_end: [Constant<Bits<16>>; 4] = HLEN.map(konst),
        c_tend: [Constant<Bits<16>>; 4] = HLEN.map(|h| konst(h + 4)),
        c_l3: [Constant<Bits<16>>; 4] = [64, 96, 44, 76].map(konst),
        c_ulen: [Constant<Bits<16>>; 2] = [44, 76].map(konst),
        c_port4: [Constant<Bits<32>>; 32] = port[0],
        c_port6: [Constant<Bits<32>>; 32] = port[1],
    }
}

impl<const B: usize> Logic for TxSide<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, d1_v, d1_idx, d1_plen, d1_msg, d1_ecn, d2_v, d2_idx, d2_plen, d2_msg,
            d2_ecn, d2_sport, d2_ulen, d2_l3, d2_cks, d2_end, d2_tend
        );

        // ---- In: D1. ----
        self.d1_v.d.next = self.in_v.val();
        if self.in_v.val() {
            self.d1_idx.d.next = self.in_idx.val();
            self.d1_plen.d.next = self.in_plen.val();
            self.d1_msg.d.next = self.in_msg.val();
            self.d1_ecn.d.next = self.in_ecn.val();
        }

        // ---- D1 -> D2: entropy, lengths, IPv4 checksum. ----
        self.kind.next = bit_cast::<2, 1>(self.d1_msg.q.val().into());
        if self.ipv6.val() {
            self.kind.next = self.kind.val() | 2;
        }
        self.d2_v.d.next = self.d1_v.q.val();
        self.sel.next = 0.into();
        self.w16.next = 0.into();
        self.s17.next = 0.into();
        self.inc.next = 0.into();
        self.ones.next = 0.into();
        if self.d1_v.q.val() {
            self.d2_idx.d.next = self.d1_idx.q.val();
            self.d2_plen.d.next = self.d1_plen.q.val();
            self.d2_msg.d.next = self.d1_msg.q.val();
            self.d2_ecn.d.next = self.d1_ecn.q.val();
            self.d2_sport.d.next = self.ent_data.val();
            if self.d1_msg.q.val() {
                self.d2_ulen.d.next = self.d1_plen.q.val() + self.c_ulen[1].val();
            } else {
                self.d2_ulen.d.next = self.d1_plen.q.val() + self.c_ulen[0].val();
            }
            for j in 0..4 {
                if self.kind.val() == j.to_bits::<2>() {
                    self.d2_l3.d.next = self.d1_plen.q.val() + self.c_l3[j].val();
                    self.d2_end.d.next = self.d1_plen.q.val() + self.c_end[j].val();
                    self.d2_tend.d.next = self.d1_plen.q.val() + self.c_tend[j].val();
                }
            }
            // The checksum: the configured sum for this (ECN, MSG) plus
            // the payload length, ones' complement, inverted.
            self.sel.next = bit_cast::<2, 1>(self.d1_msg.q.val().into())
                | (bit_cast::<2, 1>(self.d1_ecn.q.val().into()) << 1);
            self.w16.next = self.cks.val().get_bits::<16>(0);
            if self.sel.val() == 1 {
                self.w16.next = self.cks.val().get_bits::<16>(16);
            }
            if self.sel.val() == 2 {
                self.w16.next = self.cks.val().get_bits::<16>(32);
            }
            if self.sel.val() == 3 {
                self.w16.next = self.cks.val().get_bits::<16>(48);
            }
            self.s17.next =
                bit_cast::<17, 16>(self.w16.val()) + bit_cast::<17, 16>(self.d1_plen.q.val());
            self.inc.next = self.s17.val().get_bits::<16>(0) + 1;
            if self.s17.val().get_bit(16) {
                self.ones.next = self.inc.val();
            } else {
                self.ones.next = self.s17.val().get_bits::<16>(0);
            }
            self.d2_cks.d.next = !self.ones.val();
        }

        // ---- D2 -> the entry's computed part. ----
        self.m16.next = 0.into();
        self.m32.next = 0.into();
        self.w32.next = 0.into();
        self.acc.next = 0.into();
        self.out_side.next = 0.into();
        if self.d2_v.q.val() {
            self.m16.next = 0 - self.d2_end.q.val();
            self.w32.next = bit_cast::<32, 16>(self.d2_sport.q.val())
                | (bit_cast::<32, 16>(self.d2_ulen.q.val()) << 16);
            for o in 0..32 {
                self.m32.next = self.c_port4[o].val();
                if self.ipv6.val() {
                    self.m32.next = self.c_port6[o].val();
                }
                self.acc.next = self
                    .acc
                    .val()
                    .replace_bit(o, (self.w32.val() & self.m32.val()).xor());
            }
            self.out_side.next = bit_cast::<SIDE_BITS, 16>(self.d2_plen.q.val())
                | (bit_cast::<SIDE_BITS, 16>(self.d2_sport.q.val()) << 16)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_ulen.q.val()) << 32)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_l3.q.val()) << 48)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_cks.q.val()) << 64)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_end.q.val()) << 80)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_tend.q.val()) << 96)
                | (bit_cast::<SIDE_BITS, 8>(bit_cast::<8, 16>(self.m16.val()) & self.c_bm1.val())
                    << 112)
                | (bit_cast::<SIDE_BITS, 32>(self.acc.val() ^ self.cr_first.val()) << 120)
                | (bit_cast::<SIDE_BITS, 1>(self.d2_ecn.q.val().into()) << 152)
                | (bit_cast::<SIDE_BITS, 1>(self.d2_msg.q.val().into()) << 153);
        }
        self.out_v.next = self.d2_v.q.val();
        self.out_idx.next = self.d2_idx.q.val();

        if self.rst.val() {
            self.d1_v.d.next = false;
            self.d2_v.d.next = false;
        }
    }
}
