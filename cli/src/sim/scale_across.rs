//! `metaroce sim scale-across`: two sites joined by long links, round trips
//! of milliseconds, with loss.

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use clap::Args;
use metaroce_fabric::scenario::{ScaleAcrossSpec, TransportKind, run_scale_across};
use plotters::prelude::*;
use serde::Serialize;

use super::plot::{self, Axes};
use super::{CommonArgs, check_losses, events_per_cpu_second, round, sim_time, timed};
use crate::report;

/// Options of `sim scale-across`.
#[derive(Args, Debug)]
pub struct ScaleAcrossArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Round trips between the sites, ms, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1.0, 5.0, 10.0])]
    rtt_ms: Vec<f64>,
    /// Loss probabilities, as fractions (0.01 = 1%), comma separated; the
    /// lossless run is always added as the reference.
    #[arg(long, value_delimiter = ',', default_values_t = [0.0001, 0.001, 0.01])]
    loss: Vec<f64>,
    /// Host and inter-site link rate, Gbit/s.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=800))]
    rate_gbps: u64,
    /// Parallel inter-site links.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=64))]
    long_links: u64,
    /// Connections (QPs) between the two sites' hosts.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    connections: u64,
    /// Simulated time per run, in round trips.
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(3..=1000))]
    rtts: u64,
    /// Write an SVG of goodput vs lossless against loss to this file.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// One row of `sim scale-across`.
#[derive(Serialize, Debug)]
struct ScaleAcrossRow {
    transport: &'static str,
    rtt_ms: f64,
    loss: f64,
    goodput_gbps: f64,
    goodput_vs_lossless: f64,
    base_rtt_us: f64,
    bdp_packets: u32,
    /// Window W (packets) the baseline used; MetaRoCE has per-path windows.
    #[serde(skip_serializing_if = "Option::is_none")]
    window_packets: Option<u32>,
    /// Bytes MetaRoCE may have in flight (paths × 256 packets × MTU, capped
    /// by its connection window).
    #[serde(skip_serializing_if = "Option::is_none")]
    inflight_cap_bytes: Option<u64>,
    duration_ms: f64,
    retransmitted_packets: u64,
    timeouts: u64,
    random_drops: u64,
    qp_errors: u64,
    bytes_wrong: u64,
    trace_digest: String,
    events_per_cpu_second: f64,
}

#[derive(Serialize, Debug)]
struct ScaleAcrossDoc {
    scenario: &'static str,
    rate_gbps: u64,
    long_links: u64,
    connections: u64,
    rtts_per_run: u64,
    results: Vec<ScaleAcrossRow>,
}

