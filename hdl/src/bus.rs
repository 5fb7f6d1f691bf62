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

/// Configuration write port with an `A`-bit address and `D`-bit data
/// (64 unless the map's words are narrower; table and register
/// maps: `crate::rx_place::cfg`, `crate::nic_core::CFG_TX_BIT`).
#[derive(LogicInterface, Default)]
#[join = "CfgOut"]
pub struct CfgIn<const A: usize, const D: usize = 64> {
    /// Write strobe.
    pub we: Signal<In, Bit>,
    /// Write address.
    pub addr: Signal<In, Bits<A>>,
    /// Write data (`D` bits: a map whose words are narrower takes only those).
    pub data: Signal<In, Bits<D>>,
}

/// Counter read port: a select with `S` bits, the counter one cycle later.
#[derive(LogicInterface, Default)]
#[join = "CounterRead"]
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
#[join = "DmaWriteIn"]
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
#[join = "VerdictIn"]
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
#[join = "DatagramOut"]
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
#[join = "FwRxIn"]
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
#[join = "EthEvIn"]
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
#[join = "DescOut"]
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
#[join = "ReadReqIn"]
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
#[join = "TxRead"]
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
#[join = "FateIn"]
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

/// A configuration write port seen from its writer: [`CfgIn`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "CfgIn"]
pub struct CfgOut<const A: usize, const D: usize = 64> {
    /// Write strobe.
    pub we: Signal<Out, Bit>,
    /// Write address.
    pub addr: Signal<Out, Bits<A>>,
    /// Write data.
    pub data: Signal<Out, Bits<D>>,
}

/// A counter read port seen from its reader: [`CounterPort`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "CounterPort"]
pub struct CounterRead<const S: usize> {
    /// Counter select.
    pub sel: Signal<Out, Bits<S>>,
    /// Selected counter (one cycle after `sel`).
    pub val: Signal<In, Bits<32>>,
}

/// DMA writes into the block that takes them: [`DmaWriteOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "DmaWriteOut"]
pub struct DmaWriteIn<const W: usize, const B: usize> {
    /// First beat: `addr` and `len` are valid.
    pub first: Signal<In, Bit>,
    /// Host address of the write.
    pub addr: Signal<In, Bits<64>>,
    /// Bytes of the write.
    pub len: Signal<In, Bits<16>>,
    /// Write data, lane 0 first.
    pub tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<In, Bit>,
    /// The DMA engine takes the beat.
    pub tready: Signal<Out, Bit>,
    /// Last beat of a write.
    pub tlast: Signal<In, Bit>,
}

/// The Ethernet front end's events seen from their user: [`EthEvOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "EthEvOut"]
pub struct EthEvIn {
    /// One pulse per Ethernet frame.
    pub valid: Signal<In, Bit>,
    /// Its `crate::EthDrop` code.
    pub reason: Signal<In, Bits<4>>,
}

/// Send descriptors seen from their source: [`DescIn`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "DescIn"]
pub struct DescOut {
    /// Descriptor valid.
    pub valid: Signal<Out, Bit>,
    /// The builder takes the descriptor.
    pub ready: Signal<In, Bit>,
    /// Opcode; 0x01..=0x06 carry the MSG extension.
    pub opcode: Signal<Out, Bits<8>>,
    /// Base-header flags.
    pub flags: Signal<Out, Bits<16>>,
    /// Destination QPN.
    pub dst_qpn: Signal<Out, Bits<32>>,
    /// Source QPN.
    pub src_qpn: Signal<Out, Bits<32>>,
    /// Stream id.
    pub stream: Signal<Out, Bits<16>>,
    /// Path index: selects the entropy (UDP source port).
    pub path: Signal<Out, Bits<16>>,
    /// Connection PSN.
    pub conn_psn: Signal<Out, Bits<32>>,
    /// Path PSN.
    pub path_psn: Signal<Out, Bits<32>>,
    /// Timestamp (ns).
    pub timestamp: Signal<Out, Bits<64>>,
    /// MSG: message sequence number.
    pub msn: Signal<Out, Bits<32>>,
    /// MSG: receive index.
    pub recv_idx: Signal<Out, Bits<32>>,
    /// MSG: message length.
    pub msg_len: Signal<Out, Bits<32>>,
    /// MSG: offset of the payload in the message.
    pub offset: Signal<Out, Bits<32>>,
    /// MSG: remote address.
    pub remote_va: Signal<Out, Bits<64>>,
    /// MSG: rkey.
    pub rkey: Signal<Out, Bits<32>>,
    /// MSG: immediate data.
    pub imm: Signal<Out, Bits<32>>,
    /// Payload bytes (0: no fetch).
    pub len: Signal<Out, Bits<16>>,
    /// Host address of the payload.
    pub addr: Signal<Out, Bits<64>>,
    /// Send ECN-capable: ECT(0) in the IP header.
    pub ecn: Signal<Out, Bit>,
}

