//! `metaroce hdl run`: two hardware NICs (Verilated `NicCore`s, each driven
//! by its firmware, the engine on the hardware data path) on a simulated
//! multipath Ethernet fabric, with Verbs traffic both ways and every byte
//! and completion verified (`metaroce_sim_tb::hw_pair`).

use anyhow::bail;
use clap::Args;
use metaroce_sim_tb::SimError;
use metaroce_sim_tb::hw_pair::{PairConfig, PairReport, run_pair};
use metaroce_sim_tb::traffic::TrafficCounters;
use serde::Serialize;

use crate::report;

/// `metaroce hdl run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Messages to complete (both directions together).
    #[arg(long, default_value_t = 2_000)]
    messages: usize,
    /// Largest message in bytes (1 to 1 MiB); sizes are log-uniform from 1
    /// byte up to it unless --fixed-size.
    #[arg(long, default_value_t = 64 << 10, value_parser = clap::value_parser!(u32).range(1..=1 << 20))]
    size: u32,
    /// Every message is --size bytes.
    #[arg(long)]
    fixed_size: bool,
    /// Fabric paths (ECMP by a hash of the UDP source port).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    paths: u16,
    /// Loss probability of every path.
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// Duplication probability of every path.
    #[arg(long, default_value_t = 0.0)]
    dup: f64,
    /// ECN-marking probability of ECN-capable frames.
    #[arg(long, default_value_t = 0.0)]
    ecn: f64,
    /// One-way delay of a path, ns.
    #[arg(long, default_value_t = 2_000)]
    delay_ns: u64,
    /// Random extra delay per frame up to this, ns (reorders frames).
    #[arg(long, default_value_t = 1_000)]
    jitter_ns: u64,
    /// Path i is this much longer than path i-1, ns (spraying reorders).
    #[arg(long, default_value_t = 500)]
    path_spread_ns: u64,
    /// Hostile frames injected per frame sent (replays, bit flips,
    /// truncations, unknown QPs).
    #[arg(long, default_value_t = 0.0)]
    hostile: f64,
    /// Streams per connection (SEND and WRITE_IMM use 0–3).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=16))]
    streams: u16,
    /// Also run the same traffic without loss, duplication or ECN marks and
    /// report goodput relative to it.
    #[arg(long)]
    baseline: bool,
    /// Seed of the traffic, fabric and engines.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One JSON document on stdout instead of a table.
    #[arg(long)]
    json: bool,
}

/// What `metaroce hdl run --json` prints.
#[derive(Serialize)]
struct RunReport {
    paths: u16,
    loss: f64,
    size: u32,
    #[serde(flatten)]
    run: PairReport,
    /// Goodput of the lossless run of the same traffic (with --baseline).
    lossless_goodput_gbps_sim: Option<f64>,
    /// `goodput_gbps_sim` over the lossless run's (with --baseline).
    goodput_vs_lossless: Option<f64>,
}

/// Runs `metaroce hdl run`.
pub fn run(a: &RunArgs) -> anyhow::Result<()> {
    for (name, p) in [
        ("--loss", a.loss),
        ("--dup", a.dup),
        ("--ecn", a.ecn),
        ("--hostile", a.hostile),
    ] {
        if !(0.0..=1.0).contains(&p) {
            bail!("{name} must be a probability between 0 and 1, not {p}");
        }
    }
    let cfg = PairConfig {
        messages: a.messages,
        max_size: a.size,
        fixed_size: a.fixed_size,
        streams: a.streams,
        paths: a.paths.into(),
        loss: a.loss,
        dup: a.dup,
        ecn_mark: a.ecn,
        delay_ns: a.delay_ns,
        jitter_ns: a.jitter_ns,
        path_spread_ns: a.path_spread_ns,
        hostile: a.hostile,
        seed: a.seed,
        ..PairConfig::default()
    };
    let lossless = if a.baseline {
        let clean = PairConfig {
            loss: 0.0,
            dup: 0.0,
            ecn_mark: 0.0,
            hostile: 0.0,
            ..cfg.clone()
        };
        Some(pair(&clean)?.goodput_gbps_sim)
    } else {
        None
    };
    let run = pair(&cfg)?;
    let out = RunReport {
        paths: a.paths,
        loss: a.loss,
        size: a.size,
        goodput_vs_lossless: lossless.map(|l| run.goodput_gbps_sim / l),
        lossless_goodput_gbps_sim: lossless,
        run,
    };
    report::emit(a.json, &out, || vec![table(&out)])?;
    if !out.run.finished {
        bail!("the run stopped before every message completed");
    }
    Ok(())
}

