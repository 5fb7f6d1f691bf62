//! The relay thread: receive, hash onto a path, drop/mark/queue, pace, delay, forward.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use metaroce_proto::{Packet, PseudoHeader};
use metaroce_udp::{
    BatchSocket, Datagram, Ecn, GRO_BUFFER_SIZE, MAX_BATCH, PollSet, RxBatch, TxPacket,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::RelayError;
use crate::config::{ForwardInfo, PathConfig, PathMap, Rewriter};
use crate::control::{Command, Shared, bump};
use crate::pcap::PcapWriter;

/// Reads taken from one listen socket before the paths are serviced again.
const RX_ROUNDS: usize = 8;
/// Retry delay after a path socket refused more datagrams (send buffer full).
const SEND_RETRY: Duration = Duration::from_micros(100);
/// Longest sleep when nothing is scheduled (the wake socket interrupts it anyway).
const IDLE_WAIT: Duration = Duration::from_millis(250);

/// Metadata of one pool buffer.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    len: usize,
    ecn: Ecn,
    link: usize,
}

/// The emulation state of one path's egress towards one destination (an output queue).
struct PathState {
    cfg: PathConfig,
    /// Token bucket level in bytes.
    tokens: f64,
    last_refill: Instant,
    /// Waiting for service (indices into the pool).
    queue: VecDeque<u32>,
    queue_bytes: usize,
    /// Served, in flight for `delay`: (release time, pool index).
    line: VecDeque<(Instant, u32)>,
    /// Set when the socket pushed back; retry at this time.
    retry_at: Option<Instant>,
}

/// Packet buffers and the paths that hold them.
struct Fabric {
    /// Output queues: path `p` towards egress `e` is `queues[p * n_egress + e]`.
    queues: Vec<PathState>,
    /// One socket per path.
    socks: Vec<BatchSocket>,
    /// Egress (distinct `forward_to` address) of each link.
    egress_of_link: Vec<usize>,
    /// Number of distinct destinations.
    n_egress: usize,
    pool: Vec<u8>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    max_datagram: usize,
    path_map: PathMap,
    rng: SmallRng,
    rewrite: Option<Rewriter>,
    /// Verify and re-seal MetaRoCE ICRCs.
    reseal_icrc: bool,
    /// Listen address of each link (the destination the sender sealed for).
    listen_addrs: Vec<SocketAddr>,
    forward_to: Vec<SocketAddr>,
    pcap: Option<PcapWriter>,
    pcap_error: Option<io::Error>,
    shared: Arc<Shared>,
}

/// Everything the relay thread owns.
pub(crate) struct Forwarder {
    fabric: Fabric,
    listen: Vec<BatchSocket>,
    rx: RxBatch,
    control: Option<UdpSocket>,
    wake: UnixDatagram,
    poll: PollSet,
}

/// Sockets and settings built by [`Relay::start`](crate::Relay::start) for the thread.
pub(crate) struct ForwarderParts {
    pub(crate) listen: Vec<BatchSocket>,
    pub(crate) forward_to: Vec<SocketAddr>,
    pub(crate) path_socks: Vec<BatchSocket>,
    pub(crate) path_cfgs: Vec<PathConfig>,
    pub(crate) path_map: PathMap,
    pub(crate) seed: u64,
    pub(crate) max_datagram: usize,
    pub(crate) pool_packets: usize,
    pub(crate) pcap: Option<PcapWriter>,
    pub(crate) control: Option<UdpSocket>,
    pub(crate) rewrite: Option<Rewriter>,
    pub(crate) reseal_icrc: bool,
    pub(crate) listen_addrs: Vec<SocketAddr>,
    pub(crate) wake: UnixDatagram,
    pub(crate) shared: Arc<Shared>,
}

