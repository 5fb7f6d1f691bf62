//! The firmware receive ring's writer: the datagrams the core hands up
//! (`NicCore::m_fw_*`) written to host memory, as a native rust-hdl block.
//!
//! [`FwRxRing`] takes a datagram when the ring is enabled and has room
//! (`prod - cons < 2^size_log2`), and writes it to its entry (256-byte
//! stride, at `base + (prod mod 2^size_log2) · 256`) through the host
//! interface's DMA write arbiter in two requests: the datagram's bytes as
//! the core hands them (at most [`SLOT_BYTES`]: a longer or truncated
//! datagram's first ones), then the entry's 8-byte header at `+`
//! [`SLOT_BYTES`] (bits 15..0 the datagram's length, 31..16 its UDP
//! source port, 32 truncated, 63 the phase: the inverse of bit
//! `size_log2` of the producer index), so the header, phase last, lands
//! after the bytes. Then `prod` counts one up and `inc` is high for a
//! cycle (the interrupt vector's count).
//!
//! rust-hdl's simulator runs it (the test below); under Verilator it is
//! part of [`crate::NicDevice`] (`metaroce-sim-tb`, `nic_device`).
//! `docs/hardware.md` §18 gives the entry format.

use rust_hdl::prelude::*;

use crate::bus::{DmaWriteOut, FwRxIn};

use crate::fw_rx::SLOT_BYTES;
use crate::helpers::{konst, native_block};

/// Where [`FwRxRing`] is with an entry.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum FrrState {
    /// No datagram, or no room.
    Idle,
    /// The datagram's bytes go out.
    Data,
    /// The entry's header goes out.
    Header,
}

native_block! {
    /// The firmware receive ring's writer at `W`-bit beats (`B = W / 8`
    /// lanes; 64 or 512).
    FwRxRing[W, B]
    check {
        W == 8 * B && (W == 64 || W == 512),
        "FwRxRing<{W}, {B}>: 64 or 512 bits, W = 8 * B"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: idle, `prod` 0."]
        rst: Signal<In, Bit>,
        #[doc = "`FRQ.CTRL`: enabled."]
        ctrl: Signal<In, Bit>,
        #[doc = "`FRQ.BASE_HI:BASE_LO`: the ring's base address."]
        base: Signal<In, Bits<64>>,
        #[doc = "`FRQ.SIZE_LOG2`: log2 of the ring's entries."]
        size_log2: Signal<In, Bits<5>>,
        #[doc = "`FRQ.CONS`: the host's consumer index."]
        cons: Signal<In, Bits<32>>,
        #[doc = "The core's handed-up datagrams (`NicCore::m_fw`)."]
        s: FwRxIn<W, B>,
        #[doc = "The ring's DMA writes, through the host interface's write arbiter."]
        w: DmaWriteOut<W, B>,
        #[doc = "`FRQ.PROD`: entries written (free-running)."]
        prod: Signal<Out, Bits<32>>,
        #[doc = "An entry was written in the cycle before (the vector's count)."]
        inc: Signal<Out, Bit>,
    }
    state {
        seq: FrrSeq,
        // The entry's address, the datagram's bytes written, its length,
        // UDP source port and truncation, latched as it starts.
        addr: DFF<Bits<64>>,
        len: DFF<Bits<16>>,
        glen: DFF<Bits<16>>,
        src: DFF<Bits<16>>,
        trunc: DFF<Bit>,
        // Temporaries (of registers and ports only): the ring's index
        // mask, the header word.
        mask: Signal<Local, Bits<32>>,
        hdr: Signal<Local, Bits<W>>,
    }
    consts {
        k_one: Constant<Bits<32>> = konst(1),
        k_slot: Constant<Bits<16>> = konst(SLOT_BYTES),
        k_slot64: Constant<Bits<64>> = konst(SLOT_BYTES),
        k_hdr_bytes: Constant<Bits<16>> = konst(8),
        k_hdr_keep: Constant<Bits<B>> = konst(0xFF),
    }
}

