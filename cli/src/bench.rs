//! `metaroce bench write|send|read`: an ib_write_bw-style benchmark of two soft NICs in
//! one process, directly over loopback or through the relay when `--loss` is given.
//!
//! Every message is verified at its destination when it completes: each slot holds a
//! fixed random pattern with the message number stamped every 1 KiB, so a misplaced,
//! stale or corrupt byte fails the check. The traffic engine here is shared with
//! `metaroce demo`.

use std::io::{BufRead, BufReader, Write as _};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use metaroce_driver::hw::DeviceBackend;
use metaroce_driver::hw::timing::DeviceTiming;
use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::*;
use metaroce_relay::{LinkConfig, PathConfig, PathCounters, Relay, RelayConfig, RelayHandle};
#[cfg(feature = "hdl")]
use metaroce_sim_tb::device_server::{DeviceServer, ServerConfig};
use serde::Serialize;

use crate::report;

/// The operation a benchmark moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// RDMA WRITE.
    Write,
    /// SEND into posted receives.
    Send,
    /// RDMA READ.
    Read,
}

/// Which backend runs the NICs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendKind {
    /// UDP sockets.
    Soft,
    /// The sender on a MetaRoCE hardware NIC (`--device`) through the host driver, the
    /// receiver a soft NIC.
    Device,
}

/// Options of `metaroce bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Operation to measure.
    op: Op,
    /// Message size in bytes.
    #[arg(long, default_value_t = 65536)]
    size: u32,
    /// Paths (entropy values) each connection sprays over; also the relay's path count.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    paths: u16,
    /// Put the relay in between, dropping each datagram with this probability (0 allowed).
    #[arg(long)]
    loss: Option<f64>,
    /// Seconds to run.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Messages kept in flight.
    #[arg(long, default_value_t = 32)]
    depth: usize,
    /// Largest payload per packet.
    #[arg(long, default_value_t = 4096)]
    mtu: u32,
    /// IP address of both NICs (127.0.0.1 or ::1).
    #[arg(long, default_value = "127.0.0.1")]
    ip: IpAddr,
    /// Spin instead of sleeping in the NICs' progress threads.
    #[arg(long)]
    busy_poll: bool,
    /// Backend.
    #[arg(long, value_enum, default_value_t = BackendKind::Soft)]
    backend: BackendKind,
    /// With `--backend device`: the device, `vfio:BDF` or a vfio-user socket path (none:
    /// the simulated board is served in this process).
    #[arg(long)]
    device: Option<String>,
    /// With `--backend device` on a board without board information (`vfio:`): its own
    /// IP address and UDP port.
    #[arg(long)]
    device_addr: Option<SocketAddr>,
    /// Two processes: wait for one `--connect` client and be its receiver (TCP control
    /// port `--port` on `--ip`).
    #[arg(long, conflicts_with_all = ["connect", "loss"])]
    server: bool,
    /// Two processes: be the sender towards the `--server` at this TCP address.
    #[arg(long, conflicts_with = "loss")]
    connect: Option<SocketAddr>,
    /// TCP control port of `--server`.
    #[arg(long, default_value_t = 18515)]
    port: u16,
    /// Authenticated mode (spec §11.2) on both QPs, with a fresh random connection key.
    /// One process only.
    #[arg(long, conflicts_with_all = ["server", "connect"])]
    auth: bool,
    /// Run twice in one invocation, without and then with authenticated mode, each on
    /// fresh NICs, and report both goodputs and their ratio.
    #[arg(long, conflicts_with_all = ["server", "connect", "auth"])]
    auth_compare: bool,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
}

// ---------------------------------------------------------------------------------------
// Two endpoints, optionally with a relay in between.

/// One NIC with everything a traffic run needs.
pub struct Side {
    /// Context.
    pub ctx: Context,
    /// Send and receive CQ.
    pub cq: CompletionQueue,
    /// The connected QP.
    pub qp: QueuePair,
    /// Source (or READ destination) buffers.
    pub mr: MemoryRegion,
    _pd: ProtectionDomain,
}

/// How to build a pair.
#[derive(Debug, Clone)]
pub struct PairSetup {
    /// Address of both NICs.
    pub ip: IpAddr,
    /// Paths per connection.
    pub paths: u16,
    /// MTU.
    pub mtu: u32,
    /// Busy-poll progress threads.
    pub busy_poll: bool,
    /// Bytes of registered memory per side.
    pub mem: usize,
    /// Relay paths between the NICs; `None`: direct.
    pub relay: Option<Vec<PathConfig>>,
    /// Path-map seed of the relay (`None`: port modulo paths).
    pub relay_hash_seed: Option<u64>,
    /// Run side A on this hardware NIC (device spec, its address when it has no board
    /// information) instead of a soft NIC.
    pub device: Option<(String, Option<SocketAddr>)>,
    /// Authenticated mode with this connection key on both QPs.
    pub auth: Option<AuthKey>,
}

/// Two connected NICs (A sends, B receives) and the relay between them, if any.
pub struct Pair {
    /// Sender.
    pub a: Side,
    /// Receiver.
    pub b: Side,
    /// The relay.
    pub relay: Option<RelayHandle>,
    /// Side A's driver when it runs on a hardware NIC (its timing counters).
    pub device: Option<Arc<DeviceBackend>>,
}

/// A context on a soft NIC.
fn soft_context(s: &PairSetup, seed: u64) -> anyhow::Result<Context> {
    let mut cfg = SoftConfig::new(SocketAddr::new(s.ip, 0));
    cfg.busy_poll = s.busy_poll;
    cfg.nic.mtu = s.mtu;
    cfg.nic.seed = seed;
    cfg.nic.qp.paths = s.paths;
    let backend = SoftBackend::start(cfg).context("starting a soft NIC")?;
    Ok(Context::open(backend))
}

/// A context on the hardware NIC `spec` (its own address from its board information,
/// else `local`), and its driver.
fn device_context(
    s: &PairSetup,
    spec: &str,
    local: Option<SocketAddr>,
    seed: u64,
) -> anyhow::Result<(Context, Arc<DeviceBackend>)> {
    let backend = DeviceBackend::open(spec, local, |cfg| {
        cfg.mtu = s.mtu;
        cfg.seed = seed;
    })
    .with_context(|| format!("starting the driver on {spec}"))?;
    Ok((Context::open(backend.clone()), backend))
}

