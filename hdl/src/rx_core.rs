//! The receive core: [`RxParser`] (parse, framing checks, ICRC), then
//! [`RxPlace`] (QP/MR tables, receive checks, store-and-forward placement as
//! DMA writes) with the per-(QP, path) receive tracker [`RxPathTable`]
//! beside it, and the ACK generator [`AckGen`] behind the tracker. This is
//! the top the placement benches and `metaroce hdl report` check against
//! the engine.
//!
//! Ports: the parser's input (`s_axis_*`, `s_pseudo_*`) plus the IP ECN
//! CE mark (`s_ecn_ce`, sampled with a frame's first beat like the
//! pseudo-header), the NIC clock `now` (the ACKs' timestamp), the table
//! write port (`cfg_*`), DMA write port (`m_dma_*`), verdict events
//! (`m_ev_*`), counters (`cnt_*`) and ACK datagrams (`m_ack_*`). The core
//! takes input while the parser and the placement FIFOs have room, so with
//! the DMA port ready it takes one beat per cycle; the ACK port never holds
//! the input back (arrivals coalesce while ACKs wait). An ACK leaves only
//! once the DMA port has finished the writes of every packet it
//! acknowledges ([`AckGen`]), so a peer never completes a WRITE whose
//! bytes are not yet in memory.

use rust_hdl::prelude::*;

