//! The bench's state ([`DeviceTb`]: the Verilated device, the host memory
//! and the driver model) and the driver's BAR0 accesses: register reads and
//! writes, table writes through `CFG`, the block-list walk, ring set-up.

use std::collections::{HashMap, VecDeque};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::Knobs;
use super::host::{
    EVQ_BASE, EVQ_LOG2, FRQ_BASE, FRQ_LOG2, FTQ_BASE, FTQ_LOG2, HostMem, ReadReq, Ring, TXQ_BASE,
    TXQ_LOG2,
};
use super::regs;
use crate::device_port::{BAR_READ_LATENCY, DevicePorts};
use crate::{Model, Sim, SimError};

/// The bench: the Verilated device, the host memory and the driver model.
pub(super) struct DeviceTb<'a> {
    /// The Verilated device.
    pub(super) sim: Sim,
    /// Its ports.
    pub(super) p: DevicePorts,
    /// Host memory, served to the device's DMA.
    pub(super) mem: HostMem,
    /// The stalls' random source.
    pub(super) rng: SmallRng,
    /// Stall probabilities and read latency.
    pub(super) knobs: Knobs,
    /// Clock cycles so far.
    pub(super) cycle: u64,
    /// Block bases found by the list walk, by type.
    pub(super) base: HashMap<u32, u16>,
    // BAR.
    /// A BAR write to make on the next cycle: (offset, value).
    pub(super) bar_wr: Option<(u16, u32)>,
    /// A BAR read to request on the next cycle.
    pub(super) bar_rd: Option<u16>,
    /// The last BAR read response, not yet taken.
    pub(super) bar_resp: Option<u32>,
    // MAC RX.
    /// The frames to feed into the MAC RX port.
    pub(super) rx_wire: &'a [Vec<u8>],
    /// The MAC RX source runs (from the end of the set-up on).
    pub(super) rx_on: bool,
    /// The frame being fed (frames taken so far).
    pub(super) rx_next: usize,
    /// The offset of its next beat.
    pub(super) rx_off: usize,
    /// A beat is offered and not yet taken.
    pub(super) rx_offered: bool,
    // MAC TX.
    /// The frame coming out of the MAC TX port, so far.
    pub(super) tx_cur: Vec<u8>,
    /// Frames out of the MAC TX port.
    pub(super) tx_frames: Vec<Vec<u8>>,
    /// Frames on the MAC TX port that are not ACK frames.
    pub(super) tx_data: u64,
    // DMA.
    /// Read requests waiting for their completions, in order.
    pub(super) reads: VecDeque<ReadReq>,
    /// The completion beat offered: (bytes, last, tag).
    pub(super) cpl: Option<(Vec<u8>, bool, u8)>,
    /// The write under way: (address, length, bytes so far).
    pub(super) write: Option<(u64, usize, usize)>,
    /// Completed writes: (address, length, cycle of the last beat).
    pub(super) writes: Vec<(u64, usize, u64)>,
    // Interrupts.
    /// Interrupts: (cycle, vector).
    pub(super) irqs: Vec<(u64, usize)>,
    // Rings.
    /// The TX queue.
    pub(super) txq: Ring,
    /// The firmware TX queue.
    pub(super) ftq: Ring,
    /// The event ring.
    pub(super) evq: Ring,
    /// The firmware receive ring.
    pub(super) frq: Ring,
    /// Event and firmware receive ring entries the device wrote, counted
    /// as the writes complete (the data write and then the header write of
    /// a firmware receive entry).
    pub(super) evq_written: u32,
    /// Firmware receive entries whose data the device wrote.
    pub(super) frq_data_written: u32,
    /// Firmware receive entries the device wrote whole.
    pub(super) frq_written: u32,
    /// Completion cycle of each event / firmware receive entry.
    pub(super) evq_done: Vec<u64>,
    /// Completion cycle of each firmware receive entry.
    pub(super) frq_done: Vec<u64>,
    /// MR writes completed (placements).
    pub(super) mr_writes: u64,
    /// Their addresses, in order.
    pub(super) mr_addrs: Vec<u64>,
    /// The MR region the core places into: [start, end).
    pub(super) mr_range: (u64, u64),
    /// What the bench found wrong along the way.
    pub(super) errors: Vec<String>,
}

impl<'a> DeviceTb<'a> {
    /// The device out of reset, its rings' memory mapped; `rx_wire` is fed
    /// into the MAC RX port once `rx_on` is set.
    pub(super) fn new(knobs: Knobs, seed: u64, rx_wire: &'a [Vec<u8>]) -> Result<Self, SimError> {
        let mut sim = Sim::new(Model::NicDevice64)?;
        let p = DevicePorts::new(&sim)?;
        sim.reset()?;
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
            txq: Ring::new(TXQ_BASE, TXQ_LOG2, regs::TXQ_ENTRY),
            ftq: Ring::new(FTQ_BASE, FTQ_LOG2, regs::FTQ_ENTRY),
            evq: Ring::new(EVQ_BASE, EVQ_LOG2, regs::EVQ_ENTRY),
            frq: Ring::new(FRQ_BASE, FRQ_LOG2, regs::FRQ_ENTRY),
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

    /// Whether a stall of probability `p` happens this time.
    pub(super) fn knob(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.gen_bool(p)
    }

    /// Writes `v` to BAR offset `addr` (one cycle).
    pub(super) fn bar_write(&mut self, addr: u16, v: u32) {
        self.bar_wr = Some((addr, v));
        self.step();
    }

    /// Reads BAR offset `addr` (the request's cycle and the latency).
    pub(super) fn bar_read(&mut self, addr: u16) -> u32 {
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
    pub(super) fn reg(&self, ty: u32, off: u16) -> u16 {
        self.base.get(&ty).copied().unwrap_or(0xFFF0) + off
    }

    /// Writes `data` to the table address `addr` through
    /// `CFG_ADDR`/`CFG_DATA_LO`/`CFG_DATA_HI`.
    pub(super) fn cfg_write(&mut self, addr: u16, data: u64) {
        let c = regs::cfg::TYPE;
        self.bar_write(self.reg(c, regs::cfg::CFG_ADDR), addr.into());
        self.bar_write(self.reg(c, regs::cfg::CFG_DATA_LO), data as u32);
        self.bar_write(self.reg(c, regs::cfg::CFG_DATA_HI), (data >> 32) as u32);
    }

    /// Walks the block list from 0; returns the blocks found.
    pub(super) fn discover(&mut self) -> usize {
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

    /// Sets the ring block of type `ty` up for `r` and enables it.
    pub(super) fn set_ring(&mut self, ty: u32, r: Ring) {
        use regs::txq as q;
        self.bar_write(self.reg(ty, q::BASE_LO), r.base as u32);
        self.bar_write(self.reg(ty, q::BASE_HI), (r.base >> 32) as u32);
        self.bar_write(self.reg(ty, q::SIZE_LOG2), r.log2);
        self.bar_write(self.reg(ty, q::CTRL), 1);
    }
}
