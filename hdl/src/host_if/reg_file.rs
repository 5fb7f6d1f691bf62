//! BAR0's register file: the decoder, the read/write storage and the read
//! multiplexer of the register map in [`regs::BLOCKS`] (the one source of
//! truth), as a native rust-hdl block.
//!
//! [`RegFile`] holds every read/write register (reset to its reset value,
//! upper bits past its width 0), raises a write-only register's strobe in
//! the cycle it is written, and answers a read two cycles after the
//! request: the address is registered first, then the value (so a counter
//! select written just before a read has reached the counter). Build
//! constants (block headers, the identification block) are constants of
//! the block; the other read-only registers come on the `ro` bus from the
//! host interface, the read/write storage leaves on the `rw` bus, both
//! 32 bits per register in address order ([`RO_REGS`], [`RW_REGS`]). An
//! access to an address with no register, or a write to a read-only one,
//! is ignored (a read returns 0) and counted (`bad`, the `ID.BAR_BAD`
//! register).
//!
//! The decoder is a loop over arrays of [`Constant`]s built from
//! [`regs::all_regs`] when the block is made. rust-hdl's simulator runs it
//! (the tests below); under Verilator it is part of [`crate::NicDevice`]
//! (`metaroce-sim-tb`, `nic_device`).

use rust_hdl::prelude::*;

use super::regs::{self, Access, BLOCKS, IRQ_VECTORS, Reg, RegBlock};
use crate::helpers::{konst, native_block};
use crate::nic_core::TX_SLOT_BITS;

/// Where a register's value comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A build constant.
    Id,
    /// The `ro` bus.
    Ro,
    /// Read/write storage.
    Rw,
    /// A write strobe.
    Wo,
}

const fn kind(access: Access) -> Kind {
    match access {
        Access::Id => Kind::Id,
        Access::Ro(_) => Kind::Ro,
        Access::Rw { .. } => Kind::Rw,
        Access::Wo => Kind::Wo,
    }
}

/// Decoded registers of `k`, the three header words of every block
/// included as build constants.
const fn count(k: Kind) -> usize {
    let mut n = 0;
    let mut b = 0;
    while b < BLOCKS.len() {
        if matches!(k, Kind::Id) {
            n += 3;
        }
        let mut r = 0;
        while r < BLOCKS[b].regs.len() {
            if kind(BLOCKS[b].regs[r].access) as u8 == k as u8 {
                n += 1;
            }
            r += 1;
        }
        b += 1;
    }
    n
}

/// Build constants (block headers and the identification block).
pub const ID_REGS: usize = count(Kind::Id);
/// Read-only registers whose value comes on the `ro` bus.
pub const RO_REGS: usize = count(Kind::Ro);
/// Read/write registers.
pub const RW_REGS: usize = count(Kind::Rw);
/// Write-only registers (strobes).
pub const WO_REGS: usize = count(Kind::Wo);
/// Bits of the `ro` bus: read-only register `i` ([`ro_sources`] order) at `32 * i`.
pub const RO_BITS: usize = 32 * RO_REGS;
/// Bits of the `rw` bus: register `i` of the read/write ones at `32 * i`.
pub const RW_BITS: usize = 32 * RW_REGS;

/// The decoded registers of one kind, in address order: their place in
/// that order is their place on the `ro` or `rw` bus, or their strobe bit.
fn regs_of(k: Kind) -> Vec<(u16, &'static RegBlock, Reg)> {
    regs::all_regs()
        .into_iter()
        .filter(|(_, _, r)| kind(r.access) == k)
        .collect()
}

/// The place of `block.reg` among the registers of its kind.
fn place(block: &str, reg: &str) -> usize {
    let b = regs::block(block);
    let k = b
        .regs
        .iter()
        .find(|r| r.name == reg)
        .map(|r| kind(r.access))
        .unwrap_or_else(|| panic!("no register {block}.{reg}"));
    let addr = b.addr(reg);
    regs_of(k)
        .iter()
        .position(|(a, _, _)| *a == addr)
        .expect("a decoded register")
}

