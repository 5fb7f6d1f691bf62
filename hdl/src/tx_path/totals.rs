//! The TX table's ACK totals: the data packets and bytes an `Ack` (or the
//! pop after a `Lose`) acknowledges and whether it acknowledged a probe,
//! counted as the walker ([`super::ring::TxRing`]) resolves entries; then
//! the loss-EWMA decays, four acknowledged packets a cycle
//! (`TxPathTable`'s `S_DECAY`), whose last cycle ends the ACK
//! ([`AckEndOut`]).

use rust_hdl::prelude::*;

use super::links::{AckEndOut, AckedIn};
use crate::helpers::native_block;

native_block! {
    /// Registers for the totals and the decays still due.
    TxTotals[]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the registers hold."]
        rst: Signal<In, Bit>,
        #[doc = "An `Ack` or `Lose` is taken: the totals start at 0."]
        clear: Signal<In, Bit>,
        #[doc = "Entries the walk acknowledges, and its end."]
        acked: AckedIn,
        #[doc = "The decays run."]
        in_decay: Signal<In, Bit>,
        #[doc = "At most four decays are still due: the ACK's last cycle."]
        last: Signal<Out, Bit>,
        #[doc = "Data packets acknowledged."]
        pkts: Signal<Out, Bits<32>>,
        #[doc = "Their payload bytes."]
        bytes: Signal<Out, Bits<32>>,
        #[doc = "To the slot update."]
        end: AckEndOut,
    }
    state {
        c_pkts: DFF<Bits<32>>,
        c_bytes: DFF<Bits<32>>,
        c_probe_acked: DFF<Bit>,
        c_decay: DFF<Bits<9>>,
    }
    consts {}
}

impl Logic for TxTotals {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, c_pkts, c_bytes, c_probe_acked, c_decay);
        self.last.next = self.c_decay.q.val() <= 4;
        self.pkts.next = self.c_pkts.q.val();
        self.bytes.next = self.c_bytes.q.val();
        self.end.decay.next = 0.into();
        if self.in_decay.val() {
            self.end.decay.next = self.c_decay.q.val();
        }
        self.end.done.next = self.in_decay.val() & (self.c_decay.q.val() <= 4);
        self.end.pkts.next = self.c_pkts.q.val();
        self.end.probe_acked.next = self.c_probe_acked.q.val();
        if !self.rst.val() {
            if self.clear.val() {
                self.c_pkts.d.next = 0.into();
                self.c_bytes.d.next = 0.into();
                self.c_probe_acked.d.next = false;
            }
            if self.acked.one.val() {
                if self.acked.probe.val() {
                    self.c_probe_acked.d.next = true;
                } else {
                    self.c_pkts.d.next = self.c_pkts.q.val() + 1;
                    self.c_bytes.d.next =
                        self.c_bytes.q.val() + bit_cast::<32, 16>(self.acked.len.val());
                }
            }
            if self.acked.done.val() {
                self.c_decay.d.next = self.c_pkts.q.val().get_bits::<9>(0);
            }
            if self.in_decay.val() & (self.c_decay.q.val() > 4) {
                self.c_decay.d.next = self.c_decay.q.val() - 4;
            }
        }
    }
}