/// Payload fetch requests seen from the memory side: [`ReadReqOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "ReadReqOut"]
pub struct ReadReqIn {
    /// Request valid.
    pub valid: Signal<In, Bit>,
    /// The memory takes the request.
    pub ready: Signal<Out, Bit>,
    /// Host address.
    pub addr: Signal<In, Bits<64>>,
    /// Bytes.
    pub len: Signal<In, Bits<16>>,
}

/// The TX table's read port seen from its reader: [`TxReadPort`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "TxReadPort"]
pub struct TxRead<const SB: usize> {
    /// Slot to read.
    pub slot: Signal<Out, Bits<SB>>,
    /// Length for `can_send`.
    pub len: Signal<Out, Bits<16>>,
    /// Entropy (UDP source port).
    pub entropy: Signal<In, Bits<16>>,
    /// Next path PSN.
    pub next_psn: Signal<In, Bits<32>>,
    /// Oldest unresolved path PSN.
    pub una: Signal<In, Bits<32>>,
    /// Bytes in flight.
    pub inflight: Signal<In, Bits<32>>,
    /// Window (bytes).
    pub window: Signal<In, Bits<32>>,
    /// Smoothed RTT, ns.
    pub srtt: Signal<In, Bits<32>>,
    /// RTT variation, ns.
    pub rttvar: Signal<In, Bits<32>>,
    /// An RTT sample was taken.
    pub rtt_valid: Signal<In, Bit>,
    /// ECN EWMA (16.16).
    pub ecn_ewma: Signal<In, Bits<32>>,
    /// Loss EWMA (16.16).
    pub loss_ewma: Signal<In, Bits<32>>,
    /// Acked packets since the last move.
    pub samples: Signal<In, Bits<32>>,
    /// Data packets sent.
    pub sent: Signal<In, Bits<32>>,
    /// Retransmissions sent.
    pub retransmitted: Signal<In, Bits<32>>,
    /// Packets acknowledged.
    pub acked: Signal<In, Bits<32>>,
    /// Packets lost.
    pub lost: Signal<In, Bits<32>>,
    /// CE marks counted.
    pub ce_marked: Signal<In, Bits<32>>,
    /// Moves.
    pub repaths: Signal<In, Bits<32>>,
    /// Timeouts.
    pub timeouts: Signal<In, Bits<32>>,
    /// Quarantined.
    pub quarantined: Signal<In, Bit>,
    /// Probe backoff multiplier.
    pub backoff: Signal<In, Bits<4>>,
    /// `TxPath::can_send(len)`.
    pub can_send: Signal<In, Bit>,
}

/// Operation port of the per-path TX table (`crate::TxPathTable`, the
/// `crate::TxOp` codes): one operation taken when `valid` meets `ready`,
/// its operands with it.
#[derive(LogicInterface, Default)]
#[join = "TxOpOut"]
pub struct TxOpIn<const SB: usize> {
    /// Operation valid.
    pub valid: Signal<In, Bit>,
    /// The table takes an operation (none running).
    pub ready: Signal<Out, Bit>,
    /// Operation (`crate::TxOp`).
    pub code: Signal<In, Bits<3>>,
    /// Slot operated on.
    pub slot: Signal<In, Bits<SB>>,
    /// `Send`: connection PSN; `Ack`: `path_cum`; `Lose`: path PSN.
    pub psn: Signal<In, Bits<32>>,
    /// `Send`: payload bytes.
    pub len: Signal<In, Bits<16>>,
    /// `Send`: a probe.
    pub probe: Signal<In, Bit>,
    /// `Send`: a retransmission.
    pub retx: Signal<In, Bit>,
    /// `Ack`: SACK bitmap.
    pub sack: Signal<In, Bits<256>>,
    /// `Feedback`: an RTT sample is given.
    pub rtt_valid: Signal<In, Bit>,
    /// `Feedback`: RTT sample, ns.
    pub rtt: Signal<In, Bits<32>>,
    /// `Feedback`: the ACK's cumulative CE count.
    pub ce_count: Signal<In, Bits<32>>,
    /// `Feedback`: packets the ACK acknowledged.
    pub acked: Signal<In, Bits<32>>,
    /// `Init`/`Timeout`/`Move`: entropy; `Window`: window in bytes.
    pub value: Signal<In, Bits<32>>,
}

