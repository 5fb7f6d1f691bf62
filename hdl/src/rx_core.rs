//! The receive core: [`RxParser`] (parse, framing checks, ICRC), then
//! [`RxPlace`] (QP/MR tables, receive checks, store-and-forward placement as
//! DMA writes) with the per-(QP, path) receive tracker [`RxPathTable`]
//! beside it, and the ACK generator [`AckGen`] behind the tracker. This is
//! the top the placement benches and `metaroce hdl report` check against
//! the engine.
//!
//! Ports (buses of [`crate::bus`]): the parser's input (`s_axis`,
//! `s_pseudo`) plus the IP ECN CE mark (`s_ecn_ce`, sampled with a frame's
//! first beat like the pseudo-header), the NIC clock `now` (the ACKs'
//! timestamp), the table write port (`cfg`), DMA write port (`m_dma`),
//! verdict events (`m_ev`), counters (`cnt`) and ACK datagrams (`m_ack`).
//! [`RxPlace`] has the same buses, linked through; the
//! core takes input while the parser and the placement FIFOs have room, so
//! with the DMA port ready it takes one beat per cycle; the ACK port never
//! holds the input back (arrivals coalesce while ACKs wait). An ACK leaves
//! only once the DMA port has finished the writes of every packet it
//! acknowledges ([`AckGen`]), so a peer never completes a WRITE whose
//! bytes are not yet in memory.

use rust_hdl::prelude::*;

use crate::ack_gen::AckGen;
use crate::bus::{AckOut, AxisIn, CfgIn, CounterPort, DmaWriteOut, PseudoIn, VerdictOut};
use crate::rx_parser::RxParser;
use crate::rx_path::RxPathTable;
use crate::rx_place::RxPlace;

/// The receive core at `W`-bit beats (`B = W / 8` lanes).
#[derive(LogicBlock, Default)]
pub struct RxCore<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, Bit>,
    /// Input: UDP payload beats (see `RxParser`).
    pub s_axis: AxisIn<W, B>,
    /// ICRC pseudo-header (sampled with a frame's first beat).
    pub s_pseudo: PseudoIn,
    /// The IP ECN field was CE (sampled with a frame's first beat).
    pub s_ecn_ce: Signal<In, Bit>,
    /// NIC clock in ns (the timestamp of the ACKs).
    pub now: Signal<In, Bits<64>>,
    /// Table write port (`rx_place::cfg::addr`, `rx_place::cfg::ring`).
    pub cfg: CfgIn<9>,
    /// DMA writes of placed payload.
    pub m_dma: DmaWriteOut<W, B>,
    /// Verdict events, one per datagram.
    pub m_ev: VerdictOut,
    /// Counters per verdict code.
    pub cnt: CounterPort<5>,
    /// ACK datagrams.
    pub m_ack: AckOut<W, B>,

    parser: RxParser<W, B>,
    place: RxPlace<W, B>,
    track: RxPathTable<W>,
    ack: AckGen<W, B>,
    // Per-frame fields the parser does not carry, sampled with the first
    // beat as the parser samples the pseudo-header.
    in_frame: DFF<Bit>,
    src_port: DFF<Bits<16>>,
    ce: DFF<Bit>,
}

