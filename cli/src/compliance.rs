//! `metaroce compliance`: the black-box conformance suite (`metaroce-compliance`)
//! against an implementation under test, and the control agent that lets the suite
//! drive a soft NIC in another process.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;

use anyhow::{Context as _, anyhow, bail};
use clap::Args;
use metaroce_compliance::remote::{RemoteTarget, serve};
use metaroce_compliance::soft::SoftTarget;
use metaroce_compliance::target::Target;
use metaroce_compliance::{RunOptions, run};
#[cfg(feature = "hdl")]
use metaroce_sim_tb::compliance_target::HwTarget;

/// Options of `metaroce compliance`.
#[derive(Args, Debug)]
pub struct ComplianceArgs {
    /// Implementation under test: `soft` (a fresh soft NIC on loopback for each
    /// case), `device` (a fresh simulated hardware NIC for each case: the
    /// Verilated `NicCore` with its firmware on UDP sockets, on --device-ip), or
    /// `udp://HOST:PORT`, the MetaRoCE UDP address of an endpoint set up through
    /// the control agent given with --agent.
    #[arg(long, default_value = "soft")]
    target: String,
    /// TCP address of the control agent of a `udp://` target (docs/compliance.md).
    #[arg(long)]
    agent: Option<String>,
    /// With --target device: the simulated NIC's IPv4 address (a loopback
    /// address other than the suite's 127.0.0.1, so its source ports are its own).
    #[arg(long, default_value = "127.0.0.2")]
    device_ip: std::net::IpAddr,
    /// Print one JSON document (passed, failed, skipped, failures with their spec
    /// sections, every case) on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write JUnit XML to this file.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Run only cases whose name contains this text (repeatable).
    #[arg(long)]
    filter: Vec<String>,
    /// Cases run at once, each with its own QPs (default: 8 on `soft`, 2 on
    /// `device` (each case steps its own Verilated model), 1 on a `udp://`
    /// target, whose cases share one device and its counters).
    #[arg(long)]
    parallel: Option<usize>,
    /// List the cases with their spec sections and exit.
    #[arg(long)]
    list: bool,
    /// Instead of testing: run a soft NIC on --bind and serve the control agent for it
    /// on this TCP address, until killed.
    #[arg(long, value_name = "ADDR")]
    serve: Option<String>,
    /// With --serve: the soft NIC's MetaRoCE UDP address.
    #[arg(long, default_value = "127.0.0.1:4798")]
    bind: String,
}

fn addr(s: &str) -> anyhow::Result<SocketAddr> {
    s.to_socket_addrs()
        .with_context(|| format!("address {s}"))?
        .next()
        .ok_or_else(|| anyhow!("address {s} resolves to nothing"))
}

/// Runs the command; the exit status is non-zero when a case failed.
pub fn run_cmd(args: &ComplianceArgs) -> anyhow::Result<()> {
    if args.list {
        let mut list = String::new();
        for c in metaroce_compliance::cases::all() {
            list.push_str(&format!("§{:<18} {:<42} {}\n", c.spec, c.name, c.title));
        }
        return print_out(&list);
    }
    if let Some(listen) = &args.serve {
        let device = SoftTarget::shared(addr(&args.bind)?).map_err(|e| anyhow!(e))?;
        let listener = TcpListener::bind(addr(listen)?).context("binding the agent")?;
        eprintln!(
            "soft NIC on udp://{}, control agent on {}",
            device
                .shared_address()
                .map_or("?".into(), |a| a.to_string()),
            listener.local_addr()?
        );
        serve(listener, &device)?;
        return Ok(());
    }
    let (target, parallel): (Box<dyn Target>, usize) = match args.target.as_str() {
        "soft" => (Box::new(SoftTarget::new("127.0.0.1".parse()?)), 8),
        #[cfg(feature = "hdl")]
        "device" => (Box::new(HwTarget::new(args.device_ip)), 2),
        #[cfg(not(feature = "hdl"))]
        "device" => {
            bail!("--target device needs the `hdl` feature this metaroce was built without")
        }
        t if t.starts_with("udp://") => {
            let udp = addr(&t["udp://".len()..])?;
            let Some(agent) = &args.agent else {
                bail!("{t} needs --agent HOST:PORT, the control agent that sets the device up")
            };
            let agent = addr(agent)?;
            (Box::new(RemoteTarget { udp, agent }), 1)
        }
        t => bail!("unknown target {t:?}: use soft, device or udp://HOST:PORT"),
    };
    let opts = RunOptions {
        filter: args.filter.clone(),
        parallel: args.parallel.unwrap_or(parallel),
        local_ip: if args.target == "soft" || args.target == "device" {
            "127.0.0.1".parse()?
        } else {
            local_ip_towards(&args.target["udp://".len()..])?
        },
    };
    let report = run(target.as_ref(), &opts);
    if let Some(path) = &args.junit {
        std::fs::write(path, report.to_junit())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        print_out(&format!("{}\n", report.to_json()))?;
    } else {
        print_out(&report.to_table())?;
    }
    if report.failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// Writes `text` to stdout; a reader that went away (`| head`) is not an error.
fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// The local address the kernel would use to reach `target`.
fn local_ip_towards(target: &str) -> anyhow::Result<std::net::IpAddr> {
    let t = addr(target)?;
    let any: SocketAddr = if t.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let s = std::net::UdpSocket::bind(any)?;
    s.connect(t)?;
    Ok(s.local_addr()?.ip())
}
