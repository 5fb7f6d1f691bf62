//! Firmware receive queue: the bytes of the datagrams the receive core
//! hands to the firmware (verdict 10: ACKs, NACKs, READ requests, CM, and
//! SENDs of streams without a receive ring).
//!
//! [`FwRx`] taps the datagram stream entering the receive core (every beat
//! the core takes, as [`crate::AckRx`] does) and keeps the first
//! [`SLOT_BYTES`] bytes of each datagram, with its length, in one of 8
//! slots. The core emits one verdict event per datagram, in order, a few
//! cycles after its last beat; the event of the oldest undecided slot
//! marks it to be handed up (verdict 10, with the event's UDP source port)
//! or freed. The oldest decided slot is handed up on `m_fw_*`, one beat per
//! cycle, lane 0 first, packed `tkeep`, with the datagram's length
//! (`m_fw_len`) and `m_fw_trunc` when it was longer than a slot (its first
//! [`SLOT_BYTES`] only: an ACK is 100 bytes, a READ request 68, so only
//! SENDs of streams 4 and up are cut). When all 8 slots are taken, `hold`
//! stops the core's input before the next datagram: nothing the core
//! accepted is lost on the way to the firmware, however slowly it reads.
//!
//! Native rust-hdl: the slots' beats are one [`BlockRam`] in the read
//! side, [`FwRxRead`], which reads it at the slot and beat it will name
//! after the clock edge, so the handed-up beat is the one `rd` and the
//! beat counter name in the same cycle, as from an asynchronous read (2
//! `DP16KD`s at 64 bits instead of 128 `DPR16X4`s); the per-slot length,
//! verdict and port are arrays of registers selected by loop-and-compare.
//! rust-hdl's own simulator runs
//! the block (the test below); it is verified under Verilator inside
//! [`crate::NicCore`] by the two-NIC harness (`metaroce-sim-tb`
//! `hw_pair`), whose firmware processes every ACK and READ request from
//! these bytes.

use rust_hdl::prelude::*;

use crate::bus::{FwRxOut, TapIn};
use crate::helpers::{BlockRam, konst, native_block};
use crate::rx_place::Verdict;

/// Bytes of a datagram kept for the firmware.
pub const SLOT_BYTES: usize = 128;

/// Datagram slots.
const SLOTS: usize = 8;

native_block! {
    /// The firmware receive queue at `W`-bit beats (`B = W / 8` lanes, 8 to 64).
    FwRx[W, B]
    check {
        W == 8 * B && B.is_power_of_two() && (8..=64).contains(&B),
        "FwRx<{W}, {B}>: B must be 8, 16, 32 or 64 and W = 8 * B"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the slots, clears the counters."]
        rst: Signal<In, Bit>,
        #[doc = "The receive core's input as it takes it (`NicRx`'s tap)."]
        s_tap: TapIn<W, B>,
        #[doc = "Core event pulse (one per datagram, in order)."]
        ev_valid: Signal<In, Bit>,
        #[doc = "Core event verdict."]
        ev_code: Signal<In, Bits<5>>,
        #[doc = "Core event UDP source port."]
        ev_src_port: Signal<In, Bits<16>>,
        #[doc = "No slot is free: the core must not start another datagram."]
        hold: Signal<Out, Bit>,
        #[doc = "Datagrams handed up to the firmware."]
        m_fw: FwRxOut<W, B>,
        #[doc = "Datagrams handed up."]
        cnt_up: Signal<Out, Bits<32>>,
        #[doc = "Of which cut to a slot."]
        cnt_trunc: Signal<Out, Bits<32>>,
    }
    state {
        // Per slot: the datagram's length (may exceed the slot), its
        // event said hand up (verdict 10), its UDP source port.
        s_len: [DFF<Bits<16>>; SLOTS],
        s_up: DFF<Bits<SLOTS>>,
        s_port: [DFF<Bits<16>>; SLOTS],
        // Slot being filled, next slot its event decides (mod 16: 8
        // apart from the reader's when all are taken).
        wr: DFF<Bits<4>>,
        ev: DFF<Bits<4>>,
        // Beat of the datagram being filled, its bytes so far.
        beat: DFF<Bits<16>>,
        len: DFF<Bits<16>>,
        // The next slot to hand up or free, and its beat (`rd`, `obeat`);
        // the slots' first SLOT_BYTES (word slot * SBEATS + beat).
        reader: FwRxRead<W>,
        n_up: DFF<Bits<32>>,
        n_trunc: DFF<Bits<32>>,
        // Temporaries: bytes of the input beat; the slot `rd` names
        // (length, bytes handed up, bytes left from `obeat`, verdict);
        // the length of the slot `ev` names.
        kb: Signal<Local, Bits<16>>,
        r_len: Signal<Local, Bits<16>>,
        r_bytes: Signal<Local, Bits<16>>,
        r_rem: Signal<Local, Bits<16>>,
        r_up: Signal<Local, Bit>,
        e_len: Signal<Local, Bits<16>>,
    }
    consts {
        k_slot_bytes: Constant<Bits<16>> = konst(SLOT_BYTES),
        k_b: Constant<Bits<16>> = konst(B),
        k_b_shift: Constant<Bits<16>> = konst(B.trailing_zeros() as usize),
        k_slot_shift: Constant<Bits<16>> = konst((SLOT_BYTES / B).trailing_zeros() as usize),
        k_sbeats: Constant<Bits<16>> = konst(SLOT_BYTES / B),
        k_full: Constant<Bits<4>> = konst(SLOTS),
        k_firmware: Constant<Bits<5>> = konst(Verdict::Firmware as usize),
    }
}

