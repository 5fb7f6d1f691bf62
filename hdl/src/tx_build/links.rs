//! [`TxBuild`](super::TxBuild)'s internal buses: the sub-blocks that are
//! combinational ([`super::header::TxHeader`], [`super::beat::TxBeat`])
//! are wired straight to their sources and sinks with one `X::join` each,
//! so no path runs from the generator's kernel through them and back into
//! it (Verilator orders logic per kernel, and such a path is a false
//! combinational loop to it). `…Out` is the driver's side, `…In` the
//! receiver's (rust-hdl's `#[join]` needs both types; [`crate::bus`]'s
//! `bus_pair!` declares both from one field list).

use rust_hdl::prelude::*;

use super::{MR_BITS, NET_BITS};
use crate::bus::bus_pair;

bus_pair! {
    /// The FIFO head entry's fields the headers need, driven by
    /// [`super::fifo::TxFifo`].
    HeadOut = "HeadOut"
    /// [`HeadOut`] seen from [`super::header::TxHeader`].
    / HeadIn = "HeadIn"
    []
    {
        /// UDP source port.
        sport: Out / In, Bits<16>;
        /// UDP length.
        ulen: Out / In, Bits<16>;
        /// IP length field (IPv4 total length or IPv6 payload length).
        l3len: Out / In, Bits<16>;
        /// IPv4 header checksum.
        cks: Out / In, Bits<16>;
        /// ECN-capable.
        ecn: Out / In, Bit;
        /// MSG extension.
        msg: Out / In, Bit;
        /// The MetaRoCE headers after the version byte, lane order.
        mr: Out / In, Bits<MR_BITS>;
    }
}

bus_pair! {
    /// The configured addressing, driven by [`super::regs::TxRegs`].
    AddrOut = "AddrOut"
    /// [`AddrOut`] seen from [`super::header::TxHeader`].
    / AddrIn = "AddrIn"
    []
    {
        /// Local MAC.
        local_mac: Out / In, Bits<48>;
        /// Peer MAC.
        peer_mac: Out / In, Bits<48>;
        /// UDP destination port.
        dport: Out / In, Bits<16>;
        /// TTL / hop limit.
        ttl: Out / In, Bits<8>;
        /// DSCP.
        dscp: Out / In, Bits<6>;
        /// IPv6, else IPv4.
        ipv6: Out / In, Bit;
        /// Local IPv4 address.
        local_ip: Out / In, Bits<32>;
        /// Peer IPv4 address.
        peer_ip: Out / In, Bits<32>;
        /// Local IPv6 address.
        local_ip6: Out / In, Bits<128>;
        /// Peer IPv6 address.
        peer_ip6: Out / In, Bits<128>;
    }
}

bus_pair! {
    /// One beat for the ICRC stages, driven by [`super::beat::TxBeat`].
    BeatOut = "BeatOut"
    /// [`BeatOut`] seen from [`super::crc_pipe::TxCrcPipe`].
    / BeatIn = "BeatIn"
    [const W: usize, const B: usize]
    {
        /// The beat: header, payload and zero lanes, the ICRC's lanes zero.
        data: Out / In, Bits<W>;
        /// Its `tkeep`.
        keep: Out / In, Bits<B>;
        /// Lanes the ICRC covers (the datagram's bytes).
        cov: Out / In, Bits<B>;
    }
}

bus_pair! {
    /// What the descriptor side needs of the configuration side, driven
    /// by [`super::regs::TxRegs`] (the entropy table's address is driven
    /// by [`super::fifo::TxFifo`]).
    RegsOut = "RegsOut"
    /// [`RegsOut`] seen from [`super::fifo::TxFifo`].
    / RegsIn = "RegsIn"
    []
    {
        /// Entropy table read address (a path's low 6 bits).
        ent_addr: In / Out, Bits<6>;
        /// Entropy table entry at the previous cycle's `ent_addr`: the UDP
        /// source port.
        ent_data: Out / In, Bits<16>;
        /// IPv6, else IPv4.
        ipv6: Out / In, Bit;
        /// IPv4 header sums of everything but the payload length, ones'
        /// complement, one per `ecn << 1 | msg` at bits `16·j..`.
        cks: Out / In, Bits<64>;
        /// Pseudo-header CRC of the addresses and the destination port,
        /// moved to the end of a frame's first beat.
        cr_first: Out / In, Bits<32>;
        /// A register write is in this cycle or settling after it.
        busy: Out / In, Bit;
    }
}

