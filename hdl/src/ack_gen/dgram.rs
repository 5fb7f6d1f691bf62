//! The ACK generator's datagram register: in the cycle `load` is high it
//! takes one pending-ACK entry and its QP's fields laid out as the ACK
//! datagram (base header and ACK extension) with its ICRC, in lane order
//! (datagram byte `i` in lane `i`, then the ICRC big-endian in lanes
//! 96..99), which [`super::AckGen`] streams out.
//!
//! Built for Verilator: the layout and the ICRC are computed only inside
//! the branch that loads the register (a simulator skips it in every other
//! cycle), the fields are placed as big-endian 64-bit words and each word
//! byte-reversed by three swap steps over the whole vector, the SACK (in
//! lane order already) is placed as it is, and the ICRC matrix reads the
//! lanes themselves.

use rust_hdl::prelude::*;

use super::{ACK_LEN, FRAME_BITS};
use crate::helpers::{konst, low_halves, native_block};
use crate::icrc::{Affine, feed, rows};

/// Wire version the ACKs carry (`metaroce_proto::VERSION`).
const ACK_VERSION: usize = 1;
/// Opcode of an ACK (`metaroce_proto::Opcode::Ack`).
const ACK_OPCODE: usize = 0x10;
/// Bits of the datagram before its ICRC.
const DG_BITS: usize = 8 * (ACK_LEN - 4);
/// Bits of the pseudo-header.
const PH_BITS: usize = 320;

/// The ICRC of the ACK as a map of the datagram's lanes (inputs
/// `0..DG_BITS`: bit `i` is bit `i % 8` of datagram byte `i / 8`) and of
/// the pseudo-header (inputs from `DG_BITS`, its byte 0 in the top bits),
/// its value read in lane order (the ICRC big-endian: its top byte in bits
/// 7..0).
fn icrc_map() -> Affine {
    Affine::of(DG_BITS + PH_BITS, |z| {
        let (dg, ph) = z.split_at(DG_BITS / 8);
        let ph: Vec<u8> = ph.iter().rev().copied().collect();
        (!feed(feed(u32::MAX, &ph), dg)).swap_bytes()
    })
}

native_block! {
    /// The ACK datagram and its ICRC, registered: one XOR matrix of
    /// constant rows over the datagram's lanes and the pseudo-header (a
    /// reduction XOR per output bit).
    AckDgram[]
    let crc = icrc_map();
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Take the datagram of the inputs this cycle."]
        load: Signal<In, Bit>,
        #[doc = "The path."]
        path: Signal<In, Bits<6>>,
        #[doc = "Cumulative path PSN."]
        cum: Signal<In, Bits<32>>,
        #[doc = "SACK bitmap."]
        sack: Signal<In, Bits<256>>,
        #[doc = "Packets received on the path."]
        rx: Signal<In, Bits<32>>,
        #[doc = "CE-marked packets received on the path."]
        ce: Signal<In, Bits<32>>,
        #[doc = "Echo timestamp."]
        ts: Signal<In, Bits<64>>,
        #[doc = "Reply port (the ACK's UDP source port)."]
        port: Signal<In, Bits<16>>,
        #[doc = "ECE flag."]
        ece: Signal<In, Bit>,
        #[doc = "Connection cumulative PSN."]
        conn_cum: Signal<In, Bits<32>>,
        #[doc = "The ACK's timestamp (`now` when it was taken)."]
        now: Signal<In, Bits<64>>,
        #[doc = "The QP's QPN."]
        qpn: Signal<In, Bits<32>>,
        #[doc = "The peer's QPN."]
        peer_qpn: Signal<In, Bits<32>>,
        #[doc = "The peer's IP (IPv4 mapped into IPv6)."]
        peer_ip: Signal<In, Bits<128>>,
        #[doc = "The peer's UDP port."]
        peer_port: Signal<In, Bits<16>>,
        #[doc = "Rate hint (Mbit/s)."]
        rate: Signal<In, Bits<32>>,
        #[doc = "Credit (packets)."]
        credit: Signal<In, Bits<32>>,
        #[doc = "The local IP."]
        local_ip: Signal<In, Bits<128>>,
        #[doc = "The datagram and its ICRC in lane order, as last loaded."]
        lanes: Signal<Out, Bits<FRAME_BITS>>,
    }
    state {
        // The datagram (big-endian words, then lanes), the pseudo-header
        // (byte 0 in the top bits), the ICRC in lane order, the register.
        dg: Signal<Local, Bits<DG_BITS>>,
        ph: Signal<Local, Bits<PH_BITS>>,
        icrc: Signal<Local, Bits<32>>,
        frame: DFF<Bits<FRAME_BITS>>,
    }
    consts {
        c_dg_rows: [Constant<Bits<DG_BITS>>; 32] = rows(&crc, 0),
        c_ph_rows: [Constant<Bits<PH_BITS>>; 32] = rows(&crc, DG_BITS),
        c_crc0: Constant<Bits<32>> = konst(crc.k as usize),
        c_head: Constant<Bits<DG_BITS>> = konst((ACK_VERSION << 56) | (ACK_OPCODE << 48)),
        c_ece: Constant<Bits<DG_BITS>> = konst(1 << 37),
        c_udp_len: Constant<Bits<PH_BITS>> = konst((8 + ACK_LEN) << 16),
        c_lo32: Constant<Bits<DG_BITS>> = low_halves(32),
        c_lo16: Constant<Bits<DG_BITS>> = low_halves(16),
        c_lo8: Constant<Bits<DG_BITS>> = low_halves(8),
    }
}

