//! Timers: the next deadline, firing due timers, and retiring lingering QPs.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use super::Nic;
use crate::memory::Memory;
use crate::qp::Qp;

/// The engine's timer index, so that neither [`Nic::poll_timeout`] nor
/// [`Nic::handle_timeout`] looks at a QP whose timers did not change.
///
/// Every live QP whose send side runs (`Qp::sends`) with a pending timer is
/// filed once, under the earliest of its deadlines
/// ([`crate::tx::Tx::next_deadline`]: path RTOs, probes, RACK, the
/// connection timeout, RNR waits, pacing), and re-filed ([`Timers::rearm`])
/// after every call that touched it; lingering QPs are filed under the time
/// they go. Entries sort by (deadline, QPN).
#[derive(Default)]
pub(super) struct Timers {
    /// (deadline, QPN) of every live QP with a pending timer.
    live: BTreeSet<(u64, u32)>,
    /// (until, QPN) of every lingering QP whose clock runs.
    linger: BTreeSet<(u64, u32)>,
    /// Lingering QPs whose clock has not started (destroyed since the engine
    /// last saw the time).
    linger_unclocked: Vec<u32>,
    /// The QPs due in a `handle_timeout` (kept to reuse its allocation).
    due: Vec<u32>,
    /// Work done on timers (see [`Nic::timer_work`]).
    work: u64,
}

impl Timers {
    /// Files `qp` under its earliest deadline (none unless its send side runs),
    /// after something may have changed it.
    pub(super) fn rearm(&mut self, qp: &mut Qp) {
        let due = if qp.sends() {
            qp.next_deadline(&mut self.work)
        } else {
            None
        };
        if due != qp.timer_due {
            if let Some(old) = qp.timer_due {
                self.live.remove(&(old, qp.qpn));
            }
            if let Some(new) = due {
                self.live.insert((new, qp.qpn));
            }
            qp.timer_due = due;
        }
    }

    /// Takes `qp` (being destroyed) out of the index.
    pub(super) fn unfile(&mut self, qp: &mut Qp) {
        if let Some(due) = qp.timer_due.take() {
            self.live.remove(&(due, qp.qpn));
        }
    }

    /// Files a QP that starts to linger; its clock starts when the engine next
    /// sees the time ([`Nic::clock_lingering`]).
    pub(super) fn start_lingering(&mut self, qpn: u32) {
        self.linger_unclocked.push(qpn);
    }
}

impl Nic {
    /// Starts the linger clock of QPs destroyed since the engine last saw the time.
    pub(super) fn clock_lingering(&mut self, now: u64) {
        for qpn in self.timers.linger_unclocked.drain(..) {
            if let Some(l) = self.lingering.get_mut(&qpn) {
                let until = *l.until.get_or_insert(now.saturating_add(l.linger_ns));
                self.timers.linger.insert((until, qpn));
            }
        }
    }

    /// When [`Nic::handle_timeout`] should next be called. It reads the
    /// earliest entry of the engine's timer index: its cost does not depend
    /// on how many QPs or paths there are.
    pub fn poll_timeout(&self) -> Option<u64> {
        let live = self.timers.live.first().map(|&(due, _)| due);
        // A lingering QP whose clock has not started is due at once (to start it).
        let lingering = if self.timers.linger_unclocked.is_empty() {
            self.timers.linger.first().map(|&(until, _)| until)
        } else {
            Some(0)
        };
        let earliest = live.into_iter().chain(lingering).min();
        debug_assert_eq!(earliest, self.scan_timeout(), "timer index out of date");
        earliest
    }

    /// What [`Nic::poll_timeout`] must say, found by looking at every QP and
    /// every path: debug builds check the timer index against it.
    fn scan_timeout(&self) -> Option<u64> {
        let mut work = 0;
        let live = self
            .qps
            .values()
            .filter(|q| q.sends())
            .filter_map(|q| q.next_deadline(&mut work))
            .min();
        let lingering = self.lingering.values().map(|l| l.until.unwrap_or(0)).min();
        live.into_iter().chain(lingering).min()
    }

    /// Fires every timer due at `now`: takes the due entries off the timer
    /// index and fires the QPs in QPN order (a scan's order, which decides
    /// the order of their events and transmissions), each re-filed after.
    pub fn handle_timeout<M: Memory>(&mut self, now: u64, mem: &mut M) {
        self.clock_lingering(now);
        while let Some(&(until, qpn)) = self.timers.linger.first()
            && until <= now
        {
            self.timers.linger.pop_first();
            self.timers.work += 1;
            self.lingering.remove(&qpn);
        }
        let mut due = core::mem::take(&mut self.timers.due);
        due.clear();
        while let Some(&(deadline, qpn)) = self.timers.live.first()
            && deadline <= now
        {
            self.timers.live.pop_first();
            self.timers.work += 1;
            due.push(qpn);
        }
        due.sort_unstable();
        debug_assert!(
            {
                let mut work = 0;
                self.qps
                    .values()
                    .filter(|q| q.sends() && q.next_deadline(&mut work).is_some_and(|d| d <= now))
                    .map(|q| q.qpn)
                    .eq(due.iter().copied())
            },
            "timer index out of date"
        );
        for &qpn in &due {
            let qp = self.qps.get_mut(&qpn).expect("the index holds live QPs");
            qp.timer_due = None;
            let mut ctx = self.shared.ctx(now, &mut *mem, self.cfg.mtu);
            qp.on_timeout(&mut ctx);
            Self::touched(&mut self.ready, &mut self.timers, qp);
        }
        self.timers.due = due;
    }

    /// Work the engine has spent on its timers so far: every evaluation of a
    /// QP's deadlines counts one plus the QP's paths, every timer taken off
    /// the index when due counts one. It grows with the QPs that change or
    /// fire, not with the QPs and paths that exist (the engine's tests check
    /// that idle QPs add nothing).
    pub fn timer_work(&self) -> u64 {
        self.timers.work
    }
}
