//! [`DmaWrite`]: the device's DMA writes as AXI4 write bursts.

use rust_hdl::prelude::*;

use super::BurstSplit;
use super::burst::burst_bytes;
use crate::helpers::{konst, native_block};

native_block! {
    /// The write DMA of an AXI4 master with `W`-bit data (`B = W / 8`
    /// lanes, `D = 2W`) under [`crate::NicDevice`]'s `m_dmaw_*`.
    ///
    /// A request (`m_dmaw_addr`, `m_dmaw_len` with its first beat,
    /// `m_dmaw_first`) is taken in a cycle of its own (no beat is taken
    /// then), and becomes INCR bursts of whole beats from the address
    /// rounded down ([`BurstSplit`]: none crosses 4 KiB or is longer than
    /// 64 beats), `AWID` 0. Its packed bytes are shifted to their lanes
    /// (the last bytes of a beat spill into the next W beat, so a request
    /// may take one W beat more than it gave), `WSTRB` marks the bytes of
    /// the request in its first and last W beat, `WLAST` ends each burst.
    /// `m_dmaw_tkeep` and `m_dmaw_tlast` are not needed (the length says
    /// it all). Requests go out one after the other with one AXI ID, so
    /// the bridge keeps their order (PCIe posted writes); write responses
    /// are taken at once and those other than `OKAY` counted in `b_err`.
    DmaWrite[W, B, D]
    check {
        W == 8 * B && D == 2 * W && B.is_power_of_two() && (8..=64).contains(&B),
        "DmaWrite<{W}, {B}, {D}>: W = 8 * B, D = 2 * W, 8 to 64 lanes"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: no request in progress, `b_err` 0."]
        rst: Signal<In, Bit>,
        #[doc = "From the device: the request's first byte address (with its first beat)."]
        m_dmaw_addr: Signal<In, Bits<64>>,
        #[doc = "From the device: the request's bytes (with its first beat)."]
        m_dmaw_len: Signal<In, Bits<16>>,
        #[doc = "From the device: the request's first beat."]
        m_dmaw_first: Signal<In, Bit>,
        #[doc = "From the device: data, lane 0 first."]
        m_dmaw_tdata: Signal<In, Bits<W>>,
        #[doc = "From the device: byte enables (packed; not needed)."]
        m_dmaw_tkeep: Signal<In, Bits<B>>,
        #[doc = "From the device: beat valid."]
        m_dmaw_tvalid: Signal<In, Bit>,
        #[doc = "To the device: the beat is taken."]
        m_dmaw_tready: Signal<Out, Bit>,
        #[doc = "From the device: the request's last beat (not needed)."]
        m_dmaw_tlast: Signal<In, Bit>,
        #[doc = "AXI write address: ID (0)."]
        m_axi_awid: Signal<Out, Bits<4>>,
        #[doc = "AXI write address (beat-aligned)."]
        m_axi_awaddr: Signal<Out, Bits<64>>,
        #[doc = "AXI write address: beats − 1."]
        m_axi_awlen: Signal<Out, Bits<8>>,
        #[doc = "AXI write address: log2 of the beat's bytes."]
        m_axi_awsize: Signal<Out, Bits<3>>,
        #[doc = "AXI write address: burst type (INCR)."]
        m_axi_awburst: Signal<Out, Bits<2>>,
        #[doc = "AXI write address: valid."]
        m_axi_awvalid: Signal<Out, Bit>,
        #[doc = "AXI write address: taken."]
        m_axi_awready: Signal<In, Bit>,
        #[doc = "AXI write data."]
        m_axi_wdata: Signal<Out, Bits<W>>,
        #[doc = "AXI write data: byte strobes."]
        m_axi_wstrb: Signal<Out, Bits<B>>,
        #[doc = "AXI write data: a burst's last beat."]
        m_axi_wlast: Signal<Out, Bit>,
        #[doc = "AXI write data: valid."]
        m_axi_wvalid: Signal<Out, Bit>,
        #[doc = "AXI write data: taken."]
        m_axi_wready: Signal<In, Bit>,
        #[doc = "AXI write response."]
        m_axi_bresp: Signal<In, Bits<2>>,
        #[doc = "AXI write response: valid."]
        m_axi_bvalid: Signal<In, Bit>,
        #[doc = "AXI write response: taken (always)."]
        m_axi_bready: Signal<Out, Bit>,
        #[doc = "Write responses other than `OKAY`."]
        b_err: Signal<Out, Bits<16>>,
    }
    state {
        bursts: BurstSplit<B>,
        // A request is being written: its first byte's lane, the bytes
        // from the current W beat's start to its end, the bytes still to
        // take from the device, the W beat is its first, the W beat's
        // address (low bits); `hold` has the device's previous beat.
        act: DFF<Bit>,
        off: DFF<Bits<17>>,
        left: DFF<Bits<17>>,
        in_left: DFF<Bits<17>>,
        firstb: DFF<Bit>,
        wa: DFF<Bits<32>>,
        hold: DFF<Bits<W>>,
        errs: DFF<Bits<16>>,
        // Temporaries: a request starts; the W beat is its last; the
        // device's beat (0 past its end) above `hold`; the strobes from
        // the first byte on; a W beat goes.
        start: Signal<Local, Bit>,
        head: Signal<Local, Bits<B>>,
        lastb: Signal<Local, Bit>,
        data: Signal<Local, Bits<W>>,
        cat: Signal<Local, Bits<D>>,
        fire: Signal<Local, Bit>,
    }
    consts {
        k_b: Constant<Bits<17>> = konst(B),
        k_b32: Constant<Bits<32>> = konst(B),
        k_lanes: Constant<Bits<64>> = konst(B - 1),
        k_align: Constant<Bits<32>> = konst(0xFFFF_FFFF & !(B - 1)),
        k_sm1: Constant<Bits<32>> = konst(burst_bytes(B) - 1),
        k_w: Constant<Bits<16>> = konst(W),
        k_size: Constant<Bits<3>> = konst(B.trailing_zeros() as usize),
        k_incr: Constant<Bits<2>> = konst(1),
        k_keep: Constant<Bits<B>> = Constant::new(Bits::<B>::mask()),
    }
}

