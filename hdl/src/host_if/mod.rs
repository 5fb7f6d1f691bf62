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
//! `HostIf` is a native rust-hdl block: its kernel is the wiring (the
//! register file's `rw` bus sliced at places looked up by name in
//! [`regs::BLOCKS`], the strobes, the `ro` bus fed by the signal each
//! read-only register's entry names) around one sub-block per concern:
//! the TX queue's fetcher and held entry ([`TxqFetch`], its kind decoder
//! [`TxqKind`]), the TX table's operation port ([`TxTableOp`]), the DMA
//! read and write arbiters ([`DmaReadArb`], [`DmaWriteArb`]), the MAC RX
//! hold ([`RxHold`]) and the counters ([`HostCounters`]). What a handshake
//! decides reaches only registers' inputs (and the handshake's own
//! outputs), never a kernel's outputs through a shared temporary, so
//! Verilator sees no combinational loop. rust-hdl's simulator runs it (the
//! tests here and in [`txq`]); under Verilator it is part of
//! [`crate::NicDevice`] (`metaroce-sim-tb`, `nic_device`). The register
//! file, the firmware transmit queue, the firmware receive ring's writer
//! and the event path have rust-hdl models and tests too ([`reg_file`],
//! [`fw_tx_queue`], [`fw_rx_ring`], [`ev_ring`]). `docs/hardware.md` §18
//! describes the entry formats and what a vendor shim must provide.

pub mod counters;
pub mod dma_arb;
pub mod ev_ring;
pub mod fw_rx_ring;
pub mod fw_tx_queue;
pub mod irq;
pub mod reg_file;
pub mod regs;
pub mod rx_hold;
pub mod table_op;
pub mod txq;

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};
use crate::nic_core::TX_SLOT_BITS;
use reg_file::{RO_BITS, RW_BITS, WO_REGS, ro_sources, rw_bit, wo_bit};

pub use counters::HostCounters;
pub use dma_arb::{DmaReadArb, DmaWriteArb};
pub use ev_ring::EvRing;
pub use fw_rx_ring::FwRxRing;
pub use fw_tx_queue::FwTxQueue;
pub use irq::IrqModerator;
pub use reg_file::RegFile;
pub use rx_hold::RxHold;
pub use table_op::TxTableOp;
pub use txq::{TxqFetch, TxqKind};

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

