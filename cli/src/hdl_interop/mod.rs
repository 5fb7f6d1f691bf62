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
//! receive is held until its NIC has refused a packet for want of one
//! (an RNR NACK) since its message was posted, so both NICs NACK and
//! retry whatever the speed of the Verilated model.
//! With `atomics` a quarter of the WRITEs are FETCH_ADDs on a counter of
//! the peer's, each checked to execute exactly once.
//! Every drop either NIC, the bridge or the relay counts, beyond the RNR
//! refusals asked for, is listed as a disagreement.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use check::{disagreements, nonzero, relay_report, rtl_report};
use metaroce_hdl::rx_place::RQ_STREAMS;
use metaroce_relay::{LinkConfig, PathConfig, Relay, RelayConfig, RelayHandle};
use metaroce_sim_tb::traffic::{Traffic, TrafficConfig, TrafficCounters, region_len};
use metaroce_sim_tb::udp_bridge::{BridgeConfig, BridgeCounters, UdpBridge};
use rtl::{PEER_MAC, RTL_MAC, connect_rtl, drain_model};
use serde::Serialize;
use soft::start_soft;

mod check;
mod cli;
mod rtl;
mod soft;
#[cfg(test)]
mod tests;

pub use cli::{InteropArgs, run};

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
/// ACKs and retransmissions settle before the counters are read: the soft
/// NIC's threads run on the wall clock...
const SETTLE: Duration = Duration::from_millis(20);
/// ... and the model on its own clock, however slowly a loaded host runs it
/// (about 20 ms at the 200k cycles/s of an idle host). A settle cut short
/// can only leave late events out of the counters (a false pass), never add
/// one.
const SETTLE_CYCLES: u64 = 4096;
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
    /// Post each receive a SEND or WRITE_IMM consumes after the message
    /// instead of before it, once the receiving NIC has refused a packet
    /// for want of a receive (`TrafficConfig::late_receives`): the
    /// receiver first answers with an RNR NACK (the RTL's firmware builds
    /// its own), the sender waits and tries again.
    pub late_receives: bool,
    /// FETCH_ADDs in the traffic (`TrafficConfig::atomics`).
    pub atomics: bool,
    /// Give up after this much wall time.
    pub max_time: Duration,
    /// Give up after this many cycles of the RTL NIC's clock: a bound a
    /// loaded host does not shorten, as it does `max_time`'s.
    pub max_cycles: u64,
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
            max_cycles: u64::MAX,
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
/// wrapping [`SimError::VerilatorMissing`](metaroce_sim_tb::SimError::VerilatorMissing) when there is no RTL model.
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
        late_receives: cfg.late_receives,
        atomics: cfg.atomics,
        seed: cfg.seed,
    });
    let start = Instant::now();
    let mut out = Vec::new();
    let mut inbox = Vec::new();
    let mut cycles = 0u64;
    // When and at which cycle the settling began.
    let mut settle_from: Option<(Instant, u64)> = None;
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
        t.step([&mut rtl, &mut soft])?;
        match settle_from {
            None if t.finished() || start.elapsed() > cfg.max_time || cycles > cfg.max_cycles => {
                finished = t.finished();
                wall_seconds = start.elapsed().as_secs_f64();
                settle_from = Some((Instant::now(), cycles));
            }
            Some((s, c)) if s.elapsed() > SETTLE && cycles - c > SETTLE_CYCLES => break,
            _ => {}
        }
    }
    drain_model(&mut rtl, &mut bridge, &mut out, start);
    // The soft NIC's answers to the last frames, and any stray completion.
    std::thread::sleep(Duration::from_millis(5));
    t.step([&mut rtl, &mut soft])?;
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