impl<const W: usize, const B: usize, const D: usize> Logic for DmaWrite<W, B, D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, act, off, left, in_left, firstb, wa, hold, errs);

        // ---- a request starts once the splitter has issued the last one ----
        self.start.next = !self.act.q.val()
            & !self.bursts.busy.val()
            & self.m_dmaw_tvalid.val()
            & self.m_dmaw_first.val();
        self.bursts.clock.next = self.clock.val();
        self.bursts.rst.next = self.rst.val();
        self.bursts.load.next = self.start.val();
        self.bursts.addr.next = self.m_dmaw_addr.val();
        self.bursts.len.next = self.m_dmaw_len.val();
        self.bursts.ready.next = self.m_axi_awready.val();
        self.m_axi_awvalid.next = self.bursts.valid.val();
        self.m_axi_awaddr.next = self.bursts.baddr.val();
        self.m_axi_awlen.next = self.bursts.blen.val();
        self.m_axi_awid.next = 0.into();
        self.m_axi_awsize.next = self.k_size.val();
        self.m_axi_awburst.next = self.k_incr.val();
        if self.start.val() {
            self.act.d.next = true;
            self.off.d.next = bit_cast::<17, 64>(self.m_dmaw_addr.val() & self.k_lanes.val());
            self.left.d.next = bit_cast::<17, 64>(self.m_dmaw_addr.val() & self.k_lanes.val())
                + bit_cast::<17, 16>(self.m_dmaw_len.val());
            self.in_left.d.next = bit_cast::<17, 16>(self.m_dmaw_len.val());
            self.firstb.d.next = true;
            self.wa.d.next = self.m_dmaw_addr.val().get_bits::<32>(0) & self.k_align.val();
        }

        // ---- W beats: the device's bytes shifted up by the first lane ----
        self.lastb.next = self.left.q.val() <= self.k_b.val();
        self.data.next = 0.into();
        if self.in_left.q.val() != 0 {
            self.data.next = self.m_dmaw_tdata.val();
        }
        self.cat.next = bit_cast::<D, W>(self.hold.q.val())
            | (bit_cast::<D, W>(self.data.val()) << self.k_w.val());
        self.m_axi_wdata.next = self
            .cat
            .val()
            .get_bits::<W>((self.k_b.val() - self.off.q.val()).index() << 3);
        self.head.next = self.k_keep.val();
        if self.firstb.q.val() {
            self.head.next = self.k_keep.val() << self.off.q.val();
        }
        self.m_axi_wstrb.next = self.head.val();
        if self.left.q.val() < self.k_b.val() {
            self.m_axi_wstrb.next = self.head.val() & !(self.k_keep.val() << self.left.q.val());
        }
        self.m_axi_wlast.next =
            self.lastb.val() | (((self.wa.q.val() + self.k_b32.val()) & self.k_sm1.val()) == 0);
        self.m_axi_wvalid.next = false;
        self.m_dmaw_tready.next = false;
        if self.act.q.val() {
            if self.in_left.q.val() != 0 {
                self.m_axi_wvalid.next = self.m_dmaw_tvalid.val();
                self.m_dmaw_tready.next = self.m_axi_wready.val();
            } else {
                self.m_axi_wvalid.next = true;
            }
        }
        self.fire.next = self.m_axi_wvalid.val() & self.m_axi_wready.val();
        if self.fire.val() {
            self.hold.d.next = self.m_dmaw_tdata.val();
            self.in_left.d.next = 0.into();
            if self.in_left.q.val() > self.k_b.val() {
                self.in_left.d.next = self.in_left.q.val() - self.k_b.val();
            }
            self.left.d.next = self.left.q.val() - self.k_b.val();
            self.firstb.d.next = false;
            self.wa.d.next = self.wa.q.val() + self.k_b32.val();
            if self.lastb.val() {
                self.act.d.next = false;
            }
        }

        // ---- write responses ----
        self.m_axi_bready.next = true;
        if self.m_axi_bvalid.val() & (self.m_axi_bresp.val() != 0) {
            self.errs.d.next = self.errs.q.val() + 1;
        }
        self.b_err.next = self.errs.q.val();

        if self.rst.val() {
            self.act.d.next = false;
            self.errs.d.next = 0.into();
        }
    }
}
