//! Per-path congestion control behind a trait, so controllers can be swapped
//! and compared. One file per algorithm under `cc/`.

mod ecn_aimd;

use alloc::boxed::Box;

pub use ecn_aimd::{EcnAimd, EcnAimdParams};

/// What happened on a path, as a congestion controller sees it.
pub trait PathController: Send {
    /// Bytes the path may have in flight.
    fn window(&self) -> u32;
    /// `acked` packets (`bytes`) were acknowledged, `ce` of them CE-marked.
    fn on_ack(&mut self, now_ns: u64, bytes: u32, acked: u32, ce: u32, srtt_ns: u64);
    /// A packet was found lost by a SACK gap.
    fn on_loss(&mut self, now_ns: u64);
    /// The path timed out.
    fn on_timeout(&mut self, now_ns: u64);
    /// The controller's name, for reports.
    fn name(&self) -> &'static str;
}

/// Which controller a connection's paths use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CcAlgorithm {
    /// DCTCP-like ECN AIMD.
    EcnAimd(EcnAimdParams),
    /// A fixed window (no congestion control), for experiments.
    Fixed {
        /// Window in bytes.
        window: u32,
    },
}

impl CcAlgorithm {
    /// Builds a controller for one path.
    pub fn build(&self, mtu: u32) -> Box<dyn PathController> {
        match *self {
            CcAlgorithm::EcnAimd(p) => Box::new(EcnAimd::new(p, mtu)),
            CcAlgorithm::Fixed { window } => Box::new(FixedWindow(window)),
        }
    }
}

/// A constant window.
#[derive(Debug, Clone, Copy)]
struct FixedWindow(u32);

impl PathController for FixedWindow {
    fn window(&self) -> u32 {
        self.0
    }
    fn on_ack(&mut self, _: u64, _: u32, _: u32, _: u32, _: u64) {}
    fn on_loss(&mut self, _: u64) {}
    fn on_timeout(&mut self, _: u64) {}
    fn name(&self) -> &'static str {
        "fixed"
    }
}
