//! The sender half of a connection: work requests become messages, messages
//! become packets sprayed over paths; ACKs and NACKs drive loss recovery and
//! completions.
//!
//! [`Tx`] ties together one part per concern: the message store
//! ([`store`]), the conn-PSN records and loss queues ([`records`]), the
//! path set ([`paths`]), pacing ([`pacing`]) and the connection timer and
//! send times ([`timers`]).

mod pacing;
mod paths;
mod records;
mod store;
mod timers;

use alloc::vec;
use alloc::vec::Vec;

use metaroce_proto::{AckRepr, NackReason, NackRepr};

use crate::config::QpConfig;
use crate::counters::Stats;
use crate::datapath::TableDone;
use crate::path::{PathView, SLOT_BYTES, SlotFate, TableOp};
use crate::ports::PortsReady;
use crate::verbs::{Completion, SendWr, VerbsError, WcStatus};

use pacing::Pacing;
pub(crate) use paths::PathSet;
use records::{LossQueues, RecState, Record, Records};
pub(crate) use store::{MsgStore, TxStream};
use timers::Timers;

/// A packet the sender decided to send; the QP turns it into bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DataPlan {
    pub msg: u32,
    pub conn_psn: u32,
    pub path: u16,
    pub path_psn: u32,
    pub entropy: u16,
    pub offset: u32,
    pub len: u32,
    pub first: bool,
    pub last: bool,
    pub retransmission: bool,
}

/// A probe the sender decided to send.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProbePlan {
    pub path: u16,
    pub path_psn: u32,
    pub entropy: u16,
}

/// Retry limits set at RTS.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub timeout_ns: u64,
}

/// The sender half.
pub(crate) struct Tx {
    cfg: QpConfig,
    mtu: u32,
    policy: RetryPolicy,
    /// The paths.
    pub paths: PathSet,
    /// The messages and their queues.
    store: MsgStore,
    /// The conn PSN space.
    psns: Records,
    /// What waits to be sent again.
    loss: LossQueues,
    pacing: Pacing,
    timers: Timers,
    /// Set when the connection must fail with this status.
    pub fatal: Option<WcStatus>,
    /// The send side has its first PSN ([`Tx::start`]): at RTS, or in RTR when the QP
    /// executed a READ (spec §9.1).
    started: bool,
    /// The paths' table entries are in the NIC (the hardware data path).
    hardware_table: bool,
    /// Fates of the ACK being applied (kept to reuse its allocation).
    fate_buf: Vec<SlotFate>,
    /// Per path: `rx_count` of the newest ACK applied.
    ack_rx_count: Vec<u32>,
}

/// What resolved a transmission, for the loss counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FateOrigin {
    /// An ACK (its SACK gap).
    Ack,
    /// RACK's time-based detection.
    Rack,
    /// The path's retransmission timeout.
    Timeout,
}

impl Tx {
    /// A sender whose paths' table entries are in the engine, or in the NIC
    /// when `hardware_table`.
    pub fn new(cfg: QpConfig, mtu: u32, seed: u64, hardware_table: bool) -> Self {
        Tx {
            mtu,
            policy: RetryPolicy {
                retry_cnt: 7,
                rnr_retry: 7,
                timeout_ns: 4_000_000,
            },
            paths: PathSet::new(&cfg, mtu, seed, hardware_table),
            store: MsgStore::default(),
            psns: Records::default(),
            loss: LossQueues::default(),
            pacing: Pacing::new(cfg.recv_window),
            timers: Timers::default(),
            fatal: None,
            started: false,
            hardware_table,
            fate_buf: Vec::new(),
            ack_rx_count: vec![0; usize::from(cfg.paths)],
            cfg,
        }
    }

    /// The connection's configuration.
    pub fn cfg(&self) -> &QpConfig {
        &self.cfg
    }

    /// The MTU the sender cuts messages into.
    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// Sets the first PSN: at RTS, or in RTR when the QP answers its first READ with
    /// the requester's `resp_psn` (spec §9.1). Only the first call counts.
    pub fn start(&mut self, initial_psn: u32) {
        if self.started {
            return;
        }
        self.started = true;
        self.psns.start(initial_psn);
    }

    /// True once the send side has its first PSN ([`Tx::start`]).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Sets the retry limits (RTS).
    pub fn set_policy(&mut self, policy: RetryPolicy) {
        self.policy = policy;
    }

    /// Queues a work request of `len` bytes (already checked against the MR table).
    pub fn post(&mut self, wr: &SendWr, len: u32) -> Result<u32, VerbsError> {
        self.store.post(&self.cfg, wr, len)
    }

    /// The messages: the QP reads and places through it, and queues
    /// responses and completes READs on it.
    pub fn messages(&self) -> &MsgStore {
        &self.store
    }

    /// The messages, to change.
    pub fn messages_mut(&mut self) -> &mut MsgStore {
        &mut self.store
    }

    /// True when data or retransmissions wait to go out.
    pub fn has_data(&self) -> bool {
        !self.loss.retx.is_empty() || self.next_to_cut().is_some()
    }

