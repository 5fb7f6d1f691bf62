//! `metaroce device`: the simulated board as a vfio-user device process, and a probe
//! that measures one (`docs/device.md`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, Subcommand};
use metaroce_driver::device::board::{BoardCounter, BoardInfo};
use metaroce_driver::device::{Device, VfioUserDevice};
use metaroce_sim_tb::device_server::{DeviceServer, ServerConfig};

/// `metaroce device`.
#[derive(Args, Debug)]
pub struct DeviceArgs {
    #[command(subcommand)]
    command: DeviceCommand,
}

#[derive(Subcommand, Debug)]
enum DeviceCommand {
    /// Serves the Verilated NIC (the `NicDevice` top: BAR0, queues in host memory, DMA,
    /// MSI-X) as a PCI device over vfio-user on a Unix socket, its MAC port bridged to a
    /// UDP socket. The host driver (`VfioUserDevice::connect`) or a VMM attaches to the
    /// socket; one client at a time. SIGINT or SIGTERM ends it, removing the socket and
    /// printing its counters.
    #[command(
        after_help = "Regions: 0 = BAR0 (64 KiB, docs/regmap.md), 2 = board information \
(read-only: the UDP address below, MAC addresses, counters), 4 = MSI-X BAR, 7 = PCI \
config space. Interrupts: MSI-X, 3 vectors. DMA: the client's memory is mapped from the \
file descriptors of its DMA_MAP messages (memfds sealed against shrinking). See \
docs/device.md.\n\nExample:\n  metaroce device serve --socket /tmp/nic0.sock --udp 127.0.0.1:0"
    )]
    Serve(ServeArgs),
    /// Measures a running device process: the clock cycles per second the free-running
    /// model reaches (idle, then while serving), and the round trip of a BAR0 read
    /// through vfio-user.
    Probe(ProbeArgs),
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// The Unix socket to listen on (a stale socket left by a dead process is replaced).
    #[arg(long)]
    socket: PathBuf,
    /// The MAC port's UDP address: the NIC's own IP address and port (port 0: the
    /// kernel picks one; it is printed and readable in the board information).
    #[arg(long, default_value = "127.0.0.1:0")]
    udp: SocketAddr,
    /// Print every refused request (hostile or malformed input) on stderr.
    #[arg(long)]
    verbose: bool,
    /// Print the counters on exit as one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct ProbeArgs {
    /// The device process's socket.
    #[arg(long)]
    socket: PathBuf,
    /// BAR0 reads to time.
    #[arg(long, default_value_t = 20_000)]
    reads: usize,
    /// Seconds the model is watched running free (no requests) first.
    #[arg(long, default_value_t = 2.0)]
    idle_secs: f64,
    /// One JSON document on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `metaroce device`.
