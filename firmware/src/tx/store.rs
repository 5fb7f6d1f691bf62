//! The sender's message store: work requests and responses as messages,
//! their queues (to cut, cut and awaiting acceptance), the outstanding READs
//! and atomics, and in-order completion per stream.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;

use metaroce_proto::{MsgRepr, Opcode};
use slab::Slab;

use crate::config::QpConfig;
use crate::verbs::{Completion, SendOp, SendWr, SgList, VerbsError, WcOpcode, WcStatus};

/// A message being sent (or a READ awaiting its response).
#[derive(Debug, Clone)]
pub(crate) struct TxMessage {
    pub wr_id: u64,
    pub opcode: Opcode,
    pub stream: u16,
    pub msn: u32,
    pub recv_idx: u32,
    /// Local buffers: source of the data, or destination of a READ (empty for a
    /// READ response).
    pub sgl: SgList,
    /// Message length: the bytes of `sgl`, or of a READ response.
    len: u32,
    /// READ_RESP only: responder address the data is read from.
    pub source_addr: u64,
    pub remote_va: u64,
    pub rkey: u32,
    pub imm: u32,
    /// Atomic request: its operands (add, or compare and swap); ATOMIC_RESP: the
    /// value found, which it carries (saved, never read again).
    pub operands: [u64; 2],
    pub signaled: bool,
    pub solicited: bool,
    first_psn: u32,
    pkts: u32,
    sent_pkts: u32,
    /// READ: response bytes placed so far, and whether any response arrived.
    pub read_placed: u32,
    pub read_seen: bool,
    /// Every packet was accepted by the receiver.
    accepted: bool,
    rnr_retries: u8,
    status: Option<WcStatus>,
}

impl TxMessage {
    /// A message of `len` bytes not yet sent, with every optional field zero.
    fn new(opcode: Opcode, stream: u16, msn: u32, sgl: SgList, len: u32) -> Self {
        TxMessage {
            wr_id: 0,
            opcode,
            stream,
            msn,
            recv_idx: 0,
            sgl,
            len,
            source_addr: 0,
            remote_va: 0,
            rkey: 0,
            imm: 0,
            operands: [0; 2],
            signaled: false,
            solicited: false,
            first_psn: 0,
            pkts: 0,
            sent_pkts: 0,
            read_placed: 0,
            read_seen: false,
            accepted: false,
            rnr_retries: 0,
            status: None,
        }
    }

    /// Bytes this message's packets carry (READ requests none, atomic requests
    /// their operands).
    fn len(&self) -> u32 {
        match self.opcode {
            Opcode::ReadReq => 0,
            op if op.is_atomic_request() => op.operand_len() as u32,
            _ => self.len,
        }
    }

    /// The message length (a READ's: the bytes it reads).
    pub fn msg_len(&self) -> u32 {
        self.len
    }
}

/// One stream's sending state.
#[derive(Debug, Default, Clone)]
pub(crate) struct TxStream {
    next_msn: u32,
    next_recv_idx: u32,
    /// Messages in posting order, for in-order completion.
    order: VecDeque<u32>,
}

/// The messages of a sender, by key, and the queues they pass through.
#[derive(Default)]
pub(crate) struct MsgStore {
    msgs: Slab<TxMessage>,
    streams: Vec<TxStream>,
    /// Messages not yet fully segmented, FIFO.
    pub(super) to_segment: VecDeque<u32>,
    /// READ responses not yet fully segmented, FIFO: the responder's work,
    /// which never waits behind the requester's (a held READ request).
    pub(super) responses: VecDeque<u32>,
    /// Messages fully segmented, awaiting acceptance, in PSN order.
    pub(super) awaiting: VecDeque<u32>,
    /// Outstanding READ and atomic requests by (stream, msn).
    pub(super) reads: BTreeMap<(u16, u32), u32>,
    /// How many of `reads` have sent their request and not completed: the
    /// count `max_rd_atomic` holds back (kept, not counted per poll).
    reads_sent: u32,
}

