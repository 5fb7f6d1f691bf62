//! `metaroce`: the one command users run.
//!
//! Every command that measures prints a human table, or with `--json` one JSON
//! document on stdout and nothing else there. Progress goes to stderr and is
//! hidden when stderr is not a terminal.

mod bench;
mod compliance;
mod cpu;
mod demo;
#[cfg(feature = "hdl")]
mod device;
#[cfg(feature = "hdl")]
mod hdl;
#[cfg(feature = "hdl")]
mod hdl_bitstream;
#[cfg(feature = "hdl")]
mod hdl_globals;
#[cfg(feature = "hdl")]
mod hdl_interop;
#[cfg(feature = "hdl")]
mod hdl_run;
#[cfg(not(feature = "hdl"))]
mod lean;
mod relay;
mod report;
mod sim;
mod traffic;

use clap::{Parser, Subcommand};

/// MetaRoCE: RDMA over lossy, reordering Ethernet, with all intelligence in the NIC.
#[derive(Parser, Debug)]
#[command(name = "metaroce", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Two endpoints over a lossy 8-path fabric moving verified RDMA traffic, with a summary.
    Demo(demo::DemoArgs),
    /// ib_write_bw-style benchmark of two soft NICs: goodput, message rate, CPU per GB.
    Bench(bench::BenchArgs),
    /// Relay emulating a lossy multipath fabric between soft NICs (commands on stdin); formerly `fabric`.
    #[command(alias = "fabric")]
    Relay(relay::RelayArgs),
    /// Discrete-event simulation of MetaRoCE, RoCEv2 and IRN side by side: loss, failover, hotlink, incast, allreduce.
    Sim(sim::SimArgs),
    /// The NIC RTL: emit Verilog, or lint, synthesise and check it against the reference.
    #[cfg(feature = "hdl")]
    Hdl(hdl::HdlArgs),
    /// The NIC RTL (not in this build: it was built without the `hdl` feature).
    #[cfg(not(feature = "hdl"))]
    Hdl(lean::Unavailable),
    /// The simulated board as a vfio-user device process (serve), and a probe that measures one.
    #[cfg(feature = "hdl")]
    Device(device::DeviceArgs),
    /// The simulated board (not in this build: it was built without the `hdl` feature).
    #[cfg(not(feature = "hdl"))]
    Device(lean::Unavailable),
    /// Black-box conformance suite: speaks the wire protocol to an implementation and checks it against docs/spec.md.
    Compliance(compliance::ComplianceArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Relay(args) => {
            if std::env::args().nth(1).as_deref() == Some("fabric") {
                eprintln!(
                    "note: `metaroce fabric` is now `metaroce relay`; the old name will be removed"
                );
            }
            relay::run(&args)
        }
        Command::Sim(args) => sim::run(&args),
        #[cfg(feature = "hdl")]
        Command::Hdl(args) => hdl::run(&args),
        #[cfg(not(feature = "hdl"))]
        Command::Hdl(_) => lean::unavailable("hdl"),
        Command::Compliance(args) => compliance::run_cmd(&args),
        #[cfg(feature = "hdl")]
        Command::Device(args) => device::run(&args),
        #[cfg(not(feature = "hdl"))]
        Command::Device(_) => lean::unavailable("device"),
    }
}
