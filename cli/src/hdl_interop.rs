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
//! WRITE_IMM, SEND and READ, every byte and every completion verified
//! (`metaroce_sim_tb::traffic`, the traffic of `metaroce hdl run` too: at
//! most 8 messages in flight from each side, at most 2 READs, SEND and
//! WRITE_IMM on the RTL's ring streams 0–3). With `late_receives` each
//! receive is posted after its message, so both NICs NACK (RNR) and retry.
//! With `atomics` a quarter of the WRITEs are FETCH_ADDs on a counter of
//! the peer's, each checked to execute exactly once.
//! Every drop either NIC, the bridge or the relay counts, beyond the RNR
//! refusals asked for, is listed as a disagreement.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use clap::Args;
use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::{
    Access, AsyncEvent, CompletionQueue, ConnectOptions, Context, MemoryRegion, Payload,
    ProtectionDomain, QpConfig, QpEndpoint, QpInit, QpTransition, QueuePair, RecvWr, RemoteEnd,
    SendRequest, Wc,
};
use metaroce_firmware::{Completion, Event, SendWr};
use metaroce_hdl::rx_eth::EthDrop;
use metaroce_hdl::rx_place::{RQ_STREAMS, Verdict};
use metaroce_relay::{LinkConfig, PathConfig, Relay, RelayConfig, RelayHandle};
use metaroce_sim_tb::SimError;
use metaroce_sim_tb::hw_nic::{HwNic, HwNicConfig};
use metaroce_sim_tb::traffic::{
    HwEnd, NicError, SLOTS, Traffic, TrafficConfig, TrafficCounters, TrafficNic, region_len,
};
use metaroce_sim_tb::udp_bridge::{BridgeConfig, BridgeCounters, UdpBridge};
use serde::Serialize;

use crate::report;

