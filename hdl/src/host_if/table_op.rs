//! The TX table's operation port of [`super::HostIf`], as a native
//! rust-hdl block.
//!
//! [`TxTableOp`] puts one operation at a time on the table's port
//! (`NicCore::op_*`): the register port's (the `TXT.OP_*` registers,
//! issued by `OP_GO`, waiting while a queued one runs) or the TX queue's
//! (kind 2, offered only while no register operation is pending or
//! running, and while the event path has room for its result). A register
//! operation's result lands in `OP_STATUS` and `RES_*`; a queued one's goes
//! to the event ring ([`super::EvRing`]) with its slot's view from the
//! table's capture port (the last result's slot). The offer and the fields come from the registers
//! and the held entry alone (the table's `op_ready` depends on `op_valid`),
//! so the handshake reaches only the registers' inputs and `take`.
//!
//! Under Verilator it is part of [`crate::NicDevice`] (`metaroce-sim-tb`,
//! `nic_device`); rust-hdl's simulator runs it inside [`super::HostIf`]'s
//! test.

use rust_hdl::prelude::*;

use super::txq::ENTRY_BITS;
use crate::helpers::native_block;
use crate::nic_core::TX_SLOT_BITS;

native_block! {
    /// The TX table's operation port.
    TxTableOp[]
    check { TX_SLOT_BITS == 4, "TxTableOp: 4-bit slots" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: nothing pending or running, results and count 0."]
        rst: Signal<In, Bit>,
        #[doc = "`TXT.OP_GO` is written."]
        go: Signal<In, Bit>,
        #[doc = "`TXT.OP_CTRL`."]
        r_ctrl: Signal<In, Bits<10>>,
        #[doc = "`TXT.OP_PSN`."]
        r_psn: Signal<In, Bits<32>>,
        #[doc = "`TXT.OP_LEN`."]
        r_len: Signal<In, Bits<16>>,
        #[doc = "`TXT.OP_RTT`."]
        r_rtt: Signal<In, Bits<32>>,
        #[doc = "`TXT.OP_CE_COUNT`."]
        r_ce_count: Signal<In, Bits<32>>,
        #[doc = "`TXT.OP_ACKED`."]
        r_acked: Signal<In, Bits<32>>,
        #[doc = "`TXT.OP_VALUE`."]
        r_value: Signal<In, Bits<32>>,
        #[doc = "`TXT.OP_SACK7:OP_SACK0`."]
        r_sack: Signal<In, Bits<256>>,
        #[doc = "A TX queue entry of kind 2 is held."]
        q_held: Signal<In, Bit>,
        #[doc = "The held TX queue entry."]
        ds: Signal<In, Bits<ENTRY_BITS>>,
        #[doc = "The event path has room for a queued operation's result ([`super::EvRing::qop_room`])."]
        room: Signal<In, Bit>,
        #[doc = "Table: `op_valid`."]
        op_valid: Signal<Out, Bit>,
        #[doc = "Table: `op_ready`."]
        op_ready: Signal<In, Bit>,
        #[doc = "Table: `op_code`."]
        op_code: Signal<Out, Bits<3>>,
        #[doc = "Table: `op_slot`."]
        op_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        #[doc = "Table: `op_probe`."]
        op_probe: Signal<Out, Bit>,
        #[doc = "Table: `op_retx`."]
        op_retx: Signal<Out, Bit>,
        #[doc = "Table: `op_rtt_valid`."]
        op_rtt_valid: Signal<Out, Bit>,
        #[doc = "Table: `op_psn`."]
        op_psn: Signal<Out, Bits<32>>,
        #[doc = "Table: `op_len`."]
        op_len: Signal<Out, Bits<16>>,
        #[doc = "Table: `op_rtt`."]
        op_rtt: Signal<Out, Bits<32>>,
        #[doc = "Table: `op_ce_count`."]
        op_ce_count: Signal<Out, Bits<32>>,
        #[doc = "Table: `op_acked`."]
        op_acked: Signal<Out, Bits<32>>,
        #[doc = "Table: `op_value`."]
        op_value: Signal<Out, Bits<32>>,
        #[doc = "Table: `op_sack`."]
        op_sack: Signal<Out, Bits<256>>,
        #[doc = "Table: `res_valid`."]
        res_valid: Signal<In, Bit>,
        #[doc = "Table: `res_ok`."]
        res_ok: Signal<In, Bit>,
        #[doc = "Table: `res_psn`."]
        res_psn: Signal<In, Bits<32>>,
        #[doc = "Table: `res_pkts`."]
        res_pkts: Signal<In, Bits<32>>,
        #[doc = "Table: `res_bytes`."]
        res_bytes: Signal<In, Bits<32>>,
        #[doc = "The TX table takes the held queued operation this cycle."]
        take: Signal<Out, Bit>,
        #[doc = "A queued operation's result is on the table's result port."]
        qres_valid: Signal<Out, Bit>,
        #[doc = "The running queued operation's slot."]
        qop_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        #[doc = "The running queued operation's code."]
        qop_code: Signal<Out, Bits<3>>,
        #[doc = "`TXT.OP_STATUS`: `[0]` busy, `[1]` done, `[2]` ok."]
        status: Signal<Out, Bits<3>>,
        #[doc = "`TXT.RES_PSN`."]
        last_psn: Signal<Out, Bits<32>>,
        #[doc = "`TXT.RES_PKTS`."]
        last_pkts: Signal<Out, Bits<32>>,
        #[doc = "`TXT.RES_BYTES`."]
        last_bytes: Signal<Out, Bits<32>>,
        #[doc = "`CNT.TXQ_OPS`: operations taken from the TX queue."]
        ops: Signal<Out, Bits<32>>,
    }
    state {
        pend: DFF<Bit>,
        busy: DFF<Bit>,
        done: DFF<Bit>,
        ok: DFF<Bit>,
        l_psn: DFF<Bits<32>>,
        l_pkts: DFF<Bits<32>>,
        l_bytes: DFF<Bits<32>>,
        run: DFF<Bit>,
        q_slot: DFF<Bits<TX_SLOT_BITS>>,
        q_code: DFF<Bits<3>>,
        n_ops: DFF<Bits<32>>,
        // Temporary: every bit of the held entry, read (the descriptor
        // fields and the reserved bits are not this block's).
        unused_ds: Signal<Local, Bit>,
    }
    consts {}
}

