//! A deterministic in-memory bench: two NICs joined by a seeded channel that
//! drops, reorders across paths, duplicates and corrupts datagrams, with
//! simulated time and egress serialisation. The same seed gives the same run.
//! It is the engine's first test bench and the engine demo's fabric; the
//! full discrete-event fabric simulator lives in `metaroce-fabric`.

use alloc::collections::BinaryHeap;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::net::{IpAddr, Ipv4Addr};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::{
    Access, Event, MemoryRegion, Nic, NicConfig, QpConfig, QpTransition, RemoteEnd, RxMeta,
    VecMemory,
};

/// What the channel does to each datagram.
#[derive(Debug, Clone, Copy)]
pub struct Channel {
    /// Drop probability (data and ACKs alike).
    pub loss: f64,
    /// Probability a datagram is delivered twice.
    pub duplicate: f64,
    /// Probability one byte is flipped (the ICRC must catch it).
    pub corrupt: f64,
    /// One-way base delay, ns.
    pub base_delay_ns: u64,
    /// Extra delay spread across routes, ns: each UDP source port is a route
    /// with its own fixed delay, so packets reorder across paths only.
    pub route_spread_ns: u64,
    /// Egress line rate of each NIC, Gbit/s.
    pub rate_gbps: u64,
    /// Drop everything towards B after this time (a vanished peer).
    pub b_vanishes_at_ns: Option<u64>,
    /// Probability a datagram towards B arrives CE-marked (a congested
    /// queue's ECN mark).
    pub ce_to_b: f64,
    /// A stall of A's receiving side, `(from, until)` ns: datagrams towards
    /// A that would arrive in that time arrive at `until` instead, all at
    /// once (a receive thread waiting for a CPU).
    pub a_stalled: Option<(u64, u64)>,
    /// Datagrams from this UDP source port are dropped (a failed route).
    pub dead_port: Option<u16>,
}

impl Default for Channel {
    fn default() -> Self {
        Channel {
            loss: 0.0,
            duplicate: 0.0,
            corrupt: 0.0,
            base_delay_ns: 4_000,
            route_spread_ns: 3_000,
            rate_gbps: 100,
            b_vanishes_at_ns: None,
            ce_to_b: 0.0,
            a_stalled: None,
            dead_port: None,
        }
    }
}

/// One side of the pair.
pub struct Side {
    /// The engine.
    pub nic: Nic,
    /// Its memory ([`MEM_LEN`] bytes at [`MEM_BASE`], all registered).
    pub mem: VecMemory,
    /// Its address.
    pub ip: IpAddr,
    /// Its connected QP.
    pub qpn: u32,
    /// Its protection domain.
    pub pd: u32,
    /// The region covering all of its memory.
    pub mr: MemoryRegion,
    egress_free_at: u64,
}

/// First address of each side's memory.
pub const MEM_BASE: u64 = 0x1000_0000;
/// Size of each side's memory.
pub const MEM_LEN: usize = 48 << 20;

struct InFlight {
    at: u64,
    seq: u64,
    to_b: bool,
    bytes: Vec<u8>,
    meta: RxMeta,
}

impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    fn cmp(&self, o: &Self) -> core::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Two connected NICs over a [`Channel`].
pub struct Pair {
    /// Side A (10.0.0.1).
    pub a: Side,
    /// Side B (10.0.0.2).
    pub b: Side,
    /// What the channel does.
    pub channel: Channel,
    /// Simulated time, ns.
    pub now: u64,
    rng: SmallRng,
    wire: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    buf: Vec<u8>,
    /// Datagrams delivered.
    pub delivered: u64,
    /// Datagrams the channel dropped.
    pub dropped_by_channel: u64,
    /// When set, every datagram either NIC sends is copied here (towards B,
    /// bytes, metadata), as an on-path observer would see it.
    pub capture: Option<Vec<(bool, Vec<u8>, RxMeta)>>,
}

