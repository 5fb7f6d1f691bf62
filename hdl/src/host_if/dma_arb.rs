//! The DMA arbiters of [`super::HostIf`], as native rust-hdl blocks.
//!
//! [`DmaReadArb`]: one read request interface, four clients by tag
//! ([`super::tag`]): 0 the TX queue's entry, 1 the TX builder's payload
//! (`NicCore::m_rd_*`), 2 and 3 the firmware TX queue's header and
//! datagram ([`super::FwTxQueue`]); the payload first, then the TX queue,
//! then the firmware TX queue. A payload fetch of 0 bytes (the TX builder
//! asks for one per descriptor without a payload) is answered here: the
//! DMA engine never sees it. Completions go to their client by tag (the
//! payload's through the TX builder's ready; the others are always taken).
//!
//! [`DmaWriteArb`]: one write interface, three clients, a request at a
//! time (locked from its first beat to its last): 0 placement
//! (`NicCore::m_dma_*`), 1 event entries ([`super::EvRing`]), 2 the
//! firmware receive ring's writer ([`super::FwRxRing`]). The choice
//! depends on neither the writers' data nor the DMA's ready, so the
//! writers' ready is the port's.
//!
//! Under Verilator they are part of [`crate::NicDevice`]
//! (`metaroce-sim-tb`, `nic_device`); rust-hdl's simulator runs them
//! inside [`super::HostIf`]'s test.

use rust_hdl::prelude::*;

use super::tag;
use crate::helpers::{konst, native_block};

native_block! {
    /// The DMA read request arbiter and completion router at `W`-bit
    /// beats (`B = W / 8` lanes).
    DmaReadArb[W, B]
    check { W == 8 * B, "DmaReadArb<{W}, {B}>: W = 8 * B" }
    ports {
        #[doc = "The TX builder's payload read: valid."]
        rd_valid: Signal<In, Bit>,
        #[doc = "The TX builder's payload read: taken (issued, or of 0 bytes)."]
        rd_ready: Signal<Out, Bit>,
        #[doc = "The TX builder's payload read: address."]
        rd_addr: Signal<In, Bits<64>>,
        #[doc = "The TX builder's payload read: bytes."]
        rd_len: Signal<In, Bits<16>>,
        #[doc = "The TX queue's entry read waits."]
        txq_req: Signal<In, Bit>,
        #[doc = "The TX queue's entry address."]
        txq_addr: Signal<In, Bits<64>>,
        #[doc = "The TX queue's read is issued this cycle."]
        txq_grant: Signal<Out, Bit>,
        #[doc = "The firmware TX queue's header read waits."]
        ftq_req_hdr: Signal<In, Bit>,
        #[doc = "The firmware TX queue's datagram read waits."]
        ftq_req_data: Signal<In, Bit>,
        #[doc = "The firmware TX queue's read address."]
        ftq_addr: Signal<In, Bits<64>>,
        #[doc = "The firmware TX queue's read bytes."]
        ftq_len: Signal<In, Bits<16>>,
        #[doc = "The firmware TX queue's read is issued this cycle."]
        ftq_grant: Signal<Out, Bit>,
        #[doc = "DMA read request: valid."]
        m_valid: Signal<Out, Bit>,
        #[doc = "DMA read request: taken."]
        m_ready: Signal<In, Bit>,
        #[doc = "DMA read request: address."]
        m_addr: Signal<Out, Bits<64>>,
        #[doc = "DMA read request: bytes."]
        m_len: Signal<Out, Bits<16>>,
        #[doc = "DMA read request: tag."]
        m_tag: Signal<Out, Bits<4>>,
        #[doc = "DMA read completion: data."]
        c_tdata: Signal<In, Bits<W>>,
        #[doc = "DMA read completion: byte enables."]
        c_tkeep: Signal<In, Bits<B>>,
        #[doc = "DMA read completion: beat valid."]
        c_tvalid: Signal<In, Bit>,
        #[doc = "DMA read completion: beat taken."]
        c_tready: Signal<Out, Bit>,
        #[doc = "DMA read completion: last beat."]
        c_tlast: Signal<In, Bit>,
        #[doc = "DMA read completion: tag."]
        c_tag: Signal<In, Bits<4>>,
        #[doc = "The payload's completion (tag 1): data."]
        pay_tdata: Signal<Out, Bits<W>>,
        #[doc = "The payload's completion: byte enables."]
        pay_tkeep: Signal<Out, Bits<B>>,
        #[doc = "The payload's completion: beat valid."]
        pay_tvalid: Signal<Out, Bit>,
        #[doc = "The payload's completion: beat taken."]
        pay_tready: Signal<In, Bit>,
        #[doc = "The payload's completion: last beat."]
        pay_tlast: Signal<Out, Bit>,
    }
    state {
        // Temporaries: the payload read is of 0 bytes; the client whose
        // request goes out (its tag).
        rd_zero: Signal<Local, Bit>,
        rsel: Signal<Local, Bits<2>>,
    }
    consts {
        k_txq_len: Constant<Bits<16>> = konst(80),
        k_pay_tag: Constant<Bits<4>> = konst(usize::from(tag::PAYLOAD)),
    }
}

