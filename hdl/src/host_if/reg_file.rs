//! BAR0's register file: the decoder, the read/write storage and the read
//! multiplexer of the register map in [`regs::BLOCKS`] (the one source of
//! truth), as a native rust-hdl block.
//!
//! [`RegFile`] holds every read/write register (reset to its reset value,
//! upper bits past its width 0), raises a write-only register's strobe in
//! the cycle it is written, and answers a read two cycles after the
//! request: the request is decoded and registered first, then the value
//! (so a counter select written just before a read has reached the
//! counter). Build constants (block headers, the identification block,
//! the read-only registers the table gives a constant `32'dN`) are
//! constants of the block; the other read-only registers are the host
//! interface's: while a read of one is answered the block shows its place
//! among them (`ro_rd_sel`, [`ro_sources`] order) and takes the value the
//! host interface selects for it (`ro_rd_data`). The read/write storage
//! is one register of [`RW_BITS`] bits that leaves as the `rw` bus, 32
//! bits per register in address order ([`RW_REGS`]). An access to an
//! address with no register, or a write to a read-only one, is ignored (a
//! read returns 0) and counted (`bad`, the `ID.BAR_BAD` register).
//!
//! The read multiplexer is small because the request is decoded in its
//! own cycle: the address compares give the register's kind and its place
//! among the registers of that kind ([`PLACE_BITS`] bits), both
//! registered, and the answer selects by that place. The read/write
//! registers are read from a copy of their storage in block RAM
//! ([`BlockRam`], written with each write, masked to the register's
//! width), not from the flip-flops: a 64-word RAM's read replaces a
//! multiplexer of 51 words; a flag per register (cleared by reset, set by
//! a write) makes a register not written since reset read its reset value.
//! The copy is read at the place being registered (the request's cycle),
//! so its word is there with the registered place, a write at the same
//! edge included (the bypass).
//!
//! The decoder is a loop over arrays of [`Constant`]s built from
//! [`regs::all_regs`] when the block is made. Under Verilator every
//! kernel runs every clock edge, but code in an untaken branch does not:
//! so the address compares run only for a request or a write, and the
//! storage is one wide register (the `rw` bus is a copy of it, not a
//! word-by-word assembly). rust-hdl's simulator runs it (the tests
//! below); under Verilator it is part of [`crate::NicDevice`]
//! (`metaroce-sim-tb`, `nic_device`).

use rust_hdl::prelude::*;

use super::regs::{self, Access, BLOCKS, IRQ_VECTORS, Reg, RegBlock};
use crate::helpers::{BlockRam, konst, native_block};
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
        Access::Ro(src) if is_fixed(src) => Kind::Id,
        Access::Ro(_) => Kind::Ro,
        Access::Rw { .. } => Kind::Rw,
        Access::Wo => Kind::Wo,
    }
}

/// A read-only register's source is a constant (`32'dN`).
const fn is_fixed(src: &str) -> bool {
    let b = src.as_bytes();
    b.len() > 4 && b[0] == b'3' && b[1] == b'2' && b[2] == b'\'' && b[3] == b'd'
}

