//! [`MgmtPort`]: the whole management path of a board in one block, the
//! UART line in, BAR0 and the DMA ports out (`docs/hardware.md` §19).

use rust_hdl::prelude::*;

use super::local_mem::LocalMem;
use super::mgmt::MgmtEngine;
use super::uart::{UartRx, UartTx};
use crate::host_if::RegFile;

/// [`UartRx`] → [`MgmtEngine<M>`] → [`UartTx`] on the serial line, the
/// engine's byte port on a [`LocalMem<N>`] (`8 · 2^N` bytes, so `M` must be
/// `N + 3`: the engine reaches exactly the memory), the engine's BAR0 port
/// (`bar_*`) and the memory's DMA ports out, named as
/// [`crate::NicDevice`]'s so the two connect name to name.
///
/// A frame idle for 16 characters is dropped (the protocol's resynchronisation).
#[derive(LogicBlock)]
pub struct MgmtPort<const N: usize, const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (the memory keeps its bytes).
    pub rst: Signal<In, Bit>,
    /// The serial line from the host (idle high).
    pub rxd: Signal<In, Bit>,
    /// The serial line to the host.
    pub txd: Signal<Out, Bit>,
    /// BAR0 write: valid.
    pub bar_wr_valid: Signal<Out, Bit>,
    /// BAR0 write: byte offset.
    pub bar_wr_addr: Signal<Out, Bits<16>>,
    /// BAR0 write: data.
    pub bar_wr_data: Signal<Out, Bits<32>>,
    /// BAR0 read request: valid.
    pub bar_rd_valid: Signal<Out, Bit>,
    /// BAR0 read request: byte offset.
    pub bar_rd_addr: Signal<Out, Bits<16>>,
    /// BAR0 read response: valid.
    pub bar_rd_resp_valid: Signal<In, Bit>,
    /// BAR0 read response: data.
    pub bar_rd_resp_data: Signal<In, Bits<32>>,
    /// DMA read request: valid.
    pub m_dmar_valid: Signal<In, Bit>,
    /// DMA read request: taken.
    pub m_dmar_ready: Signal<Out, Bit>,
    /// DMA read request: byte address.
    pub m_dmar_addr: Signal<In, Bits<64>>,
    /// DMA read request: bytes.
    pub m_dmar_len: Signal<In, Bits<16>>,
    /// DMA read request: tag.
    pub m_dmar_tag: Signal<In, Bits<4>>,
    /// DMA read completion: data.
    pub s_dmac_tdata: Signal<Out, Bits<64>>,
    /// DMA read completion: byte enables.
    pub s_dmac_tkeep: Signal<Out, Bits<8>>,
    /// DMA read completion: beat valid.
    pub s_dmac_tvalid: Signal<Out, Bit>,
    /// DMA read completion: beat taken.
    pub s_dmac_tready: Signal<In, Bit>,
    /// DMA read completion: last beat.
    pub s_dmac_tlast: Signal<Out, Bit>,
    /// DMA read completion: tag.
    pub s_dmac_tag: Signal<Out, Bits<4>>,
    /// DMA write: byte address (with the first beat).
    pub m_dmaw_addr: Signal<In, Bits<64>>,
    /// DMA write: first beat of a request.
    pub m_dmaw_first: Signal<In, Bit>,
    /// DMA write: data.
    pub m_dmaw_tdata: Signal<In, Bits<64>>,
    /// DMA write: byte enables.
    pub m_dmaw_tkeep: Signal<In, Bits<8>>,
    /// DMA write: beat valid.
    pub m_dmaw_tvalid: Signal<In, Bit>,
    /// DMA write: beat taken.
    pub m_dmaw_tready: Signal<Out, Bit>,
    rx: UartRx,
    tx: UartTx,
    eng: MgmtEngine<M>,
    mem: LocalMem<N>,
}

impl<const N: usize, const M: usize> MgmtPort<N, M> {
    /// The path at `clocks_per_bit` clocks per bit on the line.
    pub fn new(clocks_per_bit: usize) -> Self {
        assert_eq!(
            M,
            N + 3,
            "MgmtPort: the engine's window (2^M) must be the memory (8 · 2^N)"
        );
        Self {
            clock: Default::default(),
            rst: Default::default(),
            rxd: Default::default(),
            txd: Default::default(),
            bar_wr_valid: Default::default(),
            bar_wr_addr: Default::default(),
            bar_wr_data: Default::default(),
            bar_rd_valid: Default::default(),
            bar_rd_addr: Default::default(),
            bar_rd_resp_valid: Default::default(),
            bar_rd_resp_data: Default::default(),
            m_dmar_valid: Default::default(),
            m_dmar_ready: Default::default(),
            m_dmar_addr: Default::default(),
            m_dmar_len: Default::default(),
            m_dmar_tag: Default::default(),
            s_dmac_tdata: Default::default(),
            s_dmac_tkeep: Default::default(),
            s_dmac_tvalid: Default::default(),
            s_dmac_tready: Default::default(),
            s_dmac_tlast: Default::default(),
            s_dmac_tag: Default::default(),
            m_dmaw_addr: Default::default(),
            m_dmaw_first: Default::default(),
            m_dmaw_tdata: Default::default(),
            m_dmaw_tkeep: Default::default(),
            m_dmaw_tvalid: Default::default(),
            m_dmaw_tready: Default::default(),
            rx: UartRx::new(clocks_per_bit),
            tx: UartTx::new(clocks_per_bit),
            eng: MgmtEngine::new(16 * 10 * clocks_per_bit),
            mem: Default::default(),
        }
    }

