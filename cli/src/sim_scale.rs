//! `metaroce sim scale-across`, `sim kv-incast` and `sim scale`: long-haul
//! links between sites, KV-cache fetch incast through shallow buffers, and
//! thousands of connections over a multi-plane fabric.

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use clap::{Args, ValueEnum};
use metaroce_fabric::scenario::{
    KvIncastSpec, KvOp, ScaleAcrossSpec, ScaleReport, ScaleSpec, TransportKind, percentile,
    run_kv_incast, run_scale, run_scale_across,
};
use plotters::prelude::*;
use serde::Serialize;

use crate::report;
use crate::sim::{CommonArgs, check_losses, events_per_cpu_second, round, sim_time, timed};

/// Colour of a transport in every plot (same order as the other scenarios).
fn colour(kind: TransportKind) -> RGBColor {
    match kind {
        TransportKind::MetaRoce => RED,
        TransportKind::RoceV2 => BLUE,
        TransportKind::Irn => GREEN,
    }
}

fn kind_by_name(name: &str) -> Option<TransportKind> {
    TransportKind::ALL.into_iter().find(|k| k.name() == name)
}

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
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("scale-across: goodput vs lossless ({rate_gbps} Gbit/s, long links)"),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(
            (min_loss.max(1e-4)..max_loss.max(min_loss * 4.0)).log_scale(),
            0.0..1.05,
        )?;
    chart
        .configure_mesh()
        .x_desc("loss (%)")
        .y_desc("goodput / lossless goodput")
        .draw()?;
    let mut series: Vec<(&'static str, f64)> = Vec::new();
    for r in &lossy {
        if !series.contains(&(r.transport, r.rtt_ms)) {
            series.push((r.transport, r.rtt_ms));
        }
    }
    for (transport, rtt_ms) in series {
        let Some(kind) = kind_by_name(transport) else {
            continue;
        };
        let points: Vec<(f64, f64)> = lossy
            .iter()
            .filter(|r| r.transport == transport && r.rtt_ms == rtt_ms)
            .map(|r| (r.loss * 100.0, r.goodput_vs_lossless))
            .collect();
        let c = colour(kind);
        // Longer round trips are drawn thinner.
        let width = if rtt_ms <= 1.0 {
            3
        } else if rtt_ms <= 5.0 {
            2
        } else {
            1
        };
        chart
            .draw_series(LineSeries::new(points.clone(), c.stroke_width(width)))?
            .label(format!("{transport}, RTT {rtt_ms} ms"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(width))
            });
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Options of `sim kv-incast`.
#[derive(Args, Debug)]
pub struct KvIncastArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// `read`: the host requests an object from every server, job after job
    /// (job completion times); `write`: every server writes its objects to
    /// the host back to back (object completion times).
    #[arg(long, value_enum, default_value_t = OpArg::Read)]
    op: OpArg,
    /// Servers answering every job with one object each.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=255))]
    senders: u64,
    /// Object sizes, KiB, comma separated (small and medium KV-cache blocks).
    #[arg(long, value_delimiter = ',', default_values_t = [16, 256, 1024])]
    object_kib: Vec<u64>,
    /// Jobs per run, one after the other (`write`: objects per server).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    jobs: u64,
    /// Egress buffer of every switch port, KB (shallow).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(5..=100_000))]
    buffer_kb: u64,
    /// Give up after this much simulated time per run, ms.
    #[arg(long, default_value_t = 2000.0)]
    time_limit_ms: f64,
    /// Write an SVG of the job completion time distribution to this file.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// `sim kv-incast --op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OpArg {
    Read,
    Write,
}

impl OpArg {
    fn op(self) -> KvOp {
        match self {
            OpArg::Read => KvOp::Read,
            OpArg::Write => KvOp::Write,
        }
    }

    fn name(self) -> &'static str {
        match self {
            OpArg::Read => "read",
            OpArg::Write => "write",
        }
    }
}

/// One row of `sim kv-incast`.
#[derive(Serialize, Debug)]
struct KvIncastRow {
    transport: &'static str,
    op: &'static str,
    object_kib: u64,
    senders: u64,
    /// Jobs (`read`) or objects per server (`write`).
    jobs: u64,
    /// Completion times measured: jobs (`read`) or objects (`write`).
    completed: u64,
    /// Completions the run should measure.
    expected: u64,
    jct_p50_us: f64,
    jct_p99_us: f64,
    jct_max_us: f64,
    jct_mean_us: f64,
    /// Bandwidth bound: every object's packets through the requester's
    /// link at line rate.
    ideal_jct_us: f64,
    peak_queue_bytes: u64,
    queue_drops: u64,
    ecn_marks: u64,
    retransmitted_packets: u64,
    timeouts: u64,
    qp_errors: u64,
    bytes_wrong: u64,
    trace_digest: String,
    events_per_cpu_second: f64,
    /// Completion time of every job (`read`) or object (`write`), µs
    /// (JSON only).
    jct_us: Vec<f64>,
}

#[derive(Serialize, Debug)]
struct KvIncastDoc {
    scenario: &'static str,
    op: &'static str,
    buffer_kb: u64,
    results: Vec<KvIncastRow>,
}

