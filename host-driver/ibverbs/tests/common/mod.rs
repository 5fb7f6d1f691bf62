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

/// Runs `ibv_devinfo -v -d metaroce0` with `env` and checks that it describes an
/// active RoCE v2 Ethernet port whose GID 0 is `ip` (IPv4-mapped), and shows every
/// line of `also`.
pub fn devinfo_shows(env: &[(&str, String)], ip: &str, also: &[&str]) {
    let mut cmd = program("ibv_devinfo", &["-v", "-d", "metaroce0"]);
    cmd.envs(env.iter().map(|(k, v)| (*k, v)));
    let out = run(&mut cmd, Duration::from_secs(60));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let gid = format!("GID[  0]:\t\t::ffff:{ip}, RoCE v2");
    let base = [
        "hca_id:\tmetaroce0",
        "PORT_ACTIVE (4)",
        "link_layer:\t\tEthernet",
        gid.as_str(),
    ];
    for want in base.iter().chain(also) {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

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
    if let Err(e) = check_perftest_figures(&stdout, args) {
        panic!("{bin} {args:?}: {e}:\n{text}");
    }
    stdout
}

/// The value following `flag` in `args`, parsed.
fn arg_value(args: &[&str], flag: &str) -> Option<u64> {
    let i = args.iter().position(|a| *a == flag)?;
    args.get(i + 1)?.parse().ok()
}

/// Checks the figures perftest reports against what was asked and against each other:
/// the message size (`-s`) and iteration count (`-n`) as given; for a bandwidth program
/// a positive average whose value is the message rate times the size (perftest's MB are
/// 2^20 bytes, its Gbit 10^9 bits with `--report_gbits`); for a latency program positive times in order (min ≤ typical, average ≤
/// max; 99 % ≤ 99.9 % ≤ max).
pub fn check_perftest_figures(stdout: &str, args: &[&str]) -> Result<(), String> {
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("#bytes"));
    let header = lines.next().ok_or("no result table")?;
    let row = lines.next().ok_or("no result row")?;
    let v: Vec<f64> = row
        .split_whitespace()
        .map(|f| {
            f.parse::<f64>()
                .map_err(|_| format!("not a figure: {f:?} in {row:?}"))
        })
        .collect::<Result<_, _>>()?;
    let (bytes, iterations) = match v[..] {
        [b, i, ..] => (b, i),
        _ => return Err(format!("short result row {row:?}")),
    };
    if let Some(s) = arg_value(args, "-s") {
        if bytes != s as f64 {
            return Err(format!("reported {bytes} bytes per message, asked for {s}"));
        }
    }
    if let Some(n) = arg_value(args, "-n") {
        if iterations != n as f64 {
            return Err(format!("reported {iterations} iterations, asked for {n}"));
        }
    }
    if header.contains("BW average") {
        let [_, _, _peak, average, rate] = v[..] else {
            return Err(format!("bandwidth row {row:?}"));
        };
        // Bandwidth units per Mpps of this size; perftest prints the rate with six
        // decimals, so at low rates its rounding alone moves the product.
        let per_mpps = if args.contains(&"--report_gbits") {
            1e6 * bytes * 8.0 / 1e9
        } else {
            1e6 * bytes / f64::from(1u32 << 20)
        };
        let from_rate = rate * per_mpps;
        let tolerance = 0.01 + 0.02 * average + 0.5e-6 * per_mpps;
        // The average has two decimals: below 0.005 (8-byte atomics at a few
        // hundred per second, on the simulated board) it prints as 0.00.
        let shown_as_zero = average == 0.0 && from_rate < 0.005;
        if (average <= 0.0 && !shown_as_zero)
            || rate <= 0.0
            || (average - from_rate).abs() > tolerance
        {
            return Err(format!(
                "average {average} and message rate {rate} Mpps × {bytes} B = {from_rate:.3} disagree"
            ));
        }
    } else if header.contains("t_min") {
        let [_, _, min, max, typical, avg, _stdev, p99, p999] = v[..] else {
            return Err(format!("latency row {row:?}"));
        };
        let ordered = min > 0.0
            && min <= typical
            && typical <= max
            && min <= avg
            && avg <= max
            && p99 <= p999
            && p999 <= max;
        if !ordered {
            return Err(format!("latencies out of order: {row:?}"));
        }
    } else {
        return Err(format!("unknown result table {header:?}"));
    }
    Ok(())
}