fn make_side(s: &PairSetup, ctx: Context) -> anyhow::Result<Side> {
    let pd = ctx.alloc_pd();
    let cq = ctx.create_cq(4096, None);
    let init = QpInit::new(&cq, &cq);
    let init = match &s.auth {
        Some(key) => {
            let mut qp = ctx.default_qp_config();
            qp.auth = Some(key.clone());
            QpInit {
                config: Some(qp),
                ..init
            }
        }
        None => init,
    };
    let qp = pd.create_qp(&init)?;
    let mr = pd.alloc_mr(
        s.mem,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
    )?;
    Ok(Side {
        ctx,
        cq,
        qp,
        mr,
        _pd: pd,
    })
}

impl Pair {
    /// Starts both NICs (and the relay) and connects the QPs.
    pub fn new(s: &PairSetup) -> anyhow::Result<Pair> {
        let (a, device) = match &s.device {
            Some((spec, local)) => {
                let (ctx, dev) = device_context(s, spec, *local, 0xa11ce)?;
                (ctx, Some(dev))
            }
            None => (soft_context(s, 0xa11ce)?, None),
        };
        let a = make_side(s, a)?;
        let b = make_side(s, soft_context(s, 0xb0b)?)?;
        let (mut ea, mut eb) = (a.qp.endpoint(), b.qp.endpoint());
        let relay = match &s.relay {
            Some(paths) => {
                let any = SocketAddr::new(s.ip, 0);
                let mut cfg = RelayConfig::new(
                    vec![
                        LinkConfig {
                            listen: any,
                            forward_to: b.ctx.address(),
                        },
                        LinkConfig {
                            listen: any,
                            forward_to: a.ctx.address(),
                        },
                    ],
                    paths.clone(),
                );
                cfg.reseal_icrc = true;
                cfg.max_datagram = s.mtu as usize + 256;
                if let Some(seed) = s.relay_hash_seed {
                    cfg.path_map = metaroce_relay::PathMap::Hash { seed };
                }
                let relay = Relay::start(cfg).context("starting the relay")?;
                eb.addr = relay.listen_addrs()[0];
                ea.addr = relay.listen_addrs()[1];
                Some(relay)
            }
            None => None,
        };
        let opts = ConnectOptions::default();
        a.qp.connect(&eb, &opts)?;
        b.qp.connect(&ea, &opts)?;
        Ok(Pair {
            a,
            b,
            relay,
            device,
        })
    }

    /// Side A's driver's timing counters now, when it runs on a hardware NIC.
    pub fn device_timing(&self) -> anyhow::Result<Option<DeviceTiming>> {
        self.device
            .as_ref()
            .map(|d| d.timing().context("reading the device's timing counters"))
            .transpose()
    }
}

/// Clock of the 64-bit model taken for its simulated rate: a 10 Gbit/s MAC's 156.25 MHz
/// (6.4 ns per cycle).
const MODEL_CYCLE_NS: f64 = 6.4;

/// Where a device backend's wall time went during the measured traffic
/// (`docs/driver.md`, "Where the time goes"). Shares are of the run's wall time; the
/// driver's thread is busy, waiting or idle; the model's thread runs the whole time.
#[derive(Serialize, Debug, Clone)]
pub struct DeviceTimingRow {
    /// Wall time of the traffic, s.
    pub wall_s: f64,
    /// Packets through the device: data packets and PROBEs posted, verdict events and
    /// firmware datagrams taken.
    pub packets: u64,
    /// Wall time per packet, µs.
    pub wall_us_per_packet: f64,
    /// Goodput if the model's cycles took 6.4 ns each (a 156.25 MHz, 10 Gbit/s MAC
    /// clock at 64 bits), Gbit/s.
    pub sim_goodput_gbps: f64,
    /// Model clock cycles per second of wall time.
    pub model_cycles_per_s: f64,
    /// Model cycles per packet.
    pub model_cycles_per_packet: f64,
    /// Share of the model's cycles in which a port moved something.
    pub model_busy_share: f64,
    /// Model evaluation time per packet, µs.
    pub model_eval_us_per_packet: f64,
    /// Share of the wall time the model thread spent evaluating the model.
    pub model_eval_share: f64,
    /// Engine time per packet (on the host CPU), µs.
    pub engine_us_per_packet: f64,
    /// Share of the wall time in the engine.
    pub engine_share: f64,
    /// Time in device accesses per packet (vfio-user messages and bounce copies), µs.
    pub transport_us_per_packet: f64,
    /// Share of the wall time in device accesses.
    pub transport_share: f64,
    /// Of which in bounce copies (`sync_for_device`, `sync_for_cpu`).
    pub copy_share: f64,
    /// Share of the wall time the driver worked outside the engine and the device
    /// calls (tables, rings, bookkeeping).
    pub driver_other_share: f64,
    /// Share of the wall time the driver waited for TX table results.
    pub wait_share: f64,
    /// Share of the wall time the driver slept with nothing to do.
    pub idle_share: f64,
    /// Share of the wall time the device process's socket thread spent on BAR
    /// accesses.
    pub socket_share: f64,
    /// BAR0 reads per packet.
    pub bar_reads_per_packet: f64,
    /// BAR0 writes per packet.
    pub bar_writes_per_packet: f64,
    /// Bounce-copied bytes per packet.
    pub copy_bytes_per_packet: f64,
    /// TX table operations posted.
    pub table_ops: u64,
    /// The raw counters of the run (ns, counts).
    pub raw: serde_json::Value,
}

