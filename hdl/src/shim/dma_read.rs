//! [`DmaRead`]: the device's read DMA requests as AXI4 read bursts, the
//! data realigned to the device's completion stream.

use rust_hdl::prelude::*;

use super::BurstSplit;
use crate::helpers::{LutRam, konst, native_block};

/// Requests the shim holds at once (read bursts outstanding on AXI).
const QUEUE: usize = 16;

native_block! {
    /// The read DMA of an AXI4 master with `W`-bit data (`B = W / 8`
    /// lanes, `D = 2W`) under [`crate::NicDevice`]'s `m_dmar_*`/`s_dmac_*`.
    ///
    /// A request `{addr, len, tag}` becomes INCR bursts of whole beats
    /// from `addr` rounded down ([`BurstSplit`]: none crosses 4 KiB or is
    /// longer than 64 beats), `ARID` = the tag. The R beats come back
    /// realigned: lane 0 of the first completion beat is the byte at
    /// `addr`, `tkeep` packed, `tlast` on the request's last beat, the tag
    /// on every beat. AXI returns a read ID's data in order but may
    /// interleave IDs; so that a request's beats are contiguous, bursts of
    /// only one tag are outstanding at a time: a request of another tag
    /// waits until the ones before it have completed (requests of one tag,
    /// the payload reads, follow each other without a gap). Up to 16
    /// requests are outstanding. R beats with an error response still
    /// deliver their data and are counted in `r_err`.
    DmaRead[W, B, D]
    check {
        W == 8 * B && D == 2 * W && B.is_power_of_two() && (8..=64).contains(&B),
        "DmaRead<{W}, {B}, {D}>: W = 8 * B, D = 2 * W, 8 to 64 lanes"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: no request in progress, `r_err` 0."]
        rst: Signal<In, Bit>,
        #[doc = "From the device: a read request."]
        m_dmar_valid: Signal<In, Bit>,
        #[doc = "To the device: the request is taken."]
        m_dmar_ready: Signal<Out, Bit>,
        #[doc = "From the device: the first byte's host address."]
        m_dmar_addr: Signal<In, Bits<64>>,
        #[doc = "From the device: bytes (at least 1)."]
        m_dmar_len: Signal<In, Bits<16>>,
        #[doc = "From the device: the request's tag."]
        m_dmar_tag: Signal<In, Bits<4>>,
        #[doc = "To the device: completion data, lane 0 first."]
        s_dmac_tdata: Signal<Out, Bits<W>>,
        #[doc = "To the device: byte enables (packed)."]
        s_dmac_tkeep: Signal<Out, Bits<B>>,
        #[doc = "To the device: beat valid."]
        s_dmac_tvalid: Signal<Out, Bit>,
        #[doc = "From the device: the beat is taken."]
        s_dmac_tready: Signal<In, Bit>,
        #[doc = "To the device: the request's last beat."]
        s_dmac_tlast: Signal<Out, Bit>,
        #[doc = "To the device: the request's tag."]
        s_dmac_tag: Signal<Out, Bits<4>>,
        #[doc = "AXI read address: ID (the tag)."]
        m_axi_arid: Signal<Out, Bits<4>>,
        #[doc = "AXI read address (beat-aligned)."]
        m_axi_araddr: Signal<Out, Bits<64>>,
        #[doc = "AXI read address: beats − 1."]
        m_axi_arlen: Signal<Out, Bits<8>>,
        #[doc = "AXI read address: log2 of the beat's bytes."]
        m_axi_arsize: Signal<Out, Bits<3>>,
        #[doc = "AXI read address: burst type (INCR)."]
        m_axi_arburst: Signal<Out, Bits<2>>,
        #[doc = "AXI read address: valid."]
        m_axi_arvalid: Signal<Out, Bit>,
        #[doc = "AXI read address: taken."]
        m_axi_arready: Signal<In, Bit>,
        #[doc = "AXI read data: ID (not needed: one ID at a time)."]
        m_axi_rid: Signal<In, Bits<4>>,
        #[doc = "AXI read data."]
        m_axi_rdata: Signal<In, Bits<W>>,
        #[doc = "AXI read data: response."]
        m_axi_rresp: Signal<In, Bits<2>>,
        #[doc = "AXI read data: a burst's last beat (not needed: the shim counts)."]
        m_axi_rlast: Signal<In, Bit>,
        #[doc = "AXI read data: valid."]
        m_axi_rvalid: Signal<In, Bit>,
        #[doc = "AXI read data: taken."]
        m_axi_rready: Signal<Out, Bit>,
        #[doc = "R beats taken with a response other than `OKAY`."]
        r_err: Signal<Out, Bits<16>>,
    }
    state {
        bursts: BurstSplit<B>,
        // The requests whose data is due, oldest first: {tag, len, the
        // address's low six bits}; write and read pointers.
        queue: LutRam<26, 4> = LutRam::with_words(QUEUE),
        wp: DFF<Bits<5>>,
        rp: DFF<Bits<5>>,
        // A request taken from the device, waiting for the burst
        // splitter; its fields; the tag of the newest request queued.
        pend: DFF<Bit>,
        p_addr: DFF<Bits<64>>,
        p_len: DFF<Bits<16>>,
        p_tag: DFF<Bits<4>>,
        q_tag: DFF<Bits<4>>,
        // The oldest request is being delivered; its bytes still to
        // deliver; `hold` has the R beat where the next completion beat
        // starts.
        run: DFF<Bit>,
        left: DFF<Bits<17>>,
        have: DFF<Bit>,
        hold: DFF<Bits<W>>,
        errs: DFF<Bits<16>>,
        // Temporaries: requests queued, the pending one goes to the
        // splitter; the oldest request's entry and first byte's lane;
        // this completion beat is its last; it needs the next R beat;
        // `hold` and the R beat side by side; an R beat is taken.
        cnt: Signal<Local, Bits<5>>,
        go: Signal<Local, Bit>,
        ent: Signal<Local, Bits<26>>,
        off: Signal<Local, Bits<17>>,
        lastb: Signal<Local, Bit>,
        need: Signal<Local, Bit>,
        cat: Signal<Local, Bits<D>>,
        r_take: Signal<Local, Bit>,
    }
    consts {
        k_full: Constant<Bits<5>> = konst(QUEUE),
        k_b: Constant<Bits<17>> = konst(B),
        k_lanes: Constant<Bits<17>> = konst(B - 1),
        k_w: Constant<Bits<16>> = konst(W),
        k_size: Constant<Bits<3>> = konst(B.trailing_zeros() as usize),
        k_incr: Constant<Bits<2>> = konst(1),
        k_keep: Constant<Bits<B>> = Constant::new(Bits::<B>::mask()),
    }
}

