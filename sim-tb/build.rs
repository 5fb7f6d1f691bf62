//! Builds the Verilator models of the RTL:
//! 1. emits each module's Verilog through `metaroce-hdl`,
//! 2. Verilates it (`verilator --cc -Wall`, lint waivers from
//!    `metaroce_hdl::LINT_WAIVERS`),
//! 3. compiles the generated C++, Verilator's runtime and the C shim
//!    (`csrc/vshim.h`) with `cc`, and writes the port tables the Rust wrapper
//!    uses.
//!
//! The Verilator binary is `$METAROCE_VERILATOR`, else `verilator` on `PATH`.
//! Without Verilator the crate still builds (a cargo warning is printed) and
//! every model reports "Verilator not found"; set
//! `METAROCE_REQUIRE_VERILATOR=1` (CI) to make that a build error instead.
//!
//! `METAROCE_SIM_ONLY=prefix,prefix` (developers iterating on one block)
//! Verilates only the named models; the others get a stub whose `new`
//! returns null, so `Sim::new` reports them as not built.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One Verilated model: its `--prefix` (also the C symbol prefix) and source.
struct ModelSpec {
    prefix: &'static str,
    verilog: fn() -> String,
}

const MODELS: &[ModelSpec] = &[
    ModelSpec {
        prefix: "rx_parser_64",
        verilog: || metaroce_hdl::rx_parser_verilog(64),
    },
    ModelSpec {
        prefix: "rx_parser_512",
        verilog: || metaroce_hdl::rx_parser_verilog(512),
    },
    ModelSpec {
        prefix: "rx_core_64",
        verilog: || metaroce_hdl::rx_core_verilog(64),
    },
    ModelSpec {
        prefix: "rx_core_512",
        verilog: || metaroce_hdl::rx_core_verilog(512),
    },
    ModelSpec {
        prefix: "rx_path_8",
        verilog: || metaroce_hdl::rx_path_verilog(8),
    },
    ModelSpec {
        prefix: "tx_path_16",
        verilog: || metaroce_hdl::tx_path_verilog(16),
    },
    ModelSpec {
        prefix: "rx_eth_64",
        verilog: || metaroce_hdl::rx_eth_verilog(64),
    },
    ModelSpec {
        prefix: "rx_eth_512",
        verilog: || metaroce_hdl::rx_eth_verilog(512),
    },
    ModelSpec {
        prefix: "nic_rx_64",
        verilog: || metaroce_hdl::nic_rx_verilog(64),
    },
    ModelSpec {
        prefix: "tx_build_64",
        verilog: || metaroce_hdl::tx_build_verilog(64),
    },
    ModelSpec {
        prefix: "tx_build_512",
        verilog: || metaroce_hdl::tx_build_verilog(512),
    },
    ModelSpec {
        prefix: "nic_core_64",
        verilog: || metaroce_hdl::nic_core_verilog(64),
    },
    ModelSpec {
        prefix: "nic_device_64",
        verilog: || metaroce_hdl::nic_device_verilog(64),
    },
];

/// Models only linted (`verilator --lint-only -Wall`, the same waivers) at
/// build time, not Verilated: the build fails on any warning, as for the
/// built models. The 512-bit device top (not simulated: its blocks are
/// checked at 512 bits on their own).
const LINT_ONLY: &[ModelSpec] = &[ModelSpec {
    prefix: "nic_device_512",
    verilog: || metaroce_hdl::nic_device_verilog(512),
}];