impl DeviceTimingRow {
    /// The row for `t` (a run's difference of two snapshots) that moved `bytes` of
    /// messages.
    pub fn new(t: &DeviceTiming, bytes: u64) -> Self {
        let d = &t.driver;
        let c = &t.device;
        let packets = d.descriptors + d.rx_events;
        let per = |x: u64| x as f64 / packets.max(1) as f64;
        let us_per = |ns: u64| per(ns) / 1e3;
        let wall = t.wall_ns.max(1) as f64;
        let share = |ns: u64| ns as f64 / wall;
        let device_ns = c.total_ns();
        DeviceTimingRow {
            wall_s: wall / 1e9,
            packets,
            wall_us_per_packet: us_per(t.wall_ns),
            sim_goodput_gbps: bytes as f64 * 8.0 / (t.model_cycles.max(1) as f64 * MODEL_CYCLE_NS),
            model_cycles_per_s: t.model_cycles as f64 / (wall / 1e9),
            model_cycles_per_packet: per(t.model_cycles),
            model_busy_share: t.model_busy_cycles as f64 / t.model_cycles.max(1) as f64,
            model_eval_us_per_packet: us_per(t.model_eval_ns),
            model_eval_share: share(t.model_eval_ns),
            engine_us_per_packet: us_per(d.engine_ns),
            engine_share: share(d.engine_ns),
            transport_us_per_packet: us_per(device_ns),
            transport_share: share(device_ns),
            copy_share: share(c.sync_ns),
            driver_other_share: share(d.busy_ns.saturating_sub(d.engine_ns + device_ns)),
            wait_share: share(d.wait_ns),
            idle_share: share(d.idle_ns),
            socket_share: share(t.socket_ns),
            bar_reads_per_packet: per(c.bar_reads),
            bar_writes_per_packet: per(c.bar_writes),
            copy_bytes_per_packet: per(c.sync_bytes),
            table_ops: d.table_ops,
            raw: serde_json::json!({
                "wall_ns": t.wall_ns,
                "engine_ns": d.engine_ns,
                "busy_ns": d.busy_ns,
                "wait_ns": d.wait_ns,
                "idle_ns": d.idle_ns,
                "rounds": d.rounds,
                "descriptors": d.descriptors,
                "rx_events": d.rx_events,
                "bar_reads": c.bar_reads,
                "bar_read_ns": c.bar_read_ns,
                "bar_writes": c.bar_writes,
                "bar_write_ns": c.bar_write_ns,
                "syncs": c.syncs,
                "sync_bytes": c.sync_bytes,
                "sync_ns": c.sync_ns,
                "other_device_ns": c.other_ns,
                "model_cycles": t.model_cycles,
                "model_busy_cycles": t.model_busy_cycles,
                "model_eval_ns": t.model_eval_ns,
                "socket_ns": t.socket_ns,
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Verified traffic.

/// Message contents: a fixed random pattern per slot, stamped with the message number
/// every 1 KiB.
pub struct Patterns {
    size: usize,
    base: Vec<u8>,
    /// The last message filled into each slot (base with that message's stamps).
    filled: Vec<u8>,
    scratch: Vec<u8>,
}

const STAMP_EVERY: usize = 1024;

impl Patterns {
    /// Patterns for `slots` slots of `size` bytes.
    pub fn new(size: usize, slots: usize) -> Self {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let base: Vec<u8> = (0..size * slots)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        Patterns {
            size,
            filled: base.clone(),
            base,
            scratch: vec![0; size],
        }
    }

    fn stamp(buf: &mut [u8], msg: u64) {
        let stamp = msg.to_le_bytes();
        for at in (0..buf.len()).step_by(STAMP_EVERY) {
            let n = (buf.len() - at).min(8);
            buf[at..at + n].copy_from_slice(&stamp[..n]);
        }
    }

    fn slot(&self, slot: usize) -> std::ops::Range<usize> {
        slot * self.size..(slot + 1) * self.size
    }

    /// Writes message `msg` of slot `slot` into `mr` at `off`, and remembers it as the
    /// slot's last message.
    pub fn fill(&mut self, mr: &MemoryRegion, off: usize, slot: usize, msg: u64) {
        let r = self.slot(slot);
        // Only the stamps differ from the slot's previous message.
        Self::stamp(&mut self.filled[r.clone()], msg);
        mr.write(off, &self.filled[r]);
    }

    /// True if `mr` holds the last message filled into `slot`, at `off`.
    pub fn check_filled(&self, mr: &MemoryRegion, off: usize, slot: usize) -> bool {
        mr.equals(off, &self.filled[self.slot(slot)])
    }

    /// True if `mr` holds message `msg` of slot `slot` at `off` (built from scratch).
    pub fn check(&mut self, mr: &MemoryRegion, off: usize, slot: usize, msg: u64) -> bool {
        let r = self.slot(slot);
        self.scratch.copy_from_slice(&self.base[r]);
        Self::stamp(&mut self.scratch, msg);
        mr.equals(off, &self.scratch)
    }
}

/// Outcome of a traffic run.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TrafficResult {
    /// Messages completed and verified.
    pub messages: u64,
    /// Payload bytes completed.
    pub bytes: u64,
    /// Seconds from first post to last completion.
    pub seconds: f64,
    /// Messages whose bytes did not match at the destination.
    pub mismatches: u64,
    /// Completions with an error status.
    pub errors: u64,
}

impl TrafficResult {
    /// Goodput in Gbit/s.
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.seconds.max(1e-9) / 1e9
    }
}

fn wait_any(cqs: &[&CompletionQueue], wcs: &mut Vec<Wc>) -> usize {
    let mut buf = [Wc::default(); 64];
    let mut n = 0;
    for cq in cqs {
        let k = cq.poll(&mut buf);
        wcs.extend_from_slice(&buf[..k]);
        n += k;
    }
    n
}

/// What a traffic run moves.
#[derive(Debug, Clone, Copy)]
pub struct Traffic {
    /// Operation.
    pub op: Op,
    /// Message size, bytes.
    pub size: usize,
    /// Messages in flight.
    pub depth: usize,
    /// How long to keep posting.
    pub duration: Duration,
}

/// The receiver's buffer as the sender addresses it.
#[derive(Debug, Clone, Copy)]
pub struct Remote {
    /// Address of slot 0.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
}

/// Moves `op` messages of `size` bytes from A to B for `duration`, `depth` in flight,
/// verifying each; `tick` is called with the bytes done so far about every 100 ms.
pub fn run_traffic(
    pair: &Pair,
    op: Op,
    size: usize,
    depth: usize,
    duration: Duration,
    tick: impl FnMut(u64),
) -> anyhow::Result<TrafficResult> {
    let remote = Remote {
        va: pair.b.mr.addr(),
        rkey: pair.b.mr.rkey(),
    };
    let t = Traffic {
        op,
        size,
        depth,
        duration,
    };
    run_traffic_to(&pair.a, remote, Some(&pair.b), &t, tick).map(|(r, _)| r)
}

/// [`run_traffic`] from `a` to `remote`; `b` is the receiving side when it lives in this
/// process (it then checks every message; otherwise the receiver does, see `--server`).
/// Returns the result and the number of messages posted.
pub fn run_traffic_to(
    a: &Side,
    remote: Remote,
    b: Option<&Side>,
    t: &Traffic,
    mut tick: impl FnMut(u64),
) -> anyhow::Result<(TrafficResult, u64)> {
    let (op, size, duration) = (t.op, t.size, t.duration);
    let depth = t.depth.max(1);
    // SEND: B keeps twice the sender's depth of receives posted, so a message never
    // waits for a receive (message m lands in B's slot m % recv_slots).
    let recv_slots = 2 * depth;
    let slots = recv_slots.max(depth);
    if a.mr.len() < slots * size || b.is_some_and(|b| b.mr.len() < slots * size) {
        bail!("registered memory too small for {slots} slots of {size} bytes");
    }
    let mut pat = Patterns::new(size, slots);
    if let Some(b) = b {
        prepare_receiver(b, &mut pat, t)?;
    } else if op == Op::Read {
        // The remote receiver filled slot s with message s.
        for s in 0..depth {
            Patterns::stamp(&mut pat.filled[s * size..(s + 1) * size], s as u64);
        }
    }
    let post = |pat: &mut Patterns, m: u64| -> anyhow::Result<()> {
        let s = (m % depth as u64) as usize;
        let off = s * size;
        let va = remote.va + off as u64;
        let wr = match op {
            Op::Write => {
                pat.fill(&a.mr, off, s, m);
                SendRequest::write(m, a.mr.sge(off, size as u32), va, remote.rkey)
            }
            Op::Send => {
                pat.fill(&a.mr, off, s, m);
                let mut wr = SendRequest::send(m, a.mr.sge(off, size as u32));
                wr.op = SendOp::SendImm { imm: m as u32 };
                wr
            }
            Op::Read => SendRequest::read(m, a.mr.sge(off, size as u32), va, remote.rkey),
        };
        a.qp.post_send(&wr)?;
        Ok(())
    };

    let mut res = TrafficResult::default();
    let start = Instant::now();
    let mut next = 0u64;
    for _ in 0..depth {
        post(&mut pat, next)?;
        next += 1;
    }
    let mut in_flight = depth as u64;
    let mut recv_next = 0u64;
    let mut wcs = Vec::with_capacity(256);
    let mut last_tick = start;
    // After `duration`, stop posting and drain; give up on stragglers after 10 s more.
    let drain_limit = duration + Duration::from_secs(10);
    let mut cqs = vec![&a.cq];
    cqs.extend(b.map(|b| &b.cq));
    while in_flight > 0 || (op == Op::Send && b.is_some() && recv_next < next) {
        let elapsed = start.elapsed();
        if elapsed > drain_limit {
            bail!("{in_flight} messages did not complete in time");
        }
        wcs.clear();
        if wait_any(&cqs, &mut wcs) == 0 {
            std::thread::sleep(Duration::from_micros(20));
            continue;
        }
        for wc in &wcs {
            if wc.status != WcStatus::Success {
                res.errors += 1;
                if wc.opcode != WcOpcode::Recv {
                    in_flight -= 1;
                }
                continue;
            }
            match (wc.opcode, b) {
                (WcOpcode::Recv, Some(b)) => {
                    let ok = receive(b, &mut pat, t, recv_next, wc)?;
                    recv_next += 1;
                    res.mismatches += u64::from(!ok);
                }
                (WcOpcode::Recv, None) => {}
                _ => {
                    let m = wc.wr_id;
                    let s = (m % depth as u64) as usize;
                    // The slot is refilled only after this check.
                    let ok = match (op, b) {
                        (Op::Write, Some(b)) => pat.check_filled(&b.mr, s * size, s),
                        (Op::Read, _) => pat.check_filled(&a.mr, s * size, s),
                        // Checked at the receiver.
                        (Op::Write, None) | (Op::Send, _) => true,
                    };
                    res.mismatches += u64::from(!ok);
                    res.messages += 1;
                    res.bytes += size as u64;
                    in_flight -= 1;
                    if start.elapsed() < duration {
                        post(&mut pat, next)?;
                        next += 1;
                        in_flight += 1;
                    }
                }
            }
        }
        if last_tick.elapsed() >= Duration::from_millis(100) {
            last_tick = Instant::now();
            tick(res.bytes);
        }
    }
    res.seconds = start.elapsed().as_secs_f64();
    tick(res.bytes);
    Ok((res, next))
}

/// Gets the receiving side ready: READ sources filled, SEND receives posted.
fn prepare_receiver(b: &Side, pat: &mut Patterns, t: &Traffic) -> anyhow::Result<()> {
    let (size, depth) = (t.size, t.depth.max(1));
    if t.op == Op::Read {
        // B holds fixed contents; A reads them back slot by slot.
        for s in 0..depth {
            pat.fill(&b.mr, s * size, s, s as u64);
        }
    }
    if t.op == Op::Send {
        for s in 0..2 * depth {
            b.qp.post_recv(RecvWr {
                wr_id: s as u64,
                sgl: b.mr.sge(s * size, size as u32).into(),
                stream: 0,
            })?;
        }
    }
    Ok(())
}

/// Checks receive number `m` (one stream: receives complete in order; the immediate
/// says which message arrived) and posts its buffer again; true if it verified.
fn receive(b: &Side, pat: &mut Patterns, t: &Traffic, m: u64, wc: &Wc) -> anyhow::Result<bool> {
    let (size, depth) = (t.size, t.depth.max(1) as u64);
    let rs = (m % (2 * depth)) as usize;
    let ok = wc.imm == Some(m as u32)
        && wc.byte_len as usize == size
        && pat.check(&b.mr, rs * size, (m % depth) as usize, m);
    b.qp.post_recv(RecvWr {
        wr_id: rs as u64,
        sgl: b.mr.sge(rs * size, size as u32).into(),
        stream: 0,
    })?;
    Ok(ok)
}

// ---------------------------------------------------------------------------------------
// CPU time.

/// User + system CPU seconds this process has used (all threads).
pub fn cpu_seconds() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return 0.0;
    }
    // SAFETY: getrusage succeeded, so it initialised `ru` (it was zeroed before anyway).
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

// ---------------------------------------------------------------------------------------
// The command.

/// Per-path counters of the sending QP, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct PathRow {
    /// Path index.
    pub path: usize,
    /// Current entropy value.
    pub entropy: u16,
    /// Packets sent.
    pub sent: u64,
    /// Retransmissions.
    pub retransmitted: u64,
    /// Packets declared lost.
    pub lost: u64,
    /// CE marks echoed.
    pub ce_marked: u64,
    /// Moves to a new entropy value (steering events).
    pub repaths: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Smoothed RTT, µs.
    pub srtt_us: f64,
}

/// Rows for `qp`'s paths.
pub fn path_rows(qp: &QueuePair) -> Vec<PathRow> {
    qp.path_stats()
        .iter()
        .enumerate()
        .map(|(i, p)| PathRow {
            path: i,
            entropy: p.entropy,
            sent: p.sent,
            retransmitted: p.retransmitted,
            lost: p.lost,
            ce_marked: p.ce_marked,
            repaths: p.repaths,
            timeouts: p.timeouts,
            srtt_us: p.srtt_ns as f64 / 1e3,
        })
        .collect()
}

/// Relay counters of one path, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct RelayRow {
    /// Relay path.
    pub path: usize,
    /// Datagrams forwarded.
    pub forwarded: u64,
    /// Dropped by random loss.
    pub dropped_loss: u64,
    /// Dropped by the queue.
    pub dropped_queue: u64,
    /// CE marks set.
    pub ce_marked: u64,
    /// Dropped for a bad ICRC.
    pub bad_icrc: u64,
}

