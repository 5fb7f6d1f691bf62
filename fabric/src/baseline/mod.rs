//! Baseline RDMA transports: RoCEv2 (go-back-N + DCQCN) and IRN (selective
//! repeat + BDP flow control). Both run RDMA WRITE messages of a fixed size
//! back to back on one path per QP and count requester-side completions.
//! Parameters and their public sources are in `docs/baselines.md`.

pub mod dcqcn;
pub mod irn;
pub mod nic;
pub mod roce;

use crate::packet::HostId;
use crate::time::SimTime;

/// RoCEv2 UDP destination port.
pub const ROCE_UDP_PORT: u16 = 4791;
/// Ethernet framing per packet on the wire: header 14 + FCS 4 + preamble 8
/// + inter-frame gap 12.
pub const ETHERNET_FRAMING_BYTES: u32 = 38;
/// IPv4 20 + UDP 8 + BTH 12 + ICRC 4.
pub const ROCE_BASE_HEADER_BYTES: u32 = 44;
/// RDMA extended transport header (virtual address, rkey, length).
pub const RETH_BYTES: u32 = 16;
/// ACK extended transport header.
pub const AETH_BYTES: u32 = 4;
/// CNP payload (reserved bytes after the BTH).
pub const CNP_PAYLOAD_BYTES: u32 = 16;

/// Wire bytes of a data packet with `payload` bytes.
pub fn data_wire_bytes(payload: u32, with_reth: bool) -> u32 {
    ETHERNET_FRAMING_BYTES
        + ROCE_BASE_HEADER_BYTES
        + if with_reth { RETH_BYTES } else { 0 }
        + payload
}

/// Wire bytes of an ACK or NAK.
pub fn ack_wire_bytes() -> u32 {
    ETHERNET_FRAMING_BYTES + ROCE_BASE_HEADER_BYTES + AETH_BYTES
}

/// Wire bytes of a CNP.
pub fn cnp_wire_bytes() -> u32 {
    ETHERNET_FRAMING_BYTES + ROCE_BASE_HEADER_BYTES + CNP_PAYLOAD_BYTES
}

/// One QP that writes messages from `src` to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// QP number, unique in the simulation (also indexes receiver state).
    pub qpn: u32,
    /// Requester host.
    pub src: HostId,
    /// Responder host.
    pub dst: HostId,
    /// Fixed UDP source port of the QP (its single ECMP path).
    pub src_port: u16,
    /// Size of every RDMA WRITE message.
    pub message_bytes: u64,
    /// When the QP starts posting.
    pub start: SimTime,
    /// Messages to send in total (`None`: back to back forever).
    pub message_limit: Option<u64>,
    /// What message `k` waits for, if anything (see [`Gate`]).
    pub gate: Option<Gate>,
}

/// What a gated flow's messages wait for. Gate flows must end at the gated
/// flow's source host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Message `k` starts once the flow with this QPN has delivered `k`
    /// messages (a ring step waits for the previous step's data).
    After(u32),
    /// Message `k` starts once the flow with this QPN has delivered `k + 1`
    /// messages (a response waits for its request).
    RespondsTo(u32),
    /// Message `k` starts once every flow ending at this flow's source has
    /// delivered `k` messages (a barrier: the next job starts when the last
    /// object of the previous one has arrived).
    AllInbound,
}

impl Gate {
    /// The QPN of the one flow this gate waits for, if it waits for one.
    pub fn flow(self) -> Option<u32> {
        match self {
            Gate::After(qpn) | Gate::RespondsTo(qpn) => Some(qpn),
            Gate::AllInbound => None,
        }
    }
}

impl FlowSpec {
    /// An ungated flow of back-to-back messages from time zero.
    pub fn unlimited(
        qpn: u32,
        src: HostId,
        dst: HostId,
        src_port: u16,
        message_bytes: u64,
    ) -> Self {
        Self {
            qpn,
            src,
            dst,
            src_port,
            message_bytes,
            start: 0,
            message_limit: None,
            gate: None,
        }
    }