const MISSING: &str = "Verilator not found: apt-get install verilator";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=csrc/vshim.h");
    println!("cargo::rerun-if-env-changed=METAROCE_REQUIRE_VERILATOR");
    println!("cargo::rerun-if-env-changed=METAROCE_VERILATOR");
    println!("cargo::rerun-if-env-changed=METAROCE_SIM_ONLY");
    println!("cargo::rustc-check-cfg=cfg(verilator)");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));

    let mut sources = Vec::new();
    for m in MODELS {
        let path = out.join(format!("{}.v", m.prefix));
        let text = (m.verilog)();
        fs::write(&path, &text).expect("write Verilog");
        sources.push((m, path, text));
    }

    write_drop_reasons(&out);
    write_core_codes(&out);
    write_path_codes(&out);
    write_tx_ops(&out);
    write_eth_reasons(&out);
    write_tx_codes(&out);
    write_ack_rx_codes(&out);
    write_host_regs(&out);

    let verilator =
        env::var_os("METAROCE_VERILATOR").map_or_else(|| "verilator".into(), PathBuf::from);
    let Some(root) = verilator_root(&verilator) else {
        if env::var_os("METAROCE_REQUIRE_VERILATOR").is_some_and(|v| v != "0") {
            panic!("{MISSING} (METAROCE_REQUIRE_VERILATOR is set)");
        }
        println!("cargo::warning={MISSING} (RTL benches will skip)");
        // Re-run once it is installed (a missing path always counts as changed).
        println!("cargo::rerun-if-changed=/usr/bin/verilator");
        write_port_tables(&out, &[]);
        return;
    };
    println!("cargo::rustc-cfg=verilator");

    let include = root.join("include");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .warnings(false)
        // The models are built on the machine that runs them: tune for it.
        // -O3 and -march=native together measured ~3 % faster than -O2.
        .opt_level(3)
        .flag_if_supported("-march=native")
        // The models clear and copy wide temporaries of a few hundred
        // bytes every evaluation: vector stores instead of `rep stos`.
        .flag_if_supported("-mstringop-strategy=vector_loop")
        .include(&include)
        .include(include.join("vltstd"))
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TRACE", "1")
        .define("VM_TRACE_FST", "0")
        .define("VM_TRACE_VCD", "1");
    for f in [
        "verilated.cpp",
        "verilated_threads.cpp",
        "verilated_vcd_c.cpp",
    ] {
        build.file(include.join(f));
    }

    let only = env::var("METAROCE_SIM_ONLY").ok();
    let selected = |prefix: &str| {
        only.as_deref()
            .is_none_or(|list| list.split(',').any(|p| p.trim() == prefix))
    };
    for m in LINT_ONLY.iter().filter(|m| selected(m.prefix)) {
        let path = out.join(format!("{}.v", m.prefix));
        fs::write(&path, (m.verilog)()).expect("write Verilog");
        let status = Command::new(&verilator)
            .args(["--lint-only", "-Wall"])
            .args(metaroce_hdl::LINT_WAIVERS.iter().map(|(flag, _)| flag))
            .args(["--top-module", "top"])
            .arg(&path)
            .status()
            .expect("run verilator");
        assert!(
            status.success(),
            "verilator lint failed on {}",
            path.display()
        );
    }
    let mut tables = Vec::new();
    for (m, path, text) in &sources {
        let ports = parse_ports(text);
        if !selected(m.prefix) {
            let stub = out.join(format!("stub_{}.cpp", m.prefix));
            fs::write(&stub, stub_source(m.prefix)).expect("write stub");
            build.file(&stub);
            tables.push((m.prefix, ports));
            continue;
        }
        let mdir = out.join(format!("obj_{}", m.prefix));
        let _ = fs::remove_dir_all(&mdir);
        let class = format!("V{}", m.prefix);
        let status = Command::new(&verilator)
            .args(["--cc", "-Wall"])
            .args(metaroce_hdl::LINT_WAIVERS.iter().map(|(flag, _)| flag))
            .args([
                "--trace",
                "-O3",
                "--x-assign",
                "fast",
                "--x-initial",
                "fast",
            ])
            .args(["--top-module", "top", "--prefix", &class, "--Mdir"])
            .arg(&mdir)
            .arg(path)
            .status()
            .expect("run verilator");
        assert!(status.success(), "verilator failed on {}", path.display());

        let mut cpps: Vec<_> = fs::read_dir(&mdir)
            .expect("read Mdir")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
            .collect();
        cpps.sort();
        let steps = has_edge_steps(&class, &cpps);
        let shim = out.join(format!("shim_{}.cpp", m.prefix));
        fs::write(&shim, shim_source(m.prefix, &class, &ports, steps)).expect("write shim");
        build.include(&mdir).file(&shim);
        build.files(cpps);
        tables.push((m.prefix, ports));
    }
    build.compile("metaroce_vmodels");
    println!("cargo::rustc-link-lib=pthread");
    write_port_tables(&out, &tables);
}