/// Rows for every relay path.
pub fn relay_rows(relay: &RelayHandle) -> Vec<RelayRow> {
    relay
        .all_counters()
        .iter()
        .enumerate()
        .map(|(i, c): (usize, &PathCounters)| RelayRow {
            path: i,
            forwarded: c.forwarded,
            dropped_loss: c.dropped_loss,
            dropped_queue: c.dropped_queue,
            ce_marked: c.ce_marked,
            bad_icrc: c.bad_icrc,
        })
        .collect()
}

#[derive(Serialize)]
struct BenchReport {
    op: Op,
    backend: &'static str,
    size: u32,
    paths: u16,
    mtu: u32,
    loss: Option<f64>,
    relay: bool,
    /// Authenticated mode (spec §11.2).
    auth: bool,
    messages: u64,
    bytes: u64,
    seconds: f64,
    goodput_gbps: f64,
    msg_rate: f64,
    datagram_bytes: u64,
    mean_datagram_bytes: u64,
    cpu_seconds: f64,
    cpu_seconds_per_gb: f64,
    verified: bool,
    mismatches: u64,
    errors: u64,
    retransmits: u64,
    sack_losses: u64,
    timeout_losses: u64,
    repaths: u64,
    receiver_drops: u64,
    tx_datagrams: u64,
    tx_syscalls: u64,
    path_stats: Vec<PathRow>,
    relay_paths: Vec<RelayRow>,
    /// With `--backend device`: where the wall time went.
    #[serde(skip_serializing_if = "Option::is_none")]
    device_timing: Option<DeviceTimingRow>,
}

