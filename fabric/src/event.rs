//! The event list: a binary min-heap keyed by (time, insertion order).
//!
//! Ties are broken by insertion order, so a run is a pure function of its
//! inputs and seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::packet::PacketId;
use crate::time::SimTime;

/// Index of a component (queue, switch, host, ...) in the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ComponentId(pub u32);

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A packet arrives at the target component.
    Arrive(PacketId),
    /// The target's transmitter (port index) finished serialising a packet.
    TxDone(u16),
    /// A host's transport timer is due.
    Wake,
    /// A background traffic source emits its next packet.
    Generate,
    /// The target queue's outgoing link goes up (`true`) or blackholes (`false`).
    SetLinkUp(bool),
}

impl EventKind {
    /// Small stable code used in the trace digest.
    pub fn code(self) -> u64 {
        match self {
            EventKind::Arrive(id) => 1 | (u64::from(id.0) << 8),
            EventKind::TxDone(port) => 2 | (u64::from(port) << 8),
            EventKind::Wake => 3,
            EventKind::Generate => 4,
            EventKind::SetLinkUp(up) => 5 | (u64::from(up) << 8),
        }
    }
}

/// A scheduled event.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// When it fires.
    pub time: SimTime,
    /// Insertion order, for deterministic tie breaking.
    pub sequence: u64,
    /// Component that handles it.
    pub target: ComponentId,
    /// What happens.
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.sequence).cmp(&(self.time, self.sequence))
    }
}

/// Pending events in time order.
#[derive(Debug, Default)]
pub struct EventList {
    heap: BinaryHeap<Event>,
    next_sequence: u64,
}

impl EventList {
    /// Creates an empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `kind` for `target` at `time`.
    pub fn schedule(&mut self, time: SimTime, target: ComponentId, kind: EventKind) {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.heap.push(Event {
            time,
            sequence,
            target,
            kind,
        });
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|event| event.time)
    }

    /// Removes and returns the earliest pending event.
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut list = EventList::new();
        list.schedule(20, ComponentId(0), EventKind::Wake);
        list.schedule(10, ComponentId(1), EventKind::Wake);
        list.schedule(10, ComponentId(2), EventKind::Wake);
        let order: Vec<u32> = std::iter::from_fn(|| list.pop().map(|e| e.target.0)).collect();
        assert_eq!(order, vec![1, 2, 0]);
    }
}