/// `VERILATOR_ROOT` as reported by the `verilator` binary, if it runs.
fn verilator_root(verilator: &Path) -> Option<PathBuf> {
    let out = Command::new(verilator)
        .arg("--getenv")
        .arg("VERILATOR_ROOT")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let root = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    if !root.join("include/verilated.cpp").is_file() {
        return None;
    }
    if let Some(bin) = which(verilator) {
        println!("cargo::rerun-if-changed={}", bin.display());
    }
    Some(root)
}

/// The file `verilator` names: itself if it has a directory part, else the
/// first match on `PATH`.
fn which(verilator: &Path) -> Option<PathBuf> {
    if verilator.components().count() > 1 {
        return Some(verilator.to_owned());
    }
    env::var_os("PATH")
        .into_iter()
        .flat_map(|p| env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(verilator))
        .find(|p| p.is_file())
}

/// Top-level ports (name, bits) from rust-hdl's port declarations, in order.
fn parse_ports(verilog: &str) -> Vec<(String, usize)> {
    let top = verilog
        .split("module top(")
        .nth(1)
        .expect("module top in emitted Verilog");
    let mut ports = Vec::new();
    for line in top.lines().map(str::trim) {
        if line.starts_with("// Constant") || line.starts_with("// Stub") {
            break;
        }
        if !(line.starts_with("input ") || line.starts_with("output ")) {
            continue;
        }
        let decl = line.trim_end_matches(';');
        let name = decl.split_whitespace().last().expect("port name");
        let bits = match (decl.find('['), decl.find(':')) {
            (Some(l), Some(c)) => decl[l + 1..c].trim().parse::<usize>().expect("msb") + 1,
            _ => 1,
        };
        ports.push((name.to_string(), bits));
    }
    assert!(!ports.is_empty(), "no ports parsed");
    ports
}

/// Whether the generated sources define the scheduling steps the shim's
/// `edge_settled` calls (Verilator 5's `eval` is built from them).
fn has_edge_steps(class: &str, cpps: &[PathBuf]) -> bool {
    let text: String = cpps
        .iter()
        .map(|p| fs::read_to_string(p).expect("read generated C++"))
        .collect();
    ["eval_triggers__act", "eval_act", "eval_nba"]
        .iter()
        .all(|step| {
            text.contains(&format!(
                "void {class}___024root___{step}({class}___024root* vlSelf) {{"
            ))
        })
}

/// The C++ shim of one model: the port switch and, with `steps`, the root
/// class and step functions for `edge_settled` (see `csrc/vshim.h`).
fn shim_source(prefix: &str, class: &str, ports: &[(String, usize)], steps: bool) -> String {
    let mut cases = String::new();
    for (i, (name, _)) in ports.iter().enumerate() {
        write!(
            cases,
            "case {i}: *bytes = sizeof(top->{name}); return &top->{name}; "
        )
        .unwrap();
    }
    let root = if steps {
        format!(
            "#include \"{class}___024root.h\"\n#define VSHIM_ROOT {class}___024root\n\
             #define VSHIM_ROOT_FN(n) {class}___024root___##n\n"
        )
    } else {
        String::new()
    };
    format!(
        "#include \"{class}.h\"\n{root}#define VSHIM_MODEL {class}\n#define VSHIM_FN(n) {prefix}_##n\n\
         #define VSHIM_PORT_CASES {cases}\n#include \"{}\"\n",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("csrc/vshim.h")
            .display()
    )
}

