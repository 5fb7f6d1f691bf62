//! Shared by the integration tests: installing the Debian packages, linking
//! `libibverbs.so.1` from the static library cargo just built, and running a server and
//! a client program against it with a time bound.

#![allow(dead_code)]

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Installs missing Debian packages (CI runs as root on a fresh machine).
pub fn ensure_packages() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let need: &[(&str, &str)] = &[
            ("/usr/bin/ibv_rc_pingpong", "ibverbs-utils"),
            ("/usr/bin/ib_write_bw", "perftest"),
            ("/usr/include/infiniband/verbs.h", "libibverbs-dev"),
            ("/usr/bin/objdump", "binutils"),
        ];
        let missing: Vec<&str> = need
            .iter()
            .filter(|(f, _)| !Path::new(f).exists())
            .map(|(_, p)| *p)
            .collect();
        if missing.is_empty() {
            return;
        }
        let apt = |args: &[&str]| {
            Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .stdout(Stdio::null())
                .status()
        };
        let _ = apt(&["update", "-qq"]);
        let mut args = vec!["install", "-y", "-qq"];
        args.extend(&missing);
        let st = apt(&args);
        assert!(
            st.is_ok_and(|s| s.success()),
            "could not install {missing:?} (run as root, or install them first)"
        );
    });
}

/// The directory holding the freshly linked `libibverbs.so.1` and `libibverbs.so`.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        ensure_packages();
        let staticlib = newest_staticlib();
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

/// The static library cargo built for this test run: the newest
/// `libmetaroce_ibverbs-*.a` beside the test executable.
fn newest_staticlib() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    std::fs::read_dir(deps)
        .expect("read deps dir")
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("libmetaroce_ibverbs") && n.ends_with(".a")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .expect("libmetaroce_ibverbs-*.a next to the test binary (crate-type staticlib)")
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

/// Runs `cmd` to completion, killing it after `limit`.
pub fn run(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd.spawn().expect("spawn");
    finish(child, Instant::now() + limit)
}

fn finish(mut child: Child, deadline: Instant) -> Output {
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break,
        }
    }
    child.wait_with_output().expect("wait")
}

/// The result of a server/client run.
pub struct PairOutput {
    /// Server.
    pub server: Output,
    /// Client.
    pub client: Output,
}

impl PairOutput {
    /// Both exited with status 0.
    pub fn ok(&self) -> bool {
        self.server.status.success() && self.client.status.success()
    }

    /// Everything both printed, for failure messages.
    pub fn text(&self) -> String {
        let s = |o: &Output| {
            format!(
                "status {}\nstdout:\n{}\nstderr:\n{}",
                o.status,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        };
        format!(
            "--- server {}\n--- client {}",
            s(&self.server),
            s(&self.client)
        )
    }

    /// The client's standard output.
    pub fn client_stdout(&self) -> String {
        String::from_utf8_lossy(&self.client.stdout).into_owned()
    }
}

/// Starts `server`, gives it a moment to listen on its TCP port, then runs `client`;
/// both are killed after `limit`.
pub fn run_pair(mut server: Command, mut client: Command, limit: Duration) -> PairOutput {
    let deadline = Instant::now() + limit;
    let server = server.spawn().expect("spawn server");
    // The client retries its TCP connection, but not forever: give the server time to
    // open its device and listen.
    std::thread::sleep(Duration::from_millis(300));
    let client = client.spawn().expect("spawn client");
    let client = finish(client, deadline);
    let server = finish(
        server,
        deadline.max(Instant::now() + Duration::from_secs(5)),
    );
    PairOutput { server, client }
}

/// Two distinct UDP ports on 127.0.0.1 for NICs on fixed ports (`METAROCE_IBV_PORT`),
/// free a moment ago and below the kernel's ephemeral range.
///
/// A port the kernel handed out for `bind(0)` and that was then released can be handed
/// out again to anyone binding port 0 before the program binds it — and every soft NIC
/// binds 32 send sockets that way (the server's, started first, among them), as does the
/// relay. That is how a program once failed to open its device ("Couldn't get context
/// for the device"). Ports outside the ephemeral range are never handed out like that;
/// the start of the search depends on the process id, so concurrent test processes
/// (other checkouts building at the same time) look in different places.
pub fn fixed_udp_ports() -> (u16, u16) {
    let ephemeral_low: u16 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    let (low, high) = (10_000u16, ephemeral_low.max(10_100));
    let span = u32::from(high - low);
    let start = std::process::id().wrapping_mul(2_654_435_761) % span;
    let mut held = Vec::new();
    for i in 0..span {
        let port = low + ((start + i) % span) as u16;
        if let Ok(s) = UdpSocket::bind(("127.0.0.1", port)) {
            held.push(s);
            if held.len() == 2 {
                break;
            }
        }
    }
    let port = |i: usize| held[i].local_addr().expect("bound").port();
    assert_eq!(held.len(), 2, "no free UDP ports in {low}..{high}");
    (port(0), port(1))
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
    let port = oob_port();
    let mut a: Vec<&str> = vec!["-g", "0", "-p", &port];
    a.extend_from_slice(args);
    let mut server = program("ibv_rc_pingpong", &a);
    server.envs(server_env.iter().map(|(k, v)| (*k, v)));
    a.push("127.0.0.1");
    let mut client = program("ibv_rc_pingpong", &a);
    client.envs(client_env.iter().map(|(k, v)| (*k, v)));
    let out = run_pair(server, client, Duration::from_secs(90));
    let text = out.text();
    assert!(out.ok(), "ibv_rc_pingpong {args:?} failed:\n{text}");
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
