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

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use metaroce_hdl::census::Census;
use metaroce_sim_tb::SimError;
use metaroce_sim_tb::core_check::run_against_engine;
use metaroce_sim_tb::nic_core::run_against_engines;
use metaroce_sim_tb::rx_check::run_random;
use metaroce_sim_tb::rx_eth::{RxEthTb, random_frames, run_against_etherparse};
use metaroce_sim_tb::rx_parser::RxParserTb;
use metaroce_sim_tb::tx_path::TxPathTb;
use metaroce_sim_tb::{tx_check, tx_path};
use serde::Serialize;

use crate::report;

/// Verdict code of a duplicate (`metaroce_hdl::Verdict::Duplicate`).
const DUPLICATE: u8 = metaroce_hdl::Verdict::Duplicate as u8;
/// Verdict code of an accepted PROBE (`metaroce_hdl::Verdict::Probe`).
const PROBE: u8 = metaroce_hdl::Verdict::Probe as u8;

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
        HdlCommand::Report(a) => report_all(a),
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

/// Synthesis statistics (yosys `synth_ecp5`, then `stat`).
#[derive(Serialize, Debug, Default)]
struct Synthesis {
    /// All cells.
    cells: u64,
    /// LUT4 cells.
    luts: u64,
    /// Flip-flops (TRELLIS_FF).
    ffs: u64,
    /// Carry cells (CCU2C).
    carry_cells: u64,
    /// Wide-mux cells (PFUMX, L6MUX21).
    mux_cells: u64,
    /// Block and distributed RAM cells (`ebr` + `lut_ram`).
    memories: u64,
    /// Block RAMs (DP16KD, 18 kbit each).
    ebr: u64,
    /// Distributed RAM cells (TRELLIS_DPR16X4, 16 × 4 bits each).
    lut_ram: u64,
    /// 18×18 multipliers (MULT18X18D).
    dsp: u64,
    /// Seconds yosys took.
    seconds: f64,
}

/// The parser's own check against `metaroce-proto` (header fields and
/// payload of every frame, all opcodes).
#[derive(Serialize, Debug)]
struct ParserCheck {
    packets_checked: u64,
    mismatches: u64,
    bubbles: u64,
}

/// A block checked against its reference on its own.
#[derive(Serialize, Debug)]
struct BlockCheck {
    /// Frames (or operations) compared.
    checked: u64,
    mismatches: u64,
    /// Cycles an input beat was offered and refused (0 where not measured).
    bubbles: u64,
}

/// The TX frame builder: engine traffic plus back-to-back MTU frames.
#[derive(Serialize, Debug)]
struct TxBuildCheck {
    /// Engine datagrams (WRITE/SEND/READ, retransmissions) compared as frames.
    frames_checked: u64,
    mismatches: u64,
    /// Back-to-back 4 KiB WRITE frames: cycles per packet.
    line_rate_cycles_per_packet: f64,
    /// Idle output cycles inside and between the line-rate frames.
    line_rate_bubbles: u64,
}

/// The whole NIC (`NicCore`, 64 bits): receive traffic in Ethernet frames
/// and TX descriptors at the same time, against the engines.
#[derive(Serialize, Debug)]
struct NicCoreCheck {
    width: usize,
    /// Ethernet frames into the receive side.
    datagrams_in: u64,
    /// ACK frames on the MAC TX port compared with the engine's ACKs.
    acks_checked: u64,
    /// Data frames on the MAC TX port compared with the engine's datagrams.
    data_frames_checked: u64,
    /// Received ACKs the ACK receiver applied to the TX table, compared
    /// with the engine's `TxPath` (`metaroce_sim_tb::ack_rx`).
    acks_applied_checked: u64,
    mismatches: u64,
    hostile_writes_outside_mr: u64,
    /// Receive input beats refused at line rate.
    bubbles: u64,
    /// MAC TX beats per cycle.
    mac_tx_utilisation: f64,
    /// Simulation speed of the whole NIC (`NicCore`, 64 bits, the issue's
    /// "whole core"): simulated clock cycles per CPU second of the thread
    /// running the bench loop (`metaroce_sim_tb::SimTimer`), Verilated model
    /// and Rust driver together, traffic generation and checks excluded.
    cycles_per_second: f64,
}