/// A model left out by `METAROCE_SIM_ONLY`: the shim's symbols, `new`
/// returning null.
fn stub_source(prefix: &str) -> String {
    format!(
        "#include <cstdint>\nextern \"C\" {{\n\
         void* {prefix}_new() {{ return nullptr; }}\n\
         void {prefix}_free(void*) {{}}\n\
         void {prefix}_eval(void*) {{}}\n\
         void {prefix}_tick(void*, int) {{}}\n\
         void* {prefix}_port(void*, uint32_t, uint32_t*) {{ return nullptr; }}\n\
         int {prefix}_trace_open(void*, const char*) {{ return -1; }}\n}}\n"
    )
}

/// `ports.rs`: `(name, bits)` per model, indexed by the shim's port ids.
fn write_port_tables(out: &Path, tables: &[(&str, Vec<(String, usize)>)]) {
    let mut rs = String::new();
    for (prefix, ports) in tables {
        writeln!(
            rs,
            "/// Ports of `{prefix}`: (name, bits), index = shim port id.\n\
             pub(crate) const {}_PORTS: &[(&str, usize)] = &{ports:?};",
            prefix.to_uppercase()
        )
        .unwrap();
    }
    fs::write(out.join("ports.rs"), rs).expect("write ports.rs");
}

/// `drop_reasons.rs`: the RX parser's `m_meta_reason` codes, taken from
/// `metaroce_hdl::DropReason` so the bench never restates them.
fn write_drop_reasons(out: &Path) {
    use metaroce_hdl::DropReason as R;
    let mut rs = String::new();
    for (name, r) in [
        ("NONE", R::None),
        ("TRUNCATED", R::Truncated),
        ("BAD_VERSION", R::BadVersion),
        ("BAD_OPCODE", R::BadOpcode),
        ("UNEXPECTED_PAYLOAD", R::UnexpectedPayload),
        ("BAD_ICRC", R::BadIcrc),
    ] {
        writeln!(
            rs,
            "/// `DropReason::{r:?}`.\npub const {name}: u8 = {};",
            r as u8
        )
        .unwrap();
    }
    fs::write(out.join("drop_reasons.rs"), rs).expect("write drop_reasons.rs");
}

