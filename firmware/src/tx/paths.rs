//! The sender's paths as a set: their entropy values, the totals and
//! bitmaps kept over them (bytes in flight, paths with timers, marked
//! paths), round-robin choice, and repathing one path at a time.

use alloc::vec::Vec;
use core::ops::{Index, IndexMut};

use rand::{Rng, SeedableRng, rngs::SmallRng};

use crate::config::QpConfig;
use crate::counters::Stats;
use crate::path::TxPath;
use crate::ports::PortsReady;

/// A connection's paths and what is kept over all of them.
pub(crate) struct PathSet {
    rng: SmallRng,
    /// The paths. Only `Tx` changes them, and it calls
    /// [`PathSet::refresh`] after every change.
    paths: Vec<TxPath>,
    /// Bytes in flight over all paths (the sum of what
    /// [`PathSet::refresh`] counted).
    inflight_total: u32,
    /// Bit `i` set: path `i` may have a deadline ([`TxPath::has_timers`]),
    /// as of its last [`PathSet::refresh`]. The timer query and the probe
    /// search look at these paths only.
    timed: u64,
    /// Bit `i` set: path `i` is marked (`PathView::marked`), as of its
    /// last [`PathSet::refresh`], so [`PathSet::any_marked`] walks no paths.
    marked: u64,
    /// The path that waits to drain before it moves to a new entropy value
    /// ([`PathSet::settle_move`]) and takes no packets meanwhile; one at a time.
    draining: Option<u8>,
    /// The last data poll found a usable path only on a busy port.
    port_blocked: bool,
    /// The path chosen after the last one (round robin; paths ≤ 64).
    rr: u16,
    /// When the current delivery interval ends, ns ([`PathSet::tick`]).
    interval_end_ns: u64,
    /// No outpaced move before this time, ns ([`PathSet::hold_down`]).
    hold_end_ns: u64,
    /// Outpaced moves since one last helped or no path was outpaced: each
    /// doubles the next hold ([`PathSet::judge_moves`]).
    strikes: u8,
    /// The path of the last outpaced move, until its new route is measured.
    judged: Option<u8>,
    /// The delivery rate `judged` had on the route it left
    /// ([`TxPath::delivery_rate`]).
    judged_rate: u16,
    /// Bit `i` set: Active path `i` wants a PROBE on its current route, its
    /// RTO expiry spared while the connection was silent (spec §5.7).
    probes_wanted: u64,
}

