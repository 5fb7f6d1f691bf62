//! [`MgmtEngine`]: the management protocol's frames (`docs/hardware.md`
//! §19, *The management path over a UART*) into BAR0 register accesses and
//! board-memory accesses, and their responses.

use rust_hdl::prelude::*;

mod access;
mod header;
mod links;
mod recv;
mod reply;

use access::MgmtAccess;
use recv::MgmtRecv;
use reply::MgmtReply;

use crate::helpers::native_block;

/// The protocol's constants, shared with the host driver's side.
pub mod proto {
    /// First byte of a request.
    pub const SYNC_REQ: u8 = 0xA5;
    /// First byte of a response.
    pub const SYNC_RESP: u8 = 0x5A;
    /// Op: read the 32-bit register at a BAR0 byte offset.
    pub const REG_READ: u8 = 1;
    /// Op: write the 32-bit register at a BAR0 byte offset.
    pub const REG_WRITE: u8 = 2;
    /// Op: read bytes of the board's memory.
    pub const MEM_READ: u8 = 3;
    /// Op: write bytes of the board's memory.
    pub const MEM_WRITE: u8 = 4;
    /// Status: done.
    pub const OK: u8 = 0;
    /// Status: the request's CRC is wrong; nothing was done.
    pub const BAD_CRC: u8 = 1;
    /// Status: unknown op; the rest of the frame was discarded.
    pub const BAD_OP: u8 = 2;
    /// Status: a length or address out of range; the rest of the frame was discarded.
    pub const BAD_ARG: u8 = 3;
    /// Most bytes in one MEM_READ or MEM_WRITE.
    pub const MAX_BURST: usize = 256;
    /// Bytes of a request's header (sync, op, address, length).
    pub const HEADER: usize = 8;
    /// REG_READ offset of the engine's count of bytes received outside a frame.
    pub const CNT_JUNK: u32 = 0x1_0000;
    /// REG_READ offset of the engine's count of bad frames (CRC, op, argument).
    pub const CNT_BAD: u32 = 0x1_0004;
    /// REG_READ offset of the engine's count of frames cut by the idle timeout.
    pub const CNT_TIMEOUT: u32 = 0x1_0008;
}

native_block! {
    /// The management engine: takes request bytes (from [`super::uart::UartRx`]),
    /// performs the request on BAR0's `bar_*` port (the shape of
    /// [`crate::NicDevice`]'s: a read answered on `bar_rd_resp_*` some clocks
    /// later) or on a memory byte port ([`super::local_mem::LocalMem`]'s
    /// `mem_*`: a read's byte in the next clock), and sends the response's
    /// bytes (to [`super::uart::UartTx`]). One request at a time.
    ///
    /// `2^M` bytes of board memory are reachable; a frame with no byte for
    /// `idle_clocks` clocks is dropped and counted. A MEM_WRITE's bytes wait in
    /// a 256-byte staging memory until the frame's CRC checked.
    ///
    /// Three parts, a request handed from one to the next (the buses of
    /// `mgmt/links.rs`): `MgmtRecv` takes the request's bytes (its header
    /// judged by a `MgmtHeader`), `MgmtAccess` does it on BAR0 or the memory,
    /// `MgmtReply` sends the response.
    MgmtEngine [M]
    /// An engine that drops a frame after `idle_clocks` clocks without a byte.
    fn new(idle_clocks: usize);
    check {
        M <= 32, "MgmtEngine: a memory of 2^{M} bytes"
    }
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: idle, counters zero.
        rst: Signal<In, Bit>,
        /// A received byte.
        rx_data: Signal<In, Bits<8>>,
        /// `rx_data` is a new byte (one clock per byte).
        rx_valid: Signal<In, Bit>,
        /// A response byte.
        tx_data: Signal<Out, Bits<8>>,
        /// `tx_data` is offered.
        tx_valid: Signal<Out, Bit>,
        /// The transmitter takes it this clock.
        tx_ready: Signal<In, Bit>,
        /// BAR0 write: valid (one clock).
        bar_wr_valid: Signal<Out, Bit>,
        /// BAR0 write: byte offset.
        bar_wr_addr: Signal<Out, Bits<16>>,
        /// BAR0 write: value.
        bar_wr_data: Signal<Out, Bits<32>>,
        /// BAR0 read: valid (one clock).
        bar_rd_valid: Signal<Out, Bit>,
        /// BAR0 read: byte offset.
        bar_rd_addr: Signal<Out, Bits<16>>,
        /// BAR0 read answer: valid.
        bar_rd_resp_valid: Signal<In, Bit>,
        /// BAR0 read answer: value.
        bar_rd_resp_data: Signal<In, Bits<32>>,
        /// Memory byte port: an access this clock.
        mem_valid: Signal<Out, Bit>,
        /// Memory byte port: a write.
        mem_write: Signal<Out, Bit>,
        /// Memory byte port: byte address.
        mem_addr: Signal<Out, Bits<32>>,
        /// Memory byte port: the byte to write.
        mem_wdata: Signal<Out, Bits<8>>,
        /// Memory byte port: the byte the previous clock's read asked for.
        mem_rdata: Signal<In, Bits<8>>,
    }
    state {
        recv: MgmtRecv<M> = MgmtRecv::new(idle_clocks),
        access: MgmtAccess,
        reply: MgmtReply,
    }
    consts {
    }
}

impl<const M: usize> Logic for MgmtEngine<M> {
    #[hdl_gen]
    fn update(&mut self) {
        self.recv.clock.next = self.clock.val();
        self.access.clock.next = self.clock.val();
        self.reply.clock.next = self.clock.val();
        self.recv.rst.next = self.rst.val();
        self.access.rst.next = self.rst.val();
        self.reply.rst.next = self.rst.val();
        // Request bytes in, through the access, the response out.
        self.recv.rx_data.next = self.rx_data.val();
        self.recv.rx_valid.next = self.rx_valid.val();
        self.access.rx_data.next = self.rx_data.val();
        links::RecvOut::join(&mut self.recv.m_acc, &mut self.access.s_recv);
        links::AnswerOut::join(&mut self.access.m_reply, &mut self.reply.s_acc);
        self.tx_data.next = self.reply.tx_data.val();
        self.tx_valid.next = self.reply.tx_valid.val();
        self.reply.tx_ready.next = self.tx_ready.val();
        // BAR0 and the memory's byte port (the response's reads are
        // asked through the access side, their bytes come to the reply).
        self.bar_wr_valid.next = self.access.m_bar.wr_valid.val();
        self.bar_wr_addr.next = self.access.m_bar.wr_addr.val();
        self.bar_wr_data.next = self.access.m_bar.wr_data.val();
        self.bar_rd_valid.next = self.access.m_bar.rd_valid.val();
        self.bar_rd_addr.next = self.access.m_bar.rd_addr.val();
        self.access.m_bar.rd_resp_valid.next = self.bar_rd_resp_valid.val();
        self.access.m_bar.rd_resp_data.next = self.bar_rd_resp_data.val();
        self.mem_valid.next = self.access.m_mem.valid.val();
        self.mem_write.next = self.access.m_mem.write.val();
        self.mem_addr.next = self.access.m_mem.addr.val();
        self.mem_wdata.next = self.access.m_mem.wdata.val();
        self.reply.mem_rdata.next = self.mem_rdata.val();
    }
}

#[cfg(test)]
pub(crate) mod tests;
