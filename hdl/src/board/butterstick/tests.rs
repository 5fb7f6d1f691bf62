//! The board tops' emitted Verilog through Verilator's lint (`-Wall`, the
//! project's waivers, [`crate::LINT_WAIVERS`], and the tops' own, each for
//! a named signal with its reason, `bitstreams/ecp5/board_lint.vlt`), with
//! simulation stand-ins for the ECP5 primitives
//! (`bitstreams/ecp5/prims_sim.v`).
//!
//! Verilator is `$METAROCE_VERILATOR`, else `verilator` on `PATH`. Without
//! it these tests fail, unless `METAROCE_SKIP_VERILATOR=1` opts out (as for
//! the `metaroce-sim-tb` build): then they print why and pass.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// The ECP5 primitives' stand-ins.
const PRIMS: &str = include_str!("../../../../bitstreams/ecp5/prims_sim.v");
/// The tops' waivers (a Verilator configuration file).
const WAIVERS: &str = include_str!("../../../../bitstreams/ecp5/board_lint.vlt");

/// The Verilator to lint with, or `None` (after saying so) when it is
/// missing and the opt-out is set.
fn verilator(test: &str) -> Option<PathBuf> {
    let bin = env::var_os("METAROCE_VERILATOR").map_or_else(|| "verilator".into(), PathBuf::from);
    let runs = Command::new(&bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if runs {
        return Some(bin);
    }
    if env::var_os("METAROCE_SKIP_VERILATOR").is_none_or(|v| v == "0") {
        panic!(
            "Verilator not found ({}): apt-get install verilator, or set \
             METAROCE_SKIP_VERILATOR=1 to skip the lint of the board tops",
            bin.display()
        );
    }
    eprintln!("SKIP {test}: no Verilator and METAROCE_SKIP_VERILATOR=1");
    None
}

/// Lints `verilog` (top module `top`) with the primitives' stand-ins and
/// the waivers; panics with Verilator's report on any warning.
fn lint(test: &str, verilog: &str) {
    let Some(bin) = verilator(test) else {
        return;
    };
    let dir = env::temp_dir().join(format!("metaroce-lint-{test}-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("make the lint directory");
    let files = [
        (dir.join("board_lint.vlt"), WAIVERS),
        (dir.join("top.v"), verilog),
        (dir.join("prims_sim.v"), PRIMS),
    ];
    for (path, text) in &files {
        fs::write(path, text).expect("write a file to lint");
    }
    let out = Command::new(bin)
        .args(["--lint-only", "-Wall"])
        .args(crate::LINT_WAIVERS.iter().map(|(flag, _)| flag))
        .args(["--top-module", "top"])
        .args(files.iter().map(|(path, _)| path))
        .output()
        .expect("run verilator");
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    fs::remove_dir_all(&dir).expect("remove the lint directory");
    assert!(out.status.success(), "verilator lint of {test}:\n{report}");
}

#[test]
fn nic_top_lints() {
    lint("butterstick_nic", &crate::butterstick_nic_verilog());
}

#[test]
fn echo_top_lints() {
    lint("butterstick_echo", &crate::butterstick_echo_verilog());
}