impl Pair {
    /// Two NICs with one connected RC QP each (RTS both ways).
    pub fn new(seed: u64, paths: u16, channel: Channel) -> Pair {
        let qp = QpConfig {
            paths,
            streams: 8,
            ..QpConfig::default()
        };
        Pair::with_config(seed, qp, channel)
    }

    /// Two NICs whose QPs use `qp`.
    pub fn with_config(seed: u64, qp: QpConfig, channel: Channel) -> Pair {
        Pair::build(seed, [qp.clone(), qp], channel, true)
    }

    /// Two NICs whose QPs use `qp_a` and `qp_b`.
    pub fn with_configs(seed: u64, qp_a: QpConfig, qp_b: QpConfig, channel: Channel) -> Pair {
        Pair::build(seed, [qp_a, qp_b], channel, true)
    }

    /// Like [`Pair::new`], but B's QP stays in RTR (a READ responder that
    /// never sends a request of its own, as perftest's `ib_read_bw` server);
    /// it would move to RTS with first PSN 5000.
    pub fn responder_in_rtr(seed: u64, paths: u16, channel: Channel) -> Pair {
        let qp = QpConfig {
            paths,
            streams: 8,
            ..QpConfig::default()
        };
        Pair::build(seed, [qp.clone(), qp], channel, false)
    }

    fn build(seed: u64, [qp_a, qp_b]: [QpConfig; 2], channel: Channel, b_to_rts: bool) -> Pair {
        let mk = |ip: [u8; 4], s: u64, qp: QpConfig| {
            let cfg = NicConfig {
                local_ip: IpAddr::V4(Ipv4Addr::from(ip)),
                seed: s,
                qp,
                line_rate_mbps: (channel.rate_gbps * 1000) as u32,
                ..NicConfig::default()
            };
            let mut nic = Nic::new(cfg);
            let pd = nic.alloc_pd();
            let mr = nic
                .register_mr(
                    pd,
                    MEM_BASE,
                    MEM_LEN as u64,
                    Access::LOCAL_WRITE
                        | Access::REMOTE_WRITE
                        | Access::REMOTE_READ
                        | Access::REMOTE_ATOMIC,
                )
                .unwrap();
            let qpn = nic.create_qp(pd, None).unwrap();
            Side {
                nic,
                mem: VecMemory::new(MEM_BASE, MEM_LEN),
                ip: IpAddr::V4(Ipv4Addr::from(ip)),
                qpn,
                pd,
                mr,
                egress_free_at: 0,
            }
        };
        let mut a = mk([10, 0, 0, 1], seed, qp_a);
        let mut b = mk([10, 0, 0, 2], seed ^ 0xb, qp_b);
        connect(&mut a, &b, 1000, 5000, true);
        connect(&mut b, &a, 5000, 1000, b_to_rts);
        Pair {
            a,
            b,
            channel,
            now: 0,
            rng: SmallRng::seed_from_u64(seed),
            wire: BinaryHeap::new(),
            seq: 0,
            buf: vec![0; 9000],
            delivered: 0,
            dropped_by_channel: 0,
            capture: None,
        }
    }

