//! The kernel's parts on the core's firmware ports: the table port and
//! the counter selects, the TX queue's descriptors, the TX table's
//! operation port and the MAC RX hold.

use rust_hdl::prelude::*;

use super::super::kernel::Part;
use super::HostIf;
use crate::bus::CfgOut;
use crate::nic_core::TX_SLOT_BITS;

/// Clocks and resets of the sub-blocks; the table port (from the
/// registers or the TX queue) and the counter selects.
impl<const W: usize, const B: usize> Part<0> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.txq.clock.next = self.clock.val();
        self.op.clock.next = self.clock.val();
        self.wr.clock.next = self.clock.val();
        self.rxh.clock.next = self.clock.val();
        self.cnt.clock.next = self.clock.val();
        self.cfgq.clock.next = self.clock.val();
        self.txq.rst.next = self.rst.val();
        self.op.rst.next = self.rst.val();
        self.wr.rst.next = self.rst.val();
        self.rxh.rst.next = self.rst.val();
        self.cnt.rst.next = self.rst.val();
        self.cfgq.rst.next = self.rst.val();
        self.unused_rw.next = self.rw.val().xor();

        // ---- the table port (registers or the TX queue, through the
        // stage to the core), counter selects ----
        CfgOut::<10>::link(&mut self.c_cfg, &mut self.cfgq.m);
        self.cfgq.s.we.next =
            self.wo.val().get_bit(self.k_cfg_data_hi.val().index()) | self.txq.cfg_go.val();
        self.cfgq.s.addr.next = self.txq.ds.val().get_bits::<10>(64);
        self.cfgq.s.data.next = self.txq.ds.val().get_bits::<64>(0);
        if self.wo.val().get_bit(self.k_cfg_data_hi.val().index()) {
            self.cfgq.s.addr.next = self.rw.val().get_bits::<10>(self.k_cfg_addr.val().index());
            self.cfgq.s.data.next = (bit_cast::<64, 32>(self.wo_data.val()) << 32)
                | bit_cast::<64, 32>(
                    self.rw
                        .val()
                        .get_bits::<32>(self.k_cfg_data_lo.val().index()),
                );
        }
        self.c_eth_cfg_port_we.next = self.wo.val().get_bit(self.k_eth_port.val().index());
        self.c_eth_cfg_port.next = self.wo_data.val().get_bits::<16>(0);
        self.c_cnt.sel.next = self.rw.val().get_bits::<5>(self.k_cnt_sel.val().index());
        self.c_eth_cnt.sel.next = self
            .rw
            .val()
            .get_bits::<4>(self.k_eth_cnt_sel.val().index());
        self.c_rd.slot.next = self
            .rw
            .val()
            .get_bits::<TX_SLOT_BITS>(self.k_rd_slot.val().index());
        self.c_rd.len.next = self.rw.val().get_bits::<16>(self.k_rd_len.val().index());
        self.cnt.cfg_we.next = self.cfgq.s.we.val();
        self.cnt.eth_ev_valid.next = self.c_m_eth_ev.valid.val();
        self.cnt.eth_ev_reason.next = self.c_m_eth_ev.reason.val();
        self.cnt.dmac_tvalid.next = self.s_dmac_tvalid.val();
        self.cnt.dmac_tag.next = self.s_dmac_tag.val();
    }
}

/// The TX queue: its registers and completions, its descriptors to the
/// TX builder.
impl<const W: usize, const B: usize> Part<1> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.txq.ctrl.next = self.rw.val().get_bit(self.k_txq_ctrl.val().index());
        self.txq.prod.next = self.rw.val().get_bits::<32>(self.k_txq_prod.val().index());
        self.txq.base.next = self.rw.val().get_bits::<64>(self.k_txq_base.val().index());
        self.txq.size_log2.next = self.rw.val().get_bits::<5>(self.k_txq_size.val().index());
        self.txq.grant.next = self.rd.txq_grant.val();
        self.txq.c_tdata.next = self.s_dmac_tdata.val();
        self.txq.c_tvalid.next = self.s_dmac_tvalid.val();
        self.txq.c_tlast.next = self.s_dmac_tlast.val();
        self.txq.c_tag.next = self.s_dmac_tag.val();
        self.txq.desc_ready.next = self.c_s_desc.ready.val();
        self.txq.cfg_busy.next = self.wo.val().get_bit(self.k_cfg_data_hi.val().index());
        self.txq.op_take.next = self.op.take.val();
        self.txq.ftq_adv.next = self.ftq_adv.val();
        self.c_s_desc.valid.next = self.txq.desc_valid.val();
        self.c_s_desc.opcode.next = self.txq.ds.val().get_bits::<8>(0);
        self.c_s_desc.ecn.next = self.txq.ds.val().get_bit(8);
        self.c_s_desc.flags.next = self.txq.ds.val().get_bits::<16>(16);
        self.c_s_desc.stream.next = self.txq.ds.val().get_bits::<16>(32);
        self.c_s_desc.path.next = self.txq.ds.val().get_bits::<16>(48);
        self.c_s_desc.dst_qpn.next = self.txq.ds.val().get_bits::<32>(64);
        self.c_s_desc.src_qpn.next = self.txq.ds.val().get_bits::<32>(96);
        self.c_s_desc.conn_psn.next = self.txq.ds.val().get_bits::<32>(128);
        self.c_s_desc.path_psn.next = self.txq.ds.val().get_bits::<32>(160);
        self.c_s_desc.timestamp.next = self.txq.ds.val().get_bits::<64>(192);
        self.c_s_desc.msn.next = self.txq.ds.val().get_bits::<32>(256);
        self.c_s_desc.recv_idx.next = self.txq.ds.val().get_bits::<32>(288);
        self.c_s_desc.msg_len.next = self.txq.ds.val().get_bits::<32>(320);
        self.c_s_desc.offset.next = self.txq.ds.val().get_bits::<32>(352);
        self.c_s_desc.remote_va.next = self.txq.ds.val().get_bits::<64>(384);
        self.c_s_desc.rkey.next = self.txq.ds.val().get_bits::<32>(448);
        self.c_s_desc.imm.next = self.txq.ds.val().get_bits::<32>(480);
        self.c_s_desc.addr.next = self.txq.ds.val().get_bits::<64>(512);
        self.c_s_desc.len.next = self.txq.ds.val().get_bits::<16>(576);
    }
}