use crate::ack_gen::AckGen;
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
    pub s_axis_tdata: Signal<In, Bits<W>>,
    /// Input byte enables.
    pub s_axis_tkeep: Signal<In, Bits<B>>,
    /// Input beat valid.
    pub s_axis_tvalid: Signal<In, Bit>,
    /// The core takes the beat.
    pub s_axis_tready: Signal<Out, Bit>,
    /// Last beat of a datagram.
    pub s_axis_tlast: Signal<In, Bit>,
    /// ICRC pseudo-header: source IP (sampled with a frame's first beat).
    pub s_pseudo_src_ip: Signal<In, Bits<128>>,
    /// ICRC pseudo-header: destination IP.
    pub s_pseudo_dst_ip: Signal<In, Bits<128>>,
    /// ICRC pseudo-header: UDP source port (also the ACK's destination port).
    pub s_pseudo_src_port: Signal<In, Bits<16>>,
    /// ICRC pseudo-header: UDP destination port.
    pub s_pseudo_dst_port: Signal<In, Bits<16>>,
    /// ICRC pseudo-header: UDP length.
    pub s_pseudo_udp_len: Signal<In, Bits<16>>,
    /// The IP ECN field was CE (sampled with a frame's first beat).
    pub s_ecn_ce: Signal<In, Bit>,
    /// NIC clock in ns (the timestamp of the ACKs).
    pub now: Signal<In, Bits<64>>,
    /// Table write strobe.
    pub cfg_we: Signal<In, Bit>,
    /// Table write address (`rx_place::cfg::addr`, `rx_place::cfg::ring`).
    pub cfg_addr: Signal<In, Bits<9>>,
    /// Table write data.
    pub cfg_data: Signal<In, Bits<64>>,
    /// DMA write: first beat, address and length valid.
    pub m_dma_first: Signal<Out, Bit>,
    /// DMA write address.
    pub m_dma_addr: Signal<Out, Bits<64>>,
    /// DMA write length.
    pub m_dma_len: Signal<Out, Bits<16>>,
    /// DMA write data.
    pub m_dma_tdata: Signal<Out, Bits<W>>,
    /// DMA write byte enables.
    pub m_dma_tkeep: Signal<Out, Bits<B>>,
    /// DMA write beat valid.
    pub m_dma_tvalid: Signal<Out, Bit>,
    /// DMA engine takes the beat.
    pub m_dma_tready: Signal<In, Bit>,
    /// Last beat of a DMA write.
    pub m_dma_tlast: Signal<Out, Bit>,
    /// Verdict pulse, one per datagram.
    pub m_ev_valid: Signal<Out, Bit>,
    /// Verdict code (`rx_place::Verdict`).
    pub m_ev_code: Signal<Out, Bits<5>>,
    /// Event: base header version (fields below are valid with the verdict).
    pub m_ev_version: Signal<Out, Bits<8>>,
    /// Event: opcode.
    pub m_ev_opcode: Signal<Out, Bits<8>>,
    /// Event: flags.
    pub m_ev_flags: Signal<Out, Bits<16>>,
    /// Event: destination QPN.
    pub m_ev_dst_qpn: Signal<Out, Bits<32>>,
    /// Event: path id.
    pub m_ev_path: Signal<Out, Bits<16>>,
    /// Event: path PSN.
    pub m_ev_path_psn: Signal<Out, Bits<32>>,
    /// Event: sender timestamp.
    pub m_ev_timestamp: Signal<Out, Bits<64>>,
    /// Event: MSG message sequence number.
    pub m_ev_msn: Signal<Out, Bits<32>>,
    /// Event: MSG posted-receive index.
    pub m_ev_recv_idx: Signal<Out, Bits<32>>,
    /// Event: MSG immediate data.
    pub m_ev_imm: Signal<Out, Bits<32>>,
    /// Event: stream id.
    pub m_ev_stream: Signal<Out, Bits<16>>,
    /// Event: connection PSN (a NACK's `conn_psn`).
    pub m_ev_conn_psn: Signal<Out, Bits<32>>,
    /// Event: UDP source port (a NACK's destination port).
    pub m_ev_src_port: Signal<Out, Bits<16>>,
    /// Event: MSG offset.
    pub m_ev_offset: Signal<Out, Bits<32>>,
    /// Event: MSG message length.
    pub m_ev_msg_len: Signal<Out, Bits<32>>,
    /// Event: payload bytes (0 for other than MSG opcodes).
    pub m_ev_len: Signal<Out, Bits<16>>,
    /// Counter select.
    pub cnt_sel: Signal<In, Bits<5>>,
    /// Selected counter (one cycle later).
    pub cnt_val: Signal<Out, Bits<32>>,
    /// ACK datagram beats (UDP payload, lane order).
    pub m_ack_tdata: Signal<Out, Bits<W>>,
    /// ACK byte enables (packed).
    pub m_ack_tkeep: Signal<Out, Bits<B>>,
    /// ACK beat valid.
    pub m_ack_tvalid: Signal<Out, Bit>,
    /// The transmitter takes the ACK beat.
    pub m_ack_tready: Signal<In, Bit>,
    /// Last beat of an ACK.
    pub m_ack_tlast: Signal<Out, Bit>,
    /// ACK destination IP (IPv4 mapped into IPv6), held for the frame.
    pub m_ack_dst_ip: Signal<Out, Bits<128>>,
    /// ACK UDP source port.
    pub m_ack_src_port: Signal<Out, Bits<16>>,
    /// ACK UDP destination port.
    pub m_ack_dst_port: Signal<Out, Bits<16>>,
    /// The ACK carries ECE.
    pub m_ack_ece: Signal<Out, Bit>,

    parser: RxParser<W, B>,
    place: RxPlace<W, B>,
    track: RxPathTable,
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
        self.parser.s_axis_tdata.next = self.s_axis_tdata.val();
        self.parser.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.parser.s_axis_tlast.next = self.s_axis_tlast.val();
        self.parser.s_axis_tvalid.next = self.s_axis_tvalid.val() & self.place.can_accept.val();
        self.s_axis_tready.next = self.parser.s_axis_tready.val() & self.place.can_accept.val();
        self.parser.s_pseudo_src_ip.next = self.s_pseudo_src_ip.val();
        self.parser.s_pseudo_dst_ip.next = self.s_pseudo_dst_ip.val();
        self.parser.s_pseudo_src_port.next = self.s_pseudo_src_port.val();
        self.parser.s_pseudo_dst_port.next = self.s_pseudo_dst_port.val();
        self.parser.s_pseudo_udp_len.next = self.s_pseudo_udp_len.val();
        if self.s_axis_tvalid.val() & self.parser.s_axis_tready.val() & self.place.can_accept.val()
        {
            if !self.in_frame.q.val() {
                self.src_port.d.next = self.s_pseudo_src_port.val();
                self.ce.d.next = self.s_ecn_ce.val();
            }
            self.in_frame.d.next = !self.s_axis_tlast.val();
        }
        if self.rst.val() {
            self.in_frame.d.next = false;
        }

        // Parser to placement: payload stream and metadata.
        self.place.s_tdata.next = self.parser.m_axis_tdata.val();
        self.place.s_tkeep.next = self.parser.m_axis_tkeep.val();
        self.place.s_tvalid.next = self.parser.m_axis_tvalid.val();
        self.place.s_tlast.next = self.parser.m_axis_tlast.val();
        self.parser.m_axis_tready.next = self.place.s_tready.val();
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
        self.track.ev_valid.next = self.place.m_ev_valid.val();
        self.track.ev_track.next = self.place.m_ev_track.val();
        self.track.ev_qhit.next = self.place.m_ev_qhit.val();
        self.track.ev_psn.next = self.place.m_ev_path_psn.val();
        self.track.ev_ts.next = self.place.m_ev_timestamp.val();
        self.track.ev_port.next = self.place.m_ev_src_port.val();
        self.track.ev_ce.next = self.place.m_ev_ce.val();
        self.track.ev_conn_cum.next = self.place.m_ev_conn_cum.val();
        self.track.ev_live.next = self.place.m_ev_live.val();

        // Tracker to ACK generator, with the QP's table fields.
        self.ack.now.next = self.now.val();
        self.ack.aq_valid.next = self.track.aq_valid.val();
        // ACKs after the data: placed packets with a payload, DMA writes done.
        self.ack.placed.next = self.place.m_ev_valid.val()
            & (self.place.m_ev_code.val() == 0)
            & (self.place.m_ev_len.val() != 0);
        self.ack.dma_done.next =
            self.place.m_dma_tvalid.val() & self.m_dma_tready.val() & self.place.m_dma_tlast.val();
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
        self.m_ack_tdata.next = self.ack.m_ack_tdata.val();
        self.m_ack_tkeep.next = self.ack.m_ack_tkeep.val();
        self.m_ack_tvalid.next = self.ack.m_ack_tvalid.val();
        self.ack.m_ack_tready.next = self.m_ack_tready.val();
        self.m_ack_tlast.next = self.ack.m_ack_tlast.val();
        self.m_ack_dst_ip.next = self.ack.m_ack_dst_ip.val();
        self.m_ack_src_port.next = self.ack.m_ack_src_port.val();
        self.m_ack_dst_port.next = self.ack.m_ack_dst_port.val();
        self.m_ack_ece.next = self.ack.m_ack_ece.val();

        // Tables, DMA, events, counters.
        self.place.cfg_we.next = self.cfg_we.val();
        self.place.cfg_addr.next = self.cfg_addr.val();
        self.place.cfg_data.next = self.cfg_data.val();
        self.m_dma_first.next = self.place.m_dma_first.val();
        self.m_dma_addr.next = self.place.m_dma_addr.val();
        self.m_dma_len.next = self.place.m_dma_len.val();
        self.m_dma_tdata.next = self.place.m_dma_tdata.val();
        self.m_dma_tkeep.next = self.place.m_dma_tkeep.val();
        self.m_dma_tvalid.next = self.place.m_dma_tvalid.val();
        self.m_dma_tlast.next = self.place.m_dma_tlast.val();
        self.place.m_dma_tready.next = self.m_dma_tready.val();
        self.m_ev_valid.next = self.place.m_ev_valid.val();
        self.m_ev_code.next = self.place.m_ev_code.val();
        self.m_ev_version.next = self.place.m_ev_version.val();
        self.m_ev_opcode.next = self.place.m_ev_opcode.val();
        self.m_ev_flags.next = self.place.m_ev_flags.val();
        self.m_ev_dst_qpn.next = self.place.m_ev_dst_qpn.val();
        self.m_ev_path.next = self.place.m_ev_path.val();
        self.m_ev_path_psn.next = self.place.m_ev_path_psn.val();
        self.m_ev_timestamp.next = self.place.m_ev_timestamp.val();
        self.m_ev_msn.next = self.place.m_ev_msn.val();
        self.m_ev_recv_idx.next = self.place.m_ev_recv_idx.val();
        self.m_ev_imm.next = self.place.m_ev_imm.val();
        self.m_ev_stream.next = self.place.m_ev_stream.val();
        self.m_ev_conn_psn.next = self.place.m_ev_conn_psn.val();
        self.m_ev_src_port.next = self.place.m_ev_src_port.val();
        self.m_ev_offset.next = self.place.m_ev_offset.val();
        self.m_ev_msg_len.next = self.place.m_ev_msg_len.val();
        self.m_ev_len.next = self.place.m_ev_len.val();
        self.place.cnt_sel.next = self.cnt_sel.val();
        self.cnt_val.next = self.place.cnt_val.val();
    }
}
