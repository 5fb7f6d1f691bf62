//! The NIC's buses, each declared once as a rust-hdl interface
//! (`#[derive(LogicInterface)]`) and used as one port field at every level
//! that carries it ([`crate::RxCore`], [`crate::NicRx`], [`crate::NicCore`]).
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
