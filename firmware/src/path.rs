//! The sender's view of one path: its entropy value, PSN space, in-flight
//! packets, RTT, ECN and loss estimates, window and health.
//!
//! A path's state is split the way the hardware NIC splits it
//! (`docs/hardware.md` §12):
//!
//! - the **table** part ([`PathEntry`]): the ring of transmissions, the PSNs,
//!   bytes in flight, the window, the RTT estimate, the ECN and loss EWMAs,
//!   the counters and the quarantine flag. Only [`TableOp`]s change it. On
//!   the software data path the engine holds it; on the hardware data path
//!   the NIC's TX table does, and the engine sees the [`PathView`] the
//!   firmware reads back from it, with the fate of each transmission coming
//!   back as [`SlotFate`] events.
//! - the **firmware** part ([`TxPath`] itself): the congestion controller,
//!   the send times (RACK), the RTO and probe timers.
//!
//! Both data paths run the same [`TxPath`] code; only where the table lives
//! differs.

use alloc::boxed::Box;
use alloc::collections::VecDeque;

use metaroce_proto::{SACK_BITS, Sack};

use crate::cc::{AckSample, PathController};
use crate::rtt::RttEstimator;

/// One transmission in the table's ring, waiting for its fate.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Connection PSN carried (unused for probes).
    conn_psn: u32,
    /// The firmware's column: the send time (low 32 bits of ns; ages are
    /// taken modulo 2^32), kept here when the engine holds the table. A
    /// NIC's table has no such column: the firmware keeps it beside it.
    sent_ns: u32,
    /// Payload bytes.
    len: u16,
    /// Still unresolved (neither acknowledged nor declared lost).
    live: bool,
    /// A PROBE rather than data.
    probe: bool,
}

/// The firmware's record of one transmission: its send time (low 32 bits,
/// ns) and whether it was a PROBE.
type Sent = (u32, bool);

/// Bytes of path state per transmission in flight, the table holding the
/// send times (the software data path).
pub(crate) const SLOT_BYTES: usize = size_of::<Slot>();

/// Health of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathHealth {
    /// Carrying traffic.
    Active,
    /// Timed out; only probes are sent until one is acknowledged.
    Quarantined {
        /// When the next probe is due.
        probe_due_ns: u64,
        /// Current probe timeout multiplier.
        backoff: u32,
    },
}

/// Per-path statistics, readable by users through the extension API.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathStats {
    /// Current entropy value (UDP source port).
    pub entropy: u16,
    /// Packets sent (first transmissions and retransmissions).
    pub sent: u64,
    /// Retransmissions and tail copies sent on this path (every second
    /// transmission of a connection PSN).
    pub retransmitted: u64,
    /// Packets acknowledged.
    pub acked: u64,
    /// Packets declared lost on this path.
    pub lost: u64,
    /// CE marks echoed for this path.
    pub ce_marked: u64,
    /// Times this path moved to a new entropy value.
    pub repaths: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Smoothed RTT, ns (0 before a sample).
    pub srtt_ns: u64,
    /// Congestion window, bytes.
    pub window: u32,
    /// Bytes in flight.
    pub inflight_bytes: u32,
    /// CE fraction EWMA.
    pub ecn_fraction: f32,
    /// Loss fraction EWMA.
    pub loss_fraction: f32,
    /// True while quarantined.
    pub quarantined: bool,
}

/// What an ACK told about one transmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotFate {
    /// Data acknowledged.
    Acked {
        /// Connection PSN.
        conn_psn: u32,
    },
    /// Data lost (a later PSN on the same path arrived).
    Lost {
        /// Connection PSN.
        conn_psn: u32,
    },
}

/// An operation on a path's table entry: the operations of the NIC's TX
/// table (`docs/hardware.md` §12), which [`PathEntry::apply`] performs in
/// software.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOp {
    /// A fresh entry with this entropy and a window of 0.
    Init {
        /// Entropy value (UDP source port).
        entropy: u16,
    },
    /// A data transmission or a PROBE takes the next path PSN.
    Send {
        /// Connection PSN (data).
        conn_psn: u32,
        /// Payload bytes (data).
        len: u16,
        /// A PROBE rather than data.
        probe: bool,
        /// A retransmission or a tail copy (data).
        retx: bool,
    },
    /// An ACK's cumulative path PSN and SACK bitmap.
    Ack {
        /// Cumulative path PSN.
        path_cum: u32,
        /// Bitmap above it.
        sack: Sack,
    },
    /// An ACK's RTT sample, cumulative CE count and acknowledged packets.
    Feedback {
        /// RTT sample, ns.
        rtt_ns: Option<u64>,
        /// The ACK's cumulative CE count.
        ce_count: u32,
        /// Data packets the ACK acknowledged.
        acked: u32,
    },
    /// The path timed out: every unresolved transmission is lost, the path
    /// is quarantined and moves to `entropy`.
    Timeout {
        /// New entropy value.
        entropy: u16,
    },
    /// The path moves to `entropy` and forgets its route's estimates.
    Move {
        /// New entropy value.
        entropy: u16,
    },
    /// The congestion controller's window.
    Window {
        /// Window, bytes.
        bytes: u32,
    },
    /// The firmware's RACK found this transmission lost.
    Lose {
        /// Path PSN.
        path_psn: u32,
    },
}

