//! [`HostIf`], the block: its ports, its sub-blocks, the places on the
//! register file's `rw` bus and the places of the read-only registers
//! it answers (looked up in [`super::regs`] by name), and its kernel, the
//! wiring, in parts of one concern each (`core_ports.rs`: the core's firmware
//! ports; `dma.rs`: DMA, the rings' registers and the interrupts;
//! `ro.rs`: the read-only register a BAR read asks for).

use rust_hdl::prelude::*;

mod core_ports;
mod dma;
mod ro;

use super::kernel::kernel_of_parts;
use super::reg_file::{PLACE_BITS, RO_REGS, RW_BITS, WO_REGS, ro_sources, rw_bit, wo_bit};
use super::{CfgStage, DmaReadArb, DmaWriteArb, HostCounters, RxHold, TxTableOp, TxqFetch};
use crate::bus::{
    AckRxCntIn, AxisOut, CfgOut, CounterRead, DescOut, DmaWriteIn, EthEvIn, ReadReqIn, TxOpOut,
    TxRead, TxResIn,
};
use crate::helpers::{konst, native_block};
use crate::nic_core::TX_SLOT_BITS;

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
        /// The data of a write-only register's command ([`RegFile::wo_data`](super::RegFile::wo_data)).
        wo_data: Signal<In, Bits<32>>,
        /// The read/write registers ([`RegFile::rw`](super::RegFile::rw)).
        rw: Signal<In, Bits<RW_BITS>>,
        /// The write-only registers' strobes ([`RegFile::wo`](super::RegFile::wo)).
        wo: Signal<In, Bits<WO_REGS>>,
        /// BAR accesses to no register ([`RegFile::bad`](super::RegFile::bad), `ID.BAR_BAD`).
        cnt_bar_bad: Signal<In, Bits<32>>,
        /// A BAR read of a read-only register is answered this cycle ([`RegFile::ro_rd_valid`](super::RegFile::ro_rd_valid)).
        ro_rd_valid: Signal<In, Bit>,
        /// That register's place among the read-only ones ([`RegFile::ro_rd_sel`](super::RegFile::ro_rd_sel)).
        ro_rd_sel: Signal<In, Bits<PLACE_BITS>>,
        /// The value of the read-only register at place `ro_rd_sel` while `ro_rd_valid` (else 0; [`RegFile::ro_rd_data`](super::RegFile::ro_rd_data)).
        ro_rd_data: Signal<Out, Bits<32>>,
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
        /// DMA read request: tag ([`tag`](super::tag)).
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
        /// Interrupt vector 0 ([`regs::IRQ_EVQ`](super::regs::IRQ_EVQ)): entries completed this cycle.
        irq_inc0: Signal<Out, Bits<2>>,
        /// Vector 1 ([`regs::IRQ_FRQ`](super::regs::IRQ_FRQ)): entries completed this cycle.
        irq_inc1: Signal<Out, Bits<2>>,
        /// Vector 2 ([`regs::IRQ_TX`](super::regs::IRQ_TX)): entries consumed this cycle.
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
        /// Core side: the configuration write port (`NicCore::cfg`), a
        /// cycle after the write is issued ([`CfgStage`]).
        c_cfg: CfgOut<10>,
        /// Core side: MAC RX frames, held while the event FIFOs fill (`NicCore::s_axis`).
        c_s_axis: AxisOut<W, B>,
        /// Core side: `NicCore::eth_cfg_port_we`.
        c_eth_cfg_port_we: Signal<Out, Bit>,
        /// Core side: `NicCore::eth_cfg_port`.
        c_eth_cfg_port: Signal<Out, Bits<16>>,
        /// Core side: the front end's counters (`NicCore::eth_cnt`).
        c_eth_cnt: CounterRead<4>,
        /// Core side: the front end's events (`NicCore::m_eth_ev`).
        c_m_eth_ev: EthEvIn,
        /// Core side: DMA writes of placed payload (`NicCore::m_dma`).
        c_m_dma: DmaWriteIn<W, B>,
        /// Core side: the receive core's counters (`NicCore::cnt`).
        c_cnt: CounterRead<5>,
        /// Core side: send descriptors (`NicCore::s_desc`).
        c_s_desc: DescOut,
        /// Core side: payload fetch requests (`NicCore::m_rd`).
        c_m_rd: ReadReqIn,
        /// Core side: fetched payload (`NicCore::s_pay`).
        c_s_pay: AxisOut<W, B>,
        /// Core side: `NicCore::m_err`.
        c_m_err: Signal<In, Bit>,
        /// Core side: `NicCore::ack_cnt_frames`.
        c_ack_cnt_frames: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ack_cnt_ece`.
        c_ack_cnt_ece: Signal<In, Bits<32>>,
        /// Core side: `NicCore::ack_cnt_v6`.
        c_ack_cnt_v6: Signal<In, Bits<32>>,
        /// Core side: TX table operations (`NicCore::op`).
        c_op: TxOpOut<TX_SLOT_BITS>,
        /// Core side: TX table results (`NicCore::res`).
        c_res: TxResIn,
        /// Core side: the TX table's read port (`NicCore::rd`).
        c_rd: TxRead<TX_SLOT_BITS>,
        /// Core side: the ACK receiver's counters (`NicCore::ackrx_cnt`).
        c_ackrx_cnt: AckRxCntIn,
        /// `EVQ.CTRL` for the event ring's writer ([`EvRing::ctrl`](super::EvRing::ctrl)).
        evq_ctrl: Signal<Out, Bit>,
        /// `EVQ.BASE_HI:BASE_LO`.
        evq_base: Signal<Out, Bits<64>>,
        /// `EVQ.SIZE_LOG2`.
        evq_size_log2: Signal<Out, Bits<5>>,
        /// `EVQ.CONS`.
        evq_cons: Signal<Out, Bits<32>>,
        /// The event ring's DMA writes ([`EvRing::w`](super::EvRing::w)); `tready`: the write arbiter gives the writer the port and the beat is taken.
        evw: DmaWriteIn<W, B>,
        /// `EVQ.PROD`.
        evq_prod: Signal<In, Bits<32>>,
        /// An event entry was written (the vector's count).
        evq_inc: Signal<In, Bit>,
        /// `CNT.EV_LOST` ([`EvRing::lost`](super::EvRing::lost)).
        cnt_ev_lost: Signal<In, Bits<32>>,
        /// An event FIFO is filling: the MAC RX port is held ([`EvRing::hold`](super::EvRing::hold)).
        ev_hold: Signal<In, Bit>,
        /// The TX-table FIFO has room for a queued operation's result ([`EvRing::qop_room`](super::EvRing::qop_room)).
        ev_qop_room: Signal<In, Bit>,
        /// A queued table operation's result is on the table's result port ([`EvRing::qres_valid`](super::EvRing::qres_valid)).
        qres_valid: Signal<Out, Bit>,
        /// The running queued operation's slot.
        qop_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        /// The running queued operation's code.
        qop_code: Signal<Out, Bits<3>>,
        /// `FRQ.CTRL` for the firmware receive ring's writer ([`FwRxRing::ctrl`](super::FwRxRing::ctrl)).
        frq_ctrl: Signal<Out, Bit>,
        /// `FRQ.BASE_HI:BASE_LO`.
        frq_base: Signal<Out, Bits<64>>,
        /// `FRQ.SIZE_LOG2`.
        frq_size_log2: Signal<Out, Bits<5>>,
        /// `FRQ.CONS`.
        frq_cons: Signal<Out, Bits<32>>,
        /// The firmware receive ring's DMA writes ([`FwRxRing::w`](super::FwRxRing::w)).
        frw: DmaWriteIn<W, B>,
        /// `FRQ.PROD`.
        frq_prod: Signal<In, Bits<32>>,
        /// A firmware receive entry was written (the vector's count).
        frq_inc: Signal<In, Bit>,
        /// Core side: `NicCore::fw_cnt_up`.
        c_fw_cnt_up: Signal<In, Bits<32>>,
        /// Core side: `NicCore::fw_cnt_trunc`.
        c_fw_cnt_trunc: Signal<In, Bits<32>>,
        /// `FTQ.CTRL` for the firmware TX queue ([`FwTxQueue::ctrl`](super::FwTxQueue::ctrl)).
        ftq_ctrl: Signal<Out, Bit>,
        /// `FTQ.PROD`.
        ftq_prod: Signal<Out, Bits<32>>,
        /// `FTQ.BASE_HI:BASE_LO`.
        ftq_base: Signal<Out, Bits<64>>,
        /// `FTQ.SIZE_LOG2`.
        ftq_size_log2: Signal<Out, Bits<5>>,
        /// The firmware TX queue's header read waits ([`FwTxQueue::req_hdr`](super::FwTxQueue::req_hdr)).
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
        cfgq: CfgStage,
        // Temporaries: the read-only register made of several signals;
        // every bit of the `rw` bus, read (the storage bits past each
        // register's width, always 0, and the scratch register are not
        // used here).
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
        // The places of the read-only registers in the map's order (the
        // order of the table in `ro.rs`).
        k_ro: [Constant<Bits<PLACE_BITS>>; RO_REGS] = ro_places(),
    }
}

kernel_of_parts!(HostIf[W, B] 0 1 2 3 4 5 6 7 8);

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

/// The places of the read-only registers the host interface answers, in
/// the register map's order: that of `ro.rs`'s table.
///
/// # Panics
/// If the table does not list the map's sources in the map's order.
fn ro_places() -> [Constant<Bits<PLACE_BITS>>; RO_REGS] {
    let map = ro_sources();
    let names: Vec<&str> = map.iter().map(|(_, src)| *src).collect();
    assert_eq!(
        names,
        ro::RO_NAMES,
        "HostIf's read-only sources (wiring/ro.rs) are not the register map's, in its order"
    );
    std::array::from_fn(konst)
}