/// TX table operations seen from their issuer: [`TxOpIn`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "TxOpIn"]
pub struct TxOpOut<const SB: usize> {
    /// Operation valid.
    pub valid: Signal<Out, Bit>,
    /// The table takes an operation (none running).
    pub ready: Signal<In, Bit>,
    /// Operation (`crate::TxOp`).
    pub code: Signal<Out, Bits<3>>,
    /// Slot operated on.
    pub slot: Signal<Out, Bits<SB>>,
    /// `Send`: connection PSN; `Ack`: `path_cum`; `Lose`: path PSN.
    pub psn: Signal<Out, Bits<32>>,
    /// `Send`: payload bytes.
    pub len: Signal<Out, Bits<16>>,
    /// `Send`: a probe.
    pub probe: Signal<Out, Bit>,
    /// `Send`: a retransmission.
    pub retx: Signal<Out, Bit>,
    /// `Ack`: SACK bitmap.
    pub sack: Signal<Out, Bits<256>>,
    /// `Feedback`: an RTT sample is given.
    pub rtt_valid: Signal<Out, Bit>,
    /// `Feedback`: RTT sample, ns.
    pub rtt: Signal<Out, Bits<32>>,
    /// `Feedback`: the ACK's cumulative CE count.
    pub ce_count: Signal<Out, Bits<32>>,
    /// `Feedback`: packets the ACK acknowledged.
    pub acked: Signal<Out, Bits<32>>,
    /// `Init`/`Timeout`/`Move`: entropy; `Window`: window in bytes.
    pub value: Signal<Out, Bits<32>>,
}

/// Results of the per-path TX table's operations: one `valid` pulse per
/// operation done, its results with it.
#[derive(LogicInterface, Default)]
#[join = "TxResIn"]
pub struct TxResOut {
    /// Pulse: the operation is done.
    pub valid: Signal<Out, Bit>,
    /// `Send`: the ring had room.
    pub ok: Signal<Out, Bit>,
    /// `Send`: path PSN assigned.
    pub psn: Signal<Out, Bits<32>>,
    /// `Ack`: data packets acknowledged.
    pub pkts: Signal<Out, Bits<32>>,
    /// `Ack`: bytes acknowledged.
    pub bytes: Signal<Out, Bits<32>>,
}

/// TX table results seen from the operation's issuer: [`TxResOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "TxResOut"]
pub struct TxResIn {
    /// Pulse: the operation is done.
    pub valid: Signal<In, Bit>,
    /// `Send`: the ring had room.
    pub ok: Signal<In, Bit>,
    /// `Send`: path PSN assigned.
    pub psn: Signal<In, Bits<32>>,
    /// `Ack`: data packets acknowledged.
    pub pkts: Signal<In, Bits<32>>,
    /// `Ack`: bytes acknowledged.
    pub bytes: Signal<In, Bits<32>>,
}

/// Check port of the per-path TX table: what the ACK receiver's evidence
/// check reads of a slot (`crate::ack_rx`), combinationally.
#[derive(LogicInterface, Default)]
#[join = "TxCheck"]
pub struct TxCheckPort<const SB: usize> {
    /// Slot to show.
    pub slot: Signal<In, Bits<SB>>,
    /// Its `una`.
    pub una: Signal<Out, Bits<32>>,
    /// Its `next_psn`.
    pub next_psn: Signal<Out, Bits<32>>,
    /// The last `ce_count` applied on it.
    pub last_ce: Signal<Out, Bits<32>>,
    /// It is quarantined.
    pub quarantined: Signal<Out, Bit>,
}

