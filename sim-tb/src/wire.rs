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
//! - **Path.** The fabric has [`WireConfig::paths`] ECMP paths. Like a
//!   switch, it picks one from the frame's UDP source port (the path
//!   entropy) with a [`PathMap`]. Frames without a UDP header it can find
//!   (not IPv4/IPv6 UDP, IPv6 extension headers, non-first IPv4 fragments,
//!   short or malformed frames) take path 0.
//! - **Serialisation** (optional, [`WireConfig::rate_bits_per_ns`]): each
//!   direction of each path is a link that sends one frame at a time, so a
//!   frame starts when it is sent or when the previous frame on that link
//!   has finished, whichever is later.
//! - **Loss**, after serialisation (the frame used the link): dropped with
//!   the path's [`PathConfig::loss`] probability; 1 is a failed link.
//! - **ECN marking**: an ECN-capable frame (ECT(0) or ECT(1)) is marked CE
//!   with the path's [`PathConfig::ecn_mark`] probability; an IPv4 header
//!   checksum is recomputed. Not-ECT and CE frames, and IPv4 headers whose
//!   checksum does not verify, are left alone.
//! - **Duplication**: with the path's [`PathConfig::dup`] probability a copy
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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Ethernet header length (no VLAN tag).
const ETH_LEN: usize = 14;
/// EtherType of IPv4.
const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
const ETHERTYPE_IPV6: u16 = 0x86DD;
/// IPv6 fixed header length.
const IPV6_LEN: usize = 40;
/// UDP header length.
const UDP_LEN: usize = 8;
/// IP protocol number of UDP.
const PROTO_UDP: u8 = 17;
/// The IP ECN field's CE codepoint.
const ECN_CE: u8 = 0b11;
/// Minimum Ethernet frame length without FCS; shorter frames are padded on
/// the link.
const MIN_FRAME: usize = 60;
/// Bytes a frame occupies on the link besides its own: preamble and SFD
/// (8), FCS (4), inter-frame gap (12).
const LINK_OVERHEAD: usize = 24;

/// How a frame's UDP source port (the path entropy) picks its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathMap {
    /// A seeded SplitMix64 mix of the port, modulo the number of paths, like
    /// a switch's ECMP hash: distinct ports may share a path.
    Hash {
        /// Hash seed.
        seed: u64,
    },
    /// `port % paths`: consecutive ports land on distinct paths.
    Modulo,
}

impl PathMap {
    /// Path index (`0..paths`) of UDP source port `port`; 0 when `paths` is 0.
    pub fn path_of(self, port: u16, paths: usize) -> usize {
        if paths == 0 {
            return 0;
        }
        let key = match self {
            PathMap::Hash { seed } => splitmix64(u64::from(port) ^ seed),
            PathMap::Modulo => u64::from(port),
        };
        (key % paths as u64) as usize
    }
}

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The behaviour of one path, the same in both directions. Probabilities
/// are in `0..=1`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct PathConfig {
    /// Base one-way delay in ns.
    pub delay_ns: u64,
    /// Largest extra delay in ns; each copy of a frame gets a uniform draw
    /// in `[0, jitter_ns]`.
    pub jitter_ns: u64,
    /// Probability that a frame is dropped (1: a failed link).
    pub loss: f64,
    /// Probability that a frame is also delivered a second time.
    pub dup: f64,
    /// Probability that an ECN-capable frame is marked CE.
    pub ecn_mark: f64,
}

/// The fabric: its paths, how frames are spread over them, and the link rate.
#[derive(Clone, Debug, PartialEq)]
pub struct WireConfig {
    /// One entry per ECMP path (at least one); override a path's settings
    /// by editing its entry, e.g. `paths[2].loss = 1.0`.
    pub paths: Vec<PathConfig>,
    /// How a UDP source port picks a path.
    pub path_map: PathMap,
    /// Serialisation rate of each direction of each path in bits per ns
    /// (100 = 100 Gbit/s); `None` or a non-positive value: unlimited.
    pub rate_bits_per_ns: Option<f64>,
}

impl WireConfig {
    /// `paths` paths that all behave like `path`, hashed with
    /// `PathMap::Hash { seed: 0 }`, unlimited rate.
    pub fn uniform(paths: usize, path: PathConfig) -> Self {
        Self {
            paths: vec![path; paths],
            path_map: PathMap::Hash { seed: 0 },
            rate_bits_per_ns: None,
        }
    }
}

