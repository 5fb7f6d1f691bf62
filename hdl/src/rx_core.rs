//! The receive core: [`RxParser`] (parse, framing checks, ICRC) followed by
//! [`RxPlace`] (QP/MR tables, receive checks, store-and-forward placement as
//! DMA writes). This is the top the placement benches and
//! `metaroce hdl report` check against the engine.
//!
//! Ports: the parser's input (`s_axis_*`, `s_pseudo_*`), the placement
//! block's table write port (`cfg_*`), DMA write port (`m_dma_*`), verdict
//! events (`m_ev_*`) and counters (`cnt_*`). The core takes input while the
//! parser and the placement FIFOs have room, so with the DMA port ready it
//! takes one beat per cycle.

use rust_hdl::prelude::*;

use crate::rx_parser::RxParser;
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
    /// ICRC pseudo-header: UDP source port.
    pub s_pseudo_src_port: Signal<In, Bits<16>>,
    /// ICRC pseudo-header: UDP destination port.
    pub s_pseudo_dst_port: Signal<In, Bits<16>>,
    /// ICRC pseudo-header: UDP length.
    pub s_pseudo_udp_len: Signal<In, Bits<16>>,
    /// Table write strobe.
    pub cfg_we: Signal<In, Bit>,
    /// Table write address (`rx_place::cfg::addr`).
    pub cfg_addr: Signal<In, Bits<8>>,
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
    pub m_ev_code: Signal<Out, Bits<4>>,
    /// Event: base header version (fields below latch with the verdict).
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
    /// Event: sender timestamp (to echo in the ACK).
    pub m_ev_timestamp: Signal<Out, Bits<64>>,
    /// Event: MSG message sequence number.
    pub m_ev_msn: Signal<Out, Bits<32>>,
    /// Event: MSG posted-receive index.
    pub m_ev_recv_idx: Signal<Out, Bits<32>>,
    /// Event: MSG immediate data.
    pub m_ev_imm: Signal<Out, Bits<32>>,
    /// Counter select.
    pub cnt_sel: Signal<In, Bits<4>>,
    /// Selected counter (one cycle later).
    pub cnt_val: Signal<Out, Bits<32>>,

    parser: RxParser<W, B>,
    place: RxPlace<W, B>,
    // Header fields for the firmware event, latched with the metadata so
    // they line up with the verdict a cycle later.
    ev_version: DFF<Bits<8>>,
    ev_opcode: DFF<Bits<8>>,
    ev_flags: DFF<Bits<16>>,
    ev_dst_qpn: DFF<Bits<32>>,
    ev_path: DFF<Bits<16>>,
    ev_path_psn: DFF<Bits<32>>,
    ev_timestamp: DFF<Bits<64>>,
    ev_msn: DFF<Bits<32>>,
    ev_recv_idx: DFF<Bits<32>>,
    ev_imm: DFF<Bits<32>>,
}

impl<const W: usize, const B: usize> Logic for RxCore<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ev_version,
            ev_opcode,
            ev_flags,
            ev_dst_qpn,
            ev_path,
            ev_path_psn,
            ev_timestamp,
            ev_msn,
            ev_recv_idx,
            ev_imm
        );
        self.parser.clock.next = self.clock.val();
        self.place.clock.next = self.clock.val();
        self.parser.rst.next = self.rst.val();
        self.place.rst.next = self.rst.val();

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
        self.place.meta_opcode.next = self.parser.m_meta_opcode.val();
        self.place.meta_dst_qpn.next = self.parser.m_meta_dst_qpn.val();
        self.place.meta_src_qpn.next = self.parser.m_meta_src_qpn.val();
        self.place.meta_src_ip.next = self.parser.m_meta_src_ip.val();
        self.place.meta_stream.next = self.parser.m_meta_stream.val();
        self.place.meta_path.next = self.parser.m_meta_path.val();
        self.place.meta_conn_psn.next = self.parser.m_meta_conn_psn.val();
        self.place.meta_msg_len.next = self.parser.m_meta_msg_len.val();
        self.place.meta_offset.next = self.parser.m_meta_offset.val();
        self.place.meta_remote_va.next = self.parser.m_meta_remote_va.val();
        self.place.meta_rkey.next = self.parser.m_meta_rkey.val();

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
        if self.parser.m_meta_valid.val() {
            self.ev_version.d.next = self.parser.m_meta_version.val();
            self.ev_opcode.d.next = self.parser.m_meta_opcode.val();
            self.ev_flags.d.next = self.parser.m_meta_flags.val();
            self.ev_dst_qpn.d.next = self.parser.m_meta_dst_qpn.val();
            self.ev_path.d.next = self.parser.m_meta_path.val();
            self.ev_path_psn.d.next = self.parser.m_meta_path_psn.val();
            self.ev_timestamp.d.next = self.parser.m_meta_timestamp.val();
            self.ev_msn.d.next = self.parser.m_meta_msn.val();
            self.ev_recv_idx.d.next = self.parser.m_meta_recv_idx.val();
            self.ev_imm.d.next = self.parser.m_meta_imm.val();
        }
        self.m_ev_version.next = self.ev_version.q.val();
        self.m_ev_opcode.next = self.ev_opcode.q.val();
        self.m_ev_flags.next = self.ev_flags.q.val();
        self.m_ev_dst_qpn.next = self.ev_dst_qpn.q.val();
        self.m_ev_path.next = self.ev_path.q.val();
        self.m_ev_path_psn.next = self.ev_path_psn.q.val();
        self.m_ev_timestamp.next = self.ev_timestamp.q.val();
        self.m_ev_msn.next = self.ev_msn.q.val();
        self.m_ev_recv_idx.next = self.ev_recv_idx.q.val();
        self.m_ev_imm.next = self.ev_imm.q.val();
        self.place.cnt_sel.next = self.cnt_sel.val();
        self.cnt_val.next = self.place.cnt_val.val();
    }
}
