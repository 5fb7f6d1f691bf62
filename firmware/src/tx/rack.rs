//! RACK, the sender's time-based loss detection: which transmissions it
//! judges now (every path, or the head of the line only) and the judging
//! (spec §5.5 step 6).

use crate::counters::Stats;

use super::records::RecState;
use super::{FateOrigin, Tx};

impl Tx {
    /// While more than a little data waits to be sent, RACK judges one
    /// transmission only (spec §5.5 step 6): the one holding up the peer's
    /// cumulative point (its record in flight, and the oldest transmission
    /// RACK has not reported on its path), if it was sent before the sender
    /// last ran out of data. (With much data queued every path keeps
    /// carrying packets and a loss shows as a SACK gap, whereas a lost ACK
    /// would make a timer declare delivered packets lost.) Returns that path
    /// and the transmission's send time (low 32 bits).
    pub(super) fn rack_head(&self) -> Option<(usize, u64)> {
        let cum = self.psns.peer_conn_cum;
        let rec = self.psns.get(cum)?;
        if rec.state != RecState::InFlight {
            return None;
        }
        let path = usize::from(rec.path);
        let (psn, sent_ns) = self.paths.get(path)?.rack_head()?;
        let drained = self.timers.drained_sent_ns;
        let before_drain = drained != u64::MAX && (drained as u32).wrapping_sub(sent_ns) < 1 << 31;
        (psn == cum && before_drain).then_some((path, u64::from(sent_ns)))
    }

    /// True when RACK judges every path (spec §5.5 step 6): nothing waits
    /// to be sent, or at most four packets per path ([`Tx::little_queued`])
    /// while no path is marked (a varying queue would make reordering look
    /// like loss).
    pub(super) fn rack_every_path(&self) -> bool {
        !self.has_data() || (self.little_queued() && !self.paths.any_marked())
    }

    /// True when what waits to be cut is at most four packets per path: the
    /// sender is near the end of what it has to send (a ring collective's
    /// next step or two, not a stream of large messages).
    fn little_queued(&self) -> bool {
        let limit = 4 * u64::from(self.mtu) * self.paths.len() as u64;
        !self.store.unsent_exceeds(limit, self.mtu)
    }

    /// Which transmissions RACK judges now: on every path when
    /// [`Tx::rack_every_path`] (`tail_until` `None`); else the head of the
    /// line ([`Tx::rack_head`]) on its path only (`tail_until` its send
    /// time).
    fn rack_scope(&self) -> impl Iterator<Item = (usize, Option<u64>)> + use<> {
        let head = if self.rack_every_path() {
            None
        } else {
            Some(self.rack_head().map(|(path, sent)| (path, Some(sent))))
        };
        let all = head
            .is_none()
            .then(|| self.paths.timed().map(|i| (i, None)));
        head.flatten().into_iter().chain(all.into_iter().flatten())
    }

    /// Time-based loss detection (see [`crate::path::TxPath::on_rack_until`]) on what
    /// [`Tx::rack_scope`] names.
    pub(super) fn rack(&mut self, now: u64, stats: &mut Stats) {
        let delivered = self.timers.delivered_sent_ns;
        let mut fates = core::mem::take(&mut self.fate_buf);
        for (i, tail) in self.rack_scope() {
            if self.paths[i]
                .rack_deadline(delivered, self.timers.newest_sent_ns, tail)
                .is_none_or(|d| d > now)
            {
                continue;
            }
            fates.clear();
            self.paths[i].on_rack_until(now, delivered, tail, |f| fates.push(f));
            self.paths.refresh(i);
            self.apply_fates(i, FateOrigin::Rack, &fates, stats);
        }
        self.fate_buf = fates;
    }
}
