//! A QP's per-packet receive rules: which packets it takes, where their
//! bytes go, NACKs, READ responses, atomics, and receive completions.

use metaroce_proto::{
    AckRepr, Ext, Flags, MsgRepr, NackReason, NackRepr, Opcode, Repr, ack_entries,
};

use crate::config::MAX_PATHS;
use crate::ctx::Ctx;
use crate::datapath::HwVerdict;
use crate::memory::Memory;
use crate::mr::Access;
use crate::rx::{ConnCheck, PathMark, RxMsg};
use crate::verbs::{ATOMIC_LEN, QpState, RemoteEnd, SgList, WcOpcode, WcStatus};
use crate::{Event, RxMeta};

use super::{Qp, recv_completion};

/// A received packet's payload: bytes for the engine to place, or already
/// placed by the RTL, whose verdict stands in for the engine's memory and
/// receive checks.
#[derive(Clone, Copy)]
pub(crate) enum RxData<'a> {
    /// The payload, for the engine to check and place.
    Bytes(&'a [u8]),
    /// Placed (or refused) by the RTL.
    Placed {
        /// Payload bytes.
        len: u32,
        /// The RTL's verdict.
        verdict: HwVerdict,
    },
}

impl RxData<'_> {
    fn len(&self) -> u32 {
        match self {
            RxData::Bytes(b) => b.len() as u32,
            RxData::Placed { len, .. } => *len,
        }
    }
}

/// Why a message packet is refused after the per-packet checks: each one a
/// drop counter and a NACK.
#[derive(Clone, Copy)]
enum Refusal {
    ReceiverNotReady,
    InvalidRequest,
    RemoteOperational,
    RemoteAccess,
}

