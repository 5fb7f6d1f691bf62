//! Two hardware NICs on a wire: two [`HwNic`]s (each a Verilated `NicCore`
//! with its firmware and host memory) joined by a simulated multipath
//! Ethernet fabric ([`Wire`]: paths chosen by hashing the UDP source port,
//! per-path loss, reordering, duplication and ECN marking), running
//! Verbs-level traffic both ways and verifying every byte and every
//! completion ([`crate::traffic`]: WRITE, WRITE_IMM, SEND and READ of 1
//! byte up to the configured size over two connections and several
//! streams, within the RTL's tables; with [`PairConfig::atomics`] also
//! FETCH_ADDs, each checked to execute exactly once).
//!
//! Optionally hostile frames are injected: replays of earlier frames, bit
//! flips (bad ICRC), truncations and frames to an unknown QP with a valid
//! ICRC; they must change nothing but the RTL's drop counters.

use std::net::{IpAddr, Ipv4Addr};

use metaroce_firmware::{QpConfig, QpTransition, RemoteEnd};
use metaroce_proto::{Packet, PseudoHeader};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::core_check::metaroce_hdl_codes::*;
use crate::hw_nic::{HwCounters, HwNic, HwNicConfig};
use crate::traffic::{HwEnd, Traffic, TrafficConfig, TrafficCounters, region_len};
use crate::wire::Wire;
use crate::wire::config::{PathConfig, PathMap, WireConfig};
use crate::{SimError, SimTimer};

/// Host memory of each NIC starts here.
const MEM_BASE: u64 = 0x1_0000_0000;
/// Connections between the two NICs.
const CONNS: usize = 2;
/// Seed of the hostile frames (xor the run's).
const HOSTILE_SEED: u64 = 0x0405_711E;
/// The RTL's drop verdicts (`metaroce_hdl::Verdict`).
const DROP_VERDICTS: [u8; 13] = [
    V_TRUNCATED,
    V_BAD_VERSION,
    V_BAD_OPCODE,
    V_UNEXPECTED_PAYLOAD,
    V_BAD_ICRC,
    V_UNKNOWN_QP,
    V_QP_STATE,
    V_WRONG_PEER,
    V_BAD_PATH,
    V_BAD_STREAM,
    V_CONN_WINDOW,
    V_BAD_LENGTH,
    V_PATH_WINDOW,
];
/// The NICs' UDP port.
const PORT: u16 = metaroce_proto::DEFAULT_UDP_PORT;

/// A run's settings.
#[derive(Clone, Debug)]
pub struct PairConfig {
    /// Messages to complete (both directions together).
    pub messages: usize,
    /// Largest message, bytes (1 to 1 MiB).
    pub max_size: u32,
    /// Every message has `max_size` bytes (else sizes are log-uniform in
    /// 1..=`max_size`).
    pub fixed_size: bool,
    /// Streams per connection (1 to 16).
    pub streams: u16,
    /// Engine paths (entropy values) per connection.
    pub qp_paths: u16,
    /// Fabric paths.
    pub paths: usize,
    /// Loss probability on every path.
    pub loss: f64,
    /// Duplication probability.
    pub dup: f64,
    /// ECN marking probability (of ECN-capable frames).
    pub ecn_mark: f64,
    /// One-way delay of a path, ns.
    pub delay_ns: u64,
    /// Random extra delay per frame, up to, ns (reorders).
    pub jitter_ns: u64,
    /// Path `i`'s delay is `delay_ns + i × path_spread_ns` (paths of
    /// different lengths: packets sprayed over them arrive out of order).
    pub path_spread_ns: u64,
    /// Hostile frames injected per frame sent.
    pub hostile: f64,
    /// Clock period, ps (6,400: 156.25 MHz, a 10 Gbit/s MAC's 64-bit clock).
    pub clock_ps: u64,
    /// Stop after this many cycles even if messages are left.
    pub max_cycles: u64,
    /// Seed of the traffic, the fabric and the engines.
    pub seed: u64,
    /// FETCH_ADDs in the traffic ([`TrafficConfig::atomics`]).
    pub atomics: bool,
}

