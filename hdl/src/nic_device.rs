//! The NIC as a PCIe device sees it: [`HostIf`], its BAR0 register file
//! [`RegFile`], the firmware transmit queue's engine [`FwTxQueue`], the
//! firmware receive ring's writer [`FwRxRing`] and the event path
//! [`EvRing`] around [`NicCore`] (in the drawing the last three are inside
//! `HostIf`: its `s_fwtx_*`, `m_fw_*` and `m_ev_*`/`m_ackrx_*`/`m_fate_*`).
//!
//! ```text
//!   BAR0 bar_* ─► RegFile ─► ┌────────┐ cfg_*, cnt_*, op_*/res_*/rd_*  ┌─────────┐
//!   DMA reads m_dmar/s_dmac ◄┤ HostIf ├─ s_desc_*, m_rd_*/s_pay_* ───►│ NicCore │─► MAC TX m_axis_*
//!   DMA writes m_dmaw_* ◄────┤        │◄ m_dma_*, m_ev_*, m_fw_* ──────┤         │
//!   interrupts m_irq_* ◄─────┤        │◄ m_ackrx_*, m_fate_*, s_fwtx_* │         │
//!   MAC RX s_axis_* ────────►└────────┘── s_axis_* (held when full) ──►└─────────┘
//! ```
//!
//! `NicCore`'s ports and behaviour are unchanged: the device is a new top
//! that instantiates it. Inside, the blocks meet on the buses of
//! [`crate::bus`]: each of `HostIf`'s core-side ports (`c_cfg`, `c_s_desc`,
//! `c_op`, `c_rd`, ...) is the mirror of a `NicCore` bus and is joined to
//! it, as are `EvRing`'s, `FwRxRing`'s and `FwTxQueue`'s core and DMA
//! write ports; only `NicDevice`'s own ports stay flat (external Verilog
//! instantiates it: `bitstreams/alveo/alveo_top.v`, the board tops). The MAC ports and `now` (time in ns, for the
//! ACKs' timestamps) are the board's; everything the firmware used to
//! drive on `NicCore`'s ports goes through BAR0 and the queues in host
//! memory ([`crate::host_if`], `docs/hardware.md` §18, `docs/regmap.md`).

use rust_hdl::prelude::*;

use crate::bus::{
    AckDoneOut, AckRxCntOut, AxisOut, CfgOut, CounterRead, DatagramOut, DescOut, DmaWriteOut,
    EthEvOut, FateOut, FwRxOut, ReadReqOut, TxOpOut, TxRead, TxResOut, VerdictOut,
};
use crate::host_if::{EvRing, FwRxRing, FwTxQueue, HostIf, IrqModerator, RegFile};
use crate::nic_core::{NicCore, TX_SLOT_BITS};

