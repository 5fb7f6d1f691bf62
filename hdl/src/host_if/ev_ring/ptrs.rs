//! [`EvPtrs`], one of [`EvRing`]'s FIFOs' pointers (three of them in
//! [`EvSeq`]).

use rust_hdl::prelude::*;

use super::*;

native_block! {
    /// The write and read pointers of one of [`EvRing`]'s 64-entry FIFOs
    /// (7 bits: full and empty apart). A push moves the write pointer unless
    /// the FIFO is full (the caller counts it lost), a pop the read pointer;
    /// both take effect at the next edge. Outputs from the registers alone.
    EvPtrs[]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empty."]
        rst: Signal<In, Bit>,
        #[doc = "An entry is written (dropped when full)."]
        push: Signal<In, Bit>,
        #[doc = "The head is taken (the FIFO is not empty)."]
        pop: Signal<In, Bit>,
        #[doc = "The write address (the write pointer's slot)."]
        wr: Signal<Out, Bits<6>>,
        #[doc = "The read address."]
        rd: Signal<Out, Bits<6>>,
        #[doc = "The fill."]
        count: Signal<Out, Bits<7>>,
        #[doc = "The fill is the depth: a push is dropped."]
        full: Signal<Out, Bit>,
    }
    state {
        w: DFF<Bits<7>>,
        r: DFF<Bits<7>>,
    }
    consts {
        k_depth: Constant<Bits<7>> = konst(DEPTH),
    }
}

impl Logic for EvPtrs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, w, r);
        self.wr.next = self.w.q.val().get_bits::<6>(0);
        self.rd.next = self.r.q.val().get_bits::<6>(0);
        self.count.next = self.w.q.val() - self.r.q.val();
        self.full.next = (self.w.q.val() - self.r.q.val()) == self.k_depth.val();
        if self.push.val() & ((self.w.q.val() - self.r.q.val()) != self.k_depth.val()) {
            self.w.d.next = self.w.q.val() + 1;
        }
        if self.pop.val() {
            self.r.d.next = self.r.q.val() + 1;
        }
        if self.rst.val() {
            self.w.d.next = 0.into();
            self.r.d.next = 0.into();
        }
    }
}
