//! The whole receive side from Ethernet frames: [`RxEth`] (Ethernet, IP,
//! UDP) feeding [`RxCore`] (parser, ICRC, tables, checks, placement).
//!
//! A thin wrapper: the front end's payload stream and pseudo-header fields
//! drive the core's `s_axis_*` and `s_pseudo_*`; every other core port
//! passes through under its own name, and the front end's own ports get an
//! `eth_` prefix (`eth_cfg_port*`, `eth_cnt_*`, `m_eth_ev_*`). The IP CE
//! mark of the datagram whose first beat enters the core (same timing as
//! `s_pseudo_*`) drives the core's `s_ecn_ce`, the path tracker's CE input.

use rust_hdl::prelude::*;

use crate::rx_core::RxCore;
use crate::rx_eth::RxEth;

/// The receive side at `W`-bit beats (`B = W / 8` lanes; 64 or 512 bits).
#[derive(LogicBlock, Default)]
pub struct NicRx<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, Bit>,
    /// Ethernet frame beats from the MAC (FCS stripped).
    pub s_axis_tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub s_axis_tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub s_axis_tvalid: Signal<In, Bit>,
    /// The front end takes the beat.
    pub s_axis_tready: Signal<Out, Bit>,
    /// Last beat of the frame.
    pub s_axis_tlast: Signal<In, Bit>,
    /// Front end: write the accepted UDP port.
    pub eth_cfg_port_we: Signal<In, Bit>,
    /// Front end: the UDP port.
    pub eth_cfg_port: Signal<In, Bits<16>>,
    /// Front end: counter select (`EthDrop` code).
    pub eth_cnt_sel: Signal<In, Bits<4>>,
    /// Front end: selected counter.
    pub eth_cnt_val: Signal<Out, Bits<32>>,
    /// Front end: one pulse per Ethernet frame.
    pub m_eth_ev_valid: Signal<Out, Bit>,
    /// Front end: its `EthDrop` code.
    pub m_eth_ev_reason: Signal<Out, Bits<4>>,
    /// Core: time in ns (timestamps the ACKs).
    pub now: Signal<In, Bits<64>>,
    /// Core: table write strobe.
    pub cfg_we: Signal<In, Bit>,
    /// Core: table write address (9 bits, `rx_place::cfg`).
    pub cfg_addr: Signal<In, Bits<9>>,
    /// Core: table write data.
    pub cfg_data: Signal<In, Bits<64>>,
    /// Core: DMA write first beat.
    pub m_dma_first: Signal<Out, Bit>,
    /// Core: DMA write address.
    pub m_dma_addr: Signal<Out, Bits<64>>,
    /// Core: DMA write length.
    pub m_dma_len: Signal<Out, Bits<16>>,
    /// Core: DMA write data.
    pub m_dma_tdata: Signal<Out, Bits<W>>,
    /// Core: DMA write byte enables.
    pub m_dma_tkeep: Signal<Out, Bits<B>>,
    /// Core: DMA write beat valid.
    pub m_dma_tvalid: Signal<Out, Bit>,
    /// Core: DMA engine takes the beat.
    pub m_dma_tready: Signal<In, Bit>,
    /// Core: last DMA beat.
    pub m_dma_tlast: Signal<Out, Bit>,
    /// Core: verdict pulse per datagram.
    pub m_ev_valid: Signal<Out, Bit>,
    /// Core: verdict code.
    pub m_ev_code: Signal<Out, Bits<5>>,
    /// Core: event version.
    pub m_ev_version: Signal<Out, Bits<8>>,
    /// Core: event opcode.
    pub m_ev_opcode: Signal<Out, Bits<8>>,
    /// Core: event flags.
    pub m_ev_flags: Signal<Out, Bits<16>>,
    /// Core: event destination QPN.
    pub m_ev_dst_qpn: Signal<Out, Bits<32>>,
    /// Core: event path.
    pub m_ev_path: Signal<Out, Bits<16>>,
    /// Core: event path PSN.
    pub m_ev_path_psn: Signal<Out, Bits<32>>,
    /// Core: event timestamp.
    pub m_ev_timestamp: Signal<Out, Bits<64>>,
    /// Core: event MSN.
    pub m_ev_msn: Signal<Out, Bits<32>>,
    /// Core: event receive index.
    pub m_ev_recv_idx: Signal<Out, Bits<32>>,
    /// Core: event immediate.
    pub m_ev_imm: Signal<Out, Bits<32>>,
    /// Event: stream id.
    pub m_ev_stream: Signal<Out, Bits<16>>,
    /// Event: connection PSN.
    pub m_ev_conn_psn: Signal<Out, Bits<32>>,
    /// Event: UDP source port.
    pub m_ev_src_port: Signal<Out, Bits<16>>,
    /// Event: MSG offset.
    pub m_ev_offset: Signal<Out, Bits<32>>,
    /// Event: MSG message length.
    pub m_ev_msg_len: Signal<Out, Bits<32>>,
    /// Event: payload bytes.
    pub m_ev_len: Signal<Out, Bits<16>>,
    /// Core: counter select.
    pub cnt_sel: Signal<In, Bits<5>>,
    /// Core: selected counter.
    pub cnt_val: Signal<Out, Bits<32>>,
    /// Core: ACK datagram beats.
    pub m_ack_tdata: Signal<Out, Bits<W>>,
    /// Core: ACK byte enables.
    pub m_ack_tkeep: Signal<Out, Bits<B>>,
    /// Core: ACK beat valid.
    pub m_ack_tvalid: Signal<Out, Bit>,
    /// Core: the transmitter takes the ACK beat.
    pub m_ack_tready: Signal<In, Bit>,
    /// Core: last ACK beat.
    pub m_ack_tlast: Signal<Out, Bit>,
    /// Core: ACK destination IP.
    pub m_ack_dst_ip: Signal<Out, Bits<128>>,
    /// Core: ACK UDP source port.
    pub m_ack_src_port: Signal<Out, Bits<16>>,
    /// Core: ACK UDP destination port.
    pub m_ack_dst_port: Signal<Out, Bits<16>>,
    /// Core: ACK carries ECE.
    pub m_ack_ece: Signal<Out, Bit>,
    /// Tap: the datagram beat the core takes (the front end's output).
    pub m_tap_tdata: Signal<Out, Bits<W>>,
    /// Tap: its byte enables (packed).
    pub m_tap_tkeep: Signal<Out, Bits<B>>,
    /// Tap: the core takes a beat this cycle.
    pub m_tap_tvalid: Signal<Out, Bit>,
    /// Tap: it is the datagram's last beat.
    pub m_tap_tlast: Signal<Out, Bit>,
    /// Hold the core's input (the firmware receive queue is full).
    pub s_hold: Signal<In, Bit>,

    eth: RxEth<W, B>,
    core: RxCore<W, B>,
}

