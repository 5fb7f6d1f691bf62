//! The sender's view of one path: its entropy value, PSN space, in-flight
//! packets, RTT, ECN and loss estimates, window and health.

use alloc::boxed::Box;
use alloc::collections::VecDeque;

use metaroce_proto::{SACK_BITS, Sack};

use crate::cc::PathController;
use crate::rtt::RttEstimator;

/// One transmission on a path, waiting for its fate.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Connection PSN carried (unused for probes).
    conn_psn: u32,
    /// Payload bytes.
    len: u32,
    /// Low 32 bits of the send time, ns (ages are taken modulo 2^32).
    sent_ns: u32,
    /// Still unresolved (neither acknowledged nor declared lost).
    live: bool,
    /// A PROBE rather than data.
    probe: bool,
}

/// Bytes of path state per transmission in flight.
pub(crate) const SLOT_BYTES: usize = size_of::<Slot>();

/// Health of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathHealth {
    /// Carrying traffic.
    Active,
    /// Timed out; only probes are sent until one is acknowledged.
    Quarantined {
        /// When the next probe is due.
        probe_due_ns: u64,
        /// Current probe timeout multiplier.
        backoff: u32,
    },
}

/// Per-path statistics, readable by users through the extension API.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathStats {
    /// Current entropy value (UDP source port).
    pub entropy: u16,
    /// Packets sent (first transmissions and retransmissions).
    pub sent: u64,
    /// Retransmissions sent on this path.
    pub retransmitted: u64,
    /// Packets acknowledged.
    pub acked: u64,
    /// Packets declared lost on this path.
    pub lost: u64,
    /// CE marks echoed for this path.
    pub ce_marked: u64,
    /// Times this path moved to a new entropy value.
    pub repaths: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Smoothed RTT, ns (0 before a sample).
    pub srtt_ns: u64,
    /// Congestion window, bytes.
    pub window: u32,
    /// Bytes in flight.
    pub inflight_bytes: u32,
    /// CE fraction EWMA.
    pub ecn_fraction: f32,
    /// Loss fraction EWMA.
    pub loss_fraction: f32,
    /// True while quarantined.
    pub quarantined: bool,
}

/// What an ACK told about one transmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotFate {
    /// Data acknowledged.
    Acked {
        /// Connection PSN.
        conn_psn: u32,
    },
    /// Data lost (a later PSN on the same path arrived).
    Lost {
        /// Connection PSN.
        conn_psn: u32,
    },
}

/// Sender-side path state.
pub struct TxPath {
    entropy: u16,
    next_psn: u32,
    una: u32,
    slots: VecDeque<Slot>,
    inflight_bytes: u32,
    cc: Box<dyn PathController>,
    rtt: RttEstimator,
    /// Fractions scaled by 2^16.
    ecn_ewma: u32,
    loss_ewma: u32,
    samples: u32,
    last_ce_count: u32,
    health: PathHealth,
    rto_deadline: Option<u64>,
    stats: PathStats,
}

const ONE: u32 = 1 << 16;

impl TxPath {
    /// A fresh path using `entropy`.
    pub fn new(entropy: u16, cc: Box<dyn PathController>) -> Self {
        TxPath {
            entropy,
            next_psn: 0,
            una: 0,
            slots: VecDeque::new(),
            inflight_bytes: 0,
            cc,
            rtt: RttEstimator::default(),
            ecn_ewma: 0,
            loss_ewma: 0,
            samples: 0,
            last_ce_count: 0,
            health: PathHealth::Active,
            rto_deadline: None,
            stats: PathStats::default(),
        }
    }

    /// Entropy value (UDP source port) in use.
    pub fn entropy(&self) -> u16 {
        self.entropy
    }

    /// Health.
    pub fn health(&self) -> PathHealth {
        self.health
    }

    /// Bytes in flight.
    pub fn inflight_bytes(&self) -> u32 {
        self.inflight_bytes
    }

    /// The path's retransmission timeout.
    pub fn rto(&self, min_ns: u64, initial_ns: u64) -> u64 {
        self.rtt.rto(min_ns, initial_ns)
    }

    /// Pending RTO deadline.
    pub fn rto_deadline(&self) -> Option<u64> {
        self.rto_deadline
    }

