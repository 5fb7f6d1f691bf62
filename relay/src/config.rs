//! Relay configuration.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// One direction of forwarding: datagrams arriving at `listen` go to `forward_to`.
///
/// A two-NIC setup has two links: A sends to link 0's `listen` and the relay forwards to
/// B's receive address; B sends to link 1's `listen` and the relay forwards to A's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    /// Where the relay receives this direction's traffic (port 0: the kernel picks one).
    pub listen: SocketAddr,
    /// Where it forwards it (the receiving NIC's destination port).
    pub forward_to: SocketAddr,
}

/// How a datagram's UDP source port (the path entropy) picks a path — the relay's ECMP hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PathMap {
    /// `port % paths`: consecutive entropy values land on distinct paths.
    #[default]
    Modulo,
    /// A seeded 64-bit mix of the port, modulo `paths`, like a switch's ECMP hash:
    /// different entropy values may collide on one path.
    Hash {
        /// Hash seed.
        seed: u64,
    },
}

impl PathMap {
    /// Path index (0..paths) of a UDP source port; 0 when `paths` is 0.
    pub fn path_of(self, port: u16, paths: usize) -> usize {
        if paths == 0 {
            return 0;
        }
        let key = match self {
            PathMap::Modulo => u64::from(port),
            PathMap::Hash { seed } => splitmix64(u64::from(port) ^ seed),
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

/// The emulated behaviour of one path (one route through the fabric). Rate, burst, queue
/// and ECN threshold apply to each of the path's output queues (one per destination).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathConfig {
    /// Service rate in bit/s; `None`: unlimited (forward as fast as the relay runs).
    pub rate_bps: Option<u64>,
    /// Token-bucket depth in bytes (raised to at least one largest datagram).
    pub burst_bytes: usize,
    /// Queue limit in bytes; a datagram that does not fit is dropped (drop-tail).
    pub queue_bytes: usize,
    /// ECN marking threshold: an ECN-capable datagram that arrives while the queue holds at
    /// least this many bytes is marked CE. `None`: never mark.
    pub ecn_threshold_bytes: Option<usize>,
    /// Probability (0..=1) that a datagram is dropped at random.
    pub loss: f64,
    /// Added one-way delay (after the queue).
    pub delay: Duration,
    /// Probability (0..=1) that an accepted datagram is queued twice (duplication).
    pub duplicate: f64,
}

impl Default for PathConfig {
    /// Unlimited rate, 64 KiB burst, 1 MiB queue, no marking, no loss, no delay, no
    /// duplication.
    fn default() -> Self {
        PathConfig {
            rate_bps: None,
            burst_bytes: 64 << 10,
            queue_bytes: 1 << 20,
            ecn_threshold_bytes: None,
            loss: 0.0,
            delay: Duration::ZERO,
            duplicate: 0.0,
        }
    }
}

/// Called on every datagram the relay accepts for forwarding, with its payload (mutable,
/// fixed length) and where it will go. Use it to fix up fields that cover the rewritten
/// addresses — e.g. to recompute a MetaRoCE ICRC, which covers IPs and ports.
pub type Rewriter = Box<dyn FnMut(&mut [u8], &ForwardInfo) + Send>;

/// Where a forwarded datagram came from and where it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardInfo {
    /// The path it was hashed onto.
    pub path: usize,
    /// Original sender (its port is the path entropy).
    pub original_src: SocketAddr,
    /// The relay's address it leaves from (the path socket: port = path base + path).
    pub src: SocketAddr,
    /// Destination (the link's `forward_to`).
    pub dst: SocketAddr,
}

/// Everything [`Relay::start`](crate::Relay::start) needs.
pub struct RelayConfig {
    /// Forwarding directions.
    pub links: Vec<LinkConfig>,
    /// The paths (at least one).
    pub paths: Vec<PathConfig>,
    /// Local IP of the path sockets; `None`: the first link's listen IP.
    pub path_ip: Option<IpAddr>,
    /// Path `i` sends from port `path_base_port + i`; 0: each path gets a kernel-chosen port.
    pub path_base_port: u16,
    /// Source port → path mapping.
    pub path_map: PathMap,
    /// Seed of the random loss generator.
    pub seed: u64,
    /// Largest datagram forwarded (larger ones are dropped by the kernel read).
    pub max_datagram: usize,
    /// Packet buffers preallocated for queues and delay lines; when all are in use,
    /// arrivals are dropped as queue drops.
    pub pool_packets: usize,
    /// Write every forwarded datagram to this pcap file.
    pub pcap: Option<PathBuf>,
    /// Serve the line-based control protocol on this UDP address.
    pub control: Option<SocketAddr>,
    /// Optional payload fix-up hook (runs after the ICRC re-seal).
    pub rewrite: Option<Rewriter>,
    /// Treat datagrams as MetaRoCE packets: verify each one's ICRC against the addresses
    /// it arrived with (drop and count it as `bad_icrc` on a mismatch, so corruption is
    /// never laundered), then re-seal it for the relay's source address and the
    /// destination it is forwarded to. Needed between soft NICs: the ICRC covers both IPs
    /// and both UDP ports, which forwarding rewrites.
    pub reseal_icrc: bool,
}

impl RelayConfig {
    /// A relay with these links and paths; defaults: kernel-chosen path ports, `Modulo`
    /// mapping, seed 1, 9216-byte datagrams, 16384 packet buffers, no pcap, no control
    /// socket, no rewrite hook, no ICRC re-seal.
    pub fn new(links: Vec<LinkConfig>, paths: Vec<PathConfig>) -> Self {
        RelayConfig {
            links,
            paths,
            path_ip: None,
            path_base_port: 0,
            path_map: PathMap::Modulo,
            seed: 1,
            max_datagram: 9216,
            pool_packets: 16384,
            pcap: None,
            control: None,
            rewrite: None,
            reseal_icrc: false,
        }
    }

