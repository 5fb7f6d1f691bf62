//! The MAC RX hold of [`super::HostIf`], as a native rust-hdl block.
//!
//! [`RxHold`] holds the MAC RX port at a frame boundary while either event
//! FIFO is filling ([`super::EvRing::hold`]): every event the core
//! produces finds room, none is dropped. It counts the cycles a beat
//! waited for it (`CNT.RX_HOLD`). The gate comes from its register and
//! `hold` alone, written out at each use (no shared temporary), so the
//! core's ready reaches only `s_tready` and the registers' inputs.
//!
//! Under Verilator it is part of [`crate::NicDevice`] (`metaroce-sim-tb`,
//! `nic_device`); rust-hdl's simulator runs it inside [`super::HostIf`]'s
//! test.

use rust_hdl::prelude::*;

use crate::helpers::native_block;

native_block! {
    /// The MAC RX hold at `W`-bit beats (`B = W / 8` lanes).
    RxHold[W, B]
    check { W == 8 * B, "RxHold<{W}, {B}>: W = 8 * B" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: between frames, count 0."]
        rst: Signal<In, Bit>,
        #[doc = "Hold the port at the next frame boundary."]
        hold: Signal<In, Bit>,
        #[doc = "MAC RX (outside): data."]
        s_tdata: Signal<In, Bits<W>>,
        #[doc = "MAC RX (outside): byte enables."]
        s_tkeep: Signal<In, Bits<B>>,
        #[doc = "MAC RX (outside): beat valid."]
        s_tvalid: Signal<In, Bit>,
        #[doc = "MAC RX (outside): beat taken."]
        s_tready: Signal<Out, Bit>,
        #[doc = "MAC RX (outside): last beat."]
        s_tlast: Signal<In, Bit>,
        #[doc = "To the core: data."]
        c_tdata: Signal<Out, Bits<W>>,
        #[doc = "To the core: byte enables."]
        c_tkeep: Signal<Out, Bits<B>>,
        #[doc = "To the core: beat valid."]
        c_tvalid: Signal<Out, Bit>,
        #[doc = "To the core: beat taken."]
        c_tready: Signal<In, Bit>,
        #[doc = "To the core: last beat."]
        c_tlast: Signal<Out, Bit>,
        #[doc = "`CNT.RX_HOLD`: cycles a beat was held."]
        held: Signal<Out, Bits<32>>,
    }
    state {
        in_frame: DFF<Bit>,
        n_held: DFF<Bits<32>>,
    }
    consts {}
}

impl<const W: usize, const B: usize> Logic for RxHold<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, in_frame, n_held);
        self.c_tdata.next = self.s_tdata.val();
        self.c_tkeep.next = self.s_tkeep.val();
        self.c_tlast.next = self.s_tlast.val();
        self.c_tvalid.next = self.s_tvalid.val() & !(!self.in_frame.q.val() & self.hold.val());
        self.s_tready.next = self.c_tready.val() & !(!self.in_frame.q.val() & self.hold.val());
        self.held.next = self.n_held.q.val();
        if self.s_tvalid.val() & self.c_tready.val() & !(!self.in_frame.q.val() & self.hold.val()) {
            self.in_frame.d.next = !self.s_tlast.val();
        }
        if self.s_tvalid.val() & !self.in_frame.q.val() & self.hold.val() {
            self.n_held.d.next = self.n_held.q.val() + 1;
        }
        if self.rst.val() {
            self.in_frame.d.next = false;
            self.n_held.d.next = 0.into();
        }
    }
}
