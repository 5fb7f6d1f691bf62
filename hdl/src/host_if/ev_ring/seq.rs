//! [`EvSeq`], the event ring writer's sequencer (a block of its own: see
//! its doc).

use rust_hdl::prelude::*;

use super::*;

native_block! {
    /// The sequencer of [`EvRing`]: the writer's state, beat and producer
    /// index, the FIFOs' pointers, the fence's counts, the skid's flag and
    /// the lost counter, with the transitions the DMA write port's ready and
    /// the core's handshakes decide. A block of its own so that those reach
    /// only these registers' inputs, and its outputs are registers' (the
    /// arbiter's ready depends on `EvRing::w_tvalid`, the core's handshakes
    /// on `fate_ready` and `qop_room`; in one kernel with them Verilator
    /// would see a combinational loop). The TX-table FIFO's two room
    /// verdicts are registers too: each compares the fill a cycle before
    /// with its threshold less one (the fill grows by at most one entry a
    /// cycle), so the fill's subtraction and compare end here instead of
    /// running into the TX table's and the host queue's handshakes.
    EvSeq[B]
    check {
        EVQ_ENTRY % B == 0 && EVQ_ENTRY / B <= 16,
        "EvSeq<{B}>: an entry is at most 16 beats"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: idle, FIFOs empty, counters 0."]
        rst: Signal<In, Bit>,
        #[doc = "A verdict event comes."]
        ev_valid: Signal<In, Bit>,
        #[doc = "An entry for the TX-table FIFO comes."]
        tt_push: Signal<In, Bit>,
        #[doc = "A result waits in the skid for the next cycle."]
        skid_load: Signal<In, Bit>,
        #[doc = "A placement write's first beat is taken."]
        pa_push: Signal<In, Bit>,
        #[doc = "A placement write's last beat is taken."]
        pl_last: Signal<In, Bit>,
        #[doc = "The ring is enabled, has room, and a FIFO holds an entry."]
        start: Signal<In, Bit>,
        #[doc = "The ring has room."]
        room: Signal<In, Bit>,
        #[doc = "The verdict FIFO's head waits for its placement write."]
        fence: Signal<In, Bit>,
        #[doc = "The TX-table FIFO's head is a result (a view entry follows)."]
        vpend_in: Signal<In, Bit>,
        #[doc = "The DMA write port takes the beat."]
        w_tready: Signal<In, Bit>,
        #[doc = "The writer's state."]
        st: Signal<Out, EvState>,
        #[doc = "The beat going out."]
        beat: Signal<Out, Bits<4>>,
        #[doc = "It is the entry's last."]
        last: Signal<Out, Bit>,
        #[doc = "Entries written."]
        prod: Signal<Out, Bits<32>>,
        #[doc = "An entry was written in the cycle before."]
        inc: Signal<Out, Bit>,
        #[doc = "Events lost."]
        lost: Signal<Out, Bits<32>>,
        #[doc = "The verdict FIFO's write address (its write pointer's slot)."]
        evf_wr: Signal<Out, Bits<6>>,
        #[doc = "Its read address."]
        evf_rd: Signal<Out, Bits<6>>,
        #[doc = "Its fill."]
        evf_count: Signal<Out, Bits<7>>,
        #[doc = "The TX-table FIFO's write address."]
        ttf_wr: Signal<Out, Bits<6>>,
        #[doc = "Its read address."]
        ttf_rd: Signal<Out, Bits<6>>,
        #[doc = "Its fill."]
        ttf_count: Signal<Out, Bits<7>>,
        #[doc = "Its fill is below `TT_FATE` (registered: it was below `TT_FATE − 1` a cycle before)."]
        fate_room: Signal<Out, Bit>,
        #[doc = "Its fill is below `TT_QOP` (registered: it was below `TT_QOP − 1` a cycle before)."]
        qop_room: Signal<Out, Bit>,
        #[doc = "The placement addresses' write address."]
        pa_wr: Signal<Out, Bits<6>>,
        #[doc = "Their read address."]
        pa_rd: Signal<Out, Bits<6>>,
        #[doc = "Their fill."]
        pa_count: Signal<Out, Bits<7>>,
        #[doc = "The skid holds a result."]
        skid_v: Signal<Out, Bit>,
        #[doc = "The TX-table FIFO's head is loaded into the entry this cycle."]
        load_tt: Signal<Out, Bit>,
        #[doc = "The verdict FIFO's head is (it is written unless fenced)."]
        load_ev: Signal<Out, Bit>,
        #[doc = "The view entry is (it is written when the ring has room)."]
        load_view: Signal<Out, Bit>,
    }
    state {
        // The writer: state, the FIFO taken (1: TX-table) and the one
        // taken before, beat, a view entry to follow, `prod`, `inc`.
        s: DFF<EvState>,
        src: DFF<Bit>,
        last_src: DFF<Bit>,
        b: DFF<Bits<4>>,
        vpend: DFF<Bit>,
        n_prod: DFF<Bits<32>>,
        i: DFF<Bit>,
        n_lost: DFF<Bits<32>>,
        // The FIFOs' pointers: verdicts, TX-table, placement addresses.
        evf: EvPtrs,
        ttf: EvPtrs,
        pa: EvPtrs,
        // The placement writes finished and the fenced events written,
        // the skid's flag.
        pl_done: DFF<Bits<32>>,
        pl_ev: DFF<Bits<32>>,
        sv: DFF<Bit>,
        // The TX-table FIFO's room verdicts.
        fr: DFF<Bit>,
        qr: DFF<Bit>,
    }
    consts {
        k_last: Constant<Bits<4>> = konst(EVQ_ENTRY / B - 1),
        k_fate1: Constant<Bits<7>> = konst(TT_FATE - 1),
        k_qop1: Constant<Bits<7>> = konst(TT_QOP - 1),
    }
}