impl Forwarder {
    pub(crate) fn new(p: ForwarderParts) -> Self {
        let now = Instant::now();
        let pool_packets = p.pool_packets.clamp(1, u32::MAX as usize);
        // Links with the same destination share its output queues (incast); opposite
        // directions do not (a path is a full-duplex route).
        let mut egresses: Vec<SocketAddr> = Vec::new();
        let egress_of_link: Vec<usize> = p
            .forward_to
            .iter()
            .map(|dst| match egresses.iter().position(|e| e == dst) {
                Some(i) => i,
                None => {
                    egresses.push(*dst);
                    egresses.len() - 1
                }
            })
            .collect();
        let n_egress = egresses.len().max(1);
        let queues = p
            .path_cfgs
            .iter()
            .flat_map(|cfg| std::iter::repeat_n(cfg, n_egress))
            .map(|cfg| {
                let mut cfg = *cfg;
                cfg.burst_bytes = cfg.burst_bytes.max(p.max_datagram);
                PathState {
                    tokens: cfg.burst_bytes as f64,
                    cfg,
                    last_refill: now,
                    queue: VecDeque::with_capacity(pool_packets),
                    queue_bytes: 0,
                    line: VecDeque::with_capacity(pool_packets),
                    retry_at: None,
                }
            })
            .collect();
        let mut poll = PollSet::new();
        for s in &p.listen {
            poll.add(s);
        }
        if let Some(c) = &p.control {
            poll.add(c);
        }
        poll.add(&p.wake);
        Forwarder {
            fabric: Fabric {
                queues,
                socks: p.path_socks,
                egress_of_link,
                n_egress,
                pool: vec![0; pool_packets * p.max_datagram],
                slots: vec![Slot::default(); pool_packets],
                free: (0..pool_packets as u32).rev().collect(),
                max_datagram: p.max_datagram,
                path_map: p.path_map,
                rng: SmallRng::seed_from_u64(p.seed),
                rewrite: p.rewrite,
                reseal_icrc: p.reseal_icrc,
                listen_addrs: p.listen_addrs,
                forward_to: p.forward_to,
                pcap: p.pcap,
                pcap_error: None,
                shared: p.shared,
            },
            rx: RxBatch::new(
                MAX_BATCH,
                if p.listen.iter().any(BatchSocket::gro_enabled) {
                    GRO_BUFFER_SIZE.max(p.max_datagram)
                } else {
                    p.max_datagram
                },
            ),
            listen: p.listen,
            control: p.control,
            wake: p.wake,
            poll,
        }
    }

    /// Runs until told to stop; returns the first fatal error (or a pcap write error).
    pub(crate) fn run(mut self) -> Result<(), RelayError> {
        let result = self.run_loop();
        if let Some(Err(e)) = self.fabric.pcap.as_mut().map(PcapWriter::flush) {
            self.fabric.pcap_error.get_or_insert(e);
        }
        result?;
        match self.fabric.pcap_error.take() {
            Some(e) => Err(RelayError::Pcap(e)),
            None => Ok(()),
        }
    }

    fn run_loop(&mut self) -> Result<(), RelayError> {
        let control_idx = self.listen.len();
        let wake_idx = control_idx + usize::from(self.control.is_some());
        loop {
            if self.fabric.shared.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let now = Instant::now();
            self.fabric.service(now);
            let timeout = self
                .fabric
                .next_event()
                .map_or(IDLE_WAIT, |t| t.saturating_duration_since(now));
            self.poll.wait(Some(timeout))?;
            if self.poll.readable(wake_idx) {
                let mut b = [0u8; 16];
                while self.wake.recv(&mut b).is_ok() {}
            }
            for (link, sock) in self.listen.iter().enumerate() {
                if !self.poll.readable(link) {
                    continue;
                }
                for _ in 0..RX_ROUNDS {
                    if sock.recv_batch(&mut self.rx)? == 0 {
                        break;
                    }
                    let now = Instant::now();
                    for d in self.rx.datagrams() {
                        self.fabric.ingest(&d, link, now);
                    }
                }
            }
            if self.control.is_some() && self.poll.readable(control_idx) {
                self.serve_control();
            }
        }
    }

    /// Answers every queued control datagram: each line is a command; the reply holds one
    /// response per line (`ok`, `error: ...`, or the stats table).
    fn serve_control(&mut self) {
        let Some(sock) = &self.control else { return };
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            let text = String::from_utf8_lossy(&buf[..n]);
            let mut reply = String::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                match Command::parse(line).and_then(|c| self.fabric.shared.apply(c)) {
                    Ok(r) => reply.push_str(r.trim_end()),
                    Err(e) => reply.push_str(&format!("error: {e}")),
                }
                reply.push('\n');
            }
            // A lost reply is the client's to retry; the relay keeps running.
            let _ = sock.send_to(reply.as_bytes(), from);
        }
    }
}

