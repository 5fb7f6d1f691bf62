//! Checks of what the linker made and of the ABI mirrors: the symbols a shared object
//! exports, the values of C layout expressions against the installed headers, the
//! Debian packages those checks need, and running a server and a client program with a
//! time bound.

use std::io::Read;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The global, defined, versioned symbols a shared object exports, as sorted
/// "VERSION symbol" lines (read with `objdump -T`), and whether anything of Rust's
/// leaked out.
pub fn exported_symbols(so: &Path) -> Result<(Vec<String>, bool), String> {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(so)
        .output()
        .map_err(|e| format!("running objdump: {e}"))?;
    if !out.status.success() {
        return Err(format!("objdump -T {} failed", so.display()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut syms: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" g ") && !l.contains("*UND*"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (ver, name) = (f.get(f.len().wrapping_sub(2))?, f.last()?);
            (*ver != *name).then(|| format!("{ver} {name}"))
        })
        .collect();
    syms.sort();
    Ok((syms, text.contains("rust_")))
}

/// The value of each C expression (`sizeof(...)`, `offsetof(...)`) compiled against the
/// installed headers `includes`, in order.
pub fn c_values(includes: &[&str], exprs: &[&str]) -> Result<Vec<usize>, String> {
    let mut src = String::from("#include <stdio.h>\n#include <stddef.h>\n");
    for h in includes {
        src.push_str(&format!("#include <{h}>\n"));
    }
    src.push_str("int main(void) {\n");
    for e in exprs {
        src.push_str(&format!("  printf(\"%zu\\n\", (size_t)({e}));\n"));
    }
    src.push_str("  return 0;\n}\n");
    let dir = std::env::temp_dir().join(format!(
        "metaroce-layout-{}-{}",
        std::process::id(),
        includes.join("-").replace('/', "_")
    ));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let c = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&c, src).map_err(|e| e.to_string())?;
    let st = Command::new("cc")
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .status()
        .map_err(|e| format!("running cc: {e}"))?;
    let out = st
        .success()
        .then(|| Command::new(&exe).output())
        .transpose()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.ok_or("compiling the layout probe failed")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().map_err(|_| format!("bad probe output {l:?}")))
        .collect()
}

/// Insists that every file of `need` ((file, Debian package) pairs) is there, and
/// otherwise fails naming the packages to install. Tests never install anything
/// themselves: `scripts/test` installs its package list (`scripts/deps.sh`) first.
pub fn require_packages(need: &[(&str, &str)]) {
    let missing: Vec<&str> = need
        .iter()
        .filter(|(f, _)| !Path::new(f).exists())
        .map(|(_, p)| *p)
        .collect();
    assert!(
        missing.is_empty(),
        "missing Debian packages {missing:?}: run `apt-get install {}` \
         (or scripts/test, which installs the test packages of scripts/deps.sh)",
        missing.join(" ")
    );
}

/// The newest `lib<stem>-*.a` cargo built beside the running test executable (a
/// dependency or the crate itself with `crate-type = ["staticlib", ...]`).
pub fn newest_staticlib(stem: &str) -> std::path::PathBuf {
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

/// Compiles the C program `src` against the system headers and the libraries `libs`
/// (`-l…` flags) in `lib_dir`, then runs it there (60 s at most). Returns what it
/// printed; `Err` with the reason when it does not compile or does not exit 0.
pub fn c_program(src: &Path, lib_dir: &Path, libs: &[&str]) -> Result<String, String> {
    let stem = src.file_stem().ok_or("no file name")?;
    let exe = lib_dir.join(stem);
    let st = Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(libs)
        .status()
        .map_err(|e| format!("running cc: {e}"))?;
    if !st.success() {
        return Err(format!("compiling {} failed", src.display()));
    }
    let out = run(
        Command::new(&exe)
            .env("LD_LIBRARY_PATH", lib_dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        Duration::from_secs(60),
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "{} failed ({}):\n{text}",
            exe.display(),
            out.status
        ))
    }
}

/// Runs `cmd` to completion, killing it after `limit`.
pub fn run(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd.spawn().expect("spawn");
    finish(child, Instant::now() + limit)
}

/// Waits for `child` (killing it at `deadline`) while draining its pipes, so that a
/// program printing more than a pipe holds does not stall on its own output.
fn finish(mut child: Child, deadline: Instant) -> Output {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                break child.wait().expect("wait");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for a child: {e}"),
        }
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
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

/// Starts `server`, waits until `ready` says it listens (at most 5 s), then runs
/// `client`; both are killed after `limit`.
pub fn run_pair(
    mut server: Command,
    mut client: Command,
    ready: impl Fn() -> bool,
    limit: Duration,
) -> PairOutput {
    let deadline = Instant::now() + limit;
    let server = server.spawn().expect("spawn server");
    let wait_until = Instant::now() + Duration::from_secs(5);
    while !ready() && Instant::now() < wait_until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let client = client.spawn().expect("spawn client");
    let client = finish(client, deadline);
    let server = finish(
        server,
        deadline.max(Instant::now() + Duration::from_secs(5)),
    );
    PairOutput { server, client }
}

