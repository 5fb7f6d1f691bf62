//! The bench's world: the paths' receivers (engine QPs) behind a lossy,
//! reordering network, and the firmware's random choices of operations.

use std::collections::HashMap;

use metaroce_proto::Sack;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{Golden, Op, SLOTS};
use crate::rx_path::{self, Arrival, PathState};

/// What the firmware does next on a slot: one operation, or a RACK check
/// (the engine's `on_rack`, as `Lose` operations on the RTL).
#[derive(Clone, Debug)]
pub(super) enum Action {
    Op(Op),
    Rack { delivered_sent_ns: u64 },
}

/// The bench's world: the engine's paths, their receivers behind a lossy
/// reordering network, and the random choices of the firmware.
pub(super) struct World {
    pub(super) rng: SmallRng,
    /// Golden model per slot.
    pub(super) gold: Vec<Golden>,
    /// Receive side: one engine QP per 8 slots.
    rx: Vec<rx_path::Engine>,
    /// Path PSNs in the network per slot (sent, not lost, not delivered).
    pub(super) net: Vec<Vec<u32>>,
    /// ACK fields the receiver sent per slot, oldest first (last = latest).
    pub(super) history: Vec<Vec<PathState>>,
    /// Offset added to the receiver's CE count per slot (so it wraps).
    pub(super) ce_offset: Vec<u32>,
    /// The window the RTL holds per slot.
    pub(super) rtl_window: Vec<u32>,
    /// Path PSN of each connection PSN sent as data, per slot.
    pub(super) psn_of: Vec<HashMap<u32, u32>>,
    next_conn_psn: u32,
    pub(super) now_ns: u64,
    src_port: u16,
    /// Steps taken; every third period of 3000 is a burst: mostly small
    /// sends and few deliveries, so rings fill to the 256-PSN limit.
    steps: u64,
    burst: bool,
}

impl World {
    /// A world seeded with `seed`.
    pub(super) fn new(seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let ce_offset = (0..SLOTS)
            .map(|s| match s % 4 {
                0 => 0,
                1 => u32::MAX - 60,
                2 => (1 << 31) - 40,
                _ => rng.r#gen(),
            })
            .collect();
        World {
            rng,
            gold: (0..SLOTS).map(|_| Golden::new(0)).collect(),
            rx: (0..SLOTS / rx_path::PATHS)
                .map(|_| rx_path::Engine::new())
                .collect(),
            net: vec![Vec::new(); SLOTS],
            history: vec![vec![PathState::default()]; SLOTS],
            ce_offset,
            rtl_window: vec![0; SLOTS],
            psn_of: vec![HashMap::new(); SLOTS],
            next_conn_psn: 0,
            now_ns: 1_000_000,
            src_port: 0xC000,
            steps: 0,
            burst: false,
        }
    }

    /// Delivers path PSN `psn` of `slot` to its receiver.
    fn deliver(&mut self, slot: usize, psn: u32) {
        let ev = Arrival {
            path: (slot % rx_path::PATHS) as u16,
            psn,
            ce: self.rng.gen_bool(0.2),
        };
        self.src_port = 0xC000 | (self.src_port.wrapping_add(1) & 0x3FFF);
        let (ack, _, _) = self.rx[slot / rx_path::PATHS].arrive(ev, self.src_port);
        if let Some(a) = ack {
            let h = &mut self.history[slot];
            if h.len() == 64 {
                h.remove(0);
            }
            h.push(a);
        }
    }

    /// An ACK for `slot`: first some packets arrive (in random order
    /// outside bursts, some twice), then the receiver's latest ACK, an older one, or a hostile
    /// one. Returns the ACK and its origin (0 latest, 1 stale, 2 hostile).
    fn ack(&mut self, slot: usize) -> (PathState, usize) {
        let k = self.rng.gen_range(0..=if self.burst { 2 } else { 8 });
        for _ in 0..k {
            if self.net[slot].is_empty() {
                break;
            }
            // Random order; in a burst the oldest first, so the ring grows.
            let psn = if self.burst {
                self.net[slot].remove(0)
            } else {
                let i = self.rng.gen_range(0..self.net[slot].len());
                self.net[slot].swap_remove(i)
            };
            self.deliver(slot, psn);
            if self.rng.gen_bool(0.03) {
                self.deliver(slot, psn);
            }
        }
        let h = &self.history[slot];
        let latest = *h.last().expect("history starts non-empty");
        match self.rng.gen_range(0..100) {
            0..=79 => (latest, 0),
            80..=94 => (h[self.rng.gen_range(0..h.len())], 1),
            _ => {
                let g = &self.gold[slot];
                let una = g.next_psn.wrapping_sub(g.path.slots_len() as u32);
                let mut sack = Sack::new();
                for _ in 0..self.rng.gen_range(0..12) {
                    sack.set(self.rng.gen_range(0..256));
                }
                let cum = match self.rng.gen_range(0..4) {
                    0 => self.rng.r#gen(),
                    _ => una
                        .wrapping_add(self.rng.gen_range(0..600))
                        .wrapping_sub(300),
                };
                let a = PathState {
                    cum,
                    sack,
                    ..latest
                };
                (a, 2)
            }
        }
    }

