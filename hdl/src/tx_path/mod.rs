//! Per-path TX table: the sender's per-path state of the
//! engine's `TxPath` (metaroce-firmware `path.rs`) for `2^SB` path slots
//! (the firmware maps (QP, path) to a slot), with a 256-entry ring of
//! transmissions per slot, updated by one operation at a time with the
//! engine's rules (`metaroce_firmware::PathEntry::apply`) and readable by
//! the firmware.
//!
//! [`TxPathTable`]'s ports:
//!
//! * `op` ([`TxOpIn`], Verilog `op$valid`, …): `op_valid`/`op_ready`,
//!   `op_code` ([`TxOp`]), `op_slot` and the
//!   operands `op_psn` (connection PSN of a send, `path_cum` of an ACK,
//!   path PSN of a `Lose`),
//!   `op_len` (16), `op_probe`, `op_retx`, `op_sack` (256, the layout of
//!   `metaroce_proto::Sack`), `op_rtt_valid`, `op_rtt` (32, ns),
//!   `op_ce_count`, `op_acked`, `op_value` (entropy or window);
//! * `res` ([`TxResOut`]): `res_valid` (one pulse when the operation is done), `res_ok` (a send
//!   found room in the ring), `res_psn` (the send's path PSN), `res_pkts`,
//!   `res_bytes` (what an ACK acknowledged);
//! * `m_fate_valid`/`m_fate_ready`, `m_fate_lost`, `m_fate_conn_psn`: one
//!   event per data transmission an ACK, a timeout or a `Lose` resolved,
//!   in PSN order;
//! * `rd_slot`, `rd_len` in; `rd_*` out: the slot's state (combinational)
//!   and `rd_can_send` = `TxPath::can_send(rd_len)`;
//! * `cap_view` out: the same fields (all but `can_send`) of the last
//!   result's slot, packed into [`VIEW_BITS`] bits: the word the operation
//!   wrote last, from its `res_valid` cycle until the next operation's
//!   result, for the host interface to capture with a result while the
//!   `rd_*` port stays the register port's (`docs/hardware.md` §18);
//! * `ck` ([`TxCheckPort`]): `ck_slot` in; `ck_una`, `ck_next_psn`, `ck_last_ce`, `ck_quarantined`
//!   out: a third read, of what the ACK receiver's evidence check (spec
//!   §5.5 step 0) needs (`docs/hardware.md` §16).
//!
//! RTO timers, RACK's timing, probe scheduling and congestion control stay
//! in the firmware; the window is a register it writes ([`TxOp::Window`]),
//! and a transmission RACK finds lost is reported with [`TxOp::Lose`].
//!
//! # Structure
//! An operation is first taken into registers (`TxOpLatch`, a cycle),
//! so the table works on registers only: the issuers' choice never
//! reaches the slot word's read in the same cycle. A slot's fields are one
//! word (566 bits, layout in `slots.rs`) in [`LutRam`]s: one read and
//! written at the slot being operated on (the latch's slot register: read, changed
//! by `SlotUpdate`, written back in the same cycle), and
//! copies written alike for the `rd_*` and `ck_*` ports. `cap_view` is a
//! register the control loads with the word an operation writes in its
//! last cycle (the one before its result). The
//! rings are one [`BlockRam`] of `{live, probe, len, connection PSN}`
//! entries at `slot << 8 | path PSN mod 256`, read at the walker's next
//! position so the walker (`TxWalk`) sees entry `p` in the cycle it is at
//! `p`. The control (this file, with its parts) runs the operations, each
//! after its cycle in the latch: `Send`, `Init`,
//! `Move` and `Window` take one cycle; `Ack` walks one ring entry a cycle
//! then decays the loss EWMA four acknowledged packets a cycle; `Feedback`
//! with packets divides one quotient bit a cycle (16); `Timeout` walks to
//! `next_psn`; `Lose` takes one cycle then pops as an `Ack` does. A fate
//! event the firmware does not take stalls the walk.
//!
//! The parts, one file each: `latch.rs` (`TxOpLatch`: the operation's
//! registers), `decode.rs` (`TxOpDecode`: the handshake and
//! the taken operation's decode, combinational), `slots.rs` (`SlotFile`:
//! the slot words and the read ports), `update.rs` (`SlotUpdate`: the
//! engine's rules on a word, combinational) with `est.rs` (`RttUpdate`,
//! `LossEwma`), `ring.rs` (`TxRing`: the rings, the walker's position and
//! the running ACK's operands, fate events) with `walk.rs` (`TxWalk`),
//! `totals.rs` (`TxTotals`: an ACK's packets and bytes, the decays),
//! `div.rs` (`TxDiv`: `Feedback`'s division); `links.rs` the buses that
//! join them. This file holds the control's state, the running slot and
//! the result registers. Every part's input comes from ports, registers
//! and parts' outputs alone (no temporary of the control's kernel), so
//! Verilator orders the parts apart from the control that reads them.
//!
//! Native rust-hdl: kernels, rust-hdl `DFF`s, this crate's [`LutRam`] and
//! [`BlockRam`], and [`AckHigh`]; rust-hdl's own simulator runs the table
//! against the engine's `PathEntry` (the test below). Verified under
//! Verilator against the engine's `TxPath` (`metaroce-sim-tb`'s
//! `tx_path` bench) and inside [`crate::NicCore`].
//!
//! [`LutRam`]: crate::helpers::LutRam
//! [`BlockRam`]: crate::helpers::BlockRam
//! [`AckHigh`]: crate::AckHigh

