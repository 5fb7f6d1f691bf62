//! `metaroce sim failover` and `sim hotlink`: goodput before and after a path event.

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use clap::Args;
use metaroce_fabric::scenario::{
    MetaRoceOptions, PhasedReport, TransportKind, run_failover, run_hotlink,
};
use metaroce_fabric::time::to_secs;
use plotters::prelude::*;
use serde::Serialize;

use super::plot::{self, Axes};
use super::{
    CcArgs, CommonArgs, cc_column, cc_name, events_per_cpu_second, round, sim_time, timed,
};
use crate::report;

/// Options of `sim failover`.
#[derive(Args, Debug)]
pub(super) struct PathArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// QPs (connections) between the two hosts.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=64))]
    qps: u64,
    /// Simulated time, ms.
    #[arg(long, default_value_t = 4.0)]
    duration_ms: f64,
    /// When the path fails, µs from the start.
    #[arg(long, default_value_t = 1000.0)]
    event_at_us: f64,
    /// Write an SVG of goodput vs time after the event to this file.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// Options of `sim hotlink`.
#[derive(Args, Debug)]
pub(super) struct HotlinkArgs {
    #[command(flatten)]
    path: PathArgs,
    #[command(flatten)]
    cc: CcArgs,
    /// Background load on the hot path, as a fraction of its rate.
    #[arg(long, default_value_t = 0.5)]
    load: f64,
}

/// One row of `sim failover` / `sim hotlink`.
#[derive(Serialize, Debug)]
struct PathRow {
    transport: &'static str,
    /// MetaRoCE's per-path congestion controller (null for a baseline).
    cc: Option<String>,
    /// µs from the event until goodput (50 µs sliding window) reached 85 %
    /// of the surviving capacity; null if it never did.
    recovery_us: Option<f64>,
    qp_errors: u64,
    goodput_before_gbps: f64,
    goodput_after_gbps: f64,
    surviving_capacity_gbps: f64,
    latency_p50_us: f64,
    latency_p99_us: f64,
    latency_max_us: f64,
    timeouts: u64,
    retransmitted_packets: u64,
    blackholed_packets: u64,
    qps: u64,
    /// Digest of the run's event trace (equal runs, equal digests).
    trace_digest: String,
    events_per_cpu_second: f64,
}

#[derive(Serialize, Debug)]
struct PathDoc {
    scenario: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    background_load: Option<f64>,
    event_at_us: f64,
    duration_ms: f64,
    /// MetaRoCE senders pace to the receiver's rate hint (`--no-rate-hint`: false).
    metaroce_rate_hint: bool,
    results: Vec<PathRow>,
}

fn path_row(
    kind: TransportKind,
    cc: &MetaRoceOptions,
    qps: u64,
    r: &PhasedReport,
    cpu: f64,
) -> PathRow {
    PathRow {
        transport: kind.name(),
        cc: cc_name(kind, cc),
        recovery_us: r.recovery_us.map(|us| round(us, 1)),
        qp_errors: r.run.stats.qp_errors,
        goodput_before_gbps: round(r.goodput_before_gbps, 3),
        goodput_after_gbps: round(r.goodput_after_gbps, 3),
        surviving_capacity_gbps: round(r.surviving_capacity_gbps, 3),
        latency_p50_us: round(r.latency_p50_us, 1),
        latency_p99_us: round(r.latency_p99_us, 1),
        latency_max_us: round(r.latency_max_us, 1),
        timeouts: r.run.stats.timeouts,
        retransmitted_packets: r.run.stats.retransmitted_packets,
        blackholed_packets: r.run.network.blackholed,
        qps,
        trace_digest: format!("{:016x}", r.run.trace_digest),
        events_per_cpu_second: events_per_cpu_second(r.run.network.events, cpu),
    }
}

