//! Verified Verbs traffic between two NICs: the one traffic generator and
//! checker of the hardware NIC's harnesses ([`crate::hw_pair`]: two RTL
//! NICs on a simulated fabric; `metaroce hdl interop`: an RTL NIC and a
//! soft NIC over UDP sockets). A harness gives it the two NICs as
//! [`TrafficNic`]s (an RTL NIC is a [`HwEnd`]) and calls
//! [`Traffic::step`] while it runs them.
//!
//! Each NIC's application posts WRITE (40 %), WRITE_IMM (15 %), SEND (25 %)
//! and READ (20 %) work requests to the other over the connections between
//! them, of 1 byte up to the configured size (log-uniform, or all of it);
//! with [`TrafficConfig::atomics`], a quarter of the WRITEs are 8-byte
//! FETCH_ADDs of 1 on a counter of the peer's instead, each value found
//! checked to be new and below the number of FETCH_ADDs sent to that
//! counter, and each counter at the end to equal that number (every
//! FETCH_ADD executed exactly once);
//! the peer's application posts the receive each SEND or WRITE_IMM
//! consumes just before the message (or, with
//! [`TrafficConfig::late_receives`], only once the receiver has refused a
//! packet for want of a receive: an RNR NACK). Source buffers are filled
//! with a pattern unique to the message; on completion the destination
//! bytes are compared with it: the peer's for a WRITE at the requester's
//! completion (an RTL NIC sends an ACK only after the DMA writes of the
//! packets it acknowledges, `docs/hardware.md` §17.3), the receive buffer
//! of a SEND and the written range of a WRITE_IMM at the receive
//! completion, the local buffer of a READ at its completion. Every message
//! must complete exactly once at its requester, and each SEND or WRITE_IMM
//! exactly once at its receiver, with success.
//!
//! The limits follow the RTL's tables: at most [`SLOTS`] messages in flight
//! from each NIC, SEND and WRITE_IMM on streams 0–3 (the streams with a
//! receive ring in the RTL). READs are not limited here: a hardware NIC's
//! engine keeps its READs in flight to the RTL's 2 entries itself
//! (`QpConfig::max_rd_atomic`). Each NIC's region holds [`SLOTS`] source slots and then [`SLOTS`]
//! destination slots of the largest message size and the 8-byte counter
//! ([`region_len`]); a message takes a source slot of the NIC whose bytes it
//! carries and a destination slot of the other (a READ or FETCH_ADD: a local
//! destination and a peer source slot).

use std::collections::{HashMap, HashSet, VecDeque};
use std::error::Error;
use std::fmt;

use metaroce_firmware::{
    Access, Completion, Event, Memory, MemoryRegion, QpConfig, RecvWr, SendOp, SendWr, Sge,
    WcOpcode, WcStatus,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::core_check::metaroce_hdl_codes::RQ_STREAMS;
use crate::hw_nic::HwNic;

/// Messages in flight from each NIC (each holds a source and a
/// destination slot).
pub const SLOTS: usize = 8;

/// An error of a NIC's Verbs call.
pub type NicError = Box<dyn Error + Send + Sync>;

/// Bytes of the region each NIC needs for messages of up to `max_size`
/// bytes: [`SLOTS`] source and [`SLOTS`] destination slots, then the
/// 8-byte counter the peer's FETCH_ADDs operate on (8-byte aligned).
pub fn region_len(max_size: u32) -> u64 {
    counter_off(max_size) + ATOMIC_LEN
}

/// Bytes of an atomic's value.
const ATOMIC_LEN: u64 = 8;

/// Offset of a NIC's counter in its region.
fn counter_off(max_size: u32) -> u64 {
    ((2 * SLOTS) as u64 * u64::from(max_size.max(1))).next_multiple_of(ATOMIC_LEN)
}

/// A NIC the traffic runs on, as its application sees it: one registered
/// region that holds the slots, one QP per connection, its completions.
pub trait TrafficNic {
    /// The region's first address.
    fn addr(&self) -> u64;
    /// The region's (lkey, rkey).
    fn keys(&self) -> (u32, u32);
    /// Copies `bytes` to offset `off` of the region (nothing if they do
    /// not fit: the check finds them wrong).
    fn write(&mut self, off: u64, bytes: &[u8]);
    /// Copies the region's bytes at offset `off` into `out`; false if they
    /// are not all in the region.
    fn read(&self, off: u64, out: &mut [u8]) -> bool;
    /// Posts a send work request on connection `conn`'s QP.
    fn post_send(&mut self, conn: usize, wr: SendWr) -> Result<(), NicError>;
    /// Posts a receive on connection `conn`'s QP.
    fn post_recv(&mut self, conn: usize, wr: RecvWr) -> Result<(), NicError>;
    /// Packets this NIC has refused so far because no receive was posted
    /// for them (each answered with an RNR NACK).
    fn rnr_refusals(&self) -> u64;
    /// Appends the completions and QP errors that are waiting to `out`.
    fn poll(&mut self, out: &mut Vec<Event>);
}

/// A NIC refused a work request of the traffic.
#[derive(Debug)]
pub struct PostError {
    /// The NIC (0 or 1).
    pub nic: usize,
    /// The call: `post_send` or `post_recv`.
    pub call: &'static str,
    /// The NIC's error.
    pub error: NicError,
}

impl fmt::Display for PostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NIC {}: {}: {}", self.nic, self.call, self.error)
    }
}