mod decode;
mod div;
mod est;
mod latch;
mod links;
mod ring;
mod slots;
mod totals;
mod update;
mod walk;

use rust_hdl::prelude::*;

use crate::bus::{FateOut, TxCheckPort, TxOpIn, TxOpOut, TxReadPort, TxResOut};

use crate::helpers::{konst, native_block};
use decode::TxOpDecode;
use div::TxDiv;
use latch::TxOpLatch;
use links::{AckEndOut, AckedOut, DivEvOut, OpEvOut, RingOpOut, WalkEvOut};
use ring::TxRing;
use slots::SlotFile;
use totals::TxTotals;
use update::SlotUpdate;

/// Largest number of slots the table is built with here.
pub const MAX_SLOTS: usize = 64;

/// Transmissions a slot's ring holds (the engine's 256-PSN limit).
pub const RING: usize = 256;

/// Bits of `cap_view`, low bit first: `next_psn`, `una`, `inflight`,
/// `window`, `srtt`, `rttvar`, `ecn_ewma`, `loss_ewma`, `samples`, `sent`,
/// `retransmitted`, `acked`, `lost`, `ce_marked`, `repaths`, `timeouts` (32
/// each), then `entropy` (16), `rtt_valid`, `quarantined`, `backoff` (4).
/// Bits 319..0 are words 2..6 of a result's event entry, 511..320 words 0..2
/// of the view entry after it and 533..512 that entry's word 3.
pub const VIEW_BITS: usize = 534;

/// Address bits of the rings' memory: slot and path PSN mod 256 at
/// [`MAX_SLOTS`].
const RING_ADDR: usize = 14;

/// Bits of a ring entry: {live, probe, len\[15:0\], connection PSN\[31:0\]}.
const ENTRY_BITS: usize = 50;

