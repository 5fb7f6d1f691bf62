//! Read-only views for the application, the backends and tests: events, counters, QP and path state.

use alloc::vec::Vec;

use super::{Event, Nic};
use crate::counters::{Drops, Stats};
use crate::mr::MemoryRegion;
use crate::path::PathStats;
use crate::qp::Qp;
use crate::verbs::{QpState, RecvWr, RemoteEnd, Sge};

impl Nic {
    /// Next application event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.shared.events.pop_front()
    }

    /// Drop counters.
    pub fn drops(&self) -> &Drops {
        &self.shared.drops
    }

    /// The drop counters, for a hardware data path to count the packets its RTL
    /// refused before the engine saw them (verdict events that name a reason).
    pub fn drops_mut(&mut self) -> &mut Drops {
        &mut self.shared.drops
    }

    /// Transport counters.
    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// Per-path statistics of a QP.
    pub fn path_stats(&self, qpn: u32) -> Option<Vec<PathStats>> {
        self.qps.get(&qpn).map(|q| q.path_stats().collect())
    }

    /// Hardware data path: every QP's number (not the lingering ones), for a driver
    /// that mirrors them in the RTL's QP table.
    pub fn qpns(&self) -> impl Iterator<Item = u32> + '_ {
        self.qps.keys().copied()
    }

    /// Hardware data path: every registered memory region, for a driver that mirrors
    /// them in the RTL's MR table and maps them for the device.
    pub fn memory_regions(&self) -> impl Iterator<Item = &MemoryRegion> + '_ {
        self.shared.mrs.iter()
    }

    /// Hardware data path: a QP's state, protection domain, stream count
    /// and peer, as the RTL's QP table needs them.
    pub fn qp_entry(&self, qpn: u32) -> Option<(QpState, u32, u16, Option<RemoteEnd>)> {
        self.qps
            .get(&qpn)
            .map(|q| (q.state, q.pd, q.cfg().streams, q.remote))
    }

    /// Hardware data path: the receives posted on a QP's stream and not yet
    /// consumed, oldest first, with the receive index of the first (the
    /// RTL's receive ring holds the oldest of them).
    pub fn posted_receives(
        &self,
        qpn: u32,
        stream: u16,
    ) -> Option<(u32, impl Iterator<Item = &RecvWr> + '_)> {
        let s = self.qps.get(&qpn)?.rx_stream(stream)?;
        Some((s.recv_base, s.recvs.iter()))
    }

    /// Hardware data path: a stream's MSN head (its oldest message not yet
    /// retired), which bounds the MSNs the RTL accepts (spec §6.5).
    pub fn msn_head(&self, qpn: u32, stream: u16) -> Option<u32> {
        let s = self.qps.get(&qpn)?.rx_stream(stream)?;
        Some(s.msn_head())
    }

    /// Hardware data path: the READs and atomics a QP has sent and not
    /// completed, as (stream, MSN, local SGE the response goes to: its one
    /// element, whether it is an atomic), for the RTL's READ table: at most
    /// the QP's `max_rd_atomic`.
    pub fn outstanding_reads(&self, qpn: u32) -> impl Iterator<Item = (u16, u32, Sge, bool)> + '_ {
        self.qps
            .get(&qpn)
            .into_iter()
            .flat_map(Qp::outstanding_reads)
    }

    /// Bytes of sender state a QP holds for its packets in flight.
    pub fn qp_inflight_state_bytes(&self, qpn: u32) -> Option<usize> {
        self.qps.get(&qpn).map(Qp::inflight_state_bytes)
    }

    /// The next conn PSN QP `qpn` expects to receive (its cumulative
    /// acceptance point), for tests.
    pub fn debug_rx_conn_cum(&self, qpn: u32) -> Option<u32> {
        self.qps.get(&qpn).map(Qp::accepted_psn)
    }
}