    /// A relay between two soft NICs at `a` and `b`: link 0 forwards to `a`, link 1 to
    /// `b` (each listening on a kernel-chosen port of `a`'s IP), over `paths` paths that
    /// each drop datagrams with probability `loss`, ICRCs re-sealed. Each NIC sends
    /// through the link towards the other.
    pub fn between(a: SocketAddr, b: SocketAddr, paths: usize, loss: f64) -> Self {
        let listen = SocketAddr::new(a.ip(), 0);
        let link = |forward_to| LinkConfig { listen, forward_to };
        let path = PathConfig {
            loss,
            ..PathConfig::default()
        };
        let mut cfg = RelayConfig::new(vec![link(a), link(b)], vec![path; paths]);
        cfg.reseal_icrc = true;
        cfg
    }
}

impl fmt::Debug for RelayConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RelayConfig")
            .field("links", &self.links)
            .field("paths", &self.paths)
            .field("path_ip", &self.path_ip)
            .field("path_base_port", &self.path_base_port)
            .field("path_map", &self.path_map)
            .field("seed", &self.seed)
            .field("max_datagram", &self.max_datagram)
            .field("pool_packets", &self.pool_packets)
            .field("pcap", &self.pcap)
            .field("control", &self.control)
            .field("rewrite", &self.rewrite.is_some())
            .field("reseal_icrc", &self.reseal_icrc)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modulo_spreads_consecutive_ports() {
        let paths: Vec<usize> = (49152..49160)
            .map(|p| PathMap::Modulo.path_of(p, 8))
            .collect();
        let mut sorted = paths.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn hash_is_deterministic_and_in_range() {
        let m = PathMap::Hash { seed: 7 };
        for p in 0..2000u16 {
            let a = m.path_of(p, 5);
            assert!(a < 5);
            assert_eq!(a, m.path_of(p, 5));
        }
        let other = PathMap::Hash { seed: 8 };
        assert!((0..200u16).any(|p| m.path_of(p, 8) != other.path_of(p, 8)));
        assert_eq!(m.path_of(3, 0), 0);
    }
}