impl<const W: usize, const B: usize, const D: usize> Logic for DmaRead<W, B, D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wp, rp, pend, p_addr, p_len, p_tag, q_tag, run, left, have, hold, errs
        );

        // ---- requests: taken into `pend`, then queued and split ----
        self.cnt.next = self.wp.q.val() - self.rp.q.val();
        self.go.next = self.pend.q.val()
            & !self.bursts.busy.val()
            & (self.cnt.val() != self.k_full.val())
            & ((self.cnt.val() == 0) | (self.p_tag.q.val() == self.q_tag.q.val()));
        self.m_dmar_ready.next = !self.pend.q.val() | self.go.val();
        if self.go.val() {
            self.pend.d.next = false;
            self.wp.d.next = self.wp.q.val() + 1;
            self.q_tag.d.next = self.p_tag.q.val();
        }
        if self.m_dmar_valid.val() & self.m_dmar_ready.val() {
            self.pend.d.next = true;
            self.p_addr.d.next = self.m_dmar_addr.val();
            self.p_len.d.next = self.m_dmar_len.val();
            self.p_tag.d.next = self.m_dmar_tag.val();
        }
        self.queue.clock.next = self.clock.val();
        self.queue.write_enable.next = self.go.val();
        self.queue.write_address.next = self.wp.q.val().get_bits::<4>(0);
        self.queue.write_data.next = bit_cast::<26, 6>(self.p_addr.q.val().get_bits::<6>(0))
            | (bit_cast::<26, 16>(self.p_len.q.val()) << 6)
            | (bit_cast::<26, 4>(self.p_tag.q.val()) << 22);
        self.bursts.clock.next = self.clock.val();
        self.bursts.rst.next = self.rst.val();
        self.bursts.load.next = self.go.val();
        self.bursts.addr.next = self.p_addr.q.val();
        self.bursts.len.next = self.p_len.q.val();
        self.bursts.ready.next = self.m_axi_arready.val();
        self.m_axi_arvalid.next = self.bursts.valid.val();
        self.m_axi_araddr.next = self.bursts.baddr.val();
        self.m_axi_arlen.next = self.bursts.blen.val();
        self.m_axi_arid.next = self.q_tag.q.val();
        self.m_axi_arsize.next = self.k_size.val();
        self.m_axi_arburst.next = self.k_incr.val();

        // ---- completions: the oldest request's bytes from its R beats ----
        self.queue.read_address.next = self.rp.q.val().get_bits::<4>(0);
        self.ent.next = self.queue.read_data.val();
        self.off.next = bit_cast::<17, 6>(self.ent.val().get_bits::<6>(0)) & self.k_lanes.val();
        self.lastb.next = self.left.q.val() <= self.k_b.val();
        self.need.next = self.off.val() + self.left.q.val() > self.k_b.val();
        if !self.lastb.val() {
            self.need.next = self.off.val() != 0;
        }
        self.cat.next = bit_cast::<D, W>(self.hold.q.val())
            | (bit_cast::<D, W>(self.m_axi_rdata.val()) << self.k_w.val());
        self.s_dmac_tdata.next = self.cat.val().get_bits::<W>(self.off.val().index() << 3);
        self.s_dmac_tkeep.next = self.k_keep.val();
        if self.left.q.val() < self.k_b.val() {
            self.s_dmac_tkeep.next = !(self.k_keep.val() << self.left.q.val());
        }
        self.s_dmac_tlast.next = self.lastb.val();
        self.s_dmac_tag.next = self.ent.val().get_bits::<4>(22);
        self.s_dmac_tvalid.next = false;
        self.m_axi_rready.next = false;
        if !self.run.q.val() {
            // The next request starts: its length.
            if self.cnt.val() != 0 {
                self.run.d.next = true;
                self.left.d.next = bit_cast::<17, 16>(self.ent.val().get_bits::<16>(6));
            }
        } else if !self.have.q.val() {
            // Its first R beat.
            self.m_axi_rready.next = true;
            self.have.d.next = self.m_axi_rvalid.val();
        } else if self.need.val() {
            // A beat from `hold` and the R beat.
            self.s_dmac_tvalid.next = self.m_axi_rvalid.val();
            self.m_axi_rready.next = self.s_dmac_tready.val();
        } else {
            // A beat from `hold` alone; an aligned request's next R beat
            // may come into `hold` at once.
            self.s_dmac_tvalid.next = true;
            self.m_axi_rready.next = self.s_dmac_tready.val() & !self.lastb.val();
            if self.s_dmac_tready.val() {
                self.have.d.next = self.m_axi_rvalid.val() & !self.lastb.val();
            }
        }
        self.r_take.next = self.m_axi_rvalid.val() & self.m_axi_rready.val();
        if self.r_take.val() {
            self.hold.d.next = self.m_axi_rdata.val();
            if self.m_axi_rresp.val() != 0 {
                self.errs.d.next = self.errs.q.val() + 1;
            }
        }
        if self.s_dmac_tvalid.val() & self.s_dmac_tready.val() {
            self.left.d.next = self.left.q.val() - self.k_b.val();
            if self.lastb.val() {
                self.run.d.next = false;
                self.have.d.next = false;
                self.rp.d.next = self.rp.q.val() + 1;
            }
        }
        self.r_err.next = self.errs.q.val();

        if self.rst.val() {
            self.wp.d.next = 0.into();
            self.rp.d.next = 0.into();
            self.pend.d.next = false;
            self.run.d.next = false;
            self.have.d.next = false;
            self.errs.d.next = 0.into();
        }
    }
}
