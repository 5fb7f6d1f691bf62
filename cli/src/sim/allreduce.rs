//! `metaroce sim allreduce`: a ring allreduce's completion time.

use anyhow::{Context, bail};
use clap::Args;
use metaroce_fabric::scenario::{AllreduceSpec, run_allreduce};
use serde::Serialize;

use super::{CommonArgs, check_losses, events_per_cpu_second, round, sim_time, timed};
use crate::report;

/// Options of `sim allreduce`.
#[derive(Args, Debug)]
pub(super) struct AllreduceArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Hosts in the ring.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(2..=1024))]
    hosts: u64,
    /// Independent leaf-spine planes (one NIC port each).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=8))]
    planes: u64,
    /// Hosts under each leaf switch.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=256))]
    hosts_per_leaf: u64,
    /// Spine switches per plane.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=256))]
    spines: u64,
    /// MiB reduced. The issue asks for 256; the default is scaled down to 16
    /// to keep the run short (the result is reported with its size).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    data_mib: u64,
    /// Loss probabilities to run, as fractions, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [0.0, 0.01])]
    loss: Vec<f64>,
    /// Give up after this much simulated time, ms.
    #[arg(long, default_value_t = 300.0)]
    time_limit_ms: f64,
}

/// One row of `sim allreduce`.
#[derive(Serialize, Debug)]
struct AllreduceRow {
    transport: &'static str,
    loss: f64,
    /// Completion time, ms (null: not finished within the time limit).
    completion_ms: Option<f64>,
    /// Lossless completion time / this run's, same transport (null without
    /// a finished lossless run).
    vs_lossless: Option<f64>,
    ideal_ms: f64,
    algbw_gbps: f64,
    delivered_fraction: f64,
    retransmitted_packets: u64,
    /// Redundant packets sent before any loss was found (MetaRoCE's tail
    /// copies and PARITY packets); not retransmissions.
    redundant_packets: u64,
    timeouts: u64,
    qp_errors: u64,
    bytes_wrong: u64,
    trace_digest: String,
    events_per_cpu_second: f64,
}

#[derive(Serialize, Debug)]
struct AllreduceDoc {
    scenario: &'static str,
    hosts: u64,
    planes: u64,
    data_mib: u64,
    /// The issue's size; `data_mib` below it is a scaled-down run.
    issue_data_mib: u64,
    results: Vec<AllreduceRow>,
}

/// The all-reduce size the issue asks for, MiB.
const ISSUE_ALLREDUCE_MIB: u64 = 256;

pub(super) fn allreduce(args: &AllreduceArgs) -> anyhow::Result<()> {
    check_losses(&args.loss)?;
    let time_limit = sim_time("time-limit-ms", args.time_limit_ms, 1e9)?;
    if args.hosts % args.hosts_per_leaf != 0 {
        bail!(
            "--hosts {} is not a multiple of --hosts-per-leaf {}: leaves must be full",
            args.hosts,
            args.hosts_per_leaf
        );
    }
    let kinds = args.common.kinds();
    let bar = report::progress((kinds.len() * args.loss.len()) as u64, "allreduce");
    let mut rows = Vec::new();
    for &kind in &kinds {
        for &p in &args.loss {
            let spec = AllreduceSpec {
                hosts: args.hosts as usize,
                planes: args.planes as usize,
                hosts_per_leaf: args.hosts_per_leaf as usize,
                spines: args.spines as usize,
                data_bytes: args.data_mib << 20,
                loss_probability: p,
                time_limit,
            };
            let (r, cpu) = timed(|| run_allreduce(kind, &spec, args.common.seed));
            let r = r.with_context(|| format!("allreduce scenario, {} at p = {p}", kind.name()))?;
            rows.push(AllreduceRow {
                transport: kind.name(),
                loss: p,
                completion_ms: r.completion_ms.map(|ms| round(ms, 3)),
                vs_lossless: None,
                ideal_ms: round(r.ideal_ms, 3),
                algbw_gbps: round(r.algbw_gbps, 2),
                delivered_fraction: round(r.delivered_fraction, 4),
                retransmitted_packets: r.run.stats.retransmitted_packets,
                redundant_packets: r.run.stats.redundant_packets,
                timeouts: r.run.stats.timeouts,
                qp_errors: r.run.stats.qp_errors,
                bytes_wrong: r.run.stats.bytes_wrong,
                trace_digest: format!("{:016x}", r.run.trace_digest),
                events_per_cpu_second: events_per_cpu_second(r.run.network.events, cpu),
            });
            bar.inc(1);
        }
        let first = rows.len() - args.loss.len();
        let runs = &mut rows[first..];
        let lossless = runs
            .iter()
            .find(|r| r.loss == 0.0)
            .and_then(|r| r.completion_ms);
        for r in runs {
            r.vs_lossless = lossless
                .zip(r.completion_ms)
                .map(|(base, ms)| round(base / ms, 4));
        }
    }
    bar.finish_and_clear();
    let doc = AllreduceDoc {
        scenario: "allreduce",
        hosts: args.hosts,
        planes: args.planes,
        data_mib: args.data_mib,
        issue_data_mib: ISSUE_ALLREDUCE_MIB,
        results: rows,
    };
    report::emit(args.common.json, &doc, || {
        let mut note = report::table(["note"]);
        if doc.data_mib < ISSUE_ALLREDUCE_MIB {
            note.add_row(vec![format!(
                "scaled down: {} MiB reduced instead of {} MiB (use --data-mib {})",
                doc.data_mib, ISSUE_ALLREDUCE_MIB, ISSUE_ALLREDUCE_MIB
            )]);
        }
        let mut t = report::table([
            "transport",
            "loss",
            "completion ms",
            "vs lossless",
            "ideal ms",
            "algbw Gbit/s",
            "delivered",
            "retx",
            "copies",
            "timeouts",
        ]);
        for r in &doc.results {
            t.add_row(vec![
                r.transport.to_string(),
                format!("{}%", r.loss * 100.0),
                r.completion_ms
                    .map_or("unfinished".to_string(), |ms| format!("{ms:.2}")),
                r.vs_lossless.map_or(String::new(), |v| format!("{v:.3}")),
                format!("{:.2}", r.ideal_ms),
                format!("{:.1}", r.algbw_gbps),
                format!("{:.1}%", r.delivered_fraction * 100.0),
                r.retransmitted_packets.to_string(),
                r.redundant_packets.to_string(),
                r.timeouts.to_string(),
            ]);
        }
        if doc.data_mib < ISSUE_ALLREDUCE_MIB {
            vec![note, t]
        } else {
            vec![t]
        }
    })
}