/// What a [`TableOp`] returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableOutcome {
    /// `Send`: the ring had room.
    pub ok: bool,
    /// `Send`: the path PSN assigned.
    pub psn: u32,
    /// `Ack`: data packets acknowledged.
    pub pkts: u32,
    /// `Ack`: data bytes acknowledged.
    pub bytes: u32,
}

/// A path's table entry as its read port shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathView {
    /// Entropy value (UDP source port).
    pub entropy: u16,
    /// Next path PSN.
    pub next_psn: u32,
    /// Oldest unresolved path PSN (`next_psn` when none).
    pub una: u32,
    /// Data bytes in flight.
    pub inflight: u32,
    /// Window, bytes.
    pub window: u32,
    /// RTT estimate.
    pub rtt: RttEstimator,
    /// CE fraction EWMA, 16.16.
    pub ecn_ewma: u32,
    /// Loss fraction EWMA, 16.16.
    pub loss_ewma: u32,
    /// Packets acknowledged since the last move.
    pub samples: u32,
    /// Quarantined (only probes go until one is acknowledged).
    pub quarantined: bool,
    /// Probe backoff multiplier while quarantined: 1, 2, 4 or 8 (0 while Active).
    pub backoff: u8,
    /// Packets sent.
    pub sent: u64,
    /// Retransmissions and tail copies sent.
    pub retransmitted: u64,
    /// Packets acknowledged.
    pub acked: u64,
    /// Packets declared lost.
    pub lost: u64,
    /// CE marks echoed.
    pub ce_marked: u64,
    /// Moves to a new entropy value.
    pub repaths: u64,
    /// Timeouts.
    pub timeouts: u64,
}

impl PathView {
    /// True when an Active path can take a packet of `len` bytes now: its
    /// window has room (an empty path always takes one) and the 256-PSN
    /// receive window is not exhausted.
    pub fn can_send(&self, len: u32) -> bool {
        !self.quarantined
            && self.next_psn.wrapping_sub(self.una) < SACK_BITS
            && (self.inflight == 0 || self.inflight + len <= self.window)
    }

    /// Some transmission is unresolved. (The ring's front entry is always
    /// unresolved: resolved ones at the front are popped at once.)
    pub fn unresolved(&self) -> bool {
        self.una != self.next_psn
    }

    /// Spec §5.5 step 0, the path part: `None` when an ACK reporting
    /// `path_cum` and `sack` cannot be true, given `rx_step`, its
    /// `rx_count` minus that of the newest ACK applied on the path: its
    /// highest reported path PSN was never sent (at or after `next_psn`,
    /// not before `una`), or, as the newest ACK (`rx_step` below 2^31), it
    /// counts more new CE marks than new packets. Otherwise the `ce_count`
    /// to apply: the ACK's, or for an ACK that is not the newest the last
    /// one applied (no new marks).
    pub fn ack_evidence(
        &self,
        path_cum: u32,
        sack: &Sack,
        ce_count: u32,
        rx_step: u32,
    ) -> Option<u32> {
        let highest = match sack.highest() {
            Some(b) => path_cum.wrapping_add(1 + b),
            None => path_cum.wrapping_sub(1),
        };
        let ahead = highest.wrapping_sub(self.una);
        if ahead < 1 << 31 && ahead >= self.next_psn.wrapping_sub(self.una) {
            return None;
        }
        // The table's `ce_marked` sums the steps applied from 0: the last
        // `ce_count` applied, modulo 2^32.
        let last_ce = self.ce_marked as u32;
        let ce_step = ce_count.wrapping_sub(last_ce);
        if rx_step >= 1 << 31 {
            Some(last_ce)
        } else if ce_step > rx_step && ce_step < 1 << 31 {
            None
        } else {
            Some(ce_count)
        }
    }

    /// Spec §5.5 step 2: the RTT sample of an ACK echoing `echo_ts` at
    /// `now`, taken only when it acknowledged something new (`new`: a data
    /// packet, or the PROBE that ended a quarantine).
    pub fn ack_rtt(now: u64, echo_ts: u64, new: bool) -> Option<u64> {
        now.checked_sub(echo_ts).filter(|_| echo_ts > 0 && new)
    }

    /// True when the path's CE or loss fraction has stayed above the limits.
    pub fn wants_repath(&self, ecn_limit: f32, loss_limit: f32) -> bool {
        self.samples >= 8
            && (self.ecn_fraction() > ecn_limit || fraction(self.loss_ewma) > loss_limit)
    }

    /// Fraction of acknowledged packets that carried a CE mark (EWMA).
    pub fn ecn_fraction(&self) -> f32 {
        fraction(self.ecn_ewma)
    }

    /// True when the path's CE fraction (EWMA) is above 1/64: its route has
    /// a queue that comes and goes, so its round trips vary, and RACK
    /// gives it the longer wait (spec §5.5 step 6).
    pub fn marked(&self) -> bool {
        self.ecn_ewma > ONE / 64
    }
}

/// A path's table entry held by the engine (the software data path's TX
/// table).
#[derive(Debug, Clone)]
pub struct PathEntry {
    v: PathView,
    slots: VecDeque<Slot>,
    last_ce_count: u32,
}

const ONE: u32 = 1 << 16;

