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
//! * `cap_slot` in; `cap_view` out: a second read of the same fields (all
//!   but `can_send`) packed into [`VIEW_BITS`] bits, for the host interface
//!   to capture a slot in the cycle an operation's result appears while the
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
//! A slot's fields are one word (566 bits, layout in `slots.rs`) in
//! [`LutRam`]s: one read and written at the slot being operated on
//! (read, changed by `SlotUpdate`, written back in the same cycle), and
//! copies written alike for the `rd_*`, `cap_view` and `ck_*` ports. The
//! rings are one [`BlockRam`] of `{live, probe, len, connection PSN}`
//! entries at `slot << 8 | path PSN mod 256`, read at the walker's next
//! position so the walker (`TxWalk`) sees entry `p` in the cycle it is at
//! `p`. The control (this file) runs the operations: `Send`, `Init`,
//! `Move` and `Window` take one cycle; `Ack` walks one ring entry a cycle
//! then decays the loss EWMA four acknowledged packets a cycle; `Feedback`
//! with packets divides one quotient bit a cycle (16); `Timeout` walks to
//! `next_psn`; `Lose` takes one cycle then pops as an `Ack` does. A fate
//! event the firmware does not take stalls the walk.
//!
//! Native rust-hdl: kernels, rust-hdl `DFF`s, this crate's [`LutRam`] and
//! [`BlockRam`], and [`AckHigh`]; rust-hdl's own simulator runs the table
//! against the engine's `PathEntry` (the test below). Verified under
//! Verilator against the engine's `TxPath` (`metaroce-sim-tb`'s
//! `tx_path` bench) and inside [`crate::NicCore`].
//!
//! [`LutRam`]: crate::helpers::LutRam

mod slots;
mod walk;

use rust_hdl::prelude::*;

use crate::bus::{FateOut, TxCheckPort, TxOpIn, TxReadPort, TxResOut};

