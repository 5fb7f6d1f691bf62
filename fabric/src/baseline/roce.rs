//! RoCEv2 reliability as ConnectX-class NICs implement it: go-back-N.
//!
//! The responder accepts only the expected PSN. On the first out-of-order
//! packet it sends one NAK (sequence error) naming the expected PSN and then
//! silently drops until that PSN arrives (one NAK per gap, as the IB spec
//! requires). ACKs are coalesced. The requester rewinds to the NAKed PSN and
//! resends everything from there; its retransmission timer (4 ms, doubling
//! on repeated expiry) rewinds to the oldest unacknowledged PSN. At most
//! `window_packets` PSNs are outstanding.

use crate::baseline::AckBatch;
use crate::baseline::nic::{Protocol, ReceiverLogic, Reply, SenderLogic};
use crate::packet::{RdmaHeader, RdmaOpcode};
use crate::time::{SimTime, from_ms};
use crate::transport::TransportStats;

/// RoCEv2 parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoceConfig {
    /// Outstanding-PSN window W: the go-back-N rewind cost per loss.
    pub window_packets: u32,
    /// Initial retransmission timeout.
    pub rto: SimTime,
    /// Largest timeout after doubling.
    pub rto_max: SimTime,
    /// The responder ACKs every this many packets and at each message end.
    pub ack_every_packets: u32,
}

impl RoceConfig {
    /// ConnectX-like defaults with window `window_packets`.
    pub fn connectx(window_packets: u32) -> Self {
        Self {
            window_packets: window_packets.max(1),
            rto: from_ms(4),
            rto_max: from_ms(64),
            ack_every_packets: 4,
        }
    }
}

/// The RoCEv2 protocol (go-back-N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roce {
    /// Parameters.
    pub config: RoceConfig,
}

impl Protocol for Roce {
    type Sender = GoBackNSender;
    type Receiver = GoBackNReceiver;

    fn new_sender(&self) -> GoBackNSender {
        GoBackNSender {
            config: self.config,
            oldest_unacked: 0,
            next_psn: 0,
            highest_sent: 0,
            rto_current: self.config.rto,
            deadline: None,
            new_psn_limit: u32::MAX,
        }
    }

    fn new_receiver(&self) -> GoBackNReceiver {
        GoBackNReceiver {
            acks: AckBatch::new(self.config.ack_every_packets),
            expected: 0,
            nak_sent: false,
        }
    }

    fn reth_on_every_packet(&self) -> bool {
        false
    }
}

/// Go-back-N requester state.
#[derive(Clone, Debug)]
pub struct GoBackNSender {
    config: RoceConfig,
    oldest_unacked: u32,
    next_psn: u32,
    /// One past the highest PSN ever sent.
    highest_sent: u32,
    rto_current: SimTime,
    deadline: Option<SimTime>,
    new_psn_limit: u32,
}

impl GoBackNSender {
    fn acknowledge(&mut self, now: SimTime, cumulative: u32) {
        let cumulative = cumulative.min(self.highest_sent);
        if cumulative > self.oldest_unacked {
            self.oldest_unacked = cumulative;
            self.next_psn = self.next_psn.max(cumulative);
            self.rto_current = self.config.rto;
            self.deadline =
                (self.oldest_unacked < self.highest_sent).then_some(now + self.rto_current);
        }
    }
}

impl SenderLogic for GoBackNSender {
    fn can_send(&self) -> bool {
        self.next_psn - self.oldest_unacked < self.config.window_packets
            && (self.next_psn < self.highest_sent || self.next_psn < self.new_psn_limit)
    }

    fn next_to_send(&mut self, now: SimTime) -> Option<(u32, bool)> {
        if !self.can_send() {
            return None;
        }
        let psn = self.next_psn;
        self.next_psn += 1;
        let retransmission = psn < self.highest_sent;
        self.highest_sent = self.highest_sent.max(self.next_psn);
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto_current);
        }
        Some((psn, retransmission))
    }

    fn on_feedback(&mut self, now: SimTime, header: &RdmaHeader, stats: &mut TransportStats) {
        match header.opcode {
            RdmaOpcode::Ack => self.acknowledge(now, header.ack_psn),
            RdmaOpcode::Nak => {
                self.acknowledge(now, header.ack_psn);
                if header.ack_psn >= self.oldest_unacked && header.ack_psn < self.highest_sent {
                    self.next_psn = header.ack_psn;
                    stats.recoveries += 1;
                    self.deadline = Some(now + self.rto_current);
                }
            }
            _ => {}
        }
    }

    fn cumulative_ack(&self) -> u32 {
        self.oldest_unacked
    }

    fn timer(&self) -> Option<SimTime> {
        self.deadline
    }

    fn on_timer(&mut self, now: SimTime, stats: &mut TransportStats) {
        if self.oldest_unacked >= self.highest_sent {
            self.deadline = None;
            return;
        }
        stats.timeouts += 1;
        self.next_psn = self.oldest_unacked;
        self.rto_current = (self.rto_current * 2).min(self.config.rto_max);
        self.deadline = Some(now + self.rto_current);
    }

    fn set_new_psn_limit(&mut self, limit: u32) {
        self.new_psn_limit = limit;
    }
}

/// Go-back-N responder state.
#[derive(Clone, Debug)]
pub struct GoBackNReceiver {
    acks: AckBatch,
    expected: u32,
    nak_sent: bool,
}

impl ReceiverLogic for GoBackNReceiver {
    fn on_data(&mut self, psn: u32, last_of_message: bool) -> Option<Reply> {
        if psn > self.expected {
            if self.nak_sent {
                return None;
            }
            self.nak_sent = true;
            self.acks.restart();
            return Some(Reply::Nak(self.expected));
        }
        if psn == self.expected {
            self.expected += 1;
            self.nak_sent = false;
        }
        // In-order packets and duplicates (after a timeout) are acknowledged
        // in batches and at every message end.
        self.acks
            .count(last_of_message)
            .then_some(Reply::Ack(self.expected))
    }

    fn delivered_psns(&self) -> u32 {
        self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roce() -> Roce {
        Roce {
            config: RoceConfig::connectx(8),
        }
    }

    #[test]
    fn receiver_naks_once_per_gap() {
        let mut receiver = roce().new_receiver();
        assert_eq!(receiver.on_data(0, false), None);
        assert_eq!(receiver.on_data(2, false), Some(Reply::Nak(1)));
        assert_eq!(receiver.on_data(3, false), None);
        assert_eq!(receiver.on_data(1, true), Some(Reply::Ack(2)));
    }

    #[test]
    fn sender_rewinds_on_nak_and_respects_window() {
        let mut sender = roce().new_sender();
        let mut stats = TransportStats::default();
        let sent: Vec<u32> =
            std::iter::from_fn(|| sender.next_to_send(0).map(|(p, _)| p)).collect();
        assert_eq!(sent, (0..8).collect::<Vec<_>>());
        let nak = RdmaHeader {
            opcode: RdmaOpcode::Nak,
            ack_psn: 3,
            ..RdmaHeader::default()
        };
        sender.on_feedback(10, &nak, &mut stats);
        assert_eq!(sender.cumulative_ack(), 3);
        assert_eq!(sender.next_to_send(11), Some((3, true)));
        assert_eq!(stats.recoveries, 1);
    }
}
