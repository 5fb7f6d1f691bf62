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

mod table;
#[cfg(test)]
mod tests;

pub(crate) use table::SLOT_BYTES;
use table::fraction;
/// The firmware's record of one transmission: its send time (low 32 bits,
/// ns) and whether it was a PROBE.
type Sent = (u32, bool);

pub use table::{PathEntry, PathHealth, PathStats, PathView, SlotFate, TableOp, TableOutcome};

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
    /// The path's delivery rate.
    delivery: Delivery,
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
    /// The path's recent round-trip peak ([`RttPeak`]).
    peak: RttPeak,
    /// The connection's largest [`TxPath::rto_estimate`] when the path last
    /// moved to a new route, ns (saturated at 2^32 − 1): its RTT estimate is
    /// the old route's, and until [`ROUTE_SAMPLES`] packets sent on the new
    /// one are acknowledged (the table's `samples`) the new route may be as
    /// slow as any of the connection's (spec §5.7).
    moved_floor: u32,
}

/// The largest `srtt + 4·rttvar` a path's RTT estimate reached lately (spec
/// §5.7), letting go of it by 1/[`RttPeak::DECAY`] of its excess over the
/// estimate per packet acknowledged. A queue that fills and drains swings a
/// path's round trip by more than `srtt + 4·rttvar` covers while it is low;
/// the peak keeps the RTO (and a marked path's RACK wait) above the round
/// trips of the last swing, as Linux keeps `rttvar` at the largest deviation
/// of the last round trip (`mdev_max`), but for a few hundred packets. It is
/// the firmware's: both tables show it the estimate after each ACK.
#[derive(Debug, Clone, Copy, Default)]
struct RttPeak {
    /// The peak, ns (saturated at 2^32 − 1; 0 before a sample).
    hi: u32,
}

impl RttPeak {
    /// Packets acknowledged for the peak to let go of its excess by a factor
    /// of e.
    const DECAY: u64 = 256;

    /// Takes the estimate after an ACK acknowledging `acked` packets.
    fn update(&mut self, acked: u32, rtt: &RttEstimator) {
        if rtt.srtt().is_none() {
            return;
        }
        let est = rtt.rto(0, 0).min(u64::from(u32::MAX));
        let hi = u64::from(self.hi);
        let hi = if est >= hi {
            est
        } else {
            hi - (hi - est) * u64::from(acked).min(Self::DECAY) / Self::DECAY
        };
        self.hi = hi as u32;
    }

    /// The peak, ns (0 before a sample).
    fn get(&self) -> u64 {
        u64::from(self.hi)
    }
}

/// The firmware's record of a path's delivery rate (spec §5.9), kept beside
/// its table entry like the send times (in the engine's [`PathEntry`], or
/// with a NIC's table in [`NicTable`]).
#[derive(Debug, Clone, Copy, Default)]
struct Delivery {
    /// The table's `acked` (low 16 bits) when the connection's current
    /// delivery interval began ([`TxPath::close_interval`]).
    from: u16,
    /// Packets acknowledged per delivery interval on the current route,
    /// averaged (×[`Delivery::SCALE`]; 0: not measured yet).
    avg: u16,
}

impl Delivery {
    /// Fixed-point scale of [`Delivery::avg`].
    const SCALE: u32 = 8;
}