/// One width's line of the report.
#[derive(Serialize, Debug)]
struct WidthReport {
    width: usize,
    /// Datagrams run through the receive core and the engine.
    packets_checked: u64,
    /// Of those, hostile (neither placed, a duplicate nor a PROBE).
    hostile_packets: u64,
    /// Placed SEND/SEND_IMM packets (direct placement into posted receives).
    placed_send: u64,
    /// Placed READ responses (direct placement into the READs' buffers).
    placed_read_resp: u64,
    /// ACK datagrams compared byte for byte with the engine's.
    acks_checked: u64,
    /// Verdict, DMA write (address, bytes), ACK or counter differences from
    /// the engine, plus the parser check's mismatches.
    mismatches: u64,
    /// DMA writes outside the region that allows them.
    hostile_writes_outside_mr: u64,
    /// Cycles a beat was offered and refused, over the whole back-to-back
    /// core run (DMA port always ready).
    bubbles: u64,
    /// Simulation speed of the receive core alone (`RxCore` at this width):
    /// simulated clock cycles per CPU second of its back-to-back run
    /// (`metaroce_sim_tb::SimTimer`), driven beat by beat from Rust. The
    /// whole NIC's speed is `nic_core.cycles_per_second`.
    cycles_per_second: f64,
    /// Verilator `-Wall` warnings over every block at this width.
    lint_warnings: u64,
    parser: ParserCheck,
    /// `RxEth` against `etherparse` (random valid and hostile frames).
    eth_front_end: BlockCheck,
    tx_build: TxBuildCheck,
    /// yosys statistics of what `--synth` names, at this width.
    synthesis: Option<Synthesis>,
}

#[derive(Serialize, Debug)]
struct Waiver {
    flag: &'static str,
    why: &'static str,
}

#[derive(Serialize, Debug)]
struct Report {
    verilator: String,
    yosys: Option<String>,
    /// What the synthesis statistics are of.
    synthesised: Synth,
    lint_waivers: Vec<Waiver>,
    widths: Vec<WidthReport>,
    /// The per-path TX table against the engine's `TxPath` (one width).
    tx_path_table: BlockCheck,
    nic_core: NicCoreCheck,
    /// Lines of hand-written Verilog in the 64-bit device (`NicDevice`):
    /// the distinct modules marked hand-written
    /// (`metaroce_hdl::census`), header to `endmodule`.
    custom_verilog_lines: usize,
    /// Lines of the distinct modules rust-hdl emitted for it (generated
    /// from kernels, or its library's leaves).
    rust_hdl_verilog_lines: usize,
    /// `custom_verilog_lines` over both.
    custom_verilog_fraction: f64,
    /// Distinct rust-hdl modules in the 64-bit device.
    rust_hdl_blocks: usize,
    /// Distinct hand-written modules in it (templates and custom leaves).
    custom_blocks: usize,
}

/// The `verilator` tool is not there to lint with.
const NO_VERILATOR: &str = "Verilator not found: install it with `apt-get install -y verilator`, \
     then rebuild (`cargo build -p metaroce-cli`) so the RTL models are compiled in";
/// The models are not compiled in (whether or not Verilator is installed now).
pub(crate) const NO_MODELS: &str = "this metaroce has no Verilated NIC models: it was built with \
     METAROCE_SKIP_VERILATOR=1 or without Verilator; install Verilator (`apt-get install -y \
     verilator`) and rebuild without METAROCE_SKIP_VERILATOR (`cargo build -p metaroce-cli`)";
const NO_YOSYS: &str =
    "yosys not found: install it with `apt-get install -y yosys`, or pass --synth none";