/// The device top at `W`-bit beats (`B = W / 8` lanes; 64 or 512).
#[derive(LogicBlock, Default)]
pub struct NicDevice<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (the host interface and the core).
    pub rst: Signal<In, Bit>,
    /// Time in ns (timestamps the ACKs).
    pub now: Signal<In, Bits<64>>,
    /// BAR0 write: valid.
    pub bar_wr_valid: Signal<In, Bit>,
    /// BAR0 write: byte address.
    pub bar_wr_addr: Signal<In, Bits<16>>,
    /// BAR0 write: data.
    pub bar_wr_data: Signal<In, Bits<32>>,
    /// BAR0 read request: valid.
    pub bar_rd_valid: Signal<In, Bit>,
    /// BAR0 read request: byte address.
    pub bar_rd_addr: Signal<In, Bits<16>>,
    /// BAR0 read response: valid.
    pub bar_rd_resp_valid: Signal<Out, Bit>,
    /// BAR0 read response: data.
    pub bar_rd_resp_data: Signal<Out, Bits<32>>,
    /// MAC RX: frame beats (FCS stripped).
    pub s_axis_tdata: Signal<In, Bits<W>>,
    /// MAC RX: byte enables (packed).
    pub s_axis_tkeep: Signal<In, Bits<B>>,
    /// MAC RX: beat valid.
    pub s_axis_tvalid: Signal<In, Bit>,
    /// MAC RX: beat taken.
    pub s_axis_tready: Signal<Out, Bit>,
    /// MAC RX: last beat.
    pub s_axis_tlast: Signal<In, Bit>,
    /// MAC TX: frame beats.
    pub m_axis_tdata: Signal<Out, Bits<W>>,
    /// MAC TX: byte enables (packed).
    pub m_axis_tkeep: Signal<Out, Bits<B>>,
    /// MAC TX: beat valid.
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// MAC TX: the MAC takes the beat.
    pub m_axis_tready: Signal<In, Bit>,
    /// MAC TX: last beat.
    pub m_axis_tlast: Signal<Out, Bit>,
    /// DMA read request: valid.
    pub m_dmar_valid: Signal<Out, Bit>,
    /// DMA read request: taken.
    pub m_dmar_ready: Signal<In, Bit>,
    /// DMA read request: host address.
    pub m_dmar_addr: Signal<Out, Bits<64>>,
    /// DMA read request: bytes.
    pub m_dmar_len: Signal<Out, Bits<16>>,
    /// DMA read request: tag.
    pub m_dmar_tag: Signal<Out, Bits<4>>,
    /// DMA read completion: data.
    pub s_dmac_tdata: Signal<In, Bits<W>>,
    /// DMA read completion: byte enables.
    pub s_dmac_tkeep: Signal<In, Bits<B>>,
    /// DMA read completion: beat valid.
    pub s_dmac_tvalid: Signal<In, Bit>,
    /// DMA read completion: beat taken.
    pub s_dmac_tready: Signal<Out, Bit>,
    /// DMA read completion: last beat of the request.
    pub s_dmac_tlast: Signal<In, Bit>,
    /// DMA read completion: the request's tag.
    pub s_dmac_tag: Signal<In, Bits<4>>,
    /// DMA write: host address.
    pub m_dmaw_addr: Signal<Out, Bits<64>>,
    /// DMA write: bytes.
    pub m_dmaw_len: Signal<Out, Bits<16>>,
    /// DMA write: first beat of a request.
    pub m_dmaw_first: Signal<Out, Bit>,
    /// DMA write: data.
    pub m_dmaw_tdata: Signal<Out, Bits<W>>,
    /// DMA write: byte enables.
    pub m_dmaw_tkeep: Signal<Out, Bits<B>>,
    /// DMA write: beat valid.
    pub m_dmaw_tvalid: Signal<Out, Bit>,
    /// DMA write: beat taken.
    pub m_dmaw_tready: Signal<In, Bit>,
    /// DMA write: last beat.
    pub m_dmaw_tlast: Signal<Out, Bit>,
    /// Interrupt request: valid.
    pub m_irq_valid: Signal<Out, Bit>,
    /// Interrupt request: taken.
    pub m_irq_ready: Signal<In, Bit>,
    /// Interrupt request: vector.
    pub m_irq_vector: Signal<Out, Bits<2>>,

    regs: RegFile<W>,
    hif: HostIf<W, B>,
    ftq: FwTxQueue<W, B>,
    frq: FwRxRing<W, B>,
    evq: EvRing<W, B>,
    core: NicCore<W, B>,
    irq0: IrqModerator,
    irq1: IrqModerator,
    irq2: IrqModerator,
}

