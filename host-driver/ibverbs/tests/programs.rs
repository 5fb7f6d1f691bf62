//! Unmodified Verbs programs on MetaRoCE's `libibverbs.so.1`: Debian's `ibv_devices`,
//! `ibv_devinfo`, `ibv_rc_pingpong` and perftest, each as two processes on this machine
//! (directly and through the lossy relay), plus two C programs built here against the
//! system's v44 `verbs.h`. The library is linked from the static library cargo built for
//! this run; missing Debian packages are installed (CI runs as root).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;
use metaroce_cabi::lossy::LossyRelay;

#[test]
fn exports_every_rdma_core_44_symbol_with_its_version() {
    let so = lib_dir().join("libibverbs.so.1");
    let out = Command::new("objdump").arg("-T").arg(&so).output().unwrap();
    assert!(out.status.success());
    let mut ours: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (ver, name) = (f.get(f.len().wrapping_sub(2))?, f.last()?);
            (ver.starts_with("IBVERBS_") && !name.starts_with("IBVERBS_") && l.contains(" g "))
                .then(|| format!("{ver} {name}"))
        })
        .collect();
    ours.sort();
    let mut want: Vec<String> = include_str!("../abi/libibverbs-44.symbols")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_string)
        .collect();
    want.sort();
    assert_eq!(ours, want);
    // Nothing else leaks out (Rust's own symbols stay local).
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("rust_"), "Rust symbols exported");
    let soname = Command::new("objdump").arg("-p").arg(&so).output().unwrap();
    assert!(
        String::from_utf8_lossy(&soname.stdout).contains("SONAME               libibverbs.so.1")
    );
}

/// Compiles one of the C programs in `tests/c` against the system header and our
/// library, and runs it.
fn c_program(name: &str) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    metaroce_cabi::check::c_program(&src, lib_dir(), &["-libverbs", "-ldl"])
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn c_program_moves_verified_data_and_survives_bad_arguments() {
    let _g = serial();
    assert!(c_program("verbs_check").contains("verbs_check: OK"));
}

#[test]
fn loads_by_version_like_nccl() {
    assert!(c_program("dlvsym_check").contains("dlvsym_check: OK"));
}

#[test]
fn ibv_devices_and_devinfo_show_metaroce_devices() {
    let out = run(&mut program("ibv_devices", &[]), Duration::from_secs(30));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("metaroce0"), "{text}");

    devinfo_shows(&[], "127.0.0.1", &["4096 (5)"]);
}

#[test]
fn srq_pingpong_shares_one_receive_queue_among_qps_validated() {
    // 16 QPs (the default) take their receives from one SRQ on each side.
    let _g = serial();
    pingpong_program(
        "ibv_srq_pingpong",
        &["-s", "4096", "-n", "100", "-c"],
        &[],
        &[],
    );
    pingpong_program(
        "ibv_srq_pingpong",
        &["-e", "-q", "4", "-s", "10000", "-n", "100", "-c"],
        &[],
        &[],
    );
}

#[test]
fn rc_pingpong_polling_several_sizes_validated() {
    let _g = serial();
    for size in ["1", "4096", "65536"] {
        pingpong(&["-s", size, "-n", "200", "-c"], &[], &[]);
    }
}

#[test]
fn rc_pingpong_with_completion_events_validated() {
    let _g = serial();
    for size in ["64", "10000"] {
        pingpong(&["-e", "-s", size, "-n", "200", "-c"], &[], &[]);
    }
}

#[test]
fn rc_pingpong_in_authenticated_mode_from_the_environment() {
    let _g = serial();
    let key = ("METAROCE_IBV_AUTH_KEY", "5a".repeat(32));
    pingpong(
        &["-s", "4096", "-n", "200", "-c"],
        std::slice::from_ref(&key),
        std::slice::from_ref(&key),
    );
    // The variable is read: a malformed key fails ibv_create_qp at once.
    let port = oob_port();
    let mut bad = program("ibv_rc_pingpong", &["-g", "0", "-p", &port]);
    bad.env("METAROCE_IBV_AUTH_KEY", "not-a-key");
    let out = bad.output().expect("run ibv_rc_pingpong");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Couldn't create QP"), "{err}");
}

