//! Generic network builder: hosts, switches, cables, faults. `build` wires
//! the components, computes shortest-path ECMP routes and returns a
//! [`Simulator`].

use std::collections::VecDeque;

use crate::background::BackgroundLoad;
use crate::error::{FabricError, check_probability};
use crate::event::ComponentId;
use crate::host::Host;
use crate::link::Link;
use crate::loss::LossElement;
use crate::packet::HostId;
use crate::queue::{OutputQueue, QueueConfig, QueueStats};
use crate::sim::{Component, SimContext, Simulator};
use crate::switch::EcmpSwitch;
use crate::time::SimTime;
use crate::transport::Transport;

/// Index of a switch in a [`NetworkBuilder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SwitchId(pub u32);

/// Index of one direction of a cable in a [`NetworkBuilder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkId(pub u32);

/// Rate, delay and egress buffer of one direction of a cable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// Line rate in bit/s.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: SimTime,
    /// Egress queue at the sending switch (unused at a host NIC, which is
    /// pull-based and has no queue).
    pub queue: QueueConfig,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Host(u32),
    Switch(u32),
}

#[derive(Clone, Debug)]
struct BackgroundSpec {
    fraction: f64,
    packet_bytes: u32,
    start: SimTime,
}

#[derive(Clone, Debug)]
struct DirectedLink {
    from: Node,
    to: Node,
    spec: LinkSpec,
    loss: f64,
    state_changes: Vec<(SimTime, bool)>,
    background: Option<BackgroundSpec>,
}

/// Describes a network before it is built.
#[derive(Clone, Debug)]
pub struct NetworkBuilder {
    seed: u64,
    host_count: u32,
    switch_count: u32,
    links: Vec<DirectedLink>,
}