impl PathEntry {
    /// A fresh entry (`TableOp::Init`).
    pub fn new(entropy: u16) -> Self {
        PathEntry {
            v: PathView {
                entropy,
                ..PathView::default()
            },
            slots: VecDeque::new(),
            last_ce_count: 0,
        }
    }

    /// The entry as the read port shows it.
    pub fn view(&self) -> &PathView {
        &self.v
    }

    /// Transmissions in the ring (unresolved ones and resolved ones behind them).
    pub fn slots_len(&self) -> usize {
        self.slots.len()
    }

    /// Performs `op`, reporting each data transmission it resolves to
    /// `fate` in PSN order.
    pub fn apply(&mut self, op: &TableOp, mut fate: impl FnMut(SlotFate)) -> TableOutcome {
        let mut out = TableOutcome {
            ok: true,
            ..TableOutcome::default()
        };
        match *op {
            TableOp::Init { entropy } => *self = PathEntry::new(entropy),
            TableOp::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => {
                self.slots.push_back(Slot {
                    conn_psn,
                    sent_ns: 0,
                    len,
                    live: true,
                    probe,
                });
                out.psn = self.v.next_psn;
                self.v.next_psn = self.v.next_psn.wrapping_add(1);
                if !probe {
                    self.v.inflight += u32::from(len);
                    self.v.sent += 1;
                    self.v.retransmitted += u64::from(retx);
                }
            }
            TableOp::Ack { path_cum, sack } => {
                (out.pkts, out.bytes) = self.ack(path_cum, &sack, fate)
            }
            TableOp::Feedback {
                rtt_ns,
                ce_count,
                acked,
            } => self.feedback(rtt_ns, ce_count, acked),
            TableOp::Timeout { entropy } => {
                for slot in self.slots.iter_mut().filter(|s| s.live) {
                    slot.live = false;
                    if !slot.probe {
                        self.v.inflight -= u32::from(slot.len);
                        self.v.lost += 1;
                        fate(SlotFate::Lost {
                            conn_psn: slot.conn_psn,
                        });
                    }
                }
                self.pop_resolved();
                self.v.timeouts += 1;
                self.v.backoff = if self.v.quarantined {
                    (self.v.backoff * 2).min(8)
                } else {
                    1
                };
                self.v.quarantined = true;
                self.move_to(entropy);
            }
            TableOp::Move { entropy } => self.move_to(entropy),
            TableOp::Window { bytes } => self.v.window = bytes,
            TableOp::Lose { path_psn } => {
                let i = path_psn.wrapping_sub(self.v.una) as usize;
                if let Some(slot) = self.slots.get_mut(i).filter(|s| s.live && !s.probe) {
                    slot.live = false;
                    self.v.inflight -= u32::from(slot.len);
                    self.v.lost += 1;
                    self.v.loss_ewma = ewma(self.v.loss_ewma, ONE);
                    fate(SlotFate::Lost {
                        conn_psn: slot.conn_psn,
                    });
                    self.pop_resolved();
                }
            }
        }
        out
    }

    /// `TableOp::Ack`: returns (acked packets, acked bytes).
    fn ack(&mut self, path_cum: u32, sack: &Sack, mut fate: impl FnMut(SlotFate)) -> (u32, u32) {
        let is_acked = |psn: u32| {
            let d = psn.wrapping_sub(path_cum);
            d >= 1 << 31 || (d >= 1 && sack.get(d - 1))
        };
        let highest = match sack.highest() {
            Some(h) => path_cum.wrapping_add(h + 1),
            None => path_cum.wrapping_sub(1),
        };
        let (mut pkts, mut bytes) = (0, 0);
        let mut probe_acked = false;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let psn = self.v.una.wrapping_add(i as u32);
            if psn.wrapping_sub(highest) < 1 << 31 && psn != highest {
                break; // beyond everything this ACK knows about
            }
            if !slot.live {
                continue;
            }
            if is_acked(psn) {
                slot.live = false;
                if slot.probe {
                    probe_acked = true;
                } else {
                    self.v.inflight -= u32::from(slot.len);
                    pkts += 1;
                    bytes += u32::from(slot.len);
                    fate(SlotFate::Acked {
                        conn_psn: slot.conn_psn,
                    });
                }
            } else if psn != highest {
                // A later PSN on this in-order path arrived: this one is lost.
                slot.live = false;
                if !slot.probe {
                    self.v.inflight -= u32::from(slot.len);
                    self.v.lost += 1;
                    self.v.loss_ewma = ewma(self.v.loss_ewma, ONE);
                    fate(SlotFate::Lost {
                        conn_psn: slot.conn_psn,
                    });
                }
            }
        }
        if probe_acked {
            self.v.quarantined = false;
            self.v.backoff = 0;
        }
        self.v.acked += u64::from(pkts);
        for _ in 0..pkts {
            self.v.loss_ewma = ewma(self.v.loss_ewma, 0);
        }
        self.pop_resolved();
        (pkts, bytes)
    }

    /// `TableOp::Feedback`.
    fn feedback(&mut self, rtt_ns: Option<u64>, ce_count: u32, acked: u32) {
        if let Some(rtt) = rtt_ns {
            self.v.rtt.update(rtt);
        }
        let new_ce = ce_count.wrapping_sub(self.last_ce_count);
        let new_ce = if new_ce < 1 << 31 {
            self.last_ce_count = ce_count;
            new_ce
        } else {
            0
        };
        self.v.ce_marked += u64::from(new_ce);
        if acked > 0 {
            let frac = (u64::from(new_ce.min(acked)) << 16) / u64::from(acked);
            self.v.ecn_ewma = ewma(self.v.ecn_ewma, frac as u32);
            self.v.samples += acked;
        }
    }

    fn move_to(&mut self, entropy: u16) {
        self.v.entropy = entropy;
        self.v.ecn_ewma = 0;
        self.v.loss_ewma = 0;
        self.v.samples = 0;
        self.v.repaths += 1;
    }

    fn pop_resolved(&mut self) {
        while self.slots.front().is_some_and(|s| !s.live) {
            self.slots.pop_front();
            self.v.una = self.v.una.wrapping_add(1);
        }
    }
}