impl Qp {
    /// Handles a packet addressed to this QP (framing, ICRC and QPN checked).
    pub fn on_packet<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        data: RxData<'_>,
        meta: &RxMeta,
    ) {
        let Some(remote) = self
            .remote
            .filter(|_| matches!(self.state, QpState::Rtr | QpState::Rts))
        else {
            ctx.drops.qp_state += 1;
            return;
        };
        if !Self::from_peer(ctx, remote, repr, meta) {
            return;
        }
        match (&repr.ext, repr.opcode) {
            (Ext::Msg(m), Opcode::Parity) => self.on_parity(ctx, repr, m, data, meta),
            (Ext::Msg(m), _) => self.on_message(ctx, repr, m, data, meta),
            (Ext::Ack(ack), Opcode::Ack) => self.on_acks(ctx, repr, [(repr.path, *ack)]),
            (Ext::MultiAck(conn), Opcode::MultiAck) => {
                let RxData::Bytes(entries) = data else {
                    ctx.drops.qp_state += 1;
                    return;
                };
                // Each entry is judged as the single-path ACK it stands for
                // (spec §3.11, §5.5).
                let acks = ack_entries(entries).map(|entry| (entry.path, entry.ack(conn)));
                self.on_acks(ctx, repr, acks);
            }
            (Ext::Nack(nack), Opcode::Nack) => {
                if !self.sends() {
                    ctx.drops.qp_state += 1;
                    return;
                }
                self.tx.on_nack(ctx.now, nack);
                self.after_tx_event(ctx);
            }
            (Ext::None, Opcode::Probe) => {
                if self.probe_current(ctx, repr) {
                    self.mark_arrival(ctx, repr, meta);
                }
            }
            (Ext::Cm(cm), Opcode::Disconnect) => {
                // Honoured only with the connection's current PSNs (spec §9.4):
                // the peer's next send PSN inside our receive window and the
                // PSN it has accepted up to among those we sent.
                let sent = self.tx.next_psn();
                let acked = cm.initial_psn.wrapping_sub(self.tx.peer_conn_cum());
                let current = repr.conn_psn.wrapping_sub(self.rx.conn.cum())
                    <= self.rx.conn.window()
                    && (self.state == QpState::Rtr
                        || acked <= sent.wrapping_sub(self.tx.peer_conn_cum()));
                if !current {
                    ctx.drops.bad_disconnect += 1;
                    return;
                }
                self.fail(WcStatus::WrFlushErr, ctx.events)
            }
            _ => ctx.drops.qp_state += 1, // CONNECT handshakes are not handled by a connected QP
        }
    }

    /// Whether a packet comes from the connected peer on a valid path; counts the drop
    /// (`wrong_peer`, `bad_path`) when it does not.
    fn from_peer<M: Memory>(
        ctx: &mut Ctx<'_, M>,
        remote: RemoteEnd,
        repr: &Repr,
        meta: &RxMeta,
    ) -> bool {
        if repr.src_qpn != remote.qpn || meta.src_ip != remote.ip {
            ctx.drops.wrong_peer += 1;
            false
        } else if repr.path >= MAX_PATHS {
            ctx.drops.bad_path += 1;
            false
        } else {
            true
        }
    }

    /// Handles a packet addressed to this QP after it was closed: a retransmission of
    /// a message packet it had accepted, or a probe, is acknowledged again (so a peer
    /// whose ACK was lost still completes); everything else is dropped as addressed to
    /// no QP. Nothing is placed, read or completed.
    pub fn on_packet_closed<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        meta: &RxMeta,
    ) {
        let Some(remote) = self.remote else {
            ctx.drops.unknown_qp += 1;
            return;
        };
        if !Self::from_peer(ctx, remote, repr, meta) {
            return;
        }
        let duplicate = match (&repr.ext, repr.opcode) {
            (Ext::Msg(_), op) if op.is_response() => false,
            (Ext::Msg(_), _) => self.rx.conn.check(repr.conn_psn) == ConnCheck::Duplicate,
            (Ext::None, Opcode::Probe) => {
                if self.probe_current(ctx, repr) {
                    self.mark_arrival(ctx, repr, meta);
                }
                return;
            }
            _ => false,
        };
        if !duplicate {
            ctx.drops.unknown_qp += 1;
            return;
        }
        if self.mark_arrival(ctx, repr, meta) {
            ctx.stats.duplicates += 1;
        }
    }

    /// Whether a PROBE carries the connection's current PSNs (spec §3.7): its
    /// `conn_psn`, the sender's next conn PSN, within one connection window
    /// either side of our cumulative conn PSN; counted `conn_window` when not,
    /// so a blind attacker must guess a live conn PSN to slide a path.
    fn probe_current<M: Memory>(&self, ctx: &mut Ctx<'_, M>, repr: &Repr) -> bool {
        let w = self.rx.conn.window();
        let ahead = repr
            .conn_psn
            .wrapping_sub(self.rx.conn.cum())
            .wrapping_add(w);
        let current = u64::from(ahead) <= 2 * u64::from(w);
        if !current {
            ctx.drops.conn_window += 1;
        }
        current
    }

    /// Records a packet's arrival at the path level (and schedules its ACK);
    /// false, counted as `path_window`, when its path PSN is absurdly far ahead.
    pub(super) fn mark_arrival<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        meta: &RxMeta,
    ) -> bool {
        let mark = self.rx.on_path_arrival(
            repr.path,
            repr.path_psn,
            repr.timestamp,
            meta.ecn_ce,
            meta.src_port,
        );
        if mark == PathMark::OutOfWindow {
            ctx.drops.path_window += 1;
            return false;
        }
        // A packet that passed the checks tells whether its sender accepts
        // MULTI_ACKs (§6.4); its latest such packet decides.
        self.rx.peer_multi_ack = repr.flags.contains(Flags::MULTI_ACK_OK);
        true
    }

    /// Applies the ACKs `(path, fields)` of one datagram (`repr`) to the
    /// sender; a refused one is counted and does not stop the others. An
    /// applied one tells whether the peer rebuilds from PARITY packets.
    fn on_acks<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        acks: impl IntoIterator<Item = (u16, AckRepr)>,
    ) {
        if !self.sends() {
            ctx.drops.qp_state += 1;
            return;
        }
        let mut applied = false;
        for (path, ack) in acks {
            match self.tx.on_ack(ctx.now, path, &ack, ctx.stats) {
                Some(_) => applied = true,
                None => ctx.drops.bad_ack += 1,
            }
        }
        if applied {
            self.tx
                .note_peer_parity(repr.flags.contains(Flags::PARITY_OK));
            self.after_tx_event(ctx);
        }
    }

    fn nack(
        &mut self,
        reason: NackReason,
        repr: &Repr,
        msg: &MsgRepr,
        reply_port: u16,
        detail: u32,
    ) {
        let nack = NackRepr {
            reason,
            conn_psn: repr.conn_psn,
            msn: msg.msn,
            detail,
        };
        self.nacks.push_back((nack, repr.stream, reply_port));
    }

    /// Counts a refused message packet and queues its NACK.
    fn refuse<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        refusal: Refusal,
        repr: &Repr,
        msg: &MsgRepr,
        reply_port: u16,
    ) {
        let (reason, detail) = match refusal {
            Refusal::ReceiverNotReady => {
                ctx.drops.receiver_not_ready += 1;
                (NackReason::ReceiverNotReady, self.cfg().rnr_delay_us)
            }
            Refusal::InvalidRequest => {
                ctx.drops.invalid_request += 1;
                (NackReason::InvalidRequest, 0)
            }
            Refusal::RemoteOperational => {
                ctx.drops.remote_access += 1;
                (NackReason::RemoteOperational, 0)
            }
            Refusal::RemoteAccess => {
                ctx.drops.remote_access += 1;
                (NackReason::RemoteAccess, 0)
            }
        };
        self.nack(reason, repr, msg, reply_port, detail);
    }

    /// The engine's memory and receive checks of a message packet of `len`
    /// payload bytes (not a READ response): where its bytes go, or why it is
    /// refused.
    fn check_dest<M: Memory>(
        &self,
        ctx: &Ctx<'_, M>,
        op: Opcode,
        stream: usize,
        msg: &MsgRepr,
        len: u32,
    ) -> Result<Dest<'_>, Refusal> {
        let remote = |va: u64, bytes: u32, need| {
            if bytes > 0
                && ctx
                    .mrs
                    .check_remote(self.pd, msg.rkey, va, u64::from(bytes), need)
                    .is_err()
            {
                Err(Refusal::RemoteAccess)
            } else {
                Ok(Dest::At(va))
            }
        };
        match op {
            Opcode::Write | Opcode::WriteImm => {
                if op == Opcode::WriteImm
                    && self.rx.streams[stream].receive_for(msg.recv_idx).is_none()
                {
                    return Err(Refusal::ReceiverNotReady);
                }
                remote(msg.remote_va, len, Access::REMOTE_WRITE)
            }
            Opcode::Send | Opcode::SendImm => {
                let recv = self.rx.streams[stream]
                    .receive_for(msg.recv_idx)
                    .ok_or(Refusal::ReceiverNotReady)?;
                if recv.sgl.total_len().is_none_or(|l| msg.msg_len > l) {
                    return Err(Refusal::InvalidRequest);
                }
                // Every buffer of the receive the bytes land in, each under its own key.
                ctx.mrs
                    .check_local_all(self.pd, recv.sgl.pieces(msg.offset, len), true)
                    .map_err(|_| Refusal::RemoteOperational)?;
                Ok(Dest::Scatter(&recv.sgl, msg.offset))
            }
            // An atomic places nothing now: it executes when it retires (§6.8).
            op if op.is_atomic_request() => {
                remote(msg.remote_va, ATOMIC_LEN, Access::REMOTE_ATOMIC)?;
                if msg.remote_va % u64::from(ATOMIC_LEN) != 0 {
                    return Err(Refusal::InvalidRequest);
                }
                Ok(Dest::Nowhere)
            }
            // A READ request places nothing: the check covers what it reads.
            _ => remote(msg.remote_va, msg.msg_len, Access::REMOTE_READ).map(|_| Dest::Nowhere),
        }
    }

    /// A message packet (a request, its data, or a READ response): checked
    /// ([`Qp::check_message`]), recorded at the path level, then either a
    /// duplicate, a READ response, or placed where [`Qp::destination`]
    /// says and recorded for its message ([`Qp::accept_message`]).
    fn on_message<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        data: RxData<'_>,
        meta: &RxMeta,
    ) {
        let Some(conn) = self.check_message(ctx, repr, msg, data) else {
            return;
        };
        if !self.mark_arrival(ctx, repr, meta) {
            return;
        }
        self.rx.last_data_ns = Some(ctx.now);
        if meta.ecn_ce {
            ctx.stats.ce_received += 1;
        }
        if conn == ConnCheck::Duplicate {
            ctx.stats.duplicates += 1;
            return;
        }
        let op = repr.opcode;
        if op.is_response() {
            // Accepted whatever its fate: a response that cannot be used
            // fails its READ rather than being asked for again.
            self.rx.conn.accept(repr.conn_psn);
            return self.on_read_response(ctx, repr, msg, data);
        }
        self.place_new(ctx, repr, msg, data, meta.src_port);
        self.retry_parity(ctx, repr.conn_psn);
    }

    /// A new request or data packet that passed the per-packet checks and
    /// was marked at the path level (or one rebuilt from a PARITY): placed
    /// where [`Qp::destination`] says and recorded for its message
    /// ([`Qp::accept_message`]), or refused (NACKed on `reply_port`).
    pub(super) fn place_new<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        data: RxData<'_>,
        reply_port: u16,
    ) {
        let op = repr.opcode;
        let stream = usize::from(repr.stream);
        if op.consumes_receive() {
            self.take_shared_receives(ctx, stream, msg.recv_idx);
        }
        // Every refusal leaves memory untouched.
        match self.destination(ctx, op, stream, msg, data) {
            Placement::Disagreed => return,
            Placement::Refused(refusal) => {
                return self.refuse(ctx, refusal, repr, msg, reply_port);
            }
            Placement::Place(dest, payload) => dest.place(ctx.mem, payload),
            Placement::Nothing => {}
        }
        self.accept_message(ctx, repr, msg, data);
    }

    /// The per-packet checks of a message packet before it touches any
    /// state: its stream, its conn PSN against the receive window, its
    /// length, its consistency with the message's earlier packets (or, for
    /// a response, with an outstanding READ). Returns where the conn PSN
    /// stands, or `None` when the packet is dropped (counted).
    fn check_message<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        data: RxData<'_>,
    ) -> Option<ConnCheck> {
        let op = repr.opcode;
        let stream = usize::from(repr.stream);
        if self.rx.stream_mut(stream).is_none() {
            ctx.drops.bad_stream += 1;
            return None;
        }
        let conn = self.rx.conn.check(repr.conn_psn);
        if conn == ConnCheck::OutOfWindow {
            ctx.drops.conn_window += 1;
            return None;
        }
        let len = data.len();
        let end = msg.offset.checked_add(len);
        let bad_len = if op.is_atomic_request() {
            // The payload is the operands; the atomic's length is 8 (spec §3.4).
            len as usize != op.operand_len() || msg.offset != 0 || msg.msg_len != ATOMIC_LEN
        } else {
            len > ctx.mtu
                || end.is_none_or(|e| e > msg.msg_len)
                || (op == Opcode::ReadReq && (len != 0 || msg.offset != 0))
        };
        if bad_len {
            ctx.drops.bad_length += 1;
            return None;
        }
        if !op.is_response() {
            let s = &self.rx.streams[stream];
            let inconsistent = s
                .msgs
                .get(&msg.msn)
                .is_some_and(|m| m.opcode != op || m.msg_len != msg.msg_len);
            if inconsistent || (conn == ConnCheck::New && s.is_completed(msg.msn)) {
                ctx.drops.bad_format += 1;
                return None;
            }
            // Bounded per-stream state: every message after the oldest
            // incomplete one holds a conn PSN inside the receive window, so
            // its MSN is less than a window ahead (spec §6.5).
            if conn == ConnCheck::New && !s.msn_in_window(msg.msn, self.cfg().recv_window) {
                ctx.drops.msn_window += 1;
                return None;
            }
        } else if conn == ConnCheck::New {
            // Matched to its READ before it takes a conn PSN: a response for
            // no READ, or one that does not fit it, changes nothing (spec
            // §6.8). The RTL matches it the same way (verdict 21, untracked).
            let fits = self
                .tx
                .messages()
                .read_response_fits(op, repr.stream, msg, len);
            let unexpected = match data {
                RxData::Bytes(_) => !fits,
                RxData::Placed { verdict, .. } => {
                    let hw = verdict == HwVerdict::UnexpectedResponse;
                    if hw == fits {
                        ctx.stats.hw_disagreements += 1;
                    }
                    hw
                }
            };
            if unexpected {
                ctx.drops.unexpected_response += 1;
                return None;
            }
        }
        Some(conn)
    }

    /// Where a new request or data packet's bytes go: the engine's own
    /// memory and receive checks ([`Qp::check_dest`]), or, on the hardware
    /// data path, the RTL's verdict in their place.
    fn destination<'a, M: Memory>(
        &'a self,
        ctx: &mut Ctx<'_, M>,
        op: Opcode,
        stream: usize,
        msg: &MsgRepr,
        data: RxData<'a>,
    ) -> Placement<'a> {
        let len = data.len();
        match data {
            RxData::Bytes(payload) => match self.check_dest(ctx, op, stream, msg, len) {
                Ok(dest) if len > 0 => Placement::Place(dest, payload),
                Ok(_) => Placement::Nothing,
                Err(refusal) => Placement::Refused(refusal),
            },
            RxData::Placed { verdict, .. } => match verdict {
                HwVerdict::Placed => Placement::Nothing,
                HwVerdict::ReceiverNotReady => Placement::Refused(Refusal::ReceiverNotReady),
                HwVerdict::InvalidRequest => Placement::Refused(Refusal::InvalidRequest),
                HwVerdict::RemoteOperational => Placement::Refused(Refusal::RemoteOperational),
                HwVerdict::RemoteAccess => Placement::Refused(Refusal::RemoteAccess),
                // The engine found no duplicate, and a response verdict
                // on another opcode: not the engine's decision.
                HwVerdict::Duplicate | HwVerdict::UnexpectedResponse | HwVerdict::BadResponse => {
                    ctx.stats.hw_disagreements += 1;
                    Placement::Disagreed
                }
            },
        }
    }

    /// Records a placed request or data packet: its
    /// conn PSN accepted, the counters, its message's progress (an atomic's
    /// operands kept until it executes), then whatever of the stream is
    /// now complete.
    fn accept_message<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        data: RxData<'_>,
    ) {
        let op = repr.opcode;
        let len = data.len();
        if !op.is_request() {
            ctx.stats.bytes_placed += u64::from(len);
        }
        self.rx.conn.accept(repr.conn_psn);
        ctx.stats.data_accepted += 1;
        if op.is_request() {
            // A responder still in RTR starts sending at the requester's `resp_psn`.
            self.tx.start(msg.imm);
        }
        // An atomic's operands, kept until it executes.
        let operands = match data {
            RxData::Bytes(p) if op.is_atomic_request() => {
                let word = |i: usize| {
                    p.get(i * 8..i * 8 + 8)
                        .and_then(|b| b.try_into().ok())
                        .map_or(0, u64::from_be_bytes)
                };
                [word(0), word(1)]
            }
            _ => [0; 2],
        };
        let stream = usize::from(repr.stream);
        let s = &mut self.rx.streams[stream];
        let entry = s.msgs.entry(msg.msn).or_insert(crate::rx::RxMsg {
            opcode: op,
            msn: msg.msn,
            msg_len: msg.msg_len,
            placed: 0,
            seen: false,
            recv_idx: msg.recv_idx,
            imm: msg.imm,
            solicited: false,
            remote_va: msg.remote_va,
            rkey: msg.rkey,
            operands,
        });
        // A request's one packet is the whole message.
        entry.placed += if op.is_request() { msg.msg_len } else { len };
        entry.seen = true;
        entry.solicited |= repr.flags.contains(Flags::SOLICITED);
        self.drain_stream(ctx, stream);
    }

    /// On a QP with a shared receive queue: takes receives from it, in order,
    /// until the stream has one at `recv_idx` (receive indices before it whose
    /// messages have not arrived yet get theirs now), or the queue is empty.
    /// An index a receive window or more beyond the stream's first receive is
    /// not a correct sender's (at most that many messages are outstanding) and
    /// takes nothing.
    fn take_shared_receives<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        stream: usize,
        recv_idx: u32,
    ) {
        let Some(srqn) = self.cfg().srq.map(|n| n.get()) else {
            return;
        };
        let Some(srq) = ctx.srqs.get_mut(&srqn) else {
            return;
        };
        let s = &mut self.rx.streams[stream];
        let ahead = recv_idx.wrapping_sub(s.recv_base);
        if ahead >= self.tx.cfg().recv_window {
            return;
        }
        while s.recvs.len() as u32 <= ahead {
            let Some(mut wr) = srq.take(srqn, ctx.events) else {
                break;
            };
            wr.stream = stream as u16;
            s.recvs.push_back(wr);
        }
    }

    fn on_read_response<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        data: RxData<'_>,
    ) {
        let read = self.tx.messages().read(repr.stream, msg.msn);
        let Some(key) = read else {
            let agreed = match data {
                RxData::Placed { verdict, .. } => verdict == HwVerdict::UnexpectedResponse,
                RxData::Bytes(_) => true,
            };
            if !agreed {
                ctx.stats.hw_disagreements += 1;
            }
            ctx.drops.unexpected_response += 1;
            return;
        };
        let m = self.tx.messages().msg(key);
        let len = data.len();
        let fits = match data {
            RxData::Bytes(_) => {
                msg.msg_len == m.msg_len()
                    && msg
                        .offset
                        .checked_add(len)
                        .is_some_and(|e| e <= m.msg_len())
                    && ctx
                        .mrs
                        .check_local_all(self.pd, m.sgl.pieces(msg.offset, len), true)
                        .is_ok()
            }
            RxData::Placed { verdict, .. } => match verdict {
                HwVerdict::Placed => true,
                HwVerdict::BadResponse => false,
                _ => {
                    ctx.stats.hw_disagreements += 1;
                    return;
                }
            },
        };
        if !fits {
            ctx.drops.unexpected_response += 1;
            self.tx.messages_mut().refuse(key, WcStatus::BadRespErr);
            self.tx.fatal = Some(WcStatus::BadRespErr);
            self.after_tx_event(ctx);
            return;
        }
        if let RxData::Bytes(payload) = data {
            let sgl = &self.tx.messages().msg(key).sgl;
            match <[u8; 8]>::try_from(payload) {
                // The value an atomic found: big-endian on the wire, the host's
                // byte order in its buffer.
                Ok(v) if repr.opcode == Opcode::AtomicResp => {
                    scatter(ctx.mem, sgl, 0, &u64::from_be_bytes(v).to_ne_bytes())
                }
                _ => scatter(ctx.mem, sgl, msg.offset, payload),
            }
        }
        ctx.stats.bytes_placed += u64::from(len);
        ctx.stats.data_accepted += 1;
        let m = self.tx.messages_mut().msg_mut(key);
        m.read_placed += len;
        m.read_seen = true;
        self.tx.messages_mut().complete_read_if_done(key);
        self.after_tx_event(ctx);
    }

    /// Completes, in MSN order, every finished message at the head of a stream.
    fn drain_stream<M: Memory>(&mut self, ctx: &mut Ctx<'_, M>, stream: usize) {
        while let Some(m) = self.rx.streams[stream].pop_ready() {
            match m.opcode {
                Opcode::Send | Opcode::SendImm | Opcode::WriteImm => {
                    let s = &mut self.rx.streams[stream];
                    let Some(wr) = s.recvs.pop_front() else {
                        continue;
                    };
                    s.recv_base = s.recv_base.wrapping_add(1);
                    let imm = m.opcode.has_imm().then_some(m.imm);
                    let opcode = if m.opcode == Opcode::WriteImm {
                        WcOpcode::RecvWriteImm
                    } else {
                        WcOpcode::Recv
                    };
                    let c = recv_completion(
                        self.qpn,
                        &wr,
                        WcStatus::Success,
                        m.msg_len,
                        imm,
                        m.solicited,
                        opcode,
                    );
                    ctx.events.push_back(Event::Completion(c));
                }
                Opcode::ReadReq => self.tx.messages_mut().post_read_response(
                    stream as u16,
                    m.msn,
                    m.remote_va,
                    m.rkey,
                    m.msg_len,
                ),
                op if op.is_atomic_request() => {
                    // A failed re-check fails the QP: nothing more retires.
                    let executed = self.execute_atomic(ctx, stream as u16, &m);
                    if !executed {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Executes an atomic that retired (every earlier message of its stream is
    /// placed, so it sees their data) and queues its response with the value it
    /// found. Its region is checked again first: if it no longer grants the
    /// access the QP fails with `LocProtErr` (as a READ response's re-read does)
    /// and false is returned. One NIC executes its atomics one at a time, so they
    /// are atomic with respect to each other (`IBV_ATOMIC_HCA`).
    fn execute_atomic<M: Memory>(&mut self, ctx: &mut Ctx<'_, M>, stream: u16, m: &RxMsg) -> bool {
        let (addr, n) = (m.remote_va, u64::from(ATOMIC_LEN));
        if ctx
            .mrs
            .check_remote(self.pd, m.rkey, addr, n, Access::REMOTE_ATOMIC)
            .is_err()
        {
            self.fail(WcStatus::LocProtErr, ctx.events);
            return false;
        }
        let mut word = [0u8; 8];
        ctx.mem.read(addr, &mut word);
        let found = u64::from_ne_bytes(word);
        let [a, b] = m.operands;
        let new = match m.opcode {
            Opcode::FetchAdd => Some(found.wrapping_add(a)),
            _ => (found == a).then_some(b),
        };
        if let Some(v) = new {
            ctx.mem.write(addr, &v.to_ne_bytes());
        }
        self.tx
            .messages_mut()
            .post_atomic_response(stream, m.msn, m.rkey, found);
        true
    }
}

/// What becomes of a new request or data packet's payload ([`Qp::destination`]).
enum Placement<'a> {
    /// Written by the engine: these bytes, there.
    Place(Dest<'a>, &'a [u8]),
    /// Nothing for the engine to write (no bytes, or the RTL placed them).
    Nothing,
    /// Refused: counted, NACKed, nothing written.
    Refused(Refusal),
    /// The RTL's verdict is not one the engine can take for this packet
    /// (counted in `hw_disagreements`): dropped.
    Disagreed,
}

/// Where an accepted packet's payload goes.
enum Dest<'a> {
    /// At this address (a WRITE's).
    At(u64),
    /// Nowhere: a request (its payload, if any, is an atomic's operands).
    Nowhere,
    /// Into these buffers from this offset of the message (a SEND's receive).
    Scatter(&'a SgList, u32),
}

impl Dest<'_> {
    /// Writes `payload` where this says (already checked to hold it).
    fn place<M: Memory>(&self, mem: &mut M, payload: &[u8]) {
        match *self {
            Dest::At(addr) => mem.write(addr, payload),
            Dest::Scatter(sgl, offset) => scatter(mem, sgl, offset, payload),
            Dest::Nowhere => {}
        }
    }
}

/// Writes `payload`, bytes `offset..` of a message, into the buffers of `sgl`
/// (already checked to hold them).
fn scatter<M: Memory>(mem: &mut M, sgl: &SgList, offset: u32, payload: &[u8]) {
    let mut at = 0;
    for p in sgl.pieces(offset, payload.len() as u32) {
        let end = at + p.len as usize;
        mem.write(p.addr, &payload[at..end]);
        at = end;
    }
}
