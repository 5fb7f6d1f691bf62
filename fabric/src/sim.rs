//! The simulator: shared context (clock, event list, packet pool, RNG,
//! counters) and the dispatch of events to components.

use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::background::BackgroundLoad;
use crate::event::{ComponentId, EventKind, EventList};
use crate::host::Host;
use crate::loss::LossElement;
use crate::packet::{HostId, PacketId, PacketPool};
use crate::queue::{OutputQueue, QueueStats};
use crate::switch::EcmpSwitch;
use crate::time::SimTime;
use crate::transport::TransportStats;

/// Network-wide counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimCounters {
    /// Events processed.
    pub events: u64,
    /// Packets dropped by random loss elements.
    pub random_drops: u64,
    /// Packets dropped by full queues.
    pub queue_drops: u64,
    /// Packets marked CE by queues.
    pub ecn_marks: u64,
    /// Packets lost on blackholed links.
    pub blackholed: u64,
    /// Packets a switch had no route for.
    pub unroutable: u64,
    /// Background packets that crossed their hot link.
    pub background_delivered: u64,
}

/// State every component may touch while handling an event.
pub struct SimContext {
    /// Current simulated time.
    pub now: SimTime,
    /// Pending events.
    pub events: EventList,
    /// Packet storage.
    pub pool: PacketPool,
    /// The run's only source of randomness.
    pub rng: SmallRng,
    /// Network-wide counters.
    pub counters: SimCounters,
}

impl SimContext {
    /// A context at time zero with an RNG seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            now: 0,
            events: EventList::new(),
            pool: PacketPool::new(),
            rng: SmallRng::seed_from_u64(seed),
            counters: SimCounters::default(),
        }
    }
}

/// Everything that handles events.
pub enum Component {
    /// Switch output port.
    Queue(OutputQueue),
    /// Random dropper in front of another component.
    Loss(LossElement),
    /// ECMP switch.
    Switch(EcmpSwitch),
    /// End host with its transport.
    Host(Host),
    /// Background traffic source.
    Background(BackgroundLoad),
}

/// A built network, ready to run.
pub struct Simulator {
    ctx: SimContext,
    components: Vec<Component>,
    hosts: Vec<ComponentId>,
    trace_digest: u64,
}

const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

impl Simulator {
    /// Assembles a simulator; `hosts[i]` is the component of host `i`.
    /// Every host is woken at time zero so its transport can start.
    pub fn new(ctx: SimContext, components: Vec<Component>, hosts: Vec<ComponentId>) -> Self {
        let mut sim = Self {
            ctx,
            components,
            hosts,
            trace_digest: FNV_OFFSET,
        };
        for &host in &sim.hosts {
            sim.ctx.events.schedule(0, host, EventKind::Wake);
        }
        sim
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.ctx.now
    }

    /// Network-wide counters.
    pub fn counters(&self) -> SimCounters {
        self.ctx.counters
    }

    /// A digest of every event processed (time, target, kind): two runs
    /// with the same inputs and seed have the same digest.
    pub fn trace_digest(&self) -> u64 {
        self.trace_digest
    }

    /// Packets currently alive (in queues, on links or in NIC FIFOs).
    pub fn packets_in_flight(&self) -> usize {
        self.ctx.pool.live()
    }

    /// Packet pool high-water mark.
    pub fn packet_pool_capacity(&self) -> usize {
        self.ctx.pool.capacity()
    }

    /// Schedules a link state change of the output queue `queue`.
    pub fn schedule_link_state(&mut self, at: SimTime, queue: ComponentId, up: bool) {
        self.ctx
            .events
            .schedule(at, queue, EventKind::SetLinkUp(up));
    }

    /// Starts a background source component at `at`.
    pub fn schedule_background_start(&mut self, at: SimTime, source: ComponentId) {
        self.ctx.events.schedule(at, source, EventKind::Generate);
    }

    /// Counters of the transport on `host`.
    pub fn transport_stats(&self, host: HostId) -> Option<TransportStats> {
        self.host(host).map(|host| host.transport().stats())
    }