impl<const B: usize> Logic for EvSeq<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s, src, last_src, b, vpend, n_prod, i, n_lost, pl_done, pl_ev, sv, fr, qr
        );
        self.evf.clock.next = self.clock.val();
        self.evf.rst.next = self.rst.val();
        self.evf.push.next = self.ev_valid.val();
        self.evf.pop.next = false;
        self.ttf.clock.next = self.clock.val();
        self.ttf.rst.next = self.rst.val();
        self.ttf.push.next = self.tt_push.val();
        self.ttf.pop.next = false;
        self.pa.clock.next = self.clock.val();
        self.pa.rst.next = self.rst.val();
        self.pa.push.next = self.pa_push.val();
        self.pa.pop.next = false;
        self.st.next = self.s.q.val();
        self.beat.next = self.b.q.val();
        self.last.next = self.b.q.val() == self.k_last.val();
        self.prod.next = self.n_prod.q.val();
        self.inc.next = self.i.q.val();
        self.lost.next = self.n_lost.q.val();
        self.evf_wr.next = self.evf.wr.val();
        self.evf_rd.next = self.evf.rd.val();
        self.evf_count.next = self.evf.count.val();
        self.ttf_wr.next = self.ttf.wr.val();
        self.ttf_rd.next = self.ttf.rd.val();
        self.ttf_count.next = self.ttf.count.val();
        self.fr.d.next = self.ttf.count.val() < self.k_fate1.val();
        self.qr.d.next = self.ttf.count.val() < self.k_qop1.val();
        self.fate_room.next = self.fr.q.val();
        self.qop_room.next = self.qr.q.val();
        self.pa_wr.next = self.pa.wr.val();
        self.pa_rd.next = self.pa.rd.val();
        self.pa_count.next = self.pa.count.val();
        self.skid_v.next = self.sv.q.val();
        self.load_tt.next = (self.s.q.val() == EvState::Load) & self.src.q.val();
        self.load_ev.next = (self.s.q.val() == EvState::Load) & !self.src.q.val();
        self.load_view.next = self.s.q.val() == EvState::View;

        self.i.d.next = false;
        match self.s.q.val() {
            EvState::Idle => {
                if self.start.val() {
                    self.src.d.next = self.ttf.count.val().any()
                        & (!self.evf.count.val().any() | !self.last_src.q.val());
                    self.s.d.next = EvState::Load;
                }
            }
            EvState::Load => {
                self.b.d.next = 0.into();
                self.last_src.d.next = self.src.q.val();
                if self.src.q.val() {
                    self.vpend.d.next = self.vpend_in.val();
                    self.ttf.pop.next = true;
                    self.s.d.next = EvState::Write;
                } else if !self.fence.val() | (self.pl_done.q.val() != self.pl_ev.q.val()) {
                    self.evf.pop.next = true;
                    if self.fence.val() {
                        self.pl_ev.d.next = self.pl_ev.q.val() + 1;
                        self.pa.pop.next = self.pa.count.val().any();
                    }
                    self.vpend.d.next = false;
                    self.s.d.next = EvState::Write;
                } else {
                    // Its data is not written yet: serve the other FIFO.
                    self.s.d.next = EvState::Idle;
                }
            }
            EvState::Write => {
                if self.w_tready.val() {
                    self.b.d.next = self.b.q.val() + 1;
                    if self.b.q.val() == self.k_last.val() {
                        self.n_prod.d.next = self.n_prod.q.val() + 1;
                        self.i.d.next = true;
                        self.s.d.next = EvState::Idle;
                        if self.vpend.q.val() {
                            self.s.d.next = EvState::View;
                        }
                    }
                }
            }
            _ => {
                // The result's view entry.
                if self.room.val() {
                    self.vpend.d.next = false;
                    self.b.d.next = 0.into();
                    self.s.d.next = EvState::Write;
                }
            }
        }
        // An event that found its FIFO full (a placement address never
        // does, by the MAC RX hold: at most the events in the verdict FIFO
        // and the core's).
        if (self.ev_valid.val() & self.evf.full.val())
            | (self.tt_push.val() & self.ttf.full.val())
            | (self.pa_push.val() & self.pa.full.val())
        {
            self.n_lost.d.next = self.n_lost.q.val() + 1;
        }
        if self.pl_last.val() {
            self.pl_done.d.next = self.pl_done.q.val() + 1;
        }
        self.sv.d.next = self.skid_load.val();
        if self.rst.val() {
            self.s.d.next = EvState::Idle;
            self.src.d.next = false;
            self.last_src.d.next = false;
            self.b.d.next = 0.into();
            self.vpend.d.next = false;
            self.n_prod.d.next = 0.into();
            self.i.d.next = false;
            self.n_lost.d.next = 0.into();
            self.pl_done.d.next = 0.into();
            self.pl_ev.d.next = 0.into();
            self.sv.d.next = false;
        }
    }
}
