//! The NIC's buses, each declared once as a rust-hdl interface
//! (`#[derive(LogicInterface)]`) and used as one port field at every level
//! that carries it ([`crate::RxCore`], [`crate::NicRx`], [`crate::NicCore`]
//! and, inside it, [`crate::AckGen`], [`crate::TxBuild`],
//! [`crate::AckFrame`], [`crate::TxArb`], [`crate::FwRx`],
//! [`crate::TxPathTable`]).
//!
//! A bus's direction is the owning block's view: `…Out` buses are driven by
//! the block (a master, `m_*`), `…In` buses by its user (a slave, `s_*`),
//! each with its handshake signal the other way. A parent passes a child's
//! bus through with one `X::link(&mut self.bus, &mut self.child.bus)` in
//! its `update`; a master meets its slave with one
//! `X::join(&mut self.a.m, &mut self.b.s)` (`#[join]` pairs). rust-hdl
//! emits a link as the child's port connected straight to the parent's
//! (no wire of its own), so a parent that also reads a bus it linked reads
//! its own port (`self.m_ev.valid`), not the child's.
//!
//! Port names: rust-hdl names a bus field `bus$field` in the Verilog
//! (`m_ev$valid`). Verilator writes `$` in a C++ identifier as `__024`
//! (`top->m_ev__024valid`); the Verilated benches (`metaroce-sim-tb`) name
//! the port `m_ev_valid`, `$` read as `_`, which is the flat name the port
//! had before the bus existed. [`crate::NicDevice`] keeps flat top-level
//! ports (external Verilog instantiates it).

use rust_hdl::prelude::*;

/// AXI-Stream beats driven by the block (frames, datagrams, payload).
#[derive(LogicInterface, Default)]
#[join = "AxisIn"]
pub struct AxisOut<const W: usize, const B: usize> {
    /// Beat data, lane 0 first.
    pub tdata: Signal<Out, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<Out, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<Out, Bit>,
    /// The receiver takes the beat.
    pub tready: Signal<In, Bit>,
    /// Last beat of a frame.
    pub tlast: Signal<Out, Bit>,
}

/// AXI-Stream beats into the block: [`AxisOut`] seen from its receiver.
#[derive(LogicInterface, Default)]
#[join = "AxisOut"]
pub struct AxisIn<const W: usize, const B: usize> {
    /// Beat data, lane 0 first.
    pub tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<In, Bit>,
    /// The block takes the beat.
    pub tready: Signal<Out, Bit>,
    /// Last beat of a frame.
    pub tlast: Signal<In, Bit>,
}

/// Configuration write port with an `A`-bit address (table and register
/// maps: `crate::rx_place::cfg`, `crate::nic_core::CFG_TX_BIT`).
#[derive(LogicInterface, Default)]
pub struct CfgIn<const A: usize> {
    /// Write strobe.
    pub we: Signal<In, Bit>,
    /// Write address.
    pub addr: Signal<In, Bits<A>>,
    /// Write data.
    pub data: Signal<In, Bits<64>>,
}

/// Counter read port: a select with `S` bits, the counter one cycle later.
#[derive(LogicInterface, Default)]
pub struct CounterPort<const S: usize> {
    /// Counter select.
    pub sel: Signal<In, Bits<S>>,
    /// Selected counter (one cycle after `sel`).
    pub val: Signal<Out, Bits<32>>,
}

/// ICRC pseudo-header of the datagram whose first beat enters the
/// receive core (sampled with that beat).
#[derive(LogicInterface, Default)]
pub struct PseudoIn {
    /// Source IP (IPv4 mapped into IPv6).
    pub src_ip: Signal<In, Bits<128>>,
    /// Destination IP (IPv4 mapped into IPv6).
    pub dst_ip: Signal<In, Bits<128>>,
    /// UDP source port (also the ACK's destination port).
    pub src_port: Signal<In, Bits<16>>,
    /// UDP destination port.
    pub dst_port: Signal<In, Bits<16>>,
    /// UDP length.
    pub udp_len: Signal<In, Bits<16>>,
}

