//! Per-path congestion control behind a trait, so controllers can be swapped
//! and compared. One file per algorithm under `cc/`.
//!
//! A connection's paths each get their own controller from the
//! [`CcConfig`] in its [`QpConfig`](crate::QpConfig), which holds a
//! [`CcAlgorithm`]: one of the built-in ones ([`EcnAimd`], the default;
//! [`Swift`]; a fixed window), or any [`CcFactory`] a user implements
//! outside this crate ([`CcAlgorithm::Custom`]).
//!
//! Bringing your own (a fixed window that halves on a timeout):
//!
//! ```
//! use std::sync::Arc;
//! use metaroce_firmware::QpConfig;
//! use metaroce_firmware::cc::{AckSample, CcAlgorithm, CcFactory, PathController};
//!
//! #[derive(Debug)]
//! struct HalveOnTimeout {
//!     window: u32,
//! }
//!
//! struct Path {
//!     window: u32,
//!     floor: u32,
//! }
//!
//! impl PathController for Path {
//!     fn window(&self) -> u32 {
//!         self.window
//!     }
//!     fn on_ack(&mut self, _ack: &AckSample) {}
//!     fn on_loss(&mut self, _now_ns: u64) {}
//!     fn on_timeout(&mut self, _now_ns: u64) {
//!         self.window = (self.window / 2).max(self.floor);
//!     }
//!     fn name(&self) -> &'static str {
//!         "halve-on-timeout"
//!     }
//! }
//!
//! impl CcFactory for HalveOnTimeout {
//!     fn build(&self, mtu: u32) -> Box<dyn PathController> {
//!         Box::new(Path { window: self.window, floor: mtu })
//!     }
//!     fn name(&self) -> &str {
//!         "halve-on-timeout"
//!     }
//! }
//!
//! let qp = QpConfig {
//!     cc: CcAlgorithm::Custom(Arc::new(HalveOnTimeout { window: 64 * 1024 })).into(),
//!     ..QpConfig::default()
//! };
//! let mut path = qp.cc.build(4096);
//! path.on_timeout(0);
//! assert_eq!(path.window(), 32 * 1024);
//! assert_eq!(qp.cc.name(), "halve-on-timeout");
//! assert_eq!(qp.clone(), qp);
//! ```

mod ecn_aimd;
mod fixed;
mod swift;

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::fmt::Debug;

pub use ecn_aimd::{EcnAimd, EcnAimdParams};
pub use fixed::FixedWindow;
pub use swift::{Swift, SwiftParams};

/// What one ACK told a path's controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckSample {
    /// Engine time of the ACK, ns.
    pub now_ns: u64,
    /// Payload bytes it newly acknowledged on this path.
    pub bytes: u32,
    /// Data packets it newly acknowledged on this path (at least 1).
    pub acked: u32,
    /// How many of them were CE-marked.
    pub ce: u32,
    /// The path's smoothed RTT after this ACK, ns (its RTO before the
    /// first sample).
    pub srtt_ns: u64,
    /// This ACK's own RTT sample, ns: `None` when it carried none (an old
    /// or repeated echo) and on [`Datapath::Hardware`](crate::datapath::Datapath),
    /// where the NIC's table takes the sample and only the smoothed RTT
    /// reaches the engine.
    pub rtt_ns: Option<u64>,
}

/// What happened on a path, as a congestion controller sees it.
pub trait PathController: Send {
    /// Bytes the path may have in flight.
    fn window(&self) -> u32;
    /// An ACK newly acknowledged data on the path.
    fn on_ack(&mut self, ack: &AckSample);
    /// A packet was found lost by a SACK gap (`now_ns` is 0 when the
    /// engine applies the ACK before it knows the time).
    fn on_loss(&mut self, now_ns: u64);
    /// The path timed out.
    fn on_timeout(&mut self, now_ns: u64);
    /// The controller's name, for reports.
    fn name(&self) -> &'static str;
}

/// Builds the controller of each path of a connection: implement it to
/// bring your own congestion control (see `docs/spec.md` §10).
pub trait CcFactory: Send + Sync + Debug {
    /// A fresh controller for one path whose packets carry up to `mtu`
    /// payload bytes.
    fn build(&self, mtu: u32) -> Box<dyn PathController>;
    /// The controller's name, for reports.
    fn name(&self) -> &str;
}

/// Which controller a connection's paths use.
#[derive(Debug, Clone)]
pub enum CcAlgorithm {
    /// DCTCP-like ECN AIMD (the default).
    EcnAimd(EcnAimdParams),
    /// Swift-like delay-based AIMD.
    Swift(SwiftParams),
    /// A fixed window (no congestion control), for experiments.
    Fixed {
        /// Window in bytes.
        window: u32,
    },
    /// A controller from outside this crate. Two `Custom` values are equal
    /// when they share the factory (`Arc::ptr_eq`), since a factory need
    /// not be comparable.
    Custom(Arc<dyn CcFactory>),
}

impl Default for CcAlgorithm {
    fn default() -> Self {
        CcAlgorithm::EcnAimd(EcnAimdParams::default())
    }
}

impl PartialEq for CcAlgorithm {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (CcAlgorithm::EcnAimd(a), CcAlgorithm::EcnAimd(b)) => a == b,
            (CcAlgorithm::Swift(a), CcAlgorithm::Swift(b)) => a == b,
            (CcAlgorithm::Fixed { window: a }, CcAlgorithm::Fixed { window: b }) => a == b,
            (CcAlgorithm::Custom(a), CcAlgorithm::Custom(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// A connection's [`CcAlgorithm`], shared: one pointer in
/// [`QpConfig`](crate::QpConfig) (which every QP keeps, so its size counts
/// in the per-connection state budget), cheap to clone, compared by value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CcConfig(Arc<CcAlgorithm>);

impl CcConfig {
    /// The algorithm.
    pub fn algorithm(&self) -> &CcAlgorithm {
        &self.0
    }

    /// Builds a controller for one path.
    pub fn build(&self, mtu: u32) -> Box<dyn PathController> {
        self.0.build(mtu)
    }

    /// The controller's name, for reports.
    pub fn name(&self) -> &str {
        self.0.name()
    }
}

impl From<CcAlgorithm> for CcConfig {
    fn from(algorithm: CcAlgorithm) -> Self {
        CcConfig(Arc::new(algorithm))
    }
}

impl CcAlgorithm {
    /// Builds a controller for one path.
    pub fn build(&self, mtu: u32) -> Box<dyn PathController> {
        match self {
            CcAlgorithm::EcnAimd(p) => p.build(mtu),
            CcAlgorithm::Swift(p) => p.build(mtu),
            CcAlgorithm::Fixed { window } => Box::new(FixedWindow(*window)),
            CcAlgorithm::Custom(factory) => factory.build(mtu),
        }
    }

    /// The controller's name, for reports.
    pub fn name(&self) -> &str {
        match self {
            CcAlgorithm::EcnAimd(p) => p.name(),
            CcAlgorithm::Swift(p) => p.name(),
            CcAlgorithm::Fixed { .. } => "fixed",
            CcAlgorithm::Custom(factory) => factory.name(),
        }
    }
}