    /// True when an Active path can take a packet of `len` bytes now: its
    /// window has room (an empty path always takes one) and the 256-PSN
    /// receive window is not exhausted.
    pub fn can_send(&self, len: u32) -> bool {
        self.health == PathHealth::Active
            && self.next_psn.wrapping_sub(self.una) < SACK_BITS
            && (self.inflight_bytes == 0 || self.inflight_bytes + len <= self.cc.window())
    }

    /// Records a data transmission and returns its path PSN.
    pub fn on_send_data(
        &mut self,
        conn_psn: u32,
        len: u32,
        retransmission: bool,
        now_ns: u64,
        rto_ns: u64,
    ) -> u32 {
        self.push_slot(
            Slot {
                conn_psn,
                len,
                sent_ns: now_ns as u32,
                live: true,
                probe: false,
            },
            now_ns,
            rto_ns,
        );
        self.inflight_bytes += len;
        self.stats.sent += 1;
        if retransmission {
            self.stats.retransmitted += 1;
        }
        self.next_psn.wrapping_sub(1)
    }

    /// Records a probe transmission and returns its path PSN.
    pub fn on_send_probe(&mut self, now_ns: u64, rto_ns: u64) -> u32 {
        self.push_slot(
            Slot {
                conn_psn: 0,
                len: 0,
                sent_ns: now_ns as u32,
                live: true,
                probe: true,
            },
            now_ns,
            rto_ns,
        );
        if let PathHealth::Quarantined { backoff, .. } = self.health {
            self.health = PathHealth::Quarantined {
                probe_due_ns: now_ns + rto_ns * u64::from(backoff),
                backoff,
            };
        }
        self.next_psn.wrapping_sub(1)
    }