impl PathSet {
    /// `cfg.paths` paths on random striped entropy values drawn from `seed`,
    /// their table entries in the engine, or in the NIC when `hardware_table`.
    pub fn new(cfg: &QpConfig, mtu: u32, seed: u64, hardware_table: bool) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let paths = (0..cfg.paths)
            .map(|i| {
                let entropy = striped_entropy(&mut rng, i);
                let cc = cfg.cc.build(mtu);
                if hardware_table {
                    TxPath::new_hardware(entropy, cc)
                } else {
                    TxPath::new(entropy, cc)
                }
            })
            .collect();
        PathSet {
            rng,
            paths,
            inflight_total: 0,
            timed: 0,
            marked: 0,
            draining: None,
            port_blocked: false,
            rr: 0,
            interval_end_ns: 0,
            hold_end_ns: 0,
            strikes: 0,
            judged: None,
            judged_rate: 0,
            probes_wanted: 0,
        }
    }

    /// How many paths there are.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Path `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&TxPath> {
        self.paths.get(i)
    }

    /// The paths, in index order.
    pub fn iter(&self) -> core::slice::Iter<'_, TxPath> {
        self.paths.iter()
    }

    /// The paths, to change (each then [`PathSet::refresh`]ed).
    pub fn iter_mut(&mut self) -> core::slice::IterMut<'_, TxPath> {
        self.paths.iter_mut()
    }

    /// After a change to `path`: re-reads its RACK deadline's inputs and
    /// its bytes in flight, so that neither the timer query nor the
    /// connection window walks every path's state on every call.
    pub fn refresh(&mut self, path: usize) {
        self.settle_move(path);
        let p = &mut self.paths[path];
        p.refresh_timers();
        let (before, now) = p.recount_inflight();
        self.inflight_total = self.inflight_total - before + now;
        let bit = 1u64 << path;
        if p.has_timers() {
            self.timed |= bit;
        } else {
            self.timed &= !bit;
        }
        if p.view().marked() {
            self.marked |= bit;
        } else {
            self.marked &= !bit;
        }
    }

    /// The paths that may have a deadline, in index order.
    pub fn timed(&self) -> impl Iterator<Item = usize> + use<> {
        let mut bits = self.timed;
        core::iter::from_fn(move || {
            let i = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            (i < 64).then_some(i)
        })
    }

    /// How many paths may have a deadline.
    pub fn timed_count(&self) -> u32 {
        self.timed.count_ones()
    }

    /// True when what [`PathSet::refresh`] keeps matches the paths (checked in
    /// debug builds).
    pub fn refreshed(&self) -> bool {
        let inflight: u32 = self.paths.iter().map(|p| p.inflight_bytes()).sum();
        inflight == self.inflight_total
            && self.paths.iter().enumerate().all(|(i, p)| {
                p.refreshed()
                    && (!p.has_timers() || self.timed & (1 << i) != 0)
                    && p.view().marked() == (self.marked & (1 << i) != 0)
            })
    }

    /// Bytes in flight over all paths.
    pub fn inflight(&self) -> u32 {
        debug_assert!(self.refreshed(), "a path changed without PathSet::refresh");
        self.inflight_total
    }

    /// True when some path is marked (`PathView::marked`).
    pub fn any_marked(&self) -> bool {
        debug_assert!(self.refreshed(), "a path changed without PathSet::refresh");
        self.marked != 0
    }

    /// Chooses the path for a packet of `len` bytes: the next usable path in
    /// round-robin order, avoiding `avoid` when possible. Each path's window
    /// (its congestion controller) decides whether it is usable, so a
    /// congested path gets fewer packets. Strict rotation keeps every path
    /// carrying packets, so a loss is soon followed by a later packet on the
    /// same path and detected from the SACK gap instead of by timeout
    /// (picking the least-loaded path starved a path holding a lost packet).
    ///
    /// A path whose port is busy (`ports`) is skipped too; when that alone
    /// left nothing to choose, [`PathSet::take_port_blocked`] says so.
    pub fn choose(&mut self, len: u32, avoid: Option<u16>, ports: PortsReady) -> Option<usize> {
        let n = self.paths.len();
        let rr = usize::from(self.rr);
        let usable = |i: usize| {
            self.draining != Some(i as u8)
                && self.paths[i].can_send(len)
                && (avoid != Some(i as u16) || n == 1)
        };
        let mut blocked = false;
        let pick = (0..n).map(|k| (rr + k) % n).find(|&i| {
            let ok = usable(i);
            let takes = ports.takes(self.paths[i].entropy());
            blocked |= ok && !takes;
            ok && takes
        });
        if pick.is_none() && avoid.is_some() {
            return self.choose(len, None, ports);
        }
        self.port_blocked |= pick.is_none() && blocked;
        if let Some(b) = pick {
            self.rr = ((b + 1) % n) as u16;
        }
        pick
    }

    /// True (once) when the last data polls had a packet to send but only on
    /// paths whose port was busy: the QP should be polled again when ports free.
    pub fn take_port_blocked(&mut self) -> bool {
        core::mem::take(&mut self.port_blocked)
    }

    /// Moves `path` to a new entropy value when its loss estimate says so, or
    /// when it is marked and delivers well below its fastest sibling
    /// ([`PathSet::outpaced`]): its route is congested by more than this
    /// connection's share of it (another of its paths, or other traffic), and
    /// a sibling shows that a better route exists. Marks every path shares
    /// (a common bottleneck, such as the receiver's link, which no route
    /// avoids) move nothing, nor do marks on a path that delivers as much as
    /// its siblings (spec §5.9). The move waits until the path has drained
    /// ([`PathSet::settle_move`]), and one path drains at a time: the others
    /// take its share meanwhile.
    pub fn repath_if_wanted(&mut self, now: u64, path: usize, cfg: &QpConfig, stats: &mut Stats) {
        self.tick(now);
        if self.draining.is_some() {
            return;
        }
        let v = self.paths[path].view();
        let lossy = v.wants_repath(f32::INFINITY, cfg.repath_loss_fraction);
        let marked = v.wants_repath(0.0, f32::INFINITY) && v.marked();
        let outpaced = !lossy && marked && now >= self.hold_end_ns && self.outpaced(path);
        if outpaced {
            self.hold_down(now, path);
        }
        if lossy || outpaced {
            self.draining = Some(path as u8);
            stats.repaths += 1;
            self.settle_move(path);
        }
    }

    /// Ends the connection's delivery interval when it is due, and begins the
    /// next, which lasts the largest smoothed RTT of the paths, so that every
    /// path's count covers at least one of its round trips (spec §5.9;
    /// [`TxPath::close_interval`]).
    fn tick(&mut self, now: u64) {
        if now >= self.interval_end_ns {
            self.paths.iter_mut().for_each(TxPath::close_interval);
            self.judge_moves(now);
            self.interval_end_ns = now + self.interval_ns();
        }
    }

    /// The length of a delivery interval: the largest smoothed RTT of the
    /// paths (0 before any is measured).
    fn interval_ns(&self) -> u64 {
        let longest = self.paths.iter().filter_map(|p| p.view().rtt.srtt()).max();
        longest.unwrap_or(0)
    }

    /// Begins the hold-down after an outpaced move of `path` (spec §5.9): no
    /// other outpaced move for `2^strikes` delivery intervals, where
    /// `strikes` counts the outpaced moves since one last helped or no path
    /// was outpaced (at most [`MAX_STRIKES`]). When paths outnumber the usable routes, some pair
    /// always shares one and every move is useless; the holds then double
    /// and the moves die out instead of going on forever.
    fn hold_down(&mut self, now: u64, path: usize) {
        let doublings = self.strikes.saturating_sub(FREE_STRIKES);
        self.hold_end_ns = now + (self.interval_ns() << doublings);
        self.strikes = (self.strikes + 1).min(MAX_STRIKES);
        self.judged = Some(path as u8);
        self.judged_rate = self.paths[path].delivery_rate() as u16;
    }

    /// Forgets the strikes when a hold-down is no longer wanted: once the
    /// path of the last outpaced move has moved and its delivery rate on the
    /// new route is measured, if the move helped: the path is no longer
    /// outpaced, or it outpaces itself on its old route (a crowded route
    /// left for a free one, which the siblings' noisy rates can hide); and
    /// after a quiet time past the hold's end without an outpaced move:
    /// twice the last hold, and at least [`QUIET_SHIFT`] intervals' worth,
    /// time enough for a path still crowded to be measured again and move.
    fn judge_moves(&mut self, now: u64) {
        let quiet = self.interval_ns() << self.strikes.max(QUIET_SHIFT);
        if now >= self.hold_end_ns.saturating_add(quiet) {
            self.strikes = 0;
        }
        let Some(path) = self.judged else { return };
        let path = usize::from(path);
        if self.draining == Some(path as u8) || self.paths[path].delivery_rate() == 0 {
            return;
        }
        let faster = outpaces(self.paths[path].delivery_rate(), self.judged_rate.into());
        if faster || !self.outpaced(path) {
            self.strikes = 0;
        }
        self.judged = None;
    }

    /// True when some active sibling of `path` delivers more than
    /// [`OUTPACE_RATIO`] times `path`'s delivery rate
    /// ([`TxPath::delivery_rate`]; spec §5.9).
    fn outpaced(&self, path: usize) -> bool {
        let rate = self.paths[path].delivery_rate();
        rate > 0
            && (self.paths.iter().enumerate()).any(|(i, p)| {
                i != path
                    && self.draining != Some(i as u8)
                    && !p.view().quarantined
                    && outpaces(p.delivery_rate(), rate)
            })
    }

    /// Performs `path`'s pending move once nothing sent on its old route is
    /// unresolved: packets on a new route would overtake those still queued
    /// on the old one, and a later path PSN acknowledged first declares the
    /// earlier ones lost (spec §5.8). The path takes no packets meanwhile.
    fn settle_move(&mut self, path: usize) {
        if self.draining == Some(path as u8) && self.paths[path].drained() {
            self.draining = None;
            let e = striped_entropy(&mut self.rng, path as u16);
            let floor = self.route_floor();
            self.paths[path].move_to(e, floor);
        }
    }

    /// The largest RTO estimate of the connection's paths
    /// ([`TxPath::rto_estimate`]), ns: how slow a route a path moves to may
    /// be (spec §5.7).
    pub fn route_floor(&self) -> u64 {
        self.paths
            .iter()
            .map(TxPath::rto_estimate)
            .max()
            .unwrap_or(0)
    }

    /// A random entropy value for path `path` to move to after its timeout.
    pub fn timeout_entropy(&mut self, path: usize) -> u16 {
        striped_entropy(&mut self.rng, path as u16)
    }

    /// `path` moved (on its timeout): a drain it waited for is over, and a
    /// PROBE it wanted on its old route is not sent.
    pub fn moved(&mut self, path: usize) {
        if self.draining == Some(path as u8) {
            self.draining = None;
        }
        self.probes_wanted &= !(1 << path);
    }

    /// `path`'s expiry was spared: it wants a PROBE on its current route.
    pub fn want_probe(&mut self, path: usize) {
        self.probes_wanted |= 1 << path;
    }

    /// The lowest path that wants a PROBE after a spared expiry, taken off
    /// the list.
    pub fn take_wanted_probe(&mut self) -> Option<usize> {
        let i = self.probes_wanted.trailing_zeros() as usize;
        (i < 64).then(|| {
            self.probes_wanted &= !(1 << i);
            i
        })
    }
}

