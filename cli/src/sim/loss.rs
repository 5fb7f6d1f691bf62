//! `metaroce sim loss`: goodput against random loss, per transport.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use metaroce_fabric::scenario::{RunReport, TransportKind, run_loss};
use metaroce_fabric::time::SimTime;
use plotters::prelude::*;
use serde::Serialize;

use super::plot::{self, Axes};
use super::{CommonArgs, check_losses, events_per_cpu_second, round, sim_time};
use crate::cpu::cpu_seconds;
use crate::report;

/// Options of `sim loss`.
#[derive(Args, Debug)]
pub(super) struct LossArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Loss probabilities to run, as fractions (0.01 = 1%), comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [0.0, 0.001, 0.01, 0.02, 0.05, 0.1])]
    loss: Vec<f64>,
    /// Seeds per point (seed, seed+1, ...); figures are means over them.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    seeds: u64,
    /// Simulated time per run, ms.
    #[arg(long, default_value_t = 20.0)]
    duration_ms: f64,
    /// Write an SVG of goodput vs loss per transport to this file.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// One row of `sim loss`.
#[derive(Serialize, Debug, Clone)]
struct LossRow {
    transport: &'static str,
    loss: f64,
    goodput_gbps: f64,
    goodput_vs_lossless: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    analytic_gbn: Option<f64>,
    /// Window W (packets) the baseline used; MetaRoCE has per-path windows.
    #[serde(skip_serializing_if = "Option::is_none")]
    window_packets: Option<u32>,
    goodput_min_gbps: f64,
    goodput_max_gbps: f64,
    seeds: u64,
    duration_ms: f64,
    retransmitted_packets: u64,
    timeouts: u64,
    random_drops: u64,
    qp_errors: u64,
    bytes_wrong: u64,
    events_per_cpu_second: f64,
}

#[derive(Serialize, Debug)]
struct LossDoc {
    scenario: &'static str,
    results: Vec<LossRow>,
}

/// The runs of one (transport, loss) point.
#[derive(Clone, Debug)]
struct LossPoint {
    /// Mean goodput, Gbit/s.
    mean: f64,
    /// Smallest goodput of a seed.
    min: f64,
    /// Largest goodput of a seed.
    max: f64,
    /// CPU seconds the runs took.
    cpu: f64,
    /// Every seed's report.
    runs: Vec<RunReport>,
}

/// Mean, min and max goodput and summed counters of `seeds` runs.
fn loss_point(
    kind: TransportKind,
    p: f64,
    args: &LossArgs,
    duration: SimTime,
) -> anyhow::Result<LossPoint> {
    let mut runs = Vec::new();
    let cpu_before = cpu_seconds();
    for seed in args.common.seed..args.common.seed + args.seeds {
        runs.push(
            run_loss(kind, p, seed, duration).with_context(|| {
                format!("loss scenario, {} at p = {p}, seed {seed}", kind.name())
            })?,
        );
    }
    let cpu = cpu_seconds() - cpu_before;
    let goodputs: Vec<f64> = runs.iter().map(|r| r.goodput_gbps).collect();
    let mean = goodputs.iter().sum::<f64>() / goodputs.len() as f64;
    let min = goodputs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = goodputs.iter().copied().fold(0.0, f64::max);
    Ok(LossPoint {
        mean,
        min,
        max,
        cpu,
        runs,
    })
}

pub(super) fn loss(args: &LossArgs) -> anyhow::Result<()> {
    check_losses(&args.loss)?;
    let duration = sim_time("duration-ms", args.duration_ms, 1e9)?;
    let kinds = args.common.kinds();
    let extra_reference = usize::from(!args.loss.contains(&0.0));
    let points = kinds.len() * (args.loss.len() + extra_reference);
    let bar = report::progress(points as u64, "loss");
    let mut rows = Vec::new();
    for &kind in &kinds {
        let reference = loss_point(kind, 0.0, args, duration)?;
        if extra_reference == 1 {
            bar.inc(1);
        }
        let lossless = reference.mean;
        for &p in &args.loss {
            let point = if p == 0.0 {
                bar.inc(1);
                reference.clone()
            } else {
                let point = loss_point(kind, p, args, duration)?;
                bar.inc(1);
                point
            };
            let LossPoint {
                mean,
                min,
                max,
                cpu,
                runs,
            } = point;
            let sum = |f: fn(&RunReport) -> u64| runs.iter().map(f).sum::<u64>();
            let events: u64 = sum(|r| r.network.events);
            let baseline = kind != TransportKind::MetaRoce;
            rows.push(LossRow {
                transport: kind.name(),
                loss: p,
                goodput_gbps: round(mean, 3),
                goodput_vs_lossless: round(mean / lossless.max(f64::MIN_POSITIVE), 4),
                analytic_gbn: (kind == TransportKind::RoceV2)
                    .then(|| round(runs[0].analytic_gbn_fraction, 4)),
                window_packets: baseline.then_some(runs[0].window_packets),
                goodput_min_gbps: round(min, 3),
                goodput_max_gbps: round(max, 3),
                seeds: args.seeds,
                duration_ms: args.duration_ms,
                retransmitted_packets: sum(|r| r.stats.retransmitted_packets),
                timeouts: sum(|r| r.stats.timeouts),
                random_drops: sum(|r| r.network.random_drops),
                qp_errors: sum(|r| r.stats.qp_errors),
                bytes_wrong: sum(|r| r.stats.bytes_wrong),
                events_per_cpu_second: events_per_cpu_second(events, cpu),
            });
        }
    }
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        plot_loss(path, &rows)?;
    }
    let doc = LossDoc {
        scenario: "loss",
        results: rows,
    };
    report::emit(args.common.json, &doc, || {
        let mut t = report::table([
            "transport",
            "loss",
            "goodput Gbit/s",
            "vs lossless",
            "1/(1+pW)",
            "min..max",
            "retx",
            "timeouts",
            "Mevents/s",
        ]);
        for r in &doc.results {
            t.add_row(vec![
                r.transport.to_string(),
                format!("{}%", r.loss * 100.0),
                format!("{:.2}", r.goodput_gbps),
                format!("{:.3}", r.goodput_vs_lossless),
                r.analytic_gbn.map_or(String::new(), |a| format!("{a:.3}")),
                format!("{:.1}..{:.1}", r.goodput_min_gbps, r.goodput_max_gbps),
                r.retransmitted_packets.to_string(),
                r.timeouts.to_string(),
                format!("{:.2}", r.events_per_cpu_second / 1e6),
            ]);
        }
        vec![t]
    })
}

fn plot_loss(path: &Path, rows: &[LossRow]) -> anyhow::Result<()> {
    let max_loss = rows.iter().map(|r| r.loss).fold(0.0, f64::max).max(0.01) * 100.0;
    let max_goodput = rows
        .iter()
        .map(|r| r.goodput_gbps)
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let root = plot::figure(path)?;
    let mut chart = plot::chart(
        &root,
        "Goodput vs random loss (one connection, 8 paths, 100 Gbit/s)",
        0.0..max_loss,
        0.0..max_goodput,
        Axes {
            x: "loss (%)",
            y: "goodput (Gbit/s)",
        },
    )?;
    for kind in TransportKind::ALL {
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.transport == kind.name())
            .map(|r| (r.loss * 100.0, r.goodput_gbps))
            .collect();
        if points.is_empty() {
            continue;
        }
        let label = kind.name().to_string();
        plot::line(&mut chart, points, plot::colour(kind), 2, label, true)?;
    }
    plot::finish(chart, &root, SeriesLabelPosition::MiddleRight, path)
}
