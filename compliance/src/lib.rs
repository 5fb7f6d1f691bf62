//! A black-box conformance suite for MetaRoCE v0.1 (`docs/spec.md`).
//!
//! The suite plays the peer of an implementation under test: it builds every packet
//! with `metaroce-proto`, sends it over real UDP sockets, and checks what comes back
//! (and what does not) against the spec. Each [`Case`] cites the spec section it
//! checks. The implementation is set up through the [`target::Target`] trait; the
//! soft NIC ([`soft::SoftTarget`]) is the reference target, and its broken variants
//! ([`soft::Break`]) test the suite itself.
//!
//! ```no_run
//! use metaroce_compliance::{run, soft::SoftTarget, RunOptions};
//! let report = run(&SoftTarget::new("127.0.0.1".parse().unwrap()), &RunOptions::default());
//! assert_eq!(report.failed, 0);
//! ```
#![warn(missing_docs)]

pub mod cases;
pub mod peer;
pub mod remote;
pub mod report;
pub mod soft;
pub mod target;
mod vectors;

use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use metaroce_proto::{AckRepr, Ext, NackReason, NackRepr, Opcode};

use peer::{Conn, Peer, Pkt, Rx};
pub use report::{CaseResult, Report, Status};
use target::{Device, MrAccess, PeerParams, QpOptions, Target};

/// Why a case did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    /// The target violated the spec.
    Fail(String),
    /// The case cannot run on this target (a setup call it does not support).
    Skip(String),
    /// The suite or the target's setup failed.
    Error(String),
}

/// Outcome of a case body.
pub type Verdict = Result<(), Fail>;

/// Fails the case with a message unless `cond` holds.
#[macro_export]
macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::Fail::Fail(format!($($fmt)+)));
        }
    };
}

/// One test of the suite.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// Unique name (snake case).
    pub name: &'static str,
    /// The spec section(s) it checks, e.g. `6.2 step 6`.
    pub spec: &'static str,
    /// What it checks, in one line.
    pub title: &'static str,
    /// The body.
    pub run: fn(&mut Ctx) -> Verdict,
}

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Only cases whose name contains one of these (all when empty).
    pub filter: Vec<String>,
    /// Cases run at once, each on its own device.
    pub parallel: usize,
    /// Address of the suite's own sockets.
    pub local_ip: IpAddr,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            filter: Vec::new(),
            parallel: 8,
            local_ip: IpAddr::from([127, 0, 0, 1]),
        }
    }
}

/// How long the suite waits for a reply (or a stream of packets) that must
/// come before it concludes it never comes. Every wait ends as soon as what
/// it waits for arrives, so only a failing case waits this out; it is long
/// because a target starved by a loaded host (a soft NIC's threads, a
/// Verilated model) can take seconds to answer.
pub const REPLY_WAIT: Duration = Duration::from_secs(10);
/// How long the suite listens to conclude that nothing is sent. Every
/// passing case that checks an absence waits this out, so it stays short: a
/// target slowed past it by a loaded host can pass such a check falsely, but
/// never fail one.
pub const QUIET_WAIT: Duration = Duration::from_millis(60);

/// How often the suite polls the target's completions and counters while it
/// waits for them (the [`Device`] calls have no blocking form: a vendor's
/// target may answer them over a control channel). A poll interval, not a
/// deadline: the deadlines are [`REPLY_WAIT`] and [`QUIET_WAIT`].
const POLL: Duration = Duration::from_micros(500);

/// Everything a case works with: the device under test and the suite's endpoint.
pub struct Ctx {
    /// The implementation under test, fresh for this case.
    pub dev: Box<dyn Device>,
    /// The suite's endpoint.
    pub peer: Peer,
    next_qpn: u32,
    /// The device's drop counters when the case started (a device may be shared
    /// by cases that ran before).
    baseline: Option<Vec<(String, u64)>>,
}

fn setup<T>(r: Result<T, String>) -> Result<T, Fail> {
    r.map_err(Fail::Skip)
}

impl Ctx {
    /// Opens a device of `target` and the suite's sockets.
    pub fn open(target: &dyn Target, local_ip: IpAddr) -> Result<Ctx, Fail> {
        let mut dev = target.open().map_err(Fail::Error)?;
        let peer = Peer::open(local_ip, dev.address())
            .map_err(|e| Fail::Error(format!("suite sockets: {e}")))?;
        let baseline = dev.drop_counters();
        // Suite QPNs differ per case so cases sharing a device do not collide.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = 0x7000 + 0x100 * (NEXT.fetch_add(1, Ordering::Relaxed) as u32 % 0x1000);
        Ok(Ctx {
            dev,
            peer,
            next_qpn: base,
            baseline,
        })
    }