/// Runs `metaroce bench`.
pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let device = match (args.backend, &args.device) {
        (BackendKind::Soft, None) => None,
        (BackendKind::Soft, Some(_)) => bail!("--device needs --backend device"),
        (BackendKind::Device, spec) => {
            if args.server || args.connect.is_some() {
                bail!("--backend device runs both sides in this process");
            }
            Some((spec.clone(), args.device_addr))
        }
    };
    // No device given: serve the simulated board (the Verilated NIC) in this process.
    #[cfg(feature = "hdl")]
    let _server;
    let device = match device {
        #[cfg(not(feature = "hdl"))]
        Some((None, _)) => bail!(
            "--backend device without --device serves the simulated board, which needs \
             the `hdl` feature this metaroce was built without; give --device SOCKET"
        ),
        #[cfg(feature = "hdl")]
        Some((None, _)) => {
            let socket =
                std::env::temp_dir().join(format!("metaroce-bench-{}.sock", std::process::id()));
            let server =
                DeviceServer::start(ServerConfig::new(&socket, SocketAddr::new(args.ip, 0)))
                    .context("starting the simulated device")?;
            _server = server;
            Some((socket.display().to_string(), None))
        }
        Some((Some(spec), local)) => Some((spec, local)),
        None => None,
    };
    if let Some(p) = args.loss
        && !(0.0..1.0).contains(&p)
    {
        bail!("--loss must be in [0, 1)");
    }
    if args.size == 0 {
        bail!("--size must be positive");
    }
    let size = args.size as usize;
    let depth = args.depth.max(1);
    let setup = PairSetup {
        ip: args.ip,
        paths: args.paths,
        mtu: args.mtu,
        busy_poll: args.busy_poll,
        mem: size * depth * 2,
        relay: args.loss.map(|loss| {
            vec![
                PathConfig {
                    loss,
                    queue_bytes: 8 << 20,
                    ..PathConfig::default()
                };
                usize::from(args.paths)
            ]
        }),
        relay_hash_seed: None,
        device,
        auth: args.auth.then(random_key),
    };
    if args.auth_compare {
        return auth_compare(args, &setup);
    }
    if args.server {
        return serve(args, &setup);
    }
    if let Some(addr) = args.connect {
        return client(args, &setup, addr);
    }
    let pair = Pair::new(&setup)?;
    let before = pair.device_timing()?;
    let (res, cpu) = local_run(args, &pair)?;
    let timing = match (before, pair.device_timing()?) {
        (Some(a), Some(b)) => Some(DeviceTimingRow::new(&b.since(&a), res.bytes)),
        _ => None,
    };
    finish(
        args,
        &pair.a,
        Some(&pair.b),
        pair.relay.as_ref(),
        &res,
        cpu,
        timing,
    )
}

