//! What the sender sends next: probes on quarantined paths, then, as
//! windows and pacing allow, retransmissions, PARITY packets, new packets
//! and tail copies (spec §5.3, §5.6).

use crate::counters::Stats;
use crate::ports::PortsReady;

use super::records::{RecState, Record};
use super::{DataPlan, ProbePlan, Tx};

impl Tx {
    /// Next probe due: on a path whose expiry was spared (spec §5.7), or on
    /// a quarantined path.
    pub fn poll_probe(&mut self, now: u64) -> Option<ProbePlan> {
        let idx = self
            .paths
            .take_wanted_probe()
            .filter(|&i| self.paths[i].may_spare())
            .or_else(|| self.paths.timed().find(|&i| self.paths[i].probe_due(now)))?;
        let rto = self.rto(idx);
        let path_psn = self.paths[idx].on_send_probe(now, rto);
        self.paths.refresh(idx);
        Some(ProbePlan {
            path: idx as u16,
            path_psn,
            entropy: self.paths[idx].entropy(),
        })
    }

    /// True (once) when the last data polls had a packet to send but only on
    /// paths whose port was busy: the QP should be polled again when ports free.
    pub fn take_port_blocked(&mut self) -> bool {
        self.paths.take_port_blocked()
    }

    /// Next data packet (retransmissions first), if windows and pacing allow.
    /// `ports`: the NIC ports that can take a packet now; `line_rate_mbps`:
    /// the NIC's rate over all its ports.
    pub fn poll_data(
        &mut self,
        now: u64,
        stats: &mut Stats,
        ports: PortsReady,
        line_rate_mbps: u32,
    ) -> Option<DataPlan> {
        // Data that waits is covered by the connection timer even while nothing
        // lets it out (every path quarantined with its probes unanswered, or no
        // credit): a peer that vanished then ends in RETRY_EXC_ERR, not in
        // probes forever (spec §5.12).
        if self.has_data() {
            self.timers.arm(now, self.policy.timeout_ns);
        }
        if self.pacing.holds(now, self.cfg.honor_rate_hint) {
            return None;
        }
        if self.paths.inflight() >= self.cfg.conn_window_bytes {
            return None;
        }
        let plan = self
            .poll_retransmission(now, stats, ports)
            .or_else(|| self.poll_parity(now, stats, ports))
            .or_else(|| self.poll_new(now, stats, ports))
            .or_else(|| self.poll_tail_copy(now, stats, ports))?;
        let allowance = self
            .pacing
            .allowance_ns(ports.count(), self.mtu, line_rate_mbps);
        self.pacing.on_send(now, plan.len, allowance);
        Some(plan)
    }

    fn poll_retransmission(
        &mut self,
        now: u64,
        stats: &mut Stats,
        ports: PortsReady,
    ) -> Option<DataPlan> {
        while let Some(&psn) = self.loss.retx.front() {
            let Some(rec) = self.psns.get(psn).copied() else {
                self.loss.retx.pop_front();
                continue;
            };
            if rec.state != RecState::Lost {
                self.loss.retx.pop_front();
                continue;
            }
            let path = self.paths.choose(rec.len, Some(rec.path), ports)?;
            self.loss.retx.pop_front();
            stats.retransmits += 1;
            self.loss.sent_since_resend = 0;
            return Some(self.transmit(now, psn, rec, path, true));
        }
        None
    }

    fn poll_new(&mut self, now: u64, stats: &mut Stats, ports: PortsReady) -> Option<DataPlan> {
        let key = self.next_to_cut()?;
        let window_end = self
            .pacing
            .window_end(self.psns.peer_conn_cum, self.cfg.recv_window);
        if self.psns.next_psn.wrapping_sub(window_end) < 1 << 31 {
            return None; // receive window full
        }
        let len = self.store.next_cut_len(key, self.mtu);
        let path = self.paths.choose(len, None, ports)?;
        let psn = self.psns.next_psn;
        let (offset, len) = self.store.cut(key, psn, self.mtu);
        let rec = Record {
            msg: key,
            offset,
            len,
            path: path as u16,
            state: RecState::InFlight,
        };
        self.psns.push(rec);
        stats.data_sent += 1;
        self.loss.copy_walked = 0;
        self.loss.sent_since_resend = self.loss.sent_since_resend.saturating_add(1);
        self.after_cut(key, psn, offset);
        Some(self.transmit(now, psn, rec, path, false))
    }

    /// A tail copy (spec §5.6), when the sender has nothing else to send:
    /// a second transmission of one of the newest packets still in flight,
    /// on another path, so that the loss of a message's last packets, which
    /// no later packet reveals, costs no detection time when the copy
    /// arrives. Walks down from the newest packet sent, at most
    /// `tail_copies` packets since the last new one; the record then follows
    /// the copy (a loss of the original alone resends nothing).
    fn poll_tail_copy(
        &mut self,
        now: u64,
        stats: &mut Stats,
        ports: PortsReady,
    ) -> Option<DataPlan> {
        if self.has_data() || !self.loss.copies_wanted() {
            return None;
        }
        while self.loss.copy_walked < self.cfg.tail_copies {
            let psn = (self.psns.next_psn).wrapping_sub(1 + u32::from(self.loss.copy_walked));
            let Some(rec) = self.psns.get(psn).copied() else {
                self.loss.copy_walked = self.cfg.tail_copies;
                return None;
            };
            if rec.state != RecState::InFlight {
                self.loss.copy_walked += 1;
                continue;
            }
            let path = self
                .paths
                .choose(rec.len, Some(rec.path), ports)
                .filter(|&p| p != usize::from(rec.path))?;
            self.loss.copy_walked += 1;
            stats.tail_copies += 1;
            return Some(self.transmit(now, psn, rec, path, true));
        }
        None
    }

    fn transmit(
        &mut self,
        now: u64,
        psn: u32,
        rec: Record,
        path: usize,
        retransmission: bool,
    ) -> DataPlan {
        let rto = self.rto(path);
        self.timers.newest_sent_ns = now;
        let path_psn = self.paths[path].on_send_data(psn, rec.len, retransmission, now, rto);
        self.paths.refresh(path);
        if !self.has_data() {
            self.timers.drained_sent_ns = now;
        }

        let entropy = self.paths[path].entropy();
        if let Some(r) = self.psns.get_mut(psn) {
            r.state = RecState::InFlight;
            r.path = path as u16;
        }
        let (first, last) = self.store.packet_ends(rec.msg, rec.offset, self.mtu);
        DataPlan {
            msg: rec.msg,
            conn_psn: psn,
            path: path as u16,
            path_psn,
            entropy,
            offset: rec.offset,
            len: rec.len,
            first,
            last,
            retransmission,
            parity: 0,
        }
    }
}
