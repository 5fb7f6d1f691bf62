//! The real MetaRoCE engine ([`metaroce_firmware::Nic`]) as a fabric
//! [`Transport`]: one engine per host NIC, real datagrams in the packet
//! payload, the engine's entropy value as the UDP source port (so ECMP
//! routes each path on its own), CE marks handed to `RxMeta::ecn_ce`, and
//! simulator picoseconds converted to the engine's nanoseconds.
//!
//! The application on each host posts RDMA WRITE_IMM work requests for the
//! flows it sends ([`FlowSpec`]: back to back, or a limited number gated by
//! another flow for ring collectives) and keeps receives posted for the
//! flows it receives, so both ends see every message complete. Flows start
//! at time zero (`FlowSpec::start` is not used here).

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};

use metaroce_firmware::PortsReady;
use metaroce_firmware::cc::CcAlgorithm;
use metaroce_firmware::{
    Access, Event, Memory, MemoryRegion, Nic, NicConfig, QpConfig, QpTransition, RecvWr, RemoteEnd,
    RxMeta, SendOp, SendWr, Sge, WcStatus,
};
use metaroce_proto::{DEFAULT_UDP_PORT, Flags, Opcode};

use crate::baseline::ETHERNET_FRAMING_BYTES;
use crate::baseline::FlowSpec;
use crate::error::FabricError;
use crate::packet::{Ecn, HostId, Packet};
use crate::time::{SimTime, from_ns, to_ns};
use crate::transport::{Transport, TransportStats};

/// IPv4 (20) + UDP (8) header bytes around every MetaRoCE datagram.
pub const IP_UDP_HEADER_BYTES: u32 = 28;

/// First address of every host's registered region.
pub const REGION_BASE: u64 = 0x1_0000_0000;

/// Receives kept posted per inbound flow of unlimited length.
const RECEIVES_AHEAD: u64 = 256;

/// Engine settings used on every host of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaRoceConfig {
    /// Paths (entropy values) per connection, 1..=64.
    pub paths: u16,
    /// Largest payload per packet, bytes.
    pub mtu: u32,
    /// NIC line rate, bit/s (the receiver's fair-share rate hint divides it).
    pub line_rate_bps: u64,
    /// Messages each sending flow keeps posted.
    pub outstanding_messages: u64,
    /// Cap on bytes in flight per connection.
    pub conn_window_bytes: u32,
    /// Floor of the per-path retransmission timeout, ns.
    pub rto_min_ns: u64,
    /// Per-path timeout before the first RTT sample, ns (a long-RTT path
    /// needs it above its round trip).
    pub rto_initial_ns: u64,
    /// Receive window in packets (must cover the bandwidth-delay product).
    pub recv_window: u32,
    /// Connection timeout base (Verbs `timeout`), ns.
    pub conn_timeout_ns: u64,
    /// Per-path congestion controller (default: ECN AIMD with its defaults).
    pub cc: CcAlgorithm,
    /// Senders pace to the receiver's fair-share rate hint.
    pub honor_rate_hint: bool,
    /// Bytes of the registered region on every host.
    pub region_bytes: u64,
}

impl MetaRoceConfig {
    /// Engine defaults (see `firmware/src/config.rs`) with `paths` entropy
    /// values, `mtu` and `line_rate_bps`.
    pub fn new(paths: u16, mtu: u32, line_rate_bps: u64) -> Self {
        let qp = QpConfig::default();
        Self {
            paths,
            mtu,
            line_rate_bps,
            outstanding_messages: 4,
            conn_window_bytes: qp.conn_window_bytes,
            rto_min_ns: qp.rto_min_ns,
            rto_initial_ns: qp.rto_initial_ns,
            recv_window: qp.recv_window,
            conn_timeout_ns: 1_000_000,
            cc: CcAlgorithm::default(),
            honor_rate_hint: qp.honor_rate_hint,
            region_bytes: 1 << 30,
        }
    }

    fn validate(&self) -> Result<(), FabricError> {
        if self.paths == 0 || self.paths > metaroce_firmware::MAX_PATHS {
            return Err(FabricError::InvalidParameter {
                name: "paths",
                value: f64::from(self.paths),
                reason: "MetaRoCE connections use 1..=64 paths",
            });
        }
        if self.outstanding_messages == 0 || self.mtu == 0 || self.line_rate_bps == 0 {
            return Err(FabricError::InvalidParameter {
                name: "outstanding_messages",
                value: self.outstanding_messages as f64,
                reason: "outstanding messages, MTU and line rate must be positive",
            });
        }
        Ok(())
    }
}