/// Packets acknowledged on a new route before the path's RTT estimate
/// stands for it alone (its 1/8-gain mean has then moved most of the way to
/// the new round trip; the repath decision waits for as many).
const ROUTE_SAMPLES: u32 = 8;

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
            delivery: Delivery::default(),
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
            peak: RttPeak::default(),
            moved_floor: 0,
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

    /// The path's retransmission timeout (spec §5.7): its estimate's
    /// ([`RttEstimator::rto`]), raised to the recent peak of
    /// `srtt + 4·rttvar` (`RttPeak`) and, after a move to a new route, to
    /// the connection's largest estimate at the move until
    /// `ROUTE_SAMPLES` (8) packets sent on the new route are acknowledged.
    pub fn rto(&self, min_ns: u64, initial_ns: u64) -> u64 {
        self.view()
            .rtt
            .rto(min_ns, initial_ns)
            .max(self.peak.get())
            .max(self.route_floor())
    }

    /// The path's own RTO estimate, ns: `srtt + 4·rttvar` raised to its
    /// recent peak, with no floor (0 before an RTT sample).
    pub fn rto_estimate(&self) -> u64 {
        self.view().rtt.rto(0, 0).max(self.peak.get())
    }

    /// The floor a move left ([`TxPath::moved_floor`]) until
    /// [`ROUTE_SAMPLES`] packets sent on the new route are acknowledged,
    /// else 0.
    fn route_floor(&self) -> u64 {
        if self.view().samples < ROUTE_SAMPLES {
            u64::from(self.moved_floor)
        } else {
            0
        }
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
        let s = e.slot(self.rack_start())?;
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
                let s = e.slot(psn)?;
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
                e.stamp_newest(now_ns as u32);
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

    /// Records the transmission of a packet that takes a path PSN but no
    /// conn PSN (a PROBE or a PARITY): its acknowledgement ends a
    /// quarantine, its loss resends nothing. Returns its path PSN.
    pub fn on_send_untracked(&mut self, now_ns: u64, rto_ns: u64) -> u32 {
        let op = TableOp::Send {
            conn_psn: 0,
            len: 0,
            probe: true,
            retx: false,
        };
        self.send(op, now_ns, rto_ns)
    }

    /// Records a probe transmission and returns its path PSN.
    pub fn on_send_probe(&mut self, now_ns: u64, rto_ns: u64) -> u32 {
        let psn = self.on_send_untracked(now_ns, rto_ns);
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
        self.peak.update(acked, &v.rtt);
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
    /// ([`PathView::marked`]) `max(srtt + 4·rttvar, 5/4·srtt)` and at least
    /// the recent peak of `srtt + 4·rttvar` ([`RttPeak`]); after a move, at
    /// least the floor it left until packets on the new route are
    /// acknowledged (see [`TxPath::rto`]); `None` before the first RTT
    /// sample.
    fn rack_wait(&self) -> Option<u64> {
        let v = self.view();
        let srtt = v.rtt.srtt()?;
        Some(if v.marked() {
            self.rto(0, 0).max(srtt + srtt / 4)
        } else {
            (srtt + 2 * v.rtt.rttvar())
                .max(srtt + srtt / 8)
                .max(self.route_floor())
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
    /// resets, the path moves to `entropy` (its RTO and RACK wait at least
    /// `floor_ns` until packets on it are acknowledged, see
    /// [`TxPath::rto`]) and is quarantined until a probe is acknowledged.
    pub fn on_timeout(
        &mut self,
        now_ns: u64,
        entropy: u16,
        floor_ns: u64,
        fate: impl FnMut(SlotFate),
    ) {
        self.op(TableOp::Timeout { entropy }, fate);
        self.moved_floor = floor_ns.min(u64::from(u32::MAX)) as u32;
        self.rack_from = self.next_psn;
        self.cc.on_timeout(now_ns);
        self.probe_due_ns = now_ns;
        self.rto_deadline = NO_DEADLINE;
        self.write_window();
    }

    /// True when the path is Active with an RTT sample (its route has been
    /// seen to work, and its RTO is measured, not the initial guess),
    /// something unresolved and room for a PROBE (spec §5.8): an RTO expiry
    /// of the path may then be spared ([`TxPath::spare_expiry`]).
    pub fn may_spare(&self) -> bool {
        let v = self.view();
        !v.quarantined
            && v.rtt.srtt().is_some()
            && v.unresolved()
            && v.next_psn.wrapping_sub(v.una) < SACK_BITS
    }

    /// The path's RTO expiry is spared (spec §5.7): nothing is declared
    /// lost, and the path keeps its route, window, estimates and averages;
    /// its deadline moves to `deadline_ns`.
    pub fn spare_expiry(&mut self, deadline_ns: u64) {
        self.rto_deadline = deadline_ns;
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

    /// Ends one of the connection's delivery intervals (spec §5.9): the
    /// packets acknowledged on the path during it update its average with
    /// gain 1/4 (the first sets it) when the whole interval came after the
    /// path's first 8 packets on its current route (`ROUTE_SAMPLES`); else
    /// the average is forgotten. The next interval begins.
    pub fn close_interval(&mut self) {
        let (acked, samples) = (self.view().acked as u16, self.view().samples);
        let d = self.delivery_mut();
        let count = u32::from(acked.wrapping_sub(d.from));
        d.from = acked;
        d.avg = if samples >= count + ROUTE_SAMPLES {
            let sample = count * Delivery::SCALE;
            let avg = match u32::from(d.avg) {
                0 => sample,
                old => (3 * old + sample) / 4,
            };
            avg.clamp(1, u32::from(u16::MAX)) as u16
        } else {
            0
        };
    }

    /// The path's delivery rate on its current route: packets acknowledged
    /// per delivery interval, averaged (×8; 0 until measured there).
    pub fn delivery_rate(&self) -> u32 {
        u32::from(match &self.table {
            Table::Soft(e) => e.delivery.avg,
            Table::Hard(t) => t.delivery.avg,
        })
    }

    /// The path's delivery record, wherever its table keeps it.
    fn delivery_mut(&mut self) -> &mut Delivery {
        match &mut self.table {
            Table::Soft(e) => &mut e.delivery,
            Table::Hard(t) => &mut t.delivery,
        }
    }

    /// Moves the path to a new entropy value (a new route) and forgets its
    /// route-specific estimates; its RTO and RACK wait are at least
    /// `floor_ns` until packets on the new route are acknowledged (see
    /// [`TxPath::rto`]).
    pub fn move_to(&mut self, entropy: u16, floor_ns: u64) {
        self.op(TableOp::Move { entropy }, |_| {});
        self.moved_floor = floor_ns.min(u64::from(u32::MAX)) as u32;
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
