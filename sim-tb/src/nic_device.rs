//! The device top (`metaroce_hdl::NicDevice`, 64 bits: the host interface
//! around `NicCore`) driven as a host drives a PCIe NIC.
//!
//! The bench is the host: a host-memory model serves the device's DMA
//! request interface (reads answered in order after a latency, writes
//! applied beat by beat, every access checked against the mapped pages),
//! and a driver model does everything through BAR0 and the queues:
//!
//! * walks the register-block list from offset 0 and finds every block by
//!   type (their offsets are not assumed), checks the identification block
//!   (map version and hash, data width), and makes out-of-range and
//!   read-only BAR accesses, which must read 0, change nothing and count in
//!   `ID.BAR_BAD`;
//! * writes the receive tables (the core bench's engine setup,
//!   [`crate::core_check`]) and the TX builder's registers through
//!   `CFG_ADDR`/`CFG_DATA_LO`/`CFG_DATA_HI`;
//! * runs per-path TX table operations through the `TXT` block (`Init`,
//!   `Window`, `Send`, `Lose`) and reads the slot back; the `Lose` must
//!   come back as a fate event in the event ring;
//! * posts the same kind of operations as TX queue entries (kind 2) among
//!   the descriptors: each one's result must come back in order as a
//!   result entry (type 4: code, slot, path PSN) followed by a view entry
//!   (type 5) whose slot state is the engine's rule applied, the `Lose`'s
//!   fate event before its result, and the views must equal the slot read
//!   back through the `TXT` read port at the end;
//! * posts the TX bench's engine descriptors ([`crate::tx_check`]) in the
//!   TX queue, with the entropy-table writes they need as table-write
//!   entries in the same queue (so they take effect in order), rings the
//!   doorbell, and checks every data frame on the MAC TX port against its
//!   reference;
//! * posts firmware datagrams in the firmware TX queue (two malformed
//!   entries among them, which must be skipped and counted) and checks
//!   their frames;
//! * feeds the core bench's receive traffic (WRITEs, PROBEs, re-sent and
//!   hostile datagrams), then SENDs of a stream without a receive ring
//!   (handed to the firmware), into the MAC RX port, and consumes the
//!   event ring and the firmware receive ring by their phase bits: every
//!   verdict against the engine's, in order, none lost, none twice; every
//!   handed-up datagram's bytes, length and port; the placed bytes in host
//!   memory against the engine's memory; a placed packet's event only
//!   after its data, carrying the address its data was written at; the
//!   device never writing a ring entry the host has not freed. For a stretch of the run the host stops reading the event
//!   ring: the ring fills and the device must hold its MAC RX port
//!   (`CNT.RX_HOLD`) without losing an event;
//! * checks every interrupt against the moderation rule of its vector
//!   (entry count or hold-off time reached; never late).

use std::collections::{HashMap, VecDeque};

use metaroce_driver::hw::regs::OpStatus;
use metaroce_driver::hw::tables::{self, OpInputs, ResultEntry, SlotState};
use metaroce_proto::{Packet, Repr};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::core_check::HostRxCase;
use crate::device_port::{BAR_READ_LATENCY, DevicePorts, LANES};
use crate::nic_core::ack_of;
use crate::rx_parser::Frame;
use crate::tx_build::{
    Descriptor, NIC_CORE_TX_CFG, TxItem, configure, configure_local_ip6, entropy_cfg_addr,
};
use crate::tx_check::{EngineItems, compare};
use crate::{Model, Sim, SimError};

/// The device's register map and queue constants (generated from
/// `metaroce_hdl::host_if`).
pub mod regs {
    include!(concat!(env!("OUT_DIR"), "/host_regs.rs"));
}

/// `TxOp` codes (generated from `metaroce_hdl::TxOp`).
use crate::tx_path::code as op;

const PAGE: u64 = 4096;
/// The UDP destination port of the firmware datagrams the bench posts.
const FWTX_PORT: u16 = 7777;
/// Verdict code "handed to the firmware".
const V_FIRMWARE: u8 = 10;

/// Where the bench puts its rings (host addresses) and their sizes.
const TXQ_BASE: u64 = 0x7_1000_0000;
const TXQ_LOG2: u32 = 6;
const FTQ_BASE: u64 = 0x7_1001_0000;
const FTQ_LOG2: u32 = 3;
const EVQ_BASE: u64 = 0x7_1002_0000;
const EVQ_LOG2: u32 = 6;
const FRQ_BASE: u64 = 0x7_1003_0000;
const FRQ_LOG2: u32 = 3;

/// Interrupt moderation the bench programs: (coalesce, hold-off cycles)
/// per vector.
const MODERATION: [(u32, u32); 3] = [(8, 400), (0, 300), (16, 2000)];

/// Per-cycle stall probabilities of the host's side of the ports.
#[derive(Clone, Copy, Debug)]
pub struct Knobs {
    /// The MAC RX source idles between beats.
    pub rx_idle: f64,
    /// The MAC TX sink is not ready.
    pub mac_stall: f64,
    /// A DMA read request is not taken.
    pub dmar_stall: f64,
    /// A read completion beat is not offered.
    pub dmac_stall: f64,
    /// A DMA write beat is not taken.
    pub dmaw_stall: f64,
    /// Cycles from a read request to its first completion beat.
    pub read_latency: u64,
}

impl Knobs {
    /// Every port always ready, reads answered after 20 cycles.
    pub const FAST: Knobs = Knobs {
        rx_idle: 0.0,
        mac_stall: 0.0,
        dmar_stall: 0.0,
        dmac_stall: 0.0,
        dmaw_stall: 0.0,
        read_latency: 20,
    };
    /// Stalls everywhere, reads answered after 100 cycles (a PCIe round
    /// trip at 100 MHz is about that).
    pub const STALLS: Knobs = Knobs {
        rx_idle: 0.2,
        mac_stall: 0.3,
        dmar_stall: 0.2,
        dmac_stall: 0.2,
        dmaw_stall: 0.3,
        read_latency: 100,
    };
}

/// What one [`run`] did and found.
#[derive(Clone, Debug, Default)]
pub struct DeviceRun {
    /// Register blocks found by walking the list.
    pub blocks: usize,
    /// Datagrams into the MAC RX port.
    pub rx_frames: u64,
    /// Verdict events read from the event ring.
    pub verdict_events: u64,
    /// Of which compared with the engine's verdict.
    pub verdicts_checked: u64,
    /// Placed packets with a payload (DMA writes into the MR region).
    pub placements: u64,
    /// Datagrams read from the firmware receive ring.
    pub fw_rx: u64,
    /// Of which cut to 128 bytes.
    pub fw_rx_cut: u64,
    /// Fate events read from the event ring.
    pub fate_events: u64,
    /// TX table operations posted in the TX queue, and their results read.
    pub queued_ops: (u64, u64),
    /// TX queue entries posted (descriptors + table writes).
    pub txq_entries: u64,
    /// Data frames compared with their references.
    pub data_frames: u64,
    /// Firmware datagrams framed and compared.
    pub fw_tx_frames: u64,
    /// ACK frames seen on the MAC TX port.
    pub ack_frames: u64,
    /// Event ring laps (wraps) the host saw.
    pub evq_laps: u64,
    /// Cycles the device held its MAC RX port (`CNT.RX_HOLD`).
    pub rx_hold_cycles: u64,
    /// Most event-ring entries written and not yet freed by the host.
    pub evq_max_fill: u64,
    /// Interrupts per vector.
    pub irqs: [u64; 3],
    /// Entries per vector (event entries, firmware receive entries, TX
    /// queue entries consumed).
    pub irq_entries: [u64; 3],
    /// `ID.BAR_BAD` at the end (the bench made 5 bad accesses).
    pub bar_bad: u64,
    /// Clock cycles.
    pub cycles: u64,
    /// Simulation time (CPU seconds).
    pub sim_secs: f64,
    /// Everything that disagreed.
    pub mismatches: Vec<String>,
}

