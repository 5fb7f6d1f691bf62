//! Host interface of the NIC: what a host sees of [`crate::NicCore`]
//! through a PCIe endpoint, independent of any vendor's PCIe block.
//!
//! [`HostIf`] and its register file [`RegFile`] sit between the outside
//! and `NicCore`'s firmware ports:
//!
//! * **BAR0** (`bar_*`, [`RegFile`], a native rust-hdl block beside
//!   `HostIf` in [`crate::NicDevice`]): a register read/write port (32-bit
//!   words, 16-bit byte address; a write is taken every cycle, a read is
//!   answered on `bar_rd_resp_*` two cycles after). The registers form a
//!   linked list of self-describing blocks ([`regs`], the one source of
//!   truth, also `docs/regmap.md`): identification, the table port
//!   (`cfg_*`), the counters, the per-path TX table's operation and read
//!   ports, the queue registers and the interrupt moderation. `HostIf`
//!   takes the read/write registers and the write strobes from the
//!   register file and hands it the read-only registers' values.
//! * **Queues in host memory**, read and written through the DMA engine:
//!   the TX queue (128-byte entries, executed in order: descriptors for the
//!   TX builder, table writes and TX table operations), the firmware
//!   transmit queue (256-byte entries: datagrams for the ACK framer's
//!   firmware port), the event ring (64-byte entries: verdict events with
//!   their placement address, ACK receiver results and queued operations'
//!   results each with the slot's state read through the table's capture
//!   port, fate events) and the firmware receive ring (256-byte entries:
//!   the datagrams the core hands up). Device-written entries carry a phase bit in their last
//!   word, written last; consumer indices keep the device from overwriting
//!   unread entries, and full rings back-pressure the core (the MAC RX port
//!   is held at a frame boundary), so no event is lost.
//! * **DMA engine** on a generic request interface: read requests
//!   (`m_dmar_*`: address, length, tag) answered by completion streams
//!   (`s_dmac_*`, lane 0 = the first byte asked for, `tlast` on the
//!   request's last beat, the request's tag on every beat), and write
//!   requests (`m_dmaw_*`: address and length with the first beat, then
//!   the data, lane 0 first). Writes are issued in order and must become
//!   visible in order (PCIe posted writes are). A vendor DMA block
//!   (XDMA/QDMA descriptor bypass, LitePCIe's DMA ports) is a thin shim
//!   under it.
//! * **Interrupts**: the entries each vector counts (`irq_inc*`) and its
//!   moderation registers go to one [`IrqModerator`] per vector (a rust-hdl
//!   kernel) in [`crate::NicDevice`], which puts the requests on its
//!   `m_irq_*` port (a vector number with a valid/ready handshake, for the
//!   shim to turn into an MSI-X message).
//!
//! The firmware transmit queue's engine [`FwTxQueue`], the firmware
//! receive ring's writer [`FwRxRing`] and the event path [`EvRing`] (the
//! event FIFOs and the event ring's writer) are native rust-hdl blocks
//! beside `HostIf` in [`crate::NicDevice`]: `HostIf` hands them their
//! registers, takes their DMA requests into its read and write arbiters,
//! and reads their indices and counters back for the registers and
//! interrupts; `EvRing`'s FIFO fill holds the MAC RX port and the TX
//! queue's table operations here, and `HostIf` gives it the running
//! queued operation's result.
//!
//! `HostIf` is hand-written Verilog (`host_if.v.in`: the TX queue, the
//! DMA arbiters, the TX table's operation port, the MAC RX hold and the
//! counters) with its wiring to the register file generated from
//! [`regs::BLOCKS`]; no rust-hdl model (`update` is empty): it is
//! verified under Verilator inside [`crate::NicDevice`]
//! (`metaroce-sim-tb`, `nic_device`). The register file, the firmware
//! transmit queue, the firmware receive ring's writer and the event path
//! have rust-hdl models and tests ([`reg_file`], [`fw_tx_queue`],
//! [`fw_rx_ring`], [`ev_ring`]). `docs/hardware.md` §18 describes the
//! entry formats and what a vendor shim must provide.

pub mod ev_ring;
pub mod fw_rx_ring;
pub mod fw_tx_queue;
pub mod irq;
pub mod reg_file;
pub mod regs;

use std::fmt::Write as _;

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

use crate::nic_core::TX_SLOT_BITS;
use reg_file::{RO_BITS, RW_BITS, WO_REGS};
use regs::{storage, strobe};