fn host_ip(host: HostId) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(host.ipv4()))
}

/// Odd multiplier of the pattern: word `w` holds `w · PATTERN_STEP`, so
/// consecutive words differ and the next word's pattern is one addition away.
const PATTERN_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// Pattern of the aligned 8-byte word `word` (stored little endian).
fn pattern_word(word: u64) -> u64 {
    word.wrapping_mul(PATTERN_STEP)
}

/// The pattern byte at `addr`.
fn pattern_byte(addr: u64) -> u8 {
    pattern_word(addr / 8).to_le_bytes()[(addr % 8) as usize]
}

/// Host memory that stores nothing: every address holds a fixed pattern
/// byte, reads return it and writes are checked against it. Since a sender
/// writes from an address to the same address at the receiver, every byte
/// the engine places is verified without storing any, so long runs stay
/// cheap while still catching misplaced or corrupted data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatternMemory {
    /// Bytes written and checked.
    pub bytes_checked: u64,
    /// Written bytes that differed from the pattern.
    pub bytes_wrong: u64,
}

/// Splits `addr..addr + len` into an unaligned head, whole aligned words
/// and an unaligned tail: (head length, word count).
fn split_aligned(addr: u64, len: usize) -> (usize, usize) {
    let head = ((8 - addr % 8) % 8) as usize;
    let head = head.min(len);
    (head, (len - head) / 8)
}

impl Memory for PatternMemory {
    fn write(&mut self, addr: u64, data: &[u8]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.write_avx2(addr, data) };
        }
        self.check(addr, data);
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { fill_avx2(addr, out) };
        }
        fill(addr, out);
    }
}

impl PatternMemory {
    /// [`PatternMemory::check`] compiled for AVX2: 32-byte vectors instead
    /// of SSE2's 16 (the same result).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn write_avx2(&mut self, addr: u64, data: &[u8]) {
        self.check(addr, data);
    }

    /// Counts `data`, written at `addr`, and the bytes of it that differ
    /// from the pattern.
    #[inline(always)]
    fn check(&mut self, addr: u64, data: &[u8]) {
        self.bytes_checked += data.len() as u64;
        let (head, words) = split_aligned(addr, data.len());
        let mut wrong = 0u64;
        for (i, &byte) in data[..head].iter().enumerate() {
            wrong += u64::from(byte != pattern_byte(addr + i as u64));
        }
        let body = &data[head..head + words * 8];
        let first = pattern_word((addr + head as u64) / 8);
        // The differences of all words ORed first (a loop without branches,
        // which the compiler vectorises); counted only when one differs.
        let mut expected = first;
        let mut any = 0u64;
        for chunk in body.chunks_exact(8) {
            any |= u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ expected;
            expected = expected.wrapping_add(PATTERN_STEP);
        }
        if any != 0 {
            let mut expected = first;
            for chunk in body.chunks_exact(8) {
                let diff = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ expected;
                wrong += diff.to_le_bytes().iter().filter(|&&b| b != 0).count() as u64;
                expected = expected.wrapping_add(PATTERN_STEP);
            }
        }
        let tail = head + words * 8;
        for (i, &byte) in data[tail..].iter().enumerate() {
            wrong += u64::from(byte != pattern_byte(addr + (tail + i) as u64));
        }
        self.bytes_wrong += wrong;
    }
}

/// [`fill`] compiled for AVX2: 32-byte stores instead of SSE2's 16 (the
/// same bytes). A sender's NIC fills every data packet's payload this way.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_avx2(addr: u64, out: &mut [u8]) {
    fill(addr, out);
}

/// Writes the pattern bytes of `addr..addr + out.len()` into `out`.
#[inline(always)]
fn fill(addr: u64, out: &mut [u8]) {
    let (head, words) = split_aligned(addr, out.len());
    for (i, byte) in out[..head].iter_mut().enumerate() {
        *byte = pattern_byte(addr + i as u64);
    }
    let mut word = pattern_word((addr + head as u64) / 8);
    for chunk in out[head..head + words * 8].chunks_exact_mut(8) {
        chunk.copy_from_slice(&word.to_le_bytes());
        word = word.wrapping_add(PATTERN_STEP);
    }
    let tail = head + words * 8;
    for (i, byte) in out[tail..].iter_mut().enumerate() {
        *byte = pattern_byte(addr + (tail + i) as u64);
    }
}

