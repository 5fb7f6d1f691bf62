//! The backend trait: what the Verbs API needs from a NIC implementation.
//!
//! Every backend runs the same transport engine ([`Nic`]) and owns its datapath: the
//! `soft` backend moves datagrams over UDP sockets from a progress thread; an `rtl`
//! backend would move them through the co-simulated pipeline, a `vfio` backend through a
//! board. The Verbs layer only ever asks for exclusive access to the engine and the
//! memory map for a control operation ([`Backend::control`]) and receives the engine's
//! events through an [`EventSink`]; it knows nothing of sockets, simulators or PCI.

use std::net::SocketAddr;
use std::sync::Arc;

use metaroce_firmware::{Event, Nic};

use crate::hostmem::MemoryMap;

/// Exclusive access to a backend's engine and the host memory its datapath may touch.
pub struct Control<'a> {
    /// The transport engine.
    pub nic: &'a mut Nic,
    /// Registered host buffers (add on registration, remove on deregistration).
    pub memory: &'a mut MemoryMap,
}

/// Receives the engine's events (completions, QP errors) from the backend's datapath.
///
/// Called with the backend's engine lock held: implementations must not call back into
/// the backend.
pub trait EventSink: Send + Sync {
    /// One event, in the order the engine produced them.
    fn deliver(&self, event: Event);

    /// The datapath stopped for good on a device error (`why`), after its QPs were
    /// flushed (their completions delivered first). Default: nothing to do.
    fn device_fatal(&self, why: &str) {
        let _ = why;
    }
}

/// Counters of a backend's datapath (not of the engine).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatapathStats {
    /// Datagrams handed to the wire.
    pub tx_datagrams: u64,
    /// Bytes handed to the wire (UDP payload).
    pub tx_bytes: u64,
    /// Datagrams taken from the wire.
    pub rx_datagrams: u64,
    /// Bytes taken from the wire (UDP payload).
    pub rx_bytes: u64,
    /// Datagrams received with the ECN CE mark.
    pub rx_ce: u64,
    /// Datagrams the wire refused to send (dropped; the engine retransmits them).
    pub tx_errors: u64,
    /// Send system calls (`sendmmsg`), a measure of batching.
    pub tx_syscalls: u64,
    /// Receive system calls (`recvmmsg`).
    pub rx_syscalls: u64,
}

/// A NIC implementation the Verbs API runs on.
pub trait Backend: Send + Sync {
    /// Short name (`"soft"`, `"rtl"`, `"vfio"`).
    fn name(&self) -> &'static str;

    /// Where peers reach this NIC: its IP address and UDP destination port.
    fn address(&self) -> SocketAddr;

    /// Runs `op` with exclusive access to the engine and memory map, delivers the events
    /// it caused, and makes the datapath act on what changed (new work, new state).
    fn control(&self, op: &mut dyn FnMut(Control<'_>));

    /// Installs the receiver of the engine's events (replacing any earlier one).
    fn set_event_sink(&self, sink: Arc<dyn EventSink>);

    /// Datapath counters.
    fn datapath_stats(&self) -> DatapathStats;

    /// Stops the datapath (idempotent); control operations still work, nothing moves.
    ///
    /// Before it stops, the datapath sends what the engine still has queued and keeps
    /// answering for destroyed QPs while they linger (see
    /// [`Nic::destroy_qp`](metaroce_firmware::Nic::destroy_qp)), for at most the
    /// engine's `linger_max_ns` (plus a small slack): the call returns when that is
    /// done, so a process that exits right after closing its device still answers its
    /// peer's retransmissions.
    fn shutdown(&self);
}
