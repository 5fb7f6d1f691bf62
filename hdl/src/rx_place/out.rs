//! The data FIFO and the output side ([`PlaceOut`]).

use rust_hdl::prelude::*;

use super::links::HeadIn;
use super::{CAP_BYTES, DATA_ABITS, data_fifo_depth};
use crate::helpers::BlockRam;

/// The data side of [`RxPlace`](super::RxPlace): the data FIFO (payload beats, capped per
/// frame) and the output that pops a verdict, then that frame's beats up
/// to `tlast`: to the DMA port when placed, otherwise dropped.
#[derive(LogicBlock)]
pub struct PlaceOut<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empty.
    pub rst: Signal<In, Bit>,
    /// Payload beat.
    pub s_tdata: Signal<In, Bits<W>>,
    /// Its byte enables.
    pub s_tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub s_tvalid: Signal<In, Bit>,
    /// Last beat of a frame.
    pub s_tlast: Signal<In, Bit>,
    /// The data FIFO takes the beat.
    pub s_tready: Signal<Out, Bit>,
    /// The data FIFO has room for 4 more beats.
    pub room: Signal<Out, Bit>,
    /// The verdict FIFO's head (joined to [`PlaceVerdicts`](super::PlaceVerdicts)), popped here.
    pub v: HeadIn,
    /// DMA: first beat of a write.
    pub m_dma_first: Signal<Out, Bit>,
    /// DMA: data.
    pub m_dma_tdata: Signal<Out, Bits<W>>,
    /// DMA: byte enables.
    pub m_dma_tkeep: Signal<Out, Bits<B>>,
    /// DMA: beat valid.
    pub m_dma_tvalid: Signal<Out, Bit>,
    /// DMA: taken.
    pub m_dma_tready: Signal<In, Bit>,
    /// DMA: last beat.
    pub m_dma_tlast: Signal<Out, Bit>,
    d_data: BlockRam<W, DATA_ABITS>,
    d_keep: BlockRam<B, DATA_ABITS>,
    d_last: BlockRam<1, DATA_ABITS>,
    d_wr: DFF<Bits<12>>,
    d_rd: DFF<Bits<12>>,
    d_frame_beats: DFF<Bits<16>>,
    busy: DFF<Bit>,
    b_place: DFF<Bit>,
    b_rem: DFF<Bits<16>>,
    depth: Constant<Bits<12>>,
    depth_m4: Constant<Bits<12>>,
    mask: Constant<Bits<DATA_ABITS>>,
    cap_beats: Constant<Bits<16>>,
    lanes: Constant<Bits<16>>,
    d_count: Signal<Local, Bits<12>>,
    start: Signal<Local, Bit>,
    in_frame: Signal<Local, Bit>,
    cur_place: Signal<Local, Bit>,
    cur_rem: Signal<Local, Bits<16>>,
    fwd: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    keep: Signal<Local, Bits<B>>,
    o_count: Signal<Local, Bits<12>>,
    o_start: Signal<Local, Bit>,
    o_rem: Signal<Local, Bits<16>>,
    o_fwd: Signal<Local, Bit>,
    i_count: Signal<Local, Bits<12>>,
    rd_next: Signal<Local, Bits<DATA_ABITS>>,
}

impl<const W: usize, const B: usize> Default for PlaceOut<W, B> {
    fn default() -> Self {
        let depth = data_fifo_depth(B);
        let k12 = |v: usize| Constant::new(v.to_bits());
        Self {
            clock: Default::default(),
            rst: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tvalid: Default::default(),
            s_tlast: Default::default(),
            s_tready: Default::default(),
            room: Default::default(),
            v: Default::default(),
            m_dma_first: Default::default(),
            m_dma_tdata: Default::default(),
            m_dma_tkeep: Default::default(),
            m_dma_tvalid: Default::default(),
            m_dma_tready: Default::default(),
            m_dma_tlast: Default::default(),
            d_data: BlockRam::with_words(depth),
            d_keep: BlockRam::with_words(depth),
            d_last: BlockRam::with_words(depth),
            d_wr: Default::default(),
            d_rd: Default::default(),
            d_frame_beats: Default::default(),
            busy: Default::default(),
            b_place: Default::default(),
            b_rem: Default::default(),
            depth: k12(depth),
            depth_m4: k12(depth - 4),
            mask: Constant::new((depth - 1).to_bits()),
            cap_beats: Constant::new(CAP_BYTES.div_ceil(B).to_bits()),
            lanes: Constant::new(B.to_bits()),
            d_count: Default::default(),
            start: Default::default(),
            in_frame: Default::default(),
            cur_place: Default::default(),
            cur_rem: Default::default(),
            fwd: Default::default(),
            pop: Default::default(),
            keep: Default::default(),
            o_count: Default::default(),
            o_start: Default::default(),
            o_rem: Default::default(),
            o_fwd: Default::default(),
            i_count: Default::default(),
            rd_next: Default::default(),
        }
    }
}

