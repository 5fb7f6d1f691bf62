//! What comes back to the sender: ACKs (their connection part, and with the
//! paths' table entries in the engine their path part), NACKs, and the NIC's
//! TX table operations and results (spec §5.5, §5.11).

use metaroce_proto::{AckRepr, NackReason, NackRepr};

use crate::counters::Stats;
use crate::datapath::TableDone;
use crate::path::{PathView, SlotFate, TableOp};
use crate::verbs::WcStatus;

use super::records::RecState;
use super::{FateOrigin, Tx};

impl Tx {
    /// Applies an ACK for `path`. Returns `Some(true)` when anything
    /// progressed, `None` when the ACK is refused as impossible (spec §5.5
    /// step 0: it reports path PSNs never sent, a `conn_cum` beyond what was
    /// sent, or more new CE marks than new packets): then nothing changes.
    /// With the paths' table entries in the NIC, its ACK receiver applies
    /// the path part ([`Tx::on_table_result`]) and this the connection part.
    pub fn on_ack(
        &mut self,
        now: u64,
        path: u16,
        ack: &AckRepr,
        stats: &mut Stats,
    ) -> Option<bool> {
        let i = usize::from(path);
        if i >= self.paths.len() {
            return Some(false);
        }
        // Connection part: the peer cannot have accepted what was never sent.
        let advance = ack.conn_cum.wrapping_sub(self.psns.peer_conn_cum);
        let outstanding = self.psns.next_psn.wrapping_sub(self.psns.peer_conn_cum);
        if advance > outstanding && advance < 1 << 31 {
            return None;
        }
        // Newest ACK of the path: its receive count has not gone back.
        let rx_step = ack.rx_count.wrapping_sub(self.ack_rx_count[i]);
        let newest = rx_step < 1 << 31;
        let mut progressed = false;
        // Path part: every PSN reported received must have been sent. (A
        // NIC's ACK receiver has applied the path part already; refusing the
        // ACK here still keeps its connection part out.)
        // CE marks counted since the newest ACK cannot outnumber the
        // packets received since; an older ACK's count is ignored. (With
        // the table in the NIC, its ACK receiver has made the same checks
        // against the table itself; the view here may lag it, so only
        // the first, which a lag cannot make fail, is repeated.)
        let v = *self.paths[i].view();
        let step = if self.hardware_table {
            1 << 31
        } else {
            rx_step
        };
        let ce_count = v.ack_evidence(ack.path_cum, &ack.sack, ack.ce_count, step)?;
        // The path's first RTT sample may come from any newest ACK reporting
        // new arrivals: with a round trip longer than the probes' longest
        // backoff, every transmission has been given up before its ACK
        // comes back, and without that sample the path would never leave
        // quarantine (spec §5.5 step 2).
        let first_sample = v.rtt.srtt().is_none() && newest && rx_step > 0;
        if newest && rx_step > 0 {
            // The peer received something new: the connection is not silent.
            self.timers.heard_ns = now;
        }
        if !self.hardware_table {
            let mut fates = core::mem::take(&mut self.fate_buf);
            fates.clear();
            let p = &mut self.paths[i];
            let (acked, bytes) = p.on_ack(ack.path_cum, &ack.sack, |f| fates.push(f));
            // An RTT sample only from an ACK that acknowledged something new
            // (a data packet, or the PROBE that ends a quarantine): an older
            // or repeated ACK echoes a timestamp whose packet was already
            // counted; and the first sample.
            let new =
                acked > 0 || (v.quarantined && !self.paths[i].view().quarantined) || first_sample;
            let rtt = PathView::ack_rtt(now, ack.echo_ts, new);
            let rto = self.rto(i);
            self.paths[i].on_ack_feedback(now, rtt, ce_count, acked, bytes, rto);
            progressed = self.apply_fates(i, FateOrigin::Ack, &fates, stats);
            self.fate_buf = fates;
            self.paths.repath_if_wanted(now, i, &self.cfg, stats);
            self.paths.refresh(i);
        } else if v.quarantined && first_sample {
            // The NIC's table samples RTTs only from what it acknowledges:
            // the first sample is given to it as `Feedback`
            // (its CE count this ACK's, which the table has applied: no
            // new marks).
            if let Some(rtt) = PathView::ack_rtt(now, ack.echo_ts, true) {
                let rto = self.rto(i);
                self.paths[i].on_ack_feedback(now, Some(rtt), ack.ce_count, 0, 0, rto);
            }
        }
        self.timers.delivered_sent_ns = self.timers.delivered_sent_ns.max(ack.echo_ts);
        self.rack(now, stats);
        if newest {
            // Credit and rate hint only from the newest ACK of the path, so
            // a reordered or replayed one cannot move them back.
            self.ack_rx_count[i] = ack.rx_count;
            self.pacing.on_ack(ack.credit, ack.rate_hint);
        }
        if advance > 0 && advance <= outstanding {
            self.psns.peer_conn_cum = ack.conn_cum;
            self.retire_accepted();
            progressed = true;
        }
        if progressed {
            self.progressed(now);
        }
        Some(progressed)
    }