/// The traffic of a one-process run over `pair`.
fn local_run(args: &BenchArgs, pair: &Pair) -> anyhow::Result<(TrafficResult, f64)> {
    let t = Traffic {
        op: args.op,
        size: args.size as usize,
        depth: args.depth.max(1),
        duration: Duration::from_secs_f64(args.duration.max(0.1)),
    };
    let remote = Remote {
        va: pair.b.mr.addr(),
        rkey: pair.b.mr.rkey(),
    };
    measured(&t, |tick| {
        run_traffic_to(&pair.a, remote, Some(&pair.b), &t, tick).map(|(r, _)| r)
    })
}

/// A connection key from the operating system's randomness (through std's
/// randomly seeded hasher keys).
fn random_key() -> AuthKey {
    use std::hash::{BuildHasher, Hasher};
    let mut key = [0u8; 32];
    for (i, chunk) in key.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    AuthKey(key)
}

/// One side of `--auth-compare`.
#[derive(Serialize)]
struct AuthCompareRow {
    auth: bool,
    goodput_gbps: f64,
    cpu_seconds_per_gb: f64,
    messages: u64,
    verified: bool,
    retransmits: u64,
    receiver_drops: u64,
}

#[derive(Serialize)]
struct AuthCompareReport {
    op: Op,
    size: u32,
    paths: u16,
    mtu: u32,
    loss: Option<f64>,
    seconds_each: f64,
    runs: Vec<AuthCompareRow>,
    /// Authenticated goodput over unauthenticated goodput.
    ratio: f64,
}

/// `--auth-compare`: the same run without and with authenticated mode.
fn auth_compare(args: &BenchArgs, setup: &PairSetup) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    for auth in [false, true] {
        let s = PairSetup {
            auth: auth.then(random_key),
            ..setup.clone()
        };
        let pair = Pair::new(&s)?;
        let (res, cpu) = local_run(args, &pair)?;
        let gb = res.bytes as f64 / 1e9;
        runs.push(AuthCompareRow {
            auth,
            goodput_gbps: res.gbps(),
            cpu_seconds_per_gb: if gb > 0.0 { cpu / gb } else { 0.0 },
            messages: res.messages,
            verified: res.mismatches == 0 && res.errors == 0 && res.messages > 0,
            retransmits: pair.a.ctx.stats().retransmits,
            receiver_drops: pair.b.ctx.drops().total(),
        });
    }
    let ratio = runs[1].goodput_gbps / runs[0].goodput_gbps.max(1e-9);
    let verified = runs.iter().all(|r| r.verified);
    let report = AuthCompareReport {
        op: args.op,
        size: args.size,
        paths: args.paths,
        mtu: args.mtu,
        loss: args.loss,
        seconds_each: args.duration.max(0.1),
        runs,
        ratio,
    };
    report::emit(args.json, &report, || {
        let mut t = report::table(["auth", "goodput", "CPU s/GB", "messages", "verified"]);
        for r in &report.runs {
            t.add_row(vec![
                r.auth.to_string(),
                format!("{:.2} Gbit/s", r.goodput_gbps),
                format!("{:.2}", r.cpu_seconds_per_gb),
                r.messages.to_string(),
                r.verified.to_string(),
            ]);
        }
        t.add_row(vec![
            "ratio".to_string(),
            format!("{:.3}", report.ratio),
            String::new(),
            String::new(),
            String::new(),
        ]);
        vec![t]
    })?;
    if !verified {
        bail!("data verification failed");
    }
    Ok(())
}

/// Runs `f` with a progress bar; returns its result and the CPU seconds it took.
fn measured(
    t: &Traffic,
    f: impl FnOnce(&mut dyn FnMut(u64)) -> anyhow::Result<TrafficResult>,
) -> anyhow::Result<(TrafficResult, f64)> {
    let bar = report::progress((t.duration.as_millis() / 100) as u64, "bench");
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let res = f(&mut |_| bar.set_position((t0.elapsed().as_millis() / 100) as u64))?;
    let cpu = cpu_seconds() - cpu0;
    bar.finish_and_clear();
    Ok((res, cpu))
}

