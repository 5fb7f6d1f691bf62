//! S3 and the output side ([`PlaceBack`]).

use rust_hdl::prelude::*;

use super::links::{ChecksIn, HdrIn, HdrOut, HeadOut};
use super::{ConnAccept, ConnAhead, PlaceConn, PlaceDecide, PlaceEvent, PlaceHdr};
use super::{PlaceOut, PlaceVerdicts, Verdict};
use crate::bus::{AxisIn, CfgIn, CounterPort, DmaWriteOut, VerdictOut};
use crate::code_counters::CodeCounters;

/// Counters: one per verdict code in use.
pub(super) const COUNTERS: usize = Verdict::ALL.len();

/// S3 of [`RxPlace`](super::RxPlace) and what follows it: the datagram's
/// header fields and QP entry taken from S2 ([`PlaceHdr`], `y_*`), the
/// verdict ([`PlaceDecide`]) and the connection window's update
/// ([`ConnAccept`]) from S2's checks, the QP's connection state
/// ([`PlaceConn`]: loaded in S2, written back after S3) and its window
/// tests ([`ConnAhead`]: made in S2), the counters, the
/// event ([`PlaceEvent`]), the verdict FIFO ([`PlaceVerdicts`]) and the
/// data FIFO with the output side ([`PlaceOut`]). Every port but `x_*`,
/// `s_hdr`, `chk` and the check's `plen`, `has_beats`, `dest` is
/// [`RxPlace`](super::RxPlace)'s port of the same name.
#[derive(LogicBlock)]
pub struct PlaceBack<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, Bit>,
    /// Table write port (the connection state's words, 32 bits).
    pub cfg: CfgIn<9, 32>,
    /// S2: a datagram is here.
    pub x_valid: Signal<In, Bit>,
    /// S2: its QP entry.
    pub x_qi: Signal<In, Bits<2>>,
    /// S2: its header fields.
    pub s_hdr: HdrIn,
    /// S3: S2's checks ([`PlaceCheck`](super::PlaceCheck), registered).
    pub chk: ChecksIn,
    /// S3: payload bytes.
    pub plen: Signal<In, Bits<16>>,
    /// S3: the frame has payload beats.
    pub has_beats: Signal<In, Bit>,
    /// S3: where the payload goes.
    pub dest: Signal<In, Bits<64>>,
    /// S3: the path tracker's cumulative PSN of the datagram's path.
    pub trk_cum: Signal<In, Bits<32>>,
    /// `RxPlace::s_axis`.
    pub s_axis: AxisIn<W, B>,
    /// `RxPlace::can_accept`.
    pub can_accept: Signal<Out, Bit>,
    /// `RxPlace::m_dma`.
    pub m_dma: DmaWriteOut<W, B>,
    /// `RxPlace::m_ev`.
    pub m_ev: VerdictOut,
    /// `RxPlace::m_ev_track`.
    pub m_ev_track: Signal<Out, Bit>,
    /// `RxPlace::m_ev_qhit`.
    pub m_ev_qhit: Signal<Out, Bit>,
    /// `RxPlace::m_ev_conn_cum`.
    pub m_ev_conn_cum: Signal<Out, Bits<32>>,
    /// `RxPlace::m_ev_ce`.
    pub m_ev_ce: Signal<Out, Bit>,
    /// `RxPlace::m_ev_live`.
    pub m_ev_live: Signal<Out, Bit>,
    /// `RxPlace::cnt`.
    pub cnt: CounterPort<5>,
    // S3: the datagram, its QP entry and header fields.
    y_valid: DFF<Bit>,
    y_qi: DFF<Bits<2>>,
    hdr3: PlaceHdr,
    // The QPs' connection state and window, loaded in S2 for S3 (the
    // bypass) and written back after S3; the verdict and the window.
    conn: PlaceConn,
    ahead: ConnAhead,
    decide: PlaceDecide,
    acc: ConnAccept,
    counters: CodeCounters<5, COUNTERS>,
    ev: PlaceEvent,
    // The verdict FIFO and the output side.
    verdicts: PlaceVerdicts,
    out: PlaceOut<W, B>,
}

