//! `metaroce hdl interop`: a hardware NIC (a Verilated `NicCore` driven by
//! its firmware, `metaroce_sim_tb::hw_nic`) and a soft NIC (the engine over
//! UDP sockets, `metaroce_driver::soft`) exchange RDMA traffic over real
//! sockets on loopback, directly or through the relay
//! (`metaroce_relay`, lossy paths, ICRC verified and re-sealed).
//!
//! The RTL NIC's Ethernet frames leave and enter through a
//! `metaroce_sim_tb::udp_bridge::UdpBridge`: its UDP payloads are sent from
//! sockets bound to the frames' own source ports, so the soft NIC and the
//! relay check the RTL's own ICRC. The RTL runs on the calling thread in
//! real time: each clock cycle sees the nanoseconds since the start (one to
//! three million cycles a second, 8 bytes each), and the bridge is polled
//! every 64 cycles. The RTL NIC has its own loopback address (127.0.0.2 by
//! default): it answers from the port a packet came from, and on one shared
//! address that port is the peer's own socket (see [`InteropConfig::rtl_ip`]).
//! The RTL's ACKs ask for 50 Mbit/s, about what it takes in real time; what
//! arrives faster queues in the bridge's socket (the kernel drops what does
//! not fit in its default receive buffer: counted, not a disagreement).
//!
//! One QP on each NIC, connected to each other; both send WRITE,
//! WRITE_IMM, SEND and READ (at most 8 messages in flight from each side,
//! at most 2 READs, SEND and WRITE_IMM on the RTL's ring streams 0–3).
//! Source buffers hold a pattern unique to the message; on completion the
//! destination bytes are compared with it (a WRITE into the RTL once its
//! DMA has caught up: the RTL acknowledges at the verdict, before the DMA
//! write). Every message must complete exactly once, with success, and
//! every receive it consumes too. With `late_receives` each receive is
//! posted after its message, so both NICs NACK (RNR) and retry. Every drop
//! either NIC, the bridge or the relay counts, beyond the RNR refusals
//! asked for, is listed as a disagreement.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Args;
use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::{
    Access, AsyncEvent, CompletionQueue, ConnectOptions, Context, MemoryRegion, Payload,
    ProtectionDomain, QpConfig, QpEndpoint, QpInit, QpTransition, QueuePair, RecvWr, RemoteEnd,
    SendOp, SendRequest, Sge, Wc, WcOpcode, WcStatus,
};
use metaroce_firmware::{Event, Memory, SendWr};
use metaroce_hdl::rx_eth::EthDrop;
use metaroce_hdl::rx_place::{READS, RQ_STREAMS, Verdict};
use metaroce_relay::{LinkConfig, PathConfig, Relay, RelayConfig, RelayHandle};
use metaroce_sim_tb::SimError;
use metaroce_sim_tb::hw_nic::{HwNic, HwNicConfig};
use metaroce_sim_tb::udp_bridge::{BridgeConfig, BridgeCounters, UdpBridge};
use serde::Serialize;

use crate::report;

/// The RTL NIC's host memory starts here.
const MEM_BASE: u64 = 0x1_0000_0000;
/// Messages in flight from each side (each holds a source and a
/// destination slot).
const SLOTS: usize = 8;
/// Streams of each QP: the RTL's streams with a receive ring.
const STREAMS: u16 = RQ_STREAMS as u16;
/// Paths (entropy values) of each QP: the RTL's path tracker's.
const QP_PATHS: u16 = 8;
/// The rate (Mbit/s) the RTL NIC's ACKs ask senders to share: about what
/// a Verilated NIC takes in real time (8 bytes a cycle, 1–3 M cycles/s).
const RTL_RATE_MBPS: u32 = 50;
/// First PSN of the RTL NIC's QP.
const RTL_PSN: u32 = 5000;
/// Poll the bridge and the applications every this many cycles.
const POLL_CYCLES: u64 = 64;
/// Real time the NICs keep running after the last completion, so late
/// ACKs and retransmissions settle before the counters are read.
const SETTLE: Duration = Duration::from_millis(20);
/// With `late_receives`, how long after its message a receive is posted.
const LATE_RECEIVE: Duration = Duration::from_millis(5);
/// The soft NIC's linger after close (its default is 1 s).
const LINGER_NS: u64 = 20_000_000;
/// The RTL NIC's index in per-side arrays.
const RTL: usize = 0;
/// The soft NIC's index in per-side arrays.
const SOFT: usize = 1;

/// A run's settings.
#[derive(Clone, Debug)]
pub struct InteropConfig {
    /// Messages to complete (both directions together).
    pub messages: usize,
    /// Largest message, bytes; sizes are log-uniform from 1 up to it.
    pub max_size: u32,
    /// Go through the relay (else directly).
    pub relay: bool,
    /// Relay paths.
    pub paths: u16,
    /// Loss probability of every relay path.
    pub loss: f64,
    /// The RTL NIC's IP address (a loopback address). The RTL sends each
    /// ACK from the UDP port the acknowledged packet came from; when that
    /// port belongs to a socket of the peer (the soft NIC's entropy
    /// sockets, the relay's path sockets) on the same IP, the bridge cannot
    /// bind it and the ACK is lost. With 127.0.0.1 for both NICs every RTL
    /// ACK meets that fate.
    pub rtl_ip: IpAddr,
    /// Post each receive a SEND or WRITE_IMM consumes [`LATE_RECEIVE`]
    /// after the message instead of before it: the receiver first answers
    /// with an RNR NACK (the RTL's firmware builds its own), the sender
    /// waits and tries again.
    pub late_receives: bool,
    /// Give up after this much wall time.
    pub max_time: Duration,
    /// Seed of the traffic, the relay and the engines.
    pub seed: u64,
}

impl Default for InteropConfig {
    fn default() -> Self {
        Self {
            messages: 200,
            max_size: 16 << 10,
            relay: false,
            paths: 4,
            loss: 0.0,
            rtl_ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
            late_receives: false,
            max_time: Duration::from_secs(60),
            seed: 1,
        }
    }
}

