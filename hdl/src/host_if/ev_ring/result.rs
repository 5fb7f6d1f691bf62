//! [`EvResult`], a result's TX-table FIFO entry.

use rust_hdl::prelude::*;

use super::*;

native_block! {
    /// The TX-table FIFO entry of this cycle's result (combinational): the
    /// ACK receiver's (`ackrx`, when valid) or else a queued table
    /// operation's, with the type in its top 4 bits and the slot's view
    /// (`cap_view`) above the 128-bit payload (`docs/hardware.md` §18);
    /// 0 in a cycle without a result (laid out only when one comes).
    EvResult[]
    ports {
        #[doc = "A result comes this cycle (`ackrx.valid` or a queued operation's)."]
        push: Signal<In, Bit>,
        #[doc = "ACKs the ACK receiver applied (`NicCore::m_ackrx`)."]
        ackrx: AckDoneIn<TX_SLOT_BITS>,
        #[doc = "The queued operation's code."]
        qop_code: Signal<In, Bits<3>>,
        #[doc = "The queued operation's slot."]
        qop_slot: Signal<In, Bits<TX_SLOT_BITS>>,
        #[doc = "`NicCore::res_ok`."]
        res_ok: Signal<In, Bit>,
        #[doc = "`NicCore::res_psn`."]
        res_psn: Signal<In, Bits<32>>,
        #[doc = "`NicCore::res_pkts`."]
        res_pkts: Signal<In, Bits<32>>,
        #[doc = "`NicCore::res_bytes`."]
        res_bytes: Signal<In, Bits<32>>,
        #[doc = "`NicCore::cap_view`: the view of the result's slot."]
        cap_view: Signal<In, Bits<VIEW_BITS>>,
        #[doc = "The entry."]
        entry: Signal<Out, Bits<TT_BITS>>,
    }
    state {
        e: Signal<Local, Bits<TT_BITS>>,
    }
    consts {
        k_ttype_at: Constant<Bits<16>> = konst(TT_BITS - 4),
        k_ackrx: Constant<Bits<4>> = konst(usize::from(ev_type::ACKRX)),
        k_op_result: Constant<Bits<4>> = konst(usize::from(ev_type::OP_RESULT)),
    }
}

impl Logic for EvResult {
    #[hdl_gen]
    fn update(&mut self) {
        self.e.next = 0.into();
        self.entry.next = 0.into();
        if self.push.val() {
            self.e.next = (bit_cast::<TT_BITS, 3>(self.qop_code.val()) << 101)
                | (bit_cast::<TT_BITS, TX_SLOT_BITS>(self.qop_slot.val()) << 96)
                | (bit_cast::<TT_BITS, 32>(self.res_psn.val()) << 64)
                | (bit_cast::<TT_BITS, 32>(self.res_bytes.val()) << 32)
                | bit_cast::<TT_BITS, 32>(self.res_pkts.val())
                | (bit_cast::<TT_BITS, 4>(self.k_op_result.val()) << self.k_ttype_at.val());
            self.e.next = self.e.val().replace_bit(100, self.res_ok.val());
            if self.ackrx.valid.val() {
                self.e.next = (bit_cast::<TT_BITS, TX_SLOT_BITS>(self.ackrx.slot.val()) << 96)
                    | (bit_cast::<TT_BITS, 32>(self.ackrx.conn_cum.val()) << 64)
                    | (bit_cast::<TT_BITS, 32>(self.ackrx.bytes.val()) << 32)
                    | bit_cast::<TT_BITS, 32>(self.ackrx.pkts.val())
                    | (bit_cast::<TT_BITS, 4>(self.k_ackrx.val()) << self.k_ttype_at.val());
            }
            self.entry.next =
                self.e.val() | (bit_cast::<TT_BITS, VIEW_BITS>(self.cap_view.val()) << 128);
        }
    }
}
