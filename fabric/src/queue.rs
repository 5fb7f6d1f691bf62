//! Switch output queue: drop-tail with a byte limit, ECN CE marking (a
//! single threshold K, or DCQCN-style RED between Kmin and Kmax), draining
//! into a [`Link`].

use std::collections::VecDeque;

use rand::Rng;

use crate::error::{FabricError, check_probability};
use crate::event::{ComponentId, EventKind};
use crate::link::Link;
use crate::packet::{Ecn, PacketId};
use crate::sim::SimContext;

/// How a queue marks ECN-capable packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EcnMarking {
    /// Never mark.
    Off,
    /// Mark CE when more than `k_bytes` are already queued.
    Threshold {
        /// Marking threshold K in bytes.
        k_bytes: u64,
    },
    /// DCQCN-style RED on the instantaneous queue: no marking up to
    /// `kmin_bytes`, probability rising linearly to `pmax` at `kmax_bytes`,
    /// always above `kmax_bytes`.
    Red {
        /// Kmin in bytes.
        kmin_bytes: u64,
        /// Kmax in bytes.
        kmax_bytes: u64,
        /// Marking probability at Kmax.
        pmax: f64,
    },
}

impl EcnMarking {
    /// DCQCN's switch setting: Kmin 10 KB, Kmax 100 KB, Pmax 1%.
    pub fn dcqcn() -> Self {
        EcnMarking::Red {
            kmin_bytes: 10_000,
            kmax_bytes: 100_000,
            pmax: 0.01,
        }
    }

    /// Probability of marking a packet that finds `queued_bytes` ahead of it.
    pub fn mark_probability(&self, queued_bytes: u64) -> f64 {
        match *self {
            EcnMarking::Off => 0.0,
            EcnMarking::Threshold { k_bytes } => {
                if queued_bytes > k_bytes {
                    1.0
                } else {
                    0.0
                }
            }
            EcnMarking::Red {
                kmin_bytes,
                kmax_bytes,
                pmax,
            } => {
                if queued_bytes <= kmin_bytes {
                    0.0
                } else if queued_bytes > kmax_bytes {
                    1.0
                } else {
                    pmax * (queued_bytes - kmin_bytes) as f64
                        / (kmax_bytes - kmin_bytes).max(1) as f64
                }
            }
        }
    }

    fn validate(&self) -> Result<(), FabricError> {
        if let EcnMarking::Red {
            kmin_bytes,
            kmax_bytes,
            pmax,
        } = *self
        {
            check_probability("pmax", pmax)?;
            if kmin_bytes >= kmax_bytes {
                return Err(FabricError::InvalidParameter {
                    name: "kmin_bytes",
                    value: kmin_bytes as f64,
                    reason: "Kmin must be below Kmax",
                });
            }
        }
        Ok(())
    }
}

/// Buffer and marking configuration of an output queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    /// Drop-tail limit: a packet that would push the queued bytes above
    /// this is dropped.
    pub capacity_bytes: u64,
    /// ECN marking policy.
    pub ecn: EcnMarking,
}

impl QueueConfig {
    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), FabricError> {
        if self.capacity_bytes == 0 {
            return Err(FabricError::InvalidTopology(
                "queue capacity must be positive".into(),
            ));
        }
        self.ecn.validate()
    }
}

/// Counters of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Packets accepted.
    pub enqueued: u64,
    /// Packets dropped because the buffer was full.
    pub dropped: u64,
    /// Packets marked CE here.
    pub marked: u64,
    /// Largest backlog seen, in bytes.
    pub max_queued_bytes: u64,
}

/// An output port: FIFO buffer plus the link it drains into.
#[derive(Debug)]
pub struct OutputQueue {
    link: Link,
    config: QueueConfig,
    fifo: VecDeque<PacketId>,
    queued_bytes: u64,
    transmitter_free_at: u64,
    tx_done_pending: bool,
    stats: QueueStats,
}

