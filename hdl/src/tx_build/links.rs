//! [`TxBuild`](super::TxBuild)'s internal buses: the sub-blocks that are
//! combinational ([`super::header::TxHeader`], [`super::beat::TxBeat`])
//! are wired straight to their sources and sinks with one `X::join` each,
//! so no path runs from the generator's kernel through them and back into
//! it (Verilator orders logic per kernel, and such a path is a false
//! combinational loop to it). `…Out` is the driver's side, `…In` the
//! receiver's (rust-hdl's `#[join]` needs both types).

use rust_hdl::prelude::*;

use super::MR_BITS;

/// The FIFO head entry's fields the headers need, driven by
/// [`super::fifo::TxFifo`].
#[derive(LogicInterface, Default)]
#[join = "HeadIn"]
pub struct HeadOut {
    /// UDP source port.
    pub sport: Signal<Out, Bits<16>>,
    /// UDP length.
    pub ulen: Signal<Out, Bits<16>>,
    /// IP length field (IPv4 total length or IPv6 payload length).
    pub l3len: Signal<Out, Bits<16>>,
    /// IPv4 header checksum.
    pub cks: Signal<Out, Bits<16>>,
    /// ECN-capable.
    pub ecn: Signal<Out, Bit>,
    /// MSG extension.
    pub msg: Signal<Out, Bit>,
    /// The MetaRoCE headers after the version byte, lane order.
    pub mr: Signal<Out, Bits<MR_BITS>>,
}

/// [`HeadOut`] seen from [`super::header::TxHeader`].
#[derive(LogicInterface, Default)]
#[join = "HeadOut"]
pub struct HeadIn {
    /// UDP source port.
    pub sport: Signal<In, Bits<16>>,
    /// UDP length.
    pub ulen: Signal<In, Bits<16>>,
    /// IP length field (IPv4 total length or IPv6 payload length).
    pub l3len: Signal<In, Bits<16>>,
    /// IPv4 header checksum.
    pub cks: Signal<In, Bits<16>>,
    /// ECN-capable.
    pub ecn: Signal<In, Bit>,
    /// MSG extension.
    pub msg: Signal<In, Bit>,
    /// The MetaRoCE headers after the version byte, lane order.
    pub mr: Signal<In, Bits<MR_BITS>>,
}

/// The configured addressing, driven by [`super::regs::TxRegs`].
#[derive(LogicInterface, Default)]
#[join = "AddrIn"]
pub struct AddrOut {
    /// Local MAC.
    pub local_mac: Signal<Out, Bits<48>>,
    /// Peer MAC.
    pub peer_mac: Signal<Out, Bits<48>>,
    /// UDP destination port.
    pub dport: Signal<Out, Bits<16>>,
    /// TTL / hop limit.
    pub ttl: Signal<Out, Bits<8>>,
    /// DSCP.
    pub dscp: Signal<Out, Bits<6>>,
    /// IPv6, else IPv4.
    pub ipv6: Signal<Out, Bit>,
    /// Local IPv4 address.
    pub local_ip: Signal<Out, Bits<32>>,
    /// Peer IPv4 address.
    pub peer_ip: Signal<Out, Bits<32>>,
    /// Local IPv6 address.
    pub local_ip6: Signal<Out, Bits<128>>,
    /// Peer IPv6 address.
    pub peer_ip6: Signal<Out, Bits<128>>,
}

/// [`AddrOut`] seen from [`super::header::TxHeader`].
#[derive(LogicInterface, Default)]
#[join = "AddrOut"]
pub struct AddrIn {
    /// Local MAC.
    pub local_mac: Signal<In, Bits<48>>,
    /// Peer MAC.
    pub peer_mac: Signal<In, Bits<48>>,
    /// UDP destination port.
    pub dport: Signal<In, Bits<16>>,
    /// TTL / hop limit.
    pub ttl: Signal<In, Bits<8>>,
    /// DSCP.
    pub dscp: Signal<In, Bits<6>>,
    /// IPv6, else IPv4.
    pub ipv6: Signal<In, Bit>,
    /// Local IPv4 address.
    pub local_ip: Signal<In, Bits<32>>,
    /// Peer IPv4 address.
    pub peer_ip: Signal<In, Bits<32>>,
    /// Local IPv6 address.
    pub local_ip6: Signal<In, Bits<128>>,
    /// Peer IPv6 address.
    pub peer_ip6: Signal<In, Bits<128>>,
}

/// One beat for the ICRC stages, driven by [`super::beat::TxBeat`].
#[derive(LogicInterface, Default)]
#[join = "BeatIn"]
pub struct BeatOut<const W: usize, const B: usize> {
    /// The beat: header, payload and zero lanes, the ICRC's lanes zero.
    pub data: Signal<Out, Bits<W>>,
    /// Its `tkeep`.
    pub keep: Signal<Out, Bits<B>>,
    /// Lanes the ICRC covers (the datagram's bytes).
    pub cov: Signal<Out, Bits<B>>,
}

/// [`BeatOut`] seen from [`super::crc_pipe::TxCrcPipe`].
#[derive(LogicInterface, Default)]
#[join = "BeatOut"]
pub struct BeatIn<const W: usize, const B: usize> {
    /// The beat: header, payload and zero lanes, the ICRC's lanes zero.
    pub data: Signal<In, Bits<W>>,
    /// Its `tkeep`.
    pub keep: Signal<In, Bits<B>>,
    /// Lanes the ICRC covers (the datagram's bytes).
    pub cov: Signal<In, Bits<B>>,
}
