//! Engine configuration.

use alloc::vec::Vec;
use core::net::{IpAddr, Ipv4Addr};

use metaroce_proto::auth::AuthKey;

use crate::cc::CcConfig;
use crate::datapath::Datapath;

/// Configuration of one NIC.
#[derive(Debug, Clone, PartialEq)]
pub struct NicConfig {
    /// The NIC's IP address (covered by the ICRC).
    pub local_ip: IpAddr,
    /// UDP destination port the NIC receives on.
    pub udp_port: u16,
    /// Largest payload per packet, bytes.
    pub mtu: u32,
    /// Line rate, Mbit/s, shared fairly among the connections sending to this NIC.
    pub line_rate_mbps: u32,
    /// A connection counts as an active sender for this long after its last data packet.
    pub fair_share_window_ns: u64,
    /// Seed of the entropy-value generator.
    pub seed: u64,
    /// Secret seed of the identifier generator (QPNs, initial PSNs, memory
    /// keys; [`crate::ids`]). `None`: derived from `seed`, so a simulation
    /// or test is deterministic (and its identifiers predictable to whoever
    /// knows the seed). A NIC on a real network sets 32 bytes from the
    /// operating system's generator (the soft NIC does).
    pub id_seed: Option<[u8; 32]>,
    /// Longest time a destroyed QP lingers, ns: it sends the acknowledgements it still
    /// owed and re-acknowledges retransmissions of what it had accepted (see
    /// [`Nic::destroy_qp`](crate::Nic::destroy_qp)). 0: a destroyed QP goes at once.
    pub linger_max_ns: u64,
    /// Defaults for new queue pairs.
    pub qp: QpConfig,
    /// Who does the per-packet work. On [`Datapath::Hardware`] the paths'
    /// table entries are in the NIC's TX table: the engine queues their
    /// operations ([`Nic::poll_table_op`](crate::Nic::poll_table_op)) and
    /// takes their results ([`Nic::handle_table_result`](crate::Nic::handle_table_result)).
    pub datapath: Datapath,
    /// Implements the atomics of spec revision v0.1.2 (FETCH_ADD,
    /// COMPARE_SWAP, ATOMIC_RESP). False: their opcodes are unknown, dropped
    /// as `bad_opcode` (as an RTL without atomics would), and atomic work
    /// requests are refused. On [`Datapath::Hardware`] the RTL checks and
    /// accepts atomics and hands them up; the engine executes them and
    /// places an ATOMIC_RESP's value through the memory it is given, and
    /// sends atomic packets as datagrams it builds whole (spec §11.4).
    pub atomics: bool,
    /// The UDP source ports a backend sends from when it cannot pick the port
    /// per packet (a soft NIC's sockets; spec §2.3): a packet whose entropy is
    /// `e` leaves from `source_ports[source_slot(e)]`, and the engine computes
    /// its ICRC over that port, so the backend sends it as it is. Empty: the
    /// entropy itself is the source port.
    pub source_ports: Vec<u16>,
}

impl NicConfig {
    /// The index into [`NicConfig::source_ports`] a packet with `entropy`
    /// leaves from.
    pub fn source_slot(&self, entropy: u16) -> usize {
        usize::from(entropy) % self.source_ports.len().max(1)
    }

    /// The UDP source port on the wire of a packet with `entropy`, which its
    /// ICRC covers.
    pub fn wire_port(&self, entropy: u16) -> u16 {
        self.source_ports
            .get(self.source_slot(entropy))
            .copied()
            .unwrap_or(entropy)
    }

    /// Whether this NIC executes and sends atomics ([`NicConfig::atomics`]).
    pub fn has_atomics(&self) -> bool {
        self.atomics
    }
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            local_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            udp_port: metaroce_proto::DEFAULT_UDP_PORT,
            mtu: 4096,
            line_rate_mbps: 100_000,
            fair_share_window_ns: 100_000,
            seed: 1,
            id_seed: None,
            linger_max_ns: 1_000_000_000,
            qp: QpConfig::default(),
            datapath: Datapath::Software,
            atomics: true,
            source_ports: Vec::new(),
        }
    }
}

