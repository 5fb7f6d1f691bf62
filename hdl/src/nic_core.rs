//! The NIC top: the receive side, the ACK transmit path, the TX frame
//! builder, the MAC transmit arbiter, the per-path TX table and the ACK
//! receiver that updates it in one block.
//!
//! ```text
//! MAC RX s_axis_* ─► NicRx (RxEth → RxCore) ─► m_dma_*, m_ev_*, cnt_*
//!                        │ m_ack_* (ACK datagrams + dst IP, ports, ECE)
//!                        ▼
//!                     AckFrame (Ethernet + IPv4/IPv6 + UDP, TxBuild's registers)
//!                        │ ACK frames
//! s_desc_* ─► TxBuild ──►├─► TxArb (round robin per frame) ─► MAC TX m_axis_*
//!  m_rd_*/s_pay_* ◄─┘  data frames
//! NicRx tap + m_ev_* ─► AckRx (received ACKs → Ack + Feedback) ─┐
//! op_*/rd_*/res_*/m_fate_* ◄─────────────────── (turns) ───────┴─► TxPathTable (16 slots)
//! ```
//!
//! One configuration port: `cfg_addr` is 10 bits; bit 9 clear writes the
//! receive core's tables (`crate::rx_place::cfg`, 9 bits), bit 9 set
//! (and bit 8 clear) writes the TX builder's registers and entropy table
//! (`crate::tx_build::cfg`), which the ACK framer also uses (local and
//! next-hop MAC, local IPv4 and IPv6, TTL, DSCP), and at `0x280 + slot` the ACK
//! receiver's slot map (`crate::ack_rx::cfg`). The per-path TX table's
//! op, result, fate and read ports are brought out: the firmware assigns
//! path PSNs with `Send` and writes them into the descriptors, as in
//! `docs/hardware.md` §5; received ACKs whose (QPN, path) is mapped are
//! applied by [`AckRx`] (`Ack` + `Feedback`), taking turns with the
//! firmware's operations.

use rust_hdl::prelude::*;

use crate::ack_frame::AckFrame;
use crate::ack_rx::AckRx;
use crate::bus::{AxisIn, AxisOut, CfgIn, CounterPort, DmaWriteOut, EthEvOut, VerdictOut};
use crate::fw_rx::FwRx;
use crate::nic_rx::NicRx;
use crate::tx_arb::TxArb;
use crate::tx_build::TxBuild;
use crate::tx_path::{TxPathTable, VIEW_BITS};

/// `cfg_addr` bit that selects the TX builder's map (else the receive core's).
pub const CFG_TX_BIT: u32 = 9;

/// Slot-index bits of the TX table in the top: 16 slots.
pub const TX_SLOT_BITS: usize = 4;

/// `cfg_addr` of the ACK receiver's slot-map entry for `slot`
/// (TX map, table 2: `0x280 + slot`).
pub const fn ack_rx_cfg_addr(slot: u16) -> u16 {
    1 << CFG_TX_BIT | 2 << 6 | slot
}