/// First line of `tool --version`-style output, or `None` if it does not run.
fn tool_version(tool: &str, arg: &str) -> Option<String> {
    let out = Command::new(tool).arg(arg).output().ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    })
}

fn report_all(args: &ReportArgs) -> anyhow::Result<()> {
    let verilator = tool_version("verilator", "--version").context(NO_VERILATOR)?;
    // Say so before minutes of lint and synthesis, not after.
    if let Err(SimError::VerilatorMissing) = RxParserTb::new(64) {
        bail!(NO_MODELS);
    }
    let yosys = match args.synth {
        Synth::None => None,
        _ => Some(tool_version("yosys", "-V").context(NO_YOSYS)?),
    };
    let dir = std::env::temp_dir().join(format!("metaroce-hdl-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let widths = WIDTHS
        .iter()
        .map(|&width| width_report(args, width, &dir))
        .collect::<anyhow::Result<Vec<_>>>();
    std::fs::remove_dir_all(&dir).ok();
    let widths = widths?;
    let mut tx_path_tb = TxPathTb::new()?;
    let table = tx_path::run_against_engine(&mut tx_path_tb, TX_PATH_OPS, args.seed);
    for m in table.mismatches.iter().take(10) {
        eprintln!("TX table mismatch: {m}");
    }
    let census = Census::of(&Block::NicDevice.verilog(64));
    let report = Report {
        verilator,
        yosys,
        synthesised: args.synth,
        lint_waivers: metaroce_hdl::LINT_WAIVERS
            .iter()
            .map(|&(flag, why)| Waiver { flag, why })
            .collect(),
        widths,
        tx_path_table: BlockCheck {
            checked: table.ops,
            mismatches: table.mismatches.len() as u64,
            bubbles: 0,
        },
        nic_core: nic_core_check(args)?,
        custom_verilog_lines: census.custom_lines,
        rust_hdl_verilog_lines: census.rust_hdl_lines,
        custom_verilog_fraction: census.custom_fraction(),
        rust_hdl_blocks: census.rust_hdl_modules,
        custom_blocks: census.custom_modules,
    };
    report::emit(args.json, &report, || tables(&report))?;
    let bad: u64 = report.widths.iter().map(|w| w.mismatches).sum::<u64>()
        + report.tx_path_table.mismatches
        + report.nic_core.mismatches;
    let outside: u64 = report
        .widths
        .iter()
        .map(|w| w.hostile_writes_outside_mr)
        .sum::<u64>()
        + report.nic_core.hostile_writes_outside_mr;
    if bad > 0 || outside > 0 {
        bail!("{bad} mismatches and {outside} writes outside registered memory");
    }
    Ok(())
}

/// One data width's part of the report: every block linted (files written into
/// `dir`), the chosen synthesis, and the RxCore, RxParser, RxEth and TxBuild benches.
fn width_report(args: &ReportArgs, width: usize, dir: &Path) -> anyhow::Result<WidthReport> {
    let mut lint_warnings = 0;
    for block in Block::ALL {
        let path = dir.join(block.file_name(width));
        std::fs::write(&path, block.verilog(width))?;
        lint_warnings += lint(&path)?;
    }
    let synthesis = match args.synth.verilog(width) {
        None => None,
        Some(verilog) => {
            let path = dir.join(format!("synth_{width}.v"));
            std::fs::write(&path, verilog)?;
            Some(synthesise(&path, width)?)
        }
    };
    let bar = report::progress(4, &format!("{width}-bit sim"));
    let core = run_against_engine(width, args.packets, args.seed, false, None)?;
    bar.inc(1);
    let mut tb = RxParserTb::new(width)?;
    let parser = run_random(&mut tb, args.packets, args.seed ^ width as u64, false);
    bar.inc(1);
    let mut eth_tb = RxEthTb::new(width)?;
    let port = metaroce_proto::DEFAULT_UDP_PORT;
    let frames = random_frames(args.packets, args.seed ^ 0xE7 ^ width as u64, port);
    let eth = run_against_etherparse(&mut eth_tb, &frames, port, args.seed, false);
    bar.inc(1);
    let tx_packets = (args.packets / 10).max(1);
    let tx = tx_check::run_against_engine(width, tx_packets, args.seed, 0.05, false, None)?;
    let line = tx_check::run_line_rate(width, 300, args.seed, false)?;
    bar.finish_and_clear();
    let all_mismatches = core.mismatches.iter().chain(&parser.mismatches);
    let all_mismatches = all_mismatches
        .chain(&eth.mismatches)
        .chain(&tx.mismatches)
        .chain(&line.mismatches);
    for m in all_mismatches.take(10) {
        eprintln!("{width}-bit mismatch: {m}");
    }
    let hostile = core.packets
        - core.placed
        - core.by_verdict[usize::from(DUPLICATE)]
        - core.by_verdict[usize::from(PROBE)];
    Ok(WidthReport {
        width,
        packets_checked: core.packets,
        hostile_packets: hostile,
        placed_send: core.placed_send,
        placed_read_resp: core.placed_read_resp,
        acks_checked: core.acks_checked,
        mismatches: (core.mismatches.len()
            + parser.mismatches.len()
            + eth.mismatches.len()
            + tx.mismatches.len()
            + line.mismatches.len()) as u64,
        hostile_writes_outside_mr: core.writes_outside_mr,
        bubbles: core.bubbles,
        cycles_per_second: core.cycles as f64 / core.sim_secs.max(1e-9),
        lint_warnings,
        parser: ParserCheck {
            packets_checked: parser.frames,
            mismatches: parser.mismatches.len() as u64,
            bubbles: parser.bubbles,
        },
        eth_front_end: BlockCheck {
            checked: eth.frames,
            mismatches: eth.mismatches.len() as u64,
            bubbles: eth.bubbles,
        },
        tx_build: TxBuildCheck {
            frames_checked: tx.packets,
            mismatches: (tx.mismatches.len() + line.mismatches.len()) as u64,
            line_rate_cycles_per_packet: line.cycles_per_packet,
            line_rate_bubbles: line.bubbles_in_frame + line.bubbles_between,
        },
        synthesis,
    })
}

/// The 64-bit NicCore bench against two engines, and the ACK receiver's bench.
fn nic_core_check(args: &ReportArgs) -> anyhow::Result<NicCoreCheck> {
    let bar = report::progress(1, "64-bit NicCore sim");
    let nic = run_against_engines(
        (args.packets / 10).max(1),
        (args.packets / 30).max(1),
        args.seed,
        false,
        None,
    )?;
    let ack_rx =
        metaroce_sim_tb::ack_rx::run_against_engine((args.packets / 30).max(1) as u64, args.seed)?;
    bar.finish_and_clear();
    for m in nic.mismatches().iter().chain(&ack_rx.mismatches).take(10) {
        eprintln!("NicCore mismatch: {m}");
    }
    Ok(NicCoreCheck {
        width: 64,
        datagrams_in: nic.rx.packets,
        acks_checked: nic.rx.acks_checked,
        data_frames_checked: nic.data_frames,
        acks_applied_checked: ack_rx.acks_applied,
        mismatches: (nic.mismatches().len() + ack_rx.mismatches.len()) as u64,
        hostile_writes_outside_mr: nic.rx.writes_outside_mr,
        bubbles: nic.rx.bubbles,
        mac_tx_utilisation: nic.mac_beats as f64 / nic.cycles.max(1) as f64,
        cycles_per_second: nic.cycles as f64 / nic.sim_secs.max(1e-9),
    })
}

fn tables(r: &Report) -> Vec<comfy_table::Table> {
    let [core_widths, front_ends] = width_tables(r);
    let mut tx_table = report::table(["TX table operations vs engine TxPath", "mismatches"]);
    tx_table.add_row(vec![
        r.tx_path_table.checked.to_string(),
        r.tx_path_table.mismatches.to_string(),
    ]);
    let mut out = vec![
        core_widths,
        front_ends,
        tx_table,
        nic_core_table(&r.nic_core),
        census_table(r),
    ];
    if r.yosys.is_some() {
        out.push(synthesis_table(r));
    }
    let mut waivers = report::table(["lint waiver", "why"]);
    for w in &r.lint_waivers {
        waivers.add_row(vec![w.flag, w.why]);
    }
    out.push(waivers);
    out
}

/// One row per width: the receive core's checks, then the front ends'
/// and the TX builder's.
fn width_tables(r: &Report) -> [comfy_table::Table; 2] {
    let mut t = report::table([
        "width",
        "packets vs engine",
        "hostile",
        "placed SEND / READ_RESP",
        "ACKs vs engine",
        "mismatches",
        "hostile writes outside MR",
        "bubbles",
        "RxCore M cycles/s",
        "lint warnings",
    ]);
    let mut b = report::table([
        "width",
        "parser packets vs proto",
        "parser mismatches",
        "Ethernet frames vs etherparse",
        "Ethernet mismatches",
        "TX frames vs engine",
        "TX mismatches",
        "TX cycles per 4 KiB packet",
    ]);
    for w in &r.widths {
        t.add_row(vec![
            w.width.to_string(),
            w.packets_checked.to_string(),
            w.hostile_packets.to_string(),
            format!("{} / {}", w.placed_send, w.placed_read_resp),
            w.acks_checked.to_string(),
            w.mismatches.to_string(),
            w.hostile_writes_outside_mr.to_string(),
            w.bubbles.to_string(),
            format!("{:.2}", w.cycles_per_second / 1e6),
            w.lint_warnings.to_string(),
        ]);
        b.add_row(vec![
            w.width.to_string(),
            w.parser.packets_checked.to_string(),
            w.parser.mismatches.to_string(),
            w.eth_front_end.checked.to_string(),
            w.eth_front_end.mismatches.to_string(),
            w.tx_build.frames_checked.to_string(),
            w.tx_build.mismatches.to_string(),
            format!("{:.1}", w.tx_build.line_rate_cycles_per_packet),
        ]);
    }
    [t, b]
}

/// The whole NicCore's run.
fn nic_core_table(n: &NicCoreCheck) -> comfy_table::Table {
    let mut c = report::table([
        "NicCore width",
        "frames in",
        "ACK frames vs engine",
        "data frames vs engine",
        "ACKs applied to TX table vs engine",
        "mismatches",
        "writes outside MR",
        "RX bubbles",
        "MAC TX utilisation",
        "whole NIC M cycles/s",
    ]);
    c.add_row(vec![
        n.width.to_string(),
        n.datagrams_in.to_string(),
        n.acks_checked.to_string(),
        n.data_frames_checked.to_string(),
        n.acks_applied_checked.to_string(),
        n.mismatches.to_string(),
        n.hostile_writes_outside_mr.to_string(),
        n.bubbles.to_string(),
        format!("{:.1} %", 100.0 * n.mac_tx_utilisation),
        format!("{:.2}", n.cycles_per_second / 1e6),
    ]);
    c
}

/// The census of the 64-bit device's Verilog.
fn census_table(r: &Report) -> comfy_table::Table {
    let mut h = report::table([
        "64-bit device",
        "rust-hdl modules",
        "hand-written modules",
        "rust-hdl lines",
        "hand-written lines",
        "hand-written share",
    ]);
    h.add_row(vec![
        "NicDevice".to_string(),
        r.rust_hdl_blocks.to_string(),
        r.custom_blocks.to_string(),
        r.rust_hdl_verilog_lines.to_string(),
        r.custom_verilog_lines.to_string(),
        format!("{:.1} %", 100.0 * r.custom_verilog_fraction),
    ]);
    h
}

/// yosys's figures per width.
fn synthesis_table(r: &Report) -> comfy_table::Table {
    let mut s = report::table([
        "synthesised",
        "width",
        "cells",
        "LUT4",
        "FF",
        "carry",
        "wide mux",
        "DP16KD",
        "DPR16X4",
        "MULT18X18D",
        "yosys s",
    ]);
    let top = r
        .synthesised
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
    for w in &r.widths {
        if let Some(y) = &w.synthesis {
            s.add_row(vec![
                top.clone(),
                w.width.to_string(),
                y.cells.to_string(),
                y.luts.to_string(),
                y.ffs.to_string(),
                y.carry_cells.to_string(),
                y.mux_cells.to_string(),
                y.ebr.to_string(),
                y.lut_ram.to_string(),
                y.dsp.to_string(),
                format!("{:.0}", y.seconds),
            ]);
        }
    }
    s
}

/// `verilator --lint-only -Wall` with the documented waivers; returns the
/// number of warnings.
fn lint(path: &Path) -> anyhow::Result<u64> {
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", "top"])
        .args(metaroce_hdl::LINT_WAIVERS.iter().map(|(flag, _)| flag))
        .arg(path)
        .output()
        .context(NO_VERILATOR)?;
    let text = String::from_utf8_lossy(&out.stderr);
    let warnings = text.lines().filter(|l| l.starts_with("%Warning")).count() as u64;
    let errors = text.lines().filter(|l| l.starts_with("%Error")).count();
    if !out.status.success() && warnings == 0 && errors > 0 {
        bail!("Verilator lint failed on {}:\n{text}", path.display());
    }
    Ok(warnings)
}

/// yosys `synth_ecp5` and its cell counts. The script stops before the
/// `check` stage: its first pass, `autoname`, only renames nets and takes
/// longer than the whole synthesis on the 512-bit blocks (yosys 0.23).
fn synthesise(path: &Path, width: usize) -> anyhow::Result<Synthesis> {
    let bar = report::progress(1, &format!("{width}-bit yosys"));
    let stat = path.with_extension("stat");
    let started = Instant::now();
    let out = Command::new("yosys")
        .arg("-q")
        .arg("-p")
        .arg(format!(
            "read_verilog {}; synth_ecp5 -top top -run :check; tee -q -o {} stat",
            path.display(),
            stat.display()
        ))
        .output()
        .context(NO_YOSYS)?;
    bar.finish_and_clear();
    if !out.status.success() {
        bail!(
            "yosys failed on {}:\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(&stat)?;
    Ok(parse_stat(&text, started.elapsed().as_secs_f64()))
}

/// Cell counts from yosys `stat` output.
fn parse_stat(text: &str, seconds: f64) -> Synthesis {
    let mut s = Synthesis {
        seconds,
        ..Synthesis::default()
    };
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        let (Some(first), Some(last)) = (words.next(), line.split_whitespace().last()) else {
            continue;
        };
        let Ok(n) = last.parse::<u64>() else { continue };
        match first {
            "LUT4" => s.luts += n,
            "TRELLIS_FF" => s.ffs += n,
            "CCU2C" => s.carry_cells += n,
            "PFUMX" | "L6MUX21" => s.mux_cells += n,
            "DP16KD" => s.ebr += n,
            "TRELLIS_DPR16X4" => s.lut_ram += n,
            "MULT18X18D" => s.dsp += n,
            _ if line.starts_with("Number of cells:") => s.cells = n,
            _ => {}
        }
    }
    s.memories = s.ebr + s.lut_ram;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_output_is_parsed() {
        let text = "=== top ===\n   Number of cells:              11779\n     CCU2C   184\n     \
                    L6MUX21 1250\n     LUT4 7055\n     PFUMX 2582\n     TRELLIS_FF 708\n     DP16KD 2\n     \
                    TRELLIS_DPR16X4 5\n     MULT18X18D 4\n";
        let s = parse_stat(text, 1.0);
        assert_eq!(
            (
                s.cells,
                s.luts,
                s.ffs,
                s.carry_cells,
                s.mux_cells,
                s.memories
            ),
            (11779, 7055, 708, 184, 3832, 7)
        );
        assert_eq!((s.ebr, s.lut_ram, s.dsp), (2, 5, 4));
    }
}
