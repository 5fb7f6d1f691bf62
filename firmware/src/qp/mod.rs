//! A queue pair: the Verbs state machine around one connection's sender and
//! receiver halves: the per-packet receive rules in [`recv`], packet
//! building in [`send`].

mod parity;
mod recv;
mod send;

pub(crate) use recv::RxData;
pub(crate) use send::PseudoLocal;

use alloc::collections::VecDeque;

use metaroce_proto::NackRepr;

use crate::Event;
use crate::config::QpConfig;
pub(crate) use crate::ctx::Ctx;
use crate::datapath::TableDone;
use crate::memory::Memory;
use crate::path::{PathStats, PathView, SlotFate, TableOp};
use crate::rx::{Rx, RxStream};
use crate::tx::{RetryPolicy, Tx};
use crate::verbs::{
    Completion, QpState, QpTransition, RecvWr, RemoteEnd, SendWr, Sge, VerbsError, WcOpcode,
    WcStatus,
};
use alloc::boxed::Box;
use metaroce_proto::auth::{Authenticator, ReplayWindow};

/// One queue pair.
pub(crate) struct Qp {
    pub qpn: u32,
    pub pd: u32,
    pub state: QpState,
    pub remote: Option<RemoteEnd>,
    tx: Tx,
    rx: Rx,
    nacks: VecDeque<(NackRepr, u16, u16)>,
    disconnect_pending: bool,
    seed: u64,
    /// The paths' table entries are in the NIC (the hardware data path).
    hardware_table: bool,
    /// Queued in the NIC's ready list.
    pub ready: bool,
    /// Destroyed and lingering: only (re-)acknowledges what it accepted.
    pub closed: bool,
    /// The deadline under which the NIC's timer index holds this QP (the
    /// NIC's bookkeeping: see `Timers::rearm` in `nic/timing.rs`).
    pub timer_due: Option<u64>,
    /// Authenticated mode (spec §11.2).
    pub auth: Option<Box<QpAuth>>,
    /// The latest PARITY that found more than one packet of its group
    /// missing, kept until one of them arrives (spec §6.10).
    pending_parity: Option<Box<parity::PendingParity>>,
}

/// The authentication state of a QP in authenticated mode.
pub(crate) struct QpAuth {
    pub mac: Authenticator,
    /// The peer's QPN (its packets' nonces), set at RTR.
    pub peer_qpn: u32,
    /// Sequence number of the next packet sent (random start, set at RTR).
    pub tx_seq: u64,
    /// What the peer's packets have used.
    pub rx: ReplayWindow,
}

impl Qp {
    pub fn new(
        qpn: u32,
        pd: u32,
        cfg: QpConfig,
        mtu: u32,
        seed: u64,
        hardware_table: bool,
    ) -> Self {
        let cfg_auth = cfg.auth.clone();
        let rx = Rx::new(cfg.streams, cfg.recv_window);
        Qp {
            qpn,
            pd,
            state: QpState::Reset,
            tx: Tx::new(cfg, mtu, seed, hardware_table),
            rx,
            remote: None,
            nacks: VecDeque::new(),
            disconnect_pending: false,
            seed,
            hardware_table,
            ready: false,
            closed: false,
            timer_due: None,
            pending_parity: None,
            auth: cfg_auth.map(|k| {
                Box::new(QpAuth {
                    mac: Authenticator::new(&k),
                    peer_qpn: 0,
                    tx_seq: 1,
                    rx: ReplayWindow::default(),
                })
            }),
        }
    }

    /// The QP's configuration (kept by its sender half).
    pub fn cfg(&self) -> &QpConfig {
        self.tx.cfg()
    }

    /// The earliest timer of the QP's sender. Adds the work it did to
    /// `work`, the NIC's timer cost counter.
    pub fn next_deadline(&self, work: &mut u64) -> Option<u64> {
        self.tx.next_deadline(work)
    }

    /// Fires the sender's due timers, then delivers what they changed
    /// ([`Qp::after_tx_event`]).
    pub fn on_timeout<M: Memory>(&mut self, ctx: &mut Ctx<'_, M>) {
        self.tx.on_timeout(ctx.now, ctx.stats);
        self.after_tx_event(ctx);
    }

    /// The next conn PSN the QP expects to receive (its cumulative
    /// acceptance point).
    pub fn accepted_psn(&self) -> u32 {
        self.rx.conn.cum()
    }

    /// True when the QP received data at most `window` ns before `now`
    /// (`window` 0: at `now` itself): its peer is sending to it.
    pub fn received_data_within(&self, now: u64, window: u64) -> bool {
        self.rx
            .last_data_ns
            .is_some_and(|t| now.saturating_sub(t) <= window)
    }

