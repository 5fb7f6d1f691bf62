//! `metaroce demo`: two soft NICs on loopback through the relay — 8 paths (planes) of
//! 400 Mbit/s each with ECN marking, 1% loss on every path, one hot path (a quarter of
//! the rate) — moving RDMA WRITE and SEND traffic with every byte verified; then the same
//! run with spraying off (one path), side by side.

use std::time::Duration;

use anyhow::bail;
use clap::Args;
use metaroce_relay::PathConfig;
use serde::Serialize;

use crate::report;
use crate::traffic::{self, LossRow, NicPair, NicPairSetup, Op, PathRow, RelayRow};

/// Options of `metaroce demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Paths to spray over (the relay has as many).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(2..=64))]
    paths: u16,
    /// Loss probability of every relay path, for data and ACKs alike (0.01 = 1%).
    #[arg(long, default_value_t = 0.01)]
    loss: f64,
    /// Rate of every path, Mbit/s.
    #[arg(long, default_value_t = 400)]
    path_rate_mbps: u64,
    /// The hot path: slower than the others.
    #[arg(long, default_value_t = 3)]
    hot_path: usize,
    /// Rate of the hot path, Mbit/s.
    #[arg(long, default_value_t = 100)]
    hot_rate_mbps: u64,
    /// Seconds of WRITE and then of SEND traffic in each run.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Message size, bytes.
    #[arg(long, default_value_t = 256 << 10)]
    size: u32,
    /// Skip the single-path contrast run.
    #[arg(long)]
    no_contrast: bool,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
}

const DEPTH: usize = 16;

#[derive(Serialize)]
struct Phase {
    op: Op,
    goodput_gbps: f64,
    messages: u64,
    verified_bytes: u64,
    verified: bool,
    /// How losses were found and what was sent again.
    #[serde(flatten)]
    losses: LossRow,
    repaths: u64,
    steering_events: u64,
    timeouts: u64,
}

#[derive(Serialize)]
struct Run {
    name: String,
    paths: u16,
    phases: Vec<Phase>,
    path_stats: Vec<PathRow>,
    relay_paths: Vec<RelayRow>,
}

#[derive(Serialize)]
struct DemoReport {
    loss: f64,
    path_rate_mbps: u64,
    hot_path: usize,
    hot_rate_mbps: u64,
    runs: Vec<Run>,
}

fn relay_paths(args: &DemoArgs) -> Vec<PathConfig> {
    (0..usize::from(args.paths))
        .map(|i| {
            let rate = if i == args.hot_path {
                args.hot_rate_mbps
            } else {
                args.path_rate_mbps
            };
            PathConfig {
                loss: args.loss,
                rate_bps: Some(rate * 1_000_000),
                queue_bytes: 512 << 10,
                ecn_threshold_bytes: Some(48 << 10),
                ..PathConfig::default()
            }
        })
        .collect()
}

fn one_run(args: &DemoArgs, name: &str, paths: u16) -> anyhow::Result<Run> {
    let setup = NicPairSetup {
        ip: "127.0.0.1".parse()?,
        nic_port: 0,
        paths,
        mtu: 4096,
        busy_poll: false,
        mem: args.size as usize * DEPTH * 2,
        relay: Some(relay_paths(args)),
        relay_hash_seed: Some(0x5eed),
        device: None,
        auth: None,
    };
    let pair = NicPair::new(&setup)?;
    let mut phases = Vec::new();
    for op in [Op::Write, Op::Send] {
        let ticks = (args.seconds * 10.0).max(1.0) as u64;
        let bar = report::progress(ticks, &format!("{name} {op:?}"));
        let before = pair.a.ctx.stats();
        let start = std::time::Instant::now();
        let res = traffic::run_traffic(
            &pair,
            op,
            args.size as usize,
            DEPTH,
            Duration::from_secs_f64(args.seconds),
            |bytes| {
                let t = start.elapsed().as_secs_f64();
                bar.set_position(((t * 10.0) as u64).min(ticks));
                bar.set_message(format!(
                    "{name} {op:?} {:.2} Gbit/s",
                    bytes as f64 * 8.0 / t.max(1e-9) / 1e9
                ));
            },
        )?;
        bar.finish_and_clear();
        let after = pair.a.ctx.stats();
        phases.push(Phase {
            op,
            goodput_gbps: res.gbps(),
            messages: res.messages,
            verified_bytes: res.bytes,
            verified: res.mismatches == 0 && res.errors == 0 && res.messages > 0,
            losses: LossRow::sum([&after.since(&before)]),
            repaths: after.repaths - before.repaths,
            steering_events: (after.repaths - before.repaths)
                + (after.quarantines - before.quarantines),
            timeouts: (after.timeout_losses + after.conn_timeout_losses)
                - (before.timeout_losses + before.conn_timeout_losses),
        });
    }
    Ok(Run {
        name: name.to_string(),
        paths,
        phases,
        path_stats: traffic::path_rows(&pair.a.qp),
        relay_paths: pair
            .relay
            .as_ref()
            .map(traffic::relay_rows)
            .unwrap_or_default(),
    })
}