/// Host memory: 4 KiB pages mapped on demand by the bench; a DMA access
/// to an unmapped page is an error.
#[derive(Default)]
struct HostMem {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
}

impl HostMem {
    fn map(&mut self, base: u64, len: u64) {
        let mut p = base / PAGE;
        while p * PAGE < base + len {
            self.pages
                .entry(p)
                .or_insert_with(|| Box::new([0; PAGE as usize]));
            p += 1;
        }
    }

    fn mapped(&self, addr: u64, len: usize) -> bool {
        (addr / PAGE..=(addr + len.max(1) as u64 - 1) / PAGE).all(|p| self.pages.contains_key(&p))
    }

    /// Writes `data` at `addr`; false (nothing written) if unmapped.
    fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        if !self.mapped(addr, data.len()) {
            return false;
        }
        for (i, b) in data.iter().enumerate() {
            let a = addr + i as u64;
            self.pages.get_mut(&(a / PAGE)).expect("mapped")[(a % PAGE) as usize] = *b;
        }
        true
    }

    /// Reads `len` bytes at `addr`; `None` if unmapped.
    fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        if !self.mapped(addr, len) {
            return None;
        }
        Some(
            (0..len as u64)
                .map(|i| {
                    let a = addr + i;
                    self.pages[&(a / PAGE)][(a % PAGE) as usize]
                })
                .collect(),
        )
    }

    fn u64_at(&self, addr: u64) -> u64 {
        let b = self.read(addr, 8).unwrap_or_default();
        u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
    }
}

/// A read request waiting for its completion.
struct ReadReq {
    due: u64,
    addr: u64,
    len: usize,
    tag: u8,
    sent: usize,
}

/// A ring as the host driver keeps it.
#[derive(Clone, Copy)]
struct Ring {
    base: u64,
    log2: u32,
    stride: u64,
    /// Host-side index: produced (host → device) or consumed (device → host).
    idx: u32,
    /// The device's index as last read (host → device) or last written to
    /// the device (device → host).
    dev: u32,
}

impl Ring {
    fn size(&self) -> u32 {
        1 << self.log2
    }

    fn slot(&self, idx: u32) -> u64 {
        self.base + u64::from(idx & (self.size() - 1)) * self.stride
    }

    /// The phase bit an entry written on lap `idx / size` carries.
    fn phase(&self, idx: u32) -> bool {
        (idx >> self.log2) & 1 == 0
    }
}

/// The bench: the Verilated device, the host memory and the driver model.
struct DeviceTb<'a> {
    sim: Sim,
    p: DevicePorts,
    mem: HostMem,
    rng: SmallRng,
    knobs: Knobs,
    cycle: u64,
    /// Block bases found by the list walk, by type.
    base: HashMap<u32, u16>,
    // BAR.
    bar_wr: Option<(u16, u32)>,
    bar_rd: Option<u16>,
    bar_resp: Option<u32>,
    // MAC RX.
    rx_wire: &'a [Vec<u8>],
    /// The MAC RX source runs (from the end of the set-up on).
    rx_on: bool,
    rx_next: usize,
    rx_off: usize,
    rx_offered: bool,
    // MAC TX.
    tx_cur: Vec<u8>,
    tx_frames: Vec<Vec<u8>>,
    /// Frames on the MAC TX port that are not ACK frames.
    tx_data: u64,
    // DMA.
    reads: VecDeque<ReadReq>,
    cpl: Option<(Vec<u8>, bool, u8)>,
    write: Option<(u64, usize, usize)>,
    /// Completed writes: (address, length, cycle of the last beat).
    writes: Vec<(u64, usize, u64)>,
    // Interrupts.
    irqs: Vec<(u64, usize)>,
    // Rings.
    txq: Ring,
    ftq: Ring,
    evq: Ring,
    frq: Ring,
    /// Event and firmware receive ring entries the device wrote, counted
    /// as the writes complete (the data write and then the header write of
    /// a firmware receive entry).
    evq_written: u32,
    frq_data_written: u32,
    frq_written: u32,
    /// Completion cycle of each event / firmware receive entry.
    evq_done: Vec<u64>,
    frq_done: Vec<u64>,
    /// MR writes completed (placements).
    mr_writes: u64,
    /// Their addresses, in order.
    mr_addrs: Vec<u64>,
    mr_range: (u64, u64),
    errors: Vec<String>,
}

impl<'a> DeviceTb<'a> {
    fn new(knobs: Knobs, seed: u64, rx_wire: &'a [Vec<u8>]) -> Result<Self, SimError> {
        let mut sim = Sim::new(Model::NicDevice64)?;
        let p = DevicePorts::new(&sim)?;
        sim.reset()?;
        let ring = |base, log2, stride: usize| Ring {
            base,
            log2,
            stride: stride as u64,
            idx: 0,
            dev: 0,
        };
        let mut mem = HostMem::default();
        for (base, log2, stride) in [
            (TXQ_BASE, TXQ_LOG2, regs::TXQ_ENTRY),
            (FTQ_BASE, FTQ_LOG2, regs::FTQ_ENTRY),
            (EVQ_BASE, EVQ_LOG2, regs::EVQ_ENTRY),
            (FRQ_BASE, FRQ_LOG2, regs::FRQ_ENTRY),
        ] {
            mem.map(base, (stride as u64) << log2);
        }
        Ok(Self {
            sim,
            p,
            mem,
            rng: SmallRng::seed_from_u64(seed),
            knobs,
            cycle: 0,
            base: HashMap::new(),
            bar_wr: None,
            bar_rd: None,
            bar_resp: None,
            rx_wire,
            rx_on: false,
            rx_next: 0,
            rx_off: 0,
            rx_offered: false,
            tx_cur: Vec::new(),
            tx_frames: Vec::new(),
            tx_data: 0,
            reads: VecDeque::new(),
            cpl: None,
            write: None,
            writes: Vec::new(),
            irqs: Vec::new(),
            txq: ring(TXQ_BASE, TXQ_LOG2, regs::TXQ_ENTRY),
            ftq: ring(FTQ_BASE, FTQ_LOG2, regs::FTQ_ENTRY),
            evq: ring(EVQ_BASE, EVQ_LOG2, regs::EVQ_ENTRY),
            frq: ring(FRQ_BASE, FRQ_LOG2, regs::FRQ_ENTRY),
            evq_written: 0,
            frq_data_written: 0,
            frq_written: 0,
            evq_done: Vec::new(),
            frq_done: Vec::new(),
            mr_writes: 0,
            mr_addrs: Vec::new(),
            mr_range: (0, 0),
            errors: Vec::new(),
        })
    }

    fn knob(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.gen_bool(p)
    }