/// The first bit of read/write register `block.reg` on the `rw` bus.
pub fn rw_bit(block: &str, reg: &str) -> usize {
    32 * place(block, reg)
}

/// The strobe bit of write-only register `block.reg`.
pub fn wo_bit(block: &str, reg: &str) -> usize {
    place(block, reg)
}

/// The read-only registers on the `ro` bus, in bus order, each as the
/// source the table gives it (the name of the host interface's signal
/// that feeds it, or a constant `32'dN`).
pub fn ro_sources() -> Vec<&'static str> {
    regs_of(Kind::Ro)
        .into_iter()
        .map(|(_, _, r)| match r.access {
            Access::Ro(src) => src,
            _ => unreachable!("filtered to read-only registers"),
        })
        .collect()
}

/// The read/write registers in bus order: (block, register, stored bits).
pub fn rw_regs() -> Vec<(&'static RegBlock, Reg, u32)> {
    regs_of(Kind::Rw)
        .into_iter()
        .map(|(_, b, r)| match r.access {
            Access::Rw { bits, .. } => (b, r, bits),
            _ => unreachable!("filtered to read/write registers"),
        })
        .collect()
}

/// The write-only registers in strobe order.
pub fn wo_regs() -> Vec<(&'static RegBlock, Reg)> {
    regs_of(Kind::Wo)
        .into_iter()
        .map(|(_, b, r)| (b, r))
        .collect()
}

/// The value of build constant `block.reg` (a header word, or an
/// identification register) for a `w`-bit data path.
///
/// # Panics
/// If the register is not a build constant.
pub fn id_value(block: &RegBlock, reg: &Reg, w: usize) -> u32 {
    if reg.offset <= regs::HDR_NEXT {
        return regs::header_value(block, reg.offset);
    }
    let version = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0))
        .fold(0u32, |acc, p| acc << 8 | p);
    let v = match reg.name {
        "MAP_VERSION" => regs::MAP_VERSION as usize,
        "MAP_HASH" => regs::map_hash() as usize,
        "DEVICE_VERSION" => version as usize,
        "DATA_WIDTH" => w,
        "QPS" => crate::rx_place::QPS,
        "MRS" => crate::rx_place::MRS,
        "TX_SLOTS" => 1 << TX_SLOT_BITS,
        "PATHS" => crate::tx_build::PATHS,
        "RQ" => crate::rx_place::RQ_SLOTS << 16 | crate::rx_place::RQ_STREAMS,
        "FW_SLOT_BYTES" => crate::fw_rx::SLOT_BYTES,
        "IRQ_VECTORS" => IRQ_VECTORS,
        other => panic!("{}.{other} is not a build constant", block.name),
    };
    u32::try_from(v).expect("a 32-bit constant")
}

/// The addresses of the registers of kind `k` as constants.
fn addrs<const N: usize>(k: Kind) -> [Constant<Bits<16>>; N] {
    let list = regs_of(k);
    assert_eq!(list.len(), N, "register count");
    std::array::from_fn(|i| konst(usize::from(list[i].0)))
}