/// The TX table's check port seen from its reader: [`TxCheckPort`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "TxCheckPort"]
pub struct TxCheck<const SB: usize> {
    /// Slot to show.
    pub slot: Signal<Out, Bits<SB>>,
    /// Its `una`.
    pub una: Signal<In, Bits<32>>,
    /// Its `next_psn`.
    pub next_psn: Signal<In, Bits<32>>,
    /// The last `ce_count` applied on it.
    pub last_ce: Signal<In, Bits<32>>,
    /// It is quarantined.
    pub quarantined: Signal<In, Bit>,
}

/// ACKs the ACK receiver applied to the TX table (`crate::AckRx`): one
/// `valid` pulse per ACK, for the firmware's congestion controller and
/// connection state.
#[derive(LogicInterface, Default)]
#[join = "AckDoneIn"]
pub struct AckDoneOut<const SB: usize> {
    /// Pulse: an ACK was applied.
    pub valid: Signal<Out, Bit>,
    /// Its TX table slot.
    pub slot: Signal<Out, Bits<SB>>,
    /// Data packets it acknowledged.
    pub pkts: Signal<Out, Bits<32>>,
    /// Bytes it acknowledged.
    pub bytes: Signal<Out, Bits<32>>,
    /// The ACK's `conn_cum`.
    pub conn_cum: Signal<Out, Bits<32>>,
}

/// Applied ACKs seen from their user: [`AckDoneOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "AckDoneOut"]
pub struct AckDoneIn<const SB: usize> {
    /// Pulse: an ACK was applied.
    pub valid: Signal<In, Bit>,
    /// Its TX table slot.
    pub slot: Signal<In, Bits<SB>>,
    /// Data packets it acknowledged.
    pub pkts: Signal<In, Bits<32>>,
    /// Bytes it acknowledged.
    pub bytes: Signal<In, Bits<32>>,
    /// The ACK's `conn_cum`.
    pub conn_cum: Signal<In, Bits<32>>,
}

/// The ACK receiver's counters (`crate::AckRx`).
#[derive(LogicInterface, Default)]
#[join = "AckRxCntIn"]
pub struct AckRxCntOut {
    /// ACKs applied.
    pub applied: Signal<Out, Bits<32>>,
    /// Valid ACKs whose (QPN, path) has no slot (left to the firmware).
    pub unmapped: Signal<Out, Bits<32>>,
    /// ACKs dropped because the queue (16) was full.
    pub overflow: Signal<Out, Bits<32>>,
    /// Events whose path PSN or timestamp differed from the captured
    /// datagram's (not applied; 0 unless the pairing broke).
    pub pair_err: Signal<Out, Bits<32>>,
    /// ACKs refused by the evidence check (spec §5.5 step 0: nothing
    /// applied, no done pulse); counted in the cycle after the refused
    /// ACK's turn.
    pub refused: Signal<Out, Bits<32>>,
}

/// The ACK receiver's counters seen from their reader: [`AckRxCntOut`]
/// mirrored.
#[derive(LogicInterface, Default)]
#[join = "AckRxCntOut"]
pub struct AckRxCntIn {
    /// ACKs applied.
    pub applied: Signal<In, Bits<32>>,
    /// Valid ACKs whose (QPN, path) has no slot.
    pub unmapped: Signal<In, Bits<32>>,
    /// ACKs dropped: the queue was full.
    pub overflow: Signal<In, Bits<32>>,
    /// Events that did not match the captured datagram.
    pub pair_err: Signal<In, Bits<32>>,
    /// ACKs refused by the evidence check.
    pub refused: Signal<In, Bits<32>>,
}

/// What the ACK receiver (`crate::AckRx`) watches of the receive core:
/// the beats the core takes (no byte enables: an ACK fills every lane of
/// the bytes it keeps) and, one per datagram in order, the verdict event
/// fields that pair an event with its datagram and route an ACK.
#[derive(LogicInterface, Default)]
pub struct AckTapIn<const W: usize> {
    /// Beat data.
    pub tdata: Signal<In, Bits<W>>,
    /// The core takes a beat this cycle.
    pub tvalid: Signal<In, Bit>,
    /// It is the datagram's last beat.
    pub tlast: Signal<In, Bit>,
    /// Verdict event pulse (one per datagram, in order).
    pub ev_valid: Signal<In, Bit>,
    /// Its verdict code.
    pub ev_code: Signal<In, Bits<5>>,
    /// Its opcode.
    pub ev_opcode: Signal<In, Bits<8>>,
    /// Its destination QPN.
    pub ev_dst_qpn: Signal<In, Bits<32>>,
    /// Its path.
    pub ev_path: Signal<In, Bits<16>>,
    /// Its path PSN (the pairing guard).
    pub ev_path_psn: Signal<In, Bits<32>>,
    /// Its timestamp (the pairing guard).
    pub ev_timestamp: Signal<In, Bits<64>>,
}

