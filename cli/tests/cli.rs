//! The `metaroce` binary as a user runs it: every command's `--json` document
//! (its shape, and that what it reports is consistent), and a clear error, not
//! a panic, for bad arguments. Runs are kept tiny; figures are not judged here
//! (benchmarks and `docs/results.md` do that).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

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
    assert!(
        out.status.success(),
        "metaroce {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "metaroce {args:?}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
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

#[test]
fn demo_json_reports_verified_phases() {
    let d = json(&["demo", "--seconds", "0.3", "--no-contrast", "--json"]);
    has_keys(&d, &["loss", "path_rate_mbps", "hot_path", "runs"], "demo");
    let runs = d["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "--no-contrast runs only the spraying run");
    has_keys(&runs[0], &["name", "paths", "phases", "path_stats"], "run");
    for p in runs[0]["phases"].as_array().expect("phases") {
        has_keys(
            p,
            &[
                "op",
                "goodput_gbps",
                "messages",
                "verified",
                "verified_bytes",
            ],
            "phase",
        );
        assert_eq!(p["verified"], true, "every byte verified: {p}");
    }
}

#[test]
fn bench_json_for_each_operation() {
    for op in ["write", "send", "read"] {
        let b = json(&[
            "bench",
            op,
            "--duration",
            "0.3",
            "--size",
            "65536",
            "--json",
        ]);
        has_keys(
            &b,
            &[
                "op",
                "backend",
                "size",
                "messages",
                "bytes",
                "goodput_gbps",
                "msg_rate",
                "verified",
                "mismatches",
                "errors",
                "path_stats",
            ],
            op,
        );
        assert_eq!(b["backend"], "soft");
        assert_eq!(
            (&b["verified"], &b["mismatches"]),
            (&Value::Bool(true), &0.into())
        );
        assert!(
            b["messages"].as_u64().unwrap() > 0,
            "{op}: no message moved"
        );
        assert_eq!(
            b["bytes"].as_u64().unwrap(),
            b["messages"].as_u64().unwrap() * 65536,
            "{op}: bytes = messages × size"
        );
    }
}

#[test]
fn sim_json_for_each_scenario() {
    let one = ["--json", "--transport", "metaroce"];
    let runs: [(&str, &[&str], &[&str]); 8] = [
        (
            "loss",
            &["--loss", "0.01", "--seeds", "1", "--duration-ms", "1"],
            &[],
        ),
        (
            "failover",
            &["--qps", "2", "--duration-ms", "1", "--event-at-us", "300"],
            &["duration_ms", "event_at_us"],
        ),
        (
            "hotlink",
            &["--qps", "2", "--duration-ms", "1", "--event-at-us", "300"],
            &["background_load", "event_at_us"],
        ),
        (
            "incast",
            &["--senders", "2", "--duration-ms", "1"],
            &["duration_ms"],
        ),
        (
            "allreduce",
            &["--hosts", "8", "--planes", "1", "--data-mib", "1"],
            &[],
        ),
        (
            "scale-across",
            &["--rtt-ms", "1", "--loss", "0.01", "--rtts", "4"],
            &["connections", "long_links", "rtts_per_run"],
        ),
        (
            "kv-incast",
            &["--senders", "2", "--object-kib", "16", "--jobs", "3"],
            &["buffer_kb", "op"],
        ),
        (
            "scale",
            &[
                "--connections",
                "16",
                "--hosts",
                "4",
                "--duration-ms",
                "1",
                "--warmup-ms",
                "0.5",
            ],
            &["paths", "message_kib", "warmup_ms"],
        ),
    ];
    for (scenario, args, keys) in runs {
        let mut a = vec!["sim", scenario];
        a.extend(one);
        a.extend(args);
        let d = json(&a);
        has_keys(&d, &["scenario", "results"], scenario);
        has_keys(&d, keys, scenario);
        let results = d["results"].as_array().expect("results");
        assert!(!results.is_empty(), "{scenario}: no result");
    }
}

#[test]
fn sim_runs_each_congestion_controller_side_by_side() {
    let d = json(&[
        "sim",
        "incast",
        "--json",
        "--senders",
        "2",
        "--duration-ms",
        "0.5",
        "--cc",
        "ecn-aimd,swift",
    ]);
    assert_eq!(d["metaroce_rate_hint"], true);
    let rows: Vec<(String, Value)> = d["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["transport"].as_str().unwrap().to_string(),
                r["cc"].clone(),
            )
        })
        .collect();
    let expected = [
        ("metaroce", Value::from("ecn-aimd")),
        ("metaroce", Value::from("swift")),
        ("rocev2", Value::Null),
        ("irn", Value::Null),
    ];
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for ((transport, cc), (want_transport, want_cc)) in rows.iter().zip(&expected) {
        assert_eq!((transport.as_str(), cc), (*want_transport, want_cc));
    }
    let d = json(&[
        "sim",
        "hotlink",
        "--json",
        "--transport",
        "metaroce",
        "--qps",
        "1",
        "--duration-ms",
        "0.5",
        "--event-at-us",
        "200",
        "--cc",
        "swift",
        "--no-rate-hint",
    ]);
    assert_eq!(d["metaroce_rate_hint"], false);
    assert_eq!(d["results"][0]["cc"], "swift");
    fails_with(&["sim", "incast", "--cc", "bogus"], "invalid value 'bogus'");
}

