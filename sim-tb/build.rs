//! Builds the Verilator models of the RTL:
//! 1. emits each module's Verilog through `metaroce-hdl`,
//! 2. Verilates it (`verilator --cc -Wall`, lint waivers from
//!    `metaroce_hdl::LINT_WAIVERS`),
//! 3. compiles the generated C++, Verilator's runtime and the C shim
//!    (`csrc/vshim.h`) with `cc`, and writes the port tables the Rust wrapper
//!    uses.
//!
//! The Verilator binary is `$METAROCE_VERILATOR`, else `verilator` on `PATH`.
//! Without Verilator the build fails and says what to install, unless
//! `METAROCE_SKIP_VERILATOR=1` opts out: then the crate builds (a cargo warning
//! is printed), every model reports "Verilator not found" and the benches skip.
//! (`cargo build -p metaroce-cli --no-default-features` leaves this crate out.)
//!
//! `METAROCE_SIM_ONLY=prefix,prefix` (developers iterating on one block)
//! Verilates only the named models; the others get a stub whose `new`
//! returns null, so `Sim::new` reports them as not built.
//!
//! # Model cache
//! Cargo runs this script once per profile and per wrapper (`cargo clippy`
//! and `cargo test` each in their own `OUT_DIR`), and Verilating and
//! compiling the models is most of the build (about 10 min here). So the
//! compiled objects of each model, of Verilator's runtime, and the pass of
//! each lint-only model are kept in a content-addressed cache
//! (`build/cache.rs`) shared by every run on the same target dir:
//! `$METAROCE_VERILATOR_CACHE`, else `<target>/metaroce-verilator-cache`.
//! An entry's key is the SHA-256 of the model's Verilog and of the recipe:
//! this script's source (flags, shim and stub generators), `csrc/vshim.h`,
//! the lint waivers, Verilator's version and root, and the C++ compiler's
//! `-###` report of its flags (which names its version and the CPU
//! `-march=native` resolves to) and target. So editing one block's Verilog
//! rebuilds only the models that contain it, and editing this script
//! rebuilds them all. `METAROCE_SIM_ONLY` only decides which models are
//! looked up (a left-out model's stub is compiled each run; it takes a
//! second). On a hit the objects are archived into `OUT_DIR` with the
//! stubs, so the `cargo:` lines are the same as after a build. Each name
//! keeps its three most recently used entries; `cargo clean` (or removing
//! the directory) clears it. The script's output file
//! (`target/<profile>/build/metaroce-sim-tb-*/output`) says which entries
//! were hits and which were built.
//!
//! # Port names
//! A block's ports are its fields; a bus field (`crate::bus` in
//! `metaroce-hdl`, e.g. `m_ev: VerdictOut`) gives one port per bus field,
//! which rust-hdl names `bus$field` in the Verilog (`m_ev$valid`). Verilator
//! writes `$` in a C++ identifier as `__024`, so the shim reads
//! `top->m_ev__024valid` (`cxx_port`); the Rust port table, which the
//! benches look up with `Sim::port`, names it with `$` read as `_`
//! (`m_ev_valid`, `bench_port`), the flat name such a port had before
//! the buses.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/cache.rs"]
mod cache;
use cache::{Cache, objects_in};

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
/// checked at 512 bits on their own) and the GMII MAC (checked in rust-hdl's
/// simulator, `metaroce_hdl::mac`).
const LINT_ONLY: &[ModelSpec] = &[
    ModelSpec {
        prefix: "nic_device_512",
        verilog: || metaroce_hdl::nic_device_verilog(512),
    },
    ModelSpec {
        prefix: "mac_tx",
        verilog: metaroce_hdl::mac_tx_verilog,
    },
    ModelSpec {
        prefix: "mac_rx",
        verilog: metaroce_hdl::mac_rx_verilog,
    },
];