/// Where a path's table entry lives.
enum Table {
    /// In the engine: operations apply at once.
    Soft(PathEntry),
    /// In the NIC (see [`NicTable`]).
    Hard(Box<NicTable>),
}

/// The firmware's side of a path whose table entry is in the NIC:
/// operations queue for the firmware to issue, and their results (and the
/// entry as read back) come back later.
struct NicTable {
    view: PathView,
    ops: VecDeque<TableOp>,
    /// Send time and kind of every transmission from `sent_base` on (the
    /// NIC's table keeps no times).
    sent: VecDeque<Sent>,
    sent_base: u32,
}

/// Sender-side path state: the table entry (or its view) and the firmware's
/// part.
pub struct TxPath {
    table: Table,
    cc: Box<dyn PathController>,
    /// The next path PSN the firmware hands out.
    next_psn: u32,
    /// RACK has reported every transmission before this PSN.
    rack_from: u32,
    /// The table's `ce_marked` (low 32 bits) when the firmware last looked.
    ce_seen: u32,
    /// Send time (low 32 bits) of the oldest data transmission RACK has not
    /// reported, as of the last [`TxPath::refresh_timers`].
    rack_sent_ns: u32,
    /// The path's RACK wait then, ns (at most `u32::MAX − 1`); `NO_RACK`:
    /// no RACK deadline.
    rack_wait_ns: u32,
    /// Bytes in flight as of the last [`TxPath::recount_inflight`].
    counted_inflight: u32,
    probe_due_ns: u64,
    /// The pending RTO deadline, or `NO_DEADLINE`.
    rto_deadline: u64,
}

/// [`TxPath::rto_deadline`] not set.
const NO_DEADLINE: u64 = u64::MAX;

/// [`TxPath::rack_wait_ns`] when the path has no RACK deadline.
const NO_RACK: u32 = u32::MAX;

impl TxPath {
    /// A fresh path using `entropy`, its table entry held by the engine.
    pub fn new(entropy: u16, cc: Box<dyn PathController>) -> Self {
        Self::with_table(Table::Soft(PathEntry::new(entropy)), cc)
    }

    /// A fresh path using `entropy` whose table entry is in the NIC: its
    /// `Init` and `Window` are the first operations of [`TxPath::poll_op`].
    pub fn new_hardware(entropy: u16, cc: Box<dyn PathController>) -> Self {
        let mut ops = VecDeque::new();
        ops.push_back(TableOp::Init { entropy });
        let table = Table::Hard(Box::new(NicTable {
            view: PathView {
                entropy,
                ..PathView::default()
            },
            ops,
            sent: VecDeque::new(),
            sent_base: 0,
        }));
        Self::with_table(table, cc)
    }

    fn with_table(table: Table, cc: Box<dyn PathController>) -> Self {
        let bytes = cc.window();
        let mut p = TxPath {
            table,
            cc,
            next_psn: 0,
            rack_from: 0,
            ce_seen: 0,
            rack_sent_ns: 0,
            rack_wait_ns: NO_RACK,
            counted_inflight: 0,
            probe_due_ns: 0,
            rto_deadline: NO_DEADLINE,
        };
        p.op(TableOp::Window { bytes }, |_| {});
        p
    }

    /// The table entry as the engine last saw it.
    pub fn view(&self) -> &PathView {
        match &self.table {
            Table::Soft(e) => e.view(),
            Table::Hard(t) => &t.view,
        }
    }

    /// Entropy value (UDP source port) in use.
    pub fn entropy(&self) -> u16 {
        self.view().entropy
    }

    /// Health.
    pub fn health(&self) -> PathHealth {
        let v = self.view();
        if v.quarantined {
            PathHealth::Quarantined {
                probe_due_ns: self.probe_due_ns,
                backoff: v.backoff.into(),
            }
        } else {
            PathHealth::Active
        }
    }

    /// Bytes in flight.
    pub fn inflight_bytes(&self) -> u32 {
        self.view().inflight
    }

    /// The path's retransmission timeout.
    pub fn rto(&self, min_ns: u64, initial_ns: u64) -> u64 {
        self.view().rtt.rto(min_ns, initial_ns)
    }

    /// Pending RTO deadline.
    pub fn rto_deadline(&self) -> Option<u64> {
        (self.rto_deadline != NO_DEADLINE).then_some(self.rto_deadline)
    }

