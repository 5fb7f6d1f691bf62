//! The ACK queue of [`AckRx`](super::AckRx) ([`AckRxQueue`]): the ACKs
//! waiting for their turn at the table, and the evidence check of its
//! head.

use rust_hdl::prelude::*;

use super::links::{HeadOut, PushIn, RemapIn, TurnIn};
use super::{Q_LATER, Q_NOW, slot_regs};
use crate::bus::TxCheck;
use crate::helpers::{BlockRam, LutRam, native_block};

native_block! {
    /// A 16-entry queue of ACK entries and their slots, in [`BlockRam`]s
    /// (14 `DP16KD`s at 6 slot bits) read at the *next* read pointer (the
    /// pointer after this cycle's pop), so the head is on their read ports
    /// from the registers in every cycle, as from an asynchronous read;
    /// their bypass shows an entry pushed at the edge it becomes the head. Its head is checked as the engine checks an ACK
    /// (spec §5.5 step 0, `PathView::ack_evidence`) against its slot's
    /// `una`, `next_psn` and last `ce_count` (the table's check port) and
    /// the `rx_count` of the newest ACK applied on the slot (kept here in a
    /// [`LutRam`] read at the head's slot, with a flag per slot that a
    /// mapping clears, so a slot mapped anew reads 0): an ACK whose
    /// highest reported path PSN was never sent, or that as the newest
    /// counts more new CE marks than new packets, is refused. The check's
    /// verdicts are registered (issue #16: the check no longer runs into
    /// the table's operation in the same cycle), so a head takes its turn
    /// a cycle after a check that still holds: the head, the table and the
    /// slot's newest `rx_count` unchanged since (no pop, no table write,
    /// no mapping); the firmware waits that cycle at the queue's turn.
    AckRxQueue[SB]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the queue, clears the counters."]
        rst: Signal<In, Bit>,
        #[doc = "An ACK to queue."]
        s_push: PushIn<SB>,
        #[doc = "A slot mapped anew."]
        s_remap: RemapIn,
        #[doc = "The table's check port: the head's slot."]
        ck: TxCheck<SB>,
        #[doc = "The head, checked; its turn."]
        m_head: HeadOut<SB>,
        #[doc = "Where the table operations are (registers)."]
        s_turn: TurnIn,
        #[doc = "The firmware offers an operation (`s_op.valid`)."]
        op_valid: Signal<In, Bit>,
        #[doc = "The table takes an operation (`m_op.ready`)."]
        op_ready: Signal<In, Bit>,
        #[doc = "The table shows a result (`s_res.valid`)."]
        res_valid: Signal<In, Bit>,
        #[doc = "ACKs dropped on a full queue (`cnt.overflow`)."]
        overflow: Signal<Out, Bits<32>>,
        #[doc = "ACKs refused (`cnt.refused`)."]
        refused: Signal<Out, Bits<32>>,
    }
    state {
        // The entry in two: what the head's turn uses at once (`path_cum`,
        // SACK, `ce_count`, `rx_count`, the highest PSN: `Q_NOW` bits,
        // with the bypass, for an ACK that starts the cycle after its push),
        // and `conn_cum` and `echo_ts` (`Q_LATER` bits, without: read at
        // the `Feedback`, after the `Ack`'s result, and at its end, at
        // least 3 cycles after the push, when the word has been on the read
        // port for a cycle).
        q: BlockRam<Q_NOW, 4>,
        q_late: BlockRam<Q_LATER, 4> = BlockRam::default().without_bypass(),
        qs: BlockRam<SB, 4>,
        q_wr: DFF<Bits<5>>,
        q_rd: DFF<Bits<5>>,
        // The read pointer after this cycle (the address the queue reads).
        q_rdn: Signal<Local, Bits<5>>,
        // The newest rx_count applied per slot (distributed RAM: one
        // write, at the head's turn) and whether it was applied since the
        // slot was mapped (a register per slot: the mapping clears it in
        // the same cycle as a turn may write another slot's word).
        last_rx: LutRam<32, SB>,
        rx_set: Vec<DFF<Bit>> = slot_regs(SB),
        // The head's turn applies it as the newest: its rx_count is kept.
        keep_rx: Signal<Local, Bit>,
        // The head's evidence check.
        h_ce: Signal<Local, Bits<32>>,
        h_rx: Signal<Local, Bits<32>>,
        h_last_rx: Signal<Local, Bits<32>>,
        ahead: Signal<Local, Bits<32>>,
        rx_step: Signal<Local, Bits<32>>,
        ce_step: Signal<Local, Bits<32>>,
        newest: Signal<Local, Bit>,
        refuse: Signal<Local, Bit>,
        // The check registered: its verdicts, and whether they hold for
        // this cycle's head (the head, the table and the newest rx_count
        // unchanged since they were computed).
        chk_refuse: DFF<Bit>,
        chk_newest: DFF<Bit>,
        chk_v: DFF<Bit>,
        // The queue holds an ACK; the firmware is held for our turn.
        present: Signal<Local, Bit>,
        hold: Signal<Local, Bit>,
        // The head takes its turn; its pair ends.
        start: Signal<Local, Bit>,
        done: Signal<Local, Bit>,
        n_overflow: DFF<Bits<32>>,
        n_refused: DFF<Bits<32>>,
    }
    consts {}
}