impl Fabric {
    /// Takes one arriving datagram: path choice, blackhole, loss, drop-tail, ECN marking.
    fn ingest(&mut self, d: &Datagram<'_>, link: usize, now: Instant) {
        let n = self.socks.len();
        let path = self.path_map.path_of(d.src.port(), n);
        let ctl = &self.shared.paths[path];
        bump(&ctl.counters.received);
        if ctl.blackholed.load(Ordering::Relaxed) {
            bump(&ctl.counters.blackholed);
            return;
        }
        let loss = ctl.loss();
        if loss > 0.0 && self.rng.gen_bool(loss.min(1.0)) {
            bump(&ctl.counters.dropped_loss);
            return;
        }
        let plen = if self.reseal_icrc {
            let Some(plen) = icrc_len(d, self.listen_addrs[link]) else {
                bump(&ctl.counters.bad_icrc);
                return;
            };
            plen
        } else {
            d.data.len()
        };
        let dup = self.queues[path * self.n_egress].cfg.duplicate;
        if self.enqueue(d, plen, link, path, now) && dup > 0.0 && self.rng.gen_bool(dup.min(1.0)) {
            bump(&self.shared.paths[path].counters.duplicated);
            self.enqueue(d, plen, link, path, now);
        }
    }

    /// Queues a copy of `d` on `path` (drop-tail, ECN marking, re-seal of the ICRC
    /// ending at `plen`, rewrite hook); false if it was dropped.
    fn enqueue(
        &mut self,
        d: &Datagram<'_>,
        plen: usize,
        link: usize,
        path: usize,
        now: Instant,
    ) -> bool {
        let ctl = &self.shared.paths[path];
        let st = &mut self.queues[path * self.n_egress + self.egress_of_link[link]];
        let src = self.socks[path].local_addr();
        let len = d.data.len();
        if len > self.max_datagram || st.queue_bytes + len > st.cfg.queue_bytes {
            bump(&ctl.counters.dropped_queue);
            return false;
        }
        let Some(idx) = self.free.pop() else {
            bump(&ctl.counters.dropped_queue);
            return false;
        };
        let mut ecn = d.ecn;
        let over = st
            .cfg
            .ecn_threshold_bytes
            .is_some_and(|k| st.queue_bytes >= k);
        if over && matches!(ecn, Ecn::Ect0 | Ecn::Ect1) {
            ecn = Ecn::Ce;
            bump(&ctl.counters.ce_marked);
        }
        let base = idx as usize * self.max_datagram;
        let buf = &mut self.pool[base..base + len];
        buf.copy_from_slice(d.data);
        if self.reseal_icrc {
            let dst = self.forward_to[link];
            let pseudo = PseudoHeader::new(src.ip(), src.port(), dst.ip(), dst.port());
            Packet::new_unchecked(&mut buf[..plen.min(len)]).fill_icrc(&pseudo);
        }
        if let Some(rw) = &mut self.rewrite {
            let info = ForwardInfo {
                path,
                original_src: d.src,
                src,
                dst: self.forward_to[link],
            };
            rw(buf, &info);
        }
        self.slots[idx as usize] = Slot { len, ecn, link };
        if st.queue.is_empty() {
            // Credit the idle time before this arrival to the bucket.
            refill(st, now, ctl.load());
        }
        st.queue.push_back(idx);
        st.queue_bytes += len;
        true
    }

    /// Moves served datagrams from queues to delay lines and sends what is due.
    fn service(&mut self, now: Instant) {
        for q in 0..self.queues.len() {
            let load = self.shared.paths[q / self.n_egress].load();
            let st = &mut self.queues[q];
            refill(st, now, load);
            while let Some(&idx) = st.queue.front() {
                let len = self.slots[idx as usize].len;
                if st.cfg.rate_bps.is_some() {
                    if st.tokens < len as f64 {
                        break;
                    }
                    st.tokens -= len as f64;
                }
                st.queue.pop_front();
                st.queue_bytes -= len;
                st.line.push_back((now + st.cfg.delay, idx));
            }
            if st.retry_at.is_some_and(|t| t > now) {
                continue;
            }
            st.retry_at = None;
            self.send_due(q, now);
        }
    }

