//! The write side of [`RxEth`](super::RxEth) ([`RxEthWrite`]): the input
//! register, the frame buffer's write port, the header capture, the
//! frame's end and the input's flow control.

use rust_hdl::prelude::*;

use super::links::{BufOut, FrameOut, FreeIn};
use super::{
    FIFO_MARGIN, FRAMES_MAX, HDR_BITS, HDR_FIRST, MAX_FRAME, SLOTS, fifo_depth, slot_shifts,
};
use crate::bus::AxisIn;
use crate::helpers::{konst, native_block};

native_block! {
    /// Each accepted beat is registered (t + 1), then written as it came
    /// into the frame buffer (`m_buf`, at most [`MAX_FRAME`] bytes of a
    /// frame) while frame bytes 12..83 are captured in lane order, one
    /// constant slice per beat. The cycle after a frame's last beat was
    /// written, `m_frame` holds its captured header, byte count and buffer
    /// span (registers). `s_axis.tready` is a register: buffer fill (the
    /// write pointer less the read side's free pointer) below its size
    /// less a margin, and fewer than `FRAMES_MAX` frames past their end and
    /// not yet popped by the read side.
    RxEthWrite [W, B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the buffer."]
        rst: Signal<In, Bit>,
        #[doc = "Ethernet frames (`tready` a register)."]
        s_axis: AxisIn<W, B>,
        #[doc = "What the read side freed."]
        s_free: FreeIn,
        #[doc = "The frame buffer's write port."]
        m_buf: BufOut<W>,
        #[doc = "The frame that ended, for the verdict."]
        m_frame: FrameOut<B>,
    }
    state {
        rdy: DFF<Bit>,
        i_v: DFF<Bit>,
        i_last: DFF<Bit>,
        i_data: DFF<Bits<W>>,
        i_keep: DFF<Bits<B>>,
        // Beat index in the frame (saturating), the frame's first buffer
        // address, the write pointer, the captured header, the tag flag,
        // frames past their end not yet popped.
        bidx: DFF<Bits<16>>,
        fstart: DFF<Bits<16>>,
        wr_ptr: DFF<Bits<16>>,
        hdr: DFF<Bits<HDR_BITS>>,
        hvlan: DFF<Bit>,
        nfr: DFF<Bits<8>>,
        // Frame end (the cycle after it, the header is complete).
        z_v: DFF<Bit>,
        z_tl: DFF<Bit>,
        z_beats: DFF<Bits<16>>,
        z_keep: DFF<Bits<B>>,
        z_start: DFF<Bits<16>>,
        z_end: DFF<Bits<16>>,
        first: Signal<Local, Bit>,
        we: Signal<Local, Bit>,
        wnext: Signal<Local, Bits<16>>,
        hnew: Signal<Local, Bits<HDR_BITS>>,
        slot: Signal<Local, Bits<W>>,
        used: Signal<Local, Bits<16>>,
    }
    consts {
        c_lsh: [Constant<Bits<16>>; SLOTS] = slot_shifts(W).0,
        c_rsh: [Constant<Bits<16>>; SLOTS] = slot_shifts(W).1,
        c_vbeat: Constant<Bits<16>> = konst(HDR_FIRST / B),
        c_vbit: Constant<Bits<16>> = konst(8 * (HDR_FIRST % B)),
        c_maxb: Constant<Bits<16>> = konst(MAX_FRAME / B),
        c_fifo_lim: Constant<Bits<16>> = konst(fifo_depth(B) - FIFO_MARGIN),
        c_fr_lim: Constant<Bits<8>> = konst(FRAMES_MAX),
    }
}