impl<const SB: usize> AckRxQueue<SB> {
    /// Slots in the map.
    const N: usize = 1 << SB;
}

impl<const SB: usize> Logic for AckRxQueue<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, q_wr, q_rd, n_overflow, n_refused, chk_refuse, chk_newest, chk_v
        );
        for i in 0..Self::N {
            self.rx_set[i].clock.next = self.clock.val();
            self.rx_set[i].d.next = self.rx_set[i].q.val();
        }
        self.last_rx.clock.next = self.clock.val();
        self.q.clock.next = self.clock.val();
        self.q_late.clock.next = self.clock.val();
        self.qs.clock.next = self.clock.val();
        // A slot (re)mapped is a new path: no ACK applied on it yet.
        if self.s_remap.we.val() {
            for i in 0..Self::N {
                if self.s_remap.addr.val() == i.to_bits::<6>() {
                    self.rx_set[i].d.next = false;
                }
            }
        }

        // ---- the tail: an ACK queued, or counted when the queue is full ----
        self.q.write_address.next = self.q_wr.q.val().get_bits::<4>(0);
        self.q_late.write_address.next = self.q_wr.q.val().get_bits::<4>(0);
        self.qs.write_address.next = self.q_wr.q.val().get_bits::<4>(0);
        // Entry bits 32..319 and 384..479; 0..31 and 320..383.
        self.q.write_data.next =
            bit_cast::<Q_NOW, 288>(self.s_push.entry.val().get_bits::<288>(32))
                | (bit_cast::<Q_NOW, 96>(self.s_push.entry.val().get_bits::<96>(384)) << 288);
        self.q_late.write_data.next =
            bit_cast::<Q_LATER, 32>(self.s_push.entry.val().get_bits::<32>(0))
                | (bit_cast::<Q_LATER, 64>(self.s_push.entry.val().get_bits::<64>(320)) << 32);
        self.qs.write_data.next = self.s_push.slot.val();
        self.q.write_enable.next = false;
        self.q_late.write_enable.next = false;
        self.qs.write_enable.next = false;
        if self.s_push.valid.val() {
            if (self.q_wr.q.val() - self.q_rd.q.val()) == 16 {
                self.n_overflow.d.next = self.n_overflow.q.val() + 1;
            } else {
                self.q.write_enable.next = true;
                self.q_late.write_enable.next = true;
                self.qs.write_enable.next = true;
                self.q_wr.d.next = self.q_wr.q.val() + 1;
            }
        }

        // ---- the head: evidence check (spec §5.5 step 0,
        // `PathView::ack_evidence`) ----
        self.h_ce.next = self.q.read_data.val().get_bits::<32>(288);
        self.h_rx.next = self.q.read_data.val().get_bits::<32>(320);
        self.last_rx.read_address.next = self.qs.read_data.val();
        self.h_last_rx.next = 0.into();
        for i in 0..Self::N {
            if (self.qs.read_data.val() == i.to_bits::<SB>()) & self.rx_set[i].q.val() {
                self.h_last_rx.next = self.last_rx.read_data.val();
            }
        }
        // The highest path PSN reported was never sent.
        self.ahead.next = self.q.read_data.val().get_bits::<32>(352) - self.ck.una.val();
        self.refuse.next = !self.ahead.val().get_bit(31)
            & (self.ahead.val() >= (self.ck.next_psn.val() - self.ck.una.val()));
        // As the newest, more new CE marks than new packets.
        self.rx_step.next = self.h_rx.val() - self.h_last_rx.val();
        self.newest.next = !self.rx_step.val().get_bit(31);
        self.ce_step.next = self.h_ce.val() - self.ck.last_ce.val();
        if self.newest.val()
            & !self.ce_step.val().get_bit(31)
            & (self.ce_step.val() > self.rx_step.val())
        {
            self.refuse.next = true;
        }
        self.m_head.slot.next = self.qs.read_data.val();
        self.ck.slot.next = self.qs.read_data.val();
        self.m_head.last_ce.next = self.ck.last_ce.val();
        self.m_head.quarantined.next = self.ck.quarantined.val();
        self.m_head.conn_cum.next = self.q_late.read_data.val().get_bits::<32>(0);
        self.m_head.cum.next = self.q.read_data.val().get_bits::<32>(0);
        self.m_head.sack.next = self.q.read_data.val().get_bits::<256>(32);
        self.m_head.echo.next = self.q_late.read_data.val().get_bits::<64>(32);
        self.m_head.ce.next = self.h_ce.val();
        // The check is registered: the head's turn uses the verdicts of
        // the cycle before, when they still hold (`chk_v`, below).
        self.chk_refuse.d.next = self.refuse.val();
        self.chk_newest.d.next = self.newest.val();
        self.m_head.refuse.next = self.chk_refuse.q.val();
        self.m_head.newest.next = self.chk_newest.q.val();
        self.present.next = self.q_wr.q.val() != self.q_rd.q.val();
        self.hold.next = self.s_turn.hw_turn.val() & self.present.val();
        self.m_head.hold.next = self.hold.val();
        // An ACK starts when its check holds, the table is idle and it is
        // our turn (or the firmware wants nothing).
        self.start.next = self.chk_v.q.val()
            & self.s_turn.idle.val()
            & self.present.val()
            & self.op_ready.val()
            & (!self.op_valid.val() | self.s_turn.hw_turn.val());
        self.m_head.start.next = self.start.val();
        self.done.next = self.s_turn.fb.val() & self.res_valid.val();

        // ---- its turn: a refused head is popped at once; an applied one
        // when its pair is done, its rx_count kept when it is the newest ----
        self.q_rdn.next = self.q_rd.q.val();
        self.keep_rx.next = self.start.val() & !self.chk_refuse.q.val() & self.chk_newest.q.val();
        if self.start.val() & self.chk_refuse.q.val() {
            self.n_refused.d.next = self.n_refused.q.val() + 1;
            self.q_rdn.next = self.q_rd.q.val() + 1;
        }
        self.last_rx.write_enable.next = self.keep_rx.val();
        self.last_rx.write_address.next = self.qs.read_data.val();
        self.last_rx.write_data.next = self.h_rx.val();
        for i in 0..Self::N {
            if self.keep_rx.val() & (self.qs.read_data.val() == i.to_bits::<SB>()) {
                self.rx_set[i].d.next = true;
            }
        }
        if self.done.val() {
            self.q_rdn.next = self.q_rd.q.val() + 1;
        }
        self.overflow.next = self.n_overflow.q.val();
        self.refused.next = self.n_refused.q.val();
        if self.rst.val() {
            self.q_wr.d.next = 0.into();
            self.q_rdn.next = 0.into();
            self.n_overflow.d.next = 0.into();
            self.n_refused.d.next = 0.into();
        }
        self.q_rd.d.next = self.q_rdn.val();
        // This cycle's check holds in the next when nothing it reads
        // changes at this edge: the same head (no pop), no table write
        // (the table idle, no operation taken: none of ours starts, no
        // firmware one is offered, or it is held for our turn), no slot
        // mapped.
        self.chk_v.d.next = self.present.val()
            & (self.q_rdn.val() == self.q_rd.q.val())
            & self.s_turn.idle.val()
            & self.op_ready.val()
            & !self.start.val()
            & (!self.op_valid.val() | self.hold.val())
            & !self.s_remap.we.val()
            & !self.rst.val();
        self.q.read_address.next = self.q_rdn.val().get_bits::<4>(0);
        self.q_late.read_address.next = self.q_rdn.val().get_bits::<4>(0);
        self.qs.read_address.next = self.q_rdn.val().get_bits::<4>(0);
    }
}
