//! ACK framer: the receive core's ACK datagrams (`m_ack_*`: UDP payload,
//! destination IP, UDP ports) become Ethernet II + IPv4 + UDP or Ethernet
//! II + IPv6 + UDP frames for the MAC.
//!
//! [`AckFrame`] stores one datagram (up to [`CAP_BYTES`]; the ACK
//! generator sends 100) with its addressing, then sends the header and the
//! datagram, one beat per cycle. The header is laid out as
//! [`crate::TxBuild`]'s: Ethernet II + IPv4 + UDP (42 bytes: version/IHL
//! 0x45, ID 0, DF, protocol 17, header checksum computed, UDP checksum 0,
//! which the wire spec allows on IPv4) when the destination is an
//! IPv4-mapped address, else Ethernet II + IPv6 + UDP (62 bytes:
//! EtherType 0x86DD, flow label 0, next header 17, hop limit = the TTL
//! register) with the UDP checksum computed, as the wire spec (§2.5)
//! requires on IPv6 (RFC 8200 §8.1: pseudo-header, UDP header and
//! payload; 0xFFFF where it comes out as 0). The addresses, TTL and DSCP
//! are the TX builder's registers (`reg_*`, the local IPv6 address
//! included), so the top has one configuration map; the IP ECN field is
//! ECT(0), as the engine sends its ACKs. While one frame leaves, the next
//! datagram is captured, so ACK frames follow each other without an idle
//! cycle.
//!
//! A second input, `s_fw_*`, takes the datagrams the firmware builds
//! whole (NACK, DISCONNECT) and frames them the same way: the framer
//! captures one datagram at a time, from the ACK generator when it has one
//! to start, else from the firmware, and holds that choice from the
//! datagram's first beat to its last.
//!
//! Every datagram is framed (no address is refused). Counters for the
//! firmware: `cnt_frames` (frames sent), `cnt_ece` (of which carried ECE),
//! `cnt_v6` (of which IPv6) and `cnt_fw` (of which the firmware's).
//!
//! # Pipeline
//! * **Capture.** A beat at a time into a 128-byte register (beat `k` at
//!   bytes `k·B..`), with the plain sum of the beat's 16-bit words added to
//!   the datagram's (the IPv6 UDP checksum's payload part).
//! * **Checksums**, two stages once the datagram is whole: C1 the partial
//!   sums (the IPv4 header's register words, its captured words; the IPv6
//!   pseudo-header's source words, destination words, and the payload sum
//!   with ports and lengths), C2 their sum folded twice (end-around carry)
//!   and complemented, into registers.
//! * **Load.** After C2, when no frame leaves or the last beat of one
//!   leaves now, the header (lane order) and the datagram go into the
//!   output register, which then shifts down one beat per cycle.
//!
//! With the output idle, a frame's first beat is therefore shown 4 cycles
//! after the cycle that takes the datagram's last beat (2 when the
//! checksums were summed where the frame loads, before issue #16); a frame
//! waiting for the previous one to leave starts right after it, as before. The checksums take the `reg_*` values of C1,
//! the frame those of its load: the registers are configuration, written
//! before traffic.
//!
//! Native rust-hdl; rust-hdl's own simulator runs the block (the test
//! below, whose frames `etherparse` checks); it is verified under
//! Verilator inside [`crate::NicCore`] (`core_check`, IPv4 and IPv6 runs).

use rust_hdl::prelude::*;

use crate::bus::{AckIn, AxisOut, DatagramIn};
use crate::helpers::{byte_mask, konst, native_block};

/// Largest datagram the framer stores.
pub const CAP_BYTES: usize = 128;

/// Bits of the output register: the IPv6 header (62 bytes) and the largest
/// datagram, in whole beats of 8 to 64 bytes.
const OUT_BITS: usize = 8 * 192;
/// Bits of the capture register.
const CAP_BITS: usize = 8 * CAP_BYTES;
/// Beats of a full capture at the narrowest width (8 bytes).
const CAP_BEATS_MAX: usize = CAP_BYTES / 8;

