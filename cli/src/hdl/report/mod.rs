//! `metaroce hdl report`: lint, synthesis and the Verilated checks of every
//! block at both widths, collected into one [`Report`] (`tables.rs` prints
//! it, `tools.rs` runs Verilator's lint and yosys).

mod tables;
mod tools;

use std::path::Path;
use std::process::Command;

use serde::Serialize;

use super::{Block, ReportArgs, Synth, TX_PATH_OPS, WIDTHS};
use crate::report;
use anyhow::{Context, bail};
use metaroce_hdl::census::Census;
use metaroce_sim_tb::SimError;
use metaroce_sim_tb::core_check::run_against_engine;
use metaroce_sim_tb::nic_core::run_against_engines;
use metaroce_sim_tb::rx_check::run_random;
use metaroce_sim_tb::rx_eth::{RxEthTb, random_frames, run_against_etherparse};
use metaroce_sim_tb::rx_parser::RxParserTb;
use metaroce_sim_tb::tx_path::TxPathTb;
use metaroce_sim_tb::{tx_check, tx_path};
use tables::tables;
use tools::{lint, synthesise};

/// Verdict code of a duplicate (`metaroce_hdl::Verdict::Duplicate`).
const DUPLICATE: u8 = metaroce_hdl::Verdict::Duplicate as u8;
/// Verdict code of an accepted PROBE (`metaroce_hdl::Verdict::Probe`).
const PROBE: u8 = metaroce_hdl::Verdict::Probe as u8;

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

/// Runs `metaroce hdl report`.
pub(super) fn report_all(args: &ReportArgs) -> anyhow::Result<()> {
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
