//! The TX table's divider for `Feedback`: the ECN fraction
//! `(min(new_ce, acked) << 16) / acked`, one quotient bit a cycle, 16
//! cycles after the operation is taken (`TxPathTable`'s `S_DIV`); the
//! last step's quotient goes to the slot's ECN EWMA ([`DivEvOut`]).

use rust_hdl::prelude::*;

use super::links::DivEvOut;
use crate::helpers::native_block;

native_block! {
    /// Restoring division, registers for the dividend's remainder, the
    /// quotient so far and the steps still due.
    TxDiv[]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the registers hold."]
        rst: Signal<In, Bit>,
        #[doc = "A `Feedback` with packets is taken: load the operands."]
        load: Signal<In, Bit>,
        #[doc = "Packets the ACK acknowledged (the divisor)."]
        acked: Signal<In, Bits<32>>,
        #[doc = "CE marks the ACK adds."]
        new_ce: Signal<In, Bits<32>>,
        #[doc = "The division runs: one step this cycle."]
        run: Signal<In, Bit>,
        #[doc = "This is the last step."]
        last: Signal<Out, Bit>,
        #[doc = "To the slot update."]
        ev: DivEvOut,
    }
    state {
        c_acked: DFF<Bits<32>>,
        c_rem: DFF<Bits<32>>,
        c_q: DFF<Bits<16>>,
        c_steps: DFF<Bits<5>>,
        // The dividend; one step: the remainder doubled, the quotient bit,
        // the remainder and quotient after it.
        min_ce: Signal<Local, Bits<32>>,
        q_rem2: Signal<Local, Bits<33>>,
        q_bit: Signal<Local, Bit>,
        q_rem_n: Signal<Local, Bits<32>>,
        q_n: Signal<Local, Bits<17>>,
    }
    consts {}
}

impl Logic for TxDiv {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, c_acked, c_rem, c_q, c_steps);
        self.min_ce.next = self.acked.val();
        if self.new_ce.val() < self.acked.val() {
            self.min_ce.next = self.new_ce.val();
        }
        self.q_rem2.next = bit_cast::<33, 32>(self.c_rem.q.val()) << 1;
        self.q_bit.next = self.q_rem2.val() >= bit_cast::<33, 32>(self.c_acked.q.val());
        self.q_rem_n.next = bit_cast::<32, 33>(self.q_rem2.val());
        if self.q_bit.val() {
            self.q_rem_n.next =
                bit_cast::<32, 33>(self.q_rem2.val() - bit_cast::<33, 32>(self.c_acked.q.val()));
        }
        self.q_n.next =
            (bit_cast::<17, 16>(self.c_q.q.val()) << 1).replace_bit(0, self.q_bit.val());
        self.last.next = self.c_steps.q.val() == 1;
        self.ev.done.next = self.run.val() & (self.c_steps.q.val() == 1);
        self.ev.q.next = self.q_n.val();
        self.ev.samples_add.next = self.c_acked.q.val();
        if !self.rst.val() {
            if self.load.val() {
                self.c_acked.d.next = self.acked.val();
                self.c_rem.d.next = self.min_ce.val();
                self.c_q.d.next = 0.into();
                if self.min_ce.val() == self.acked.val() {
                    self.c_rem.d.next = 0.into();
                    self.c_q.d.next = 1.into();
                }
                self.c_steps.d.next = 16.into();
            }
            if self.run.val() {
                self.c_rem.d.next = self.q_rem_n.val();
                self.c_q.d.next = self.q_n.val().get_bits::<16>(0);
                self.c_steps.d.next = self.c_steps.q.val() - 1;
            }
        }
    }
}
