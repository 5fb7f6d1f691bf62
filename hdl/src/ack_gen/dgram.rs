//! The ACK generator's datagram, combinational: one pending-ACK entry and
//! its QP's fields laid out as the ACK datagram (base header and ACK
//! extension, network order) with its ICRC, in lane order (datagram byte
//! `i` in lane `i`, then the ICRC big-endian in lanes 96..99), which
//! [`super::AckGen`] registers in the cycle it takes the entry.

use rust_hdl::prelude::*;

use super::{ACK_LEN, FRAME_BITS};
use crate::helpers::{konst, native_block};
use crate::icrc::{crc_map, rows};

/// Wire version the ACKs carry (`metaroce_proto::VERSION`).
const ACK_VERSION: usize = 1;
/// Opcode of an ACK (`metaroce_proto::Opcode::Ack`).
const ACK_OPCODE: usize = 0x10;
/// Bits of the datagram before its ICRC.
const DG_BITS: usize = 8 * (ACK_LEN - 4);
/// Bits of the pseudo-header.
const PH_BITS: usize = 320;
/// Bits of the ICRC's input: the pseudo-header, then the datagram.
const CRC_BITS: usize = PH_BITS + DG_BITS;

/// A constant of `N` bits with bit `i` set.
fn bit<const N: usize>(i: usize) -> Constant<Bits<N>> {
    Constant::new(Bits::default().replace_bit(i, true))
}

native_block! {
    /// The ACK datagram and its ICRC: one XOR matrix of constant rows over
    /// the pseudo-header and the 96 bytes (a reduction XOR per output bit).
    AckDgram[]
    let crc = crc_map(PH_BITS / 8 + DG_BITS / 8);
    ports {
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
        #[doc = "The datagram and its ICRC in lane order."]
        lanes: Signal<Out, Bits<FRAME_BITS>>,
    }
    state {
        // The SACK field on the wire, the datagram and the ICRC's input
        // (network order, byte 0 in the top bits), the ICRC, the frame.
        octet: Signal<Local, Bits<8>>,
        sack_wire: Signal<Local, Bits<256>>,
        dg: Signal<Local, Bits<DG_BITS>>,
        x: Signal<Local, Bits<CRC_BITS>>,
        icrc: Signal<Local, Bits<32>>,
        frame: Signal<Local, Bits<FRAME_BITS>>,
    }
    consts {
        c_crc: [Constant<Bits<CRC_BITS>>; 32] = rows(&crc, 0),
        c_crc0: Constant<Bits<32>> = konst(crc.k as usize),
        c_version: Constant<Bits<DG_BITS>> = konst(ACK_VERSION),
        c_opcode: Constant<Bits<DG_BITS>> = konst(ACK_OPCODE),
        c_udp_len: Constant<Bits<PH_BITS>> = konst(8 + ACK_LEN),
        c_ece: Constant<Bits<DG_BITS>> = bit(741),
    }
}

impl Logic for AckDgram {
    #[hdl_gen]
    fn update(&mut self) {
        self.octet.next = 0.into();
        self.sack_wire.next = 0.into();
        self.frame.next = 0.into();
        // Base header (stream, connection and path PSN zero; timestamp =
        // when the ACK was taken) and ACK extension, network order; the
        // SACK's byte 0 (bits 7..0) first.
        for i in 0..32 {
            self.octet.next = self.sack.val().get_bits::<8>(8 * i);
            self.sack_wire.next = self.sack_wire.val()
                | (bit_cast::<256, 8>(self.octet.val()) << (248 - 8 * i).to_bits::<16>());
        }
        self.dg.next = bit_cast::<DG_BITS, 32>(self.rx.val())
            | (bit_cast::<DG_BITS, 32>(self.credit.val()) << 32)
            | (bit_cast::<DG_BITS, 32>(self.rate.val()) << 64)
            | (bit_cast::<DG_BITS, 32>(self.ce.val()) << 96)
            | (bit_cast::<DG_BITS, 64>(self.ts.val()) << 128)
            | (bit_cast::<DG_BITS, 256>(self.sack_wire.val()) << 192)
            | (bit_cast::<DG_BITS, 32>(self.cum.val()) << 448)
            | (bit_cast::<DG_BITS, 32>(self.conn_cum.val()) << 480)
            | (bit_cast::<DG_BITS, 64>(self.now.val()) << 512)
            | (bit_cast::<DG_BITS, 6>(self.path.val()) << 640)
            | (bit_cast::<DG_BITS, 32>(self.qpn.val()) << 672)
            | (bit_cast::<DG_BITS, 32>(self.peer_qpn.val()) << 704)
            | (self.c_opcode.val() << 752)
            | (self.c_version.val() << 760);
        if self.ece.val() {
            self.dg.next = self.dg.val() | self.c_ece.val();
        }
        // The ICRC over the pseudo-header (local IP, peer IP, reply port,
        // peer port, UDP length, 0: from bit 768 + 192 down to 768) and
        // the datagram.
        self.x.next = bit_cast::<CRC_BITS, DG_BITS>(self.dg.val())
            | (bit_cast::<CRC_BITS, PH_BITS>(self.c_udp_len.val()) << 784)
            | (bit_cast::<CRC_BITS, 16>(self.peer_port.val()) << 800)
            | (bit_cast::<CRC_BITS, 16>(self.port.val()) << 816)
            | (bit_cast::<CRC_BITS, 128>(self.peer_ip.val()) << 832)
            | (bit_cast::<CRC_BITS, 128>(self.local_ip.val()) << 960);
        self.icrc.next = 0.into();
        for o in 0..32 {
            self.icrc.next = self
                .icrc
                .val()
                .replace_bit(o, (self.x.val() & self.c_crc[o].val()).xor());
        }
        self.icrc.next = self.icrc.val() ^ self.c_crc0.val();
        // Lane order: datagram byte i (bits 767 - 8i down) in lane i, then
        // the ICRC big-endian in lanes 96..99.
        for i in 0..96 {
            self.octet.next = self.dg.val().get_bits::<8>(760 - 8 * i);
            self.frame.next = self.frame.val()
                | (bit_cast::<FRAME_BITS, 8>(self.octet.val()) << (8 * i).to_bits::<16>());
        }
        for q in 0..4 {
            self.octet.next = self.icrc.val().get_bits::<8>(24 - 8 * q);
            self.frame.next = self.frame.val()
                | (bit_cast::<FRAME_BITS, 8>(self.octet.val()) << (768 + 8 * q).to_bits::<16>());
        }
        self.lanes.next = self.frame.val();
    }
}