impl OutputQueue {
    /// A queue with `config` draining into `link`.
    pub fn new(link: Link, config: QueueConfig) -> Result<Self, FabricError> {
        config.validate()?;
        Ok(Self {
            link,
            config,
            fifo: VecDeque::new(),
            queued_bytes: 0,
            transmitter_free_at: 0,
            tx_done_pending: false,
            stats: QueueStats::default(),
        })
    }

    /// The outgoing link.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Counters so far.
    pub fn stats(&self) -> QueueStats {
        self.stats
    }

    /// Bytes waiting (excluding the packet being serialised).
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// Brings the outgoing link up or blackholes it.
    pub fn set_link_up(&mut self, up: bool) {
        self.link.set_up(up);
    }

    /// Accepts (or drops) an arriving packet and starts the link if idle.
    pub fn enqueue(&mut self, me: ComponentId, ctx: &mut SimContext, packet: PacketId) {
        let wire_bytes = u64::from(ctx.pool.get(packet).wire_bytes);
        if self.queued_bytes + wire_bytes > self.config.capacity_bytes {
            self.stats.dropped += 1;
            ctx.counters.queue_drops += 1;
            ctx.pool.release(packet);
            return;
        }
        let mark_probability = self.config.ecn.mark_probability(self.queued_bytes);
        if mark_probability > 0.0 {
            let ecn = ctx.pool.get(packet).ecn;
            let should_mark = ecn.is_capable()
                && ecn != Ecn::Ce
                && (mark_probability >= 1.0 || ctx.rng.gen_bool(mark_probability));
            if should_mark {
                ctx.pool.get_mut(packet).ecn = Ecn::Ce;
                self.stats.marked += 1;
                ctx.counters.ecn_marks += 1;
            }
        }
        self.stats.enqueued += 1;
        self.fifo.push_back(packet);
        self.queued_bytes += wire_bytes;
        self.stats.max_queued_bytes = self.stats.max_queued_bytes.max(self.queued_bytes);
        if ctx.now >= self.transmitter_free_at {
            self.start_next(me, ctx);
        } else if !self.tx_done_pending {
            self.tx_done_pending = true;
            ctx.events
                .schedule(self.transmitter_free_at, me, EventKind::TxDone(0));
        }
    }

    /// The transmitter finished a packet: send the next one, if any.
    pub fn on_tx_done(&mut self, me: ComponentId, ctx: &mut SimContext) {
        self.tx_done_pending = false;
        if ctx.now >= self.transmitter_free_at {
            self.start_next(me, ctx);
        } else if !self.fifo.is_empty() {
            // An arrival restarted the transmitter since this was scheduled.
            self.tx_done_pending = true;
            ctx.events
                .schedule(self.transmitter_free_at, me, EventKind::TxDone(0));
        }
    }

    fn start_next(&mut self, me: ComponentId, ctx: &mut SimContext) {
        let Some(packet) = self.fifo.pop_front() else {
            return;
        };
        self.queued_bytes -= u64::from(ctx.pool.get(packet).wire_bytes);
        self.transmitter_free_at = self.link.transmit(ctx, packet);
        if !self.fifo.is_empty() && !self.tx_done_pending {
            self.tx_done_pending = true;
            ctx.events
                .schedule(self.transmitter_free_at, me, EventKind::TxDone(0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_marks_only_above_k() {
        let marking = EcnMarking::Threshold { k_bytes: 1000 };
        assert_eq!(marking.mark_probability(1000), 0.0);
        assert_eq!(marking.mark_probability(1001), 1.0);
    }

    #[test]
    fn red_ramps_between_kmin_and_kmax() {
        let marking = EcnMarking::dcqcn();
        assert_eq!(marking.mark_probability(10_000), 0.0);
        assert!((marking.mark_probability(55_000) - 0.005).abs() < 1e-12);
        assert!((marking.mark_probability(100_000) - 0.01).abs() < 1e-12);
        assert_eq!(marking.mark_probability(100_001), 1.0);
    }

    #[test]
    fn invalid_red_is_rejected() {
        let config = QueueConfig {
            capacity_bytes: 1,
            ecn: EcnMarking::Red {
                kmin_bytes: 5,
                kmax_bytes: 5,
                pmax: 0.1,
            },
        };
        assert!(config.validate().is_err());
    }
}