/// DMA write of placed payload: address and length with the first beat,
/// then the data beats.
#[derive(LogicInterface, Default)]
pub struct DmaWriteOut<const W: usize, const B: usize> {
    /// First beat: `addr` and `len` are valid.
    pub first: Signal<Out, Bit>,
    /// Host address of the write.
    pub addr: Signal<Out, Bits<64>>,
    /// Bytes of the write.
    pub len: Signal<Out, Bits<16>>,
    /// Write data, lane 0 first.
    pub tdata: Signal<Out, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<Out, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<Out, Bit>,
    /// The DMA engine takes the beat.
    pub tready: Signal<In, Bit>,
    /// Last beat of a write.
    pub tlast: Signal<Out, Bit>,
}

/// Verdict events of the receive core: one `valid` pulse per datagram with
/// its `crate::rx_place::Verdict` code and header fields.
#[derive(LogicInterface, Default)]
pub struct VerdictOut {
    /// Verdict pulse, one per datagram (the fields below are valid with it).
    pub valid: Signal<Out, Bit>,
    /// Verdict code (`crate::rx_place::Verdict`).
    pub code: Signal<Out, Bits<5>>,
    /// Base header version.
    pub version: Signal<Out, Bits<8>>,
    /// Opcode.
    pub opcode: Signal<Out, Bits<8>>,
    /// Flags.
    pub flags: Signal<Out, Bits<16>>,
    /// Destination QPN.
    pub dst_qpn: Signal<Out, Bits<32>>,
    /// Path id.
    pub path: Signal<Out, Bits<16>>,
    /// Path PSN.
    pub path_psn: Signal<Out, Bits<32>>,
    /// Sender timestamp.
    pub timestamp: Signal<Out, Bits<64>>,
    /// MSG message sequence number.
    pub msn: Signal<Out, Bits<32>>,
    /// MSG posted-receive index.
    pub recv_idx: Signal<Out, Bits<32>>,
    /// MSG immediate data.
    pub imm: Signal<Out, Bits<32>>,
    /// Stream id.
    pub stream: Signal<Out, Bits<16>>,
    /// Connection PSN (a NACK's `conn_psn`).
    pub conn_psn: Signal<Out, Bits<32>>,
    /// UDP source port (a NACK's destination port).
    pub src_port: Signal<Out, Bits<16>>,
    /// MSG offset.
    pub offset: Signal<Out, Bits<32>>,
    /// MSG message length.
    pub msg_len: Signal<Out, Bits<32>>,
    /// Payload bytes (0 for other than MSG opcodes).
    pub len: Signal<Out, Bits<16>>,
}

/// ACK datagrams of the receive core: UDP payload beats and, held for the
/// datagram, its addressing and ECE mark.
#[derive(LogicInterface, Default)]
#[join = "AckIn"]
pub struct AckOut<const W: usize, const B: usize> {
    /// Datagram beats (UDP payload, lane order).
    pub tdata: Signal<Out, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<Out, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<Out, Bit>,
    /// The transmitter takes the beat.
    pub tready: Signal<In, Bit>,
    /// Last beat of an ACK.
    pub tlast: Signal<Out, Bit>,
    /// Destination IP (IPv4 mapped into IPv6).
    pub dst_ip: Signal<Out, Bits<128>>,
    /// UDP source port.
    pub src_port: Signal<Out, Bits<16>>,
    /// UDP destination port.
    pub dst_port: Signal<Out, Bits<16>>,
    /// The ACK carries ECE.
    pub ece: Signal<Out, Bit>,
}

/// ACK datagrams into the ACK framer: [`AckOut`] seen from its receiver
/// (the addressing and ECE sampled with the first beat).
#[derive(LogicInterface, Default)]
#[join = "AckOut"]
pub struct AckIn<const W: usize, const B: usize> {
    /// Datagram beats (UDP payload, lane order).
    pub tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<In, Bit>,
    /// The framer takes the beat.
    pub tready: Signal<Out, Bit>,
    /// Last beat of an ACK.
    pub tlast: Signal<In, Bit>,
    /// Destination IP (IPv6, or IPv4 mapped into IPv6: selects the IP version).
    pub dst_ip: Signal<In, Bits<128>>,
    /// UDP source port.
    pub src_port: Signal<In, Bits<16>>,
    /// UDP destination port.
    pub dst_port: Signal<In, Bits<16>>,
    /// The ACK carries ECE.
    pub ece: Signal<In, Bit>,
}