impl<const W: usize, const B: usize> Default for PlaceBack<W, B> {
    fn default() -> Self {
        // A datagram whose verdict reads the connection window (base
        // header and ICRC at least) is this many beats, hence cycles,
        // behind the one before at W bits; the window's update is split
        // over S3 and S4 when it is 3 or more (see `PlaceConn`).
        let gap = (metaroce_proto::BASE_LEN + metaroce_proto::ICRC_LEN) * 8;
        let split = gap.div_ceil(W) >= 3;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            cfg: Default::default(),
            x_valid: Default::default(),
            x_qi: Default::default(),
            s_hdr: Default::default(),
            chk: Default::default(),
            plen: Default::default(),
            has_beats: Default::default(),
            dest: Default::default(),
            trk_cum: Default::default(),
            s_axis: Default::default(),
            can_accept: Default::default(),
            m_dma: Default::default(),
            m_ev: Default::default(),
            m_ev_track: Default::default(),
            m_ev_qhit: Default::default(),
            m_ev_conn_cum: Default::default(),
            m_ev_ce: Default::default(),
            m_ev_live: Default::default(),
            cnt: Default::default(),
            y_valid: Default::default(),
            y_qi: Default::default(),
            hdr3: Default::default(),
            conn: PlaceConn::new(split),
            ahead: Default::default(),
            decide: Default::default(),
            acc: ConnAccept::new(split),
            counters: Default::default(),
            ev: Default::default(),
            verdicts: Default::default(),
            out: Default::default(),
        }
    }
}

