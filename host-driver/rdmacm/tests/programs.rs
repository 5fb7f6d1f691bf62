//! Unmodified rdma_cm programs on MetaRoCE's `librdmacm.so.1` and `libibverbs.so.1`:
//! Debian's `rping`, `ucmatose`, `rdma_server`/`rdma_client` and perftest's
//! `ib_write_bw -R`, each as two processes on 127.0.0.1, directly and through the relay
//! dropping 1 % of datagrams, plus a C program built here against the system's
//! `rdma_cma.h`. Both libraries are linked from the static libraries cargo built for
//! this run; missing Debian packages are installed (CI runs as root).

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use metaroce_cabi::check::{
    PairOutput, apt_install, exported_symbols, run, run_pair, tcp_listening,
};
use metaroce_cabi::link::{LIBIBVERBS, LIBRDMACM, Library, link, listing_entries};
use metaroce_relay::{LinkConfig, PathConfig, Relay, RelayConfig, RelayHandle};

/// Installs the Debian packages the tests use, when missing.
fn ensure_packages() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let need = [
            ("/usr/bin/rping", "rdmacm-utils"),
            ("/usr/bin/ib_write_bw", "perftest"),
            ("/usr/include/rdma/rdma_cma.h", "librdmacm-dev"),
            ("/usr/include/infiniband/verbs.h", "libibverbs-dev"),
            ("/usr/bin/objdump", "binutils"),
        ];
        let missing: Vec<&str> = need
            .iter()
            .filter(|(f, _)| !Path::new(f).exists())
            .map(|(_, p)| *p)
            .collect();
        if !missing.is_empty() {
            apt_install(&missing);
        }
        for (f, p) in need {
            assert!(
                Path::new(f).exists(),
                "{p} is needed (run as root, or install it first)"
            );
        }
    });
}

/// The newest `lib<stem>-*.a` cargo built beside this test executable.
fn staticlib(stem: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    std::fs::read_dir(deps)
        .expect("read deps dir")
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with(&format!("lib{stem}-")) && n.ends_with(".a")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .unwrap_or_else(|| panic!("lib{stem}-*.a next to the test binary (crate-type staticlib)"))
}

/// The directory holding the freshly linked `libibverbs.so.1` and `librdmacm.so.1`.
fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        ensure_packages();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rdmacm");
        let libs: [(&Library, &str); 2] = [
            (&LIBIBVERBS, "metaroce_ibverbs"),
            (&LIBRDMACM, "metaroce_rdmacm"),
        ];
        for (lib, stem) in libs {
            link(lib, &staticlib(stem), &out)
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
type Side = Vec<(&'static str, String)>;

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
    let dir = lib_dir();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/cm_check.c");
    let exe = dir.join("cm_check");
    let st = Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg(format!("-L{}", dir.display()))
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .args(["-lrdmacm", "-libverbs"])
        .status()
        .expect("run cc");
    assert!(st.success(), "compiling cm_check.c failed");
    let _g = serial();
    let out = run(
        Command::new(&exe)
            .env("LD_LIBRARY_PATH", dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        Duration::from_secs(60),
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("cm_check: OK"),
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

/// The client fails at once, cleanly, when nobody listens on the port.
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

/// Two UDP ports `p` with `p + 1` also free, below the kernel's ephemeral range (see the
/// libibverbs tests for why), for NICs on fixed ports.
fn fixed_port_pairs() -> (u16, u16) {
    let low_ephemeral: u16 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    let (low, high) = (12_000u16, low_ephemeral.max(12_200));
    let span = u32::from(high - low) / 2;
    let start = std::process::id().wrapping_mul(2_654_435_761) % span;
    let mut found = Vec::new();
    let mut held = Vec::new();
    for i in 0..span {
        let p = low + (((start + i) % span) * 2) as u16;
        if let (Ok(a), Ok(b)) = (
            UdpSocket::bind(("127.0.0.1", p)),
            UdpSocket::bind(("127.0.0.1", p + 1)),
        ) {
            held.push((a, b));
            found.push(p);
            if found.len() == 2 {
                break;
            }
        }
    }
    assert_eq!(found.len(), 2, "no free UDP port pairs in {low}..{high}");
    (found[0], found[1])
}

/// A relay between the two sides' NICs dropping each datagram with probability 1 % on
/// each of 8 paths, and each side's environment. The NIC the connection manager uses is
/// the process's first libibverbs context, or its second when the program opens a
/// context itself first (`own_context`: perftest), so with `METAROCE_IBV_PORT=p` it is
/// on port `p` or `p + 1`.
fn lossy_fabric(own_context: bool) -> (RelayHandle, (Side, Side)) {
    let (s, c) = fixed_port_pairs();
    let cm_nic = |p: u16| p + u16::from(own_context);
    let nic = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
    let links = vec![
        // 0: towards the server; 1: towards the client.
        LinkConfig {
            listen: nic(0),
            forward_to: nic(cm_nic(s)),
        },
        LinkConfig {
            listen: nic(0),
            forward_to: nic(cm_nic(c)),
        },
    ];
    let paths = vec![
        PathConfig {
            loss: 0.01,
            ..PathConfig::default()
        };
        8
    ];
    let mut cfg = RelayConfig::new(links, paths);
    cfg.reseal_icrc = true;
    cfg.seed = 7;
    let relay = Relay::start(cfg).expect("start relay");
    let via = |i: usize| relay.listen_addrs()[i].to_string();
    let server = vec![
        ("METAROCE_IBV_PORT", s.to_string()),
        ("METAROCE_IBV_VIA", via(1)),
    ];
    let client = vec![
        ("METAROCE_IBV_PORT", c.to_string()),
        ("METAROCE_IBV_VIA", via(0)),
    ];
    (relay, (server, client))
}

fn assert_dropped(relay: &RelayHandle) {
    let dropped: u64 = relay.all_counters().iter().map(|p| p.dropped_loss).sum();
    assert!(
        dropped > 0,
        "the relay dropped nothing: the traffic did not cross it"
    );
}

#[test]
fn rdma_cm_programs_through_relay_at_1_percent_loss() {
    let _g = serial();
    let (relay, env) = lossy_fabric(false);
    rping(&env, &["-S", "16000"]);
    ucmatose(&env, &["-C", "200", "-S", "4000"]);
    rdma_server_client(&env);
    assert_dropped(&relay);
}

#[test]
fn perftest_over_rdma_cm_through_relay_at_1_percent_loss() {
    let _g = serial();
    let (relay, env) = lossy_fabric(true);
    perftest_rdma_cm("ib_write_bw", &env);
    assert_dropped(&relay);
}