/// Counters of one direction of one path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Frames sent onto the path.
    pub sent: u64,
    /// Frames dropped.
    pub lost: u64,
    /// Frames delivered twice.
    pub duplicated: u64,
    /// Frames marked CE.
    pub ce_marked: u64,
}

impl PathStats {
    /// Adds `other`'s counters to these.
    fn absorb(&mut self, other: &PathStats) {
        self.sent += other.sent;
        self.lost += other.lost;
        self.duplicated += other.duplicated;
        self.ce_marked += other.ce_marked;
    }
}

/// What the wire has done so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WireStats {
    /// `per_path[from][path]`: counters of the frames sent from port `from`
    /// on `path`.
    pub per_path: [Vec<PathStats>; 2],
    /// `injected[to]`: frames injected toward port `to` (not in `per_path`).
    pub injected: [u64; 2],
}

impl WireStats {
    /// All paths' counters of the frames sent from port `from`.
    pub fn direction(&self, from: usize) -> PathStats {
        let mut total = PathStats::default();
        for s in &self.per_path[from] {
            total.absorb(s);
        }
        total
    }

    /// All paths' counters, both directions.
    pub fn total(&self) -> PathStats {
        let mut total = self.direction(0);
        total.absorb(&self.direction(1));
        total
    }
}

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
    /// configuration's [`PathMap`], or 0 without a UDP header.
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

/// Where a frame's IP header is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum L3 {
    /// IPv4, header length in bytes (complete in the frame).
    V4(usize),
    /// IPv6 (the fixed header complete in the frame).
    V6,
}

/// The frame's IP header, if it is Ethernet II IPv4 or IPv6 and the header
/// is complete.
fn l3(frame: &[u8]) -> Option<L3> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let first = *frame.get(ETH_LEN)?;
    match (ethertype, first >> 4) {
        (ETHERTYPE_IPV4, 4) => {
            let ihl = usize::from(first & 0x0f) * 4;
            (ihl >= 20 && frame.len() >= ETH_LEN + ihl).then_some(L3::V4(ihl))
        }
        (ETHERTYPE_IPV6, 6) => (frame.len() >= ETH_LEN + IPV6_LEN).then_some(L3::V6),
        _ => None,
    }
}

/// The UDP source port, if the frame is IPv4 (first or only fragment) or
/// IPv6 (no extension headers) UDP with a complete UDP header.
fn udp_src_port(frame: &[u8]) -> Option<u16> {
    let l4 = match l3(frame)? {
        L3::V4(ihl) => {
            let frag_offset = u16::from_be_bytes([frame[ETH_LEN + 6], frame[ETH_LEN + 7]]) & 0x1fff;
            if frame[ETH_LEN + 9] != PROTO_UDP || frag_offset != 0 {
                return None;
            }
            ETH_LEN + ihl
        }
        L3::V6 => {
            if frame[ETH_LEN + 6] != PROTO_UDP {
                return None;
            }
            ETH_LEN + IPV6_LEN
        }
    };
    let udp = frame.get(l4..l4 + UDP_LEN)?;
    Some(u16::from_be_bytes([udp[0], udp[1]]))
}

/// The frame's IP header if it may be marked CE: its ECN field is ECT(0)
/// or ECT(1) and, for IPv4, its header checksum verifies.
fn markable(frame: &[u8]) -> Option<L3> {
    let l3 = l3(frame)?;
    let ecn = match l3 {
        L3::V4(_) => frame[ETH_LEN + 1] & 0b11,
        L3::V6 => (frame[ETH_LEN + 1] >> 4) & 0b11,
    };
    if ecn == 0 || ecn == ECN_CE {
        return None;
    }
    match l3 {
        L3::V4(ihl) => (ones_sum(&frame[ETH_LEN..ETH_LEN + ihl]) == 0xffff).then_some(l3),
        L3::V6 => Some(l3),
    }
}

/// Sets the ECN field of the header `l3` (from [`markable`]) to CE; for
/// IPv4 recomputes the header checksum.
fn set_ce(frame: &mut [u8], l3: L3) {
    match l3 {
        L3::V4(ihl) => {
            frame[ETH_LEN + 1] |= ECN_CE;
            frame[ETH_LEN + 10..ETH_LEN + 12].fill(0);
            let sum = !ones_sum(&frame[ETH_LEN..ETH_LEN + ihl]);
            frame[ETH_LEN + 10..ETH_LEN + 12].copy_from_slice(&sum.to_be_bytes());
        }
        // Traffic class: low nibble of byte 0 and high nibble of byte 1;
        // ECN is its two low bits.
        L3::V6 => frame[ETH_LEN + 1] |= ECN_CE << 4,
    }
}