/// Memory a simulated MetaRoCE host uses: it may know how many placed bytes
/// were wrong.
pub trait HostMemory: Memory {
    /// Placed bytes found wrong so far (0 when the memory cannot tell).
    fn wrong_bytes(&self) -> u64;
}

impl HostMemory for PatternMemory {
    fn wrong_bytes(&self) -> u64 {
        self.bytes_wrong
    }
}

impl HostMemory for metaroce_firmware::VecMemory {
    fn wrong_bytes(&self) -> u64 {
        0
    }
}

/// A flow this host sends.
#[derive(Debug)]
struct OutFlow {
    spec: FlowSpec,
    qpn: u32,
    lkey: u32,
    rkey: u32,
    /// What the flow's messages wait for.
    gate: OutGate,
    posted: u64,
    completed: u64,
    /// Send time of the first packet of each started, uncompleted message.
    first_sent: VecDeque<SimTime>,
    message_len: u32,
    slots: u64,
}

/// A sending flow's gate, resolved to this host's inbound flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutGate {
    /// Not gated.
    None,
    /// Gated by the inbound flow at this index.
    Flow(usize),
    /// Gated by every inbound flow (the fewest delivered).
    AllInbound,
}

/// A flow this host receives.
#[derive(Debug)]
struct InFlow {
    flow_qpn: u32,
    qpn: u32,
    limit: Option<u64>,
    receives_posted: u64,
    delivered: u64,
    /// Delivery time of every message (limited flows only).
    delivered_at: Vec<SimTime>,
}

/// One host's MetaRoCE NIC: the engine, its memory and the application.
pub struct MetaRoceHost<M: HostMemory> {
    nic: Nic,
    mem: M,
    out: Vec<OutFlow>,
    inbound: Vec<InFlow>,
    outstanding: u64,
    stats: TransportStats,
    latencies: Vec<SimTime>,
    /// The engine's next deadline, cached until the engine is next driven.
    deadline: Option<Option<SimTime>>,
    /// Bytes the engine may write for one datagram (MTU + headers).
    datagram_room: usize,
}

impl<M: HostMemory> MetaRoceHost<M> {
    /// The engine.
    pub fn nic(&self) -> &Nic {
        &self.nic
    }

    /// The host memory.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    fn post_sends(&mut self) {
        let mut fewest = None;
        for index in 0..self.out.len() {
            let gate_delivered = match self.out[index].gate {
                OutGate::None => 0,
                OutGate::Flow(gate) => self.inbound[gate].delivered,
                OutGate::AllInbound => *fewest.get_or_insert_with(|| {
                    self.inbound.iter().map(|f| f.delivered).min().unwrap_or(0)
                }),
            };
            let flow = &mut self.out[index];
            let allowed = flow.spec.messages_allowed(gate_delivered);
            while flow.posted < allowed && flow.posted - flow.completed < self.outstanding {
                let addr = REGION_BASE + (flow.posted % flow.slots) * u64::from(flow.message_len);
                let wr = SendWr {
                    wr_id: flow.posted,
                    op: SendOp::WriteImm {
                        remote_va: addr,
                        rkey: flow.rkey,
                        imm: flow.posted as u32,
                    },
                    sgl: Sge {
                        addr,
                        len: flow.message_len,
                        lkey: flow.lkey,
                    }
                    .into(),
                    signaled: true,
                    solicited: false,
                    stream: 0,
                };
                if self.nic.post_send(flow.qpn, wr).is_err() {
                    break;
                }
                flow.posted += 1;
            }
        }
    }

    fn post_receives(&mut self) {
        for flow in &mut self.inbound {
            let target = match flow.limit {
                Some(limit) => limit,
                None => flow.delivered + RECEIVES_AHEAD,
            };
            while flow.receives_posted < target {
                let wr = RecvWr {
                    wr_id: flow.receives_posted,
                    sgl: Sge {
                        addr: 0,
                        len: 0,
                        lkey: 0,
                    }
                    .into(),
                    stream: 0,
                };
                if self.nic.post_recv(flow.qpn, wr).is_err() {
                    break;
                }
                flow.receives_posted += 1;
            }
        }
    }

    /// Handles the engine's events, then posts whatever they allow.
    fn drain_events(&mut self, now: SimTime) {
        let mut changed = false;
        while let Some(event) = self.nic.poll_event() {
            match event {
                Event::Completion(c) if c.status == WcStatus::Success => {
                    changed = true;
                    if c.is_recv {
                        if let Some(flow) = self.inbound.iter_mut().find(|f| f.qpn == c.qpn) {
                            flow.delivered += 1;
                            if flow.limit.is_some() {
                                flow.delivered_at.push(now);
                            }
                            self.stats.delivered_messages += 1;
                            self.stats.last_delivery_at = now;
                        }
                    } else if let Some(flow) = self.out.iter_mut().find(|f| f.qpn == c.qpn) {
                        flow.completed += 1;
                        self.stats.completed_messages += 1;
                        self.stats.completed_bytes += u64::from(c.byte_len);
                        if let Some(sent) = flow.first_sent.pop_front() {
                            self.latencies.push(now - sent);
                        }
                    }
                }
                Event::Completion(_) => {}
                Event::QpError { .. } => self.stats.qp_errors += 1,
                // The simulator's QPs have their own receive queues.
                Event::SrqLimitReached { .. } => {}
            }
        }
        if changed {
            self.post_receives();
            self.post_sends();
        }
    }

    /// Notes the first transmission of a message's first packet.
    fn note_transmit(&mut self, now: SimTime, datagram: &[u8]) {
        // The engine just built this datagram, so its headers are whole.
        let packet = metaroce_proto::Packet::new_unchecked(datagram);
        let base = packet.base();
        let flags = Flags::from_bits_truncate(base.flags.get());
        let data = matches!(packet.opcode(), Ok(Opcode::Write | Opcode::WriteImm));
        if data && flags.contains(Flags::FIRST) && !flags.contains(Flags::RETX) {
            let qpn = base.src_qpn.get();
            if let Some(flow) = self.out.iter_mut().find(|f| f.qpn == qpn) {
                flow.first_sent.push_back(now);
            }
        }
    }
}