    fn push_slot(&mut self, slot: Slot, now_ns: u64, rto_ns: u64) {
        self.slots.push_back(slot);
        self.next_psn = self.next_psn.wrapping_add(1);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now_ns + rto_ns);
        }
    }

    /// Applies an ACK's cumulative point and SACK bitmap. Reports each
    /// resolved data transmission to `fate`; returns (acked packets, acked bytes).
    pub fn on_ack(
        &mut self,
        path_cum: u32,
        sack: &Sack,
        mut fate: impl FnMut(SlotFate),
    ) -> (u32, u32) {
        let is_acked = |psn: u32| {
            let d = psn.wrapping_sub(path_cum);
            d >= 1 << 31 || (d >= 1 && sack.get(d - 1))
        };
        let highest = match sack.highest() {
            Some(h) => path_cum.wrapping_add(h + 1),
            None => path_cum.wrapping_sub(1),
        };
        let (mut pkts, mut bytes) = (0, 0);
        let mut probe_acked = false;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let psn = self.una.wrapping_add(i as u32);
            if psn.wrapping_sub(highest) < 1 << 31 && psn != highest {
                break; // beyond everything this ACK knows about
            }
            if !slot.live {
                continue;
            }
            if is_acked(psn) {
                slot.live = false;
                if slot.probe {
                    probe_acked = true;
                } else {
                    self.inflight_bytes -= slot.len;
                    pkts += 1;
                    bytes += slot.len;
                    fate(SlotFate::Acked {
                        conn_psn: slot.conn_psn,
                    });
                }
            } else if psn != highest {
                // A later PSN on this in-order path arrived: this one is lost.
                slot.live = false;
                if !slot.probe {
                    self.inflight_bytes -= slot.len;
                    self.stats.lost += 1;
                    self.loss_ewma = ewma(self.loss_ewma, ONE);
                    self.cc.on_loss(0);
                    fate(SlotFate::Lost {
                        conn_psn: slot.conn_psn,
                    });
                }
            }
        }
        if probe_acked {
            self.health = PathHealth::Active;
        }
        self.stats.acked += u64::from(pkts);
        for _ in 0..pkts {
            self.loss_ewma = ewma(self.loss_ewma, 0);
        }
        self.pop_resolved();
        (pkts, bytes)
    }

    /// How long a transmission on this path may stay unacknowledged after a
    /// later-sent packet was delivered elsewhere before it counts as lost:
    /// `max(srtt + 4·rttvar, 5/4·srtt)`; `None` before the first RTT sample.
    fn rack_wait(&self) -> Option<u64> {
        let srtt = self.rtt.srtt()?;
        Some(self.rtt.rto(0, 0).max(srtt + srtt / 4))
    }

    /// How long a transmission sent at `sent_ns` (low 32 bits) may stay
    /// unacknowledged: the RACK wait if a packet sent after it was delivered
    /// (`delivered_sent_ns`), twice that otherwise (a tail loss probe).
    fn rack_allowance(wait: u64, sent_ns: u32, delivered_sent_ns: u64) -> u64 {
        let before = (delivered_sent_ns as u32).wrapping_sub(sent_ns);
        if before > 0 && before < 1 << 31 {
            wait
        } else {
            2 * wait
        }
    }

    /// When the oldest transmission on this path will count as lost by
    /// [`TxPath::on_rack`], given the send time of the newest packet the
    /// peer has acknowledged on any path and of the newest packet sent.
    pub fn rack_deadline(&self, delivered_sent_ns: u64, newest_sent_ns: u64) -> Option<u64> {
        let slot = self.slots.front().filter(|s| s.live && !s.probe)?;
        let wait = self.rack_wait()?;
        let sent = newest_sent_ns - u64::from((newest_sent_ns as u32).wrapping_sub(slot.sent_ns));
        Some(sent + Self::rack_allowance(wait, slot.sent_ns, delivered_sent_ns))
    }

    /// Time-based loss detection across paths (as TCP RACK, with a tail loss
    /// probe), used when the connection has nothing else to send: a
    /// transmission is lost once a packet sent after it was delivered on
    /// some path and it has been out longer than this path's round trip
    /// allows, or once it has been out twice that long in any case. It
    /// catches a loss with no later packet on its own path (the tail of a
    /// burst sprayed one packet per path) in one or two RTTs instead of an
    /// RTO; a needless resend costs only otherwise idle link time.
    /// Reports each loss to `fate`; returns how many there were.
    pub fn on_rack(
        &mut self,
        now_ns: u64,
        delivered_sent_ns: u64,
        mut fate: impl FnMut(SlotFate),
    ) -> u32 {
        let Some(wait) = self.rack_wait() else {
            return 0;
        };
        let now = now_ns as u32;
        let mut lost = 0;
        for slot in self.slots.iter_mut().filter(|s| s.live && !s.probe) {
            let age = u64::from(now.wrapping_sub(slot.sent_ns));
            if age < Self::rack_allowance(wait, slot.sent_ns, delivered_sent_ns) {
                break;
            }
            slot.live = false;
            self.inflight_bytes -= slot.len;
            self.stats.lost += 1;
            self.loss_ewma = ewma(self.loss_ewma, ONE);
            self.cc.on_loss(now_ns);
            lost += 1;
            fate(SlotFate::Lost {
                conn_psn: slot.conn_psn,
            });
        }
        self.pop_resolved();
        if !self.slots.iter().any(|s| s.live) {
            // Nothing left to time out: a stale RTO would quarantine a
            // healthy path.
            self.rto_deadline = None;
        }
        lost
    }

    /// Feeds an RTT sample, the ACK's cumulative CE count and the congestion
    /// controller; re-arms the RTO.
    pub fn on_ack_feedback(
        &mut self,
        now_ns: u64,
        rtt_ns: Option<u64>,
        ce_count: u32,
        acked: u32,
        bytes: u32,
        rto_ns: u64,
    ) {
        if let Some(rtt) = rtt_ns {
            self.rtt.update(rtt);
        }
        let new_ce = ce_count.wrapping_sub(self.last_ce_count);
        let new_ce = if new_ce < 1 << 31 {
            self.last_ce_count = ce_count;
            new_ce
        } else {
            0
        };
        self.stats.ce_marked += u64::from(new_ce);
        if acked > 0 {
            let frac = (u64::from(new_ce.min(acked)) << 16) / u64::from(acked);
            self.ecn_ewma = ewma(self.ecn_ewma, frac as u32);
            self.samples += acked;
            let srtt = self.rtt.srtt().unwrap_or(rto_ns);
            self.cc.on_ack(now_ns, bytes, acked, new_ce, srtt);
            self.rto_deadline = None;
        }
        if self.slots.iter().any(|s| s.live) {
            if self.rto_deadline.is_none() {
                self.rto_deadline = Some(now_ns + rto_ns);
            }
        } else {
            self.rto_deadline = None;
        }
    }

    fn pop_resolved(&mut self) {
        while self.slots.front().is_some_and(|s| !s.live) {
            self.slots.pop_front();
            self.una = self.una.wrapping_add(1);
        }
    }

    /// The path timed out: every live data transmission is lost (reported to
    /// `fate`), the window resets, the path moves to `entropy` and is
    /// quarantined until a probe is acknowledged.
    pub fn on_timeout(&mut self, now_ns: u64, entropy: u16, mut fate: impl FnMut(SlotFate)) {
        for slot in self.slots.iter_mut().filter(|s| s.live) {
            slot.live = false;
            if !slot.probe {
                self.inflight_bytes -= slot.len;
                self.stats.lost += 1;
                fate(SlotFate::Lost {
                    conn_psn: slot.conn_psn,
                });
            }
        }
        self.pop_resolved();
        self.cc.on_timeout(now_ns);
        self.stats.timeouts += 1;
        let backoff = match self.health {
            PathHealth::Quarantined { backoff, .. } => (backoff * 2).min(8),
            PathHealth::Active => 1,
        };
        self.health = PathHealth::Quarantined {
            probe_due_ns: now_ns,
            backoff,
        };
        self.rto_deadline = None;
        self.move_to(entropy);
    }

    /// True when the path's CE or loss fraction has stayed above the limits.
    pub fn wants_repath(&self, ecn_limit: f32, loss_limit: f32) -> bool {
        self.samples >= 8
            && (fraction(self.ecn_ewma) > ecn_limit || fraction(self.loss_ewma) > loss_limit)
    }

    /// Moves the path to a new entropy value (a new route) and forgets its
    /// route-specific estimates.
    pub fn move_to(&mut self, entropy: u16) {
        self.entropy = entropy;
        self.ecn_ewma = 0;
        self.loss_ewma = 0;
        self.samples = 0;
        self.stats.repaths += 1;
    }

    /// Snapshot of the statistics.
    pub fn stats(&self) -> PathStats {
        PathStats {
            entropy: self.entropy,
            srtt_ns: self.rtt.srtt().unwrap_or(0),
            window: self.cc.window(),
            inflight_bytes: self.inflight_bytes,
            ecn_fraction: fraction(self.ecn_ewma),
            loss_fraction: fraction(self.loss_ewma),
            quarantined: matches!(self.health, PathHealth::Quarantined { .. }),
            ..self.stats
        }
    }

    /// Live slots (for memory accounting and tests).
    pub fn slots_len(&self) -> usize {
        self.slots.len()
    }
}

