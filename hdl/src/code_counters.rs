//! Event counters indexed by a code ([`CodeCounters`]), shared by the
//! receive blocks that count their verdicts.

use rust_hdl::prelude::*;

use crate::bus::CounterPort;
use crate::helpers::{LutRam, konst, native_block};

native_block! {
    /// One 32-bit counter per code below `N` (codes of `CB` bits, `N` below
    /// `2^CB`). An event
    /// (`valid`, `code`) is registered first and counted a cycle later, so
    /// the logic that makes the code does not reach the adder; `cnt.sel`
    /// selects a counter, `cnt.val` shows it a cycle later. Codes without a
    /// counter read 0.
    ///
    /// At most one counter moves per cycle, so the counters are words of a
    /// distributed RAM with one shared incrementer (read, plus one, written
    /// back at the edge), in two copies written alike: one read at the
    /// counted code, one at `cnt.sel`. A counter's `live` bit tells that its
    /// word holds its value (the reset clears every bit: a counter reads 0
    /// until counted). The bits are indexed by the code: one range test and
    /// one bit select, not a compare per counter (fewer LUTs, and one select
    /// for Verilator to evaluate every cycle instead of a loop of compares).
    CodeCounters[CB, N]
    check {
        CB <= 6 && (1..1 << CB).contains(&N),
        "CodeCounters<{CB}, {N}>: 1 to 2^CB - 1 counters (N, the range test's bound, fits CB bits)"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: every counter 0."]
        rst: Signal<In, Bit>,
        #[doc = "An event this cycle."]
        valid: Signal<In, Bit>,
        #[doc = "Its code."]
        code: Signal<In, Bits<CB>>,
        #[doc = "Counter read port (select: a code)."]
        cnt: CounterPort<CB>,
    }
    state {
        inc: LutRam<32, CB>,
        rd: LutRam<32, CB>,
        live: DFF<Bits<N>>,
        // The event to count, a cycle late.
        c_valid: DFF<Bit>,
        c_code: DFF<Bits<CB>>,
        cnt_q: DFF<Bits<32>>,
        // The counted code has a counter; its `live` bit and `cnt.sel`'s;
        // the counted value; the value plus one.
        hit: Signal<Local, Bit>,
        code_live: Signal<Local, Bit>,
        sel_live: Signal<Local, Bit>,
        cur: Signal<Local, Bits<32>>,
        sum: Signal<Local, Bits<32>>,
    }
    consts {
        k_counters: Constant<Bits<CB>> = konst(N),
    }
}

impl<const CB: usize, const N: usize> Logic for CodeCounters<CB, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, live, c_valid, c_code, cnt_q);
        self.c_valid.d.next = self.valid.val();
        if self.valid.val() {
            self.c_code.d.next = self.code.val();
        }
        self.inc.clock.next = self.clock.val();
        self.rd.clock.next = self.clock.val();
        self.inc.read_address.next = self.c_code.q.val();
        self.rd.read_address.next = self.cnt.sel.val();
        self.hit.next = self.c_valid.q.val() & (self.c_code.q.val() < self.k_counters.val());
        // A `live` bit is selected only below `N` (the range test first).
        self.code_live.next = false;
        if self.hit.val() {
            self.code_live.next = self.live.q.val().get_bit(self.c_code.q.val().index());
        }
        self.sel_live.next = false;
        if self.cnt.sel.val() < self.k_counters.val() {
            self.sel_live.next = self.live.q.val().get_bit(self.cnt.sel.val().index());
        }
        self.cur.next = 0.into();
        if self.code_live.val() {
            self.cur.next = self.inc.read_data.val();
        }
        self.cnt_q.d.next = 0.into();
        if self.sel_live.val() {
            self.cnt_q.d.next = self.rd.read_data.val();
        }
        self.sum.next = self.cur.val() + 1;
        self.inc.write_enable.next = self.hit.val() & !self.rst.val();
        self.inc.write_address.next = self.c_code.q.val();
        self.inc.write_data.next = self.sum.val();
        self.rd.write_enable.next = self.hit.val() & !self.rst.val();
        self.rd.write_address.next = self.c_code.q.val();
        self.rd.write_data.next = self.sum.val();
        if self.hit.val() {
            self.live.d.next = self
                .live
                .q
                .val()
                .replace_bit(self.c_code.q.val().index(), true);
        }
        self.cnt.val.next = self.cnt_q.q.val();
        if self.rst.val() {
            self.c_valid.d.next = false;
            self.live.d.next = 0.into();
        }
    }
}