/// Verdict events seen from their user: [`VerdictOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "VerdictOut"]
pub struct VerdictIn {
    /// Verdict pulse, one per datagram (the fields below are valid with it).
    pub valid: Signal<In, Bit>,
    /// Verdict code (`crate::rx_place::Verdict`).
    pub code: Signal<In, Bits<5>>,
    /// Base header version.
    pub version: Signal<In, Bits<8>>,
    /// Opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// Flags.
    pub flags: Signal<In, Bits<16>>,
    /// Destination QPN.
    pub dst_qpn: Signal<In, Bits<32>>,
    /// Path id.
    pub path: Signal<In, Bits<16>>,
    /// Path PSN.
    pub path_psn: Signal<In, Bits<32>>,
    /// Sender timestamp.
    pub timestamp: Signal<In, Bits<64>>,
    /// MSG message sequence number.
    pub msn: Signal<In, Bits<32>>,
    /// MSG posted-receive index.
    pub recv_idx: Signal<In, Bits<32>>,
    /// MSG immediate data.
    pub imm: Signal<In, Bits<32>>,
    /// Stream id.
    pub stream: Signal<In, Bits<16>>,
    /// Connection PSN (a NACK's `conn_psn`).
    pub conn_psn: Signal<In, Bits<32>>,
    /// UDP source port (a NACK's destination port).
    pub src_port: Signal<In, Bits<16>>,
    /// MSG offset.
    pub offset: Signal<In, Bits<32>>,
    /// MSG message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// Payload bytes (0 for other than MSG opcodes).
    pub len: Signal<In, Bits<16>>,
}

/// TX table fate events seen from their user: [`FateOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "FateOut"]
pub struct FateIn {
    /// Fate event valid.
    pub valid: Signal<In, Bit>,
    /// The firmware takes the event.
    pub ready: Signal<Out, Bit>,
    /// Lost (1) or acked (0).
    pub lost: Signal<In, Bit>,
    /// Connection PSN of the transmission.
    pub conn_psn: Signal<In, Bits<32>>,
}

/// The firmware receive queue's output seen from its reader: [`FwRxOut`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "FwRxOut"]
pub struct FwRxIn<const W: usize, const B: usize> {
    /// Datagram beats, lane 0 first.
    pub tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<In, Bit>,
    /// The firmware takes the beat.
    pub tready: Signal<Out, Bit>,
    /// Last beat.
    pub tlast: Signal<In, Bit>,
    /// The datagram's length in bytes.
    pub len: Signal<In, Bits<16>>,
    /// Only the datagram's first bytes came up.
    pub trunc: Signal<In, Bit>,
    /// The datagram's UDP source port.
    pub src_port: Signal<In, Bits<16>>,
}

/// Whole datagrams seen from their source: [`DatagramIn`] mirrored.
#[derive(LogicInterface, Default)]
#[join = "DatagramIn"]
pub struct DatagramOut<const W: usize, const B: usize> {
    /// Datagram beats (UDP payload, lane 0 first).
    pub tdata: Signal<Out, Bits<W>>,
    /// Byte enables (packed).
    pub tkeep: Signal<Out, Bits<B>>,
    /// Beat valid.
    pub tvalid: Signal<Out, Bit>,
    /// The framer takes the beat.
    pub tready: Signal<In, Bit>,
    /// Last beat of the datagram.
    pub tlast: Signal<Out, Bit>,
    /// Destination IP (IPv6, or IPv4 mapped into IPv6), with the first beat.
    pub dst_ip: Signal<Out, Bits<128>>,
    /// UDP source port, with the first beat.
    pub src_port: Signal<Out, Bits<16>>,
    /// UDP destination port, with the first beat.
    pub dst_port: Signal<Out, Bits<16>>,
}