    /// The path's timer deadline: its probe while quarantined, if due after
    /// `fired_ns` (the time the sender's timers last fired), else its RTO.
    pub fn timer_deadline(&self, fired_ns: u64) -> Option<u64> {
        if self.view().quarantined && self.probe_due_ns > fired_ns {
            Some(self.probe_due_ns)
        } else {
            self.rto_deadline()
        }
    }

    /// True while the path is quarantined with its probe due by `now_ns`.
    pub fn probe_due(&self, now_ns: u64) -> bool {
        self.view().quarantined && self.probe_due_ns <= now_ns
    }

    /// Re-reads what [`TxPath::rack_deadline`] needs (the oldest unreported
    /// transmission's send time and the RACK wait) after the path changed:
    /// the timer query then reads two fields instead of the slot ring and
    /// the RTT estimate.
    pub fn refresh_timers(&mut self) {
        (self.rack_sent_ns, self.rack_wait_ns) = self.rack_inputs();
    }

    /// The connection PSN and send time (low 32 bits) of the oldest data
    /// transmission RACK has not reported, when the engine holds the table
    /// (a NIC's table keeps no connection PSNs beside the send times).
    pub fn rack_head(&self) -> Option<(u32, u32)> {
        let Table::Soft(e) = &self.table else {
            return None;
        };
        let i = self.rack_start().wrapping_sub(e.v.una);
        let s = e.slots.get(i as usize).filter(|_| i < 1 << 31)?;
        (!s.probe).then_some((s.conn_psn, s.sent_ns))
    }

    /// True when [`TxPath::refresh_timers`] would change nothing, and the
    /// bytes in flight are as counted (checked in debug builds).
    pub fn refreshed(&self) -> bool {
        self.rack_inputs() == (self.rack_sent_ns, self.rack_wait_ns)
            && self.counted_inflight == self.inflight_bytes()
    }

    /// (send time, RACK wait) of the oldest data transmission RACK has not
    /// reported; (0, `NO_RACK`) when there is none or no RTT sample.
    fn rack_inputs(&self) -> (u32, u32) {
        let rack = self
            .sent_at(self.rack_start())
            .filter(|&(_, probe)| !probe)
            .zip(self.rack_wait());
        match rack {
            Some(((sent_ns, _), wait)) => (sent_ns, wait.min(u64::from(NO_RACK - 1)) as u32),
            None => (0, NO_RACK),
        }
    }

    /// True when the path may have a deadline: it is quarantined, or has an
    /// RTO or (as of the last [`TxPath::refresh_timers`]) a RACK deadline.
    pub fn has_timers(&self) -> bool {
        self.view().quarantined || self.rto_deadline != NO_DEADLINE || self.rack_wait_ns != NO_RACK
    }

    /// Bytes in flight now and as last counted: (before, now).
    pub fn recount_inflight(&mut self) -> (u32, u32) {
        let before = self.counted_inflight;
        self.counted_inflight = self.inflight_bytes();
        (before, self.counted_inflight)
    }

    /// True when an Active path can take a packet of `len` bytes now (see
    /// [`PathView::can_send`]).
    pub fn can_send(&self, len: u32) -> bool {
        self.view().can_send(len)
    }

    /// Performs `op` on the table (see [`Table::apply`]).
    fn op(&mut self, op: TableOp, fate: impl FnMut(SlotFate)) -> Option<TableOutcome> {
        let out = self.table.apply(op, fate);
        self.trim_sent();
        out
    }

    /// Writes the controller's window to the table when it changed.
    fn write_window(&mut self) {
        let bytes = self.cc.window();
        if bytes != self.view().window {
            self.op(TableOp::Window { bytes }, |_| {});
        }
    }

    /// Forgets the send times of transmissions a NIC's table has resolved.
    fn trim_sent(&mut self) {
        if let Table::Hard(t) = &mut self.table {
            while t.sent_base != t.view.una && t.sent.pop_front().is_some() {
                t.sent_base = t.sent_base.wrapping_add(1);
            }
        }
    }

    /// A transmission's send time and kind, by path PSN.
    fn sent_at(&self, psn: u32) -> Option<Sent> {
        let (i, t) = match &self.table {
            Table::Soft(e) => {
                let i = psn.wrapping_sub(e.v.una);
                let s = e.slots.get(i as usize).filter(|_| i < 1 << 31)?;
                return Some((s.sent_ns, s.probe));
            }
            Table::Hard(t) => (psn.wrapping_sub(t.sent_base), t),
        };
        t.sent.get(i as usize).filter(|_| i < 1 << 31).copied()
    }

    /// Performs a `Send` of the next path PSN at `now_ns` and returns it.
    fn send(&mut self, op: TableOp, now_ns: u64, rto_ns: u64) -> u32 {
        let psn = self.next_psn;
        self.next_psn = psn.wrapping_add(1);
        let probe = matches!(op, TableOp::Send { probe: true, .. });
        match &mut self.table {
            Table::Soft(e) => {
                let out = e.apply(&op, |_| {});
                debug_assert_eq!(out.psn, psn);
                if let Some(slot) = e.slots.back_mut() {
                    slot.sent_ns = now_ns as u32;
                }
            }
            Table::Hard(t) => {
                t.ops.push_back(op);
                t.sent.push_back((now_ns as u32, probe));
            }
        }
        if self.rto_deadline == NO_DEADLINE {
            self.rto_deadline = now_ns + rto_ns;
        }
        psn
    }