#[test]
fn rc_pingpong_and_write_bw_over_ipv6_loopback() {
    let has_v6_loopback = std::fs::read_to_string("/proc/net/if_inet6")
        .is_ok_and(|t| t.contains("00000000000000000000000000000001"));
    if !has_v6_loopback {
        eprintln!("no ::1 on this machine: IPv6 not tested");
        return;
    }
    let _g = serial();
    // Devices follow interface order, IPv4 first: the loopback's ::1 is metaroce1.
    let port = oob_port();
    let args = [
        "-d",
        "metaroce1",
        "-g",
        "0",
        "-p",
        &port,
        "-s",
        "4096",
        "-n",
        "100",
        "-c",
    ];
    let server = program("ibv_rc_pingpong", &args);
    let mut client_args = args.to_vec();
    client_args.push("127.0.0.1");
    let out = run_pair(
        server,
        program("ibv_rc_pingpong", &client_args),
        Duration::from_secs(90),
    );
    assert!(out.ok(), "{}", out.text());
    assert!(out.client_stdout().contains("GID ::1"), "{}", out.text());
    perftest(
        "ib_write_bw",
        &["-d", "metaroce1", "-s", "65536", "-n", "300"],
        &[],
        &[],
    );
}

/// The figure checks of every perftest run here reject what they should.
#[test]
fn perftest_figure_checks_reject_wrong_figures() {
    let bw = |row: &str| {
        format!(
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n{row}\n"
        )
    };
    let args = ["-s", "65536", "-n", "500"];
    let good = bw(" 65536      500              732.79             402.44 \t\t   0.006439");
    assert_eq!(check_perftest_figures(&good, &args), Ok(()));
    // A rate whose average rounds to 0.00 (8 bytes at 644 per second).
    let slow = bw(" 8          200              0.01               0.00   \t\t   0.000644");
    assert_eq!(check_perftest_figures(&slow, &["-n", "200"]), Ok(()));
    let wrong = bw(" 8          200              0.01               0.00   \t\t   0.001500");
    assert!(check_perftest_figures(&wrong, &["-n", "200"]).is_err());
    for bad in [
        " 65536      499              732.79             402.44 \t\t   0.006439",
        " 4096       500              732.79             402.44 \t\t   0.006439",
        " 65536      500              732.79             402.44 \t\t   0.003000",
        " 65536      500              0.00               0.00   \t\t   0.000000",
        " 65536      500              732.79",
    ] {
        assert!(check_perftest_figures(&bw(bad), &args).is_err(), "{bad}");
    }
    let lat = |row: &str| {
        format!(
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n{row}\n"
        )
    };
    let args = ["-n", "300"];
    let good = lat(
        " 2       300          10.33          180.29      39.50  \t       37.90     \t39.58\t\t160.47 \t\t180.29",
    );
    assert_eq!(check_perftest_figures(&good, &args), Ok(()));
    let bad = lat(
        " 2       300          10.33          18.29      39.50  \t       37.90     \t39.58\t\t160.47 \t\t180.29",
    );
    assert!(check_perftest_figures(&bad, &args).is_err());
    assert!(check_perftest_figures("no table\n", &args).is_err());
}

#[test]
fn perftest_write_and_send_bandwidth_and_latency() {
    let _g = serial();
    perftest("ib_write_bw", &["-s", "65536", "-n", "500"], &[], &[]);
    perftest("ib_send_bw", &["-s", "65536", "-n", "500"], &[], &[]);
    perftest("ib_write_lat", &["-n", "300"], &[], &[]);
    perftest("ib_send_lat", &["-n", "300"], &[], &[]);
}