/// Operation codes (`op_code`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TxOp {
    /// `TxPath::new`: clears the slot, entropy from `op_value`, window 0.
    Init = 0,
    /// `on_send_data` (`op_probe` low: `op_psn`, `op_len`, `op_retx`) or
    /// `on_send_probe`; returns the path PSN; refused (`res_ok` low) when
    /// the ring is full. One cycle (after the latch's).
    Send = 1,
    /// `on_ack(op_psn, op_sack)`: walks the ring, emits fates, returns
    /// (`res_pkts`, `res_bytes`).
    Ack = 2,
    /// `on_ack_feedback`'s table part: RTT sample, CE count, acked packets.
    Feedback = 3,
    /// `on_timeout(op_value)`'s table part: every live transmission lost,
    /// quarantine with backoff, move to the new entropy.
    Timeout = 4,
    /// `move_to(op_value)`. One cycle (after the latch's).
    Move = 5,
    /// Sets the window (bytes) from `op_value`. One cycle (after the latch's).
    Window = 6,
    /// The table part of `on_rack` for one transmission the firmware found
    /// lost by time: path PSN `op_psn`, if unresolved data, is lost (fate
    /// event, in-flight, `lost`, loss EWMA); then resolved entries are
    /// popped.
    Lose = 7,
}

impl TxOp {
    /// Every operation.
    pub const ALL: [TxOp; 8] = [
        Self::Init,
        Self::Send,
        Self::Ack,
        Self::Feedback,
        Self::Timeout,
        Self::Move,
        Self::Window,
        Self::Lose,
    ];
}

/// Verilog source of the table ([`TxPathTable`]) for `slots` slots (a power
/// of two, 2 to [`MAX_SLOTS`]); top module `top`, ports as the block's
/// fields (`op_slot`, `rd_slot`, `ck_slot` are `log2(slots)`
/// bits).
///
/// # Panics
/// If `slots` is not a power of two in 2..=[`MAX_SLOTS`].
pub fn tx_path_verilog(slots: usize) -> String {
    match slots {
        2 => crate::emit(TxPathTable::<1>::default),
        4 => crate::emit(TxPathTable::<2>::default),
        8 => crate::emit(TxPathTable::<3>::default),
        16 => crate::emit(TxPathTable::<4>::default),
        32 => crate::emit(TxPathTable::<5>::default),
        64 => crate::emit(TxPathTable::<6>::default),
        other => panic!("unsupported slot count {other}"),
    }
}

/// Control states.
const S_IDLE: usize = 0;
const S_ACK: usize = 1;
const S_DECAY: usize = 2;
const S_TIMEOUT: usize = 3;
const S_DIV: usize = 4;
const S_LOSE: usize = 5;

native_block! {
    /// The per-path TX table with `2^SB` slots (2 to [`MAX_SLOTS`]).
    TxPathTable[SB]
    check { (1..=6).contains(&SB), "TxPathTable<{SB}>: 2 to 64 slots" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the control goes idle (no slot is cleared: `Init` does)."]
        rst: Signal<In, Bit>,
        #[doc = "Operation port."]
        op: TxOpIn<SB>,
        #[doc = "Results: one pulse per operation done."]
        res: TxResOut,
        #[doc = "Fate events (acked or lost transmissions)."]
        m_fate: FateOut,
        #[doc = "Read port: a slot's state, combinationally."]
        rd: TxReadPort<SB>,
        #[doc = "Capture port: the last result's slot's fields packed ([`VIEW_BITS`]), from its `res_valid` cycle until the next result."]
        cap_view: Signal<Out, Bits<VIEW_BITS>>,
        #[doc = "Check port: a slot's state for the ACK receiver's evidence check."]
        ck: TxCheckPort<SB>,
    }
    state {
        latch: TxOpLatch<SB>,
        file: SlotFile<SB>,
        upd: SlotUpdate,
        decode: TxOpDecode<SB>,
        ring: TxRing<SB>,
        totals: TxTotals,
        div: TxDiv,
        // The operation in progress: state (its slot is the latch's
        // register), TIMEOUT's entropy; the result.
        state: DFF<Bits<3>>,
        c_entropy: DFF<Bits<16>>,
        r_valid: DFF<Bit>,
        r_ok: DFF<Bit>,
        r_psn: DFF<Bits<32>>,
        r_pkts: DFF<Bits<32>>,
        r_bytes: DFF<Bits<32>>,
        // The capture port's word; an operation's result comes next cycle
        // (its last write is this cycle's).
        cap_q: DFF<Bits<VIEW_BITS>>,
        fin: Signal<Local, Bit>,
    }
    consts {
        s_idle: Constant<Bits<3>> = konst(S_IDLE),
        s_ack: Constant<Bits<3>> = konst(S_ACK),
        s_decay: Constant<Bits<3>> = konst(S_DECAY),
        s_timeout: Constant<Bits<3>> = konst(S_TIMEOUT),
        s_div: Constant<Bits<3>> = konst(S_DIV),
        s_lose: Constant<Bits<3>> = konst(S_LOSE),
        k_send: Constant<Bits<3>> = konst(TxOp::Send as usize),
        k_ack: Constant<Bits<3>> = konst(TxOp::Ack as usize),
        k_timeout: Constant<Bits<3>> = konst(TxOp::Timeout as usize),
        k_lose: Constant<Bits<3>> = konst(TxOp::Lose as usize),
    }
}