    /// The message whose next packet goes out next ([`MsgStore::next_to_cut`]).
    fn next_to_cut(&self) -> Option<u32> {
        self.store.next_to_cut(self.cfg.max_rd_atomic)
    }

    fn rto(&self, path: usize) -> u64 {
        self.paths[path].rto(self.cfg.rto_min_ns, self.cfg.rto_initial_ns)
    }

    /// The longest a peer with this connection's settings waits before it resends
    /// something unacknowledged: its connection timeout (the Verbs `timeout`), or a
    /// path's retransmission timeout when that is longer. The peer's paths run over
    /// the same network as ours, so our own estimates stand in for its.
    pub fn retransmit_period(&self) -> u64 {
        (0..self.paths.len())
            .map(|p| self.rto(p))
            .fold(self.policy.timeout_ns, u64::max)
    }

    /// Next probe due on a quarantined path.
    pub fn poll_probe(&mut self, now: u64) -> Option<ProbePlan> {
        let idx = self.paths.timed().find(|&i| self.paths[i].probe_due(now))?;
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
        }
    }
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
            self.paths.repath_if_wanted(i, &self.cfg, stats);
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

    /// The next conn PSN to be sent.
    pub fn next_psn(&self) -> u32 {
        self.psns.next_psn
    }

    /// The peer's cumulative acceptance point.
    pub fn peer_conn_cum(&self) -> u32 {
        self.psns.peer_conn_cum
    }

    /// Something was delivered: the connection timer starts over.
    fn progressed(&mut self, now: u64) {
        let outstanding = self.psns.next_psn != self.psns.peer_conn_cum || self.has_data();
        self.timers
            .progressed(now, self.policy.timeout_ns, outstanding);
    }

    /// Applies the fates of transmissions on `path` to their connection
    /// PSNs: an acknowledged one is delivered, a lost one is queued for
    /// retransmission (if its latest transmission is this one). Returns
    /// true when something was delivered.
    fn apply_fates(
        &mut self,
        path: usize,
        origin: FateOrigin,
        fates: &[SlotFate],
        stats: &mut Stats,
    ) -> bool {
        let mut progressed = false;
        for &fate in fates {
            match fate {
                SlotFate::Lost { conn_psn } => {
                    if self.psns.mark_lost(conn_psn, path) {
                        self.loss.retx.push_back(conn_psn);
                        match origin {
                            FateOrigin::Ack => stats.sack_losses += 1,
                            FateOrigin::Rack => stats.rack_losses += 1,
                            FateOrigin::Timeout => stats.timeout_losses += 1,
                        }
                    }
                }
                SlotFate::Acked { conn_psn } => {
                    if let Some(rec) = self.psns.get_mut(conn_psn)
                        && matches!(rec.state, RecState::InFlight | RecState::Lost)
                    {
                        rec.state = RecState::Delivered;
                        progressed = true;
                    }
                }
            }
        }
        progressed
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
                self.paths.repath_if_wanted(i, &self.cfg, stats);
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

    /// While more than a little data waits to be sent, RACK judges one
    /// transmission only (spec §5.5 step 6): the one holding up the peer's
    /// cumulative point (its record in flight, and the oldest transmission
    /// RACK has not reported on its path), if it was sent before the sender
    /// last ran out of data. (With much data queued every path keeps
    /// carrying packets and a loss shows as a SACK gap, whereas a lost ACK
    /// would make a timer declare delivered packets lost.) Returns that path
    /// and the transmission's send time (low 32 bits).
    fn rack_head(&self) -> Option<(usize, u64)> {
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
    fn rack_every_path(&self) -> bool {
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
    fn rack(&mut self, now: u64, stats: &mut Stats) {
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
            let entropy = self.paths.timeout_entropy(i);
            let mut fates = core::mem::take(&mut self.fate_buf);
            fates.clear();
            self.paths[i].on_timeout(now, entropy, |f| fates.push(f));
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

    /// Fails the connection: the message with an error keeps it, every other
    /// outstanding work request completes with WR_FLUSH_ERR.
    pub fn flush(&mut self, qpn: u32, out: &mut impl FnMut(Completion)) {
        self.store.flush(qpn, out);
        self.psns.clear();
        self.loss.clear();
        self.timers.stop();
    }

    /// Bytes of sender state per packet in flight (records + path slots).
    pub fn state_bytes(&self) -> usize {
        self.psns.len() * size_of::<Record>()
            + self
                .paths
                .iter()
                .map(|p| p.slots_len() * SLOT_BYTES)
                .sum::<usize>()
    }
}

/// The earlier of two optional deadlines (`None`: no deadline).
fn earlier(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_packet_sender_state_fits_the_budget() {
        // Brief: at most 32 bytes per packet in flight; no payload copies.
        let per_packet = size_of::<Record>() + SLOT_BYTES;
        assert!(per_packet <= 32, "{per_packet} bytes");
    }
}
