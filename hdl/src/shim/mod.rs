//! Vendor shims: [`crate::NicDevice`]'s BAR port and generic DMA ports
//! (`docs/hardware.md` §18, *What a vendor shim must provide*) on AXI, the
//! interfaces of an AXI-based PCIe bridge (Xilinx XDMA/QDMA in AXI Bridge
//! mode: its `M_AXI_LITE`/`M_AXI_B` reaches BAR0, its `S_AXI_B` slave
//! reaches host memory).
//!
//! * [`AxilBar`]: an AXI4-Lite slave onto `bar_*`;
//! * [`DmaRead`]: `m_dmar_*`/`s_dmac_*` onto AXI4 read bursts, realigned;
//! * [`DmaWrite`]: `m_dmaw_*` onto AXI4 write bursts with byte strobes;
//! * [`BurstSplit`]: the 4 KiB / 64-beat burst splitter both DMA shims use.
//!
//! Each port keeps the device's name, so a shim connects to the device
//! name to name; the AXI side is named `s_axil_*` or `m_axi_*`.

mod axil_bar;
mod burst;
mod dma_read;
mod dma_write;

pub use axil_bar::AxilBar;
pub use burst::BurstSplit;
pub use dma_read::DmaRead;
pub use dma_write::DmaWrite;

#[cfg(test)]
mod tests;