/// Whole UDP datagrams the firmware built (NACK, DISCONNECT), into the
/// ACK framer: payload beats and, with the first beat, the addressing.
#[derive(LogicInterface, Default)]
pub struct DatagramIn<const W: usize, const B: usize> {
    /// Datagram beats (UDP payload, lane 0 first).
    pub tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<In, Bit>,
    /// The framer takes the beat.
    pub tready: Signal<Out, Bit>,
    /// Last beat of the datagram.
    pub tlast: Signal<In, Bit>,
    /// Destination IP (IPv6, or IPv4 mapped into IPv6), with the first beat.
    pub dst_ip: Signal<In, Bits<128>>,
    /// UDP source port, with the first beat.
    pub src_port: Signal<In, Bits<16>>,
    /// UDP destination port, with the first beat.
    pub dst_port: Signal<In, Bits<16>>,
}

/// The firmware receive queue's output: the datagrams handed up, with
/// their length, truncation mark and UDP source port.
#[derive(LogicInterface, Default)]
pub struct FwRxOut<const W: usize, const B: usize> {
    /// Datagram beats, lane 0 first.
    pub tdata: Signal<Out, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<Out, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<Out, Bit>,
    /// The firmware takes the beat.
    pub tready: Signal<In, Bit>,
    /// Last beat.
    pub tlast: Signal<Out, Bit>,
    /// The datagram's length in bytes.
    pub len: Signal<Out, Bits<16>>,
    /// Only the datagram's first bytes came up.
    pub trunc: Signal<Out, Bit>,
    /// The datagram's UDP source port.
    pub src_port: Signal<Out, Bits<16>>,
}

/// The Ethernet front end's per-frame events (`crate::EthDrop` codes).
#[derive(LogicInterface, Default)]
pub struct EthEvOut {
    /// One pulse per Ethernet frame.
    pub valid: Signal<Out, Bit>,
    /// Its `crate::EthDrop` code.
    pub reason: Signal<Out, Bits<4>>,
}

/// A copy of the beats the receive core takes (no back-pressure).
#[derive(LogicInterface, Default)]
#[join = "TapIn"]
pub struct TapOut<const W: usize, const B: usize> {
    /// Beat data.
    pub tdata: Signal<Out, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<Out, Bits<B>>,
    /// The core takes a beat this cycle.
    pub tvalid: Signal<Out, Bit>,
    /// It is the datagram's last beat.
    pub tlast: Signal<Out, Bit>,
}

/// The receive core's input tap seen from a block that watches it.
#[derive(LogicInterface, Default)]
#[join = "TapOut"]
pub struct TapIn<const W: usize, const B: usize> {
    /// Beat data.
    pub tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<In, Bits<B>>,
    /// The core takes a beat this cycle.
    pub tvalid: Signal<In, Bit>,
    /// It is the datagram's last beat.
    pub tlast: Signal<In, Bit>,
}

/// Send descriptors into the TX builder: one datagram's header fields and
/// where its payload is in host memory.
#[derive(LogicInterface, Default)]
pub struct DescIn {
    /// Descriptor valid.
    pub valid: Signal<In, Bit>,
    /// The builder takes the descriptor.
    pub ready: Signal<Out, Bit>,
    /// Opcode; 0x01..=0x06 carry the MSG extension.
    pub opcode: Signal<In, Bits<8>>,
    /// Base-header flags.
    pub flags: Signal<In, Bits<16>>,
    /// Destination QPN.
    pub dst_qpn: Signal<In, Bits<32>>,
    /// Source QPN.
    pub src_qpn: Signal<In, Bits<32>>,
    /// Stream id.
    pub stream: Signal<In, Bits<16>>,
    /// Path index: selects the entropy (UDP source port).
    pub path: Signal<In, Bits<16>>,
    /// Connection PSN.
    pub conn_psn: Signal<In, Bits<32>>,
    /// Path PSN.
    pub path_psn: Signal<In, Bits<32>>,
    /// Timestamp (ns).
    pub timestamp: Signal<In, Bits<64>>,
    /// MSG: message sequence number.
    pub msn: Signal<In, Bits<32>>,
    /// MSG: receive index.
    pub recv_idx: Signal<In, Bits<32>>,
    /// MSG: message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// MSG: offset of the payload in the message.
    pub offset: Signal<In, Bits<32>>,
    /// MSG: remote address.
    pub remote_va: Signal<In, Bits<64>>,
    /// MSG: rkey.
    pub rkey: Signal<In, Bits<32>>,
    /// MSG: immediate data.
    pub imm: Signal<In, Bits<32>>,
    /// Payload bytes (0: no fetch).
    pub len: Signal<In, Bits<16>>,
    /// Host address of the payload.
    pub addr: Signal<In, Bits<64>>,
    /// Send ECN-capable: ECT(0) in the IP header.
    pub ecn: Signal<In, Bit>,
}