/// `failover` (no `load`, ECN AIMD) or `hotlink` (`load`, a run per
/// controller in `cc`).
fn path_scenario(
    name: &'static str,
    args: &PathArgs,
    load: Option<f64>,
    cc: Option<&CcArgs>,
) -> anyhow::Result<()> {
    let duration = sim_time("duration-ms", args.duration_ms, 1e9)?;
    let event_at = sim_time("event-at-us", args.event_at_us, 1e6)?;
    ensure!(
        event_at < duration,
        "--event-at-us {} must fall before the end of the run (--duration-ms {})",
        args.event_at_us,
        args.duration_ms
    );
    if let Some(load) = load {
        ensure!(
            load > 0.0 && load <= 1.0,
            "--load {load} must be a fraction of the link rate in (0, 1]"
        );
    }
    let kinds = args.common.kinds();
    let runs = match cc {
        Some(cc) => cc.runs(&kinds),
        None => kinds
            .iter()
            .map(|&k| (k, MetaRoceOptions::default()))
            .collect(),
    };
    let bar = report::progress(runs.len() as u64, name);
    let mut rows = Vec::new();
    let mut series = Vec::new();
    for (kind, cc) in &runs {
        let (kind, qps, seed) = (*kind, args.qps as usize, args.common.seed);
        let (result, cpu) = timed(|| match load {
            None => run_failover(kind, seed, duration, event_at, qps),
            Some(load) => run_hotlink(kind, cc, seed, duration, event_at, qps, load),
        });
        let result = result.with_context(|| format!("{name} scenario, {}", kind.name()))?;
        let row = path_row(kind, cc, args.qps, &result, cpu);
        series.push((row_label(row.transport, &row.cc), result));
        rows.push(row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        plot_series(path, name, &series)?;
    }
    let doc = PathDoc {
        scenario: name,
        background_load: load,
        event_at_us: args.event_at_us,
        duration_ms: args.duration_ms,
        metaroce_rate_hint: cc.is_none_or(|cc| !cc.no_rate_hint),
        results: rows,
    };
    report::emit(args.common.json, &doc, || {
        let mut t = report::table([
            "transport",
            "cc",
            "recovery µs",
            "QP errors",
            "before Gbit/s",
            "after Gbit/s",
            "surviving Gbit/s",
            "p50 µs",
            "p99 µs",
            "max µs",
            "timeouts",
        ]);
        for r in &doc.results {
            t.add_row(vec![
                r.transport.to_string(),
                cc_column(&r.cc, doc.metaroce_rate_hint),
                r.recovery_us
                    .map_or("never".to_string(), |us| format!("{us:.0}")),
                r.qp_errors.to_string(),
                format!("{:.1}", r.goodput_before_gbps),
                format!("{:.1}", r.goodput_after_gbps),
                format!("{:.1}", r.surviving_capacity_gbps),
                format!("{:.0}", r.latency_p50_us),
                format!("{:.0}", r.latency_p99_us),
                format!("{:.0}", r.latency_max_us),
                r.timeouts.to_string(),
            ]);
        }
        vec![t]
    })
}

/// A row's name in a plot legend: the transport, and MetaRoCE's controller.
fn row_label(transport: &str, cc: &Option<String>) -> String {
    match cc {
        Some(cc) => format!("{transport} ({cc})"),
        None => transport.to_string(),
    }
}

fn plot_series(path: &Path, name: &str, runs: &[(String, PhasedReport)]) -> anyhow::Result<()> {
    let span_us = runs
        .iter()
        .map(|(_, r)| to_secs(r.series.bin) * 1e6 * r.series.gbps[0].len() as f64)
        .fold(1.0, f64::max);
    let top = runs
        .iter()
        .flat_map(|(_, r)| r.series.gbps[0].iter().copied())
        .fold(1.0, f64::max)
        * 1.1;
    let root = plot::figure(path)?;
    let mut chart = plot::chart(
        &root,
        &format!("{name}: goodput after the event"),
        0.0..span_us,
        0.0..top,
        Axes {
            x: "time since the event (µs)",
            y: "goodput (Gbit/s)",
        },
    )?;
    for ((label, r), colour) in runs.iter().zip(plot::PALETTE.iter().cycle()) {
        let bin_us = to_secs(r.series.bin) * 1e6;
        let points: Vec<(f64, f64)> = r.series.gbps[0]
            .iter()
            .enumerate()
            .map(|(i, &g)| ((i as f64 + 0.5) * bin_us, g))
            .collect();
        plot::line(&mut chart, points, *colour, 2, label.clone(), false)?;
    }
    plot::finish(chart, &root, SeriesLabelPosition::MiddleRight, path)
}

pub(super) fn failover(args: &PathArgs) -> anyhow::Result<()> {
    path_scenario("failover", args, None, None)
}

pub(super) fn hotlink(args: &HotlinkArgs) -> anyhow::Result<()> {
    path_scenario("hotlink", &args.path, Some(args.load), Some(&args.cc))
}
