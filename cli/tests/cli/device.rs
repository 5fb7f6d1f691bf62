//! `metaroce device` and `metaroce compliance`: the simulated board served and
//! probed, and the conformance suite's counts.

use super::*;

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
