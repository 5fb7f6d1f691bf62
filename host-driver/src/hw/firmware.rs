//! The firmware on the host CPU: the engine (`Datapath::Hardware`) driving the device
//! through its queues in host memory, as `metaroce_sim_tb::hw_nic` drives a `NicCore`'s
//! ports. No BAR0 access is on the per-packet path but one `PROD` doorbell per batch.
//!
//! * **tables**: [`Tables`] says which words to write; they go into the TX queue as
//!   kind-1 entries, so they take effect in order with the descriptors (a READ's entry
//!   before its request, a path's entropy before its packet) and cost no BAR write;
//! * **TX table**: the engine's operations go into the TX queue as kind-2 entries,
//!   in order with the descriptors; each one's fate events and result (with the slot's
//!   state, read by the device in the cycle the result appears) come back in the event
//!   ring, and the result goes to `Nic::handle_table_result` at once. While operations
//!   are in flight, what else the device reports waits in an inbox, and no timer fires
//!   and no packet is taken, as in the simulator's firmware model;
//! * **transmit**: each descriptor of `Nic::poll_hardware` becomes a kind-0 entry whose
//!   payload address is the application buffer's (synced for the device first), after
//!   the entries of the table words and operations it caused; firmware datagrams go
//!   into the firmware TX queue; one doorbell per queue per round;
//! * **receive**: the event ring is consumed by phase bit alone (`PROD` is never
//!   read, `CONS` written back once a quarter of the ring is consumed): verdicts go to
//!   `Nic::handle_placed` (after `sync_for_cpu` of the range the event names),
//!   verdict-10 datagrams come from the firmware receive ring to `Nic::handle_datagram`,
//!   ACK receiver results and their fates to `Nic::handle_table_result`.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use metaroce_firmware::datapath::{HwTransmit, TableDone, TableRequest, TxDescriptor};
use metaroce_firmware::{
    Event, Memory, Nic, PathView, QpState, RxMeta, SlotFate, TableOutcome, Transmit,
};
use metaroce_proto::Opcode;

use super::codes::{core, regs};
use super::regs::Blocks;
use super::rings::{RxRing, TxRing};
use super::tables::{self, Addresses, OpInputs, ResultEntry, SlotState, Tables, VerdictFields};
use super::timing::{DriverTime, TimedDevice, ns_since};
use super::{DeviceConfig, DriverError, DriverStats};
use crate::device::{Device, DeviceError, monotonic_ns};
use crate::hostmem::MemoryMap;

/// log2 of the entries of each ring.
const TXQ_LOG2: u32 = 8;
const FTQ_LOG2: u32 = 6;
const EVQ_LOG2: u32 = 10;
const FRQ_LOG2: u32 = 8;
/// Longest the driver waits for the device to take TX queue entries before it gives
/// up on the device.
const QUEUE_TIMEOUT: Duration = Duration::from_secs(2);
/// Packets taken from the engine per round at most.
const TX_BATCH: usize = 64;
/// Interrupt moderation per vector, (coalesce, hold-off cycles): vector 0 (events) at
/// once for a table result (two entries), else after 64 cycles; vector 1 (firmware
/// datagrams) at once; vector 2 (queue entries consumed) after 16 or 2,000 cycles.
const MODERATION: [(u32, u32); 3] = [(2, 64), (1, 0), (16, 2000)];

/// What a firmware round left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    /// It did something; there may be more.
    Busy,
    /// TX table operations are in flight: their results come soon.
    Waiting,
    /// Nothing to do until the device reports, a timer fires or the application acts.
    Idle,
}

/// What the device reported that the engine takes when no table operation is in
/// flight.
#[derive(Debug)]
enum Input {
    /// A verdict event (not verdict 10) and the placement address it carries.
    Verdict(VerdictFields, Option<u64>),
    /// A verdict-10 datagram from the firmware receive ring, with its source port.
    Datagram(Vec<u8>, u16),
    /// The ACK receiver applied an ACK to a slot.
    AckApplied {
        slot: usize,
        pkts: u32,
        bytes: u32,
        fates: Vec<SlotFate>,
        view: PathView,
    },
}