fn ewma(old: u32, sample: u32) -> u32 {
    old - (old >> 4) + (sample >> 4)
}

fn fraction(v: u32) -> f32 {
    v as f32 / ONE as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcAlgorithm;
    use alloc::vec::Vec;

    fn path() -> TxPath {
        TxPath::new(50000, CcAlgorithm::Fixed { window: 1 << 20 }.build(4096))
    }

    #[test]
    fn a_gap_below_a_sacked_psn_is_a_loss_and_the_tail_is_not() {
        let mut p = path();
        for c in 0..6 {
            p.on_send_data(100 + c, 1000, false, 0, 1000);
        }
        // Receiver got 0, 1, 3, 4 (cum = 2, bits for 3 and 4): 2 lost, 5 still in flight.
        let mut sack = Sack::new();
        sack.set(0);
        sack.set(1);
        let mut fates = Vec::new();
        let (pkts, bytes) = p.on_ack(2, &sack, |f| fates.push(f));
        assert_eq!((pkts, bytes), (4, 4000));
        assert!(fates.contains(&SlotFate::Lost { conn_psn: 102 }));
        assert!(!fates.iter().any(|f| matches!(
            f,
            SlotFate::Lost { conn_psn: 105 } | SlotFate::Acked { conn_psn: 105 }
        )));
        assert_eq!(p.inflight_bytes(), 1000);
        // The same ACK again changes nothing.
        let mut again = Vec::new();
        p.on_ack(2, &sack, |f| again.push(f));
        assert!(again.is_empty());
    }

    #[test]
    fn timeout_loses_everything_and_quarantines_until_a_probe_is_acked() {
        let mut p = path();
        p.on_send_data(1, 10, false, 0, 1000);
        p.on_send_data(2, 10, false, 0, 1000);
        let mut lost = Vec::new();
        p.on_timeout(5000, 50001, |f| lost.push(f));
        assert_eq!(lost.len(), 2);
        assert_eq!(p.entropy(), 50001);
        assert!(!p.can_send(10));
        let probe = p.on_send_probe(5000, 1000);
        assert_eq!(probe, 2);
        p.on_ack(3, &Sack::new(), |_| {});
        assert_eq!(p.health(), PathHealth::Active);
        assert!(p.can_send(10));
    }
}