native_block! {
    /// The host interface at `W`-bit beats (`B = W / 8` lanes; 64 or 512).
    HostIf[W, B]
    check {
        W == 8 * B && (W == 64 || W == 512),
        "HostIf<{W}, {B}>: 64 or 512 bits, W = 8 * B"
    }
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: registers to their reset values, queues empty.
        rst: Signal<In, Bit>,
        /// BAR0 write: data (the data of a write-only register's command).
        bar_wr_data: Signal<In, Bits<32>>,
        /// The read/write registers ([`RegFile::rw`]).
        rw: Signal<In, Bits<RW_BITS>>,
        /// The write-only registers' strobes ([`RegFile::wo`]).
        wo: Signal<In, Bits<WO_REGS>>,
        /// BAR accesses to no register ([`RegFile::bad`], `ID.BAR_BAD`).
        cnt_bar_bad: Signal<In, Bits<32>>,
        /// The read-only registers' values ([`RegFile::ro`]).
        ro: Signal<Out, Bits<RO_BITS>>,
        /// MAC RX (outside): frame beats.
        s_axis_tdata: Signal<In, Bits<W>>,
        /// MAC RX (outside): byte enables.
        s_axis_tkeep: Signal<In, Bits<B>>,
        /// MAC RX (outside): beat valid.
        s_axis_tvalid: Signal<In, Bit>,
        /// MAC RX (outside): beat taken (low while the event FIFOs fill).
        s_axis_tready: Signal<Out, Bit>,
        /// MAC RX (outside): last beat.
        s_axis_tlast: Signal<In, Bit>,
        /// DMA read request: valid.
        m_dmar_valid: Signal<Out, Bit>,
        /// DMA read request: taken.
        m_dmar_ready: Signal<In, Bit>,
        /// DMA read request: host address.
        m_dmar_addr: Signal<Out, Bits<64>>,
        /// DMA read request: bytes.
        m_dmar_len: Signal<Out, Bits<16>>,
        /// DMA read request: tag ([`tag`]).
        m_dmar_tag: Signal<Out, Bits<4>>,
        /// DMA read completion: data (lane 0 = the first byte asked for).
        s_dmac_tdata: Signal<In, Bits<W>>,
        /// DMA read completion: byte enables (packed).
        s_dmac_tkeep: Signal<In, Bits<B>>,
        /// DMA read completion: beat valid.
        s_dmac_tvalid: Signal<In, Bit>,
        /// DMA read completion: beat taken.
        s_dmac_tready: Signal<Out, Bit>,
        /// DMA read completion: the request's last beat.
        s_dmac_tlast: Signal<In, Bit>,
        /// DMA read completion: the request's tag.
        s_dmac_tag: Signal<In, Bits<4>>,
        /// DMA write: host address (with the first beat).
        m_dmaw_addr: Signal<Out, Bits<64>>,
        /// DMA write: bytes (with the first beat).
        m_dmaw_len: Signal<Out, Bits<16>>,
        /// DMA write: first beat of a request.
        m_dmaw_first: Signal<Out, Bit>,
        /// DMA write: data, lane 0 first.
        m_dmaw_tdata: Signal<Out, Bits<W>>,
        /// DMA write: byte enables (packed).
        m_dmaw_tkeep: Signal<Out, Bits<B>>,
        /// DMA write: beat valid.
        m_dmaw_tvalid: Signal<Out, Bit>,
        /// DMA write: beat taken.
        m_dmaw_tready: Signal<In, Bit>,
        /// DMA write: last beat of the request.
        m_dmaw_tlast: Signal<Out, Bit>,
        /// Interrupt vector 0 ([`regs::IRQ_EVQ`]): entries completed this cycle.
        irq_inc0: Signal<Out, Bits<2>>,
        /// Vector 1 ([`regs::IRQ_FRQ`]): entries completed this cycle.
        irq_inc1: Signal<Out, Bits<2>>,
        /// Vector 2 ([`regs::IRQ_TX`]): entries consumed this cycle.
        irq_inc2: Signal<Out, Bits<2>>,
        /// Vector 0 enabled (`IRQ.CTRL0`).
        irq_en0: Signal<Out, Bit>,
        /// Vector 1 enabled.
        irq_en1: Signal<Out, Bit>,
        /// Vector 2 enabled.
        irq_en2: Signal<Out, Bit>,
        /// Vector 0 `COALESCE0`.
        irq_coalesce0: Signal<Out, Bits<16>>,
        /// Vector 1 `COALESCE1`.
        irq_coalesce1: Signal<Out, Bits<16>>,
        /// Vector 2 `COALESCE2`.
        irq_coalesce2: Signal<Out, Bits<16>>,
        /// Vector 0 `HOLDOFF0`.
        irq_holdoff0: Signal<Out, Bits<24>>,
        /// Vector 1 `HOLDOFF1`.
        irq_holdoff1: Signal<Out, Bits<24>>,
        /// Vector 2 `HOLDOFF2`.
        irq_holdoff2: Signal<Out, Bits<24>>,
        /// Vector 0's interrupts taken (`IRQ.COUNT0`), from its moderator.
        irq_count0: Signal<In, Bits<32>>,
        /// Vector 1's interrupts taken.
        irq_count1: Signal<In, Bits<32>>,
        /// Vector 2's interrupts taken.
        irq_count2: Signal<In, Bits<32>>,
        /// Core side: `NicCore::cfg_we`.
        c_cfg_we: Signal<Out, Bit>,
        /// Core side: `NicCore::cfg_addr`.
        c_cfg_addr: Signal<Out, Bits<10>>,
        /// Core side: `NicCore::cfg_data`.
        c_cfg_data: Signal<Out, Bits<64>>,
        /// Core side: `NicCore::s_axis_tdata`.
        c_s_axis_tdata: Signal<Out, Bits<W>>,
        /// Core side: `NicCore::s_axis_tkeep`.
        c_s_axis_tkeep: Signal<Out, Bits<B>>,
        /// Core side: `NicCore::s_axis_tvalid`.
        c_s_axis_tvalid: Signal<Out, Bit>,
        /// Core side: `NicCore::s_axis_tready`.
        c_s_axis_tready: Signal<In, Bit>,
        /// Core side: `NicCore::s_axis_tlast`.
        c_s_axis_tlast: Signal<Out, Bit>,
        /// Core side: `NicCore::eth_cfg_port_we`.
        c_eth_cfg_port_we: Signal<Out, Bit>,
        /// Core side: `NicCore::eth_cfg_port`.
        c_eth_cfg_port: Signal<Out, Bits<16>>,
        /// Core side: `NicCore::eth_cnt_sel`.
        c_eth_cnt_sel: Signal<Out, Bits<4>>,
        /// Core side: `NicCore::eth_cnt_val`.
        c_eth_cnt_val: Signal<In, Bits<32>>,
        /// Core side: `NicCore::m_eth_ev_valid`.
        c_m_eth_ev_valid: Signal<In, Bit>,
        /// Core side: `NicCore::m_eth_ev_reason`.
        c_m_eth_ev_reason: Signal<In, Bits<4>>,
        /// Core side: `NicCore::m_dma_first`.
        c_m_dma_first: Signal<In, Bit>,
        /// Core side: `NicCore::m_dma_addr`.
        c_m_dma_addr: Signal<In, Bits<64>>,
        /// Core side: `NicCore::m_dma_len`.
        c_m_dma_len: Signal<In, Bits<16>>,
        /// Core side: `NicCore::m_dma_tdata`.
        c_m_dma_tdata: Signal<In, Bits<W>>,
        /// Core side: `NicCore::m_dma_tkeep`.
        c_m_dma_tkeep: Signal<In, Bits<B>>,
        /// Core side: `NicCore::m_dma_tvalid`.
        c_m_dma_tvalid: Signal<In, Bit>,
        /// Core side: `NicCore::m_dma_tready`.
        c_m_dma_tready: Signal<Out, Bit>,
        /// Core side: `NicCore::m_dma_tlast`.
        c_m_dma_tlast: Signal<In, Bit>,
        /// Core side: `NicCore::cnt_sel`.
        c_cnt_sel: Signal<Out, Bits<5>>,
        /// Core side: `NicCore::cnt_val`.
        c_cnt_val: Signal<In, Bits<32>>,
        /// Core side: `NicCore::s_desc_valid`.
        c_s_desc_valid: Signal<Out, Bit>,
        /// Core side: `NicCore::s_desc_ready`.
        c_s_desc_ready: Signal<In, Bit>,
        /// Core side: `NicCore::s_desc_opcode`.
        c_s_desc_opcode: Signal<Out, Bits<8>>,
        /// Core side: `NicCore::s_desc_flags`.
        c_s_desc_flags: Signal<Out, Bits<16>>,
        /// Core side: `NicCore::s_desc_dst_qpn`.
        c_s_desc_dst_qpn: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_src_qpn`.
        c_s_desc_src_qpn: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_stream`.
        c_s_desc_stream: Signal<Out, Bits<16>>,
        /// Core side: `NicCore::s_desc_path`.
        c_s_desc_path: Signal<Out, Bits<16>>,
        /// Core side: `NicCore::s_desc_conn_psn`.
        c_s_desc_conn_psn: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_path_psn`.
        c_s_desc_path_psn: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_timestamp`.
        c_s_desc_timestamp: Signal<Out, Bits<64>>,
        /// Core side: `NicCore::s_desc_msn`.
        c_s_desc_msn: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_recv_idx`.
        c_s_desc_recv_idx: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_msg_len`.
        c_s_desc_msg_len: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_offset`.
        c_s_desc_offset: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_remote_va`.
        c_s_desc_remote_va: Signal<Out, Bits<64>>,
        /// Core side: `NicCore::s_desc_rkey`.
        c_s_desc_rkey: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_imm`.
        c_s_desc_imm: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::s_desc_len`.
        c_s_desc_len: Signal<Out, Bits<16>>,
        /// Core side: `NicCore::s_desc_addr`.
        c_s_desc_addr: Signal<Out, Bits<64>>,
        /// Core side: `NicCore::s_desc_ecn`.
        c_s_desc_ecn: Signal<Out, Bit>,
        /// Core side: `NicCore::m_rd_valid`.
        c_m_rd_valid: Signal<In, Bit>,
        /// Core side: `NicCore::m_rd_ready`.
        c_m_rd_ready: Signal<Out, Bit>,
        /// Core side: `NicCore::m_rd_addr`.
        c_m_rd_addr: Signal<In, Bits<64>>,
        /// Core side: `NicCore::m_rd_len`.
        c_m_rd_len: Signal<In, Bits<16>>,
        /// Core side: `NicCore::s_pay_tdata`.
        c_s_pay_tdata: Signal<Out, Bits<W>>,
        /// Core side: `NicCore::s_pay_tkeep`.
        c_s_pay_tkeep: Signal<Out, Bits<B>>,
        /// Core side: `NicCore::s_pay_tvalid`.
        c_s_pay_tvalid: Signal<Out, Bit>,
        /// Core side: `NicCore::s_pay_tready`.
        c_s_pay_tready: Signal<In, Bit>,
        /// Core side: `NicCore::s_pay_tlast`.
        c_s_pay_tlast: Signal<Out, Bit>,
        /// Core side: `NicCore::m_err`.
        c_m_err: Signal<In, Bit>,
        /// Core side: `NicCore::ack_cnt_frames`.
        c_ack_cnt_frames: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ack_cnt_ece`.
        c_ack_cnt_ece: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ack_cnt_v6`.
        c_ack_cnt_v6: Signal<In, Bits<32>>,
        /// Core side: `NicCore::op_valid`.
        c_op_valid: Signal<Out, Bit>,
        /// Core side: `NicCore::op_ready`.
        c_op_ready: Signal<In, Bit>,
        /// Core side: `NicCore::op_code`.
        c_op_code: Signal<Out, Bits<3>>,
        /// Core side: `NicCore::op_slot`.
        c_op_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        /// Core side: `NicCore::op_psn`.
        c_op_psn: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::op_len`.
        c_op_len: Signal<Out, Bits<16>>,
        /// Core side: `NicCore::op_probe`.
        c_op_probe: Signal<Out, Bit>,
        /// Core side: `NicCore::op_retx`.
        c_op_retx: Signal<Out, Bit>,
        /// Core side: `NicCore::op_sack`.
        c_op_sack: Signal<Out, Bits<256>>,
        /// Core side: `NicCore::op_rtt_valid`.
        c_op_rtt_valid: Signal<Out, Bit>,
        /// Core side: `NicCore::op_rtt`.
        c_op_rtt: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::op_ce_count`.
        c_op_ce_count: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::op_acked`.
        c_op_acked: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::op_value`.
        c_op_value: Signal<Out, Bits<32>>,
        /// Core side: `NicCore::res_valid`.
        c_res_valid: Signal<In, Bit>,
        /// Core side: `NicCore::res_ok`.
        c_res_ok: Signal<In, Bit>,
        /// Core side: `NicCore::res_psn`.
        c_res_psn: Signal<In, Bits<32>>,
        /// Core side: `NicCore::res_pkts`.
        c_res_pkts: Signal<In, Bits<32>>,
        /// Core side: `NicCore::res_bytes`.
        c_res_bytes: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_slot`.
        c_rd_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        /// Core side: `NicCore::rd_len`.
        c_rd_len: Signal<Out, Bits<16>>,
        /// Core side: `NicCore::rd_entropy`.
        c_rd_entropy: Signal<In, Bits<16>>,
        /// Core side: `NicCore::rd_next_psn`.
        c_rd_next_psn: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_una`.
        c_rd_una: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_inflight`.
        c_rd_inflight: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_window`.
        c_rd_window: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_srtt`.
        c_rd_srtt: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_rttvar`.
        c_rd_rttvar: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_rtt_valid`.
        c_rd_rtt_valid: Signal<In, Bit>,
        /// Core side: `NicCore::rd_ecn_ewma`.
        c_rd_ecn_ewma: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_loss_ewma`.
        c_rd_loss_ewma: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_samples`.
        c_rd_samples: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_sent`.
        c_rd_sent: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_retransmitted`.
        c_rd_retransmitted: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_acked`.
        c_rd_acked: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_lost`.
        c_rd_lost: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_ce_marked`.
        c_rd_ce_marked: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_repaths`.
        c_rd_repaths: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_timeouts`.
        c_rd_timeouts: Signal<In, Bits<32>>,
        /// Core side: `NicCore::rd_quarantined`.
        c_rd_quarantined: Signal<In, Bit>,
        /// Core side: `NicCore::rd_backoff`.
        c_rd_backoff: Signal<In, Bits<4>>,
        /// Core side: `NicCore::rd_can_send`.
        c_rd_can_send: Signal<In, Bit>,
        /// Core side: `NicCore::cap_slot`.
        c_cap_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        /// Core side: `NicCore::m_ackrx_valid`.
        c_m_ackrx_valid: Signal<In, Bit>,
        /// Core side: `NicCore::m_ackrx_slot`.
        c_m_ackrx_slot: Signal<In, Bits<TX_SLOT_BITS>>,
        /// Core side: `NicCore::ackrx_cnt_applied`.
        c_ackrx_cnt_applied: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ackrx_cnt_unmapped`.
        c_ackrx_cnt_unmapped: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ackrx_cnt_overflow`.
        c_ackrx_cnt_overflow: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ackrx_cnt_pair_err`.
        c_ackrx_cnt_pair_err: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ackrx_cnt_refused`.
        c_ackrx_cnt_refused: Signal<In, Bits<32>>,
        /// `EVQ.CTRL` for the event ring's writer ([`EvRing::ctrl`]).
        evq_ctrl: Signal<Out, Bit>,
        /// `EVQ.BASE_HI:BASE_LO`.
        evq_base: Signal<Out, Bits<64>>,
        /// `EVQ.SIZE_LOG2`.
        evq_size_log2: Signal<Out, Bits<5>>,
        /// `EVQ.CONS`.
        evq_cons: Signal<Out, Bits<32>>,
        /// The event ring's DMA write: address ([`EvRing::w_addr`]).
        evw_addr: Signal<In, Bits<64>>,
        /// Its bytes.
        evw_len: Signal<In, Bits<16>>,
        /// Its first beat.
        evw_first: Signal<In, Bit>,
        /// Its data.
        evw_tdata: Signal<In, Bits<W>>,
        /// Its byte enables.
        evw_tkeep: Signal<In, Bits<B>>,
        /// Its beat valid (from the writer's state alone).
        evw_tvalid: Signal<In, Bit>,
        /// The DMA write arbiter gives the writer the port and the beat is taken.
        evw_tready: Signal<Out, Bit>,
        /// Its last beat.
        evw_tlast: Signal<In, Bit>,
        /// `EVQ.PROD`.
        evq_prod: Signal<In, Bits<32>>,
        /// An event entry was written (the vector's count).
        evq_inc: Signal<In, Bit>,
        /// `CNT.EV_LOST` ([`EvRing::lost`]).
        cnt_ev_lost: Signal<In, Bits<32>>,
        /// An event FIFO is filling: the MAC RX port is held ([`EvRing::hold`]).
        ev_hold: Signal<In, Bit>,
        /// The TX-table FIFO has room for a queued operation's result ([`EvRing::qop_room`]).
        ev_qop_room: Signal<In, Bit>,
        /// A queued table operation's result is on the table's result port ([`EvRing::qres_valid`]).
        qres_valid: Signal<Out, Bit>,
        /// The running queued operation's slot.
        qop_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        /// The running queued operation's code.
        qop_code: Signal<Out, Bits<3>>,
        /// `FRQ.CTRL` for the firmware receive ring's writer ([`FwRxRing::ctrl`]).
        frq_ctrl: Signal<Out, Bit>,
        /// `FRQ.BASE_HI:BASE_LO`.
        frq_base: Signal<Out, Bits<64>>,
        /// `FRQ.SIZE_LOG2`.
        frq_size_log2: Signal<Out, Bits<5>>,
        /// `FRQ.CONS`.
        frq_cons: Signal<Out, Bits<32>>,
        /// The firmware receive ring's DMA write: address ([`FwRxRing::w_addr`]).
        frw_addr: Signal<In, Bits<64>>,
        /// Its bytes.
        frw_len: Signal<In, Bits<16>>,
        /// Its first beat.
        frw_first: Signal<In, Bit>,
        /// Its data.
        frw_tdata: Signal<In, Bits<W>>,
        /// Its byte enables.
        frw_tkeep: Signal<In, Bits<B>>,
        /// Its beat valid.
        frw_tvalid: Signal<In, Bit>,
        /// The DMA write arbiter gives the writer the port and the beat is taken.
        frw_tready: Signal<Out, Bit>,
        /// Its last beat.
        frw_tlast: Signal<In, Bit>,
        /// `FRQ.PROD`.
        frq_prod: Signal<In, Bits<32>>,
        /// A firmware receive entry was written (the vector's count).
        frq_inc: Signal<In, Bit>,
        /// Core side: `NicCore::fw_cnt_up`.
        c_fw_cnt_up: Signal<In, Bits<32>>,
        /// Core side: `NicCore::fw_cnt_trunc`.
        c_fw_cnt_trunc: Signal<In, Bits<32>>,
        /// `FTQ.CTRL` for the firmware TX queue ([`FwTxQueue::ctrl`]).
        ftq_ctrl: Signal<Out, Bit>,
        /// `FTQ.PROD`.
        ftq_prod: Signal<Out, Bits<32>>,
        /// `FTQ.BASE_HI:BASE_LO`.
        ftq_base: Signal<Out, Bits<64>>,
        /// `FTQ.SIZE_LOG2`.
        ftq_size_log2: Signal<Out, Bits<5>>,
        /// The firmware TX queue's header read waits ([`FwTxQueue::req_hdr`]).
        ftq_req_hdr: Signal<In, Bit>,
        /// Its datagram read waits.
        ftq_req_data: Signal<In, Bit>,
        /// The waiting read's address.
        ftq_req_addr: Signal<In, Bits<64>>,
        /// The waiting read's bytes.
        ftq_req_len: Signal<In, Bits<16>>,
        /// The DMA read arbiter issues the firmware TX queue's read this cycle.
        ftq_grant: Signal<Out, Bit>,
        /// A firmware TX entry is consumed this cycle.
        ftq_adv: Signal<In, Bit>,
        /// `FTQ.CONS`.
        ftq_cons: Signal<In, Bits<32>>,
        /// `CNT.FTQ_BAD`.
        cnt_ftq_bad: Signal<In, Bits<32>>,
        /// Core side: `NicCore::fwtx_cnt_frames`.
        c_fwtx_cnt_frames: Signal<In, Bits<32>>,
    }
    state {
        txq: TxqFetch<W>,
        op: TxTableOp,
        rd: DmaReadArb<W, B>,
        wr: DmaWriteArb<W, B>,
        rxh: RxHold<W, B>,
        cnt: HostCounters,
        // Temporaries: the read-only registers made of several signals;
        // every bit of the `rw` bus, read (the storage bits past each
        // register's width, always 0, and the scratch register are not
        // used here).
        tx_err: Signal<Local, Bits<32>>,
        op_status: Signal<Local, Bits<32>>,
        rd_entropy: Signal<Local, Bits<32>>,
        rd_flags: Signal<Local, Bits<32>>,
        unused_rw: Signal<Local, Bit>,
    }
    consts {
        // The read/write registers on the `rw` bus.
        k_cfg_addr: Constant<Bits<16>> = rw_at("CFG", "CFG_ADDR", "CFG_ADDR", 32),
        k_cfg_data_lo: Constant<Bits<16>> = rw_at("CFG", "CFG_DATA_LO", "CFG_DATA_LO", 32),
        k_cnt_sel: Constant<Bits<16>> = rw_at("CNT", "CNT_SEL", "CNT_SEL", 32),
        k_eth_cnt_sel: Constant<Bits<16>> = rw_at("CNT", "ETH_CNT_SEL", "ETH_CNT_SEL", 32),
        k_op_ctrl: Constant<Bits<16>> = rw_at("TXT", "OP_CTRL", "OP_CTRL", 32),
        k_op_psn: Constant<Bits<16>> = rw_at("TXT", "OP_PSN", "OP_PSN", 32),
        k_op_len: Constant<Bits<16>> = rw_at("TXT", "OP_LEN", "OP_LEN", 32),
        k_op_rtt: Constant<Bits<16>> = rw_at("TXT", "OP_RTT", "OP_RTT", 32),
        k_op_ce_count: Constant<Bits<16>> = rw_at("TXT", "OP_CE_COUNT", "OP_CE_COUNT", 32),
        k_op_acked: Constant<Bits<16>> = rw_at("TXT", "OP_ACKED", "OP_ACKED", 32),
        k_op_value: Constant<Bits<16>> = rw_at("TXT", "OP_VALUE", "OP_VALUE", 32),
        k_op_sack: Constant<Bits<16>> = rw_at("TXT", "OP_SACK0", "OP_SACK7", 256),
        k_rd_slot: Constant<Bits<16>> = rw_at("TXT", "RD_SLOT", "RD_SLOT", 32),
        k_rd_len: Constant<Bits<16>> = rw_at("TXT", "RD_LEN", "RD_LEN", 32),
        k_txq_base: Constant<Bits<16>> = rw_at("TXQ", "BASE_LO", "BASE_HI", 64),
        k_txq_size: Constant<Bits<16>> = rw_at("TXQ", "SIZE_LOG2", "SIZE_LOG2", 32),
        k_txq_ctrl: Constant<Bits<16>> = rw_at("TXQ", "CTRL", "CTRL", 32),
        k_txq_prod: Constant<Bits<16>> = rw_at("TXQ", "PROD", "PROD", 32),
        k_ftq_base: Constant<Bits<16>> = rw_at("FTQ", "BASE_LO", "BASE_HI", 64),
        k_ftq_size: Constant<Bits<16>> = rw_at("FTQ", "SIZE_LOG2", "SIZE_LOG2", 32),
        k_ftq_ctrl: Constant<Bits<16>> = rw_at("FTQ", "CTRL", "CTRL", 32),
        k_ftq_prod: Constant<Bits<16>> = rw_at("FTQ", "PROD", "PROD", 32),
        k_evq_base: Constant<Bits<16>> = rw_at("EVQ", "BASE_LO", "BASE_HI", 64),
        k_evq_size: Constant<Bits<16>> = rw_at("EVQ", "SIZE_LOG2", "SIZE_LOG2", 32),
        k_evq_ctrl: Constant<Bits<16>> = rw_at("EVQ", "CTRL", "CTRL", 32),
        k_evq_cons: Constant<Bits<16>> = rw_at("EVQ", "CONS", "CONS", 32),
        k_frq_base: Constant<Bits<16>> = rw_at("FRQ", "BASE_LO", "BASE_HI", 64),
        k_frq_size: Constant<Bits<16>> = rw_at("FRQ", "SIZE_LOG2", "SIZE_LOG2", 32),
        k_frq_ctrl: Constant<Bits<16>> = rw_at("FRQ", "CTRL", "CTRL", 32),
        k_frq_cons: Constant<Bits<16>> = rw_at("FRQ", "CONS", "CONS", 32),
        k_irq_ctrl0: Constant<Bits<16>> = rw_at("IRQ", "CTRL0", "CTRL0", 32),
        k_irq_ctrl1: Constant<Bits<16>> = rw_at("IRQ", "CTRL1", "CTRL1", 32),
        k_irq_ctrl2: Constant<Bits<16>> = rw_at("IRQ", "CTRL2", "CTRL2", 32),
        k_irq_holdoff0: Constant<Bits<16>> = rw_at("IRQ", "HOLDOFF0", "HOLDOFF0", 32),
        k_irq_holdoff1: Constant<Bits<16>> = rw_at("IRQ", "HOLDOFF1", "HOLDOFF1", 32),
        k_irq_holdoff2: Constant<Bits<16>> = rw_at("IRQ", "HOLDOFF2", "HOLDOFF2", 32),
        k_irq_coalesce0: Constant<Bits<16>> = rw_at("IRQ", "COALESCE0", "COALESCE0", 32),
        k_irq_coalesce1: Constant<Bits<16>> = rw_at("IRQ", "COALESCE1", "COALESCE1", 32),
        k_irq_coalesce2: Constant<Bits<16>> = rw_at("IRQ", "COALESCE2", "COALESCE2", 32),
        // The write-only registers' strobes.
        k_cfg_data_hi: Constant<Bits<16>> = konst(wo_bit("CFG", "CFG_DATA_HI")),
        k_eth_port: Constant<Bits<16>> = konst(wo_bit("CFG", "ETH_PORT")),
        k_op_go: Constant<Bits<16>> = konst(wo_bit("TXT", "OP_GO")),
        // The read-only registers on the `ro` bus, each at the place of the
        // register the table says the signal feeds; the constant ones
        // (`32'dN` in the table) all in one.
        k_ro_fixed: Constant<Bits<RO_BITS>> = ro_fixed(),
        k_ro_cnt_bar_bad: Constant<Bits<16>> = ro_at("cnt_bar_bad"),
        k_ro_cnt_cfg_writes: Constant<Bits<16>> = ro_at("cnt_cfg_writes"),
        k_ro_c_cnt_val: Constant<Bits<16>> = ro_at("c_cnt_val"),
        k_ro_c_eth_cnt_val: Constant<Bits<16>> = ro_at("c_eth_cnt_val"),
        k_ro_c_ack_cnt_frames: Constant<Bits<16>> = ro_at("c_ack_cnt_frames"),
        k_ro_c_ack_cnt_ece: Constant<Bits<16>> = ro_at("c_ack_cnt_ece"),
        k_ro_c_ack_cnt_v6: Constant<Bits<16>> = ro_at("c_ack_cnt_v6"),
        k_ro_c_ackrx_cnt_applied: Constant<Bits<16>> = ro_at("c_ackrx_cnt_applied"),
        k_ro_c_ackrx_cnt_unmapped: Constant<Bits<16>> = ro_at("c_ackrx_cnt_unmapped"),
        k_ro_c_ackrx_cnt_overflow: Constant<Bits<16>> = ro_at("c_ackrx_cnt_overflow"),
        k_ro_c_ackrx_cnt_pair_err: Constant<Bits<16>> = ro_at("c_ackrx_cnt_pair_err"),
        k_ro_c_ackrx_cnt_refused: Constant<Bits<16>> = ro_at("c_ackrx_cnt_refused"),
        k_ro_c_fw_cnt_up: Constant<Bits<16>> = ro_at("c_fw_cnt_up"),
        k_ro_c_fw_cnt_trunc: Constant<Bits<16>> = ro_at("c_fw_cnt_trunc"),
        k_ro_c_fwtx_cnt_frames: Constant<Bits<16>> = ro_at("c_fwtx_cnt_frames"),
        k_ro_tx_err: Constant<Bits<16>> = ro_at("tx_err"),
        k_ro_cnt_eth_frames: Constant<Bits<16>> = ro_at("cnt_eth_frames"),
        k_ro_cnt_eth_drops: Constant<Bits<16>> = ro_at("cnt_eth_drops"),
        k_ro_cnt_rx_hold: Constant<Bits<16>> = ro_at("cnt_rx_hold"),
        k_ro_cnt_ev_lost: Constant<Bits<16>> = ro_at("cnt_ev_lost"),
        k_ro_cnt_txq_bad: Constant<Bits<16>> = ro_at("cnt_txq_bad"),
        k_ro_cnt_ftq_bad: Constant<Bits<16>> = ro_at("cnt_ftq_bad"),
        k_ro_cnt_bad_tag: Constant<Bits<16>> = ro_at("cnt_bad_tag"),
        k_ro_cnt_txq_ops: Constant<Bits<16>> = ro_at("cnt_txq_ops"),
        k_ro_op_status: Constant<Bits<16>> = ro_at("op_status"),
        k_ro_op_res_psn: Constant<Bits<16>> = ro_at("op_res_psn"),
        k_ro_op_res_pkts: Constant<Bits<16>> = ro_at("op_res_pkts"),
        k_ro_op_res_bytes: Constant<Bits<16>> = ro_at("op_res_bytes"),
        k_ro_rd_entropy: Constant<Bits<16>> = ro_at("rd_entropy"),
        k_ro_c_rd_next_psn: Constant<Bits<16>> = ro_at("c_rd_next_psn"),
        k_ro_c_rd_una: Constant<Bits<16>> = ro_at("c_rd_una"),
        k_ro_c_rd_inflight: Constant<Bits<16>> = ro_at("c_rd_inflight"),
        k_ro_c_rd_window: Constant<Bits<16>> = ro_at("c_rd_window"),
        k_ro_c_rd_srtt: Constant<Bits<16>> = ro_at("c_rd_srtt"),
        k_ro_c_rd_rttvar: Constant<Bits<16>> = ro_at("c_rd_rttvar"),
        k_ro_c_rd_ecn_ewma: Constant<Bits<16>> = ro_at("c_rd_ecn_ewma"),
        k_ro_c_rd_loss_ewma: Constant<Bits<16>> = ro_at("c_rd_loss_ewma"),
        k_ro_c_rd_samples: Constant<Bits<16>> = ro_at("c_rd_samples"),
        k_ro_c_rd_sent: Constant<Bits<16>> = ro_at("c_rd_sent"),
        k_ro_c_rd_retransmitted: Constant<Bits<16>> = ro_at("c_rd_retransmitted"),
        k_ro_c_rd_acked: Constant<Bits<16>> = ro_at("c_rd_acked"),
        k_ro_c_rd_lost: Constant<Bits<16>> = ro_at("c_rd_lost"),
        k_ro_c_rd_ce_marked: Constant<Bits<16>> = ro_at("c_rd_ce_marked"),
        k_ro_c_rd_repaths: Constant<Bits<16>> = ro_at("c_rd_repaths"),
        k_ro_c_rd_timeouts: Constant<Bits<16>> = ro_at("c_rd_timeouts"),
        k_ro_rd_flags: Constant<Bits<16>> = ro_at("rd_flags"),
        k_ro_txq_cons: Constant<Bits<16>> = ro_at("txq_cons"),
        k_ro_ftq_cons: Constant<Bits<16>> = ro_at("ftq_cons"),
        k_ro_evq_prod: Constant<Bits<16>> = ro_at("evq_prod"),
        k_ro_frq_prod: Constant<Bits<16>> = ro_at("frq_prod"),
        k_ro_irq_count0: Constant<Bits<16>> = ro_at("irq_count0"),
        k_ro_irq_count1: Constant<Bits<16>> = ro_at("irq_count1"),
        k_ro_irq_count2: Constant<Bits<16>> = ro_at("irq_count2"),
    }
}