/// Configuration of one queue pair (connection).
#[derive(Debug, Clone, PartialEq)]
pub struct QpConfig {
    /// Paths (entropy values) the connection sprays over, 1..=64.
    pub paths: u16,
    /// Streams the connection carries, at least 1.
    pub streams: u16,
    /// Per-path congestion controller (default: ECN AIMD).
    pub cc: CcConfig,
    /// Cap on bytes in flight over all paths.
    pub conn_window_bytes: u32,
    /// Receive window in packets (connection PSNs beyond the cumulative point);
    /// advertised to the peer as credit.
    pub recv_window: u32,
    /// Floor of the per-path retransmission timeout, ns.
    pub rto_min_ns: u64,
    /// Per-path timeout before the first RTT sample, ns.
    pub rto_initial_ns: u64,
    /// Pace to the receiver's fair-share rate hint.
    pub honor_rate_hint: bool,
    /// Repath when the path's loss fraction (EWMA) exceeds this.
    pub repath_loss_fraction: f32,
    /// Tail copies: when the sender has nothing left to send, it sends a
    /// second copy of up to this many of its newest unacknowledged packets,
    /// each on another path (spec §5.6). 0 turns them off.
    pub tail_copies: u16,
    /// Multi-path ACKs (spec §3.11, revision v0.1.4): the QP's data packets
    /// and PROBEs carry MULTI_ACK_OK, and once the peer's packets carry it
    /// too, the QP acknowledges all its pending paths in one MULTI_ACK
    /// instead of one ACK per path (§6.4). Off: single-path ACKs only, and
    /// the flag is not sent. The hardware data path never sends the flag
    /// (its RTL knows only the single-path ACK), so a peer answers it with
    /// single-path ACKs.
    pub multi_ack: bool,
    /// PARITY (spec §5.6, revision v0.1.5): packets per parity group, 0 to
    /// turn PARITY off both ways. On: the QP's ACKs carry PARITY_OK (it
    /// rebuilds a lost packet from a PARITY and the rest of its group), and
    /// once the peer's ACKs carry it too, the QP follows each group of up to
    /// this many packets of a WRITE or WRITE_IMM message of at most
    /// `parity_group × parity_groups` packets with a PARITY packet, while
    /// the fabric loses packets (as for tail copies) and no path of the
    /// connection is marked by ECN. Software data path only:
    /// the hardware data path neither sends PARITY_OK nor PARITY.
    pub parity_group: u16,
    /// PARITY: how many groups of `parity_group` packets, counted back from
    /// a message's last packet, a message may have to get PARITY packets (a
    /// longer message gets none).
    pub parity_groups: u16,
    /// Delay the receiver asks for in an RNR NACK, µs.
    pub rnr_delay_us: u32,
    /// Largest number of outstanding send work requests.
    pub max_send_wr: usize,
    /// Largest number of posted receives per stream.
    pub max_recv_wr: usize,
    /// READ requests in flight at once (Verbs `max_rd_atomic`): a READ
    /// beyond it waits, and the send queue behind it, until an earlier
    /// READ completes (a hardware NIC has that many READ entries). READ
    /// responses do not wait behind it.
    pub max_rd_atomic: u32,
    /// Authenticated mode (spec §11.2): the connection key, agreed with the
    /// peer out of band like the QPN. Every packet then carries an auth
    /// trailer; forged, modified and replayed packets are dropped before
    /// they change anything. Software data path only.
    pub auth: Option<AuthKey>,
    /// The shared receive queue (from [`crate::Nic::create_srq`], of the QP's
    /// protection domain) its receives come from; `None`: its own receive
    /// queue. Software data path only.
    pub srq: Option<core::num::NonZeroU32>,
}

impl Default for QpConfig {
    fn default() -> Self {
        QpConfig {
            paths: 8,
            streams: 16,
            cc: CcConfig::default(),
            conn_window_bytes: 4 << 20,
            recv_window: 4096,
            rto_min_ns: 100_000,
            rto_initial_ns: 1_000_000,
            honor_rate_hint: true,
            repath_loss_fraction: 0.3,
            tail_copies: 8,
            multi_ack: true,
            parity_group: 32,
            parity_groups: 2,
            rnr_delay_us: 100,
            max_send_wr: 8192,
            max_recv_wr: 8192,
            max_rd_atomic: 16,
            auth: None,
            srq: None,
        }
    }
}

/// Largest number of paths a connection may use.
pub const MAX_PATHS: u16 = 64;