/// The RTL NIC's host memory starts here.
const MEM_BASE: u64 = 0x1_0000_0000;
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
    /// FETCH_ADDs in the traffic (`TrafficConfig::atomics`).
    pub atomics: bool,
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
            atomics: false,
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
    /// The traffic: messages, bytes and completions checked.
    #[serde(flatten)]
    pub traffic: TrafficCounters,
    /// Every message completed before the deadline.
    pub finished: bool,
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
    /// A quarter of the WRITEs are FETCH_ADDs on a counter of the peer's,
    /// each checked to execute exactly once.
    #[arg(long)]
    atomics: bool,
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
        atomics: a.atomics,
        max_time: Duration::from_secs(a.max_seconds),
        seed: a.seed,
    };
    let run = match run_interop(&cfg) {
        Ok(r) => r,
        Err(e) if e.downcast_ref() == Some(&SimError::VerilatorMissing) => {
            bail!(super::hdl::NO_MODELS)
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
    if r.traffic.bytes_wrong > 0 || r.traffic.completions_error > 0 || r.traffic.qp_errors > 0 {
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
    let mut rows = crate::hdl_run::traffic_rows(&p.traffic, p.finished);
    rows.extend([
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
    ]);
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

/// The soft NIC's Verbs objects (the context last: it closes the device).
struct Soft {
    qp: QueuePair,
    mr: MemoryRegion,
    send_cq: CompletionQueue,
    recv_cq: CompletionQueue,
    _pd: ProtectionDomain,
    ctx: Context,
}

/// The soft NIC as the traffic's NIC: its one QP is connection 0.
impl TrafficNic for Soft {
    fn addr(&self) -> u64 {
        self.mr.addr()
    }

    fn keys(&self) -> (u32, u32) {
        (self.mr.lkey(), self.mr.rkey())
    }

    fn write(&mut self, off: u64, bytes: &[u8]) {
        // Out of the region it writes nothing, and the check finds the
        // bytes wrong.
        let _ = self.mr.write(off as usize, bytes);
    }

    fn read(&self, off: u64, out: &mut [u8]) -> bool {
        self.mr.read(off as usize, out)
    }

    fn post_send(&mut self, _conn: usize, wr: SendWr) -> Result<(), NicError> {
        self.qp.post_send(&SendRequest {
            wr_id: wr.wr_id,
            op: wr.op,
            payload: Payload::Sges(wr.sgl.as_slice()),
            signaled: wr.signaled,
            solicited: wr.solicited,
            stream: wr.stream,
        })?;
        Ok(())
    }

    fn post_recv(&mut self, _conn: usize, wr: RecvWr) -> Result<(), NicError> {
        self.qp.post_recv(wr)?;
        Ok(())
    }

    fn poll(&mut self, out: &mut Vec<Event>) {
        let mut wcs = [Wc::default(); 32];
        for (cq, is_recv) in [(&self.send_cq, false), (&self.recv_cq, true)] {
            loop {
                let n = cq.poll(&mut wcs);
                out.extend(wcs[..n].iter().map(|w| {
                    Event::Completion(Completion {
                        qpn: w.qp_num,
                        wr_id: w.wr_id,
                        status: w.status,
                        opcode: w.opcode,
                        byte_len: w.byte_len,
                        imm: w.imm,
                        stream: w.stream,
                        is_recv,
                        solicited: w.solicited,
                    })
                }));
                if n < wcs.len() {
                    break;
                }
            }
        }
        while let Some(e) = self.ctx.poll_async_event() {
            // This side has no shared receive queues: QP errors are all it reports.
            if let AsyncEvent::QpFatal { qp_num, status } = e {
                out.push(Event::QpError {
                    qpn: qp_num,
                    status,
                });
            }
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
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
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

/// The RTL NIC's MAC address on the bridge.
const RTL_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
/// The MAC address the bridge answers for (the soft NIC's side).
const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

/// Runs the RTL NIC against the soft NIC (see the module docs). An error
/// wrapping [`SimError::VerilatorMissing`] when there is no RTL model.
pub fn run_interop(cfg: &InteropConfig) -> anyhow::Result<InteropReport> {
    let mem_len = region_len(cfg.max_size);
    let mut soft = start_soft(cfg, mem_len as usize)?;
    let mut bridge = UdpBridge::bind(BridgeConfig {
        mac: RTL_MAC,
        peer_mac: PEER_MAC,
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
    let mut rtl = connect_rtl(cfg, &mut soft, &bridge, (to_soft, to_rtl), mem_len as usize)?;
    let mut t = Traffic::new(TrafficConfig {
        messages: cfg.messages,
        max_size: cfg.max_size,
        fixed_size: false,
        conns: 1,
        streams: STREAMS,
        late_receive_ns: if cfg.late_receives {
            LATE_RECEIVE.as_nanos() as u64
        } else {
            0
        },
        atomics: cfg.atomics,
        seed: cfg.seed,
    });
    let start = Instant::now();
    let mut out = Vec::new();
    let mut inbox = Vec::new();
    let mut cycles = 0u64;
    let mut settle_from: Option<Instant> = None;
    let (mut finished, mut wall_seconds) = (false, 0.0);
    loop {
        let now = start.elapsed().as_nanos() as u64;
        rtl.nic.step_at(now, &mut out);
        for f in out.drain(..) {
            bridge.send_frame(&f);
        }
        cycles += 1;
        if cycles % POLL_CYCLES != 0 {
            continue;
        }
        bridge.poll_frames(&mut inbox);
        for f in inbox.drain(..) {
            rtl.nic.receive_frame(f);
        }
        // Completions are still taken while settling: a late or repeated
        // one counts as an error.
        t.step([&mut rtl, &mut soft], now)?;
        match settle_from {
            None if t.finished() || start.elapsed() > cfg.max_time => {
                finished = t.finished();
                wall_seconds = start.elapsed().as_secs_f64();
                settle_from = Some(Instant::now());
            }
            Some(s) if s.elapsed() > SETTLE => break,
            _ => {}
        }
    }
    drain_model(&mut rtl, &mut bridge, &mut out, start);
    // The soft NIC's answers to the last frames, and any stray completion.
    std::thread::sleep(Duration::from_millis(5));
    t.step([&mut rtl, &mut soft], start.elapsed().as_nanos() as u64)?;
    let traffic = *t.counters();
    let stats = soft.ctx.stats();
    let mut r = InteropReport {
        traffic,
        finished,
        goodput_mbps: traffic.payload_bytes as f64 * 8.0 / wall_seconds.max(1e-9) / 1e6,
        rtl: rtl_report(&mut rtl.nic),
        soft: SoftReport {
            data_sent: stats.data_sent,
            retransmits: stats.retransmits,
            duplicates: stats.duplicates,
            drops: nonzero(soft.ctx.drops().iter()),
        },
        bridge: bridge.counters(),
        relay: relay.as_ref().map(relay_report),
        cycles,
        cycles_per_second: cycles as f64 / start.elapsed().as_secs_f64().max(1e-9),
        wall_seconds,
        disagreements: Vec::new(),
    };
    r.disagreements = disagreements(cfg, &r);
    Ok(r)
}

/// The RTL NIC (its MAC port on `bridge`), one QP, connected to the soft NIC's;
/// `to_soft`/`to_rtl` are where each NIC sends to reach the other.
fn connect_rtl(
    cfg: &InteropConfig,
    soft: &mut Soft,
    bridge: &UdpBridge,
    (to_soft, to_rtl): (SocketAddr, SocketAddr),
    mem_len: usize,
) -> anyhow::Result<HwEnd> {
    let rtl = HwNic::new(HwNicConfig {
        mac: RTL_MAC,
        peer_mac: PEER_MAC,
        ip: cfg.rtl_ip,
        peer_ip: to_soft.ip(),
        udp_port: bridge.local_addr().port(),
        peer_udp_port: to_soft.port(),
        mem_base: MEM_BASE,
        mem_len,
        clock_ps: 1_000,
        line_rate_mbps: RTL_RATE_MBPS,
        seed: cfg.seed ^ 0x4D7,
    })?;
    let qp = QpConfig {
        paths: QP_PATHS,
        streams: STREAMS,
        ..QpConfig::default()
    };
    let mut rtl = HwEnd::new(rtl, &qp, 1)
        .map_err(|e| anyhow!(e))
        .context("registering the RTL NIC's memory and creating its QP")?;
    let rtl_qpn = rtl.qpns[0];
    let soft_end = soft.qp.endpoint();
    let opts = ConnectOptions::default();
    rtl.nic.modify_qp(rtl_qpn, QpTransition::Init)?;
    rtl.nic.modify_qp(
        rtl_qpn,
        QpTransition::Rtr(RemoteEnd {
            qpn: soft_end.qpn,
            ip: to_soft.ip(),
            udp_port: to_soft.port(),
            initial_psn: soft_end.psn,
        }),
    )?;
    rtl.nic.modify_qp(
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
    Ok(rtl)
}

/// Drains the model's own queues (no new frames come in) so the counter
/// reads, which clock the model, find it idle.
fn drain_model(rtl: &mut HwEnd, bridge: &mut UdpBridge, out: &mut Vec<Vec<u8>>, start: Instant) {
    for _ in 0..100_000 {
        if rtl.nic.idle() {
            break;
        }
        let now = start.elapsed().as_nanos() as u64;
        rtl.nic.step_at(now, out);
        for f in out.drain(..) {
            bridge.send_frame(&f);
        }
    }
}

/// The relay's path counters, summed over its paths.
fn relay_report(h: &RelayHandle) -> RelayReport {
    let c = h.all_counters();
    let sum = |f: fn(&metaroce_relay::PathCounters) -> u64| c.iter().map(f).sum();
    RelayReport {
        forwarded: sum(|p| p.forwarded),
        dropped_loss: sum(|p| p.dropped_loss),
        dropped_queue: sum(|p| p.dropped_queue),
        bad_icrc: sum(|p| p.bad_icrc),
        send_errors: sum(|p| p.send_errors),
    }
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
            "FETCH_ADDs not executed exactly once",
            r.traffic.atomic_errors,
        ),
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
            r.traffic.messages,
            r.traffic.bytes_verified,
            r.traffic.bytes_wrong,
            r.traffic.completions_ok,
            r.traffic.completions_error,
            r.traffic.qp_errors,
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
        assert_eq!(r.traffic.messages as usize, cfg.messages);
        assert_eq!(r.traffic.bytes_wrong, 0, "{what}: {r:#?}");
        assert!(r.traffic.bytes_verified > 0);
        assert_eq!(r.traffic.completions_error, 0, "{what}: {r:#?}");
        assert_eq!(r.traffic.qp_errors, 0, "{what}: {r:#?}");
        assert_eq!(r.traffic.atomic_errors, 0, "{what}: {r:#?}");
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
    fn hdl_interop_atomics_through_relay_at_1pct_loss() {
        let cfg = InteropConfig {
            messages: 200,
            relay: true,
            loss: 0.01,
            atomics: true,
            rtl_ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 5)),
            max_time: Duration::from_secs(15),
            ..InteropConfig::default()
        };
        if let Some(r) = run_or_skip(&cfg) {
            check("atomics, relay 1% loss", &cfg, &r);
            // The soft NIC and the RTL's firmware execute each other's
            // FETCH_ADDs; the RTL checks and hands up both directions'.
            assert!(r.traffic.fetch_adds > 0, "{r:#?}");
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