impl<const W: usize, const B: usize> Logic for FwRxRing<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, addr, len, glen, src, trunc);

        // ---- a datagram starts: the ring has room ----
        self.mask.next = (self.k_one.val() << self.size_log2.val()) - 1;
        self.seq.clock.next = self.clock.val();
        self.seq.rst.next = self.rst.val();
        self.seq.start.next = self.s.tvalid.val()
            & self.ctrl.val()
            & ((self.seq.prod.val() - self.cons.val())
                < (self.k_one.val() << self.size_log2.val()));
        self.seq.w_tready.next = self.w.tready.val();
        self.seq.s_tvalid.next = self.s.tvalid.val();
        self.seq.s_tlast.next = self.s.tlast.val();
        if self.seq.load.val() {
            self.addr.d.next =
                self.base.val() + (bit_cast::<64, 32>(self.seq.prod.val() & self.mask.val()) << 8);
            self.len.d.next = self.s.len.val();
            if self.s.trunc.val() | (self.s.len.val() > self.k_slot.val()) {
                self.len.d.next = self.k_slot.val();
            }
            self.glen.d.next = self.s.len.val();
            self.src.d.next = self.s.src_port.val();
            self.trunc.d.next = self.s.trunc.val();
        }

        // ---- the DMA write requests: the bytes, then the header ----
        self.hdr.next =
            bit_cast::<W, 16>(self.glen.q.val()) | (bit_cast::<W, 16>(self.src.q.val()) << 16);
        self.hdr.next = self.hdr.val().replace_bit(32, self.trunc.q.val());
        self.hdr.next = self.hdr.val().replace_bit(
            63,
            !self.seq.prod.val().get_bit(self.size_log2.val().index()),
        );
        self.w.addr.next = self.addr.q.val();
        self.w.len.next = self.len.q.val();
        self.w.first.next = self.seq.first.val();
        self.w.tdata.next = self.s.tdata.val();
        self.w.tkeep.next = self.s.tkeep.val();
        self.w.tlast.next = self.s.tlast.val();
        self.w.tvalid.next = (self.seq.st.val() == FrrState::Data) & self.s.tvalid.val();
        if self.seq.st.val() == FrrState::Header {
            self.w.addr.next = self.addr.q.val() + self.k_slot64.val();
            self.w.len.next = self.k_hdr_bytes.val();
            self.w.first.next = true;
            self.w.tdata.next = self.hdr.val();
            self.w.tkeep.next = self.k_hdr_keep.val();
            self.w.tlast.next = true;
            self.w.tvalid.next = true;
        }
        self.s.tready.next = (self.seq.st.val() == FrrState::Data) & self.w.tready.val();
        self.prod.next = self.seq.prod.val();
        self.inc.next = self.seq.inc.val();
    }
}

/// The sequencer of [`FwRxRing`]: its state, first-beat flag, producer
/// index and vector count, and the transitions the DMA write port's
/// `w_tready` decides. A block of its own so that `w_tready` reaches only
/// these registers' inputs (the host interface's arbiter turns this
/// block's `w_tvalid` into its `m_dmaw_tvalid`; in one kernel with the
/// outputs Verilator would see a combinational loop).
#[derive(LogicBlock, Default)]
pub struct FrrSeq {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: idle, `prod` 0.
    pub rst: Signal<In, Bit>,
    /// A datagram waits, the ring is enabled and has room.
    pub start: Signal<In, Bit>,
    /// The DMA write port takes the beat.
    pub w_tready: Signal<In, Bit>,
    /// The core's beat is valid.
    pub s_tvalid: Signal<In, Bit>,
    /// It is the datagram's last.
    pub s_tlast: Signal<In, Bit>,
    /// The state.
    pub st: Signal<Out, FrrState>,
    /// The datagram's first beat is still to go.
    pub first: Signal<Out, Bit>,
    /// Entries written.
    pub prod: Signal<Out, Bits<32>>,
    /// An entry was written in the cycle before.
    pub inc: Signal<Out, Bit>,
    /// The entry's fields are latched this cycle (idle and `start`).
    pub load: Signal<Out, Bit>,
    s: DFF<FrrState>,
    f: DFF<Bit>,
    n_prod: DFF<Bits<32>>,
    i: DFF<Bit>,
}