    /// One clock cycle: the host's side of every port, then the edge.
    fn step(&mut self) {
        let p = &self.p;
        let sim = &mut self.sim;
        sim.set(p.now, self.cycle * 10);
        let (wv, wa, wd) = self.bar_wr.take().map_or((0, 0, 0), |(a, d)| (1, a, d));
        sim.set(p.bar_wr_valid, wv);
        sim.set(p.bar_wr_addr, wa.into());
        sim.set(p.bar_wr_data, wd.into());
        let (rv, ra) = self.bar_rd.take().map_or((0, 0), |a| (1, a));
        sim.set(p.bar_rd_valid, rv);
        sim.set(p.bar_rd_addr, ra.into());

        // MAC RX: a beat, once offered, stays until taken.
        let rx_idle = self.knobs.rx_idle;
        if self.rx_on
            && !self.rx_offered
            && self.rx_next < self.rx_wire.len()
            && !(rx_idle > 0.0 && self.rng.gen_bool(rx_idle))
        {
            self.rx_offered = true;
        }
        let p = &self.p;
        let sim = &mut self.sim;
        if self.rx_offered {
            let f = &self.rx_wire[self.rx_next];
            let end = (self.rx_off + LANES).min(f.len());
            sim.set_bytes(p.rx_tdata, &f[self.rx_off..end]);
            sim.set(p.rx_tkeep, (1u64 << (end - self.rx_off)) - 1);
            sim.set(p.rx_tlast, u64::from(end == f.len()));
        }
        sim.set(p.rx_tvalid, u64::from(self.rx_offered));

        // Readies.
        let mac_ready = !self.knob(self.knobs.mac_stall);
        let rd_ready = !self.knob(self.knobs.dmar_stall);
        let wr_ready = !self.knob(self.knobs.dmaw_stall);
        // Read completions, in request order, once due.
        if self.cpl.is_none() && !self.knob(self.knobs.dmac_stall) {
            let cycle = self.cycle;
            if let Some(r) = self.reads.front_mut().filter(|r| r.due <= cycle) {
                if r.len == 0 {
                    self.errors.push(format!(
                        "zero-length DMA read at {:#x} (tag {})",
                        r.addr, r.tag
                    ));
                    r.len = 1;
                }
                let n = (r.len - r.sent).min(LANES);
                let data = self.mem.read(r.addr + r.sent as u64, n);
                if data.is_none() {
                    self.errors.push(format!(
                        "DMA read of unmapped memory at {:#x} (tag {})",
                        r.addr, r.tag
                    ));
                }
                r.sent += n;
                let last = r.sent == r.len;
                self.cpl = Some((data.unwrap_or(vec![0; n]), last, r.tag));
                if last {
                    self.reads.pop_front();
                }
            }
        }
        let p = &self.p;
        let sim = &mut self.sim;
        sim.set(p.tx_tready, mac_ready.into());
        sim.set(p.dmar_ready, rd_ready.into());
        sim.set(p.dmaw_tready, wr_ready.into());
        sim.set(p.irq_ready, 1);
        match &self.cpl {
            Some((data, last, tag)) => {
                sim.set_bytes(p.dmac_tdata, data);
                sim.set(p.dmac_tkeep, (1u64 << data.len()) - 1);
                sim.set(p.dmac_tlast, (*last).into());
                sim.set(p.dmac_tag, (*tag).into());
                sim.set(p.dmac_tvalid, 1);
            }
            None => sim.set(p.dmac_tvalid, 0),
        }
        sim.eval();

        // Observe the handshakes of this cycle.
        if sim.get(p.bar_rd_resp_valid) == 1 {
            self.bar_resp = Some(sim.get(p.bar_rd_resp_data) as u32);
        }
        if self.rx_offered && sim.get(p.rx_tready) == 1 {
            self.rx_offered = false;
            self.rx_off += LANES;
            if self.rx_off >= self.rx_wire[self.rx_next].len() {
                self.rx_next += 1;
                self.rx_off = 0;
            }
        }
        let mut frame_done = None;
        if mac_ready && sim.get(p.tx_tvalid) == 1 {
            let mut beat = [0u8; LANES];
            sim.get_bytes(p.tx_tdata, &mut beat);
            let n = sim.get(p.tx_tkeep).count_ones() as usize;
            self.tx_cur.extend_from_slice(&beat[..n]);
            if sim.get(p.tx_tlast) == 1 {
                frame_done = Some(std::mem::take(&mut self.tx_cur));
            }
        }
        if rd_ready && sim.get(p.dmar_valid) == 1 {
            self.reads.push_back(ReadReq {
                due: self.cycle + self.knobs.read_latency,
                addr: sim.get(p.dmar_addr),
                len: sim.get(p.dmar_len) as usize,
                tag: sim.get(p.dmar_tag) as u8,
                sent: 0,
            });
        }
        if self.cpl.is_some() && sim.get(p.dmac_tready) == 1 {
            self.cpl = None;
        }
        let mut finished = None;
        if wr_ready && sim.get(p.dmaw_tvalid) == 1 {
            let first = sim.get(p.dmaw_first) == 1;
            if first != self.write.is_none() {
                self.errors
                    .push(format!("cycle {}: m_dmaw_first out of step", self.cycle));
            }
            if first {
                self.write = Some((sim.get(p.dmaw_addr), sim.get(p.dmaw_len) as usize, 0));
            }
            let mut beat = [0u8; LANES];
            sim.get_bytes(p.dmaw_tdata, &mut beat);
            let n = sim.get(p.dmaw_tkeep).count_ones() as usize;
            let last = sim.get(p.dmaw_tlast) == 1;
            if let Some((addr, len, done)) = self.write.as_mut() {
                // Applied beat by beat, as a host would see the bytes land.
                if !self.mem.write(*addr + *done as u64, &beat[..n]) {
                    self.errors
                        .push(format!("DMA write to unmapped memory at {:#x}", *addr));
                }
                *done += n;
                if last {
                    if *done != *len {
                        self.errors.push(format!(
                            "DMA write at {addr:#x}: {done} bytes for length {len}"
                        ));
                    }
                    finished = Some((*addr, *len));
                }
            }
        }
        if sim.get(p.irq_valid) == 1 {
            self.irqs.push((self.cycle, sim.get(p.irq_vector) as usize));
        }
        sim.tick();
        self.cycle += 1;
        if let Some((addr, len)) = finished {
            self.write = None;
            self.write_done(addr, len);
        }
        if let Some(f) = frame_done {
            self.tx_data += u64::from(ack_of(&f).is_none());
            self.tx_frames.push(f);
        }
    }

    /// A finished DMA write: which ring or region it was, checked against
    /// what the host has freed.
    fn write_done(&mut self, addr: u64, len: usize) {
        // The cycle of the last beat's handshake (`step` has counted it).
        let cycle = self.cycle - 1;
        self.writes.push((addr, len, cycle));

        let in_ring = |r: &Ring| addr >= r.base && addr < r.base + (r.stride << r.log2);
        if in_ring(&self.evq) {
            let want = self.evq.slot(self.evq_written);
            if addr != want || len != regs::EVQ_ENTRY {
                self.errors.push(format!(
                    "event entry {} written at {addr:#x} ({len} B), expected {want:#x}",
                    self.evq_written
                ));
            }
            if self.evq_written.wrapping_sub(self.evq.dev) >= self.evq.size() {
                self.errors.push(format!(
                    "event entry {} overwrote an entry the host had not freed (CONS {})",
                    self.evq_written, self.evq.dev
                ));
            }
            self.evq_written += 1;
            self.evq_done.push(cycle);
        } else if in_ring(&self.frq) {
            let slot = self.frq.slot(self.frq_written);
            if self.frq_written.wrapping_sub(self.frq.dev) >= self.frq.size() {
                self.errors.push(format!(
                    "firmware receive entry {} overwrote an unfreed entry",
                    self.frq_written
                ));
            }
            if addr == slot && self.frq_data_written == self.frq_written {
                self.frq_data_written += 1;
            } else if addr == slot + regs::FW_SLOT_BYTES as u64
                && len == 8
                && self.frq_data_written == self.frq_written + 1
            {
                self.frq_written += 1;
                self.frq_done.push(cycle);
            } else {
                self.errors.push(format!(
                    "firmware receive ring write at {addr:#x} ({len} B) out of order"
                ));
            }
        } else if addr >= self.mr_range.0 && addr < self.mr_range.1 {
            self.mr_writes += 1;
            self.mr_addrs.push(addr);
        } else {
            self.errors.push(format!(
                "DMA write at {addr:#x} ({len} B) outside every region"
            ));
        }
    }

    fn bar_write(&mut self, addr: u16, v: u32) {
        self.bar_wr = Some((addr, v));
        self.step();
    }

    fn bar_read(&mut self, addr: u16) -> u32 {
        self.bar_rd = Some(addr);
        // The request's cycle, then the response's latency.
        for _ in 0..=BAR_READ_LATENCY {
            self.step();
        }
        self.bar_resp.take().unwrap_or_else(|| {
            self.errors
                .push(format!("BAR read of {addr:#x}: no response"));
            0
        })
    }