/// The engine's memory on the hardware data path, for the firmware's own accesses (an
/// atomic's read and write at its target, an ATOMIC_RESP's value into its buffer): host
/// memory, with each write synced for the device after it, so that the device (and a
/// later `sync_for_cpu` of the range) sees the firmware's bytes. Reads need no sync:
/// every placement was synced for the CPU when its event was handled, before the
/// packets after it.
struct Coherent<'a> {
    map: &'a mut MemoryMap,
    dev: &'a mut TimedDevice,
    /// A sync the device refused.
    failed: Option<DeviceError>,
}

impl Memory for Coherent<'_> {
    fn read(&mut self, addr: u64, out: &mut [u8]) {
        self.map.read(addr, out);
    }

    fn write(&mut self, addr: u64, data: &[u8]) {
        self.map.write(addr, data);
        if let Err(e) = self.dev.sync_for_device(addr, data.len()) {
            self.failed.get_or_insert(e);
        }
    }
}

/// Runs `f`, adding its time to `acc`.
fn timed<R>(acc: &mut u64, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    *acc += ns_since(t);
    r
}

/// The firmware's state (everything but the engine and the memory map, which the
/// Verbs layer shares).
pub(crate) struct Firmware {
    pub(crate) dev: TimedDevice,
    txq: TxRing,
    ftq: TxRing,
    evq: RxRing,
    frq: RxRing,
    tables: Tables,
    cfg: DeviceConfig,
    /// The TX builder's peer as written.
    peer: Option<(IpAddr, u16)>,
    /// Per QP: the state the RTL's entry was last written for.
    qp_states: Vec<(u32, QpState)>,
    /// Regions mapped for the device: (lkey, addr, len).
    mapped: Vec<(u32, u64, u64)>,
    /// TX table operations in the TX queue whose results have not come back, oldest
    /// first, with their slots.
    in_flight: VecDeque<(usize, TableRequest)>,
    /// Fates of the oldest operation in flight (they come before its result).
    op_fates: Vec<SlotFate>,
    inbox: VecDeque<Input>,
    /// Fates of an ACK the hardware applied, until its type-2 entry.
    ack_fates: Vec<SlotFate>,
    /// Verdict-10 events whose datagram has not come up on the firmware receive
    /// ring yet.
    fw_pending: u32,
    clock: Instant,
    pub(crate) stats: DriverStats,
    pub(crate) time: DriverTime,
    buf: Vec<u8>,
    /// Engine events for the application.
    pub(crate) events: VecDeque<Event>,
}

impl Firmware {
    /// Brings the device up: rings, interrupt moderation, front end port, address
    /// registers and global table words.
    pub(crate) fn start(
        dev: Box<dyn Device>,
        b: Blocks,
        tx_slots: usize,
        cfg: DeviceConfig,
    ) -> Result<Firmware, DriverError> {
        let mut dev = TimedDevice::new(dev);
        let d = &mut dev;
        let txq = TxRing::new(d, b.txq, TXQ_LOG2, regs::TXQ_ENTRY)?;
        let ftq = TxRing::new(d, b.ftq, FTQ_LOG2, regs::FTQ_ENTRY)?;
        let evq = RxRing::new(d, b.evq, EVQ_LOG2, regs::EVQ_ENTRY, regs::EVQ_ENTRY - 8)?;
        let frq = RxRing::new(d, b.frq, FRQ_LOG2, regs::FRQ_ENTRY, regs::FW_SLOT_BYTES)?;
        let mut fw = Firmware {
            dev,
            txq,
            ftq,
            evq,
            frq,
            tables: Tables::new(tx_slots),
            cfg,
            peer: None,
            qp_states: Vec::new(),
            mapped: Vec::new(),
            in_flight: VecDeque::new(),
            op_fates: Vec::new(),
            inbox: VecDeque::new(),
            ack_fates: Vec::new(),
            fw_pending: 0,
            clock: Instant::now(),
            stats: DriverStats::default(),
            time: DriverTime::default(),
            buf: vec![0; 4096 + 256],
            events: VecDeque::new(),
        };
        fw.dev.write32(
            b.cfg + u32::from(regs::cfg::ETH_PORT),
            fw.cfg.local.port().into(),
        )?;
        let mut words = Vec::new();
        Tables::write_globals(fw.cfg.local.ip(), fw.cfg.mtu, &mut |a, d| {
            words.push((a, d))
        });
        fw.cfg_writes(&words)?;
        fw.txq.doorbell(&mut fw.dev)?;
        let stride = u32::from(regs::irq::CTRL1 - regs::irq::CTRL0);
        for (v, (coalesce, holdoff)) in MODERATION.into_iter().enumerate() {
            let r = |off: u16| b.irq + u32::from(off) + v as u32 * stride;
            fw.dev.write32(r(regs::irq::HOLDOFF0), holdoff)?;
            fw.dev.write32(r(regs::irq::COALESCE0), coalesce)?;
            fw.dev.write32(r(regs::irq::CTRL0), 1)?;
        }
        Ok(fw)
    }

