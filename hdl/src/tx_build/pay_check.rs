//! The fetched payload checked against its request ([`TxPayCheck`]).

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};

native_block! {
    /// Checks each payload beat [`TxBuild`](super::TxBuild)'s generator
    /// takes, a cycle after it is taken: its `tkeep` must be packed to the
    /// payload bytes left (all `B` lanes while more than `B` are left) and
    /// its `tlast` set exactly when they fit in the beat. `err` is a
    /// register that turns on at the first disagreement and stays on until
    /// reset.
    TxPayCheck [B]
    check { (8..=64).contains(&B), "TxPayCheck<{B}>: B must be 8..=64 lanes" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: clears `err`."]
        rst: Signal<In, Bit>,
        #[doc = "The generator takes a payload beat this cycle."]
        take: Signal<In, Bit>,
        #[doc = "Its `tkeep`."]
        keep: Signal<In, Bits<B>>,
        #[doc = "Its `tlast`."]
        last: Signal<In, Bit>,
        #[doc = "Payload bytes left before it."]
        left: Signal<In, Bits<16>>,
        #[doc = "Sticky: a taken beat disagreed with the request."]
        err: Signal<Out, Bit>,
    }
    state {
        // The beat taken, registered.
        e_v: DFF<Bit>,
        e_last: DFF<Bit>,
        e_keep: DFF<Bits<B>>,
        e_left: DFF<Bits<16>>,
        bad: DFF<Bit>,
        // Combinational temporaries: the expected `tkeep`.
        wk: Signal<Local, Bits<B>>,
    }
    consts {
        c_b: Constant<Bits<16>> = konst(B),
    }
}

impl<const B: usize> Logic for TxPayCheck<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, e_v, e_last, e_keep, e_left, bad);
        self.e_v.d.next = self.take.val();
        self.e_keep.d.next = self.keep.val();
        self.e_last.d.next = self.last.val();
        self.e_left.d.next = self.left.val();
        self.wk.next = 0.into();
        for i in 0..B {
            self.wk.next = self
                .wk
                .val()
                .replace_bit(i, self.e_left.q.val() > i.to_bits::<16>());
        }
        if self.e_v.q.val()
            & ((self.e_keep.q.val() != self.wk.val())
                | (self.e_last.q.val() != (self.e_left.q.val() <= self.c_b.val())))
        {
            self.bad.d.next = true;
        }
        self.err.next = self.bad.q.val();
        if self.rst.val() {
            self.e_v.d.next = false;
            self.bad.d.next = false;
        }
    }
}
