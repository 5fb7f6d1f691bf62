//! metaroce-relay: a userspace UDP relay that emulates a lossy multipath fabric between
//! soft NICs on real sockets (the kernel here has no netem, so loss, queueing, delay and
//! ECN marks are made here).
//!
//! Each [`LinkConfig`] is one direction: datagrams arriving at its `listen` address are
//! forwarded to its `forward_to` address. The UDP source port of an arriving datagram (the
//! sender's path entropy) is hashed onto one of N paths ([`PathMap`]). Each path has a
//! rate limit (token bucket), a byte-limited drop-tail queue, an ECN-CE marking threshold,
//! random loss and an added delay. Path `i` forwards from its own socket, bound to port
//! `path_base_port + i`, so the receiving NIC sees a per-path source port (and the CE
//! mark, set with a per-datagram `IP_TOS` / `IPV6_TCLASS` cmsg).
//!
//! Paths are shared by all links: a path models one full-duplex route (or plane) through
//! the fabric with one output queue per destination, so every datagram hashed onto it
//! towards the same receiver shares that queue and rate (incast), while the opposite
//! direction (e.g. ACKs) has its own.
//!
//! The relay runs on its own thread from [`Relay::start`]; the returned [`RelayHandle`]
//! changes paths at run time (blackhole, restore, background load, loss), reads counters,
//! and stops the thread (also on drop). The same commands are available as text lines
//! ([`Command`], [`RelayHandle::execute`]) and over an optional UDP control socket.
//! See `docs/relay.md`.

mod config;
mod control;
mod forward;
mod pcap;

use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use metaroce_udp::{self as udp, BatchSocket, Ecn, SocketOptions};

pub use config::{ForwardInfo, LinkConfig, PathConfig, PathMap, RelayConfig, Rewriter};
pub use control::{Command, HELP, PathCounters, Target};
pub use pcap::LINKTYPE_RAW;

use control::{PathControl, Shared};
use forward::{Forwarder, ForwarderParts};

/// Errors of the relay.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// A socket operation failed.
    #[error(transparent)]
    Udp(#[from] udp::Error),
    /// Some other I/O failed (thread, wake socket, control socket).
    #[error("{op}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Writing the pcap file failed (forwarding went on without it).
    #[error("pcap: {0}")]
    Pcap(#[source] io::Error),
    /// The configuration is not usable.
    #[error("invalid relay configuration: {0}")]
    Config(String),
    /// A control command was malformed or named an unknown path.
    #[error("bad command: {0}")]
    Command(String),
    /// The relay thread panicked.
    #[error("relay thread panicked")]
    Panicked,
}

/// Starts relays.
#[derive(Debug)]
pub struct Relay;

impl Relay {
    /// Binds every socket, then starts the relay thread.
    pub fn start(mut cfg: RelayConfig) -> Result<RelayHandle, RelayError> {
        let path_ip = check_config(&cfg)?;
        let (listen, path_socks) = bind_data_sockets(&cfg, path_ip)?;
        let control = cfg.control.map(bind_control).transpose()?;
        let pcap = match &cfg.pcap {
            Some(path) => Some(pcap::PcapWriter::create(path).map_err(RelayError::Pcap)?),
            None => None,
        };
        let (wake_tx, wake_rx) = wake_pair()?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            paths: cfg.paths.iter().map(|p| PathControl::new(p.loss)).collect(),
        });
        let listen_addrs: Vec<SocketAddr> = listen.iter().map(BatchSocket::local_addr).collect();
        let path_addrs = path_socks.iter().map(BatchSocket::local_addr).collect();
        let control_addr = match &control {
            Some(s) => Some(s.local_addr().map_err(|source| RelayError::Io {
                op: "control socket address",
                source,
            })?),
            None => None,
        };
        let forwarder = Forwarder::new(ForwarderParts {
            listen_addrs: listen_addrs.clone(),
            listen,
            forward_to: cfg.links.iter().map(|l| l.forward_to).collect(),
            path_socks,
            path_cfgs: cfg.paths.clone(),
            path_map: cfg.path_map,
            seed: cfg.seed,
            max_datagram: cfg.max_datagram,
            pool_packets: cfg.pool_packets,
            pcap,
            control,
            rewrite: cfg.rewrite.take(),
            reseal_icrc: cfg.reseal_icrc,
            wake: wake_rx,
            shared: Arc::clone(&shared),
        });
        let thread = std::thread::Builder::new()
            .name("metaroce-relay".into())
            .spawn(move || forwarder.run())
            .map_err(|source| RelayError::Io {
                op: "spawn relay thread",
                source,
            })?;
        Ok(RelayHandle {
            shared,
            thread: Some(thread),
            wake: wake_tx,
            listen_addrs,
            path_addrs,
            control_addr,
            path_map: cfg.path_map,
        })
    }
}