impl MsgStore {
    /// Queues a work request of `len` bytes (already checked against the MR table).
    pub fn post(&mut self, cfg: &QpConfig, wr: &SendWr, len: u32) -> Result<u32, VerbsError> {
        let id = usize::from(wr.stream);
        if id >= usize::from(cfg.streams) {
            return Err(VerbsError::InvalidStream);
        }
        if self.msgs.len() >= cfg.max_send_wr {
            return Err(VerbsError::QueueFull);
        }
        // Stream state is created on first use, so unused streams cost nothing.
        if id >= self.streams.len() {
            self.streams.resize_with(id + 1, TxStream::default);
        }
        let stream = &mut self.streams[id];
        let (opcode, remote_va, rkey, imm, operands) = match wr.op {
            SendOp::Write { remote_va, rkey } => (Opcode::Write, remote_va, rkey, 0, [0; 2]),
            SendOp::WriteImm {
                remote_va,
                rkey,
                imm,
            } => (Opcode::WriteImm, remote_va, rkey, imm, [0; 2]),
            SendOp::Send => (Opcode::Send, 0, 0, 0, [0; 2]),
            SendOp::SendImm { imm } => (Opcode::SendImm, 0, 0, imm, [0; 2]),
            SendOp::Read { remote_va, rkey } => (Opcode::ReadReq, remote_va, rkey, 0, [0; 2]),
            SendOp::FetchAdd {
                remote_va,
                rkey,
                add,
            } => (Opcode::FetchAdd, remote_va, rkey, 0, [add, 0]),
            SendOp::CompareSwap {
                remote_va,
                rkey,
                compare,
                swap,
            } => (Opcode::CompareSwap, remote_va, rkey, 0, [compare, swap]),
        };
        let msn = stream.next_msn;
        stream.next_msn = msn.wrapping_add(1);
        let recv_idx = if opcode.consumes_receive() {
            stream.next_recv_idx = stream.next_recv_idx.wrapping_add(1);
            stream.next_recv_idx.wrapping_sub(1)
        } else {
            0
        };
        let key = self.msgs.insert(TxMessage {
            wr_id: wr.wr_id,
            recv_idx,
            remote_va,
            rkey,
            imm,
            operands,
            signaled: wr.signaled,
            solicited: wr.solicited,
            ..TxMessage::new(opcode, wr.stream, msn, wr.sgl, len)
        }) as u32;
        stream.order.push_back(key);
        if opcode.is_request() {
            self.reads.insert((wr.stream, msn), key);
        }
        self.to_segment.push_back(key);
        Ok(key)
    }

    /// Completes a just-posted message with an error before anything is sent.
    pub fn refuse(&mut self, key: u32, status: WcStatus) {
        self.to_segment.retain(|&k| k != key);
        self.msgs[key as usize].status = Some(status);
    }

    /// Queues an atomic's response (responder side): the 8-byte `value` found,
    /// saved in the message, so a retransmission carries the same value and the
    /// atomic is never executed again (spec §6.8).
    pub fn post_atomic_response(&mut self, stream: u16, msn: u32, rkey: u32, value: u64) {
        let key = self.msgs.insert(TxMessage {
            rkey,
            operands: [value, 0],
            ..TxMessage::new(Opcode::AtomicResp, stream, msn, SgList::default(), 8)
        }) as u32;
        self.responses.push_back(key);
    }

    /// Queues a READ response (responder side): `len` bytes from `source_addr`,
    /// which `rkey` was checked to cover.
    pub fn post_read_response(
        &mut self,
        stream: u16,
        msn: u32,
        source_addr: u64,
        rkey: u32,
        len: u32,
    ) {
        let key = self.msgs.insert(TxMessage {
            source_addr,
            rkey,
            ..TxMessage::new(Opcode::ReadResp, stream, msn, SgList::default(), len)
        }) as u32;
        self.responses.push_back(key);
    }

    /// The message under `key`.
    pub fn msg(&self, key: u32) -> &TxMessage {
        &self.msgs[key as usize]
    }

    /// The message under `key`, to change.
    pub fn msg_mut(&mut self, key: u32) -> &mut TxMessage {
        &mut self.msgs[key as usize]
    }

    /// The key of the outstanding READ or atomic `msn` on `stream`.
    pub fn read(&self, stream: u16, msn: u32) -> Option<u32> {
        self.reads.get(&(stream, msn)).copied()
    }

