//! The TX table's operation register ([`TxOpLatch`]): the operation port
//! is taken into registers, and the table works on them the next cycle, so
//! neither the issuers' choice (the ACK receiver's turn with the firmware,
//! the host queue's entry) nor the port's fields reach the slot word's
//! read, its update and the rings in the same cycle.

use rust_hdl::prelude::*;

use crate::bus::{TxOpIn, TxOpOut};
use crate::helpers::native_block;

native_block! {
    /// One operation held between the table's port (`s_op`) and its
    /// decode (`m_op`): taken while the decode is ready (the table idle)
    /// and nothing is held, offered from the registers the next cycle and
    /// dropped when the decode takes it. `s_op.ready` is low while one is
    /// held, so the table writes nothing in a cycle its port shows ready.
    TxOpLatch[SB]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: nothing held."]
        rst: Signal<In, Bit>,
        #[doc = "The table's operation port."]
        s_op: TxOpIn<SB>,
        #[doc = "To the decode."]
        m_op: TxOpOut<SB>,
    }
    state {
        held: DFF<Bit>,
        code: DFF<Bits<3>>,
        slot: DFF<Bits<SB>>,
        psn: DFF<Bits<32>>,
        len: DFF<Bits<16>>,
        probe: DFF<Bit>,
        retx: DFF<Bit>,
        sack: DFF<Bits<256>>,
        rtt_valid: DFF<Bit>,
        rtt: DFF<Bits<32>>,
        ce_count: DFF<Bits<32>>,
        acked: DFF<Bits<32>>,
        value: DFF<Bits<32>>,
    }
    consts {}
}

impl<const SB: usize> Logic for TxOpLatch<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, held, code, slot, psn, len, probe, retx, sack, rtt_valid, rtt, ce_count,
            acked, value
        );
        self.s_op.ready.next = self.m_op.ready.val() & !self.held.q.val();
        self.m_op.valid.next = self.held.q.val();
        self.m_op.code.next = self.code.q.val();
        self.m_op.slot.next = self.slot.q.val();
        self.m_op.psn.next = self.psn.q.val();
        self.m_op.len.next = self.len.q.val();
        self.m_op.probe.next = self.probe.q.val();
        self.m_op.retx.next = self.retx.q.val();
        self.m_op.sack.next = self.sack.q.val();
        self.m_op.rtt_valid.next = self.rtt_valid.q.val();
        self.m_op.rtt.next = self.rtt.q.val();
        self.m_op.ce_count.next = self.ce_count.q.val();
        self.m_op.acked.next = self.acked.q.val();
        self.m_op.value.next = self.value.q.val();
        // The decode ready: a held operation is taken now, else none is.
        if self.m_op.ready.val() {
            self.held.d.next = self.s_op.valid.val() & !self.held.q.val() & !self.rst.val();
        }
        if self.s_op.valid.val() & self.m_op.ready.val() & !self.held.q.val() {
            self.code.d.next = self.s_op.code.val();
            self.slot.d.next = self.s_op.slot.val();
            self.psn.d.next = self.s_op.psn.val();
            self.len.d.next = self.s_op.len.val();
            self.probe.d.next = self.s_op.probe.val();
            self.retx.d.next = self.s_op.retx.val();
            self.sack.d.next = self.s_op.sack.val();
            self.rtt_valid.d.next = self.s_op.rtt_valid.val();
            self.rtt.d.next = self.s_op.rtt.val();
            self.ce_count.d.next = self.s_op.ce_count.val();
            self.acked.d.next = self.s_op.acked.val();
            self.value.d.next = self.s_op.value.val();
        }
        if self.rst.val() {
            self.held.d.next = false;
        }
    }
}