    /// Takes every posted receive, in order (the QP is going).
    pub fn drain_receives(&mut self) -> impl Iterator<Item = RecvWr> + '_ {
        self.rx.drain_receives()
    }

    /// A stream's receive state, if the stream has any.
    pub fn rx_stream(&self, stream: u16) -> Option<&RxStream> {
        self.rx.streams.get(usize::from(stream))
    }

    /// Queues a send work request of `len` bytes (already checked against
    /// the MR table); returns its message key.
    pub fn post_send(&mut self, wr: &SendWr, len: u32) -> Result<u32, VerbsError> {
        self.tx.post(wr, len)
    }

    /// Completes a just-posted send work request with an error before
    /// anything is sent.
    pub fn refuse_send(&mut self, key: u32, status: WcStatus) {
        self.tx.messages_mut().refuse(key, status);
    }

    /// True (once) when the last polls had data only for busy ports.
    pub fn take_port_blocked(&mut self) -> bool {
        self.tx.take_port_blocked()
    }

    /// Hardware data path: the next operation for the NIC's TX table, and
    /// its path.
    pub fn poll_table_op(&mut self) -> Option<(u16, TableOp)> {
        self.tx.poll_table_op()
    }

    /// Hardware data path: the NIC's TX table finished `done` on `path`
    /// (see [`Tx::on_table_result`]): a result the engine did not expect
    /// counts in `hw_disagreements`; then what it changed is delivered
    /// ([`Qp::after_tx_event`]).
    pub fn on_table_result<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        path: u16,
        done: &TableDone,
        fates: &[SlotFate],
        view: PathView,
    ) {
        if !self
            .tx
            .on_table_result(ctx.now, path, done, fates, view, ctx.stats)
        {
            ctx.stats.hw_disagreements += 1;
        }
        self.after_tx_event(ctx);
    }

    /// Per-path statistics of the sender.
    pub fn path_stats(&self) -> impl Iterator<Item = PathStats> + '_ {
        self.tx.paths.iter().map(|p| p.stats())
    }

    /// The READs and atomics sent and not completed, as (stream, MSN, local
    /// SGE the response goes to, whether it is an atomic).
    pub fn outstanding_reads(&self) -> impl Iterator<Item = (u16, u32, Sge, bool)> + '_ {
        let messages = self.tx.messages();
        messages.reads_in_flight().map(|(stream, msn, key)| {
            let m = messages.msg(key);
            (stream, msn, m.sgl.first(), m.opcode.is_atomic_request())
        })
    }

    /// Bytes of sender state the QP holds for its packets in flight.
    pub fn inflight_state_bytes(&self) -> usize {
        self.tx.state_bytes()
    }

    /// Closes the QP for `destroy_qp`: drops its send work, posted receives and partly
    /// received messages without a single completion or event, and keeps only what it
    /// needs to acknowledge what it already accepted. Returns the peer's retransmission
    /// period (see [`Tx::retransmit_period`]) when the QP was connected (RTR or RTS) and
    /// so should linger; `None` when nobody can be waiting for its acknowledgements.
    pub fn close(&mut self) -> Option<u64> {
        let connected = self.remote.is_some() && matches!(self.state, QpState::Rtr | QpState::Rts);
        let period = self.tx.retransmit_period();
        self.tx.flush(self.qpn, &mut |_| {});
        self.rx.drain_receives().for_each(drop);
        self.rx.streams = alloc::vec::Vec::new();
        self.disconnect_pending = false;
        self.closed = true;
        connected.then_some(period)
    }

    /// Applies a state transition.
    pub fn modify(
        &mut self,
        t: QpTransition,
        events: &mut VecDeque<Event>,
    ) -> Result<(), VerbsError> {
        let to = match t {
            QpTransition::Init => QpState::Init,
            QpTransition::Rtr(_) => QpState::Rtr,
            QpTransition::Rts { .. } => QpState::Rts,
            QpTransition::Error => QpState::Error,
            QpTransition::Reset => QpState::Reset,
        };
        if !self.state.can_move_to(to) {
            return Err(VerbsError::InvalidTransition);
        }
        match t {
            QpTransition::Rtr(remote) => {
                self.remote = Some(remote);
                self.rx.start(remote.initial_psn);
            }
            QpTransition::Rts {
                initial_psn,
                retry_cnt,
                rnr_retry,
                timeout_ns,
            } => {
                if self.state == QpState::Rtr {
                    self.tx.set_policy(RetryPolicy {
                        retry_cnt: retry_cnt.min(7),
                        rnr_retry: rnr_retry.min(7),
                        timeout_ns: timeout_ns.max(1000),
                    });
                    // A QP that answered READs in RTR keeps the PSNs it started there.
                    self.tx.start(initial_psn);
                }
            }
            QpTransition::Error => {
                self.fail(WcStatus::WrFlushErr, events);
                return Ok(());
            }
            QpTransition::Reset => {
                let (qpn, pd, cfg, mtu, seed) = (
                    self.qpn,
                    self.pd,
                    self.cfg().clone(),
                    self.tx.mtu(),
                    self.seed,
                );
                let timer_due = self.timer_due;
                *self = Qp::new(qpn, pd, cfg, mtu, seed.wrapping_add(1), self.hardware_table);
                // The NIC's timer index still holds the old entry: it re-arms after this.
                self.timer_due = timer_due;
                return Ok(());
            }
            QpTransition::Init => {}
        }
        self.state = to;
        Ok(())
    }

    /// Moves to ERR: completes what finished, then flushes everything else.
    pub fn fail(&mut self, status: WcStatus, events: &mut VecDeque<Event>) {
        if self.state == QpState::Error {
            return;
        }
        let qpn = self.qpn;
        let mut push = |c: Completion| events.push_back(Event::Completion(c));
        self.tx.messages_mut().drain_completions(qpn, &mut push);
        self.tx.flush(qpn, &mut push);
        for wr in self.rx.drain_receives() {
            push(recv_completion(
                qpn,
                &wr,
                WcStatus::WrFlushErr,
                0,
                None,
                false,
                WcOpcode::Recv,
            ));
        }
        self.nacks.clear();
        self.state = QpState::Error;
        events.push_back(Event::QpError { qpn, status });
    }

    /// Posts a receive (already checked against the MR table).
    pub fn post_recv(
        &mut self,
        wr: RecvWr,
        events: &mut VecDeque<Event>,
    ) -> Result<(), VerbsError> {
        match self.state {
            QpState::Reset => Err(VerbsError::WrongState),
            QpState::Error => {
                events.push_back(Event::Completion(recv_completion(
                    self.qpn,
                    &wr,
                    WcStatus::WrFlushErr,
                    0,
                    None,
                    false,
                    WcOpcode::Recv,
                )));
                Ok(())
            }
            _ => {
                let stream = self
                    .rx
                    .stream_mut(usize::from(wr.stream))
                    .ok_or(VerbsError::InvalidStream)?;
                if stream.recvs.len() >= self.tx.cfg().max_recv_wr {
                    return Err(VerbsError::QueueFull);
                }
                stream.recvs.push_back(wr);
                Ok(())
            }
        }
    }

    /// The send side runs: in RTS, and in RTR once the QP executed a READ (its
    /// responses, their ACKs and timers; spec §9.1).
    pub fn sends(&self) -> bool {
        match self.state {
            QpState::Rts => true,
            QpState::Rtr => self.tx.started(),
            _ => false,
        }
    }

    /// Asks for a DISCONNECT to be sent, then fails the QP locally.
    pub fn disconnect(&mut self, events: &mut VecDeque<Event>) {
        if self.remote.is_some() && self.state != QpState::Error {
            self.disconnect_pending = true;
        }
        self.fail(WcStatus::WrFlushErr, events);
    }

    /// Completions and fatal errors after the sender changed.
    pub fn after_tx_event<M: Memory>(&mut self, ctx: &mut Ctx<'_, M>) {
        let qpn = self.qpn;
        self.tx
            .messages_mut()
            .drain_completions(qpn, &mut |c| ctx.events.push_back(Event::Completion(c)));
        if let Some(status) = self.tx.fatal.take() {
            self.fail(status, ctx.events);
        }
    }
}