    /// Records a data transmission and returns its path PSN.
    pub fn on_send_data(
        &mut self,
        conn_psn: u32,
        len: u32,
        retransmission: bool,
        now_ns: u64,
        rto_ns: u64,
    ) -> u32 {
        let op = TableOp::Send {
            conn_psn,
            len: len as u16,
            probe: false,
            retx: retransmission,
        };
        self.send(op, now_ns, rto_ns)
    }

    /// Records a probe transmission and returns its path PSN.
    pub fn on_send_probe(&mut self, now_ns: u64, rto_ns: u64) -> u32 {
        let op = TableOp::Send {
            conn_psn: 0,
            len: 0,
            probe: true,
            retx: false,
        };
        let psn = self.send(op, now_ns, rto_ns);
        let v = self.view();
        if v.quarantined {
            self.probe_due_ns = now_ns + rto_ns * u64::from(v.backoff);
        }
        psn
    }

    /// Applies an ACK's cumulative point and SACK bitmap to a table the
    /// engine holds. Reports each resolved data transmission to `fate`;
    /// returns (acked packets, acked bytes). (A NIC's table applies its
    /// ACKs itself: see [`TxPath::on_ack_applied`].)
    pub fn on_ack(
        &mut self,
        path_cum: u32,
        sack: &Sack,
        mut fate: impl FnMut(SlotFate),
    ) -> (u32, u32) {
        if let Table::Hard(_) = self.table {
            return (0, 0);
        }
        let cc = &mut self.cc;
        let op = TableOp::Ack {
            path_cum,
            sack: *sack,
        };
        let out = self.table.apply(op, |f| {
            if let SlotFate::Lost { .. } = f {
                cc.on_loss(0);
            }
            fate(f)
        });
        self.trim_sent();
        let out = out.unwrap_or_default();
        self.write_window();
        (out.pkts, out.bytes)
    }

    /// Feeds an RTT sample, the ACK's cumulative CE count and the congestion
    /// controller; re-arms the RTO.
    pub fn on_ack_feedback(
        &mut self,
        now_ns: u64,
        rtt_ns: Option<u64>,
        ce_count: u32,
        acked: u32,
        bytes: u32,
        rto_ns: u64,
    ) {
        let op = TableOp::Feedback {
            rtt_ns,
            ce_count,
            acked,
        };
        self.op(op, |_| {});
        self.after_feedback(now_ns, acked, bytes, rto_ns, rtt_ns);
    }

    /// A NIC's table applied an ACK (its `Ack` and `Feedback`): `fates` are
    /// the transmissions it resolved, `view` the entry read back after it,
    /// `rto_ns` the path's RTO before it. The firmware's part of
    /// [`TxPath::on_ack`] and [`TxPath::on_ack_feedback`].
    pub fn on_ack_applied(
        &mut self,
        now_ns: u64,
        acked: u32,
        bytes: u32,
        fates: &[SlotFate],
        view: PathView,
        rto_ns: u64,
    ) {
        for f in fates {
            if let SlotFate::Lost { .. } = f {
                self.cc.on_loss(0);
            }
        }
        self.set_view(view);
        self.after_feedback(now_ns, acked, bytes, rto_ns, None);
    }

    /// The congestion controller and the RTO after an ACK's feedback
    /// (`rtt_ns`: its RTT sample, if the engine took one).
    fn after_feedback(
        &mut self,
        now_ns: u64,
        acked: u32,
        bytes: u32,
        rto_ns: u64,
        rtt_ns: Option<u64>,
    ) {
        let v = *self.view();
        let new_ce = (v.ce_marked as u32).wrapping_sub(self.ce_seen);
        self.ce_seen = v.ce_marked as u32;
        if acked > 0 {
            self.cc.on_ack(&AckSample {
                now_ns,
                bytes,
                acked,
                ce: new_ce,
                srtt_ns: v.rtt.srtt().unwrap_or(rto_ns),
                rtt_ns,
            });
            self.rto_deadline = NO_DEADLINE;
        }
        if v.unresolved() {
            if self.rto_deadline == NO_DEADLINE {
                self.rto_deadline = now_ns + rto_ns;
            }
        } else {
            self.rto_deadline = NO_DEADLINE;
        }
        self.write_window();
    }

    /// How long a transmission on this path may stay unacknowledged after a
    /// later-sent packet was delivered elsewhere before it counts as lost:
    /// `max(srtt + 2·rttvar, 9/8·srtt)`, or on a marked path
    /// ([`PathView::marked`]) `max(srtt + 4·rttvar, 5/4·srtt)`; `None`
    /// before the first RTT sample.
    fn rack_wait(&self) -> Option<u64> {
        let v = self.view();
        let srtt = v.rtt.srtt()?;
        Some(if v.marked() {
            v.rtt.rto(0, 0).max(srtt + srtt / 4)
        } else {
            (srtt + 2 * v.rtt.rttvar()).max(srtt + srtt / 8)
        })
    }