/// Checks a relay configuration; returns the address the path sockets bind to.
fn check_config(cfg: &RelayConfig) -> Result<IpAddr, RelayError> {
    let cfg_err = |m: &str| Err(RelayError::Config(m.to_string()));
    if cfg.links.is_empty() {
        return cfg_err("at least one link is needed");
    }
    if cfg.paths.is_empty() {
        return cfg_err("at least one path is needed");
    }
    if cfg.max_datagram == 0 || cfg.max_datagram > udp::GRO_BUFFER_SIZE {
        return cfg_err("max_datagram must be in 1..=65536");
    }
    if cfg.paths.iter().any(|p| !(0.0..=1.0).contains(&p.loss)) {
        return cfg_err("path loss must be in [0, 1]");
    }
    if cfg
        .paths
        .iter()
        .any(|p| !(0.0..=1.0).contains(&p.duplicate))
    {
        return cfg_err("path duplication must be in [0, 1]");
    }
    if cfg.paths.iter().any(|p| p.rate_bps == Some(0)) {
        return cfg_err("a path rate must be positive (None for unlimited)");
    }
    let path_ip = cfg.path_ip.unwrap_or(cfg.links[0].listen.ip());
    if cfg
        .links
        .iter()
        .any(|l| l.forward_to.is_ipv6() != path_ip.is_ipv6())
    {
        return cfg_err("every forward_to must have the path sockets' address family");
    }
    if cfg.path_base_port != 0 && usize::from(cfg.path_base_port) + cfg.paths.len() > 65536 {
        return cfg_err("path_base_port + paths exceeds the port range");
    }
    Ok(path_ip)
}