/// `core_codes.rs`: the receive core's verdict codes and table map, taken
/// from `metaroce_hdl::rx_place` so the bench never restates them.
fn write_core_codes(out: &Path) {
    use metaroce_hdl::rx_place::{
        CONN_WINDOW, MRS, QPS, READS, RQ_SLOTS, RQ_STREAMS, Verdict, cfg,
    };
    let mut rs = String::new();
    for v in Verdict::ALL {
        let name: String = format!("{v:?}")
            .chars()
            .flat_map(|c| {
                let sep = c.is_uppercase().then_some('_');
                sep.into_iter().chain(c.to_uppercase())
            })
            .collect();
        writeln!(
            rs,
            "/// `Verdict::{v:?}`.\npub const V{name}: u8 = {};",
            v as u8
        )
        .unwrap();
    }
    for (name, v) in [
        ("CFG_QP", cfg::QP),
        ("CFG_MR", cfg::MR),
        ("CFG_GLOBAL", cfg::GLOBAL),
        ("QP_CTRL", cfg::QP_CTRL),
        ("QP_QPNS", cfg::QP_QPNS),
        ("QP_PEER_IP_HI", cfg::QP_PEER_IP_HI),
        ("QP_PEER_IP_LO", cfg::QP_PEER_IP_LO),
        ("QP_PD_STREAMS", cfg::QP_PD_STREAMS),
        ("QP_CONN_PSN", cfg::QP_CONN_PSN),
        ("MR_CTRL", cfg::MR_CTRL),
        ("MR_KEY_PD", cfg::MR_KEY_PD),
        ("MR_BASE", cfg::MR_BASE),
        ("MR_LEN", cfg::MR_LEN),
        ("GLOBAL_MTU", cfg::GLOBAL_MTU),
        ("QP_PEER_PORT", cfg::QP_PEER_PORT),
        ("QP_RATE_CREDIT", cfg::QP_RATE_CREDIT),
        ("GLOBAL_LOCAL_IP_HI", cfg::GLOBAL_LOCAL_IP_HI),
        ("GLOBAL_LOCAL_IP_LO", cfg::GLOBAL_LOCAL_IP_LO),
        ("QP_STATE_INIT", cfg::STATE_IDLE),
        ("QP_STATE_RTR", cfg::STATE_RTR),
        ("QP_STATE_RTS", cfg::STATE_RTS),
        ("CFG_RQ", cfg::RQ),
        ("RQ_ADDR", cfg::RQ_ADDR),
        ("RQ_LEN_LKEY", cfg::RQ_LEN_LKEY),
        ("QP_READ_CTRL", cfg::qp_read(0, 0)),
    ] {
        writeln!(
            rs,
            "/// `rx_place::cfg` value.\npub const {name}: u8 = {v};"
        )
        .unwrap();
    }
    writeln!(
        rs,
        "/// Connection receive window of the RTL.\npub const CONN_WINDOW: u32 = {CONN_WINDOW};\n\
         /// Posted receives per QP in the RTL's ring.\npub const RQ_SLOTS: u32 = {rq};\n\
         /// Streams per QP with a receive ring in the RTL.\npub const RQ_STREAMS: usize = {rqs};\n\
         /// Outstanding-READ entries per QP.\npub const READS: usize = {reads};\n\
         /// QP table entries.\npub const QPS: usize = {qps};\n\
         /// MR table entries.\npub const MRS: usize = {mrs};\n\
         /// `rx_place::cfg::addr`.\npub const fn cfg_addr(table: u8, entry: u8, word: u8) -> u8 {{ table << 6 | entry << 4 | word }}",
        rq = RQ_SLOTS,
        rqs = RQ_STREAMS,
        reads = READS,
        qps = QPS,
        mrs = MRS,
    )
    .unwrap();
    // `cfg::ring` is linear in its arguments: emitted as its base and strides.
    let base = cfg::ring(0, 0, 0, 0);
    let stride = [
        cfg::ring(1, 0, 0, 0),
        cfg::ring(0, 1, 0, 0),
        cfg::ring(0, 0, 1, 0),
        cfg::ring(0, 0, 0, 1),
    ]
    .map(|a| a - base);
    assert_eq!(
        cfg::ring(3, 3, 7, 1),
        base + 3 * stride[0] + 3 * stride[1] + 7 * stride[2] + stride[3]
    );
    writeln!(
        rs,
        "/// `rx_place::cfg::ring`: `word` of ring slot `slot` of `stream` of QP entry `qp`.\n\
         #[allow(clippy::identity_op)] // strides taken from `cfg::ring`; some are 1\n\
         pub const fn cfg_ring(qp: u8, stream: u8, slot: u8, word: u8) -> u16 {{\n\
         {base} + {} * qp as u16 + {} * stream as u16 + {} * slot as u16 + {} * word as u16\n}}",
        stride[0], stride[1], stride[2], stride[3]
    )
    .unwrap();
    fs::write(out.join("core_codes.rs"), rs).expect("write core_codes.rs");
}

/// `path_codes.rs`: the path tracker's `res_code` values, taken from
/// `metaroce_hdl::PathVerdict` so the bench never restates them.
fn write_path_codes(out: &Path) {
    let mut rs = String::new();
    for v in metaroce_hdl::PathVerdict::ALL {
        writeln!(
            rs,
            "/// `PathVerdict::{v:?}`.\npub const {}: u8 = {};",
            format!("{v:?}").to_uppercase(),
            v as u8
        )
        .unwrap();
    }
    fs::write(out.join("path_codes.rs"), rs).expect("write path_codes.rs");
}