impl Logic for AckDgram {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, frame);
        self.lanes.next = self.frame.q.val();
        self.dg.next = 0.into();
        self.ph.next = 0.into();
        self.icrc.next = 0.into();
        if self.load.val() {
            // The datagram as big-endian 64-bit words, word k = bytes
            // 8k..8k+7: base header (stream, connection and path PSN zero;
            // timestamp = when the ACK was taken), ACK extension without
            // the SACK (words 5..8).
            self.dg.next = self.c_head.val()
                | bit_cast::<DG_BITS, 32>(self.peer_qpn.val())
                | (bit_cast::<DG_BITS, 6>(self.path.val()) << 64)
                | (bit_cast::<DG_BITS, 32>(self.qpn.val()) << 96)
                | (bit_cast::<DG_BITS, 64>(self.now.val()) << 192)
                | (bit_cast::<DG_BITS, 32>(self.cum.val()) << 256)
                | (bit_cast::<DG_BITS, 32>(self.conn_cum.val()) << 288)
                | (bit_cast::<DG_BITS, 64>(self.ts.val()) << 576)
                | (bit_cast::<DG_BITS, 32>(self.rate.val()) << 640)
                | (bit_cast::<DG_BITS, 32>(self.ce.val()) << 672)
                | (bit_cast::<DG_BITS, 32>(self.rx.val()) << 704)
                | (bit_cast::<DG_BITS, 32>(self.credit.val()) << 736);
            if self.ece.val() {
                self.dg.next = self.dg.val() | self.c_ece.val();
            }
            // Lane order: each word byte-reversed (halves, then quarters,
            // then bytes swapped), and the SACK, byte 0 (bits 7..0) first.
            self.dg.next = ((self.dg.val() & self.c_lo32.val()) << 32)
                | ((self.dg.val() >> 32) & self.c_lo32.val());
            self.dg.next = ((self.dg.val() & self.c_lo16.val()) << 16)
                | ((self.dg.val() >> 16) & self.c_lo16.val());
            self.dg.next = ((self.dg.val() & self.c_lo8.val()) << 8)
                | ((self.dg.val() >> 8) & self.c_lo8.val());
            self.dg.next = self.dg.val() | (bit_cast::<DG_BITS, 256>(self.sack.val()) << 320);
            // The pseudo-header: local IP, peer IP, reply port, peer port,
            // UDP length, 0.
            self.ph.next = self.c_udp_len.val()
                | (bit_cast::<PH_BITS, 16>(self.peer_port.val()) << 32)
                | (bit_cast::<PH_BITS, 16>(self.port.val()) << 48)
                | (bit_cast::<PH_BITS, 128>(self.peer_ip.val()) << 64)
                | (bit_cast::<PH_BITS, 128>(self.local_ip.val()) << 192);
            for o in 0..32 {
                self.icrc.next = self.icrc.val().replace_bit(
                    o,
                    (self.dg.val() & self.c_dg_rows[o].val()).xor()
                        ^ (self.ph.val() & self.c_ph_rows[o].val()).xor(),
                );
            }
            self.icrc.next = self.icrc.val() ^ self.c_crc0.val();
            self.frame.d.next = bit_cast::<FRAME_BITS, DG_BITS>(self.dg.val())
                | (bit_cast::<FRAME_BITS, 32>(self.icrc.val()) << 768);
        }
    }
}
