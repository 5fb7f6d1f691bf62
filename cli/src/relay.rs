//! `metaroce relay`: runs the relay that emulates a lossy multipath fabric between soft
//! NICs on real sockets, with commands read from stdin.

use std::io::BufRead;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Args;
use metaroce_relay::{HELP, LinkConfig, PathConfig, PathMap, Relay, RelayConfig};

/// Options of `metaroce relay`.
#[derive(Args, Debug)]
pub struct RelayArgs {
    /// A forwarding direction `LISTEN=FORWARD` (e.g. `127.0.0.1:7001=127.0.0.1:4791`):
    /// datagrams arriving at LISTEN go to FORWARD. Give one per direction.
    #[arg(long = "link", required = true, value_parser = parse_link)]
    links: Vec<LinkConfig>,
    /// Number of paths.
    #[arg(long, default_value_t = 8)]
    paths: usize,
    /// Rate of every path, Mbit/s (default: unlimited).
    #[arg(long)]
    rate_mbps: Option<u64>,
    /// Random loss probability of every path.
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// ECN CE-marking threshold of every path, bytes of queue.
    #[arg(long)]
    ecn_threshold: Option<usize>,
    /// Queue limit of every path, bytes.
    #[arg(long, default_value_t = 1 << 20)]
    queue_bytes: usize,
    /// Added one-way delay of every path, µs.
    #[arg(long, default_value_t = 0)]
    delay_us: u64,
    /// Duplication probability of every path.
    #[arg(long, default_value_t = 0.0)]
    duplicate: f64,
    /// Per-path override `I:key=value,...` with keys rate_mbps, loss, ecn, queue,
    /// delay_us, duplicate (e.g. `3:rate_mbps=1000,ecn=65536`). Repeatable.
    #[arg(long = "path", value_parser = parse_override)]
    overrides: Vec<(usize, Vec<(String, f64)>)>,
    /// Path `i` forwards from port BASE + i (default: kernel-chosen ports).
    #[arg(long, default_value_t = 0)]
    path_base_port: u16,
    /// Map source ports to paths with a seeded hash instead of `port % paths`.
    #[arg(long)]
    hash_seed: Option<u64>,
    /// Forward datagrams as they are, without verifying and re-sealing MetaRoCE ICRCs.
    #[arg(long)]
    no_reseal: bool,
    /// Write every forwarded datagram to this pcap file.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Also serve the command protocol on this UDP address.
    #[arg(long)]
    control: Option<SocketAddr>,
    /// Stop after this many seconds (default: at `quit` or end of input).
    #[arg(long)]
    duration: Option<f64>,
    /// Random seed of the loss generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn parse_link(s: &str) -> Result<LinkConfig, String> {
    let (l, f) = s
        .split_once('=')
        .ok_or_else(|| "expected LISTEN=FORWARD".to_string())?;
    Ok(LinkConfig {
        listen: l.parse().map_err(|e| format!("listen address: {e}"))?,
        forward_to: f.parse().map_err(|e| format!("forward address: {e}"))?,
    })
}

type Override = (usize, Vec<(String, f64)>);

fn parse_override(s: &str) -> Result<Override, String> {
    let (i, kvs) = s
        .split_once(':')
        .ok_or_else(|| "expected I:key=value,...".to_string())?;
    let i = i.parse().map_err(|e| format!("path index: {e}"))?;
    let kv = kvs
        .split(',')
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got {kv:?}"))?;
            let v = v.parse::<f64>().map_err(|e| format!("{k}: {e}"))?;
            Ok((k.to_string(), v))
        })
        .collect::<Result<_, String>>()?;
    Ok((i, kv))
}

fn apply(p: &mut PathConfig, key: &str, v: f64) -> anyhow::Result<()> {
    match key {
        "rate_mbps" => p.rate_bps = Some((v * 1e6) as u64),
        "loss" => p.loss = v,
        "ecn" => p.ecn_threshold_bytes = Some(v as usize),
        "queue" => p.queue_bytes = v as usize,
        "delay_us" => p.delay = Duration::from_secs_f64(v / 1e6),
        "duplicate" => p.duplicate = v,
        _ => bail!("unknown path key {key:?}"),
    }
    Ok(())
}

/// Runs `metaroce relay`.
pub fn run(args: &RelayArgs) -> anyhow::Result<()> {
    if args.paths == 0 {
        bail!("--paths must be at least 1");
    }
    let base = PathConfig {
        rate_bps: args.rate_mbps.map(|m| m * 1_000_000),
        queue_bytes: args.queue_bytes,
        ecn_threshold_bytes: args.ecn_threshold,
        loss: args.loss,
        delay: Duration::from_micros(args.delay_us),
        duplicate: args.duplicate,
        ..PathConfig::default()
    };
    let mut paths = vec![base; args.paths];
    for (i, kvs) in &args.overrides {
        let p = paths
            .get_mut(*i)
            .with_context(|| format!("--path {i}: no such path"))?;
        for (k, v) in kvs {
            apply(p, k, *v)?;
        }
    }
    let mut cfg = RelayConfig::new(args.links.clone(), paths);
    cfg.reseal_icrc = !args.no_reseal;
    cfg.path_base_port = args.path_base_port;
    cfg.pcap = args.pcap.clone();
    cfg.control = args.control;
    cfg.seed = args.seed;
    if let Some(seed) = args.hash_seed {
        cfg.path_map = PathMap::Hash { seed };
    }
    let relay = Relay::start(cfg)?;
    for (l, link) in relay.listen_addrs().iter().zip(&args.links) {
        println!("link {l} -> {}", link.forward_to);
    }
    for (i, p) in relay.path_addrs().iter().enumerate() {
        println!("path {i} sends from {p}");
    }
    if let Some(c) = relay.control_addr() {
        println!("control on {c}");
    }
    println!("{HELP} | quit");

    let deadline = args
        .duration
        .map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    if deadline.is_some() {
        // With a duration, stdin commands are read on a helper thread; the relay stops
        // at the deadline whatever the input does.
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        while let Some(left) = deadline.and_then(|d| d.checked_duration_since(Instant::now())) {
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if !command(&relay, &line) {
                        break;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => break,
                // Input closed: keep relaying until the deadline.
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(left);
                    break;
                }
            }
        }
    } else {
        for line in std::io::stdin().lock().lines() {
            if !command(&relay, &line?) {
                break;
            }
        }
    }
    print!("{}", relay.execute("stats")?);
    relay.stop()?;
    Ok(())
}

/// Runs one stdin line; false on `quit`.
fn command(relay: &metaroce_relay::RelayHandle, line: &str) -> bool {
    let line = line.trim();
    match line {
        "" => true,
        "quit" | "exit" => false,
        _ => {
            match relay.execute(line) {
                Ok(reply) => println!("{}", reply.trim_end()),
                Err(e) => println!("error: {e}"),
            }
            true
        }
    }
}