    /// How long a transmission sent at `sent_ns` (low 32 bits) may stay
    /// unacknowledged: the RACK wait if a packet sent after it was delivered
    /// (`delivered_sent_ns`), twice that otherwise (a tail loss probe).
    fn rack_allowance(wait: u64, sent_ns: u32, delivered_sent_ns: u64) -> u64 {
        let before = (delivered_sent_ns as u32).wrapping_sub(sent_ns);
        if before > 0 && before < 1 << 31 {
            wait
        } else {
            2 * wait
        }
    }

    /// True when RACK may judge a transmission sent at `sent_ns` (low 32
    /// bits): every one when `tail_until_ns` is `None`, else those sent at
    /// or before it.
    fn rack_may_judge(sent_ns: u32, tail_until_ns: Option<u64>) -> bool {
        tail_until_ns.is_none_or(|t| (t as u32).wrapping_sub(sent_ns) < 1 << 31)
    }

    /// The first path PSN RACK has not reported yet: the table's `una`, or
    /// later while `Lose` operations are on their way to a NIC's table.
    fn rack_start(&self) -> u32 {
        let una = self.view().una;
        if self.rack_from.wrapping_sub(una) < 1 << 31 {
            self.rack_from
        } else {
            una
        }
    }

    /// When the oldest transmission on this path will count as lost by
    /// [`TxPath::on_rack`], given the send time of the newest packet the
    /// peer has acknowledged on any path and of the newest packet sent (as
    /// of the last [`TxPath::refresh_timers`]).
    pub fn rack_deadline(
        &self,
        delivered_sent_ns: u64,
        newest_sent_ns: u64,
        tail_until_ns: Option<u64>,
    ) -> Option<u64> {
        if self.rack_wait_ns == NO_RACK {
            return None;
        }
        let sent_ns = self.rack_sent_ns;
        let sent = newest_sent_ns - u64::from((newest_sent_ns as u32).wrapping_sub(sent_ns));
        if !Self::rack_may_judge(sent_ns, tail_until_ns) {
            return None;
        }
        let allowance =
            Self::rack_allowance(u64::from(self.rack_wait_ns), sent_ns, delivered_sent_ns);
        Some(sent + allowance)
    }

    /// Time-based loss detection across paths (as TCP RACK, with a tail loss
    /// probe), used when the connection has nothing else to send (or on the
    /// head of the line near its end, spec §5.5 step 6): a
    /// transmission is lost once a packet sent after it was delivered on
    /// some path and it has been out longer than this path's round trip
    /// allows, or once it has been out twice that long in any case. It
    /// catches a loss with no later packet on its own path (the tail of a
    /// burst sprayed one packet per path) in one or two RTTs instead of an
    /// RTO; a needless resend costs only otherwise idle link time.
    ///
    /// The firmware decides by time; the table resolves each transmission
    /// it names (`Lose`), so one the table has meanwhile resolved otherwise
    /// is not lost. Reports each loss to `fate` (a NIC's table reports them
    /// later, to [`TxPath::on_lose_applied`]); returns how many there were.
    pub fn on_rack(
        &mut self,
        now_ns: u64,
        delivered_sent_ns: u64,
        fate: impl FnMut(SlotFate),
    ) -> u32 {
        self.on_rack_until(now_ns, delivered_sent_ns, None, fate)
    }

    /// [`TxPath::on_rack`] limited to the transmissions sent at or before
    /// `tail_until_ns` (low 32 bits compared), or all of them when `None`
    /// (spec §5.5 step 6: the head of the line while data waits).
    pub fn on_rack_until(
        &mut self,
        now_ns: u64,
        delivered_sent_ns: u64,
        tail_until_ns: Option<u64>,
        mut fate: impl FnMut(SlotFate),
    ) -> u32 {
        let Some(wait) = self.rack_wait() else {
            return 0;
        };
        let now = now_ns as u32;
        let mut lost = 0;
        let mut psn = self.rack_start();
        // Send times only grow along the ring and allowances never shrink,
        // so the first transmission still in time ends the walk.
        while let Some((sent_ns, probe)) = self.sent_at(psn) {
            let age = u64::from(now.wrapping_sub(sent_ns));
            if !Self::rack_may_judge(sent_ns, tail_until_ns)
                || age < Self::rack_allowance(wait, sent_ns, delivered_sent_ns)
            {
                break;
            }
            self.rack_from = psn.wrapping_add(1);
            if !probe {
                let cc = &mut self.cc;
                self.table.apply(TableOp::Lose { path_psn: psn }, |f| {
                    cc.on_loss(now_ns);
                    lost += 1;
                    fate(f);
                });
                self.trim_sent();
            }
            psn = psn.wrapping_add(1);
        }
        if matches!(self.table, Table::Soft(_)) {
            self.after_lose();
        }
        lost
    }

    /// A NIC's table resolved RACK's `Lose` operations: `fates` are the
    /// transmissions it found still unresolved, `view` the entry after them.
    pub fn on_lose_applied(&mut self, now_ns: u64, fates: &[SlotFate], view: PathView) {
        for _ in fates {
            self.cc.on_loss(now_ns);
        }
        self.set_view(view);
        self.after_lose();
    }

    fn after_lose(&mut self) {
        if !self.view().unresolved() {
            // Nothing left to time out: a stale RTO would quarantine a
            // healthy path.
            self.rto_deadline = NO_DEADLINE;
        }
        self.write_window();
    }

