//! The host-side transport interface.
//!
//! The host NIC is *pull-based*, the same shape as the sans-IO MetaRoCE
//! engine: whenever an egress port is idle the host asks its transport for
//! the next packet ([`Transport::poll_transmit`]); when it has none, the host
//! asks for the transport's next deadline ([`Transport::poll_timeout`]) and
//! schedules a wake-up. Arrivals ([`Transport::handle_packet`]) and timers
//! ([`Transport::handle_timeout`]) re-trigger the pull.
//!
//! Times are simulator picoseconds; an adapter for the nanosecond engine
//! converts with [`crate::time::to_ns`] / [`crate::time::from_ns`], reads
//! [`Packet::payload`] and writes into [`Packet::payload_buffer`], and maps
//! [`crate::HostId::ipv4`] addresses.

use crate::packet::Packet;
use crate::time::SimTime;
use metaroce_firmware::PortsReady;

/// A transport endpoint running on one host (it may own many connections).
pub trait Transport {
    /// A packet addressed to this host arrived at `now`. The host returns the
    /// packet to the pool afterwards; keep no reference to it.
    fn handle_packet(&mut self, now: SimTime, packet: &Packet);

    /// An egress port is free at `now`. Fill `packet` (its `src` is already
    /// set; fill `dst`, ports, `ecn`, `wire_bytes` and `header` or the payload)
    /// and return `true`, or return `false` when nothing may be sent now.
    fn poll_transmit(&mut self, now: SimTime, packet: &mut Packet) -> bool;

    /// [`Transport::poll_transmit`] on a host with several NIC ports of which
    /// only `ports` can take a packet now (a packet's port is its source port
    /// modulo the port count). A transport that cannot choose a port ignores
    /// it (the default).
    fn poll_transmit_on(&mut self, now: SimTime, packet: &mut Packet, ports: PortsReady) -> bool {
        let _ = ports;
        self.poll_transmit(now, packet)
    }

    /// The earliest time at which the transport has a timer to run or a
    /// paced packet to release, if any.
    fn poll_timeout(&mut self) -> Option<SimTime>;

    /// Runs every timer due at or before `now`.
    fn handle_timeout(&mut self, now: SimTime);

    /// Counters so far, summed over the transport's connections.
    fn stats(&self) -> TransportStats;

    /// Latency of every completed message so far: from its first packet
    /// leaving the NIC to the requester's completion.
    fn message_latencies(&self) -> &[SimTime];

    /// Data packets acknowledged so far on each flow this host sends, as
    /// (flow QPN from [`crate::baseline::FlowSpec::qpn`], packets). Empty
    /// when the transport does not track flows.
    fn flow_acked_packets(&self) -> Vec<(u32, u64)> {
        Vec::new()
    }

    /// When each message of each limited flow ending at this host was
    /// delivered, as (flow QPN, times in message order). Flows without a
    /// message limit are not recorded.
    fn flow_delivery_times(&self) -> Vec<(u32, Vec<SimTime>)> {
        Vec::new()
    }

    /// Bytes of sender state each sending connection holds for its packets
    /// in flight now (one entry per sending flow). Empty when the transport
    /// does not measure it.
    fn inflight_state_bytes(&self) -> Vec<usize> {
        Vec::new()
    }
}

/// Counters every transport reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportStats {
    /// Messages whose completion the application has seen (requester side).
    pub completed_messages: u64,
    /// Application bytes of completed messages.
    pub completed_bytes: u64,
    /// Data packets put on the wire, first transmissions and retransmissions.
    pub data_packets_sent: u64,
    /// Data packets sent again (a PSN below the highest PSN already sent).
    pub retransmitted_packets: u64,
    /// Redundant packets sent before any loss was found (MetaRoCE's tail
    /// copies and PARITY packets, `docs/spec.md` §5.6); not counted in
    /// `retransmitted_packets`.
    pub redundant_packets: u64,
    /// Retransmission timer expiries (MetaRoCE: per-path timeouts).
    pub timeouts: u64,
    /// Loss-recovery episodes started by a NAK / selective NACK (MetaRoCE:
    /// losses found from a SACK gap or by time, without a timeout).
    pub recoveries: u64,
    /// ACK, NAK and CNP packets sent.
    pub control_packets_sent: u64,
    /// Congestion notification packets received.
    pub cnps_received: u64,
    /// Messages fully delivered to this host (responder side).
    pub delivered_messages: u64,
    /// When the last message was delivered to this host.
    pub last_delivery_at: SimTime,
    /// Connections that failed (a Verbs QP moving to ERR).
    pub qp_errors: u64,
    /// Data packets the requester has seen acknowledged (first copies).
    pub packets_acked: u64,
    /// Payload bytes placed in host memory (byte-level transports only).
    pub bytes_placed: u64,
    /// Placed bytes that differed from what the sender sent.
    pub bytes_wrong: u64,
}

impl TransportStats {
    /// Adds `other` into `self`.
    pub fn accumulate(&mut self, other: &TransportStats) {
        self.completed_messages += other.completed_messages;
        self.completed_bytes += other.completed_bytes;
        self.data_packets_sent += other.data_packets_sent;
        self.retransmitted_packets += other.retransmitted_packets;
        self.redundant_packets += other.redundant_packets;
        self.timeouts += other.timeouts;
        self.recoveries += other.recoveries;
        self.control_packets_sent += other.control_packets_sent;
        self.cnps_received += other.cnps_received;
        self.delivered_messages += other.delivered_messages;
        self.last_delivery_at = self.last_delivery_at.max(other.last_delivery_at);
        self.qp_errors += other.qp_errors;
        self.packets_acked += other.packets_acked;
        self.bytes_placed += other.bytes_placed;
        self.bytes_wrong += other.bytes_wrong;
    }
}