impl<const W: usize, const B: usize> Logic for NicDevice<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.regs.clock.next = self.clock.val();
        self.ftq.clock.next = self.clock.val();
        self.frq.clock.next = self.clock.val();
        self.evq.clock.next = self.clock.val();
        self.hif.clock.next = self.clock.val();
        self.core.clock.next = self.clock.val();
        self.regs.rst.next = self.rst.val();
        self.ftq.rst.next = self.rst.val();
        self.frq.rst.next = self.rst.val();
        self.evq.rst.next = self.rst.val();
        self.hif.rst.next = self.rst.val();
        self.core.rst.next = self.rst.val();
        self.core.now.next = self.now.val();

        // BAR0 ↔ register file ↔ host interface.
        self.regs.bar_wr_valid.next = self.bar_wr_valid.val();
        self.regs.bar_wr_addr.next = self.bar_wr_addr.val();
        self.regs.bar_wr_data.next = self.bar_wr_data.val();
        self.regs.bar_rd_valid.next = self.bar_rd_valid.val();
        self.regs.bar_rd_addr.next = self.bar_rd_addr.val();
        self.bar_rd_resp_valid.next = self.regs.bar_rd_resp_valid.val();
        self.bar_rd_resp_data.next = self.regs.bar_rd_resp_data.val();
        self.hif.wo_data.next = self.regs.wo_data.val();
        self.hif.rw.next = self.regs.rw.val();
        self.hif.wo.next = self.regs.wo.val();
        self.hif.cnt_bar_bad.next = self.regs.bad.val();
        self.hif.ro_rd_valid.next = self.regs.ro_rd_valid.val();
        self.hif.ro_rd_sel.next = self.regs.ro_rd_sel.val();
        self.regs.ro_rd_data.next = self.hif.ro_rd_data.val();

        // Outside ↔ host interface.
        self.hif.s_axis_tdata.next = self.s_axis_tdata.val();
        self.hif.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.hif.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.hif.s_axis_tready.val();
        self.hif.s_axis_tlast.next = self.s_axis_tlast.val();
        self.m_dmar_valid.next = self.hif.m_dmar_valid.val();
        self.hif.m_dmar_ready.next = self.m_dmar_ready.val();
        self.m_dmar_addr.next = self.hif.m_dmar_addr.val();
        self.m_dmar_len.next = self.hif.m_dmar_len.val();
        self.m_dmar_tag.next = self.hif.m_dmar_tag.val();
        self.hif.s_dmac_tdata.next = self.s_dmac_tdata.val();
        self.hif.s_dmac_tkeep.next = self.s_dmac_tkeep.val();
        self.hif.s_dmac_tvalid.next = self.s_dmac_tvalid.val();
        self.s_dmac_tready.next = self.hif.s_dmac_tready.val();
        self.hif.s_dmac_tlast.next = self.s_dmac_tlast.val();
        self.hif.s_dmac_tag.next = self.s_dmac_tag.val();
        self.m_dmaw_addr.next = self.hif.m_dmaw_addr.val();
        self.m_dmaw_len.next = self.hif.m_dmaw_len.val();
        self.m_dmaw_first.next = self.hif.m_dmaw_first.val();
        self.m_dmaw_tdata.next = self.hif.m_dmaw_tdata.val();
        self.m_dmaw_tkeep.next = self.hif.m_dmaw_tkeep.val();
        self.m_dmaw_tvalid.next = self.hif.m_dmaw_tvalid.val();
        self.hif.m_dmaw_tready.next = self.m_dmaw_tready.val();
        self.m_dmaw_tlast.next = self.hif.m_dmaw_tlast.val();

        // Interrupts: one moderator per vector, requests taken in vector
        // order (vector 0 first).
        self.irq0.clock.next = self.clock.val();
        self.irq1.clock.next = self.clock.val();
        self.irq2.clock.next = self.clock.val();
        self.irq0.rst.next = self.rst.val();
        self.irq1.rst.next = self.rst.val();
        self.irq2.rst.next = self.rst.val();
        self.irq0.inc.next = self.hif.irq_inc0.val();
        self.irq1.inc.next = self.hif.irq_inc1.val();
        self.irq2.inc.next = self.hif.irq_inc2.val();
        self.irq0.enable.next = self.hif.irq_en0.val();
        self.irq1.enable.next = self.hif.irq_en1.val();
        self.irq2.enable.next = self.hif.irq_en2.val();
        self.irq0.coalesce.next = self.hif.irq_coalesce0.val();
        self.irq1.coalesce.next = self.hif.irq_coalesce1.val();
        self.irq2.coalesce.next = self.hif.irq_coalesce2.val();
        self.irq0.holdoff.next = self.hif.irq_holdoff0.val();
        self.irq1.holdoff.next = self.hif.irq_holdoff1.val();
        self.irq2.holdoff.next = self.hif.irq_holdoff2.val();
        self.hif.irq_count0.next = self.irq0.count.val();
        self.hif.irq_count1.next = self.irq1.count.val();
        self.hif.irq_count2.next = self.irq2.count.val();
        self.m_irq_valid.next = self.irq0.fire.val() | self.irq1.fire.val() | self.irq2.fire.val();
        if self.irq0.fire.val() {
            self.m_irq_vector.next = 0.into();
        } else if self.irq1.fire.val() {
            self.m_irq_vector.next = 1.into();
        } else {
            self.m_irq_vector.next = 2.into();
        }
        self.irq0.take.next = self.irq0.fire.val() & self.m_irq_ready.val();
        self.irq1.take.next = !self.irq0.fire.val() & self.irq1.fire.val() & self.m_irq_ready.val();
        self.irq2.take.next = !self.irq0.fire.val()
            & !self.irq1.fire.val()
            & self.irq2.fire.val()
            & self.m_irq_ready.val();

        // MAC TX: straight from the core.
        self.m_axis_tdata.next = self.core.m_axis.tdata.val();
        self.m_axis_tkeep.next = self.core.m_axis.tkeep.val();
        self.m_axis_tvalid.next = self.core.m_axis.tvalid.val();
        self.core.m_axis.tready.next = self.m_axis_tready.val();
        self.m_axis_tlast.next = self.core.m_axis.tlast.val();

        // Host interface ↔ core: every firmware port of the core.
        CfgOut::<10>::join(&mut self.hif.c_cfg, &mut self.core.cfg);
        AxisOut::<W, B>::join(&mut self.hif.c_s_axis, &mut self.core.s_axis);
        self.core.eth_cfg_port_we.next = self.hif.c_eth_cfg_port_we.val();
        self.core.eth_cfg_port.next = self.hif.c_eth_cfg_port.val();
        CounterRead::<4>::join(&mut self.hif.c_eth_cnt, &mut self.core.eth_cnt);
        EthEvOut::join(&mut self.core.m_eth_ev, &mut self.hif.c_m_eth_ev);
        DmaWriteOut::<W, B>::join(&mut self.core.m_dma, &mut self.hif.c_m_dma);
        CounterRead::<5>::join(&mut self.hif.c_cnt, &mut self.core.cnt);
        DescOut::join(&mut self.hif.c_s_desc, &mut self.core.s_desc);
        ReadReqOut::join(&mut self.core.m_rd, &mut self.hif.c_m_rd);
        AxisOut::<W, B>::join(&mut self.hif.c_s_pay, &mut self.core.s_pay);
        self.hif.c_m_err.next = self.core.m_err.val();
        self.hif.c_ack_cnt_frames.next = self.core.ack_cnt_frames.val();
        self.hif.c_ack_cnt_ece.next = self.core.ack_cnt_ece.val();
        self.hif.c_ack_cnt_v6.next = self.core.ack_cnt_v6.val();
        TxOpOut::<TX_SLOT_BITS>::join(&mut self.hif.c_op, &mut self.core.op);
        TxResOut::join(&mut self.core.res, &mut self.hif.c_res);
        TxRead::<TX_SLOT_BITS>::join(&mut self.hif.c_rd, &mut self.core.rd);
        AckRxCntOut::join(&mut self.core.ackrx_cnt, &mut self.hif.c_ackrx_cnt);
        // Event path: the core's events and results into the event FIFOs,
        // the ring's registers and DMA writes through the host interface.
        self.evq.ctrl.next = self.hif.evq_ctrl.val();
        self.evq.base.next = self.hif.evq_base.val();
        self.evq.size_log2.next = self.hif.evq_size_log2.val();
        self.evq.cons.next = self.hif.evq_cons.val();
        VerdictOut::join(&mut self.core.m_ev, &mut self.evq.ev);
        FateOut::join(&mut self.core.m_fate, &mut self.evq.fate);
        self.evq.fate_hw.next = self.core.m_fate_hw.val();
        AckDoneOut::<TX_SLOT_BITS>::join(&mut self.core.m_ackrx, &mut self.evq.ackrx);
        self.evq.qres_valid.next = self.hif.qres_valid.val();
        self.evq.qop_code.next = self.hif.qop_code.val();
        self.evq.qop_slot.next = self.hif.qop_slot.val();
        self.evq.res_ok.next = self.core.res.ok.val();
        self.evq.res_psn.next = self.core.res.psn.val();
        self.evq.res_pkts.next = self.core.res.pkts.val();
        self.evq.res_bytes.next = self.core.res.bytes.val();
        self.evq.cap_view.next = self.core.cap_view.val();
        self.evq.pl_tvalid.next = self.core.m_dma.tvalid.val();
        self.evq.pl_tready.next = self.hif.c_m_dma.tready.val();
        self.evq.pl_first.next = self.core.m_dma.first.val();
        self.evq.pl_tlast.next = self.core.m_dma.tlast.val();
        self.evq.pl_addr.next = self.core.m_dma.addr.val();
        DmaWriteOut::<W, B>::join(&mut self.evq.w, &mut self.hif.evw);
        self.hif.evq_prod.next = self.evq.prod.val();
        self.hif.evq_inc.next = self.evq.inc.val();
        self.hif.cnt_ev_lost.next = self.evq.lost.val();
        self.hif.ev_hold.next = self.evq.hold.val();
        self.hif.ev_qop_room.next = self.evq.qop_room.val();
        // Firmware receive ring: the core's datagrams through its writer,
        // its registers and DMA writes through the host interface.
        self.frq.ctrl.next = self.hif.frq_ctrl.val();
        self.frq.base.next = self.hif.frq_base.val();
        self.frq.size_log2.next = self.hif.frq_size_log2.val();
        self.frq.cons.next = self.hif.frq_cons.val();
        FwRxOut::<W, B>::join(&mut self.core.m_fw, &mut self.frq.s);
        DmaWriteOut::<W, B>::join(&mut self.frq.w, &mut self.hif.frw);
        self.hif.frq_prod.next = self.frq.prod.val();
        self.hif.frq_inc.next = self.frq.inc.val();
        self.hif.c_fw_cnt_up.next = self.core.fw_cnt_up.val();
        self.hif.c_fw_cnt_trunc.next = self.core.fw_cnt_trunc.val();

        // Firmware TX queue: its registers and DMA read requests through
        // the host interface, its completions from the outside, its
        // datagrams to the core's ACK framer.
        self.ftq.ctrl.next = self.hif.ftq_ctrl.val();
        self.ftq.prod.next = self.hif.ftq_prod.val();
        self.ftq.base.next = self.hif.ftq_base.val();
        self.ftq.size_log2.next = self.hif.ftq_size_log2.val();
        self.hif.ftq_req_hdr.next = self.ftq.req_hdr.val();
        self.hif.ftq_req_data.next = self.ftq.req_data.val();
        self.hif.ftq_req_addr.next = self.ftq.addr.val();
        self.hif.ftq_req_len.next = self.ftq.len.val();
        self.ftq.grant.next = self.hif.ftq_grant.val();
        self.ftq.c_tdata.next = self.s_dmac_tdata.val();
        self.ftq.c_tvalid.next = self.s_dmac_tvalid.val();
        self.ftq.c_tlast.next = self.s_dmac_tlast.val();
        self.ftq.c_tag.next = self.s_dmac_tag.val();
        self.hif.ftq_adv.next = self.ftq.adv.val();
        self.hif.ftq_cons.next = self.ftq.cons.val();
        self.hif.cnt_ftq_bad.next = self.ftq.bad.val();
        DatagramOut::<W, B>::join(&mut self.ftq.m, &mut self.core.s_fwtx);
        self.hif.c_fwtx_cnt_frames.next = self.core.fwtx_cnt_frames.val();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn emits_at_both_widths_with_the_register_decoder() {
        for w in [64, 512] {
            let v = crate::nic_device_verilog(w);
            assert!(v.contains("module top("), "width {w}");
            // The host interface's wiring to the register file.
            assert!(v.contains("k_cfg_addr"), "width {w}");
        }
    }
}