    fn now(&self) -> u64 {
        if self.cfg.monotonic_clock {
            monotonic_ns()
        } else {
            self.clock.elapsed().as_nanos() as u64
        }
    }

    /// Writes the next TX queue entry, waiting for room when the queue is full.
    fn txq_push(&mut self, words: &[u64]) -> Result<(), DriverError> {
        if self.txq.room(&mut self.dev)? == 0 {
            self.txq.doorbell(&mut self.dev)?;
            let start = Instant::now();
            while self.txq.room(&mut self.dev)? == 0 {
                if start.elapsed() > QUEUE_TIMEOUT {
                    return Err(DriverError::Protocol(format!(
                        "TX queue: the device took no entry for {QUEUE_TIMEOUT:?}"
                    )));
                }
                std::thread::yield_now();
            }
        }
        self.txq.push(words, &[]);
        Ok(())
    }

    /// Rings the TX queue's doorbell and waits until the device has taken every entry
    /// (before memory a queued entry may still refer to is unmapped).
    fn flush_txq(&mut self) -> Result<(), DriverError> {
        self.txq.doorbell(&mut self.dev)?;
        let start = Instant::now();
        loop {
            self.txq.refresh(&mut self.dev)?;
            if self.txq.pending() == 0 {
                return Ok(());
            }
            if start.elapsed() > QUEUE_TIMEOUT {
                return Err(DriverError::Protocol(format!(
                    "TX queue: {} entries not taken after {QUEUE_TIMEOUT:?}",
                    self.txq.pending()
                )));
            }
            std::thread::yield_now();
        }
    }

    /// Table words as kind-1 TX queue entries (in order with what is queued).
    fn cfg_writes(&mut self, words: &[(u16, u64)]) -> Result<(), DriverError> {
        for &(addr, data) in words {
            self.txq_push(&tables::cfg_words(addr, data))?;
            self.stats.cfg_writes += 1;
        }
        Ok(())
    }

    /// After a control operation (or any engine call): mirrors new and removed
    /// regions and QPs, writes a QP's entry when it reaches RTR (and points the TX
    /// builder at its peer), syncs rings and READ entries, and queues the engine's
    /// table operations, all as TX queue entries (the caller rings the doorbell).
    pub(crate) fn follow_engine(&mut self, nic: &mut Nic) -> Result<(), DriverError> {
        let t = Instant::now();
        let r = self.follow(nic);
        self.time.busy_ns += ns_since(t);
        r
    }