    /// Default QP options, a 64 KiB region with every right, and a connection
    /// between a new target QP and a new suite QP.
    pub fn conn(&mut self) -> Result<Conn, Fail> {
        self.conn_with(QpOptions::default(), 0x0001_0000, 0x0002_0000)
    }

    /// A connection with `opts`; the suite sends from conn PSN `my_psn`, the target
    /// from `target_psn`.
    pub fn conn_with(
        &mut self,
        opts: QpOptions,
        my_psn: u32,
        target_psn: u32,
    ) -> Result<Conn, Fail> {
        self.open_conn(opts, my_psn, target_psn, true)
    }

    /// Like [`Ctx::conn`], but the target's QP stays in RTR (§9.1): the suite
    /// expects its packets from `target_psn`, the `resp_psn` of the suite's READ
    /// requests ([`Conn::read_req`]). Skipped on targets that cannot do this.
    pub fn conn_in_rtr(&mut self, target_psn: u32) -> Result<Conn, Fail> {
        self.open_conn(QpOptions::default(), 0x0001_0000, target_psn, false)
    }

    fn open_conn(
        &mut self,
        opts: QpOptions,
        my_psn: u32,
        target_psn: u32,
        to_rts: bool,
    ) -> Result<Conn, Fail> {
        let qpn = setup(self.dev.create_qp(&opts))?;
        let mr = setup(self.dev.reg_mr(65536, MrAccess::ALL))?;
        self.next_qpn += 1;
        let my_qpn = self.next_qpn;
        let peer = PeerParams {
            qpn: my_qpn,
            addr: self.peer.addr(),
            initial_psn: my_psn,
        };
        if to_rts {
            setup(self.dev.connect(qpn, &peer, target_psn))?;
        } else {
            setup(self.dev.connect_rtr(qpn, &peer))?;
        }
        Ok(Conn {
            qpn,
            my_qpn,
            next_conn_psn: my_psn,
            my_initial_psn: my_psn,
            target_psn,
            next_path_psn: [0; 64],
            next_msn: [0; 16],
            next_recv_idx: [0; 16],
            mr,
            recv_window: opts.recv_window,
            marked: Default::default(),
            accepted: Default::default(),
            echo: Default::default(),
        })
    }

    /// Sends a packet.
    pub fn send(&mut self, pkt: &Pkt) -> Verdict {
        self.peer.send(pkt)
    }

    /// Waits for an ACK of path `path` of `c` whose `echo_ts` is at least `ts`.
    pub fn ack_at_least(&mut self, c: &Conn, path: u16, ts: u64) -> Result<(Rx, AckRepr), Fail> {
        let my = c.my_qpn;
        let rx = self.peer.wait(REPLY_WAIT, |rx| {
            rx.repr.opcode == Opcode::Ack
                && rx.repr.dst_qpn == my
                && rx.repr.path == path
                && rx.ack().is_some_and(|a| a.echo_ts >= ts)
        });
        let rx = rx.ok_or_else(|| {
            Fail::Fail(format!(
                "no ACK for path {path} (echo_ts >= {ts}) within {REPLY_WAIT:?}"
            ))
        })?;
        let a = *rx.ack().expect("ACK");
        Ok((rx, a))
    }

    /// Sends `pkt` (a data packet or PROBE) and waits for the ACK that covers it.
    pub fn send_and_ack(&mut self, c: &Conn, pkt: &Pkt) -> Result<(Rx, AckRepr), Fail> {
        self.send(pkt)?;
        self.ack_at_least(c, pkt.repr.path, pkt.repr.timestamp)
    }

    /// Sends a PROBE on `path` and returns the ACK that covers it: by then the
    /// target has processed everything the suite sent before.
    pub fn sync(&mut self, c: &mut Conn, path: u16) -> Result<AckRepr, Fail> {
        let p = c.probe(&mut self.peer, path);
        self.send_and_ack(c, &p).map(|(_, a)| a)
    }

    /// Waits for a NACK to `c`.
    pub fn nack(&mut self, c: &Conn) -> Result<(Rx, NackRepr), Fail> {
        let my = c.my_qpn;
        let rx = self
            .peer
            .wait(REPLY_WAIT, |rx| {
                rx.repr.opcode == Opcode::Nack && rx.repr.dst_qpn == my
            })
            .ok_or_else(|| Fail::Fail(format!("no NACK within {REPLY_WAIT:?}")))?;
        let Ext::Nack(n) = rx.repr.ext else {
            return Err(Fail::Fail("NACK without its extension".into()));
        };
        Ok((rx, n))
    }

    /// Fails if a NACK to `c` arrives within [`QUIET_WAIT`].
    pub fn no_nack(&mut self, c: &Conn) -> Verdict {
        let my = c.my_qpn;
        let got = self.peer.wait(QUIET_WAIT, |rx| {
            rx.repr.opcode == Opcode::Nack && rx.repr.dst_qpn == my
        });
        check!(got.is_none(), "unexpected NACK: {:?}", got.map(|r| r.repr));
        Ok(())
    }