use crate::AckHigh;
use crate::helpers::{BlockRam, konst, native_block};
use slots::{SlotFile, SlotUpdate};
use walk::TxWalk;

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
    /// the ring is full. One cycle.
    Send = 1,
    /// `on_ack(op_psn, op_sack)`: walks the ring, emits fates, returns
    /// (`res_pkts`, `res_bytes`).
    Ack = 2,
    /// `on_ack_feedback`'s table part: RTT sample, CE count, acked packets.
    Feedback = 3,
    /// `on_timeout(op_value)`'s table part: every live transmission lost,
    /// quarantine with backoff, move to the new entropy.
    Timeout = 4,
    /// `move_to(op_value)`. One cycle.
    Move = 5,
    /// Sets the window (bytes) from `op_value`. One cycle.
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
/// fields (`op_slot`, `rd_slot`, `cap_slot`, `ck_slot` are `log2(slots)`
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
        #[doc = "Slot the capture port shows."]
        cap_slot: Signal<In, Bits<SB>>,
        #[doc = "Capture port: the slot's fields packed ([`VIEW_BITS`])."]
        cap_view: Signal<Out, Bits<VIEW_BITS>>,
        #[doc = "Check port: a slot's state for the ACK receiver's evidence check."]
        ck: TxCheckPort<SB>,
    }
    state {
        file: SlotFile<SB>,
        upd: SlotUpdate,
        ring: BlockRam<ENTRY_BITS, RING_ADDR> = BlockRam::with_words(RING << SB),
        walk: TxWalk,
        highest: AckHigh,
        // The operation in progress: state, slot, ACK operands and the
        // highest PSN the ACK knows, the walker's path PSN and flags (not
        // yet beyond `c_high`; every entry walked so far resolved, so
        // `una` follows), ACK totals, loss-EWMA decays still due (one per
        // acked packet), TIMEOUT's entropy, FEEDBACK's division (divisor,
        // remainder, quotient so far, bits still due).
        state: DFF<Bits<3>>,
        cs: DFF<Bits<SB>>,
        c_cum: DFF<Bits<32>>,
        c_sack: DFF<Bits<256>>,
        c_high: DFF<Bits<32>>,
        p: DFF<Bits<32>>,
        walking: DFF<Bit>,
        pfx: DFF<Bit>,
        c_pkts: DFF<Bits<32>>,
        c_bytes: DFF<Bits<32>>,
        c_probe_acked: DFF<Bit>,
        c_decay: DFF<Bits<9>>,
        c_entropy: DFF<Bits<16>>,
        c_acked: DFF<Bits<32>>,
        c_rem: DFF<Bits<32>>,
        c_q: DFF<Bits<16>>,
        c_steps: DFF<Bits<5>>,
        r_valid: DFF<Bit>,
        r_ok: DFF<Bit>,
        r_psn: DFF<Bits<32>>,
        r_pkts: DFF<Bits<32>>,
        r_bytes: DFF<Bits<32>>,
        // Temporaries: an operation is taken; the walk stalls; the
        // operation's decode; the walker's next path PSN; a send's ring
        // write; the walk's changes; one division step; the read port's
        // PSN count and window sum.
        accept: Signal<Local, Bit>,
        stall: Signal<Local, Bit>,
        o_room: Signal<Local, Bit>,
        o_dce: Signal<Local, Bits<32>>,
        o_new_ce: Signal<Local, Bits<32>>,
        o_min_ce: Signal<Local, Bits<32>>,
        p_n: Signal<Local, Bits<32>>,
        send_w: Signal<Local, Bit>,
        data_res: Signal<Local, Bit>,
        lose_data: Signal<Local, Bit>,
        tmo_data: Signal<Local, Bit>,
        q_rem2: Signal<Local, Bits<33>>,
        q_bit: Signal<Local, Bit>,
        q_rem_n: Signal<Local, Bits<32>>,
        q_n: Signal<Local, Bits<17>>,
        rd_count: Signal<Local, Bits<32>>,
        rd_sum: Signal<Local, Bits<33>>,
    }
    consts {
        s_idle: Constant<Bits<3>> = konst(S_IDLE),
        s_ack: Constant<Bits<3>> = konst(S_ACK),
        s_decay: Constant<Bits<3>> = konst(S_DECAY),
        s_timeout: Constant<Bits<3>> = konst(S_TIMEOUT),
        s_div: Constant<Bits<3>> = konst(S_DIV),
        s_lose: Constant<Bits<3>> = konst(S_LOSE),
        k_init: Constant<Bits<3>> = konst(TxOp::Init as usize),
        k_send: Constant<Bits<3>> = konst(TxOp::Send as usize),
        k_ack: Constant<Bits<3>> = konst(TxOp::Ack as usize),
        k_feedback: Constant<Bits<3>> = konst(TxOp::Feedback as usize),
        k_timeout: Constant<Bits<3>> = konst(TxOp::Timeout as usize),
        k_move: Constant<Bits<3>> = konst(TxOp::Move as usize),
        k_window: Constant<Bits<3>> = konst(TxOp::Window as usize),
        k_lose: Constant<Bits<3>> = konst(TxOp::Lose as usize),
        k_probe_entry: Constant<Bits<ENTRY_BITS>> = konst(3 << 48),
        k_data_entry: Constant<Bits<ENTRY_BITS>> = konst(1 << 49),
        k_dead: Constant<Bits<ENTRY_BITS>> = Constant::new(Bits::<ENTRY_BITS>::mask() >> 1),
    }
}

