//! The sender's deadlines: the earliest of them for the NIC's timer index,
//! and what fires when they pass (RACK, path timeouts, RNR waits, the
//! connection timer; spec §5.7, §5.12).

use crate::counters::Stats;
use crate::verbs::WcStatus;

use super::records::RecState;
use super::{FateOrigin, Tx};

impl Tx {
    /// Earliest timer of the sender. Adds the work it did (one plus the
    /// paths it examined) to `work`, the NIC's timer cost counter.
    pub fn next_deadline(&self, work: &mut u64) -> Option<u64> {
        debug_assert!(self.paths.refreshed(), "a path changed without refresh");
        let fired = self.timers.fired_ns;
        let has_data = self.has_data();
        *work += 1 + u64::from(self.paths.timed_count());
        // One pass over the paths that may have a deadline (this runs
        // whenever the QP changes), with RACK's deadlines where
        // [`Tx::rack_scope`] has them: on every such path, or on the head of
        // the line's only.
        let (delivered, newest) = (self.timers.delivered_sent_ns, self.timers.newest_sent_ns);
        let every = self.rack_every_path();
        let head = if every { None } else { self.rack_head() };
        let mut earliest =
            head.and_then(|(i, sent)| self.paths[i].rack_deadline(delivered, newest, Some(sent)));
        for i in self.paths.timed() {
            let p = &self.paths[i];
            earliest = earlier(earliest, p.timer_deadline(fired));
            if every {
                earliest = earlier(earliest, p.rack_deadline(delivered, newest, None));
            }
        }
        let connection = [
            self.timers.conn_deadline(),
            self.loss.rnr_wait.front().map(|&(due, _)| due),
            self.pacing.deadline(has_data, fired),
        ];
        connection.into_iter().fold(earliest, earlier)
    }

    /// Fires due timers.
    pub fn on_timeout(&mut self, now: u64, stats: &mut Stats) {
        self.timers.fired_ns = now;
        self.rack(now, stats);
        for i in self.paths.timed() {
            let due = self.paths[i].rto_deadline().is_some_and(|d| d <= now);
            if !due {
                continue;
            }
            if let Some(deadline) = self.spared_until(i, now) {
                self.paths[i].spare_expiry(deadline);
                self.paths.want_probe(i);
                self.paths.refresh(i);
                stats.spared_expiries += 1;
                continue;
            }
            let entropy = self.paths.timeout_entropy(i);
            let floor = self.paths.route_floor();
            let mut fates = core::mem::take(&mut self.fate_buf);
            fates.clear();
            self.paths[i].on_timeout(now, entropy, floor, |f| fates.push(f));
            // The timeout moved it.
            self.paths.moved(i);
            self.paths.refresh(i);
            self.apply_fates(i, FateOrigin::Timeout, &fates, stats);
            self.fate_buf = fates;
            stats.quarantines += 1;
        }
        self.loss.release_rnr(now, &mut self.psns);
        if self.timers.conn_due(now) {
            self.timers.conn_backoff += 1;
            if self.timers.conn_backoff > u32::from(self.policy.retry_cnt) {
                self.timers.stop();
                self.fatal = Some(WcStatus::RetryExcErr);
                // The oldest unfinished message is the one that failed; the
                // rest will be flushed.
                let cum = self.psns.peer_conn_cum;
                let failed = self
                    .psns
                    .get(cum)
                    .map(|r| r.msg)
                    .or(self.store.awaiting.front().copied())
                    .or(self.store.to_segment.front().copied());
                if let Some(key) = failed {
                    self.store.fail(key, WcStatus::RetryExcErr);
                }
                return;
            }
            self.timers.conn_rto =
                now + (self.policy.timeout_ns << self.timers.conn_backoff.min(16));
            // Whatever blocks the cumulative point goes again, even if it
            // was acknowledged at the path level (a refused packet whose NACK was lost).
            let cum = self.psns.peer_conn_cum;
            if let Some(r) = self.psns.get_mut(cum)
                && matches!(r.state, RecState::InFlight | RecState::Delivered)
            {
                r.state = RecState::Lost;
                self.loss.retx.push_back(cum);
                stats.conn_timeout_losses += 1;
            }
        }
    }

    /// When path `path`'s RTO expiry at `now` is spared (spec §5.7): the
    /// whole connection is silent — no ACK reporting new arrivals came on
    /// any path for at least half the path's RTO (`quiet`), while another
    /// path has data in flight too — for less than [`SPARED_RTOS`] RTOs, and
    /// the path is Active with room for a PROBE. Every path then lacks its
    /// ACKs at once: a stalled host (a thread waiting for a CPU) or fabric,
    /// which a new route would not cure; a bad route leaves the others'
    /// ACKs coming. Returns the path's next deadline, `now + max(RTO,
    /// quiet)`: the silence doubles before the next look, so a silence
    /// longer than `SPARED_RTOS` RTOs ends in a timeout as before.
    fn spared_until(&self, path: usize, now: u64) -> Option<u64> {
        let quiet = now.saturating_sub(self.timers.heard_ns);
        let rto = self.rto(path);
        let spare = quiet >= rto / 2
            && quiet < SPARED_RTOS * rto
            && self.paths[path].may_spare()
            && (self.paths.iter().enumerate()).any(|(i, p)| i != path && p.inflight_bytes() > 0);
        spare.then(|| now + rto.max(quiet))
    }
}

/// How many of a path's RTOs the connection may stay silent with the
/// path's expiries spared (spec §5.7): at about 1, 2, 4, 8 and 16 RTOs of
/// silence (each spared expiry waits as long as the silence so far); at 32
/// the expiry is a timeout (every route failed, or the peer is gone).
/// Through the soft NIC's relay on a loaded 2-core machine, silences
/// reach tens of milliseconds, 8 RTOs or more.
const SPARED_RTOS: u64 = 32;

/// The earlier of two optional deadlines (`None`: no deadline).
fn earlier(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}