pub fn run(args: &DeviceArgs) -> anyhow::Result<()> {
    match &args.command {
        DeviceCommand::Serve(a) => serve(a),
        DeviceCommand::Probe(a) => probe(a),
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs a handler that only stores to an atomic (async-signal-safe).
        let prev = unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
        anyhow::ensure!(prev != libc::SIG_ERR, "cannot install a signal handler");
    }
    let mut cfg = ServerConfig::new(&args.socket, args.udp);
    cfg.verbose = args.verbose;
    let server = DeviceServer::start(cfg)
        .with_context(|| format!("starting the device process on {}", args.socket.display()))?;
    let info = server.board_info();
    eprintln!(
        "metaroce device: NicDevice64 served over vfio-user on {}\n\
         metaroce device: MAC port bridged to UDP {} (MAC {}, next hop {})\n\
         metaroce device: attach with VfioUserDevice::connect(\"{}\"); Ctrl-C ends it",
        server.socket().display(),
        server.udp_addr(),
        mac(&info.mac),
        mac(&info.peer_mac),
        server.socket().display(),
    );
    while !STOP.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let t = Instant::now();
    let end = server.stop();
    eprintln!(
        "metaroce device: stopped in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    print_counters(&end, args.json)
}

fn mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn print_counters(info: &BoardInfo, json: bool) -> anyhow::Result<()> {
    if json {
        let map: serde_json::Map<String, serde_json::Value> = BoardCounter::ALL
            .iter()
            .map(|&c| (c.name().to_owned(), info.counter(c).into()))
            .collect();
        println!("{}", serde_json::to_string_pretty(&map)?);
    } else {
        let mut t = comfy_table::Table::new();
        t.set_header(["counter", "value"]);
        for c in BoardCounter::ALL {
            t.add_row([c.name().to_owned(), info.counter(c).to_string()]);
        }
        println!("{t}");
    }
    Ok(())
}

fn probe(args: &ProbeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.reads > 0, "--reads must be at least 1");
    anyhow::ensure!(
        args.idle_secs > 0.0 && args.idle_secs.is_finite(),
        "--idle-secs must be positive"
    );
    let mut dev = VfioUserDevice::connect(&args.socket)?;
    // Free-running: the cycle counter over a pause with no requests.
    let idle0 = dev.board_info()?;
    let t_idle = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(args.idle_secs));
    let before = dev.board_info()?;
    let idle_cycles = before.counter(BoardCounter::Cycles) - idle0.counter(BoardCounter::Cycles);
    let idle_rate = idle_cycles as f64 / t_idle.elapsed().as_secs_f64();
    // The model's evaluation time per cycle (sampled by the device process) and the
    // share of the board thread's time it is.
    let eval_ns = before.counter(BoardCounter::ModelNs) - idle0.counter(BoardCounter::ModelNs);
    let eval_ns_per_cycle = eval_ns as f64 / idle_cycles.max(1) as f64;
    let eval_share = eval_ns as f64 / t_idle.elapsed().as_nanos().max(1) as f64;
    let t0 = Instant::now();
    let mut rtt = Vec::with_capacity(args.reads);
    for _ in 0..args.reads {
        let t = Instant::now();
        dev.read32(0)?;
        rtt.push(t.elapsed());
    }
    let after = dev.board_info()?;
    let secs = t0.elapsed().as_secs_f64();
    let cycles = after.counter(BoardCounter::Cycles) - before.counter(BoardCounter::Cycles);
    rtt.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let pct = |p: f64| us(rtt[((rtt.len() - 1) as f64 * p) as usize]);
    let mean = rtt.iter().map(|d| us(*d)).sum::<f64>() / rtt.len() as f64;
    // The cycles counter is published every 1,024 cycles, so a run of many reads makes
    // its granularity negligible.
    let rate = cycles as f64 / secs;
    if args.json {
        let doc = serde_json::json!({
            "socket": args.socket,
            "reads": args.reads,
            "bar_read_rtt_us": {"mean": mean, "p50": pct(0.5), "p99": pct(0.99), "max": pct(1.0)},
            "cycles": cycles,
            "seconds": secs,
            "cycles_per_second": rate,
            "idle_cycles_per_second": idle_rate,
            "eval_ns_per_cycle": eval_ns_per_cycle,
            "eval_share_of_board_thread": eval_share,
            "cycles_per_bar_read": cycles as f64 / args.reads as f64,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "{}: {} BAR0 reads in {secs:.2} s: round trip mean {mean:.1} µs, p50 {:.1} µs, \
             p99 {:.1} µs, max {:.1} µs",
            dev.describe(),
            args.reads,
            pct(0.5),
            pct(0.99),
            pct(1.0)
        );
        println!(
            "model: {idle_rate:.0} cycles/s running free ({eval_ns_per_cycle:.0} ns of \
             evaluation per cycle, {:.0} % of the board thread); {cycles} cycles in {secs:.2} s \
             = {rate:.0} cycles/s while serving the reads ({:.1} cycles per BAR read)",
            100.0 * eval_share,
            cycles as f64 / args.reads as f64
        );
    }
    Ok(())
}