impl Index<usize> for PathSet {
    type Output = TxPath;
    fn index(&self, i: usize) -> &TxPath {
        &self.paths[i]
    }
}

impl IndexMut<usize> for PathSet {
    fn index_mut(&mut self, i: usize) -> &mut TxPath {
        &mut self.paths[i]
    }
}

/// A path is outpaced when a sibling's rate exceeds its own by this ratio
/// (numerator, denominator): two paths sharing a route get half a lone path's
/// rate each, while paths alone on equal routes stay well within it.
const OUTPACE_RATIO: (u64, u64) = (3, 2);

/// True when delivery rate `fast` exceeds [`OUTPACE_RATIO`] times `slow`.
fn outpaces(fast: u32, slow: u32) -> bool {
    let (num, den) = OUTPACE_RATIO;
    u64::from(fast) * den > u64::from(slow) * num
}

/// The largest count of useless outpaced moves the hold-down doubles for:
/// at most 2^10 delivery intervals (about 1,000 round trips) between them.
const MAX_STRIKES: u8 = 10;

/// Useless outpaced moves allowed before the holds begin to double: paths
/// spreading over equal routes try several occupied ones before they find
/// the last free one (each move lands on a free one of `n` with chance
/// 1/`n`).
const FREE_STRIKES: u8 = 3;