/// The NIC top at `W`-bit beats (`B = W / 8` lanes; 64 or 512 bits).
#[derive(LogicBlock, Default)]
pub struct NicCore<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (configuration registers of the TX builder are kept).
    pub rst: Signal<In, Bit>,
    /// Configuration write port: address bit 9 selects the TX builder's
    /// map ([`CFG_TX_BIT`]; bit 8 then clear, bits 7..0 the address within
    /// it), else bits 8..0 are the receive core's address.
    pub cfg: CfgIn<10>,
    /// MAC RX: Ethernet frames (FCS stripped).
    pub s_axis: AxisIn<W, B>,
    /// Front end: write the accepted UDP port.
    pub eth_cfg_port_we: Signal<In, Bit>,
    /// Front end: the UDP port.
    pub eth_cfg_port: Signal<In, Bits<16>>,
    /// Front end: counters per `EthDrop` code.
    pub eth_cnt: CounterPort<4>,
    /// Front end: one event per Ethernet frame.
    pub m_eth_ev: EthEvOut,
    /// Time in ns (timestamps the ACKs).
    pub now: Signal<In, Bits<64>>,
    /// DMA writes of placed payload.
    pub m_dma: DmaWriteOut<W, B>,
    /// Verdict events, one per datagram.
    pub m_ev: VerdictOut,
    /// Receive core: counters per verdict code.
    pub cnt: CounterPort<5>,
    /// Descriptor valid.
    pub s_desc_valid: Signal<In, Bit>,
    /// Descriptor taken.
    pub s_desc_ready: Signal<Out, Bit>,
    /// Descriptor: opcode.
    pub s_desc_opcode: Signal<In, Bits<8>>,
    /// Descriptor: flags.
    pub s_desc_flags: Signal<In, Bits<16>>,
    /// Descriptor: destination QPN.
    pub s_desc_dst_qpn: Signal<In, Bits<32>>,
    /// Descriptor: source QPN.
    pub s_desc_src_qpn: Signal<In, Bits<32>>,
    /// Descriptor: stream.
    pub s_desc_stream: Signal<In, Bits<16>>,
    /// Descriptor: path (selects the entropy).
    pub s_desc_path: Signal<In, Bits<16>>,
    /// Descriptor: connection PSN.
    pub s_desc_conn_psn: Signal<In, Bits<32>>,
    /// Descriptor: path PSN.
    pub s_desc_path_psn: Signal<In, Bits<32>>,
    /// Descriptor: timestamp.
    pub s_desc_timestamp: Signal<In, Bits<64>>,
    /// Descriptor: MSN.
    pub s_desc_msn: Signal<In, Bits<32>>,
    /// Descriptor: receive index.
    pub s_desc_recv_idx: Signal<In, Bits<32>>,
    /// Descriptor: message length.
    pub s_desc_msg_len: Signal<In, Bits<32>>,
    /// Descriptor: offset.
    pub s_desc_offset: Signal<In, Bits<32>>,
    /// Descriptor: remote address.
    pub s_desc_remote_va: Signal<In, Bits<64>>,
    /// Descriptor: rkey.
    pub s_desc_rkey: Signal<In, Bits<32>>,
    /// Descriptor: immediate.
    pub s_desc_imm: Signal<In, Bits<32>>,
    /// Descriptor: payload bytes.
    pub s_desc_len: Signal<In, Bits<16>>,
    /// Descriptor: payload host address.
    pub s_desc_addr: Signal<In, Bits<64>>,
    /// Descriptor: ECN-capable.
    pub s_desc_ecn: Signal<In, Bit>,
    /// Payload fetch request valid.
    pub m_rd_valid: Signal<Out, Bit>,
    /// Fetch request taken.
    pub m_rd_ready: Signal<In, Bit>,
    /// Fetch request: host address.
    pub m_rd_addr: Signal<Out, Bits<64>>,
    /// Fetch request: bytes.
    pub m_rd_len: Signal<Out, Bits<16>>,
    /// Fetched payload data.
    pub s_pay_tdata: Signal<In, Bits<W>>,
    /// Fetched payload byte enables.
    pub s_pay_tkeep: Signal<In, Bits<B>>,
    /// Fetched payload beat valid.
    pub s_pay_tvalid: Signal<In, Bit>,
    /// Fetched payload beat taken.
    pub s_pay_tready: Signal<Out, Bit>,
    /// Last beat of a fetch.
    pub s_pay_tlast: Signal<In, Bit>,
    /// Sticky: a fetched beat disagreed with its request.
    pub m_err: Signal<Out, Bit>,
    /// ACK frames sent.
    pub ack_cnt_frames: Signal<Out, Bits<32>>,
    /// ACK frames sent whose ACK carried ECE.
    pub ack_cnt_ece: Signal<Out, Bits<32>>,
    /// ACK frames sent as IPv6 (of `ack_cnt_frames`).
    pub ack_cnt_v6: Signal<Out, Bits<32>>,
    /// MAC TX: frames (data and ACK frames).
    pub m_axis: AxisOut<W, B>,
    /// Operation valid.
    pub op_valid: Signal<In, Bit>,
    /// The table takes an operation (none running).
    pub op_ready: Signal<Out, Bit>,
    /// Operation (`TxOp`).
    pub op_code: Signal<In, Bits<3>>,
    /// Slot operated on.
    pub op_slot: Signal<In, Bits<TX_SLOT_BITS>>,
    /// `Send`: connection PSN; `Ack`: `path_cum`; `Lose`: path PSN.
    pub op_psn: Signal<In, Bits<32>>,
    /// `Send`: payload bytes.
    pub op_len: Signal<In, Bits<16>>,
    /// `Send`: a probe.
    pub op_probe: Signal<In, Bit>,
    /// `Send`: a retransmission.
    pub op_retx: Signal<In, Bit>,
    /// `Ack`: SACK bitmap.
    pub op_sack: Signal<In, Bits<256>>,
    /// `Feedback`: an RTT sample is given.
    pub op_rtt_valid: Signal<In, Bit>,
    /// `Feedback`: RTT sample, ns.
    pub op_rtt: Signal<In, Bits<32>>,
    /// `Feedback`: the ACK's cumulative CE count.
    pub op_ce_count: Signal<In, Bits<32>>,
    /// `Feedback`: packets the ACK acknowledged.
    pub op_acked: Signal<In, Bits<32>>,
    /// `Init`/`Timeout`/`Move`: entropy; `Window`: window in bytes.
    pub op_value: Signal<In, Bits<32>>,
    /// Pulse: the operation is done.
    pub res_valid: Signal<Out, Bit>,
    /// `Send`: the ring had room.
    pub res_ok: Signal<Out, Bit>,
    /// `Send`: path PSN assigned.
    pub res_psn: Signal<Out, Bits<32>>,
    /// `Ack`: data packets acknowledged.
    pub res_pkts: Signal<Out, Bits<32>>,
    /// `Ack`: bytes acknowledged.
    pub res_bytes: Signal<Out, Bits<32>>,
    /// Fate event valid.
    pub m_fate_valid: Signal<Out, Bit>,
    /// The firmware takes the fate event.
    pub m_fate_ready: Signal<In, Bit>,
    /// Fate: lost (1) or acked (0).
    pub m_fate_lost: Signal<Out, Bit>,
    /// Fate: connection PSN of the transmission.
    pub m_fate_conn_psn: Signal<Out, Bits<32>>,
    /// Slot to read.
    pub rd_slot: Signal<In, Bits<TX_SLOT_BITS>>,
    /// Length for `rd_can_send`.
    pub rd_len: Signal<In, Bits<16>>,
    /// Read: entropy.
    pub rd_entropy: Signal<Out, Bits<16>>,
    /// Read: next path PSN.
    pub rd_next_psn: Signal<Out, Bits<32>>,
    /// Read: oldest unresolved path PSN.
    pub rd_una: Signal<Out, Bits<32>>,
    /// Read: bytes in flight.
    pub rd_inflight: Signal<Out, Bits<32>>,
    /// Read: window (bytes).
    pub rd_window: Signal<Out, Bits<32>>,
    /// Read: smoothed RTT, ns.
    pub rd_srtt: Signal<Out, Bits<32>>,
    /// Read: RTT variation, ns.
    pub rd_rttvar: Signal<Out, Bits<32>>,
    /// Read: an RTT sample was taken.
    pub rd_rtt_valid: Signal<Out, Bit>,
    /// Read: ECN EWMA (16.16).
    pub rd_ecn_ewma: Signal<Out, Bits<32>>,
    /// Read: loss EWMA (16.16).
    pub rd_loss_ewma: Signal<Out, Bits<32>>,
    /// Read: acked packets since the last move.
    pub rd_samples: Signal<Out, Bits<32>>,
    /// Read: data packets sent.
    pub rd_sent: Signal<Out, Bits<32>>,
    /// Read: retransmissions sent.
    pub rd_retransmitted: Signal<Out, Bits<32>>,
    /// Read: packets acknowledged.
    pub rd_acked: Signal<Out, Bits<32>>,
    /// Read: packets lost.
    pub rd_lost: Signal<Out, Bits<32>>,
    /// Read: CE marks counted.
    pub rd_ce_marked: Signal<Out, Bits<32>>,
    /// Read: moves.
    pub rd_repaths: Signal<Out, Bits<32>>,
    /// Read: timeouts.
    pub rd_timeouts: Signal<Out, Bits<32>>,
    /// Read: quarantined.
    pub rd_quarantined: Signal<Out, Bit>,
    /// Read: probe backoff multiplier.
    pub rd_backoff: Signal<Out, Bits<4>>,
    /// Read: `TxPath::can_send(rd_len)`.
    pub rd_can_send: Signal<Out, Bit>,
    /// Slot the TX table's capture port shows (a second read port).
    pub cap_slot: Signal<In, Bits<TX_SLOT_BITS>>,
    /// Capture port: the slot's fields packed (`crate::tx_path::VIEW_BITS`).
    pub cap_view: Signal<Out, Bits<VIEW_BITS>>,
    /// Fate event (and `res_valid` suppressed) from an ACK the hardware
    /// applied; its slot is the next `m_ackrx_slot`.
    pub m_fate_hw: Signal<Out, Bit>,
    /// Pulse: the ACK receiver applied an ACK to the table.
    pub m_ackrx_valid: Signal<Out, Bit>,
    /// Its TX table slot.
    pub m_ackrx_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
    /// Data packets it acknowledged.
    pub m_ackrx_pkts: Signal<Out, Bits<32>>,
    /// Bytes it acknowledged.
    pub m_ackrx_bytes: Signal<Out, Bits<32>>,
    /// The ACK's `conn_cum`.
    pub m_ackrx_conn_cum: Signal<Out, Bits<32>>,
    /// ACKs applied by the hardware.
    pub ackrx_cnt_applied: Signal<Out, Bits<32>>,
    /// Valid ACKs for an unmapped (QPN, path): left to the firmware.
    pub ackrx_cnt_unmapped: Signal<Out, Bits<32>>,
    /// ACKs dropped: the ACK receiver's queue was full.
    pub ackrx_cnt_overflow: Signal<Out, Bits<32>>,
    /// ACKs not applied because the event did not match the tapped datagram.
    pub ackrx_cnt_pair_err: Signal<Out, Bits<32>>,
    /// ACKs the ACK receiver refused as impossible (spec §5.5 step 0;
    /// nothing applied, no `m_ackrx_valid`); it counts in the cycle after
    /// the refused ACK's turn.
    pub ackrx_cnt_refused: Signal<Out, Bits<32>>,
    /// Firmware receive queue: the bytes of a datagram handed up (verdict 10).
    pub m_fw_tdata: Signal<Out, Bits<W>>,
    /// Firmware receive queue: byte enables (packed).
    pub m_fw_tkeep: Signal<Out, Bits<B>>,
    /// Firmware receive queue: beat valid.
    pub m_fw_tvalid: Signal<Out, Bit>,
    /// Firmware receive queue: the firmware takes the beat.
    pub m_fw_tready: Signal<In, Bit>,
    /// Firmware receive queue: last beat.
    pub m_fw_tlast: Signal<Out, Bit>,
    /// Firmware receive queue: the datagram's length in bytes.
    pub m_fw_len: Signal<Out, Bits<16>>,
    /// Firmware receive queue: only the datagram's first bytes came up.
    pub m_fw_trunc: Signal<Out, Bit>,
    /// Firmware receive queue: the datagram's UDP source port.
    pub m_fw_src_port: Signal<Out, Bits<16>>,
    /// Datagrams handed to the firmware.
    pub fw_cnt_up: Signal<Out, Bits<32>>,
    /// Of which cut to the queue's slot size.
    pub fw_cnt_trunc: Signal<Out, Bits<32>>,
    /// Firmware transmit port: a datagram the firmware built whole (NACK,
    /// DISCONNECT; up to 128 bytes), lane 0 first, packed `tkeep`; framed
    /// by the ACK framer between ACKs.
    pub s_fwtx_tdata: Signal<In, Bits<W>>,
    /// Firmware transmit port: byte enables.
    pub s_fwtx_tkeep: Signal<In, Bits<B>>,
    /// Firmware transmit port: beat valid.
    pub s_fwtx_tvalid: Signal<In, Bit>,
    /// Firmware transmit port: the framer takes the beat.
    pub s_fwtx_tready: Signal<Out, Bit>,
    /// Firmware transmit port: last beat.
    pub s_fwtx_tlast: Signal<In, Bit>,
    /// Firmware transmit port: destination IP (IPv4 mapped into IPv6),
    /// with the first beat.
    pub s_fwtx_dst_ip: Signal<In, Bits<128>>,
    /// Firmware transmit port: UDP source port, with the first beat.
    pub s_fwtx_src_port: Signal<In, Bits<16>>,
    /// Firmware transmit port: UDP destination port, with the first beat.
    pub s_fwtx_dst_port: Signal<In, Bits<16>>,
    /// Frames of datagrams from the firmware sent (of `ack_cnt_frames`).
    pub fwtx_cnt_frames: Signal<Out, Bits<32>>,

    rx: NicRx<W, B>,
    tx: TxBuild<W, B>,
    ackf: AckFrame<W, B>,
    arb: TxArb<W, B>,
    paths: TxPathTable<TX_SLOT_BITS>,
    ackrx: AckRx<W, B, TX_SLOT_BITS>,
    fwrx: FwRx<W, B>,
}