native_block! {
    /// The ACK framer at `W`-bit beats (`B = W / 8` lanes, 8 to 64).
    AckFrame[W, B]
    check {
        W == 8 * B && B.is_power_of_two() && (8..=64).contains(&B),
        "AckFrame<{W}, {B}>: B must be 8, 16, 32 or 64 and W = 8 * B"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: drops the stored datagram and the frame in flight, clears the counters."]
        rst: Signal<In, Bit>,
        #[doc = "ACK datagrams (addressing and ECE sampled with the first beat; the destination IP selects the frame's IP version)."]
        s_ack: AckIn<W, B>,
        #[doc = "Local MAC (Ethernet source)."]
        reg_local_mac: Signal<In, Bits<48>>,
        #[doc = "Next-hop MAC (Ethernet destination)."]
        reg_peer_mac: Signal<In, Bits<48>>,
        #[doc = "Local IPv4 address (IP source)."]
        reg_local_ip: Signal<In, Bits<32>>,
        #[doc = "Local IPv6 address (IPv6 source)."]
        reg_local_ip6: Signal<In, Bits<128>>,
        #[doc = "IPv4 TTL / IPv6 hop limit."]
        reg_ttl: Signal<In, Bits<8>>,
        #[doc = "DSCP (IPv4 TOS / IPv6 traffic class bits 7..2)."]
        reg_dscp: Signal<In, Bits<6>>,
        #[doc = "Frames (packed `tkeep`)."]
        m_axis: AxisOut<W, B>,
        #[doc = "ACK frames sent (IPv4 and IPv6)."]
        cnt_frames: Signal<Out, Bits<32>>,
        #[doc = "ACK frames sent whose ACK carried ECE."]
        cnt_ece: Signal<Out, Bits<32>>,
        #[doc = "ACK frames sent as IPv6 (destination not IPv4-mapped)."]
        cnt_v6: Signal<Out, Bits<32>>,
        #[doc = "Firmware datagrams (up to [`CAP_BYTES`] each)."]
        s_fw: DatagramIn<W, B>,
        #[doc = "Frames sent of datagrams from the firmware."]
        cnt_fw: Signal<Out, Bits<32>>,
    }
    state {
        // Capture: the datagram (beat k at bytes k·B), bytes and beats so
        // far, a whole datagram waits, its addressing and source, the
        // plain sum of its 16-bit words.
        cap: DFF<Bits<CAP_BITS>>,
        cap_n: DFF<Bits<8>>,
        cap_b: DFF<Bits<8>>,
        cap_full: DFF<Bit>,
        cap_dip: DFF<Bits<128>>,
        cap_sport: DFF<Bits<16>>,
        cap_dport: DFF<Bits<16>>,
        cap_ece: DFF<Bit>,
        cap_fw: DFF<Bit>,
        cap_sum: DFF<Bits<24>>,
        // Checksum stages of the whole datagram (0: C1 next, 1: C2 next,
        // 2: done) and their registers.
        ck_st: DFF<Bits<2>>,
        a4_reg: DFF<Bits<20>>,
        a4_cap: DFF<Bits<20>>,
        a6_src: DFF<Bits<20>>,
        a6_dst: DFF<Bits<20>>,
        a6_rest: DFF<Bits<26>>,
        ck4: DFF<Bits<16>>,
        ck6: DFF<Bits<16>>,
        // Output: the frame being sent, shifted down a beat at a time;
        // frame bytes not yet sent.
        o_buf: DFF<Bits<OUT_BITS>>,
        o_left: DFF<Bits<9>>,
        o_active: DFF<Bit>,
        n_frames: DFF<Bits<32>>,
        n_ece: DFF<Bits<32>>,
        n_v6: DFF<Bits<32>>,
        n_fw: DFF<Bits<32>>,
        // Temporaries.
        use_fw: Signal<Local, Bit>,
        i_tdata: Signal<Local, Bits<W>>,
        i_tkeep: Signal<Local, Bits<B>>,
        i_tvalid: Signal<Local, Bit>,
        i_tlast: Signal<Local, Bit>,
        take: Signal<Local, Bit>,
        in_n: Signal<Local, Bits<8>>,
        in_sum: Signal<Local, Bits<24>>,
        word: Signal<Local, Bits<16>>,
        v4: Signal<Local, Bit>,
        ulen: Signal<Local, Bits<16>>,
        sum_src: Signal<Local, Bits<20>>,
        sum_dst: Signal<Local, Bits<20>>,
        s32: Signal<Local, Bits<32>>,
        f17: Signal<Local, Bits<17>>,
        f16: Signal<Local, Bits<16>>,
        tos: Signal<Local, Bits<8>>,
        h4: Signal<Local, Bits<336>>,
        h6: Signal<Local, Bits<496>>,
        lanes: Signal<Local, Bits<OUT_BITS>>,
        octet: Signal<Local, Bits<8>>,
        o_done: Signal<Local, Bit>,
        load: Signal<Local, Bit>,
    }
    consts {
        k_b: Constant<Bits<9>> = konst(B),
        k_w: Constant<Bits<16>> = konst(W),
        k_beat_sh: [Constant<Bits<16>>; CAP_BEATS_MAX] = std::array::from_fn(|i| konst(8 * B * i)),
        k_beat_mask: [Constant<Bits<CAP_BITS>>; CAP_BEATS_MAX] = std::array::from_fn(|i| byte_mask(B * i, B * (i + 1))),
        // The IPv4-mapped prefix (address bits 127..32).
        k_mapped: Constant<Bits<96>> = konst(0xFFFF),
        // IPv4 header words that are constants: 0x4500 | TOS (ECT(0), the
        // DSCP added), 28 of the total length, DF, protocol 17.
        k_ip4_fix: Constant<Bits<20>> = konst(0x4502 + 28 + 0x4000 + 17),
        // Fixed header fields, network order: IPv4 (EtherType, version/IHL,
        // DF, protocol), IPv6 (EtherType, version, next header).
        k_fix4: Constant<Bits<336>> = Constant::new(
            (0x0800u64.to_bits::<336>() << 224)
                | (0x45u64.to_bits::<336>() << 216)
                | (0x4000u64.to_bits::<336>() << 160)
                | (17u64.to_bits::<336>() << 144)
        ),
        k_fix6: Constant<Bits<496>> = Constant::new(
            (0x86DDu64.to_bits::<496>() << 384)
                | (6u64.to_bits::<496>() << 380)
                | (17u64.to_bits::<496>() << 328)
        ),
    }
}

