//! Helpers shared by the Verbs integration tests: two soft NICs on loopback.

#![allow(dead_code)] // each test binary uses a different subset

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::*;

/// Upper bound on any wait, only to avoid hanging on a bug.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// One side: context, PD, CQ, QP and a registered buffer.
pub struct Side {
    pub ctx: Context,
    pub pd: ProtectionDomain,
    pub cq: CompletionQueue,
    pub qp: QueuePair,
    pub mr: MemoryRegion,
}

/// Options for [`side`].
pub struct SideOpts {
    pub ip: IpAddr,
    pub paths: u16,
    pub mem: usize,
    pub qp: Option<QpConfig>,
    pub busy_poll: bool,
}

impl SideOpts {
    pub fn new(ip: &str) -> Self {
        SideOpts {
            ip: ip.parse().unwrap(),
            paths: 4,
            mem: 4 << 20,
            qp: None,
            busy_poll: false,
        }
    }
}

pub fn side(o: &SideOpts) -> Side {
    let mut cfg = SoftConfig::new(SocketAddr::new(o.ip, 0));
    cfg.nic.qp.paths = o.paths;
    cfg.busy_poll = o.busy_poll;
    let backend = SoftBackend::start(cfg).expect("start soft NIC");
    let ctx = Context::open(backend);
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
    Side {
        ctx,
        pd,
        cq,
        qp,
        mr,
    }
}

/// Connects `a` and `b` directly (each sends to the other's address).
pub fn connect_direct(a: &Side, b: &Side, opts: &ConnectOptions) {
    a.qp.connect(&b.qp.endpoint(), opts).expect("connect a");
    b.qp.connect(&a.qp.endpoint(), opts).expect("connect b");
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