impl<const W: usize, const B: usize> Logic for PlaceOut<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, d_wr, d_rd, d_frame_beats, busy, b_place, b_rem);
        self.d_data.clock.next = self.clock.val();
        self.d_keep.clock.next = self.clock.val();
        self.d_last.clock.next = self.clock.val();
        // Input: payload beats into the data FIFO (capped per frame).
        self.i_count.next = self.d_wr.q.val() - self.d_rd.q.val();
        self.s_tready.next = self.i_count.val() < self.depth.val();
        self.room.next = self.i_count.val() < self.depth_m4.val();
        self.d_data.write_address.next =
            self.d_wr.q.val().get_bits::<DATA_ABITS>(0) & self.mask.val();
        self.d_keep.write_address.next =
            self.d_wr.q.val().get_bits::<DATA_ABITS>(0) & self.mask.val();
        self.d_last.write_address.next =
            self.d_wr.q.val().get_bits::<DATA_ABITS>(0) & self.mask.val();
        self.d_data.write_data.next = self.s_tdata.val();
        self.d_keep.write_data.next = self.s_tkeep.val();
        self.d_last.write_data.next = self.s_tlast.val().into();
        self.d_data.write_enable.next = false;
        self.d_keep.write_enable.next = false;
        self.d_last.write_enable.next = false;
        if self.s_tvalid.val() & (self.i_count.val() < self.depth.val()) {
            if self.s_tlast.val() | (self.d_frame_beats.q.val() < self.cap_beats.val()) {
                self.d_data.write_enable.next = true;
                self.d_keep.write_enable.next = true;
                self.d_last.write_enable.next = true;
                self.d_wr.d.next = self.d_wr.q.val() + 1;
            }
            if self.s_tlast.val() {
                self.d_frame_beats.d.next = 0.into();
            } else {
                self.d_frame_beats.d.next = self.d_frame_beats.q.val() + 1;
            }
        }
        // Output (from registers and the verdict FIFO's head only). The
        // FIFO's memories read synchronously: their read address is the
        // read pointer's next value (below), so their `read_data` is the
        // entry at `d_rd` in every cycle, as an asynchronous read would be.
        // The DMA port's outputs, from registers only (`o_*`, apart from the
        // pop below, which also depends on `m_dma_tready`: a DMA engine
        // may decide `tready` from `tvalid`).
        self.o_count.next = self.d_wr.q.val() - self.d_rd.q.val();
        self.o_start.next = !self.busy.q.val() & self.v.valid.val();
        self.o_rem.next = self.v.len.val();
        self.o_fwd.next = self.v.place.val() & self.v.beats.val();
        if self.busy.q.val() {
            self.o_rem.next = self.b_rem.q.val();
            self.o_fwd.next = self.b_place.q.val();
        }
        self.o_fwd.next = self.o_fwd.val()
            & (self.busy.q.val() | self.o_start.val())
            & (self.o_rem.val() != 0)
            & (self.o_count.val() != 0);
        self.m_dma_tvalid.next = self.o_fwd.val();
        self.m_dma_first.next = self.o_fwd.val() & self.o_start.val();
        self.m_dma_tdata.next = self.d_data.read_data.val();
        // The payload never reaches past a beat's kept bytes; the AND only
        // guards against a malformed input stream.
        self.keep.next = 0.into();
        for i in 0..B {
            self.keep.next = self
                .keep
                .val()
                .replace_bit(i, i.to_bits::<16>() < self.o_rem.val());
        }
        self.m_dma_tkeep.next = self.keep.val() & self.d_keep.read_data.val();
        self.m_dma_tlast.next = self.o_rem.val() <= self.lanes.val();
        // Pop a verdict (with its first beat), then beats to tlast.
        self.d_count.next = self.d_wr.q.val() - self.d_rd.q.val();
        self.start.next = !self.busy.q.val() & self.v.valid.val();
        self.in_frame.next = self.busy.q.val() | (self.start.val() & self.v.beats.val());
        self.cur_place.next = self.v.place.val();
        self.cur_rem.next = self.v.len.val();
        if self.busy.q.val() {
            self.cur_place.next = self.b_place.q.val();
            self.cur_rem.next = self.b_rem.q.val();
        }
        self.fwd.next = self.cur_place.val() & (self.cur_rem.val() != 0);
        self.pop.next = self.in_frame.val()
            & (self.d_count.val() != 0)
            & (!self.fwd.val() | self.m_dma_tready.val());
        self.v.pop.next = self.start.val() & (!self.v.beats.val() | self.pop.val());
        if self.pop.val() {
            self.d_rd.d.next = self.d_rd.q.val() + 1;
            self.busy.d.next = self.d_last.read_data.val() == 0;
            self.b_place.d.next = self.cur_place.val();
            self.b_rem.d.next = self.cur_rem.val();
            if self.fwd.val() {
                self.b_rem.d.next = 0.into();
                if self.cur_rem.val() > self.lanes.val() {
                    self.b_rem.d.next = self.cur_rem.val() - self.lanes.val();
                }
            }
        }
        if self.rst.val() {
            self.d_wr.d.next = 0.into();
            self.d_rd.d.next = 0.into();
            self.d_frame_beats.d.next = 0.into();
            self.busy.d.next = false;
        }
        self.rd_next.next = self.d_rd.q.val().get_bits::<DATA_ABITS>(0);
        if self.pop.val() {
            self.rd_next.next = bit_cast::<DATA_ABITS, 12>(self.d_rd.q.val() + 1);
        }
        if self.rst.val() {
            self.rd_next.next = 0.into();
        }
        self.d_data.read_address.next = self.rd_next.val() & self.mask.val();
        self.d_keep.read_address.next = self.rd_next.val() & self.mask.val();
        self.d_last.read_address.next = self.rd_next.val() & self.mask.val();
    }
}
