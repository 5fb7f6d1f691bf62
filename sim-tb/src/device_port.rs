//! The port-level protocol of the device top (`metaroce_hdl::NicDevice`, 64
//! bits) that every host of it shares: the bench ([`crate::nic_device`]) and
//! the device process ([`crate::device_server`]).
//!
//! The rules (`docs/hardware.md` §18): a BAR write is one cycle of
//! `bar_wr_*`; a BAR read request is one cycle of `bar_rd_*` and its value
//! comes on `bar_rd_resp_*` [`BAR_READ_LATENCY`] cycles later; a DMA read
//! request is taken on `m_dmar_valid && m_dmar_ready` and answered on
//! `s_dmac_*` beat by beat (lane 0 first, packed `tkeep`, `tlast` on the
//! last beat, its tag on every beat); a DMA write carries its address and
//! length with its first beat (`m_dmaw_first`) and is applied in order; an
//! interrupt request is taken on `m_irq_valid && m_irq_ready`.

use crate::{Port, Sim, SimError};

/// Bytes per beat of the 64-bit device's streams.
pub(crate) const LANES: usize = 8;

/// Cycles from a BAR read request to its response.
pub(crate) const BAR_READ_LATENCY: u64 = 2;

/// The device top's ports, resolved once.
pub(crate) struct DevicePorts {
    pub(crate) now: Port,
    pub(crate) bar_wr_valid: Port,
    pub(crate) bar_wr_addr: Port,
    pub(crate) bar_wr_data: Port,
    pub(crate) bar_rd_valid: Port,
    pub(crate) bar_rd_addr: Port,
    pub(crate) bar_rd_resp_valid: Port,
    pub(crate) bar_rd_resp_data: Port,
    pub(crate) rx_tdata: Port,
    pub(crate) rx_tkeep: Port,
    pub(crate) rx_tvalid: Port,
    pub(crate) rx_tready: Port,
    pub(crate) rx_tlast: Port,
    pub(crate) tx_tdata: Port,
    pub(crate) tx_tkeep: Port,
    pub(crate) tx_tvalid: Port,
    pub(crate) tx_tready: Port,
    pub(crate) tx_tlast: Port,
    pub(crate) dmar_valid: Port,
    pub(crate) dmar_ready: Port,
    pub(crate) dmar_addr: Port,
    pub(crate) dmar_len: Port,
    pub(crate) dmar_tag: Port,
    pub(crate) dmac_tdata: Port,
    pub(crate) dmac_tkeep: Port,
    pub(crate) dmac_tvalid: Port,
    pub(crate) dmac_tready: Port,
    pub(crate) dmac_tlast: Port,
    pub(crate) dmac_tag: Port,
    pub(crate) dmaw_addr: Port,
    pub(crate) dmaw_len: Port,
    pub(crate) dmaw_first: Port,
    pub(crate) dmaw_tdata: Port,
    pub(crate) dmaw_tkeep: Port,
    pub(crate) dmaw_tvalid: Port,
    pub(crate) dmaw_tready: Port,
    pub(crate) dmaw_tlast: Port,
    pub(crate) irq_valid: Port,
    pub(crate) irq_ready: Port,
    pub(crate) irq_vector: Port,
}

impl DevicePorts {
    /// Resolves every port of `sim` (a `Model::NicDevice64`).
    pub(crate) fn new(sim: &Sim) -> Result<Self, SimError> {
        let p = |n: &str| sim.port(n);
        Ok(Self {
            now: p("now")?,
            bar_wr_valid: p("bar_wr_valid")?,
            bar_wr_addr: p("bar_wr_addr")?,
            bar_wr_data: p("bar_wr_data")?,
            bar_rd_valid: p("bar_rd_valid")?,
            bar_rd_addr: p("bar_rd_addr")?,
            bar_rd_resp_valid: p("bar_rd_resp_valid")?,
            bar_rd_resp_data: p("bar_rd_resp_data")?,
            rx_tdata: p("s_axis_tdata")?,
            rx_tkeep: p("s_axis_tkeep")?,
            rx_tvalid: p("s_axis_tvalid")?,
            rx_tready: p("s_axis_tready")?,
            rx_tlast: p("s_axis_tlast")?,
            tx_tdata: p("m_axis_tdata")?,
            tx_tkeep: p("m_axis_tkeep")?,
            tx_tvalid: p("m_axis_tvalid")?,
            tx_tready: p("m_axis_tready")?,
            tx_tlast: p("m_axis_tlast")?,
            dmar_valid: p("m_dmar_valid")?,
            dmar_ready: p("m_dmar_ready")?,
            dmar_addr: p("m_dmar_addr")?,
            dmar_len: p("m_dmar_len")?,
            dmar_tag: p("m_dmar_tag")?,
            dmac_tdata: p("s_dmac_tdata")?,
            dmac_tkeep: p("s_dmac_tkeep")?,
            dmac_tvalid: p("s_dmac_tvalid")?,
            dmac_tready: p("s_dmac_tready")?,
            dmac_tlast: p("s_dmac_tlast")?,
            dmac_tag: p("s_dmac_tag")?,
            dmaw_addr: p("m_dmaw_addr")?,
            dmaw_len: p("m_dmaw_len")?,
            dmaw_first: p("m_dmaw_first")?,
            dmaw_tdata: p("m_dmaw_tdata")?,
            dmaw_tkeep: p("m_dmaw_tkeep")?,
            dmaw_tvalid: p("m_dmaw_tvalid")?,
            dmaw_tready: p("m_dmaw_tready")?,
            dmaw_tlast: p("m_dmaw_tlast")?,
            irq_valid: p("m_irq_valid")?,
            irq_ready: p("m_irq_ready")?,
            irq_vector: p("m_irq_vector")?,
        })
    }
}