impl<const W: usize, const B: usize> Logic for PlaceBack<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, y_valid, y_qi);
        self.y_valid.d.next = self.x_valid.val() & !self.rst.val();
        if self.x_valid.val() {
            self.y_qi.d.next = self.x_qi.val();
        }
        self.hdr3.clock.next = self.clock.val();
        self.hdr3.en.next = self.x_valid.val();
        HdrIn::link(&mut self.s_hdr, &mut self.hdr3.d);

        // ---- S3: the verdict (only with a datagram in S3), from the QP's
        // state and connection window loaded in S2 (no table selection in
        // the verdict's loop) ----
        self.decide.en.next = self.y_valid.q.val();
        self.decide.qhit.next = self.hdr3.m.qhit.val();
        ChecksIn::link(&mut self.chk, &mut self.decide.chk);
        self.decide.path_psn.next = self.hdr3.m.path_psn.val();
        self.decide.trk_cum.next = self.trk_cum.val();
        self.decide.q_state.next = self.conn.state.val();
        self.decide.oow.next = self.ahead.oow.val();
        self.decide.far.next = self.ahead.far.val();
        self.decide.dup.next = self.ahead.dup.val();
        self.acc.cum.next = self.conn.cum.val();
        self.acc.bm.next = self.conn.bm.val();
        self.acc.ge.next = self.conn.ge.val();
        self.acc.psn.next = self.hdr3.m.conn_psn.val().get_bits::<8>(0);
        self.acc.clock.next = self.clock.val();
        self.acc.en.next = self.y_valid.q.val();
        self.acc.take.next = self.decide.accept.val();
        self.acc.x_en.next = self.x_valid.val();
        self.acc.x_bm.next = self.conn.x_bm.val();
        self.acc.x_ge.next = self.conn.x_ge.val();
        self.acc.x_psn.next = self.s_hdr.conn_psn.val().get_bits::<8>(0);
        // S2: the window tests of the datagram entering S3, against the
        // table's window or S3's result (chosen by S3's verdict).
        self.ahead.clock.next = self.clock.val();
        self.ahead.en.next = self.x_valid.val();
        self.ahead.psn.next = self.s_hdr.conn_psn.val();
        self.ahead.t_cum.next = self.conn.x_cum.val();
        self.ahead.t_bm.next = self.conn.x_bm.val();
        self.ahead.byp.next = self.conn.byp.val();
        self.ahead.cum.next = self.conn.cum.val();
        self.ahead.bm.next = self.conn.bm.val();
        self.ahead.y_psn.next = self.hdr3.m.conn_psn.val().get_bits::<8>(0);
        self.ahead.take.next = self.decide.accept.val();
        self.ahead.z.next = self.acc.z.val();
        self.ahead.all.next = self.acc.all.val();
        self.ahead.wrap.next = self.acc.wrap.val();

        // ---- S3 results: the counters, the verdict FIFO, the event ----
        self.counters.clock.next = self.clock.val();
        self.counters.rst.next = self.rst.val();
        CounterPort::<5>::link(&mut self.cnt, &mut self.counters.cnt);
        self.counters.valid.next = self.y_valid.q.val();
        self.counters.code.next = self.decide.code.val();
        self.verdicts.clock.next = self.clock.val();
        self.verdicts.rst.next = self.rst.val();
        self.verdicts.push.next = self.y_valid.q.val();
        self.verdicts.place.next = self.decide.placed.val();
        self.verdicts.beats.next = self.has_beats.val();
        self.verdicts.len.next = self.plen.val();
        self.verdicts.addr.next = self.dest.val();
        self.ev.clock.next = self.clock.val();
        self.ev.rst.next = self.rst.val();
        VerdictOut::link(&mut self.m_ev, &mut self.ev.m_ev);
        HdrOut::join(&mut self.hdr3.m, &mut self.ev.s_hdr);
        self.ev.en3.next = self.y_valid.q.val();
        self.ev.code.next = self.decide.code.val();
        self.ev.track.next = self.decide.track.val();
        self.ev.live.next = self.decide.live.val();
        self.ev.conn_cum.next = self.acc.new_cum.val();
        self.ev.plen.next = self.plen.val();
        self.m_ev_track.next = self.ev.m_track.val();
        self.m_ev_qhit.next = self.ev.m_qhit.val();
        self.m_ev_conn_cum.next = self.ev.m_conn_cum.val();
        self.m_ev_live.next = self.ev.m_live.val();
        self.m_ev_ce.next = self.ev.m_ce.val();
        // The QP's window and state after the verdict (a response that
        // fails its lkey check fails its READ and the QP: ERR): written
        // back, and loaded in S2 for the next datagram of this QP.
        self.conn.clock.next = self.clock.val();
        CfgIn::<9, 32>::link(&mut self.cfg, &mut self.conn.cfg);
        self.conn.x_valid.next = self.x_valid.val();
        self.conn.x_qi.next = self.x_qi.val();
        self.conn.y_valid.next = self.y_valid.q.val();
        self.conn.y_qi.next = self.y_qi.q.val();
        self.conn.take.next = self.decide.accept.val();
        self.conn.fail.next = self.decide.code.val() == 22;
        self.conn.new_cum.next = self.acc.new_cum.val();
        self.conn.new_bm.next = self.acc.new_bm.val();

        // ---- output side: the verdict FIFO's head to `out` ----
        self.out.clock.next = self.clock.val();
        self.out.rst.next = self.rst.val();
        HeadOut::join(&mut self.verdicts.head, &mut self.out.v);
        self.m_dma.addr.next = self.verdicts.head_addr.val();
        self.m_dma.len.next = self.verdicts.head.len.val();
        self.out.s_tdata.next = self.s_axis.tdata.val();
        self.out.s_tkeep.next = self.s_axis.tkeep.val();
        self.out.s_tvalid.next = self.s_axis.tvalid.val();
        self.out.s_tlast.next = self.s_axis.tlast.val();
        self.s_axis.tready.next = self.out.s_tready.val();
        self.can_accept.next = self.out.room.val() & self.verdicts.room.val();
        self.out.m_dma_tready.next = self.m_dma.tready.val();
        self.m_dma.first.next = self.out.m_dma_first.val();
        self.m_dma.tdata.next = self.out.m_dma_tdata.val();
        self.m_dma.tkeep.next = self.out.m_dma_tkeep.val();
        self.m_dma.tvalid.next = self.out.m_dma_tvalid.val();
        self.m_dma.tlast.next = self.out.m_dma_tlast.val();
    }
}