    fn follow(&mut self, nic: &mut Nic) -> Result<(), DriverError> {
        let now = self.now();
        let mut words = Vec::new();
        // Regions: map for the device and mirror in the MR table.
        let regions: Vec<_> = nic.memory_regions().copied().collect();
        let gone: Vec<_> = self
            .mapped
            .iter()
            .filter(|m| !regions.iter().any(|r| r.lkey == m.0))
            .copied()
            .collect();
        if !gone.is_empty() {
            for &(lkey, ..) in &gone {
                self.tables.remove_mr(lkey, &mut |a, d| words.push((a, d)));
            }
            // The MR entries leave the device before their memory does.
            self.cfg_writes(&std::mem::take(&mut words))?;
            self.flush_txq()?;
            for (lkey, addr, len) in gone {
                self.dev.unmap_dma(addr, len as usize)?;
                self.mapped.retain(|m| m.0 != lkey);
            }
        }
        let mut added = false;
        for r in regions {
            if self.mapped.iter().any(|m| m.0 == r.lkey) {
                continue;
            }
            self.dev.map_dma(r.addr, r.len as usize)?;
            self.mapped.push((r.lkey, r.addr, r.len));
            if self
                .tables
                .add_mr(&r, &mut |a, d| words.push((a, d)))
                .is_err()
            {
                self.stats.table_full += 1;
            }
            added = true;
        }
        if added {
            // As with `ibv_reg_mr`, a region is usable the moment its registration
            // returns: a peer may use its rkey at once, so the MR entry must be in the
            // device's table by then, not queued behind descriptors and table
            // operations (a request meeting no entry is a fatal remote access NACK).
            self.cfg_writes(&std::mem::take(&mut words))?;
            self.flush_txq()?;
        }
        // QPs.
        let qpns: Vec<u32> = nic.qpns().collect();
        let stale: Vec<u32> = self.tables.qpns().filter(|q| !qpns.contains(q)).collect();
        if nic.lingering_qps() == 0 {
            for q in stale {
                self.tables.remove_qp(q, &mut |a, d| words.push((a, d)));
                self.qp_states.retain(|s| s.0 != q);
            }
        }
        for &q in &qpns {
            let Some((state, ..)) = nic.qp_entry(q) else {
                continue;
            };
            if !self.tables.qpns().any(|t| t == q) {
                if self.tables.add_qp(q).is_err() {
                    self.stats.table_full += 1;
                    continue;
                }
                self.qp_states.push((q, QpState::Reset));
            }
            let Some(seen) = self.qp_states.iter_mut().find(|s| s.0 == q) else {
                continue;
            };
            let was = std::mem::replace(&mut seen.1, state);
            let connected = |s: QpState| matches!(s, QpState::Rtr | QpState::Rts);
            // Written in full when the QP connects (it may pass RTR between two looks).
            if connected(state) && !connected(was) {
                if let Some((_, _, _, Some(remote))) = nic.qp_entry(q) {
                    self.set_peer(remote.ip, remote.udp_port, &mut words);
                }
                self.tables
                    .write_qp_entry(nic, q, now, &mut |a, d| words.push((a, d)));
            }
        }
        self.tables.sync(nic, now, &mut |a, d| words.push((a, d)));
        // Table operations: a path's slot-map word (its `Init`) goes in before them.
        let mut ops = Vec::new();
        while let Some(req) = timed(&mut self.time.engine_ns, || nic.poll_table_op()) {
            match self.tables.slot_for(&req, &mut |a, d| words.push((a, d))) {
                Ok(slot) => ops.push((slot, req)),
                Err(_) => self.stats.interface_errors += 1,
            }
        }
        self.cfg_writes(&words)?;
        for (slot, req) in ops {
            self.txq_push(&tables::op_words(slot, &OpInputs::from_op(&req.op)))?;
            self.in_flight.push_back((slot, req));
            self.stats.table_ops += 1;
            self.time.table_ops += 1;
        }
        while let Some(e) = nic.poll_event() {
            self.events.push_back(e);
        }
        Ok(())
    }

    /// Points the TX builder at `ip`/`port` (it has one peer).
    fn set_peer(&mut self, ip: IpAddr, port: u16, words: &mut Vec<(u16, u64)>) {
        if self.peer == Some((ip, port)) {
            return;
        }
        let a = Addresses {
            local_mac: self.cfg.mac,
            peer_mac: self.cfg.peer_mac,
            local_ip: self.cfg.local.ip(),
            peer_ip: ip,
            dst_port: port,
            ttl: 64,
            dscp: 0,
        };
        if Tables::write_addresses(&a, &mut |x, d| words.push((x, d))) {
            self.peer = Some((ip, port));
        } else {
            self.stats.interface_errors += 1;
        }
    }