/// `tx_ops.rs`: the TX table's `op_code` values, taken from
/// `metaroce_hdl::TxOp` so the bench never restates them.
fn write_tx_ops(out: &Path) {
    let mut rs = String::new();
    for op in metaroce_hdl::TxOp::ALL {
        writeln!(
            rs,
            "/// `TxOp::{op:?}`.\npub const {}: u8 = {};",
            format!("{op:?}").to_uppercase(),
            op as u8
        )
        .unwrap();
    }
    fs::write(out.join("tx_ops.rs"), rs).expect("write tx_ops.rs");
}

/// `host_regs.rs`: the device's BAR0 register map and queue constants,
/// taken from `metaroce_hdl::host_if` so the host-interface bench never
/// restates them: per block a module with `TYPE` and each register's
/// offset *within the block* (the bench finds the blocks' bases by walking
/// the list, as a driver does), and the list itself as `BLOCKS` (type,
/// base) for the walk's check.
fn write_host_regs(out: &Path) {
    use metaroce_hdl::host_if::{self as h, regs};
    let mut rs = String::new();
    writeln!(
        rs,
        "/// `regs::map_hash()`.\npub const MAP_HASH: u32 = {:#x};\n\
         /// `regs::MAP_VERSION`.\npub const MAP_VERSION: u32 = {};\n\
         /// Header word offsets.\npub const HDR_TYPE: u16 = {};\n/// Version word.\npub const HDR_VERSION: u16 = {};\n\
         /// Next-block word.\npub const HDR_NEXT: u16 = {};",
        regs::map_hash(),
        regs::MAP_VERSION,
        regs::HDR_TYPE,
        regs::HDR_VERSION,
        regs::HDR_NEXT
    )
    .unwrap();
    let list: Vec<String> = regs::BLOCKS
        .iter()
        .map(|b| format!("({:#x}, {:#x})", b.type_id, b.base))
        .collect();
    writeln!(
        rs,
        "/// Every block's (type, base), in list order.\npub const BLOCKS: &[(u32, u16)] = &[{}];",
        list.join(", ")
    )
    .unwrap();
    for b in regs::BLOCKS {
        writeln!(
            rs,
            "/// Block `{}`.\npub mod {} {{\n    /// Type word.\n    pub const TYPE: u32 = {:#x};",
            b.name,
            b.name.to_lowercase(),
            b.type_id
        )
        .unwrap();
        for r in b.regs {
            writeln!(
                rs,
                "    /// `{}` (offset in the block).\n    pub const {}: u16 = {:#x};",
                r.name, r.name, r.offset
            )
            .unwrap();
        }
        rs.push_str("}\n");
    }
    for (name, v) in [
        ("EV_VERDICT", h::ev_type::VERDICT),
        ("EV_ACKRX", h::ev_type::ACKRX),
        ("EV_FATE", h::ev_type::FATE),
        ("TAG_TXQ", h::tag::TXQ),
        ("TAG_PAYLOAD", h::tag::PAYLOAD),
        ("TAG_FTQ_HDR", h::tag::FTQ_HDR),
        ("TAG_FTQ_DATA", h::tag::FTQ_DATA),
    ] {
        writeln!(rs, "/// `host_if` constant.\npub const {name}: u8 = {v};").unwrap();
    }
    for (name, v) in [
        ("TXQ_ENTRY", h::TXQ_ENTRY),
        ("FTQ_ENTRY", h::FTQ_ENTRY),
        ("EVQ_ENTRY", h::EVQ_ENTRY),
        ("FRQ_ENTRY", h::FRQ_ENTRY),
        ("EV_HOLD", h::EV_HOLD),
        ("IRQ_EVQ", regs::IRQ_EVQ),
        ("IRQ_FRQ", regs::IRQ_FRQ),
        ("IRQ_TX", regs::IRQ_TX),
        ("FW_SLOT_BYTES", metaroce_hdl::fw_rx::SLOT_BYTES),
    ] {
        writeln!(
            rs,
            "/// `host_if` constant.\npub const {name}: usize = {v};"
        )
        .unwrap();
    }
    fs::write(out.join("host_regs.rs"), rs).expect("write host_regs.rs");
}

