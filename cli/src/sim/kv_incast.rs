//! `metaroce sim kv-incast`: many servers answer KV-cache fetches (or take
//! writes) of one host through shallow buffers.

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use clap::{Args, ValueEnum};
use metaroce_fabric::scenario::{KvIncastSpec, KvOp, percentile, run_kv_incast};
use plotters::prelude::*;
use serde::Serialize;

use super::plot::{self, Axes};
use super::{CommonArgs, events_per_cpu_second, round, sim_time, timed};
use crate::report;

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
    let root = plot::figure(path)?;
    let mut chart = plot::chart(
        &root,
        &format!(
            "kv-incast {}: {} completion time ({senders} servers → 1, {buffer_kb} KB buffers)",
            op.name(),
            what(op)
        ),
        (0.8..max_x).log_scale(),
        0.0..1.0,
        Axes {
            x: &format!("{} completion time / ideal", what(op)),
            y: &format!("fraction of {}s", what(op)),
        },
    )?;
    let sizes: Vec<u64> = {
        let mut s: Vec<u64> = rows.iter().map(|r| r.object_kib).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    for r in rows {
        let Some(c) = plot::colour_of(r.transport) else {
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
        // Larger objects are drawn thinner.
        let rank = sizes.iter().position(|&s| s == r.object_kib).unwrap_or(0);
        let width = (3 - rank.min(2)) as u32;
        let label = format!("{}, {} KiB", r.transport, r.object_kib);
        plot::line(&mut chart, points, c, width, label, false)?;
    }
    plot::finish(chart, &root, SeriesLabelPosition::LowerRight, path)
}