impl<M: HostMemory> Transport for MetaRoceHost<M> {
    fn handle_packet(&mut self, now: SimTime, packet: &Packet) {
        let meta = RxMeta {
            src_ip: host_ip(packet.src),
            src_port: packet.src_port,
            dst_ip: host_ip(packet.dst),
            dst_port: packet.dst_port,
            ecn_ce: packet.ecn == Ecn::Ce,
        };
        self.deadline = None;
        self.nic
            .handle_datagram(to_ns(now), packet.payload(), meta, &mut self.mem);
        self.drain_events(now);
    }

    fn poll_transmit(&mut self, now: SimTime, packet: &mut Packet) -> bool {
        self.poll_transmit_on(now, packet, PortsReady::ALL)
    }

    fn poll_transmit_on(&mut self, now: SimTime, packet: &mut Packet, ports: PortsReady) -> bool {
        self.deadline = None;
        // The engine writes the datagram straight into the packet's buffer.
        let buffer = packet.payload_buffer(self.datagram_room);
        let transmit = self
            .nic
            .poll_transmit_on(to_ns(now), buffer, &mut self.mem, ports);
        self.drain_events(now);
        let Some(transmit) = transmit else {
            return false;
        };
        let IpAddr::V4(dst) = transmit.dst_ip else {
            return false;
        };
        let Some(dst) = HostId::from_ipv4(u32::from(dst)) else {
            return false;
        };
        packet.set_payload_len(transmit.len);
        packet.dst = dst;
        packet.src_port = transmit.src_port;
        packet.dst_port = transmit.dst_port;
        packet.ecn = if transmit.ecn_capable {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        };
        packet.wire_bytes = transmit.len as u32 + IP_UDP_HEADER_BYTES + ETHERNET_FRAMING_BYTES;
        self.note_transmit(now, packet.payload());
        true
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        *self
            .deadline
            .get_or_insert_with(|| self.nic.poll_timeout().map(from_ns))
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.deadline = None;
        self.nic.handle_timeout(to_ns(now), &mut self.mem);
        self.drain_events(now);
    }

    fn stats(&self) -> TransportStats {
        let nic = self.nic.stats();
        TransportStats {
            data_packets_sent: nic.data_sent + nic.retransmits + nic.tail_copies + nic.parity_sent,
            retransmitted_packets: nic.retransmits,
            redundant_packets: nic.tail_copies + nic.parity_sent,
            timeouts: nic.quarantines,
            recoveries: nic.sack_losses + nic.rack_losses,
            control_packets_sent: nic.acks_sent + nic.nacks_sent + nic.probes_sent,
            packets_acked: self
                .out
                .iter()
                .filter_map(|flow| self.nic.path_stats(flow.qpn))
                .flatten()
                .map(|path| path.acked)
                .sum(),
            bytes_placed: nic.bytes_placed,
            bytes_wrong: self.mem.wrong_bytes(),
            ..self.stats
        }
    }