bus_pair! {
    /// The next frame's header, driven by [`super::header::TxHeader`].
    HdrOut = "HdrOut"
    /// [`HdrOut`] seen from [`super::generator::TxGen`].
    / HdrIn = "HdrIn"
    []
    {
        /// Ethernet, IP and UDP headers, network order, left-aligned
        /// (first byte in bits 495..488; IPv4's 42 bytes, then zeros).
        net: Out / In, Bits<NET_BITS>;
        /// The MetaRoCE headers after the version byte, lane order.
        mr: Out / In, Bits<MR_BITS>;
        /// Header bytes.
        hlen: Out / In, Bits<8>;
        /// Frame offset of the datagram (the first byte the ICRC covers).
        dstart: Out / In, Bits<8>;
        /// `ipv6 << 1 | msg`.
        kind: Out / In, Bits<2>;
    }
}

bus_pair! {
    /// The next frame's lengths and CRC seed, from the FIFO's head entry,
    /// driven by [`super::fifo::TxFifo`].
    FrameOut = "FrameOut"
    /// [`FrameOut`] seen from [`super::generator::TxGen`].
    / FrameIn = "FrameIn"
    []
    {
        /// Payload bytes.
        plen: Out / In, Bits<16>;
        /// Frame offset of the ICRC.
        icrc: Out / In, Bits<16>;
        /// Frame length.
        flen: Out / In, Bits<16>;
        /// Trailing zero lanes of the last covered beat.
        zeros: Out / In, Bits<8>;
        /// CRC seed at the end of the first beat.
        seed: Out / In, Bits<32>;
    }
}

bus_pair! {
    /// What one beat is made of, driven by [`super::generator::TxGen`].
    GenOut = "GenOut"
    /// [`GenOut`] seen from [`super::beat::TxBeat`].
    / GenIn = "GenIn"
    [const W: usize]
    {
        /// Make a beat (the generator moves this cycle).
        en: Out / In, Bit;
        /// The header shift register's low `W` bits.
        hdr: Out / In, Bits<W>;
        /// Header bytes left.
        hrem: Out / In, Bits<8>;
        /// Bytes left before the datagram.
        drem: Out / In, Bits<8>;
        /// Bytes left before the ICRC.
        erem: Out / In, Bits<16>;
        /// Bytes left to the frame's end.
        trem: Out / In, Bits<16>;
        /// The frame's kind (`ipv6 << 1 | msg`): its header length.
        kind: Out / In, Bits<2>;
        /// The previous payload beat.
        prev: Out / In, Bits<W>;
        /// This cycle's payload beat.
        pay_in: Out / In, Bits<W>;
    }
}

bus_pair! {
    /// The beat's place in its frame for the ICRC stages, driven by
    /// [`super::generator::TxGen`].
    CrcCtlOut = "CrcCtlOut"
    /// [`CrcCtlOut`] seen from [`super::crc_pipe::TxCrcPipe`].
    / CrcCtlIn = "CrcCtlIn"
    []
    {
        /// A beat enters.
        valid: Out / In, Bit;
        /// It is its frame's first.
        first: Out / In, Bit;
        /// It is its frame's last.
        last: Out / In, Bit;
        /// It is past the datagram: the CRC is held.
        hold: Out / In, Bit;
        /// Bytes of the frame left from this beat, when the ICRC may end in
        /// it or the next (`< B + 4`), else 0.
        t: Out / In, Bits<8>;
        /// The frame's CRC seed at the end of its first beat.
        s1: Out / In, Bits<32>;
        /// Trailing zero lanes of the frame's last covered beat.
        m: Out / In, Bits<8>;
    }
}