    /// An RTT sample: mostly 2–200 µs, sometimes tiny, rarely up to
    /// 2^32 - 1 ns.
    pub(super) fn rtt(&mut self) -> Option<u32> {
        let r = &mut self.rng;
        match r.gen_range(0..100) {
            0..=14 => None,
            15..=79 => Some(r.gen_range(2_000..200_000)),
            80..=97 => Some(r.gen_range(0..2_000)),
            _ => Some(r.r#gen()),
        }
    }

    /// The next operation on a random slot: a send (data when the engine's
    /// `can_send` allows it, probes on quarantined paths; an ACK instead
    /// when neither fits), an ACK, a feedback alone, a timeout, a move or a
    /// RACK check; with the ACK's origin (see [`TxRun::acks`](super::TxRun::acks)).
    pub(super) fn step(&mut self) -> (usize, Action, Option<usize>) {
        self.burst = (self.steps / 3000) % 3 == 2;
        self.steps += 1;
        let slot = if self.rng.gen_bool(0.5) {
            [0, 1, 8][self.rng.gen_range(0..3)]
        } else {
            self.rng.gen_range(0..SLOTS)
        };
        self.now_ns += self.rng.gen_range(0..20_000);
        let g = &self.gold[slot];
        let quarantined = g.path.stats().quarantined;
        let room = g.path.slots_len() < 256;
        let len: u16 = match self.rng.gen_range(0..10) {
            _ if self.burst => self.rng.gen_range(0..=64),
            0 => 0,
            1 => 4096,
            _ => self.rng.gen_range(0..=4096),
        };
        // 0: a send (an ACK when none is possible); else the other kinds.
        let r = if self.rng.gen_bool(if self.burst { 0.85 } else { 0.5 }) {
            0
        } else {
            self.rng.gen_range(50..100)
        };
        let send_ok = g.path.can_send(len.into()) || (room && self.rng.gen_bool(0.05));
        match r {
            // Probes on quarantined paths, and a few on Active ones (so a
            // live probe can sit before transmissions RACK declared lost).
            0 if (quarantined || self.rng.gen_bool(0.03)) && room => {
                (slot, Action::Op(self.send(true, 0)), None)
            }
            0 if send_ok && !quarantined => (slot, Action::Op(self.send(false, len)), None),
            90..=93 => {
                let ce = self.history[slot].last().map_or(0, |a| a.ce_count);
                let op = Op::Feedback {
                    rtt_ns: self.rtt(),
                    ce_count: ce
                        .wrapping_add(self.ce_offset[slot])
                        .wrapping_add(self.rng.gen_range(0..40))
                        .wrapping_sub(20),
                    acked: self.rng.gen_range(0..10),
                    bytes: self.rng.gen_range(0..40_000),
                };
                (slot, Action::Op(op), None)
            }
            94..=95 if !self.burst => {
                let entropy = self.rng.r#gen();
                (slot, Action::Op(Op::Timeout { entropy }), None)
            }
            96..=97 => {
                let entropy = self.rng.r#gen();
                (slot, Action::Op(Op::Move { entropy }), None)
            }
            98..=99 => {
                let ago = self.rng.gen_range(0..400_000);
                let delivered_sent_ns = self.now_ns.saturating_sub(ago);
                (slot, Action::Rack { delivered_sent_ns }, None)
            }
            _ => {
                let (a, origin) = self.ack(slot);
                let op = Op::Ack {
                    path_cum: a.cum,
                    sack: a.sack,
                };
                (slot, Action::Op(op), Some(origin))
            }
        }
    }

    /// A send on the network side: lost with 8% probability.
    fn send(&mut self, probe: bool, len: u16) -> Op {
        self.next_conn_psn = self.next_conn_psn.wrapping_add(1);
        Op::Send {
            conn_psn: self.next_conn_psn,
            len,
            probe,
            retx: !probe && self.rng.gen_bool(0.1),
        }
    }
}