/// Binds the listen sockets (one per link) and the path sockets (one per path).
fn bind_data_sockets(
    cfg: &RelayConfig,
    path_ip: IpAddr,
) -> Result<(Vec<BatchSocket>, Vec<BatchSocket>), RelayError> {
    let listen_opts = SocketOptions {
        ecn: Ecn::NotEct,
        gso: false,
        // GRO merges runs of equal datagrams into one read; the forwarder splits them.
        gro: true,
        recv_buffer: Some(8 << 20),
        send_buffer: None,
    };
    let listen = cfg
        .links
        .iter()
        .map(|l| BatchSocket::bind(l.listen, &listen_opts))
        .collect::<Result<Vec<_>, _>>()?;
    let path_opts = SocketOptions {
        ecn: Ecn::NotEct,
        // Runs of equal-size datagrams of one path leave as one GSO send.
        gso: true,
        gro: false,
        recv_buffer: Some(0),
        send_buffer: Some(4 << 20),
    };
    let path_socks = (0..cfg.paths.len())
        .map(|i| {
            let port = if cfg.path_base_port == 0 {
                0
            } else {
                cfg.path_base_port + i as u16
            };
            BatchSocket::bind(SocketAddr::new(path_ip, port), &path_opts)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((listen, path_socks))
}

/// Binds the non-blocking control socket.
fn bind_control(addr: SocketAddr) -> Result<UdpSocket, RelayError> {
    let s = UdpSocket::bind(addr).map_err(|source| RelayError::Io {
        op: "bind control socket",
        source,
    })?;
    s.set_nonblocking(true).map_err(|source| RelayError::Io {
        op: "control socket O_NONBLOCK",
        source,
    })?;
    Ok(s)
}

/// The non-blocking socket pair that wakes the relay thread (commands, stop).
fn wake_pair() -> Result<(UnixDatagram, UnixDatagram), RelayError> {
    let (wake_tx, wake_rx) = UnixDatagram::pair().map_err(|source| RelayError::Io {
        op: "wake socketpair",
        source,
    })?;
    for s in [&wake_tx, &wake_rx] {
        s.set_nonblocking(true).map_err(|source| RelayError::Io {
            op: "wake socket O_NONBLOCK",
            source,
        })?;
    }
    Ok((wake_tx, wake_rx))
}

/// Controls a running relay; dropping it stops the relay thread.
#[derive(Debug)]
pub struct RelayHandle {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Result<(), RelayError>>>,
    wake: UnixDatagram,
    listen_addrs: Vec<SocketAddr>,
    path_addrs: Vec<SocketAddr>,
    control_addr: Option<SocketAddr>,
    path_map: PathMap,
}

impl RelayHandle {
    /// Listen address of each link (what the NICs send to), in link order.
    pub fn listen_addrs(&self) -> &[SocketAddr] {
        &self.listen_addrs
    }

    /// Address each path forwards from (the source the receiving NIC sees), in path order.
    pub fn path_addrs(&self) -> &[SocketAddr] {
        &self.path_addrs
    }

    /// Address of the UDP control socket, if configured.
    pub fn control_addr(&self) -> Option<SocketAddr> {
        self.control_addr
    }

    /// Number of paths.
    pub fn paths(&self) -> usize {
        self.path_addrs.len()
    }

    /// The path a datagram from UDP source port `port` is hashed onto.
    pub fn path_of_port(&self, port: u16) -> usize {
        self.path_map.path_of(port, self.paths())
    }

    /// Drops everything hashed onto `path` from now on.
    pub fn blackhole(&self, path: usize) -> Result<(), RelayError> {
        self.shared
            .apply(Command::Blackhole(Target::Path(path)))
            .map(drop)
    }

    /// Undoes [`RelayHandle::blackhole`].
    pub fn restore(&self, path: usize) -> Result<(), RelayError> {
        self.shared
            .apply(Command::Restore(Target::Path(path)))
            .map(drop)
    }

    /// Background load: `share` (0 ≤ share < 1) of `path`'s rate is taken by other traffic,
    /// so relayed datagrams get the rest. No effect on a path without a rate limit.
    pub fn set_load(&self, path: usize, share: f64) -> Result<(), RelayError> {
        self.shared
            .apply(Command::Load(Target::Path(path), share))
            .map(drop)
    }

    /// Sets `path`'s random loss probability (0 ≤ p ≤ 1).
    pub fn set_loss(&self, path: usize, p: f64) -> Result<(), RelayError> {
        self.shared
            .apply(Command::Loss(Target::Path(path), p))
            .map(drop)
    }

    /// Counters of `path`, or `None` if there is no such path.
    pub fn counters(&self, path: usize) -> Option<PathCounters> {
        self.shared.counters(path)
    }

    /// Counters of every path, in path order.
    pub fn all_counters(&self) -> Vec<PathCounters> {
        (0..self.paths())
            .filter_map(|p| self.shared.counters(p))
            .collect()
    }

    /// Runs one control line (see [`Command`]) and returns its reply text.
    pub fn execute(&self, line: &str) -> Result<String, RelayError> {
        self.shared.apply(Command::parse(line)?)
    }

    /// Stops the relay thread and waits for it; returns its error, if it failed.
    pub fn stop(mut self) -> Result<(), RelayError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), RelayError> {
        let Some(t) = self.thread.take() else {
            return Ok(());
        };
        self.shared.stop.store(true, Ordering::Relaxed);
        // If the wake byte cannot be sent the thread still sees `stop` within its idle wait.
        let _ = self.wake.send(&[1]);
        t.join().map_err(|_| RelayError::Panicked)?
    }
}

impl Drop for RelayHandle {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; `stop` returns them.
        let _ = self.shutdown();
    }
}
