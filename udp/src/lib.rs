//! Real-socket UDP plumbing for the software NIC, the relay and the simulated
//! board's UDP bridge.
//!
//! Two layers:
//!
//! * [`BatchSocket`]: one non-blocking UDP socket with batched I/O — `sendmmsg` with
//!   optional UDP GSO (`UDP_SEGMENT` cmsg) for runs of equal-size datagrams, `recvmmsg`
//!   with optional UDP GRO (`UDP_GRO`), a GRO read split back into datagrams, and each
//!   datagram's ECN bits (`IP_RECVTOS` / `IPV6_RECVTCLASS`) and source address reported.
//!   Receive buffers are preallocated ([`RxBatch`]) and reused, send headers live on the
//!   stack: no allocation per packet.
//! * [`Endpoint`]: the NIC's multi-port endpoint — one send socket per path entropy value
//!   (the UDP source port) and one receive socket on the NIC's fixed destination port.
//!
//! # How receive works
//!
//! A MetaRoCE NIC sends *from* port = path entropy *to* the peer's fixed destination port,
//! so all traffic for a NIC arrives on its destination port, whatever path it took. The
//! endpoint therefore receives on **one** socket bound to `(local_ip, listen_port)`; the
//! source port of each datagram (the sender's entropy) is reported with it. The K entropy
//! sockets only send: nothing is addressed to them, and their receive buffers are shrunk
//! to the kernel minimum so a stray datagram costs nothing. `SO_REUSEPORT` is not needed.
//!
//! # ECN
//!
//! Every socket sets a default outgoing ECN codepoint (ECT(0) unless configured) with
//! `IP_TOS` / `IPV6_TCLASS`; a [`TxPacket`] may override it per datagram (sent as a
//! per-message `IP_TOS` / `IPV6_TCLASS` cmsg — the relay uses this to forward CE marks).
//!
//! # Offloads
//!
//! GSO and GRO are optional. GSO is probed at bind time (`UDP_SEGMENT` socket option) and
//! switched off for good on a socket the first time the kernel refuses a segmented send
//! (`EIO`, `EINVAL`, `EMSGSIZE`, `ENOPROTOOPT`, `EOPNOTSUPP`), whose datagrams are then
//! re-sent one by one. GRO is off when the `UDP_GRO` option is refused.

mod endpoint;
mod socket;
mod sys;

use std::io;

pub use endpoint::{Endpoint, EndpointConfig, Readiness};
pub use socket::{
    BatchSocket, Datagram, Datagrams, MAX_BATCH, PollSet, RxBatch, SocketOptions, TxPacket,
};

/// Most datagrams merged into one GSO send (the kernel's limit is 64 on older kernels).
pub const MAX_GSO_SEGMENTS: usize = 64;
/// Most payload bytes in one GSO send (below the 65 507-byte UDP/IPv4 payload limit).
pub const MAX_GSO_BYTES: usize = 65_000;
/// Receive buffer size that can hold any GRO-merged read (a UDP payload is below 64 KiB).
pub const GRO_BUFFER_SIZE: usize = 65_536;

/// Errors of the UDP layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A system call failed; `op` names it.
    #[error("{op}: {source}")]
    Os {
        /// The operation that failed (e.g. `"bind"`, `"sendmmsg"`).
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The configuration or a call argument is not usable.
    #[error("invalid argument: {0}")]
    Invalid(&'static str),
}

impl Error {
    /// Wraps an OS error with the name of the failed operation.
    pub fn os(op: &'static str, source: io::Error) -> Self {
        Error::Os { op, source }
    }

    /// The OS error, if this is one.
    pub fn os_error(&self) -> Option<&io::Error> {
        match self {
            Error::Os { source, .. } => Some(source),
            Error::Invalid(_) => None,
        }
    }
}

/// Result of the UDP layer.
pub type Result<T> = std::result::Result<T, Error>;

/// The two ECN bits of the IP TOS / traffic class byte (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Ecn {
    /// `00`: not ECN-capable.
    #[default]
    NotEct,
    /// `01`: ECN-capable, ECT(1).
    Ect1,
    /// `10`: ECN-capable, ECT(0) — what MetaRoCE data packets carry.
    Ect0,
    /// `11`: congestion experienced.
    Ce,
}

impl Ecn {
    /// The ECN codepoint of a TOS / traffic class byte (its two low bits).
    pub fn from_tos(tos: u8) -> Self {
        match tos & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two-bit codepoint (0..=3), as it sits in the TOS byte.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// True for ECT(0), ECT(1) and CE: a router may mark the packet instead of dropping it.
    pub fn is_ecn_capable(self) -> bool {
        self != Ecn::NotEct
    }
}