/// Runs `sim kv-incast`.
pub fn kv_incast(args: &KvIncastArgs) -> anyhow::Result<()> {
    let time_limit = sim_time("time-limit-ms", args.time_limit_ms, 1e9)?;
    ensure!(
        !args.object_kib.is_empty(),
        "--object-kib needs at least one size"
    );
    for &kib in &args.object_kib {
        ensure!(
            (1..=1 << 20).contains(&kib),
            "--object-kib {kib} must be 1..=1048576 KiB"
        );
    }
    let kinds = args.common.kinds();
    let bar = report::progress((kinds.len() * args.object_kib.len()) as u64, "kv-incast");
    let mut rows = Vec::new();
    for &kind in &kinds {
        for &kib in &args.object_kib {
            let spec = KvIncastSpec {
                op: args.op.op(),
                senders: args.senders as usize,
                object_bytes: kib << 10,
                jobs: args.jobs,
                buffer_bytes: args.buffer_kb * 1000,
                time_limit,
            };
            let (r, cpu) = timed(|| run_kv_incast(kind, &spec, args.common.seed));
            let r = r.with_context(|| {
                format!("kv-incast scenario, {} with {kib} KiB objects", kind.name())
            })?;
            let mut sorted = r.jct_us.clone();
            let mean = sorted.iter().sum::<f64>() / sorted.len().max(1) as f64;
            rows.push(KvIncastRow {
                transport: kind.name(),
                op: args.op.name(),
                object_kib: kib,
                senders: args.senders,
                jobs: args.jobs,
                completed: r.jct_us.len() as u64,
                expected: match args.op {
                    OpArg::Read => args.jobs,
                    OpArg::Write => args.jobs * args.senders,
                },
                jct_p50_us: round(percentile(&mut sorted, 0.5), 1),
                jct_p99_us: round(percentile(&mut sorted, 0.99), 1),
                jct_max_us: round(percentile(&mut sorted, 1.0), 1),
                jct_mean_us: round(mean, 1),
                ideal_jct_us: round(r.ideal_jct_us, 1),
                peak_queue_bytes: r.peak_queue_bytes,
                queue_drops: r.receiver_queue_drops,
                ecn_marks: r.receiver_queue_marks,
                retransmitted_packets: r.run.stats.retransmitted_packets,
                timeouts: r.run.stats.timeouts,
                qp_errors: r.run.stats.qp_errors,
                bytes_wrong: r.run.stats.bytes_wrong,
                trace_digest: format!("{:016x}", r.run.trace_digest),
                events_per_cpu_second: events_per_cpu_second(r.run.network.events, cpu),
                jct_us: r.jct_us.iter().map(|&us| round(us, 2)).collect(),
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        plot_kv_incast(path, &rows, args.op, args.senders, args.buffer_kb)?;
    }
    let doc = KvIncastDoc {
        scenario: "kv-incast",
        op: args.op.name(),
        buffer_kb: args.buffer_kb,
        results: rows,
    };
    report::emit(args.common.json, &doc, || {
        let mut t = report::table([
            "transport",
            "object KiB",
            "done",
            "p50 µs",
            "p99 µs",
            "max µs",
            "ideal µs",
            "p99 / ideal",
            "drops",
            "timeouts",
            "Mevents/s",
        ]);
        for r in &doc.results {
            t.add_row(vec![
                r.transport.to_string(),
                r.object_kib.to_string(),
                format!("{}/{}", r.completed, r.expected),
                format!("{:.1}", r.jct_p50_us),
                format!("{:.1}", r.jct_p99_us),
                format!("{:.1}", r.jct_max_us),
                format!("{:.1}", r.ideal_jct_us),
                format!(
                    "{:.2}",
                    r.jct_p99_us / r.ideal_jct_us.max(f64::MIN_POSITIVE)
                ),
                r.queue_drops.to_string(),
                r.timeouts.to_string(),
                format!("{:.2}", r.events_per_cpu_second / 1e6),
            ]);
        }
        vec![t]
    })
}

/// What one completion time measures: a job (reads) or an object (writes).
fn what(op: OpArg) -> &'static str {
    match op {
        OpArg::Read => "job",
        OpArg::Write => "object",
    }
}

/// CDF of job completion time divided by the ideal, per transport and size.
fn plot_kv_incast(
    path: &Path,
    rows: &[KvIncastRow],
    op: OpArg,
    senders: u64,
    buffer_kb: u64,
) -> anyhow::Result<()> {
    let slowdown = |r: &KvIncastRow| -> Vec<f64> {
        let mut v: Vec<f64> = r
            .jct_us
            .iter()
            .map(|&us| us / r.ideal_jct_us.max(f64::MIN_POSITIVE))
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let max_x = rows
        .iter()
        .flat_map(|r| slowdown(r).last().copied())
        .fold(2.0, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "kv-incast {}: {} completion time ({senders} servers → 1, {buffer_kb} KB buffers)",
                op.name(),
                what(op)
            ),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d((0.8..max_x).log_scale(), 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc(format!("{} completion time / ideal", what(op)))
        .y_desc(format!("fraction of {}s", what(op)))
        .draw()?;
    let sizes: Vec<u64> = {
        let mut s: Vec<u64> = rows.iter().map(|r| r.object_kib).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    for r in rows {
        let Some(kind) = kind_by_name(r.transport) else {
            continue;
        };
        let values = slowdown(r);
        if values.is_empty() {
            continue;
        }
        let n = values.len() as f64;
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, (i + 1) as f64 / n))
            .collect();
        let c = colour(kind);
        // Larger objects are drawn thinner.
        let rank = sizes.iter().position(|&s| s == r.object_kib).unwrap_or(0);
        let width = (3 - rank.min(2)) as u32;
        chart
            .draw_series(LineSeries::new(points, c.stroke_width(width)))?
            .label(format!("{}, {} KiB", r.transport, r.object_kib))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(width))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

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
