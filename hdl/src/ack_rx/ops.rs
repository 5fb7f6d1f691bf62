//! The table operations of [`AckRx`](super::AckRx) ([`AckRxOps`]): the
//! queue's head applied as `Ack` + `Feedback`, by turns with the
//! firmware on the table's one operation port.

use rust_hdl::prelude::*;

use super::links::{HeadIn, TurnOut};
use crate::bus::{AckDoneOut, TxOpIn, TxOpOut, TxResIn, TxResOut};
use crate::helpers::{konst, native_block};

native_block! {
    /// At each idle point the firmware and the queue take turns (one
    /// firmware operation, one ACK pair; a lone requester goes at once).
    /// A refused head takes its turn (one cycle) but no table operation;
    /// any other becomes the table's `Ack` and, in the cycle its result
    /// comes, `Feedback` (the pair is atomic). While this block holds the
    /// table `m_op` carries its operands, the firmware's `s_op.ready` is
    /// low and its results are kept off `m_res` (`busy`). After the pair,
    /// `m_done` reports the slot, the packets and bytes acknowledged and
    /// the ACK's `conn_cum`.
    AckRxOps[SB]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: idle, clears the counter."]
        rst: Signal<In, Bit>,
        #[doc = "The queue's head, checked; its turn."]
        s_head: HeadIn<SB>,
        #[doc = "Where the operations are, for the queue's turn."]
        m_turn: TurnOut,
        #[doc = "Time in ns (RTT samples)."]
        now: Signal<In, Bits<64>>,
        #[doc = "The firmware's table operations."]
        s_op: TxOpIn<SB>,
        #[doc = "The table's operation port."]
        m_op: TxOpOut<SB>,
        #[doc = "The table's results."]
        s_res: TxResIn,
        #[doc = "The firmware's results."]
        m_res: TxResOut,
        #[doc = "One of this block's operations runs."]
        busy: Signal<Out, Bit>,
        #[doc = "Pulse per ACK applied."]
        m_done: AckDoneOut<SB>,
        #[doc = "ACKs applied (`cnt.applied`)."]
        applied: Signal<Out, Bits<32>>,
    }
    state {
        // 0 idle, 1 our Ack runs, 2 our Feedback runs; the firmware had
        // the last turn; the running ACK is its slot's newest; its slot
        // was quarantined before its Ack; the Ack's result. An ACK
        // starts, its Feedback starts, its pair ends.
        hs: DFF<Bits<2>>,
        turn_hw: DFF<Bit>,
        r_newest: DFF<Bit>,
        r_quar: DFF<Bit>,
        r_pkts: DFF<Bits<32>>,
        r_bytes: DFF<Bits<32>>,
        start: Signal<Local, Bit>,
        fb_now: Signal<Local, Bit>,
        fin: Signal<Local, Bit>,
        rtt64: Signal<Local, Bits<64>>,
        // The table's operation port is ours this cycle; the table takes a
        // firmware operation.
        sel: Signal<Local, Bit>,
        fw_take: Signal<Local, Bit>,
        done_valid: DFF<Bit>,
        done_slot: DFF<Bits<SB>>,
        done_pkts: DFF<Bits<32>>,
        done_bytes: DFF<Bits<32>>,
        done_conn: DFF<Bits<32>>,
        n_applied: DFF<Bits<32>>,
    }
    consts {
        k_t_ack: Constant<Bits<3>> = konst(crate::TxOp::Ack as usize),
        k_t_feedback: Constant<Bits<3>> = konst(crate::TxOp::Feedback as usize),
        k_rtt_max: Constant<Bits<32>> = konst(u32::MAX as usize),
    }
}