impl<const W: usize, const B: usize> Logic for HostIf<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.txq.clock.next = self.clock.val();
        self.op.clock.next = self.clock.val();
        self.wr.clock.next = self.clock.val();
        self.rxh.clock.next = self.clock.val();
        self.cnt.clock.next = self.clock.val();
        self.txq.rst.next = self.rst.val();
        self.op.rst.next = self.rst.val();
        self.wr.rst.next = self.rst.val();
        self.rxh.rst.next = self.rst.val();
        self.cnt.rst.next = self.rst.val();
        self.unused_rw.next = self.rw.val().xor();

        // ---- the table port (registers or the TX queue), counter selects ----
        self.c_cfg_we.next =
            self.wo.val().get_bit(self.k_cfg_data_hi.val().index()) | self.txq.cfg_go.val();
        self.c_cfg_addr.next = self.txq.ds.val().get_bits::<10>(64);
        self.c_cfg_data.next = self.txq.ds.val().get_bits::<64>(0);
        if self.wo.val().get_bit(self.k_cfg_data_hi.val().index()) {
            self.c_cfg_addr.next = self.rw.val().get_bits::<10>(self.k_cfg_addr.val().index());
            self.c_cfg_data.next = (bit_cast::<64, 32>(self.bar_wr_data.val()) << 32)
                | bit_cast::<64, 32>(
                    self.rw
                        .val()
                        .get_bits::<32>(self.k_cfg_data_lo.val().index()),
                );
        }
        self.c_eth_cfg_port_we.next = self.wo.val().get_bit(self.k_eth_port.val().index());
        self.c_eth_cfg_port.next = self.bar_wr_data.val().get_bits::<16>(0);
        self.c_cnt_sel.next = self.rw.val().get_bits::<5>(self.k_cnt_sel.val().index());
        self.c_eth_cnt_sel.next = self
            .rw
            .val()
            .get_bits::<4>(self.k_eth_cnt_sel.val().index());
        self.c_rd_slot.next = self
            .rw
            .val()
            .get_bits::<TX_SLOT_BITS>(self.k_rd_slot.val().index());
        self.c_rd_len.next = self.rw.val().get_bits::<16>(self.k_rd_len.val().index());
        self.cnt.cfg_we.next = self.c_cfg_we.val();
        self.cnt.eth_ev_valid.next = self.c_m_eth_ev_valid.val();
        self.cnt.eth_ev_reason.next = self.c_m_eth_ev_reason.val();
        self.cnt.dmac_tvalid.next = self.s_dmac_tvalid.val();
        self.cnt.dmac_tag.next = self.s_dmac_tag.val();

        // ---- the TX queue ----
        self.txq.ctrl.next = self.rw.val().get_bit(self.k_txq_ctrl.val().index());
        self.txq.prod.next = self.rw.val().get_bits::<32>(self.k_txq_prod.val().index());
        self.txq.base.next = self.rw.val().get_bits::<64>(self.k_txq_base.val().index());
        self.txq.size_log2.next = self.rw.val().get_bits::<5>(self.k_txq_size.val().index());
        self.txq.grant.next = self.rd.txq_grant.val();
        self.txq.c_tdata.next = self.s_dmac_tdata.val();
        self.txq.c_tvalid.next = self.s_dmac_tvalid.val();
        self.txq.c_tlast.next = self.s_dmac_tlast.val();
        self.txq.c_tag.next = self.s_dmac_tag.val();
        self.txq.desc_ready.next = self.c_s_desc_ready.val();
        self.txq.cfg_busy.next = self.wo.val().get_bit(self.k_cfg_data_hi.val().index());
        self.txq.op_take.next = self.op.take.val();
        self.txq.ftq_adv.next = self.ftq_adv.val();
        self.c_s_desc_valid.next = self.txq.desc_valid.val();
        self.c_s_desc_opcode.next = self.txq.ds.val().get_bits::<8>(0);
        self.c_s_desc_ecn.next = self.txq.ds.val().get_bit(8);
        self.c_s_desc_flags.next = self.txq.ds.val().get_bits::<16>(16);
        self.c_s_desc_stream.next = self.txq.ds.val().get_bits::<16>(32);
        self.c_s_desc_path.next = self.txq.ds.val().get_bits::<16>(48);
        self.c_s_desc_dst_qpn.next = self.txq.ds.val().get_bits::<32>(64);
        self.c_s_desc_src_qpn.next = self.txq.ds.val().get_bits::<32>(96);
        self.c_s_desc_conn_psn.next = self.txq.ds.val().get_bits::<32>(128);
        self.c_s_desc_path_psn.next = self.txq.ds.val().get_bits::<32>(160);
        self.c_s_desc_timestamp.next = self.txq.ds.val().get_bits::<64>(192);
        self.c_s_desc_msn.next = self.txq.ds.val().get_bits::<32>(256);
        self.c_s_desc_recv_idx.next = self.txq.ds.val().get_bits::<32>(288);
        self.c_s_desc_msg_len.next = self.txq.ds.val().get_bits::<32>(320);
        self.c_s_desc_offset.next = self.txq.ds.val().get_bits::<32>(352);
        self.c_s_desc_remote_va.next = self.txq.ds.val().get_bits::<64>(384);
        self.c_s_desc_rkey.next = self.txq.ds.val().get_bits::<32>(448);
        self.c_s_desc_imm.next = self.txq.ds.val().get_bits::<32>(480);
        self.c_s_desc_addr.next = self.txq.ds.val().get_bits::<64>(512);
        self.c_s_desc_len.next = self.txq.ds.val().get_bits::<16>(576);

        // ---- the TX table's operation port ----
        self.op.go.next = self.wo.val().get_bit(self.k_op_go.val().index());
        self.op.r_ctrl.next = self.rw.val().get_bits::<10>(self.k_op_ctrl.val().index());
        self.op.r_psn.next = self.rw.val().get_bits::<32>(self.k_op_psn.val().index());
        self.op.r_len.next = self.rw.val().get_bits::<16>(self.k_op_len.val().index());
        self.op.r_rtt.next = self.rw.val().get_bits::<32>(self.k_op_rtt.val().index());
        self.op.r_ce_count.next = self
            .rw
            .val()
            .get_bits::<32>(self.k_op_ce_count.val().index());
        self.op.r_acked.next = self.rw.val().get_bits::<32>(self.k_op_acked.val().index());
        self.op.r_value.next = self.rw.val().get_bits::<32>(self.k_op_value.val().index());
        self.op.r_sack.next = self.rw.val().get_bits::<256>(self.k_op_sack.val().index());
        self.op.q_held.next = self.txq.op_held.val();
        self.op.ds.next = self.txq.ds.val();
        self.op.room.next = self.ev_qop_room.val();
        self.op.op_ready.next = self.c_op_ready.val();
        self.op.res_valid.next = self.c_res_valid.val();
        self.op.res_ok.next = self.c_res_ok.val();
        self.op.res_psn.next = self.c_res_psn.val();
        self.op.res_pkts.next = self.c_res_pkts.val();
        self.op.res_bytes.next = self.c_res_bytes.val();
        self.op.ackrx_valid.next = self.c_m_ackrx_valid.val();
        self.op.ackrx_slot.next = self.c_m_ackrx_slot.val();
        self.c_op_valid.next = self.op.op_valid.val();
        self.c_op_code.next = self.op.op_code.val();
        self.c_op_slot.next = self.op.op_slot.val();
        self.c_op_probe.next = self.op.op_probe.val();
        self.c_op_retx.next = self.op.op_retx.val();
        self.c_op_rtt_valid.next = self.op.op_rtt_valid.val();
        self.c_op_psn.next = self.op.op_psn.val();
        self.c_op_len.next = self.op.op_len.val();
        self.c_op_rtt.next = self.op.op_rtt.val();
        self.c_op_ce_count.next = self.op.op_ce_count.val();
        self.c_op_acked.next = self.op.op_acked.val();
        self.c_op_value.next = self.op.op_value.val();
        self.c_op_sack.next = self.op.op_sack.val();
        self.c_cap_slot.next = self.op.cap_slot.val();
        self.qres_valid.next = self.op.qres_valid.val();
        self.qop_slot.next = self.op.qop_slot.val();
        self.qop_code.next = self.op.qop_code.val();

        // ---- the MAC RX hold ----
        self.rxh.hold.next = self.ev_hold.val();
        self.rxh.s_tdata.next = self.s_axis_tdata.val();
        self.rxh.s_tkeep.next = self.s_axis_tkeep.val();
        self.rxh.s_tvalid.next = self.s_axis_tvalid.val();
        self.rxh.s_tlast.next = self.s_axis_tlast.val();
        self.s_axis_tready.next = self.rxh.s_tready.val();
        self.c_s_axis_tdata.next = self.rxh.c_tdata.val();
        self.c_s_axis_tkeep.next = self.rxh.c_tkeep.val();
        self.c_s_axis_tvalid.next = self.rxh.c_tvalid.val();
        self.c_s_axis_tlast.next = self.rxh.c_tlast.val();
        self.rxh.c_tready.next = self.c_s_axis_tready.val();

        // ---- DMA reads ----
        self.ftq_ctrl.next = self.rw.val().get_bit(self.k_ftq_ctrl.val().index());
        self.ftq_prod.next = self.rw.val().get_bits::<32>(self.k_ftq_prod.val().index());
        self.ftq_base.next = self.rw.val().get_bits::<64>(self.k_ftq_base.val().index());
        self.ftq_size_log2.next = self.rw.val().get_bits::<5>(self.k_ftq_size.val().index());
        self.rd.rd_valid.next = self.c_m_rd_valid.val();
        self.rd.rd_addr.next = self.c_m_rd_addr.val();
        self.rd.rd_len.next = self.c_m_rd_len.val();
        self.c_m_rd_ready.next = self.rd.rd_ready.val();
        self.rd.txq_req.next = self.txq.req.val();
        self.rd.txq_addr.next = self.txq.addr.val();
        self.rd.ftq_req_hdr.next = self.ftq_req_hdr.val();
        self.rd.ftq_req_data.next = self.ftq_req_data.val();
        self.rd.ftq_addr.next = self.ftq_req_addr.val();
        self.rd.ftq_len.next = self.ftq_req_len.val();
        self.ftq_grant.next = self.rd.ftq_grant.val();
        self.m_dmar_valid.next = self.rd.m_valid.val();
        self.rd.m_ready.next = self.m_dmar_ready.val();
        self.m_dmar_addr.next = self.rd.m_addr.val();
        self.m_dmar_len.next = self.rd.m_len.val();
        self.m_dmar_tag.next = self.rd.m_tag.val();
        self.rd.c_tdata.next = self.s_dmac_tdata.val();
        self.rd.c_tkeep.next = self.s_dmac_tkeep.val();
        self.rd.c_tvalid.next = self.s_dmac_tvalid.val();
        self.rd.c_tlast.next = self.s_dmac_tlast.val();
        self.rd.c_tag.next = self.s_dmac_tag.val();
        self.s_dmac_tready.next = self.rd.c_tready.val();
        self.c_s_pay_tdata.next = self.rd.pay_tdata.val();
        self.c_s_pay_tkeep.next = self.rd.pay_tkeep.val();
        self.c_s_pay_tvalid.next = self.rd.pay_tvalid.val();
        self.c_s_pay_tlast.next = self.rd.pay_tlast.val();
        self.rd.pay_tready.next = self.c_s_pay_tready.val();

        // ---- the event ring and the firmware receive ring: their registers ----
        self.evq_ctrl.next = self.rw.val().get_bit(self.k_evq_ctrl.val().index());
        self.evq_base.next = self.rw.val().get_bits::<64>(self.k_evq_base.val().index());
        self.evq_size_log2.next = self.rw.val().get_bits::<5>(self.k_evq_size.val().index());
        self.evq_cons.next = self.rw.val().get_bits::<32>(self.k_evq_cons.val().index());
        self.frq_ctrl.next = self.rw.val().get_bit(self.k_frq_ctrl.val().index());
        self.frq_base.next = self.rw.val().get_bits::<64>(self.k_frq_base.val().index());
        self.frq_size_log2.next = self.rw.val().get_bits::<5>(self.k_frq_size.val().index());
        self.frq_cons.next = self.rw.val().get_bits::<32>(self.k_frq_cons.val().index());

        // ---- DMA writes ----
        self.wr.c_addr.next = self.c_m_dma_addr.val();
        self.wr.c_len.next = self.c_m_dma_len.val();
        self.wr.c_first.next = self.c_m_dma_first.val();
        self.wr.c_tdata.next = self.c_m_dma_tdata.val();
        self.wr.c_tkeep.next = self.c_m_dma_tkeep.val();
        self.wr.c_tvalid.next = self.c_m_dma_tvalid.val();
        self.wr.c_tlast.next = self.c_m_dma_tlast.val();
        self.c_m_dma_tready.next = self.wr.c_tready.val();
        self.wr.e_addr.next = self.evw_addr.val();
        self.wr.e_len.next = self.evw_len.val();
        self.wr.e_first.next = self.evw_first.val();
        self.wr.e_tdata.next = self.evw_tdata.val();
        self.wr.e_tkeep.next = self.evw_tkeep.val();
        self.wr.e_tvalid.next = self.evw_tvalid.val();
        self.wr.e_tlast.next = self.evw_tlast.val();
        self.evw_tready.next = self.wr.e_tready.val();
        self.wr.f_addr.next = self.frw_addr.val();
        self.wr.f_len.next = self.frw_len.val();
        self.wr.f_first.next = self.frw_first.val();
        self.wr.f_tdata.next = self.frw_tdata.val();
        self.wr.f_tkeep.next = self.frw_tkeep.val();
        self.wr.f_tvalid.next = self.frw_tvalid.val();
        self.wr.f_tlast.next = self.frw_tlast.val();
        self.frw_tready.next = self.wr.f_tready.val();
        self.m_dmaw_addr.next = self.wr.m_addr.val();
        self.m_dmaw_len.next = self.wr.m_len.val();
        self.m_dmaw_first.next = self.wr.m_first.val();
        self.m_dmaw_tdata.next = self.wr.m_tdata.val();
        self.m_dmaw_tkeep.next = self.wr.m_tkeep.val();
        self.m_dmaw_tvalid.next = self.wr.m_tvalid.val();
        self.m_dmaw_tlast.next = self.wr.m_tlast.val();
        self.wr.m_tready.next = self.m_dmaw_tready.val();

        // ---- interrupts: what each vector counts (the moderators are outside) ----
        self.irq_inc0.next = bit_cast::<2, 1>(self.evq_inc.val().into());
        self.irq_inc1.next = bit_cast::<2, 1>(self.frq_inc.val().into());
        self.irq_inc2.next = self.txq.inc.val();
        self.irq_en0.next = self.rw.val().get_bit(self.k_irq_ctrl0.val().index());
        self.irq_en1.next = self.rw.val().get_bit(self.k_irq_ctrl1.val().index());
        self.irq_en2.next = self.rw.val().get_bit(self.k_irq_ctrl2.val().index());
        self.irq_coalesce0.next = self
            .rw
            .val()
            .get_bits::<16>(self.k_irq_coalesce0.val().index());
        self.irq_coalesce1.next = self
            .rw
            .val()
            .get_bits::<16>(self.k_irq_coalesce1.val().index());
        self.irq_coalesce2.next = self
            .rw
            .val()
            .get_bits::<16>(self.k_irq_coalesce2.val().index());
        self.irq_holdoff0.next = self
            .rw
            .val()
            .get_bits::<24>(self.k_irq_holdoff0.val().index());
        self.irq_holdoff1.next = self
            .rw
            .val()
            .get_bits::<24>(self.k_irq_holdoff1.val().index());
        self.irq_holdoff2.next = self
            .rw
            .val()
            .get_bits::<24>(self.k_irq_holdoff2.val().index());

        // ---- the read-only registers ----
        self.tx_err.next = bit_cast::<32, 1>(self.c_m_err.val().into());
        self.op_status.next = bit_cast::<32, 3>(self.op.status.val());
        self.rd_entropy.next = bit_cast::<32, 16>(self.c_rd_entropy.val());
        self.rd_flags.next = 0.into();
        self.rd_flags.next = self
            .rd_flags
            .val()
            .replace_bit(0, self.c_rd_rtt_valid.val());
        self.rd_flags.next = self
            .rd_flags
            .val()
            .replace_bit(1, self.c_rd_quarantined.val());
        self.rd_flags.next =
            self.rd_flags.val() | (bit_cast::<32, 4>(self.c_rd_backoff.val()) << 2);
        self.rd_flags.next = self.rd_flags.val().replace_bit(6, self.c_rd_can_send.val());
        self.ro.next = self.k_ro_fixed.val();
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.cnt_bar_bad.val()) << self.k_ro_cnt_bar_bad.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.cnt.cfg_writes.val())
                << self.k_ro_cnt_cfg_writes.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_cnt_val.val()) << self.k_ro_c_cnt_val.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_eth_cnt_val.val()) << self.k_ro_c_eth_cnt_val.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ack_cnt_frames.val())
                << self.k_ro_c_ack_cnt_frames.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ack_cnt_ece.val()) << self.k_ro_c_ack_cnt_ece.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ack_cnt_v6.val()) << self.k_ro_c_ack_cnt_v6.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ackrx_cnt_applied.val())
                << self.k_ro_c_ackrx_cnt_applied.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ackrx_cnt_unmapped.val())
                << self.k_ro_c_ackrx_cnt_unmapped.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ackrx_cnt_overflow.val())
                << self.k_ro_c_ackrx_cnt_overflow.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ackrx_cnt_pair_err.val())
                << self.k_ro_c_ackrx_cnt_pair_err.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_ackrx_cnt_refused.val())
                << self.k_ro_c_ackrx_cnt_refused.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_fw_cnt_up.val()) << self.k_ro_c_fw_cnt_up.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_fw_cnt_trunc.val())
                << self.k_ro_c_fw_cnt_trunc.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_fwtx_cnt_frames.val())
                << self.k_ro_c_fwtx_cnt_frames.val());
        self.ro.next =
            self.ro.val() | (bit_cast::<RO_BITS, 32>(self.tx_err.val()) << self.k_ro_tx_err.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.cnt.eth_frames.val())
                << self.k_ro_cnt_eth_frames.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.cnt.eth_drops.val()) << self.k_ro_cnt_eth_drops.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.rxh.held.val()) << self.k_ro_cnt_rx_hold.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.cnt_ev_lost.val()) << self.k_ro_cnt_ev_lost.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.txq.bad.val()) << self.k_ro_cnt_txq_bad.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.cnt_ftq_bad.val()) << self.k_ro_cnt_ftq_bad.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.cnt.bad_tag.val()) << self.k_ro_cnt_bad_tag.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.op.ops.val()) << self.k_ro_cnt_txq_ops.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.op_status.val()) << self.k_ro_op_status.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.op.last_psn.val()) << self.k_ro_op_res_psn.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.op.last_pkts.val()) << self.k_ro_op_res_pkts.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.op.last_bytes.val()) << self.k_ro_op_res_bytes.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.rd_entropy.val()) << self.k_ro_rd_entropy.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_next_psn.val()) << self.k_ro_c_rd_next_psn.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_una.val()) << self.k_ro_c_rd_una.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_inflight.val()) << self.k_ro_c_rd_inflight.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_window.val()) << self.k_ro_c_rd_window.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_srtt.val()) << self.k_ro_c_rd_srtt.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_rttvar.val()) << self.k_ro_c_rd_rttvar.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_ecn_ewma.val()) << self.k_ro_c_rd_ecn_ewma.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_loss_ewma.val())
                << self.k_ro_c_rd_loss_ewma.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_samples.val()) << self.k_ro_c_rd_samples.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_sent.val()) << self.k_ro_c_rd_sent.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_retransmitted.val())
                << self.k_ro_c_rd_retransmitted.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_acked.val()) << self.k_ro_c_rd_acked.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_lost.val()) << self.k_ro_c_rd_lost.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_ce_marked.val())
                << self.k_ro_c_rd_ce_marked.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_repaths.val()) << self.k_ro_c_rd_repaths.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.c_rd_timeouts.val()) << self.k_ro_c_rd_timeouts.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.rd_flags.val()) << self.k_ro_rd_flags.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.txq.cons.val()) << self.k_ro_txq_cons.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.ftq_cons.val()) << self.k_ro_ftq_cons.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.evq_prod.val()) << self.k_ro_evq_prod.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.frq_prod.val()) << self.k_ro_frq_prod.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.irq_count0.val()) << self.k_ro_irq_count0.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.irq_count1.val()) << self.k_ro_irq_count1.val());
        self.ro.next = self.ro.val()
            | (bit_cast::<RO_BITS, 32>(self.irq_count2.val()) << self.k_ro_irq_count2.val());
    }
}