impl<const W: usize, const B: usize> Logic for DmaReadArb<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.rd_zero.next = self.rd_valid.val() & (self.rd_len.val() == 0);
        self.rsel.next = 3.into();
        if self.ftq_req_hdr.val() {
            self.rsel.next = 2.into();
        }
        if self.txq_req.val() {
            self.rsel.next = 0.into();
        }
        if self.rd_valid.val() & !self.rd_zero.val() {
            self.rsel.next = 1.into();
        }
        self.m_valid.next = (self.rd_valid.val() & !self.rd_zero.val())
            | self.txq_req.val()
            | self.ftq_req_hdr.val()
            | self.ftq_req_data.val();
        self.m_tag.next = bit_cast::<4, 2>(self.rsel.val());
        self.m_addr.next = self.ftq_addr.val();
        self.m_len.next = self.ftq_len.val();
        if self.rsel.val() == 1 {
            self.m_addr.next = self.rd_addr.val();
            self.m_len.next = self.rd_len.val();
        }
        if self.rsel.val() == 0 {
            self.m_addr.next = self.txq_addr.val();
            self.m_len.next = self.k_txq_len.val();
        }
        self.rd_ready.next = self.rd_zero.val() | (self.m_ready.val() & (self.rsel.val() == 1));
        self.txq_grant.next = self.m_ready.val() & (self.rsel.val() == 0);
        self.ftq_grant.next = self.m_ready.val() & self.rsel.val().get_bit(1);
        // Completions by tag.
        self.pay_tdata.next = self.c_tdata.val();
        self.pay_tkeep.next = self.c_tkeep.val();
        self.pay_tlast.next = self.c_tlast.val();
        self.pay_tvalid.next = self.c_tvalid.val() & (self.c_tag.val() == self.k_pay_tag.val());
        self.c_tready.next = true;
        if self.c_tag.val() == self.k_pay_tag.val() {
            self.c_tready.next = self.pay_tready.val();
        }
    }
}

native_block! {
    /// The DMA write arbiter at `W`-bit beats (`B = W / 8` lanes).
    DmaWriteArb[W, B]
    check { W == 8 * B, "DmaWriteArb<{W}, {B}>: W = 8 * B" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: unlocked."]
        rst: Signal<In, Bit>,
        #[doc = "Placement: address (with the first beat)."]
        c_addr: Signal<In, Bits<64>>,
        #[doc = "Placement: bytes."]
        c_len: Signal<In, Bits<16>>,
        #[doc = "Placement: first beat."]
        c_first: Signal<In, Bit>,
        #[doc = "Placement: data."]
        c_tdata: Signal<In, Bits<W>>,
        #[doc = "Placement: byte enables."]
        c_tkeep: Signal<In, Bits<B>>,
        #[doc = "Placement: beat valid."]
        c_tvalid: Signal<In, Bit>,
        #[doc = "Placement: beat taken."]
        c_tready: Signal<Out, Bit>,
        #[doc = "Placement: last beat."]
        c_tlast: Signal<In, Bit>,
        #[doc = "Event entries: address."]
        e_addr: Signal<In, Bits<64>>,
        #[doc = "Event entries: bytes."]
        e_len: Signal<In, Bits<16>>,
        #[doc = "Event entries: first beat."]
        e_first: Signal<In, Bit>,
        #[doc = "Event entries: data."]
        e_tdata: Signal<In, Bits<W>>,
        #[doc = "Event entries: byte enables."]
        e_tkeep: Signal<In, Bits<B>>,
        #[doc = "Event entries: beat valid."]
        e_tvalid: Signal<In, Bit>,
        #[doc = "Event entries: beat taken."]
        e_tready: Signal<Out, Bit>,
        #[doc = "Event entries: last beat."]
        e_tlast: Signal<In, Bit>,
        #[doc = "Firmware receive ring: address."]
        f_addr: Signal<In, Bits<64>>,
        #[doc = "Firmware receive ring: bytes."]
        f_len: Signal<In, Bits<16>>,
        #[doc = "Firmware receive ring: first beat."]
        f_first: Signal<In, Bit>,
        #[doc = "Firmware receive ring: data."]
        f_tdata: Signal<In, Bits<W>>,
        #[doc = "Firmware receive ring: byte enables."]
        f_tkeep: Signal<In, Bits<B>>,
        #[doc = "Firmware receive ring: beat valid."]
        f_tvalid: Signal<In, Bit>,
        #[doc = "Firmware receive ring: beat taken."]
        f_tready: Signal<Out, Bit>,
        #[doc = "Firmware receive ring: last beat."]
        f_tlast: Signal<In, Bit>,
        #[doc = "DMA write: address."]
        m_addr: Signal<Out, Bits<64>>,
        #[doc = "DMA write: bytes."]
        m_len: Signal<Out, Bits<16>>,
        #[doc = "DMA write: first beat."]
        m_first: Signal<Out, Bit>,
        #[doc = "DMA write: data."]
        m_tdata: Signal<Out, Bits<W>>,
        #[doc = "DMA write: byte enables."]
        m_tkeep: Signal<Out, Bits<B>>,
        #[doc = "DMA write: beat valid."]
        m_tvalid: Signal<Out, Bit>,
        #[doc = "DMA write: beat taken."]
        m_tready: Signal<In, Bit>,
        #[doc = "DMA write: last beat."]
        m_tlast: Signal<Out, Bit>,
    }
    state {
        lk: WrLock,
        // Temporary: the client that has the port (not read by the
        // readies, which the DMA's ready decides: written out there).
        wsel: Signal<Local, Bits<2>>,
    }
    consts {}
}