impl<const W: usize, const B: usize> Logic for NicCore<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.rx.clock.next = self.clock.val();
        self.tx.clock.next = self.clock.val();
        self.ackf.clock.next = self.clock.val();
        self.arb.clock.next = self.clock.val();
        self.paths.clock.next = self.clock.val();
        self.ackrx.clock.next = self.clock.val();
        self.rx.rst.next = self.rst.val();
        self.tx.rst.next = self.rst.val();
        self.ackf.rst.next = self.rst.val();
        self.arb.rst.next = self.rst.val();
        self.paths.rst.next = self.rst.val();
        self.ackrx.rst.next = self.rst.val();

        // One configuration port, two maps.
        self.rx.cfg.we.next = self.cfg.we.val() & !self.cfg.addr.val().get_bit(9);
        self.tx.cfg_we.next =
            self.cfg.we.val() & self.cfg.addr.val().get_bit(9) & !self.cfg.addr.val().get_bit(8);
        self.rx.cfg.addr.next = self.cfg.addr.val().get_bits::<9>(0);
        self.tx.cfg_addr.next = self.cfg.addr.val().get_bits::<8>(0);
        self.rx.cfg.data.next = self.cfg.data.val();
        self.tx.cfg_data.next = self.cfg.data.val();
        self.ackrx.cfg_we.next = self.cfg.we.val()
            & self.cfg.addr.val().get_bit(9)
            & !self.cfg.addr.val().get_bit(8)
            & self.cfg.addr.val().get_bit(7)
            & !self.cfg.addr.val().get_bit(6);
        self.ackrx.cfg_addr.next = self.cfg.addr.val().get_bits::<6>(0);
        self.ackrx.cfg_data.next = self.cfg.data.val().get_bits::<49>(0);

        // Receive side.
        AxisIn::<W, B>::link(&mut self.s_axis, &mut self.rx.s_axis);
        self.rx.eth_cfg_port_we.next = self.eth_cfg_port_we.val();
        self.rx.eth_cfg_port.next = self.eth_cfg_port.val();
        CounterPort::<4>::link(&mut self.eth_cnt, &mut self.rx.eth_cnt);
        EthEvOut::link(&mut self.m_eth_ev, &mut self.rx.m_eth_ev);
        self.rx.now.next = self.now.val();
        DmaWriteOut::<W, B>::link(&mut self.m_dma, &mut self.rx.m_dma);
        VerdictOut::link(&mut self.m_ev, &mut self.rx.m_ev);
        CounterPort::<5>::link(&mut self.cnt, &mut self.rx.cnt);

        // ACK datagrams into the framer, with the TX builder's addresses.
        self.ackf.s_ack_tdata.next = self.rx.m_ack.tdata.val();
        self.ackf.s_ack_tkeep.next = self.rx.m_ack.tkeep.val();
        self.ackf.s_ack_tvalid.next = self.rx.m_ack.tvalid.val();
        self.rx.m_ack.tready.next = self.ackf.s_ack_tready.val();
        self.ackf.s_ack_tlast.next = self.rx.m_ack.tlast.val();
        self.ackf.s_ack_dst_ip.next = self.rx.m_ack.dst_ip.val();
        self.ackf.s_ack_src_port.next = self.rx.m_ack.src_port.val();
        self.ackf.s_ack_dst_port.next = self.rx.m_ack.dst_port.val();
        self.ackf.s_ack_ece.next = self.rx.m_ack.ece.val();
        self.ackf.reg_local_mac.next = self.tx.reg_local_mac.val();
        self.ackf.reg_peer_mac.next = self.tx.reg_peer_mac.val();
        self.ackf.reg_local_ip.next = self.tx.reg_local_ip.val();
        self.ackf.reg_local_ip6.next = self.tx.reg_local_ip6.val();
        self.ackf.reg_ttl.next = self.tx.reg_ttl.val();
        self.ackf.reg_dscp.next = self.tx.reg_dscp.val();
        self.ack_cnt_frames.next = self.ackf.cnt_frames.val();
        self.ack_cnt_ece.next = self.ackf.cnt_ece.val();
        self.ack_cnt_v6.next = self.ackf.cnt_v6.val();
        // The firmware's own datagrams (NACK, DISCONNECT), framed between ACKs.
        self.ackf.s_fw_tdata.next = self.s_fwtx_tdata.val();
        self.ackf.s_fw_tkeep.next = self.s_fwtx_tkeep.val();
        self.ackf.s_fw_tvalid.next = self.s_fwtx_tvalid.val();
        self.s_fwtx_tready.next = self.ackf.s_fw_tready.val();
        self.ackf.s_fw_tlast.next = self.s_fwtx_tlast.val();
        self.ackf.s_fw_dst_ip.next = self.s_fwtx_dst_ip.val();
        self.ackf.s_fw_src_port.next = self.s_fwtx_src_port.val();
        self.ackf.s_fw_dst_port.next = self.s_fwtx_dst_port.val();
        self.fwtx_cnt_frames.next = self.ackf.cnt_fw.val();

        // TX builder.
        self.tx.s_desc_valid.next = self.s_desc_valid.val();
        self.s_desc_ready.next = self.tx.s_desc_ready.val();
        self.tx.s_desc_opcode.next = self.s_desc_opcode.val();
        self.tx.s_desc_flags.next = self.s_desc_flags.val();
        self.tx.s_desc_dst_qpn.next = self.s_desc_dst_qpn.val();
        self.tx.s_desc_src_qpn.next = self.s_desc_src_qpn.val();
        self.tx.s_desc_stream.next = self.s_desc_stream.val();
        self.tx.s_desc_path.next = self.s_desc_path.val();
        self.tx.s_desc_conn_psn.next = self.s_desc_conn_psn.val();
        self.tx.s_desc_path_psn.next = self.s_desc_path_psn.val();
        self.tx.s_desc_timestamp.next = self.s_desc_timestamp.val();
        self.tx.s_desc_msn.next = self.s_desc_msn.val();
        self.tx.s_desc_recv_idx.next = self.s_desc_recv_idx.val();
        self.tx.s_desc_msg_len.next = self.s_desc_msg_len.val();
        self.tx.s_desc_offset.next = self.s_desc_offset.val();
        self.tx.s_desc_remote_va.next = self.s_desc_remote_va.val();
        self.tx.s_desc_rkey.next = self.s_desc_rkey.val();
        self.tx.s_desc_imm.next = self.s_desc_imm.val();
        self.tx.s_desc_len.next = self.s_desc_len.val();
        self.tx.s_desc_addr.next = self.s_desc_addr.val();
        self.tx.s_desc_ecn.next = self.s_desc_ecn.val();
        self.m_rd_valid.next = self.tx.m_rd_valid.val();
        self.tx.m_rd_ready.next = self.m_rd_ready.val();
        self.m_rd_addr.next = self.tx.m_rd_addr.val();
        self.m_rd_len.next = self.tx.m_rd_len.val();
        self.tx.s_pay_tdata.next = self.s_pay_tdata.val();
        self.tx.s_pay_tkeep.next = self.s_pay_tkeep.val();
        self.tx.s_pay_tvalid.next = self.s_pay_tvalid.val();
        self.s_pay_tready.next = self.tx.s_pay_tready.val();
        self.tx.s_pay_tlast.next = self.s_pay_tlast.val();
        self.m_err.next = self.tx.m_err.val();

        // Both frame sources into the arbiter, the arbiter to the MAC.
        self.arb.s_ack_tdata.next = self.ackf.m_axis_tdata.val();
        self.arb.s_ack_tkeep.next = self.ackf.m_axis_tkeep.val();
        self.arb.s_ack_tvalid.next = self.ackf.m_axis_tvalid.val();
        self.ackf.m_axis_tready.next = self.arb.s_ack_tready.val();
        self.arb.s_ack_tlast.next = self.ackf.m_axis_tlast.val();
        self.arb.s_data_tdata.next = self.tx.m_axis_tdata.val();
        self.arb.s_data_tkeep.next = self.tx.m_axis_tkeep.val();
        self.arb.s_data_tvalid.next = self.tx.m_axis_tvalid.val();
        self.tx.m_axis_tready.next = self.arb.s_data_tready.val();
        self.arb.s_data_tlast.next = self.tx.m_axis_tlast.val();
        self.arb.m_axis_tready.next = self.m_axis.tready.val();
        self.m_axis.tdata.next = self.arb.m_axis_tdata.val();
        self.m_axis.tkeep.next = self.arb.m_axis_tkeep.val();
        self.m_axis.tvalid.next = self.arb.m_axis_tvalid.val();
        self.m_axis.tlast.next = self.arb.m_axis_tlast.val();

        // Firmware receive queue: the core's input and events; it holds the
        // input while full.
        self.fwrx.clock.next = self.clock.val();
        self.fwrx.rst.next = self.rst.val();
        self.fwrx.s_tdata.next = self.rx.m_tap.tdata.val();
        self.fwrx.s_tkeep.next = self.rx.m_tap.tkeep.val();
        self.fwrx.s_tvalid.next = self.rx.m_tap.tvalid.val();
        self.fwrx.s_tlast.next = self.rx.m_tap.tlast.val();
        self.fwrx.ev_valid.next = self.m_ev.valid.val();
        self.fwrx.ev_code.next = self.m_ev.code.val();
        self.fwrx.ev_src_port.next = self.m_ev.src_port.val();
        self.rx.s_hold.next = self.fwrx.hold.val();
        self.m_fw_tdata.next = self.fwrx.m_fw_tdata.val();
        self.m_fw_tkeep.next = self.fwrx.m_fw_tkeep.val();
        self.m_fw_tvalid.next = self.fwrx.m_fw_tvalid.val();
        self.fwrx.m_fw_tready.next = self.m_fw_tready.val();
        self.m_fw_tlast.next = self.fwrx.m_fw_tlast.val();
        self.m_fw_len.next = self.fwrx.m_fw_len.val();
        self.m_fw_trunc.next = self.fwrx.m_fw_trunc.val();
        self.m_fw_src_port.next = self.fwrx.m_fw_src_port.val();
        self.fw_cnt_up.next = self.fwrx.cnt_up.val();
        self.fw_cnt_trunc.next = self.fwrx.cnt_trunc.val();

        // ACK receiver: the core's input and events.
        self.ackrx.s_tdata.next = self.rx.m_tap.tdata.val();
        self.ackrx.s_tvalid.next = self.rx.m_tap.tvalid.val();
        self.ackrx.s_tlast.next = self.rx.m_tap.tlast.val();
        self.ackrx.ev_valid.next = self.m_ev.valid.val();
        self.ackrx.ev_code.next = self.m_ev.code.val();
        self.ackrx.ev_opcode.next = self.m_ev.opcode.val();
        self.ackrx.ev_dst_qpn.next = self.m_ev.dst_qpn.val();
        self.ackrx.ev_path.next = self.m_ev.path.val();
        self.ackrx.ev_path_psn.next = self.m_ev.path_psn.val();
        self.ackrx.ev_timestamp.next = self.m_ev.timestamp.val();
        self.ackrx.now.next = self.now.val();
        self.ackrx.fw_op_valid.next = self.op_valid.val();
        self.ackrx.t_op_ready.next = self.paths.op_ready.val();
        self.ackrx.t_res_valid.next = self.paths.res_valid.val();
        self.ackrx.t_res_pkts.next = self.paths.res_pkts.val();
        self.ackrx.t_res_bytes.next = self.paths.res_bytes.val();
        self.paths.ck_slot.next = self.ackrx.ck_slot.val();
        self.ackrx.ck_una.next = self.paths.ck_una.val();
        self.ackrx.ck_next_psn.next = self.paths.ck_next_psn.val();
        self.ackrx.ck_last_ce.next = self.paths.ck_last_ce.val();
        self.ackrx.ck_quarantined.next = self.paths.ck_quarantined.val();
        self.ackrx_cnt_refused.next = self.ackrx.cnt_refused.val();
        self.m_fate_hw.next = self.ackrx.busy.val();
        self.m_ackrx_valid.next = self.ackrx.m_done_valid.val();
        self.m_ackrx_slot.next = self.ackrx.m_done_slot.val();
        self.m_ackrx_pkts.next = self.ackrx.m_done_pkts.val();
        self.m_ackrx_bytes.next = self.ackrx.m_done_bytes.val();
        self.m_ackrx_conn_cum.next = self.ackrx.m_done_conn_cum.val();
        self.ackrx_cnt_applied.next = self.ackrx.cnt_applied.val();
        self.ackrx_cnt_unmapped.next = self.ackrx.cnt_unmapped.val();
        self.ackrx_cnt_overflow.next = self.ackrx.cnt_overflow.val();
        self.ackrx_cnt_pair_err.next = self.ackrx.cnt_pair_err.val();

        // Per-path TX table: the firmware's ports, or the ACK receiver's
        // Ack/Feedback operands while it holds the table (`sel`); the
        // firmware sees op_ready low then, and no res_valid for ours.
        if self.ackrx.sel.val() {
            self.paths.op_valid.next = self.ackrx.a_op_valid.val();
            self.paths.op_code.next = self.ackrx.a_op_code.val();
            self.paths.op_slot.next = self.ackrx.a_op_slot.val();
            self.paths.op_psn.next = self.ackrx.a_op_psn.val();
            self.paths.op_sack.next = self.ackrx.a_op_sack.val();
            self.paths.op_rtt_valid.next = self.ackrx.a_op_rtt_valid.val();
            self.paths.op_rtt.next = self.ackrx.a_op_rtt.val();
            self.paths.op_ce_count.next = self.ackrx.a_op_ce_count.val();
            self.paths.op_acked.next = self.ackrx.a_op_acked.val();
        } else {
            self.paths.op_valid.next = self.op_valid.val();
            self.paths.op_code.next = self.op_code.val();
            self.paths.op_slot.next = self.op_slot.val();
            self.paths.op_psn.next = self.op_psn.val();
            self.paths.op_sack.next = self.op_sack.val();
            self.paths.op_rtt_valid.next = self.op_rtt_valid.val();
            self.paths.op_rtt.next = self.op_rtt.val();
            self.paths.op_ce_count.next = self.op_ce_count.val();
            self.paths.op_acked.next = self.op_acked.val();
        }
        self.op_ready.next = self.paths.op_ready.val() & !self.ackrx.sel.val();
        self.paths.op_len.next = self.op_len.val();
        self.paths.op_probe.next = self.op_probe.val();
        self.paths.op_retx.next = self.op_retx.val();
        self.paths.op_value.next = self.op_value.val();
        self.res_valid.next = self.paths.res_valid.val() & !self.ackrx.busy.val();
        self.res_ok.next = self.paths.res_ok.val();
        self.res_psn.next = self.paths.res_psn.val();
        self.res_pkts.next = self.paths.res_pkts.val();
        self.res_bytes.next = self.paths.res_bytes.val();
        self.m_fate_valid.next = self.paths.m_fate_valid.val();
        self.paths.m_fate_ready.next = self.m_fate_ready.val();
        self.m_fate_lost.next = self.paths.m_fate_lost.val();
        self.m_fate_conn_psn.next = self.paths.m_fate_conn_psn.val();
        self.paths.rd_slot.next = self.rd_slot.val();
        self.paths.cap_slot.next = self.cap_slot.val();
        self.cap_view.next = self.paths.cap_view.val();
        self.paths.rd_len.next = self.rd_len.val();
        self.rd_entropy.next = self.paths.rd_entropy.val();
        self.rd_next_psn.next = self.paths.rd_next_psn.val();
        self.rd_una.next = self.paths.rd_una.val();
        self.rd_inflight.next = self.paths.rd_inflight.val();
        self.rd_window.next = self.paths.rd_window.val();
        self.rd_srtt.next = self.paths.rd_srtt.val();
        self.rd_rttvar.next = self.paths.rd_rttvar.val();
        self.rd_rtt_valid.next = self.paths.rd_rtt_valid.val();
        self.rd_ecn_ewma.next = self.paths.rd_ecn_ewma.val();
        self.rd_loss_ewma.next = self.paths.rd_loss_ewma.val();
        self.rd_samples.next = self.paths.rd_samples.val();
        self.rd_sent.next = self.paths.rd_sent.val();
        self.rd_retransmitted.next = self.paths.rd_retransmitted.val();
        self.rd_acked.next = self.paths.rd_acked.val();
        self.rd_lost.next = self.paths.rd_lost.val();
        self.rd_ce_marked.next = self.paths.rd_ce_marked.val();
        self.rd_repaths.next = self.paths.rd_repaths.val();
        self.rd_timeouts.next = self.paths.rd_timeouts.val();
        self.rd_quarantined.next = self.paths.rd_quarantined.val();
        self.rd_backoff.next = self.paths.rd_backoff.val();
        self.rd_can_send.next = self.paths.rd_can_send.val();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn emits_at_both_widths_with_every_block() {
        for w in [64, 512] {
            let v = crate::nic_core_verilog(w);
            assert!(v.contains("module top("), "width {w}");
            assert!(v.contains("[9:0] cfg$addr;"), "width {w}");
            for p in ["@HDR_FN@", "@CAPB@", "@OUTB@", "@W@", "@B@"] {
                assert!(!v.contains(p), "{p} left at {w}");
            }
        }
    }
}