impl Default for PairConfig {
    fn default() -> Self {
        Self {
            messages: 200,
            max_size: 64 << 10,
            fixed_size: false,
            streams: 4,
            qp_paths: 8,
            paths: 4,
            loss: 0.0,
            dup: 0.0,
            ecn_mark: 0.0,
            delay_ns: 2_000,
            jitter_ns: 1_000,
            path_spread_ns: 500,
            hostile: 0.0,
            clock_ps: 6_400,
            max_cycles: 200_000_000,
            seed: 1,
            atomics: false,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PairReport {
    /// The traffic: messages, bytes and completions checked.
    #[serde(flatten)]
    pub traffic: TrafficCounters,
    /// Payload bytes of completed messages per simulated second, Gbit/s.
    pub goodput_gbps_sim: f64,
    /// Data packets the RTL placed.
    pub rtl_placed_packets: u64,
    /// Data packets whose bytes the firmware handled (READ requests).
    pub firmware_packets: u64,
    /// ACK frames the RTL generated.
    pub rtl_acks: u64,
    /// ACKs and NACKs the firmware generated.
    pub firmware_acks: u64,
    /// Atomic data packets the firmware built (the RTL frames them).
    pub firmware_atomics: u64,
    /// ACKs and NACKs that went up to the firmware (it processes
    /// received ACKs itself).
    pub acks_to_firmware: u64,
    /// Received ACKs the RTL's ACK receiver applied to its TX table (the
    /// firmware takes their results and fate events, and processes only
    /// their connection fields itself).
    pub rtl_acks_applied: u64,
    /// Operations the firmware issued to the TX table (sends, windows,
    /// moves, timeouts, RACK losses, slot set-up).
    pub table_ops: u64,
    /// Transmissions the engines found lost from the TX table's fate
    /// events (SACK gaps, RACK, path timeouts).
    pub losses_detected: u64,
    /// Of them, SACK gaps: fate events of ACKs the RTL applied.
    pub sack_losses: u64,
    /// Descriptors the firmware gave the RTL.
    pub descriptors: u64,
    /// Verdict events the engine's rules disagreed with.
    pub mismatches_vs_engine: u64,
    /// DMA, fetch and table errors (see `HwCounters::interface_errors`).
    pub interface_errors: u64,
    /// Datagrams the RTL's firmware receive queue handed up that differ
    /// from the frames that came in (`HwCounters::fw_rx_mismatches`).
    pub fw_rx_mismatches: u64,
    /// Datagrams handed up cut to the queue's slot (not processed).
    pub fw_rx_truncated: u64,
    /// Frames on the fabric, lost, duplicated, CE-marked.
    pub wire_frames: u64,
    /// Frames the fabric lost.
    pub wire_lost: u64,
    /// Frames the fabric duplicated.
    pub wire_duplicated: u64,
    /// Frames the fabric CE-marked.
    pub wire_ce_marked: u64,
    /// Hostile frames injected.
    pub hostile_frames: u64,
    /// Datagrams the RTL dropped (framing, ICRC, QP, peer, path, stream,
    /// window and length verdicts).
    pub rtl_dropped: u64,
    /// Duplicates the RTL recognised (not placed again).
    pub rtl_duplicates: u64,
    /// Packets the engines retransmitted.
    pub retransmits: u64,
    /// Clock cycles (of each NIC).
    pub cycles: u64,
    /// Simulated time, ns.
    pub sim_ns: u64,
    /// Wall-clock seconds of the run.
    pub wall_seconds: f64,
    /// Cycles per wall second (each NIC).
    pub cycles_per_second: f64,
    /// Data packets (both NICs' descriptors) per wall second.
    pub packets_per_second: f64,
    /// All messages completed before `max_cycles`.
    pub finished: bool,
}

/// Runs two hardware NICs against each other (see the module docs).
pub fn run_pair(cfg: &PairConfig) -> Result<PairReport, SimError> {
    let timer = SimTimer::start();
    let mut nodes = connected_pair(cfg)?;
    let mut wire = pair_wire(cfg);
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ HOSTILE_SEED);
    let mut traffic = Traffic::new(TrafficConfig {
        messages: cfg.messages,
        max_size: cfg.max_size,
        fixed_size: cfg.fixed_size,
        conns: CONNS,
        streams: cfg.streams,
        late_receives: false,
        atomics: cfg.atomics,
        seed: cfg.seed,
    });
    let mut r = PairReport::default();
    let mut out = Vec::new();
    // Earlier frames per sender: a replay goes the way the original went.
    let mut history: [Vec<Vec<u8>>; 2] = Default::default();
    let mut cycles = 0u64;
    while cycles < cfg.max_cycles {
        let now = nodes[0].nic.now_ns();
        for (i, node) in nodes.iter_mut().enumerate() {
            while let Some(f) = wire.receive(i, now) {
                node.nic.receive_frame(f);
            }
        }
        for (i, node) in nodes.iter_mut().enumerate() {
            out.clear();
            node.nic.step(&mut out);
            for f in out.drain(..) {
                if cfg.hostile > 0.0 {
                    if rng.gen_bool(cfg.hostile.min(1.0)) {
                        let h = hostile(&mut rng, &f, &history[i]);
                        wire.inject(1 - i, now + cfg.delay_ns, h);
                        r.hostile_frames += 1;
                    }
                    remember(&mut rng, &mut history[i], &f);
                }
                wire.send(i, now, f);
            }
        }
        cycles += 1;
        if cycles % 64 == 0 || !traffic.all_posted() {
            let [a, b] = &mut nodes;
            traffic
                .step([a, b])
                .expect("the NICs take the traffic's work requests");
        }
        if traffic.finished() {
            r.finished = true;
            break;
        }
    }
    // Let the last ACKs and frames settle a little before the counters.
    for _ in 0..2_000 {
        for node in &mut nodes {
            out.clear();
            node.nic.step(&mut out);
        }
    }
    let wall = timer.secs();
    r.traffic = *traffic.counters();
    count_nodes(&mut r, &mut nodes);
    let w = wire.stats().total();
    r.wire_frames = w.sent;
    r.wire_lost = w.lost;
    r.wire_duplicated = w.duplicated;
    r.wire_ce_marked = w.ce_marked;
    r.cycles = cycles;
    r.sim_ns = nodes[0].nic.now_ns();
    r.wall_seconds = wall;
    r.cycles_per_second = cycles as f64 / wall.max(1e-9);
    r.packets_per_second = r.descriptors as f64 / wall.max(1e-9);
    let sim_s = cycles as f64 * cfg.clock_ps as f64 * 1e-12;
    r.goodput_gbps_sim = r.traffic.payload_bytes as f64 * 8.0 / sim_s.max(1e-12) / 1e9;
    Ok(r)
}

/// The two hardware NICs with [`CONNS`] connections between them, every QP in RTS.
fn connected_pair(cfg: &PairConfig) -> Result<[HwEnd; 2], SimError> {
    let mem_len = region_len(cfg.max_size);
    let ips = [Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)];
    let macs = [[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]];
    let qp = QpConfig {
        paths: cfg.qp_paths,
        streams: cfg.streams,
        ..QpConfig::default()
    };
    let node = |i: usize| -> Result<HwEnd, SimError> {
        let nic = HwNic::new(HwNicConfig {
            mac: macs[i],
            peer_mac: macs[1 - i],
            ip: IpAddr::V4(ips[i]),
            peer_ip: IpAddr::V4(ips[1 - i]),
            udp_port: PORT,
            peer_udp_port: PORT,
            mem_base: MEM_BASE,
            mem_len: mem_len as usize,
            clock_ps: cfg.clock_ps,
            line_rate_mbps: (64_000_000 / cfg.clock_ps.max(1)) as u32,
            seed: cfg.seed ^ ((i as u64 + 1) * 0x5151),
        })?;
        Ok(HwEnd::new(nic, &qp, CONNS).expect("free MR and QP entries"))
    };
    let mut nodes = [node(0)?, node(1)?];
    let psn = |end: usize, c: usize| 1000 + 7919 * (end as u32 + 2 * c as u32);
    for c in 0..CONNS {
        for me in 0..2 {
            let peer = 1 - me;
            let remote = RemoteEnd {
                qpn: nodes[peer].qpns[c],
                ip: IpAddr::V4(ips[peer]),
                udp_port: PORT,
                initial_psn: psn(peer, c),
            };
            let qpn = nodes[me].qpns[c];
            let n = &mut nodes[me].nic;
            n.modify_qp(qpn, QpTransition::Init).expect("INIT");
            n.modify_qp(qpn, QpTransition::Rtr(remote)).expect("RTR");
            n.modify_qp(
                qpn,
                QpTransition::Rts {
                    initial_psn: psn(me, c),
                    retry_cnt: 7,
                    rnr_retry: 7,
                    timeout_ns: 1_000_000,
                },
            )
            .expect("RTS");
        }
    }
    Ok(nodes)
}

/// The wire between the two NICs: `cfg.paths` paths, path `i` slower by
/// `i × path_spread_ns`, frames hashed onto them.
fn pair_wire(cfg: &PairConfig) -> Wire {
    let path = PathConfig {
        delay_ns: cfg.delay_ns,
        jitter_ns: cfg.jitter_ns,
        loss: cfg.loss,
        dup: cfg.dup,
        ecn_mark: cfg.ecn_mark,
    };
    let mut wire_cfg = WireConfig::uniform(cfg.paths.max(1), path);
    for (i, p) in wire_cfg.paths.iter_mut().enumerate() {
        p.delay_ns += i as u64 * cfg.path_spread_ns;
    }
    wire_cfg.path_map = PathMap::Hash { seed: cfg.seed };
    Wire::new(wire_cfg, cfg.seed ^ 0x3EA)
}

/// Keeps `frame` among a sender's earlier frames (at most 4,096; then a
/// random one is replaced) for later replays.
fn remember(rng: &mut SmallRng, history: &mut Vec<Vec<u8>>, frame: &[u8]) {
    if history.len() < 4096 {
        history.push(frame.to_vec());
    } else {
        let k = rng.gen_range(0..history.len());
        history[k] = frame.to_vec();
    }
}

/// The NICs' hardware, firmware and engine counters, summed into `r`.
fn count_nodes(r: &mut PairReport, nodes: &mut [HwEnd; 2]) {
    let hw: Vec<HwCounters> = nodes.iter().map(|n| n.nic.counters()).collect();
    r.rtl_placed_packets = hw.iter().map(|h| h.rtl_placed).sum();
    r.firmware_packets = hw.iter().map(|h| h.firmware_data).sum();
    r.firmware_acks = hw.iter().map(|h| h.firmware_frames).sum();
    r.firmware_atomics = hw.iter().map(|h| h.firmware_atomics).sum();
    r.acks_to_firmware = hw.iter().map(|h| h.firmware_acks_in).sum();
    r.descriptors = hw.iter().map(|h| h.descriptors).sum();
    r.rtl_acks_applied = hw.iter().map(|h| h.rtl_acks_applied).sum();
    r.table_ops = hw.iter().map(|h| h.table_ops).sum();
    r.interface_errors = hw.iter().map(|h| h.interface_errors).sum();
    r.fw_rx_mismatches = hw.iter().map(|h| h.fw_rx_mismatches).sum();
    r.fw_rx_truncated = hw.iter().map(|h| h.fw_rx_truncated).sum();
    for n in nodes {
        r.rtl_acks += n.nic.rtl_ack_frames();
        for code in DROP_VERDICTS {
            r.rtl_dropped += n.nic.rtl_counter(code);
        }
        r.rtl_duplicates += n.nic.rtl_counter(V_DUPLICATE);
        let s = n.nic.engine().stats();
        r.mismatches_vs_engine += s.hw_disagreements;
        r.retransmits += s.retransmits;
        r.losses_detected +=
            s.sack_losses + s.rack_losses + s.timeout_losses + s.conn_timeout_losses;
        r.sack_losses += s.sack_losses;
    }
}

/// A hostile frame: a replay of an earlier frame of the same sender, a bit flip (bad ICRC), a
/// truncation, or a copy of `frame` re-addressed to an unknown QP with a
/// valid ICRC.
fn hostile(rng: &mut SmallRng, frame: &[u8], history: &[Vec<u8>]) -> Vec<u8> {
    const UDP_PAYLOAD: usize = 14 + 20 + 8;
    match rng.gen_range(0..4) {
        0 if !history.is_empty() => history[rng.gen_range(0..history.len())].clone(),
        1 if frame.len() > UDP_PAYLOAD => {
            let mut f = frame.to_vec();
            let i = rng.gen_range(UDP_PAYLOAD..f.len());
            f[i] ^= 1 << rng.gen_range(0..8);
            f
        }
        2 if frame.len() > UDP_PAYLOAD + 8 => {
            frame[..rng.gen_range(UDP_PAYLOAD + 1..frame.len())].to_vec()
        }
        _ => {
            let mut f = frame.to_vec();
            let Some(datagram) = f.get_mut(UDP_PAYLOAD..) else {
                return f;
            };
            if datagram.len() < 32 {
                return f;
            }
            // dst_qpn (bytes 4..8 of the base header) to a QPN nobody has,
            // then a valid ICRC for the frame's addresses.
            datagram[4..8].copy_from_slice(&0x00AB_CDEFu32.to_be_bytes());
            let ip = |at: usize| IpAddr::V4(Ipv4Addr::new(f[at], f[at + 1], f[at + 2], f[at + 3]));
            let (src, dst) = (ip(26), ip(30));
            let sport = u16::from_be_bytes([f[34], f[35]]);
            let dport = u16::from_be_bytes([f[36], f[37]]);
            let pseudo = PseudoHeader::new(src, sport, dst, dport);
            if let Ok(mut p) = Packet::new_checked(&mut f[UDP_PAYLOAD..]) {
                p.fill_icrc(&pseudo);
            }
            f
        }
    }
}