impl<const SB: usize> Logic for AckRxOps<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, hs, turn_hw, r_newest, r_quar, r_pkts, r_bytes, done_valid, done_slot,
            done_pkts, done_bytes, done_conn, n_applied
        );
        self.done_valid.d.next = false;
        // An ACK starts at the queue's turn; its Feedback follows in the
        // Ack's result cycle.
        self.m_turn.idle.next = self.hs.q.val() == 0;
        self.m_turn.hw_turn.next = self.turn_hw.q.val();
        self.m_turn.fb.next = self.hs.q.val() == 2;
        self.start.next = self.s_head.start.val();
        self.fb_now.next = (self.hs.q.val() == 1) & self.s_res.valid.val();
        self.sel.next = self.start.val() | (self.hs.q.val() != 0);
        // At the queue's turn the firmware waits while the head's check
        // settles (a cycle, `s_head.hold`), so no firmware operation
        // changes what it read.
        self.fw_take.next = self.s_op.valid.val()
            & self.m_op.ready.val()
            & !self.sel.val()
            & !self.s_head.hold.val();
        self.busy.next = self.hs.q.val() != 0;
        // The table's operation port: the firmware's, or ours (`Ack`,
        // `Feedback`: the operands below) while we hold it.
        self.m_op.valid.next = self.s_op.valid.val() & !self.s_head.hold.val();
        self.m_op.code.next = self.s_op.code.val();
        self.m_op.slot.next = self.s_op.slot.val();
        self.m_op.psn.next = self.s_op.psn.val();
        self.m_op.len.next = self.s_op.len.val();
        self.m_op.probe.next = self.s_op.probe.val();
        self.m_op.retx.next = self.s_op.retx.val();
        self.m_op.sack.next = self.s_op.sack.val();
        self.m_op.rtt_valid.next = self.s_op.rtt_valid.val();
        self.m_op.rtt.next = self.s_op.rtt.val();
        self.m_op.ce_count.next = self.s_op.ce_count.val();
        self.m_op.acked.next = self.s_op.acked.val();
        self.m_op.value.next = self.s_op.value.val();
        self.s_op.ready.next = self.m_op.ready.val() & !self.sel.val() & !self.s_head.hold.val();
        self.m_res.valid.next = self.s_res.valid.val() & !self.busy.val();
        self.m_res.ok.next = self.s_res.ok.val();
        self.m_res.psn.next = self.s_res.psn.val();
        self.m_res.pkts.next = self.s_res.pkts.val();
        self.m_res.bytes.next = self.s_res.bytes.val();
        self.rtt64.next = self.now.val() - self.s_head.echo.val();
        if self.sel.val() {
            self.m_op.valid.next =
                (self.start.val() & !self.s_head.refuse.val()) | self.fb_now.val();
            self.m_op.code.next = self.k_t_feedback.val();
            if self.hs.q.val() == 0 {
                self.m_op.code.next = self.k_t_ack.val();
            }
            self.m_op.slot.next = self.s_head.slot.val();
            self.m_op.psn.next = self.s_head.cum.val();
            self.m_op.sack.next = self.s_head.sack.val();
            // RTT as the engine's `Tx::on_ack`: now - echo_ts when echo_ts
            // > 0 and not in the future, 32 bits saturated, only when the
            // Ack acknowledged a data packet or ended the quarantine (its
            // PROBE; the table shows the new quarantine bit in the Ack's
            // result cycle).
            self.m_op.rtt_valid.next = (self.s_head.echo.val() != 0)
                & (self.now.val() >= self.s_head.echo.val())
                & ((self.s_res.pkts.val() != 0)
                    | (self.r_quar.q.val() & !self.s_head.quarantined.val()));
            self.m_op.rtt.next = self.rtt64.val().get_bits::<32>(0);
            if self.rtt64.val().get_bits::<32>(32) != 0 {
                self.m_op.rtt.next = self.k_rtt_max.val();
            }
            // An ACK that is not the newest brings no CE marks: the last count.
            self.m_op.ce_count.next = self.s_head.last_ce.val();
            if self.r_newest.q.val() {
                self.m_op.ce_count.next = self.s_head.ce.val();
            }
            self.m_op.acked.next = self.s_res.pkts.val();
        }

        if self.fw_take.val() {
            self.turn_hw.d.next = true;
        }
        if self.start.val() {
            self.turn_hw.d.next = false;
            self.r_newest.d.next = self.s_head.newest.val();
            self.r_quar.d.next = self.s_head.quarantined.val();
            if !self.s_head.refuse.val() {
                self.hs.d.next = 1.into();
            }
        }
        if self.fb_now.val() {
            self.r_pkts.d.next = self.s_res.pkts.val();
            self.r_bytes.d.next = self.s_res.bytes.val();
            self.hs.d.next = 2.into();
        }
        self.fin.next = (self.hs.q.val() == 2) & self.s_res.valid.val();
        if self.fin.val() {
            self.done_valid.d.next = true;
            self.done_slot.d.next = self.s_head.slot.val();
            self.done_pkts.d.next = self.r_pkts.q.val();
            self.done_bytes.d.next = self.r_bytes.q.val();
            self.done_conn.d.next = self.s_head.conn_cum.val();
            self.n_applied.d.next = self.n_applied.q.val() + 1;
            self.hs.d.next = 0.into();
        }
        self.m_done.valid.next = self.done_valid.q.val();
        self.m_done.slot.next = self.done_slot.q.val();
        self.m_done.pkts.next = self.done_pkts.q.val();
        self.m_done.bytes.next = self.done_bytes.q.val();
        self.m_done.conn_cum.next = self.done_conn.q.val();
        self.applied.next = self.n_applied.q.val();
        if self.rst.val() {
            self.hs.d.next = 0.into();
            self.turn_hw.d.next = false;
            self.done_valid.d.next = false;
            self.n_applied.d.next = 0.into();
        }
    }
}