#[test]
fn compliance_json_counts_add_up() {
    let d = json(&["compliance", "--json", "--filter", "ack"]);
    has_keys(
        &d,
        &[
            "target", "total", "passed", "failed", "skipped", "failures", "cases",
        ],
        "compliance",
    );
    let n = |k: &str| d[k].as_u64().unwrap();
    assert!(n("total") > 0);
    assert_eq!(n("passed") + n("failed") + n("skipped"), n("total"));
    assert_eq!(d["cases"].as_array().unwrap().len() as u64, n("total"));
    assert_eq!(n("failed"), 0, "{}", d["failures"]);
}

#[test]
fn relay_runs_until_stdin_closes_and_keeps_its_old_name() {
    let link = ["--link", "127.0.0.1:0=127.0.0.1:9"];
    let out = metaroce(&[&["relay"][..], &link].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("link 127.0.0.1:"));

    let old = metaroce(&[&["fabric"][..], &link].concat());
    assert!(old.status.success());
    assert!(String::from_utf8_lossy(&old.stderr).contains("now `metaroce relay`"));
}

#[test]
fn relay_commands_on_stdin_are_checked() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_metaroce"))
        .args(["relay", "--link", "127.0.0.1:0=127.0.0.1:9"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn relay");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"no-such-command 1\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let all = [out.stdout, out.stderr].concat();
    assert!(
        !String::from_utf8_lossy(&all).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&all)
    );
}

#[test]
fn bad_arguments_get_clear_errors() {
    fails_with(&["no-such-command"], "unrecognized subcommand");
    fails_with(
        &["bench", "write", "--size", "0"],
        "--size must be positive",
    );
    fails_with(
        &["bench", "write", "--loss", "1.5"],
        "--loss must be in [0, 1)",
    );
    fails_with(&["sim", "loss", "--loss", "2"], "not a probability");
    fails_with(
        &["sim", "allreduce", "--hosts", "4"],
        "is not a multiple of --hosts-per-leaf",
    );
    fails_with(&["relay", "--link", "garbage"], "expected LISTEN=FORWARD");
    fails_with(&["compliance", "--target", "bogus"], "unknown target");
    fails_with(&["demo", "--loss", "lots"], "invalid value 'lots'");
}

#[cfg(feature = "hdl")]
#[test]
fn hdl_regmap_prints_the_register_map() {
    // That it equals docs/regmap.md is metaroce-hdl's own test.
    let out = metaroce(&["hdl", "regmap"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("# MetaRoCE NIC BAR0 register map\n"),
        "{text}"
    );
}
