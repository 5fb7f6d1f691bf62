//! The `metaroce hdl interop` command: its arguments, its JSON and its table.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use anyhow::bail;
use clap::Args;
use metaroce_sim_tb::SimError;
use serde::Serialize;

use super::{InteropConfig, InteropReport, run_interop};
use crate::report;

/// `metaroce hdl interop`.
#[derive(Args, Debug)]
pub struct InteropArgs {
    /// Messages to complete (both directions together).
    #[arg(long, default_value_t = 200)]
    messages: usize,
    /// Largest message in bytes (1 to 1 MiB); sizes are log-uniform from 1
    /// byte up to it.
    #[arg(long, default_value_t = 16 << 10, value_parser = clap::value_parser!(u32).range(1..=1 << 20))]
    size: u32,
    /// Go through the relay (ICRC verified and re-sealed); without it the
    /// NICs talk directly.
    #[arg(long)]
    relay: bool,
    /// Relay paths (with --relay).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    paths: u16,
    /// Loss probability of every relay path (with --relay).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// The RTL NIC's loopback IPv4 address (127.0.0.1 makes every RTL ACK
    /// collide with a port of its peer; see the docs).
    #[arg(long, default_value = "127.0.0.2")]
    rtl_ip: Ipv4Addr,
    /// Post each receive only after the SEND or WRITE_IMM that consumes it
    /// has been refused for want of it, so receivers NACK first (RNR) and
    /// senders retry.
    #[arg(long)]
    late_receives: bool,
    /// A quarter of the WRITEs are FETCH_ADDs on a counter of the peer's,
    /// each checked to execute exactly once.
    #[arg(long)]
    atomics: bool,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 60)]
    max_seconds: u64,
    /// Seed of the traffic, the relay and the engines.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One JSON document on stdout instead of a table.
    #[arg(long)]
    json: bool,
}

/// What `metaroce hdl interop --json` prints.
#[derive(Serialize)]
struct CliReport {
    mode: &'static str,
    paths: Option<u16>,
    loss: Option<f64>,
    size: u32,
    #[serde(flatten)]
    run: InteropReport,
}

/// Runs `metaroce hdl interop`.
pub fn run(a: &InteropArgs) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&a.loss) {
        bail!(
            "--loss must be a probability between 0 and 1, not {}",
            a.loss
        );
    }
    if !a.rtl_ip.is_loopback() {
        bail!("--rtl-ip must be a loopback address, not {}", a.rtl_ip);
    }
    let cfg = InteropConfig {
        messages: a.messages,
        max_size: a.size,
        relay: a.relay,
        paths: a.paths,
        loss: a.loss,
        rtl_ip: IpAddr::V4(a.rtl_ip),
        late_receives: a.late_receives,
        atomics: a.atomics,
        max_time: Duration::from_secs(a.max_seconds),
        max_cycles: u64::MAX,
        seed: a.seed,
    };
    let run = match run_interop(&cfg) {
        Ok(r) => r,
        Err(e) if e.downcast_ref() == Some(&SimError::VerilatorMissing) => {
            bail!(crate::hdl::NO_MODELS)
        }
        Err(e) => return Err(e),
    };
    let out = CliReport {
        mode: if a.relay { "relay" } else { "direct" },
        paths: a.relay.then_some(a.paths),
        loss: a.relay.then_some(a.loss),
        size: a.size,
        run,
    };
    report::emit(a.json, &out, || vec![table(&out)])?;
    let r = &out.run;
    if !r.finished {
        bail!("the run stopped before every message completed");
    }
    if r.traffic.bytes_wrong > 0 || r.traffic.completions_error > 0 || r.traffic.qp_errors > 0 {
        bail!("wrong bytes, failed completions or QP errors");
    }
    Ok(())
}

fn table(r: &CliReport) -> comfy_table::Table {
    let p = &r.run;
    let mode = match (r.paths, r.loss) {
        (Some(n), Some(l)) => format!("RTL NIC ↔ relay ({n} paths, loss {l}) ↔ soft NIC"),
        _ => "RTL NIC ↔ soft NIC".to_string(),
    };
    let mut t = report::table([mode, "value".to_string()]);
    let map = |m: &BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            let v: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
            v.join(", ")
        }
    };
    let b = &p.bridge;
    let mut rows = crate::hdl_run::traffic_rows(&p.traffic, p.finished);
    rows.extend([
        ("goodput", format!("{:.1} Mbit/s", p.goodput_mbps)),
        (
            "RTL: placed / firmware data packets",
            format!("{} / {}", p.rtl.placed, p.rtl.firmware_packets),
        ),
        (
            "RTL: ACK frames RTL / firmware frames",
            format!("{} / {}", p.rtl.ack_frames, p.rtl.firmware_frames),
        ),
        (
            "RTL: descriptors / retransmissions",
            format!("{} / {}", p.rtl.descriptors, p.rtl.retransmits),
        ),
        ("RTL: verdicts", map(&p.rtl.verdicts)),
        ("RTL: front-end drops", map(&p.rtl.eth_drops)),
        ("RTL: firmware drops", map(&p.rtl.firmware_drops)),
        (
            "soft: data sent / retransmissions / duplicates",
            format!(
                "{} / {} / {}",
                p.soft.data_sent, p.soft.retransmits, p.soft.duplicates
            ),
        ),
        ("soft: drops", map(&p.soft.drops)),
        (
            "bridge: sent / received / kernel receive-buffer drops",
            format!(
                "{} / {} / {}",
                b.frames_sent, b.datagrams_received, b.kernel_drops
            ),
        ),
        (
            "bridge: bind failures / bad checksums / wrong source / not UDP / send errors",
            format!(
                "{} / {} / {} / {} / {}",
                b.bind_failures, b.bad_checksums, b.wrong_source, b.non_udp_frames, b.send_errors
            ),
        ),
    ]);
    if let Some(relay) = &p.relay {
        rows.push((
            "relay: forwarded / lost / queue drops / bad ICRC",
            format!(
                "{} / {} / {} / {}",
                relay.forwarded, relay.dropped_loss, relay.dropped_queue, relay.bad_icrc
            ),
        ));
    }
    rows.push((
        "wall time, cycles/s",
        format!("{:.2} s, {:.0}", p.wall_seconds, p.cycles_per_second),
    ));
    let disagreements = if p.disagreements.is_empty() {
        "none".to_string()
    } else {
        p.disagreements.join("\n")
    };
    rows.push(("disagreements", disagreements));
    for (k, v) in rows {
        t.add_row([k.to_string(), v]);
    }
    t
}