native_block! {
    /// BAR0's register file for a `W`-bit data path (64 or 512: the
    /// `DATA_WIDTH` register).
    RegFile[W]
    check { W == 64 || W == 512, "RegFile<{W}>: 64 or 512 bits" }
    let rw_list = rw_regs();
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: registers to their reset values, `bad` to 0."]
        rst: Signal<In, Bit>,
        #[doc = "BAR0 write: valid (taken every cycle)."]
        bar_wr_valid: Signal<In, Bit>,
        #[doc = "BAR0 write: byte address."]
        bar_wr_addr: Signal<In, Bits<16>>,
        #[doc = "BAR0 write: data."]
        bar_wr_data: Signal<In, Bits<32>>,
        #[doc = "BAR0 read request: valid (taken every cycle)."]
        bar_rd_valid: Signal<In, Bit>,
        #[doc = "BAR0 read request: byte address."]
        bar_rd_addr: Signal<In, Bits<16>>,
        #[doc = "BAR0 read response: valid (two cycles after the request)."]
        bar_rd_resp_valid: Signal<Out, Bit>,
        #[doc = "BAR0 read response: data (0 for an address with no register)."]
        bar_rd_resp_data: Signal<Out, Bits<32>>,
        #[doc = "The read-only registers' values, 32 bits each in [`RO_REGS`] order."]
        ro: Signal<In, Bits<RO_BITS>>,
        #[doc = "The read/write registers' storage, 32 bits each ([`rw_bit`])."]
        rw: Signal<Out, Bits<RW_BITS>>,
        #[doc = "The write-only registers' strobes ([`wo_bit`]): high in the cycle of the write (the data is `bar_wr_data`)."]
        wo: Signal<Out, Bits<WO_REGS>>,
        #[doc = "Accesses to no register and writes to read-only ones (`ID.BAR_BAD`)."]
        bad: Signal<Out, Bits<32>>,
    }
    state {
        store: [DFF<Bits<32>>; RW_REGS] = std::array::from_fn(|_| DFF::default()),
        rd_v: DFF<Bit>,
        rd_addr: DFF<Bits<16>>,
        resp_v: DFF<Bit>,
        resp: DFF<Bits<32>>,
        n_bad: DFF<Bits<32>>,
        // Temporaries: the request's address has a register, the write's
        // has a writable one; the word the registered address reads; one
        // register's storage on its way to the `rw` bus; the new count.
        rd_hit: Signal<Local, Bit>,
        wr_ok: Signal<Local, Bit>,
        word: Signal<Local, Bits<32>>,
        one: Signal<Local, Bits<32>>,
        bad_n: Signal<Local, Bits<32>>,
    }
    consts {
        k_id_addr: [Constant<Bits<16>>; ID_REGS] = addrs(Kind::Id),
        k_id_val: [Constant<Bits<32>>; ID_REGS] = {
            let list = regs_of(Kind::Id);
            std::array::from_fn(|i| konst(id_value(list[i].1, &list[i].2, W) as usize))
        },
        k_ro_addr: [Constant<Bits<16>>; RO_REGS] = addrs(Kind::Ro),
        k_rw_addr: [Constant<Bits<16>>; RW_REGS] = addrs(Kind::Rw),
        k_rw_mask: [Constant<Bits<32>>; RW_REGS] =
            std::array::from_fn(|i| konst(((1u64 << rw_list[i].2) - 1) as usize)),
        k_rw_reset: [Constant<Bits<32>>; RW_REGS] = std::array::from_fn(|i| match rw_list[i].1.access {
            Access::Rw { reset, .. } => konst(reset as usize),
            _ => unreachable!("read/write registers"),
        }),
        k_rw_shift: [Constant<Bits<16>>; RW_REGS] = std::array::from_fn(|i| konst(32 * i)),
        k_wo_addr: [Constant<Bits<16>>; WO_REGS] = addrs(Kind::Wo),
    }
}

