//! The sender half of a connection: work requests become messages, messages
//! become packets sprayed over paths; ACKs and NACKs drive loss recovery and
//! completions.

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use metaroce_proto::{AckRepr, NackReason, NackRepr, Opcode};
use rand::{Rng, SeedableRng, rngs::SmallRng};
use slab::Slab;

use crate::config::QpConfig;
use crate::counters::Stats;
use crate::datapath::TableDone;
use crate::path::{PathView, SLOT_BYTES, SlotFate, TableOp, TxPath};
use crate::ports::PortsReady;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecState {
    /// A transmission is in flight.
    InFlight,
    /// Acknowledged at the path level (may still await acceptance).
    Delivered,
    /// Queued for retransmission.
    Lost,
    /// Refused by the receiver (RNR); retried after a delay.
    RnrWait,
}

/// One connection PSN, from first transmission until the receiver accepts it.
#[derive(Debug, Clone, Copy)]
struct Record {
    msg: u32,
    offset: u32,
    len: u32,
    path: u16,
    state: RecState,
}

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

#[derive(Debug, Default, Clone)]
pub(crate) struct TxStream {
    next_msn: u32,
    next_recv_idx: u32,
    /// Messages in posting order, for in-order completion.
    order: VecDeque<u32>,
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
    rng: SmallRng,
    /// The paths. Only `Tx` changes them, and it calls [`Tx::refresh`]
    /// after every change.
    pub paths: Vec<TxPath>,
    /// Bytes in flight over all paths (the sum of what [`Tx::refresh`]
    /// counted).
    inflight_total: u32,
    /// Bit `i` set: path `i` may have a deadline ([`TxPath::has_timers`]),
    /// as of its last [`Tx::refresh`]. The timer query and the probe
    /// search look at these paths only.
    timed: u64,
    /// Bit `i` set: path `i` is marked ([`PathView::marked`]), as of its
    /// last [`Tx::refresh`], so [`Tx::any_marked`] walks no paths.
    marked: u64,
    /// The path that waits to drain before it moves to a new entropy value
    /// ([`Tx::settle_move`]) and takes no packets meanwhile; one at a time.
    draining: Option<u8>,
    /// The last data poll found a usable path only on a busy port.
    port_blocked: bool,
    msgs: Slab<TxMessage>,
    streams: Vec<TxStream>,
    /// Messages not yet fully segmented, FIFO.
    to_segment: VecDeque<u32>,
    /// READ responses not yet fully segmented, FIFO: the responder's work,
    /// which never waits behind the requester's (a held READ request).
    responses: VecDeque<u32>,
    /// Messages fully segmented, awaiting acceptance, in PSN order.
    awaiting: VecDeque<u32>,
    /// Outstanding READ and atomic requests by (stream, msn).
    pub reads: alloc::collections::BTreeMap<(u16, u32), u32>,
    /// How many of `reads` have sent their request and not completed: the
    /// count `max_rd_atomic` holds back (kept, not counted per poll).
    reads_sent: u32,
    records: VecDeque<Record>,
    /// Connection PSN of `records[0]`.
    rec_base: u32,
    next_psn: u32,
    retx: VecDeque<u32>,
    rnr_wait: VecDeque<(u64, u32)>,
    peer_conn_cum: u32,
    peer_credit: u32,
    rate_hint_mbps: u32,
    next_send_ns: u64,
    /// The path chosen after the last one (round robin; paths ≤ 64).
    rr: u16,
    /// Packets the tail copies have walked past since the last new packet
    /// ([`Tx::poll_tail_copy`]): the next copy considers conn PSN
    /// `next_psn − 1 − copy_walked`.
    copy_walked: u16,
    /// New packets sent since the last retransmission (saturating;
    /// `u16::MAX` before the first): tail copies are sent only while it is
    /// below [`TAIL_COPY_MEMORY`].
    sent_since_resend: u16,
    /// The connection timer's deadline (`u64::MAX`: not running).
    conn_rto: u64,
    conn_backoff: u32,
    /// Time of the last `on_timeout`: transmit-side deadlines (probe due,
    /// pacing) at or before it are pending work, not timers.
    timers_fired_ns: u64,
    /// Send time of the newest packet the peer acknowledged (echoed), ns.
    delivered_sent_ns: u64,
    /// Send time of the newest data transmission, ns.
    newest_sent_ns: u64,
    /// Send time of the newest data transmission after which the sender had
    /// nothing left to send (`u64::MAX`: none yet; see [`Tx::rack_head`]).
    drained_sent_ns: u64,
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
        let mut rng = SmallRng::seed_from_u64(seed);
        let paths = (0..cfg.paths)
            .map(|i| {
                let entropy = striped_entropy(&mut rng, i);
                let cc = cfg.cc.build(mtu);
                if hardware_table {
                    TxPath::new_hardware(entropy, cc)
                } else {
                    TxPath::new(entropy, cc)
                }
            })
            .collect();
        Tx {
            mtu,
            policy: RetryPolicy {
                retry_cnt: 7,
                rnr_retry: 7,
                timeout_ns: 4_000_000,
            },
            rng,
            paths,
            inflight_total: 0,
            timed: 0,
            marked: 0,
            draining: None,
            port_blocked: false,
            msgs: Slab::new(),
            streams: Vec::new(),
            to_segment: VecDeque::new(),
            responses: VecDeque::new(),
            awaiting: VecDeque::new(),
            reads: alloc::collections::BTreeMap::new(),
            reads_sent: 0,
            records: VecDeque::new(),
            rec_base: 0,
            next_psn: 0,
            retx: VecDeque::new(),
            rnr_wait: VecDeque::new(),
            peer_conn_cum: 0,
            peer_credit: cfg.recv_window,
            rate_hint_mbps: 0,
            next_send_ns: 0,
            rr: 0,
            copy_walked: 0,
            sent_since_resend: u16::MAX,
            conn_rto: u64::MAX,
            conn_backoff: 0,
            timers_fired_ns: 0,
            delivered_sent_ns: 0,
            newest_sent_ns: 0,
            drained_sent_ns: u64::MAX,
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
        self.next_psn = initial_psn;
        self.rec_base = initial_psn;
        self.peer_conn_cum = initial_psn;
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
        let id = usize::from(wr.stream);
        if id >= usize::from(self.cfg.streams) {
            return Err(VerbsError::InvalidStream);
        }
        if self.msgs.len() >= self.cfg.max_send_wr {
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

    pub fn msg(&self, key: u32) -> &TxMessage {
        &self.msgs[key as usize]
    }

    pub fn msg_mut(&mut self, key: u32) -> &mut TxMessage {
        &mut self.msgs[key as usize]
    }

    /// True when data or retransmissions wait to go out.
    pub fn has_data(&self) -> bool {
        !self.retx.is_empty() || self.next_to_cut().is_some()
    }

    /// The message whose next packet goes out next, if any may: one being
    /// cut goes on (its packets take consecutive conn PSNs); otherwise a
    /// READ response goes first, then the next message of the send queue,
    /// unless it is a READ request while `max_rd_atomic` READs are in
    /// flight (the queue then waits behind it, as a Verbs send queue does).
    fn next_to_cut(&self) -> Option<u32> {
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
        let held =
            self.msgs[k as usize].opcode.is_request() && self.reads_sent >= self.cfg.max_rd_atomic;
        (!held).then_some(k)
    }

    /// The READs (and atomics) whose request has been sent and that have not completed:
    /// (stream, MSN, message key).
    pub fn reads_in_flight(&self) -> impl Iterator<Item = (u16, u32, u32)> + '_ {
        self.reads
            .iter()
            .filter(|&(_, &key)| self.msgs[key as usize].sent_pkts > 0)
            .map(|(&(stream, msn), &key)| (stream, msn, key))
    }

    fn rto(&self, path: usize) -> u64 {
        self.paths[path].rto(self.cfg.rto_min_ns, self.cfg.rto_initial_ns)
    }

    /// After a change to `path`: re-reads its RACK deadline's inputs and
    /// its bytes in flight, so that neither [`Tx::next_deadline`] nor the
    /// connection window walks every path's state on every call.
    fn refresh(&mut self, path: usize) {
        self.settle_move(path);
        let p = &mut self.paths[path];
        p.refresh_timers();
        let (before, now) = p.recount_inflight();
        self.inflight_total = self.inflight_total - before + now;
        let bit = 1u64 << path;
        if p.has_timers() {
            self.timed |= bit;
        } else {
            self.timed &= !bit;
        }
        if p.view().marked() {
            self.marked |= bit;
        } else {
            self.marked &= !bit;
        }
    }

    /// The paths that may have a deadline, in index order.
    fn timed_paths(&self) -> impl Iterator<Item = usize> + use<> {
        let mut bits = self.timed;
        core::iter::from_fn(move || {
            let i = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            (i < 64).then_some(i)
        })
    }

    /// True when what [`Tx::refresh`] keeps matches the paths (checked in
    /// debug builds).
    fn refreshed(&self) -> bool {
        let inflight: u32 = self.paths.iter().map(|p| p.inflight_bytes()).sum();
        inflight == self.inflight_total
            && self.paths.iter().enumerate().all(|(i, p)| {
                p.refreshed()
                    && (!p.has_timers() || self.timed & (1 << i) != 0)
                    && p.view().marked() == (self.marked & (1 << i) != 0)
            })
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
        let idx = self.timed_paths().find(|&i| self.paths[i].probe_due(now))?;
        let rto = self.rto(idx);
        let path_psn = self.paths[idx].on_send_probe(now, rto);
        self.refresh(idx);
        Some(ProbePlan {
            path: idx as u16,
            path_psn,
            entropy: self.paths[idx].entropy(),
        })
    }

    /// Chooses the path for a packet of `len` bytes: the next usable path in
    /// round-robin order, avoiding `avoid` when possible. Each path's window
    /// (its congestion controller) decides whether it is usable, so a
    /// congested path gets fewer packets. Strict rotation keeps every path
    /// carrying packets, so a loss is soon followed by a later packet on the
    /// same path and detected from the SACK gap instead of by timeout
    /// (picking the least-loaded path starved a path holding a lost packet).
    ///
    /// A path whose port is busy (`ports`) is skipped too; when that alone
    /// left nothing to choose, [`Tx::take_port_blocked`] says so.
    fn choose_path(&mut self, len: u32, avoid: Option<u16>, ports: PortsReady) -> Option<usize> {
        let n = self.paths.len();
        let rr = usize::from(self.rr);
        let usable = |i: usize| {
            self.draining != Some(i as u8)
                && self.paths[i].can_send(len)
                && (avoid != Some(i as u16) || n == 1)
        };
        let mut blocked = false;
        let pick = (0..n).map(|k| (rr + k) % n).find(|&i| {
            let ok = usable(i);
            let takes = ports.takes(self.paths[i].entropy());
            blocked |= ok && !takes;
            ok && takes
        });
        if pick.is_none() && avoid.is_some() {
            return self.choose_path(len, None, ports);
        }
        self.port_blocked |= pick.is_none() && blocked;
        if let Some(b) = pick {
            self.rr = ((b + 1) % n) as u16;
        }
        pick
    }

    /// True (once) when the last data polls had a packet to send but only on
    /// paths whose port was busy: the QP should be polled again when ports free.
    pub fn take_port_blocked(&mut self) -> bool {
        core::mem::take(&mut self.port_blocked)
    }

    fn conn_inflight(&self) -> u32 {
        debug_assert!(self.refreshed(), "a path changed without Tx::refresh");
        self.inflight_total
    }

    /// Next data packet (retransmissions first), if windows and pacing allow.
    /// `ports`: the NIC ports that can take a packet now.
    pub fn poll_data(
        &mut self,
        now: u64,
        stats: &mut Stats,
        ports: PortsReady,
    ) -> Option<DataPlan> {
        // Data that waits is covered by the connection timer even while nothing
        // lets it out (every path quarantined with its probes unanswered, or no
        // credit): a peer that vanished then ends in RETRY_EXC_ERR, not in
        // probes forever (spec §5.12).
        if self.conn_rto == u64::MAX && self.has_data() {
            self.conn_rto = now + (self.policy.timeout_ns << self.conn_backoff);
        }
        if self.cfg.honor_rate_hint && self.rate_hint_mbps > 0 && now < self.next_send_ns {
            return None;
        }
        if self.conn_inflight() >= self.cfg.conn_window_bytes {
            return None;
        }
        let plan = self
            .poll_retransmission(now, stats, ports)
            .or_else(|| self.poll_new(now, stats, ports))
            .or_else(|| self.poll_tail_copy(now, stats, ports))?;
        if self.rate_hint_mbps > 0 {
            let bytes = u64::from(plan.len) + 100;
            self.next_send_ns =
                self.next_send_ns.max(now) + bytes * 8000 / u64::from(self.rate_hint_mbps);
        }
        Some(plan)
    }

    fn poll_retransmission(
        &mut self,
        now: u64,
        stats: &mut Stats,
        ports: PortsReady,
    ) -> Option<DataPlan> {
        while let Some(&psn) = self.retx.front() {
            let Some(rec) = self.record(psn).copied() else {
                self.retx.pop_front();
                continue;
            };
            if rec.state != RecState::Lost {
                self.retx.pop_front();
                continue;
            }
            let path = self.choose_path(rec.len, Some(rec.path), ports)?;
            self.retx.pop_front();
            stats.retransmits += 1;
            self.sent_since_resend = 0;
            return Some(self.transmit(now, psn, rec, path, true));
        }
        None
    }

    fn poll_new(&mut self, now: u64, stats: &mut Stats, ports: PortsReady) -> Option<DataPlan> {
        let key = self.next_to_cut()?;
        let window_end = self
            .peer_conn_cum
            .wrapping_add(self.peer_credit.min(self.cfg.recv_window));
        if self.next_psn.wrapping_sub(window_end) < 1 << 31 {
            return None; // receive window full
        }
        let mtu = self.mtu;
        let msg = &self.msgs[key as usize];
        let pkts = msg.len().div_ceil(mtu).max(1);
        let offset = msg.sent_pkts * mtu;
        let len = msg.len().saturating_sub(offset).min(mtu);
        let path = self.choose_path(len, None, ports)?;
        let psn = self.next_psn;
        self.next_psn = psn.wrapping_add(1);
        let msg = &mut self.msgs[key as usize];
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
        let rec = Record {
            msg: key,
            offset,
            len,
            path: path as u16,
            state: RecState::InFlight,
        };
        self.records.push_back(rec);
        stats.data_sent += 1;
        self.copy_walked = 0;
        self.sent_since_resend = self.sent_since_resend.saturating_add(1);
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
        if self.has_data() || self.sent_since_resend >= TAIL_COPY_MEMORY {
            return None;
        }
        while self.copy_walked < self.cfg.tail_copies {
            let psn = self.next_psn.wrapping_sub(1 + u32::from(self.copy_walked));
            let Some(rec) = self.record(psn).copied() else {
                self.copy_walked = self.cfg.tail_copies;
                return None;
            };
            if rec.state != RecState::InFlight {
                self.copy_walked += 1;
                continue;
            }
            let path = self
                .choose_path(rec.len, Some(rec.path), ports)
                .filter(|&p| p != usize::from(rec.path))?;
            self.copy_walked += 1;
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
        self.newest_sent_ns = now;
        let path_psn = self.paths[path].on_send_data(psn, rec.len, retransmission, now, rto);
        self.refresh(path);
        if !self.has_data() {
            self.drained_sent_ns = now;
        }

        let entropy = self.paths[path].entropy();
        if let Some(r) = self.record_mut(psn) {
            r.state = RecState::InFlight;
            r.path = path as u16;
        }
        let msg = &self.msgs[rec.msg as usize];
        let pkts = msg.len().div_ceil(self.mtu).max(1);
        let index = rec.offset / self.mtu;
        DataPlan {
            msg: rec.msg,
            conn_psn: psn,
            path: path as u16,
            path_psn,
            entropy,
            offset: rec.offset,
            len: rec.len,
            first: index == 0,
            last: index + 1 == pkts,
            retransmission,
        }
    }

    fn record(&self, psn: u32) -> Option<&Record> {
        let i = psn.wrapping_sub(self.rec_base);
        self.records.get(i as usize).filter(|_| i < 1 << 31)
    }

    fn record_mut(&mut self, psn: u32) -> Option<&mut Record> {
        let i = psn.wrapping_sub(self.rec_base);
        if i >= 1 << 31 {
            return None;
        }
        self.records.get_mut(i as usize)
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
        let advance = ack.conn_cum.wrapping_sub(self.peer_conn_cum);
        let outstanding = self.next_psn.wrapping_sub(self.peer_conn_cum);
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
        if !self.hardware_table {
            let mut fates = core::mem::take(&mut self.fate_buf);
            fates.clear();
            let p = &mut self.paths[i];
            let (acked, bytes) = p.on_ack(ack.path_cum, &ack.sack, |f| fates.push(f));
            // An RTT sample only from an ACK that acknowledged something new
            // (a data packet, or the PROBE that ends a quarantine): an older
            // or repeated ACK echoes a timestamp whose packet was already
            // counted.
            let new = acked > 0 || (v.quarantined && !self.paths[i].view().quarantined);
            let rtt = PathView::ack_rtt(now, ack.echo_ts, new);
            let rto = self.rto(i);
            self.paths[i].on_ack_feedback(now, rtt, ce_count, acked, bytes, rto);
            progressed = self.apply_fates(i, FateOrigin::Ack, &fates, stats);
            self.fate_buf = fates;
            self.repath_if_wanted(i, stats);
            self.refresh(i);
        }
        self.delivered_sent_ns = self.delivered_sent_ns.max(ack.echo_ts);
        self.rack(now, stats);
        if newest {
            // Credit and rate hint only from the newest ACK of the path, so
            // a reordered or replayed one cannot move them back.
            self.ack_rx_count[i] = ack.rx_count;
            self.peer_credit = ack.credit;
            self.rate_hint_mbps = ack.rate_hint;
        }
        if advance > 0 && advance <= outstanding {
            self.peer_conn_cum = ack.conn_cum;
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
        self.next_psn
    }

    /// The peer's cumulative acceptance point.
    pub fn peer_conn_cum(&self) -> u32 {
        self.peer_conn_cum
    }

    /// True when a response (`op`: READ_RESP or ATOMIC_RESP) on `stream` for
    /// `msg.msn` with `len` bytes belongs to an outstanding request of its kind:
    /// same message length, inside it.
    pub fn read_response_fits(
        &self,
        op: Opcode,
        stream: u16,
        msg: &metaroce_proto::MsgRepr,
        len: u32,
    ) -> bool {
        self.reads.get(&(stream, msg.msn)).is_some_and(|&key| {
            let m = self.msg(key);
            (op == Opcode::AtomicResp) == m.opcode.is_atomic_request()
                && msg.msg_len == m.msg_len()
                && msg.offset.checked_add(len).is_some_and(|e| e <= m.len)
        })
    }

    /// Something was delivered: the connection timer starts over.
    fn progressed(&mut self, now: u64) {
        self.conn_backoff = 0;
        self.conn_rto = if self.next_psn != self.peer_conn_cum || self.has_data() {
            now + self.policy.timeout_ns
        } else {
            u64::MAX
        };
    }

    /// Moves `path` to a new entropy value when its loss estimate says so, or
    /// its ECN estimate does and stands out from its sibling paths' (marks
    /// every path shares come from a common bottleneck, such as the receiver's
    /// link, which no route avoids). The move waits until the path has
    /// drained ([`Tx::settle_move`]), and one path drains at a time: the
    /// others take its share meanwhile.
    fn repath_if_wanted(&mut self, path: usize, stats: &mut Stats) {
        if self.draining.is_some() {
            return;
        }
        let v = self.paths[path].view();
        let lossy = v.wants_repath(f32::INFINITY, self.cfg.repath_loss_fraction);
        let limit = self.cfg.repath_ecn_fraction;
        let marked = v.wants_repath(limit, f32::INFINITY)
            && v.ecn_fraction() > self.sibling_ecn_fraction(path) + limit / 2.0;
        if lossy || marked {
            self.draining = Some(path as u8);
            stats.repaths += 1;
            self.settle_move(path);
        }
    }

    /// Performs `path`'s pending move once nothing sent on its old route is
    /// unresolved: packets on a new route would overtake those still queued
    /// on the old one, and a later path PSN acknowledged first declares the
    /// earlier ones lost (spec §5.8). The path takes no packets meanwhile.
    fn settle_move(&mut self, path: usize) {
        if self.draining == Some(path as u8) && self.paths[path].drained() {
            self.draining = None;
            let e = striped_entropy(&mut self.rng, path as u16);
            self.paths[path].move_to(e);
        }
    }

    /// Mean CE fraction of the connection's paths other than `path` (0 with
    /// one path).
    fn sibling_ecn_fraction(&self, path: usize) -> f32 {
        let others = self.paths.len() - 1;
        if others == 0 {
            return 0.0;
        }
        let sum: f32 = (self.paths.iter().enumerate())
            .filter(|&(i, _)| i != path)
            .map(|(_, p)| p.view().ecn_fraction())
            .sum();
        sum / others as f32
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
                    if mark_lost(
                        &mut self.records,
                        self.rec_base,
                        &mut self.retx,
                        conn_psn,
                        path,
                    ) {
                        match origin {
                            FateOrigin::Ack => stats.sack_losses += 1,
                            FateOrigin::Rack => stats.rack_losses += 1,
                            FateOrigin::Timeout => stats.timeout_losses += 1,
                        }
                    }
                }
                SlotFate::Acked { conn_psn } => {
                    if let Some(rec) = self.record_mut(conn_psn)
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
        self.refresh(i);
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
                self.repath_if_wanted(i, stats);
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
                self.refresh(i);
                return out.ok && out.psn == expected;
            }
            TableDone::Op(..) => self.paths[i].set_view(view),
        }
        self.refresh(i);
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
        let cum = self.peer_conn_cum;
        let rec = self.record(cum)?;
        if rec.state != RecState::InFlight {
            return None;
        }
        let path = usize::from(rec.path);
        let (psn, sent_ns) = self.paths.get(path)?.rack_head()?;
        let drained = self.drained_sent_ns;
        let before_drain = drained != u64::MAX && (drained as u32).wrapping_sub(sent_ns) < 1 << 31;
        (psn == cum && before_drain).then_some((path, u64::from(sent_ns)))
    }

    /// True when RACK judges every path (spec §5.5 step 6): nothing waits
    /// to be sent, or at most four packets per path ([`Tx::little_queued`])
    /// while no path is marked (a varying queue would make reordering look
    /// like loss).
    fn rack_every_path(&self) -> bool {
        !self.has_data() || (self.little_queued() && !self.any_marked())
    }

    /// True when some path is marked ([`PathView::marked`]).
    fn any_marked(&self) -> bool {
        debug_assert!(self.refreshed(), "a path changed without Tx::refresh");
        self.marked != 0
    }

    /// True when what waits to be cut is at most four packets per path: the
    /// sender is near the end of what it has to send (a ring collective's
    /// next step or two, not a stream of large messages).
    fn little_queued(&self) -> bool {
        let limit = 4 * u64::from(self.mtu) * self.paths.len() as u64;
        let mut left = 0u64;
        for &k in self.responses.iter().chain(&self.to_segment) {
            let m = &self.msgs[k as usize];
            left += u64::from(m.len().saturating_sub(m.sent_pkts * self.mtu));
            if left > limit {
                return false;
            }
        }
        true
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
            .then(|| self.timed_paths().map(|i| (i, None)));
        head.flatten().into_iter().chain(all.into_iter().flatten())
    }

    /// Time-based loss detection (see [`TxPath::on_rack`]) on what
    /// [`Tx::rack_scope`] names.
    fn rack(&mut self, now: u64, stats: &mut Stats) {
        let delivered = self.delivered_sent_ns;
        let mut fates = core::mem::take(&mut self.fate_buf);
        for (i, tail) in self.rack_scope() {
            if self.paths[i]
                .rack_deadline(delivered, self.newest_sent_ns, tail)
                .is_none_or(|d| d > now)
            {
                continue;
            }
            fates.clear();
            self.paths[i].on_rack_until(now, delivered, tail, |f| fates.push(f));
            self.refresh(i);
            self.apply_fates(i, FateOrigin::Rack, &fates, stats);
        }
        self.fate_buf = fates;
    }

    /// Drops records the receiver accepted and marks fully accepted messages done.
    fn retire_accepted(&mut self) {
        while self.rec_base != self.peer_conn_cum && self.records.pop_front().is_some() {
            self.rec_base = self.rec_base.wrapping_add(1);
        }
        while let Some(&key) = self.awaiting.front() {
            let m = &self.msgs[key as usize];
            let end = m.first_psn.wrapping_add(m.pkts);
            if self.peer_conn_cum.wrapping_sub(end) >= 1 << 31 {
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

    /// Applies a NACK.
    pub fn on_nack(&mut self, now: u64, nack: &NackRepr) {
        let Some(rec) = self.record(nack.conn_psn).copied() else {
            return;
        };
        match nack.reason {
            NackReason::ReceiverNotReady => {
                let msg = &mut self.msgs[rec.msg as usize];
                msg.rnr_retries = msg.rnr_retries.saturating_add(1);
                if self.policy.rnr_retry < 7 && msg.rnr_retries > self.policy.rnr_retry {
                    msg.status = Some(WcStatus::RnrRetryExcErr);
                    self.fatal = Some(WcStatus::RnrRetryExcErr);
                    return;
                }
                if let Some(r) = self.record_mut(nack.conn_psn)
                    && r.state != RecState::RnrWait
                {
                    r.state = RecState::RnrWait;
                    let due = now + u64::from(nack.detail.max(1)) * 1000;
                    self.rnr_wait.push_back((due, nack.conn_psn));
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
                self.msgs[rec.msg as usize].status = Some(status);
                self.fatal = Some(status);
            }
        }
    }

    /// Earliest timer of the sender. Adds the work it did (one plus the
    /// paths it examined) to `work`, the NIC's timer cost counter.
    pub fn next_deadline(&self, work: &mut u64) -> Option<u64> {
        debug_assert!(self.refreshed(), "a path changed without Tx::refresh");
        let fired = self.timers_fired_ns;
        let has_data = self.has_data();
        *work += 1 + u64::from(self.timed.count_ones());
        // One pass over the paths that may have a deadline (this runs
        // whenever the QP changes), with RACK's deadlines where
        // [`Tx::rack_scope`] has them: on every such path, or on the head of
        // the line's only.
        let (delivered, newest) = (self.delivered_sent_ns, self.newest_sent_ns);
        let every = self.rack_every_path();
        let head = if every { None } else { self.rack_head() };
        let mut earliest =
            head.and_then(|(i, sent)| self.paths[i].rack_deadline(delivered, newest, Some(sent)));
        for i in self.timed_paths() {
            let p = &self.paths[i];
            earliest = earlier(earliest, p.timer_deadline(fired));
            if every {
                earliest = earlier(earliest, p.rack_deadline(delivered, newest, None));
            }
        }
        let connection = [
            (self.conn_rto != u64::MAX).then_some(self.conn_rto),
            self.rnr_wait.front().map(|&(due, _)| due),
            (has_data && self.rate_hint_mbps > 0 && self.next_send_ns > fired)
                .then_some(self.next_send_ns),
        ];
        connection.into_iter().fold(earliest, earlier)
    }

    /// Fires due timers.
    pub fn on_timeout(&mut self, now: u64, stats: &mut Stats) {
        self.timers_fired_ns = now;
        self.rack(now, stats);
        for i in self.timed_paths() {
            let due = self.paths[i].rto_deadline().is_some_and(|d| d <= now);
            if !due {
                continue;
            }
            let entropy = striped_entropy(&mut self.rng, i as u16);
            let mut fates = core::mem::take(&mut self.fate_buf);
            fates.clear();
            self.paths[i].on_timeout(now, entropy, |f| fates.push(f));
            if self.draining == Some(i as u8) {
                // The timeout moved it.
                self.draining = None;
            }
            self.refresh(i);
            self.apply_fates(i, FateOrigin::Timeout, &fates, stats);
            self.fate_buf = fates;
            stats.quarantines += 1;
        }
        while self.rnr_wait.front().is_some_and(|&(due, _)| due <= now) {
            let (_, psn) = self.rnr_wait.pop_front().expect("checked");
            if let Some(r) = self.record_mut(psn)
                && r.state == RecState::RnrWait
            {
                r.state = RecState::Lost;
                self.retx.push_back(psn);
            }
        }
        if self.conn_rto != u64::MAX && self.conn_rto <= now {
            self.conn_backoff += 1;
            if self.conn_backoff > u32::from(self.policy.retry_cnt) {
                self.conn_rto = u64::MAX;
                self.fatal = Some(WcStatus::RetryExcErr);
                // The oldest unfinished message is the one that failed; the
                // rest will be flushed.
                let cum = self.peer_conn_cum;
                let failed = self
                    .record(cum)
                    .map(|r| r.msg)
                    .or(self.awaiting.front().copied())
                    .or(self.to_segment.front().copied());
                if let Some(key) = failed {
                    self.msgs[key as usize].status = Some(WcStatus::RetryExcErr);
                }
                return;
            }
            self.conn_rto = now + (self.policy.timeout_ns << self.conn_backoff.min(16));
            // Whatever blocks the cumulative point goes again, even if it
            // was acknowledged at the path level (a refused packet whose NACK was lost).
            let cum = self.peer_conn_cum;
            if let Some(r) = self.record_mut(cum)
                && matches!(r.state, RecState::InFlight | RecState::Delivered)
            {
                r.state = RecState::Lost;
                self.retx.push_back(cum);
                stats.conn_timeout_losses += 1;
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

    /// Fails the connection: the message with an error keeps it, every other
    /// outstanding work request completes with WR_FLUSH_ERR.
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
        self.records.clear();
        self.retx.clear();
        self.rnr_wait.clear();
        self.conn_rto = u64::MAX;
    }

    /// Marks a READ done once its request was accepted and its response bytes
    /// are all placed (only then may its slot and records go).
    pub fn complete_read_if_done(&mut self, key: u32) {
        let m = &mut self.msgs[key as usize];
        if m.accepted && m.read_seen && m.read_placed >= m.len && m.status.is_none() {
            m.status = Some(WcStatus::Success);
        }
    }

    /// Bytes of sender state per packet in flight (records + path slots).
    pub fn state_bytes(&self) -> usize {
        self.records.len() * size_of::<Record>()
            + self
                .paths
                .iter()
                .map(|p| p.slots_len() * SLOT_BYTES)
                .sum::<usize>()
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

/// Marks `conn_psn` lost if its latest transmission is the one on `path`
/// (an older copy's fate no longer matters) and queues it for retransmission.
fn mark_lost(
    records: &mut VecDeque<Record>,
    rec_base: u32,
    retx: &mut VecDeque<u32>,
    conn_psn: u32,
    path: usize,
) -> bool {
    let k = conn_psn.wrapping_sub(rec_base);
    let Some(rec) = records.get_mut(k as usize).filter(|_| k < 1 << 31) else {
        return false;
    };
    if rec.state != RecState::InFlight || usize::from(rec.path) != path {
        return false;
    }
    rec.state = RecState::Lost;
    retx.push_back(conn_psn);
    true
}

/// Tail copies are sent only within this many new packets after the last
/// retransmission (spec §5.6): on a fabric that has lost nothing lately
/// they would only add duplicates.
const TAIL_COPY_MEMORY: u16 = 4096;

/// Low bits of an entropy value that stay fixed per path ("stripes").
const STRIPE_MASK: u16 = 0x7;

/// A random entropy value from the dynamic port range for path `path`: its
/// low three bits are the path index's, and stay so when the path moves. A
/// multi-plane NIC that picks its plane from the low bits of the source port
/// (the model of `metaroce-fabric`'s multi-plane topology) then gets an equal
/// share of the paths on every plane (for 1, 2, 4 or 8 planes) instead of a
/// random split, and a path repaths within its plane. Within a plane, ECMP
/// still hashes the whole value.
pub(crate) fn striped_entropy(rng: &mut SmallRng, path: u16) -> u16 {
    (rng.gen_range(metaroce_proto::ENTROPY_PORTS) & !STRIPE_MASK) | (path & STRIPE_MASK)
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