    /// One round of the firmware: events (table results go to the engine at once),
    /// then, while no table operation is in flight, what the device reported, timers
    /// and transmit; one doorbell per queue at the end.
    pub(crate) fn round(
        &mut self,
        nic: &mut Nic,
        memory: &mut MemoryMap,
    ) -> Result<Progress, DriverError> {
        let t = Instant::now();
        self.time.rounds += 1;
        let mut did = false;
        let mut sent = 0;
        loop {
            did |= self.read_events(nic)?;
            if !self.in_flight.is_empty() {
                break;
            }
            if let Some(input) = self.inbox.pop_front() {
                self.handle_input(nic, memory, input)?;
                did = true;
                continue;
            }
            let now = self.now();
            let due = timed(&mut self.time.engine_ns, || {
                nic.poll_timeout().is_some_and(|t| t <= now)
            });
            if due {
                timed(&mut self.time.engine_ns, || nic.handle_timeout(now, memory));
                self.follow(nic)?;
                did = true;
                continue;
            }
            if sent < TX_BATCH && self.transmit_one(nic)? {
                sent += 1;
                did = true;
                continue;
            }
            break;
        }
        self.txq.doorbell(&mut self.dev)?;
        self.ftq.doorbell(&mut self.dev)?;
        self.evq.release(&mut self.dev)?;
        self.frq.release(&mut self.dev)?;
        self.time.busy_ns += ns_since(t);
        Ok(if !self.in_flight.is_empty() {
            Progress::Waiting
        } else if did {
            Progress::Busy
        } else {
            Progress::Idle
        })
    }

    /// Consumes the event entry `w` (checking its index).
    fn take_event(&mut self, w: &[u64; 8]) {
        self.evq.advance();
        self.stats.events += 1;
        if w[7] as u32 != self.evq.index().wrapping_sub(1) {
            self.stats.interface_errors += 1;
        }
    }

