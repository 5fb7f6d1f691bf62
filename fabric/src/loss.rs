//! Random loss element: drops each passing packet independently with a
//! fixed probability, then hands survivors on at once (no delay).

use rand::Rng;

use crate::error::{FabricError, check_probability};
use crate::event::ComponentId;
use crate::packet::PacketId;
use crate::sim::SimContext;

/// Bernoulli packet dropper placed in front of a component.
#[derive(Clone, Debug)]
pub struct LossElement {
    probability: f64,
    next: ComponentId,
    dropped: u64,
    passed: u64,
}

impl LossElement {
    /// Drops with `probability` and forwards survivors to `next`.
    pub fn new(probability: f64, next: ComponentId) -> Result<Self, FabricError> {
        check_probability("loss probability", probability)?;
        Ok(Self {
            probability,
            next,
            dropped: 0,
            passed: 0,
        })
    }

    /// Decides the packet's fate: `Some(next)` if it survives. A dropped
    /// packet is returned to the pool.
    pub fn pass(&mut self, ctx: &mut SimContext, packet: PacketId) -> Option<ComponentId> {
        if self.probability > 0.0 && ctx.rng.gen_bool(self.probability) {
            self.dropped += 1;
            ctx.counters.random_drops += 1;
            ctx.pool.release(packet);
            None
        } else {
            self.passed += 1;
            Some(self.next)
        }
    }

    /// Packets dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Packets passed so far.
    pub fn passed(&self) -> u64 {
        self.passed
    }
}