    /// Sends the datagrams of output queue `q` whose delay has passed.
    fn send_due(&mut self, q: usize, now: Instant) {
        let p = q / self.n_egress;
        let ctl = &self.shared.paths[p];
        let st = &mut self.queues[q];
        let sock = &self.socks[p];
        loop {
            let mut pkts = [TxPacket::EMPTY; MAX_BATCH];
            let mut n = 0;
            for &(release, idx) in st.line.iter().take(MAX_BATCH) {
                if release > now {
                    break;
                }
                let s = self.slots[idx as usize];
                let base = idx as usize * self.max_datagram;
                pkts[n] = TxPacket {
                    path: p,
                    dst: self.forward_to[s.link],
                    ecn: Some(s.ecn),
                    data: &self.pool[base..base + s.len],
                };
                n += 1;
            }
            if n == 0 {
                return;
            }
            let (sent, failed) = match sock.send_batch(&pkts[..n]) {
                Ok(k) => (k, 0),
                Err(_) => (0, 1), // pkts[0] cannot be sent: drop it
            };
            for pkt in &pkts[..sent] {
                bump(&ctl.counters.forwarded);
                ctl.counters
                    .bytes
                    .fetch_add(pkt.data.len() as u64, Ordering::Relaxed);
                let ecn = pkt.ecn.unwrap_or_default().bits();
                let written = self
                    .pcap
                    .as_mut()
                    .map(|w| w.write(sock.local_addr(), pkt.dst, ecn, pkt.data));
                if let Some(Err(e)) = written {
                    self.pcap_error = Some(e);
                    self.pcap = None;
                }
            }
            for _ in 0..sent + failed {
                if let Some((_, idx)) = st.line.pop_front() {
                    self.free.push(idx);
                }
            }
            if failed > 0 {
                bump(&ctl.counters.send_errors);
            } else if sent < n {
                st.retry_at = Some(now + SEND_RETRY);
                return;
            }
        }
    }

    /// The earliest time something becomes due, if anything is pending.
    fn next_event(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        for (q, st) in self.queues.iter().enumerate() {
            if let Some(t) = st.retry_at {
                consider(t);
            } else if let Some(&(t, _)) = st.line.front() {
                consider(t);
            }
            if let (Some(&idx), Some(rate)) = (st.queue.front(), st.cfg.rate_bps) {
                let need = self.slots[idx as usize].len as f64 - st.tokens;
                let load = self.shared.paths[q / self.n_egress].load();
                let bytes_per_s = effective_rate(rate, load);
                let wait = if need <= 0.0 { 0.0 } else { need / bytes_per_s };
                consider(st.last_refill + Duration::from_secs_f64(wait.min(1.0)));
            }
        }
        next
    }
}

/// If `d` is a MetaRoCE packet whose ICRC verifies for the addresses it travelled
/// between (its sender and the listen address `to`), the packet's length: the whole
/// datagram, or all but an authenticated QP's 24-byte trailer after the ICRC (spec
/// §11.2), which the relay forwards untouched.
fn icrc_len(d: &Datagram<'_>, to: SocketAddr) -> Option<usize> {
    let pseudo = PseudoHeader::new(d.src.ip(), d.src.port(), to.ip(), to.port());
    let ok = |data: &[u8]| Packet::new_checked(data).is_ok_and(|p| p.verify_icrc(&pseudo).is_ok());
    let len = d.data.len();
    if ok(d.data) {
        return Some(len);
    }
    let plen = len.checked_sub(metaroce_proto::auth::AUTH_TRAILER_LEN)?;
    ok(&d.data[..plen]).then_some(plen)
}

/// Bytes per second a path serves with `rate_bps` and a background `load` share.
fn effective_rate(rate_bps: u64, load: f64) -> f64 {
    (rate_bps as f64 / 8.0 * (1.0 - load)).max(1.0)
}

/// Adds the tokens earned since the last refill (at the rate left by the background
/// `load`), capped at the burst size.
fn refill(st: &mut PathState, now: Instant, load: f64) {
    if let Some(rate) = st.cfg.rate_bps {
        let dt = now.saturating_duration_since(st.last_refill).as_secs_f64();
        st.tokens = (st.tokens + dt * effective_rate(rate, load)).min(st.cfg.burst_bytes as f64);
    }
    st.last_refill = now;
}