const MISSING: &str = "Verilator not found: apt-get install verilator";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=csrc/vshim.h");
    println!("cargo::rerun-if-env-changed=METAROCE_SKIP_VERILATOR");
    println!("cargo::rerun-if-env-changed=METAROCE_VERILATOR");
    println!("cargo::rerun-if-env-changed=METAROCE_SIM_ONLY");
    println!("cargo::rustc-check-cfg=cfg(verilator)");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));

    let sources: Vec<_> = MODELS.iter().map(|m| (m, (m.verilog)())).collect();

    // Codes, table addresses and register offsets (`metaroce_hdl::codegen`).
    for (name, generate) in metaroce_hdl::codegen::FILES {
        fs::write(out.join(name), generate()).expect("write generated constants");
    }

    let verilator =
        env::var_os("METAROCE_VERILATOR").map_or_else(|| "verilator".into(), PathBuf::from);
    let Some(root) = verilator_root(&verilator) else {
        if env::var_os("METAROCE_SKIP_VERILATOR").is_none_or(|v| v == "0") {
            panic!(
                "{MISSING}, or set METAROCE_SKIP_VERILATOR=1 to build without the RTL \
                 models (their tests then skip)"
            );
        }
        println!("cargo::warning={MISSING} (RTL benches will skip)");
        // Re-run on every build until it is installed: a path that does not exist
        // always counts as changed. (Watching the binary's own path is not enough:
        // Debian's package installs it with its release date as modification time,
        // older than this run, so cargo would never notice the install.)
        println!(
            "cargo::rerun-if-changed={}",
            out.join("rerun-until-verilator-is-installed").display()
        );
        write_port_tables(&out, &[]);
        return;
    };
    println!("cargo::rustc-cfg=verilator");

    println!("cargo::rerun-if-env-changed=METAROCE_VERILATOR_CACHE");
    let include = root.join("include");
    let cache = Cache::new(&out, &recipe(&verilator, &root, &cc_build(&include)));
    let only = env::var("METAROCE_SIM_ONLY").ok();
    let selected = |prefix: &str| {
        only.as_deref()
            .is_none_or(|list| list.split(',').any(|p| p.trim() == prefix))
    };
    for m in LINT_ONLY.iter().filter(|m| selected(m.prefix)) {
        let text = (m.verilog)();
        let name = format!("lint-{}", m.prefix);
        cache.get_or_fill(&name, text.as_bytes(), |dir| lint(&verilator, dir, &text));
    }
    let runtime = cache.get_or_fill("verilated-runtime", b"", |dir| {
        let mut build = cc_build(&include);
        build.files(RUNTIME.iter().map(|f| include.join(f)));
        build.out_dir(dir).compile_intermediates();
    });
    let mut objects = objects_in(&runtime);
    let mut stubs = Vec::new();
    let mut tables = Vec::new();
    for (m, text) in &sources {
        let ports = parse_ports(text);
        if selected(m.prefix) {
            let entry = cache.get_or_fill(m.prefix, text.as_bytes(), |dir| {
                verilate(&verilator, &include, dir, m.prefix, text, &ports);
            });
            objects.extend(objects_in(&entry));
        } else {
            let stub = out.join(format!("stub_{}.cpp", m.prefix));
            fs::write(&stub, stub_source(m.prefix)).expect("write stub");
            stubs.push(stub);
        }
        tables.push((m.prefix, ports));
    }
    let mut build = cc_build(&include);
    build.files(stubs);
    objects.extend(build.compile_intermediates());
    let library = build.create_archive("metaroce_vmodels", &objects);
    cc::emit_link_directives(&build, &library);
    println!("cargo::rustc-link-lib=pthread");
    cache.prune();
    write_port_tables(&out, &tables);
}

/// Verilator's runtime sources (in its `include` directory) the models need.
const RUNTIME: [&str; 3] = [
    "verilated.cpp",
    "verilated_threads.cpp",
    "verilated_vcd_c.cpp",
];