    fn message_latencies(&self) -> &[SimTime] {
        &self.latencies
    }

    fn flow_acked_packets(&self) -> Vec<(u32, u64)> {
        self.out
            .iter()
            .map(|flow| {
                let acked = self
                    .nic
                    .path_stats(flow.qpn)
                    .map_or(0, |paths| paths.iter().map(|path| path.acked).sum());
                (flow.spec.qpn, acked)
            })
            .collect()
    }

    fn flow_delivery_times(&self) -> Vec<(u32, Vec<SimTime>)> {
        self.inbound
            .iter()
            .filter(|flow| flow.limit.is_some())
            .map(|flow| (flow.flow_qpn, flow.delivered_at.clone()))
            .collect()
    }

    fn inflight_state_bytes(&self) -> Vec<usize> {
        self.out
            .iter()
            .map(|flow| self.nic.qp_inflight_state_bytes(flow.qpn).unwrap_or(0))
            .collect()
    }
}

/// Builds one [`MetaRoceHost`] per host (memory from `memory(host)`), with
/// a connected QP pair for every flow: the sending end on `flow.src`, the
/// receiving end on `flow.dst`. `seed` seeds the engines' entropy choices.
pub fn metaroce_hosts<M: HostMemory>(
    host_count: usize,
    flows: &[FlowSpec],
    config: &MetaRoceConfig,
    seed: u64,
    mut memory: impl FnMut(HostId) -> M,
) -> Result<Vec<MetaRoceHost<M>>, FabricError> {
    config.validate()?;
    let qp = QpConfig {
        paths: config.paths,
        streams: 1,
        cc: config.cc.clone().into(),
        honor_rate_hint: config.honor_rate_hint,
        conn_window_bytes: config.conn_window_bytes,
        rto_min_ns: config.rto_min_ns,
        rto_initial_ns: config.rto_initial_ns,
        recv_window: config.recv_window,
        ..QpConfig::default()
    };
    let mut hosts: Vec<MetaRoceHost<M>> = (0..host_count)
        .map(|index| {
            let host = HostId(index as u32);
            MetaRoceHost::new(config, qp.clone(), seed, host, memory(host))
        })
        .collect();
    let access = Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ;
    let mut keys = Vec::with_capacity(host_count);
    for host in &mut hosts {
        let pd = host.nic.alloc_pd();
        let region = host
            .nic
            .register_mr(pd, REGION_BASE, config.region_bytes, access)
            .map_err(|e| FabricError::InvalidTopology(format!("memory registration: {e}")))?;
        keys.push((pd, region));
    }
    for flow in flows {
        connect_flow(&mut hosts, &keys, flow, config)?;
    }
    for host in &mut hosts {
        host.resolve_gates()?;
        host.post_receives();
        host.post_sends();
    }
    Ok(hosts)
}

impl<M: HostMemory> MetaRoceHost<M> {
    /// Host `host` with its engine (no QPs yet, `qp` their settings) and
    /// memory `mem`.
    fn new(config: &MetaRoceConfig, qp: QpConfig, seed: u64, host: HostId, mem: M) -> Self {
        let line_rate_mbps = u32::try_from(config.line_rate_bps / 1_000_000).unwrap_or(u32::MAX);
        MetaRoceHost {
            nic: Nic::new(NicConfig {
                local_ip: host_ip(host),
                udp_port: DEFAULT_UDP_PORT,
                mtu: config.mtu,
                line_rate_mbps,
                seed: seed ^ u64::from(host.0).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                qp,
                ..NicConfig::default()
            }),
            mem,
            out: Vec::new(),
            inbound: Vec::new(),
            outstanding: config.outstanding_messages,
            stats: TransportStats::default(),
            latencies: Vec::new(),
            deadline: None,
            datagram_room: config.mtu as usize + 256,
        }
    }

    /// Turns each outbound flow's gate (a flow QPN) into the position of
    /// that flow among this host's inbound flows.
    fn resolve_gates(&mut self) -> Result<(), FabricError> {
        for index in 0..self.out.len() {
            let Some(gate) = self.out[index].spec.gate else {
                continue;
            };
            let Some(gate) = gate.flow() else {
                self.out[index].gate = OutGate::AllInbound;
                continue;
            };
            let Some(position) = self.inbound.iter().position(|f| f.flow_qpn == gate) else {
                return Err(FabricError::InvalidTopology(format!(
                    "flow {} is gated by flow {gate}, which does not end at its source",
                    self.out[index].spec.qpn
                )));
            };
            self.out[index].gate = OutGate::Flow(position);
        }
        Ok(())
    }
}

