//! Timers: the next deadline, firing due timers, and retiring lingering QPs.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::Nic;
use crate::memory::Memory;
use crate::qp::Qp;

/// The engine's timer index, so that neither [`Nic::poll_timeout`] nor
/// [`Nic::handle_timeout`] looks at a QP whose timers did not change.
///
/// Every live QP whose send side runs (`Qp::sends`) with a pending timer is
/// filed once, under the earliest of its deadlines
/// ([`crate::tx::Tx::next_deadline`]: path RTOs, probes, RACK, the
/// connection timeout, RNR waits, pacing); lingering QPs are filed under the
/// time they go. Entries sort by (deadline, QPN).
///
/// Re-filing is lazy: a call that touched a QP only marks it
/// ([`Timers::mark`]), and the marked QPs are re-filed once
/// ([`Timers::refile`]) when the index is next read, so a QP that an arrival,
/// then several transmissions touch in one turn has its deadlines evaluated
/// once. Reading the index (`poll_timeout` takes `&self`) re-files through
/// interior mutability: `Cell`s in the QP, `RefCell`s here.
#[derive(Default)]
pub(super) struct Timers {
    /// (deadline, QPN) of every live QP with a pending timer (as of its last
    /// re-filing).
    live: RefCell<BTreeSet<(u64, u32)>>,
    /// QPs marked since the last re-filing (`Qp::timer_marked` set), in the
    /// order they were marked; a QPN destroyed meanwhile is skipped.
    marked: RefCell<Vec<u32>>,
    /// (until, QPN) of every lingering QP whose clock runs.
    linger: BTreeSet<(u64, u32)>,
    /// Lingering QPs whose clock has not started (destroyed since the engine
    /// last saw the time).
    linger_unclocked: Vec<u32>,
    /// The QPs due in a `handle_timeout` (kept to reuse its allocation).
    due: Vec<u32>,
    /// Work done on timers (see [`Nic::timer_work`]).
    work: Cell<u64>,
}

impl Timers {
    /// Notes that something may have changed `qp`'s deadlines: it is re-filed
    /// when the index is next read.
    pub(super) fn mark(&mut self, qp: &mut Qp) {
        let marked = qp.timer_marked.get_mut();
        if !*marked {
            *marked = true;
            self.marked.get_mut().push(qp.qpn);
        }
    }

    /// Re-files every marked QP of `qps` under its earliest deadline (none
    /// unless its send side runs).
    pub(super) fn refile(&self, qps: &BTreeMap<u32, Qp>) {
        let mut marked = self.marked.borrow_mut();
        if marked.is_empty() {
            return;
        }
        let mut live = self.live.borrow_mut();
        let mut work = self.work.get();
        for qpn in marked.drain(..) {
            let Some(qp) = qps.get(&qpn).filter(|q| q.timer_marked.replace(false)) else {
                continue;
            };
            let due = if qp.sends() {
                qp.next_deadline(&mut work)
            } else {
                None
            };
            let old = qp.timer_due.replace(due);
            if due != old {
                if let Some(old) = old {
                    live.remove(&(old, qpn));
                }
                if let Some(new) = due {
                    live.insert((new, qpn));
                }
            }
        }
        self.work.set(work);
    }

    /// Takes `qp` (being destroyed) out of the index.
    pub(super) fn unfile(&mut self, qp: &mut Qp) {
        if let Some(due) = qp.timer_due.get_mut().take() {
            self.live.get_mut().remove(&(due, qp.qpn));
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

    /// When [`Nic::handle_timeout`] should next be called. It re-files the
    /// QPs changed since the index was last read, then reads the earliest
    /// entry of the engine's timer index: beyond the changed QPs, its cost
    /// does not depend on how many QPs or paths there are.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers.refile(&self.qps);
        let live = self.timers.live.borrow().first().map(|&(due, _)| due);
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
    /// index (after re-filing the QPs changed since it was last read) and
    /// fires the QPs in QPN order (a scan's order, which decides the order
    /// of their events and transmissions), each marked for re-filing after.
    pub fn handle_timeout<M: Memory>(&mut self, now: u64, mem: &mut M) {
        self.clock_lingering(now);
        self.timers.refile(&self.qps);
        while let Some(&(until, qpn)) = self.timers.linger.first()
            && until <= now
        {
            self.timers.linger.pop_first();
            *self.timers.work.get_mut() += 1;
            self.lingering.remove(&qpn);
        }
        let mut due = core::mem::take(&mut self.timers.due);
        due.clear();
        let live = self.timers.live.get_mut();
        while let Some(&(deadline, qpn)) = live.first()
            && deadline <= now
        {
            live.pop_first();
            *self.timers.work.get_mut() += 1;
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
            *qp.timer_due.get_mut() = None;
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
        self.timers.work.get()
    }
}