/// The first bit on the `rw` bus of the registers `block.first` to
/// `block.last`, which must lie side by side there as one `bits`-bit value
/// (`first` the low word).
///
/// # Panics
/// If a register is missing or they do not lie side by side.
fn rw_at(block: &str, first: &str, last: &str, bits: usize) -> Constant<Bits<16>> {
    let at = rw_bit(block, first);
    assert_eq!(
        rw_bit(block, last) + 32 - at,
        bits,
        "{block}.{first}..{last}: not {bits} bits side by side on the rw bus"
    );
    konst(at)
}

/// The first bit on the `ro` bus of the read-only register whose source
/// in [`regs::BLOCKS`] is the signal `src`.
///
/// # Panics
/// If no register, or more than one, names it.
fn ro_at(src: &str) -> Constant<Bits<16>> {
    let places: Vec<usize> = ro_sources()
        .iter()
        .enumerate()
        .filter(|(_, s)| **s == src)
        .map(|(i, _)| 32 * i)
        .collect();
    assert_eq!(
        places.len(),
        1,
        "the register map names {src} {} times",
        places.len()
    );
    konst(places[0])
}

/// The value of a constant source (`32'dN` in [`regs::BLOCKS`]).
fn fixed_value(src: &str) -> Option<u32> {
    src.strip_prefix("32'd")
        .map(|n| n.parse().expect("a decimal constant"))
}