#[test]
fn perftest_read_bandwidth_and_latency() {
    // ib_read_bw's server leaves its QP in RTR: it answers the READs from there.
    let _g = serial();
    perftest("ib_read_bw", &["-s", "65536", "-n", "500"], &[], &[]);
    perftest("ib_read_lat", &["-n", "300"], &[], &[]);
}

#[test]
fn perftest_atomic_bandwidth_and_latency() {
    let _g = serial();
    perftest("ib_atomic_bw", &["-n", "2000"], &[], &[]);
    perftest(
        "ib_atomic_bw",
        &["-A", "CMP_AND_SWAP", "-n", "2000"],
        &[],
        &[],
    );
    perftest("ib_atomic_lat", &["-n", "500"], &[], &[]);
}

#[test]
fn rc_pingpong_through_relay_at_1_percent_loss() {
    let _g = serial();
    let relay = LossyRelay::start(0.01, 0);
    let (s, c) = (&relay.server, &relay.client);
    pingpong(&["-s", "65536", "-n", "200", "-c"], s, c);
    pingpong(&["-e", "-s", "4096", "-n", "200", "-c"], s, c);
    pingpong_program(
        "ibv_srq_pingpong",
        &["-q", "4", "-s", "4096", "-n", "100", "-c"],
        s,
        c,
    );
    relay.assert_crossed();
}

#[test]
fn perftest_through_relay_at_1_percent_loss() {
    let _g = serial();
    let relay = LossyRelay::start(0.01, 0);
    let (s, c) = (&relay.server, &relay.client);
    perftest("ib_write_bw", &["-s", "65536", "-n", "500"], s, c);
    perftest("ib_send_bw", &["-s", "65536", "-n", "500"], s, c);
    perftest("ib_write_lat", &["-n", "300"], s, c);
    perftest("ib_send_lat", &["-n", "300"], s, c);
    perftest("ib_read_bw", &["-s", "65536", "-n", "500"], s, c);
    perftest("ib_read_lat", &["-n", "300"], s, c);
    perftest("ib_atomic_bw", &["-n", "2000"], s, c);
    perftest("ib_atomic_lat", &["-n", "300"], s, c);
    relay.assert_crossed();
}

/// The end-of-run race, amplified (run by hand: `cargo test -p metaroce-ibverbs --test
/// programs stress -- --ignored --nocapture`; `STRESS_RUNS`, default 100, and
/// `STRESS_LOSS`, default 0.05): many short `ibv_rc_pingpong -e` runs through the lossy
/// relay, each ending with a server that exits as soon as its last receive completes.
/// Without the linger of destroyed QPs about 7 in 100 runs ended in "transport retry
/// counter exceeded" on the client's last SEND; with it, none.
#[test]
#[ignore]
fn stress_end_of_run_through_relay() {
    let _g = serial();
    let env = |k: &str| std::env::var(k).ok();
    let loss: f64 = env("STRESS_LOSS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.05);
    let runs: usize = env("STRESS_RUNS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let relay = LossyRelay::start(loss, 0);
    let (s, c) = (&relay.server, &relay.client);
    let mut failures = Vec::new();
    for _ in 0..runs {
        let port = oob_port();
        let a = ["-g", "0", "-p", &port, "-e", "-s", "4096", "-n", "20", "-c"];
        let mut server = program("ibv_rc_pingpong", &a);
        server.envs(s.iter().map(|(k, v)| (*k, v)));
        let mut client = program("ibv_rc_pingpong", &[&a[..], &["127.0.0.1"]].concat());
        client.envs(c.iter().map(|(k, v)| (*k, v)));
        let out = run_pair(server, client, Duration::from_secs(60));
        if !out.ok() {
            failures.push(out.text());
        }
    }
    eprintln!("{} of {runs} runs failed at loss {loss}", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
