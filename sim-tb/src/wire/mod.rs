//! A simulated Ethernet fabric joining two NIC ports.
//!
//! [`Wire`] carries the Ethernet II frames (no FCS) that two NICs, ports 0
//! and 1, send each other: a frame sent from one port arrives at the other.
//! Time is simulated nanoseconds given by the caller, and every random
//! choice comes from one generator seeded in [`Wire::new`], so a run is
//! reproducible: the same seed and the same calls give the same arrivals.
//!
//! The model, per frame sent:
//!
//! - **Path.** The fabric has [`WireConfig::paths`](config::WireConfig::paths) ECMP paths. Like a
//!   switch, it picks one from the frame's UDP source port (the path
//!   entropy) with a [`PathMap`](config::PathMap). Frames without a UDP header it can find
//!   (not IPv4/IPv6 UDP, IPv6 extension headers, non-first IPv4 fragments,
//!   short or malformed frames) take path 0.
//! - **Serialisation** (optional, [`WireConfig::rate_bits_per_ns`](config::WireConfig::rate_bits_per_ns)): each
//!   direction of each path is a link that sends one frame at a time, so a
//!   frame starts when it is sent or when the previous frame on that link
//!   has finished, whichever is later.
//! - **Loss**, after serialisation (the frame used the link): dropped with
//!   the path's [`PathConfig::loss`](config::PathConfig::loss) probability; 1 is a failed link.
//! - **ECN marking**: an ECN-capable frame (ECT(0) or ECT(1)) is marked CE
//!   with the path's [`PathConfig::ecn_mark`](config::PathConfig::ecn_mark) probability; an IPv4 header
//!   checksum is recomputed. Not-ECT and CE frames, and IPv4 headers whose
//!   checksum does not verify, are left alone.
//! - **Duplication**: with the path's [`PathConfig::dup`](config::PathConfig::dup) probability a copy
//!   (marked or not, as the original) is delivered as well.
//! - **Arrival**: end of serialisation (the send time without a rate) plus
//!   the path's delay plus a uniform jitter in `[0, jitter_ns]` drawn for
//!   each copy, so frames reorder within a path (jitter) and across paths
//!   (jitter or different delays). Frames arriving at the same time come
//!   out in the order they were sent.
//!
//! The wire changes no frame other than by CE marking, and never panics on
//! frame contents. [`Wire::inject`] delivers a frame as is at a given time
//! (hostile frames), outside the per-path model.
//!
//! The parts: [`config`] (the paths and how frames are spread over them),
//! [`stats`] (the counters), `headers` (what the wire reads and changes in a
//! frame: the UDP source port, the ECN field), and [`Wire`] here (queues,
//! serialisation and the random choices).

pub mod config;
mod headers;
pub mod stats;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use config::WireConfig;
use headers::{markable, set_ce, udp_src_port};
use stats::{PathStats, WireStats};

/// Minimum Ethernet frame length without FCS; shorter frames are padded on
/// the link.
const MIN_FRAME: usize = 60;
/// Bytes a frame occupies on the link besides its own: preamble and SFD
/// (8), FCS (4), inter-frame gap (12).
const LINK_OVERHEAD: usize = 24;

/// A frame on its way: ordered by arrival time, then by send order.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    at: u64,
    seq: u64,
    frame: Vec<u8>,
}

/// The simulated fabric between ports 0 and 1 (see the module doc).
#[derive(Debug)]
pub struct Wire {
    cfg: WireConfig,
    rng: SmallRng,
    /// `queues[to]`: frames on their way to port `to`, earliest first.
    queues: [BinaryHeap<Reverse<Pending>>; 2],
    /// Next send-order number.
    seq: u64,
    /// `busy_until[from][path]`: when that link finishes its last frame (ns).
    busy_until: [Vec<f64>; 2],
    stats: WireStats,
}

impl Wire {
    /// An empty wire with configuration `cfg`, its random choices seeded by
    /// `seed`.
    ///
    /// # Panics
    /// If `cfg.paths` is empty or a probability is outside `0..=1`.
    pub fn new(cfg: WireConfig, seed: u64) -> Self {
        assert!(!cfg.paths.is_empty(), "a wire needs at least one path");
        for (i, p) in cfg.paths.iter().enumerate() {
            for (name, v) in [("loss", p.loss), ("dup", p.dup), ("ecn_mark", p.ecn_mark)] {
                assert!(
                    (0.0..=1.0).contains(&v),
                    "path {i}: {name} probability {v} is not in 0..=1"
                );
            }
        }
        let n = cfg.paths.len();
        Self {
            rng: SmallRng::seed_from_u64(seed),
            queues: [BinaryHeap::new(), BinaryHeap::new()],
            seq: 0,
            busy_until: [vec![0.0; n], vec![0.0; n]],
            stats: WireStats {
                per_path: [vec![PathStats::default(); n], vec![PathStats::default(); n]],
                injected: [0; 2],
            },
            cfg,
        }
    }