/// The `ro` bus with the constant read-only registers at their places,
/// every other bit 0.
fn ro_fixed() -> Constant<Bits<RO_BITS>> {
    let mut v = Bits::<RO_BITS>::default();
    for (i, src) in ro_sources().into_iter().enumerate() {
        if let Some(n) = fixed_value(src) {
            for b in 0..32 {
                v = v.replace_bit(32 * i + b, n >> b & 1 == 1);
            }
        }
    }
    Constant::new(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// `v` at bit `at` of a `N`-bit bus.
    fn word<const N: usize>(bus: Bits<N>, at: usize, v: u64) -> Bits<N> {
        (0..64).fold(bus, |b, i| b.replace_bit(at + i, v >> i & 1 == 1))
    }

    /// The value of the read-only register fed by `src`.
    fn ro_word(ro: Bits<RO_BITS>, src: &str) -> u64 {
        ro.get_bits::<32>(ro_at(src).val().index()).to_u64()
    }

    /// What the host interface showed: per cycle the DMA read request
    /// (address, bytes, tag) if valid, the table write (address, data) if
    /// issued and the TX vector's count; at the end the `ro` bus.
    type Seen = (
        Vec<Option<(u64, u64, u64)>>,
        Vec<Option<(u64, u64)>>,
        u64,
        Bits<RO_BITS>,
    );

    /// Runs the 64-bit host interface through rust-hdl's simulator: the TX
    /// queue (base 0x8000, 16 entries) holds one table write (kind 1:
    /// address 0x155, data 0x1234_5678_9ABC_DEF0), the DMA takes every
    /// request and answers the entry's read in the cycle after; then a
    /// register TX table operation runs (`OP_GO`, the table ready, its
    /// result two cycles later with PSN 77).
    fn simulate() -> Seen {
        let seen = Arc::new(Mutex::new((Vec::new(), Vec::new(), 0, Bits::default())));
        let out = seen.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<HostIf<64, 8>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<HostIf<64, 8>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            let mut rw = Bits::<RW_BITS>::default();
            rw = word(rw, rw_bit("TXQ", "BASE_LO"), 0x8000);
            rw = word(rw, rw_bit("TXQ", "SIZE_LOG2"), 4);
            rw = word(rw, rw_bit("TXQ", "CTRL"), 1);
            rw = word(rw, rw_bit("TXQ", "PROD"), 1);
            rw = word(rw, rw_bit("TXT", "OP_CTRL"), 3 << 3 | 1);
            x.rw.next = rw;
            x.m_dmar_ready.next = true;
            x.c_op_ready.next = true;
            x.ev_qop_room.next = true;
            let entry: [u64; 10] = [
                0x1234_5678_9ABC_DEF0,
                0x155,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                u64::from(txq_kind::CFG) << 56,
            ];
            let mut beat = None;
            for c in 0..40 {
                x.s_dmac_tvalid.next = beat.is_some();
                let k: usize = beat.unwrap_or_default();
                x.s_dmac_tdata.next = entry[k].to_bits();
                x.s_dmac_tlast.next = k == 9;
                x.s_dmac_tag.next = u64::from(tag::TXQ).to_bits();
                let mut wo = Bits::<WO_REGS>::default();
                wo = wo.replace_bit(wo_bit("TXT", "OP_GO"), c == 20);
                x.wo.next = wo;
                x.c_res_valid.next = c == 23;
                x.c_res_psn.next = 77u64.to_bits();
                let req = x.m_dmar_valid.val().then(|| {
                    (
                        x.m_dmar_addr.val().to_u64(),
                        x.m_dmar_len.val().to_u64(),
                        x.m_dmar_tag.val().to_u64(),
                    )
                });
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                beat = match (beat, req) {
                    (None, Some(_)) => Some(0),
                    (Some(9), _) | (None, None) => None,
                    (Some(k), _) => Some(k + 1),
                };
                let cfg = x
                    .c_cfg_we
                    .val()
                    .then(|| (x.c_cfg_addr.val().to_u64(), x.c_cfg_data.val().to_u64()));
                let mut s = seen.lock().unwrap();
                s.0.push(req);
                s.1.push(cfg);
                s.2 += x.irq_inc2.val().to_u64();
                s.3 = x.ro.val();
            }
            sim.done(x)
        });
        let mut uut = HostIf::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 100_000).unwrap();
        Arc::try_unwrap(out).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_runs_the_tx_queue_and_a_register_operation() {
        let (reqs, cfgs, inc_tx, ro) = simulate();
        // One read: the entry, 80 bytes at the queue's base, tag 0.
        let reqs: Vec<_> = reqs.into_iter().flatten().collect();
        assert_eq!(reqs, vec![(0x8000, 80, u64::from(tag::TXQ))]);
        // Its table write, issued once.
        let cfgs: Vec<_> = cfgs.into_iter().flatten().collect();
        assert_eq!(cfgs, vec![(0x155, 0x1234_5678_9ABC_DEF0)]);
        assert_eq!(inc_tx, 1);
        // The registers: the entry consumed and counted, the register
        // operation done with its result; the constants in place.
        assert_eq!(ro_word(ro, "txq_cons"), 1);
        assert_eq!(ro_word(ro, "cnt_cfg_writes"), 1);
        assert_eq!(ro_word(ro, "cnt_txq_bad"), 0);
        assert_eq!(ro_word(ro, "op_status"), 0b010);
        assert_eq!(ro_word(ro, "op_res_psn"), 77);
        let txq = regs::block("TXQ");
        let stride = regs::all_regs()
            .into_iter()
            .filter(|(_, _, r)| matches!(r.access, regs::Access::Ro(_)))
            .position(|(a, _, _)| a == txq.addr("ENTRY_LOG2"))
            .expect("TXQ.ENTRY_LOG2");
        assert_eq!(ro.get_bits::<32>(32 * stride).to_u64(), 7);
    }
}
