//! The firmware's receive-ring and MSN-head work during a run of the
//! receive bench.

use std::collections::VecDeque;

use metaroce_firmware::{Event, QpState, WcStatus};

use super::engine::{Action, Engine};
use super::metaroce_hdl_codes::*;
use super::tables::HeadWords;
use super::{Family, PEERS};
use crate::rx_core::Side;
use crate::rx_parser::Frame;
use crate::{Port, Sim, SimError};

/// The firmware's receive-ring work during a run, as a [`Side`]: a second
/// engine (the shadow, set up as the compared one) takes each datagram when
/// the RTL has taken its last beat; the receives it consumed (its receive
/// completions) are retired from the RTL's ring and as many new ones posted
/// (in the shadow through `Nic::post_recv`, in the RTL through the table
/// port), the streams' MSN heads that moved are written, and at
/// `dereg_at` the late receive region is deregistered. The
/// table writes go out after the datagram's verdict event and before the
/// next datagram's first beat (the input is held meanwhile), so every
/// verdict sees exactly the engine's receive queue; the actions are
/// recorded with the index of the datagram they precede, for the compared
/// engine to do at the same point.
pub(super) struct RingMirror<'a> {
    shadow: Engine,
    frames: &'a [Frame],
    ce: &'a [bool],
    dereg_at: usize,
    /// `cfg_we`, `cfg_addr`, `cfg_data`, `m_ev_valid`.
    ports: [Port; 4],
    /// Verdict events seen.
    events: usize,
    /// The writes wait until this many events were seen.
    after: usize,
    writes: VecDeque<(u16, u64)>,
    /// Receives consumed per connection and stream (the shadow's completions).
    consumed: Vec<[u32; RQ_STREAMS]>,
    /// Actions and the datagram index they precede.
    pub(super) schedule: Vec<(usize, Action)>,
    /// The MSN heads written.
    heads: HeadWords,
}

impl<'a> RingMirror<'a> {
    pub(super) fn new(
        sim: &mut Sim,
        frames: &'a [Frame],
        ce: &'a [bool],
        dereg_at: usize,
    ) -> Result<Self, SimError> {
        let shadow = Engine::new(Family::Ipv4);
        Ok(Self {
            heads: HeadWords::new(&shadow),
            shadow,
            frames,
            ce,
            dereg_at,
            ports: [
                sim.port("cfg_we")?,
                sim.port("cfg_addr")?,
                sim.port("cfg_data")?,
                sim.port("m_ev_valid")?,
            ],
            events: 0,
            after: 0,
            writes: VecDeque::new(),
            consumed: vec![[0; RQ_STREAMS]; PEERS.len()],
            schedule: Vec::new(),
        })
    }

    fn act(&mut self, before: usize, a: Action) {
        self.shadow.apply(a);
        self.schedule.push((before, a));
    }
}

impl Side for RingMirror<'_> {
    fn drive(&mut self, sim: &mut Sim) {
        let [we, addr, data, _] = self.ports;
        match self.writes.front() {
            Some(&(a, d)) if self.events >= self.after => {
                sim.set(we, 1);
                sim.set(addr, a.into());
                sim.set(data, d);
                self.writes.pop_front();
            }
            _ => sim.set(we, 0),
        }
    }

    fn observe(&mut self, sim: &mut Sim) {
        if sim.get(self.ports[3]) == 1 {
            self.events += 1;
        }
    }

    fn done(&self) -> bool {
        self.writes.is_empty()
    }

    fn frame_taken(&mut self, j: usize) {
        self.shadow.handle(&self.frames[j], self.ce[j], 0);
        let next = j + 1;
        if next == self.dereg_at {
            self.act(next, Action::Deregister);
            self.writes
                .push_back((cfg_addr(CFG_MR, 3, MR_CTRL).into(), 0));
        }
        for c in 0..self.shadow.conns.len() {
            let qpn = self.shadow.conns[c].qpn;
            let before = (self.consumed[c], self.shadow.posted[c]);
            while let Some(ev) = self.shadow.nics[c].poll_event() {
                if let Event::Completion(w) = ev
                    && w.is_recv
                    && w.qpn == qpn
                    && w.status == WcStatus::Success
                {
                    self.consumed[c][usize::from(w.stream)] += 1;
                }
            }
            if self.shadow.nics[c].qp_state(qpn) != Some(QpState::Rts) {
                continue;
            }
            for s in 0..RQ_STREAMS {
                while self.shadow.posted[c][s] - self.consumed[c][s] < RQ_SLOTS {
                    let idx = self.shadow.posted[c][s];
                    self.act(next, Action::Post(c, s));
                    self.writes.extend(self.shadow.ring_entry(c, s, idx));
                }
                let now = (self.consumed[c][s], self.shadow.posted[c][s]);
                if (before.0[s], before.1[s]) != now {
                    self.writes.push_back(Engine::ring_ctrl(c, s, now.0, now.1));
                }
            }
        }
        // The streams' MSN heads the datagram moved (spec §6.5).
        self.writes.extend(self.heads.changed(&self.shadow));
        if !self.writes.is_empty() {
            self.after = next;
        }
    }

    fn hold_input(&self) -> bool {
        !self.writes.is_empty()
    }
}

