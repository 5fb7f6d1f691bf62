//! [`TxBuild`](super::TxBuild)'s internal buses: the sub-blocks that are
//! combinational ([`super::header::TxHeader`], [`super::beat::TxBeat`])
//! are wired straight to their sources and sinks with one `X::join` each,
//! so no path runs from the generator's kernel through them and back into
//! it (Verilator orders logic per kernel, and such a path is a false
//! combinational loop to it). `…Out` is the driver's side, `…In` the
//! receiver's (rust-hdl's `#[join]` needs both types; [`crate::bus`]'s
//! `bus_pair!` declares both from one field list).

use rust_hdl::prelude::*;

use super::MR_BITS;
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
