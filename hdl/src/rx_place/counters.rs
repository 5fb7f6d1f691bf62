//! The verdict counters ([`PlaceCounters`]).

use rust_hdl::prelude::*;

use super::Verdict;
use crate::bus::CounterPort;

/// Counters: one per verdict code in use.
pub(super) const COUNTERS: usize = Verdict::ALL.len();

/// One 32-bit counter per [`Verdict`] code of
/// [`RxPlace`](super::RxPlace). The verdict (`valid`, `code`, S3's) is
/// registered first and counted a cycle later (the event's cycle), so the
/// verdict logic does not reach the adders; `cnt.sel` selects a counter,
/// `cnt.val` shows it a cycle later. Codes without a counter read 0.
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
    counters: [DFF<Bits<32>>; COUNTERS],
    // The verdict to count, a cycle late.
    c_valid: DFF<Bit>,
    c_code: DFF<Bits<5>>,
    cnt_q: DFF<Bits<32>>,
}

impl Logic for PlaceCounters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, c_valid, c_code, cnt_q);
        for c in 0..COUNTERS {
            self.counters[c].clock.next = self.clock.val();
            self.counters[c].d.next = self.counters[c].q.val();
        }
        self.c_valid.d.next = self.valid.val();
        if self.valid.val() {
            self.c_code.d.next = self.code.val();
        }
        if self.c_valid.q.val() {
            for c in 0..COUNTERS {
                if self.c_code.q.val().index() == c {
                    self.counters[c].d.next = self.counters[c].q.val() + 1;
                }
            }
        }
        self.cnt_q.d.next = 0.into();
        for c in 0..COUNTERS {
            if self.cnt.sel.val().index() == c {
                self.cnt_q.d.next = self.counters[c].q.val();
            }
        }
        self.cnt.val.next = self.cnt_q.q.val();
        if self.rst.val() {
            self.c_valid.d.next = false;
            for c in 0..COUNTERS {
                self.counters[c].d.next = 0.into();
            }
        }
    }
}