    /// Reads the event ring (and the datagrams of verdict-10 events from the firmware
    /// receive ring): table results go to the engine, the rest to the inbox.
    fn read_events(&mut self, nic: &mut Nic) -> Result<bool, DriverError> {
        let mut any = false;
        loop {
            // A verdict-10 event's datagram may land after the event itself.
            while self.fw_pending > 0 {
                let mut bytes = vec![0u8; regs::FW_SLOT_BYTES];
                let Some(hdr) = self.frq.next_bytes(&mut bytes) else {
                    break;
                };
                self.frq.advance();
                self.fw_pending -= 1;
                any = true;
                let len = (hdr & 0xFFFF) as usize;
                let src_port = (hdr >> 16) as u16;
                let cut = hdr >> 32 & 1 == 1;
                if cut || len > bytes.len() {
                    self.stats.fw_rx_truncated += 1;
                    continue;
                }
                bytes.truncate(len);
                self.inbox.push_back(Input::Datagram(bytes, src_port));
            }
            if self.fw_pending > 0 {
                return Ok(any);
            }
            let Some(w) = self.evq.next_words::<8>() else {
                return Ok(any);
            };
            let ty = (w[7] >> 56 & 0xF) as u8;
            // A result and its view entry are taken together.
            let view = if ty == regs::EV_ACKRX || ty == regs::EV_OP_RESULT {
                let Some(v) = self.evq.peek_words::<8>(1) else {
                    return Ok(any);
                };
                self.take_event(&w);
                self.take_event(&v);
                if (v[7] >> 56 & 0xF) as u8 != regs::EV_VIEW {
                    self.stats.interface_errors += 1;
                }
                SlotState::from_event(&w, &v).to_view()
            } else {
                self.take_event(&w);
                PathView::default()
            };
            any = true;
            match ty {
                regs::EV_VERDICT => {
                    let v = VerdictFields {
                        dst_qpn: w[0] as u32,
                        opcode: (w[0] >> 32) as u8,
                        flags: (w[0] >> 48) as u16,
                        path_psn: w[1] as u32,
                        path: (w[1] >> 32) as u16,
                        stream: (w[1] >> 48) as u16,
                        timestamp: w[2],
                        msn: w[3] as u32,
                        recv_idx: (w[3] >> 32) as u32,
                        imm: w[4] as u32,
                        conn_psn: (w[4] >> 32) as u32,
                        offset: w[5] as u32,
                        msg_len: (w[5] >> 32) as u32,
                        len: w[6] as u16,
                        src_port: (w[6] >> 16) as u16,
                        code: (w[6] >> 32 & 0x1F) as u8,
                    };
                    if v.code == core::V_FIRMWARE {
                        self.fw_pending += 1;
                    } else {
                        self.inbox
                            .push_back(Input::Verdict(v, tables::placed_addr(&w)));
                    }
                }
                regs::EV_ACKRX => {
                    let r = ResultEntry::parse(&w);
                    self.stats.hw_acks += 1;
                    self.refresh_queued_views(r.slot, view);
                    self.inbox.push_back(Input::AckApplied {
                        slot: r.slot,
                        pkts: r.pkts,
                        bytes: r.bytes,
                        fates: std::mem::take(&mut self.ack_fates),
                        view,
                    });
                }
                regs::EV_OP_RESULT => self.op_result(nic, &w, view)?,
                regs::EV_FATE => {
                    let conn_psn = w[0] as u32;
                    let f = if w[0] >> 32 & 1 == 1 {
                        SlotFate::Lost { conn_psn }
                    } else {
                        SlotFate::Acked { conn_psn }
                    };
                    if w[0] >> 33 & 1 == 1 {
                        self.ack_fates.push(f);
                    } else if self.in_flight.is_empty() {
                        // A fate with no operation in flight is the device's error.
                        self.stats.interface_errors += 1;
                    } else {
                        self.op_fates.push(f);
                    }
                }
                // Unknown types, and a view entry with no result before it.
                _ => self.stats.interface_errors += 1,
            }
        }
    }

    /// The result of the oldest operation in flight: to the engine, with its fates and
    /// the slot's state after it.
    fn op_result(
        &mut self,
        nic: &mut Nic,
        w: &[u64; 8],
        view: PathView,
    ) -> Result<(), DriverError> {
        let fates = std::mem::take(&mut self.op_fates);
        let Some((slot, req)) = self.in_flight.pop_front() else {
            self.stats.interface_errors += 1;
            return Ok(());
        };
        let r = ResultEntry::parse(w);
        if r.slot != slot || r.code != OpInputs::from_op(&req.op).code {
            self.stats.interface_errors += 1;
        }
        self.refresh_queued_views(r.slot, view);
        let out = TableOutcome {
            ok: r.ok,
            psn: r.psn,
            pkts: r.pkts,
            bytes: r.bytes,
        };
        let TableRequest { qpn, path, op } = req;
        let now = self.now();
        timed(&mut self.time.engine_ns, || {
            nic.handle_table_result(now, qpn, path, &TableDone::Op(op, out), &fates, view)
        });
        self.follow(nic)
    }

    /// Gives the ACK results still queued for `slot` the slot's newer state `view`: the
    /// engine takes an ACK result with the slot as it is when it takes it (as the
    /// firmware model reads the slot then), never with a state older than one it has
    /// already seen (an operation's result taken at once, ahead of the queue): a view
    /// gone back would make it refuse later ACKs for packets it sent (`bad_ack`).
    fn refresh_queued_views(&mut self, slot: usize, newer: PathView) {
        for input in &mut self.inbox {
            if let Input::AckApplied { slot: s, view, .. } = input
                && *s == slot
            {
                *view = newer;
            }
        }
    }

