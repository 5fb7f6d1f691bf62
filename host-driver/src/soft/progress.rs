//! The soft NIC's progress thread: the datapath between the engine and the sockets.

use std::net::SocketAddr;
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use metaroce_firmware::RxMeta;

use super::{Core, Shared};
use metaroce_udp::{Ecn, Endpoint, MAX_BATCH, PollSet, RxBatch, TxPacket};

/// Longest sleep when no timer is armed (a wake-up interrupts it).
const IDLE_WAIT: Duration = Duration::from_millis(20);
/// Wait for a full send buffer to drain before retrying.
const SEND_WAIT: Duration = Duration::from_millis(1);
/// Room per transmit buffer beyond the MTU (headers).
const HEADROOM: usize = 256;

/// Where one collected datagram goes.
#[derive(Clone, Copy)]
struct TxMeta {
    dst: SocketAddr,
    sock: usize,
    len: usize,
    ecn_capable: bool,
}

const NO_TX: TxMeta = TxMeta {
    dst: SocketAddr::V4(std::net::SocketAddrV4::new(
        std::net::Ipv4Addr::UNSPECIFIED,
        0,
    )),
    sock: 0,
    len: 0,
    ecn_capable: false,
};

/// Everything the progress thread owns.
pub(crate) struct Progress {
    shared: Arc<Shared>,
    ep: Endpoint,
    wake_rx: UnixDatagram,
    busy_poll: bool,
    rx: RxBatch,
    tx: Vec<u8>,
    slot: usize,
    meta: [TxMeta; MAX_BATCH],
    order: [(u16, u16); MAX_BATCH],
    local: SocketAddr,
    start: Instant,
    /// Longest a close may take.
    close_bound: Duration,
    /// When the close must end, once it started.
    close_deadline: Option<Instant>,
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl Progress {
    pub(crate) fn new(
        shared: Arc<Shared>,
        ep: Endpoint,
        wake_rx: UnixDatagram,
        mtu: usize,
        busy_poll: bool,
        close_bound: Duration,
    ) -> Self {
        let slot = mtu + HEADROOM;
        Progress {
            rx: ep.new_rx_batch(),
            local: ep.listen_addr(),
            shared,
            ep,
            wake_rx,
            busy_poll,
            tx: vec![0; slot * MAX_BATCH],
            slot,
            meta: [NO_TX; MAX_BATCH],
            order: [(0, 0); MAX_BATCH],
            start: Instant::now(),
            close_bound,
            close_deadline: None,
        }
    }

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Runs until the backend stops.
    pub(crate) fn run(mut self) {
        let mut poll = PollSet::new();
        poll.add(self.ep.rx_socket());
        poll.add(&self.wake_rx);
        while !self.shared.stop.load(Ordering::SeqCst) {
            self.shared.dirty.store(false, Ordering::SeqCst);
            let got = self.receive();
            let (sent, next_timer, lingering) = self.engine_round(got);
            if sent > 0 {
                self.send(sent);
            }
            if self.shared.closing.load(Ordering::SeqCst) {
                let deadline = *self
                    .close_deadline
                    .get_or_insert_with(|| Instant::now() + self.close_bound);
                // Closed once nothing is left to send and no destroyed QP lingers.
                if (sent == 0 && lingering == 0) || Instant::now() >= deadline {
                    return;
                }
            }
            if got == 0 && sent == 0 {
                self.idle(&mut poll, next_timer);
            }
        }
    }

    /// True once a close has run out of time.
    fn close_overdue(&self) -> bool {
        self.close_deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Reads one batch; returns the number of datagrams.
    fn receive(&mut self) -> usize {
        add(&self.shared.stats.rx_syscalls, 1);
        // Errors (e.g. ICMP port unreachable from a vanished peer) carry no datagram.
        self.ep.recv(&mut self.rx).unwrap_or(0)
    }

    /// Feeds the received batch and due timers to the engine and collects datagrams to
    /// send; returns how many were collected, the next timer and how many destroyed QPs
    /// still linger.
    fn engine_round(&mut self, got: usize) -> (usize, Option<u64>, usize) {
        let shared = Arc::clone(&self.shared);
        let mut guard = shared.lock();
        let Core { nic, memory } = &mut *guard;
        let now = self.now_ns();
        if got > 0 {
            let (mut n, mut bytes, mut ce) = (0u64, 0u64, 0u64);
            for d in self.rx.datagrams() {
                let ecn_ce = d.ecn == Ecn::Ce;
                let meta = RxMeta {
                    src_ip: d.src.ip(),
                    src_port: d.src.port(),
                    dst_ip: self.local.ip(),
                    dst_port: self.local.port(),
                    ecn_ce,
                };
                nic.handle_datagram(now, d.data, meta, memory);
                n += 1;
                bytes += d.data.len() as u64;
                ce += u64::from(ecn_ce);
            }
            let s = &shared.stats;
            add(&s.rx_datagrams, n);
            add(&s.rx_bytes, bytes);
            add(&s.rx_ce, ce);
        }
        if nic.poll_timeout().is_some_and(|t| t <= now) {
            nic.handle_timeout(now, memory);
        }
        let mut count = 0;
        while count < MAX_BATCH {
            // Time moves while the batch is built; the engine paces against it.
            let now = self.now_ns();
            let buf = &mut self.tx[count * self.slot..(count + 1) * self.slot];
            let Some(t) = nic.poll_transmit(now, buf, memory) else {
                break;
            };
            self.meta[count] = TxMeta {
                dst: SocketAddr::new(t.dst_ip, t.dst_port),
                sock: nic.config().source_slot(t.src_port),
                len: t.len,
                ecn_capable: t.ecn_capable,
            };
            count += 1;
        }
        shared.deliver_events(&mut guard);
        (count, guard.nic.poll_timeout(), guard.nic.lingering_qps())
    }

    /// Sends the `n` collected datagrams, grouped by socket. The engine sealed
    /// each one over the source port of its socket (`NicConfig::source_ports`).
    fn send(&mut self, n: usize) {
        for i in 0..n {
            self.order[i] = (self.meta[i].sock as u16, i as u16);
        }
        self.order[..n].sort_unstable();
        let mut pkts = [TxPacket::EMPTY; MAX_BATCH];
        let mut groups = 0u64;
        for (k, &(sock, i)) in self.order[..n].iter().enumerate() {
            let m = self.meta[usize::from(i)];
            let at = usize::from(i) * self.slot;
            pkts[k] = TxPacket {
                path: usize::from(sock),
                dst: m.dst,
                ecn: (!m.ecn_capable).then_some(Ecn::NotEct),
                data: &self.tx[at..at + m.len],
            };
            if k == 0 || self.order[k - 1].0 != sock {
                groups += 1;
            }
        }
        let stats = &self.shared.stats;
        add(&stats.tx_syscalls, groups);
        let mut done = 0;
        while done < n && !self.shared.stop.load(Ordering::Relaxed) && !self.close_overdue() {
            match self.ep.send(&pkts[done..n]) {
                Ok(k) if k > 0 => {
                    let bytes: usize = pkts[done..done + k].iter().map(|p| p.data.len()).sum();
                    add(&stats.tx_datagrams, k as u64);
                    add(&stats.tx_bytes, bytes as u64);
                    done += k;
                }
                Ok(_) => {
                    // Send buffer full: wait for room (bounded), then retry.
                    let _ = self.ep.wait(Some(SEND_WAIT), Some(pkts[done].path));
                }
                Err(_) => {
                    // This datagram cannot be sent; it is lost like on a wire, and the
                    // engine's loss recovery resends it.
                    add(&stats.tx_errors, 1);
                    done += 1;
                }
            }
        }
    }

    /// Sleeps until a datagram, a wake-up or the next timer (or spins when busy-polling).
    fn idle(&mut self, poll: &mut PollSet, next_timer: Option<u64>) {
        if self.busy_poll {
            std::hint::spin_loop();
            return;
        }
        let shared = &self.shared;
        shared.sleeping.store(true, Ordering::SeqCst);
        if shared.dirty.load(Ordering::SeqCst) || shared.stop.load(Ordering::SeqCst) {
            shared.sleeping.store(false, Ordering::SeqCst);
            return;
        }
        let now = self.now_ns();
        let wait = match next_timer {
            Some(t) => Duration::from_nanos(t.saturating_sub(now)).min(IDLE_WAIT),
            None => IDLE_WAIT,
        };
        // A failed ppoll just ends the nap early.
        let _ = poll.wait(Some(wait));
        shared.sleeping.store(false, Ordering::SeqCst);
        let mut b = [0u8; 16];
        while self.wake_rx.recv(&mut b).is_ok() {}
    }
}