impl<const W: usize, const B: usize> Logic for DmaWriteArb<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.lk.clock.next = self.clock.val();
        self.lk.rst.next = self.rst.val();
        self.wsel.next = 2.into();
        if self.e_tvalid.val() {
            self.wsel.next = 1.into();
        }
        if self.c_tvalid.val() {
            self.wsel.next = 0.into();
        }
        if self.lk.lock.val() {
            self.wsel.next = self.lk.own.val();
        }
        self.lk.sel.next = self.wsel.val();
        self.m_addr.next = self.f_addr.val();
        self.m_len.next = self.f_len.val();
        self.m_first.next = self.f_first.val();
        self.m_tdata.next = self.f_tdata.val();
        self.m_tkeep.next = self.f_tkeep.val();
        self.m_tvalid.next = self.f_tvalid.val();
        self.m_tlast.next = self.f_tlast.val();
        if self.wsel.val() == 1 {
            self.m_addr.next = self.e_addr.val();
            self.m_len.next = self.e_len.val();
            self.m_first.next = self.e_first.val();
            self.m_tdata.next = self.e_tdata.val();
            self.m_tkeep.next = self.e_tkeep.val();
            self.m_tvalid.next = self.e_tvalid.val();
            self.m_tlast.next = self.e_tlast.val();
        }
        if self.wsel.val() == 0 {
            self.m_addr.next = self.c_addr.val();
            self.m_len.next = self.c_len.val();
            self.m_first.next = self.c_first.val();
            self.m_tdata.next = self.c_tdata.val();
            self.m_tkeep.next = self.c_tkeep.val();
            self.m_tvalid.next = self.c_tvalid.val();
            self.m_tlast.next = self.c_tlast.val();
        }
        // The readies: the port's, for the client that has it.
        self.c_tready.next = self.m_tready.val()
            & ((self.lk.lock.val() & (self.lk.own.val() == 0))
                | (!self.lk.lock.val() & self.c_tvalid.val()));
        self.e_tready.next = self.m_tready.val()
            & ((self.lk.lock.val() & (self.lk.own.val() == 1))
                | (!self.lk.lock.val() & !self.c_tvalid.val() & self.e_tvalid.val()));
        self.f_tready.next = self.m_tready.val()
            & ((self.lk.lock.val() & (self.lk.own.val() == 2))
                | (!self.lk.lock.val() & !self.c_tvalid.val() & !self.e_tvalid.val()));
        self.lk.m_tvalid.next = self.m_tvalid.val();
        self.lk.m_tready.next = self.m_tready.val();
        self.lk.m_tlast.next = self.m_tlast.val();
    }
}

/// The lock of [`DmaWriteArb`]: the client that has the port keeps it from
/// a request's first beat to its last. A block of its own so that the
/// DMA's ready reaches only these registers' inputs (with the choice in
/// one kernel, Verilator would see a loop through a ready that depends on
/// the request).
#[derive(LogicBlock, Default)]
pub struct WrLock {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: unlocked.
    pub rst: Signal<In, Bit>,
    /// The client that has the port this cycle.
    pub sel: Signal<In, Bits<2>>,
    /// DMA write: beat valid.
    pub m_tvalid: Signal<In, Bit>,
    /// DMA write: beat taken.
    pub m_tready: Signal<In, Bit>,
    /// DMA write: last beat.
    pub m_tlast: Signal<In, Bit>,
    /// A request is under way.
    pub lock: Signal<Out, Bit>,
    /// Its client.
    pub own: Signal<Out, Bits<2>>,
    locked: DFF<Bit>,
    owner: DFF<Bits<2>>,
}

impl Logic for WrLock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, owner);
        self.lock.next = self.locked.q.val();
        self.own.next = self.owner.q.val();
        if self.m_tvalid.val() {
            self.owner.d.next = self.sel.val();
            self.locked.d.next = !(self.m_tready.val() & self.m_tlast.val());
        }
        if self.rst.val() {
            self.locked.d.next = false;
            self.owner.d.next = 0.into();
        }
    }
}
