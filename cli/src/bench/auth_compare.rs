//! `metaroce bench --auth-compare`: the same run without and with authenticated mode
//! (spec §11.2), each on fresh NICs, and the ratio of their goodputs.

use anyhow::bail;
use serde::Serialize;

use super::{BenchArgs, local_run, random_key};
use crate::report;
use crate::traffic::{NicPair, NicPairSetup, Op};

/// One side of `--auth-compare`.
#[derive(Serialize)]
struct AuthCompareRow {
    auth: bool,
    goodput_gbps: f64,
    cpu_seconds_per_gb: f64,
    messages: u64,
    verified: bool,
    retransmits: u64,
    receiver_drops: u64,
}

/// The report: both runs and their goodput ratio.
#[derive(Serialize)]
struct AuthCompareReport {
    op: Op,
    size: u32,
    paths: u16,
    mtu: u32,
    loss: Option<f64>,
    seconds_each: f64,
    runs: Vec<AuthCompareRow>,
    /// Authenticated goodput over unauthenticated goodput.
    ratio: f64,
}

/// `--auth-compare`: the same run without and with authenticated mode.
pub(super) fn auth_compare(args: &BenchArgs, setup: &NicPairSetup) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    for auth in [false, true] {
        let s = NicPairSetup {
            auth: auth.then(random_key),
            ..setup.clone()
        };
        let pair = NicPair::new(&s)?;
        let (res, cpu) = local_run(args, &pair)?;
        let gb = res.bytes as f64 / 1e9;
        runs.push(AuthCompareRow {
            auth,
            goodput_gbps: res.gbps(),
            cpu_seconds_per_gb: if gb > 0.0 { cpu / gb } else { 0.0 },
            messages: res.messages,
            verified: res.mismatches == 0 && res.errors == 0 && res.messages > 0,
            retransmits: pair.a.ctx.stats().retransmits,
            receiver_drops: pair.b.ctx.drops().total(),
        });
    }
    let ratio = runs[1].goodput_gbps / runs[0].goodput_gbps.max(1e-9);
    let verified = runs.iter().all(|r| r.verified);
    let report = AuthCompareReport {
        op: args.op,
        size: args.size,
        paths: args.paths,
        mtu: args.mtu,
        loss: args.loss,
        seconds_each: args.duration.max(0.1),
        runs,
        ratio,
    };
    report::emit(args.json, &report, || {
        let mut t = report::table(["auth", "goodput", "CPU s/GB", "messages", "verified"]);
        for r in &report.runs {
            t.add_row(vec![
                r.auth.to_string(),
                format!("{:.2} Gbit/s", r.goodput_gbps),
                format!("{:.2}", r.cpu_seconds_per_gb),
                r.messages.to_string(),
                r.verified.to_string(),
            ]);
        }
        t.add_row(vec![
            "ratio".to_string(),
            format!("{:.3}", report.ratio),
            String::new(),
            String::new(),
            String::new(),
        ]);
        vec![t]
    })?;
    if !verified {
        bail!("data verification failed");
    }
    Ok(())
}
