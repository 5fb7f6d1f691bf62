//! Two hardware NICs on a wire: two [`HwNic`]s (each a Verilated `NicCore`
//! with its firmware and host memory) joined by a simulated multipath
//! Ethernet fabric ([`Wire`]: paths chosen by hashing the UDP source port,
//! per-path loss, reordering, duplication and ECN marking), running
//! Verbs-level traffic both ways and verifying every byte and every
//! completion.
//!
//! Each NIC's application posts WRITE, WRITE_IMM, SEND and READ work
//! requests of 1 byte up to the configured size over two connections and
//! several streams; the peer's application posts the receive each SEND or
//! WRITE_IMM consumes just before. Source buffers are filled with a
//! pattern unique to the message; on completion the destination bytes
//! (the peer's for WRITE at the sender's completion, the receive buffer for
//! SEND and the written range for WRITE_IMM at the receive completion, the
//! local buffer for READ) are compared with it. Every message must
//! complete exactly once at its sender, and each SEND or WRITE_IMM exactly
//! once at its receiver, with success. Application limits follow the RTL's
//! tables: at most 8 messages in flight per NIC, at most 2 READs per
//! connection (the RTL's outstanding-READ entries), SEND and WRITE_IMM on
//! streams 0–3 (the streams with a receive ring in the RTL).
//!
//! Optionally hostile frames are injected: replays of earlier frames, bit
//! flips (bad ICRC), truncations and frames to an unknown QP with a valid
//! ICRC; they must change nothing but the RTL's drop counters.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

use metaroce_firmware::{
    Access, Completion, Event, Memory, MemoryRegion, QpConfig, QpTransition, RecvWr, RemoteEnd,
    SendOp, SendWr, Sge, WcOpcode, WcStatus,
};
use metaroce_proto::{Packet, PseudoHeader};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::core_check::metaroce_hdl_codes::*;
use crate::hw_nic::{HwCounters, HwNic, HwNicConfig};
use crate::wire::{PathConfig, PathMap, Wire, WireConfig};
use crate::{SimError, SimTimer};

/// Host memory of each NIC starts here.
const MEM_BASE: u64 = 0x1_0000_0000;
/// Messages in flight per NIC (each holds one source and one destination
/// slot).
const SLOTS: usize = 8;
/// Connections between the two NICs.
const CONNS: usize = 2;
/// READs in flight per connection (the RTL's outstanding-READ entries).
const READS_PER_CONN: usize = READS;
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
    /// Hostile frames injected per frame sent.
    pub hostile: f64,
    /// Clock period, ps (6,400: 156.25 MHz, a 10 Gbit/s MAC's 64-bit clock).
    pub clock_ps: u64,
    /// Stop after this many cycles even if messages are left.
    pub max_cycles: u64,
    /// Seed of the traffic, the fabric and the engines.
    pub seed: u64,
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
            hostile: 0.0,
            clock_ps: 6_400,
            max_cycles: 200_000_000,
            seed: 1,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PairReport {
    /// Messages completed (both directions).
    pub messages: u64,
    /// Of which WRITE, WRITE_IMM, SEND and READ.
    pub messages_by_opcode: [u64; 4],
    /// Bytes compared with their pattern and found right.
    pub bytes_verified: u64,
    /// Bytes compared and found wrong.
    pub bytes_wrong: u64,
    /// Completions with success (send and receive side).
    pub completions_ok: u64,
    /// Completions with an error status, unexpected or duplicated.
    pub completions_error: u64,
    /// QPs that went to ERR.
    pub qp_errors: u64,
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
    /// ACKs and NACKs that went up to the firmware (it processes
    /// received ACKs itself).
    pub acks_to_firmware: u64,
    /// Descriptors the firmware gave the RTL.
    pub descriptors: u64,
    /// Verdict events the engine's rules disagreed with.
    pub mismatches_vs_engine: u64,
    /// DMA, fetch and table errors (see `HwCounters::interface_errors`).
    pub interface_errors: u64,
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

/// A message in flight.
#[derive(Clone, Copy, Debug)]
struct Msg {
    /// Index of the requesting NIC.
    from: usize,
    conn: usize,
    op: Op,
    len: u32,
    /// Requester's source (or READ destination) slot; responder's slot.
    local_slot: usize,
    remote_slot: usize,
    /// Completions still expected at the requester and the responder.
    send_done: bool,
    recv_done: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Write,
    WriteImm,
    Send,
    Read,
}

/// One NIC and its application's bookkeeping.
struct Node {
    nic: HwNic,
    mr: MemoryRegion,
    qpns: [u32; CONNS],
    /// Free source and destination slots.
    free_src: Vec<usize>,
    free_dst: Vec<usize>,
    reads: [usize; CONNS],
    slot_len: u64,
}

impl Node {
    fn src_addr(&self, slot: usize) -> u64 {
        MEM_BASE + slot as u64 * self.slot_len
    }

    fn dst_addr(&self, slot: usize) -> u64 {
        MEM_BASE + (SLOTS + slot) as u64 * self.slot_len
    }
}

/// The pattern byte `i` of message `id`.
fn pattern(id: u64, i: usize) -> u8 {
    let x = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24) as u8;
    x ^ (i as u8).wrapping_mul(31) ^ (i >> 8) as u8
}

