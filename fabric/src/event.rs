//! The event list: a calendar queue keyed by (time, insertion order).
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

/// Children per node of a heap: a 4-ary heap is half as deep as a binary
/// one and a node's children share one or two cache lines.
const ARITY: usize = 4;

/// A 4-ary min-heap of packed entries, ordered by [`Entry::key`].
#[derive(Debug, Default)]
struct Heap {
    entries: Vec<Entry>,
}

impl Heap {
    fn push(&mut self, entry: Entry) {
        // Sift up: move parents down until the entry's place is found.
        let mut hole = self.entries.len();
        self.entries.push(entry);
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if self.entries[parent].key() <= entry.key() {
                break;
            }
            self.entries[hole] = self.entries[parent];
            hole = parent;
        }
        self.entries[hole] = entry;
    }

    fn first(&self) -> Option<&Entry> {
        self.entries.first()
    }

    /// The root's children: the entries most likely to follow the root.
    fn children(&self) -> &[Entry] {
        let end = self.entries.len().min(ARITY + 1);
        self.entries.get(1..end).unwrap_or(&[])
    }

    fn pop(&mut self) -> Option<Entry> {
        let last = self.entries.pop()?;
        let Some(&top) = self.entries.first() else {
            return Some(last);
        };
        // Sift the last entry down from the root.
        let len = self.entries.len();
        let mut hole = 0;
        loop {
            let first = hole * ARITY + 1;
            if first >= len {
                break;
            }
            let end = (first + ARITY).min(len);
            let mut best = first;
            let mut best_key = self.entries[first].key();
            for child in first + 1..end {
                let key = self.entries[child].key();
                let smaller = key < best_key;
                best = if smaller { child } else { best };
                best_key = if smaller { key } else { best_key };
            }
            if last.key() <= best_key {
                break;
            }
            self.entries[hole] = self.entries[best];
            hole = best;
        }
        self.entries[hole] = last;
        Some(top)
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// log2 of a calendar slot's width in picoseconds (2.0 ns: a few events
/// per slot while 64 hosts send at 200 Gbit/s; 1, 2, 4 and 8 ns slots were
/// measured, 2 ns was the fastest).
const SLOT_SHIFT: u32 = 11;

/// Slots in the calendar ring, a power of two: with [`SLOT_SHIFT`] the ring
/// spans 16.8 µs ahead of the current slot, past most link delays and
/// transmissions; later events (timers) wait in an overflow heap.
const SLOTS: u64 = 8192;

/// The calendar slot of `time`.
fn slot_of(time: SimTime) -> u64 {
    time >> SLOT_SHIFT
}

/// No node: the end of a bucket's list or of the free list.
const NIL: u32 = u32::MAX;

/// An entry in a ring bucket: buckets are singly linked lists of nodes in
/// one array, so filing an entry writes to a recently freed (cached) node
/// instead of a bucket's own buffer, untouched since the ring last passed.
#[derive(Clone, Copy, Debug)]
struct Node {
    entry: Entry,
    /// The next node of the same bucket (or of the free list), or [`NIL`].
    next: u32,
}

/// Pending events in time order, a calendar queue: the entries of the
/// current time slot in a small 4-ary heap (`near`), those of the next
/// `SLOTS` − 1 slots unsorted in a ring of buckets, and later ones in an
/// overflow heap (`far`). When `near` runs empty, the next occupied slot's
/// bucket moves into it (and overflow entries that now fall inside the ring
/// move into their buckets), so every entry in `near` is earlier than every
/// other entry and events pop in exactly the (time, insertion sequence)
/// order of one heap over all of them, whatever times are scheduled.
#[derive(Debug)]
pub struct EventList {
    /// Every entry of slot `current` or earlier.
    near: Heap,
    /// The slot `near` holds; the ring holds slots `current + 1 ..
    /// current + SLOTS`.
    current: u64,
    /// First node of the bucket of slot `s` at index `s % SLOTS`, or [`NIL`].
    heads: Vec<u32>,
    /// A bit per ring bucket: set when it holds entries.
    occupied: Vec<u64>,
    /// Storage of the buckets' nodes.
    nodes: Vec<Node>,
    /// First free node, or [`NIL`].
    free: u32,
    /// Entries in the ring.
    ring_len: usize,
    /// Entries of slot `current + SLOTS` or later.
    far: Heap,
    next_sequence: u64,
}

impl Default for EventList {
    fn default() -> Self {
        Self {
            near: Heap::default(),
            current: 0,
            heads: vec![NIL; SLOTS as usize],
            occupied: vec![0; SLOTS as usize / 64],
            nodes: Vec::new(),
            free: NIL,
            ring_len: 0,
            far: Heap::default(),
            next_sequence: 0,
        }
    }
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
        if self.near.is_empty() {
            // Nothing is pending (`near` runs empty only with the rest).
            self.current = slot_of(time);
        }
        self.file(entry);
    }

    /// Puts `entry` where its slot belongs: `near`, the ring or `far`.
    fn file(&mut self, entry: Entry) {
        let slot = slot_of(entry.time);
        if slot <= self.current {
            self.near.push(entry);
        } else if slot - self.current < SLOTS {
            let index = (slot % SLOTS) as usize;
            let node = Node {
                entry,
                next: self.heads[index],
            };
            self.heads[index] = if self.free == NIL {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            } else {
                let at = self.free;
                self.free = self.nodes[at as usize].next;
                self.nodes[at as usize] = node;
                at
            };
            self.occupied[index / 64] |= 1 << (index % 64);
            self.ring_len += 1;
        } else {
            self.far.push(entry);
        }
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.near.first().map(|entry| entry.time)
    }

    /// The packet of the earliest pending event, when it is an arrival.
    pub fn next_arrival(&self) -> Option<PacketId> {
        self.near.first().and_then(Entry::arrival)
    }

    /// The packets of the arrivals among the earliest pending event's
    /// children in the current slot's heap: the event after the next one is
    /// most likely among them.
    pub fn later_arrivals(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.near.children().iter().filter_map(Entry::arrival)
    }

    /// Removes and returns the earliest pending event.
    pub fn pop(&mut self) -> Option<Event> {
        let top = self.near.pop()?;
        if self.near.is_empty() {
            self.advance();
        }
        Some(top.unpack())
    }

    /// Moves the next occupied slot into the empty `near` (from the ring,
    /// or from `far` when the ring is empty), then refiles the overflow
    /// entries that the moved ring now covers.
    fn advance(&mut self) {
        if let Some(slot) = self.next_occupied() {
            self.current = slot;
            let index = (slot % SLOTS) as usize;
            self.occupied[index / 64] &= !(1 << (index % 64));
            let mut at = std::mem::replace(&mut self.heads[index], NIL);
            while at != NIL {
                let node = &mut self.nodes[at as usize];
                self.near.push(node.entry);
                let next = std::mem::replace(&mut node.next, self.free);
                self.free = at;
                self.ring_len -= 1;
                at = next;
            }
        } else if let Some(first) = self.far.first() {
            self.current = slot_of(first.time);
        } else {
            return;
        }
        while let Some(first) = self.far.first() {
            if slot_of(first.time) - self.current >= SLOTS {
                break;
            }
            let entry = self.far.pop().expect("an overflow entry was just seen");
            self.file(entry);
        }
    }

    /// The first occupied ring slot after `current`, if any.
    fn next_occupied(&self) -> Option<u64> {
        if self.ring_len == 0 {
            return None;
        }
        let words = self.occupied.len();
        let start = ((self.current + 1) % SLOTS) as usize;
        // The word holding `start` (its bits from `start` on), the other
        // words in ring order, then that word's bits before `start`.
        let (first_word, first_bit) = (start / 64, start % 64);
        let mut pos = None;
        let head = self.occupied[first_word] >> first_bit;
        if head != 0 {
            pos = Some(start + head.trailing_zeros() as usize);
        } else {
            for step in 1..=words {
                let word = (first_word + step) % words;
                let mut bits = self.occupied[word];
                if step == words {
                    bits &= (1u64 << first_bit).wrapping_sub(1);
                }
                if bits != 0 {
                    pos = Some(word * 64 + bits.trailing_zeros() as usize);
                    break;
                }
            }
        }
        let pos = pos? as u64;
        let distance = (pos + SLOTS - start as u64) % SLOTS;
        Some(self.current + 1 + distance)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.near.len() + self.ring_len + self.far.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.near.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    /// One step of a random workload: schedule an event `delta` ps after
    /// the last popped time (or `back` ps before it), or pop one.
    #[derive(Clone, Debug)]
    enum Op {
        Schedule { delta: u64, back: bool, tag: u8 },
        Pop,
    }

    /// Offsets from within one slot to far past the ring.
    fn delta() -> impl Strategy<Value = u64> {
        prop_oneof![
            0..(1u64 << SLOT_SHIFT),
            0..(SLOTS << SLOT_SHIFT),
            0..((4 * SLOTS) << SLOT_SHIFT),
            Just(SLOTS << SLOT_SHIFT),
            Just((SLOTS << SLOT_SHIFT) - 1),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (delta(), prop::bool::weighted(0.05), 0..6u8)
                .prop_map(|(delta, back, tag)| Op::Schedule { delta, back, tag }),
            2 => Just(Op::Pop),
        ]
    }

    proptest! {
        /// The calendar pops exactly what one heap over all pending events
        /// (`BinaryHeap` of (time, insertion sequence)) pops, for times
        /// within a slot, across the ring, beyond it and in the past.
        #[test]
        fn pops_like_a_heap(ops in prop::collection::vec(op(), 1..400)) {
            use std::cmp::Reverse;
            let kinds = [
                EventKind::Arrive(PacketId(7)),
                EventKind::TxDone(3),
                EventKind::Wake,
                EventKind::Generate,
                EventKind::SetLinkUp(true),
                EventKind::SetLinkUp(false),
            ];
            let mut list = EventList::new();
            let mut reference = std::collections::BinaryHeap::new();
            let (mut now, mut sequence) = (0u64, 0u64);
            for op in ops.iter().cloned().chain(std::iter::repeat_n(Op::Pop, ops.len())) {
                match op {
                    Op::Schedule { delta, back, tag } => {
                        let time = if back { now.saturating_sub(delta) } else { now + delta };
                        let kind = kinds[usize::from(tag)];
                        list.schedule(time, ComponentId(sequence as u32), kind);
                        reference.push(Reverse((time, sequence, kind.code())));
                        sequence += 1;
                    }
                    Op::Pop => {
                        let expected = reference.pop().map(|Reverse(e)| e);
                        prop_assert_eq!(list.peek_time(), expected.map(|e| e.0));
                        let got = list.pop();
                        if let Some(event) = got {
                            prop_assert_eq!(u64::from(event.target.0), event.sequence);
                            now = event.time;
                        }
                        let got = got.map(|e| (e.time, e.sequence, e.kind.code()));
                        prop_assert_eq!(got, expected);
                    }
                }
                prop_assert_eq!(list.len(), reference.len());
            }
        }
    }
}