pub use ev_ring::EvRing;
pub use fw_rx_ring::FwRxRing;
pub use fw_tx_queue::FwTxQueue;
pub use irq::IrqModerator;
pub use reg_file::RegFile;

/// Event-FIFO fill (of 64) at which the MAC RX port is held.
pub const EV_HOLD: usize = 16;
/// TX-table-FIFO fill (of 64) at which the MAC RX port is held.
pub const TT_HOLD: usize = 16;
/// Bytes of a TX queue entry (stride); the device reads the first 80.
pub const TXQ_ENTRY: usize = 128;
/// Bytes of a firmware TX queue entry (stride): a 32-byte header, then
/// the datagram.
pub const FTQ_ENTRY: usize = 256;
/// Bytes of an event ring entry.
pub const EVQ_ENTRY: usize = 64;
/// Bytes of a firmware receive ring entry (stride): the datagram's first
/// 128 bytes, then an 8-byte header at +128.
pub const FRQ_ENTRY: usize = 256;

/// Event type in an event ring entry (byte 63, bits 3..0).
pub mod ev_type {
    /// A verdict event (`m_ev_*`).
    pub const VERDICT: u8 = 1;
    /// An ACK applied by the ACK receiver (`m_ackrx_*`), with the first part
    /// of its slot's view; a [`VIEW`] entry follows.
    pub const ACKRX: u8 = 2;
    /// A fate event of the TX table (`m_fate_*`).
    pub const FATE: u8 = 3;
    /// The result of a TX table operation from the TX queue (kind
    /// [`super::txq_kind::TABLE_OP`]), with the first part of its slot's
    /// view; a [`VIEW`] entry follows.
    pub const OP_RESULT: u8 = 4;
    /// The rest of the slot view of the [`ACKRX`] or [`OP_RESULT`] entry
    /// before it.
    pub const VIEW: u8 = 5;
}

/// TX queue entry kinds (byte 79 of an entry).
pub mod txq_kind {
    /// A descriptor for the TX builder.
    pub const DESC: u8 = 0;
    /// A table write (`cfg_*`), in order with the descriptors.
    pub const CFG: u8 = 1;
    /// A TX table operation (the `OP_*` registers' fields), in order with
    /// the descriptors; its result comes back as event entries.
    pub const TABLE_OP: u8 = 2;
}

/// DMA read tags (which client a completion belongs to).
pub mod tag {
    /// A TX queue entry.
    pub const TXQ: u8 = 0;
    /// A payload fetch of the TX builder.
    pub const PAYLOAD: u8 = 1;
    /// A firmware TX entry's header.
    pub const FTQ_HDR: u8 = 2;
    /// A firmware TX entry's datagram.
    pub const FTQ_DATA: u8 = 3;
}

