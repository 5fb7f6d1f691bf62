//! A host: a [`Transport`] behind a pull-based NIC with one or more egress
//! ports.
//!
//! The NIC pulls a packet from the transport while one of its ports is idle
//! (free, nothing waiting for it), so with one port it pulls exactly when
//! the link goes idle. With several ports (one per plane), a packet leaves
//! on port `src_port % ports`: the transport picks the plane through its
//! entropy value. A pulled packet whose port is busy waits in that port's
//! FIFO, and the NIC keeps pulling for its idle ports while fewer than
//! [`FIFO_PACKETS_PER_PORT`] packets per port wait in all, so one packet for
//! a busy port (an ACK, say) does not leave another port idle. Each pull tells
//! the transport which ports still have room ([`Transport::poll_transmit_on`]),
//! so a transport that sprays over planes sends on one that can take the packet
//! instead of queueing behind a full one while the others idle.

use std::collections::VecDeque;

use crate::event::{ComponentId, EventKind};
use crate::link::Link;
use crate::packet::{HostId, PacketId};
use crate::sim::SimContext;
use crate::time::{PS_PER_NS, SimTime};
use crate::transport::Transport;
use metaroce_firmware::PortsReady;

/// Smallest frame the NIC will serialise (64 B frame + 20 B preamble/IFG).
pub const MIN_WIRE_BYTES: u32 = 84;

/// Packets per port the NIC's FIFOs may hold in all.
pub const FIFO_PACKETS_PER_PORT: usize = 2;

/// One NIC egress port.
#[derive(Debug)]
struct NicPort {
    link: Link,
    fifo: VecDeque<PacketId>,
    free_at: SimTime,
}

/// A simulated host.
pub struct Host {
    id: HostId,
    ports: Vec<NicPort>,
    transport: Box<dyn Transport>,
    wake_at: Option<SimTime>,
    packets_received: u64,
    packets_sent: u64,
}

impl Host {
    /// Host `id` running `transport` with egress `links` (one per port).
    pub fn new(id: HostId, links: Vec<Link>, transport: Box<dyn Transport>) -> Self {
        let ports = links
            .into_iter()
            .map(|link| NicPort {
                link,
                fifo: VecDeque::new(),
                free_at: 0,
            })
            .collect();
        Self {
            id,
            ports,
            transport,
            wake_at: None,
            packets_received: 0,
            packets_sent: 0,
        }
    }

    /// The host's address.
    pub fn id(&self) -> HostId {
        self.id
    }

    /// The transport, for reading its state.
    pub fn transport(&self) -> &dyn Transport {
        self.transport.as_ref()
    }

    /// Packets delivered to the transport.
    pub fn packets_received(&self) -> u64 {
        self.packets_received
    }

    /// Packets the NIC put on the wire.
    pub fn packets_sent(&self) -> u64 {
        self.packets_sent
    }

    /// A packet arrived from the network.
    pub fn on_arrival(&mut self, me: ComponentId, ctx: &mut SimContext, packet: PacketId) {
        self.packets_received += 1;
        self.transport.handle_packet(ctx.now, ctx.pool.get(packet));
        ctx.pool.release_read(packet);
        self.pull(me, ctx);
    }

    /// Port `port` finished serialising: start its next packet and pull more.
    pub fn on_tx_done(&mut self, me: ComponentId, ctx: &mut SimContext, port: u16) {
        if let Some(nic_port) = self.ports.get_mut(usize::from(port))
            && nic_port.free_at <= ctx.now
            && let Some(packet) = nic_port.fifo.pop_front()
        {
            self.start_port(me, ctx, usize::from(port), packet);
        }
        self.pull(me, ctx);
    }

    /// A scheduled wake-up fired.
    pub fn on_wake(&mut self, me: ComponentId, ctx: &mut SimContext) {
        if self.wake_at == Some(ctx.now) {
            self.wake_at = None;
        }
        self.pull(me, ctx);
    }

    fn start_port(&mut self, me: ComponentId, ctx: &mut SimContext, port: usize, packet: PacketId) {
        let nic_port = &mut self.ports[port];
        nic_port.free_at = nic_port.link.transmit(ctx, packet);
        self.packets_sent += 1;
        ctx.events
            .schedule(nic_port.free_at, me, EventKind::TxDone(port as u16));
    }

    /// Runs due timers, pulls packets while ports are idle, then arranges a
    /// wake-up for the transport's next deadline.
    fn pull(&mut self, me: ComponentId, ctx: &mut SimContext) {
        let now = ctx.now;
        if self.ports.is_empty() {
            return;
        }
        if self.transport.poll_timeout().is_some_and(|due| due <= now) {
            self.transport.handle_timeout(now);
        }
        let fifo_limit = FIFO_PACKETS_PER_PORT * self.ports.len();
        loop {
            let any_idle = self
                .ports
                .iter()
                .any(|port| port.free_at <= now && port.fifo.is_empty());
            let waiting: usize = self.ports.iter().map(|port| port.fifo.len()).sum();
            if !any_idle || waiting >= fifo_limit {
                break;
            }
            // A port whose queue is full takes nothing more: the transport
            // sends on another (a multi-plane NIC's scheduler).
            let ready = (self.ports.iter().enumerate())
                .filter(|(_, port)| port.fifo.len() < FIFO_PACKETS_PER_PORT)
                .fold(0u64, |mask, (i, _)| mask | 1 << i);
            let ports = PortsReady::new(self.ports.len() as u8, ready).unwrap_or(PortsReady::ALL);
            let packet = ctx.pool.alloc();
            let slot = ctx.pool.get_mut(packet);
            slot.src = self.id;
            if !self.transport.poll_transmit_on(now, slot, ports) {
                ctx.pool.release(packet);
                break;
            }
            slot.wire_bytes = slot.wire_bytes.max(MIN_WIRE_BYTES);
            let port = usize::from(slot.src_port) % self.ports.len();
            ctx.pool.written(packet);
            if self.ports[port].free_at <= now && self.ports[port].fifo.is_empty() {
                self.start_port(me, ctx, port, packet);
            } else {
                self.ports[port].fifo.push_back(packet);
            }
        }
        let Some(deadline) = self.transport.poll_timeout() else {
            return;
        };
        // With every port busy, a packet that is already due, or a deadline
        // at or after the next port completion, is served by the TxDone
        // event, which pulls again.
        let any_port_idle = self.ports.iter().any(|port| port.free_at <= now);
        let next_port_free = self.ports.iter().map(|port| port.free_at).min();
        if !any_port_idle
            && (deadline <= now || next_port_free.is_some_and(|free| deadline >= free))
        {
            return;
        }
        // Never spin at the current instant on a transport that keeps
        // reporting a past deadline.
        let deadline = deadline.max(now + PS_PER_NS);
        if self.wake_at.is_none_or(|wake| deadline < wake) {
            self.wake_at = Some(deadline);
            ctx.events.schedule(deadline, me, EventKind::Wake);
        }
    }
}
