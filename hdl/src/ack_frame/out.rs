//! The output of [`AckFrame`](super::AckFrame) ([`AckFrameOut`]): the
//! frame built at its load, then sent a beat a cycle; the counters.
//!
//! The output register holds the datagram at byte 62 whatever the
//! destination: the IPv6 header (62 bytes) before it from byte 0, or the
//! IPv4 header (42 bytes) from byte 20, where the output then reads each
//! beat. So each bit of the register chooses between two values only (its
//! load and its neighbour one beat up), not among a datagram byte of
//! either family and the shift.

use rust_hdl::prelude::*;

use super::links::{BodyIn, CksIn, GramIn};
use super::{CAP_BITS, OUT_BITS};
use crate::bus::AxisOut;
use crate::helpers::{SWAPS_512, konst, low_halves, native_block};

/// Bits of the headers before their byte reversal: 62 bytes (IPv4's 42,
/// then zeros) and 2 zero bytes.
const REV_BITS: usize = 512;
/// Where an IPv4 frame starts in the output register: the 20 bytes the
/// IPv6 header is longer by.
const V4_AT: usize = 8 * 20;

native_block! {
    /// When the checksums are ready and no frame leaves or the last beat
    /// of one leaves now, loads the header (lane order) and the datagram
    /// into the output register (`clear` to the capture and the
    /// checksums), which then shifts down one beat per cycle.
    AckFrameOut[W, B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: drops the frame in flight, clears the counters."]
        rst: Signal<In, Bit>,
        #[doc = "The datagram's length and addressing."]
        s_gram: GramIn,
        #[doc = "The datagram's bytes and marks; the load."]
        s_body: BodyIn,
        #[doc = "Its checksums; the load."]
        s_cks: CksIn,
        #[doc = "The configured local MAC."]
        reg_local_mac: Signal<In, Bits<48>>,
        #[doc = "The configured next-hop MAC."]
        reg_peer_mac: Signal<In, Bits<48>>,
        #[doc = "The configured local IPv4 address."]
        reg_local_ip: Signal<In, Bits<32>>,
        #[doc = "The configured local IPv6 address."]
        reg_local_ip6: Signal<In, Bits<128>>,
        #[doc = "The configured TTL / hop limit."]
        reg_ttl: Signal<In, Bits<8>>,
        #[doc = "The configured DSCP."]
        reg_dscp: Signal<In, Bits<6>>,
        #[doc = "Frames (packed `tkeep`)."]
        m_axis: AxisOut<W, B>,
        #[doc = "Frames sent."]
        cnt_frames: Signal<Out, Bits<32>>,
        #[doc = "Frames sent whose ACK carried ECE."]
        cnt_ece: Signal<Out, Bits<32>>,
        #[doc = "Frames sent as IPv6."]
        cnt_v6: Signal<Out, Bits<32>>,
        #[doc = "Frames sent of datagrams from the firmware."]
        cnt_fw: Signal<Out, Bits<32>>,
    }
    state {
        // The frame being sent, shifted down a beat at a time; frame
        // bytes not yet sent.
        o_buf: DFF<Bits<OUT_BITS>>,
        o_left: DFF<Bits<9>>,
        o_active: DFF<Bit>,
        // The frame is IPv4: it starts at byte 20 of the register.
        o_v4: DFF<Bit>,
        n_frames: DFF<Bits<32>>,
        n_ece: DFF<Bits<32>>,
        n_v6: DFF<Bits<32>>,
        n_fw: DFF<Bits<32>>,
        // Temporaries.
        ulen: Signal<Local, Bits<16>>,
        v4: Signal<Local, Bit>,
        tos: Signal<Local, Bits<8>>,
        hdr: Signal<Local, Bits<REV_BITS>>,
        o_done: Signal<Local, Bit>,
        load: Signal<Local, Bit>,
    }
    consts {
        k_b: Constant<Bits<9>> = konst(B),
        k_w: Constant<Bits<16>> = konst(W),
        k_v4_at: Constant<Bits<16>> = konst(V4_AT),
        // The IPv4-mapped prefix (address bits 127..32).
        k_mapped: Constant<Bits<96>> = konst(0xFFFF),
        // Fixed header fields, network order, left-aligned in 64 bytes:
        // IPv4 (EtherType, version/IHL, DF, protocol), IPv6 (EtherType,
        // version, next header).
        k_fix4: Constant<Bits<REV_BITS>> = Constant::new(
            (0x0800u64.to_bits::<REV_BITS>() << 400)
                | (0x45u64.to_bits::<REV_BITS>() << 392)
                | (0x4000u64.to_bits::<REV_BITS>() << 336)
                | (17u64.to_bits::<REV_BITS>() << 320)
        ),
        k_fix6: Constant<Bits<REV_BITS>> = Constant::new(
            (0x86DDu64.to_bits::<REV_BITS>() << 400)
                | (6u64.to_bits::<REV_BITS>() << 396)
                | (17u64.to_bits::<REV_BITS>() << 344)
        ),
        // The swap steps of the byte reversal: the halves they move, by
        // how much.
        k_lo: [Constant<Bits<REV_BITS>>; 6] = SWAPS_512.map(low_halves),
        k_sh: [Constant<Bits<16>>; 6] = SWAPS_512.map(konst),
    }
}

