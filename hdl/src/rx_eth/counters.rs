//! The frame counters of [`RxEth`](super::RxEth) ([`RxEthCounters`]).

use rust_hdl::prelude::*;

use super::CODES;
use crate::bus::CounterPort;
use crate::helpers::native_block;

native_block! {
    /// Frames per [`EthDrop`](super::EthDrop) code (32 bits each), counted
    /// from the verdict event (a frame is counted one cycle after its
    /// `ev_valid`), read one cycle after the select.
    RxEthCounters []
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: every counter 0."]
        rst: Signal<In, Bit>,
        #[doc = "A frame's verdict."]
        ev_valid: Signal<In, Bit>,
        #[doc = "Its [`EthDrop`](super::EthDrop) code."]
        ev_reason: Signal<In, Bits<4>>,
        #[doc = "Counter read port (select: an [`EthDrop`](super::EthDrop) code)."]
        cnt: CounterPort<4>,
    }
    state {
        count: [DFF<Bits<32>>; CODES],
        cval: DFF<Bits<32>>,
    }
    consts {}
}

impl Logic for RxEthCounters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, cval);
        for j in 0..CODES {
            self.count[j].clock.next = self.clock.val();
            self.count[j].d.next = self.count[j].q.val();
        }
        for j in 0..CODES {
            if self.ev_valid.val() & (self.ev_reason.val() == j.to_bits::<4>()) {
                self.count[j].d.next = self.count[j].q.val() + 1;
            }
        }
        self.cval.d.next = 0.into();
        for j in 0..CODES {
            if self.cnt.sel.val() == j.to_bits::<4>() {
                self.cval.d.next = self.count[j].q.val();
            }
        }
        self.cnt.val.next = self.cval.q.val();
        if self.rst.val() {
            for j in 0..CODES {
                self.count[j].d.next = 0.into();
            }
        }
    }
}
