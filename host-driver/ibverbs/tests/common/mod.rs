//! Shared by the integration tests: installing the Debian packages, linking
//! `libibverbs.so.1` from the static library cargo just built, and running a server and
//! a client program against it with a time bound.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use metaroce_cabi::check;

/// Fails, naming them, when the Debian packages the tests run are missing.
pub fn require_packages() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        check::require_packages(&[
            ("/usr/bin/ibv_rc_pingpong", "ibverbs-utils"),
            ("/usr/bin/ib_write_bw", "perftest"),
            ("/usr/include/infiniband/verbs.h", "libibverbs-dev"),
            ("/usr/bin/objdump", "binutils"),
        ])
    });
}

/// The directory holding the freshly linked `libibverbs.so.1` and `libibverbs.so`.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        require_packages();
        let staticlib = check::newest_staticlib("metaroce_ibverbs");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ibverbs");
        let st = Command::new(env!("CARGO_BIN_EXE_link-ibverbs"))
            .arg(&staticlib)
            .arg(&out)
            .stdout(Stdio::null())
            .status()
            .expect("run link-ibverbs");
        assert!(st.success(), "linking {} failed", staticlib.display());
        out
    })
}

/// One program-pair test at a time: they are timing-sensitive processes on few cores.
pub fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `Command` for a Debian binary, loading our library.
pub fn program(name: &str, args: &[&str]) -> Command {
    let mut c = Command::new(name);
    c.args(args)
        .env("LD_LIBRARY_PATH", lib_dir())
        .env_remove("METAROCE_IBV_VIA")
        .env_remove("METAROCE_IBV_PORT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[allow(unused_imports)] // each test binary uses a different subset
pub use metaroce_cabi::check::{PairOutput, run};

/// Starts `server`, gives it a moment (300 ms) to listen on its TCP port, then runs
/// `client`; both are killed after `limit`.
pub fn run_pair(server: Command, client: Command, limit: Duration) -> PairOutput {
    let start = Instant::now();
    // The client retries its TCP connection, but not forever: give the server time to
    // open its device and listen.
    check::run_pair(
        server,
        client,
        || start.elapsed() >= Duration::from_millis(300),
        limit,
    )
}

/// Two distinct UDP ports on 127.0.0.1 for NICs on fixed ports (`METAROCE_IBV_PORT`),
/// outside the kernel's ephemeral range ([`check::fixed_udp_ports`] says why).
pub fn fixed_udp_ports() -> (u16, u16) {
    check::fixed_udp_ports(1)
}

/// A TCP port (for the programs' out-of-band exchange) unique to this test process.
pub fn tcp_port(offset: u16) -> u16 {
    // Spread test processes apart; each test passes its own offset.
    20000 + (std::process::id() % 2000) as u16 * 8 + offset
}

/// A TCP port for the programs' out-of-band exchange, free a moment ago.
pub fn oob_port() -> String {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port().to_string())
        .expect("bind an ephemeral TCP port")
}

/// Runs `ibv_rc_pingpong` as server and client with `args` (plus `-p`), optionally with
/// environment for each side; returns the client's output.
pub fn pingpong(
    args: &[&str],
    server_env: &[(&str, String)],
    client_env: &[(&str, String)],
) -> String {
    pingpong_program("ibv_rc_pingpong", args, server_env, client_env)
}

/// Runs one of the pingpong examples (`bin`) as server and client with `args` (plus
/// `-g 0 -p`), optionally with environment for each side; returns the client's output.
pub fn pingpong_program(
    bin: &str,
    args: &[&str],
    server_env: &[(&str, String)],
    client_env: &[(&str, String)],
) -> String {
    let port = oob_port();
    let mut a: Vec<&str> = vec!["-g", "0", "-p", &port];
    a.extend_from_slice(args);
    let mut server = program(bin, &a);
    server.envs(server_env.iter().map(|(k, v)| (*k, v)));
    a.push("127.0.0.1");
    let mut client = program(bin, &a);
    client.envs(client_env.iter().map(|(k, v)| (*k, v)));
    let out = run_pair(server, client, Duration::from_secs(90));
    let text = out.text();
    assert!(out.ok(), "{bin} {args:?} failed:\n{text}");
    let stdout = out.client_stdout();
    assert!(stdout.contains("iters in"), "{text}");
    assert!(!text.contains("invalid data"), "{text}");
    stdout
}

/// Runs a perftest binary as server and client; returns the client's output.
pub fn perftest(
    bin: &str,
    args: &[&str],
    server_env: &[(&str, String)],
    client_env: &[(&str, String)],
) -> String {
    let port = oob_port();
    let mut a: Vec<&str> = vec!["-p", &port];
    a.extend_from_slice(args);
    let mut server = program(bin, &a);
    server.envs(server_env.iter().map(|(k, v)| (*k, v)));
    a.push("127.0.0.1");
    let mut client = program(bin, &a);
    client.envs(client_env.iter().map(|(k, v)| (*k, v)));
    let out = run_pair(server, client, Duration::from_secs(120));
    let text = out.text();
    assert!(out.ok(), "{bin} {args:?} failed:\n{text}");
    let stdout = out.client_stdout();
    assert!(stdout.contains("#bytes"), "{bin}: no results:\n{text}");
    stdout
}