impl Error for PostError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.error)
    }
}

/// A traffic's settings.
#[derive(Clone, Debug)]
pub struct TrafficConfig {
    /// Messages to post and complete (both directions together).
    pub messages: usize,
    /// Largest message, bytes (the slot size).
    pub max_size: u32,
    /// Every message has `max_size` bytes (else sizes are log-uniform in
    /// 1..=`max_size`).
    pub fixed_size: bool,
    /// Connections (QPs of each NIC, connection `c` to connection `c`; at
    /// least 1).
    pub conns: usize,
    /// Streams per connection (at least 1); SEND and WRITE_IMM use the
    /// first 4 at most.
    pub streams: u16,
    /// Hold each receive a SEND or WRITE_IMM consumes until the receiving
    /// NIC has refused a packet for want of a receive
    /// ([`TrafficNic::rnr_refusals`]) since the message was posted; false:
    /// post it just before the message. Decided by the NICs' own events,
    /// not by time: however fast or slow either NIC runs, the first such
    /// message to each NIC is refused (RNR NACK) and retried.
    pub late_receives: bool,
    /// A quarter of the WRITEs are FETCH_ADDs instead (both NICs must
    /// implement atomics and their regions allow them; needs `max_size` ≥ 8).
    pub atomics: bool,
    /// Seed of the mix, sizes and streams.
    pub seed: u64,
}

/// What the traffic counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TrafficCounters {
    /// Messages completed (both directions).
    pub messages: u64,
    /// Of which WRITE, WRITE_IMM, SEND and READ.
    pub messages_by_opcode: [u64; 4],
    /// Bytes compared with their pattern and found right.
    pub bytes_verified: u64,
    /// Bytes compared and found wrong.
    pub bytes_wrong: u64,
    /// Completions with success (send and receive side, both NICs).
    pub completions_ok: u64,
    /// Completions with an error status, unexpected or duplicated.
    pub completions_error: u64,
    /// QPs that went to ERR (either NIC).
    pub qp_errors: u64,
    /// Payload bytes of completed messages.
    pub payload_bytes: u64,
    /// FETCH_ADDs completed (not in `messages_by_opcode`), each value found
    /// checked.
    pub fetch_adds: u64,
    /// FETCH_ADDs whose value found was seen before or beyond the number
    /// sent to that counter, and counters that at the end do not hold the
    /// number of FETCH_ADDs sent to them.
    pub atomic_errors: u64,
}

/// The opcodes, in the order of [`TrafficCounters::messages_by_opcode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Write,
    WriteImm,
    Send,
    Read,
    /// Adds 1 to the peer's counter; the value found lands in a local
    /// destination slot.
    FetchAdd,
}

impl Op {
    /// It consumes a receive at the peer.
    fn receives(self) -> bool {
        matches!(self, Op::Send | Op::WriteImm)
    }
}

