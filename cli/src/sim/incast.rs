//! `metaroce sim incast`: many senders to one receiver.

use anyhow::Context;
use clap::Args;
use metaroce_fabric::scenario::run_incast;
use serde::Serialize;

use super::{
    CcArgs, CommonArgs, cc_column, cc_name, events_per_cpu_second, round, sim_time, timed,
};
use crate::report;

/// Options of `sim incast`.
#[derive(Args, Debug)]
pub(super) struct IncastArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    cc: CcArgs,
    /// Senders writing to the one receiver.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=255))]
    senders: u64,
    /// Simulated time, ms.
    #[arg(long, default_value_t = 3.0)]
    duration_ms: f64,
}

/// One row of `sim incast`.
#[derive(Serialize, Debug)]
struct IncastRow {
    transport: &'static str,
    /// MetaRoCE's per-path congestion controller (null for a baseline).
    cc: Option<String>,
    senders: u64,
    /// µs until Jain's index over a 50 µs window first reached 0.95.
    time_to_fair_us: Option<f64>,
    jain_fairness: f64,
    peak_queue_bytes: u64,
    queue_drops: u64,
    ecn_marks: u64,
    total_goodput_gbps: f64,
    min_sender_gbps: f64,
    max_sender_gbps: f64,
    timeouts: u64,
    /// Digest of the run's event trace (equal runs, equal digests).
    trace_digest: String,
    events_per_cpu_second: f64,
}

#[derive(Serialize, Debug)]
struct IncastDoc {
    scenario: &'static str,
    duration_ms: f64,
    /// MetaRoCE senders pace to the receiver's rate hint (`--no-rate-hint`: false).
    metaroce_rate_hint: bool,
    results: Vec<IncastRow>,
}

pub(super) fn incast(args: &IncastArgs) -> anyhow::Result<()> {
    let duration = sim_time("duration-ms", args.duration_ms, 1e9)?;
    let runs = args.cc.runs(&args.common.kinds());
    let bar = report::progress(runs.len() as u64, "incast");
    let mut rows = Vec::new();
    for (kind, cc) in &runs {
        let kind = *kind;
        let (r, cpu) =
            timed(|| run_incast(kind, cc, args.senders as usize, args.common.seed, duration));
        let r = r.with_context(|| format!("incast scenario, {}", kind.name()))?;
        rows.push(IncastRow {
            transport: kind.name(),
            cc: cc_name(kind, cc),
            senders: args.senders,
            time_to_fair_us: r.time_to_fair_us.map(|us| round(us, 1)),
            jain_fairness: round(r.jain_fairness, 4),
            peak_queue_bytes: r.peak_queue_bytes,
            queue_drops: r.receiver_queue_drops,
            ecn_marks: r.receiver_queue_marks,
            total_goodput_gbps: round(r.per_sender_gbps.iter().sum(), 3),
            min_sender_gbps: round(
                r.per_sender_gbps
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min),
                3,
            ),
            max_sender_gbps: round(r.per_sender_gbps.iter().copied().fold(0.0, f64::max), 3),
            timeouts: r.run.stats.timeouts,
            trace_digest: format!("{:016x}", r.run.trace_digest),
            events_per_cpu_second: events_per_cpu_second(r.run.network.events, cpu),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    let doc = IncastDoc {
        scenario: "incast",
        duration_ms: args.duration_ms,
        metaroce_rate_hint: !args.cc.no_rate_hint,
        results: rows,
    };
    report::emit(args.common.json, &doc, || {
        let mut t = report::table([
            "transport",
            "cc",
            "time to fair µs",
            "Jain",
            "peak queue KB",
            "drops",
            "marks",
            "total Gbit/s",
            "min..max per sender",
        ]);
        for r in &doc.results {
            t.add_row(vec![
                r.transport.to_string(),
                cc_column(&r.cc, doc.metaroce_rate_hint),
                r.time_to_fair_us
                    .map_or("never".to_string(), |us| format!("{us:.0}")),
                format!("{:.3}", r.jain_fairness),
                format!("{:.0}", r.peak_queue_bytes as f64 / 1e3),
                r.queue_drops.to_string(),
                r.ecn_marks.to_string(),
                format!("{:.1}", r.total_goodput_gbps),
                format!("{:.2}..{:.2}", r.min_sender_gbps, r.max_sender_gbps),
            ]);
        }
        vec![t]
    })
}