impl<const W: usize, const B: usize> Logic for NicRx<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.eth.clock.next = self.clock.val();
        self.core.clock.next = self.clock.val();
        self.eth.rst.next = self.rst.val();
        self.core.rst.next = self.rst.val();

        // Ethernet in, front end ports.
        self.eth.s_axis_tdata.next = self.s_axis_tdata.val();
        self.eth.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.eth.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.eth.s_axis_tlast.next = self.s_axis_tlast.val();
        self.s_axis_tready.next = self.eth.s_axis_tready.val();
        self.eth.cfg_port_we.next = self.eth_cfg_port_we.val();
        self.eth.cfg_port.next = self.eth_cfg_port.val();
        self.eth.cnt_sel.next = self.eth_cnt_sel.val();
        self.eth_cnt_val.next = self.eth.cnt_val.val();
        self.m_eth_ev_valid.next = self.eth.m_ev_valid.val();
        self.m_eth_ev_reason.next = self.eth.m_ev_reason.val();

        // Front end to core.
        self.core.s_axis_tdata.next = self.eth.m_axis_tdata.val();
        self.core.s_axis_tkeep.next = self.eth.m_axis_tkeep.val();
        self.core.s_axis_tvalid.next = self.eth.m_axis_tvalid.val() & !self.s_hold.val();
        self.core.s_axis_tlast.next = self.eth.m_axis_tlast.val();
        self.eth.m_axis_tready.next = self.core.s_axis_tready.val() & !self.s_hold.val();
        self.core.s_pseudo_src_ip.next = self.eth.m_pseudo_src_ip.val();
        self.core.s_pseudo_dst_ip.next = self.eth.m_pseudo_dst_ip.val();
        self.core.s_pseudo_src_port.next = self.eth.m_pseudo_src_port.val();
        self.core.s_pseudo_dst_port.next = self.eth.m_pseudo_dst_port.val();
        self.core.s_pseudo_udp_len.next = self.eth.m_pseudo_udp_len.val();
        self.core.s_ecn_ce.next = self.eth.m_ecn.val().all();

        // Core ports, passed through.
        self.core.now.next = self.now.val();
        self.core.cfg_we.next = self.cfg_we.val();
        self.core.cfg_addr.next = self.cfg_addr.val();
        self.core.cfg_data.next = self.cfg_data.val();
        self.m_dma_first.next = self.core.m_dma_first.val();
        self.m_dma_addr.next = self.core.m_dma_addr.val();
        self.m_dma_len.next = self.core.m_dma_len.val();
        self.m_dma_tdata.next = self.core.m_dma_tdata.val();
        self.m_dma_tkeep.next = self.core.m_dma_tkeep.val();
        self.m_dma_tvalid.next = self.core.m_dma_tvalid.val();
        self.core.m_dma_tready.next = self.m_dma_tready.val();
        self.m_dma_tlast.next = self.core.m_dma_tlast.val();
        self.m_ev_valid.next = self.core.m_ev_valid.val();
        self.m_ev_code.next = self.core.m_ev_code.val();
        self.m_ev_version.next = self.core.m_ev_version.val();
        self.m_ev_opcode.next = self.core.m_ev_opcode.val();
        self.m_ev_flags.next = self.core.m_ev_flags.val();
        self.m_ev_dst_qpn.next = self.core.m_ev_dst_qpn.val();
        self.m_ev_path.next = self.core.m_ev_path.val();
        self.m_ev_path_psn.next = self.core.m_ev_path_psn.val();
        self.m_ev_timestamp.next = self.core.m_ev_timestamp.val();
        self.m_ev_msn.next = self.core.m_ev_msn.val();
        self.m_ev_recv_idx.next = self.core.m_ev_recv_idx.val();
        self.m_ev_imm.next = self.core.m_ev_imm.val();
        self.m_ev_stream.next = self.core.m_ev_stream.val();
        self.m_ev_conn_psn.next = self.core.m_ev_conn_psn.val();
        self.m_ev_src_port.next = self.core.m_ev_src_port.val();
        self.m_ev_offset.next = self.core.m_ev_offset.val();
        self.m_ev_msg_len.next = self.core.m_ev_msg_len.val();
        self.m_ev_len.next = self.core.m_ev_len.val();
        self.core.cnt_sel.next = self.cnt_sel.val();
        self.cnt_val.next = self.core.cnt_val.val();
        self.m_ack_tdata.next = self.core.m_ack_tdata.val();
        self.m_ack_tkeep.next = self.core.m_ack_tkeep.val();
        self.m_ack_tvalid.next = self.core.m_ack_tvalid.val();
        self.core.m_ack_tready.next = self.m_ack_tready.val();
        self.m_ack_tlast.next = self.core.m_ack_tlast.val();
        self.m_ack_dst_ip.next = self.core.m_ack_dst_ip.val();
        self.m_ack_src_port.next = self.core.m_ack_src_port.val();
        self.m_ack_dst_port.next = self.core.m_ack_dst_port.val();
        self.m_ack_ece.next = self.core.m_ack_ece.val();

        // The core's input as taken, for the ACK receiver in the top.
        self.m_tap_tdata.next = self.eth.m_axis_tdata.val();
        self.m_tap_tkeep.next = self.eth.m_axis_tkeep.val();
        self.m_tap_tvalid.next =
            self.eth.m_axis_tvalid.val() & self.core.s_axis_tready.val() & !self.s_hold.val();
        self.m_tap_tlast.next = self.eth.m_axis_tlast.val();
    }
}