    /// The BAR offset of register `off` of the block of type `ty`.
    fn reg(&self, ty: u32, off: u16) -> u16 {
        self.base.get(&ty).copied().unwrap_or(0xFFF0) + off
    }

    fn cfg_write(&mut self, addr: u16, data: u64) {
        let c = regs::cfg::TYPE;
        self.bar_write(self.reg(c, regs::cfg::CFG_ADDR), addr.into());
        self.bar_write(self.reg(c, regs::cfg::CFG_DATA_LO), data as u32);
        self.bar_write(self.reg(c, regs::cfg::CFG_DATA_HI), (data >> 32) as u32);
    }

    /// Walks the block list from 0; returns the blocks found.
    fn discover(&mut self) -> usize {
        let mut at = 0u16;
        let mut found = Vec::new();
        for _ in 0..64 {
            let ty = self.bar_read(at + regs::HDR_TYPE);
            let _version = self.bar_read(at + regs::HDR_VERSION);
            let next = self.bar_read(at + regs::HDR_NEXT) as u16;
            found.push((ty, at));
            self.base.insert(ty, at);
            if next == 0 {
                break;
            }
            if next <= at {
                self.errors
                    .push(format!("block list goes back: {at:#x} → {next:#x}"));
                break;
            }
            at = next;
        }
        if found != regs::BLOCKS {
            self.errors.push(format!(
                "block list walked {found:x?}, the register table says {:x?}",
                regs::BLOCKS
            ));
        }
        found.len()
    }

    fn set_ring(&mut self, ty: u32, r: Ring) {
        use regs::txq as q;
        self.bar_write(self.reg(ty, q::BASE_LO), r.base as u32);
        self.bar_write(self.reg(ty, q::BASE_HI), (r.base >> 32) as u32);
        self.bar_write(self.reg(ty, q::SIZE_LOG2), r.log2);
        self.bar_write(self.reg(ty, q::CTRL), 1);
    }
}

/// A TX queue entry for `d` (kind 0; the driver's own words,
/// `metaroce_driver::hw::tables::desc_words`).
fn desc_entry(d: &Descriptor) -> Vec<u8> {
    entry(&tables::desc_words(&d.repr, d.ecn, d.addr, d.len))
}

/// A TX queue entry that writes `data` to the table address `addr` (kind 1).
fn cfg_entry(addr: u16, data: u64) -> Vec<u8> {
    entry(&tables::cfg_words(addr, data))
}