    /// Expects a NACK with `reason` for conn PSN `conn_psn`.
    pub fn expect_nack(
        &mut self,
        c: &Conn,
        reason: NackReason,
        conn_psn: u32,
    ) -> Result<NackRepr, Fail> {
        let (_, n) = self.nack(c)?;
        check!(
            n.reason == reason,
            "NACK reason {:?}, expected {:?}",
            n.reason,
            reason
        );
        check!(
            n.conn_psn == conn_psn,
            "NACK conn_psn {:#x}, expected {:#x}",
            n.conn_psn,
            conn_psn
        );
        Ok(n)
    }

    /// Fails unless nothing at all arrives within `dur`.
    pub fn silence(&mut self, dur: Duration) -> Verdict {
        let got = self.peer.gather(dur, |_| true);
        check!(
            got.is_empty(),
            "expected silence, got {:?}",
            got.iter().map(|r| r.repr.opcode).collect::<Vec<_>>()
        );
        Ok(())
    }

    /// Reads `len` bytes at `offset` of the connection's region.
    pub fn mem(&mut self, c: &Conn, offset: u64, len: usize) -> Result<Vec<u8>, Fail> {
        self.dev
            .read_mr(c.mr.handle, offset, len)
            .map_err(Fail::Error)
    }

    /// How much a drop counter of the target grew during this case, if it exposes
    /// counters.
    pub fn counter(&mut self, name: &str) -> Option<u64> {
        let find = |list: &[(String, u64)]| list.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
        let now = find(&self.dev.drop_counters()?)?;
        let before = self.baseline.as_deref().and_then(find).unwrap_or(0);
        Some(now.wrapping_sub(before))
    }

    /// If the target exposes counters, checks that `name` is `want`. A target
    /// starved by a loaded host may count a packet the suite sent well after
    /// a quiet wait, so the check waits until the counter reaches `want`
    /// (up to [`REPLY_WAIT`], waited out only by a failing case).
    pub fn expect_counter(&mut self, name: &str, want: u64) -> Verdict {
        let deadline = Instant::now() + REPLY_WAIT;
        while let Some(v) = self.counter(name) {
            if v >= want || Instant::now() >= deadline {
                check!(v == want, "drop counter {name} = {v}, expected {want}");
                break;
            }
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// Polls completions of `qpn` until `n` arrived or `timeout` passed.
    pub fn completions(
        &mut self,
        qpn: u32,
        n: usize,
        timeout: Duration,
    ) -> Vec<target::Completion> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        loop {
            out.extend(self.dev.poll_completions(qpn));
            if out.len() >= n || Instant::now() >= deadline {
                return out;
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Runs the suite (or the filtered part of it) against `target`.
pub fn run(target: &dyn Target, opts: &RunOptions) -> Report {
    let all = cases::all();
    let selected: Vec<&Case> = all
        .iter()
        .filter(|c| {
            opts.filter.is_empty() || opts.filter.iter().any(|f| c.name.contains(f.as_str()))
        })
        .collect();
    let started = Instant::now();
    let results = Mutex::new(Vec::with_capacity(selected.len()));
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..opts.parallel.max(1).min(selected.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = selected.get(i) else { break };
                    let r = run_case(target, case, opts.local_ip);
                    results
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((i, r));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    Report::new(
        target.name(),
        results.into_iter().map(|(_, r)| r).collect(),
        started.elapsed(),
    )
}

/// Runs one case on a fresh device.
pub fn run_case(target: &dyn Target, case: &Case, local_ip: IpAddr) -> CaseResult {
    let t = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut ctx = Ctx::open(target, local_ip)?;
        let v = (case.run)(&mut ctx);
        // Whatever the case checked, every datagram the target sent must parse and
        // carry a correct ICRC (§4).
        if v.is_ok() {
            if let Some(bad) = ctx.peer.bad_rx.first() {
                return Err(Fail::Fail(format!(
                    "§4: the target sent a datagram that fails parsing or the ICRC: {bad}"
                )));
            }
        }
        v
    }))
    .unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(Fail::Error(format!("the case panicked: {msg}")))
    });
    let (status, message) = match outcome {
        Ok(()) => (Status::Passed, String::new()),
        Err(Fail::Fail(m)) => (Status::Failed, m),
        Err(Fail::Skip(m)) => (Status::Skipped, m),
        Err(Fail::Error(m)) => (Status::Failed, format!("error: {m}")),
    };
    CaseResult {
        name: case.name.to_string(),
        spec: case.spec.to_string(),
        title: case.title.to_string(),
        status,
        message,
        duration: t.elapsed(),
    }
}