/// Runs `metaroce demo`.
pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    if !(0.0..1.0).contains(&args.loss) {
        bail!("--loss must be in [0, 1)");
    }
    if args.hot_path >= usize::from(args.paths) {
        bail!("--hot-path must be below --paths");
    }
    let mut runs = vec![one_run(args, "spraying", args.paths)?];
    if !args.no_contrast {
        runs.push(one_run(args, "one path", 1)?);
    }
    let report = DemoReport {
        loss: args.loss,
        path_rate_mbps: args.path_rate_mbps,
        hot_path: args.hot_path,
        hot_rate_mbps: args.hot_rate_mbps,
        runs,
    };
    report::emit(args.json, &report, || {
        let mut summary = report::table([
            "run",
            "traffic",
            "goodput Gbit/s",
            "verified MiB",
            "retransmits",
            "steering events",
            "timeouts",
        ]);
        for r in &report.runs {
            for p in &r.phases {
                summary.add_row(vec![
                    format!(
                        "{} ({} path{})",
                        r.name,
                        r.paths,
                        if r.paths == 1 { "" } else { "s" }
                    ),
                    format!("{:?}", p.op),
                    format!("{:.2}", p.goodput_gbps),
                    format!(
                        "{}{}",
                        p.verified_bytes >> 20,
                        if p.verified { " ✓" } else { " ✗" }
                    ),
                    p.losses.retransmits.to_string(),
                    p.steering_events.to_string(),
                    p.timeouts.to_string(),
                ]);
            }
        }
        let mut tables = vec![summary];
        for r in &report.runs {
            let mut t = report::table([
                format!("{}: path", r.name),
                "entropy".into(),
                "sent".into(),
                "retransmits".into(),
                "lost".into(),
                "CE".into(),
                "repaths".into(),
            ]);
            for p in &r.path_stats {
                t.add_row(vec![
                    p.path.to_string(),
                    p.entropy.to_string(),
                    p.sent.to_string(),
                    p.retransmitted.to_string(),
                    p.lost.to_string(),
                    p.ce_marked.to_string(),
                    p.repaths.to_string(),
                ]);
            }
            tables.push(t);
        }
        let mut f = report::table([
            "fabric path",
            "spraying: fwd / lost / queue-drop / CE",
            "one path: fwd / lost / queue-drop / CE",
        ]);
        let cell = |r: Option<&RelayRow>| {
            r.map_or(String::new(), |r| {
                format!(
                    "{} / {} / {} / {}",
                    r.forwarded, r.dropped_loss, r.dropped_queue, r.ce_marked
                )
            })
        };
        for i in 0..usize::from(args.paths) {
            let hot = if i == report.hot_path { " (hot)" } else { "" };
            f.add_row(vec![
                format!("{i}{hot}"),
                cell(report.runs[0].relay_paths.get(i)),
                cell(report.runs.get(1).and_then(|r| r.relay_paths.get(i))),
            ]);
        }
        tables.push(f);
        tables
    })?;
    if report
        .runs
        .iter()
        .any(|r| r.phases.iter().any(|p| !p.verified))
    {
        bail!("data verification failed");
    }
    Ok(())
}
