//! The event list: a 4-ary min-heap keyed by (time, insertion order).
//!
//! Ties are broken by insertion order, so a run is a pure function of its
//! inputs and seed.

use std::cmp::Ordering;

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
    /// Reversed (later is smaller), so a max-heap such as `BinaryHeap` pops
    /// the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.sequence).cmp(&(self.time, self.sequence))
    }
}

/// A pending event as the list stores it: 24 bytes, ordered by
/// (`time`, `order`), where `order` holds the insertion sequence above the
/// kind's tag, so ties still break by insertion order.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    /// `sequence << 8 | tag`.
    order: u64,
    /// `target << 32 | argument` (packet id, port or flag).
    data: u64,
}

/// The tag of [`EventKind::Arrive`] in [`Entry::order`].
const ARRIVE_TAG: u64 = 0;

impl Entry {
    /// (`time`, `order`) as one integer, so comparisons need no branch.
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.order)
    }

    fn pack(time: SimTime, sequence: u64, target: ComponentId, kind: EventKind) -> Self {
        let (tag, argument) = match kind {
            EventKind::Arrive(packet) => (ARRIVE_TAG, packet.0),
            EventKind::TxDone(port) => (1, u32::from(port)),
            EventKind::Wake => (2, 0),
            EventKind::Generate => (3, 0),
            EventKind::SetLinkUp(up) => (4, u32::from(up)),
        };
        Self {
            time,
            order: (sequence << 8) | tag,
            data: (u64::from(target.0) << 32) | u64::from(argument),
        }
    }

    /// The packet, when the entry is an arrival.
    fn arrival(&self) -> Option<PacketId> {
        (self.order & 0xFF == ARRIVE_TAG).then_some(PacketId(self.data as u32))
    }

    fn unpack(self) -> Event {
        let argument = self.data as u32;
        let kind = match self.order & 0xFF {
            ARRIVE_TAG => EventKind::Arrive(PacketId(argument)),
            1 => EventKind::TxDone(argument as u16),
            2 => EventKind::Wake,
            3 => EventKind::Generate,
            _ => EventKind::SetLinkUp(argument != 0),
        };
        Event {
            time: self.time,
            sequence: self.order >> 8,
            target: ComponentId((self.data >> 32) as u32),
            kind,
        }
    }
}

/// Children per node of the heap: a 4-ary heap is half as deep as a binary
/// one and a node's children share one or two cache lines.
const ARITY: usize = 4;

/// Pending events in time order: a 4-ary min-heap of packed entries.
#[derive(Debug, Default)]
pub struct EventList {
    heap: Vec<Entry>,
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
        let entry = Entry::pack(time, sequence, target, kind);
        // Sift up: move parents down until the entry's place is found.
        let mut hole = self.heap.len();
        self.heap.push(entry);
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if self.heap[parent].key() <= entry.key() {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = entry;
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|entry| entry.time)
    }

    /// The packet of the earliest pending event, when it is an arrival.
    pub fn next_arrival(&self) -> Option<PacketId> {
        self.heap.first().and_then(Entry::arrival)
    }

    /// The packets of the arrivals among the earliest pending event's
    /// children in the heap: the event after the next one is most likely
    /// among them.
    pub fn later_arrivals(&self) -> impl Iterator<Item = PacketId> + '_ {
        let children = self.heap.get(1..self.heap.len().min(ARITY + 1));
        children.unwrap_or(&[]).iter().filter_map(Entry::arrival)
    }

    /// Removes and returns the earliest pending event.
    pub fn pop(&mut self) -> Option<Event> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some(last.unpack());
        };
        // Sift the last entry down from the root.
        let len = self.heap.len();
        let mut hole = 0;
        loop {
            let first = hole * ARITY + 1;
            if first >= len {
                break;
            }
            let end = (first + ARITY).min(len);
            let mut best = first;
            let mut best_key = self.heap[first].key();
            for child in first + 1..end {
                let key = self.heap[child].key();
                let smaller = key < best_key;
                best = if smaller { child } else { best };
                best_key = if smaller { key } else { best_key };
            }
            if last.key() <= best_key {
                break;
            }
            self.heap[hole] = self.heap[best];
            hole = best;
        }
        self.heap[hole] = last;
        Some(top.unpack())
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

    #[test]
    fn matches_a_sorted_reference_and_round_trips_kinds() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut list = EventList::new();
        let mut reference = Vec::new();
        let mut popped = Vec::new();
        let kinds = [
            EventKind::Arrive(PacketId(u32::MAX)),
            EventKind::TxDone(u16::MAX),
            EventKind::Wake,
            EventKind::Generate,
            EventKind::SetLinkUp(true),
            EventKind::SetLinkUp(false),
        ];
        let mut sequence = 0;
        for round in 0..20_000u32 {
            if rng.gen_bool(0.55) {
                let time = rng.gen_range(0..50u64);
                let target = ComponentId(rng.r#gen());
                let kind = kinds[round as usize % kinds.len()];
                list.schedule(time, target, kind);
                reference.push((time, sequence, target, kind));
                sequence += 1;
            } else if let Some(event) = list.pop() {
                popped.push((event.time, event.sequence, event.target, event.kind));
            }
        }
        while let Some(event) = list.pop() {
            popped.push((event.time, event.sequence, event.target, event.kind));
        }
        // Popping interleaved with scheduling never returns an event earlier
        // than one already returned that was pending at the same moment;
        // every scheduled event comes back exactly once, intact.
        let mut sorted_popped = popped.clone();
        sorted_popped.sort_by_key(|e| e.1);
        assert_eq!(sorted_popped, reference);
        // Pure pops after pure pushes come out in (time, sequence) order.
        let mut list = EventList::new();
        for &(time, _, target, kind) in &reference {
            list.schedule(time, target, kind);
        }
        let mut expected = reference.clone();
        expected.sort_by_key(|e| (e.0, e.1));
        let order: Vec<_> = std::iter::from_fn(|| list.pop())
            .map(|e| (e.time, e.target, e.kind))
            .collect();
        let expected: Vec<_> = expected.iter().map(|e| (e.0, e.2, e.3)).collect();
        assert_eq!(order, expected);
    }
}
