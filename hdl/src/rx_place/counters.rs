//! The verdict counters ([`PlaceCounters`]).

use rust_hdl::prelude::*;

use super::Verdict;
use crate::bus::CounterPort;
use crate::helpers::LutRam;

/// Counters: one per verdict code in use.
pub(super) const COUNTERS: usize = Verdict::ALL.len();

/// One 32-bit counter per [`Verdict`] code of
/// [`RxPlace`](super::RxPlace). The verdict (`valid`, `code`, S3's) is
/// registered first and counted a cycle later (the event's cycle), so the
/// verdict logic does not reach the adder; `cnt.sel` selects a counter,
/// `cnt.val` shows it a cycle later. Codes without a counter read 0.
///
/// At most one counter moves per cycle, so the counters are words of a
/// distributed RAM with one shared incrementer (read, plus one, written
/// back at the edge), in two copies written alike: one read at the counted
/// code, one at `cnt.sel`. A counter's `live` bit tells that its word holds
/// its value (the reset clears every bit: a counter reads 0 until counted).
#[derive(LogicBlock, Default)]
pub struct PlaceCounters {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every counter 0.
    pub rst: Signal<In, Bit>,
    /// A verdict this cycle (S3 holds a datagram).
    pub valid: Signal<In, Bit>,
    /// Its code.
    pub code: Signal<In, Bits<5>>,
    /// Counter read port.
    pub cnt: CounterPort<5>,
    // The counters: read at the counted code, and at `cnt.sel`.
    inc: LutRam<32, 5>,
    rd: LutRam<32, 5>,
    live: DFF<Bits<32>>,
    // The verdict to count, a cycle late.
    c_valid: DFF<Bit>,
    c_code: DFF<Bits<5>>,
    cnt_q: DFF<Bits<32>>,
    // The counted code has a counter; its value; the value plus one.
    hit: Signal<Local, Bit>,
    cur: Signal<Local, Bits<32>>,
    sum: Signal<Local, Bits<32>>,
}

impl Logic for PlaceCounters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, live, c_valid, c_code, cnt_q);
        self.c_valid.d.next = self.valid.val();
        if self.valid.val() {
            self.c_code.d.next = self.code.val();
        }
        self.hit.next = false;
        self.inc.clock.next = self.clock.val();
        self.rd.clock.next = self.clock.val();
        self.inc.read_address.next = self.c_code.q.val();
        self.rd.read_address.next = self.cnt.sel.val();
        self.cur.next = 0.into();
        self.cnt_q.d.next = 0.into();
        for c in 0..COUNTERS {
            if self.c_valid.q.val() & (self.c_code.q.val().index() == c) {
                self.hit.next = true;
            }
            if self.live.q.val().get_bit(c) & (self.c_code.q.val().index() == c) {
                self.cur.next = self.inc.read_data.val();
            }
            if self.live.q.val().get_bit(c) & (self.cnt.sel.val().index() == c) {
                self.cnt_q.d.next = self.rd.read_data.val();
            }
        }
        self.sum.next = self.cur.val() + 1;
        self.inc.write_enable.next = self.hit.val() & !self.rst.val();
        self.inc.write_address.next = self.c_code.q.val();
        self.inc.write_data.next = self.sum.val();
        self.rd.write_enable.next = self.hit.val() & !self.rst.val();
        self.rd.write_address.next = self.c_code.q.val();
        self.rd.write_data.next = self.sum.val();
        for c in 0..COUNTERS {
            if self.hit.val() & (self.c_code.q.val().index() == c) {
                self.live.d.next = self.live.q.val().replace_bit(c, true);
            }
        }
        self.cnt.val.next = self.cnt_q.q.val();
        if self.rst.val() {
            self.c_valid.d.next = false;
            self.live.d.next = 0.into();
        }
    }
}