/// Runs two hardware NICs against each other (see the module docs).
pub fn run_pair(cfg: &PairConfig) -> Result<PairReport, SimError> {
    let timer = SimTimer::start();
    let slot_len = u64::from(cfg.max_size.max(1));
    let mem_len = (2 * SLOTS) as u64 * slot_len;
    let ips = [Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)];
    let macs = [[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]];
    let mut nodes = Vec::new();
    for i in 0..2 {
        let mut nic = HwNic::new(HwNicConfig {
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
        let pd = nic.alloc_pd();
        let mr = nic
            .register_mr(
                pd,
                MEM_BASE,
                mem_len,
                Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
            )
            .expect("a free MR entry");
        let qp = QpConfig {
            paths: cfg.qp_paths,
            streams: cfg.streams,
            ..QpConfig::default()
        };
        let mut qpns = [0; CONNS];
        for q in &mut qpns {
            *q = nic.create_qp(pd, qp.clone()).expect("a free QP entry");
        }
        nodes.push(Node {
            nic,
            mr,
            qpns,
            free_src: (0..SLOTS).rev().collect(),
            free_dst: (0..SLOTS).rev().collect(),
            reads: [0; CONNS],
            slot_len,
        });
    }
    for c in 0..CONNS {
        for i in 0..2 {
            let (me, peer) = (i, 1 - i);
            let remote = RemoteEnd {
                qpn: nodes[peer].qpns[c],
                ip: IpAddr::V4(ips[peer]),
                udp_port: PORT,
                initial_psn: 1000 + 7919 * (peer as u32 + 2 * c as u32),
            };
            let qpn = nodes[me].qpns[c];
            let n = &mut nodes[me].nic;
            n.modify_qp(qpn, QpTransition::Init).expect("INIT");
            n.modify_qp(qpn, QpTransition::Rtr(remote)).expect("RTR");
            n.modify_qp(
                qpn,
                QpTransition::Rts {
                    initial_psn: 1000 + 7919 * (me as u32 + 2 * c as u32),
                    retry_cnt: 7,
                    rnr_retry: 7,
                    timeout_ns: 1_000_000,
                },
            )
            .expect("RTS");
        }
    }
    let path = PathConfig {
        delay_ns: cfg.delay_ns,
        jitter_ns: cfg.jitter_ns,
        loss: cfg.loss,
        dup: cfg.dup,
        ecn_mark: cfg.ecn_mark,
    };
    let mut wire_cfg = WireConfig::uniform(cfg.paths.max(1), path);
    wire_cfg.path_map = PathMap::Hash { seed: cfg.seed };
    let mut wire = Wire::new(wire_cfg, cfg.seed ^ 0x3EA);
    let mut rng = SmallRng::seed_from_u64(cfg.seed);
    let mut run = Run {
        cfg,
        msgs: HashMap::new(),
        next_id: 1,
        posted: 0,
        report: PairReport::default(),
        payload_bytes: 0,
    };
    let mut out = Vec::new();
    let mut history: Vec<Vec<u8>> = Vec::new();
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
                        let h = hostile(&mut rng, &f, &history);
                        wire.inject(1 - i, now + cfg.delay_ns, h);
                        run.report.hostile_frames += 1;
                    }
                    if history.len() < 4096 {
                        history.push(f.clone());
                    } else {
                        let k = rng.gen_range(0..history.len());
                        history[k] = f.clone();
                    }
                }
                wire.send(i, now, f);
            }
        }
        cycles += 1;
        if cycles % 64 == 0 || run.posted < cfg.messages {
            run.app(&mut nodes, &mut rng);
        }
        if run.report.messages as usize >= cfg.messages {
            run.report.finished = true;
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
    let sim_ns = nodes[0].nic.now_ns();
    let wall = timer.secs();
    let r = &mut run.report;
    let hw: Vec<HwCounters> = nodes.iter().map(|n| n.nic.counters()).collect();
    r.rtl_placed_packets = hw.iter().map(|h| h.rtl_placed).sum();
    r.firmware_packets = hw.iter().map(|h| h.firmware_data).sum();
    r.firmware_acks = hw.iter().map(|h| h.firmware_frames).sum();
    r.acks_to_firmware = hw.iter().map(|h| h.firmware_acks_in).sum();
    r.descriptors = hw.iter().map(|h| h.descriptors).sum();
    r.interface_errors = hw.iter().map(|h| h.interface_errors).sum();
    for n in &mut nodes {
        r.rtl_acks += n.nic.rtl_ack_frames();
        for code in DROP_VERDICTS {
            r.rtl_dropped += n.nic.rtl_counter(code);
        }
        r.rtl_duplicates += n.nic.rtl_counter(V_DUPLICATE);
        let s = n.nic.engine().stats();
        r.mismatches_vs_engine += s.hw_disagreements;
        r.retransmits += s.retransmits;
    }
    let w = wire.stats().total();
    r.wire_frames = w.sent;
    r.wire_lost = w.lost;
    r.wire_duplicated = w.duplicated;
    r.wire_ce_marked = w.ce_marked;
    r.cycles = cycles;
    r.sim_ns = sim_ns;
    r.wall_seconds = wall;
    r.cycles_per_second = cycles as f64 / wall.max(1e-9);
    r.packets_per_second = r.descriptors as f64 / wall.max(1e-9);
    let sim_s = cycles as f64 * cfg.clock_ps as f64 * 1e-12;
    r.goodput_gbps_sim = run.payload_bytes as f64 * 8.0 / sim_s.max(1e-12) / 1e9;
    Ok(run.report)
}