    /// The path timed out: every live data transmission is lost (reported to
    /// `fate`; a NIC's table reports them with its result), the window
    /// resets, the path moves to `entropy` and is quarantined until a probe
    /// is acknowledged.
    pub fn on_timeout(&mut self, now_ns: u64, entropy: u16, fate: impl FnMut(SlotFate)) {
        self.op(TableOp::Timeout { entropy }, fate);
        self.rack_from = self.next_psn;
        self.cc.on_timeout(now_ns);
        self.probe_due_ns = now_ns;
        self.rto_deadline = NO_DEADLINE;
        self.write_window();
    }

    /// True when the path's CE or loss fraction has stayed above the limits.
    pub fn wants_repath(&self, ecn_limit: f32, loss_limit: f32) -> bool {
        self.view().wants_repath(ecn_limit, loss_limit)
    }

    /// True when every transmission the firmware handed a path PSN is
    /// resolved (nothing sent on the path is still on its way).
    pub fn drained(&self) -> bool {
        self.view().una == self.next_psn
    }

    /// Moves the path to a new entropy value (a new route) and forgets its
    /// route-specific estimates.
    pub fn move_to(&mut self, entropy: u16) {
        self.op(TableOp::Move { entropy }, |_| {});
    }

    /// Snapshot of the statistics.
    pub fn stats(&self) -> PathStats {
        let v = self.view();
        PathStats {
            entropy: v.entropy,
            sent: v.sent,
            retransmitted: v.retransmitted,
            acked: v.acked,
            lost: v.lost,
            ce_marked: v.ce_marked,
            repaths: v.repaths,
            timeouts: v.timeouts,
            srtt_ns: v.rtt.srtt().unwrap_or(0),
            window: self.cc.window(),
            inflight_bytes: v.inflight,
            ecn_fraction: v.ecn_fraction(),
            loss_fraction: fraction(v.loss_ewma),
            quarantined: v.quarantined,
        }
    }

    /// Transmissions the table still holds (for memory accounting and tests).
    pub fn slots_len(&self) -> usize {
        self.next_psn.wrapping_sub(self.view().una) as usize
    }

    /// The next operation for a NIC's table (`None` when the engine holds it).
    pub fn poll_op(&mut self) -> Option<TableOp> {
        match &mut self.table {
            Table::Soft(_) => None,
            Table::Hard(t) => t.ops.pop_front(),
        }
    }

    /// The entry as read back from a NIC's table.
    pub fn set_view(&mut self, view: PathView) {
        if let Table::Hard(t) = &mut self.table {
            t.view = view;
        }
        self.trim_sent();
    }
}

impl Table {
    /// Performs `op`: at once (reporting fates to `fate`) when the engine
    /// holds the entry; queued for the NIC otherwise (`None`).
    fn apply(&mut self, op: TableOp, fate: impl FnMut(SlotFate)) -> Option<TableOutcome> {
        match self {
            Table::Soft(e) => Some(e.apply(&op, fate)),
            Table::Hard(t) => {
                t.ops.push_back(op);
                None
            }
        }
    }
}

fn ewma(old: u32, sample: u32) -> u32 {
    old - (old >> 4) + (sample >> 4)
}

fn fraction(v: u32) -> f32 {
    v as f32 / ONE as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcAlgorithm;
    use alloc::vec::Vec;

    fn path() -> TxPath {
        TxPath::new(50000, CcAlgorithm::Fixed { window: 1 << 20 }.build(4096))
    }

    #[test]
    fn a_gap_below_a_sacked_psn_is_a_loss_and_the_tail_is_not() {
        let mut p = path();
        for c in 0..6 {
            p.on_send_data(100 + c, 1000, false, 0, 1000);
        }
        // Receiver got 0, 1, 3, 4 (cum = 2, bits for 3 and 4): 2 lost, 5 still in flight.
        let mut sack = Sack::new();
        sack.set(0);
        sack.set(1);
        let mut fates = Vec::new();
        let (pkts, bytes) = p.on_ack(2, &sack, |f| fates.push(f));
        assert_eq!((pkts, bytes), (4, 4000));
        assert!(fates.contains(&SlotFate::Lost { conn_psn: 102 }));
        assert!(!fates.iter().any(|f| matches!(
            f,
            SlotFate::Lost { conn_psn: 105 } | SlotFate::Acked { conn_psn: 105 }
        )));
        assert_eq!(p.inflight_bytes(), 1000);
        // The same ACK again changes nothing.
        let mut again = Vec::new();
        p.on_ack(2, &sack, |f| again.push(f));
        assert!(again.is_empty());
    }

    #[test]
    fn timeout_loses_everything_and_quarantines_until_a_probe_is_acked() {
        let mut p = path();
        p.on_send_data(1, 10, false, 0, 1000);
        p.on_send_data(2, 10, false, 0, 1000);
        let mut lost = Vec::new();
        p.on_timeout(5000, 50001, |f| lost.push(f));
        assert_eq!(lost.len(), 2);
        assert_eq!(p.entropy(), 50001);
        assert!(!p.can_send(10));
        let probe = p.on_send_probe(5000, 1000);
        assert_eq!(probe, 2);
        p.on_ack(3, &Sack::new(), |_| {});
        assert_eq!(p.health(), PathHealth::Active);
        assert!(p.can_send(10));
    }
}