/// Two groups of `width` consecutive UDP ports on 127.0.0.1 (returned by their first
/// port), free a moment ago and below the kernel's ephemeral range, for NICs on fixed
/// ports (`METAROCE_IBV_PORT`; a process whose second context must be on a known port
/// too needs `width` 2).
///
/// A port the kernel handed out for `bind(0)` and that was then released can be handed
/// out again to anyone binding port 0 before the program binds it — and every soft NIC
/// binds 32 send sockets that way (the server's, started first, among them), as does the
/// relay. That is how a program once failed to open its device ("Couldn't get context
/// for the device"). Ports outside the ephemeral range are never handed out like that;
/// the start of the search depends on the process id, so concurrent test processes
/// (other checkouts building at the same time) look in different places.
pub fn fixed_udp_ports(width: u16) -> (u16, u16) {
    let ephemeral_low: u16 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    let width = width.max(1);
    let (low, high) = (10_000u16, ephemeral_low.max(10_000 + 100 * width));
    let span = u32::from((high - low) / width);
    let start = std::process::id().wrapping_mul(2_654_435_761) % span;
    let mut held = Vec::new();
    let mut found = Vec::new();
    for i in 0..span {
        let first = low + ((start + i) % span) as u16 * width;
        let group: Result<Vec<UdpSocket>, _> = (first..first + width)
            .map(|p| UdpSocket::bind(("127.0.0.1", p)))
            .collect();
        if let Ok(g) = group {
            held.push(g);
            found.push(first);
            if found.len() == 2 {
                break;
            }
        }
    }
    assert_eq!(found.len(), 2, "no free UDP ports in {low}..{high}");
    (found[0], found[1])
}

/// Environment of one process of a pair.
pub type SideEnv = Vec<(&'static str, String)>;

/// The environment of a server and a client whose NICs are on fixed ports
/// (`METAROCE_IBV_PORT`) and send through relay links (`METAROCE_IBV_VIA`): the server
/// through the link towards the client, the client through the one towards the server.
pub fn relay_env(
    ports: (u16, u16),
    to_server: SocketAddr,
    to_client: SocketAddr,
) -> (SideEnv, SideEnv) {
    let side = |port: u16, via: SocketAddr| {
        vec![
            ("METAROCE_IBV_PORT", port.to_string()),
            ("METAROCE_IBV_VIA", via.to_string()),
        ]
    };
    (side(ports.0, to_client), side(ports.1, to_server))
}

/// Whether some process listens on TCP `port` (any address; from `/proc/net/tcp*`).
pub fn tcp_listening(port: u16) -> bool {
    let needle = format!(":{port:04X} ");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let mut cols = l.split_whitespace();
                let local = cols.nth(1).unwrap_or("");
                // Column 4 is the state; 0A is LISTEN.
                let state = cols.nth(1).unwrap_or("");
                format!("{local} ").ends_with(&needle) && state == "0A"
            })
        })
    })
}

/// `("offsetof(<C expression>)", offset_of!(<Rust type>, <field>))`: one entry of a
/// layout test's list, compared with what a C compiler says.
#[macro_export]
macro_rules! c_offsetof {
    ($c:literal, $t:ty, $($f:tt)+) => {
        (concat!("offsetof(", $c, ")"), ::core::mem::offset_of!($t, $($f)+))
    };
}

/// `("sizeof(<C type>)", size_of::<Rust type>())`: one entry of a layout test's list.
#[macro_export]
macro_rules! c_sizeof {
    ($c:literal, $t:ty) => {
        (concat!("sizeof(", $c, ")"), ::core::mem::size_of::<$t>())
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_values_reads_the_headers() {
        let v = c_values(&["stdint.h"], &["sizeof(uint32_t)", "sizeof(uint64_t)"]).unwrap();
        assert_eq!(v, [4, 8]);
        assert!(c_values(&["no/such/header.h"], &["1"]).is_err());
    }

    #[test]
    fn sees_listeners() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert!(tcp_listening(port));
        // (A closed port may be taken again at once by another process's bind(0), so
        // the negative case is tested on port 0, where nothing ever listens.)
        assert!(!tcp_listening(0));
    }

    #[test]
    fn fixed_ports_come_in_free_groups() {
        let (a, b) = fixed_udp_ports(2);
        assert_ne!(a, b);
        for p in [a, a + 1, b, b + 1] {
            assert!(p >= 10_000);
            let _ = UdpSocket::bind(("127.0.0.1", p));
        }
        let (s, c) = relay_env(
            (a, b),
            "127.0.0.1:1".parse().unwrap(),
            "127.0.0.1:2".parse().unwrap(),
        );
        assert_eq!(s[1].1, "127.0.0.1:2");
        assert_eq!(c[0].1, b.to_string());
    }

    #[test]
    fn pairs_run_with_a_time_bound() {
        let mut sleepy = Command::new("sleep");
        sleepy.arg("30");
        let t = Instant::now();
        let out = run(&mut sleepy, Duration::from_millis(200));
        assert!(!out.status.success());
        assert!(t.elapsed() < Duration::from_secs(10));
        let p = run_pair(
            Command::new("true"),
            Command::new("true"),
            || true,
            Duration::from_secs(10),
        );
        assert!(p.ok(), "{}", p.text());
        // More output than a pipe holds does not stall the program.
        let mut chatty = Command::new("head");
        chatty
            .args(["-c", "1000000", "/dev/zero"])
            .stdout(Stdio::piped());
        let out = run(&mut chatty, Duration::from_secs(30));
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), 1_000_000);
    }
}