/// What the RTL NIC did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RtlReport {
    /// Data packets the RTL placed.
    pub placed: u64,
    /// Data packets the firmware handled (READ requests).
    pub firmware_packets: u64,
    /// ACK frames the RTL generated.
    pub ack_frames: u64,
    /// Datagrams the firmware built itself (NACK, DISCONNECT).
    pub firmware_frames: u64,
    /// ACKs and NACKs handed up to the firmware.
    pub acks_to_firmware: u64,
    /// Descriptors the firmware gave the RTL.
    pub descriptors: u64,
    /// Frames on the MAC TX and RX ports.
    pub mac_tx_frames: u64,
    /// Frames offered to the MAC RX port.
    pub mac_rx_frames: u64,
    /// Packets the engine retransmitted.
    pub retransmits: u64,
    /// DMA, fetch and table errors (`HwCounters::interface_errors`).
    pub interface_errors: u64,
    /// Verdict events the engine's rules disagreed with.
    pub hw_disagreements: u64,
    /// The receive core's verdict counters (nonzero ones, by name).
    pub verdicts: BTreeMap<String, u64>,
    /// Frames the Ethernet front end dropped, by reason.
    pub eth_drops: BTreeMap<String, u64>,
    /// Datagrams the firmware dropped (of those handed up), by reason.
    pub firmware_drops: BTreeMap<String, u64>,
}

/// What the soft NIC did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SoftReport {
    /// Data packets sent (first transmissions).
    pub data_sent: u64,
    /// Retransmissions.
    pub retransmits: u64,
    /// Duplicate data packets received.
    pub duplicates: u64,
    /// Datagrams dropped, by reason (`ctx.drops()`, nonzero ones).
    pub drops: BTreeMap<String, u64>,
}

/// What the relay did (sums over its paths).
#[derive(Clone, Debug, Default, Serialize)]
pub struct RelayReport {
    /// Datagrams forwarded.
    pub forwarded: u64,
    /// Dropped by random loss.
    pub dropped_loss: u64,
    /// Dropped because the queue was full.
    pub dropped_queue: u64,
    /// Dropped because the ICRC did not verify.
    pub bad_icrc: u64,
    /// Sends that failed.
    pub send_errors: u64,
}

/// What a run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct InteropReport {
    /// Messages completed (both directions).
    pub messages: u64,
    /// Every message completed before the deadline.
    pub finished: bool,
    /// Bytes compared with their pattern and found right.
    pub bytes_verified: u64,
    /// Bytes compared and found wrong.
    pub bytes_wrong: u64,
    /// Completions with success (send and receive side, both NICs).
    pub completions_ok: u64,
    /// Completions with an error status, unexpected or duplicated.
    pub completions_error: u64,
    /// QPs that went to ERR (either NIC).
    pub qp_errors: u64,
    /// WRITEs into the RTL whose requester completed before all their
    /// bytes were in the RTL's host memory.
    pub acked_before_placed: u64,
    /// Payload bytes of completed messages per wall second, Mbit/s.
    pub goodput_mbps: f64,
    /// The RTL NIC.
    pub rtl: RtlReport,
    /// The soft NIC.
    pub soft: SoftReport,
    /// The RTL NIC's MAC↔UDP bridge.
    pub bridge: BridgeCounters,
    /// The relay, if there was one.
    pub relay: Option<RelayReport>,
    /// Clock cycles the RTL ran.
    pub cycles: u64,
    /// Cycles per wall second.
    pub cycles_per_second: f64,
    /// Wall-clock seconds of the traffic.
    pub wall_seconds: f64,
    /// Every counter that shows the two NICs (or a NIC and the relay)
    /// disagreeing, one line each.
    pub disagreements: Vec<String>,
}

/// `metaroce hdl interop`.
#[derive(Args, Debug)]
pub struct InteropArgs {
    /// Messages to complete (both directions together).
    #[arg(long, default_value_t = 200)]
    messages: usize,
    /// Largest message in bytes (1 to 1 MiB); sizes are log-uniform from 1
    /// byte up to it.
    #[arg(long, default_value_t = 16 << 10, value_parser = clap::value_parser!(u32).range(1..=1 << 20))]
    size: u32,
    /// Go through the relay (ICRC verified and re-sealed); without it the
    /// NICs talk directly.
    #[arg(long)]
    relay: bool,
    /// Relay paths (with --relay).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    paths: u16,
    /// Loss probability of every relay path (with --relay).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// The RTL NIC's loopback IPv4 address (127.0.0.1 makes every RTL ACK
    /// collide with a port of its peer; see the docs).
    #[arg(long, default_value = "127.0.0.2")]
    rtl_ip: Ipv4Addr,
    /// Post each receive 5 ms after the SEND or WRITE_IMM that consumes it,
    /// so receivers NACK first (RNR) and senders retry.
    #[arg(long)]
    late_receives: bool,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 60)]
    max_seconds: u64,
    /// Seed of the traffic, the relay and the engines.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One JSON document on stdout instead of a table.
    #[arg(long)]
    json: bool,
}

/// What `metaroce hdl interop --json` prints.
#[derive(Serialize)]
struct CliReport {
    mode: &'static str,
    paths: Option<u16>,
    loss: Option<f64>,
    size: u32,
    #[serde(flatten)]
    run: InteropReport,
}

/// Runs `metaroce hdl interop`.
pub fn run(a: &InteropArgs) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&a.loss) {
        bail!(
            "--loss must be a probability between 0 and 1, not {}",
            a.loss
        );
    }
    if !a.rtl_ip.is_loopback() {
        bail!("--rtl-ip must be a loopback address, not {}", a.rtl_ip);
    }
    let cfg = InteropConfig {
        messages: a.messages,
        max_size: a.size,
        relay: a.relay,
        paths: a.paths,
        loss: a.loss,
        rtl_ip: IpAddr::V4(a.rtl_ip),
        late_receives: a.late_receives,
        max_time: Duration::from_secs(a.max_seconds),
        seed: a.seed,
    };
    let run = match run_interop(&cfg) {
        Ok(r) => r,
        Err(e) if e.downcast_ref() == Some(&SimError::VerilatorMissing) => {
            bail!(super::hdl::NO_VERILATOR)
        }
        Err(e) => return Err(e),
    };
    let out = CliReport {
        mode: if a.relay { "relay" } else { "direct" },
        paths: a.relay.then_some(a.paths),
        loss: a.relay.then_some(a.loss),
        size: a.size,
        run,
    };
    report::emit(a.json, &out, || vec![table(&out)])?;
    let r = &out.run;
    if !r.finished {
        bail!("the run stopped before every message completed");
    }
    if r.bytes_wrong > 0 || r.completions_error > 0 || r.qp_errors > 0 {
        bail!("wrong bytes, failed completions or QP errors");
    }
    Ok(())
}

