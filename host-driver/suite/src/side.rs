//! A case's two sides and the helpers every case uses.

use std::fmt::Display;
use std::io::Write;
use std::time::{Duration, Instant};

use metaroce_driver::verbs::{
    Access, CompletionQueue, ConnectOptions, Context, MemoryRegion, ProtectionDomain, QpConfig,
    QpInit, QueuePair, SendRequest, Wc, WcStatus,
};

use crate::{Family, NicKind};

/// Upper bound on any wait, only to avoid hanging on a bug.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// How a side's NIC and objects are set up.
#[derive(Clone, Debug)]
pub struct SideOpts {
    /// IP family.
    pub family: Family,
    /// Paths of the NIC's default QP configuration.
    pub paths: u16,
    /// Bytes of the side's registered buffer.
    pub mem: usize,
    /// The side's QP configuration (`None`: the NIC's default).
    pub qp: Option<QpConfig>,
    /// A soft NIC's progress thread spins instead of sleeping (other kinds ignore it).
    pub busy_poll: bool,
}

impl SideOpts {
    /// 4 paths, a 4 MiB buffer, the NIC's QP configuration, no busy polling.
    pub fn new(family: Family) -> Self {
        SideOpts {
            family,
            paths: 4,
            mem: 4 << 20,
            qp: None,
            busy_poll: false,
        }
    }
}

/// One side: a NIC's context, PD, CQ, one QP and a registered buffer.
pub struct Side {
    /// The context.
    pub ctx: Context,
    /// Its protection domain.
    pub pd: ProtectionDomain,
    /// The QP's send and receive CQ.
    pub cq: CompletionQueue,
    /// The QP, in RESET.
    pub qp: QueuePair,
    /// The buffer, writable and readable by the peer.
    pub mr: MemoryRegion,
}

impl Side {
    /// Starts a NIC of `kind` and sets the side up on it; `Err(why)` when the kind
    /// cannot run with `o`.
    pub fn start(kind: &dyn NicKind, o: &SideOpts) -> Result<Side, String> {
        let ctx = kind.start(o)?;
        let pd = ctx.alloc_pd();
        let cq = ctx.create_cq(1024, None);
        let mut init = QpInit::new(&cq, &cq);
        init.config = o.qp.clone();
        let qp = pd.create_qp(&init).expect("create qp");
        let mr = pd
            .alloc_mr(
                o.mem,
                Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
            )
            .expect("register");
        Ok(Side {
            ctx,
            pd,
            cq,
            qp,
            mr,
        })
    }
}

/// The kinds of NIC on a case's two sides, and the case's name for messages.
pub struct CaseKinds<'a> {
    /// Side A's kind.
    pub a: &'a dyn NicKind,
    /// Side B's kind.
    pub b: &'a dyn NicKind,
    /// The case.
    pub case: &'static str,
}

impl<'a> CaseKinds<'a> {
    /// Case `case` with side A on `a` and side B on `b`.
    pub fn new(a: &'a dyn NicKind, b: &'a dyn NicKind, case: &'static str) -> Self {
        CaseKinds { a, b, case }
    }

    /// Says on standard error, uncaptured by the test harness, why (part of) the case
    /// does not run on this pair.
    pub fn skip(&self, why: impl Display) {
        // Written to the stream itself: the harness captures only `eprintln!`.
        let _ = writeln!(
            std::io::stderr(),
            "SKIP {} ({} ↔ {}): {why}",
            self.case,
            self.a.name(),
            self.b.name()
        );
    }

    /// Bytes of one bulk transfer on this pair (the smaller of the two kinds').
    pub fn bulk(&self) -> usize {
        self.a.limits().bulk.min(self.b.limits().bulk)
    }

    /// Connection options for this pair: the defaults with the longer of the two
    /// kinds' ACK timeouts.
    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            timeout_ns: self
                .a
                .limits()
                .ack_timeout_ns
                .max(self.b.limits().ack_timeout_ns),
            ..ConnectOptions::default()
        }
    }

    /// Options for this pair: 4 paths, a buffer of 4 bulk transfers.
    pub fn opts(&self, family: Family) -> SideOpts {
        SideOpts {
            mem: 4 * self.bulk(),
            ..SideOpts::new(family)
        }
    }

    /// Side A, or `None` (the case skipped, saying why) when its kind cannot run `o`.
    pub fn side_a(&self, o: &SideOpts) -> Option<Side> {
        Side::start(self.a, o).map_err(|why| self.skip(why)).ok()
    }

    /// Side B, as [`CaseKinds::side_a`].
    pub fn side_b(&self, o: &SideOpts) -> Option<Side> {
        Side::start(self.b, o).map_err(|why| self.skip(why)).ok()
    }

    /// Both sides with the same options.
    pub fn sides(&self, o: &SideOpts) -> Option<(Side, Side)> {
        let a = self.side_a(o)?;
        Some((a, self.side_b(o)?))
    }
}

/// Connects `a` and `b` directly (each sends to the other's address).
pub fn connect_direct(a: &Side, b: &Side, opts: &ConnectOptions) {
    a.qp.connect(&b.qp.endpoint(), opts).expect("connect a");
    b.qp.connect(&a.qp.endpoint(), opts).expect("connect b");
}

/// `from` WRITEs `n` messages of `piece` bytes from its buffer into the peer's, at the
/// same offsets from 0, each signaled; every one must succeed.
pub fn write_all_pieces(from: &Side, to: &Side, piece: usize, n: usize) {
    for i in 0..n {
        let off = i * piece;
        let wr = SendRequest::write(
            i as u64,
            from.mr.sge(off, piece as u32),
            to.mr.addr() + off as u64,
            to.mr.rkey(),
        );
        from.qp.post_send(&wr).unwrap();
    }
    let wcs = wait_wcs(&from.cq, n);
    assert!(
        wcs.len() == n && wcs.iter().all(|w| w.status == WcStatus::Success),
        "{wcs:?}"
    );
}

/// Polls `cq` until `n` completions arrived or the deadline passed.
pub fn wait_wcs(cq: &CompletionQueue, n: usize) -> Vec<Wc> {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [Wc::default(); 64];
    while out.len() < n && start.elapsed() < DEADLINE {
        let k = cq.poll(&mut buf);
        out.extend_from_slice(&buf[..k]);
        if k == 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    out
}

/// Polls `cond` until it holds or the deadline passed; whether it held.
pub fn wait_until(mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() >= DEADLINE {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Deterministic bytes for message `id`.
pub fn pattern(id: u64, len: usize) -> Vec<u8> {
    let mut x = id.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
