//! The descriptor FIFO's pointers and ready bits ([`TxFifoPtrs`]).

use rust_hdl::prelude::*;

use crate::helpers::native_block;

native_block! {
    /// The control of [`TxFifo`](super::fifo::TxFifo)'s 4 entries: three
    /// pointers (3 bits each, so a full FIFO differs from an empty one)
    /// — write (the next accepted descriptor's entry), fetch (the next
    /// fetch request to leave) and read (the generator's head entry) —
    /// and one ready bit per entry, cleared at the accept and set when
    /// [`TxSide`](super::side::TxSide) writes the entry's computed part.
    /// Every output but `rd_next` is a register or a function of registers
    /// only.
    TxFifoPtrs []
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the FIFO."]
        rst: Signal<In, Bit>,
        #[doc = "A descriptor is accepted into entry `wr`."]
        accept: Signal<In, Bit>,
        #[doc = "An entry's computed part is written."]
        side_v: Signal<In, Bit>,
        #[doc = "That entry."]
        side_idx: Signal<In, Bits<2>>,
        #[doc = "Entry `fe`'s fetch request leaves (or it has none)."]
        fetched: Signal<In, Bit>,
        #[doc = "The generator takes the head entry."]
        take: Signal<In, Bit>,
        #[doc = "A configuration write is in this cycle or settling."]
        busy: Signal<In, Bit>,
        #[doc = "The entry the next descriptor goes to."]
        wr: Signal<Out, Bits<2>>,
        #[doc = "The entry whose fetch request leaves next."]
        fe: Signal<Out, Bits<2>>,
        #[doc = "The head entry."]
        rd: Signal<Out, Bits<2>>,
        #[doc = "The head entry after this cycle's take (a registered read's address)."]
        rd_next: Signal<Out, Bits<2>>,
        #[doc = "Entry `fe` holds a descriptor."]
        fe_pending: Signal<Out, Bit>,
        #[doc = "The head entry is ready: its computed part written and its fetch request gone."]
        head_ok: Signal<Out, Bit>,
        #[doc = "Room for a descriptor in this cycle, and no configuration write in the previous one or settling (`s_desc.ready`)."]
        ready: Signal<Out, Bit>,
    }
    state {
        f_wr: DFF<Bits<3>>,
        f_fe: DFF<Bits<3>>,
        f_rd: DFF<Bits<3>>,
        f_ok: DFF<Bits<4>>,
        rdy: DFF<Bit>,
        // Combinational temporaries.
        okn: Signal<Local, Bits<4>>,
        fill: Signal<Local, Bits<3>>,
        wr_n: Signal<Local, Bits<3>>,
        rd_n: Signal<Local, Bits<3>>,
    }
    consts {}
}

impl Logic for TxFifoPtrs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, f_wr, f_fe, f_rd, f_ok, rdy);
        self.wr.next = self.f_wr.q.val().get_bits::<2>(0);
        self.fe.next = self.f_fe.q.val().get_bits::<2>(0);
        self.rd.next = self.f_rd.q.val().get_bits::<2>(0);
        self.fe_pending.next = self.f_fe.q.val() != self.f_wr.q.val();
        self.head_ok.next = (self.f_rd.q.val() != self.f_fe.q.val())
            & self
                .f_ok
                .q
                .val()
                .get_bit(self.f_rd.q.val().get_bits::<2>(0).index());
        self.ready.next = self.rdy.q.val();

        // Ready bits: cleared at the accept, set by the computed part.
        self.okn.next = self.f_ok.q.val();
        if self.accept.val() {
            self.okn.next = self
                .okn
                .val()
                .replace_bit(self.f_wr.q.val().get_bits::<2>(0).index(), false);
        }
        if self.side_v.val() {
            self.okn.next = self
                .okn
                .val()
                .replace_bit(self.side_idx.val().index(), true);
        }
        self.f_ok.d.next = self.okn.val();

        // Pointers.
        self.wr_n.next = self.f_wr.q.val();
        if self.accept.val() {
            self.wr_n.next = self.f_wr.q.val() + 1;
        }
        self.rd_n.next = self.f_rd.q.val();
        if self.take.val() {
            self.rd_n.next = self.f_rd.q.val() + 1;
        }
        self.f_wr.d.next = self.wr_n.val();
        self.f_rd.d.next = self.rd_n.val();
        self.rd_next.next = self.rd_n.val().get_bits::<2>(0);
        if self.fetched.val() {
            self.f_fe.d.next = self.f_fe.q.val() + 1;
        }
        // Room for a descriptor next cycle: the fill after this cycle's
        // accept and take, and no register write in this cycle or
        // settling after it.
        self.fill.next = self.wr_n.val() - self.rd_n.val();
        self.rdy.d.next = (self.fill.val() != 4) & !self.busy.val();

        if self.rst.val() {
            self.rdy.d.next = !self.busy.val();
            self.f_wr.d.next = 0.into();
            self.f_fe.d.next = 0.into();
            self.f_rd.d.next = 0.into();
            self.f_ok.d.next = 0.into();
        }
    }
}
