//! Unmodified rdma_cm programs on MetaRoCE's `librdmacm.so.1` and `libibverbs.so.1`:
//! Debian's `rping`, `ucmatose`, `rdma_server`/`rdma_client` and perftest's
//! `ib_write_bw -R`, each as two processes on 127.0.0.1, directly and through the relay
//! dropping 1 % of datagrams, plus a C program built here against the system's
//! `rdma_cma.h`. Both libraries are linked from the static libraries cargo built for
//! this run; missing Debian packages are installed (CI runs as root).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use metaroce_cabi::check::{self, PairOutput, exported_symbols, run, run_pair, tcp_listening};
use metaroce_cabi::link::{LIBIBVERBS, LIBRDMACM, Library, link, listing_entries};
use metaroce_cabi::lossy::LossyRelay;

/// Fails, naming them, when the Debian packages the tests run are missing.
fn require_packages() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        check::require_packages(&[
            ("/usr/bin/rping", "rdmacm-utils"),
            ("/usr/bin/ib_write_bw", "perftest"),
            ("/usr/include/rdma/rdma_cma.h", "librdmacm-dev"),
            ("/usr/include/infiniband/verbs.h", "libibverbs-dev"),
            ("/usr/bin/objdump", "binutils"),
        ])
    });
}

/// The directory holding the freshly linked `libibverbs.so.1` and `librdmacm.so.1`.
fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        require_packages();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rdmacm");
        let libs: [(&Library, &str); 2] = [
            (&LIBIBVERBS, "metaroce_ibverbs"),
            (&LIBRDMACM, "metaroce_rdmacm"),
        ];
        for (lib, stem) in libs {
            link(lib, &check::newest_staticlib(stem), &out)
                .unwrap_or_else(|e| panic!("linking {}: {e}", lib.soname));
        }
        out
    })
}

/// One program pair at a time: they are timing-sensitive processes on few cores.
fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `Command` for a Debian binary, loading our libraries.
fn program(name: &str, args: &[&str], env: &[(&str, String)]) -> Command {
    let mut c = Command::new(name);
    c.args(args)
        .env("LD_LIBRARY_PATH", lib_dir())
        .env_remove("METAROCE_IBV_VIA")
        .env_remove("METAROCE_IBV_PORT")
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A TCP port free a moment ago (the rdma_cm port of one run).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind an ephemeral TCP port")
}

/// Environment of each side of a program pair.
type Side = check::SideEnv;

/// Runs a server and a client (given their arguments, with `{port}` replaced by a fresh
/// rdma_cm port) until both exit, 60 s at most.
fn pair(bin: &str, server: &[&str], client: &[&str], env: &(Side, Side)) -> PairOutput {
    let port = free_port();
    let p = port.to_string();
    let fill = |a: &[&str]| -> Vec<String> { a.iter().map(|s| s.replace("{port}", &p)).collect() };
    let (s, c) = (fill(server), fill(client));
    let s: Vec<&str> = s.iter().map(String::as_str).collect();
    let c: Vec<&str> = c.iter().map(String::as_str).collect();
    run_pair(
        program(bin, &s, &env.0),
        program(bin, &c, &env.1),
        || tcp_listening(port),
        Duration::from_secs(60),
    )
}

fn direct() -> (Side, Side) {
    (Vec::new(), Vec::new())
}

#[test]
fn exports_every_rdma_core_44_symbol_with_its_version() {
    let so = lib_dir().join("librdmacm.so.1");
    let (ours, leaked) = exported_symbols(&so).unwrap();
    let mut want: Vec<String> = listing_entries(LIBRDMACM.listing)
        .unwrap()
        .into_iter()
        .map(|(v, s)| format!("{v} {s}"))
        .collect();
    want.sort();
    assert_eq!(ours, want);
    assert!(!leaked, "Rust symbols exported");
    let dynamic = Command::new("objdump").arg("-p").arg(&so).output().unwrap();
    let text = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        text.contains("SONAME               librdmacm.so.1"),
        "{text}"
    );
    assert!(
        text.contains("NEEDED               libibverbs.so.1"),
        "{text}"
    );
}