impl<const W: usize> Logic for RegFile<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd_v, rd_addr, resp_v, resp, n_bad);
        self.rd_v.d.next = self.bar_rd_valid.val();
        self.rd_addr.d.next = self.bar_rd_addr.val();
        self.resp_v.d.next = self.rd_v.q.val();
        self.rd_hit.next = false;
        self.wr_ok.next = false;
        self.word.next = 0.into();
        for i in 0..ID_REGS {
            if self.bar_rd_addr.val() == self.k_id_addr[i].val() {
                self.rd_hit.next = true;
            }
            if self.rd_addr.q.val() == self.k_id_addr[i].val() {
                self.word.next = self.k_id_val[i].val();
            }
        }
        for i in 0..RO_REGS {
            if self.bar_rd_addr.val() == self.k_ro_addr[i].val() {
                self.rd_hit.next = true;
            }
            if self.rd_addr.q.val() == self.k_ro_addr[i].val() {
                self.word.next = self.ro.val().get_bits::<32>(32 * i);
            }
        }
        self.rw.next = 0.into();
        for i in 0..RW_REGS {
            self.store[i].clock.next = self.clock.val();
            self.store[i].d.next = self.store[i].q.val();
            if self.bar_rd_addr.val() == self.k_rw_addr[i].val() {
                self.rd_hit.next = true;
            }
            if self.bar_wr_addr.val() == self.k_rw_addr[i].val() {
                self.wr_ok.next = true;
                if self.bar_wr_valid.val() {
                    self.store[i].d.next = self.bar_wr_data.val() & self.k_rw_mask[i].val();
                }
            }
            if self.rd_addr.q.val() == self.k_rw_addr[i].val() {
                self.word.next = self.store[i].q.val();
            }
            if self.rst.val() {
                self.store[i].d.next = self.k_rw_reset[i].val();
            }
            self.one.next = self.store[i].q.val();
            self.rw.next = self.rw.val()
                | (bit_cast::<RW_BITS, 32>(self.one.val()) << self.k_rw_shift[i].val());
        }
        self.wo.next = 0.into();
        for i in 0..WO_REGS {
            if self.bar_wr_addr.val() == self.k_wo_addr[i].val() {
                self.wr_ok.next = true;
                self.wo.next = self.wo.val().replace_bit(i, self.bar_wr_valid.val());
            }
        }
        if self.rd_v.q.val() {
            self.resp.d.next = self.word.val();
        }
        self.bad_n.next = self.n_bad.q.val();
        if self.bar_rd_valid.val() & !self.rd_hit.val() {
            self.bad_n.next = self.bad_n.val() + 1;
        }
        if self.bar_wr_valid.val() & !self.wr_ok.val() {
            self.bad_n.next = self.bad_n.val() + 1;
        }
        self.n_bad.d.next = self.bad_n.val();
        self.bar_rd_resp_valid.next = self.resp_v.q.val();
        self.bar_rd_resp_data.next = self.resp.q.val();
        self.bad.next = self.n_bad.q.val();
        if self.rst.val() {
            self.rd_v.d.next = false;
            self.rd_addr.d.next = 0.into();
            self.resp_v.d.next = false;
            self.resp.d.next = 0.into();
            self.n_bad.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// One cycle of BAR traffic: a write (address, data), a read address.
    type Step = (Option<(u16, u32)>, Option<u16>);

    /// What the block showed in one cycle (sampled mid-cycle): the read
    /// response (if valid), the strobes, `bad`, the `rw` bus.
    type Seen = (Option<u32>, u64, u64, Bits<RW_BITS>);

    /// Runs `steps` (one a cycle, after a reset) through rust-hdl's
    /// simulator of the 64-bit register file with `ro` on the bus, then
    /// four idle cycles; returns what it showed in every cycle.
    fn simulate(steps: Vec<Step>, ro: Bits<RO_BITS>) -> Vec<Seen> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let out = seen.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<RegFile<64>>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<RegFile<64>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            x.ro.next = ro;
            for (wr, rd) in steps.iter().copied().chain([(None, None); 4]) {
                x.bar_wr_valid.next = wr.is_some();
                let (wa, wd) = wr.unwrap_or_default();
                x.bar_wr_addr.next = u64::from(wa).to_bits();
                x.bar_wr_data.next = u64::from(wd).to_bits();
                x.bar_rd_valid.next = rd.is_some();
                x.bar_rd_addr.next = u64::from(rd.unwrap_or_default()).to_bits();
                // Sample mid-cycle: the registers after this edge, the
                // strobes of this cycle's write.
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                seen.lock().unwrap().push((
                    x.bar_rd_resp_valid
                        .val()
                        .then(|| x.bar_rd_resp_data.val().to_u64() as u32),
                    x.wo.val().to_u64(),
                    x.bad.val().to_u64(),
                    x.rw.val(),
                ));
            }
            sim.done(x)
        });
        let mut uut = RegFile::<64>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 10_000).unwrap();
        Arc::try_unwrap(out).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_writes_reads_and_counts_bad_accesses() {
        let id = regs::block("ID");
        let cfg = regs::block("CFG");
        let cnt = regs::block("CNT");
        let scratch = id.addr("SCRATCH");
        let cfg_addr = cfg.addr("CFG_ADDR");
        let cnt_val = cnt.addr("CNT_VAL");
        // The ro bus: register i reads 0x1000 + i.
        let mut ro = Bits::<RO_BITS>::default();
        for i in 0..RO_REGS {
            for b in 0..32 {
                ro = ro.replace_bit(32 * i + b, (0x1000 + i) >> b & 1 == 1);
            }
        }
        let cnt_val_place = regs_of(Kind::Ro)
            .iter()
            .position(|(a, _, _)| *a == cnt_val)
            .unwrap();
        let steps: Vec<Step> = vec![
            (Some((scratch, 0xDEAD_BEEF)), None),
            // 10 bits stored of 32 written.
            (Some((cfg_addr, 0xFFFF_FFFF)), Some(scratch)),
            (Some((cfg.addr("CFG_DATA_HI"), 7)), Some(cfg_addr)),
            // A write to a read-only register and a read of no register.
            (Some((cnt_val, 1)), Some(0xFFF0)),
            (None, Some(cnt_val)),
            (None, Some(regs::block("TXQ").base + regs::HDR_TYPE)),
            (None, Some(id.addr("DATA_WIDTH"))),
        ];
        let seen = simulate(steps, ro);
        // Each response two edges after its request (requests in cycles
        // 1 to 6).
        let resp: Vec<(usize, u32)> = seen
            .iter()
            .enumerate()
            .filter_map(|(c, s)| s.0.map(|d| (c, d)))
            .collect();
        assert_eq!(
            resp,
            vec![
                (2, 0xDEAD_BEEF),
                (3, 0x3FF),
                (4, 0),
                (5, 0x1000 + cnt_val_place as u32),
                (6, regs::TYPE_TXQ),
                (7, 64),
            ]
        );
        // The strobe only in the cycle of the write.
        let strobe = 1u64 << wo_bit("CFG", "CFG_DATA_HI");
        let strobes: Vec<u64> = seen.iter().map(|s| s.1).collect();
        assert_eq!(strobes[2], strobe);
        assert!(strobes.iter().enumerate().all(|(c, &s)| c == 2 || s == 0));
        // The storage on the rw bus, the bad accesses counted.
        let last = seen.last().unwrap();
        assert_eq!(
            last.3.get_bits::<32>(rw_bit("ID", "SCRATCH")).to_u64(),
            0xDEAD_BEEF
        );
        assert_eq!(
            last.3.get_bits::<32>(rw_bit("CFG", "CFG_ADDR")).to_u64(),
            0x3FF
        );
        assert_eq!(last.2, 2);
    }

    #[test]
    fn every_register_has_one_place() {
        assert_eq!(
            ID_REGS + RO_REGS + RW_REGS + WO_REGS,
            regs::all_regs().len()
        );
        assert_eq!(ro_sources().len(), RO_REGS);
        assert_eq!(rw_regs().len(), RW_REGS);
        assert_eq!(wo_regs().len(), WO_REGS);
        assert_eq!(rw_bit("IRQ", "HOLDOFF2"), 32 * (RW_REGS - 2));
    }
}