/// The host interface at `W`-bit beats (`B = W / 8` lanes; 64 or 512).
#[derive(LogicBlock, Default)]
pub struct HostIf<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: registers to their reset values, queues empty.
    pub rst: Signal<In, Bit>,
    /// BAR0 write: data (the data of a write-only register's command).
    pub bar_wr_data: Signal<In, Bits<32>>,
    /// The read/write registers ([`RegFile::rw`]).
    pub rw: Signal<In, Bits<RW_BITS>>,
    /// The write-only registers' strobes ([`RegFile::wo`]).
    pub wo: Signal<In, Bits<WO_REGS>>,
    /// BAR accesses to no register ([`RegFile::bad`], `ID.BAR_BAD`).
    pub cnt_bar_bad: Signal<In, Bits<32>>,
    /// The read-only registers' values ([`RegFile::ro`]).
    pub ro: Signal<Out, Bits<RO_BITS>>,
    /// MAC RX (outside): frame beats.
    pub s_axis_tdata: Signal<In, Bits<W>>,
    /// MAC RX (outside): byte enables.
    pub s_axis_tkeep: Signal<In, Bits<B>>,
    /// MAC RX (outside): beat valid.
    pub s_axis_tvalid: Signal<In, Bit>,
    /// MAC RX (outside): beat taken (low while the event FIFOs fill).
    pub s_axis_tready: Signal<Out, Bit>,
    /// MAC RX (outside): last beat.
    pub s_axis_tlast: Signal<In, Bit>,
    /// DMA read request: valid.
    pub m_dmar_valid: Signal<Out, Bit>,
    /// DMA read request: taken.
    pub m_dmar_ready: Signal<In, Bit>,
    /// DMA read request: host address.
    pub m_dmar_addr: Signal<Out, Bits<64>>,
    /// DMA read request: bytes.
    pub m_dmar_len: Signal<Out, Bits<16>>,
    /// DMA read request: tag ([`tag`]).
    pub m_dmar_tag: Signal<Out, Bits<4>>,
    /// DMA read completion: data (lane 0 = the first byte asked for).
    pub s_dmac_tdata: Signal<In, Bits<W>>,
    /// DMA read completion: byte enables (packed).
    pub s_dmac_tkeep: Signal<In, Bits<B>>,
    /// DMA read completion: beat valid.
    pub s_dmac_tvalid: Signal<In, Bit>,
    /// DMA read completion: beat taken.
    pub s_dmac_tready: Signal<Out, Bit>,
    /// DMA read completion: the request's last beat.
    pub s_dmac_tlast: Signal<In, Bit>,
    /// DMA read completion: the request's tag.
    pub s_dmac_tag: Signal<In, Bits<4>>,
    /// DMA write: host address (with the first beat).
    pub m_dmaw_addr: Signal<Out, Bits<64>>,
    /// DMA write: bytes (with the first beat).
    pub m_dmaw_len: Signal<Out, Bits<16>>,
    /// DMA write: first beat of a request.
    pub m_dmaw_first: Signal<Out, Bit>,
    /// DMA write: data, lane 0 first.
    pub m_dmaw_tdata: Signal<Out, Bits<W>>,
    /// DMA write: byte enables (packed).
    pub m_dmaw_tkeep: Signal<Out, Bits<B>>,
    /// DMA write: beat valid.
    pub m_dmaw_tvalid: Signal<Out, Bit>,
    /// DMA write: beat taken.
    pub m_dmaw_tready: Signal<In, Bit>,
    /// DMA write: last beat of the request.
    pub m_dmaw_tlast: Signal<Out, Bit>,
    /// Interrupt vector 0 ([`regs::IRQ_EVQ`]): entries completed this cycle.
    pub irq_inc0: Signal<Out, Bits<2>>,
    /// Vector 1 ([`regs::IRQ_FRQ`]): entries completed this cycle.
    pub irq_inc1: Signal<Out, Bits<2>>,
    /// Vector 2 ([`regs::IRQ_TX`]): entries consumed this cycle.
    pub irq_inc2: Signal<Out, Bits<2>>,
    /// Vector 0 enabled (`IRQ.CTRL0`).
    pub irq_en0: Signal<Out, Bit>,
    /// Vector 1 enabled.
    pub irq_en1: Signal<Out, Bit>,
    /// Vector 2 enabled.
    pub irq_en2: Signal<Out, Bit>,
    /// Vector 0 `COALESCE0`.
    pub irq_coalesce0: Signal<Out, Bits<16>>,
    /// Vector 1 `COALESCE1`.
    pub irq_coalesce1: Signal<Out, Bits<16>>,
    /// Vector 2 `COALESCE2`.
    pub irq_coalesce2: Signal<Out, Bits<16>>,
    /// Vector 0 `HOLDOFF0`.
    pub irq_holdoff0: Signal<Out, Bits<24>>,
    /// Vector 1 `HOLDOFF1`.
    pub irq_holdoff1: Signal<Out, Bits<24>>,
    /// Vector 2 `HOLDOFF2`.
    pub irq_holdoff2: Signal<Out, Bits<24>>,
    /// Vector 0's interrupts taken (`IRQ.COUNT0`), from its moderator.
    pub irq_count0: Signal<In, Bits<32>>,
    /// Vector 1's interrupts taken.
    pub irq_count1: Signal<In, Bits<32>>,
    /// Vector 2's interrupts taken.
    pub irq_count2: Signal<In, Bits<32>>,
    /// Core side: `NicCore::cfg_we`.
    pub c_cfg_we: Signal<Out, Bit>,
    /// Core side: `NicCore::cfg_addr`.
    pub c_cfg_addr: Signal<Out, Bits<10>>,
    /// Core side: `NicCore::cfg_data`.
    pub c_cfg_data: Signal<Out, Bits<64>>,
    /// Core side: `NicCore::s_axis_tdata`.
    pub c_s_axis_tdata: Signal<Out, Bits<W>>,
    /// Core side: `NicCore::s_axis_tkeep`.
    pub c_s_axis_tkeep: Signal<Out, Bits<B>>,
    /// Core side: `NicCore::s_axis_tvalid`.
    pub c_s_axis_tvalid: Signal<Out, Bit>,
    /// Core side: `NicCore::s_axis_tready`.
    pub c_s_axis_tready: Signal<In, Bit>,
    /// Core side: `NicCore::s_axis_tlast`.
    pub c_s_axis_tlast: Signal<Out, Bit>,
    /// Core side: `NicCore::eth_cfg_port_we`.
    pub c_eth_cfg_port_we: Signal<Out, Bit>,
    /// Core side: `NicCore::eth_cfg_port`.
    pub c_eth_cfg_port: Signal<Out, Bits<16>>,
    /// Core side: `NicCore::eth_cnt_sel`.
    pub c_eth_cnt_sel: Signal<Out, Bits<4>>,
    /// Core side: `NicCore::eth_cnt_val`.
    pub c_eth_cnt_val: Signal<In, Bits<32>>,
    /// Core side: `NicCore::m_eth_ev_valid`.
    pub c_m_eth_ev_valid: Signal<In, Bit>,
    /// Core side: `NicCore::m_eth_ev_reason`.
    pub c_m_eth_ev_reason: Signal<In, Bits<4>>,
    /// Core side: `NicCore::m_dma_first`.
    pub c_m_dma_first: Signal<In, Bit>,
    /// Core side: `NicCore::m_dma_addr`.
    pub c_m_dma_addr: Signal<In, Bits<64>>,
    /// Core side: `NicCore::m_dma_len`.
    pub c_m_dma_len: Signal<In, Bits<16>>,
    /// Core side: `NicCore::m_dma_tdata`.
    pub c_m_dma_tdata: Signal<In, Bits<W>>,
    /// Core side: `NicCore::m_dma_tkeep`.
    pub c_m_dma_tkeep: Signal<In, Bits<B>>,
    /// Core side: `NicCore::m_dma_tvalid`.
    pub c_m_dma_tvalid: Signal<In, Bit>,
    /// Core side: `NicCore::m_dma_tready`.
    pub c_m_dma_tready: Signal<Out, Bit>,
    /// Core side: `NicCore::m_dma_tlast`.
    pub c_m_dma_tlast: Signal<In, Bit>,
    /// Core side: `NicCore::cnt_sel`.
    pub c_cnt_sel: Signal<Out, Bits<5>>,
    /// Core side: `NicCore::cnt_val`.
    pub c_cnt_val: Signal<In, Bits<32>>,
    /// Core side: `NicCore::s_desc_valid`.
    pub c_s_desc_valid: Signal<Out, Bit>,
    /// Core side: `NicCore::s_desc_ready`.
    pub c_s_desc_ready: Signal<In, Bit>,
    /// Core side: `NicCore::s_desc_opcode`.
    pub c_s_desc_opcode: Signal<Out, Bits<8>>,
    /// Core side: `NicCore::s_desc_flags`.
    pub c_s_desc_flags: Signal<Out, Bits<16>>,
    /// Core side: `NicCore::s_desc_dst_qpn`.
    pub c_s_desc_dst_qpn: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_src_qpn`.
    pub c_s_desc_src_qpn: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_stream`.
    pub c_s_desc_stream: Signal<Out, Bits<16>>,
    /// Core side: `NicCore::s_desc_path`.
    pub c_s_desc_path: Signal<Out, Bits<16>>,
    /// Core side: `NicCore::s_desc_conn_psn`.
    pub c_s_desc_conn_psn: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_path_psn`.
    pub c_s_desc_path_psn: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_timestamp`.
    pub c_s_desc_timestamp: Signal<Out, Bits<64>>,
    /// Core side: `NicCore::s_desc_msn`.
    pub c_s_desc_msn: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_recv_idx`.
    pub c_s_desc_recv_idx: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_msg_len`.
    pub c_s_desc_msg_len: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_offset`.
    pub c_s_desc_offset: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_remote_va`.
    pub c_s_desc_remote_va: Signal<Out, Bits<64>>,
    /// Core side: `NicCore::s_desc_rkey`.
    pub c_s_desc_rkey: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_imm`.
    pub c_s_desc_imm: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::s_desc_len`.
    pub c_s_desc_len: Signal<Out, Bits<16>>,
    /// Core side: `NicCore::s_desc_addr`.
    pub c_s_desc_addr: Signal<Out, Bits<64>>,
    /// Core side: `NicCore::s_desc_ecn`.
    pub c_s_desc_ecn: Signal<Out, Bit>,
    /// Core side: `NicCore::m_rd_valid`.
    pub c_m_rd_valid: Signal<In, Bit>,
    /// Core side: `NicCore::m_rd_ready`.
    pub c_m_rd_ready: Signal<Out, Bit>,
    /// Core side: `NicCore::m_rd_addr`.
    pub c_m_rd_addr: Signal<In, Bits<64>>,
    /// Core side: `NicCore::m_rd_len`.
    pub c_m_rd_len: Signal<In, Bits<16>>,
    /// Core side: `NicCore::s_pay_tdata`.
    pub c_s_pay_tdata: Signal<Out, Bits<W>>,
    /// Core side: `NicCore::s_pay_tkeep`.
    pub c_s_pay_tkeep: Signal<Out, Bits<B>>,
    /// Core side: `NicCore::s_pay_tvalid`.
    pub c_s_pay_tvalid: Signal<Out, Bit>,
    /// Core side: `NicCore::s_pay_tready`.
    pub c_s_pay_tready: Signal<In, Bit>,
    /// Core side: `NicCore::s_pay_tlast`.
    pub c_s_pay_tlast: Signal<Out, Bit>,
    /// Core side: `NicCore::m_err`.
    pub c_m_err: Signal<In, Bit>,
    /// Core side: `NicCore::ack_cnt_frames`.
    pub c_ack_cnt_frames: Signal<In, Bits<32>>,
    /// Core side: `NicCore::ack_cnt_ece`.
    pub c_ack_cnt_ece: Signal<In, Bits<32>>,
    /// Core side: `NicCore::ack_cnt_v6`.
    pub c_ack_cnt_v6: Signal<In, Bits<32>>,
    /// Core side: `NicCore::op_valid`.
    pub c_op_valid: Signal<Out, Bit>,
    /// Core side: `NicCore::op_ready`.
    pub c_op_ready: Signal<In, Bit>,
    /// Core side: `NicCore::op_code`.
    pub c_op_code: Signal<Out, Bits<3>>,
    /// Core side: `NicCore::op_slot`.
    pub c_op_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
    /// Core side: `NicCore::op_psn`.
    pub c_op_psn: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::op_len`.
    pub c_op_len: Signal<Out, Bits<16>>,
    /// Core side: `NicCore::op_probe`.
    pub c_op_probe: Signal<Out, Bit>,
    /// Core side: `NicCore::op_retx`.
    pub c_op_retx: Signal<Out, Bit>,
    /// Core side: `NicCore::op_sack`.
    pub c_op_sack: Signal<Out, Bits<256>>,
    /// Core side: `NicCore::op_rtt_valid`.
    pub c_op_rtt_valid: Signal<Out, Bit>,
    /// Core side: `NicCore::op_rtt`.
    pub c_op_rtt: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::op_ce_count`.
    pub c_op_ce_count: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::op_acked`.
    pub c_op_acked: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::op_value`.
    pub c_op_value: Signal<Out, Bits<32>>,
    /// Core side: `NicCore::res_valid`.
    pub c_res_valid: Signal<In, Bit>,
    /// Core side: `NicCore::res_ok`.
    pub c_res_ok: Signal<In, Bit>,
    /// Core side: `NicCore::res_psn`.
    pub c_res_psn: Signal<In, Bits<32>>,
    /// Core side: `NicCore::res_pkts`.
    pub c_res_pkts: Signal<In, Bits<32>>,
    /// Core side: `NicCore::res_bytes`.
    pub c_res_bytes: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_slot`.
    pub c_rd_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
    /// Core side: `NicCore::rd_len`.
    pub c_rd_len: Signal<Out, Bits<16>>,
    /// Core side: `NicCore::rd_entropy`.
    pub c_rd_entropy: Signal<In, Bits<16>>,
    /// Core side: `NicCore::rd_next_psn`.
    pub c_rd_next_psn: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_una`.
    pub c_rd_una: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_inflight`.
    pub c_rd_inflight: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_window`.
    pub c_rd_window: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_srtt`.
    pub c_rd_srtt: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_rttvar`.
    pub c_rd_rttvar: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_rtt_valid`.
    pub c_rd_rtt_valid: Signal<In, Bit>,
    /// Core side: `NicCore::rd_ecn_ewma`.
    pub c_rd_ecn_ewma: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_loss_ewma`.
    pub c_rd_loss_ewma: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_samples`.
    pub c_rd_samples: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_sent`.
    pub c_rd_sent: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_retransmitted`.
    pub c_rd_retransmitted: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_acked`.
    pub c_rd_acked: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_lost`.
    pub c_rd_lost: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_ce_marked`.
    pub c_rd_ce_marked: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_repaths`.
    pub c_rd_repaths: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_timeouts`.
    pub c_rd_timeouts: Signal<In, Bits<32>>,
    /// Core side: `NicCore::rd_quarantined`.
    pub c_rd_quarantined: Signal<In, Bit>,
    /// Core side: `NicCore::rd_backoff`.
    pub c_rd_backoff: Signal<In, Bits<4>>,
    /// Core side: `NicCore::rd_can_send`.
    pub c_rd_can_send: Signal<In, Bit>,
    /// Core side: `NicCore::cap_slot`.
    pub c_cap_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
    /// Core side: `NicCore::m_ackrx_valid`.
    pub c_m_ackrx_valid: Signal<In, Bit>,
    /// Core side: `NicCore::m_ackrx_slot`.
    pub c_m_ackrx_slot: Signal<In, Bits<TX_SLOT_BITS>>,
    /// Core side: `NicCore::ackrx_cnt_applied`.
    pub c_ackrx_cnt_applied: Signal<In, Bits<32>>,
    /// Core side: `NicCore::ackrx_cnt_unmapped`.
    pub c_ackrx_cnt_unmapped: Signal<In, Bits<32>>,
    /// Core side: `NicCore::ackrx_cnt_overflow`.
    pub c_ackrx_cnt_overflow: Signal<In, Bits<32>>,
    /// Core side: `NicCore::ackrx_cnt_pair_err`.
    pub c_ackrx_cnt_pair_err: Signal<In, Bits<32>>,
    /// Core side: `NicCore::ackrx_cnt_refused`.
    pub c_ackrx_cnt_refused: Signal<In, Bits<32>>,
    /// `EVQ.CTRL` for the event ring's writer ([`EvRing::ctrl`]).
    pub evq_ctrl: Signal<Out, Bit>,
    /// `EVQ.BASE_HI:BASE_LO`.
    pub evq_base: Signal<Out, Bits<64>>,
    /// `EVQ.SIZE_LOG2`.
    pub evq_size_log2: Signal<Out, Bits<5>>,
    /// `EVQ.CONS`.
    pub evq_cons: Signal<Out, Bits<32>>,
    /// The event ring's DMA write: address ([`EvRing::w_addr`]).
    pub evw_addr: Signal<In, Bits<64>>,
    /// Its bytes.
    pub evw_len: Signal<In, Bits<16>>,
    /// Its first beat.
    pub evw_first: Signal<In, Bit>,
    /// Its data.
    pub evw_tdata: Signal<In, Bits<W>>,
    /// Its byte enables.
    pub evw_tkeep: Signal<In, Bits<B>>,
    /// Its beat valid (from the writer's state alone).
    pub evw_tvalid: Signal<In, Bit>,
    /// The DMA write arbiter gives the writer the port and the beat is taken.
    pub evw_tready: Signal<Out, Bit>,
    /// Its last beat.
    pub evw_tlast: Signal<In, Bit>,
    /// `EVQ.PROD`.
    pub evq_prod: Signal<In, Bits<32>>,
    /// An event entry was written (the vector's count).
    pub evq_inc: Signal<In, Bit>,
    /// `CNT.EV_LOST` ([`EvRing::lost`]).
    pub cnt_ev_lost: Signal<In, Bits<32>>,
    /// An event FIFO is filling: the MAC RX port is held ([`EvRing::hold`]).
    pub ev_hold: Signal<In, Bit>,
    /// The TX-table FIFO has room for a queued operation's result
    /// ([`EvRing::qop_room`]).
    pub ev_qop_room: Signal<In, Bit>,
    /// A queued table operation's result is on the table's result port
    /// ([`EvRing::qres_valid`]).
    pub qres_valid: Signal<Out, Bit>,
    /// The running queued operation's slot.
    pub qop_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
    /// The running queued operation's code.
    pub qop_code: Signal<Out, Bits<3>>,
    /// `FRQ.CTRL` for the firmware receive ring's writer ([`FwRxRing::ctrl`]).
    pub frq_ctrl: Signal<Out, Bit>,
    /// `FRQ.BASE_HI:BASE_LO`.
    pub frq_base: Signal<Out, Bits<64>>,
    /// `FRQ.SIZE_LOG2`.
    pub frq_size_log2: Signal<Out, Bits<5>>,
    /// `FRQ.CONS`.
    pub frq_cons: Signal<Out, Bits<32>>,
    /// The firmware receive ring's DMA write: address ([`FwRxRing::w_addr`]).
    pub frw_addr: Signal<In, Bits<64>>,
    /// Its bytes.
    pub frw_len: Signal<In, Bits<16>>,
    /// Its first beat.
    pub frw_first: Signal<In, Bit>,
    /// Its data.
    pub frw_tdata: Signal<In, Bits<W>>,
    /// Its byte enables.
    pub frw_tkeep: Signal<In, Bits<B>>,
    /// Its beat valid.
    pub frw_tvalid: Signal<In, Bit>,
    /// The DMA write arbiter gives the writer the port and the beat is taken.
    pub frw_tready: Signal<Out, Bit>,
    /// Its last beat.
    pub frw_tlast: Signal<In, Bit>,
    /// `FRQ.PROD`.
    pub frq_prod: Signal<In, Bits<32>>,
    /// A firmware receive entry was written (the vector's count).
    pub frq_inc: Signal<In, Bit>,
    /// Core side: `NicCore::fw_cnt_up`.
    pub c_fw_cnt_up: Signal<In, Bits<32>>,
    /// Core side: `NicCore::fw_cnt_trunc`.
    pub c_fw_cnt_trunc: Signal<In, Bits<32>>,
    /// `FTQ.CTRL` for the firmware TX queue ([`FwTxQueue::ctrl`]).
    pub ftq_ctrl: Signal<Out, Bit>,
    /// `FTQ.PROD`.
    pub ftq_prod: Signal<Out, Bits<32>>,
    /// `FTQ.BASE_HI:BASE_LO`.
    pub ftq_base: Signal<Out, Bits<64>>,
    /// `FTQ.SIZE_LOG2`.
    pub ftq_size_log2: Signal<Out, Bits<5>>,
    /// The firmware TX queue's header read waits ([`FwTxQueue::req_hdr`]).
    pub ftq_req_hdr: Signal<In, Bit>,
    /// Its datagram read waits.
    pub ftq_req_data: Signal<In, Bit>,
    /// The waiting read's address.
    pub ftq_req_addr: Signal<In, Bits<64>>,
    /// The waiting read's bytes.
    pub ftq_req_len: Signal<In, Bits<16>>,
    /// The DMA read arbiter issues the firmware TX queue's read this cycle.
    pub ftq_grant: Signal<Out, Bit>,
    /// A firmware TX entry is consumed this cycle.
    pub ftq_adv: Signal<In, Bit>,
    /// `FTQ.CONS`.
    pub ftq_cons: Signal<In, Bits<32>>,
    /// `CNT.FTQ_BAD`.
    pub cnt_ftq_bad: Signal<In, Bits<32>>,
    /// Core side: `NicCore::fwtx_cnt_frames`.
    pub c_fwtx_cnt_frames: Signal<In, Bits<32>>,
}

