//! The `metaroce` binary as a user runs it: every command's `--json` document
//! (its shape, and that what it reports is consistent), and a clear error, not
//! a panic, for bad arguments. Runs are kept tiny; figures are not judged here
//! (benchmarks and `docs/results.md` do that).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod args;
mod device;
mod hdl;
mod relay;
mod sim;
mod traffic;

/// Runs `metaroce args…` with stdin closed.
fn metaroce(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metaroce"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
        .expect("run metaroce")
}

/// Runs a command that must succeed and print one JSON document on stdout.
fn json(args: &[&str]) -> Value {
    let out = metaroce(args);
    // A --json command reports its failures on stdout (compliance's
    // `failures`), so both streams go into the message.
    assert!(
        out.status.success(),
        "metaroce {args:?} failed: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "metaroce {args:?}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A JSON count (panics with the key when it is not one).
fn count(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} is not a count: {v}"))
}

/// Asserts that `v` is an object holding every key of `keys`.
fn has_keys(v: &Value, keys: &[&str], what: &str) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object"));
    for k in keys {
        assert!(obj.contains_key(*k), "{what}: no {k:?} in {v}");
    }
}

/// Runs a command that must fail with a message on stderr containing `needle`,
/// without panicking.
fn fails_with(args: &[&str], needle: &str) {
    let out = metaroce(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "metaroce {args:?} succeeded");
    assert!(
        err.contains(needle),
        "metaroce {args:?}: stderr lacks {needle:?}: {err}"
    );
    assert!(
        !err.contains("panicked"),
        "metaroce {args:?} panicked: {err}"
    );
}

/// Whether this build has the Verilated models compiled in (the `metaroce` binary and
/// this test are built against the same `metaroce-sim-tb`); if not, says which test is
/// skipped and why. A build without them is only possible with the explicit opt-out
/// `METAROCE_SKIP_VERILATOR=1` (without Verilator the build fails otherwise).
#[cfg(feature = "hdl")]
fn verilated_models(test: &str) -> bool {
    use metaroce_sim_tb::{Model, Sim, SimError};
    match Sim::new(Model::RxParser64) {
        Err(SimError::VerilatorMissing) => {
            eprintln!(
                "SKIP {test}: this metaroce was built without the Verilated models \
                 (METAROCE_SKIP_VERILATOR=1); build with Verilator installed to run it"
            );
            false
        }
        Err(e) => panic!("creating a Verilated model: {e}"),
        Ok(_) => true,
    }
}
/// [`verilated_models`]; without the models, also checks that `args` are refused
/// with the message a user gets instead.
#[cfg(feature = "hdl")]
fn verilated_models_or_refusal(test: &str, args: &[&str]) -> bool {
    let there = verilated_models(test);
    if !there {
        fails_with(args, "this metaroce has no Verilated NIC models");
    }
    there
}