impl Logic for TxTableOp {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, pend, busy, done, ok, l_psn, l_pkts, l_bytes, run, q_slot, q_code, n_ops
        );
        self.unused_ds.next = self.ds.val().xor();

        // ---- the port: from the registers, the held entry and `room` ----
        self.op_valid.next = (self.pend.q.val() & !self.run.q.val())
            | (self.q_held.val() & !self.busy.q.val() & self.room.val());
        if self.busy.q.val() {
            self.op_code.next = self.r_ctrl.val().get_bits::<3>(0);
            self.op_slot.next = self.r_ctrl.val().get_bits::<TX_SLOT_BITS>(3);
            self.op_probe.next = self.r_ctrl.val().get_bit(7);
            self.op_retx.next = self.r_ctrl.val().get_bit(8);
            self.op_rtt_valid.next = self.r_ctrl.val().get_bit(9);
            self.op_psn.next = self.r_psn.val();
            self.op_len.next = self.r_len.val();
            self.op_rtt.next = self.r_rtt.val();
            self.op_ce_count.next = self.r_ce_count.val();
            self.op_acked.next = self.r_acked.val();
            self.op_value.next = self.r_value.val();
            self.op_sack.next = self.r_sack.val();
        } else {
            self.op_code.next = self.ds.val().get_bits::<3>(304);
            self.op_slot.next = self.ds.val().get_bits::<TX_SLOT_BITS>(307);
            self.op_probe.next = self.ds.val().get_bit(311);
            self.op_retx.next = self.ds.val().get_bit(312);
            self.op_rtt_valid.next = self.ds.val().get_bit(313);
            self.op_psn.next = self.ds.val().get_bits::<32>(256);
            self.op_len.next = self.ds.val().get_bits::<16>(288);
            self.op_rtt.next = self.ds.val().get_bits::<32>(320);
            self.op_ce_count.next = self.ds.val().get_bits::<32>(352);
            self.op_acked.next = self.ds.val().get_bits::<32>(384);
            self.op_value.next = self.ds.val().get_bits::<32>(416);
            self.op_sack.next = self.ds.val().get_bits::<256>(0);
        }
        // A queued operation's result: the table's result while it runs (a
        // register operation's result comes only after it was taken, which
        // a running queued one prevents).
        self.qres_valid.next = self.res_valid.val() & self.run.q.val();
        self.qop_slot.next = self.q_slot.q.val();
        self.qop_code.next = self.q_code.q.val();
        self.status.next = 0.into();
        self.status.next = self.status.val().replace_bit(0, self.busy.q.val());
        self.status.next = self.status.val().replace_bit(1, self.done.q.val());
        self.status.next = self.status.val().replace_bit(2, self.ok.q.val());
        self.last_psn.next = self.l_psn.q.val();
        self.last_pkts.next = self.l_pkts.q.val();
        self.last_bytes.next = self.l_bytes.q.val();
        self.ops.next = self.n_ops.q.val();

        // ---- the handshake: `take` and the registers' inputs ----
        self.take.next =
            self.q_held.val() & !self.busy.q.val() & self.room.val() & self.op_ready.val();
        if self.go.val() & !self.busy.q.val() {
            self.pend.d.next = true;
            self.busy.d.next = true;
            self.done.d.next = false;
        } else if self.pend.q.val() & !self.run.q.val() & self.op_ready.val() {
            self.pend.d.next = false;
        }
        if self.q_held.val() & !self.busy.q.val() & self.room.val() & self.op_ready.val() {
            self.run.d.next = true;
            self.q_slot.d.next = self.ds.val().get_bits::<TX_SLOT_BITS>(307);
            self.q_code.d.next = self.ds.val().get_bits::<3>(304);
            self.n_ops.d.next = self.n_ops.q.val() + 1;
        } else if self.res_valid.val() & self.run.q.val() {
            self.run.d.next = false;
        }
        if self.res_valid.val() & self.busy.q.val() & !self.pend.q.val() {
            self.busy.d.next = false;
            self.done.d.next = true;
            self.ok.d.next = self.res_ok.val();
            self.l_psn.d.next = self.res_psn.val();
            self.l_pkts.d.next = self.res_pkts.val();
            self.l_bytes.d.next = self.res_bytes.val();
        }
        if self.rst.val() {
            self.pend.d.next = false;
            self.busy.d.next = false;
            self.done.d.next = false;
            self.ok.d.next = false;
            self.l_psn.d.next = 0.into();
            self.l_pkts.d.next = 0.into();
            self.l_bytes.d.next = 0.into();
            self.run.d.next = false;
            self.q_slot.d.next = 0.into();
            self.q_code.d.next = 0.into();
            self.n_ops.d.next = 0.into();
        }
    }
}
