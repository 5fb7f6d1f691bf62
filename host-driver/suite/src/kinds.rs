//! The kinds of NIC a case's sides run on, and what each cannot do.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::{ConnectOptions, Context};

use crate::SideOpts;

/// The IP family a case runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

impl Family {
    /// The family's loopback address (`127.0.0.1`, `::1`): where soft NICs, relays and
    /// test sockets bind. A simulated board takes another address of `127.0.0.0/8`.
    pub fn loopback(self) -> IpAddr {
        match self {
            Family::V4 => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Family::V6 => IpAddr::V6(Ipv6Addr::LOCALHOST),
        }
    }
}

/// How much a case should ask of a kind of NIC, and what it cannot do. Cases scale to
/// these, or skip (saying why) what cannot run. (A case uses at most 2 QPs and 3
/// regions per NIC, which the hardware's 4 QP and 4 MR entries hold.)
#[derive(Clone, Debug)]
pub struct Limits {
    /// Bytes of one bulk transfer (a case moves a few of them). The soft NIC moves
    /// 1 MiB in milliseconds; a slower device gets less, so that a case takes seconds.
    pub bulk: usize,
    /// Why authenticated QPs (spec §11.2) cannot run here, if they cannot.
    pub no_auth: Option<&'static str>,
    /// A short ACK timeout (ns) that is still well above this kind's round trip on a
    /// loaded machine: for cases that wait for retries to run out.
    pub short_timeout_ns: u64,
    /// The ACK timeout (ns) cases connect with, as a Verbs user sets it above the
    /// fabric's round trip: the connection timer then fires only when progress
    /// has stopped.
    pub ack_timeout_ns: u64,
}

/// A kind of NIC: starts NICs for a case's sides.
pub trait NicKind {
    /// Its name in messages (`soft`, `board`).
    fn name(&self) -> &'static str;
    /// How much a case should ask of it, and what it cannot do.
    fn limits(&self) -> Limits;
    /// Starts one NIC for a side with `o` (family, paths, busy polling) and opens a
    /// context on it; whatever else the NIC needs (a device process) must live as long
    /// as the context's backend. `Err(why)`: this kind cannot run there (the case is
    /// skipped, saying why); any other failure panics.
    fn start(&self, o: &SideOpts) -> Result<Context, String>;
}

/// The soft NIC (`metaroce_driver::soft`) on the family's loopback address.
#[derive(Clone, Copy, Debug, Default)]
pub struct Soft;

impl NicKind for Soft {
    fn name(&self) -> &'static str {
        "soft"
    }

    fn limits(&self) -> Limits {
        Limits {
            bulk: 1 << 20,
            no_auth: None,
            short_timeout_ns: 2_000_000,
            ack_timeout_ns: ConnectOptions::default().timeout_ns,
        }
    }

    fn start(&self, o: &SideOpts) -> Result<Context, String> {
        let mut cfg = SoftConfig::new(SocketAddr::new(o.family.loopback(), 0));
        cfg.nic.qp.paths = o.paths;
        cfg.busy_poll = o.busy_poll;
        let backend = SoftBackend::start(cfg).expect("start soft NIC");
        Ok(Context::open(backend))
    }
}