/// Builds, prints and checks the report of a run from `a` (to `b` when it is local).
fn finish(
    args: &BenchArgs,
    a: &Side,
    b: Option<&Side>,
    relay: Option<&RelayHandle>,
    res: &TrafficResult,
    cpu: f64,
    device_timing: Option<DeviceTimingRow>,
) -> anyhow::Result<()> {
    let stats = a.ctx.stats();
    let dp = a.ctx.datapath_stats();
    // A full data packet: base header, message header, payload, ICRC.
    let datagram_bytes = (metaroce_proto::BASE_LEN
        + std::mem::size_of::<metaroce_proto::MsgHeader>()
        + args.mtu.min(args.size) as usize
        + metaroce_proto::ICRC_LEN) as u64;
    // The data side's mean datagram (its data packets plus a few ACKs).
    let data_side = match (args.op, b) {
        (Op::Read, Some(b)) => b,
        _ => a,
    };
    let dps = data_side.ctx.datapath_stats();
    let mean_datagram_bytes = dps.tx_bytes.checked_div(dps.tx_datagrams).unwrap_or(0);
    let mut all_stats = vec![stats];
    all_stats.extend(b.map(|b| b.ctx.stats()));
    let gb = res.bytes as f64 / 1e9;
    let report = BenchReport {
        op: args.op,
        backend: a.ctx.backend_name(),
        size: args.size,
        paths: args.paths,
        mtu: args.mtu,
        loss: args.loss,
        relay: relay.is_some(),
        auth: args.auth,
        messages: res.messages,
        bytes: res.bytes,
        seconds: res.seconds,
        goodput_gbps: res.gbps(),
        msg_rate: res.messages as f64 / res.seconds.max(1e-9),
        datagram_bytes,
        mean_datagram_bytes,
        cpu_seconds: cpu,
        cpu_seconds_per_gb: if gb > 0.0 { cpu / gb } else { 0.0 },
        verified: res.mismatches == 0 && res.errors == 0 && res.messages > 0,
        mismatches: res.mismatches,
        errors: res.errors,
        retransmits: all_stats.iter().map(|s| s.retransmits).sum(),
        sack_losses: all_stats.iter().map(|s| s.sack_losses).sum(),
        timeout_losses: all_stats.iter().map(|s| s.timeout_losses).sum(),
        repaths: all_stats.iter().map(|s| s.repaths).sum(),
        receiver_drops: b.map_or(0, |b| b.ctx.drops().total()),
        tx_datagrams: dp.tx_datagrams,
        tx_syscalls: dp.tx_syscalls,
        path_stats: path_rows(match (args.op, b) {
            (Op::Read, Some(b)) => &b.qp,
            _ => &a.qp,
        }),
        relay_paths: relay.map(relay_rows).unwrap_or_default(),
        device_timing,
    };
    report::emit(args.json, &report, || {
        let mut t = report::table(["metric", "value"]);
        let rows: Vec<(&str, String)> = vec![
            ("operation", format!("{:?} {} B", report.op, report.size)),
            (
                "fabric",
                match report.loss {
                    Some(p) => format!("relay, {} paths, loss {p}", report.paths),
                    None => format!("direct loopback, {} paths", report.paths),
                },
            ),
            ("authenticated", report.auth.to_string()),
            ("goodput", format!("{:.2} Gbit/s", report.goodput_gbps)),
            ("message rate", format!("{:.0} msg/s", report.msg_rate)),
            (
                "datagram size",
                format!(
                    "{} B data packets (mean {} B)",
                    report.datagram_bytes, report.mean_datagram_bytes
                ),
            ),
            (
                "CPU time",
                format!(
                    "{:.2} s ({:.2} s/GB)",
                    report.cpu_seconds, report.cpu_seconds_per_gb
                ),
            ),
            (
                "verified",
                format!(
                    "{} ({} messages, {} mismatches, {} errors)",
                    report.verified, report.messages, report.mismatches, report.errors
                ),
            ),
            (
                "retransmits",
                format!(
                    "{} (losses found by SACK {}, by timeout {})",
                    report.retransmits, report.sack_losses, report.timeout_losses
                ),
            ),
            ("repaths", report.repaths.to_string()),
        ];
        let timing_rows: Vec<(&str, String)> = report
            .device_timing
            .iter()
            .flat_map(|d| {
                [
                    (
                        "device: per packet",
                        format!(
                            "{:.1} µs wall over {} packets ({:.0} model cycles, {:.2} BAR reads, \
                             {:.2} BAR writes)",
                            d.wall_us_per_packet,
                            d.packets,
                            d.model_cycles_per_packet,
                            d.bar_reads_per_packet,
                            d.bar_writes_per_packet
                        ),
                    ),
                    (
                        "device: simulated goodput",
                        format!(
                            "{:.2} Gbit/s at 156.25 MHz ({:.2} M cycles/s, {:.0} % busy)",
                            d.sim_goodput_gbps,
                            d.model_cycles_per_s / 1e6,
                            100.0 * d.model_busy_share
                        ),
                    ),
                    (
                        "device: wall time shares",
                        format!(
                            "model eval {:.0} %, engine {:.0} %, transport {:.0} % (copies {:.0} %), \
                             driver other {:.0} %, waiting {:.0} %, idle {:.0} %",
                            100.0 * d.model_eval_share,
                            100.0 * d.engine_share,
                            100.0 * d.transport_share,
                            100.0 * d.copy_share,
                            100.0 * d.driver_other_share,
                            100.0 * d.wait_share,
                            100.0 * d.idle_share
                        ),
                    ),
                ]
            })
            .collect();
        for (k, v) in rows.into_iter().chain(timing_rows) {
            t.add_row(vec![k.to_string(), v]);
        }
        let mut p = report::table([
            "path", "entropy", "sent", "retx", "lost", "CE", "repaths", "srtt µs",
        ]);
        for r in &report.path_stats {
            p.add_row(vec![
                r.path.to_string(),
                r.entropy.to_string(),
                r.sent.to_string(),
                r.retransmitted.to_string(),
                r.lost.to_string(),
                r.ce_marked.to_string(),
                r.repaths.to_string(),
                format!("{:.1}", r.srtt_us),
            ]);
        }
        vec![t, p]
    })?;
    if !report.verified {
        bail!("data verification failed");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Two processes: a line-based TCP exchange, then the same traffic.
//
//   client: hello <op> <size> <depth> <qpn> <addr> <psn>
//   server: ok <qpn> <addr> <psn> <va> <rkey>        (its QP is connected by then)
//   client: done <messages posted>
//   server: result <messages checked> <mismatches>

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Write => "write",
        Op::Send => "send",
        Op::Read => "read",
    }
}

fn read_words(r: &mut impl BufRead, want: &str) -> anyhow::Result<Vec<String>> {
    let mut line = String::new();
    r.read_line(&mut line).context("reading from the peer")?;
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if words.first().map(String::as_str) != Some(want) {
        bail!("expected `{want} ...` from the peer, got {line:?}");
    }
    Ok(words)
}

fn word<T: std::str::FromStr>(w: &[String], i: usize) -> anyhow::Result<T>
where
    T::Err: std::fmt::Display,
{
    let s = w.get(i).context("short line from the peer")?;
    s.parse()
        .map_err(|e| anyhow::anyhow!("bad field {s:?}: {e}"))
}