impl<const W: usize, const B: usize> Logic for AckFrameOut<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, o_buf, o_left, o_active, o_v4, n_frames, n_ece, n_v6, n_fw
        );

        // ---- the frame, a beat a cycle ----
        self.o_done.next = self.o_active.q.val()
            & self.m_axis.tready.val()
            & (self.o_left.q.val() <= self.k_b.val());
        self.load.next = self.s_cks.ready.val() & (!self.o_active.q.val() | self.o_done.val());
        self.s_body.clear.next = self.load.val();
        self.s_cks.clear.next = self.load.val();
        self.m_axis.tvalid.next = self.o_active.q.val();
        self.m_axis.tdata.next = self.o_buf.q.val().get_bits::<W>(0);
        if self.o_v4.q.val() {
            self.m_axis.tdata.next = self.o_buf.q.val().get_bits::<W>(self.k_v4_at.val().index());
        }
        self.m_axis.tlast.next = self.o_left.q.val() <= self.k_b.val();
        self.m_axis.tkeep.next = 0.into();
        for i in 0..B {
            self.m_axis.tkeep.next = self
                .m_axis
                .tkeep
                .val()
                .replace_bit(i, self.o_left.q.val() > i.to_bits::<9>());
        }
        if self.o_active.q.val() & self.m_axis.tready.val() {
            self.o_buf.d.next = self.o_buf.q.val() >> self.k_w.val();
            self.o_left.d.next = self.o_left.q.val() - self.k_b.val();
            if self.o_done.val() {
                self.o_active.d.next = false;
            }
        }
        // The next frame in lane order: IPv4-mapped destination, Ethernet
        // + IPv4 + UDP (42 bytes); any other, Ethernet + IPv6 + UDP with
        // its checksum (62 bytes); then the datagram. Built only when it
        // loads (a simulator builds it once per frame).
        self.ulen.next = bit_cast::<16, 8>(self.s_gram.n.val()) + 8;
        self.v4.next = self.s_gram.dip.val().get_bits::<96>(32) == self.k_mapped.val();
        self.tos.next = (bit_cast::<8, 6>(self.reg_dscp.val()) << 2) | 2;
        self.hdr.next = 0.into();
        if self.load.val() {
            self.o_active.d.next = true;
            // The headers in network order from the top byte (the MACs at
            // the same place for both families), byte-reversed into lane
            // order by six swap steps.
            self.hdr.next = (bit_cast::<REV_BITS, 48>(self.reg_peer_mac.val()) << 464)
                | (bit_cast::<REV_BITS, 48>(self.reg_local_mac.val()) << 416);
            if self.v4.val() {
                self.hdr.next = self.hdr.val()
                    | self.k_fix4.val()
                    | (bit_cast::<REV_BITS, 8>(self.tos.val()) << 384)
                    | (bit_cast::<REV_BITS, 16>(self.ulen.val() + 20) << 368)
                    | (bit_cast::<REV_BITS, 8>(self.reg_ttl.val()) << 328)
                    | (bit_cast::<REV_BITS, 16>(self.s_cks.ck4.val()) << 304)
                    | (bit_cast::<REV_BITS, 32>(self.reg_local_ip.val()) << 272)
                    | (bit_cast::<REV_BITS, 32>(self.s_gram.dip.val().get_bits::<32>(0)) << 240)
                    | (bit_cast::<REV_BITS, 16>(self.s_gram.sport.val()) << 224)
                    | (bit_cast::<REV_BITS, 16>(self.s_gram.dport.val()) << 208)
                    | (bit_cast::<REV_BITS, 16>(self.ulen.val()) << 192);
                // Right before the datagram: from byte 20.
                self.hdr.next = self.hdr.val() >> self.k_v4_at.val();
            } else {
                self.hdr.next = self.hdr.val()
                    | self.k_fix6.val()
                    | (bit_cast::<REV_BITS, 8>(self.tos.val()) << 388)
                    | (bit_cast::<REV_BITS, 16>(self.ulen.val()) << 352)
                    | (bit_cast::<REV_BITS, 8>(self.reg_ttl.val()) << 336)
                    | (bit_cast::<REV_BITS, 128>(self.reg_local_ip6.val()) << 208)
                    | (bit_cast::<REV_BITS, 128>(self.s_gram.dip.val()) << 80)
                    | (bit_cast::<REV_BITS, 16>(self.s_gram.sport.val()) << 64)
                    | (bit_cast::<REV_BITS, 16>(self.s_gram.dport.val()) << 48)
                    | (bit_cast::<REV_BITS, 16>(self.ulen.val()) << 32)
                    | (bit_cast::<REV_BITS, 16>(self.s_cks.ck6.val()) << 16);
            }
            for k in 0..6 {
                self.hdr.next = ((self.hdr.val() & self.k_lo[k].val()) << self.k_sh[k].val())
                    | ((self.hdr.val() >> self.k_sh[k].val()) & self.k_lo[k].val());
            }
            // Then the datagram, from byte 62 (the reversed vector's
            // bytes 62.. are zero).
            self.o_buf.d.next = bit_cast::<OUT_BITS, REV_BITS>(self.hdr.val())
                | (bit_cast::<OUT_BITS, CAP_BITS>(self.s_body.data.val()) << 496);
            self.o_v4.d.next = self.v4.val();
            if self.v4.val() {
                self.o_left.d.next = bit_cast::<9, 8>(self.s_gram.n.val()) + 42;
            } else {
                self.o_left.d.next = bit_cast::<9, 8>(self.s_gram.n.val()) + 62;
                self.n_v6.d.next = self.n_v6.q.val() + 1;
            }
            self.n_frames.d.next = self.n_frames.q.val() + 1;
            if self.s_body.fw.val() {
                self.n_fw.d.next = self.n_fw.q.val() + 1;
            }
            if self.s_body.ece.val() {
                self.n_ece.d.next = self.n_ece.q.val() + 1;
            }
        }
        self.cnt_frames.next = self.n_frames.q.val();
        self.cnt_ece.next = self.n_ece.q.val();
        self.cnt_v6.next = self.n_v6.q.val();
        self.cnt_fw.next = self.n_fw.q.val();

        if self.rst.val() {
            self.o_active.d.next = false;
            self.n_frames.d.next = 0.into();
            self.n_fw.d.next = 0.into();
            self.n_ece.d.next = 0.into();
            self.n_v6.d.next = 0.into();
        }
    }
}