    fn route_delay(&self, port: u16) -> u64 {
        let h = (u64::from(port)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
        self.channel.base_delay_ns + h % self.channel.route_spread_ns.max(1)
    }

    /// Lets both NICs transmit whatever their egress allows at `now`.
    fn transmit(&mut self) {
        for to_b in [true, false] {
            loop {
                let side = if to_b { &mut self.a } else { &mut self.b };
                if side.egress_free_at > self.now {
                    break;
                }
                let Some(t) = side
                    .nic
                    .poll_transmit(self.now, &mut self.buf, &mut side.mem)
                else {
                    break;
                };
                let src_ip = side.ip;
                let ser = (t.len as u64 + 70) * 8 / self.channel.rate_gbps;
                side.egress_free_at = self.now + ser;
                let meta = RxMeta {
                    src_ip,
                    src_port: t.src_port,
                    dst_ip: t.dst_ip,
                    dst_port: t.dst_port,
                    ecn_ce: false,
                };
                let bytes = self.buf[..t.len].to_vec();
                self.launch(to_b, bytes, meta, ser);
            }
        }
    }

    fn launch(&mut self, to_b: bool, mut bytes: Vec<u8>, mut meta: RxMeta, ser: u64) {
        if let Some(c) = self.capture.as_mut() {
            c.push((to_b, bytes.clone(), meta));
        }
        let vanished = to_b && self.channel.b_vanishes_at_ns.is_some_and(|t| self.now >= t);
        let dead = self.channel.dead_port == Some(meta.src_port);
        if vanished || dead || self.rng.gen_bool(self.channel.loss) {
            self.dropped_by_channel += 1;
            return;
        }
        // No draw without marks: the runs of every other channel stay as they were.
        if to_b && self.channel.ce_to_b > 0.0 && self.rng.gen_bool(self.channel.ce_to_b) {
            meta.ecn_ce = true;
        }
        if self.rng.gen_bool(self.channel.corrupt) {
            let i = self.rng.gen_range(0..bytes.len());
            bytes[i] ^= 1 << self.rng.gen_range(0..8);
        }
        let mut at = self.now + ser + self.route_delay(meta.src_port);
        if let Some((from, until)) = self.channel.a_stalled
            && !to_b
            && (from..until).contains(&at)
        {
            at = until;
        }
        if self.rng.gen_bool(self.channel.duplicate) {
            self.push(at + 500, to_b, bytes.clone(), meta);
        }
        self.push(at, to_b, bytes, meta);
    }

    fn push(&mut self, at: u64, to_b: bool, bytes: Vec<u8>, meta: RxMeta) {
        self.seq += 1;
        self.wire.push(Reverse(InFlight {
            at,
            seq: self.seq,
            to_b,
            bytes,
            meta,
        }));
    }

    /// Injects a raw datagram towards B at the current time.
    pub fn inject_to_b(&mut self, bytes: Vec<u8>, meta: RxMeta) {
        self.push(self.now, true, bytes, meta);
    }

    /// Injects a raw datagram towards A at the current time.
    pub fn inject_to_a(&mut self, bytes: Vec<u8>, meta: RxMeta) {
        self.push(self.now, false, bytes, meta);
    }

    /// Advances simulated time by one step. Returns false when nothing at all
    /// is pending (no datagram, no timer, no transmission).
    pub fn step(&mut self) -> bool {
        self.transmit();
        let mut next = self.wire.peek().map(|Reverse(f)| f.at);
        for side in [&self.a, &self.b] {
            let t = side.nic.poll_timeout();
            next = match (next, t) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            if side.egress_free_at > self.now {
                next = Some(next.map_or(side.egress_free_at, |n| n.min(side.egress_free_at)));
            }
        }
        let Some(next) = next else { return false };
        self.now = self.now.max(next);
        while self.wire.peek().is_some_and(|Reverse(f)| f.at <= self.now) {
            let Reverse(f) = self.wire.pop().expect("peeked");
            let side = if f.to_b { &mut self.b } else { &mut self.a };
            side.nic
                .handle_datagram(self.now, &f.bytes, f.meta, &mut side.mem);
            self.delivered += 1;
        }
        for side in [&mut self.a, &mut self.b] {
            if side.nic.poll_timeout().is_some_and(|t| t <= self.now) {
                side.nic.handle_timeout(self.now, &mut side.mem);
            }
        }
        true
    }

    /// Runs until `done` holds or `limit_ns` of simulated time passes.
    pub fn run_until(&mut self, limit_ns: u64, mut done: impl FnMut(&mut Pair) -> bool) -> bool {
        while self.now < limit_ns {
            if done(self) {
                return true;
            }
            if !self.step() {
                return done(self);
            }
        }
        done(self)
    }

    /// Connects one more pair of QPs: `a_qpn` of A and `b_qpn` of B (both in
    /// RESET), both ways to RTS as [`Pair::new`] connects its own.
    pub fn connect_qps(&mut self, a_qpn: u32, b_qpn: u32) {
        let (a, b) = (&mut self.a, &mut self.b);
        let (a_own, b_own) = (a.qpn, b.qpn);
        (a.qpn, b.qpn) = (a_qpn, b_qpn);
        connect(a, b, 300, 700, true);
        connect(b, a, 700, 300, true);
        (a.qpn, b.qpn) = (a_own, b_own);
    }

    /// Drains the events of both sides.
    pub fn events(&mut self) -> (Vec<Event>, Vec<Event>) {
        let mut a = Vec::new();
        while let Some(e) = self.a.nic.poll_event() {
            a.push(e);
        }
        let mut b = Vec::new();
        while let Some(e) = self.b.nic.poll_event() {
            b.push(e);
        }
        (a, b)
    }
}

fn connect(local: &mut Side, remote: &Side, local_psn: u32, remote_psn: u32, to_rts: bool) {
    let nic = &mut local.nic;
    nic.modify_qp(local.qpn, QpTransition::Init).unwrap();
    let end = RemoteEnd {
        qpn: remote.qpn,
        ip: remote.ip,
        udp_port: remote.nic.config().udp_port,
        initial_psn: remote_psn,
    };
    nic.modify_qp(local.qpn, QpTransition::Rtr(end)).unwrap();
    if !to_rts {
        return;
    }
    nic.modify_qp(
        local.qpn,
        QpTransition::Rts {
            initial_psn: local_psn,
            retry_cnt: 7,
            rnr_retry: 7,
            timeout_ns: 500_000,
        },
    )
    .unwrap();
}

/// `repr` emitted with `payload` and an ICRC valid for `meta`'s addresses: a
/// datagram as a (hostile) peer would build it.
pub fn datagram(repr: &metaroce_proto::Repr, payload: &[u8], meta: &RxMeta) -> Vec<u8> {
    use metaroce_proto::{Packet, PseudoHeader};
    let mut buf = vec![0u8; repr.buffer_len(payload.len())];
    let Ok(len) = repr.emit(&mut buf, payload.len()) else {
        return Vec::new();
    };
    buf[repr.header_len()..repr.header_len() + payload.len()].copy_from_slice(payload);
    buf.truncate(len);
    Packet::new_unchecked(&mut buf[..]).fill_icrc(&PseudoHeader::new(
        meta.src_ip,
        meta.src_port,
        meta.dst_ip,
        meta.dst_port,
    ));
    buf
}

/// A signaled WRITE of `len` bytes from A's `addr` to the same address on B
/// (both in the bench's regions), on stream 0.
pub fn write_wr(p: &Pair, wr_id: u64, addr: u64, len: u32) -> crate::SendWr {
    crate::SendWr {
        wr_id,
        op: crate::SendOp::Write {
            remote_va: addr,
            rkey: p.b.mr.rkey,
        },
        sgl: crate::Sge {
            addr,
            len,
            lkey: p.a.mr.lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream: 0,
    }
}

/// The completions among `events` (other events left out).
pub fn completions(events: Vec<Event>) -> Vec<crate::Completion> {
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::Completion(c) => Some(c),
            _ => None,
        })
        .collect()
}

impl Pair {
    /// Writes message `i`'s pattern ([`pattern`], `len` bytes at
    /// `MEM_BASE + i · len`) into A's memory and posts it as a WRITE to the
    /// same address at B.
    pub fn post_pattern_write(&mut self, i: u64, len: u32) {
        let addr = MEM_BASE + i * u64::from(len);
        pattern(i, self.a.mem.slice_mut(addr, len as usize));
        let wr = write_wr(self, i, addr, len);
        self.a.nic.post_send(self.a.qpn, wr).expect("post_send");
    }

    /// Runs until A's next completion, at most 50 ms of simulated time;
    /// false when none came.
    pub fn run_to_completion(&mut self) -> bool {
        let limit = self.now + 50_000_000;
        let mut done = false;
        self.run_until(limit, |p| {
            done |= !completions(p.events().0).is_empty();
            done
        })
    }
}

/// Deterministic pattern bytes for message `id`.
pub fn pattern(id: u64, out: &mut [u8]) {
    let mut rng = SmallRng::seed_from_u64(id.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5a5a);
    rng.fill(out);
}