impl<const W: usize, const B: usize> Logic for RxEthWrite<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, rdy, i_v, i_last, i_data, i_keep, bidx, fstart, wr_ptr, hdr, hvlan, nfr,
            z_v, z_tl, z_beats, z_keep, z_start, z_end
        );
        // ---- Input register; ready from the buffer and queue fill. ----
        self.s_axis.tready.next = self.rdy.q.val();
        self.i_v.d.next = self.s_axis.tvalid.val() & self.rdy.q.val();
        self.i_data.d.next = self.s_axis.tdata.val();
        self.i_keep.d.next = self.s_axis.tkeep.val();
        self.i_last.d.next = self.s_axis.tlast.val();

        // ---- The beat as it came, the header capture. ----
        self.first.next = self.bidx.q.val() == 0;
        self.we.next = self.i_v.q.val() & (self.bidx.q.val() < self.c_maxb.val());
        self.wnext.next = self.wr_ptr.q.val();
        if self.we.val() {
            self.wnext.next = self.wr_ptr.q.val() + 1;
        }
        self.wr_ptr.d.next = self.wnext.val();
        self.m_buf.we.next = self.we.val();
        self.m_buf.addr.next = self.wr_ptr.q.val();
        self.m_buf.data.next = self.i_data.q.val();
        // Bytes 12..83 in lane order: beat k lands at bit 8 * (B * k - 12)
        // (a first beat clears the rest; at 512 bits beats 2.. shift out).
        // Only a beat of the capture writes the register (a simulator
        // copies none of its 576 bits in the others).
        self.hnew.next = 0.into();
        self.slot.next = 0.into();
        if self.i_v.q.val() {
            for k in 0..SLOTS {
                if self.bidx.q.val() == k.to_bits::<16>() {
                    self.slot.next = self.i_data.q.val() >> self.c_rsh[k].val();
                    self.hnew.next =
                        bit_cast::<HDR_BITS, W>(self.slot.val()) << self.c_lsh[k].val();
                    if self.first.val() {
                        self.hdr.d.next = self.hnew.val();
                    } else {
                        self.hdr.d.next = self.hdr.q.val() | self.hnew.val();
                    }
                }
            }
            if self.bidx.q.val() == self.c_vbeat.val() {
                self.hvlan.d.next = self
                    .i_data
                    .q
                    .val()
                    .get_bits::<16>(self.c_vbit.val().index())
                    == 0x0081;
            }
            if self.first.val() {
                self.fstart.d.next = self.wr_ptr.q.val();
            }
            if self.i_last.q.val() {
                self.bidx.d.next = 0.into();
            } else if !self.bidx.q.val().all() {
                self.bidx.d.next = self.bidx.q.val() + 1;
            }
        }
        // The frame's end: its beat count, last `tkeep`, buffer span.
        self.z_v.d.next = self.i_v.q.val() & self.i_last.q.val();
        self.z_tl.d.next = self.bidx.q.val() >= self.c_maxb.val();
        self.z_beats.d.next = self.bidx.q.val();
        self.z_keep.d.next = self.i_keep.q.val();
        self.z_start.d.next = self.fstart.q.val();
        if self.first.val() {
            self.z_start.d.next = self.wr_ptr.q.val();
        }
        self.z_end.d.next = self.wnext.val();
        self.m_frame.v.next = self.z_v.q.val();
        self.m_frame.tl.next = self.z_tl.q.val();
        self.m_frame.beats.next = self.z_beats.q.val();
        self.m_frame.keep.next = self.z_keep.q.val();
        self.m_frame.start.next = self.z_start.q.val();
        self.m_frame.end.next = self.z_end.q.val();
        self.m_frame.hdr.next = self.hdr.q.val();
        self.m_frame.vlan.next = self.hvlan.q.val();

        // ---- Flow control: frames past their end, buffer fill. ----
        if self.i_v.q.val() & self.i_last.q.val() {
            if !self.s_free.pop.val() {
                self.nfr.d.next = self.nfr.q.val() + 1;
            }
        } else if self.s_free.pop.val() {
            self.nfr.d.next = self.nfr.q.val() - 1;
        }
        self.used.next = self.wr_ptr.q.val() - self.s_free.fr_ptr.val();
        self.rdy.d.next =
            (self.used.val() < self.c_fifo_lim.val()) & (self.nfr.q.val() < self.c_fr_lim.val());

        if self.rst.val() {
            self.rdy.d.next = false;
            self.i_v.d.next = false;
            self.bidx.d.next = 0.into();
            self.wr_ptr.d.next = 0.into();
            self.nfr.d.next = 0.into();
            self.z_v.d.next = false;
        }
    }
}