fn table(r: &CliReport) -> comfy_table::Table {
    let p = &r.run;
    let mode = match (r.paths, r.loss) {
        (Some(n), Some(l)) => format!("RTL NIC ↔ relay ({n} paths, loss {l}) ↔ soft NIC"),
        _ => "RTL NIC ↔ soft NIC".to_string(),
    };
    let mut t = report::table([mode, "value".to_string()]);
    let map = |m: &BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            let v: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
            v.join(", ")
        }
    };
    let b = &p.bridge;
    let mut rows: Vec<(&str, String)> = vec![
        (
            "messages completed",
            format!(
                "{}{}",
                p.messages,
                if p.finished { "" } else { " (stopped early)" }
            ),
        ),
        (
            "bytes verified / wrong",
            format!("{} / {}", p.bytes_verified, p.bytes_wrong),
        ),
        (
            "completions ok / error",
            format!("{} / {}", p.completions_ok, p.completions_error),
        ),
        ("QP errors", p.qp_errors.to_string()),
        ("goodput", format!("{:.1} Mbit/s", p.goodput_mbps)),
        (
            "RTL: placed / firmware data packets",
            format!("{} / {}", p.rtl.placed, p.rtl.firmware_packets),
        ),
        (
            "RTL: ACK frames RTL / firmware frames",
            format!("{} / {}", p.rtl.ack_frames, p.rtl.firmware_frames),
        ),
        (
            "RTL: descriptors / retransmissions",
            format!("{} / {}", p.rtl.descriptors, p.rtl.retransmits),
        ),
        ("RTL: verdicts", map(&p.rtl.verdicts)),
        ("RTL: front-end drops", map(&p.rtl.eth_drops)),
        ("RTL: firmware drops", map(&p.rtl.firmware_drops)),
        (
            "soft: data sent / retransmissions / duplicates",
            format!(
                "{} / {} / {}",
                p.soft.data_sent, p.soft.retransmits, p.soft.duplicates
            ),
        ),
        ("soft: drops", map(&p.soft.drops)),
        (
            "bridge: sent / received / kernel receive-buffer drops",
            format!(
                "{} / {} / {}",
                b.frames_sent, b.datagrams_received, b.kernel_drops
            ),
        ),
        (
            "bridge: bind failures / bad checksums / wrong source / not UDP / send errors",
            format!(
                "{} / {} / {} / {} / {}",
                b.bind_failures, b.bad_checksums, b.wrong_source, b.non_udp_frames, b.send_errors
            ),
        ),
    ];
    if let Some(relay) = &p.relay {
        rows.push((
            "relay: forwarded / lost / queue drops / bad ICRC",
            format!(
                "{} / {} / {} / {}",
                relay.forwarded, relay.dropped_loss, relay.dropped_queue, relay.bad_icrc
            ),
        ));
    }
    rows.push((
        "WRITEs acknowledged before placed",
        p.acked_before_placed.to_string(),
    ));
    rows.push((
        "wall time, cycles/s",
        format!("{:.2} s, {:.0}", p.wall_seconds, p.cycles_per_second),
    ));
    let disagreements = if p.disagreements.is_empty() {
        "none".to_string()
    } else {
        p.disagreements.join("\n")
    };
    rows.push(("disagreements", disagreements));
    for (k, v) in rows {
        t.add_row([k.to_string(), v]);
    }
    t
}

/// A SplitMix64 generator: the traffic mix.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The pattern byte `i` of message `id`.
fn pattern(id: u64, i: usize) -> u8 {
    let x = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24) as u8;
    x ^ (i as u8).wrapping_mul(31) ^ (i >> 8) as u8
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Write,
    WriteImm,
    Send,
    Read,
}

/// A message in flight.
#[derive(Clone, Copy, Debug)]
struct Msg {
    /// The requesting side ([`RTL`] or [`SOFT`]).
    from: usize,
    op: Op,
    len: u32,
    /// Requester's source (READ: destination) slot; responder's slot.
    local_slot: usize,
    remote_slot: usize,
    send_done: bool,
    recv_done: bool,
}

/// A completion of either NIC.
#[derive(Clone, Copy, Debug)]
struct Done {
    wr_id: u64,
    ok: bool,
    opcode: WcOpcode,
    byte_len: u32,
    imm: Option<u32>,
    is_recv: bool,
}

/// The soft NIC's Verbs objects (the context last: it closes the device).
struct Soft {
    qp: QueuePair,
    mr: MemoryRegion,
    send_cq: CompletionQueue,
    recv_cq: CompletionQueue,
    _pd: ProtectionDomain,
    ctx: Context,
}

/// Both NICs.
struct Nics {
    rtl: HwNic,
    rtl_qpn: u32,
    rtl_keys: (u32, u32),
    soft: Soft,
    slot_len: u64,
}

impl Nics {
    fn src_off(&self, slot: usize) -> u64 {
        slot as u64 * self.slot_len
    }

    fn dst_off(&self, slot: usize) -> u64 {
        (SLOTS + slot) as u64 * self.slot_len
    }

    /// The address of `off` in `side`'s registered memory.
    fn addr(&self, side: usize, off: u64) -> u64 {
        if side == RTL {
            MEM_BASE + off
        } else {
            self.soft.mr.addr() + off
        }
    }

    /// (lkey, rkey) of `side`'s memory region.
    fn keys(&self, side: usize) -> (u32, u32) {
        if side == RTL {
            self.rtl_keys
        } else {
            (self.soft.mr.lkey(), self.soft.mr.rkey())
        }
    }