    /// Something was delivered: the connection timer starts over.
    fn progressed(&mut self, now: u64) {
        let outstanding = self.psns.next_psn != self.psns.peer_conn_cum || self.has_data();
        self.timers
            .progressed(now, self.policy.timeout_ns, outstanding);
    }

    /// Drops records the receiver accepted and marks fully accepted messages done.
    fn retire_accepted(&mut self) {
        self.psns.retire_accepted();
        self.store.retire_accepted(self.psns.peer_conn_cum);
    }

    /// Applies a NACK.
    pub fn on_nack(&mut self, now: u64, nack: &NackRepr) {
        let Some(rec) = self.psns.get(nack.conn_psn).copied() else {
            return;
        };
        match nack.reason {
            NackReason::ReceiverNotReady => {
                if self.store.rnr_exceeded(rec.msg, self.policy.rnr_retry) {
                    self.fatal = Some(WcStatus::RnrRetryExcErr);
                    return;
                }
                if let Some(r) = self.psns.get_mut(nack.conn_psn)
                    && r.state != RecState::RnrWait
                {
                    r.state = RecState::RnrWait;
                    let due = now + u64::from(nack.detail.max(1)) * 1000;
                    self.loss.rnr_wait.push_back((due, nack.conn_psn));
                }
            }
            NackReason::RemoteAccess
            | NackReason::InvalidRequest
            | NackReason::RemoteOperational => {
                let status = match nack.reason {
                    NackReason::RemoteAccess => WcStatus::RemAccessErr,
                    NackReason::InvalidRequest => WcStatus::RemInvReqErr,
                    _ => WcStatus::RemOpErr,
                };
                self.store.fail(rec.msg, status);
                self.fatal = Some(status);
            }
        }
    }

    /// The next operation for the NIC's TX table, and its path.
    pub fn poll_table_op(&mut self) -> Option<(u16, TableOp)> {
        let (i, op) = self
            .paths
            .iter_mut()
            .enumerate()
            .find_map(|(i, p)| p.poll_op().map(|op| (i, op)))?;
        self.paths.refresh(i);
        Some((i as u16, op))
    }

    /// The NIC's TX table finished `done` on `path`: `fates` are the
    /// transmissions it resolved, in order; `view` is the entry read back
    /// after it. Returns false when the result is not what the engine
    /// expects of its table (a `Send` given another path PSN).
    pub fn on_table_result(
        &mut self,
        now: u64,
        path: u16,
        done: &TableDone,
        fates: &[SlotFate],
        view: PathView,
        stats: &mut Stats,
    ) -> bool {
        let i = usize::from(path);
        if i >= self.paths.len() {
            return false;
        }
        match *done {
            TableDone::AckApplied { pkts, bytes } => {
                let rto = self.rto(i);
                self.paths[i].on_ack_applied(now, pkts, bytes, fates, view, rto);
                if self.apply_fates(i, FateOrigin::Ack, fates, stats) {
                    self.progressed(now);
                }
                self.paths.repath_if_wanted(now, i, &self.cfg, stats);
            }
            TableDone::Op(TableOp::Lose { .. }, _) => {
                self.paths[i].on_lose_applied(now, fates, view);
                self.apply_fates(i, FateOrigin::Rack, fates, stats);
            }
            TableDone::Op(TableOp::Timeout { .. }, _) => {
                self.paths[i].set_view(view);
                self.apply_fates(i, FateOrigin::Timeout, fates, stats);
            }
            TableDone::Op(TableOp::Send { .. }, out) => {
                // The table gives out path PSNs in order, as the firmware did.
                let expected = self.paths[i].view().next_psn;
                self.paths[i].set_view(view);
                self.paths.refresh(i);
                return out.ok && out.psn == expected;
            }
            TableDone::Op(..) => self.paths[i].set_view(view),
        }
        self.paths.refresh(i);
        true
    }
}