/// Payload fetch requests (host memory reads) of the TX builder; the data
/// comes back on an [`AxisIn`].
#[derive(LogicInterface, Default)]
pub struct ReadReqOut {
    /// Request valid.
    pub valid: Signal<Out, Bit>,
    /// The memory takes the request.
    pub ready: Signal<In, Bit>,
    /// Host address.
    pub addr: Signal<Out, Bits<64>>,
    /// Bytes.
    pub len: Signal<Out, Bits<16>>,
}

/// Read port of the per-path TX table (`crate::TxPathTable`): a slot (of
/// `SB` bits) in, its state out, combinationally.
#[derive(LogicInterface, Default)]
pub struct TxReadPort<const SB: usize> {
    /// Slot to read.
    pub slot: Signal<In, Bits<SB>>,
    /// Length for `can_send`.
    pub len: Signal<In, Bits<16>>,
    /// Entropy (UDP source port).
    pub entropy: Signal<Out, Bits<16>>,
    /// Next path PSN.
    pub next_psn: Signal<Out, Bits<32>>,
    /// Oldest unresolved path PSN.
    pub una: Signal<Out, Bits<32>>,
    /// Bytes in flight.
    pub inflight: Signal<Out, Bits<32>>,
    /// Window (bytes).
    pub window: Signal<Out, Bits<32>>,
    /// Smoothed RTT, ns.
    pub srtt: Signal<Out, Bits<32>>,
    /// RTT variation, ns.
    pub rttvar: Signal<Out, Bits<32>>,
    /// An RTT sample was taken.
    pub rtt_valid: Signal<Out, Bit>,
    /// ECN EWMA (16.16).
    pub ecn_ewma: Signal<Out, Bits<32>>,
    /// Loss EWMA (16.16).
    pub loss_ewma: Signal<Out, Bits<32>>,
    /// Acked packets since the last move.
    pub samples: Signal<Out, Bits<32>>,
    /// Data packets sent.
    pub sent: Signal<Out, Bits<32>>,
    /// Retransmissions sent.
    pub retransmitted: Signal<Out, Bits<32>>,
    /// Packets acknowledged.
    pub acked: Signal<Out, Bits<32>>,
    /// Packets lost.
    pub lost: Signal<Out, Bits<32>>,
    /// CE marks counted.
    pub ce_marked: Signal<Out, Bits<32>>,
    /// Moves.
    pub repaths: Signal<Out, Bits<32>>,
    /// Timeouts.
    pub timeouts: Signal<Out, Bits<32>>,
    /// Quarantined.
    pub quarantined: Signal<Out, Bit>,
    /// Probe backoff multiplier.
    pub backoff: Signal<Out, Bits<4>>,
    /// `TxPath::can_send(len)`.
    pub can_send: Signal<Out, Bit>,
}

/// Fate events of the per-path TX table: each transmission, once acked or
/// lost, with its connection PSN.
#[derive(LogicInterface, Default)]
pub struct FateOut {
    /// Fate event valid.
    pub valid: Signal<Out, Bit>,
    /// The firmware takes the event.
    pub ready: Signal<In, Bit>,
    /// Lost (1) or acked (0).
    pub lost: Signal<Out, Bit>,
    /// Connection PSN of the transmission.
    pub conn_psn: Signal<Out, Bits<32>>,
}