impl<const W: usize, const B: usize> Logic for HostIf<W, B> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "HostIf: W must be 8 * B");
        assert!(W == 64 || W == 512, "HostIf: 64 or 512 bits");
        self.ro.connect();
        self.s_axis_tready.connect();
        self.m_dmar_valid.connect();
        self.m_dmar_addr.connect();
        self.m_dmar_len.connect();
        self.m_dmar_tag.connect();
        self.s_dmac_tready.connect();
        self.m_dmaw_addr.connect();
        self.m_dmaw_len.connect();
        self.m_dmaw_first.connect();
        self.m_dmaw_tdata.connect();
        self.m_dmaw_tkeep.connect();
        self.m_dmaw_tvalid.connect();
        self.m_dmaw_tlast.connect();
        self.irq_inc0.connect();
        self.irq_inc1.connect();
        self.irq_inc2.connect();
        self.irq_en0.connect();
        self.irq_en1.connect();
        self.irq_en2.connect();
        self.irq_coalesce0.connect();
        self.irq_coalesce1.connect();
        self.irq_coalesce2.connect();
        self.irq_holdoff0.connect();
        self.irq_holdoff1.connect();
        self.irq_holdoff2.connect();
        self.c_cfg_we.connect();
        self.c_cfg_addr.connect();
        self.c_cfg_data.connect();
        self.c_s_axis_tdata.connect();
        self.c_s_axis_tkeep.connect();
        self.c_s_axis_tvalid.connect();
        self.c_s_axis_tlast.connect();
        self.c_eth_cfg_port_we.connect();
        self.c_eth_cfg_port.connect();
        self.c_eth_cnt_sel.connect();
        self.c_m_dma_tready.connect();
        self.c_cnt_sel.connect();
        self.c_s_desc_valid.connect();
        self.c_s_desc_opcode.connect();
        self.c_s_desc_flags.connect();
        self.c_s_desc_dst_qpn.connect();
        self.c_s_desc_src_qpn.connect();
        self.c_s_desc_stream.connect();
        self.c_s_desc_path.connect();
        self.c_s_desc_conn_psn.connect();
        self.c_s_desc_path_psn.connect();
        self.c_s_desc_timestamp.connect();
        self.c_s_desc_msn.connect();
        self.c_s_desc_recv_idx.connect();
        self.c_s_desc_msg_len.connect();
        self.c_s_desc_offset.connect();
        self.c_s_desc_remote_va.connect();
        self.c_s_desc_rkey.connect();
        self.c_s_desc_imm.connect();
        self.c_s_desc_len.connect();
        self.c_s_desc_addr.connect();
        self.c_s_desc_ecn.connect();
        self.c_m_rd_ready.connect();
        self.c_s_pay_tdata.connect();
        self.c_s_pay_tkeep.connect();
        self.c_s_pay_tvalid.connect();
        self.c_s_pay_tlast.connect();
        self.c_op_valid.connect();
        self.c_op_code.connect();
        self.c_op_slot.connect();
        self.c_op_psn.connect();
        self.c_op_len.connect();
        self.c_op_probe.connect();
        self.c_op_retx.connect();
        self.c_op_sack.connect();
        self.c_op_rtt_valid.connect();
        self.c_op_rtt.connect();
        self.c_op_ce_count.connect();
        self.c_op_acked.connect();
        self.c_op_value.connect();
        self.c_rd_slot.connect();
        self.c_rd_len.connect();
        self.c_cap_slot.connect();
        self.evq_ctrl.connect();
        self.evq_base.connect();
        self.evq_size_log2.connect();
        self.evq_cons.connect();
        self.evw_tready.connect();
        self.qres_valid.connect();
        self.qop_slot.connect();
        self.qop_code.connect();
        self.frq_ctrl.connect();
        self.frq_base.connect();
        self.frq_size_log2.connect();
        self.frq_cons.connect();
        self.frw_tready.connect();
        self.ftq_ctrl.connect();
        self.ftq_prod.connect();
        self.ftq_base.connect();
        self.ftq_size_log2.connect();
        self.ftq_grant.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(host_if_body(W, B))
    }
}