impl<const SB: usize> Logic for TxPathTable<SB> {
    /// Declarative wiring of the parts, then the control: what the
    /// operation taken or the running one does this cycle, to the
    /// control's registers and (as `SlotUpdate`'s events) to the slot.
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            cs,
            c_cum,
            c_sack,
            c_high,
            p,
            walking,
            pfx,
            c_pkts,
            c_bytes,
            c_probe_acked,
            c_decay,
            c_entropy,
            c_acked,
            c_rem,
            c_q,
            c_steps,
            r_valid,
            r_ok,
            r_psn,
            r_pkts,
            r_bytes
        );
        // The slot the state is read and written at: the operation's when
        // it is taken (only while idle), else the running one's. (Computed
        // from ports and registers alone, as is AckHigh's input: no
        // temporary ties it to what is computed from the slot's word, so
        // Verilator orders it apart.)
        self.op.ready.next = self.state.q.val() == self.s_idle.val();
        self.accept.next = self.op.valid.val() & (self.state.q.val() == self.s_idle.val());
        self.file.ws.next = self.cs.q.val();
        if self.op.valid.val() & (self.state.q.val() == self.s_idle.val()) {
            self.file.ws.next = self.op.slot.val();
        }
        self.highest.en.next = self.op.valid.val()
            & (self.state.q.val() == self.s_idle.val())
            & (self.op.code.val() == self.k_ack.val());
        self.highest.cum.next = self.op.psn.val();
        self.highest.sack.next = self.op.sack.val();
        self.file.clock.next = self.clock.val();
        self.file.we.next =
            !self.rst.val() & (self.accept.val() | (self.state.q.val() != self.s_idle.val()));
        self.file.wdata.next = self.upd.wdata.val();
        self.file.rd_slot.next = self.rd.slot.val();
        self.file.cap_slot.next = self.cap_slot.val();
        self.file.ck_slot.next = self.ck.slot.val();
        self.upd.cur.next = self.file.cur.val();

        // Decode, from the slot's state: ring room, CE delta.
        self.o_room.next =
            (self.file.cur.val().get_bits::<32>(0) - self.file.cur.val().get_bits::<32>(32)) < 256;
        self.o_dce.next = self.op.ce_count.val() - self.file.cur.val().get_bits::<32>(534);
        self.o_new_ce.next = self.o_dce.val();
        if self.o_dce.val().get_bit(31) {
            self.o_new_ce.next = 0.into();
        }
        self.o_min_ce.next = self.op.acked.val();
        if self.o_new_ce.val() < self.op.acked.val() {
            self.o_min_ce.next = self.o_new_ce.val();
        }

        // The walker at entry p of slot cs (read in the cycle before).
        self.walk.in_ack.next = self.state.q.val() == self.s_ack.val();
        self.walk.in_tmo.next = self.state.q.val() == self.s_timeout.val();
        self.walk.in_lose.next = self.state.q.val() == self.s_lose.val();
        self.walk.p.next = self.p.q.val();
        self.walk.cum.next = self.c_cum.q.val();
        self.walk.sack.next = self.c_sack.q.val();
        self.walk.high.next = self.c_high.q.val();
        self.walk.walking.next = self.walking.q.val();
        self.walk.pfx.next = self.pfx.q.val();
        self.walk.next_psn.next = self.file.cur.val().get_bits::<32>(0);
        self.walk.una.next = self.file.cur.val().get_bits::<32>(32);
        self.walk.live.next = self.ring.read_data.val().get_bit(49);
        self.walk.probe.next = self.ring.read_data.val().get_bit(48);
        self.m_fate.valid.next = self.walk.fate_valid.val();
        self.m_fate.lost.next = self.walk.fate_lost.val();
        self.m_fate.conn_psn.next = self.ring.read_data.val().get_bits::<32>(0);
        // A fate event the firmware does not take stalls the walk.
        self.stall.next = self.walk.fate_valid.val() & !self.m_fate.ready.val();

        // The walker's next position: the ring's read address.
        self.p_n.next = self.p.q.val();
        if self.accept.val() {
            self.p_n.next = self.file.cur.val().get_bits::<32>(32);
            if self.op.code.val() == self.k_lose.val() {
                self.p_n.next = self.op.psn.val();
            }
        } else if self.stall.val() {
            self.p_n.next = self.p.q.val();
        } else if self.walk.walk_now.val() | self.walk.pop_on.val() | self.walk.tmo_now.val() {
            self.p_n.next = self.p.q.val() + 1;
        } else if self.state.q.val() == self.s_lose.val() {
            self.p_n.next = self.file.cur.val().get_bits::<32>(32);
        }
        self.ring.clock.next = self.clock.val();
        self.ring.read_address.next = (bit_cast::<RING_ADDR, SB>(self.cs.q.val()) << 8)
            | bit_cast::<RING_ADDR, 8>(self.p_n.val().get_bits::<8>(0));
        if self.accept.val() {
            self.ring.read_address.next = (bit_cast::<RING_ADDR, SB>(self.op.slot.val()) << 8)
                | bit_cast::<RING_ADDR, 8>(self.p_n.val().get_bits::<8>(0));
        }
        // The ring's one write port: Send writes the entry at next_psn
        // (only while idle), the walkers clear the live bit of the entry
        // they resolve.
        self.send_w.next =
            self.accept.val() & (self.op.code.val() == self.k_send.val()) & self.o_room.val();
        self.ring.write_enable.next = !self.rst.val()
            & (self.send_w.val()
                | (!self.stall.val()
                    & ((self.walk.walk_now.val() & self.walk.resolve.val())
                        | self.walk.lose_now.val()
                        | (self.walk.tmo_now.val() & self.ring.read_data.val().get_bit(49)))));
        self.ring.write_address.next = (bit_cast::<RING_ADDR, SB>(self.cs.q.val()) << 8)
            | bit_cast::<RING_ADDR, 8>(self.p.q.val().get_bits::<8>(0));
        self.ring.write_data.next = self.ring.read_data.val() & self.k_dead.val();
        if self.send_w.val() {
            self.ring.write_address.next = (bit_cast::<RING_ADDR, SB>(self.op.slot.val()) << 8)
                | bit_cast::<RING_ADDR, 8>(self.file.cur.val().get_bits::<8>(0));
            self.ring.write_data.next = self.k_data_entry.val()
                | (bit_cast::<ENTRY_BITS, 16>(self.op.len.val()) << 32)
                | bit_cast::<ENTRY_BITS, 32>(self.op.psn.val());
            if self.op.probe.val() {
                self.ring.write_data.next = self.k_probe_entry.val();
            }
        }

        // One division step for FEEDBACK: (min(new_ce, acked) << 16) / acked.
        self.q_rem2.next = bit_cast::<33, 32>(self.c_rem.q.val()) << 1;
        self.q_bit.next = self.q_rem2.val() >= bit_cast::<33, 32>(self.c_acked.q.val());
        self.q_rem_n.next = bit_cast::<32, 33>(self.q_rem2.val());
        if self.q_bit.val() {
            self.q_rem_n.next =
                bit_cast::<32, 33>(self.q_rem2.val() - bit_cast::<33, 32>(self.c_acked.q.val()));
        }
        self.q_n.next =
            (bit_cast::<17, 16>(self.c_q.q.val()) << 1).replace_bit(0, self.q_bit.val());

        // The slot's changes (SlotUpdate's events and operands). The
        // walk's changes wait while a fate event waits.
        self.data_res.next =
            self.walk.resolve.val() & !self.stall.val() & !self.ring.read_data.val().get_bit(48);
        self.lose_data.next = self.walk.lose_now.val() & !self.stall.val();
        self.tmo_data.next = self.walk.tmo_now.val()
            & !self.stall.val()
            & self.ring.read_data.val().get_bit(49)
            & !self.ring.read_data.val().get_bit(48);
        self.upd.init.next = self.accept.val() & (self.op.code.val() == self.k_init.val());
        self.upd.next_inc.next = self.send_w.val();
        self.upd.data_sent.next = self.send_w.val() & !self.op.probe.val();
        self.upd.len.next = self.op.len.val();
        self.upd.retx.next = self.op.retx.val();
        self.upd.rtt.next = self.accept.val()
            & (self.op.code.val() == self.k_feedback.val())
            & self.op.rtt_valid.val();
        self.upd.rtt_sample.next = self.op.rtt.val();
        self.upd.ce.next = self.accept.val() & (self.op.code.val() == self.k_feedback.val());
        self.upd.ce_fresh.next = !self.o_dce.val().get_bit(31);
        self.upd.ce_count.next = self.op.ce_count.val();
        self.upd.new_ce.next = self.o_new_ce.val();
        self.upd.tmo_end.next =
            (self.state.q.val() == self.s_timeout.val()) & self.walk.at_end.val();
        self.upd.repath.next = (self.accept.val() & (self.op.code.val() == self.k_move.val()))
            | ((self.state.q.val() == self.s_timeout.val()) & self.walk.at_end.val());
        self.upd.entropy.next = self.op.value.val().get_bits::<16>(0);
        if self.state.q.val() == self.s_timeout.val() {
            self.upd.entropy.next = self.c_entropy.q.val();
        }
        self.upd.win.next = self.accept.val() & (self.op.code.val() == self.k_window.val());
        self.upd.value.next = self.op.value.val();
        self.upd.sub_len.next = self.data_res.val() | self.lose_data.val() | self.tmo_data.val();
        self.upd.e_len.next = self.ring.read_data.val().get_bits::<16>(32);
        self.upd.lost_one.next = (self.data_res.val() & !self.walk.is_acked.val())
            | self.lose_data.val()
            | self.tmo_data.val();
        self.upd.loss_up.next =
            (self.data_res.val() & !self.walk.is_acked.val()) | self.lose_data.val();
        self.upd.una_set.next = (self.walk.tmo_now.val() & !self.stall.val())
            | (self.walk.pop_on.val() & !self.stall.val())
            | (self.walk.walk_now.val()
                & !self.stall.val()
                & self.pfx.q.val()
                & (!self.ring.read_data.val().get_bit(49) | self.walk.resolve.val()));
        self.upd.una_new.next = self.p.q.val() + 1;
        self.upd.decay.next = 0.into();
        if self.state.q.val() == self.s_decay.val() {
            self.upd.decay.next = self.c_decay.q.val();
        }
        self.upd.ack_done.next =
            (self.state.q.val() == self.s_decay.val()) & (self.c_decay.q.val() <= 4);
        self.upd.pkts.next = self.c_pkts.q.val();
        self.upd.probe_acked.next = self.c_probe_acked.q.val();
        self.upd.div_done.next =
            (self.state.q.val() == self.s_div.val()) & (self.c_steps.q.val() == 1);
        self.upd.q.next = self.q_n.val();
        self.upd.samples_add.next = self.c_acked.q.val();

        // The control's registers.
        if self.rst.val() {
            self.state.d.next = self.s_idle.val();
            self.r_valid.d.next = false;
            self.r_ok.d.next = false;
            self.r_psn.d.next = 0.into();
            self.r_pkts.d.next = 0.into();
            self.r_bytes.d.next = 0.into();
        } else {
            self.r_valid.d.next = false;
            self.p.d.next = self.p_n.val();
            if self.accept.val() {
                self.cs.d.next = self.op.slot.val();
                self.r_ok.d.next = true;
                self.r_psn.d.next = 0.into();
                self.r_pkts.d.next = 0.into();
                self.r_bytes.d.next = 0.into();
                self.r_valid.d.next = (self.op.code.val() == self.k_init.val())
                    | (self.op.code.val() == self.k_send.val())
                    | (self.op.code.val() == self.k_move.val())
                    | (self.op.code.val() == self.k_window.val());
                if self.op.code.val() == self.k_send.val() {
                    self.r_ok.d.next = self.o_room.val();
                    self.r_psn.d.next = self.file.cur.val().get_bits::<32>(0);
                }
                if (self.op.code.val() == self.k_ack.val())
                    | (self.op.code.val() == self.k_lose.val())
                {
                    self.c_pkts.d.next = 0.into();
                    self.c_bytes.d.next = 0.into();
                    self.c_probe_acked.d.next = false;
                }
                if self.op.code.val() == self.k_lose.val() {
                    self.state.d.next = self.s_lose.val();
                }
                if self.op.code.val() == self.k_ack.val() {
                    self.c_cum.d.next = self.op.psn.val();
                    self.c_sack.d.next = self.op.sack.val();
                    self.c_high.d.next = self.highest.high.val();
                    self.walking.d.next = true;
                    self.pfx.d.next = true;
                    self.state.d.next = self.s_ack.val();
                }
                if self.op.code.val() == self.k_feedback.val() {
                    if self.op.acked.val() != 0 {
                        self.c_acked.d.next = self.op.acked.val();
                        self.c_rem.d.next = self.o_min_ce.val();
                        self.c_q.d.next = 0.into();
                        if self.o_min_ce.val() == self.op.acked.val() {
                            self.c_rem.d.next = 0.into();
                            self.c_q.d.next = 1.into();
                        }
                        self.c_steps.d.next = 16.into();
                        self.state.d.next = self.s_div.val();
                    } else {
                        self.r_valid.d.next = true;
                    }
                }
                if self.op.code.val() == self.k_timeout.val() {
                    self.c_entropy.d.next = self.op.value.val().get_bits::<16>(0);
                    self.state.d.next = self.s_timeout.val();
                }
            }
            // ACK walk (`on_ack`): one entry a cycle, then the pop, then
            // the decays.
            if (self.state.q.val() == self.s_ack.val()) & !self.stall.val() {
                if self.walk.walk_now.val() {
                    if self.walk.resolve.val() & self.walk.is_acked.val() {
                        if self.ring.read_data.val().get_bit(48) {
                            self.c_probe_acked.d.next = true;
                        } else {
                            self.c_pkts.d.next = self.c_pkts.q.val() + 1;
                            self.c_bytes.d.next = self.c_bytes.q.val()
                                + bit_cast::<32, 16>(self.ring.read_data.val().get_bits::<16>(32));
                        }
                    }
                    // `una` follows while every entry walked is resolved.
                    if self.ring.read_data.val().get_bit(49) & !self.walk.resolve.val() {
                        self.pfx.d.next = false;
                    }
                } else if self.walk.pop_on.val() {
                    self.walking.d.next = false;
                } else {
                    self.c_decay.d.next = self.c_pkts.q.val().get_bits::<9>(0);
                    self.state.d.next = self.s_decay.val();
                }
            }
            // Loss-EWMA decays, four a cycle, then the result.
            if self.state.q.val() == self.s_decay.val() {
                if self.c_decay.q.val() > 4 {
                    self.c_decay.d.next = self.c_decay.q.val() - 4;
                } else {
                    self.r_pkts.d.next = self.c_pkts.q.val();
                    self.r_bytes.d.next = self.c_bytes.q.val();
                    self.r_valid.d.next = true;
                    self.state.d.next = self.s_idle.val();
                }
            }
            // LOSE: one entry, then the ACK walker's pop phase.
            if (self.state.q.val() == self.s_lose.val()) & !self.stall.val() {
                self.walking.d.next = false;
                self.pfx.d.next = true;
                self.state.d.next = self.s_ack.val();
            }
            // TIMEOUT: walked to next_psn.
            if (self.state.q.val() == self.s_timeout.val()) & self.walk.at_end.val() {
                self.r_valid.d.next = true;
                self.state.d.next = self.s_idle.val();
            }
            // ECN fraction: one quotient bit a cycle.
            if self.state.q.val() == self.s_div.val() {
                self.c_rem.d.next = self.q_rem_n.val();
                self.c_q.d.next = self.q_n.val().get_bits::<16>(0);
                self.c_steps.d.next = self.c_steps.q.val() - 1;
                if self.c_steps.q.val() == 1 {
                    self.r_valid.d.next = true;
                    self.state.d.next = self.s_idle.val();
                }
            }
        }
        self.res.valid.next = self.r_valid.q.val();
        self.res.ok.next = self.r_ok.q.val();
        self.res.psn.next = self.r_psn.q.val();
        self.res.pkts.next = self.r_pkts.q.val();
        self.res.bytes.next = self.r_bytes.q.val();

        // Read ports: the copies' words, and `TxPath::can_send`.
        self.rd.next_psn.next = self.file.rd.val().get_bits::<32>(0);
        self.rd.una.next = self.file.rd.val().get_bits::<32>(32);
        self.rd.inflight.next = self.file.rd.val().get_bits::<32>(64);
        self.rd.window.next = self.file.rd.val().get_bits::<32>(96);
        self.rd.srtt.next = self.file.rd.val().get_bits::<32>(128);
        self.rd.rttvar.next = self.file.rd.val().get_bits::<32>(160);
        self.rd.ecn_ewma.next = self.file.rd.val().get_bits::<32>(192);
        self.rd.loss_ewma.next = self.file.rd.val().get_bits::<32>(224);
        self.rd.samples.next = self.file.rd.val().get_bits::<32>(256);
        self.rd.sent.next = self.file.rd.val().get_bits::<32>(288);
        self.rd.retransmitted.next = self.file.rd.val().get_bits::<32>(320);
        self.rd.acked.next = self.file.rd.val().get_bits::<32>(352);
        self.rd.lost.next = self.file.rd.val().get_bits::<32>(384);
        self.rd.ce_marked.next = self.file.rd.val().get_bits::<32>(416);
        self.rd.repaths.next = self.file.rd.val().get_bits::<32>(448);
        self.rd.timeouts.next = self.file.rd.val().get_bits::<32>(480);
        self.rd.entropy.next = self.file.rd.val().get_bits::<16>(512);
        self.rd.rtt_valid.next = self.file.rd.val().get_bit(528);
        self.rd.quarantined.next = self.file.rd.val().get_bit(529);
        self.rd.backoff.next = self.file.rd.val().get_bits::<4>(530);
        self.rd_count.next =
            self.file.rd.val().get_bits::<32>(0) - self.file.rd.val().get_bits::<32>(32);
        self.rd_sum.next = bit_cast::<33, 32>(self.file.rd.val().get_bits::<32>(64))
            + bit_cast::<33, 16>(self.rd.len.val());
        self.rd.can_send.next = !self.file.rd.val().get_bit(529)
            & (self.rd_count.val() < 256)
            & ((self.file.rd.val().get_bits::<32>(64) == 0)
                | (self.rd_sum.val() <= bit_cast::<33, 32>(self.file.rd.val().get_bits::<32>(96))));
        self.cap_view.next = self.file.cap.val();
        self.ck.next_psn.next = self.file.ck.val().get_bits::<32>(0);
        self.ck.una.next = self.file.ck.val().get_bits::<32>(32);
        self.ck.quarantined.next = self.file.ck.val().get_bit(64);
        self.ck.last_ce.next = self.file.ck.val().get_bits::<32>(65);
    }
}

#[cfg(test)]
mod tests;
