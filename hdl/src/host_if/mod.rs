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
//!   register file and hands it the value of the read-only register a
//!   read asks for.
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
//! [`regs::BLOCKS`], the strobes, the read-only register a read asks for
//! selected from the signal each entry names) around one sub-block per
//! concern:
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

pub mod cfg_stage;
pub mod counters;
pub mod dma_arb;
pub mod ev_ring;
pub mod fw_rx_ring;
pub mod fw_tx_queue;
pub mod irq;
mod kernel;
pub mod reg_file;
pub mod regs;
pub mod rx_hold;
pub mod table_op;
pub mod txq;
mod wiring;

pub use cfg_stage::CfgStage;
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
pub use wiring::HostIf;

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

#[cfg(test)]
mod tests;