    /// Sends `frame` from port `from` (0 or 1) at `now_ns` toward the other
    /// port, through the path model.
    ///
    /// # Panics
    /// If `from` is not 0 or 1.
    pub fn send(&mut self, from: usize, now_ns: u64, mut frame: Vec<u8>) {
        let to = peer(from);
        let path = self.path_of(&frame);
        let pc = self.cfg.paths[path];
        self.stats.per_path[from][path].sent += 1;
        let ready = self.serialise(from, path, now_ns, frame.len());
        if chance(&mut self.rng, pc.loss) {
            self.stats.per_path[from][path].lost += 1;
            return;
        }
        if let Some(l3) = markable(&frame) {
            if chance(&mut self.rng, pc.ecn_mark) {
                set_ce(&mut frame, l3);
                self.stats.per_path[from][path].ce_marked += 1;
            }
        }
        let copy = chance(&mut self.rng, pc.dup).then(|| frame.clone());
        let base = ready.saturating_add(pc.delay_ns);
        let at = base.saturating_add(self.jitter(pc.jitter_ns));
        self.push(to, at, frame);
        if let Some(copy) = copy {
            self.stats.per_path[from][path].duplicated += 1;
            let at = base.saturating_add(self.jitter(pc.jitter_ns));
            self.push(to, at, copy);
        }
    }

    /// The earliest arrival time of the frames on their way to port `to`.
    ///
    /// # Panics
    /// If `to` is not 0 or 1.
    pub fn next_arrival(&self, to: usize) -> Option<u64> {
        self.queues[to].peek().map(|Reverse(p)| p.at)
    }

    /// The next frame for port `to` that has arrived by `now_ns`: earliest
    /// arrival first, ties in send order.
    ///
    /// # Panics
    /// If `to` is not 0 or 1.
    pub fn receive(&mut self, to: usize, now_ns: u64) -> Option<Vec<u8>> {
        let queue = &mut self.queues[to];
        if queue.peek()?.0.at > now_ns {
            return None;
        }
        queue.pop().map(|Reverse(p)| p.frame)
    }

    /// Delivers `frame` unchanged to port `to` at `at_ns`, bypassing the
    /// path model; counted in [`WireStats::injected`].
    ///
    /// # Panics
    /// If `to` is not 0 or 1.
    pub fn inject(&mut self, to: usize, at_ns: u64, frame: Vec<u8>) {
        self.stats.injected[to] += 1;
        self.push(to, at_ns, frame);
    }

    /// The counters so far.
    pub fn stats(&self) -> &WireStats {
        &self.stats
    }

    /// Frames on their way to either port (injected ones included).
    pub fn in_flight(&self) -> usize {
        self.queues.iter().map(BinaryHeap::len).sum()
    }

    /// The path `frame` takes: its UDP source port through the
    /// configuration's [`PathMap`](config::PathMap), or 0 without a UDP header.
    pub fn path_of(&self, frame: &[u8]) -> usize {
        udp_src_port(frame).map_or(0, |port| {
            self.cfg.path_map.path_of(port, self.cfg.paths.len())
        })
    }

    /// When a `len`-byte frame sent at `now_ns` from `from` on `path` has
    /// been serialised (`now_ns` without a rate).
    fn serialise(&mut self, from: usize, path: usize, now_ns: u64, len: usize) -> u64 {
        let Some(rate) = self.cfg.rate_bits_per_ns.filter(|r| *r > 0.0) else {
            return now_ns;
        };
        let bits = ((len.max(MIN_FRAME) + LINK_OVERHEAD) * 8) as f64;
        let busy = &mut self.busy_until[from][path];
        let end = busy.max(now_ns as f64) + bits / rate;
        *busy = end;
        end.ceil() as u64
    }

    /// A uniform draw in `[0, max]`.
    fn jitter(&mut self, max: u64) -> u64 {
        if max == 0 {
            0
        } else {
            self.rng.gen_range(0..=max)
        }
    }

    /// Queues `frame` for port `to` at `at`, after earlier sends.
    fn push(&mut self, to: usize, at: u64, frame: Vec<u8>) {
        let seq = self.seq;
        self.seq += 1;
        self.queues[to].push(Reverse(Pending { at, seq, frame }));
    }
}

/// The port across the wire from `port`.
fn peer(port: usize) -> usize {
    assert!(port < 2, "the wire has ports 0 and 1, not {port}");
    1 - port
}

/// True with probability `p`; draws nothing when `p` is 0 or 1.
fn chance(rng: &mut SmallRng, p: f64) -> bool {
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        rng.gen_bool(p)
    }
}
