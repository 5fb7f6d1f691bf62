//! `metaroce demo`: the engine at work. Two MetaRoCE engines over a seeded,
//! lossy, reordering multipath channel move back-to-back 1 MiB RDMA WRITEs and
//! SENDs; every byte is verified. The same run with spraying off (one path)
//! is shown beside it for contrast.

use std::collections::BTreeMap;

use anyhow::{Context, bail};
use clap::Args;
use metaroce_firmware::loopback::{Channel, MEM_BASE, Pair, pattern};
use metaroce_firmware::{Event, RecvWr, SendOp, SendWr, Sge, WcStatus};
use serde::Serialize;

use crate::report;

/// Options of `metaroce demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Paths (entropy values) to spray over.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    paths: u16,
    /// Packet loss probability, for data and ACKs alike (0.01 = 1%).
    #[arg(long, default_value_t = 0.01)]
    loss: f64,
    /// MiB to move in each run.
    #[arg(long, default_value_t = 256)]
    mib: u64,
    /// Random seed (same seed, same run).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Skip the single-path contrast run.
    #[arg(long)]
    no_contrast: bool,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
}

const MSG: u32 = 1 << 20;
const SLOTS: u64 = 16;

/// One run's outcome.
#[derive(Serialize, Debug)]
struct RunReport {
    label: String,
    paths: u16,
    loss: f64,
    messages: u64,
    bytes: u64,
    verified: bool,
    simulated_us: f64,
    goodput_gbps: f64,
    retransmits: u64,
    sack_retransmits: u64,
    timeout_retransmits: u64,
    repaths: u64,
    quarantines: u64,
    drops: BTreeMap<&'static str, u64>,
    per_path: Vec<PathRow>,
}

#[derive(Serialize, Debug)]
struct PathRow {
    path: usize,
    entropy: u16,
    sent: u64,
    retransmitted: u64,
    lost: u64,
    ce_marked: u64,
    repaths: u64,
    timeouts: u64,
    srtt_us: f64,
}

#[derive(Serialize, Debug)]
struct DemoReport {
    runs: Vec<RunReport>,
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    if !(0.0..0.5).contains(&args.loss) {
        bail!("--loss must be in [0, 0.5): got {}", args.loss);
    }
    if args.mib == 0 {
        bail!("--mib must be at least 1");
    }
    let mut runs = vec![run_one("sprayed", args.paths, args)?];
    if !args.no_contrast && args.paths > 1 {
        runs.push(run_one("one path", 1, args)?);
    }
    let report = DemoReport { runs };
    report::emit(args.json, &report, || tables(&report))
}

