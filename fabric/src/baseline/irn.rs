//! IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018):
//! selective repeat on one path with BDP-sized flow control.
//!
//! The responder keeps out-of-order packets (every IRN packet carries its
//! RETH, so it can be placed directly) and answers each one with a selective
//! NACK carrying the cumulative ACK and the PSN that arrived. The requester
//! treats every unacknowledged PSN below the highest selectively acked one
//! as lost and retransmits each once per recovery episode, before new data.
//! A lost retransmission is recovered by the timeout: RTO_low (100 µs) when
//! at most `low_rto_max_inflight` (3) packets are outstanding, RTO_high
//! (320 µs) otherwise. At most `bdp_cap_packets` PSNs are outstanding.

use std::collections::VecDeque;

use crate::baseline::AckBatch;
use crate::baseline::nic::{Protocol, ReceiverLogic, Reply, SenderLogic};
use crate::packet::{RdmaHeader, RdmaOpcode};
use crate::time::{SimTime, from_us};
use crate::transport::TransportStats;

/// IRN parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrnConfig {
    /// BDP flow-control cap on outstanding PSNs.
    pub bdp_cap_packets: u32,
    /// Timeout when few packets are outstanding.
    pub rto_low: SimTime,
    /// Timeout otherwise.
    pub rto_high: SimTime,
    /// Use `rto_low` when at most this many packets are outstanding.
    pub low_rto_max_inflight: u32,
    /// The responder ACKs in-order data every this many packets, at message
    /// ends and whenever it fills a gap.
    pub ack_every_packets: u32,
}

impl IrnConfig {
    /// The paper's settings with a BDP cap of `bdp_cap_packets`.
    pub fn paper(bdp_cap_packets: u32) -> Self {
        Self {
            bdp_cap_packets: bdp_cap_packets.max(1),
            rto_low: from_us(100),
            rto_high: from_us(320),
            low_rto_max_inflight: 3,
            ack_every_packets: 4,
        }
    }
}

/// The IRN protocol (selective repeat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Irn {
    /// Parameters.
    pub config: IrnConfig,
}

impl Protocol for Irn {
    type Sender = SelectiveRepeatSender;
    type Receiver = SelectiveRepeatReceiver;

    fn new_sender(&self) -> SelectiveRepeatSender {
        SelectiveRepeatSender {
            config: self.config,
            oldest_unacked: 0,
            next_new: 0,
            flags: VecDeque::new(),
            lost_below: 0,
            retransmit_cursor: 0,
            recovery_until: None,
            deadline: None,
            new_psn_limit: u32::MAX,
        }
    }

    fn new_receiver(&self) -> SelectiveRepeatReceiver {
        SelectiveRepeatReceiver {
            acks: AckBatch::new(self.config.ack_every_packets),
            expected: 0,
            received_ahead: VecDeque::new(),
        }
    }

    fn reth_on_every_packet(&self) -> bool {
        true
    }
}

const SACKED: u8 = 1;
const RETRANSMITTED: u8 = 2;

/// Selective-repeat requester state.
#[derive(Clone, Debug)]
pub struct SelectiveRepeatSender {
    config: IrnConfig,
    oldest_unacked: u32,
    next_new: u32,
    /// Per outstanding PSN (index 0 = `oldest_unacked`): SACKED / RETRANSMITTED.
    flags: VecDeque<u8>,
    /// Unsacked PSNs below this are considered lost.
    lost_below: u32,
    retransmit_cursor: u32,
    recovery_until: Option<u32>,
    deadline: Option<SimTime>,
    new_psn_limit: u32,
}

impl SelectiveRepeatSender {
    fn may_send_new(&self) -> bool {
        self.outstanding() < self.config.bdp_cap_packets && self.next_new < self.new_psn_limit
    }

    fn outstanding(&self) -> u32 {
        self.next_new - self.oldest_unacked
    }

    fn rto(&self) -> SimTime {
        if self.outstanding() <= self.config.low_rto_max_inflight {
            self.config.rto_low
        } else {
            self.config.rto_high
        }
    }

    fn next_lost(&self) -> Option<u32> {
        let start = self.retransmit_cursor.max(self.oldest_unacked);
        let end = self.lost_below.min(self.next_new);
        (start..end).find(|&psn| {
            self.flags
                .get((psn - self.oldest_unacked) as usize)
                .is_some_and(|flag| flag & (SACKED | RETRANSMITTED) == 0)
        })
    }

    fn acknowledge(&mut self, now: SimTime, cumulative: u32) {
        let cumulative = cumulative.min(self.next_new);
        if cumulative <= self.oldest_unacked {
            return;
        }
        let advanced = (cumulative - self.oldest_unacked) as usize;
        self.flags.drain(..advanced.min(self.flags.len()));
        self.oldest_unacked = cumulative;
        if self.recovery_until.is_some_and(|end| cumulative >= end) {
            self.recovery_until = None;
        }
        self.deadline = (self.outstanding() > 0).then(|| now + self.rto());
    }
}

impl SenderLogic for SelectiveRepeatSender {
    fn can_send(&self) -> bool {
        self.may_send_new() || self.next_lost().is_some()
    }