impl<const W: usize, const B: usize> Logic for FwRx<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s_up, wr, ev, beat, len, n_up, n_trunc);
        for i in 0..SLOTS {
            self.s_len[i].clock.next = self.clock.val();
            self.s_len[i].d.next = self.s_len[i].q.val();
            self.s_port[i].clock.next = self.clock.val();
            self.s_port[i].d.next = self.s_port[i].q.val();
        }

        // A new datagram needs a free slot: hold the core's input while
        // none is.
        self.hold.next = (self.wr.q.val() - self.reader.rd.val()) == self.k_full.val();

        // ---- output: the oldest decided slot, handed up or freed ----
        self.r_len.next = 0.into();
        self.r_up.next = false;
        self.m_fw.src_port.next = 0.into();
        for i in 0..SLOTS {
            if self.reader.rd.val().get_bits::<3>(0) == i.to_bits::<3>() {
                self.r_len.next = self.s_len[i].q.val();
                self.r_up.next = self.s_up.q.val().get_bit(i);
                self.m_fw.src_port.next = self.s_port[i].q.val();
            }
        }
        self.m_fw.trunc.next = self.r_len.val() > self.k_slot_bytes.val();
        self.r_bytes.next = self.r_len.val();
        if self.m_fw.trunc.val() {
            self.r_bytes.next = self.k_slot_bytes.val();
        }
        self.r_rem.next = self.r_bytes.val() - (self.reader.obeat.val() << self.k_b_shift.val());
        self.m_fw.tvalid.next = (self.reader.rd.val() != self.ev.q.val()) & self.r_up.val();
        self.m_fw.tdata.next = self.reader.data.val();
        self.m_fw.tlast.next = self.r_rem.val() <= self.k_b.val();
        self.m_fw.tkeep.next = 0.into();
        for i in 0..B {
            self.m_fw.tkeep.next = self
                .m_fw
                .tkeep
                .val()
                .replace_bit(i, self.r_rem.val() > i.to_bits::<16>());
        }
        self.m_fw.len.next = self.r_len.val();
        self.cnt_up.next = self.n_up.q.val();
        self.cnt_trunc.next = self.n_trunc.q.val();

        // ---- capture: the first SLOT_BYTES of each datagram the core takes ----
        // Bytes of the input beat (packed keep: the highest lane set + 1).
        self.kb.next = 0.into();
        for i in 0..B {
            if self.s_tap.tkeep.val().get_bit(i) {
                self.kb.next = (i + 1).to_bits::<16>();
            }
        }
        self.reader.w_addr.next = (bit_cast::<7, 3>(self.wr.q.val().get_bits::<3>(0))
            << self.k_slot_shift.val())
            | bit_cast::<7, 16>(self.beat.q.val());
        self.reader.w_data.next = self.s_tap.tdata.val();
        self.reader.w_en.next = self.s_tap.tvalid.val() & (self.beat.q.val() < self.k_sbeats.val());
        if self.s_tap.tvalid.val() {
            if self.s_tap.tlast.val() {
                for i in 0..SLOTS {
                    if self.wr.q.val().get_bits::<3>(0) == i.to_bits::<3>() {
                        self.s_len[i].d.next = self.len.q.val() + self.kb.val();
                    }
                }
                self.wr.d.next = self.wr.q.val() + 1;
                self.beat.d.next = 0.into();
                self.len.d.next = 0.into();
            } else {
                self.beat.d.next = self.beat.q.val() + 1;
                self.len.d.next = self.len.q.val() + self.kb.val();
            }
        }

        // ---- the verdict event of the oldest undecided datagram (in
        // order, one each) ----
        self.e_len.next = 0.into();
        if self.ev_valid.val() {
            for i in 0..SLOTS {
                if self.ev.q.val().get_bits::<3>(0) == i.to_bits::<3>() {
                    self.e_len.next = self.s_len[i].q.val();
                    self.s_up.d.next = self
                        .s_up
                        .q
                        .val()
                        .replace_bit(i, self.ev_code.val() == self.k_firmware.val());
                    self.s_port[i].d.next = self.ev_src_port.val();
                }
            }
            self.ev.d.next = self.ev.q.val() + 1;
            if self.ev_code.val() == self.k_firmware.val() {
                self.n_up.d.next = self.n_up.q.val() + 1;
                if self.e_len.val() > self.k_slot_bytes.val() {
                    self.n_trunc.d.next = self.n_trunc.q.val() + 1;
                }
            }
        }

        // ---- hand up (a beat a cycle) or free ----
        self.reader.clock.next = self.clock.val();
        self.reader.rst.next = self.rst.val();
        self.reader.pending.next = self.reader.rd.val() != self.ev.q.val();
        self.reader.up.next = self.r_up.val();
        self.reader.last.next = self.m_fw.tlast.val();
        self.reader.ready.next = self.m_fw.tready.val();

        if self.rst.val() {
            self.wr.d.next = 0.into();
            self.ev.d.next = 0.into();
            self.beat.d.next = 0.into();
            self.len.d.next = 0.into();
            self.n_up.d.next = 0.into();
            self.n_trunc.d.next = 0.into();
        }
    }
}