/// Runs `sim scale-across`.
pub fn scale_across(args: &ScaleAcrossArgs) -> anyhow::Result<()> {
    check_losses(&args.loss)?;
    ensure!(!args.rtt_ms.is_empty(), "--rtt-ms needs at least one value");
    let mut rtts = Vec::new();
    for &ms in &args.rtt_ms {
        ensure!(
            (0.1..=100.0).contains(&ms),
            "--rtt-ms {ms} must be a round trip of 0.1..=100 ms"
        );
        rtts.push((ms, sim_time("rtt-ms", ms, 1e9)?));
    }
    let mut losses = vec![0.0];
    losses.extend(args.loss.iter().copied().filter(|&p| p > 0.0));
    let kinds = args.common.kinds();
    let bar = report::progress(
        (kinds.len() * rtts.len() * losses.len()) as u64,
        "scale-across",
    );
    let mut rows = Vec::new();
    for &kind in &kinds {
        for &(rtt_ms, rtt) in &rtts {
            let duration = rtt * args.rtts;
            let mut lossless = None;
            for &p in &losses {
                let spec = ScaleAcrossSpec {
                    rtt,
                    loss_probability: p,
                    link_rate_bps: args.rate_gbps * 1_000_000_000,
                    long_links: args.long_links as usize,
                    connections: args.connections as usize,
                    duration,
                };
                let (r, cpu) = timed(|| run_scale_across(kind, &spec, args.common.seed));
                let r = r.with_context(|| {
                    format!(
                        "scale-across scenario, {} at RTT {rtt_ms} ms, p = {p}",
                        kind.name()
                    )
                })?;
                let reference = *lossless.get_or_insert(r.run.goodput_gbps);
                let metaroce = kind == TransportKind::MetaRoce;
                rows.push(ScaleAcrossRow {
                    transport: kind.name(),
                    rtt_ms,
                    loss: p,
                    goodput_gbps: round(r.run.goodput_gbps, 3),
                    goodput_vs_lossless: round(
                        r.run.goodput_gbps / f64::max(reference, f64::MIN_POSITIVE),
                        4,
                    ),
                    base_rtt_us: round(r.base_rtt_us, 1),
                    bdp_packets: r.bdp_packets,
                    window_packets: (!metaroce).then_some(r.run.window_packets),
                    inflight_cap_bytes: metaroce.then_some(r.metaroce_inflight_cap_bytes),
                    duration_ms: round(duration as f64 / 1e9, 3),
                    retransmitted_packets: r.run.stats.retransmitted_packets,
                    timeouts: r.run.stats.timeouts,
                    random_drops: r.run.network.random_drops,
                    qp_errors: r.run.stats.qp_errors,
                    bytes_wrong: r.run.stats.bytes_wrong,
                    trace_digest: format!("{:016x}", r.run.trace_digest),
                    events_per_cpu_second: events_per_cpu_second(r.run.network.events, cpu),
                });
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        plot_scale_across(path, &rows, args.rate_gbps)?;
    }
    let doc = ScaleAcrossDoc {
        scenario: "scale-across",
        rate_gbps: args.rate_gbps,
        long_links: args.long_links,
        connections: args.connections,
        rtts_per_run: args.rtts,
        results: rows,
    };
    report::emit(args.common.json, &doc, || {
        let mut t = report::table([
            "transport",
            "RTT ms",
            "loss",
            "goodput Gbit/s",
            "vs lossless",
            "BDP pkts",
            "W",
            "retx",
            "timeouts",
            "QP errors",
            "Mevents/s",
        ]);
        for r in &doc.results {
            t.add_row(vec![
                r.transport.to_string(),
                format!("{}", r.rtt_ms),
                format!("{}%", r.loss * 100.0),
                format!("{:.2}", r.goodput_gbps),
                format!("{:.3}", r.goodput_vs_lossless),
                r.bdp_packets.to_string(),
                r.window_packets.map_or(String::new(), |w| w.to_string()),
                r.retransmitted_packets.to_string(),
                r.timeouts.to_string(),
                r.qp_errors.to_string(),
                format!("{:.2}", r.events_per_cpu_second / 1e6),
            ]);
        }
        vec![t]
    })
}

fn plot_scale_across(path: &Path, rows: &[ScaleAcrossRow], rate_gbps: u64) -> anyhow::Result<()> {
    let lossy: Vec<&ScaleAcrossRow> = rows.iter().filter(|r| r.loss > 0.0).collect();
    let min_loss = lossy.iter().map(|r| r.loss * 100.0).fold(1.0, f64::min) / 2.0;
    let max_loss = lossy.iter().map(|r| r.loss * 100.0).fold(0.0, f64::max) * 2.0;
    let root = plot::figure(path)?;
    let mut chart = plot::chart(
        &root,
        &format!("scale-across: goodput vs lossless ({rate_gbps} Gbit/s, long links)"),
        (min_loss.max(1e-4)..max_loss.max(min_loss * 4.0)).log_scale(),
        0.0..1.05,
        Axes {
            x: "loss (%)",
            y: "goodput / lossless goodput",
        },
    )?;
    let mut series: Vec<(&'static str, f64)> = Vec::new();
    for r in &lossy {
        if !series.contains(&(r.transport, r.rtt_ms)) {
            series.push((r.transport, r.rtt_ms));
        }
    }
    for (transport, rtt_ms) in series {
        let Some(c) = plot::colour_of(transport) else {
            continue;
        };
        let points: Vec<(f64, f64)> = lossy
            .iter()
            .filter(|r| r.transport == transport && r.rtt_ms == rtt_ms)
            .map(|r| (r.loss * 100.0, r.goodput_vs_lossless))
            .collect();
        // Longer round trips are drawn thinner.
        let width = if rtt_ms <= 1.0 {
            3
        } else if rtt_ms <= 5.0 {
            2
        } else {
            1
        };
        let label = format!("{transport}, RTT {rtt_ms} ms");
        plot::line(&mut chart, points, c, width, label, true)?;
    }
    plot::finish(chart, &root, SeriesLabelPosition::LowerLeft, path)
}