fn recv_completion(
    qpn: u32,
    wr: &RecvWr,
    status: WcStatus,
    byte_len: u32,
    imm: Option<u32>,
    solicited: bool,
    opcode: WcOpcode,
) -> Completion {
    Completion {
        qpn,
        wr_id: wr.wr_id,
        status,
        opcode,
        byte_len,
        imm,
        stream: wr.stream,
        is_recv: true,
        solicited,
    }
}

/// The engine's fixed state per connection end, bytes, with `paths` paths
/// each way (and their ECN AIMD controllers), one stream in use and the
/// default receive window of 4096 packets as a bitmap
/// (`docs/architecture.md` §4.2); state for packets in flight comes on top
/// ([`crate::Nic::qp_inflight_state_bytes`]).
pub fn fixed_state_bytes(paths: usize) -> usize {
    let per_path = size_of::<crate::path::TxPath>()
        + size_of::<crate::cc::EcnAimd>()
        + size_of::<crate::rx::RxPath>();
    size_of::<Qp>()
        + paths * per_path
        + QpConfig::default().recv_window as usize / 8
        + size_of::<crate::tx::TxStream>()
        + size_of::<crate::rx::RxStream>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::EcnAimd;
    use crate::path::TxPath;
    use crate::rx::RxPath;

    #[test]
    fn per_connection_state_fits_the_budget() {
        // The brief's goal and docs/architecture.md §4.2.
        let bytes = fixed_state_bytes(8);
        assert!(
            bytes <= 4096,
            "{bytes} bytes: Qp {}, TxPath {}, controller {}, RxPath {}",
            size_of::<Qp>(),
            size_of::<TxPath>(),
            size_of::<EcnAimd>(),
            size_of::<RxPath>()
        );
    }
}
