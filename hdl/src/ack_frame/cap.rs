//! The capture of [`AckFrame`](super::AckFrame) ([`AckFrameCap`]): the
//! input chosen and one datagram stored with its addressing and the
//! plain sum of its words.

use rust_hdl::prelude::*;

use super::links::{BodyOut, GramOut, SumOut};
use super::{CAP_BEATS_MAX, CAP_BITS, CAP_BYTES};
use crate::bus::{AckIn, DatagramIn};
use crate::helpers::{byte_mask, konst, native_block};

native_block! {
    /// Takes the ACK generator's datagram, or (when it has none to start)
    /// the firmware's, a beat at a time into a 128-byte register (beat `k`
    /// at bytes `k·B..`; bytes past [`CAP_BYTES`] dropped), with the
    /// plain sum of the beat's 16-bit words added to the datagram's (the
    /// IPv6 UDP checksum's payload part); the choice is held from the
    /// datagram's first beat to its last. Takes nothing more until the
    /// frame loads (`m_body.clear`).
    AckFrameCap[W, B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: drops the stored datagram."]
        rst: Signal<In, Bit>,
        #[doc = "ACK datagrams (addressing and ECE sampled with the first beat)."]
        s_ack: AckIn<W, B>,
        #[doc = "Firmware datagrams."]
        s_fw: DatagramIn<W, B>,
        #[doc = "The datagram's length and addressing."]
        m_gram: GramOut,
        #[doc = "What the checksums need besides."]
        m_sum: SumOut,
        #[doc = "The datagram's bytes and marks; the frame's load."]
        m_body: BodyOut,
    }
    state {
        // The datagram (beat k at bytes k·B), bytes and beats so far, a
        // whole datagram waits, its addressing and source, the plain sum
        // of its 16-bit words.
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
        octet: Signal<Local, Bits<8>>,
    }
    consts {
        k_beat_sh: [Constant<Bits<16>>; CAP_BEATS_MAX] = std::array::from_fn(|i| konst(8 * B * i)),
        k_beat_mask: [Constant<Bits<CAP_BITS>>; CAP_BEATS_MAX] = std::array::from_fn(|i| byte_mask(B * i, B * (i + 1))),
    }
}

impl<const W: usize, const B: usize> AckFrameCap<W, B> {
    /// 16-bit words in a beat.
    const WORDS: usize = B / 2;
    /// Beats of a full capture.
    const CAP_BEATS: usize = CAP_BYTES / B;
}

impl<const W: usize, const B: usize> Logic for AckFrameCap<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, cap, cap_n, cap_b, cap_full, cap_dip, cap_sport, cap_dport, cap_ece,
            cap_fw, cap_sum
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
        // Both only for a beat taken (0 otherwise: read only then).
        self.in_n.next = 0.into();
        self.in_sum.next = 0.into();
        self.word.next = 0.into();
        self.octet.next = 0.into();
        if self.take.val() {
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
        // The frame loads: the capture is free again.
        if self.m_body.clear.val() | self.rst.val() {
            self.cap_full.d.next = false;
            self.cap_n.d.next = 0.into();
            self.cap_b.d.next = 0.into();
        }

        self.m_gram.n.next = self.cap_n.q.val();
        self.m_gram.dip.next = self.cap_dip.q.val();
        self.m_gram.sport.next = self.cap_sport.q.val();
        self.m_gram.dport.next = self.cap_dport.q.val();
        self.m_sum.full.next = self.cap_full.q.val();
        self.m_sum.sum.next = self.cap_sum.q.val();
        self.m_body.data.next = self.cap.q.val();
        self.m_body.ece.next = self.cap_ece.q.val();
        self.m_body.fw.next = self.cap_fw.q.val();
    }
}
