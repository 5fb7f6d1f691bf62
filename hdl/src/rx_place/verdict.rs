//! The receive core's verdict codes.

/// Verdict codes (`m_ev_code`); see the module docs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Verdict {
    /// Accepted and placed (WRITE, WRITE_IMM, SEND, SEND_IMM, READ_RESP).
    Placed = 0,
    /// Parser: truncated.
    Truncated = 1,
    /// Parser: bad version.
    BadVersion = 2,
    /// Parser: unknown opcode.
    BadOpcode = 3,
    /// Parser: payload on an opcode without one; or a new message packet
    /// whose MSN is before its stream's MSN head (a completed message).
    /// The engine counts both as `bad_format`.
    UnexpectedPayload = 4,
    /// Parser: ICRC mismatch.
    BadIcrc = 5,
    /// No QP with the destination QPN.
    UnknownQp = 6,
    /// QP is not receiving (neither RTR nor RTS).
    QpState = 7,
    /// Source QPN or IP is not the connected peer.
    WrongPeer = 8,
    /// Path id ≥ 64.
    BadPath = 9,
    /// Another opcode, or a SEND/SEND_IMM/WRITE_IMM of a stream without a
    /// ring ([`RQ_STREAMS`](super::RQ_STREAMS) or more): handed to the firmware. Also a READ
    /// request, an atomic request or an ATOMIC_RESP that passed every check
    /// here: tracked, its connection PSN accepted, then handed up.
    Firmware = 10,
    /// Stream id beyond the QP's streams.
    BadStream = 11,
    /// Connection PSN beyond the receive window.
    ConnWindow = 12,
    /// Payload longer than the MTU or than the message.
    BadLength = 13,
    /// Connection PSN already accepted.
    Duplicate = 14,
    /// rkey, PD, bounds or access check failed.
    RemoteAccess = 15,
    /// Path PSN 2^30 or more ahead of the path's cumulative PSN.
    PathWindow = 16,
    /// PROBE: path-tracked and acknowledged.
    Probe = 17,
    /// SEND or WRITE_IMM: no posted receive for its `recv_idx` (the firmware sends an RNR NACK).
    Rnr = 18,
    /// SEND: longer than its receive; atomic request: address not 8-byte
    /// aligned (invalid-request NACK).
    InvalidRequest = 19,
    /// SEND: the receive's lkey check failed (remote-operational NACK).
    RemoteOperational = 20,
    /// READ_RESP with a new connection PSN: no outstanding READ with its
    /// (stream, MSN), or it does not fit the READ (length, range); dropped
    /// untracked, its PSN not accepted.
    UnexpectedResponse = 21,
    /// READ_RESP matched to its READ: its lkey check failed; the READ fails,
    /// the QP goes to ERR.
    BadResponse = 22,
    /// A new message packet (not a response) whose MSN is [`CONN_WINDOW`](super::CONN_WINDOW)
    /// or more after its stream's MSN head ([`MSN_HEADS`](super::cfg::MSN_HEADS)): dropped
    /// untracked, PSN not accepted (spec §6.5).
    MsnWindow = 23,
}

impl Verdict {
    /// Every verdict, by code.
    pub const ALL: [Verdict; 24] = [
        Self::Placed,
        Self::Truncated,
        Self::BadVersion,
        Self::BadOpcode,
        Self::UnexpectedPayload,
        Self::BadIcrc,
        Self::UnknownQp,
        Self::QpState,
        Self::WrongPeer,
        Self::BadPath,
        Self::Firmware,
        Self::BadStream,
        Self::ConnWindow,
        Self::BadLength,
        Self::Duplicate,
        Self::RemoteAccess,
        Self::PathWindow,
        Self::Probe,
        Self::Rnr,
        Self::InvalidRequest,
        Self::RemoteOperational,
        Self::UnexpectedResponse,
        Self::BadResponse,
        Self::MsnWindow,
    ];

    /// The verdict with code `code` (5 bits).
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }
}