/// The shortest quiet time that forgets the strikes, as a power of two of
/// delivery intervals (32): a path measures its new route only after 8
/// packets on it and a whole interval, and a crowded sibling's average
/// takes a few intervals to fall below 2/3 of the fastest.
const QUIET_SHIFT: u8 = 5;

/// Low bits of an entropy value that stay fixed per path ("stripes").
const STRIPE_MASK: u16 = 0x7;

/// A random entropy value from the dynamic port range for path `path`: its
/// low three bits are the path index's, and stay so when the path moves. A
/// multi-plane NIC that picks its plane from the low bits of the source port
/// (the model of `metaroce-fabric`'s multi-plane topology) then gets an equal
/// share of the paths on every plane (for 1, 2, 4 or 8 planes) instead of a
/// random split, and a path repaths within its plane. Within a plane, ECMP
/// still hashes the whole value.
fn striped_entropy(rng: &mut SmallRng, path: u16) -> u16 {
    (rng.gen_range(metaroce_proto::ENTROPY_PORTS) & !STRIPE_MASK) | (path & STRIPE_MASK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Acknowledges `n` packets on `path` at `now` (each one marked), with a
    /// 10 µs round trip.
    fn deliver(set: &mut PathSet, path: usize, now: u64, n: u32) {
        for _ in 0..n {
            let p = &mut set.paths[path];
            let psn = p.on_send_data(0, 1000, false, now, 1_000_000);
            p.on_ack(psn.wrapping_add(1), &metaroce_proto::Sack::new(), |_| {});
            let ce = p.view().ce_marked as u32 + 1;
            p.on_ack_feedback(now, Some(10_000), ce, 1, 1000, 1_000_000);
        }
    }

    /// Two paths, one crowded (1 packet per interval) and one fast (4): the
    /// crowded one moves to a route where it delivers 2, still outpaced by
    /// its sibling (4 > 3/2 × 2) but twice its old rate, so the move helped
    /// and its strike is forgiven (it is not offered another move here).
    #[test]
    fn a_move_that_raises_the_moved_paths_rate_helped() {
        let cfg = QpConfig {
            paths: 2,
            ..QpConfig::default()
        };
        let mut set = PathSet::new(&cfg, 4096, 1, false);
        let mut stats = Stats::default();
        let mut moved = false;
        for k in 1..=200u64 {
            let now = k * 10_000;
            deliver(&mut set, 0, now, if moved { 2 } else { 1 });
            if !moved {
                set.repath_if_wanted(now, 0, &cfg, &mut stats);
            }
            deliver(&mut set, 1, now, 4);
            set.repath_if_wanted(now, 1, &cfg, &mut stats);
            if !moved && stats.repaths > 0 {
                moved = true;
                assert_eq!((set.strikes, set.judged), (1, Some(0)));
            }
            if moved && set.judged.is_none() {
                assert!(set.outpaced(0));
                assert_eq!(set.strikes, 0);
                return;
            }
        }
        panic!("the move was never judged ({} repaths)", stats.repaths);
    }

    /// Three paths, two of them crowded (1 packet per interval) and one fast
    /// (4): a crowded path is outpaced wherever it moves, as when paths
    /// outnumber the usable routes. Over 2,000 intervals the moves die out
    /// (25 moves; 419 without the hold-down, one every 5 intervals). Once
    /// every path delivers 4 the strikes are forgotten.
    #[test]
    fn useless_outpaced_moves_are_held_down() {
        let cfg = QpConfig {
            paths: 3,
            ..QpConfig::default()
        };
        let mut set = PathSet::new(&cfg, 4096, 1, false);
        let mut stats = Stats::default();
        let interval = 10_000;
        for k in 1..=2000u64 {
            let now = k * interval;
            for (path, n) in [(0, 1), (1, 1), (2, 4)] {
                deliver(&mut set, path, now, n);
                set.repath_if_wanted(now, path, &cfg, &mut stats);
            }
        }
        assert!(stats.repaths >= 3, "{} repaths", stats.repaths);
        assert!(stats.repaths <= 30, "{} repaths", stats.repaths);
        assert_eq!(set.strikes, MAX_STRIKES);
        for k in 2001..=5000u64 {
            let now = k * interval;
            for path in 0..3 {
                deliver(&mut set, path, now, 4);
                set.repath_if_wanted(now, path, &cfg, &mut stats);
            }
        }
        assert_eq!(set.strikes, 0);
    }
}