    /// The memory's size in bytes.
    pub const BYTES: usize = LocalMem::<N>::BYTES;
}

impl<const N: usize, const M: usize> Logic for MgmtPort<N, M> {
    #[hdl_gen]
    fn update(&mut self) {
        self.rx.clock.next = self.clock.val();
        self.tx.clock.next = self.clock.val();
        self.eng.clock.next = self.clock.val();
        self.mem.clock.next = self.clock.val();
        self.rx.rst.next = self.rst.val();
        self.tx.rst.next = self.rst.val();
        self.eng.rst.next = self.rst.val();
        self.mem.rst.next = self.rst.val();
        // The line ↔ the UART ↔ the engine.
        self.rx.rxd.next = self.rxd.val();
        self.txd.next = self.tx.txd.val();
        self.eng.rx_data.next = self.rx.data.val();
        self.eng.rx_valid.next = self.rx.valid.val();
        self.tx.data.next = self.eng.tx_data.val();
        self.tx.valid.next = self.eng.tx_valid.val();
        self.eng.tx_ready.next = self.tx.ready.val();
        // The engine ↔ BAR0.
        self.bar_wr_valid.next = self.eng.bar_wr_valid.val();
        self.bar_wr_addr.next = self.eng.bar_wr_addr.val();
        self.bar_wr_data.next = self.eng.bar_wr_data.val();
        self.bar_rd_valid.next = self.eng.bar_rd_valid.val();
        self.bar_rd_addr.next = self.eng.bar_rd_addr.val();
        self.eng.bar_rd_resp_valid.next = self.bar_rd_resp_valid.val();
        self.eng.bar_rd_resp_data.next = self.bar_rd_resp_data.val();
        // The engine ↔ the memory's byte port.
        self.mem.mem_valid.next = self.eng.mem_valid.val();
        self.mem.mem_write.next = self.eng.mem_write.val();
        self.mem.mem_addr.next = self.eng.mem_addr.val();
        self.mem.mem_wdata.next = self.eng.mem_wdata.val();
        self.eng.mem_rdata.next = self.mem.mem_rdata.val();
        // The memory's DMA ports, outside.
        self.mem.m_dmar_valid.next = self.m_dmar_valid.val();
        self.m_dmar_ready.next = self.mem.m_dmar_ready.val();
        self.mem.m_dmar_addr.next = self.m_dmar_addr.val();
        self.mem.m_dmar_len.next = self.m_dmar_len.val();
        self.mem.m_dmar_tag.next = self.m_dmar_tag.val();
        self.s_dmac_tdata.next = self.mem.s_dmac_tdata.val();
        self.s_dmac_tkeep.next = self.mem.s_dmac_tkeep.val();
        self.s_dmac_tvalid.next = self.mem.s_dmac_tvalid.val();
        self.mem.s_dmac_tready.next = self.s_dmac_tready.val();
        self.s_dmac_tlast.next = self.mem.s_dmac_tlast.val();
        self.s_dmac_tag.next = self.mem.s_dmac_tag.val();
        self.mem.m_dmaw_addr.next = self.m_dmaw_addr.val();
        self.mem.m_dmaw_first.next = self.m_dmaw_first.val();
        self.mem.m_dmaw_tdata.next = self.m_dmaw_tdata.val();
        self.mem.m_dmaw_tkeep.next = self.m_dmaw_tkeep.val();
        self.mem.m_dmaw_tvalid.next = self.m_dmaw_tvalid.val();
        self.m_dmaw_tready.next = self.mem.m_dmaw_tready.val();
    }
}