#[test]
fn c_program_checks_private_data_rejection_channels_and_errors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/cm_check.c");
    let _g = serial();
    let text = check::c_program(&src, lib_dir(), &["-lrdmacm", "-libverbs"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("cm_check: OK"), "{text}");
    // The stray TCP peer's bytes were refused as a CM message and reported.
    assert!(
        text.contains("refused a CM message from 127.0.0.1:")
            && text.contains("(1 refused so far)"),
        "{text}"
    );
}

/// `rping` with data validation: the client's 10 pings go out by SEND, come back by the
/// server's RDMA READ and WRITE, and are compared (`-V`).
fn rping(env: &(Side, Side), extra: &[&str]) {
    let server = [&["-s", "-a", "127.0.0.1", "-p", "{port}", "-V"][..], extra].concat();
    let client = [
        &[
            "-c",
            "-a",
            "127.0.0.1",
            "-p",
            "{port}",
            "-C",
            "10",
            "-V",
            "-v",
        ][..],
        extra,
    ]
    .concat();
    let out = pair("rping", &server, &client, env);
    let text = out.text();
    assert!(out.ok(), "rping {extra:?} failed:\n{text}");
    assert!(
        out.client_stdout().contains("ping data: rdma-ping-9: "),
        "{text}"
    );
    assert!(!text.contains("data mismatch"), "{text}");
}

#[test]
fn rping_validated() {
    let _g = serial();
    rping(&direct(), &[]);
    // The QP made and moved by the program itself (rdma_init_qp_attr, rdma_establish),
    // and a bigger buffer.
    rping(&direct(), &["-q", "-S", "4000"]);
}

#[test]
fn rping_over_ipv6_loopback() {
    let has_v6_loopback = std::fs::read_to_string("/proc/net/if_inet6")
        .is_ok_and(|t| t.contains("00000000000000000000000000000001"));
    if !has_v6_loopback {
        eprintln!("no ::1 on this machine: IPv6 not tested");
        return;
    }
    let _g = serial();
    let server = ["-s", "-a", "::1", "-p", "{port}", "-V"];
    let client = ["-c", "-a", "::1", "-p", "{port}", "-C", "5", "-V"];
    let out = pair("rping", &server, &client, &direct());
    assert!(out.ok(), "{}", out.text());
}

fn ucmatose(env: &(Side, Side), extra: &[&str]) {
    let server = [&["-p", "{port}"][..], extra].concat();
    let client = [&["-s", "127.0.0.1", "-p", "{port}"][..], extra].concat();
    let out = pair("ucmatose", &server, &client, env);
    let text = out.text();
    assert!(out.ok(), "ucmatose {extra:?} failed:\n{text}");
    assert!(out.client_stdout().contains("return status 0"), "{text}");
}

#[test]
fn ucmatose_one_and_several_connections() {
    let _g = serial();
    ucmatose(&direct(), &[]);
    ucmatose(&direct(), &["-c", "4", "-C", "50", "-S", "1000"]);
}

fn rdma_server_client(env: &(Side, Side)) {
    let port = free_port().to_string();
    let out = run_pair(
        program("rdma_server", &["-p", &port], &env.0),
        program("rdma_client", &["-s", "127.0.0.1", "-p", &port], &env.1),
        || tcp_listening(port.parse().unwrap_or(0)),
        Duration::from_secs(60),
    );
    let text = out.text();
    assert!(out.ok(), "rdma_server/rdma_client failed:\n{text}");
    assert!(out.client_stdout().contains("rdma_client: end 0"), "{text}");
}

#[test]
fn rdma_server_and_client() {
    let _g = serial();
    rdma_server_client(&direct());
}