    /// The message whose next packet goes out next, if any may: one being
    /// cut goes on (its packets take consecutive conn PSNs); otherwise a
    /// READ response goes first, then the next message of the send queue,
    /// unless it is a READ request while `max_rd_atomic` READs are in
    /// flight (the queue then waits behind it, as a Verbs send queue does).
    pub fn next_to_cut(&self, max_rd_atomic: u32) -> Option<u32> {
        let started = |q: &VecDeque<u32>| {
            q.front()
                .copied()
                .filter(|&k| self.msgs[k as usize].sent_pkts > 0)
        };
        if let Some(k) = started(&self.responses).or_else(|| started(&self.to_segment)) {
            return Some(k);
        }
        if let Some(&k) = self.responses.front() {
            return Some(k);
        }
        let &k = self.to_segment.front()?;
        let held = self.msgs[k as usize].opcode.is_request() && self.reads_sent >= max_rd_atomic;
        (!held).then_some(k)
    }

    /// Cuts the next packet of message `key` (from [`MsgStore::next_to_cut`])
    /// with conn PSN `psn`: returns its offset and length. A message whose
    /// last packet this is moves to the queue awaiting acceptance.
    pub fn cut(&mut self, key: u32, psn: u32, mtu: u32) -> (u32, u32) {
        let msg = &mut self.msgs[key as usize];
        let pkts = msg.len().div_ceil(mtu).max(1);
        let offset = msg.sent_pkts * mtu;
        let len = msg.len().saturating_sub(offset).min(mtu);
        if msg.sent_pkts == 0 {
            msg.first_psn = psn;
            msg.pkts = pkts;
            if msg.opcode.is_request() {
                self.reads_sent += 1;
            }
        }
        msg.sent_pkts += 1;
        if msg.sent_pkts == pkts {
            if self.responses.front() == Some(&key) {
                self.responses.pop_front();
            } else {
                self.to_segment.pop_front();
            }
            self.awaiting.push_back(key);
        }
        (offset, len)
    }

    /// The length of the next packet of message `key`.
    pub fn next_cut_len(&self, key: u32, mtu: u32) -> u32 {
        let msg = &self.msgs[key as usize];
        msg.len().saturating_sub(msg.sent_pkts * mtu).min(mtu)
    }

    /// Whether the packet at `offset` is its message's first and last.
    pub fn packet_ends(&self, key: u32, offset: u32, mtu: u32) -> (bool, bool) {
        let pkts = self.msgs[key as usize].len().div_ceil(mtu).max(1);
        let index = offset / mtu;
        (index == 0, index + 1 == pkts)
    }

    /// True when what waits to be cut is more than `limit` bytes.
    pub fn unsent_exceeds(&self, limit: u64, mtu: u32) -> bool {
        let mut left = 0u64;
        for &k in self.responses.iter().chain(&self.to_segment) {
            let m = &self.msgs[k as usize];
            left += u64::from(m.len().saturating_sub(m.sent_pkts * mtu));
            if left > limit {
                return true;
            }
        }
        false
    }