/// The firmware's MSN-head writes (spec §6.5) where the bench does not hold
/// the input for them (the Ethernet and `NicCore` inputs), around another
/// [`Side`]: a shadow engine takes each datagram when the RTL has taken
/// its last beat, and the head words that changed go out on the table
/// port once the datagram's verdict event was seen (as the firmware's
/// would: it learns of a completion from the verdict), in the next cycles
/// the inner side leaves it free. They may land a few datagrams late, never
/// early: a head ahead of the RTL's own progress would make it drop a
/// datagram of the message it is completing as one of a completed message.
/// The traffic's MSNs stay far closer to their heads than the window, and
/// its hostile MSNs far beyond it or before it, so no verdict depends on how
/// late.
pub(crate) struct HeadMirror<'a, S> {
    inner: S,
    shadow: Engine,
    frames: &'a [Frame],
    ce: &'a [bool],
    heads: HeadWords,
    /// Table writes, each after this many verdict events.
    writes: VecDeque<(usize, (u16, u64))>,
    /// Verdict events seen.
    events: usize,
    /// `cfg_we`, `cfg_addr`, `cfg_data`, `m_ev_valid`.
    ports: [Port; 4],
}

impl<'a, S: Side> HeadMirror<'a, S> {
    /// Mirrors the heads of an engine set up for `family` around `inner`.
    pub(crate) fn new(
        sim: &mut Sim,
        inner: S,
        family: Family,
        frames: &'a [Frame],
        ce: &'a [bool],
    ) -> Result<Self, SimError> {
        let shadow = Engine::new(family);
        Ok(Self {
            inner,
            heads: HeadWords::new(&shadow),
            shadow,
            frames,
            ce,
            writes: VecDeque::new(),
            events: 0,
            ports: [
                sim.port("cfg_we")?,
                sim.port("cfg_addr")?,
                sim.port("cfg_data")?,
                sim.port("m_ev_valid")?,
            ],
        })
    }

    /// The inner side.
    pub(crate) fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: Side> Side for HeadMirror<'_, S> {
    fn drive(&mut self, sim: &mut Sim) {
        let [we, addr, data, _] = self.ports;
        sim.set(we, 0);
        self.inner.drive(sim);
        if sim.get(we) == 0
            && let Some(&(after, (a, d))) = self.writes.front()
            && self.events >= after
        {
            self.writes.pop_front();
            sim.set(we, 1);
            sim.set(addr, a.into());
            sim.set(data, d);
        }
    }

    fn observe(&mut self, sim: &mut Sim) {
        self.inner.observe(sim);
        if sim.get(self.ports[3]) == 1 {
            self.events += 1;
        }
    }

    fn done(&self) -> bool {
        self.inner.done() && self.writes.is_empty()
    }

    fn frame_taken(&mut self, j: usize) {
        self.inner.frame_taken(j);
        self.shadow.handle(&self.frames[j], self.ce[j], 0);
        let after = j + 1;
        self.writes.extend(
            self.heads
                .changed(&self.shadow)
                .into_iter()
                .map(|w| (after, w)),
        );
    }

    fn hold_input(&self) -> bool {
        self.inner.hold_input()
    }
}
