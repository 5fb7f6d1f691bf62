//! [`MgmtPort`]: the whole management path of a board in one block, the
//! UART line in, BAR0 and the DMA ports out (`docs/hardware.md` §19).

use rust_hdl::prelude::*;

use super::local_mem::LocalMem;
use super::mgmt::MgmtEngine;
use super::uart::{UartRx, UartTx};
use crate::helpers::native_block;
use crate::host_if::RegFile;

native_block! {
    /// [`UartRx`] → [`MgmtEngine<M>`] → [`UartTx`] on the serial line, the
    /// engine's byte port on a [`LocalMem<N>`] (`8 · 2^N` bytes, so `M` must be
    /// `N + 3`: the engine reaches exactly the memory), the engine's BAR0 port
    /// (`bar_*`) and the memory's DMA ports out, named as
    /// [`crate::NicDevice`]'s so the two connect name to name.
    ///
    /// A frame idle for 16 characters is dropped (the protocol's resynchronisation).
    MgmtPort [N, M]
    /// The path at `clocks_per_bit` clocks per bit on the line.
    fn new(clocks_per_bit: usize);
    check {
        M == N + 3,
        "MgmtPort: the engine's window (2^M) must be the memory (8 · 2^N)"
    }
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset (the memory keeps its bytes).
        rst: Signal<In, Bit>,
        /// The serial line from the host (idle high).
        rxd: Signal<In, Bit>,
        /// The serial line to the host.
        txd: Signal<Out, Bit>,
        /// BAR0 write: valid.
        bar_wr_valid: Signal<Out, Bit>,
        /// BAR0 write: byte offset.
        bar_wr_addr: Signal<Out, Bits<16>>,
        /// BAR0 write: data.
        bar_wr_data: Signal<Out, Bits<32>>,
        /// BAR0 read request: valid.
        bar_rd_valid: Signal<Out, Bit>,
        /// BAR0 read request: byte offset.
        bar_rd_addr: Signal<Out, Bits<16>>,
        /// BAR0 read response: valid.
        bar_rd_resp_valid: Signal<In, Bit>,
        /// BAR0 read response: data.
        bar_rd_resp_data: Signal<In, Bits<32>>,
        /// DMA read request: valid.
        m_dmar_valid: Signal<In, Bit>,
        /// DMA read request: taken.
        m_dmar_ready: Signal<Out, Bit>,
        /// DMA read request: byte address.
        m_dmar_addr: Signal<In, Bits<64>>,
        /// DMA read request: bytes.
        m_dmar_len: Signal<In, Bits<16>>,
        /// DMA read request: tag.
        m_dmar_tag: Signal<In, Bits<4>>,
        /// DMA read completion: data.
        s_dmac_tdata: Signal<Out, Bits<64>>,
        /// DMA read completion: byte enables.
        s_dmac_tkeep: Signal<Out, Bits<8>>,
        /// DMA read completion: beat valid.
        s_dmac_tvalid: Signal<Out, Bit>,
        /// DMA read completion: beat taken.
        s_dmac_tready: Signal<In, Bit>,
        /// DMA read completion: last beat.
        s_dmac_tlast: Signal<Out, Bit>,
        /// DMA read completion: tag.
        s_dmac_tag: Signal<Out, Bits<4>>,
        /// DMA write: byte address (with the first beat).
        m_dmaw_addr: Signal<In, Bits<64>>,
        /// DMA write: first beat of a request.
        m_dmaw_first: Signal<In, Bit>,
        /// DMA write: data.
        m_dmaw_tdata: Signal<In, Bits<64>>,
        /// DMA write: byte enables.
        m_dmaw_tkeep: Signal<In, Bits<8>>,
        /// DMA write: beat valid.
        m_dmaw_tvalid: Signal<In, Bit>,
        /// DMA write: beat taken.
        m_dmaw_tready: Signal<Out, Bit>,
    }
    state {
        rx: UartRx = UartRx::new(clocks_per_bit),
        tx: UartTx = UartTx::new(clocks_per_bit),
        eng: MgmtEngine<M> = MgmtEngine::new(16 * 10 * clocks_per_bit),
        mem: LocalMem<N>,
    }
    consts {
    }
}

impl<const N: usize, const M: usize> MgmtPort<N, M> {
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

native_block! {
    /// The management path as a host sees it, for simulations: a host's UART
    /// (`host_*` bytes in, `back_*` bytes out) on the line of a [`MgmtPort`]
    /// whose BAR0 is the real register file ([`RegFile`], no device behind
    /// it), its DMA read port outside (`dmar_*`, completions always taken,
    /// tag 5), its DMA write port idle. The host driver's serial-line tests
    /// run on it.
    HostLink [N, M]
    /// Both UARTs at `clocks_per_bit` clocks per bit.
    fn new(clocks_per_bit: usize);
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// A byte for the host's UART to send.
        host_data: Signal<In, Bits<8>>,
        /// The byte is offered.
        host_valid: Signal<In, Bit>,
        /// The host's UART takes it.
        host_ready: Signal<Out, Bit>,
        /// A byte the host's UART received.
        back_data: Signal<Out, Bits<8>>,
        /// High for one clock per byte received.
        back_valid: Signal<Out, Bit>,
        /// DMA read request: valid.
        dmar_valid: Signal<In, Bit>,
        /// DMA read request: taken.
        dmar_ready: Signal<Out, Bit>,
        /// DMA read request: byte address.
        dmar_addr: Signal<In, Bits<64>>,
        /// DMA read request: bytes.
        dmar_len: Signal<In, Bits<16>>,
        /// DMA read completion: data.
        dmac_tdata: Signal<Out, Bits<64>>,
        /// DMA read completion: byte enables.
        dmac_tkeep: Signal<Out, Bits<8>>,
        /// DMA read completion: beat valid.
        dmac_tvalid: Signal<Out, Bit>,
        /// DMA read completion: tag.
        dmac_tag: Signal<Out, Bits<4>>,
    }
    state {
        host_tx: UartTx = UartTx::new(clocks_per_bit),
        host_rx: UartRx = UartRx::new(clocks_per_bit),
        port: MgmtPort<N, M> = MgmtPort::new(clocks_per_bit),
        regs: RegFile<64>,
    }
    consts {
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
