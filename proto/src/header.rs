//! Fixed header layouts. Each struct is the exact wire image of its header
//! (big-endian fields, no padding), so offsets are written once, here.

use zerocopy::network_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The 32-byte base header that starts every packet.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq,
)]
#[repr(C)]
pub struct BaseHeader {
    /// Wire version, [`crate::VERSION`].
    pub version: u8,
    /// [`crate::Opcode`] value.
    pub opcode: u8,
    /// [`crate::Flags`] bits.
    pub flags: U16,
    /// Destination QP (connection) number at the receiver.
    pub dst_qpn: U32,
    /// Sender's QP number.
    pub src_qpn: U32,
    /// Stream id within the connection.
    pub stream: U16,
    /// Sender's path index; on an ACK, the path being acknowledged.
    pub path: U16,
    /// Connection-level PSN, kept across retransmissions.
    pub conn_psn: U32,
    /// Per-path PSN, fresh on every transmission.
    pub path_psn: U32,
    /// Sender's clock in nanoseconds when the packet left.
    pub timestamp: U64,
}

/// The 32-byte message extension of WRITE, WRITE_IMM, SEND, SEND_IMM,
/// READ_REQ and READ_RESP.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq,
)]
#[repr(C)]
pub struct MsgHeader {
    /// Message sequence number within the stream.
    pub msn: U32,
    /// Index of the posted receive this message consumes.
    pub recv_idx: U32,
    /// Total message length in bytes.
    pub msg_len: U32,
    /// Offset of this packet's payload within the message.
    pub offset: U32,
    /// Receiver address of this packet's first payload byte (WRITE) or read start (READ_REQ).
    pub remote_va: U64,
    /// Remote key naming the memory region at the receiver.
    pub rkey: U32,
    /// Immediate data (WRITE_IMM, SEND_IMM); a READ_REQ's `resp_psn` (spec §3.4).
    pub imm: U32,
}

/// The 64-byte ACK extension.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq,
)]
#[repr(C)]
pub struct AckHeader {
    /// Next connection PSN not yet accepted.
    pub conn_cum: U32,
    /// Next path PSN not yet received on the acknowledged path.
    pub path_cum: U32,
    /// Bit i set: path PSN `path_cum + 1 + i` received.
    pub sack: [u8; 32],
    /// Timestamp of the newest packet that caused this ACK.
    pub echo_ts: U64,
    /// CE-marked packets received on this path (wrapping).
    pub ce_count: U32,
    /// Receiver's fair-share rate for this sender in Mbit/s; 0 means no limit.
    pub rate_hint: U32,
    /// Packets the sender may have beyond `conn_cum`.
    pub credit: U32,
    /// Packets received on this path (wrapping).
    pub rx_count: U32,
}

/// The 16-byte NACK extension.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq,
)]
#[repr(C)]
pub struct NackHeader {
    /// [`crate::NackReason`] value.
    pub reason: u8,
    /// Zero on send, ignored on receive.
    pub reserved: [u8; 3],
    /// Connection PSN of the rejected packet.
    pub conn_psn: U32,
    /// Message sequence number of the rejected message.
    pub msn: U32,
    /// Reason-specific detail (RNR: retry delay in microseconds).
    pub detail: U32,
}

/// The 32-byte connection-management extension of CONNECT, CONNECT_ACK and DISCONNECT.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq,
)]
#[repr(C)]
pub struct CmHeader {
    /// Initial connection PSN the sender will use.
    pub initial_psn: U32,
    /// Number of paths the sender will use.
    pub paths: U16,
    /// Number of streams.
    pub streams: U16,
    /// Largest payload per packet in bytes.
    pub mtu: U32,
    /// Receive window in packets.
    pub credit: U32,
    /// Line rate in Mbit/s.
    pub rate_mbps: U32,
    /// Zero on send, ignored on receive.
    pub reserved: [u8; 12],
}

/// The 16-byte connection part of a MULTI_ACK (spec §3.11); its path entries
/// ([`AckEntryHeader`], each followed by its SACK bytes) follow it.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq,
)]
#[repr(C)]
pub struct MultiAckHeader {
    /// Next connection PSN not yet accepted.
    pub conn_cum: U32,
    /// Packets the sender may have beyond `conn_cum`.
    pub credit: U32,
    /// Receiver's fair-share rate for this sender in Mbit/s; 0 means no limit.
    pub rate_hint: U32,
    /// Number of path entries that follow, 1..=64.
    pub count: u8,
    /// Zero on send, ignored on receive.
    pub reserved: [u8; 3],
}

/// The fixed 24 bytes of one path entry of a MULTI_ACK (spec §3.11); its
/// first `sack_len` SACK bytes follow it.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq,
)]
#[repr(C)]
pub struct AckEntryHeader {
    /// The acknowledged path, below 64.
    pub path: u8,
    /// Bit 0: ECE (as the ACK flag); the other bits are reserved.
    pub flags: u8,
    /// SACK bytes that follow, 0..=32 (the bitmap's bytes after them are 0).
    pub sack_len: u8,
    /// Zero on send, ignored on receive.
    pub reserved: u8,
    /// Next path PSN not yet received on the path.
    pub path_cum: U32,
    /// The largest timestamp of any packet marked on the path.
    pub echo_ts: U64,
    /// CE-marked packets received on the path (wrapping).
    pub ce_count: U32,
    /// Packets received on the path (wrapping).
    pub rx_count: U32,
}

const _: () = {
    assert!(size_of::<BaseHeader>() == crate::BASE_LEN);
    assert!(size_of::<MsgHeader>() == 32);
    assert!(size_of::<AckHeader>() == 64);
    assert!(size_of::<NackHeader>() == 16);
    assert!(size_of::<CmHeader>() == 32);
    assert!(size_of::<MultiAckHeader>() == 16);
    assert!(size_of::<AckEntryHeader>() == 24);
};