impl<const W: usize, const B: usize> Logic for RxCore<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, in_frame, src_port, ce);
        self.parser.clock.next = self.clock.val();
        self.place.clock.next = self.clock.val();
        self.track.clock.next = self.clock.val();
        self.ack.clock.next = self.clock.val();
        self.parser.rst.next = self.rst.val();
        self.place.rst.next = self.rst.val();
        self.track.rst.next = self.rst.val();
        self.ack.rst.next = self.rst.val();

        // Input, gated by the room left in the placement FIFOs.
        self.parser.s_axis_tdata.next = self.s_axis.tdata.val();
        self.parser.s_axis_tkeep.next = self.s_axis.tkeep.val();
        self.parser.s_axis_tlast.next = self.s_axis.tlast.val();
        self.parser.s_axis_tvalid.next = self.s_axis.tvalid.val() & self.place.can_accept.val();
        self.s_axis.tready.next = self.parser.s_axis_tready.val() & self.place.can_accept.val();
        self.parser.s_pseudo_src_ip.next = self.s_pseudo.src_ip.val();
        self.parser.s_pseudo_dst_ip.next = self.s_pseudo.dst_ip.val();
        self.parser.s_pseudo_src_port.next = self.s_pseudo.src_port.val();
        self.parser.s_pseudo_dst_port.next = self.s_pseudo.dst_port.val();
        self.parser.s_pseudo_udp_len.next = self.s_pseudo.udp_len.val();
        if self.s_axis.tvalid.val() & self.parser.s_axis_tready.val() & self.place.can_accept.val()
        {
            if !self.in_frame.q.val() {
                self.src_port.d.next = self.s_pseudo.src_port.val();
                self.ce.d.next = self.s_ecn_ce.val();
            }
            self.in_frame.d.next = !self.s_axis.tlast.val();
        }
        if self.rst.val() {
            self.in_frame.d.next = false;
        }

        // Parser to placement: payload stream and metadata.
        self.place.s_axis.tdata.next = self.parser.m_axis_tdata.val();
        self.place.s_axis.tkeep.next = self.parser.m_axis_tkeep.val();
        self.place.s_axis.tvalid.next = self.parser.m_axis_tvalid.val();
        self.place.s_axis.tlast.next = self.parser.m_axis_tlast.val();
        self.parser.m_axis_tready.next = self.place.s_axis.tready.val();
        self.place.meta_valid.next = self.parser.m_meta_valid.val();
        self.place.meta_drop.next = self.parser.m_meta_drop.val();
        self.place.meta_reason.next = self.parser.m_meta_reason.val();
        self.place.meta_len.next = self.parser.m_meta_len.val();
        self.place.meta_is_msg.next = self.parser.m_meta_is_msg.val();
        self.place.meta_version.next = self.parser.m_meta_version.val();
        self.place.meta_opcode.next = self.parser.m_meta_opcode.val();
        self.place.meta_flags.next = self.parser.m_meta_flags.val();
        self.place.meta_dst_qpn.next = self.parser.m_meta_dst_qpn.val();
        self.place.meta_src_qpn.next = self.parser.m_meta_src_qpn.val();
        self.place.meta_src_ip.next = self.parser.m_meta_src_ip.val();
        self.place.meta_src_port.next = self.src_port.q.val();
        self.place.meta_ce.next = self.ce.q.val();
        self.place.meta_stream.next = self.parser.m_meta_stream.val();
        self.place.meta_path.next = self.parser.m_meta_path.val();
        self.place.meta_conn_psn.next = self.parser.m_meta_conn_psn.val();
        self.place.meta_path_psn.next = self.parser.m_meta_path_psn.val();
        self.place.meta_timestamp.next = self.parser.m_meta_timestamp.val();
        self.place.meta_msn.next = self.parser.m_meta_msn.val();
        self.place.meta_recv_idx.next = self.parser.m_meta_recv_idx.val();
        self.place.meta_msg_len.next = self.parser.m_meta_msg_len.val();
        self.place.meta_offset.next = self.parser.m_meta_offset.val();
        self.place.meta_remote_va.next = self.parser.m_meta_remote_va.val();
        self.place.meta_rkey.next = self.parser.m_meta_rkey.val();
        self.place.meta_imm.next = self.parser.m_meta_imm.val();

        // Placement and path tracker: read in S2, cum in S3 (the verdict), event after it.
        self.track.rd_addr.next = self.place.trk_rd_addr.val();
        self.track.rd_en.next = self.place.trk_rd_en.val();
        self.place.trk_cum.next = self.track.rd_cum.val();
        self.track.ev_valid.next = self.m_ev.valid.val();
        self.track.ev_track.next = self.place.m_ev_track.val();
        self.track.ev_qhit.next = self.place.m_ev_qhit.val();
        self.track.ev_psn.next = self.m_ev.path_psn.val();
        self.track.ev_ts.next = self.m_ev.timestamp.val();
        self.track.ev_port.next = self.m_ev.src_port.val();
        self.track.ev_ce.next = self.place.m_ev_ce.val();
        self.track.ev_conn_cum.next = self.place.m_ev_conn_cum.val();
        self.track.ev_live.next = self.place.m_ev_live.val();

        // Tracker to ACK generator, with the QP's table fields.
        self.ack.now.next = self.now.val();
        self.ack.aq_valid.next = self.track.aq_valid.val();
        // ACKs after the data: placed packets with a payload, DMA writes done.
        self.ack.placed.next =
            self.m_ev.valid.val() & (self.m_ev.code.val() == 0) & (self.m_ev.len.val() != 0);
        self.ack.dma_done.next =
            self.m_dma.tvalid.val() & self.m_dma.tready.val() & self.m_dma.tlast.val();
        self.track.aq_pop.next = self.ack.aq_pop.val();
        self.ack.ak_path.next = self.track.ak_path.val();
        self.ack.ak_cum.next = self.track.ak_cum.val();
        self.ack.ak_sack.next = self.track.ak_sack.val();
        self.ack.ak_rx.next = self.track.ak_rx.val();
        self.ack.ak_ce.next = self.track.ak_ce.val();
        self.ack.ak_ts.next = self.track.ak_ts.val();
        self.ack.ak_port.next = self.track.ak_port.val();
        self.ack.ak_ece.next = self.track.ak_ece.val();
        self.ack.ak_conn_cum.next = self.track.ak_conn_cum.val();
        self.ack.ak_live.next = self.track.ak_live.val();
        self.place.ack_qp.next = self.track.ak_qp.val();
        self.ack.qpn.next = self.place.ack_qpn.val();
        self.ack.peer_qpn.next = self.place.ack_peer_qpn.val();
        self.ack.peer_ip.next = self.place.ack_peer_ip.val();
        self.ack.peer_port.next = self.place.ack_peer_port.val();
        self.ack.rate.next = self.place.ack_rate.val();
        self.ack.credit.next = self.place.ack_credit.val();
        self.ack.local_ip.next = self.place.ack_local_ip.val();
        AckOut::<W, B>::link(&mut self.m_ack, &mut self.ack.m_ack);

        // Tables, DMA, events, counters.
        CfgIn::<9>::link(&mut self.cfg, &mut self.place.cfg);
        DmaWriteOut::<W, B>::link(&mut self.m_dma, &mut self.place.m_dma);
        VerdictOut::link(&mut self.m_ev, &mut self.place.m_ev);
        CounterPort::<5>::link(&mut self.cnt, &mut self.place.cnt);
    }
}
