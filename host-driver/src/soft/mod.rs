//! The `soft` backend: a software NIC over standard UDP sockets.
//!
//! The transport engine runs in host memory; a progress thread (one per NIC) is its
//! datapath. Each round it
//!
//! 1. reads a batch of datagrams with `recvmmsg` (GRO merges split back), and hands each
//!    to the engine with its source address, port and ECN CE bit;
//! 2. fires the engine's timers;
//! 3. collects up to [`metaroce_udp::MAX_BATCH`] datagrams from the engine into preallocated
//!    buffers, each already sealed by the engine over the source port of the
//!    [`metaroce_udp::Endpoint`] socket it leaves from (`NicConfig::source_ports`: the ICRC
//!    covers the source port, so the port is chosen before the ICRC, as the RTL's
//!    "source-port rewrite, then ICRC" stage does), then — outside the engine lock —
//!    groups the batch by socket (per-path order kept) and sends each group with one
//!    `sendmmsg`, as GSO runs where the kernel allows;
//! 4. sleeps in `ppoll` on the receive socket and a wake socket until the next timer, or
//!    spins when `busy_poll` is set.
//!
//! The engine's path entropy values (random ports from the dynamic range) are mapped
//! onto the endpoint's `entropy_sockets` send sockets by `entropy % sockets`: a repath
//! to a new entropy value moves the path to another socket, hence another source port,
//! hence (through an ECMP hash or the relay) another route. Nothing on the hot path
//! allocates.

mod progress;

use std::net::{IpAddr, SocketAddr};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use metaroce_firmware::{Nic, NicConfig};
use metaroce_udp as udp;

use crate::backend::{Backend, Control, DatapathStats, EventSink};
use crate::hostmem::MemoryMap;

/// Extra time a closing NIC may take beyond the engine's `linger_max_ns` (a safety net:
/// a close normally ends when the last destroyed QP stops lingering).
const CLOSE_SLACK: Duration = Duration::from_millis(100);

/// READs and atomics a soft NIC's QP keeps in flight (Verbs `max_qp_rd_atom`). A soft
/// NIC keeps their state in memory, not in a fixed hardware table, so the limit only has
/// to cover the bandwidth-delay product of a loaded host: with 16 (a ConnectX's figure)
/// `ib_read_bw` waits on round trips that a descheduled progress thread stretches to
/// milliseconds. 128, as rdma-core's software RoCE (rxe) reports.
pub const SOFT_MAX_RD_ATOMIC: u32 = 128;

/// How to start a soft NIC.
#[derive(Clone, Debug)]
pub struct SoftConfig {
    /// Address to receive on (IPv4 or IPv6; port 0: the kernel picks one).
    pub bind: SocketAddr,
    /// Number of send sockets (source ports) path entropy values are mapped onto.
    pub entropy_sockets: usize,
    /// Spin instead of sleeping when idle (lowest latency, one core per NIC).
    pub busy_poll: bool,
    /// Use UDP GSO / GRO when the kernel allows them.
    pub offloads: bool,
    /// Engine configuration; `local_ip` and `udp_port` are overwritten with the bound
    /// address.
    pub nic: NicConfig,
}

impl SoftConfig {
    /// A NIC on `bind` with 32 entropy sockets, offloads on, no busy polling, and the
    /// default engine settings except a 400 Gbit/s line rate: the engine paces each
    /// connection to its receiver's share of the line rate, and a soft NIC has no line
    /// of its own, so the rate only needs to stay above what the sockets can move.
    pub fn new(bind: SocketAddr) -> Self {
        SoftConfig {
            bind,
            entropy_sockets: 32,
            busy_poll: false,
            offloads: true,
            nic: NicConfig {
                line_rate_mbps: 400_000,
                qp: metaroce_firmware::QpConfig {
                    max_rd_atomic: SOFT_MAX_RD_ATOMIC,
                    ..Default::default()
                },
                ..NicConfig::default()
            },
        }
    }
}

