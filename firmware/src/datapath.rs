//! The seam between the engine's decisions and the per-packet work.
//!
//! The engine decides everything (QP state, what to send, on which path,
//! when to retransmit, completions); the per-packet work is done by one of
//! two data paths:
//!
//! - [`Datapath::Software`]: the engine itself. [`Nic::handle_datagram`]
//!   checks, places and tracks every received datagram and
//!   [`Nic::poll_transmit`] builds every datagram, payload included.
//! - [`Datapath::Hardware`]: the NIC's RTL. The RTL checks every datagram,
//!   places WRITE, WRITE_IMM, SEND and READ-response payloads, tracks the
//!   paths and generates the ACKs; the firmware learns of each datagram from
//!   its verdict event ([`Nic::handle_placed`]) and receives the bytes only
//!   of the packets the RTL passes up (ACKs, NACKs, READ requests, CM:
//!   [`Nic::handle_datagram`]). On the transmit side
//!   [`Nic::poll_hardware`] returns a [`TxDescriptor`] for every data packet
//!   and PROBE (the RTL builds the frame and fetches the payload), and a
//!   sealed datagram only for what the RTL does not build (NACK,
//!   DISCONNECT: the RTL frames it). The engine never sends an ACK and
//!   never touches a payload byte.
//!
//! Both run the same decision code: the hardware data path only replaces
//! the memory checks and writes of a received packet by the RTL's verdict,
//! and the payload read and sealing of a transmitted one by a descriptor.
//!
//! [`Nic::handle_datagram`]: crate::Nic::handle_datagram
//! [`Nic::handle_placed`]: crate::Nic::handle_placed
//! [`Nic::poll_transmit`]: crate::Nic::poll_transmit
//! [`Nic::poll_hardware`]: crate::Nic::poll_hardware

use core::net::IpAddr;

use metaroce_proto::{Flags, Opcode, Repr};

use crate::Transmit;
use crate::path::{TableOp, TableOutcome};

/// Streams per QP whose MSN head the RTL keeps for its MSN window (spec
/// §6.5; `metaroce_hdl`'s `rx_place::MSN_STREAMS`, which the host driver
/// checks against this at compile time): the most streams a QP may have on
/// [`Datapath::Hardware`].
pub const HW_MAX_STREAMS: usize = 16;

/// Who does the per-packet work (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Datapath {
    /// The engine: checks, placement, ACKs and datagram building in software.
    #[default]
    Software,
    /// The NIC's RTL: the engine consumes verdict events and emits descriptors.
    Hardware,
}

/// The RTL's decision on a received message packet, as far as the engine
/// needs it: the memory and receive checks it made instead of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwVerdict {
    /// Accepted and placed (WRITE, WRITE_IMM, SEND, SEND_IMM, READ_RESP).
    Placed,
    /// The connection PSN was accepted before: nothing placed.
    Duplicate,
    /// The rkey, protection domain, bounds or access check failed.
    RemoteAccess,
    /// No posted receive for the packet's receive index.
    ReceiverNotReady,
    /// A SEND longer than its receive.
    InvalidRequest,
    /// The receive's lkey check failed.
    RemoteOperational,
    /// A new READ response with no outstanding READ, or one that does not
    /// fit it (length, range): dropped before it is path-tracked.
    UnexpectedResponse,
    /// A READ response matched to its READ whose lkey check failed: the
    /// READ fails.
    BadResponse,
}

/// A received message packet the RTL checked (and, if [`HwVerdict::Placed`],
/// placed): the header fields of its verdict event. The RTL checked the
/// framing, the ICRC and that it comes from the QP's peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedPacket {
    /// The RTL's verdict.
    pub verdict: HwVerdict,
    /// Opcode (a message opcode: WRITE … READ_RESP).
    pub opcode: Opcode,
    /// Header flags.
    pub flags: Flags,
    /// Destination QPN (this NIC's QP).
    pub dst_qpn: u32,
    /// Stream.
    pub stream: u16,
    /// Path index.
    pub path: u16,
    /// Connection PSN.
    pub conn_psn: u32,
    /// Path PSN.
    pub path_psn: u32,
    /// The sender's timestamp.
    pub timestamp: u64,
    /// Message sequence number.
    pub msn: u32,
    /// Posted-receive index.
    pub recv_idx: u32,
    /// Message length.
    pub msg_len: u32,
    /// Offset of the payload in the message.
    pub offset: u32,
    /// Immediate.
    pub imm: u32,
    /// Payload bytes (placed by the RTL, never seen by the engine).
    pub payload_len: u32,
    /// UDP source port (the sender's path entropy).
    pub src_port: u16,
    /// The IP ECN field was CE.
    pub ecn_ce: bool,
}

/// A packet for the RTL to build: its headers, where its payload is in host
/// memory, and its addressing. The RTL fetches the payload, writes the UDP
/// source port and computes the ICRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxDescriptor {
    /// Base header and MSG extension (or none, for a PROBE).
    pub repr: Repr,
    /// Host address of the payload.
    pub payload_addr: u64,
    /// Payload bytes (0: nothing to fetch).
    pub payload_len: u32,
    /// UDP source port: the path's entropy.
    pub src_port: u16,
    /// Destination IP address.
    pub dst_ip: IpAddr,
    /// UDP destination port.
    pub dst_port: u16,
    /// Send as ECN-capable (ECT(0)).
    pub ecn_capable: bool,
}

/// What [`Nic::poll_hardware`](crate::Nic::poll_hardware) hands the RTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwTransmit {
    /// A data packet or PROBE, built by the RTL.
    Descriptor(TxDescriptor),
    /// A datagram the firmware built whole in the caller's buffer (NACK,
    /// DISCONNECT, and the atomics' data packets: FETCH_ADD, COMPARE_SWAP,
    /// ATOMIC_RESP, whose payload is a value, not host memory): the RTL only
    /// frames it (Ethernet, IP, UDP).
    Datagram(Transmit),
}

/// An operation for the NIC's TX table, from
/// [`Nic::poll_table_op`](crate::Nic::poll_table_op).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableRequest {
    /// The QP.
    pub qpn: u32,
    /// Its path.
    pub path: u16,
    /// The operation.
    pub op: TableOp,
}

/// What the NIC's TX table finished for one path, given to
/// [`Nic::handle_table_result`](crate::Nic::handle_table_result).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TableDone {
    /// An operation from [`Nic::poll_table_op`](crate::Nic::poll_table_op), with its result.
    Op(TableOp, TableOutcome),
    /// The NIC's ACK receiver applied a received ACK (its `Ack` and
    /// `Feedback`): the data packets and bytes it acknowledged.
    AckApplied {
        /// Data packets acknowledged.
        pkts: u32,
        /// Data bytes acknowledged.
        bytes: u32,
    },
}