/// `eth_reasons.rs`: the RX front end's `m_ev_reason` codes and limits,
/// taken from `metaroce_hdl::rx_eth` so the bench never restates them.
fn write_eth_reasons(out: &Path) {
    use metaroce_hdl::rx_eth::{EthDrop, MAX_FRAME, PAD_MAX};
    let mut rs = String::new();
    for r in EthDrop::ALL {
        writeln!(
            rs,
            "/// `EthDrop::{r:?}`.\npub const {}: u8 = {};",
            r.const_name(),
            r as u8
        )
        .unwrap();
    }
    writeln!(
        rs,
        "/// Number of reason codes.\npub const COUNT: usize = {};\n\
         /// `rx_eth::MAX_FRAME`.\npub const MAX_FRAME: usize = {MAX_FRAME};\n\
         /// `rx_eth::PAD_MAX`.\npub const PAD_MAX: usize = {PAD_MAX};",
        EthDrop::ALL.len()
    )
    .unwrap();
    fs::write(out.join("eth_reasons.rs"), rs).expect("write eth_reasons.rs");
}

/// `tx_codes.rs`: the TX builder's configuration map, taken from
/// `metaroce_hdl::tx_build::cfg` so the bench never restates it.
fn write_tx_codes(out: &Path) {
    use metaroce_hdl::tx_build::{PATHS, cfg};
    let mut rs = String::new();
    for (name, v) in [
        ("CFG_REGS", cfg::REGS),
        ("CFG_ENTROPY", cfg::ENTROPY),
        ("REG_LOCAL", cfg::LOCAL),
        ("REG_PEER", cfg::PEER),
        ("REG_IPV4", cfg::IPV4),
        ("REG_LOCAL_IPV6", cfg::LOCAL_IPV6),
        ("REG_PEER_IPV6", cfg::PEER_IPV6),
    ] {
        writeln!(
            rs,
            "/// `tx_build::cfg` value.\npub const {name}: u8 = {v};"
        )
        .unwrap();
    }
    writeln!(
        rs,
        "/// Entropy table entries.\npub const PATHS: usize = {PATHS};\n\
         /// `tx_build::cfg::PEER_IPV6_BIT`.\npub const PEER_IPV6_BIT: u32 = {};\n\
         /// `tx_build::cfg::addr`.\npub const fn cfg_addr(table: u8, entry: u8) -> u8 {{ table << 6 | entry }}",
        cfg::PEER_IPV6_BIT
    )
    .unwrap();
    writeln!(
        rs,
        "/// `nic_core::CFG_TX_BIT`: NicCore `cfg_addr` bit selecting this map.\n\
         pub const CFG_TX_BIT: u32 = {};",
        metaroce_hdl::nic_core::CFG_TX_BIT
    )
    .unwrap();
    fs::write(out.join("tx_codes.rs"), rs).expect("write tx_codes.rs");
}

/// `ack_rx_codes.rs`: the ACK receiver's slot-map address and word layout.
fn write_ack_rx_codes(out: &Path) {
    use metaroce_hdl::ack_rx::cfg;
    let rs = format!(
        "/// `nic_core::ack_rx_cfg_addr(0)`: slot-map entry of slot 0.\n\
         pub const SLOT_MAP_CFG: u16 = {};\n\
         /// `ack_rx::cfg::PATH_SHIFT`.\npub const MAP_PATH_SHIFT: u32 = {};\n\
         /// `ack_rx::cfg::VALID_BIT`.\npub const MAP_VALID_BIT: u32 = {};\n",
        metaroce_hdl::nic_core::ack_rx_cfg_addr(0),
        cfg::PATH_SHIFT,
        cfg::VALID_BIT,
    );
    fs::write(out.join("ack_rx_codes.rs"), rs).expect("write ack_rx_codes.rs");
}