fn run_one(label: &str, paths: u16, args: &DemoArgs) -> anyhow::Result<RunReport> {
    let channel = Channel {
        loss: args.loss,
        ..Channel::default()
    };
    let mut pair = Pair::new(args.seed, paths, channel);
    let total = args.mib;
    let bar = report::progress(total, label);
    let mut free: Vec<u64> = (0..SLOTS).collect();
    let mut outstanding: BTreeMap<u64, (u64, bool, u32)> = BTreeMap::new(); // id -> (slot, is_send, completions left)
    let (mut posted, mut done) = (0u64, 0u64);
    let mut scratch = vec![0u8; MSG as usize];
    while done < total {
        while posted < total
            && let Some(slot) = free.pop()
        {
            posted += 1;
            let id = posted;
            let addr = MEM_BASE + slot * u64::from(MSG);
            pattern(id, pair.a.mem.slice_mut(addr, MSG as usize));
            let is_send = id % 2 == 0;
            let sge = Sge {
                addr,
                len: MSG,
                lkey: pair.a.mr.lkey,
            };
            let op = if is_send {
                let rsge = Sge {
                    addr,
                    len: MSG,
                    lkey: pair.b.mr.lkey,
                };
                pair.b.nic.post_recv(
                    pair.b.qpn,
                    RecvWr {
                        wr_id: id,
                        sge: rsge,
                        stream: 0,
                    },
                )?;
                SendOp::Send
            } else {
                SendOp::Write {
                    remote_va: addr,
                    rkey: pair.b.mr.rkey,
                }
            };
            let wr = SendWr {
                wr_id: id,
                op,
                sge,
                signaled: true,
                solicited: false,
                stream: 0,
            };
            pair.a.nic.post_send(pair.a.qpn, wr)?;
            outstanding.insert(id, (slot, is_send, if is_send { 2 } else { 1 }));
        }
        let mut finished = Vec::new();
        let mut failure = None;
        let progressed = pair.run_until(u64::MAX, |p| {
            let (ea, eb) = p.events();
            for e in ea.into_iter().chain(eb) {
                match e {
                    Event::Completion(c) if c.status == WcStatus::Success => finished.push(c.wr_id),
                    other => failure = Some(other),
                }
            }
            !finished.is_empty() || failure.is_some()
        });
        if let Some(f) = failure {
            bail!("transfer failed at {} µs: {f:?}", pair.now / 1000);
        }
        if !progressed {
            bail!(
                "transfer stalled at {} µs: drops {:?}",
                pair.now / 1000,
                pair.b.nic.drops()
            );
        }
        for id in finished {
            let entry = outstanding.get_mut(&id).context("unknown completion")?;
            entry.2 -= 1;
            if entry.2 > 0 {
                continue;
            }
            let (slot, _, _) = outstanding.remove(&id).expect("present");
            let addr = MEM_BASE + slot * u64::from(MSG);
            pattern(id, &mut scratch);
            if pair.b.mem.slice(addr, MSG as usize) != scratch.as_slice() {
                bail!("message {id}: data at the receiver differs from what was sent");
            }
            free.push(slot);
            done += 1;
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let stats = *pair.a.nic.stats();
    let bytes = total * u64::from(MSG);
    let per_path = pair
        .a
        .nic
        .path_stats(pair.a.qpn)
        .context("QP vanished")?
        .iter()
        .enumerate()
        .map(|(path, s)| PathRow {
            path,
            entropy: s.entropy,
            sent: s.sent,
            retransmitted: s.retransmitted,
            lost: s.lost,
            ce_marked: s.ce_marked,
            repaths: s.repaths,
            timeouts: s.timeouts,
            srtt_us: s.srtt_ns as f64 / 1000.0,
        })
        .collect();
    let drops = pair
        .b
        .nic
        .drops()
        .iter()
        .chain(pair.a.nic.drops().iter())
        .fold(BTreeMap::new(), |mut m, (k, v)| {
            *m.entry(k).or_insert(0) += v;
            m
        });
    Ok(RunReport {
        label: label.to_string(),
        paths,
        loss: args.loss,
        messages: total,
        bytes,
        verified: true,
        simulated_us: pair.now as f64 / 1000.0,
        goodput_gbps: bytes as f64 * 8.0 / pair.now as f64,
        retransmits: stats.retransmits,
        sack_retransmits: stats.sack_retransmits,
        timeout_retransmits: stats.timeout_retransmits,
        repaths: stats.repaths,
        quarantines: stats.quarantines,
        drops: drops.into_iter().filter(|(_, v)| *v > 0).collect(),
        per_path,
    })
}

fn tables(r: &DemoReport) -> Vec<comfy_table::Table> {
    let mut summary = report::table([
        "run",
        "paths",
        "loss",
        "moved",
        "verified",
        "goodput Gbit/s",
        "retx (SACK / RTO)",
        "repaths",
        "quarantines",
    ]);
    for run in &r.runs {
        summary.add_row(vec![
            run.label.clone(),
            run.paths.to_string(),
            format!("{:.1}%", run.loss * 100.0),
            format!("{} MiB", run.bytes >> 20),
            if run.verified {
                "every byte".into()
            } else {
                "NO".into()
            },
            format!("{:.1}", run.goodput_gbps),
            format!(
                "{} ({} / {})",
                run.retransmits, run.sack_retransmits, run.timeout_retransmits
            ),
            run.repaths.to_string(),
            run.quarantines.to_string(),
        ]);
    }
    let mut out = vec![summary];
    for run in &r.runs {
        let mut t = report::table([
            "path",
            "src port",
            "sent",
            "retransmitted",
            "lost",
            "CE",
            "repaths",
            "timeouts",
            "sRTT µs",
        ]);
        for p in &run.per_path {
            t.add_row(vec![
                p.path.to_string(),
                p.entropy.to_string(),
                p.sent.to_string(),
                p.retransmitted.to_string(),
                p.lost.to_string(),
                p.ce_marked.to_string(),
                p.repaths.to_string(),
                p.timeouts.to_string(),
                format!("{:.1}", p.srtt_us),
            ]);
        }
        out.push(t);
    }
    out
}