/// A message in flight.
#[derive(Clone, Copy, Debug)]
struct Msg {
    /// The requesting NIC.
    from: usize,
    op: Op,
    len: u32,
    /// The requester's source (READ: destination) slot.
    local_slot: usize,
    /// The responder's destination (READ: source) slot.
    remote_slot: usize,
    /// Completed at the requester.
    send_done: bool,
    /// Completed at the responder (or nothing to complete there).
    recv_done: bool,
}

/// The pattern byte `i` of message `id`.
fn pattern(id: u64, i: usize) -> u8 {
    let x = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24) as u8;
    x ^ (i as u8).wrapping_mul(31) ^ (i >> 8) as u8
}

/// The applications of two NICs: they post the traffic and verify it.
pub struct Traffic {
    cfg: TrafficConfig,
    rng: SmallRng,
    msgs: HashMap<u64, Msg>,
    next_id: u64,
    posted: usize,
    /// Free source and destination slots of each NIC.
    free_src: [Vec<usize>; 2],
    free_dst: [Vec<usize>; 2],
    /// Receives each NIC gets later (`late_receives`): its refusal count
    /// when the message was posted, connection; in the order of their
    /// messages (a stream's receives are consumed in the order they were
    /// posted).
    late: [VecDeque<(u64, usize, RecvWr)>; 2],
    /// Events being handled (kept for its allocation).
    events: Vec<Event>,
    counters: TrafficCounters,
    /// FETCH_ADDs sent to each NIC's counter.
    fetch_adds_to: [u64; 2],
    /// The values each NIC's counter was found at.
    found: [HashSet<u64>; 2],
}

impl Traffic {
    /// A traffic with `cfg`, nothing posted yet.
    pub fn new(cfg: TrafficConfig) -> Self {
        let slots = || (0..SLOTS).rev().collect::<Vec<_>>();
        Self {
            rng: SmallRng::seed_from_u64(cfg.seed),
            msgs: HashMap::new(),
            next_id: 1,
            posted: 0,
            free_src: [slots(), slots()],
            free_dst: [slots(), slots()],
            late: Default::default(),
            events: Vec::new(),
            counters: TrafficCounters::default(),
            fetch_adds_to: [0; 2],
            found: Default::default(),
            cfg,
        }
    }

    /// What was counted so far.
    pub fn counters(&self) -> &TrafficCounters {
        &self.counters
    }

    /// Every message has been posted.
    pub fn all_posted(&self) -> bool {
        self.posted >= self.cfg.messages
    }

    /// Every message has completed.
    pub fn finished(&self) -> bool {
        self.counters.messages as usize >= self.cfg.messages
    }

    /// Takes the NICs' completions and verifies them, posts the late
    /// receives whose NIC has refused a packet since their message was
    /// posted, and posts new messages while slots allow. `nics` are NIC 0
    /// and NIC 1, the same two at every call.
    pub fn step(&mut self, mut nics: [&mut dyn TrafficNic; 2]) -> Result<(), PostError> {
        let mut events = std::mem::take(&mut self.events);
        for at in 0..2 {
            nics[at].poll(&mut events);
            for e in events.drain(..) {
                match e {
                    Event::Completion(c) => self.on_completion(&nics, at, &c),
                    Event::QpError { .. } => self.counters.qp_errors += 1,
                    // The traffic uses no shared receive queue.
                    Event::SrqLimitReached { .. } => {}
                }
            }
        }
        self.events = events;
        for nic in 0..2 {
            if self.late[nic].is_empty() {
                continue;
            }
            let refused = nics[nic].rnr_refusals();
            while let Some(&(at, conn, wr)) = self.late[nic].front() {
                if refused <= at {
                    break;
                }
                self.late[nic].pop_front();
                post_recv(&mut nics, nic, conn, wr)?;
            }
        }
        while !self.all_posted() {
            let from = self.rng.gen_range(0..2);
            if !self.post(&mut nics, from)? {
                break;
            }
        }
        Ok(())
    }

    fn slot_len(&self) -> u64 {
        u64::from(self.cfg.max_size.max(1))
    }

    fn src_off(&self, slot: usize) -> u64 {
        slot as u64 * self.slot_len()
    }

    fn dst_off(&self, slot: usize) -> u64 {
        (SLOTS + slot) as u64 * self.slot_len()
    }