impl Logic for FrrSeq {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s, f, n_prod, i);
        self.st.next = self.s.q.val();
        self.first.next = self.f.q.val();
        self.prod.next = self.n_prod.q.val();
        self.inc.next = self.i.q.val();
        self.load.next = (self.s.q.val() == FrrState::Idle) & self.start.val();
        self.i.d.next = false;
        match self.s.q.val() {
            FrrState::Idle => {
                if self.start.val() {
                    self.s.d.next = FrrState::Data;
                    self.f.d.next = true;
                }
            }
            FrrState::Data => {
                if self.w_tready.val() & self.s_tvalid.val() {
                    self.f.d.next = false;
                    if self.s_tlast.val() {
                        self.s.d.next = FrrState::Header;
                    }
                }
            }
            _ => {
                // The header.
                if self.w_tready.val() {
                    self.n_prod.d.next = self.n_prod.q.val() + 1;
                    self.i.d.next = true;
                    self.s.d.next = FrrState::Idle;
                }
            }
        }
        if self.rst.val() {
            self.s.d.next = FrrState::Idle;
            self.f.d.next = false;
            self.n_prod.d.next = 0.into();
            self.i.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// Ring base address of the test (above 4 GiB, as the bench's).
    const BASE: u64 = 0x2_0000_0000;

    /// A datagram the core hands up: bytes (at most a slot), its length,
    /// truncated, UDP source port.
    #[derive(Clone)]
    struct Gram {
        bytes: Vec<u8>,
        len: u16,
        trunc: bool,
        src: u16,
    }

    /// One DMA write request the block made: address, length, bytes.
    type Write = (u64, u64, Vec<u8>);

    /// What the block did: its write requests, `prod` and the `inc`
    /// pulses, and the cycle each datagram's last beat was taken.
    #[derive(Debug, Default)]
    struct Run {
        writes: Vec<Write>,
        prod: u64,
        incs: u64,
        taken: Vec<usize>,
    }

    /// Runs the 64-bit block over `grams` (ring of 4 entries, `cons`
    /// raised to 4 at cycle `free_at`): the core offers a beat every
    /// other cycle, the arbiter gives the port two cycles of three.
    fn simulate(grams: Vec<Gram>, free_at: usize) -> Run {
        let run = Arc::new(Mutex::new(Run::default()));
        let result = run.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<FwRxRing<64, 8>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<FwRxRing<64, 8>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            x.ctrl.next = true;
            x.base.next = BASE.to_bits();
            x.size_log2.next = 2.into();
            let mut grams: VecDeque<Gram> = grams.iter().cloned().collect();
            let mut beat = 0usize;
            let mut open: Option<Write> = None;
            for cycle in 0..2000usize {
                x.cons.next = (if cycle >= free_at { 4u64 } else { 0 }).to_bits();
                // The core's beat.
                x.s.tvalid.next = false;
                if let Some(g) = grams.front() {
                    let chunks: Vec<&[u8]> = g.bytes.chunks(8).collect();
                    let c = chunks[beat];
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    x.s.tdata.next = u64::from_le_bytes(w).to_bits();
                    x.s.tkeep.next = ((1u64 << c.len()) - 1).to_bits();
                    x.s.tlast.next = beat + 1 == chunks.len();
                    x.s.len.next = u64::from(g.len).to_bits();
                    x.s.trunc.next = g.trunc;
                    x.s.src_port.next = u64::from(g.src).to_bits();
                    x.s.tvalid.next = cycle % 2 == 0;
                }
                x.w.tready.next = cycle % 3 != 1;
                // Let the inputs settle: the outputs show this cycle's
                // handshakes.
                x = sim.wait(1, x)?;
                let mut r = run.lock().unwrap();
                if x.inc.val() {
                    r.incs += 1;
                }
                if x.w.tvalid.val() && x.w.tready.val() {
                    if x.w.first.val() {
                        assert!(open.is_none(), "a request started inside another");
                        open = Some((x.w.addr.val().to_u64(), x.w.len.val().to_u64(), vec![]));
                    }
                    let k = x.w.tkeep.val().to_u64().count_ones() as usize;
                    let w = open.as_mut().expect("a beat outside a request");
                    w.2.extend_from_slice(&x.w.tdata.val().to_u64().to_le_bytes()[..k]);
                    if x.w.tlast.val() {
                        r.writes.extend(open.take());
                    }
                }
                if x.s.tvalid.val() && x.s.tready.val() {
                    beat += 1;
                    if x.s.tlast.val() {
                        beat = 0;
                        grams.pop_front();
                        r.taken.push(cycle);
                    }
                }
                drop(r);
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            let mut r = run.lock().unwrap();
            r.prod = x.prod.val().to_u64();
            drop(r);
            sim.done(x)
        });
        let mut uut = FwRxRing::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 100_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_writes_each_datagram_then_its_header_and_waits_for_room() {
        let gram = |d: usize, body: usize, len: u16, trunc: bool| Gram {
            bytes: (0..body).map(|j| (d * 29 + j * 7 + 1) as u8).collect(),
            len,
            trunc,
            src: 0x2000 + d as u16,
        };
        // Six datagrams into a ring of 4: the last two wait for `cons`.
        let grams = vec![
            gram(0, 100, 100, false),
            gram(1, 1, 1, false),
            gram(2, 128, 300, true),
            gram(3, 64, 64, false),
            gram(4, 13, 13, false),
            gram(5, 128, 128, false),
        ];
        let mut want: Vec<Write> = Vec::new();
        for (i, g) in grams.iter().enumerate() {
            let entry = BASE + 256 * (i as u64 % 4);
            want.push((entry, g.bytes.len() as u64, g.bytes.clone()));
            // Phase 1 in the first lap of the ring, 0 in the second.
            let hdr = u64::from(g.len)
                | u64::from(g.src) << 16
                | u64::from(g.trunc) << 32
                | u64::from(i < 4) << 63;
            want.push((entry + 128, 8, hdr.to_le_bytes().to_vec()));
        }
        let free_at = 600;
        let run = simulate(grams, free_at);
        assert_eq!(run.writes, want);
        assert_eq!((run.prod, run.incs), (6, 6));
        // The fifth datagram was held until the ring had room.
        assert!(
            run.taken[3] < free_at && run.taken[4] > free_at,
            "{:?}",
            run.taken
        );
    }
}
