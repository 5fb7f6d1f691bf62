//! `metaroce hdl`: the NIC RTL. `emit` writes the Verilog of the blocks
//! ([`Block`]); `report` lints every block with Verilator, synthesises the
//! whole NIC (`NicCore`, or one block, [`Synth`]) with yosys (ECP5 cells)
//! at both widths, and runs the
//! Verilated RTL at both widths against its references: the receive core
//! against the engine (verdicts, DMA writes, ACKs, counters), the parser
//! against `metaroce-proto`, the Ethernet front end against `etherparse`,
//! the TX frame builder against the engine's datagrams, the per-path TX
//! table against the engine's `TxPath`, and the whole NIC (`NicCore`, 64
//! bits) with receive and transmit traffic at once, and with received
//! ACKs applied to its TX table against the engine's `TxPath`.
//!
//! `report` needs Verilator (lint and simulation; the models are compiled
//! into this binary when Verilator is present at build time) and yosys
//! (synthesis, or `--synth none`). Each missing tool is named with the command
//! that installs it.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

mod report;
pub(crate) use report::NO_MODELS;

/// Widths the RTL is built and checked at.
const WIDTHS: [usize; 2] = [64, 512];

/// Path slots of the per-path TX table as emitted and checked (2 QPs × 8
/// paths).
const TX_PATH_SLOTS: usize = 16;

/// Operations the TX table check runs (it is width-independent).
const TX_PATH_OPS: u64 = 100_000;

/// An RTL block `emit` can write.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// `NicCore`: the whole NIC data path (receive side, ACK framing, TX
    /// builder, MAC TX arbiter, per-path TX table).
    NicCore,
    /// `RxCore`: parser, ICRC, QP/MR tables and checks, placement, path
    /// tracker, ACK generator.
    RxCore,
    /// `RxEth`: Ethernet/IPv4/IPv6/UDP front end.
    RxEth,
    /// `NicRx`: `RxEth` then `RxCore`, Ethernet frames in.
    NicRx,
    /// `TxBuild`: descriptor to Ethernet frame, source-port rewrite, ICRC.
    TxBuild,
    /// The per-path TX table (16 slots; width-independent).
    TxPath,
    /// `NicDevice`: the host interface (BAR0, queues, DMA, interrupts)
    /// around `NicCore`.
    NicDevice,
}

impl Block {
    const ALL: [Block; 7] = [
        Block::NicDevice,
        Block::NicCore,
        Block::RxCore,
        Block::RxEth,
        Block::NicRx,
        Block::TxBuild,
        Block::TxPath,
    ];

    /// File name stem, e.g. `rx_core`.
    fn stem(self) -> &'static str {
        match self {
            Block::NicCore => "nic_core",
            Block::RxCore => "rx_core",
            Block::RxEth => "rx_eth",
            Block::NicRx => "nic_rx",
            Block::TxBuild => "tx_build",
            Block::TxPath => "tx_path",
            Block::NicDevice => "nic_device",
        }
    }

    /// The block's Verilog at `width` bits per beat.
    fn verilog(self, width: usize) -> String {
        match self {
            Block::NicCore => metaroce_hdl::nic_core_verilog(width),
            Block::RxCore => metaroce_hdl::rx_core_verilog(width),
            Block::RxEth => metaroce_hdl::rx_eth_verilog(width),
            Block::NicRx => metaroce_hdl::nic_rx_verilog(width),
            Block::TxBuild => metaroce_hdl::tx_build_verilog(width),
            Block::TxPath => metaroce_hdl::tx_path_verilog(TX_PATH_SLOTS),
            Block::NicDevice => metaroce_hdl::nic_device_verilog(width),
        }
    }

    /// `metaroce_<stem>_<width>.v`.
    fn file_name(self, width: usize) -> String {
        format!("metaroce_{}_{width}.v", self.stem())
    }
}

/// `metaroce hdl`.
#[derive(Args, Debug)]
pub struct HdlArgs {
    #[command(subcommand)]
    command: HdlCommand,
}

