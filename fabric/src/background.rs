//! Constant-bit-rate background traffic injected into one output queue, to
//! make a hot link. Background packets are discarded when they reach the
//! far end of that link.

use crate::error::{FabricError, check_probability};
use crate::event::{ComponentId, EventKind};
use crate::link::serialization_time;
use crate::packet::{Ecn, PacketId};
use crate::sim::SimContext;
use crate::time::SimTime;

/// A source that loads one queue with a fixed fraction of its link rate.
#[derive(Clone, Debug)]
pub struct BackgroundLoad {
    queue: ComponentId,
    packet_bytes: u32,
    interval: SimTime,
    generated: u64,
}

impl BackgroundLoad {
    /// Loads `queue` (whose link runs at `link_rate_bps`) with `fraction` of
    /// its capacity in packets of `packet_bytes` wire bytes.
    pub fn new(
        queue: ComponentId,
        link_rate_bps: u64,
        fraction: f64,
        packet_bytes: u32,
    ) -> Result<Self, FabricError> {
        check_probability("background load fraction", fraction)?;
        if fraction == 0.0 || packet_bytes == 0 {
            return Err(FabricError::InvalidParameter {
                name: "background load fraction",
                value: fraction,
                reason: "must be positive with a positive packet size",
            });
        }
        let interval =
            (serialization_time(packet_bytes, link_rate_bps) as f64 / fraction).round() as SimTime;
        Ok(Self {
            queue,
            packet_bytes,
            interval: interval.max(1),
            generated: 0,
        })
    }

    /// Emits one packet; returns the queue to put it in. Schedules the next.
    pub fn generate(&mut self, me: ComponentId, ctx: &mut SimContext) -> (ComponentId, PacketId) {
        let packet = ctx.pool.alloc();
        let slot = ctx.pool.get_mut(packet);
        slot.is_background = true;
        slot.wire_bytes = self.packet_bytes;
        slot.ecn = Ecn::Ect0;
        self.generated += 1;
        ctx.events
            .schedule(ctx.now + self.interval, me, EventKind::Generate);
        (self.queue, packet)
    }

    /// Packets emitted so far.
    pub fn generated(&self) -> u64 {
        self.generated
    }
}