    /// The READs (and atomics) whose request has been sent and that have not completed:
    /// (stream, MSN, message key).
    pub fn reads_in_flight(&self) -> impl Iterator<Item = (u16, u32, u32)> + '_ {
        self.reads
            .iter()
            .filter(|&(_, &key)| self.msgs[key as usize].sent_pkts > 0)
            .map(|(&(stream, msn), &key)| (stream, msn, key))
    }

    /// True when a response (`op`: READ_RESP or ATOMIC_RESP) on `stream` for
    /// `msg.msn` with `len` bytes belongs to an outstanding request of its kind:
    /// same message length, inside it.
    pub fn read_response_fits(&self, op: Opcode, stream: u16, msg: &MsgRepr, len: u32) -> bool {
        self.reads.get(&(stream, msg.msn)).is_some_and(|&key| {
            let m = self.msg(key);
            (op == Opcode::AtomicResp) == m.opcode.is_atomic_request()
                && msg.msg_len == m.msg_len()
                && msg.offset.checked_add(len).is_some_and(|e| e <= m.len)
        })
    }

    /// Marks every message whose packets all precede `peer_conn_cum` as
    /// accepted: a response goes, a READ completes once its data is in, any
    /// other message completes.
    pub fn retire_accepted(&mut self, peer_conn_cum: u32) {
        while let Some(&key) = self.awaiting.front() {
            let m = &self.msgs[key as usize];
            let end = m.first_psn.wrapping_add(m.pkts);
            if peer_conn_cum.wrapping_sub(end) >= 1 << 31 {
                break;
            }
            let opcode = m.opcode;
            self.awaiting.pop_front();
            self.msgs[key as usize].accepted = true;
            match opcode {
                op if op.is_response() => {
                    self.msgs.remove(key as usize);
                }
                op if op.is_request() => self.complete_read_if_done(key),
                _ => self.msgs[key as usize].status = Some(WcStatus::Success),
            }
        }
    }

    /// Completes, in posting order per stream, every message that is done.
    pub fn drain_completions(&mut self, qpn: u32, out: &mut impl FnMut(Completion)) {
        for stream in &mut self.streams {
            while let Some(&key) = stream.order.front() {
                let m = &self.msgs[key as usize];
                let Some(status) = m.status else { break };
                stream.order.pop_front();
                if m.signaled || status != WcStatus::Success {
                    out(completion(qpn, m, status));
                }
                if m.opcode.is_request() {
                    self.reads.remove(&(m.stream, m.msn));
                    if m.sent_pkts > 0 {
                        self.reads_sent -= 1;
                    }
                }
                self.msgs.remove(key as usize);
            }
        }
    }

    /// Completes every outstanding work request, in order: the message with
    /// an error keeps it, every other one completes with WR_FLUSH_ERR; then
    /// forgets every message.
    pub fn flush(&mut self, qpn: u32, out: &mut impl FnMut(Completion)) {
        for stream in &mut self.streams {
            for key in stream.order.drain(..) {
                let m = &self.msgs[key as usize];
                let status = m.status.unwrap_or(WcStatus::WrFlushErr);
                if m.signaled || status != WcStatus::Success {
                    out(completion(qpn, m, status));
                }
            }
        }
        self.msgs.clear();
        self.to_segment.clear();
        self.responses.clear();
        self.awaiting.clear();
        self.reads.clear();
        self.reads_sent = 0;
    }

    /// Marks a READ done once its request was accepted and its response bytes
    /// are all placed (only then may its slot and records go).
    pub fn complete_read_if_done(&mut self, key: u32) {
        let m = &mut self.msgs[key as usize];
        if m.accepted && m.read_seen && m.read_placed >= m.len && m.status.is_none() {
            m.status = Some(WcStatus::Success);
        }
    }

    /// Counts an RNR refusal of message `key`: true when it has now been
    /// refused more often than `rnr_retry` allows (7: without limit), and
    /// fails with RNR_RETRY_EXC_ERR.
    pub fn rnr_exceeded(&mut self, key: u32, rnr_retry: u8) -> bool {
        let msg = &mut self.msgs[key as usize];
        msg.rnr_retries = msg.rnr_retries.saturating_add(1);
        let exceeded = rnr_retry < 7 && msg.rnr_retries > rnr_retry;
        if exceeded {
            msg.status = Some(WcStatus::RnrRetryExcErr);
        }
        exceeded
    }

    /// Sets the status message `key` completes with.
    pub fn fail(&mut self, key: u32, status: WcStatus) {
        self.msgs[key as usize].status = Some(status);
    }
}

fn completion(qpn: u32, m: &TxMessage, status: WcStatus) -> Completion {
    let opcode = match m.opcode {
        Opcode::Write | Opcode::WriteImm => WcOpcode::Write,
        Opcode::ReadReq => WcOpcode::Read,
        Opcode::FetchAdd => WcOpcode::FetchAdd,
        Opcode::CompareSwap => WcOpcode::CompSwap,
        _ => WcOpcode::Send,
    };
    Completion {
        qpn,
        wr_id: m.wr_id,
        status,
        opcode,
        byte_len: m.len,
        imm: None,
        stream: m.stream,
        is_recv: false,
        solicited: false,
    }
}
