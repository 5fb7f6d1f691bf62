//! A constant window: no congestion control, for experiments.

use super::{AckSample, PathController};

/// A path window that never changes, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedWindow(pub u32);

impl PathController for FixedWindow {
    fn window(&self) -> u32 {
        self.0
    }
    fn on_ack(&mut self, _: &AckSample) {}
    fn on_loss(&mut self, _: u64) {}
    fn on_timeout(&mut self, _: u64) {}
    fn name(&self) -> &'static str {
        "fixed"
    }
}
