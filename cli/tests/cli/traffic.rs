//! `metaroce demo` and `metaroce bench`: verified traffic between two NICs, in one
//! process and across processes through an external relay.

use super::*;

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