/// The client fails cleanly when nobody listens on the port (after trying again for
/// the 2 s route timeout `rdma_create_ep` gives).
#[test]
fn rdma_client_without_server_is_refused() {
    let port = free_port().to_string();
    let out = run(
        &mut program("rdma_client", &["-s", "127.0.0.1", "-p", &port], &[]),
        Duration::from_secs(20),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{err}");
    assert!(err.contains("rdma_connect: Connection refused"), "{err}");
}

/// perftest over rdma_cm: the QPs connected by `rdma_connect`/`rdma_accept`, and the
/// test parameters exchanged over an rdma_cm connection too.
fn perftest_rdma_cm(bin: &str, env: &(Side, Side)) {
    let server = ["-R", "-p", "{port}", "-s", "65536", "-n", "500"];
    let client = [&server[..], &["127.0.0.1"]].concat();
    let out = pair(bin, &server, &client, env);
    let text = out.text();
    assert!(out.ok(), "{bin} -R failed:\n{text}");
    let stdout = out.client_stdout();
    assert!(
        stdout.contains("rdma_cm QPs\t : ON") && stdout.contains("#bytes"),
        "{text}"
    );
}

/// `ib_read_bw` too: the connection manager moves both QPs to RTS, so the server
/// answers the client's READs.
#[test]
fn perftest_write_and_read_bw_over_rdma_cm() {
    let _g = serial();
    perftest_rdma_cm("ib_write_bw", &direct());
    perftest_rdma_cm("ib_read_bw", &direct());
}

/// The LD_PRELOAD shim `tests/c/late_listen.c`, built once next to the libraries.
fn late_listen_shim() -> &'static Path {
    static SO: OnceLock<PathBuf> = OnceLock::new();
    SO.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/late_listen.c");
        let so = lib_dir().join("late_listen.so");
        let st = Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&so)
            .arg(&src)
            .arg("-ldl")
            .status()
            .expect("run cc");
        assert!(st.success(), "compiling {} failed", src.display());
        so
    })
}

/// perftest's `-R` server destroys the listener of its parameter exchange and listens
/// again for the test's QPs while its client already connects. Here the second listen
/// starts 500 ms late (the shim above), so the client's connection is refused at first:
/// it is tried again until the listener is there (within the 2 s route timeout
/// perftest gives), not reported as REJECTED. (Without the retry the client fails with
/// "RDMA_CM_EVENT_REJECTED; error: 8".)
#[test]
fn perftest_rdma_cm_waits_for_a_late_second_listener() {
    let _g = serial();
    let server_env = vec![(
        "LD_PRELOAD",
        late_listen_shim().to_string_lossy().into_owned(),
    )];
    perftest_rdma_cm("ib_write_bw", &(server_env, Vec::new()));
}

/// A relay between the two sides' NICs dropping 1 % of datagrams on each of 8 paths.
/// The NIC the connection manager uses is the process's first libibverbs context, or its
/// second when the program opens a context itself first (`own_context`: perftest).
fn lossy_fabric(own_context: bool) -> (LossyRelay, (Side, Side)) {
    let relay = LossyRelay::start(0.01, u16::from(own_context));
    let env = (relay.server.clone(), relay.client.clone());
    (relay, env)
}

#[test]
fn rdma_cm_programs_through_relay_at_1_percent_loss() {
    let _g = serial();
    let (relay, env) = lossy_fabric(false);
    rping(&env, &["-S", "16000"]);
    ucmatose(&env, &["-C", "200", "-S", "4000"]);
    rdma_server_client(&env);
    relay.assert_crossed();
}

#[test]
fn perftest_over_rdma_cm_through_relay_at_1_percent_loss() {
    let _g = serial();
    let (relay, env) = lossy_fabric(true);
    perftest_rdma_cm("ib_write_bw", &env);
    relay.assert_crossed();
}