    /// Messages this flow may have started, given `gate_delivered` messages
    /// delivered by its gate flow (for [`Gate::AllInbound`], the fewest
    /// delivered by any flow ending at the source; ignored without a gate).
    pub fn messages_allowed(&self, gate_delivered: u64) -> u64 {
        let gated = match self.gate {
            Some(Gate::After(_) | Gate::AllInbound) => gate_delivered.saturating_add(1),
            Some(Gate::RespondsTo(_)) => gate_delivered,
            None => u64::MAX,
        };
        gated.min(self.message_limit.unwrap_or(u64::MAX))
    }
}

/// Splits back-to-back messages of a fixed size into MTU packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageLayout {
    message_bytes: u64,
    mtu_bytes: u32,
    packets_per_message: u32,
}

impl MessageLayout {
    /// Messages of `message_bytes` in packets of at most `mtu_bytes`
    /// (both at least 1).
    pub fn new(message_bytes: u64, mtu_bytes: u32) -> Self {
        let message_bytes = message_bytes.max(1);
        let mtu_bytes = mtu_bytes.max(1);
        let packets = message_bytes.div_ceil(u64::from(mtu_bytes));
        Self {
            message_bytes,
            mtu_bytes,
            packets_per_message: u32::try_from(packets).unwrap_or(u32::MAX),
        }
    }

    /// Packets per message.
    pub fn packets_per_message(&self) -> u32 {
        self.packets_per_message
    }

    /// Bytes per message.
    pub fn message_bytes(&self) -> u64 {
        self.message_bytes
    }

    /// Payload bytes of the packet with `psn`.
    pub fn payload(&self, psn: u32) -> u32 {
        let offset = psn % self.packets_per_message;
        if offset + 1 == self.packets_per_message {
            let before = u64::from(offset) * u64::from(self.mtu_bytes);
            (self.message_bytes - before) as u32
        } else {
            self.mtu_bytes
        }
    }

    /// Whether `psn` starts a message.
    pub fn is_first(&self, psn: u32) -> bool {
        psn % self.packets_per_message == 0
    }

    /// Whether `psn` ends a message.
    pub fn is_last(&self, psn: u32) -> bool {
        psn % self.packets_per_message + 1 == self.packets_per_message
    }

    /// PSNs of the first `messages` messages (saturating).
    pub fn psns_of(&self, messages: u64) -> u32 {
        u32::try_from(messages.saturating_mul(u64::from(self.packets_per_message)))
            .unwrap_or(u32::MAX)
    }

    /// Messages fully covered by PSNs below `cumulative_psn`.
    pub fn messages_below(&self, cumulative_psn: u32) -> u64 {
        u64::from(cumulative_psn / self.packets_per_message)
    }
}

/// A responder's ACK coalescing: an ACK every `every` packets, or sooner
/// when the caller says so (a message end, a filled gap).
#[derive(Clone, Debug)]
pub(crate) struct AckBatch {
    every: u32,
    since: u32,
}

impl AckBatch {
    /// An ACK every `every` packets (at least 1).
    pub(crate) fn new(every: u32) -> Self {
        Self {
            every: every.max(1),
            since: 0,
        }
    }

    /// Counts a packet; true when an ACK goes out for it now (`now`, or the
    /// batch is full), and the count starts over.
    pub(crate) fn count(&mut self, now: bool) -> bool {
        self.since += 1;
        if now || self.since >= self.every {
            self.since = 0;
            true
        } else {
            false
        }
    }

    /// Starts the count over (another reply went out).
    pub(crate) fn restart(&mut self) {
        self.since = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_splits_messages() {
        let layout = MessageLayout::new(10_000, 4096);
        assert_eq!(layout.packets_per_message(), 3);
        assert_eq!(layout.payload(0), 4096);
        assert_eq!(layout.payload(2), 10_000 - 8192);
        assert!(layout.is_first(3) && layout.is_last(5));
        assert_eq!(layout.messages_below(6), 2);
    }
}