    fn next_to_send(&mut self, now: SimTime) -> Option<(u32, bool)> {
        let choice = if let Some(psn) = self.next_lost() {
            if let Some(flag) = self.flags.get_mut((psn - self.oldest_unacked) as usize) {
                *flag |= RETRANSMITTED;
            }
            self.retransmit_cursor = psn + 1;
            (psn, true)
        } else if self.may_send_new() {
            self.flags.push_back(0);
            self.next_new += 1;
            (self.next_new - 1, false)
        } else {
            return None;
        };
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto());
        }
        Some(choice)
    }

    fn on_feedback(&mut self, now: SimTime, header: &RdmaHeader, stats: &mut TransportStats) {
        self.acknowledge(now, header.ack_psn);
        if header.opcode != RdmaOpcode::SelectiveNack {
            return;
        }
        let psn = header.psn;
        if psn < self.oldest_unacked || psn >= self.next_new {
            return;
        }
        if let Some(flag) = self.flags.get_mut((psn - self.oldest_unacked) as usize) {
            *flag |= SACKED;
        }
        self.lost_below = self.lost_below.max(psn);
        if self.recovery_until.is_none() {
            self.recovery_until = Some(self.next_new);
            stats.recoveries += 1;
        }
    }

    fn cumulative_ack(&self) -> u32 {
        self.oldest_unacked
    }

    fn timer(&self) -> Option<SimTime> {
        self.deadline
    }

    fn on_timer(&mut self, now: SimTime, stats: &mut TransportStats) {
        if self.outstanding() == 0 {
            self.deadline = None;
            return;
        }
        stats.timeouts += 1;
        for flag in &mut self.flags {
            *flag &= !RETRANSMITTED;
        }
        self.lost_below = self.next_new;
        self.retransmit_cursor = self.oldest_unacked;
        self.recovery_until = Some(self.next_new);
        self.deadline = Some(now + self.rto());
    }

    fn set_new_psn_limit(&mut self, limit: u32) {
        self.new_psn_limit = limit;
    }
}

/// Largest distance ahead of the cumulative ACK the responder tracks.
const MAX_TRACKED_AHEAD: u32 = 1 << 20;

/// Selective-repeat responder state.
#[derive(Clone, Debug)]
pub struct SelectiveRepeatReceiver {
    acks: AckBatch,
    expected: u32,
    /// Index i: whether PSN `expected + i` has arrived.
    received_ahead: VecDeque<bool>,
}

impl ReceiverLogic for SelectiveRepeatReceiver {
    fn on_data(&mut self, psn: u32, last_of_message: bool) -> Option<Reply> {
        if psn < self.expected {
            return Some(Reply::Ack(self.expected));
        }
        let offset = psn - self.expected;
        if offset >= MAX_TRACKED_AHEAD {
            return None;
        }
        if offset > 0 {
            let index = offset as usize;
            if self.received_ahead.len() <= index {
                self.received_ahead.resize(index + 1, false);
            }
            self.received_ahead[index] = true;
            return Some(Reply::SelectiveNack {
                cumulative: self.expected,
                psn,
            });
        }
        self.received_ahead.pop_front();
        self.expected += 1;
        let mut filled_gap = false;
        while self.received_ahead.front() == Some(&true) {
            self.received_ahead.pop_front();
            self.expected += 1;
            filled_gap = true;
        }
        self.acks
            .count(filled_gap || last_of_message)
            .then_some(Reply::Ack(self.expected))
    }

    fn delivered_psns(&self) -> u32 {
        self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn irn() -> Irn {
        Irn {
            config: IrnConfig::paper(8),
        }
    }

    #[test]
    fn receiver_nacks_each_out_of_order_packet_and_acks_filled_gap() {
        let mut receiver = irn().new_receiver();
        assert_eq!(receiver.on_data(0, false), None);
        assert_eq!(
            receiver.on_data(2, false),
            Some(Reply::SelectiveNack {
                cumulative: 1,
                psn: 2
            })
        );
        assert_eq!(
            receiver.on_data(3, false),
            Some(Reply::SelectiveNack {
                cumulative: 1,
                psn: 3
            })
        );
        assert_eq!(receiver.on_data(1, false), Some(Reply::Ack(4)));
    }

    #[test]
    fn sender_retransmits_only_the_hole() {
        let mut sender = irn().new_sender();
        let mut stats = TransportStats::default();
        for _ in 0..5 {
            sender.next_to_send(0);
        }
        let nack = RdmaHeader {
            opcode: RdmaOpcode::SelectiveNack,
            ack_psn: 1,
            psn: 3,
            ..RdmaHeader::default()
        };
        sender.on_feedback(5, &nack, &mut stats);
        assert_eq!(sender.next_to_send(6), Some((1, true)));
        assert_eq!(sender.next_to_send(6), Some((2, true)));
        assert_eq!(sender.next_to_send(6), Some((5, false)));
        assert_eq!(stats.recoveries, 1);
    }

    #[test]
    fn rto_depends_on_outstanding_packets() {
        let mut sender = irn().new_sender();
        sender.next_to_send(0);
        assert_eq!(sender.timer(), Some(from_us(100)));
        for _ in 0..4 {
            sender.next_to_send(0);
        }
        sender.acknowledge(10, 0);
        let ack = RdmaHeader {
            opcode: RdmaOpcode::Ack,
            ack_psn: 1,
            ..RdmaHeader::default()
        };
        sender.on_feedback(10, &ack, &mut TransportStats::default());
        assert_eq!(sender.timer(), Some(10 + from_us(320)));
    }
}
