//! The kernel's part that answers BAR reads of the read-only registers.

use rust_hdl::prelude::*;

use super::super::kernel::Part;
use super::HostIf;

/// The read-only registers: the one a BAR read asks for.
impl<const W: usize, const B: usize> Part<8> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.rd_flags.next = 0.into();
        self.rd_flags.next = self
            .rd_flags
            .val()
            .replace_bit(0, self.c_rd.rtt_valid.val());
        self.rd_flags.next = self
            .rd_flags
            .val()
            .replace_bit(1, self.c_rd.quarantined.val());
        self.rd_flags.next =
            self.rd_flags.val() | (bit_cast::<32, 4>(self.c_rd.backoff.val()) << 2);
        self.rd_flags.next = self.rd_flags.val().replace_bit(6, self.c_rd.can_send.val());
        self.ro_rd_data.next = 0.into();
        if self.ro_rd_valid.val() {
            if self.ro_rd_addr.val() == self.k_ro_cnt_bar_bad.val() {
                self.ro_rd_data.next = self.cnt_bar_bad.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_cfg_writes.val() {
                self.ro_rd_data.next = self.cnt.cfg_writes.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_cnt_val.val() {
                self.ro_rd_data.next = self.c_cnt.val.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_eth_cnt_val.val() {
                self.ro_rd_data.next = self.c_eth_cnt.val.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ack_cnt_frames.val() {
                self.ro_rd_data.next = self.c_ack_cnt_frames.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ack_cnt_ece.val() {
                self.ro_rd_data.next = self.c_ack_cnt_ece.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ack_cnt_v6.val() {
                self.ro_rd_data.next = self.c_ack_cnt_v6.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_applied.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.applied.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_unmapped.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.unmapped.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_overflow.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.overflow.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_pair_err.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.pair_err.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_refused.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.refused.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_fw_cnt_up.val() {
                self.ro_rd_data.next = self.c_fw_cnt_up.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_fw_cnt_trunc.val() {
                self.ro_rd_data.next = self.c_fw_cnt_trunc.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_fwtx_cnt_frames.val() {
                self.ro_rd_data.next = self.c_fwtx_cnt_frames.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_tx_err.val() {
                self.ro_rd_data.next = bit_cast::<32, 1>(self.c_m_err.val().into());
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_eth_frames.val() {
                self.ro_rd_data.next = self.cnt.eth_frames.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_eth_drops.val() {
                self.ro_rd_data.next = self.cnt.eth_drops.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_rx_hold.val() {
                self.ro_rd_data.next = self.rxh.held.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_ev_lost.val() {
                self.ro_rd_data.next = self.cnt_ev_lost.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_txq_bad.val() {
                self.ro_rd_data.next = self.txq.bad.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_ftq_bad.val() {
                self.ro_rd_data.next = self.cnt_ftq_bad.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_bad_tag.val() {
                self.ro_rd_data.next = self.cnt.bad_tag.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_txq_ops.val() {
                self.ro_rd_data.next = self.op.ops.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_op_status.val() {
                self.ro_rd_data.next = bit_cast::<32, 3>(self.op.status.val());
            }
            if self.ro_rd_addr.val() == self.k_ro_op_res_psn.val() {
                self.ro_rd_data.next = self.op.last_psn.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_op_res_pkts.val() {
                self.ro_rd_data.next = self.op.last_pkts.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_op_res_bytes.val() {
                self.ro_rd_data.next = self.op.last_bytes.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_rd_entropy.val() {
                self.ro_rd_data.next = bit_cast::<32, 16>(self.c_rd.entropy.val());
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_next_psn.val() {
                self.ro_rd_data.next = self.c_rd.next_psn.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_una.val() {
                self.ro_rd_data.next = self.c_rd.una.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_inflight.val() {
                self.ro_rd_data.next = self.c_rd.inflight.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_window.val() {
                self.ro_rd_data.next = self.c_rd.window.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_srtt.val() {
                self.ro_rd_data.next = self.c_rd.srtt.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_rttvar.val() {
                self.ro_rd_data.next = self.c_rd.rttvar.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_ecn_ewma.val() {
                self.ro_rd_data.next = self.c_rd.ecn_ewma.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_loss_ewma.val() {
                self.ro_rd_data.next = self.c_rd.loss_ewma.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_samples.val() {
                self.ro_rd_data.next = self.c_rd.samples.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_sent.val() {
                self.ro_rd_data.next = self.c_rd.sent.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_retransmitted.val() {
                self.ro_rd_data.next = self.c_rd.retransmitted.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_acked.val() {
                self.ro_rd_data.next = self.c_rd.acked.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_lost.val() {
                self.ro_rd_data.next = self.c_rd.lost.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_ce_marked.val() {
                self.ro_rd_data.next = self.c_rd.ce_marked.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_repaths.val() {
                self.ro_rd_data.next = self.c_rd.repaths.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_timeouts.val() {
                self.ro_rd_data.next = self.c_rd.timeouts.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_rd_flags.val() {
                self.ro_rd_data.next = self.rd_flags.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_txq_cons.val() {
                self.ro_rd_data.next = self.txq.cons.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_ftq_cons.val() {
                self.ro_rd_data.next = self.ftq_cons.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_evq_prod.val() {
                self.ro_rd_data.next = self.evq_prod.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_frq_prod.val() {
                self.ro_rd_data.next = self.frq_prod.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_irq_count0.val() {
                self.ro_rd_data.next = self.irq_count0.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_irq_count1.val() {
                self.ro_rd_data.next = self.irq_count1.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_irq_count2.val() {
                self.ro_rd_data.next = self.irq_count2.val();
            }
        }
    }
}