native_block! {
    /// The read side of [`FwRx`]: the slot being handed up or freed, its
    /// beat, and the slots' memory, read at the slot and beat named after
    /// the clock edge (`data` is the beat `rd` and `obeat` name). A block
    /// of its own so that `m_fw_tready` reaches only these registers'
    /// inputs (the memory's read address among them): the firmware's ready
    /// may depend on `m_fw_tvalid` (the host interface's does), and in one
    /// kernel with the outputs Verilator would see a combinational loop.
    /// The memory has no same-edge bypass: a slot is read only once its
    /// verdict event came, cycles after its last beat was written.
    FwRxRead[W]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: back to slot 0, beat 0."]
        rst: Signal<In, Bit>,
        #[doc = "A decided slot waits (`rd` is not the next slot to decide)."]
        pending: Signal<In, Bit>,
        #[doc = "Its verdict said hand up (else it is freed at once)."]
        up: Signal<In, Bit>,
        #[doc = "The beat shown is its last."]
        last: Signal<In, Bit>,
        #[doc = "The firmware takes the beat shown."]
        ready: Signal<In, Bit>,
        #[doc = "Write `w_data` into the slots at `w_addr` (slot * beats a slot + beat)."]
        w_en: Signal<In, Bit>,
        #[doc = "Word written."]
        w_addr: Signal<In, Bits<7>>,
        #[doc = "Beat written."]
        w_data: Signal<In, Bits<W>>,
        #[doc = "The slot (mod 16)."]
        rd: Signal<Out, Bits<4>>,
        #[doc = "Its beat."]
        obeat: Signal<Out, Bits<16>>,
        #[doc = "The beat's bytes, from the slots."]
        data: Signal<Out, Bits<W>>,
    }
    state {
        r: DFF<Bits<4>>,
        b: DFF<Bits<16>>,
        // The slot and beat after this cycle.
        nr: Signal<Local, Bits<4>>,
        nb: Signal<Local, Bits<16>>,
        slots: BlockRam<W, 7> = BlockRam::with_words(SLOTS * SLOT_BYTES * 8 / W).without_bypass(),
    }
    consts {
        k_slot_shift: Constant<Bits<16>> = konst((SLOT_BYTES * 8 / W).trailing_zeros() as usize),
    }
}

