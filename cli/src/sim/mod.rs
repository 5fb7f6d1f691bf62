//! `metaroce sim <scenario>`: the discrete-event fabric simulator running the
//! real MetaRoCE engine beside the RoCEv2 and IRN baselines, side by side.
//! Scenarios: `loss`, `failover`, `hotlink`, `incast`, `allreduce`,
//! `scale-across`, `kv-incast` and `scale`; one file per scenario here
//! (`path_event.rs` has `failover` and `hotlink`), the plots' common frame in
//! `plot.rs`, and in this file the options and helpers they share.

use anyhow::ensure;
use clap::{Args, Subcommand, ValueEnum};
use metaroce_fabric::scenario::{MetaRoceOptions, TransportKind};
use metaroce_fabric::time::SimTime;
use metaroce_firmware::cc::{CcAlgorithm, EcnAimdParams, SwiftParams};

use crate::cpu::cpu_seconds;

mod allreduce;
mod incast;
mod kv_incast;
mod loss;
mod path_event;
mod plot;
mod scale;
mod scale_across;

use allreduce::{AllreduceArgs, allreduce};
use incast::{IncastArgs, incast};
use kv_incast::{KvIncastArgs, kv_incast};
use loss::{LossArgs, loss};
use path_event::{HotlinkArgs, PathArgs, failover, hotlink};
use scale::{ScaleArgs, scale};
use scale_across::{ScaleAcrossArgs, scale_across};

/// Options of `metaroce sim`.
#[derive(Args, Debug)]
pub struct SimArgs {
    /// Scenario to run.
    #[command(subcommand)]
    scenario: Scenario,
}

/// The scenarios.
#[derive(Subcommand, Debug)]
enum Scenario {
    /// Goodput of one connection of back-to-back 1 MiB WRITEs over 8 equal-cost
    /// 100 Gbit/s paths under random loss, against the lossless run.
    Loss(LossArgs),
    /// One of 8 fabric paths is silently blackholed mid-run: recovery time and QP errors.
    Failover(PathArgs),
    /// One of 8 fabric paths carries background load from mid-run: goodput and tail latency.
    Hotlink(HotlinkArgs),
    /// N senders write to one receiver: time to fair share and peak queue.
    Incast(IncastArgs),
    /// Ring all-reduce over a multi-plane leaf-spine: completion time per transport.
    Allreduce(AllreduceArgs),
    /// Two sites joined by long links (RTT 1–10 ms) under random loss: goodput
    /// against the lossless run, windows sized for the bandwidth-delay product.
    ScaleAcross(ScaleAcrossArgs),
    /// One host fetches an object from each of N servers through shallow
    /// buffers, job after job: job completion time distribution.
    KvIncast(KvIncastArgs),
    /// Thousands of connections over a multi-plane fabric: goodput against the
    /// bottleneck, fairness and engine state per connection.
    Scale(ScaleArgs),
}

/// Which transports to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TransportArg {
    Metaroce,
    Rocev2,
    Irn,
}

impl TransportArg {
    fn kind(self) -> TransportKind {
        match self {
            TransportArg::Metaroce => TransportKind::MetaRoce,
            TransportArg::Rocev2 => TransportKind::RoceV2,
            TransportArg::Irn => TransportKind::Irn,
        }
    }
}

/// MetaRoCE's per-path congestion controllers (`--cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CcArg {
    /// DCTCP-like ECN AIMD (the engine's default).
    EcnAimd,
    /// Swift-like delay-based AIMD.
    Swift,
}

impl CcArg {
    fn algorithm(self) -> CcAlgorithm {
        match self {
            CcArg::EcnAimd => CcAlgorithm::EcnAimd(EcnAimdParams::default()),
            CcArg::Swift => CcAlgorithm::Swift(SwiftParams::default()),
        }
    }
}

/// The congestion-control options of `hotlink` and `incast`.
#[derive(Args, Debug)]
struct CcArgs {
    /// MetaRoCE's per-path congestion controllers, comma separated: one
    /// MetaRoCE row per controller, side by side (the baselines run DCQCN).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [CcArg::EcnAimd])]
    cc: Vec<CcArg>,
    /// MetaRoCE senders ignore the receiver's fair-share rate hint, so only
    /// the congestion controllers and windows limit them.
    #[arg(long)]
    no_rate_hint: bool,
}