fn entry(words: &[u64]) -> Vec<u8> {
    let mut e = vec![0u8; regs::TXQ_ENTRY];
    for (i, w) in words.iter().enumerate() {
        e[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    e
}

/// A firmware transmit entry: 32-byte header, then the datagram.
fn ftq_entry(dst_ip: u128, src_port: u16, dst_port: u16, len: u16, data: &[u8]) -> Vec<u8> {
    let mut e = vec![0u8; regs::FTQ_ENTRY];
    e[..16].copy_from_slice(&dst_ip.to_le_bytes());
    e[16..18].copy_from_slice(&src_port.to_le_bytes());
    e[18..20].copy_from_slice(&dst_port.to_le_bytes());
    e[20..22].copy_from_slice(&len.to_le_bytes());
    e[32..32 + data.len()].copy_from_slice(data);
    e
}

/// One verdict event as the host read it.
struct VerdictEv {
    code: u8,
    opcode: u8,
    dst_qpn: u32,
    path: u16,
    path_psn: u32,
    len: u16,
    src_port: u16,
}

fn le(b: &[u8], at: usize, n: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(&b[at..at + n]);
    u64::from_le_bytes(v)
}

/// Runs the bench (module docs): `rx_packets` datagrams of the core
/// bench's traffic plus `fw_packets` handed-up SENDs on the MAC RX port,
/// at least `tx_packets` engine descriptors through the TX queue, the
/// host ignoring the event ring for `stall` cycles early in the run.
pub fn run(
    rx_packets: usize,
    fw_packets: usize,
    tx_packets: usize,
    seed: u64,
    knobs: Knobs,
    stall: u64,
) -> Result<DeviceRun, SimError> {
    let case = HostRxCase::new(rx_packets, fw_packets, seed);
    let wire: Vec<Vec<u8>> = case
        .frames
        .iter()
        .zip(&case.ce)
        .map(|(f, &ce)| crate::rx_eth::ip_frame(f, if ce { 0b11 } else { 0b10 }))
        .collect();
    let EngineItems {
        pair,
        addresses,
        items,
        want,
        errors,
        ..
    } = EngineItems::new(seed ^ 0x7C0E, tx_packets, 0.05);
    let mut tb = DeviceTb::new(knobs, seed ^ 0xDE71, &wire)?;
    let started = crate::SimTimer::start();
    let mut run = DeviceRun {
        mismatches: errors,
        ..DeviceRun::default()
    };
    // Payload memory (the engine's) and the MR region the core places into.
    let (pbase, plen) = (pair.a.mem.base(), pair.a.mem.len());
    tb.mem.map(pbase, plen as u64);
    tb.mem.write(pbase, pair.a.mem.slice(pbase, plen));
    tb.mem.map(case.mem_base, case.mem.len() as u64);
    tb.mr_range = (case.mem_base, case.mem_base + case.mem.len() as u64);

    // Discovery and identification.
    run.blocks = tb.discover();
    let id = regs::id::TYPE;
    for (name, off, want) in [
        ("MAP_VERSION", regs::id::MAP_VERSION, regs::MAP_VERSION),
        ("MAP_HASH", regs::id::MAP_HASH, regs::MAP_HASH),
        ("DATA_WIDTH", regs::id::DATA_WIDTH, 64),
        ("IRQ_VECTORS", regs::id::IRQ_VECTORS, 3),
        (
            "FW_SLOT_BYTES",
            regs::id::FW_SLOT_BYTES,
            regs::FW_SLOT_BYTES as u32,
        ),
    ] {
        let got = tb.bar_read(tb.reg(id, off));
        if got != want {
            tb.errors
                .push(format!("ID.{name}: {got:#x}, expected {want:#x}"));
        }
    }
    // Bad accesses: each reads 0 or changes nothing, and is counted.
    let scratch = tb.reg(id, regs::id::SCRATCH);
    tb.bar_write(scratch, 0x5A5A_1234);
    let width = tb.reg(id, regs::id::DATA_WIDTH);
    tb.bar_write(width, 512); // read-only: ignored
    tb.bar_write(0xFFFC, 0xDEAD_BEEF); // no register
    let unmapped = tb.bar_read(0x8000);
    let unaligned = tb.bar_read(scratch + 1);
    let last_reg = tb.bar_read(0xFFFC);
    let width_after = tb.bar_read(width);
    let scratch_after = tb.bar_read(scratch);
    for (what, got, want) in [
        ("read of 0x8000", unmapped, 0),
        ("unaligned read", unaligned, 0),
        ("read of 0xFFFC after a write", last_reg, 0),
        ("DATA_WIDTH after a write", width_after, 64),
        ("SCRATCH", scratch_after, 0x5A5A_1234),
    ] {
        if got != want {
            tb.errors
                .push(format!("{what}: {got:#x}, expected {want:#x}"));
        }
    }
    const BAD_ACCESSES: u64 = 5;

    // Tables: the receive core's (engine setup) and the TX builder's.
    for &(a, d) in &case.writes {
        tb.cfg_write(a, d);
    }
    let mut tx_cfg = Vec::new();
    configure(&addresses, &mut |a: u8, d| {
        tx_cfg.push((NIC_CORE_TX_CFG | u16::from(a), d))
    });
    configure_local_ip6(std::net::Ipv6Addr::UNSPECIFIED, &mut |a: u8, d| {
        tx_cfg.push((NIC_CORE_TX_CFG | u16::from(a), d))
    });
    for (a, d) in tx_cfg {
        tb.cfg_write(a, d);
    }
    let cfg_writes = tb.bar_read(tb.reg(regs::cfg::TYPE, regs::cfg::CFG_WRITES));
    let expect_cfg = case.writes.len() as u32 + 5;
    if cfg_writes != expect_cfg {
        tb.errors.push(format!(
            "CFG.CFG_WRITES {cfg_writes}, the bench wrote {expect_cfg}"
        ));
    }
    tb.bar_write(
        tb.reg(regs::cfg::TYPE, regs::cfg::ETH_PORT),
        metaroce_proto::DEFAULT_UDP_PORT.into(),
    );

    // Rings and interrupts.
    let (txq, ftq, evq, frq) = (tb.txq, tb.ftq, tb.evq, tb.frq);
    tb.set_ring(regs::txq::TYPE, txq);
    tb.set_ring(regs::ftq::TYPE, ftq);
    tb.set_ring(regs::evq::TYPE, evq);
    tb.set_ring(regs::frq::TYPE, frq);
    let irq = regs::irq::TYPE;
    for (v, (coalesce, holdoff)) in MODERATION.iter().enumerate() {
        let o = 0x10 * v as u16;
        tb.bar_write(tb.reg(irq, regs::irq::COALESCE0 + o), *coalesce);
        tb.bar_write(tb.reg(irq, regs::irq::HOLDOFF0 + o), *holdoff);
        tb.bar_write(tb.reg(irq, regs::irq::CTRL0 + o), 1);
    }

    // TX table operations through the TXT block.
    let fate_psn = txt_ops(&mut tb);

    // The run: MAC RX frames flow from now on; the host posts, consumes
    // and checks.
    let mut fw_items: VecDeque<Vec<u8>> = VecDeque::new();
    let mut fw_want: Vec<(u128, u16, Vec<u8>)> = Vec::new();
    let mut frng = SmallRng::seed_from_u64(seed ^ 0xF7);
    for i in 0..6u16 {
        let dst = u128::from(u32::from_be_bytes([10, 0, 9, i as u8 + 1])) | 0xFFFF << 32;
        let len = [1u16, 100, 128, 37, 64, 127][usize::from(i)];
        // Not a MetaRoCE header (first byte 0xFF): never taken for an ACK.
        let data: Vec<u8> = (0..len)
            .map(|k| if k == 0 { 0xFF } else { frng.r#gen() })
            .collect();
        fw_items.push_back(ftq_entry(dst, 0xC000 + i, FWTX_PORT, len, &data));
        fw_want.push((dst, 0xC000 + i, data));
        if i == 2 {
            // Malformed: length 0, then 200 (more than 128): skipped.
            fw_items.push_back(ftq_entry(dst, 1, FWTX_PORT, 0, &[]));
            fw_items.push_back(ftq_entry(dst, 1, FWTX_PORT, 200, &[0; 200]));
        }
    }

    let mut table = [None::<u16>; crate::tx_build::TABLE_PATHS];
    let mut next_item = 0usize;
    let mut bad_txq_posted = false;
    let qops = queued_ops();
    let mut qops_posted = false;
    // A result entry waiting for its view entry, and the results read:
    // (result entry, view entry, fate events read by then).
    let mut result_entry: Option<[u64; 8]> = None;
    let mut results: Vec<([u64; 8], [u64; 8], usize)> = Vec::new();
    let mut last_cons_read = 0u64;
    let mut verdicts: Vec<VerdictEv> = Vec::new();
    let mut fates: Vec<(bool, bool, u32)> = Vec::new();
    let mut fw_rx: Vec<(u16, u16, bool, Vec<u8>)> = Vec::new();
    let mut placed_seen = 0u64;
    let mut next_fw = 0u64;
    tb.rx_on = true;
    let stall_from = tb.cycle + 2_000;
    let stall_to = stall_from + stall;
    let rx_total = wire.len();
    let max_cycles = tb.cycle + 3_000_000;
    let mut quiet_since = None::<u64>;
    loop {
        tb.step();
        let now = tb.cycle;

        // TX queue: post descriptors (with their entropy writes first).
        let room = |q: &Ring| q.size() - q.idx.wrapping_sub(q.dev);
        let mut posted = false;
        while next_item < items.len() && room(&tb.txq) >= 2 {
            if next_item >= items.len() / 3 && !qops_posted {
                // TX table operations among the descriptors (the descriptors
                // after them wait for room for all of them).
                if room(&tb.txq) < qops.len() as u32 {
                    break;
                }
                for (i, ..) in &qops {
                    let slot = tb.txq.slot(tb.txq.idx);
                    tb.mem.write(slot, &entry(&tables::op_words(QSLOT, i)));
                    tb.txq.idx += 1;
                    run.txq_entries += 1;
                    run.queued_ops.0 += 1;
                }
                qops_posted = true;
                posted = true;
                continue;
            }
            let TxItem { desc, entropy } = items[next_item];
            let path = usize::from(desc.repr.path) % table.len();
            if table[path] != Some(entropy) {
                let a = NIC_CORE_TX_CFG | u16::from(entropy_cfg_addr(desc.repr.path));
                let e = cfg_entry(a, entropy.into());
                let slot = tb.txq.slot(tb.txq.idx);
                tb.mem.write(slot, &e);
                tb.txq.idx += 1;
                table[path] = Some(entropy);
                run.txq_entries += 1;
            }
            let slot = tb.txq.slot(tb.txq.idx);
            tb.mem.write(slot, &desc_entry(&desc));
            tb.txq.idx += 1;
            run.txq_entries += 1;
            next_item += 1;
            posted = true;
            if next_item == items.len() / 2 && !bad_txq_posted {
                // An entry of an unknown kind: skipped and counted.
                let slot = tb.txq.slot(tb.txq.idx);
                tb.mem
                    .write(slot, &entry(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 7 << 56]));
                tb.txq.idx += 1;
                run.txq_entries += 1;
                bad_txq_posted = true;
            }
        }
        if posted {
            let prod = tb.txq.idx;
            tb.bar_write(tb.reg(regs::txq::TYPE, regs::txq::PROD), prod);
        }
        if room(&tb.txq) < qops.len() as u32 && now - last_cons_read > 200 {
            last_cons_read = now;
            tb.txq.dev = tb.bar_read(tb.reg(regs::txq::TYPE, regs::txq::CONS));
        }

        // Firmware TX queue: one datagram every 3,000 cycles.
        if now >= next_fw && !fw_items.is_empty() {
            next_fw = now + 3_000;
            tb.ftq.dev = tb.bar_read(tb.reg(regs::ftq::TYPE, regs::ftq::CONS));
            if room(&tb.ftq) > 0 {
                let e = fw_items.pop_front().expect("an item");
                let slot = tb.ftq.slot(tb.ftq.idx);
                tb.mem.write(slot, &e);
                tb.ftq.idx += 1;
                let prod = tb.ftq.idx;
                tb.bar_write(tb.reg(regs::ftq::TYPE, regs::ftq::PROD), prod);
            }
        }

        // Event ring: read entries by their phase bit (not while stalled).
        let stalled = now >= stall_from && now < stall_to;
        let mut consumed = false;
        if !stalled {
            loop {
                let slot = tb.evq.slot(tb.evq.idx);
                let w7 = tb.mem.u64_at(slot + 56);
                if (w7 >> 63 == 1) != tb.evq.phase(tb.evq.idx) {
                    break;
                }
                let e = tb.mem.read(slot, 64).expect("mapped");
                if w7 as u32 != tb.evq.idx {
                    tb.errors.push(format!(
                        "event entry {}: sequence {}",
                        tb.evq.idx, w7 as u32
                    ));
                }
                let words: [u64; 8] = std::array::from_fn(|i| le(&e, 8 * i, 8));
                let ty = ((w7 >> 56) & 0xF) as u8;
                if result_entry.is_some() && ty != regs::EV_VIEW {
                    tb.errors.push(format!(
                        "event entry {}: type {ty} after a result entry, not its view",
                        tb.evq.idx
                    ));
                    result_entry = None;
                }
                match ty {
                    regs::EV_VERDICT => {
                        let v = VerdictEv {
                            dst_qpn: le(&e, 0, 4) as u32,
                            opcode: e[4],
                            path_psn: le(&e, 8, 4) as u32,
                            path: le(&e, 12, 2) as u16,
                            len: le(&e, 48, 2) as u16,
                            src_port: le(&e, 50, 2) as u16,
                            code: e[52] & 0x1F,
                        };
                        let addr = tables::placed_addr(&words);
                        if v.code == 0 && v.len > 0 {
                            placed_seen += 1;
                            if tb.mr_writes < placed_seen {
                                tb.errors.push(format!(
                                    "verdict event {} (placed) visible before its data: {} of {} placements written",
                                    verdicts.len(),
                                    tb.mr_writes,
                                    placed_seen
                                ));
                            }
                            let want = tb.mr_addrs.get(placed_seen as usize - 1).copied();
                            if addr.is_none() || addr != want {
                                tb.errors.push(format!(
                                    "verdict event {} (placed): address {addr:x?}, its data went to {want:x?}",
                                    verdicts.len()
                                ));
                            }
                        } else if addr.is_some() {
                            tb.errors.push(format!(
                                "verdict event {} (code {}, {} bytes) carries a placement address",
                                verdicts.len(),
                                v.code,
                                v.len
                            ));
                        }
                        verdicts.push(v);
                    }
                    regs::EV_FATE => {
                        let w0 = le(&e, 0, 8);
                        fates.push((w0 >> 33 & 1 == 1, w0 >> 32 & 1 == 1, w0 as u32));
                    }
                    regs::EV_OP_RESULT => result_entry = Some(words),
                    regs::EV_VIEW => match result_entry.take() {
                        Some(a) => results.push((a, words, fates.len())),
                        None => tb.errors.push(format!(
                            "event entry {}: a view entry with no result before it",
                            tb.evq.idx
                        )),
                    },
                    t => tb
                        .errors
                        .push(format!("event entry {}: type {t}", tb.evq.idx)),
                }
                tb.evq.idx += 1;
                run.evq_max_fill = run
                    .evq_max_fill
                    .max(u64::from(tb.evq_written.wrapping_sub(tb.evq.dev)));
                consumed = true;
            }
        }
        if consumed {
            tb.evq.dev = tb.evq.idx;
            let cons = tb.evq.idx;
            tb.bar_write(tb.reg(regs::evq::TYPE, regs::evq::CONS), cons);
        }

        // Firmware receive ring.
        let mut consumed = false;
        loop {
            let slot = tb.frq.slot(tb.frq.idx);
            let hdr = tb.mem.u64_at(slot + regs::FW_SLOT_BYTES as u64);
            if (hdr >> 63 == 1) != tb.frq.phase(tb.frq.idx) {
                break;
            }
            let len = hdr as u16;
            let n = usize::from(len).min(regs::FW_SLOT_BYTES);
            let data = tb.mem.read(slot, n).expect("mapped");
            fw_rx.push(((hdr >> 16) as u16, len, hdr >> 32 & 1 == 1, data));
            tb.frq.idx += 1;
            consumed = true;
        }
        if consumed {
            tb.frq.dev = tb.frq.idx;
            let cons = tb.frq.idx;
            tb.bar_write(tb.reg(regs::frq::TYPE, regs::frq::CONS), cons);
        }

        // Done: everything in, every event out, every frame out.
        let data_out = tb.tx_data as usize;
        let done = tb.rx_next == rx_total
            && verdicts.len() == rx_total
            && next_item == items.len()
            && data_out >= items.len() + fw_want.len()
            && fw_items.is_empty()
            && fates.len() == 2
            && results.len() == qops.len();
        if done {
            let since = *quiet_since.get_or_insert(now);
            // Long enough for the last interrupts (hold-off) to fire.
            if now - since > 2_500 {
                break;
            }
        }
        if now > max_cycles {
            tb.errors.push(format!(
                "timeout: {} of {rx_total} frames in, {} verdict events, {} of {} items posted, \
                 {data_out} data frames out, {} fates, {} table results",
                tb.rx_next,
                verdicts.len(),
                next_item,
                items.len(),
                fates.len(),
                results.len()
            ));
            break;
        }
    }
    run.sim_secs = started.secs();
    run.cycles = tb.cycle;
    run.rx_frames = tb.rx_next as u64;
    run.evq_laps = u64::from(tb.evq.idx >> EVQ_LOG2);

    // Verdicts: in order, one per datagram, as the engine decided.
    let m = &mut run.mismatches;
    if verdicts.len() != case.frames.len() {
        m.push(format!(
            "{} verdict events for {} datagrams",
            verdicts.len(),
            case.frames.len()
        ));
    }
    let mut fw_frames = Vec::new();
    for (i, (v, f)) in verdicts.iter().zip(&case.frames).enumerate() {
        let want = if i < case.verdicts.len() {
            case.verdicts[i]
        } else {
            Some(V_FIRMWARE)
        };
        if let Some(w) = want {
            run.verdicts_checked += 1;
            if v.code != w {
                m.push(format!("datagram {i}: verdict {}, engine {w}", v.code));
            }
        }
        if v.code == V_FIRMWARE {
            fw_frames.push(f);
        }
        run.placements += u64::from(v.code == 0 && v.len > 0);
        if let Some(d) = fields_diff(v, f) {
            m.push(format!("datagram {i} (verdict {}): {d}", v.code));
        }
    }
    run.verdict_events = verdicts.len() as u64;
    // The firmware receive ring: the datagrams of verdict 10, in order.
    if fw_rx.len() != fw_frames.len() {
        m.push(format!(
            "{} firmware receive entries for {} verdict-10 datagrams",
            fw_rx.len(),
            fw_frames.len()
        ));
    }
    for (k, ((port, len, cut, data), f)) in fw_rx.iter().zip(&fw_frames).enumerate() {
        let n = f.bytes.len().min(regs::FW_SLOT_BYTES);
        if usize::from(*len) != f.bytes.len()
            || *cut != (f.bytes.len() > regs::FW_SLOT_BYTES)
            || *port != f.pseudo.src_port
            || data[..] != f.bytes[..n]
        {
            m.push(format!(
                "firmware receive entry {k}: len {len} cut {cut} port {port}, datagram {} B port {}, \
                 first differing byte {:?}",
                f.bytes.len(),
                f.pseudo.src_port,
                data.iter().zip(&f.bytes[..n]).position(|(a, b)| a != b)
            ));
        }
        run.fw_rx_cut += u64::from(*cut);
    }
    run.fw_rx = fw_rx.len() as u64;
    // Placed bytes against the engine's memory.
    let got = tb.mem.read(case.mem_base, case.mem.len()).expect("mapped");
    if got != case.mem {
        let at = got.iter().zip(&case.mem).position(|(a, b)| a != b);
        m.push(format!(
            "MR memory differs from the engine's at offset {at:?}"
        ));
    }
    if tb.mr_writes != case.engine_writes as u64 {
        m.push(format!(
            "{} placement writes, the engine made {}",
            tb.mr_writes, case.engine_writes
        ));
    }
    // The fate events of the two `Lose`s (registers, then queue).
    run.fate_events = fates.len() as u64;
    let want_fates = [(false, true, fate_psn), (false, true, QPSN)];
    if fates != want_fates {
        m.push(format!("fate events {fates:?}, expected {want_fates:?}"));
    }
    // The queued operations' results, in order, with their slot views.
    run.queued_ops.1 = results.len() as u64;
    for (k, ((a, b, nfates), (i, res_psn, want))) in results.iter().zip(&qops).enumerate() {
        let r = ResultEntry::parse(a);
        let v = SlotState::from_event(a, b);
        let got = [
            u32::from(v.entropy),
            v.next_psn,
            v.inflight,
            v.window,
            v.sent,
            v.lost,
        ];
        // A Lose's fate comes before its result; the other results see only the
        // register port's.
        let fates_before = if i.code == op::LOSE { 2 } else { 1 };
        if r.slot != QSLOT
            || r.code != i.code
            || res_psn.is_some_and(|p| !r.ok || r.psn != p)
            || got != *want
            || *nfates != fates_before
        {
            m.push(format!(
                "queued operation {k} (code {}): result slot {} code {} ok {} psn {}, \
                 view (entropy, next_psn, inflight, window, sent, lost) {got:?} after {nfates} fates; \
                 expected slot {QSLOT}, psn {res_psn:?}, view {want:?} after {fates_before} fates",
                i.code, r.slot, r.code, r.ok, r.psn
            ));
        }
    }

    // MAC TX: data frames against their references, firmware datagrams,
    // ACK frames counted.
    let mut data = Vec::new();
    let mut fw_out = Vec::new();
    for f in std::mem::take(&mut tb.tx_frames) {
        if ack_of(&f).is_some() {
            run.ack_frames += 1;
            continue;
        }
        let fw = match etherparse::SlicedPacket::from_ethernet(&f) {
            Ok(p) => match (&p.net, &p.transport) {
                (
                    Some(etherparse::NetSlice::Ipv4(ip)),
                    Some(etherparse::TransportSlice::Udp(u)),
                ) if u.destination_port() == FWTX_PORT => Some((
                    u128::from(u32::from(ip.header().destination_addr())) | 0xFFFF << 32,
                    u.source_port(),
                    u.payload().to_vec(),
                )),
                _ => None,
            },
            Err(_) => None,
        };
        match fw {
            Some(x) => fw_out.push(x),
            None => data.push(f),
        }
    }
    for (i, (item, want)) in items.iter().zip(&want).enumerate() {
        match data.get(i) {
            Some(got) => {
                if let Some(d) = compare(got, want, &item.desc, false) {
                    m.push(format!("data frame {i}: {d}"));
                }
            }
            None => {
                m.push(format!("data frame {i}: missing ({} came out)", data.len()));
                break;
            }
        }
    }
    run.data_frames = data.len().min(items.len()) as u64;
    if data.len() > items.len() {
        m.push(format!("{} data frames too many", data.len() - items.len()));
    }
    if fw_out != fw_want {
        m.push(format!(
            "firmware datagrams out {:?}, posted {:?}",
            fw_out
                .iter()
                .map(|f| (f.0, f.1, f.2.len()))
                .collect::<Vec<_>>(),
            fw_want
                .iter()
                .map(|f| (f.0, f.1, f.2.len()))
                .collect::<Vec<_>>()
        ));
    }
    run.fw_tx_frames = fw_out.len() as u64;

    // Counters through BAR0.
    let cnt = regs::cnt::TYPE;
    let counter = |tb: &mut DeviceTb, off: u16| u64::from(tb.bar_read(tb.reg(cnt, off)));
    run.rx_hold_cycles = counter(&mut tb, regs::cnt::RX_HOLD);
    // The last view against the slot through the register port.
    if let (Some((_, _, want)), true) = (qops.last(), results.len() == qops.len()) {
        use regs::txt as t;
        tb.bar_write(tb.reg(t::TYPE, t::RD_SLOT), QSLOT as u32);
        let mut got = [0u32; 6];
        for (g, off) in got.iter_mut().zip([
            t::RD_ENTROPY,
            t::RD_NEXT_PSN,
            t::RD_INFLIGHT,
            t::RD_WINDOW,
            t::RD_SENT,
            t::RD_LOST,
        ]) {
            *g = tb.bar_read(tb.reg(t::TYPE, off));
        }
        if got != *want {
            m.push(format!(
                "slot {QSLOT} through TXT.RD_*: {got:?}, its last queued view {want:?}"
            ));
        }
    }
    for (name, off, want) in [
        ("EV_LOST", regs::cnt::EV_LOST, 0),
        ("TXQ_OPS", regs::cnt::TXQ_OPS, qops.len() as u64),
        ("TXQ_BAD", regs::cnt::TXQ_BAD, 1),
        ("FTQ_BAD", regs::cnt::FTQ_BAD, 2),
        ("DMA_BAD_TAG", regs::cnt::DMA_BAD_TAG, 0),
        // ACK frames and the firmware's frames: the framer counts both.
        (
            "ACK_FRAMES",
            regs::cnt::ACK_FRAMES,
            run.ack_frames + run.fw_tx_frames,
        ),
        ("FW_UP", regs::cnt::FW_UP, run.fw_rx),
        ("FW_TRUNC", regs::cnt::FW_TRUNC, run.fw_rx_cut),
        ("FWTX_FRAMES", regs::cnt::FWTX_FRAMES, run.fw_tx_frames),
        ("ETH_FRAMES", regs::cnt::ETH_FRAMES, run.rx_frames),
        ("ETH_DROPS", regs::cnt::ETH_DROPS, 0),
        ("TX_ERR", regs::cnt::TX_ERR, 0),
    ] {
        let got = counter(&mut tb, off);
        if got != want {
            m.push(format!("CNT.{name} = {got}, expected {want}"));
        }
    }
    // The verdict counters of the core, through CNT_SEL/CNT_VAL.
    for code in [0u8, V_FIRMWARE] {
        tb.bar_write(tb.reg(cnt, regs::cnt::CNT_SEL), code.into());
        let got = counter(&mut tb, regs::cnt::CNT_VAL);
        let want = verdicts.iter().filter(|v| v.code == code).count() as u64;
        if got != want {
            m.push(format!("verdict counter {code}: {got}, events {want}"));
        }
    }
    if stall > 0 && run.rx_hold_cycles == 0 {
        m.push("the host stalled the event ring but the MAC RX port was never held".into());
    }
    if u64::from(tb.txq.idx) != run.txq_entries
        || tb.bar_read(tb.reg(regs::txq::TYPE, regs::txq::CONS)) != tb.txq.idx
    {
        m.push("TX queue: not every entry consumed".into());
    }

    // Interrupts.
    // Vector 2's entries (queue entries consumed) are not visible outside
    // the device: its interrupts are counted, not timed.
    let entries: [Vec<u64>; 2] = [tb.evq_done.clone(), tb.frq_done.clone()];
    for (v, moderation) in MODERATION.iter().enumerate() {
        let irqs: Vec<u64> = tb
            .irqs
            .iter()
            .filter(|&&(_, x)| x == v)
            .map(|&(c, _)| c)
            .collect();
        run.irqs[v] = irqs.len() as u64;
        run.irq_entries[v] = entries.get(v).map_or(0, |e| e.len() as u64);
        let count = tb.bar_read(tb.reg(irq, regs::irq::COUNT0 + 0x10 * v as u16));
        if u64::from(count) != run.irqs[v] {
            m.push(format!(
                "IRQ.COUNT{v} {count}, interrupts seen {}",
                run.irqs[v]
            ));
        }
        match entries.get(v) {
            Some(e) => m.extend(check_moderation(v, &irqs, e, *moderation, &tb.irqs)),
            None if irqs.is_empty() => m.push(format!("vector {v}: no interrupt")),
            None => {}
        }
    }
    let bar_bad = tb.bar_read(tb.reg(id, regs::id::BAR_BAD));
    run.bar_bad = bar_bad.into();
    if run.bar_bad != BAD_ACCESSES {
        m.push(format!(
            "ID.BAR_BAD {bar_bad}, the bench made {BAD_ACCESSES} bad accesses"
        ));
    }
    m.append(&mut tb.errors);
    Ok(run)
}

/// The TX table operations through BAR0: `Init`, `Window`, `Send`,
/// `Lose` on slot 5, read back; returns the connection PSN whose fate
/// event must come up.
fn txt_ops(tb: &mut DeviceTb) -> u32 {
    use regs::txt as t;
    let ty = t::TYPE;
    const SLOT: u32 = 5;
    const PSN: u32 = 0x00AB_CDEF;
    let issue = |tb: &mut DeviceTb, code: u8, psn: u32, len: u32, value: u32| {
        tb.bar_write(tb.reg(ty, t::OP_CTRL), u32::from(code) | SLOT << 3);
        tb.bar_write(tb.reg(ty, t::OP_PSN), psn);
        tb.bar_write(tb.reg(ty, t::OP_LEN), len);
        tb.bar_write(tb.reg(ty, t::OP_VALUE), value);
        tb.bar_write(tb.reg(ty, t::OP_GO), 1);
        let mut status = OpStatus::BUSY;
        for _ in 0..100 {
            status = OpStatus::from_bits_truncate(tb.bar_read(tb.reg(ty, t::OP_STATUS)));
            if !status.contains(OpStatus::BUSY) {
                break;
            }
        }
        if !status.contains(OpStatus::DONE) || status.contains(OpStatus::BUSY) {
            tb.errors
                .push(format!("TX table op {code}: OP_STATUS {status:?}"));
        }
        status
    };
    issue(tb, op::INIT, 0, 0, 0xC123);
    issue(tb, op::WINDOW, 0, 0, 1 << 20);
    tb.bar_write(tb.reg(ty, t::RD_SLOT), SLOT);
    let next = tb.bar_read(tb.reg(ty, t::RD_NEXT_PSN));
    let status = issue(tb, op::SEND, PSN, 1000, 0);
    let res_psn = tb.bar_read(tb.reg(ty, t::RES_PSN));
    if !status.contains(OpStatus::RES_OK) || res_psn != next {
        tb.errors.push(format!(
            "Send: OP_STATUS {status:?}, RES_PSN {res_psn}, RD_NEXT_PSN was {next}"
        ));
    }
    for (name, off, want) in [
        ("RD_ENTROPY", t::RD_ENTROPY, 0xC123),
        ("RD_NEXT_PSN", t::RD_NEXT_PSN, next.wrapping_add(1)),
        ("RD_INFLIGHT", t::RD_INFLIGHT, 1000),
        ("RD_SENT", t::RD_SENT, 1),
        ("RD_WINDOW", t::RD_WINDOW, 1 << 20),
    ] {
        let got = tb.bar_read(tb.reg(ty, off));
        if got != want {
            tb.errors
                .push(format!("TXT.{name} {got:#x}, expected {want:#x}"));
        }
    }
    issue(tb, op::LOSE, res_psn, 0, 0);
    for (name, off, want) in [
        ("RD_LOST", t::RD_LOST, 1),
        ("RD_INFLIGHT", t::RD_INFLIGHT, 0),
    ] {
        let got = tb.bar_read(tb.reg(ty, off));
        if got != want {
            tb.errors
                .push(format!("TXT.{name} after Lose {got}, expected {want}"));
        }
    }
    PSN
}

/// The TX table slot the queued operations work on (the register port's is 5).
const QSLOT: usize = 6;
/// The connection PSN of the first queued `Send` (the queued `Lose` loses it).
const QPSN: u32 = 0x0012_3456;

/// The TX table operations the bench posts in the TX queue on [`QSLOT`], each
/// with the path PSN its result must carry (a `Send`) and the slot's (entropy,
/// next_psn, inflight, window, sent, lost) after it, by the table's rules
/// (`docs/hardware.md` §12).
fn queued_ops() -> Vec<(OpInputs, Option<u32>, [u32; 6])> {
    let none = OpInputs::default();
    let send = |psn, len| OpInputs {
        code: op::SEND,
        psn,
        len,
        ..none
    };
    vec![
        (
            OpInputs {
                code: op::INIT,
                value: 0xB0B5,
                ..none
            },
            None,
            [0xB0B5, 0, 0, 0, 0, 0],
        ),
        (
            OpInputs {
                code: op::WINDOW,
                value: 1 << 16,
                ..none
            },
            None,
            [0xB0B5, 0, 0, 1 << 16, 0, 0],
        ),
        (send(QPSN, 1000), Some(0), [0xB0B5, 1, 1000, 1 << 16, 1, 0]),
        (
            send(QPSN + 1, 500),
            Some(1),
            [0xB0B5, 2, 1500, 1 << 16, 2, 0],
        ),
        (
            OpInputs {
                code: op::LOSE,
                psn: 0,
                ..none
            },
            None,
            [0xB0B5, 2, 500, 1 << 16, 2, 1],
        ),
    ]
}

/// Checks vector `v`'s interrupts at `irqs` against the entries completed
/// at `done` under (coalesce, hold-off): each interrupt covers the entries
/// completed at least 2 cycles before it (the device counts an entry the
/// cycle after its write); it must be due (as many entries as `coalesce`,
/// or the oldest waiting `holdoff` cycles) and must not be late (a cycle
/// later for each interrupt of a lower-numbered vector, which goes first,
/// in between; `all` is every interrupt as (cycle, vector)).
fn check_moderation(
    v: usize,
    irqs: &[u64],
    done: &[u64],
    (coalesce, holdoff): (u32, u32),
    all: &[(u64, usize)],
) -> Vec<String> {
    let mut m = Vec::new();
    if done.is_empty() {
        return m;
    }
    let mut next = 0usize; // first entry not covered yet
    for &t in irqs {
        let covered = done[next..].iter().take_while(|&&c| c + 2 <= t).count();
        if covered == 0 {
            m.push(format!(
                "vector {v}: interrupt at cycle {t} covers no entry"
            ));
            continue;
        }
        let oldest = done[next];
        let due =
            (coalesce > 0 && covered >= coalesce as usize) || t >= oldest + 2 + u64::from(holdoff);
        if !due {
            m.push(format!(
                "vector {v}: interrupt at cycle {t} early: {covered} entries, oldest from cycle {oldest}"
            ));
        }
        let due_at = if coalesce > 0 && covered >= coalesce as usize {
            (oldest + 2 + u64::from(holdoff)).min(done[next + coalesce as usize - 1] + 2)
        } else {
            oldest + 2 + u64::from(holdoff)
        };
        let waived = all
            .iter()
            .filter(|&&(c, x)| x < v && c >= due_at && c < t)
            .count() as u64;
        let late = t > due_at + waived;
        if late {
            m.push(format!(
                "vector {v}: interrupt at cycle {t} late: {covered} entries, oldest from cycle {oldest}"
            ));
        }
        next += covered;
    }
    if next != done.len() {
        m.push(format!(
            "vector {v}: {} entries never covered by an interrupt",
            done.len() - next
        ));
    }
    m
}

/// The verdict event's header fields against the datagram's, for the
/// verdicts past the parser (the parser's drops report what they got).
fn fields_diff(v: &VerdictEv, f: &Frame) -> Option<String> {
    if v.src_port != f.pseudo.src_port {
        return Some(format!(
            "src_port {}, datagram {}",
            v.src_port, f.pseudo.src_port
        ));
    }
    if (1..=5).contains(&v.code) {
        return None;
    }
    let r = Repr::parse(&Packet::new_checked(&f.bytes[..]).ok()?).ok()?;
    let payload = f.bytes.len() - r.header_len() - metaroce_proto::ICRC_LEN;
    let got = (v.opcode, v.dst_qpn, v.path, v.path_psn, usize::from(v.len));
    let want = (r.opcode as u8, r.dst_qpn, r.path, r.path_psn, payload);
    (got != want)
        .then(|| format!("(opcode, dst_qpn, path, path_psn, len) {got:?}, datagram {want:?}"))
}