    /// Hands one report of the device to the engine.
    fn handle_input(
        &mut self,
        nic: &mut Nic,
        memory: &mut MemoryMap,
        input: Input,
    ) -> Result<(), DriverError> {
        let now = self.now();
        match input {
            Input::Verdict(v, addr) => {
                self.time.rx_events += 1;
                let Some(p) = v.placed() else {
                    // A refusal is the engine's drop, as on the software data path.
                    tables::count_refusal(v.code, nic.drops_mut());
                    self.stats.other_events += 1;
                    return Ok(());
                };
                if v.code == core::V_PLACED && v.len > 0 {
                    self.sync_placed(nic, &v, addr)?;
                    self.stats.placed += 1;
                }
                let mut mem = Coherent {
                    map: memory,
                    dev: &mut self.dev,
                    failed: None,
                };
                timed(&mut self.time.engine_ns, || {
                    nic.handle_placed(now, &p, &mut mem)
                });
                if let Some(e) = mem.failed {
                    return Err(e.into());
                }
            }
            Input::Datagram(bytes, src_port) => {
                self.time.rx_events += 1;
                // The RTL checked that it comes from its QP's peer: the firmware
                // takes the peer's address from its own QP table.
                let dst_qpn = bytes
                    .get(4..8)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                let src_ip = nic
                    .qp_entry(dst_qpn)
                    .and_then(|(_, _, _, remote)| remote)
                    .map(|r| r.ip)
                    .or(self.peer.map(|p| p.0))
                    .unwrap_or(self.cfg.local.ip());
                let meta = RxMeta {
                    src_ip,
                    src_port,
                    dst_ip: self.cfg.local.ip(),
                    dst_port: self.cfg.local.port(),
                    ecn_ce: false,
                };
                self.stats.fw_rx += 1;
                let mut mem = Coherent {
                    map: memory,
                    dev: &mut self.dev,
                    failed: None,
                };
                timed(&mut self.time.engine_ns, || {
                    nic.handle_datagram(now, &bytes, meta, &mut mem)
                });
                if let Some(e) = mem.failed {
                    return Err(e.into());
                }
            }
            Input::AckApplied {
                slot,
                pkts,
                bytes,
                fates,
                view,
            } => {
                let Some((qpn, path)) = self.tables.slot(slot) else {
                    self.stats.interface_errors += 1;
                    return Ok(());
                };
                let done = TableDone::AckApplied { pkts, bytes };
                timed(&mut self.time.engine_ns, || {
                    nic.handle_table_result(now, qpn, path, &done, &fates, view)
                });
            }
        }
        self.follow(nic)
    }

    /// Makes the bytes the device placed for a verdict visible to the CPU: the range
    /// at the placement address the event carries, when it lies in a mapped region;
    /// else the posted receive's or the outstanding READ's range, or (a WRITE, whose
    /// address only its first packet carried) every region the peer may write.
    fn sync_placed(
        &mut self,
        nic: &Nic,
        v: &VerdictFields,
        addr: Option<u64>,
    ) -> Result<(), DriverError> {
        let len = usize::from(v.len);
        if let Some(a) = addr {
            let end = a.checked_add(len as u64);
            let inside = |&(_, base, n): &(u32, u64, u64)| {
                a >= base && end.is_some_and(|e| e <= base.saturating_add(n))
            };
            if self.mapped.iter().any(inside) {
                return Ok(self.dev.sync_for_cpu(a, len)?);
            }
            // The device placed outside every mapped region: its error.
            self.stats.interface_errors += 1;
        }
        let op = Opcode::try_from(v.opcode).ok();
        let at = |base: u64| base.checked_add(v.offset.into());
        let range = match op {
            Some(Opcode::Send | Opcode::SendImm) => nic
                .posted_receives(v.dst_qpn, v.stream)
                .and_then(|(base, mut r)| r.nth(v.recv_idx.wrapping_sub(base) as usize).copied())
                .and_then(|wr| at(wr.sgl.first().addr)),
            Some(Opcode::ReadResp) => nic
                .outstanding_reads(v.dst_qpn)
                .find(|&(s, msn, _, _)| s == v.stream && msn == v.msn)
                .and_then(|(_, _, sge, _)| at(sge.addr)),
            _ => None,
        };
        match range {
            Some(a) => self.dev.sync_for_cpu(a, len)?,
            None => {
                let writable: Vec<_> = nic
                    .memory_regions()
                    .filter(|r| r.access.contains(metaroce_firmware::Access::REMOTE_WRITE))
                    .map(|r| (r.addr, r.len))
                    .collect();
                for (a, n) in writable {
                    self.dev.sync_for_cpu(a, n as usize)?;
                }
            }
        }
        Ok(())
    }

