//! A frame's Ethernet, IP and UDP headers ([`TxHeader`]).

use rust_hdl::prelude::*;

use super::links::{AddrIn, HdrOut, HeadIn};
use super::{DSTART, HLEN, NET_BITS, V4_AT};
use crate::helpers::{konst, native_block};

native_block! {
    /// The headers of the frame [`TxBuild`](super::TxBuild)'s generator
    /// takes next, combinational: Ethernet, IPv4 or IPv6 and UDP in
    /// network order, right-aligned in the 62 bytes (the last byte in the
    /// low bits for both families: IPv6's first byte in the top bits,
    /// IPv4's 42 bytes after 20 zero bytes), so that the MetaRoCE headers
    /// follow at the same place for both,
    /// from the FIFO's head entry (its lengths, checksum, source port and
    /// flags) and the configuration; with the MetaRoCE headers, the
    /// header's length, the offset of the datagram, and the frame's kind
    /// (`ipv6 << 1 | msg`). The generator puts them in lane order only
    /// when it takes the frame (a simulator then reverses the bytes once
    /// per frame, not every cycle). Its inputs are wired straight from the
    /// FIFO and the registers, so that no path runs through the
    /// generator's kernel and back.
    TxHeader []
    ports {
        #[doc = "The generator may take the next frame this cycle (from registers: the FIFO's head is ready, and no frame is being made or the current beat is its frame's last): `m_hdr.net` is laid out only then (0 otherwise), so a simulator builds it once per frame, not every cycle."]
        load: Signal<In, Bit>,
        #[doc = "The FIFO head entry's fields."]
        head: HeadIn,
        #[doc = "The configured addressing."]
        addr: AddrIn,
        #[doc = "The headers, their length, the datagram's offset, the kind."]
        m_hdr: HdrOut,
    }
    state {
        tos: Signal<Local, Bits<8>>,
        net: Signal<Local, Bits<NET_BITS>>,
    }
    consts {
        c_fix4: Constant<Bits<NET_BITS>> = Constant::new(
            (Bits::from(0x0800) << 384)
                | (Bits::from(0x45) << 376)
                | (Bits::from(0x4000) << 320)
                | (Bits::from(17) << 304),
        ),
        c_fix6: Constant<Bits<NET_BITS>> = Constant::new(
            (Bits::from(0x86DD) << 384) | (Bits::from(6) << 380) | (Bits::from(17) << 328),
        ),
        c_hlen: [Constant<Bits<8>>; 4] = HLEN.map(konst),
        c_dstart: [Constant<Bits<8>>; 2] = DSTART.map(konst),
        c_v4_at: Constant<Bits<16>> = konst(V4_AT),
    }
}

impl Logic for TxHeader {
    #[hdl_gen]
    fn update(&mut self) {
        self.m_hdr.hlen.next = 0.into();
        self.tos.next = bit_cast::<8, 6>(self.addr.dscp.val()) << 2;
        if self.head.ecn.val() {
            self.tos.next = self.tos.val() | 2;
        }
        // Laid out only while a frame may be taken (`load`), 0 otherwise.
        self.net.next = 0.into();
        if self.load.val() {
            // The MAC addresses, at the same place for both families.
            self.net.next = (bit_cast::<NET_BITS, 48>(self.addr.peer_mac.val()) << 448)
                | (bit_cast::<NET_BITS, 48>(self.addr.local_mac.val()) << 400);
            if self.addr.ipv6.val() {
                // EtherType, IPv6 (version 6, traffic class, flow label 0,
                // payload length, next header 17, hop limit), UDP.
                self.net.next = self.net.val()
                    | self.c_fix6.val()
                    | (bit_cast::<NET_BITS, 8>(self.tos.val()) << 372)
                    | (bit_cast::<NET_BITS, 16>(self.head.l3len.val()) << 336)
                    | (bit_cast::<NET_BITS, 8>(self.addr.ttl.val()) << 320)
                    | (bit_cast::<NET_BITS, 128>(self.addr.local_ip6.val()) << 192)
                    | (bit_cast::<NET_BITS, 128>(self.addr.peer_ip6.val()) << 64)
                    | (bit_cast::<NET_BITS, 16>(self.head.sport.val()) << 48)
                    | (bit_cast::<NET_BITS, 16>(self.addr.dport.val()) << 32)
                    | (bit_cast::<NET_BITS, 16>(self.head.ulen.val()) << 16);
            } else {
                // EtherType, IPv4 (0x45, TOS, total length, ID 0, DF, TTL,
                // protocol 17, checksum, addresses), UDP: 42 bytes, then
                // zeros; then moved down 20 bytes (the MACs too) to end
                // where IPv6's headers end.
                self.net.next = self.net.val()
                    | self.c_fix4.val()
                    | (bit_cast::<NET_BITS, 8>(self.tos.val()) << 368)
                    | (bit_cast::<NET_BITS, 16>(self.head.l3len.val()) << 352)
                    | (bit_cast::<NET_BITS, 8>(self.addr.ttl.val()) << 312)
                    | (bit_cast::<NET_BITS, 16>(self.head.cks.val()) << 288)
                    | (bit_cast::<NET_BITS, 32>(self.addr.local_ip.val()) << 256)
                    | (bit_cast::<NET_BITS, 32>(self.addr.peer_ip.val()) << 224)
                    | (bit_cast::<NET_BITS, 16>(self.head.sport.val()) << 208)
                    | (bit_cast::<NET_BITS, 16>(self.addr.dport.val()) << 192)
                    | (bit_cast::<NET_BITS, 16>(self.head.ulen.val()) << 176);
                self.net.next = self.net.val() >> self.c_v4_at.val();
            }
        }
        self.m_hdr.dstart.next = self.c_dstart[0].val();
        if self.addr.ipv6.val() {
            self.m_hdr.dstart.next = self.c_dstart[1].val();
        }
        self.m_hdr.net.next = self.net.val();
        self.m_hdr.mr.next = self.head.mr.val();
        self.m_hdr.kind.next = bit_cast::<2, 1>(self.head.msg.val().into());
        if self.addr.ipv6.val() {
            self.m_hdr.kind.next = self.m_hdr.kind.val() | 2;
        }
        for j in 0..4 {
            if self.m_hdr.kind.val() == j.to_bits::<2>() {
                self.m_hdr.hlen.next = self.c_hlen[j].val();
            }
        }
    }
}
