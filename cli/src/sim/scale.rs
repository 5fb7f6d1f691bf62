//! `metaroce sim scale`: thousands of connections over a multi-plane fabric.

use anyhow::{Context, ensure};
use clap::Args;
use metaroce_fabric::scenario::{ScaleReport, ScaleSpec, TransportKind, run_scale};
use serde::Serialize;

use super::{CommonArgs, events_per_cpu_second, round, sim_time, timed};
use crate::report;

/// Options of `sim scale`.
#[derive(Args, Debug)]
pub struct ScaleArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Connections (QP pairs).
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    connections: u64,
    /// Planes (one NIC port each), comma separated to compare several.
    #[arg(long, value_delimiter = ',', default_values_t = [8])]
    planes: Vec<u64>,
    /// Hosts: half send, half receive.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(2..=1024))]
    hosts: u64,
    /// Paths (entropy values) per MetaRoCE connection.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    paths: u16,
    /// Rate of every link, Gbit/s.
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..=800))]
    rate_gbps: u64,
    /// Size of every WRITE, KiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    message_kib: u64,
    /// Simulated time, ms.
    #[arg(long, default_value_t = 2.0)]
    duration_ms: f64,
    /// Goodput and fairness are measured after this, ms.
    #[arg(long, default_value_t = 1.0)]
    warmup_ms: f64,
}

/// One row of `sim scale`.
#[derive(Serialize, Debug)]
struct ScaleRow {
    transport: &'static str,
    connections: u64,
    planes: u64,
    hosts: u64,
    goodput_gbps: f64,
    bottleneck_gbps: f64,
    goodput_vs_bottleneck: f64,
    jain_fairness: f64,
    min_connection_gbps: f64,
    max_connection_gbps: f64,
    /// Engine state per connection end that does not depend on traffic
    /// (the run's paths, one stream; `metaroce_firmware::fixed_state_bytes`,
    /// `docs/architecture.md` §4.2), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed_state_bytes_per_connection: Option<usize>,
    /// Sender state for packets in flight, mean per connection, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    inflight_state_mean_bytes: Option<f64>,
    /// Largest sender state for packets in flight of one connection, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    inflight_state_max_bytes: Option<usize>,
    timeouts: u64,
    retransmitted_packets: u64,
    queue_drops: u64,
    qp_errors: u64,
    bytes_wrong: u64,
    cpu_seconds: f64,
    trace_digest: String,
    events_per_cpu_second: f64,
}

#[derive(Serialize, Debug)]
struct ScaleDoc {
    scenario: &'static str,
    duration_ms: f64,
    warmup_ms: f64,
    rate_gbps: u64,
    paths: u16,
    message_kib: u64,
    results: Vec<ScaleRow>,
}