impl<const SB: usize> Logic for TxPathTable<SB> {
    /// The parts' wiring, then the control: what the operation taken or
    /// the running one does this cycle, to the control's registers, the
    /// parts' inputs and (as `SlotUpdate`'s events) to the slot.
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, c_entropy, r_valid, r_ok, r_psn, r_pkts, r_bytes, cap_q
        );
        // The operation port into the latch, the latch into the decode.
        // (Parts' inputs come from ports, registers and parts alone, so
        // Verilator orders them apart from what the control reads.)
        self.latch.clock.next = self.clock.val();
        self.latch.rst.next = self.rst.val();
        TxOpIn::<SB>::link(&mut self.op, &mut self.latch.s_op);
        TxOpOut::<SB>::join(&mut self.latch.m_op, &mut self.decode.op);
        // The slot word at the operation's slot, a register: the latch's,
        // loaded when it takes the operation (the table is idle then) and
        // held while it runs.
        self.file.ws.next = self.latch.m_op.slot.val();
        self.file.clock.next = self.clock.val();
        self.file.we.next = !self.rst.val()
            & (self.decode.accept.val() | (self.state.q.val() != self.s_idle.val()));
        self.file.wdata.next = self.upd.wdata.val();
        TxReadPort::<SB>::link(&mut self.rd, &mut self.file.rd);
        TxCheckPort::<SB>::link(&mut self.ck, &mut self.file.ck);
        self.cap_view.next = self.cap_q.q.val();
        self.upd.cur.next = self.file.cur.val();
        self.decode.idle.next = self.state.q.val() == self.s_idle.val();
        self.decode.tmo.next = self.state.q.val() == self.s_timeout.val();
        self.decode.tmo_entropy.next = self.c_entropy.q.val();
        self.decode.next_psn.next = self.file.cur.val().get_bits::<32>(0);
        self.decode.una.next = self.file.cur.val().get_bits::<32>(32);
        self.decode.last_ce.next = self.file.cur.val().get_bits::<32>(534);
        OpEvOut::join(&mut self.decode.ev, &mut self.upd.op);
        RingOpOut::<SB>::join(&mut self.decode.ring, &mut self.ring.op);
        WalkEvOut::join(&mut self.ring.ev, &mut self.upd.walk);
        AckedOut::join(&mut self.ring.acked, &mut self.totals.acked);
        AckEndOut::join(&mut self.totals.end, &mut self.upd.ack_end);
        DivEvOut::join(&mut self.div.ev, &mut self.upd.div);

        // The parts: rings and walker, ACK totals, divider.
        self.ring.clock.next = self.clock.val();
        self.ring.rst.next = self.rst.val();
        self.ring.state.next = self.state.q.val();
        self.ring.next_psn.next = self.file.cur.val().get_bits::<32>(0);
        self.ring.una.next = self.file.cur.val().get_bits::<32>(32);
        FateOut::link(&mut self.m_fate, &mut self.ring.m_fate);
        self.totals.clock.next = self.clock.val();
        self.totals.rst.next = self.rst.val();
        self.totals.clear.next = self.decode.accept.val()
            & ((self.latch.m_op.code.val() == self.k_ack.val())
                | (self.latch.m_op.code.val() == self.k_lose.val()));
        self.totals.in_decay.next = self.state.q.val() == self.s_decay.val();
        self.div.clock.next = self.clock.val();
        self.div.rst.next = self.rst.val();
        self.div.load.next = self.decode.div_start.val();
        self.div.acked.next = self.latch.m_op.acked.val();
        self.div.new_ce.next = self.decode.new_ce.val();
        self.div.run.next = self.state.q.val() == self.s_div.val();

        // The control's registers.
        self.fin.next = false;
        if self.rst.val() {
            self.state.d.next = self.s_idle.val();
            self.r_ok.d.next = false;
            self.r_psn.d.next = 0.into();
            self.r_pkts.d.next = 0.into();
            self.r_bytes.d.next = 0.into();
        } else {
            if self.decode.accept.val() {
                self.r_ok.d.next = true;
                self.r_psn.d.next = 0.into();
                self.r_pkts.d.next = 0.into();
                self.r_bytes.d.next = 0.into();
                self.fin.next = self.decode.quick.val();
                if self.latch.m_op.code.val() == self.k_send.val() {
                    self.r_ok.d.next = self.decode.room.val();
                    self.r_psn.d.next = self.file.cur.val().get_bits::<32>(0);
                }
                if self.latch.m_op.code.val() == self.k_lose.val() {
                    self.state.d.next = self.s_lose.val();
                }
                if self.latch.m_op.code.val() == self.k_ack.val() {
                    self.state.d.next = self.s_ack.val();
                }
                if self.decode.div_start.val() {
                    self.state.d.next = self.s_div.val();
                }
                if self.latch.m_op.code.val() == self.k_timeout.val() {
                    self.c_entropy.d.next = self.latch.m_op.value.val().get_bits::<16>(0);
                    self.state.d.next = self.s_timeout.val();
                }
            }
            // ACK walk and pop done: the decays, then the result.
            if self.ring.acked.done.val() {
                self.state.d.next = self.s_decay.val();
            }
            if (self.state.q.val() == self.s_decay.val()) & self.totals.last.val() {
                self.r_pkts.d.next = self.totals.pkts.val();
                self.r_bytes.d.next = self.totals.bytes.val();
                self.fin.next = true;
                self.state.d.next = self.s_idle.val();
            }
            // LOSE: one entry, then the ACK walker's pop phase.
            if (self.state.q.val() == self.s_lose.val()) & !self.ring.stall.val() {
                self.state.d.next = self.s_ack.val();
            }
            // TIMEOUT walked to next_psn; the division's last step.
            if ((self.state.q.val() == self.s_timeout.val()) & self.ring.at_end.val())
                | ((self.state.q.val() == self.s_div.val()) & self.div.last.val())
            {
                self.fin.next = true;
                self.state.d.next = self.s_idle.val();
            }
        }
        // An operation's last write: its result and the capture port's word
        // next cycle.
        self.r_valid.d.next = self.fin.val();
        if self.fin.val() {
            self.cap_q.d.next = self.upd.wdata.val().get_bits::<VIEW_BITS>(0);
        }
        self.res.valid.next = self.r_valid.q.val();
        self.res.ok.next = self.r_ok.q.val();
        self.res.psn.next = self.r_psn.q.val();
        self.res.pkts.next = self.r_pkts.q.val();
        self.res.bytes.next = self.r_bytes.q.val();
    }
}

#[cfg(test)]
mod tests;