    /// The host component of `host`.
    pub fn host(&self, host: HostId) -> Option<&Host> {
        let component = self.hosts.get(host.0 as usize)?;
        match self.components.get(component.0 as usize) {
            Some(Component::Host(host)) => Some(host),
            _ => None,
        }
    }

    /// Counters of the output queue component `queue`.
    pub fn queue_stats(&self, queue: ComponentId) -> Option<QueueStats> {
        match self.components.get(queue.0 as usize) {
            Some(Component::Queue(queue)) => Some(queue.stats()),
            _ => None,
        }
    }

    /// Processes every event up to and including `end`, then sets the
    /// clock to `end`.
    pub fn run_until(&mut self, end: SimTime) {
        while self.ctx.events.peek_time().is_some_and(|time| time <= end) {
            self.step();
        }
        self.ctx.now = self.ctx.now.max(end);
    }

    /// Processes the next event; returns `false` when none is left.
    pub fn step(&mut self) -> bool {
        let Some(event) = self.ctx.events.pop() else {
            return false;
        };
        // Start loading what the next events will read while this one is
        // handled: the bytes of the next event's packet (whose metadata the
        // previous step asked for), and the metadata of the packets of the
        // events most likely to follow it.
        if let Some(next) = self.ctx.events.next_arrival() {
            self.ctx.pool.prefetch_bytes(next);
        }
        for later in self.ctx.events.later_arrivals() {
            self.ctx.pool.prefetch(later);
        }
        self.ctx.now = event.time;
        self.ctx.counters.events += 1;
        for word in [event.time, u64::from(event.target.0), event.kind.code()] {
            self.trace_digest = (self.trace_digest ^ word).wrapping_mul(FNV_PRIME);
        }
        let target = event.target;
        match event.kind {
            EventKind::Arrive(packet) => {
                if self.ctx.pool.get(packet).is_background {
                    self.ctx.counters.background_delivered += 1;
                    self.ctx.pool.release(packet);
                } else {
                    self.deliver(target, packet);
                }
            }
            EventKind::TxDone(port) => match &mut self.components[target.0 as usize] {
                Component::Queue(queue) => queue.on_tx_done(target, &mut self.ctx),
                Component::Host(host) => host.on_tx_done(target, &mut self.ctx, port),
                _ => {}
            },
            EventKind::Wake => {
                if let Component::Host(host) = &mut self.components[target.0 as usize] {
                    host.on_wake(target, &mut self.ctx);
                }
            }
            EventKind::Generate => {
                if let Component::Background(source) = &mut self.components[target.0 as usize] {
                    let (queue, packet) = source.generate(target, &mut self.ctx);
                    self.deliver(queue, packet);
                }
            }
            EventKind::SetLinkUp(up) => {
                if let Component::Queue(queue) = &mut self.components[target.0 as usize] {
                    queue.set_link_up(up);
                }
            }
        }
        true
    }

    /// Hands `packet` to `target`, following zero-delay components (loss
    /// elements, switches) until it is queued, delivered or dropped.
    fn deliver(&mut self, mut target: ComponentId, packet: PacketId) {
        loop {
            match &mut self.components[target.0 as usize] {
                Component::Loss(loss) => match loss.pass(&mut self.ctx, packet) {
                    Some(next) => target = next,
                    None => return,
                },
                Component::Switch(switch) => match switch.route(self.ctx.pool.get(packet)) {
                    Some(next) => target = next,
                    None => {
                        self.ctx.counters.unroutable += 1;
                        self.ctx.pool.release(packet);
                        return;
                    }
                },
                Component::Queue(queue) => {
                    queue.enqueue(target, &mut self.ctx, packet);
                    return;
                }
                Component::Host(host) => {
                    host.on_arrival(target, &mut self.ctx, packet);
                    return;
                }
                Component::Background(_) => {
                    self.ctx.pool.release(packet);
                    return;
                }
            }
        }
    }
}