fn client(args: &BenchArgs, setup: &PairSetup, server: SocketAddr) -> anyhow::Result<()> {
    let a = make_side(setup, soft_context(setup, 0xa11ce)?)?;
    let tcp = TcpStream::connect(server).with_context(|| format!("connecting to {server}"))?;
    tcp.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut w = tcp.try_clone()?;
    let mut r = BufReader::new(tcp);
    let me = a.qp.endpoint();
    let t = Traffic {
        op: args.op,
        size: args.size as usize,
        depth: args.depth.max(1),
        duration: Duration::from_secs_f64(args.duration.max(0.1)),
    };
    let op = op_name(t.op);
    writeln!(
        w,
        "hello {op} {} {} {} {} {}",
        t.size, t.depth, me.qpn, me.addr, me.psn
    )?;
    let ok = read_words(&mut r, "ok")?;
    let peer = QpEndpoint {
        qpn: word(&ok, 1)?,
        addr: word(&ok, 2)?,
        psn: word(&ok, 3)?,
    };
    let remote = Remote {
        va: word(&ok, 4)?,
        rkey: word(&ok, 5)?,
    };
    a.qp.connect(&peer, &ConnectOptions::default())?;
    let mut posted = 0;
    let (mut res, cpu) = measured(&t, |tick| {
        let (res, n) = run_traffic_to(&a, remote, None, &t, tick)?;
        posted = n;
        Ok(res)
    })?;
    writeln!(w, "done {posted}")?;
    let result = read_words(&mut r, "result")?;
    let checked: u64 = word(&result, 1)?;
    res.mismatches += word::<u64>(&result, 2)?;
    if t.op != Op::Read && checked == 0 {
        bail!("the server checked nothing");
    }
    finish(args, &a, None, None, &res, cpu, None)
}

#[derive(Serialize)]
struct ServerReport {
    op: String,
    size: usize,
    messages_posted: u64,
    checked: u64,
    mismatches: u64,
    errors: u64,
    verified: bool,
}

fn serve(args: &BenchArgs, setup: &PairSetup) -> anyhow::Result<()> {
    let listener = TcpListener::bind(SocketAddr::new(args.ip, args.port))?;
    eprintln!(
        "metaroce bench server: waiting on {}",
        listener.local_addr()?
    );
    let (tcp, _) = listener.accept()?;
    let mut w = tcp.try_clone()?;
    let mut r = BufReader::new(tcp);
    let hello = read_words(&mut r, "hello")?;
    let op = match word::<String>(&hello, 1)?.as_str() {
        "write" => Op::Write,
        "send" => Op::Send,
        "read" => Op::Read,
        other => bail!("unknown operation {other:?}"),
    };
    let t = Traffic {
        op,
        size: word(&hello, 2)?,
        depth: word::<usize>(&hello, 3)?.max(1),
        duration: Duration::ZERO,
    };
    if t.size == 0 || t.size > 1 << 30 || t.depth > 4096 {
        bail!("unreasonable size or depth from the client");
    }
    let peer = QpEndpoint {
        qpn: word(&hello, 4)?,
        addr: word(&hello, 5)?,
        psn: word(&hello, 6)?,
    };
    let mut setup = setup.clone();
    setup.mem = t.size * t.depth * 2;
    let b = make_side(&setup, soft_context(&setup, 0xb0b)?)?;
    b.qp.connect(&peer, &ConnectOptions::default())?;
    let mut pat = Patterns::new(t.size, 2 * t.depth);
    prepare_receiver(&b, &mut pat, &t)?;
    let me = b.qp.endpoint();
    writeln!(
        w,
        "ok {} {} {} {} {}",
        me.qpn,
        me.addr,
        me.psn,
        b.mr.addr(),
        b.mr.rkey()
    )?;
    // The `done` line arrives while receives are being checked.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_words(&mut r, "done").and_then(|d| word::<u64>(&d, 1)));
    });
    let (mut checked, mut mismatches, mut errors, mut next) = (0u64, 0u64, 0u64, 0u64);
    let mut posted: Option<(u64, Instant)> = None;
    let mut wcs = [Wc::default(); 64];
    loop {
        let n = b.cq.poll(&mut wcs);
        for wc in &wcs[..n] {
            if wc.status != WcStatus::Success {
                errors += 1;
            } else if wc.opcode == WcOpcode::Recv {
                mismatches += u64::from(!receive(&b, &mut pat, &t, next, wc)?);
                checked += 1;
                next += 1;
            }
        }
        if posted.is_none() {
            match rx.try_recv() {
                Ok(done) => posted = Some((done?, Instant::now())),
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => bail!("client vanished"),
            }
        }
        if let Some((total, since)) = posted
            && (op != Op::Send || next >= total || since.elapsed() > Duration::from_secs(10))
        {
            break;
        }
        if n == 0 {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    let total = posted.map_or(0, |(t, _)| t);
    if op == Op::Write {
        // Each slot holds the last message written into it.
        let depth = t.depth as u64;
        for s in 0..depth.min(total) {
            let m = s + depth * ((total - 1 - s) / depth);
            let s = s as usize;
            mismatches += u64::from(!pat.check(&b.mr, s * t.size, s, m));
            checked += 1;
        }
    }
    if op == Op::Send && next < total {
        mismatches += total - next;
    }
    writeln!(w, "result {checked} {mismatches}")?;
    let rep = ServerReport {
        op: op_name(op).to_string(),
        size: t.size,
        messages_posted: total,
        checked,
        mismatches,
        errors,
        verified: mismatches == 0 && errors == 0,
    };
    report::emit(args.json, &rep, || {
        let mut tb = report::table(["server", "value"]);
        tb.add_row(vec![
            "operation".to_string(),
            format!("{} {} B", rep.op, rep.size),
        ]);
        tb.add_row(vec![
            "messages posted".to_string(),
            rep.messages_posted.to_string(),
        ]);
        tb.add_row(vec![
            "checked here".to_string(),
            format!(
                "{} ({} mismatches, {} errors)",
                rep.checked, rep.mismatches, rep.errors
            ),
        ]);
        vec![tb]
    })?;
    if !rep.verified {
        bail!("data verification failed");
    }
    Ok(())
}