    /// Takes the engine's next packet: a descriptor goes into the TX queue after the
    /// entries of what it caused (its path's `Send`, a READ's entry); a firmware
    /// datagram into the firmware TX queue. Returns whether there was one.
    fn transmit_one(&mut self, nic: &mut Nic) -> Result<bool, DriverError> {
        // It may be a datagram: the firmware TX queue needs room for one.
        if self.ftq.room(&mut self.dev)? < 1 {
            return Ok(false);
        }
        let now = self.now();
        let buf = &mut self.buf;
        match timed(&mut self.time.engine_ns, || nic.poll_hardware(now, buf)) {
            Some(HwTransmit::Descriptor(d)) => {
                self.follow(nic)?;
                self.post_descriptor(&d)?;
            }
            Some(HwTransmit::Datagram(t)) => {
                // What it caused goes first, as for a descriptor: an atomic's
                // path `Send` and its READ entry (its response is matched there).
                self.follow(nic)?;
                self.post_datagram(&t);
            }
            None => {
                // Nothing to send, but the look may have failed a QP (its source
                // region was deregistered): its completions and state.
                self.follow(nic)?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn post_descriptor(&mut self, d: &TxDescriptor) -> Result<(), DriverError> {
        if self.peer.is_none_or(|p| p.0 != d.dst_ip) {
            // The TX builder has one peer.
            self.stats.interface_errors += 1;
            return Ok(());
        }
        if let Some((addr, data)) = self.tables.entropy_write(d) {
            self.txq_push(&tables::cfg_words(addr, data))?;
            self.stats.entropy_writes += 1;
        }
        let len = d.payload_len as usize;
        if len > 0 {
            self.dev.sync_for_device(d.payload_addr, len)?;
        }
        self.txq_push(&tables::desc_words(
            &d.repr,
            d.ecn_capable,
            d.payload_addr,
            d.payload_len as u16,
        ))?;
        self.stats.descriptors += 1;
        self.time.descriptors += 1;
        Ok(())
    }

    fn post_datagram(&mut self, t: &Transmit) {
        let len = t.len.min(regs::FW_SLOT_BYTES);
        if t.len > len || len == 0 {
            self.stats.interface_errors += 1;
            return;
        }
        let ip = u128::from_be_bytes(tables::mapped(t.dst_ip));
        let hdr = [
            ip as u64,
            (ip >> 64) as u64,
            u64::from(t.src_port) | u64::from(t.dst_port) << 16 | (len as u64) << 32,
            0,
        ];
        self.ftq.push(&hdr, &self.buf[..len]);
        self.stats.firmware_frames += 1;
    }

    /// Rings the doorbells of what control operations queued.
    pub(crate) fn doorbells(&mut self) -> Result<(), DriverError> {
        self.txq.doorbell(&mut self.dev)?;
        self.ftq.doorbell(&mut self.dev)?;
        Ok(())
    }

    /// Nothing queued toward the device, nothing in flight and nothing waiting for
    /// the engine (reads the queues' `CONS`).
    pub(crate) fn drained(&mut self) -> Result<bool, DriverError> {
        self.txq.refresh(&mut self.dev)?;
        self.ftq.refresh(&mut self.dev)?;
        Ok(self.txq.pending() == 0
            && self.ftq.pending() == 0
            && self.inbox.is_empty()
            && self.in_flight.is_empty())
    }
}
