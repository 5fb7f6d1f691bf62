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
//!
//! Its TX queue side is in `txq.rs`, its event ring side in `events.rs`.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use metaroce_firmware::datapath::TableRequest;
use metaroce_firmware::{Event, Memory, Nic, PathView, QpState, SlotFate};

use super::codes::regs;
use super::regs::Blocks;
use super::rings::{RxRing, TxRing};
use super::tables::{self, Addresses, OpInputs, Tables, VerdictFields};
use super::timing::{DriverTime, TimedDevice, ns_since};
use super::{DeviceConfig, DriverError, DriverStats};
use crate::device::{Device, DeviceError, monotonic_ns};
use crate::hostmem::MemoryMap;

mod events;
mod txq;

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
            self.cfg_writes_taken(&mut words)?;
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
            self.cfg_writes_taken(&mut words)?;
        }
        // QPs.
        let qpns: Vec<u32> = nic.qpns().collect();
        let mut connected_now = false;
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
                connected_now = true;
            }
        }
        self.tables.sync(nic, now, &mut |a, d| words.push((a, d)));
        if connected_now {
            // As with `ibv_modify_qp` to RTR, a QP receives the moment its connect
            // returns: the peer may send at once, so its entry (and the state word
            // `sync` wrote) must be in the device's table by then, not queued
            // behind descriptors (a packet meeting no entry is dropped as
            // `unknown_qp`, and the sender waits a timeout to resend it).
            self.cfg_writes_taken(&mut words)?;
        }
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
