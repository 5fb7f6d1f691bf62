//! The TX table's operation port: the handshake (`op_ready` while the
//! table is idle) and the taken operation's decode, combinational: what it
//! asks of the ring ([`RingOpOut`]) and what it changes in the slot
//! ([`OpEvOut`]), from the slot's fields (ring room, the CE delta); whether it is done
//! in the cycle it is taken.

use rust_hdl::prelude::*;

use super::TxOp;
use super::links::{OpEvOut, RingOpOut};
use crate::bus::TxOpIn;
use crate::helpers::{konst, native_block};

native_block! {
    /// The decode for `2^SB` slots.
    TxOpDecode[SB]
    ports {
        #[doc = "Operation port."]
        op: TxOpIn<SB>,
        #[doc = "The table is idle: an operation may be taken."]
        idle: Signal<In, Bit>,
        #[doc = "A `Timeout` runs."]
        tmo: Signal<In, Bit>,
        #[doc = "Its entropy."]
        tmo_entropy: Signal<In, Bits<16>>,
        #[doc = "The slot's `next_psn` (the taken operation's slot)."]
        next_psn: Signal<In, Bits<32>>,
        #[doc = "Its `una`."]
        una: Signal<In, Bits<32>>,
        #[doc = "The last `ce_count` it applied."]
        last_ce: Signal<In, Bits<32>>,
        #[doc = "An operation is taken this cycle."]
        accept: Signal<Out, Bit>,
        #[doc = "The slot's ring has room (a send's `res_ok`)."]
        room: Signal<Out, Bit>,
        #[doc = "The operation taken is done in this cycle (`Init`, `Send`, `Move`, `Window`, `Feedback` without packets)."]
        quick: Signal<Out, Bit>,
        #[doc = "A `Feedback` with packets is taken: the division starts."]
        div_start: Signal<Out, Bit>,
        #[doc = "CE marks a `Feedback` adds."]
        new_ce: Signal<Out, Bits<32>>,
        #[doc = "To the ring."]
        ring: RingOpOut<SB>,
        #[doc = "To the slot update."]
        ev: OpEvOut,
    }
    state {
        // `ce_count` minus the last one applied; the ring has room; a
        // send is taken; a `Feedback` is.
        dce: Signal<Local, Bits<32>>,
        has_room: Signal<Local, Bit>,
        send: Signal<Local, Bit>,
        fb: Signal<Local, Bit>,
    }
    consts {
        k_init: Constant<Bits<3>> = konst(TxOp::Init as usize),
        k_send: Constant<Bits<3>> = konst(TxOp::Send as usize),
        k_feedback: Constant<Bits<3>> = konst(TxOp::Feedback as usize),
        k_move: Constant<Bits<3>> = konst(TxOp::Move as usize),
        k_window: Constant<Bits<3>> = konst(TxOp::Window as usize),
    }
}

impl<const SB: usize> Logic for TxOpDecode<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        self.op.ready.next = self.idle.val();
        self.accept.next = self.op.valid.val() & self.idle.val();
        self.has_room.next = (self.next_psn.val() - self.una.val()) < 256;
        self.room.next = self.has_room.val();
        self.send.next = self.op.valid.val()
            & self.idle.val()
            & (self.op.code.val() == self.k_send.val())
            & self.has_room.val();
        self.fb.next =
            self.op.valid.val() & self.idle.val() & (self.op.code.val() == self.k_feedback.val());
        self.dce.next = self.op.ce_count.val() - self.last_ce.val();
        self.new_ce.next = self.dce.val();
        if self.dce.val().get_bit(31) {
            self.new_ce.next = 0.into();
        }
        self.quick.next = self.op.valid.val()
            & self.idle.val()
            & ((self.op.code.val() == self.k_init.val())
                | (self.op.code.val() == self.k_send.val())
                | (self.op.code.val() == self.k_move.val())
                | (self.op.code.val() == self.k_window.val())
                | ((self.op.code.val() == self.k_feedback.val()) & (self.op.acked.val() == 0)));
        self.div_start.next = self.fb.val() & (self.op.acked.val() != 0);
        self.ring.accept.next = self.op.valid.val() & self.idle.val();
        self.ring.code.next = self.op.code.val();
        self.ring.slot.next = self.op.slot.val();
        self.ring.psn.next = self.op.psn.val();
        self.ring.sack.next = self.op.sack.val();
        self.ring.len.next = self.op.len.val();
        self.ring.probe.next = self.op.probe.val();
        self.ring.send.next = self.send.val();

        self.ev.init.next =
            self.op.valid.val() & self.idle.val() & (self.op.code.val() == self.k_init.val());
        self.ev.next_inc.next = self.send.val();
        self.ev.data_sent.next = self.send.val() & !self.op.probe.val();
        self.ev.len.next = self.op.len.val();
        self.ev.retx.next = self.op.retx.val();
        self.ev.ce.next = self.fb.val();
        self.ev.rtt.next = self.fb.val() & self.op.rtt_valid.val();
        self.ev.rtt_sample.next = self.op.rtt.val();
        self.ev.ce_fresh.next = !self.dce.val().get_bit(31);
        self.ev.ce_count.next = self.op.ce_count.val();
        self.ev.new_ce.next = self.new_ce.val();
        self.ev.repath.next =
            self.op.valid.val() & self.idle.val() & (self.op.code.val() == self.k_move.val());
        self.ev.entropy.next = self.op.value.val().get_bits::<16>(0);
        if self.tmo.val() {
            self.ev.entropy.next = self.tmo_entropy.val();
        }
        self.ev.win.next =
            self.op.valid.val() & self.idle.val() & (self.op.code.val() == self.k_window.val());
        self.ev.value.next = self.op.value.val();
    }
}