impl<const W: usize> Logic for FwRxRead<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r, b);
        self.rd.next = self.r.q.val();
        self.obeat.next = self.b.q.val();
        self.nr.next = self.r.q.val();
        self.nb.next = self.b.q.val();
        if self.pending.val() {
            if !self.up.val() {
                self.nr.next = self.r.q.val() + 1;
            } else if self.ready.val() {
                if self.last.val() {
                    self.nr.next = self.r.q.val() + 1;
                    self.nb.next = 0.into();
                } else {
                    self.nb.next = self.b.q.val() + 1;
                }
            }
        }
        if self.rst.val() {
            self.nr.next = 0.into();
            self.nb.next = 0.into();
        }
        self.r.d.next = self.nr.val();
        self.b.d.next = self.nb.val();
        self.slots.clock.next = self.clock.val();
        self.slots.write_enable.next = self.w_en.val();
        self.slots.write_address.next = self.w_addr.val();
        self.slots.write_data.next = self.w_data.val();
        self.slots.read_address.next = (bit_cast::<7, 3>(self.nr.val().get_bits::<3>(0))
            << self.k_slot_shift.val())
            | bit_cast::<7, 16>(self.nb.val());
        self.data.next = self.slots.read_data.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// One datagram of the test: its bytes, verdict code and source port.
    struct Gram {
        bytes: Vec<u8>,
        code: u64,
        port: u64,
    }

    /// One datagram handed up: bytes, `m_fw_len`, `m_fw_trunc`, port.
    type Up = (Vec<u8>, u64, bool, u64);

    /// What the block did: datagrams handed up, whether `hold` was seen
    /// with all 8 slots taken and the tap idle, the counters at the end.
    #[derive(Debug, Default)]
    struct Run {
        up: Vec<Up>,
        held: bool,
        counters: (u64, u64),
    }

    /// Runs `grams` through rust-hdl's simulator of the 64-bit block: each
    /// datagram's event one cycle after its last beat; the firmware does
    /// not read for the first `stall` cycles, then takes every other beat.
    fn simulate(grams: Vec<Gram>, stall: usize) -> Run {
        let run = Arc::new(Mutex::new(Run::default()));
        let result = run.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<FwRx<64, 8>>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<FwRx<64, 8>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            let (mut g, mut off) = (0usize, 0usize);
            let mut events: VecDeque<usize> = VecDeque::new();
            let mut open: Vec<u8> = Vec::new();
            let want = grams.iter().filter(|g| g.code == 10).count();
            let mut cycle = 0;
            while cycle < 4000 && run.lock().unwrap().up.len() < want {
                cycle += 1;
                let mut r = run.lock().unwrap();
                // Mid-cycle: the outputs show the registers' state.
                let ready = cycle > stall && cycle % 2 == 0;
                if x.m_fw.tvalid.val() && ready {
                    let n = x.m_fw.tkeep.val().to_u64().count_ones() as usize;
                    open.extend_from_slice(&x.m_fw.tdata.val().to_u64().to_le_bytes()[..n]);
                    if x.m_fw.tlast.val() {
                        r.up.push((
                            std::mem::take(&mut open),
                            x.m_fw.len.val().to_u64(),
                            x.m_fw.trunc.val(),
                            x.m_fw.src_port.val().to_u64(),
                        ));
                    }
                }
                x.m_fw.tready.next = ready;
                x.ev_valid.next = false;
                if let Some(e) = events.pop_front() {
                    x.ev_valid.next = true;
                    x.ev_code.next = grams[e].code.to_bits();
                    x.ev_src_port.next = grams[e].port.to_bits();
                }
                x.s_tap.tvalid.next = false;
                if g < grams.len() && (off > 0 || !x.hold.val()) {
                    let b = &grams[g].bytes;
                    let n = (b.len() - off).min(8);
                    let mut beat = [0u8; 8];
                    beat[..n].copy_from_slice(&b[off..off + n]);
                    x.s_tap.tdata.next = u64::from_le_bytes(beat).to_bits();
                    x.s_tap.tkeep.next = ((1u64 << n) - 1).to_bits();
                    x.s_tap.tvalid.next = true;
                    off += n;
                    x.s_tap.tlast.next = off == b.len();
                    if off == b.len() {
                        events.push_back(g);
                        g += 1;
                        off = 0;
                    }
                } else if x.hold.val() && cycle <= stall {
                    r.held = g == 8;
                }
                drop(r);
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            run.lock().unwrap().counters = (x.cnt_up.val().to_u64(), x.cnt_trunc.val().to_u64());
            sim.done(x)
        });
        let mut uut = FwRx::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 100_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_hands_up_verdict_10_datagrams_in_order() {
        // Lengths around the slot size and the beat, verdicts 10 and
        // others, 12 datagrams (more than the 8 slots).
        let lens = [100, 200, 20, 64, 128, 129, 1, 8, 9, 300, 77, 16];
        let grams: Vec<Gram> = lens
            .iter()
            .enumerate()
            .map(|(d, &len)| Gram {
                bytes: (0..len).map(|j| (d * 31 + j * 7) as u8).collect(),
                code: if d % 3 == 2 { 3 } else { 10 },
                port: 0x4000 + d as u64,
            })
            .collect();
        let want: Vec<Up> = grams
            .iter()
            .filter(|g| g.code == 10)
            .map(|g| {
                let n = g.bytes.len().min(SLOT_BYTES);
                (
                    g.bytes[..n].to_vec(),
                    g.bytes.len() as u64,
                    g.bytes.len() > SLOT_BYTES,
                    g.port,
                )
            })
            .collect();
        let run = simulate(grams, 400);
        assert!(run.held, "hold must stop the tap with 8 slots taken");
        assert_eq!(run.up, want);
        let truncs = want.iter().filter(|u| u.2).count() as u64;
        assert_eq!(run.counters, (want.len() as u64, truncs));
    }
}