/// The body of the host interface's Verilog module at `w` bits (`b`
/// lanes): `host_if.v.in` with its wiring to the register file generated
/// from [`regs::BLOCKS`].
fn host_if_body(w: usize, b: usize) -> String {
    let (mut decls, mut strobes, mut ro_bus) = (String::new(), String::new(), String::new());
    let mut unused = Vec::new();
    for (i, (block, reg, bits)) in reg_file::rw_regs().into_iter().enumerate() {
        let name = storage(block, &reg);
        writeln!(
            decls,
            "wire [{}:0] {name} = rw[{}*32 +: {bits}];",
            bits - 1,
            i
        )
        .unwrap();
        if bits < 32 {
            unused.push(format!("rw[{}*32+{bits} +: {}]", i, 32 - bits));
        }
    }
    let id = regs::block("ID");
    let scratch = id.regs.iter().find(|r| r.name == "SCRATCH");
    unused.push(storage(id, scratch.expect("ID.SCRATCH")));
    for (i, (block, reg)) in reg_file::wo_regs().into_iter().enumerate() {
        writeln!(strobes, "wire {} = wo[{i}];", strobe(block, &reg)).unwrap();
    }
    for (i, src) in reg_file::ro_sources().into_iter().enumerate() {
        writeln!(ro_bus, "    ro[{i}*32 +: 32] = {src};").unwrap();
    }
    // Beat-indexed writes and reads of the wide buffers as case statements
    // with constant slices (a run-time part-select costs a shifter).
    let wpb = w / 64;
    let words = |k: usize, n: usize, buf: &str| -> String {
        (0..wpb)
            .filter(|j| k * wpb + j < n)
            .map(|j| {
                format!(
                    "{buf}[{}*64 +: 64] <= s_dmac_tdata[{j}*64 +: 64];",
                    k * wpb + j
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let cases = |beats: usize, bits: usize, body: &dyn Fn(usize) -> String| -> String {
        (0..beats)
            .map(|k| format!("                {bits}'d{k}: begin {} end", body(k)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let ds_write = cases(10usize.div_ceil(wpb), 4, &|k| words(k, 10, "pf_buf"));
    include_str!("host_if.v.in")
        .replace("@DS_WRITE@", &ds_write)
        .replace("@REG_DECLS@", &decls)
        .replace("@STROBES@", &strobes)
        .replace("@RW_UNUSED@", &unused.join(", "))
        .replace("@RO_BUS@", &ro_bus)
        .replace("@W@", &w.to_string())
        .replace("@B@", &b.to_string())
}