impl<const W: usize, const B: usize> AckFrame<W, B> {
    /// 16-bit words in a beat.
    const WORDS: usize = B / 2;
    /// Beats of a full capture.
    const CAP_BEATS: usize = CAP_BYTES / B;
}

impl<const W: usize, const B: usize> Logic for AckFrame<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, cap, cap_n, cap_b, cap_full, cap_dip, cap_sport, cap_dport, cap_ece,
            cap_fw, cap_sum, ck_st, a4_reg, a4_cap, a6_src, a6_dst, a6_rest, ck4, ck6, o_buf,
            o_left, o_active, n_frames, n_ece, n_v6, n_fw
        );

        // ---- input: the ACK generator's datagram, or (when it has none
        // to start) the firmware's; held from its first beat to its last ----
        if self.cap_n.q.val() != 0 {
            self.use_fw.next = self.cap_fw.q.val();
        } else {
            self.use_fw.next = !self.s_ack.tvalid.val() & self.s_fw.tvalid.val();
        }
        if self.use_fw.val() {
            self.i_tdata.next = self.s_fw.tdata.val();
            self.i_tkeep.next = self.s_fw.tkeep.val();
            self.i_tvalid.next = self.s_fw.tvalid.val();
            self.i_tlast.next = self.s_fw.tlast.val();
        } else {
            self.i_tdata.next = self.s_ack.tdata.val();
            self.i_tkeep.next = self.s_ack.tkeep.val();
            self.i_tvalid.next = self.s_ack.tvalid.val();
            self.i_tlast.next = self.s_ack.tlast.val();
        }
        self.s_ack.tready.next = !self.cap_full.q.val() & !self.use_fw.val();
        self.s_fw.tready.next = !self.cap_full.q.val() & self.use_fw.val();
        self.take.next = self.i_tvalid.val() & !self.cap_full.q.val();
        // Bytes in the beat (packed keep); the plain sum of its 16-bit
        // words, lane 2k the high byte (every beat but the last is whole
        // and B is even, so each beat starts at an even datagram offset).
        self.in_n.next = 0.into();
        self.in_sum.next = 0.into();
        for i in 0..B {
            if self.i_tkeep.val().get_bit(i) {
                self.in_n.next = (i + 1).to_bits::<8>();
            }
        }
        for i in 0..Self::WORDS {
            self.word.next = 0.into();
            self.octet.next = self.i_tdata.val().get_bits::<8>(16 * i);
            if self.i_tkeep.val().get_bit(2 * i) {
                self.word.next = bit_cast::<16, 8>(self.octet.val()) << 8;
            }
            self.octet.next = self.i_tdata.val().get_bits::<8>(16 * i + 8);
            if self.i_tkeep.val().get_bit(2 * i + 1) {
                self.word.next = self.word.val() | bit_cast::<16, 8>(self.octet.val());
            }
            self.in_sum.next = self.in_sum.val() + bit_cast::<24, 16>(self.word.val());
        }
        if self.take.val() {
            // Bytes past CAP_BYTES are dropped (the ACK generator sends 100).
            for i in 0..Self::CAP_BEATS {
                if self.cap_b.q.val() == i.to_bits::<8>() {
                    self.cap.d.next = (self.cap.q.val() & !self.k_beat_mask[i].val())
                        | (bit_cast::<CAP_BITS, W>(self.i_tdata.val()) << self.k_beat_sh[i].val());
                }
            }
            self.cap_n.d.next = self.cap_n.q.val() + self.in_n.val();
            self.cap_b.d.next = self.cap_b.q.val() + 1;
            if self.cap_n.q.val() == 0 {
                self.cap_fw.d.next = self.use_fw.val();
                self.cap_sum.d.next = self.in_sum.val();
                if self.use_fw.val() {
                    self.cap_dip.d.next = self.s_fw.dst_ip.val();
                    self.cap_sport.d.next = self.s_fw.src_port.val();
                    self.cap_dport.d.next = self.s_fw.dst_port.val();
                    self.cap_ece.d.next = false;
                } else {
                    self.cap_dip.d.next = self.s_ack.dst_ip.val();
                    self.cap_sport.d.next = self.s_ack.src_port.val();
                    self.cap_dport.d.next = self.s_ack.dst_port.val();
                    self.cap_ece.d.next = self.s_ack.ece.val();
                }
            } else {
                self.cap_sum.d.next = self.cap_sum.q.val() + self.in_sum.val();
            }
            if self.i_tlast.val() {
                self.cap_full.d.next = true;
            }
        }

        // ---- checksums of the whole datagram: C1 partial sums, C2 the
        // sum folded and complemented ----
        self.ulen.next = bit_cast::<16, 8>(self.cap_n.q.val()) + 8;
        self.sum_src.next = 0.into();
        self.sum_dst.next = 0.into();
        self.s32.next = 0.into();
        self.f17.next = 0.into();
        self.f16.next = 0.into();
        if self.cap_full.q.val() & (self.ck_st.q.val() == 0) {
            self.ck_st.d.next = 1.into();
            self.a4_reg.d.next = self.k_ip4_fix.val()
                + bit_cast::<20, 8>(bit_cast::<8, 6>(self.reg_dscp.val()) << 2)
                + (bit_cast::<20, 8>(self.reg_ttl.val()) << 8)
                + bit_cast::<20, 16>(self.reg_local_ip.val().get_bits::<16>(16))
                + bit_cast::<20, 16>(self.reg_local_ip.val().get_bits::<16>(0));
            self.a4_cap.d.next = bit_cast::<20, 8>(self.cap_n.q.val())
                + bit_cast::<20, 16>(self.cap_dip.q.val().get_bits::<16>(16))
                + bit_cast::<20, 16>(self.cap_dip.q.val().get_bits::<16>(0));
            for i in 0..8 {
                self.word.next = self.reg_local_ip6.val().get_bits::<16>(16 * i);
                self.sum_src.next = self.sum_src.val() + bit_cast::<20, 16>(self.word.val());
                self.word.next = self.cap_dip.q.val().get_bits::<16>(16 * i);
                self.sum_dst.next = self.sum_dst.val() + bit_cast::<20, 16>(self.word.val());
            }
            self.a6_src.d.next = self.sum_src.val();
            self.a6_dst.d.next = self.sum_dst.val();
            self.a6_rest.d.next = bit_cast::<26, 24>(self.cap_sum.q.val())
                + bit_cast::<26, 16>(self.cap_sport.q.val())
                + bit_cast::<26, 16>(self.cap_dport.q.val())
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

        // ---- output: the frame, a beat a cycle ----
        self.o_done.next = self.o_active.q.val()
            & self.m_axis.tready.val()
            & (self.o_left.q.val() <= self.k_b.val());
        self.load.next = (self.ck_st.q.val() == 2) & (!self.o_active.q.val() | self.o_done.val());
        self.m_axis.tvalid.next = self.o_active.q.val();
        self.m_axis.tdata.next = self.o_buf.q.val().get_bits::<W>(0);
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
        self.v4.next = self.cap_dip.q.val().get_bits::<96>(32) == self.k_mapped.val();
        self.tos.next = (bit_cast::<8, 6>(self.reg_dscp.val()) << 2) | 2;
        self.h4.next = 0.into();
        self.h6.next = 0.into();
        self.lanes.next = 0.into();
        self.octet.next = 0.into();
        if self.load.val() {
            self.cap_full.d.next = false;
            self.cap_n.d.next = 0.into();
            self.cap_b.d.next = 0.into();
            self.ck_st.d.next = 0.into();
            self.o_active.d.next = true;
            if self.v4.val() {
                self.h4.next = (bit_cast::<336, 48>(self.reg_peer_mac.val()) << 288)
                    | (bit_cast::<336, 48>(self.reg_local_mac.val()) << 240)
                    | self.k_fix4.val()
                    | (bit_cast::<336, 8>(self.tos.val()) << 208)
                    | (bit_cast::<336, 16>(self.ulen.val() + 20) << 192)
                    | (bit_cast::<336, 8>(self.reg_ttl.val()) << 152)
                    | (bit_cast::<336, 16>(self.ck4.q.val()) << 128)
                    | (bit_cast::<336, 32>(self.reg_local_ip.val()) << 96)
                    | (bit_cast::<336, 32>(self.cap_dip.q.val().get_bits::<32>(0)) << 64)
                    | (bit_cast::<336, 16>(self.cap_sport.q.val()) << 48)
                    | (bit_cast::<336, 16>(self.cap_dport.q.val()) << 32)
                    | (bit_cast::<336, 16>(self.ulen.val()) << 16);
                for j in 0..42 {
                    self.octet.next = self.h4.val().get_bits::<8>(328 - 8 * j);
                    self.lanes.next = self.lanes.val()
                        | (bit_cast::<OUT_BITS, 8>(self.octet.val()) << (8 * j).to_bits::<16>());
                }
                self.o_buf.d.next =
                    self.lanes.val() | (bit_cast::<OUT_BITS, CAP_BITS>(self.cap.q.val()) << 336);
                self.o_left.d.next = bit_cast::<9, 8>(self.cap_n.q.val()) + 42;
            } else {
                self.h6.next = (bit_cast::<496, 48>(self.reg_peer_mac.val()) << 448)
                    | (bit_cast::<496, 48>(self.reg_local_mac.val()) << 400)
                    | self.k_fix6.val()
                    | (bit_cast::<496, 8>(self.tos.val()) << 372)
                    | (bit_cast::<496, 16>(self.ulen.val()) << 336)
                    | (bit_cast::<496, 8>(self.reg_ttl.val()) << 320)
                    | (bit_cast::<496, 128>(self.reg_local_ip6.val()) << 192)
                    | (bit_cast::<496, 128>(self.cap_dip.q.val()) << 64)
                    | (bit_cast::<496, 16>(self.cap_sport.q.val()) << 48)
                    | (bit_cast::<496, 16>(self.cap_dport.q.val()) << 32)
                    | (bit_cast::<496, 16>(self.ulen.val()) << 16)
                    | bit_cast::<496, 16>(self.ck6.q.val());
                for j in 0..62 {
                    self.octet.next = self.h6.val().get_bits::<8>(488 - 8 * j);
                    self.lanes.next = self.lanes.val()
                        | (bit_cast::<OUT_BITS, 8>(self.octet.val()) << (8 * j).to_bits::<16>());
                }
                self.o_buf.d.next =
                    self.lanes.val() | (bit_cast::<OUT_BITS, CAP_BITS>(self.cap.q.val()) << 496);
                self.o_left.d.next = bit_cast::<9, 8>(self.cap_n.q.val()) + 62;
                self.n_v6.d.next = self.n_v6.q.val() + 1;
            }
            self.n_frames.d.next = self.n_frames.q.val() + 1;
            if self.cap_fw.q.val() {
                self.n_fw.d.next = self.n_fw.q.val() + 1;
            }
            if self.cap_ece.q.val() {
                self.n_ece.d.next = self.n_ece.q.val() + 1;
            }
        }
        self.cnt_frames.next = self.n_frames.q.val();
        self.cnt_ece.next = self.n_ece.q.val();
        self.cnt_v6.next = self.n_v6.q.val();
        self.cnt_fw.next = self.n_fw.q.val();

        if self.rst.val() {
            self.cap_n.d.next = 0.into();
            self.cap_b.d.next = 0.into();
            self.cap_full.d.next = false;
            self.ck_st.d.next = 0.into();
            self.o_active.d.next = false;
            self.n_frames.d.next = 0.into();
            self.n_fw.d.next = 0.into();
            self.n_ece.d.next = 0.into();
            self.n_v6.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{LinkSlice, NetSlice, SlicedPacket, TransportSlice};
    use std::sync::{Arc, Mutex};

    const LOCAL_MAC: u64 = 0x02_00_00_00_00_01;
    const PEER_MAC: u64 = 0x02_00_00_00_00_02;
    const LOCAL_IP: u64 = 0x0a00_0001;
    const LOCAL_IP6: u128 = 0xfd00_0000_0000_0000_0000_0000_0000_0001;

    /// One datagram offered: from the firmware port, its bytes, its
    /// destination (IPv6 or IPv4-mapped), ports, ECE.
    #[derive(Clone)]
    struct Gram {
        fw: bool,
        bytes: Vec<u8>,
        dst: u128,
        ports: (u16, u16),
        ece: bool,
    }

    /// The frames the block sent and its counters (frames, ECE, IPv6, firmware).
    #[derive(Debug, Default)]
    struct Run {
        frames: Vec<Vec<u8>>,
        counters: [u64; 4],
    }

    /// Offers `grams` through rust-hdl's simulator of the 64-bit block,
    /// the ACK generator's and the firmware's each in order on its own
    /// port at once; the MAC takes two beats of three.
    fn simulate(grams: Vec<Gram>) -> Run {
        let run = Arc::new(Mutex::new(Run::default()));
        let result = run.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<AckFrame<64, 8>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<AckFrame<64, 8>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            x.reg_local_mac.next = LOCAL_MAC.to_bits();
            x.reg_peer_mac.next = PEER_MAC.to_bits();
            x.reg_local_ip.next = LOCAL_IP.to_bits();
            x.reg_local_ip6.next = LOCAL_IP6.to_bits();
            x.reg_ttl.next = 64u64.to_bits();
            x.reg_dscp.next = 46u64.to_bits();
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            let queues: [Vec<&Gram>; 2] = [
                grams.iter().filter(|g| !g.fw).collect(),
                grams.iter().filter(|g| g.fw).collect(),
            ];
            let mut at = [(0usize, 0usize); 2];
            let mut open = Vec::new();
            let mut cycle = 0;
            while cycle < 3000 && run.lock().unwrap().frames.len() < grams.len() {
                cycle += 1;
                // Mid-cycle: the outputs show this cycle's handshake.
                let ready = cycle % 3 != 0;
                if x.m_axis.tvalid.val() && ready {
                    let n = x.m_axis.tkeep.val().to_u64().count_ones() as usize;
                    open.extend_from_slice(&x.m_axis.tdata.val().to_u64().to_le_bytes()[..n]);
                    if x.m_axis.tlast.val() {
                        run.lock().unwrap().frames.push(std::mem::take(&mut open));
                    }
                }
                x.m_axis.tready.next = ready;
                // A beat taken in the previous cycle moves its port on.
                for (p, taken) in [x.s_ack.tready.val(), x.s_fw.tready.val()]
                    .into_iter()
                    .enumerate()
                {
                    let offered = [x.s_ack.tvalid.val(), x.s_fw.tvalid.val()][p];
                    let (g, off) = &mut at[p];
                    if offered && taken {
                        *off += 8;
                        if *off >= queues[p][*g].bytes.len() {
                            *g += 1;
                            *off = 0;
                        }
                    }
                }
                for (p, q) in queues.iter().enumerate() {
                    let (g, off) = at[p];
                    let Some(d) = q.get(g) else {
                        if p == 0 {
                            x.s_ack.tvalid.next = false;
                        } else {
                            x.s_fw.tvalid.next = false;
                        }
                        continue;
                    };
                    let n = (d.bytes.len() - off).min(8);
                    let mut beat = [0u8; 8];
                    beat[..n].copy_from_slice(&d.bytes[off..off + n]);
                    let (data, keep) = (
                        u64::from_le_bytes(beat).to_bits(),
                        ((1u64 << n) - 1).to_bits(),
                    );
                    let last = off + n == d.bytes.len();
                    if p == 0 {
                        x.s_ack.tdata.next = data;
                        x.s_ack.tkeep.next = keep;
                        x.s_ack.tvalid.next = true;
                        x.s_ack.tlast.next = last;
                        x.s_ack.dst_ip.next = d.dst.to_bits();
                        x.s_ack.src_port.next = (d.ports.0 as u64).to_bits();
                        x.s_ack.dst_port.next = (d.ports.1 as u64).to_bits();
                        x.s_ack.ece.next = d.ece;
                    } else {
                        x.s_fw.tdata.next = data;
                        x.s_fw.tkeep.next = keep;
                        x.s_fw.tvalid.next = true;
                        x.s_fw.tlast.next = last;
                        x.s_fw.dst_ip.next = d.dst.to_bits();
                        x.s_fw.src_port.next = (d.ports.0 as u64).to_bits();
                        x.s_fw.dst_port.next = (d.ports.1 as u64).to_bits();
                    }
                }
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            run.lock().unwrap().counters = [
                x.cnt_frames.val().to_u64(),
                x.cnt_ece.val().to_u64(),
                x.cnt_v6.val().to_u64(),
                x.cnt_fw.val().to_u64(),
            ];
            sim.done(x)
        });
        let mut uut = AckFrame::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 200_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    /// Checks `frame` as `etherparse` reads it against `g`: addresses,
    /// ECT(0) and DSCP, TTL, ports, payload, and the IPv4 header checksum
    /// or the IPv6 UDP checksum recomputed.
    fn check(frame: &[u8], g: &Gram) {
        let p = SlicedPacket::from_ethernet(frame).expect("frame parses");
        let Some(LinkSlice::Ethernet2(eth)) = &p.link else {
            panic!("not Ethernet II")
        };
        assert_eq!(eth.destination()[..], PEER_MAC.to_be_bytes()[2..]);
        assert_eq!(eth.source()[..], LOCAL_MAC.to_be_bytes()[2..]);
        let Some(TransportSlice::Udp(udp)) = p.transport else {
            panic!("not UDP")
        };
        assert_eq!((udp.source_port(), udp.destination_port()), g.ports);
        assert_eq!(udp.payload(), &g.bytes[..]);
        match p.net.expect("IP") {
            NetSlice::Ipv4(v4) => {
                let h = v4.header().to_header();
                assert_eq!(g.dst >> 32, 0xFFFF, "IPv4 frame for an IPv6 peer");
                assert_eq!(h.source, (LOCAL_IP as u32).to_be_bytes());
                assert_eq!(h.destination, (g.dst as u32).to_be_bytes());
                assert_eq!((h.dscp.value(), h.ecn.value(), h.time_to_live), (46, 2, 64));
                assert_eq!(h.header_checksum, h.calc_header_checksum());
                assert_eq!(udp.checksum(), 0);
            }
            NetSlice::Ipv6(v6) => {
                let h = v6.header().to_header();
                assert_eq!(h.source, LOCAL_IP6.to_be_bytes());
                assert_eq!(h.destination, g.dst.to_be_bytes());
                assert_eq!((h.traffic_class, h.hop_limit), (46 << 2 | 2, 64));
                let want = udp
                    .to_header()
                    .calc_checksum_ipv6(&h, udp.payload())
                    .unwrap();
                assert_eq!(udp.checksum(), want);
            }
            _ => panic!("not IP"),
        }
    }

    #[test]
    fn rust_hdl_model_frames_ipv4_and_ipv6_datagrams_from_both_ports() {
        let v4 = 0xFFFF_0A00_0002_u128;
        let v6 = 0xfd00_0000_0000_0000_0000_0000_0000_0002u128;
        let bytes =
            |n: usize, s: usize| -> Vec<u8> { (0..n).map(|j| (j * 13 + s) as u8).collect() };
        let grams = vec![
            Gram {
                fw: false,
                bytes: bytes(100, 1),
                dst: v4,
                ports: (49152, 4791),
                ece: true,
            },
            Gram {
                fw: true,
                bytes: bytes(37, 2),
                dst: v6,
                ports: (49153, 4792),
                ece: false,
            },
            Gram {
                fw: false,
                bytes: bytes(100, 3),
                dst: v6,
                ports: (49154, 4791),
                ece: false,
            },
            Gram {
                fw: false,
                bytes: bytes(128, 4),
                dst: v6,
                ports: (65535, 65535),
                ece: true,
            },
            Gram {
                fw: true,
                bytes: bytes(20, 5),
                dst: v4,
                ports: (49155, 4793),
                ece: false,
            },
        ];
        let run = simulate(grams.clone());
        assert_eq!(run.frames.len(), grams.len());
        // The ACK generator's first datagram goes first (both ports offer
        // one at the start); every datagram comes out once.
        check(&run.frames[0], &grams[0]);
        let mut seen = vec![false; grams.len()];
        for f in &run.frames {
            let i = grams
                .iter()
                .position(|g| {
                    f.ends_with(&g.bytes)
                        && f.len() == g.bytes.len() + if g.dst >> 32 == 0xFFFF { 42 } else { 62 }
                })
                .expect("a frame of an offered datagram");
            check(f, &grams[i]);
            seen[i] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(run.counters, [5, 2, 3, 2]);
    }
}