    fn size(&mut self) -> u32 {
        let max = self.cfg.max_size.max(1);
        if self.cfg.fixed_size {
            return max;
        }
        let bits = self.rng.gen_range(0.0..=f64::from(max).log2());
        (2f64.powf(bits) as u32).clamp(1, max)
    }

    /// A message's operation: 40 % WRITE (30 % when atomics run, 10 %
    /// FETCH_ADD), 15 % WRITE_IMM, 25 % SEND, 20 % READ.
    fn pick_op(&mut self) -> Op {
        let atomics = self.cfg.atomics && u64::from(self.cfg.max_size) >= ATOMIC_LEN;
        match self.rng.gen_range(0..100) {
            0..10 if atomics => Op::FetchAdd,
            0..40 => Op::Write,
            40..55 => Op::WriteImm,
            55..80 => Op::Send,
            _ => Op::Read,
        }
    }

    /// A message's stream: one with a receive queue for an operation that
    /// consumes a receive.
    fn pick_stream(&mut self, op: Op) -> u16 {
        if op.receives() {
            self.rng
                .gen_range(0..(RQ_STREAMS as u16).min(self.cfg.streams))
        } else {
            self.rng.gen_range(0..self.cfg.streams)
        }
    }

    /// The work request's operation for message `id` of kind `op` aimed at
    /// `target`'s slot `remote_slot` (its destination slot, or its source
    /// slot for a READ).
    fn send_op(&self, op: Op, target: &dyn TrafficNic, remote_slot: usize, id: u64) -> SendOp {
        let rkey = target.keys().1;
        let remote_dst = target.addr() + self.dst_off(remote_slot);
        match op {
            Op::Write => SendOp::Write {
                remote_va: remote_dst,
                rkey,
            },
            Op::WriteImm => SendOp::WriteImm {
                remote_va: remote_dst,
                rkey,
                imm: id as u32,
            },
            Op::Send => SendOp::Send,
            Op::Read => SendOp::Read {
                remote_va: target.addr() + self.src_off(remote_slot),
                rkey,
            },
            Op::FetchAdd => SendOp::FetchAdd {
                remote_va: target.addr() + counter_off(self.cfg.max_size),
                rkey,
                add: 1,
            },
        }
    }

    /// Posts one message from NIC `from`; false when no slot is free.
    fn post(
        &mut self,
        nics: &mut [&mut dyn TrafficNic; 2],
        from: usize,
    ) -> Result<bool, PostError> {
        let to = 1 - from;
        let conn = self.rng.gen_range(0..self.cfg.conns);
        let op = self.pick_op();
        // A READ (FETCH_ADD) fills a local destination slot from a peer
        // source slot (counter); the others send a local source slot to a
        // peer destination slot.
        let reads = matches!(op, Op::Read | Op::FetchAdd);
        let (local, remote) = if reads {
            (&mut self.free_dst[from], &mut self.free_src[to])
        } else {
            (&mut self.free_src[from], &mut self.free_dst[to])
        };
        let (Some(&local_slot), Some(&remote_slot)) = (local.last(), remote.last()) else {
            return Ok(false);
        };
        local.pop();
        remote.pop();
        let len = if op == Op::FetchAdd {
            ATOMIC_LEN as u32
        } else {
            self.size()
        };
        let id = self.next_id;
        self.next_id += 1;
        let stream = self.pick_stream(op);
        // The source holds the message's pattern (a FETCH_ADD has none).
        let (src_nic, src_off) = if op == Op::Read {
            (to, self.src_off(remote_slot))
        } else {
            (from, self.src_off(local_slot))
        };
        if op != Op::FetchAdd {
            let bytes: Vec<u8> = (0..len as usize).map(|i| pattern(id, i)).collect();
            nics[src_nic].write(src_off, &bytes);
        }
        let remote_dst = nics[to].addr() + self.dst_off(remote_slot);
        let to_lkey = nics[to].keys().0;
        if op.receives() {
            // The receive it consumes: a SEND's buffer, none for WRITE_IMM.
            let wr = RecvWr {
                wr_id: id,
                sgl: Sge {
                    addr: remote_dst,
                    len: if op == Op::Send { len } else { 0 },
                    lkey: to_lkey,
                }
                .into(),
                stream,
            };
            if self.cfg.late_receives {
                let at = nics[to].rnr_refusals();
                self.late[to].push_back((at, conn, wr));
            } else {
                post_recv(nics, to, conn, wr)?;
            }
        }
        let local_off = if reads {
            self.dst_off(local_slot)
        } else {
            self.src_off(local_slot)
        };
        let sge = Sge {
            addr: nics[from].addr() + local_off,
            len,
            lkey: nics[from].keys().0,
        };
        let wr = SendWr {
            wr_id: id,
            op: self.send_op(op, &*nics[to], remote_slot, id),
            sgl: sge.into(),
            signaled: true,
            solicited: false,
            stream,
        };
        nics[from].post_send(conn, wr).map_err(|error| PostError {
            nic: from,
            call: "post_send",
            error,
        })?;
        if op == Op::FetchAdd {
            self.fetch_adds_to[to] += 1;
        }
        self.msgs.insert(
            id,
            Msg {
                from,
                op,
                len,
                local_slot,
                remote_slot,
                send_done: false,
                recv_done: !op.receives(),
            },
        );
        self.posted += 1;
        Ok(true)
    }