/// SplitMix64 step, used to derive per-switch hash seeds from the run seed.
fn split_mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl NetworkBuilder {
    /// An empty network whose randomness derives from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            host_count: 0,
            switch_count: 0,
            links: Vec::new(),
        }
    }

    /// Adds a host; hosts are numbered from 0 in order of addition.
    pub fn add_host(&mut self) -> HostId {
        self.host_count += 1;
        HostId(self.host_count - 1)
    }

    /// Adds a switch.
    pub fn add_switch(&mut self) -> SwitchId {
        self.switch_count += 1;
        SwitchId(self.switch_count - 1)
    }

    /// Hosts added so far.
    pub fn host_count(&self) -> usize {
        self.host_count as usize
    }

    fn check_host(&self, host: HostId) -> Result<(), FabricError> {
        if host.0 < self.host_count {
            Ok(())
        } else {
            Err(FabricError::UnknownElement {
                kind: "host",
                index: host.0 as usize,
            })
        }
    }

    fn check_switch(&self, switch: SwitchId) -> Result<(), FabricError> {
        if switch.0 < self.switch_count {
            Ok(())
        } else {
            Err(FabricError::UnknownElement {
                kind: "switch",
                index: switch.0 as usize,
            })
        }
    }

    fn link_mut(&mut self, link: LinkId) -> Result<&mut DirectedLink, FabricError> {
        self.links
            .get_mut(link.0 as usize)
            .ok_or(FabricError::UnknownElement {
                kind: "link",
                index: link.0 as usize,
            })
    }

    fn add_cable(
        &mut self,
        a: Node,
        b: Node,
        spec: LinkSpec,
    ) -> Result<(LinkId, LinkId), FabricError> {
        if spec.rate_bps == 0 {
            return Err(FabricError::InvalidTopology(
                "link rate must be positive".into(),
            ));
        }
        spec.queue.validate()?;
        let first = LinkId(self.links.len() as u32);
        for (from, to) in [(a, b), (b, a)] {
            self.links.push(DirectedLink {
                from,
                to,
                spec,
                loss: 0.0,
                state_changes: Vec::new(),
                background: None,
            });
        }
        Ok((first, LinkId(first.0 + 1)))
    }

    /// Cables `host` to `switch`, adding a NIC port to the host (ports are
    /// numbered in order of connection). Returns (uplink, downlink).
    pub fn connect_host(
        &mut self,
        host: HostId,
        switch: SwitchId,
        spec: LinkSpec,
    ) -> Result<(LinkId, LinkId), FabricError> {
        self.check_host(host)?;
        self.check_switch(switch)?;
        self.add_cable(Node::Host(host.0), Node::Switch(switch.0), spec)
    }

    /// Cables two switches. Returns (a→b, b→a).
    pub fn connect_switches(
        &mut self,
        a: SwitchId,
        b: SwitchId,
        spec: LinkSpec,
    ) -> Result<(LinkId, LinkId), FabricError> {
        self.check_switch(a)?;
        self.check_switch(b)?;
        if a == b {
            return Err(FabricError::InvalidTopology(format!(
                "switch {} cannot be cabled to itself",
                a.0
            )));
        }
        self.add_cable(Node::Switch(a.0), Node::Switch(b.0), spec)
    }

    /// Drops each packet crossing `link` independently with `probability`.
    pub fn set_loss(&mut self, link: LinkId, probability: f64) -> Result<(), FabricError> {
        check_probability("loss probability", probability)?;
        self.link_mut(link)?.loss = probability;
        Ok(())
    }

    /// Random loss on every switch→host link: each packet (data and ACK
    /// alike) crosses exactly one such link, so it is dropped with
    /// `probability` end to end, in both directions.
    pub fn set_host_ingress_loss(&mut self, probability: f64) -> Result<(), FabricError> {
        check_probability("loss probability", probability)?;
        for link in &mut self.links {
            if matches!(link.to, Node::Host(_)) {
                link.loss = probability;
            }
        }
        Ok(())
    }

    fn check_switch_egress(&self, link: LinkId, what: &str) -> Result<(), FabricError> {
        match self.links.get(link.0 as usize) {
            None => Err(FabricError::UnknownElement {
                kind: "link",
                index: link.0 as usize,
            }),
            Some(DirectedLink {
                from: Node::Host(_),
                ..
            }) => Err(FabricError::UnsupportedFault(format!(
                "{what} on link {} needs a switch egress queue, but it leaves a host NIC",
                link.0
            ))),
            Some(_) => Ok(()),
        }
    }

    /// Blackholes (`up = false`) or restores `link` at time `at`. The link
    /// keeps serialising but delivers nothing; routes do not change (a
    /// silent failure, as a bad optic or a grey switch port).
    pub fn schedule_link_state(
        &mut self,
        link: LinkId,
        at: SimTime,
        up: bool,
    ) -> Result<(), FabricError> {
        self.check_switch_egress(link, "a link state change")?;
        self.link_mut(link)?.state_changes.push((at, up));
        Ok(())
    }

    /// Loads `link` with constant-bit-rate background traffic of `fraction`
    /// of its rate, from `start`, in packets of `packet_bytes`.
    pub fn add_background_load(
        &mut self,
        link: LinkId,
        fraction: f64,
        packet_bytes: u32,
        start: SimTime,
    ) -> Result<(), FabricError> {
        self.check_switch_egress(link, "background load")?;
        check_probability("background load fraction", fraction)?;
        self.link_mut(link)?.background = Some(BackgroundSpec {
            fraction,
            packet_bytes,
            start,
        });
        Ok(())
    }

    /// Builds the simulator; `transports[i]` runs on host `i`.
    pub fn build(self, transports: Vec<Box<dyn Transport>>) -> Result<Network, FabricError> {
        let host_count = self.host_count as usize;
        if transports.len() != host_count {
            return Err(FabricError::TransportCount {
                hosts: host_count,
                transports: transports.len(),
            });
        }
        let node_component = |node: Node| match node {
            Node::Host(h) => ComponentId(h),
            Node::Switch(s) => ComponentId(self.host_count + s),
        };
        // Component ids: hosts, switches, then per link its queue (switch
        // egress) and loss element, then background sources.
        let mut next_id = self.host_count + self.switch_count;
        let mut link_queue = Vec::with_capacity(self.links.len());
        let mut link_loss = Vec::with_capacity(self.links.len());
        for link in &self.links {
            link_queue.push(matches!(link.from, Node::Switch(_)).then(|| {
                next_id += 1;
                ComponentId(next_id - 1)
            }));
            link_loss.push((link.loss > 0.0).then(|| {
                next_id += 1;
                ComponentId(next_id - 1)
            }));
        }
        let link_next =
            |index: usize| link_loss[index].unwrap_or_else(|| node_component(self.links[index].to));

        // Host NIC ports, in order of connection.
        let mut host_links: Vec<Vec<Link>> = (0..host_count).map(|_| Vec::new()).collect();
        for (index, link) in self.links.iter().enumerate() {
            if let Node::Host(h) = link.from {
                host_links[h as usize].push(Link::new(
                    link.spec.rate_bps,
                    link.spec.delay,
                    link_next(index),
                )?);
            }
        }
        if let Some(lonely) = host_links.iter().position(Vec::is_empty) {
            return Err(FabricError::InvalidTopology(format!(
                "host {lonely} has no NIC port"
            )));
        }

        let routes = self.compute_routes(&link_queue);

        let mut components = Vec::with_capacity(next_id as usize);
        for ((index, links), transport) in host_links.into_iter().enumerate().zip(transports) {
            components.push(Component::Host(Host::new(
                HostId(index as u32),
                links,
                transport,
            )));
        }
        for (switch, switch_routes) in routes.iter().enumerate() {
            let hash_seed = split_mix(self.seed ^ split_mix(switch as u64 + 1));
            components.push(Component::Switch(EcmpSwitch::new(hash_seed, switch_routes)));
        }
        let mut backgrounds = Vec::new();
        for (index, link) in self.links.iter().enumerate() {
            if let Some(queue_id) = link_queue[index] {
                let wire = Link::new(link.spec.rate_bps, link.spec.delay, link_next(index))?;
                components.push(Component::Queue(OutputQueue::new(wire, link.spec.queue)?));
                if let Some(background) = &link.background {
                    backgrounds.push((queue_id, link.spec.rate_bps, background.clone()));
                }
            }
            if link_loss[index].is_some() {
                components.push(Component::Loss(LossElement::new(
                    link.loss,
                    node_component(link.to),
                )?));
            }
        }
        let mut background_starts = Vec::new();
        for (queue_id, rate_bps, spec) in backgrounds {
            background_starts.push((ComponentId(components.len() as u32), spec.start));
            components.push(Component::Background(BackgroundLoad::new(
                queue_id,
                rate_bps,
                spec.fraction,
                spec.packet_bytes,
            )?));
        }
        debug_assert_eq!(components.len(), next_id as usize + background_starts.len());

        let hosts = (0..self.host_count).map(ComponentId).collect();
        let mut sim = Simulator::new(SimContext::new(self.seed), components, hosts);
        for (source, start) in background_starts {
            sim.schedule_background_start(start, source);
        }
        for (index, link) in self.links.iter().enumerate() {
            if let Some(queue_id) = link_queue[index] {
                for &(at, up) in &link.state_changes {
                    sim.schedule_link_state(at, queue_id, up);
                }
            }
        }
        Ok(Network { sim, link_queue })
    }

    /// For every switch and destination host, the egress queues of the
    /// next hops on shortest paths (hosts never forward).
    fn compute_routes(&self, link_queue: &[Option<ComponentId>]) -> Vec<Vec<Vec<ComponentId>>> {
        let switch_count = self.switch_count as usize;
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); switch_count];
        let mut outgoing: Vec<Vec<usize>> = vec![Vec::new(); switch_count];
        for (index, link) in self.links.iter().enumerate() {
            if let (Node::Switch(_), Node::Switch(to)) = (link.from, link.to) {
                incoming[to as usize].push(index);
            }
            if let Node::Switch(from) = link.from {
                outgoing[from as usize].push(index);
            }
        }
        let mut routes = vec![vec![Vec::new(); self.host_count as usize]; switch_count];
        let mut distance = vec![u32::MAX; switch_count];
        let mut frontier = VecDeque::new();
        for host in 0..self.host_count {
            distance.fill(u32::MAX);
            frontier.clear();
            for link in &self.links {
                if let (Node::Switch(s), Node::Host(h)) = (link.from, link.to)
                    && h == host
                    && distance[s as usize] == u32::MAX
                {
                    distance[s as usize] = 1;
                    frontier.push_back(s as usize);
                }
            }
            while let Some(switch) = frontier.pop_front() {
                for &index in &incoming[switch] {
                    if let Node::Switch(previous) = self.links[index].from
                        && distance[previous as usize] == u32::MAX
                    {
                        distance[previous as usize] = distance[switch] + 1;
                        frontier.push_back(previous as usize);
                    }
                }
            }
            for switch in 0..switch_count {
                if distance[switch] == u32::MAX {
                    continue;
                }
                for &index in &outgoing[switch] {
                    let on_shortest_path = match self.links[index].to {
                        Node::Host(h) => h == host && distance[switch] == 1,
                        Node::Switch(next) => {
                            distance[next as usize].checked_add(1) == Some(distance[switch])
                        }
                    };
                    if on_shortest_path && let Some(queue) = link_queue[index] {
                        routes[switch][host as usize].push(queue);
                    }
                }
            }
        }
        routes
    }
}

/// A built network: the simulator plus the map from links to their queues.
pub struct Network {
    /// The simulator, ready to run.
    pub sim: Simulator,
    link_queue: Vec<Option<ComponentId>>,
}

impl Network {
    /// Counters of the egress queue of `link` (`None` for host NIC links).
    pub fn link_stats(&self, link: LinkId) -> Option<QueueStats> {
        let queue = (*self.link_queue.get(link.0 as usize)?)?;
        self.sim.queue_stats(queue)
    }
}