/// The applications of both NICs.
struct Run<'a> {
    cfg: &'a PairConfig,
    msgs: HashMap<u64, Msg>,
    next_id: u64,
    posted: usize,
    report: PairReport,
    payload_bytes: u64,
}

impl Run<'_> {
    /// Takes completions, verifies, and posts new messages while slots allow.
    fn app(&mut self, nodes: &mut [Node], rng: &mut SmallRng) {
        for i in 0..2 {
            while let Some(e) = nodes[i].nic.poll_event() {
                match e {
                    Event::Completion(c) => self.on_completion(nodes, i, &c),
                    Event::QpError { .. } => {
                        self.report.qp_errors += 1;
                    }
                }
            }
        }
        while self.posted < self.cfg.messages {
            let from = rng.gen_range(0..2);
            if !self.post(nodes, from, rng) {
                break;
            }
        }
    }

    fn size(&self, rng: &mut SmallRng) -> u32 {
        let max = self.cfg.max_size.max(1);
        if self.cfg.fixed_size {
            return max;
        }
        let bits = rng.gen_range(0.0..=f64::from(max).log2());
        (2f64.powf(bits) as u32).clamp(1, max)
    }

    /// Posts one message from NIC `from`; false when no slot is free.
    fn post(&mut self, nodes: &mut [Node], from: usize, rng: &mut SmallRng) -> bool {
        let to = 1 - from;
        let conn = rng.gen_range(0..CONNS);
        let mut op = match rng.gen_range(0..100) {
            0..40 => Op::Write,
            40..55 => Op::WriteImm,
            55..80 => Op::Send,
            _ => Op::Read,
        };
        // Two READs in flight on the connection already: a WRITE instead.
        if op == Op::Read && nodes[from].reads[conn] >= READS_PER_CONN {
            op = Op::Write;
        }
        // A READ fills a local destination slot from a peer source slot;
        // the others send a local source slot to a peer destination slot.
        let (local, remote) = if op == Op::Read {
            (&nodes[from].free_dst, &nodes[to].free_src)
        } else {
            (&nodes[from].free_src, &nodes[to].free_dst)
        };
        let (Some(&local_slot), Some(&remote_slot)) = (local.last(), remote.last()) else {
            return false;
        };
        if op == Op::Read {
            nodes[from].free_dst.pop();
            nodes[to].free_src.pop();
        } else {
            nodes[from].free_src.pop();
            nodes[to].free_dst.pop();
        }
        let len = self.size(rng);
        let id = self.next_id;
        self.next_id += 1;
        let ring_streams = (RQ_STREAMS as u16).min(self.cfg.streams);
        let stream = if matches!(op, Op::Send | Op::WriteImm) {
            rng.gen_range(0..ring_streams)
        } else {
            rng.gen_range(0..self.cfg.streams)
        };
        // Fill the source with the message's pattern.
        let (src_node, src_addr) = if op == Op::Read {
            (to, nodes[to].src_addr(remote_slot))
        } else {
            (from, nodes[from].src_addr(local_slot))
        };
        let bytes: Vec<u8> = (0..len as usize).map(|i| pattern(id, i)).collect();
        nodes[src_node].nic.mem_mut().write(src_addr, &bytes);
        let remote_dst = nodes[to].dst_addr(remote_slot);
        let rkey = nodes[to].mr.rkey;
        let lkey = nodes[from].mr.lkey;
        if matches!(op, Op::Send | Op::WriteImm) {
            // The receive it consumes, posted first by the peer.
            let sge = if op == Op::Send {
                Sge {
                    addr: remote_dst,
                    len,
                    lkey: nodes[to].mr.lkey,
                }
            } else {
                Sge {
                    addr: remote_dst,
                    len: 0,
                    lkey: nodes[to].mr.lkey,
                }
            };
            let qpn = nodes[to].qpns[conn];
            nodes[to]
                .nic
                .post_recv(
                    qpn,
                    RecvWr {
                        wr_id: id,
                        sge,
                        stream,
                    },
                )
                .expect("post_recv");
        }
        let sge = Sge {
            addr: if op == Op::Read {
                nodes[from].dst_addr(local_slot)
            } else {
                nodes[from].src_addr(local_slot)
            },
            len,
            lkey,
        };
        let sop = match op {
            Op::Write => SendOp::Write {
                remote_va: remote_dst,
                rkey,
            },
            Op::WriteImm => SendOp::WriteImm {
                remote_va: remote_dst,
                rkey,
                imm: id as u32,
            },
            Op::Send => SendOp::Send,
            Op::Read => SendOp::Read {
                remote_va: nodes[to].src_addr(remote_slot),
                rkey,
            },
        };
        let qpn = nodes[from].qpns[conn];
        nodes[from]
            .nic
            .post_send(
                qpn,
                SendWr {
                    wr_id: id,
                    op: sop,
                    sge,
                    signaled: true,
                    solicited: false,
                    stream,
                },
            )
            .expect("post_send");
        if op == Op::Read {
            nodes[from].reads[conn] += 1;
        }
        self.msgs.insert(
            id,
            Msg {
                from,
                conn,
                op,
                len,
                local_slot,
                remote_slot,
                send_done: false,
                recv_done: !matches!(op, Op::Send | Op::WriteImm),
            },
        );
        self.posted += 1;
        true
    }

    fn verify(&mut self, node: &Node, addr: u64, id: u64, len: u32) {
        let got = node.nic.mem().slice(addr, len as usize);
        let wrong = got
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b != pattern(id, i))
            .count() as u64;
        self.report.bytes_wrong += wrong;
        self.report.bytes_verified += u64::from(len) - wrong;
    }

    fn on_completion(&mut self, nodes: &mut [Node], at: usize, c: &Completion) {
        let Some(mut m) = self.msgs.get(&c.wr_id).copied() else {
            self.report.completions_error += 1;
            return;
        };
        let to = 1 - m.from;
        let expected_here = if c.is_recv { to } else { m.from };
        let already = if c.is_recv { m.recv_done } else { m.send_done };
        if c.status != WcStatus::Success || at != expected_here || already {
            self.report.completions_error += 1;
            return;
        }
        self.report.completions_ok += 1;
        if c.is_recv {
            m.recv_done = true;
            // SEND: the receive buffer; WRITE_IMM: the written range.
            if c.byte_len != m.len && m.op == Op::Send {
                self.report.completions_error += 1;
            }
            let addr = nodes[to].dst_addr(m.remote_slot);
            self.verify(&nodes[to], addr, c.wr_id, m.len);
            if m.op == Op::WriteImm && c.imm != Some(c.wr_id as u32) {
                self.report.completions_error += 1;
            }
        } else {
            m.send_done = true;
            match m.op {
                Op::Write => {
                    // The peer's RTL sends its ACKs only after the DMA
                    // writes they cover: the bytes are there now.
                    let addr = nodes[to].dst_addr(m.remote_slot);
                    self.verify(&nodes[to], addr, c.wr_id, m.len);
                }
                Op::Read => {
                    if c.opcode != WcOpcode::Read {
                        self.report.completions_error += 1;
                    }
                    let addr = nodes[m.from].dst_addr(m.local_slot);
                    self.verify(&nodes[m.from], addr, c.wr_id, m.len);
                }
                Op::WriteImm | Op::Send => {}
            }
        }
        if m.send_done && m.recv_done {
            self.msgs.remove(&c.wr_id);
            self.report.messages += 1;
            self.report.messages_by_opcode[m.op as usize] += 1;
            self.payload_bytes += u64::from(m.len);
            if m.op == Op::Read {
                nodes[m.from].reads[m.conn] -= 1;
                nodes[m.from].free_dst.push(m.local_slot);
                nodes[to].free_src.push(m.remote_slot);
            } else {
                nodes[m.from].free_src.push(m.local_slot);
                nodes[to].free_dst.push(m.remote_slot);
            }
        } else {
            self.msgs.insert(c.wr_id, m);
        }
    }
}

/// A hostile frame: a replay of an earlier frame, a bit flip (bad ICRC), a
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