    /// Compares `len` bytes at offset `off` of `nic`'s region with message
    /// `id`'s pattern (all wrong if they cannot be read).
    fn verify(&mut self, nic: &dyn TrafficNic, off: u64, id: u64, len: u32) {
        let mut got = vec![0; len as usize];
        let wrong = if nic.read(off, &mut got) {
            got.iter()
                .enumerate()
                .filter(|&(i, &b)| b != pattern(id, i))
                .count() as u64
        } else {
            u64::from(len)
        };
        self.counters.bytes_wrong += wrong;
        self.counters.bytes_verified += u64::from(len) - wrong;
    }

    fn on_completion(&mut self, nics: &[&mut dyn TrafficNic; 2], at: usize, c: &Completion) {
        let Some(mut m) = self.msgs.get(&c.wr_id).copied() else {
            self.counters.completions_error += 1;
            return;
        };
        let to = 1 - m.from;
        let expected_at = if c.is_recv { to } else { m.from };
        let already = if c.is_recv { m.recv_done } else { m.send_done };
        if c.status != WcStatus::Success || at != expected_at || already {
            self.counters.completions_error += 1;
            return;
        }
        self.counters.completions_ok += 1;
        if c.is_recv {
            m.recv_done = true;
            if m.op == Op::Send && c.byte_len != m.len {
                self.counters.completions_error += 1;
            }
            if m.op == Op::WriteImm && c.imm != Some(c.wr_id as u32) {
                self.counters.completions_error += 1;
            }
            // SEND: the receive buffer; WRITE_IMM: the written range.
            self.verify(&*nics[to], self.dst_off(m.remote_slot), c.wr_id, m.len);
        } else {
            m.send_done = true;
            match m.op {
                // The peer acknowledged after its DMA writes: the bytes
                // are there now.
                Op::Write => {
                    self.verify(&*nics[to], self.dst_off(m.remote_slot), c.wr_id, m.len);
                }
                Op::Read => {
                    if c.opcode != WcOpcode::Read {
                        self.counters.completions_error += 1;
                    }
                    let off = self.dst_off(m.local_slot);
                    self.verify(&*nics[m.from], off, c.wr_id, m.len);
                }
                Op::FetchAdd => {
                    if c.opcode != WcOpcode::FetchAdd {
                        self.counters.completions_error += 1;
                    }
                    let off = self.dst_off(m.local_slot);
                    let v = read_u64(&*nics[m.from], off);
                    let new =
                        v.is_some_and(|v| v < self.fetch_adds_to[to] && self.found[to].insert(v));
                    if !new {
                        self.counters.atomic_errors += 1;
                    }
                }
                Op::WriteImm | Op::Send => {}
            }
        }
        if !(m.send_done && m.recv_done) {
            self.msgs.insert(c.wr_id, m);
            return;
        }
        self.msgs.remove(&c.wr_id);
        let n = &mut self.counters;
        n.messages += 1;
        match m.op {
            Op::FetchAdd => n.fetch_adds += 1,
            op => n.messages_by_opcode[op as usize] += 1,
        }
        n.payload_bytes += u64::from(m.len);
        if self.finished() {
            // Every FETCH_ADD completed: each counter holds their number.
            let at = counter_off(self.cfg.max_size);
            for (nic, &sent) in nics.iter().zip(&self.fetch_adds_to) {
                if sent > 0 && read_u64(&**nic, at) != Some(sent) {
                    self.counters.atomic_errors += 1;
                }
            }
        }
        if matches!(m.op, Op::Read | Op::FetchAdd) {
            self.free_dst[m.from].push(m.local_slot);
            self.free_src[to].push(m.remote_slot);
        } else {
            self.free_src[m.from].push(m.local_slot);
            self.free_dst[to].push(m.remote_slot);
        }
    }
}

