//! The host interface's own counters ([`super::HostIf`]), as a native
//! rust-hdl block: table writes (`CFG.CFG_WRITES`), the Ethernet front
//! end's decisions and drops (`CNT.ETH_FRAMES`, `CNT.ETH_DROPS`) and read
//! completion beats with a tag no request carries (`CNT.DMA_BAD_TAG`).
//! The other counters live with what they count (the TX queue's, the TX
//! table's, the MAC RX hold's).
//!
//! Under Verilator it is part of [`crate::NicDevice`] (`metaroce-sim-tb`,
//! `nic_device`); rust-hdl's simulator runs it inside [`super::HostIf`]'s
//! test.

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};

native_block! {
    /// The host interface's counters.
    HostCounters[]
    check { true, "HostCounters" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: counts 0."]
        rst: Signal<In, Bit>,
        #[doc = "A table write is issued (`NicCore::cfg_we`)."]
        cfg_we: Signal<In, Bit>,
        #[doc = "The front end decided on a frame (`NicCore::m_eth_ev_valid`)."]
        eth_ev_valid: Signal<In, Bit>,
        #[doc = "Its `EthDrop` code (0: accepted)."]
        eth_ev_reason: Signal<In, Bits<4>>,
        #[doc = "DMA read completion: beat valid."]
        dmac_tvalid: Signal<In, Bit>,
        #[doc = "DMA read completion: tag."]
        dmac_tag: Signal<In, Bits<4>>,
        #[doc = "`CFG.CFG_WRITES`."]
        cfg_writes: Signal<Out, Bits<32>>,
        #[doc = "`CNT.ETH_FRAMES`."]
        eth_frames: Signal<Out, Bits<32>>,
        #[doc = "`CNT.ETH_DROPS`."]
        eth_drops: Signal<Out, Bits<32>>,
        #[doc = "`CNT.DMA_BAD_TAG`."]
        bad_tag: Signal<Out, Bits<32>>,
    }
    state {
        n_cfg: DFF<Bits<32>>,
        n_frames: DFF<Bits<32>>,
        n_drops: DFF<Bits<32>>,
        n_bad_tag: DFF<Bits<32>>,
    }
    consts {
        k_last_tag: Constant<Bits<4>> = konst(usize::from(super::tag::FTQ_DATA)),
    }
}

impl Logic for HostCounters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, n_cfg, n_frames, n_drops, n_bad_tag);
        self.cfg_writes.next = self.n_cfg.q.val();
        self.eth_frames.next = self.n_frames.q.val();
        self.eth_drops.next = self.n_drops.q.val();
        self.bad_tag.next = self.n_bad_tag.q.val();
        if self.cfg_we.val() {
            self.n_cfg.d.next = self.n_cfg.q.val() + 1;
        }
        if self.eth_ev_valid.val() {
            self.n_frames.d.next = self.n_frames.q.val() + 1;
            if self.eth_ev_reason.val() != 0 {
                self.n_drops.d.next = self.n_drops.q.val() + 1;
            }
        }
        if self.dmac_tvalid.val() & (self.dmac_tag.val() > self.k_last_tag.val()) {
            self.n_bad_tag.d.next = self.n_bad_tag.q.val() + 1;
        }
        if self.rst.val() {
            self.n_cfg.d.next = 0.into();
            self.n_frames.d.next = 0.into();
            self.n_drops.d.next = 0.into();
            self.n_bad_tag.d.next = 0.into();
        }
    }
}