impl CcArgs {
    /// The runs to make: (transport, MetaRoCE options); MetaRoCE once per
    /// controller, each baseline once.
    fn runs(&self, kinds: &[TransportKind]) -> Vec<(TransportKind, MetaRoceOptions)> {
        let mut ccs = self.cc.clone();
        ccs.dedup();
        kinds
            .iter()
            .flat_map(|&kind| {
                let ccs = if kind == TransportKind::MetaRoce {
                    &ccs[..]
                } else {
                    &ccs[..1]
                };
                ccs.iter().map(move |cc| {
                    let options = MetaRoceOptions {
                        cc: cc.algorithm(),
                        honor_rate_hint: !self.no_rate_hint,
                    };
                    (kind, options)
                })
            })
            .collect()
    }
}

/// The controller a row reports: MetaRoCE's, or none for a baseline.
fn cc_name(kind: TransportKind, metaroce: &MetaRoceOptions) -> Option<String> {
    (kind == TransportKind::MetaRoce).then(|| metaroce.cc.name().to_string())
}

/// A table's `cc` cell: MetaRoCE's controller (and whether it ignored the
/// rate hint), or the baselines' DCQCN.
fn cc_column(cc: &Option<String>, rate_hint: bool) -> String {
    match cc {
        Some(cc) if rate_hint => cc.clone(),
        Some(cc) => format!("{cc}, no rate hint"),
        None => "dcqcn".to_string(),
    }
}

/// Options every scenario takes.
#[derive(Args, Debug)]
pub(crate) struct CommonArgs {
    /// Print one JSON document instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    /// Random seed (same seed, same run).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Transports to run (default: all three).
    #[arg(long = "transport", value_enum, value_delimiter = ',')]
    pub(crate) transports: Vec<TransportArg>,
}

impl CommonArgs {
    pub(crate) fn kinds(&self) -> Vec<TransportKind> {
        if self.transports.is_empty() {
            TransportKind::ALL.to_vec()
        } else {
            let mut kinds: Vec<TransportKind> = self.transports.iter().map(|t| t.kind()).collect();
            kinds.dedup();
            kinds
        }
    }
}

/// Runs `metaroce sim`.
pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    match &args.scenario {
        Scenario::Loss(a) => loss(a),
        Scenario::Failover(a) => failover(a),
        Scenario::Hotlink(a) => hotlink(a),
        Scenario::Incast(a) => incast(a),
        Scenario::Allreduce(a) => allreduce(a),
        Scenario::ScaleAcross(a) => scale_across(a),
        Scenario::KvIncast(a) => kv_incast(a),
        Scenario::Scale(a) => scale(a),
    }
}

/// Longest simulated time a command accepts: 10 s.
const MAX_SIMULATED_PS: f64 = 1e13;

/// Converts a positive, finite duration in `unit`s to simulated time.
pub(crate) fn sim_time(name: &str, value: f64, ps_per_unit: f64) -> anyhow::Result<SimTime> {
    ensure!(
        value.is_finite() && value > 0.0 && value * ps_per_unit <= MAX_SIMULATED_PS,
        "--{name} must be a positive duration of at most 10 s (got {value})"
    );
    Ok((value * ps_per_unit).round() as SimTime)
}

pub(crate) fn check_losses(losses: &[f64]) -> anyhow::Result<()> {
    ensure!(!losses.is_empty(), "--loss needs at least one value");
    for &p in losses {
        ensure!(
            (0.0..1.0).contains(&p),
            "--loss {p} is not a probability in [0, 1): give fractions, e.g. 0.01 for 1%"
        );
    }
    Ok(())
}

pub(crate) fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// Simulated events per CPU second (the simulator is single-threaded).
pub(crate) fn events_per_cpu_second(events: u64, cpu: f64) -> f64 {
    round(events as f64 / cpu.max(1e-6), 0)
}

/// Runs `f`, returning its result and the CPU seconds it took.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let before = cpu_seconds();
    let out = f();
    (out, cpu_seconds() - before)
}