/// The 8-byte integer (host order) at offset `off` of `nic`'s region.
fn read_u64(nic: &dyn TrafficNic, off: u64) -> Option<u64> {
    let mut b = [0u8; ATOMIC_LEN as usize];
    nic.read(off, &mut b).then(|| u64::from_ne_bytes(b))
}

/// Posts `wr` on NIC `nic`'s connection `conn`.
fn post_recv(
    nics: &mut [&mut dyn TrafficNic; 2],
    nic: usize,
    conn: usize,
    wr: RecvWr,
) -> Result<(), PostError> {
    nics[nic].post_recv(conn, wr).map_err(|error| PostError {
        nic,
        call: "post_recv",
        error,
    })
}

/// A hardware NIC as a [`TrafficNic`]: its whole host memory is the region,
/// one QP per connection.
pub struct HwEnd {
    /// The NIC.
    pub nic: HwNic,
    /// Its host memory, registered.
    pub mr: MemoryRegion,
    /// The QP of each connection (the harness connects them).
    pub qpns: Vec<u32>,
}

impl HwEnd {
    /// Registers `nic`'s whole host memory (local write, remote write, read
    /// and atomics) in a new protection domain and creates `conns` QPs with
    /// `qp` in it; an error when the RTL's tables are full.
    pub fn new(mut nic: HwNic, qp: &QpConfig, conns: usize) -> Result<Self, NicError> {
        let pd = nic.alloc_pd();
        let (base, len) = (nic.mem().base(), nic.mem().len() as u64);
        let access = Access::LOCAL_WRITE
            | Access::REMOTE_WRITE
            | Access::REMOTE_READ
            | Access::REMOTE_ATOMIC;
        let mr = nic.register_mr(pd, base, len, access)?;
        let qpns = (0..conns)
            .map(|_| nic.create_qp(pd, qp.clone()))
            .collect::<Result<_, _>>()?;
        Ok(Self { nic, mr, qpns })
    }

    /// The QP of connection `conn`.
    fn qpn(&self, conn: usize) -> Result<u32, NicError> {
        self.qpns
            .get(conn)
            .copied()
            .ok_or_else(|| format!("no connection {conn}").into())
    }
}

impl TrafficNic for HwEnd {
    fn addr(&self) -> u64 {
        self.mr.addr
    }

    fn keys(&self) -> (u32, u32) {
        (self.mr.lkey, self.mr.rkey)
    }

    fn write(&mut self, off: u64, bytes: &[u8]) {
        let addr = self.mr.addr + off;
        if self.mr.contains(addr, bytes.len() as u64) {
            self.nic.mem_mut().write(addr, bytes);
        }
    }

    fn read(&self, off: u64, out: &mut [u8]) -> bool {
        let addr = self.mr.addr + off;
        if !self.mr.contains(addr, out.len() as u64) {
            return false;
        }
        out.copy_from_slice(self.nic.mem().slice(addr, out.len()));
        true
    }

    fn post_send(&mut self, conn: usize, wr: SendWr) -> Result<(), NicError> {
        let qpn = self.qpn(conn)?;
        Ok(self.nic.post_send(qpn, wr)?)
    }

    fn post_recv(&mut self, conn: usize, wr: RecvWr) -> Result<(), NicError> {
        let qpn = self.qpn(conn)?;
        Ok(self.nic.post_recv(qpn, wr)?)
    }

    fn rnr_refusals(&self) -> u64 {
        // The firmware counts each RNR verdict of the RTL it handles.
        self.nic.engine().drops().receiver_not_ready
    }

    fn poll(&mut self, out: &mut Vec<Event>) {
        while let Some(e) = self.nic.poll_event() {
            out.push(e);
        }
    }
}