/// Errors starting a soft NIC.
#[derive(Debug, thiserror::Error)]
pub enum SoftError {
    /// Binding or configuring a socket failed.
    #[error(transparent)]
    Udp(#[from] udp::Error),
    /// Creating the wake socket or the thread failed.
    #[error("{0}: {1}")]
    Io(&'static str, #[source] std::io::Error),
}

/// What the progress thread and control operations share.
pub(crate) struct Core {
    pub(crate) nic: Nic,
    pub(crate) memory: MemoryMap,
}

/// State shared between the [`SoftBackend`] handle and its progress thread.
pub(crate) struct Shared {
    pub(crate) core: Mutex<Core>,
    pub(crate) sink: RwLock<Option<Arc<dyn EventSink>>>,
    pub(crate) stop: AtomicBool,
    /// Set by [`Backend::shutdown`]: the thread sends what is queued, lets destroyed QPs
    /// linger, then ends.
    pub(crate) closing: AtomicBool,
    /// Set by control operations; the thread clears it before each round.
    pub(crate) dirty: AtomicBool,
    /// Set while the thread sleeps in `ppoll`.
    pub(crate) sleeping: AtomicBool,
    pub(crate) wake_tx: UnixDatagram,
    pub(crate) stats: AtomicStats,
}

/// Datapath counters, written by the progress thread.
#[derive(Default)]
pub(crate) struct AtomicStats {
    pub(crate) tx_datagrams: AtomicU64,
    pub(crate) tx_bytes: AtomicU64,
    pub(crate) rx_datagrams: AtomicU64,
    pub(crate) rx_bytes: AtomicU64,
    pub(crate) rx_ce: AtomicU64,
    pub(crate) tx_errors: AtomicU64,
    pub(crate) tx_syscalls: AtomicU64,
    pub(crate) rx_syscalls: AtomicU64,
}

impl Shared {
    /// Locks the engine; a panicked holder cannot leave it half-updated in a way that
    /// matters more than stopping, so poisoning is ignored.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands every pending engine event to the sink.
    pub(crate) fn deliver_events(&self, core: &mut Core) {
        let sink = self.sink.read().unwrap_or_else(|p| p.into_inner());
        while let Some(ev) = core.nic.poll_event() {
            if let Some(s) = sink.as_ref() {
                s.deliver(ev);
            }
        }
    }

    /// Wakes the thread if it sleeps.
    pub(crate) fn wake(&self) {
        if self.sleeping.load(Ordering::SeqCst) {
            // A full wake socket already holds a wake-up.
            let _ = self.wake_tx.send(&[1]);
        }
    }
}

/// A software MetaRoCE NIC: the engine plus a UDP datapath on a progress thread.
pub struct SoftBackend {
    shared: Arc<Shared>,
    addr: SocketAddr,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for SoftBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftBackend")
            .field("addr", &self.addr)
            .finish()
    }
}

/// Where [`bind_entropy_block`] looks for a free block of source ports: below Linux's
/// default ephemeral range (32768–60999), so the kernel's own picks rarely collide.
const ENTROPY_BLOCK_RANGE: std::ops::Range<u16> = 20_480..32_768;
/// Blocks tried before [`bind_entropy_block`] lets the kernel pick the ports.
const ENTROPY_BLOCK_TRIES: usize = 16;

/// Binds `cfg` with its entropy sockets on one block of consecutive ports, aligned to
/// the block's size rounded up to a power of two: socket `i` then sends from a port
/// congruent to `i` modulo every power of two up to the socket count, so entropy values
/// that differ in their low bits (the engine stripes its paths by them) leave from ports
/// that differ in theirs, and a fabric or relay that picks its path or plane from the
/// source port modulo N reaches every path (spec §2.3). When no free block is found it
/// falls back to ports the kernel picks (a relay's per-path counters then show a path
/// that forwards nothing).
fn bind_entropy_block(mut cfg: udp::EndpointConfig) -> Result<udp::Endpoint, SoftError> {
    let n = cfg.src_ports.len();
    let align = n.next_power_of_two();
    let blocks = ENTROPY_BLOCK_RANGE.len() / align;
    for _ in 0..ENTROPY_BLOCK_TRIES.min(blocks) {
        let mut pick = [0u8; 4];
        getrandom::getrandom(&mut pick)
            .map_err(|e| SoftError::Io("getrandom", std::io::Error::from(e)))?;
        let block = u32::from_ne_bytes(pick) as usize % blocks;
        let base = usize::from(ENTROPY_BLOCK_RANGE.start) + block * align;
        cfg.src_ports = (base..base + n).map(|p| p as u16).collect();
        match udp::Endpoint::bind(&cfg) {
            Ok(endpoint) => return Ok(endpoint),
            Err(e)
                if e.os_error().map(std::io::Error::kind)
                    == Some(std::io::ErrorKind::AddrInUse) => {}
            Err(e) => return Err(e.into()),
        }
    }
    cfg.src_ports = vec![0; n];
    Ok(udp::Endpoint::bind(&cfg)?)
}

impl SoftBackend {
    /// Binds the sockets and starts the progress thread.
    pub fn start(cfg: SoftConfig) -> Result<Arc<SoftBackend>, SoftError> {
        let mut ep_cfg = udp::EndpointConfig::new(
            cfg.bind.ip(),
            cfg.bind.port(),
            vec![0; cfg.entropy_sockets.max(1)],
        );
        ep_cfg.gso = cfg.offloads;
        ep_cfg.gro = cfg.offloads;
        ep_cfg.max_datagram = cfg.nic.mtu as usize + 256;
        ep_cfg.recv_buffer = 16 << 20;
        ep_cfg.send_buffer = 4 << 20;
        let endpoint = bind_entropy_block(ep_cfg)?;
        let addr = endpoint.listen_addr();
        let mut nic_cfg = cfg.nic.clone();
        nic_cfg.local_ip = addr.ip();
        nic_cfg.udp_port = addr.port();
        nic_cfg.source_ports = (0..endpoint.paths())
            .filter_map(|p| endpoint.src_port(p))
            .collect();
        if nic_cfg.id_seed.is_none() {
            // QPNs, PSNs and keys must be unpredictable off this host (spec §11.1).
            let mut seed = [0; 32];
            getrandom::getrandom(&mut seed)
                .map_err(|e| SoftError::Io("getrandom", std::io::Error::from(e)))?;
            nic_cfg.id_seed = Some(seed);
        }
        let (wake_tx, wake_rx) =
            UnixDatagram::pair().map_err(|e| SoftError::Io("wake socketpair", e))?;
        for s in [&wake_tx, &wake_rx] {
            s.set_nonblocking(true)
                .map_err(|e| SoftError::Io("wake socket O_NONBLOCK", e))?;
        }
        let shared = Arc::new(Shared {
            core: Mutex::new(Core {
                nic: Nic::new(nic_cfg.clone()),
                memory: MemoryMap::default(),
            }),
            sink: RwLock::new(None),
            stop: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            dirty: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
            wake_tx,
            stats: AtomicStats::default(),
        });
        let worker = progress::Progress::new(
            Arc::clone(&shared),
            endpoint,
            wake_rx,
            nic_cfg.mtu as usize,
            cfg.busy_poll,
            Duration::from_nanos(nic_cfg.linger_max_ns).saturating_add(CLOSE_SLACK),
        );
        let thread = std::thread::Builder::new()
            .name(format!("metaroce-soft-{}", addr.port()))
            .spawn(move || worker.run())
            .map_err(|e| SoftError::Io("spawn progress thread", e))?;
        Ok(Arc::new(SoftBackend {
            shared,
            addr,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// Starts a soft NIC on `ip` with a kernel-chosen port and default settings.
    pub fn on(ip: IpAddr) -> Result<Arc<SoftBackend>, SoftError> {
        SoftBackend::start(SoftConfig::new(SocketAddr::new(ip, 0)))
    }
}

impl Backend for SoftBackend {
    fn name(&self) -> &'static str {
        "soft"
    }

    fn address(&self) -> SocketAddr {
        self.addr
    }

    fn control(&self, op: &mut dyn FnMut(Control<'_>)) {
        {
            let mut core = self.shared.lock();
            let Core { nic, memory } = &mut *core;
            op(Control { nic, memory });
            self.shared.deliver_events(&mut core);
        }
        self.shared.dirty.store(true, Ordering::SeqCst);
        self.shared.wake();
    }

    fn set_event_sink(&self, sink: Arc<dyn EventSink>) {
        *self.shared.sink.write().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    fn datapath_stats(&self) -> DatapathStats {
        let s = &self.shared.stats;
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        DatapathStats {
            tx_datagrams: l(&s.tx_datagrams),
            tx_bytes: l(&s.tx_bytes),
            rx_datagrams: l(&s.rx_datagrams),
            rx_bytes: l(&s.rx_bytes),
            rx_ce: l(&s.rx_ce),
            tx_errors: l(&s.tx_errors),
            tx_syscalls: l(&s.tx_syscalls),
            rx_syscalls: l(&s.rx_syscalls),
        }
    }

    /// Closes the NIC: the progress thread sends what the engine still has queued (the
    /// ACKs destroyed QPs owed included), keeps answering for destroyed QPs while they
    /// linger (see [`Nic::destroy_qp`](metaroce_firmware::Nic::destroy_qp)), then ends
    /// and the sockets close. Synchronous: a process that exits right after closing
    /// still answers its peer's retransmissions, as a hardware NIC would. Bounded by
    /// the engine's `linger_max_ns` (plus 100 ms); immediate when no QP lingers.
    fn shutdown(&self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        self.shared.dirty.store(true, Ordering::SeqCst);
        self.shared.sleeping.store(true, Ordering::SeqCst);
        self.shared.wake();
        let t = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = t {
            // A panicked progress thread has nothing left to clean up.
            let _ = t.join();
        }
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

impl Drop for SoftBackend {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_sockets_take_one_aligned_block_of_ports() {
        let ip = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
        for n in [8, 32, 5] {
            let endpoint =
                bind_entropy_block(udp::EndpointConfig::new(ip, 0, vec![0; n])).expect("bind");
            let ports: Vec<u16> = (0..n).filter_map(|p| endpoint.src_port(p)).collect();
            assert_eq!(ports.len(), n);
            let align = n.next_power_of_two() as u16;
            assert_eq!(ports[0] % align, 0, "{ports:?}");
            assert!(ports.windows(2).all(|w| w[1] == w[0] + 1), "{ports:?}");
            // What a relay that maps paths by port modulo 8 sees: every residue.
            let mut residues: Vec<u16> = ports.iter().map(|p| p % 8).collect();
            residues.sort_unstable();
            residues.dedup();
            assert_eq!(residues.len(), n.min(8), "{ports:?}");
        }
    }
}