    fn write(&mut self, side: usize, off: u64, bytes: &[u8]) {
        if side == RTL {
            self.rtl.mem_mut().write(MEM_BASE + off, bytes);
        } else {
            self.soft.mr.write(off as usize, bytes);
        }
    }

    /// Bytes of `side`'s memory at `off` that differ from message `id`'s
    /// pattern (all of them if the range cannot be read).
    fn wrong(&self, side: usize, off: u64, id: u64, len: u32) -> u64 {
        let mut buf = vec![0u8; len as usize];
        if side == RTL {
            buf.copy_from_slice(self.rtl.mem().slice(MEM_BASE + off, len as usize));
        } else if !self.soft.mr.read(off as usize, &mut buf) {
            return len.into();
        }
        buf.iter()
            .enumerate()
            .filter(|&(i, &b)| b != pattern(id, i))
            .count() as u64
    }

    fn post_recv(&mut self, side: usize, wr: RecvWr) -> anyhow::Result<()> {
        if side == RTL {
            self.rtl.post_recv(self.rtl_qpn, wr)?;
        } else {
            self.soft.qp.post_recv(wr)?;
        }
        Ok(())
    }

    fn post_send(&mut self, side: usize, wr: SendWr) -> anyhow::Result<()> {
        if side == RTL {
            self.rtl.post_send(self.rtl_qpn, wr)?;
        } else {
            self.soft.qp.post_send(&SendRequest {
                wr_id: wr.wr_id,
                op: wr.op,
                payload: Payload::Sge(wr.sge),
                signaled: wr.signaled,
                solicited: wr.solicited,
                stream: wr.stream,
            })?;
        }
        Ok(())
    }

    /// Every completion waiting at either NIC, with its side; counts QP
    /// errors.
    fn poll(&mut self, out: &mut Vec<(usize, Done)>, qp_errors: &mut u64) {
        while let Some(e) = self.rtl.poll_event() {
            match e {
                Event::Completion(c) => out.push((
                    RTL,
                    Done {
                        wr_id: c.wr_id,
                        ok: c.status == WcStatus::Success,
                        opcode: c.opcode,
                        byte_len: c.byte_len,
                        imm: c.imm,
                        is_recv: c.is_recv,
                    },
                )),
                Event::QpError { .. } => *qp_errors += 1,
            }
        }
        let mut wcs = [Wc::default(); 32];
        for (cq, is_recv) in [(&self.soft.send_cq, false), (&self.soft.recv_cq, true)] {
            loop {
                let n = cq.poll(&mut wcs);
                for w in &wcs[..n] {
                    out.push((
                        SOFT,
                        Done {
                            wr_id: w.wr_id,
                            ok: w.status == WcStatus::Success,
                            opcode: w.opcode,
                            byte_len: w.byte_len,
                            imm: w.imm,
                            is_recv,
                        },
                    ));
                }
                if n < wcs.len() {
                    break;
                }
            }
        }
        while let Some(e) = self.soft.ctx.poll_async_event() {
            if matches!(e, AsyncEvent::QpFatal { .. }) {
                *qp_errors += 1;
            }
        }
    }
}

/// A WRITE into the RTL to verify once its DMA reaches `fence`.
struct Pending {
    fence: u64,
    off: u64,
    id: u64,
    len: u32,
    /// The requester's source slot and the RTL's destination slot.
    src_slot: usize,
    dst_slot: usize,
}

/// The applications of both NICs.
struct Traffic<'a> {
    cfg: &'a InteropConfig,
    rng: Mix,
    msgs: HashMap<u64, Msg>,
    next_id: u64,
    posted: usize,
    free_src: [Vec<usize>; 2],
    free_dst: [Vec<usize>; 2],
    reads: [usize; 2],
    pending: Vec<Pending>,
    /// Receives to post at a time (`late_receives`): when, on which side;
    /// in the order of their messages (a stream's receives are consumed in
    /// the order they were posted).
    late: VecDeque<(Instant, usize, RecvWr)>,
    done: Vec<(usize, Done)>,
    payload_bytes: u64,
    report: InteropReport,
}

