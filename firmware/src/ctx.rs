//! What a QP borrows from its NIC while it works: the NIC's shared state
//! ([`Shared`]) lent out as one [`Ctx`] per call.

use alloc::collections::VecDeque;

use crate::Event;
use crate::counters::{Drops, Stats};
use crate::memory::Memory;
use crate::mr::MrTable;
use crate::srq::Srqs;

/// Everything a QP borrows from its NIC while it works ([`Shared::ctx`]).
pub(crate) struct Ctx<'a, M: Memory> {
    /// The time of the call, ns.
    pub now: u64,
    /// Host memory, where payloads are placed and read.
    pub mem: &'a mut M,
    /// The memory regions.
    pub mrs: &'a MrTable,
    /// The shared receive queues.
    pub srqs: &'a mut Srqs,
    /// Drop counters.
    pub drops: &'a mut Drops,
    /// Other counters.
    pub stats: &'a mut Stats,
    /// The application's events.
    pub events: &'a mut VecDeque<Event>,
    /// The NIC's MTU.
    pub mtu: u32,
}

/// The state a NIC's QPs share: memory regions, shared receive queues,
/// counters and the application's event queue.
pub(crate) struct Shared {
    /// The memory regions.
    pub mrs: MrTable,
    /// The shared receive queues.
    pub srqs: Srqs,
    /// Drop counters.
    pub drops: Drops,
    /// Other counters.
    pub stats: Stats,
    /// The application's events, oldest first.
    pub events: VecDeque<Event>,
}

impl Shared {
    /// Lends the shared state to a QP's call at `now`, with the host memory
    /// `mem` and the NIC's `mtu`.
    pub fn ctx<'a, M: Memory>(&'a mut self, now: u64, mem: &'a mut M, mtu: u32) -> Ctx<'a, M> {
        Ctx {
            now,
            mem,
            mrs: &self.mrs,
            srqs: &mut self.srqs,
            drops: &mut self.drops,
            stats: &mut self.stats,
            events: &mut self.events,
            mtu,
        }
    }
}