#[derive(Subcommand, Debug)]
enum HdlCommand {
    /// Writes the RTL as Verilog (one block to stdout, or every block at
    /// every width as files with --out).
    Emit(EmitArgs),
    /// Lint, synthesis statistics and RTL-vs-reference checks at 64 and 512 bits.
    Report(ReportArgs),
    /// Two RTL NICs, each driven by its firmware, on a lossy multipath
    /// fabric: Verbs traffic both ways, every byte verified.
    Run(crate::hdl_run::RunArgs),
    /// One RTL NIC and one soft NIC over real UDP sockets on loopback
    /// (directly or through the relay): Verbs traffic both ways, every byte
    /// verified, every drop counted.
    Interop(crate::hdl_interop::InteropArgs),
    /// Prints the device's BAR0 register map as Markdown (`docs/regmap.md`
    /// is this output), generated from the register table in `metaroce-hdl`.
    Regmap,
    /// A board's bitstream (synthesis, place and route, packing) with its
    /// resources and the achieved Fmax of every clock against its target.
    Bitstream(crate::hdl_bitstream::BitstreamArgs),
}

#[derive(Args, Debug)]
struct EmitArgs {
    /// Data width in bits per beat; without it, 64 on stdout, or both 64 and
    /// 512 with --out.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["64", "512"]))]
    width: Option<String>,
    /// Block to write; without it, `nic-core` on stdout, or every block
    /// with --out.
    #[arg(long, value_enum)]
    block: Option<Block>,
    /// Directory to write `metaroce_<block>_<width>.v` files into (created
    /// if missing).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// One JSON document on stdout instead of tables.
    #[arg(long)]
    json: bool,
    /// Random packets checked per width.
    #[arg(long, default_value_t = 100_000)]
    packets: usize,
    /// Seed of the random traffic.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// What yosys synthesises at each width: the whole NIC, one block, or
    /// nothing (the whole NIC takes tens of minutes per width on a busy
    /// 2-core machine).
    #[arg(long, value_enum, default_value_t = Synth::Core)]
    synth: Synth,
}

/// `--synth` choices.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Synth {
    /// `NicCore`: the whole NIC data path (every block below).
    Core,
    /// `RxCore`: parser, ICRC, tables, checks, placement, path tracker,
    /// ACK generator.
    RxCore,
    /// `RxEth`: the Ethernet/IP/UDP front end.
    RxEth,
    /// `TxBuild`: the TX frame builder.
    TxBuild,
    /// The per-path TX table (16 slots; the same at both widths).
    TxPath,
    /// `RxParser` with the ICRC check.
    Parser,
    /// Skip synthesis.
    None,
}

impl Synth {
    /// The Verilog yosys reads at `width`, or `None` for [`Synth::None`].
    fn verilog(self, width: usize) -> Option<String> {
        let block = match self {
            Synth::Core => Block::NicCore,
            Synth::RxCore => Block::RxCore,
            Synth::RxEth => Block::RxEth,
            Synth::TxBuild => Block::TxBuild,
            Synth::TxPath => Block::TxPath,
            Synth::Parser => return Some(metaroce_hdl::rx_parser_verilog(width)),
            Synth::None => return None,
        };
        Some(block.verilog(width))
    }
}

/// Runs `metaroce hdl`.
pub fn run(args: &HdlArgs) -> anyhow::Result<()> {
    match &args.command {
        HdlCommand::Emit(a) => emit(a),
        HdlCommand::Report(a) => report::report_all(a),
        HdlCommand::Run(a) => crate::hdl_run::run(a),
        HdlCommand::Interop(a) => crate::hdl_interop::run(a),
        HdlCommand::Bitstream(a) => crate::hdl_bitstream::run(a),
        HdlCommand::Regmap => {
            print!("{}", metaroce_hdl::host_if::regs::regmap_markdown());
            Ok(())
        }
    }
}

fn emit(args: &EmitArgs) -> anyhow::Result<()> {
    let width: Option<usize> = args.width.as_deref().map(str::parse).transpose()?;
    let Some(dir) = &args.out else {
        let block = args.block.unwrap_or(Block::NicCore);
        print!("{}", block.verilog(width.unwrap_or(64)));
        return Ok(());
    };
    let widths = width.map_or(WIDTHS.to_vec(), |w| vec![w]);
    let blocks = args.block.map_or(Block::ALL.to_vec(), |b| vec![b]);
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    for width in widths {
        for &block in &blocks {
            let path = dir.join(block.file_name(width));
            std::fs::write(&path, block.verilog(width))
                .with_context(|| format!("write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}