impl Traffic<'_> {
    fn finished(&self) -> bool {
        self.report.messages as usize >= self.cfg.messages && self.pending.is_empty()
    }

    /// Takes completions, verifies, and posts new messages while slots allow.
    fn app(&mut self, nics: &mut Nics) -> anyhow::Result<()> {
        let mut done = std::mem::take(&mut self.done);
        nics.poll(&mut done, &mut self.report.qp_errors);
        for (at, d) in done.drain(..) {
            self.on_completion(nics, at, &d);
        }
        self.done = done;
        self.verify_pending(nics);
        let now = Instant::now();
        while let Some(&(due, side, wr)) = self.late.front() {
            if due > now {
                break;
            }
            self.late.pop_front();
            nics.post_recv(side, wr).context("post_recv")?;
        }
        while self.posted < self.cfg.messages {
            let from = self.rng.below(2) as usize;
            if !self.post(nics, from)? {
                break;
            }
        }
        Ok(())
    }

    fn size(&mut self) -> u32 {
        let max = self.cfg.max_size.max(1);
        let bits = self.rng.unit() * f64::from(max).log2();
        (2f64.powf(bits) as u32).clamp(1, max)
    }

    /// Posts one message from side `from`; false when no slot is free.
    fn post(&mut self, nics: &mut Nics, from: usize) -> anyhow::Result<bool> {
        let to = 1 - from;
        let op = match self.rng.below(100) {
            0..40 => Op::Write,
            40..55 => Op::WriteImm,
            55..80 => Op::Send,
            _ => Op::Read,
        };
        if op == Op::Read && self.reads[from] >= READS {
            return Ok(false);
        }
        // READ: the requester's destination slot and the responder's source.
        let (local_pool, remote_pool) = if op == Op::Read {
            (&self.free_dst[from], &self.free_src[to])
        } else {
            (&self.free_src[from], &self.free_dst[to])
        };
        if local_pool.is_empty() || remote_pool.is_empty() {
            return Ok(false);
        }
        let (local_slot, remote_slot) = if op == Op::Read {
            (self.free_dst[from].pop(), self.free_src[to].pop())
        } else {
            (self.free_src[from].pop(), self.free_dst[to].pop())
        };
        let (Some(local_slot), Some(remote_slot)) = (local_slot, remote_slot) else {
            return Ok(false);
        };
        let len = self.size();
        let id = self.next_id;
        self.next_id += 1;
        let stream = self.rng.below(STREAMS.into()) as u16;
        // The source holds the message's pattern.
        let (src_side, src_off) = if op == Op::Read {
            (to, nics.src_off(remote_slot))
        } else {
            (from, nics.src_off(local_slot))
        };
        let bytes: Vec<u8> = (0..len as usize).map(|i| pattern(id, i)).collect();
        nics.write(src_side, src_off, &bytes);
        let remote_dst = nics.addr(to, nics.dst_off(remote_slot));
        let (to_lkey, to_rkey) = nics.keys(to);
        if matches!(op, Op::Send | Op::WriteImm) {
            // The receive it consumes, posted first.
            let sge = Sge {
                addr: remote_dst,
                len: if op == Op::Send { len } else { 0 },
                lkey: to_lkey,
            };
            let wr = RecvWr {
                wr_id: id,
                sge,
                stream,
            };
            if self.cfg.late_receives {
                self.late.push_back((Instant::now() + LATE_RECEIVE, to, wr));
            } else {
                nics.post_recv(to, wr).context("post_recv")?;
            }
        }
        let local_off = if op == Op::Read {
            nics.dst_off(local_slot)
        } else {
            nics.src_off(local_slot)
        };
        let sge = Sge {
            addr: nics.addr(from, local_off),
            len,
            lkey: nics.keys(from).0,
        };
        let sop = match op {
            Op::Write => SendOp::Write {
                remote_va: remote_dst,
                rkey: to_rkey,
            },
            Op::WriteImm => SendOp::WriteImm {
                remote_va: remote_dst,
                rkey: to_rkey,
                imm: id as u32,
            },
            Op::Send => SendOp::Send,
            Op::Read => SendOp::Read {
                remote_va: nics.addr(to, nics.src_off(remote_slot)),
                rkey: to_rkey,
            },
        };
        let wr = SendWr {
            wr_id: id,
            op: sop,
            sge,
            signaled: true,
            solicited: false,
            stream,
        };
        nics.post_send(from, wr).context("post_send")?;
        if op == Op::Read {
            self.reads[from] += 1;
        }
        self.msgs.insert(
            id,
            Msg {
                from,
                op,
                len,
                local_slot,
                remote_slot,
                send_done: false,
                recv_done: !matches!(op, Op::Send | Op::WriteImm),
            },
        );
        self.posted += 1;
        Ok(true)
    }

    fn verify(&mut self, nics: &Nics, side: usize, off: u64, id: u64, len: u32) {
        let wrong = nics.wrong(side, off, id, len);
        self.report.bytes_wrong += wrong;
        self.report.bytes_verified += u64::from(len) - wrong;
    }

    /// Checks the WRITEs into the RTL whose DMA has caught up.
    fn verify_pending(&mut self, nics: &Nics) {
        let mut k = 0;
        while k < self.pending.len() {
            if nics.rtl.dma_reached(self.pending[k].fence) {
                let p = self.pending.swap_remove(k);
                self.verify(nics, RTL, p.off, p.id, p.len);
                self.free_src[SOFT].push(p.src_slot);
                self.free_dst[RTL].push(p.dst_slot);
            } else {
                k += 1;
            }
        }
    }

    fn on_completion(&mut self, nics: &Nics, at: usize, c: &Done) {
        let Some(mut m) = self.msgs.get(&c.wr_id).copied() else {
            self.report.completions_error += 1;
            return;
        };
        let to = 1 - m.from;
        let expected_at = if c.is_recv { to } else { m.from };
        let already = if c.is_recv { m.recv_done } else { m.send_done };
        if !c.ok || at != expected_at || already {
            self.report.completions_error += 1;
            return;
        }
        self.report.completions_ok += 1;
        if c.is_recv {
            m.recv_done = true;
            if m.op == Op::Send && c.byte_len != m.len {
                self.report.completions_error += 1;
            }
            if m.op == Op::WriteImm && c.imm != Some(c.wr_id as u32) {
                self.report.completions_error += 1;
            }
            // SEND: the receive buffer; WRITE_IMM: the written range.
            let off = nics.dst_off(m.remote_slot);
            self.verify(nics, to, off, c.wr_id, m.len);
        } else {
            m.send_done = true;
            match m.op {
                Op::Write if to == RTL => {
                    // The RTL acknowledges at the verdict and writes the
                    // payload after it: checked once its DMA has caught up.
                    let off = nics.dst_off(m.remote_slot);
                    if nics.wrong(RTL, off, c.wr_id, m.len) > 0 {
                        self.report.acked_before_placed += 1;
                    }
                    self.pending.push(Pending {
                        fence: nics.rtl.dma_fence(),
                        off,
                        id: c.wr_id,
                        len: m.len,
                        src_slot: m.local_slot,
                        dst_slot: m.remote_slot,
                    });
                    self.msgs.remove(&c.wr_id);
                    self.report.messages += 1;
                    self.payload_bytes += u64::from(m.len);
                    return;
                }
                Op::Write => {
                    let off = nics.dst_off(m.remote_slot);
                    self.verify(nics, to, off, c.wr_id, m.len);
                }
                Op::Read => {
                    if c.opcode != WcOpcode::Read {
                        self.report.completions_error += 1;
                    }
                    let off = nics.dst_off(m.local_slot);
                    self.verify(nics, m.from, off, c.wr_id, m.len);
                }
                Op::WriteImm | Op::Send => {}
            }
        }
        if m.send_done && m.recv_done {
            self.msgs.remove(&c.wr_id);
            self.report.messages += 1;
            self.payload_bytes += u64::from(m.len);
            if m.op == Op::Read {
                self.reads[m.from] -= 1;
                self.free_dst[m.from].push(m.local_slot);
                self.free_src[to].push(m.remote_slot);
            } else {
                self.free_src[m.from].push(m.local_slot);
                self.free_dst[to].push(m.remote_slot);
            }
        } else {
            self.msgs.insert(c.wr_id, m);
        }
    }
}