/// Ones'-complement sum of the big-endian 16-bit words of `bytes` (an even
/// number of them).
fn ones_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks_exact(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{
        IpDscp, IpEcn, IpFragOffset, IpHeaders, Ipv4Header, Ipv4HeaderSlice, Ipv6FlowLabel,
        Ipv6Header, Ipv6HeaderSlice, PacketBuilder,
    };

    /// An Ethernet/IPv4/UDP frame from `port` with IP ECN `ecn`, carrying
    /// `id` as its payload.
    fn v4(port: u16, ecn: u8, id: u32) -> Vec<u8> {
        let header = Ipv4Header {
            dscp: IpDscp::try_new(26).expect("6 bits"),
            ecn: IpEcn::try_new(ecn).expect("2 bits"),
            identification: 0x1234 ^ id as u16,
            time_to_live: 64,
            source: [10, 0, 0, 1],
            destination: [10, 0, 0, 2],
            ..Default::default()
        };
        build(IpHeaders::Ipv4(header, Default::default()), port, id)
    }

    /// An Ethernet/IPv6/UDP frame from `port` with traffic class `tc`,
    /// carrying `id` as its payload.
    fn v6(port: u16, tc: u8, id: u32) -> Vec<u8> {
        let header = Ipv6Header {
            traffic_class: tc,
            flow_label: Ipv6FlowLabel::try_new(0xabcde).expect("20 bits"),
            hop_limit: 64,
            source: [0xfd; 16],
            destination: [0xfe; 16],
            ..Default::default()
        };
        build(IpHeaders::Ipv6(header, Default::default()), port, id)
    }

    fn build(ip: IpHeaders, port: u16, id: u32) -> Vec<u8> {
        let builder = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ip(ip)
            .udp(port, 4791);
        let payload = id.to_be_bytes();
        let mut out = Vec::with_capacity(builder.size(payload.len()));
        builder.write(&mut out, &payload).expect("build frame");
        out
    }

    /// The id a [`v4`]/[`v6`] frame carries.
    fn id_of(frame: &[u8]) -> u32 {
        let tail: [u8; 4] = frame[frame.len() - 4..].try_into().expect("4 bytes");
        u32::from_be_bytes(tail)
    }

    fn path(delay_ns: u64, jitter_ns: u64) -> PathConfig {
        PathConfig {
            delay_ns,
            jitter_ns,
            ..Default::default()
        }
    }

    /// Everything that arrives at port `to`, with its arrival time.
    fn drain(w: &mut Wire, to: usize) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some(at) = w.next_arrival(to) {
            let frame = w.receive(to, at).expect("frame due");
            out.push((at, frame));
        }
        out
    }

    fn lossy_cfg() -> WireConfig {
        WireConfig::uniform(
            4,
            PathConfig {
                delay_ns: 1000,
                jitter_ns: 500,
                loss: 0.1,
                dup: 0.05,
                ecn_mark: 0.2,
            },
        )
    }

    fn run(seed: u64) -> (Vec<(u64, Vec<u8>)>, WireStats) {
        let mut w = Wire::new(lossy_cfg(), seed);
        for i in 0..2000u32 {
            w.send(0, u64::from(i) * 50, v4(i as u16, 2, i));
        }
        (
            drain(&mut w, 0)
                .into_iter()
                .chain(drain(&mut w, 1))
                .collect(),
            w.stats().clone(),
        )
    }

    #[test]
    fn deterministic_for_a_seed() {
        let (a, sa) = run(42);
        let (b, sb) = run(42);
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        let (c, _) = run(43);
        assert_ne!(a, c);
        assert!(sa.total().lost > 0 && sa.total().duplicated > 0 && sa.total().ce_marked > 0);
    }

    #[test]
    fn loss_and_dup_fractions() {
        let mut w = Wire::new(lossy_cfg(), 7);
        let n = 20_000u32;
        for i in 0..n {
            w.send(1, u64::from(i), v4(i as u16, 0, i));
        }
        let t = w.stats().direction(1);
        assert_eq!(t.sent, u64::from(n));
        assert_eq!(w.stats().direction(0), PathStats::default());
        let lost = t.lost as f64 / f64::from(n);
        let dup = t.duplicated as f64 / (t.sent - t.lost) as f64;
        assert!((lost - 0.1).abs() < 0.01, "loss fraction {lost}");
        assert!((dup - 0.05).abs() < 0.01, "dup fraction {dup}");
        assert_eq!(t.ce_marked, 0, "not-ECT frames are never marked");
        let got = drain(&mut w, 0);
        assert_eq!(got.len() as u64, t.sent - t.lost + t.duplicated);
        assert_eq!(w.in_flight(), 0);
        assert!(drain(&mut w, 1).is_empty());
    }

    #[test]
    fn failed_path_loses_exactly_its_frames() {
        let mut cfg = WireConfig::uniform(4, path(100, 50));
        cfg.paths[2].loss = 1.0;
        let map = cfg.path_map;
        let mut w = Wire::new(cfg, 1);
        let ports = 0..1000u16;
        for p in ports.clone() {
            w.send(0, u64::from(p), v4(p, 0, u32::from(p)));
        }
        let on_failed = ports.clone().filter(|&p| map.path_of(p, 4) == 2).count() as u64;
        assert!(on_failed > 0);
        let s = &w.stats().per_path[0];
        assert_eq!(s[2].lost, on_failed);
        assert_eq!(s[2].sent, on_failed);
        assert_eq!(w.stats().total().lost, on_failed);
        let mut got: Vec<u16> = drain(&mut w, 1)
            .iter()
            .map(|(_, f)| id_of(f) as u16)
            .collect();
        got.sort_unstable();
        let want: Vec<u16> = ports.filter(|&p| map.path_of(p, 4) != 2).collect();
        assert_eq!(got, want);
    }

    fn v4_checksum_ok(frame: &[u8]) -> bool {
        let h = Ipv4HeaderSlice::from_slice(&frame[ETH_LEN..]).expect("IPv4 header");
        h.header_checksum() == h.to_header().calc_header_checksum()
    }

    #[test]
    fn ecn_marks_only_ect_ipv4_with_valid_checksum() {
        let mut w = Wire::new(
            WireConfig::uniform(
                2,
                PathConfig {
                    ecn_mark: 1.0,
                    ..path(10, 0)
                },
            ),
            3,
        );
        for (i, ecn) in [0u8, 1, 2, 3].into_iter().enumerate() {
            let frame = v4(1000 + i as u16, ecn, i as u32);
            assert!(v4_checksum_ok(&frame));
            w.send(0, 0, frame.clone());
            let got = w.receive(1, 10).expect("delivered");
            let h = Ipv4HeaderSlice::from_slice(&got[ETH_LEN..]).expect("IPv4 header");
            let want_ecn = if ecn == 0 { 0 } else { 3 };
            assert_eq!(h.ecn().value(), want_ecn, "ECN {ecn}");
            assert_eq!(h.dcp().value(), 26);
            assert!(v4_checksum_ok(&got), "checksum after marking ECN {ecn}");
            if ecn == 1 || ecn == 2 {
                assert_ne!(
                    got[ETH_LEN + 10..ETH_LEN + 12],
                    frame[ETH_LEN + 10..ETH_LEN + 12]
                );
            }
            // Nothing else changed.
            for (j, (a, b)) in got.iter().zip(&frame).enumerate() {
                if ![ETH_LEN + 1, ETH_LEN + 10, ETH_LEN + 11].contains(&j) {
                    assert_eq!(a, b, "byte {j}");
                }
            }
        }
        assert_eq!(w.stats().total().ce_marked, 2);

        // A header whose checksum does not verify is left alone.
        let mut bad = v4(7, 2, 9);
        bad[ETH_LEN + 10] ^= 0x55;
        w.send(0, 0, bad.clone());
        assert_eq!(w.receive(1, 10), Some(bad));
        assert_eq!(w.stats().total().ce_marked, 2);
    }

    #[test]
    fn ecn_marking_probability() {
        let cfg = WireConfig::uniform(
            1,
            PathConfig {
                ecn_mark: 0.3,
                ..path(0, 0)
            },
        );
        let mut w = Wire::new(cfg, 11);
        for i in 0..10_000u32 {
            w.send(0, 0, v4(5, 1, i));
        }
        let got = drain(&mut w, 1);
        let ce = got.iter().filter(|(_, f)| f[ETH_LEN + 1] & 3 == 3).count();
        assert_eq!(ce as u64, w.stats().total().ce_marked);
        assert!(got.iter().all(|(_, f)| v4_checksum_ok(f)));
        let frac = ce as f64 / 10_000.0;
        assert!((frac - 0.3).abs() < 0.02, "CE fraction {frac}");
    }

    #[test]
    fn ecn_marks_ipv6_traffic_class() {
        let cfg = WireConfig::uniform(
            1,
            PathConfig {
                ecn_mark: 1.0,
                ..path(0, 0)
            },
        );
        let mut w = Wire::new(cfg, 5);
        // DSCP 46 (EF) with each ECN value.
        for ecn in 0u8..4 {
            let tc = (46 << 2) | ecn;
            let frame = v6(4000, tc, u32::from(ecn));
            w.send(1, 0, frame.clone());
            let got = w.receive(0, 0).expect("delivered");
            let h = Ipv6HeaderSlice::from_slice(&got[ETH_LEN..]).expect("IPv6 header");
            let want = if ecn == 0 { tc } else { (46 << 2) | 3 };
            assert_eq!(h.traffic_class(), want, "ECN {ecn}");
            assert_eq!(h.flow_label().value(), 0xabcde);
            assert_eq!(got.len(), frame.len());
            let changed: Vec<usize> = (0..got.len()).filter(|&j| got[j] != frame[j]).collect();
            let want_changed = if ecn == 1 || ecn == 2 {
                vec![ETH_LEN + 1]
            } else {
                vec![]
            };
            assert_eq!(changed, want_changed);
        }
        assert_eq!(w.stats().direction(1).ce_marked, 2);
    }

    /// Pairs of frames (by id) that arrive in the opposite order to their
    /// sending order.
    fn inversions(ids: &[u32]) -> usize {
        ids.windows(2).filter(|w| w[0] > w[1]).count()
    }

    #[test]
    fn jitter_reorders_and_no_jitter_keeps_order() {
        for (jitter, paths) in [(0, 1), (2000, 1), (0, 4)] {
            let mut w = Wire::new(WireConfig::uniform(paths, path(5000, jitter)), 9);
            for i in 0..1000u32 {
                // Four sends at each time stamp: ties must keep send order.
                w.send(0, u64::from(i / 4) * 100, v4(i as u16, 0, i));
            }
            let got = drain(&mut w, 1);
            assert_eq!(got.len(), 1000);
            let ids: Vec<u32> = got.iter().map(|(_, f)| id_of(f)).collect();
            let times: Vec<u64> = got.iter().map(|(t, _)| *t).collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "earliest first");
            if jitter == 0 {
                assert_eq!(ids, (0..1000).collect::<Vec<_>>(), "{paths} paths");
                assert_eq!(times[0], 5000);
            } else {
                assert!(inversions(&ids) > 50, "{} inversions", inversions(&ids));
                assert!(
                    times
                        .iter()
                        .all(|t| (5000..=24_900 + 5000 + 2000).contains(t))
                );
            }
        }
    }

    #[test]
    fn receive_waits_for_arrival_and_inject_is_separate() {
        let mut w = Wire::new(WireConfig::uniform(2, path(300, 0)), 0);
        assert_eq!(w.next_arrival(1), None);
        assert_eq!(w.receive(1, u64::MAX), None);
        let f = v4(1, 0, 1);
        w.send(0, 100, f.clone());
        let junk = vec![0xff; 7];
        w.inject(1, 400, junk.clone());
        assert_eq!(w.in_flight(), 2);
        assert_eq!(w.next_arrival(1), Some(400));
        assert_eq!(w.next_arrival(0), None);
        assert_eq!(w.receive(1, 399), None);
        assert_eq!(w.receive(1, 400), Some(f));
        assert_eq!(w.receive(1, 400), Some(junk));
        assert_eq!(w.in_flight(), 0);
        assert_eq!(w.stats().injected, [0, 1]);
        assert_eq!(w.stats().total().sent, 1);
    }

    #[test]
    fn rate_spaces_frames_on_a_link() {
        let mut cfg = WireConfig::uniform(2, path(1000, 0));
        cfg.path_map = PathMap::Modulo;
        cfg.rate_bits_per_ns = Some(8.0); // one byte per ns
        let mut w = Wire::new(cfg, 0);
        let len = v4(0, 0, 0).len();
        let slot = (len.max(MIN_FRAME) + LINK_OVERHEAD) as u64;
        // Ten frames at once on path 0, one on path 1.
        for i in 0..10u32 {
            w.send(0, 0, v4(0, 0, i));
        }
        w.send(0, 0, v4(1, 0, 99));
        let got = drain(&mut w, 1);
        let path0: Vec<u64> = got
            .iter()
            .filter(|(_, f)| id_of(f) != 99)
            .map(|(t, _)| *t)
            .collect();
        let want: Vec<u64> = (1..=10).map(|k| k * slot + 1000).collect();
        assert_eq!(path0, want);
        let path1 = got.iter().find(|(_, f)| id_of(f) == 99).expect("path 1");
        assert_eq!(path1.0, slot + 1000, "path 1 is a separate link");
        // The other direction is a separate link too.
        w.send(1, 0, v4(0, 0, 0));
        assert_eq!(w.next_arrival(0), Some(slot + 1000));
        // An idle link starts at the send time.
        w.send(0, 1_000_000, v4(0, 0, 0));
        assert_eq!(w.next_arrival(1), Some(1_000_000 + slot + 1000));
    }

    #[test]
    fn path_of_follows_the_udp_source_port() {
        // SplitMix64 known answer: the generator's first output from state 0.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        let seed = 0x5eed;
        let mut cfg = WireConfig::uniform(4, PathConfig::default());
        cfg.path_map = PathMap::Hash { seed };
        let w = Wire::new(cfg, 0);
        let mut count = [0usize; 4];
        for port in 0..1000u16 {
            let want = (splitmix64(u64::from(port) ^ seed) % 4) as usize;
            assert_eq!(w.path_of(&v4(port, 0, 0)), want);
            assert_eq!(w.path_of(&v6(port, 0, 0)), want);
            count[want] += 1;
        }
        assert!(count.iter().all(|&c| c > 150), "spread {count:?}");
        assert_eq!(PathMap::Modulo.path_of(4794, 4), 2);
        assert_eq!(PathMap::Hash { seed: 1 }.path_of(3, 0), 0);
    }

    #[test]
    fn frames_without_udp_take_path_0() {
        let cfg = WireConfig {
            paths: vec![
                PathConfig {
                    ecn_mark: 1.0,
                    ..path(10, 0)
                };
                4
            ],
            path_map: PathMap::Modulo,
            rate_bits_per_ns: None,
        };
        let mut w = Wire::new(cfg, 0);
        let full = v4(3, 2, 0);
        assert_eq!(w.path_of(&full), 3);
        let ip_end = ETH_LEN + Ipv4Header::MIN_LEN;
        // (frame, whether its IP header is complete and so is marked CE).
        let mut frames: Vec<(Vec<u8>, bool)> = (0..ip_end + UDP_LEN)
            .map(|n| (full[..n].to_vec(), n >= ip_end))
            .collect();
        // Non-first fragment (no UDP header in it).
        let frag = Ipv4Header {
            ecn: IpEcn::try_new(2).expect("2 bits"),
            source: [1, 2, 3, 4],
            destination: [5, 6, 7, 8],
            fragment_offset: IpFragOffset::try_new(8).expect("13 bits"),
            ..Default::default()
        };
        frames.push((build(IpHeaders::Ipv4(frag, Default::default()), 3, 0), true));
        // Not IP (ARP), and IPv4 with a bad IHL.
        let mut arp = full.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        frames.push((arp, false));
        let mut bad_ihl = full.clone();
        bad_ihl[ETH_LEN] = 0x43;
        frames.push((bad_ihl, false));
        // IPv6 cut anywhere before the end of the UDP header, and with
        // IPv4's version nibble.
        let six = v6(3, 2, 0);
        assert_eq!(w.path_of(&six), 3);
        let six_end = ETH_LEN + IPV6_LEN;
        frames.extend((ETH_LEN..six_end + UDP_LEN).map(|n| (six[..n].to_vec(), n >= six_end)));
        let mut six_as_four = six.clone();
        six_as_four[ETH_LEN] = 0x45;
        frames.push((six_as_four, false));
        for (f, _) in &frames {
            assert_eq!(w.path_of(f), 0, "{f:02x?}");
            w.send(0, 0, f.clone());
        }
        let got = drain(&mut w, 1);
        assert_eq!(got.len(), frames.len());
        for ((_, g), (f, marked)) in got.iter().zip(&frames) {
            assert_eq!(g.len(), f.len());
            if !marked {
                assert_eq!(g, f);
            } else if f[ETH_LEN] >> 4 == 4 {
                assert_eq!(g[ETH_LEN + 1] & 3, 3);
                assert!(v4_checksum_ok(g));
            } else {
                assert_eq!(g[ETH_LEN + 1] >> 4 & 3, 3);
            }
        }
        let marked = frames.iter().filter(|(_, m)| *m).count() as u64;
        assert_eq!(w.stats().total().ce_marked, marked);
    }
}