/// The TX table's operation port: the `OP_*` registers or the TX
/// queue's held operation.
impl<const W: usize, const B: usize> Part<2> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.op.go.next = self.wo.val().get_bit(self.k_op_go.val().index());
        self.op.r_ctrl.next = self.rw.val().get_bits::<10>(self.k_op_ctrl.val().index());
        self.op.r_psn.next = self.rw.val().get_bits::<32>(self.k_op_psn.val().index());
        self.op.r_len.next = self.rw.val().get_bits::<16>(self.k_op_len.val().index());
        self.op.r_rtt.next = self.rw.val().get_bits::<32>(self.k_op_rtt.val().index());
        self.op.r_ce_count.next = self
            .rw
            .val()
            .get_bits::<32>(self.k_op_ce_count.val().index());
        self.op.r_acked.next = self.rw.val().get_bits::<32>(self.k_op_acked.val().index());
        self.op.r_value.next = self.rw.val().get_bits::<32>(self.k_op_value.val().index());
        self.op.r_sack.next = self.rw.val().get_bits::<256>(self.k_op_sack.val().index());
        self.op.q_held.next = self.txq.op_held.val();
        self.op.ds.next = self.txq.ds.val();
        self.op.room.next = self.ev_qop_room.val();
        self.op.op_ready.next = self.c_op.ready.val();
        self.op.res_valid.next = self.c_res.valid.val();
        self.op.res_ok.next = self.c_res.ok.val();
        self.op.res_psn.next = self.c_res.psn.val();
        self.op.res_pkts.next = self.c_res.pkts.val();
        self.op.res_bytes.next = self.c_res.bytes.val();
        self.c_op.valid.next = self.op.op_valid.val();
        self.c_op.code.next = self.op.op_code.val();
        self.c_op.slot.next = self.op.op_slot.val();
        self.c_op.probe.next = self.op.op_probe.val();
        self.c_op.retx.next = self.op.op_retx.val();
        self.c_op.rtt_valid.next = self.op.op_rtt_valid.val();
        self.c_op.psn.next = self.op.op_psn.val();
        self.c_op.len.next = self.op.op_len.val();
        self.c_op.rtt.next = self.op.op_rtt.val();
        self.c_op.ce_count.next = self.op.op_ce_count.val();
        self.c_op.acked.next = self.op.op_acked.val();
        self.c_op.value.next = self.op.op_value.val();
        self.c_op.sack.next = self.op.op_sack.val();
        self.qres_valid.next = self.op.qres_valid.val();
        self.qop_slot.next = self.op.qop_slot.val();
        self.qop_code.next = self.op.qop_code.val();
    }
}

/// The MAC RX hold between the outside and the core.
impl<const W: usize, const B: usize> Part<3> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.rxh.hold.next = self.ev_hold.val();
        self.rxh.s_tdata.next = self.s_axis_tdata.val();
        self.rxh.s_tkeep.next = self.s_axis_tkeep.val();
        self.rxh.s_tvalid.next = self.s_axis_tvalid.val();
        self.rxh.s_tlast.next = self.s_axis_tlast.val();
        self.s_axis_tready.next = self.rxh.s_tready.val();
        self.c_s_axis.tdata.next = self.rxh.c_tdata.val();
        self.c_s_axis.tkeep.next = self.rxh.c_tkeep.val();
        self.c_s_axis.tvalid.next = self.rxh.c_tvalid.val();
        self.c_s_axis.tlast.next = self.rxh.c_tlast.val();
        self.rxh.c_tready.next = self.c_s_axis.tready.val();
    }
}