/// Starts the soft NIC: one QP, a send and a receive CQ, one region of
/// `mem` bytes.
fn start_soft(cfg: &InteropConfig, mem: usize) -> anyhow::Result<Soft> {
    let mut sc = SoftConfig::new(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
    sc.nic.seed = cfg.seed ^ 0x50F7;
    sc.nic.qp.paths = QP_PATHS;
    sc.nic.qp.streams = STREAMS;
    sc.nic.linger_max_ns = LINGER_NS;
    let ctx = Context::open(SoftBackend::start(sc).context("starting the soft NIC")?);
    let pd = ctx.alloc_pd();
    let send_cq = ctx.create_cq(4 * SLOTS, None);
    let recv_cq = ctx.create_cq(4 * SLOTS, None);
    let mut init = QpInit::new(&send_cq, &recv_cq);
    init.config = Some(QpConfig {
        paths: QP_PATHS,
        streams: STREAMS,
        ..ctx.default_qp_config()
    });
    let qp = pd.create_qp(&init)?;
    let mr = pd.alloc_mr(
        mem,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
    )?;
    Ok(Soft {
        qp,
        mr,
        send_cq,
        recv_cq,
        _pd: pd,
        ctx,
    })
}

/// A relay between the soft NIC (link 0, towards it) and the RTL NIC's
/// bridge (link 1), `cfg.paths` paths with `cfg.loss`, ICRCs verified and
/// re-sealed.
fn start_relay(
    cfg: &InteropConfig,
    soft: SocketAddr,
    rtl: SocketAddr,
) -> anyhow::Result<RelayHandle> {
    let any = SocketAddr::new(soft.ip(), 0);
    let paths = (0..cfg.paths)
        .map(|_| PathConfig {
            loss: cfg.loss,
            ..PathConfig::default()
        })
        .collect();
    let mut rc = RelayConfig::new(
        vec![
            LinkConfig {
                listen: any,
                forward_to: soft,
            },
            LinkConfig {
                listen: any,
                forward_to: rtl,
            },
        ],
        paths,
    );
    rc.reseal_icrc = true;
    rc.seed = cfg.seed;
    Relay::start(rc).context("starting the relay")
}

/// Runs the RTL NIC against the soft NIC (see the module docs). An error
/// wrapping [`SimError::VerilatorMissing`] when there is no RTL model.
pub fn run_interop(cfg: &InteropConfig) -> anyhow::Result<InteropReport> {
    let slot_len = u64::from(cfg.max_size.max(1));
    let mem_len = (2 * SLOTS) as u64 * slot_len;
    let soft = start_soft(cfg, mem_len as usize)?;
    let rtl_mac = [2, 0, 0, 0, 0, 1];
    let peer_mac = [2, 0, 0, 0, 0, 2];
    let mut bridge = UdpBridge::bind(BridgeConfig {
        mac: rtl_mac,
        peer_mac,
        local: SocketAddr::new(cfg.rtl_ip, 0),
    })
    .with_context(|| format!("binding the RTL NIC's socket on {}", cfg.rtl_ip))?;
    let relay = if cfg.relay {
        Some(start_relay(cfg, soft.ctx.address(), bridge.local_addr())?)
    } else {
        None
    };
    // Where each NIC sends to reach the other.
    let (to_soft, to_rtl) = match &relay {
        Some(r) => (r.listen_addrs()[0], r.listen_addrs()[1]),
        None => (soft.ctx.address(), bridge.local_addr()),
    };
    let mut rtl = HwNic::new(HwNicConfig {
        mac: rtl_mac,
        peer_mac,
        ip: cfg.rtl_ip,
        peer_ip: to_soft.ip(),
        udp_port: bridge.local_addr().port(),
        peer_udp_port: to_soft.port(),
        mem_base: MEM_BASE,
        mem_len: mem_len as usize,
        clock_ps: 1_000,
        line_rate_mbps: RTL_RATE_MBPS,
        seed: cfg.seed ^ 0x4D7,
    })?;
    let pd = rtl.alloc_pd();
    let mr = rtl
        .register_mr(
            pd,
            MEM_BASE,
            mem_len,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
        )
        .context("registering the RTL NIC's memory")?;
    let rtl_qpn = rtl.create_qp(
        pd,
        QpConfig {
            paths: QP_PATHS,
            streams: STREAMS,
            ..QpConfig::default()
        },
    )?;
    let soft_end = soft.qp.endpoint();
    let opts = ConnectOptions::default();
    rtl.modify_qp(rtl_qpn, QpTransition::Init)?;
    rtl.modify_qp(
        rtl_qpn,
        QpTransition::Rtr(RemoteEnd {
            qpn: soft_end.qpn,
            ip: to_soft.ip(),
            udp_port: to_soft.port(),
            initial_psn: soft_end.psn,
        }),
    )?;
    rtl.modify_qp(
        rtl_qpn,
        QpTransition::Rts {
            initial_psn: RTL_PSN,
            retry_cnt: opts.retry_cnt,
            rnr_retry: opts.rnr_retry,
            timeout_ns: opts.timeout_ns,
        },
    )?;
    soft.qp.connect(
        &QpEndpoint {
            qpn: rtl_qpn,
            addr: to_rtl,
            psn: RTL_PSN,
        },
        &opts,
    )?;
    let mut nics = Nics {
        rtl,
        rtl_qpn,
        rtl_keys: (mr.lkey, mr.rkey),
        soft,
        slot_len,
    };
    let mut t = Traffic {
        cfg,
        rng: Mix(cfg.seed),
        msgs: HashMap::new(),
        next_id: 1,
        posted: 0,
        free_src: [(0..SLOTS).rev().collect(), (0..SLOTS).rev().collect()],
        free_dst: [(0..SLOTS).rev().collect(), (0..SLOTS).rev().collect()],
        reads: [0; 2],
        pending: Vec::new(),
        late: VecDeque::new(),
        done: Vec::new(),
        payload_bytes: 0,
        report: InteropReport::default(),
    };

    let start = Instant::now();
    let mut out = Vec::new();
    let mut inbox = Vec::new();
    let mut cycles = 0u64;
    let mut settle_from: Option<Instant> = None;
    loop {
        let now = start.elapsed().as_nanos() as u64;
        nics.rtl.step_at(now, &mut out);
        for f in out.drain(..) {
            bridge.send_frame(&f);
        }
        cycles += 1;
        if cycles % POLL_CYCLES != 0 {
            continue;
        }
        bridge.poll_frames(&mut inbox);
        for f in inbox.drain(..) {
            nics.rtl.receive_frame(f);
        }
        // Completions are still taken while settling: a late or repeated
        // one counts as an error.
        t.app(&mut nics)?;
        match settle_from {
            None if t.finished() || start.elapsed() > cfg.max_time => {
                t.report.finished = t.finished();
                t.report.wall_seconds = start.elapsed().as_secs_f64();
                settle_from = Some(Instant::now());
            }
            Some(s) if s.elapsed() > SETTLE => break,
            _ => {}
        }
    }
    // Drain the model's own queues (no new frames come in) so the counter
    // reads, which clock the model, find it idle.
    for _ in 0..100_000 {
        if nics.rtl.idle() {
            break;
        }
        let now = start.elapsed().as_nanos() as u64;
        nics.rtl.step_at(now, &mut out);
        for f in out.drain(..) {
            bridge.send_frame(&f);
        }
    }
    // The soft NIC's answers to the last frames, and any stray completion.
    std::thread::sleep(Duration::from_millis(5));
    t.app(&mut nics)?;
    let mut r = t.report;
    r.cycles = cycles;
    r.cycles_per_second = cycles as f64 / start.elapsed().as_secs_f64().max(1e-9);
    r.goodput_mbps = t.payload_bytes as f64 * 8.0 / r.wall_seconds.max(1e-9) / 1e6;
    r.rtl = rtl_report(&mut nics.rtl);
    let soft = &nics.soft.ctx;
    let stats = soft.stats();
    r.soft = SoftReport {
        data_sent: stats.data_sent,
        retransmits: stats.retransmits,
        duplicates: stats.duplicates,
        drops: nonzero(soft.drops().iter()),
    };
    r.bridge = bridge.counters();
    r.relay = relay.map(|h| {
        let c = h.all_counters();
        let sum = |f: fn(&metaroce_relay::PathCounters) -> u64| c.iter().map(f).sum();
        RelayReport {
            forwarded: sum(|p| p.forwarded),
            dropped_loss: sum(|p| p.dropped_loss),
            dropped_queue: sum(|p| p.dropped_queue),
            bad_icrc: sum(|p| p.bad_icrc),
            send_errors: sum(|p| p.send_errors),
        }
    });
    r.disagreements = disagreements(cfg, &r);
    Ok(r)
}

/// The counters with a nonzero value, by name.
fn nonzero<'a>(it: impl Iterator<Item = (&'a str, u64)>) -> BTreeMap<String, u64> {
    it.filter(|&(_, v)| v > 0)
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The RTL NIC's counters (reads clock the model: call when it is idle).
fn rtl_report(nic: &mut HwNic) -> RtlReport {
    let c = nic.counters();
    let s = *nic.engine().stats();
    let verdicts: Vec<(String, u64)> = Verdict::ALL
        .iter()
        .map(|&v| (format!("{v:?}"), nic.rtl_counter(v as u8)))
        .collect();
    let eth: Vec<(String, u64)> = EthDrop::ALL
        .iter()
        .filter(|&&d| d != EthDrop::Accepted)
        .map(|&d| (format!("{d:?}"), nic.rtl_eth_counter(d as u8)))
        .collect();
    let owned = |v: &[(String, u64)]| nonzero(v.iter().map(|(k, n)| (k.as_str(), *n)));
    RtlReport {
        placed: c.rtl_placed,
        firmware_packets: c.firmware_data,
        ack_frames: nic.rtl_ack_frames(),
        firmware_frames: c.firmware_frames,
        acks_to_firmware: c.firmware_acks_in,
        descriptors: c.descriptors,
        mac_tx_frames: c.mac_tx_frames,
        mac_rx_frames: c.mac_rx_frames,
        retransmits: s.retransmits,
        interface_errors: c.interface_errors,
        hw_disagreements: s.hw_disagreements,
        verdicts: owned(&verdicts),
        eth_drops: owned(&eth),
        firmware_drops: nonzero(nic.engine().drops().iter()),
    }
}

/// Verdicts that are part of normal operation on a lossy, reordering
/// fabric: placed, handed to the firmware, duplicates of retransmitted
/// packets, path probes.
const NORMAL_VERDICTS: [Verdict; 4] = [
    Verdict::Placed,
    Verdict::Firmware,
    Verdict::Duplicate,
    Verdict::Probe,
];

/// The RTL's verdicts and the drop reasons (of the soft NIC and the RTL's
/// firmware) that a run with `cfg` expects.
fn expected(cfg: &InteropConfig) -> (Vec<String>, Vec<&'static str>) {
    let mut verdicts: Vec<Verdict> = NORMAL_VERDICTS.to_vec();
    let mut drops = Vec::new();
    if cfg.late_receives {
        verdicts.push(Verdict::Rnr);
        drops.push("receiver_not_ready");
    }
    (verdicts.iter().map(|v| format!("{v:?}")).collect(), drops)
}

/// One line per counter that shows a disagreement.
fn disagreements(cfg: &InteropConfig, r: &InteropReport) -> Vec<String> {
    let (verdicts, drops) = expected(cfg);
    let mut d = Vec::new();
    for (k, v) in &r.soft.drops {
        if !drops.contains(&k.as_str()) {
            d.push(format!("soft NIC dropped {v} datagrams: {k}"));
        }
    }
    for (k, v) in &r.rtl.verdicts {
        if !verdicts.contains(k) {
            d.push(format!("RTL verdict {k}: {v} packets"));
        }
    }
    for (k, v) in &r.rtl.eth_drops {
        d.push(format!("RTL front end dropped {v} frames: {k}"));
    }
    for (k, v) in &r.rtl.firmware_drops {
        if !drops.contains(&k.as_str()) {
            d.push(format!("RTL firmware dropped {v} datagrams: {k}"));
        }
    }
    let b = &r.bridge;
    for (what, v) in [
        (
            "RTL frames whose source port could not be bound",
            b.bind_failures,
        ),
        ("RTL frames with a bad IP/UDP checksum", b.bad_checksums),
        ("RTL frames from another IP than the NIC's", b.wrong_source),
        ("RTL frames that were no UDP", b.non_udp_frames),
        ("RTL frames the socket refused", b.send_errors),
        ("bridge receive errors", b.receive_errors),
        ("RTL interface errors", r.rtl.interface_errors),
        (
            "RTL verdicts the engine disagreed with",
            r.rtl.hw_disagreements,
        ),
    ] {
        if v > 0 {
            d.push(format!("{what}: {v}"));
        }
    }
    if let Some(relay) = &r.relay {
        if relay.bad_icrc > 0 {
            d.push(format!(
                "relay: {} datagrams with a bad ICRC",
                relay.bad_icrc
            ));
        }
        if relay.send_errors > 0 {
            d.push(format!("relay: {} send errors", relay.send_errors));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `cfg`, or `None` (with a message) without Verilator.
    fn run_or_skip(cfg: &InteropConfig) -> Option<InteropReport> {
        match run_interop(cfg) {
            Ok(r) => Some(r),
            Err(e) if e.downcast_ref() == Some(&SimError::VerilatorMissing) => {
                eprintln!("SKIP: {}", SimError::VerilatorMissing);
                None
            }
            Err(e) => panic!("interop run failed: {e:#}"),
        }
    }

    fn check(what: &str, cfg: &InteropConfig, r: &InteropReport) {
        eprintln!(
            "{what}: {} messages, {} bytes verified, {} wrong, completions {} ok / {} error, \
             {} QP errors, RTL placed {} firmware {} RTL ACKs {} firmware frames {}, \
             soft retransmits {} RTL retransmits {}, bridge kernel drops {}, relay lost {}, \
             {:.2} s, {:.0} cycles/s, disagreements {:?}",
            r.messages,
            r.bytes_verified,
            r.bytes_wrong,
            r.completions_ok,
            r.completions_error,
            r.qp_errors,
            r.rtl.placed,
            r.rtl.firmware_packets,
            r.rtl.ack_frames,
            r.rtl.firmware_frames,
            r.soft.retransmits,
            r.rtl.retransmits,
            r.bridge.kernel_drops,
            r.relay.as_ref().map_or(0, |x| x.dropped_loss),
            r.wall_seconds,
            r.cycles_per_second,
            r.disagreements,
        );
        assert!(r.finished, "{what}: stopped early: {r:#?}");
        assert_eq!(r.messages as usize, cfg.messages);
        assert_eq!(r.bytes_wrong, 0, "{what}: {r:#?}");
        assert!(r.bytes_verified > 0);
        assert_eq!(r.completions_error, 0, "{what}: {r:#?}");
        assert_eq!(r.qp_errors, 0, "{what}: {r:#?}");
        assert!(r.rtl.placed > 0 && r.rtl.ack_frames > 0, "{r:#?}");
        // The two implementations agree on every packet: nothing either NIC
        // or the relay refused. (A bind failure would be a port taken by
        // another program on this host, not a disagreement.)
        let (verdicts, drops) = expected(cfg);
        assert!(
            r.soft.drops.keys().all(|k| drops.contains(&k.as_str())),
            "{what}: {r:#?}"
        );
        assert!(r.rtl.eth_drops.is_empty(), "{what}: {r:#?}");
        assert!(
            r.rtl
                .firmware_drops
                .keys()
                .all(|k| drops.contains(&k.as_str())),
            "{what}: {r:#?}"
        );
        assert!(
            r.rtl.verdicts.keys().all(|k| verdicts.contains(k)),
            "{what}: {r:#?}"
        );
        let b = &r.bridge;
        assert_eq!(
            (b.bad_checksums, b.wrong_source, b.non_udp_frames),
            (0, 0, 0),
            "{what}: {r:#?}"
        );
        assert_eq!(
            (r.rtl.interface_errors, r.rtl.hw_disagreements),
            (0, 0),
            "{what}: {r:#?}"
        );
        if let Some(relay) = &r.relay {
            assert_eq!(relay.bad_icrc, 0, "{what}: {r:#?}");
        }
    }

    #[test]
    fn hdl_interop_direct() {
        let cfg = InteropConfig {
            messages: 200,
            max_time: Duration::from_secs(15),
            ..InteropConfig::default()
        };
        if let Some(r) = run_or_skip(&cfg) {
            check("direct", &cfg, &r);
        }
    }

    #[test]
    fn hdl_interop_relay_1pct_loss_4_paths() {
        let cfg = InteropConfig {
            messages: 400,
            relay: true,
            paths: 4,
            loss: 0.01,
            // Its own address: the tests run in parallel, and two RTL NICs
            // with one seed pick the same source ports.
            rtl_ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)),
            max_time: Duration::from_secs(15),
            ..InteropConfig::default()
        };
        if let Some(r) = run_or_skip(&cfg) {
            check("relay 1% loss", &cfg, &r);
            let relay = r.relay.as_ref().expect("relay counters");
            // About 12 of some 1,200 datagrams.
            assert!(relay.dropped_loss > 0, "{r:#?}");
        }
    }

    #[test]
    fn hdl_interop_late_receives_rnr_nacks() {
        let cfg = InteropConfig {
            messages: 100,
            late_receives: true,
            rtl_ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 4)),
            max_time: Duration::from_secs(15),
            ..InteropConfig::default()
        };
        if let Some(r) = run_or_skip(&cfg) {
            check("late receives", &cfg, &r);
            // Both NICs NACKed and both retried: the RTL's RNR verdicts
            // became NACKs its firmware built, which the soft NIC obeyed.
            assert!(r.rtl.verdicts.contains_key("Rnr"), "{r:#?}");
            assert!(r.rtl.firmware_frames > 0, "{r:#?}");
            assert!(r.soft.drops.contains_key("receiver_not_ready"), "{r:#?}");
        }
    }
}
