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

use crate::axis::Axis;
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
    /// MAC RX (`s_axis_*`).
    pub(crate) rx: Axis,
    /// MAC TX (`m_axis_*`).
    pub(crate) tx: Axis,
    pub(crate) dmar_valid: Port,
    pub(crate) dmar_ready: Port,
    pub(crate) dmar_addr: Port,
    pub(crate) dmar_len: Port,
    pub(crate) dmar_tag: Port,
    /// DMA read completions (`s_dmac_*`), each beat with its request's tag.
    pub(crate) dmac: Axis,
    pub(crate) dmac_tag: Port,
    pub(crate) dmaw_addr: Port,
    pub(crate) dmaw_len: Port,
    pub(crate) dmaw_first: Port,
    /// DMA write data (`m_dmaw_*`).
    pub(crate) dmaw: Axis,
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
            rx: Axis::new(sim, "s_axis")?,
            tx: Axis::new(sim, "m_axis")?,
            dmar_valid: p("m_dmar_valid")?,
            dmar_ready: p("m_dmar_ready")?,
            dmar_addr: p("m_dmar_addr")?,
            dmar_len: p("m_dmar_len")?,
            dmar_tag: p("m_dmar_tag")?,
            dmac: Axis::new(sim, "s_dmac")?,
            dmac_tag: p("s_dmac_tag")?,
            dmaw_addr: p("m_dmaw_addr")?,
            dmaw_len: p("m_dmaw_len")?,
            dmaw_first: p("m_dmaw_first")?,
            dmaw: Axis::new(sim, "m_dmaw")?,
            irq_valid: p("m_irq_valid")?,
            irq_ready: p("m_irq_ready")?,
            irq_vector: p("m_irq_vector")?,
        })
    }
}
