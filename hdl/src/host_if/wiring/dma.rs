//! The kernel's parts on host memory: the DMA read and write arbiters,
//! the rings' registers and what each interrupt vector counts.

use rust_hdl::prelude::*;

use super::super::kernel::Part;
use super::HostIf;

/// DMA reads: the firmware TX queue's registers, the arbiter's clients
/// and its ports.
impl<const W: usize, const B: usize> Part<4> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ftq_ctrl.next = self.rw.val().get_bit(self.k_ftq_ctrl.val().index());
        self.ftq_prod.next = self.rw.val().get_bits::<32>(self.k_ftq_prod.val().index());
        self.ftq_base.next = self.rw.val().get_bits::<64>(self.k_ftq_base.val().index());
        self.ftq_size_log2.next = self.rw.val().get_bits::<5>(self.k_ftq_size.val().index());
        self.rd.rd_valid.next = self.c_m_rd.valid.val();
        self.rd.rd_addr.next = self.c_m_rd.addr.val();
        self.rd.rd_len.next = self.c_m_rd.len.val();
        self.c_m_rd.ready.next = self.rd.rd_ready.val();
        self.rd.txq_req.next = self.txq.req.val();
        self.rd.txq_addr.next = self.txq.addr.val();
        self.rd.ftq_req_hdr.next = self.ftq_req_hdr.val();
        self.rd.ftq_req_data.next = self.ftq_req_data.val();
        self.rd.ftq_addr.next = self.ftq_req_addr.val();
        self.rd.ftq_len.next = self.ftq_req_len.val();
        self.ftq_grant.next = self.rd.ftq_grant.val();
        self.m_dmar_valid.next = self.rd.m_valid.val();
        self.rd.m_ready.next = self.m_dmar_ready.val();
        self.m_dmar_addr.next = self.rd.m_addr.val();
        self.m_dmar_len.next = self.rd.m_len.val();
        self.m_dmar_tag.next = self.rd.m_tag.val();
        self.rd.c_tdata.next = self.s_dmac_tdata.val();
        self.rd.c_tkeep.next = self.s_dmac_tkeep.val();
        self.rd.c_tvalid.next = self.s_dmac_tvalid.val();
        self.rd.c_tlast.next = self.s_dmac_tlast.val();
        self.rd.c_tag.next = self.s_dmac_tag.val();
        self.s_dmac_tready.next = self.rd.c_tready.val();
        self.c_s_pay.tdata.next = self.rd.pay_tdata.val();
        self.c_s_pay.tkeep.next = self.rd.pay_tkeep.val();
        self.c_s_pay.tvalid.next = self.rd.pay_tvalid.val();
        self.c_s_pay.tlast.next = self.rd.pay_tlast.val();
        self.rd.pay_tready.next = self.c_s_pay.tready.val();
    }
}

/// The event ring's and the firmware receive ring's registers.
impl<const W: usize, const B: usize> Part<5> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.evq_ctrl.next = self.rw.val().get_bit(self.k_evq_ctrl.val().index());
        self.evq_base.next = self.rw.val().get_bits::<64>(self.k_evq_base.val().index());
        self.evq_size_log2.next = self.rw.val().get_bits::<5>(self.k_evq_size.val().index());
        self.evq_cons.next = self.rw.val().get_bits::<32>(self.k_evq_cons.val().index());
        self.frq_ctrl.next = self.rw.val().get_bit(self.k_frq_ctrl.val().index());
        self.frq_base.next = self.rw.val().get_bits::<64>(self.k_frq_base.val().index());
        self.frq_size_log2.next = self.rw.val().get_bits::<5>(self.k_frq_size.val().index());
        self.frq_cons.next = self.rw.val().get_bits::<32>(self.k_frq_cons.val().index());
    }
}

/// DMA writes: the arbiter's three clients and its port.
impl<const W: usize, const B: usize> Part<6> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.wr.c_addr.next = self.c_m_dma.addr.val();
        self.wr.c_len.next = self.c_m_dma.len.val();
        self.wr.c_first.next = self.c_m_dma.first.val();
        self.wr.c_tdata.next = self.c_m_dma.tdata.val();
        self.wr.c_tkeep.next = self.c_m_dma.tkeep.val();
        self.wr.c_tvalid.next = self.c_m_dma.tvalid.val();
        self.wr.c_tlast.next = self.c_m_dma.tlast.val();
        self.c_m_dma.tready.next = self.wr.c_tready.val();
        self.wr.e_addr.next = self.evw.addr.val();
        self.wr.e_len.next = self.evw.len.val();
        self.wr.e_first.next = self.evw.first.val();
        self.wr.e_tdata.next = self.evw.tdata.val();
        self.wr.e_tkeep.next = self.evw.tkeep.val();
        self.wr.e_tvalid.next = self.evw.tvalid.val();
        self.wr.e_tlast.next = self.evw.tlast.val();
        self.evw.tready.next = self.wr.e_tready.val();
        self.wr.f_addr.next = self.frw.addr.val();
        self.wr.f_len.next = self.frw.len.val();
        self.wr.f_first.next = self.frw.first.val();
        self.wr.f_tdata.next = self.frw.tdata.val();
        self.wr.f_tkeep.next = self.frw.tkeep.val();
        self.wr.f_tvalid.next = self.frw.tvalid.val();
        self.wr.f_tlast.next = self.frw.tlast.val();
        self.frw.tready.next = self.wr.f_tready.val();
        self.m_dmaw_addr.next = self.wr.m_addr.val();
        self.m_dmaw_len.next = self.wr.m_len.val();
        self.m_dmaw_first.next = self.wr.m_first.val();
        self.m_dmaw_tdata.next = self.wr.m_tdata.val();
        self.m_dmaw_tkeep.next = self.wr.m_tkeep.val();
        self.m_dmaw_tvalid.next = self.wr.m_tvalid.val();
        self.m_dmaw_tlast.next = self.wr.m_tlast.val();
        self.wr.m_tready.next = self.m_dmaw_tready.val();
    }
}

/// Interrupts: what each vector counts and its moderation registers
/// (the moderators are outside).
impl<const W: usize, const B: usize> Part<7> for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.irq_inc0.next = bit_cast::<2, 1>(self.evq_inc.val().into());
        self.irq_inc1.next = bit_cast::<2, 1>(self.frq_inc.val().into());
        self.irq_inc2.next = self.txq.inc.val();
        self.irq_en0.next = self.rw.val().get_bit(self.k_irq_ctrl0.val().index());
        self.irq_en1.next = self.rw.val().get_bit(self.k_irq_ctrl1.val().index());
        self.irq_en2.next = self.rw.val().get_bit(self.k_irq_ctrl2.val().index());
        self.irq_coalesce0.next = self
            .rw
            .val()
            .get_bits::<16>(self.k_irq_coalesce0.val().index());
        self.irq_coalesce1.next = self
            .rw
            .val()
            .get_bits::<16>(self.k_irq_coalesce1.val().index());
        self.irq_coalesce2.next = self
            .rw
            .val()
            .get_bits::<16>(self.k_irq_coalesce2.val().index());
        self.irq_holdoff0.next = self
            .rw
            .val()
            .get_bits::<24>(self.k_irq_holdoff0.val().index());
        self.irq_holdoff1.next = self
            .rw
            .val()
            .get_bits::<24>(self.k_irq_holdoff1.val().index());
        self.irq_holdoff2.next = self
            .rw
            .val()
            .get_bits::<24>(self.k_irq_holdoff2.val().index());
    }
}