/// Creates and connects the QP pair of `flow` (`keys`: each host's
/// protection domain and registered region) and records the flow on both
/// hosts.
fn connect_flow<M: HostMemory>(
    hosts: &mut [MetaRoceHost<M>],
    keys: &[(u32, MemoryRegion)],
    flow: &FlowSpec,
    config: &MetaRoceConfig,
) -> Result<(), FabricError> {
    let host_count = hosts.len();
    let (src, dst) = (flow.src.0 as usize, flow.dst.0 as usize);
    if src >= host_count || dst >= host_count || src == dst {
        return Err(FabricError::InvalidTopology(format!(
            "flow {} from host {src} to host {dst} does not join two distinct hosts of {host_count}",
            flow.qpn
        )));
    }
    let message_len = u32::try_from(flow.message_bytes)
        .ok()
        .filter(|&len| len > 0 && u64::from(len) <= config.region_bytes)
        .ok_or(FabricError::InvalidParameter {
            name: "message_bytes",
            value: flow.message_bytes as f64,
            reason: "a MetaRoCE message must be 1 byte .. min(4 GiB, the registered region)",
        })?;
    let verbs = |e: metaroce_firmware::VerbsError| {
        FabricError::InvalidTopology(format!("connecting MetaRoCE QPs: {e}"))
    };
    let send_qpn = hosts[src].nic.create_qp(keys[src].0, None).map_err(verbs)?;
    let recv_qpn = hosts[dst].nic.create_qp(keys[dst].0, None).map_err(verbs)?;
    // Initial PSNs differ per flow so a misrouted packet cannot pass.
    let (send_psn, recv_psn) = (flow.qpn.wrapping_mul(7919), flow.qpn.wrapping_mul(104_729));
    for (side, local_qpn, peer, peer_qpn, local_psn, peer_psn) in [
        (src, send_qpn, flow.dst, recv_qpn, send_psn, recv_psn),
        (dst, recv_qpn, flow.src, send_qpn, recv_psn, send_psn),
    ] {
        let nic = &mut hosts[side].nic;
        nic.modify_qp(local_qpn, QpTransition::Init)
            .map_err(verbs)?;
        nic.modify_qp(
            local_qpn,
            QpTransition::Rtr(RemoteEnd {
                qpn: peer_qpn,
                ip: host_ip(peer),
                udp_port: DEFAULT_UDP_PORT,
                initial_psn: peer_psn,
            }),
        )
        .map_err(verbs)?;
        nic.modify_qp(
            local_qpn,
            QpTransition::Rts {
                initial_psn: local_psn,
                retry_cnt: 7,
                rnr_retry: 7,
                timeout_ns: config.conn_timeout_ns,
            },
        )
        .map_err(verbs)?;
    }
    hosts[dst].inbound.push(InFlow {
        flow_qpn: flow.qpn,
        qpn: recv_qpn,
        limit: flow.message_limit,
        receives_posted: 0,
        delivered: 0,
        delivered_at: Vec::new(),
    });
    hosts[src].out.push(OutFlow {
        spec: *flow,
        qpn: send_qpn,
        lkey: keys[src].1.lkey,
        rkey: keys[dst].1.rkey,
        gate: OutGate::None,
        posted: 0,
        completed: 0,
        first_sent: VecDeque::new(),
        message_len,
        slots: (config.region_bytes / u64::from(message_len)).max(1),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_memory_counts_every_wrong_byte() {
        let mut mem = PatternMemory::default();
        for (addr, len) in [(REGION_BASE, 4096), (REGION_BASE + 3, 4101), (5, 7), (8, 0)] {
            let mut data = vec![0; len];
            mem.read(addr, &mut data);
            mem.write(addr, &data);
            assert_eq!(mem.bytes_wrong, 0);
            if len < 16 {
                continue;
            }
            // Wrong bytes in the unaligned head, in one aligned word (two),
            // in another word and in the tail.
            for i in [0, 100, 101, 2000, len - 1] {
                data[i] ^= 0x5A;
            }
            mem.write(addr, &data);
            assert_eq!(mem.bytes_wrong, 5);
            mem.bytes_wrong = 0;
        }
        let checked: u64 = 4096 + 4101 + 7 + 4096 + 4101;
        assert_eq!(mem.bytes_checked, checked);
    }
}