/// The management path as a host sees it, for simulations: a host's UART
/// (`host_*` bytes in, `back_*` bytes out) on the line of a [`MgmtPort`]
/// whose BAR0 is the real register file ([`RegFile`], no device behind
/// it), its DMA read port outside (`dmar_*`, completions always taken,
/// tag 5), its DMA write port idle. The host driver's serial-line tests
/// run on it.
#[derive(LogicBlock)]
pub struct HostLink<const N: usize, const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// A byte for the host's UART to send.
    pub host_data: Signal<In, Bits<8>>,
    /// The byte is offered.
    pub host_valid: Signal<In, Bit>,
    /// The host's UART takes it.
    pub host_ready: Signal<Out, Bit>,
    /// A byte the host's UART received.
    pub back_data: Signal<Out, Bits<8>>,
    /// High for one clock per byte received.
    pub back_valid: Signal<Out, Bit>,
    /// DMA read request: valid.
    pub dmar_valid: Signal<In, Bit>,
    /// DMA read request: taken.
    pub dmar_ready: Signal<Out, Bit>,
    /// DMA read request: byte address.
    pub dmar_addr: Signal<In, Bits<64>>,
    /// DMA read request: bytes.
    pub dmar_len: Signal<In, Bits<16>>,
    /// DMA read completion: data.
    pub dmac_tdata: Signal<Out, Bits<64>>,
    /// DMA read completion: byte enables.
    pub dmac_tkeep: Signal<Out, Bits<8>>,
    /// DMA read completion: beat valid.
    pub dmac_tvalid: Signal<Out, Bit>,
    /// DMA read completion: tag.
    pub dmac_tag: Signal<Out, Bits<4>>,
    host_tx: UartTx,
    host_rx: UartRx,
    port: MgmtPort<N, M>,
    regs: RegFile<64>,
}

impl<const N: usize, const M: usize> HostLink<N, M> {
    /// Both UARTs at `clocks_per_bit` clocks per bit.
    pub fn new(clocks_per_bit: usize) -> Self {
        Self {
            clock: Default::default(),
            host_data: Default::default(),
            host_valid: Default::default(),
            host_ready: Default::default(),
            back_data: Default::default(),
            back_valid: Default::default(),
            dmar_valid: Default::default(),
            dmar_ready: Default::default(),
            dmar_addr: Default::default(),
            dmar_len: Default::default(),
            dmac_tdata: Default::default(),
            dmac_tkeep: Default::default(),
            dmac_tvalid: Default::default(),
            dmac_tag: Default::default(),
            host_tx: UartTx::new(clocks_per_bit),
            host_rx: UartRx::new(clocks_per_bit),
            port: MgmtPort::new(clocks_per_bit),
            regs: Default::default(),
        }
    }
}

impl<const N: usize, const M: usize> Logic for HostLink<N, M> {
    #[hdl_gen]
    fn update(&mut self) {
        self.host_tx.clock.next = self.clock.val();
        self.host_rx.clock.next = self.clock.val();
        self.port.clock.next = self.clock.val();
        self.regs.clock.next = self.clock.val();
        self.host_tx.rst.next = false;
        self.host_rx.rst.next = false;
        self.port.rst.next = false;
        self.regs.rst.next = false;
        self.host_tx.data.next = self.host_data.val();
        self.host_tx.valid.next = self.host_valid.val();
        self.host_ready.next = self.host_tx.ready.val();
        self.port.rxd.next = self.host_tx.txd.val();
        self.host_rx.rxd.next = self.port.txd.val();
        self.back_data.next = self.host_rx.data.val();
        self.back_valid.next = self.host_rx.valid.val();
        self.regs.bar_wr_valid.next = self.port.bar_wr_valid.val();
        self.regs.bar_wr_addr.next = self.port.bar_wr_addr.val();
        self.regs.bar_wr_data.next = self.port.bar_wr_data.val();
        self.regs.bar_rd_valid.next = self.port.bar_rd_valid.val();
        self.regs.bar_rd_addr.next = self.port.bar_rd_addr.val();
        self.port.bar_rd_resp_valid.next = self.regs.bar_rd_resp_valid.val();
        self.port.bar_rd_resp_data.next = self.regs.bar_rd_resp_data.val();
        self.regs.ro_rd_data.next = 0.into();
        // The DMA read port is the test's; the write port idles.
        self.port.m_dmar_valid.next = self.dmar_valid.val();
        self.dmar_ready.next = self.port.m_dmar_ready.val();
        self.port.m_dmar_addr.next = self.dmar_addr.val();
        self.port.m_dmar_len.next = self.dmar_len.val();
        self.port.m_dmar_tag.next = 5.into();
        self.dmac_tdata.next = self.port.s_dmac_tdata.val();
        self.dmac_tkeep.next = self.port.s_dmac_tkeep.val();
        self.dmac_tvalid.next = self.port.s_dmac_tvalid.val();
        self.dmac_tag.next = self.port.s_dmac_tag.val();
        self.port.s_dmac_tready.next = true;
        self.port.m_dmaw_addr.next = 0.into();
        self.port.m_dmaw_first.next = false;
        self.port.m_dmaw_tdata.next = 0.into();
        self.port.m_dmaw_tkeep.next = 0.into();
        self.port.m_dmaw_tvalid.next = false;
    }
}

#[cfg(test)]
mod tests;