/// The value of a constant source (`32'dN` in [`regs::BLOCKS`]).
fn fixed_value(src: &str) -> Option<u32> {
    src.strip_prefix("32'd")
        .map(|n| n.parse().expect("a decimal constant"))
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

/// Build constants (block headers, the identification block, constant
/// read-only registers).
pub const ID_REGS: usize = count(Kind::Id);
/// Read-only registers whose value the host interface selects.
pub const RO_REGS: usize = count(Kind::Ro);
/// Read/write registers.
pub const RW_REGS: usize = count(Kind::Rw);
/// Write-only registers (strobes).
pub const WO_REGS: usize = count(Kind::Wo);
/// Bits of the `rw` bus: register `i` of the read/write ones at `32 * i`.
pub const RW_BITS: usize = 32 * RW_REGS;
/// Bits of a register's place among the registers of its kind (the
/// decoded read's `ro_rd_sel`).
pub const PLACE_BITS: usize = 7;
/// Address bits of the read/write registers' copy in distributed RAM.
const RW_AT_BITS: usize = 6;
/// The most registers of one kind that are read (a place for each).
const PLACES: usize = max(max(ID_REGS, RO_REGS), RW_REGS);

const fn max(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

const _: () = assert!(
    PLACES <= 1 << PLACE_BITS && RW_REGS <= 1 << RW_AT_BITS,
    "more registers of a kind than places"
);

/// The decoded registers of one kind, in address order: their place in
/// that order is their place on the `rw` bus, or their strobe bit.
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

/// The read-only registers the host interface feeds, in address order:
/// (address, the name of the host interface's signal the table gives).
pub fn ro_sources() -> Vec<(u16, &'static str)> {
    regs_of(Kind::Ro)
        .into_iter()
        .map(|(a, _, r)| match r.access {
            Access::Ro(src) => (a, src),
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

/// The value of build constant `block.reg` (a header word, an
/// identification register, or a read-only register the table gives a
/// constant) for a `w`-bit data path.
///
/// # Panics
/// If the register is not a build constant.
pub fn id_value(block: &RegBlock, reg: &Reg, w: usize) -> u32 {
    if reg.offset <= regs::HDR_NEXT {
        return regs::header_value(block, reg.offset);
    }
    if let Some(v) = match reg.access {
        Access::Ro(src) => fixed_value(src),
        _ => None,
    } {
        return v;
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

/// `v` with the low `bits` bits of word `i` set to those of `value`
/// (the word's other bits as they were).
fn with_word(v: Bits<RW_BITS>, i: usize, value: u32, bits: u32) -> Bits<RW_BITS> {
    (0..bits as usize).fold(v, |v, b| v.replace_bit(32 * i + b, value >> b & 1 == 1))
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
        #[doc = "A read of a read-only register the host interface feeds is answered this cycle (`ro_rd_data` is taken)."]
        ro_rd_valid: Signal<Out, Bit>,
        #[doc = "That register's place among them ([`ro_sources`] order; registered)."]
        ro_rd_sel: Signal<Out, Bits<PLACE_BITS>>,
        #[doc = "The value of the read-only register at place `ro_rd_sel`, from the host interface."]
        ro_rd_data: Signal<In, Bits<32>>,
        #[doc = "The read/write registers' storage, 32 bits each ([`rw_bit`])."]
        rw: Signal<Out, Bits<RW_BITS>>,
        #[doc = "The write-only registers' strobes ([`wo_bit`]): high in the cycle after the write (registered, so the address decode ends here)."]
        wo: Signal<Out, Bits<WO_REGS>>,
        #[doc = "The data of the write `wo` shows (registered with it)."]
        wo_data: Signal<Out, Bits<32>>,
        #[doc = "Accesses to no register and writes to read-only ones (`ID.BAR_BAD`)."]
        bad: Signal<Out, Bits<32>>,
    }
    state {
        store: DFF<Bits<RW_BITS>>,
        // The read/write registers' copy the reads take (masked words at
        // their places), and which of them were written since reset.
        copy: BlockRam<32, RW_AT_BITS> = BlockRam::with_words(1 << RW_AT_BITS),
        written: DFF<Bits<RW_REGS>>,
        // The decoded request: valid, its register's kind (a build
        // constant, a read-only register, a read/write one) and place.
        rd_v: DFF<Bit>,
        rd_id: DFF<Bit>,
        rd_ro: DFF<Bit>,
        rd_rw: DFF<Bit>,
        rd_at: DFF<Bits<PLACE_BITS>>,
        resp_v: DFF<Bit>,
        resp: DFF<Bits<32>>,
        n_bad: DFF<Bits<32>>,
        // The strobes and their data, a cycle after the write: a strobe
        // still sees every register written before it (the storage is
        // loaded at the same edge) and none written after it.
        wo_q: DFF<Bits<WO_REGS>>,
        wo_data_q: DFF<Bits<32>>,
        // Temporaries: the request's address has a register, the write's
        // has a writable one; the new count; the strobes.
        rd_hit: Signal<Local, Bit>,
        wr_ok: Signal<Local, Bit>,
        bad_n: Signal<Local, Bits<32>>,
        wo_n: Signal<Local, Bits<WO_REGS>>,
    }
    consts {
        k_id_addr: [Constant<Bits<16>>; ID_REGS] = addrs(Kind::Id),
        k_id_val: [Constant<Bits<32>>; ID_REGS] = {
            let list = regs_of(Kind::Id);
            std::array::from_fn(|i| konst(id_value(list[i].1, &list[i].2, W) as usize))
        },
        k_ro_addr: [Constant<Bits<16>>; RO_REGS] = addrs(Kind::Ro),
        k_rw_addr: [Constant<Bits<16>>; RW_REGS] = addrs(Kind::Rw),
        k_rw_reset: Constant<Bits<RW_BITS>> = Constant::new(
            rw_list.iter().enumerate().fold(Bits::default(), |v, (i, (_, r, bits))| {
                with_word(v, i, reset_of(r), *bits)
            }),
        ),
        // The stored bits of register i in the storage (its other bits
        // are always 0).
        k_rw_field: [Constant<Bits<RW_BITS>>; RW_REGS] = std::array::from_fn(|i| {
            Constant::new(with_word(Bits::default(), i, u32::MAX, rw_list[i].2))
        }),
        k_rw_shift: [Constant<Bits<16>>; RW_REGS] = std::array::from_fn(|i| konst(32 * i)),
        // Register i's stored bits in a word, and its reset value.
        k_rw_mask: [Constant<Bits<32>>; RW_REGS] = std::array::from_fn(|i| {
            konst(((1u64 << rw_list[i].2) - 1) as usize)
        }),
        k_rw_init: [Constant<Bits<32>>; RW_REGS] = std::array::from_fn(|i| {
            konst(reset_of(&rw_list[i].1) as usize)
        }),
        k_rw_at: [Constant<Bits<RW_AT_BITS>>; RW_REGS] = std::array::from_fn(konst),
        k_wo_addr: [Constant<Bits<16>>; WO_REGS] = addrs(Kind::Wo),
        k_place: [Constant<Bits<PLACE_BITS>>; PLACES] = std::array::from_fn(konst),
    }
}

/// The reset value of read/write register `r`.
fn reset_of(r: &Reg) -> u32 {
    match r.access {
        Access::Rw { reset, .. } => reset,
        _ => unreachable!("read/write registers"),
    }
}

impl<const W: usize> Logic for RegFile<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, store, written, rd_v, rd_id, rd_ro, rd_rw, rd_at, resp_v, resp, n_bad,
            wo_q, wo_data_q
        );
        self.copy.clock.next = self.clock.val();
        self.rd_v.d.next = self.bar_rd_valid.val();
        self.resp_v.d.next = self.rd_v.q.val();
        self.ro_rd_valid.next = self.rd_ro.q.val();
        self.ro_rd_sel.next = self.rd_at.q.val();
        self.rw.next = self.store.q.val();
        // A request: its register's kind and place (none: no register).
        self.rd_hit.next = false;
        self.rd_id.d.next = false;
        self.rd_ro.d.next = false;
        self.rd_rw.d.next = false;
        self.rd_at.d.next = 0.into();
        if self.bar_rd_valid.val() {
            for i in 0..ID_REGS {
                if self.bar_rd_addr.val() == self.k_id_addr[i].val() {
                    self.rd_hit.next = true;
                    self.rd_id.d.next = true;
                    self.rd_at.d.next = self.k_place[i].val();
                }
            }
            for i in 0..RO_REGS {
                if self.bar_rd_addr.val() == self.k_ro_addr[i].val() {
                    self.rd_hit.next = true;
                    self.rd_ro.d.next = true;
                    self.rd_at.d.next = self.k_place[i].val();
                }
            }
            for i in 0..RW_REGS {
                if self.bar_rd_addr.val() == self.k_rw_addr[i].val() {
                    self.rd_hit.next = true;
                    self.rd_rw.d.next = true;
                    self.rd_at.d.next = self.k_place[i].val();
                }
            }
        }
        // A write: into a read/write register's storage and its copy, or
        // a strobe.
        self.wr_ok.next = false;
        self.wo_n.next = 0.into();
        self.wo_data_q.d.next = self.bar_wr_data.val();
        self.copy.write_enable.next = false;
        self.copy.write_address.next = 0.into();
        self.copy.write_data.next = self.bar_wr_data.val();
        if self.bar_wr_valid.val() {
            for i in 0..RW_REGS {
                if self.bar_wr_addr.val() == self.k_rw_addr[i].val() {
                    self.wr_ok.next = true;
                    self.store.d.next = (self.store.q.val() & !self.k_rw_field[i].val())
                        | ((bit_cast::<RW_BITS, 32>(self.bar_wr_data.val())
                            << self.k_rw_shift[i].val())
                            & self.k_rw_field[i].val());
                    self.copy.write_enable.next = true;
                    self.copy.write_address.next = self.k_rw_at[i].val();
                    self.copy.write_data.next = self.bar_wr_data.val() & self.k_rw_mask[i].val();
                    self.written.d.next = self.written.q.val().replace_bit(i, true);
                }
            }
            for i in 0..WO_REGS {
                if self.bar_wr_addr.val() == self.k_wo_addr[i].val() {
                    self.wr_ok.next = true;
                    self.wo_n.next = self.wo_n.val().replace_bit(i, true);
                }
            }
        }
        // The answer: the word at the registered place of its kind.
        self.copy.read_address.next = bit_cast::<RW_AT_BITS, PLACE_BITS>(self.rd_at.d.val());
        if self.rd_v.q.val() {
            self.resp.d.next = 0.into();
            if self.rd_id.q.val() {
                for i in 0..ID_REGS {
                    if self.rd_at.q.val() == self.k_place[i].val() {
                        self.resp.d.next = self.k_id_val[i].val();
                    }
                }
            }
            if self.rd_ro.q.val() {
                self.resp.d.next = self.ro_rd_data.val();
            }
            if self.rd_rw.q.val() {
                if self.written.q.val().get_bit(self.rd_at.q.val().index()) {
                    self.resp.d.next = self.copy.read_data.val();
                } else {
                    for i in 0..RW_REGS {
                        if self.rd_at.q.val() == self.k_place[i].val() {
                            self.resp.d.next = self.k_rw_init[i].val();
                        }
                    }
                }
            }
        }
        self.bad_n.next = self.n_bad.q.val();
        if self.bar_rd_valid.val() & !self.rd_hit.val() {
            self.bad_n.next = self.bad_n.val() + 1;
        }
        if self.bar_wr_valid.val() & !self.wr_ok.val() {
            self.bad_n.next = self.bad_n.val() + 1;
        }
        self.n_bad.d.next = self.bad_n.val();
        self.wo_q.d.next = self.wo_n.val();
        self.wo.next = self.wo_q.q.val();
        self.wo_data.next = self.wo_data_q.q.val();
        self.bar_rd_resp_valid.next = self.resp_v.q.val();
        self.bar_rd_resp_data.next = self.resp.q.val();
        self.bad.next = self.n_bad.q.val();
        if self.rst.val() {
            self.store.d.next = self.k_rw_reset.val();
            self.written.d.next = 0.into();
            self.rd_v.d.next = false;
            self.rd_id.d.next = false;
            self.rd_ro.d.next = false;
            self.rd_rw.d.next = false;
            self.rd_at.d.next = 0.into();
            self.resp_v.d.next = false;
            self.resp.d.next = 0.into();
            self.n_bad.d.next = 0.into();
            self.wo_q.d.next = 0.into();
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
    /// response (if valid), the strobes, `bad`, the `rw` bus, the strobes'
    /// data; and the strobes and their data before the cycle's edge, with
    /// the cycle's inputs applied.
    type Seen = (Option<u32>, u64, u64, Bits<RW_BITS>, u64, (u64, u64));

    /// The value the test's host interface gives the read-only register at
    /// place `i` (in [`ro_sources`] order): `0x1000 + i`.
    fn ro_at(i: u64) -> u64 {
        0x1000 + i
    }

    /// The value the test's host interface gives the read-only register at
    /// `addr` ([`ro_at`] of its place).
    fn ro_value(addr: u16) -> u64 {
        ro_sources()
            .iter()
            .position(|(a, _)| *a == addr)
            .map_or(0, |i| ro_at(i as u64))
    }

    /// Runs `steps` (one a cycle, after a reset; reset again in the cycles
    /// `resets` names) through rust-hdl's simulator of the 64-bit register
    /// file, the read-only registers answered by [`ro_at`] (`0xBAD` while
    /// it asks for none), then four idle cycles; returns what it showed in
    /// every cycle.
    fn simulate(steps: Vec<Step>, resets: &'static [usize]) -> Vec<Seen> {
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
            for (c, (wr, rd)) in steps.iter().copied().chain([(None, None); 4]).enumerate() {
                x.rst.next = resets.contains(&c);
                x.ro_rd_data.next = if x.ro_rd_valid.val() {
                    ro_at(x.ro_rd_sel.val().to_u64()).to_bits()
                } else {
                    0xBADu64.to_bits()
                };
                x.bar_wr_valid.next = wr.is_some();
                let (wa, wd) = wr.unwrap_or_default();
                x.bar_wr_addr.next = u64::from(wa).to_bits();
                x.bar_wr_data.next = u64::from(wd).to_bits();
                x.bar_rd_valid.next = rd.is_some();
                x.bar_rd_addr.next = u64::from(rd.unwrap_or_default()).to_bits();
                x = sim.wait(1, x)?;
                let before_edge = (x.wo.val().to_u64(), x.wo_data.val().to_u64());
                // Sample mid-cycle: the registers after this edge (the
                // strobes: this cycle's write's, registered at it).
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                seen.lock().unwrap().push((
                    x.bar_rd_resp_valid
                        .val()
                        .then(|| x.bar_rd_resp_data.val().to_u64() as u32),
                    x.wo.val().to_u64(),
                    x.bad.val().to_u64(),
                    x.rw.val(),
                    x.wo_data.val().to_u64(),
                    before_edge,
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
    fn rust_hdl_model_writes_reads_resets_and_counts_bad_accesses() {
        let id = regs::block("ID");
        let cfg = regs::block("CFG");
        let cnt = regs::block("CNT");
        let scratch = id.addr("SCRATCH");
        let cfg_addr = cfg.addr("CFG_ADDR");
        let cnt_val = cnt.addr("CNT_VAL");
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
            // A read-only register the table gives a constant.
            (None, Some(regs::block("TXQ").addr("ENTRY_LOG2"))),
            // A read in the cycle of a write to the register: the new value.
            (Some((scratch, 0x1234)), Some(scratch)),
            (None, None),
            // Reset (cycle 10): the registers read their reset values,
            // and a write after it is read back.
            (None, None),
            (None, Some(scratch)),
            (None, Some(cfg_addr)),
            (Some((scratch, 0x55)), None),
            (None, Some(scratch)),
        ];
        let seen = simulate(steps, &[10]);
        // Each response two edges after its request (requests in cycles
        // 1 to 8 and 11, 12, 14).
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
                (5, ro_value(cnt_val) as u32),
                (6, regs::TYPE_TXQ),
                (7, 64),
                (8, 7),
                (9, 0x1234),
                (12, 0),
                (13, 0),
                (15, 0x55),
            ]
        );
        // The strobe and its data only in the cycle after the write's edge.
        let strobe = 1u64 << wo_bit("CFG", "CFG_DATA_HI");
        let strobes: Vec<u64> = seen.iter().map(|s| s.1).collect();
        assert_eq!(strobes[2], strobe);
        assert_eq!(seen[2].4, 7);
        // Registered: before its edge the write shows no strobe yet, and
        // the next cycle (a write of other data) still shows this one's.
        assert_eq!(seen[2].5.0, 0);
        assert_eq!(seen[3].5, (strobe, 7));
        assert!(strobes.iter().enumerate().all(|(c, &s)| c == 2 || s == 0));
        // The storage on the rw bus, the bad accesses counted, before the
        // reset and after it.
        let word = |s: &Seen, block, reg| s.3.get_bits::<32>(rw_bit(block, reg)).to_u64();
        let before = &seen[9];
        assert_eq!(word(before, "ID", "SCRATCH"), 0x1234);
        assert_eq!(word(before, "CFG", "CFG_ADDR"), 0x3FF);
        assert_eq!(before.2, 2);
        let last = seen.last().unwrap();
        assert_eq!(word(last, "ID", "SCRATCH"), 0x55);
        assert_eq!(word(last, "CFG", "CFG_ADDR"), 0);
        assert_eq!(last.2, 0);
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