/// What the cache keys every entry by besides its own source (see the crate
/// doc): this script, the shim, the waivers, Verilator and the compiler.
fn recipe(verilator: &Path, root: &Path, build: &cc::Build) -> Vec<Vec<u8>> {
    let version = Command::new(verilator)
        .arg("--version")
        .output()
        .expect("run verilator --version")
        .stdout;
    // The compiler's own report of what it runs: its version and every
    // flag, with `-march=native` resolved to this CPU's.
    let tool = build.get_compiler();
    let report = tool
        .to_command()
        .args(["-###", "-E", "-x", "c++", "/dev/null"])
        .output()
        .expect("run the C++ compiler with -###");
    let waivers: String = metaroce_hdl::LINT_WAIVERS
        .iter()
        .map(|(flag, _)| format!("{flag} "))
        .collect();
    vec![
        include_bytes!("build.rs").to_vec(),
        include_bytes!("csrc/vshim.h").to_vec(),
        waivers.into_bytes(),
        version,
        root.as_os_str().as_encoded_bytes().to_vec(),
        tool.path().as_os_str().as_encoded_bytes().to_vec(),
        report.stderr,
        env::var("TARGET").unwrap_or_default().into_bytes(),
    ]
}

/// The C++ build settings of the models (Verilator's headers in
/// `include`), tuned for the machine that runs them.
fn cc_build(include: &Path) -> cc::Build {
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .warnings(false)
        // The models are built on the machine that runs them: tune for it.
        // -O3 and -march=native together measured ~3 % faster than -O2.
        .opt_level(3)
        // No debug info: the models are debugged through their VCD traces,
        // and `-g` makes GCC give up variable tracking on the large models'
        // trace functions (printed as build warnings) after spending the time.
        .debug(false)
        .flag_if_supported("-march=native")
        // The models clear and copy wide temporaries of a few hundred
        // bytes every evaluation: vector stores instead of `rep stos`.
        .flag_if_supported("-mstringop-strategy=vector_loop")
        .include(include)
        .include(include.join("vltstd"))
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TRACE", "1")
        .define("VM_TRACE_FST", "0")
        .define("VM_TRACE_VCD", "1");
    build
}

/// Lints `verilog` in `dir` (`verilator --lint-only -Wall` with the
/// crate's waivers); panics on a warning.
fn lint(verilator: &Path, dir: &Path, verilog: &str) {
    let path = dir.join("top.v");
    fs::write(&path, verilog).expect("write Verilog");
    let status = Command::new(verilator)
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

/// Verilates model `prefix` (its `verilog`, its `ports`) in `dir` and
/// compiles its C++ and shim there (Verilator's headers in `include`),
/// leaving in `dir` the objects and the Verilog.
fn verilate(
    verilator: &Path,
    include: &Path,
    dir: &Path,
    prefix: &str,
    verilog: &str,
    ports: &[(String, usize)],
) {
    let path = dir.join(format!("{prefix}.v"));
    fs::write(&path, verilog).expect("write Verilog");
    let mdir = dir.join("obj");
    let class = format!("V{prefix}");
    let status = Command::new(verilator)
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
        .arg(&path)
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
    let shim = mdir.join(format!("shim_{prefix}.cpp"));
    fs::write(&shim, shim_source(prefix, &class, ports, steps)).expect("write shim");
    let mut build = cc_build(include);
    build.include(&mdir).file(&shim).files(cpps);
    build.out_dir(dir).compile_intermediates();
    // The objects are all the entry needs: the generated C++ goes.
    fs::remove_dir_all(&mdir).expect("remove Verilator's C++");
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
        let name = cxx_port(name);
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

/// The C++ member Verilator declares for Verilog port `name` (`$` is
/// written `__024`).
fn cxx_port(name: &str) -> String {
    name.replace('$', "__024")
}

/// The name the benches look port `name` up by (`$` read as `_`).
fn bench_port(name: &str) -> String {
    name.replace('$', "_")
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
        let ports: Vec<_> = ports.iter().map(|(n, b)| (bench_port(n), *b)).collect();
        let mut names: Vec<_> = ports.iter().map(|(n, _)| n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ports.len(), "{prefix}: two ports named alike");
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