/// Runs `sim scale`.
pub fn scale(args: &ScaleArgs) -> anyhow::Result<()> {
    let duration = sim_time("duration-ms", args.duration_ms, 1e9)?;
    let warmup = sim_time("warmup-ms", args.warmup_ms, 1e9)?;
    ensure!(
        warmup < duration,
        "--warmup-ms {} must end before --duration-ms {}",
        args.warmup_ms,
        args.duration_ms
    );
    ensure!(
        args.hosts % 2 == 0,
        "--hosts {} must be even: half the hosts send, half receive",
        args.hosts
    );
    ensure!(!args.planes.is_empty(), "--planes needs at least one value");
    for &planes in &args.planes {
        ensure!(
            (1..=64).contains(&planes),
            "--planes {planes} must be 1..=64"
        );
    }
    let kinds = args.common.kinds();
    let bar = report::progress((kinds.len() * args.planes.len()) as u64, "scale");
    let mut rows = Vec::new();
    for &kind in &kinds {
        for &planes in &args.planes {
            let spec = ScaleSpec {
                connections: args.connections as usize,
                planes: planes as usize,
                hosts: args.hosts as usize,
                paths: args.paths,
                link_rate_bps: args.rate_gbps * 1_000_000_000,
                message_bytes: args.message_kib << 10,
                duration,
                warmup,
            };
            let (r, cpu) = timed(|| run_scale(kind, &spec, args.common.seed));
            let r =
                r.with_context(|| format!("scale scenario, {} over {planes} planes", kind.name()))?;
            rows.push(ScaleRow::new(kind, planes, args, &r, cpu));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let doc = ScaleDoc {
        scenario: "scale",
        duration_ms: args.duration_ms,
        warmup_ms: args.warmup_ms,
        rate_gbps: args.rate_gbps,
        paths: args.paths,
        message_kib: args.message_kib,
        results: rows,
    };
    report::emit(args.common.json, &doc, || vec![scale_table(&doc)])
}

impl ScaleRow {
    /// The row of run `r` of `kind` over `planes` planes (`cpu` seconds).
    fn new(kind: TransportKind, planes: u64, args: &ScaleArgs, r: &ScaleReport, cpu: f64) -> Self {
        let metaroce = kind == TransportKind::MetaRoce;
        ScaleRow {
            transport: kind.name(),
            connections: args.connections,
            planes,
            hosts: args.hosts,
            goodput_gbps: round(r.goodput_gbps, 2),
            bottleneck_gbps: round(r.bottleneck_gbps, 2),
            goodput_vs_bottleneck: round(r.goodput_gbps / r.bottleneck_gbps, 4),
            jain_fairness: round(r.jain_fairness, 4),
            min_connection_gbps: round(
                r.per_connection_gbps
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min),
                4,
            ),
            max_connection_gbps: round(
                r.per_connection_gbps.iter().copied().fold(0.0, f64::max),
                4,
            ),
            fixed_state_bytes_per_connection: metaroce
                .then(|| metaroce_firmware::fixed_state_bytes(usize::from(args.paths))),
            inflight_state_mean_bytes: metaroce.then_some(round(r.inflight_state_mean_bytes, 0)),
            inflight_state_max_bytes: metaroce.then_some(r.inflight_state_max_bytes),
            timeouts: r.run.stats.timeouts,
            retransmitted_packets: r.run.stats.retransmitted_packets,
            queue_drops: r.run.network.queue_drops,
            qp_errors: r.run.stats.qp_errors,
            bytes_wrong: r.run.stats.bytes_wrong,
            cpu_seconds: round(cpu, 2),
            trace_digest: format!("{:016x}", r.run.trace_digest),
            events_per_cpu_second: events_per_cpu_second(r.run.network.events, cpu),
        }
    }
}

/// The `scale` table of `doc`.
fn scale_table(doc: &ScaleDoc) -> comfy_table::Table {
    let mut t = report::table([
        "transport",
        "connections",
        "planes",
        "goodput Gbit/s",
        "of bottleneck",
        "Jain",
        "min..max per conn Gbit/s",
        "state B/conn (fixed + in flight)",
        "timeouts",
        "CPU s",
        "Mevents/s",
    ]);
    for r in &doc.results {
        t.add_row(vec![
            r.transport.to_string(),
            r.connections.to_string(),
            r.planes.to_string(),
            format!("{:.1}", r.goodput_gbps),
            format!("{:.3}", r.goodput_vs_bottleneck),
            format!("{:.3}", r.jain_fairness),
            format!("{:.3}..{:.3}", r.min_connection_gbps, r.max_connection_gbps),
            match (
                r.fixed_state_bytes_per_connection,
                r.inflight_state_mean_bytes,
            ) {
                (Some(fixed), Some(inflight)) => format!("{fixed} + {inflight:.0}"),
                (None, Some(inflight)) => format!("? + {inflight:.0}"),
                _ => String::new(),
            },
            r.timeouts.to_string(),
            format!("{:.1}", r.cpu_seconds),
            format!("{:.2}", r.events_per_cpu_second / 1e6),
        ]);
    }
    t
}
