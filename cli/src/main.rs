//! `metaroce`: the one command users run.
//!
//! Every command that measures prints a human table, or with `--json` one JSON
//! document on stdout and nothing else there. Progress goes to stderr and is
//! hidden when stderr is not a terminal.

mod bench;
mod compliance;
mod demo;
mod device;
mod fabric;
mod hdl;
mod hdl_interop;
mod hdl_run;
mod report;
mod sim;
mod sim_scale;

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
    /// Relay emulating a lossy multipath fabric between soft NICs (commands on stdin).
    Fabric(fabric::FabricArgs),
    /// Discrete-event simulation of MetaRoCE, RoCEv2 and IRN side by side: loss, failover, hotlink, incast, allreduce.
    Sim(sim::SimArgs),
    /// The NIC RTL: emit Verilog, or lint, synthesise and check it against the reference.
    Hdl(hdl::HdlArgs),
    /// The simulated board as a vfio-user device process (serve), and a probe that measures one.
    Device(device::DeviceArgs),
    /// Black-box conformance suite: speaks the wire protocol to an implementation and checks it against docs/spec.md.
    Compliance(compliance::ComplianceArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Fabric(args) => fabric::run(&args),
        Command::Sim(args) => sim::run(&args),
        Command::Hdl(args) => hdl::run(&args),
        Command::Compliance(args) => compliance::run_cmd(&args),
        Command::Device(args) => device::run(&args),
    }
}
