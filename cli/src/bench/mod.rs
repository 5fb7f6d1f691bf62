//! `metaroce bench write|send|read`: an ib_write_bw-style benchmark of two soft NICs in
//! one process, directly over loopback or through the relay when `--loss` is given.
//!
//! Every message is verified at its destination when it completes (the generator and
//! verifier are in [`crate::traffic`], shared with `metaroce demo`). This module holds
//! the command's options, its run and its report; the two-process run is in
//! [`remote`], `--auth-compare` in [`auth_compare`], and the device backend's timing
//! row in [`device_timing`].

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

#[cfg(feature = "hdl")]
use anyhow::Context as _;
use anyhow::bail;
use clap::{Args, ValueEnum};
use metaroce_driver::verbs::*;
use metaroce_relay::{PathConfig, RelayHandle};
#[cfg(feature = "hdl")]
use metaroce_sim_tb::device_server::{DeviceServer, ServerConfig};
use serde::Serialize;

use crate::cpu::cpu_seconds;
use crate::report;
use crate::traffic::{
    LossRow, NicPair, NicPairSetup, Op, PathRow, RelayRow, Remote, Side, TrafficResult,
    TrafficSpec, path_rows, relay_rows, run_traffic_to,
};

mod auth_compare;
mod device_timing;
mod remote;

use device_timing::DeviceTimingRow;

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
    /// Two processes: this process's soft NIC receives on this UDP port (0: the kernel
    /// picks one). Give it when a `metaroce relay` sits between the two processes: the
    /// relay's `--link` forwards to it.
    #[arg(long, default_value_t = 0)]
    nic_port: u16,
    /// Two processes: send to this address (a `metaroce relay` link's listen address)
    /// instead of straight to the peer's NIC.
    #[arg(long)]
    via: Option<SocketAddr>,
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

/// The report of a one-process or `--connect` run.
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
    #[serde(flatten)]
    losses: LossRow,
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
    let setup = NicPairSetup {
        ip: args.ip,
        nic_port: args.nic_port,
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
        return auth_compare::auth_compare(args, &setup);
    }
    if (args.nic_port != 0 || args.via.is_some()) && !args.server && args.connect.is_none() {
        bail!("--nic-port and --via are for two-process runs (--server or --connect)");
    }
    if args.server {
        return remote::serve(args, &setup);
    }
    if let Some(addr) = args.connect {
        return remote::client(args, &setup, addr);
    }
    let pair = NicPair::new(&setup)?;
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
fn local_run(args: &BenchArgs, pair: &NicPair) -> anyhow::Result<(TrafficResult, f64)> {
    let t = TrafficSpec {
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

/// Runs `f` with a progress bar; returns its result and the CPU seconds it took.
fn measured(
    t: &TrafficSpec,
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
        losses: LossRow::sum(&all_stats),
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
        vec![
            summary_table(&report, args.via),
            path_table(&report.path_stats),
        ]
    })?;
    if !report.verified {
        bail!("data verification failed");
    }
    Ok(())
}

/// The human-readable summary of a bench run: one metric per row, then the
/// device timing rows when the run measured them.
fn summary_table(report: &BenchReport, via: Option<SocketAddr>) -> comfy_table::Table {
    let mut t = report::table(["metric", "value"]);
    let rows: Vec<(&str, String)> = vec![
        ("operation", format!("{:?} {} B", report.op, report.size)),
        (
            "fabric",
            match (report.loss, via) {
                (Some(p), _) => format!("relay, {} paths, loss {p}", report.paths),
                (None, Some(via)) => format!("via {via}, {} paths", report.paths),
                (None, None) => format!("direct loopback, {} paths", report.paths),
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
        ("retransmits", report.losses.describe()),
        ("repaths", report.repaths.to_string()),
    ];
    let timing_rows = report.device_timing.iter().flat_map(device_timing_rows);
    for (k, v) in rows.into_iter().chain(timing_rows) {
        t.add_row(vec![k.to_string(), v]);
    }
    t
}

/// The device bench's timing figures as summary rows.
fn device_timing_rows(d: &DeviceTimingRow) -> [(&'static str, String); 3] {
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
}

/// The per-path counters of one QP as a table.
fn path_table(rows: &[PathRow]) -> comfy_table::Table {
    let mut p = report::table([
        "path", "entropy", "sent", "retx", "lost", "CE", "repaths", "srtt µs",
    ]);
    for r in rows {
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
    p
}