fn pair(cfg: &PairConfig) -> anyhow::Result<PairReport> {
    match run_pair(cfg) {
        Ok(r) => Ok(r),
        Err(SimError::VerilatorMissing) => bail!(super::hdl::NO_MODELS),
        Err(e) => bail!("{e}"),
    }
}

/// The table rows of the checked traffic, shared with `metaroce hdl interop`.
pub(crate) fn traffic_rows(t: &TrafficCounters, finished: bool) -> Vec<(&'static str, String)> {
    let [write, write_imm, send, read] = t.messages_by_opcode;
    vec![
        (
            "messages completed",
            format!(
                "{} (WRITE {write}, WRITE_IMM {write_imm}, SEND {send}, READ {read}){}",
                t.messages,
                if finished { "" } else { " (stopped early)" }
            ),
        ),
        (
            "bytes verified / wrong",
            format!("{} / {}", t.bytes_verified, t.bytes_wrong),
        ),
        (
            "completions ok / error",
            format!("{} / {}", t.completions_ok, t.completions_error),
        ),
        ("QP errors", t.qp_errors.to_string()),
        (
            "FETCH_ADDs (not exactly once)",
            format!("{} ({})", t.fetch_adds, t.atomic_errors),
        ),
    ]
}

fn table(r: &RunReport) -> comfy_table::Table {
    let p = &r.run;
    let mut t = report::table(["two RTL NICs", "value"]);
    let pct = |a: u64, b: u64| format!("{:.2} %", 100.0 * a as f64 / (a + b).max(1) as f64);
    let mut rows = traffic_rows(&p.traffic, p.finished);
    rows.extend([
        (
            "goodput (simulated time)",
            format!("{:.3} Gbit/s", p.goodput_gbps_sim),
        ),
        (
            "vs lossless",
            r.goodput_vs_lossless
                .map_or("(run with --baseline)".into(), |g| format!("{g:.3}")),
        ),
        (
            "data packets placed by the RTL",
            format!(
                "{} ({} of data packets)",
                p.rtl_placed_packets,
                pct(p.rtl_placed_packets, p.firmware_packets)
            ),
        ),
        (
            "data packets the firmware handled",
            p.firmware_packets.to_string(),
        ),
        (
            "ACKs generated by the RTL / firmware",
            format!("{} / {}", p.rtl_acks, p.firmware_acks),
        ),
        (
            "received ACKs applied to the TX table by the RTL",
            format!(
                "{} ({} of ACKs and NACKs handed up)",
                p.rtl_acks_applied,
                pct(
                    p.rtl_acks_applied,
                    p.acks_to_firmware.saturating_sub(p.rtl_acks_applied)
                )
            ),
        ),
        (
            "TX table operations by the firmware",
            p.table_ops.to_string(),
        ),
        ("descriptors", p.descriptors.to_string()),
        (
            "losses found from TX table fates (SACK gaps) / retransmissions",
            format!(
                "{} ({}) / {}",
                p.losses_detected, p.sack_losses, p.retransmits
            ),
        ),
        (
            "fabric frames / lost / duplicated / CE",
            format!(
                "{} / {} / {} / {}",
                p.wire_frames, p.wire_lost, p.wire_duplicated, p.wire_ce_marked
            ),
        ),
        ("hostile frames injected", p.hostile_frames.to_string()),
        (
            "RTL/engine disagreements",
            p.mismatches_vs_engine.to_string(),
        ),
        ("interface errors", p.interface_errors.to_string()),
        (
            "firmware receive queue: mismatches / cut",
            format!("{} / {}", p.fw_rx_mismatches, p.fw_rx_truncated),
        ),
        (
            "RTL drops / duplicates",
            format!("{} / {}", p.rtl_dropped, p.rtl_duplicates),
        ),
        (
            "cycles / simulated time",
            format!("{} / {:.1} µs", p.cycles, p.sim_ns as f64 / 1e3),
        ),
        (
            "wall time, cycles/s, packets/s",
            format!(
                "{:.2} s, {:.0}, {:.0}",
                p.wall_seconds, p.cycles_per_second, p.packets_per_second
            ),
        ),
    ]);
    for (k, v) in rows {
        t.add_row([k.to_string(), v]);
    }
    t
}
