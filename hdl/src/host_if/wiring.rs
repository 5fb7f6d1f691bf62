//! [`HostIf`], the block: its ports, its sub-blocks and the kernel that
//! wires them (the register file's `rw` bus sliced at the places
//! [`super::regs`] names, the read-only register a BAR read asks for
//! selected by the address the table gives its signal), and the functions
//! that look those places and addresses up.

use rust_hdl::prelude::*;

use super::reg_file::{RW_BITS, WO_REGS, ro_sources, rw_bit, wo_bit};
use super::{DmaReadArb, DmaWriteArb, HostCounters, RxHold, TxTableOp, TxqFetch};
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
        /// BAR0 write: data (the data of a write-only register's command).
        bar_wr_data: Signal<In, Bits<32>>,
        /// The read/write registers ([`RegFile::rw`](super::RegFile::rw)).
        rw: Signal<In, Bits<RW_BITS>>,
        /// The write-only registers' strobes ([`RegFile::wo`](super::RegFile::wo)).
        wo: Signal<In, Bits<WO_REGS>>,
        /// BAR accesses to no register ([`RegFile::bad`](super::RegFile::bad), `ID.BAR_BAD`).
        cnt_bar_bad: Signal<In, Bits<32>>,
        /// A BAR read is answered this cycle ([`RegFile::ro_rd_valid`](super::RegFile::ro_rd_valid)).
        ro_rd_valid: Signal<In, Bit>,
        /// Its address ([`RegFile::ro_rd_addr`](super::RegFile::ro_rd_addr)).
        ro_rd_addr: Signal<In, Bits<16>>,
        /// The value of the read-only register at `ro_rd_addr` while `ro_rd_valid` (else 0; [`RegFile::ro_rd_data`](super::RegFile::ro_rd_data)).
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
        /// Core side: the configuration write port (`NicCore::cfg`).
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
        /// Core side: `NicCore::cap_slot`.
        c_cap_slot: Signal<Out, Bits<TX_SLOT_BITS>>,
        /// Core side: `NicCore::m_ackrx_valid`.
        c_m_ackrx_valid: Signal<In, Bit>,
        /// Core side: `NicCore::m_ackrx_slot`.
        c_m_ackrx_slot: Signal<In, Bits<TX_SLOT_BITS>>,
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
        // The addresses of the read-only registers, each the register's
        // the table says the signal feeds.
        k_ro_cnt_bar_bad: Constant<Bits<16>> = ro_addr("cnt_bar_bad"),
        k_ro_cnt_cfg_writes: Constant<Bits<16>> = ro_addr("cnt_cfg_writes"),
        k_ro_c_cnt_val: Constant<Bits<16>> = ro_addr("c_cnt_val"),
        k_ro_c_eth_cnt_val: Constant<Bits<16>> = ro_addr("c_eth_cnt_val"),
        k_ro_c_ack_cnt_frames: Constant<Bits<16>> = ro_addr("c_ack_cnt_frames"),
        k_ro_c_ack_cnt_ece: Constant<Bits<16>> = ro_addr("c_ack_cnt_ece"),
        k_ro_c_ack_cnt_v6: Constant<Bits<16>> = ro_addr("c_ack_cnt_v6"),
        k_ro_c_ackrx_cnt_applied: Constant<Bits<16>> = ro_addr("c_ackrx_cnt_applied"),
        k_ro_c_ackrx_cnt_unmapped: Constant<Bits<16>> = ro_addr("c_ackrx_cnt_unmapped"),
        k_ro_c_ackrx_cnt_overflow: Constant<Bits<16>> = ro_addr("c_ackrx_cnt_overflow"),
        k_ro_c_ackrx_cnt_pair_err: Constant<Bits<16>> = ro_addr("c_ackrx_cnt_pair_err"),
        k_ro_c_ackrx_cnt_refused: Constant<Bits<16>> = ro_addr("c_ackrx_cnt_refused"),
        k_ro_c_fw_cnt_up: Constant<Bits<16>> = ro_addr("c_fw_cnt_up"),
        k_ro_c_fw_cnt_trunc: Constant<Bits<16>> = ro_addr("c_fw_cnt_trunc"),
        k_ro_c_fwtx_cnt_frames: Constant<Bits<16>> = ro_addr("c_fwtx_cnt_frames"),
        k_ro_tx_err: Constant<Bits<16>> = ro_addr("tx_err"),
        k_ro_cnt_eth_frames: Constant<Bits<16>> = ro_addr("cnt_eth_frames"),
        k_ro_cnt_eth_drops: Constant<Bits<16>> = ro_addr("cnt_eth_drops"),
        k_ro_cnt_rx_hold: Constant<Bits<16>> = ro_addr("cnt_rx_hold"),
        k_ro_cnt_ev_lost: Constant<Bits<16>> = ro_addr("cnt_ev_lost"),
        k_ro_cnt_txq_bad: Constant<Bits<16>> = ro_addr("cnt_txq_bad"),
        k_ro_cnt_ftq_bad: Constant<Bits<16>> = ro_addr("cnt_ftq_bad"),
        k_ro_cnt_bad_tag: Constant<Bits<16>> = ro_addr("cnt_bad_tag"),
        k_ro_cnt_txq_ops: Constant<Bits<16>> = ro_addr("cnt_txq_ops"),
        k_ro_op_status: Constant<Bits<16>> = ro_addr("op_status"),
        k_ro_op_res_psn: Constant<Bits<16>> = ro_addr("op_res_psn"),
        k_ro_op_res_pkts: Constant<Bits<16>> = ro_addr("op_res_pkts"),
        k_ro_op_res_bytes: Constant<Bits<16>> = ro_addr("op_res_bytes"),
        k_ro_rd_entropy: Constant<Bits<16>> = ro_addr("rd_entropy"),
        k_ro_c_rd_next_psn: Constant<Bits<16>> = ro_addr("c_rd_next_psn"),
        k_ro_c_rd_una: Constant<Bits<16>> = ro_addr("c_rd_una"),
        k_ro_c_rd_inflight: Constant<Bits<16>> = ro_addr("c_rd_inflight"),
        k_ro_c_rd_window: Constant<Bits<16>> = ro_addr("c_rd_window"),
        k_ro_c_rd_srtt: Constant<Bits<16>> = ro_addr("c_rd_srtt"),
        k_ro_c_rd_rttvar: Constant<Bits<16>> = ro_addr("c_rd_rttvar"),
        k_ro_c_rd_ecn_ewma: Constant<Bits<16>> = ro_addr("c_rd_ecn_ewma"),
        k_ro_c_rd_loss_ewma: Constant<Bits<16>> = ro_addr("c_rd_loss_ewma"),
        k_ro_c_rd_samples: Constant<Bits<16>> = ro_addr("c_rd_samples"),
        k_ro_c_rd_sent: Constant<Bits<16>> = ro_addr("c_rd_sent"),
        k_ro_c_rd_retransmitted: Constant<Bits<16>> = ro_addr("c_rd_retransmitted"),
        k_ro_c_rd_acked: Constant<Bits<16>> = ro_addr("c_rd_acked"),
        k_ro_c_rd_lost: Constant<Bits<16>> = ro_addr("c_rd_lost"),
        k_ro_c_rd_ce_marked: Constant<Bits<16>> = ro_addr("c_rd_ce_marked"),
        k_ro_c_rd_repaths: Constant<Bits<16>> = ro_addr("c_rd_repaths"),
        k_ro_c_rd_timeouts: Constant<Bits<16>> = ro_addr("c_rd_timeouts"),
        k_ro_rd_flags: Constant<Bits<16>> = ro_addr("rd_flags"),
        k_ro_txq_cons: Constant<Bits<16>> = ro_addr("txq_cons"),
        k_ro_ftq_cons: Constant<Bits<16>> = ro_addr("ftq_cons"),
        k_ro_evq_prod: Constant<Bits<16>> = ro_addr("evq_prod"),
        k_ro_frq_prod: Constant<Bits<16>> = ro_addr("frq_prod"),
        k_ro_irq_count0: Constant<Bits<16>> = ro_addr("irq_count0"),
        k_ro_irq_count1: Constant<Bits<16>> = ro_addr("irq_count1"),
        k_ro_irq_count2: Constant<Bits<16>> = ro_addr("irq_count2"),
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
        self.c_cfg.we.next =
            self.wo.val().get_bit(self.k_cfg_data_hi.val().index()) | self.txq.cfg_go.val();
        self.c_cfg.addr.next = self.txq.ds.val().get_bits::<10>(64);
        self.c_cfg.data.next = self.txq.ds.val().get_bits::<64>(0);
        if self.wo.val().get_bit(self.k_cfg_data_hi.val().index()) {
            self.c_cfg.addr.next = self.rw.val().get_bits::<10>(self.k_cfg_addr.val().index());
            self.c_cfg.data.next = (bit_cast::<64, 32>(self.bar_wr_data.val()) << 32)
                | bit_cast::<64, 32>(
                    self.rw
                        .val()
                        .get_bits::<32>(self.k_cfg_data_lo.val().index()),
                );
        }
        self.c_eth_cfg_port_we.next = self.wo.val().get_bit(self.k_eth_port.val().index());
        self.c_eth_cfg_port.next = self.bar_wr_data.val().get_bits::<16>(0);
        self.c_cnt.sel.next = self.rw.val().get_bits::<5>(self.k_cnt_sel.val().index());
        self.c_eth_cnt.sel.next = self
            .rw
            .val()
            .get_bits::<4>(self.k_eth_cnt_sel.val().index());
        self.c_rd.slot.next = self
            .rw
            .val()
            .get_bits::<TX_SLOT_BITS>(self.k_rd_slot.val().index());
        self.c_rd.len.next = self.rw.val().get_bits::<16>(self.k_rd_len.val().index());
        self.cnt.cfg_we.next = self.c_cfg.we.val();
        self.cnt.eth_ev_valid.next = self.c_m_eth_ev.valid.val();
        self.cnt.eth_ev_reason.next = self.c_m_eth_ev.reason.val();
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
        self.txq.desc_ready.next = self.c_s_desc.ready.val();
        self.txq.cfg_busy.next = self.wo.val().get_bit(self.k_cfg_data_hi.val().index());
        self.txq.op_take.next = self.op.take.val();
        self.txq.ftq_adv.next = self.ftq_adv.val();
        self.c_s_desc.valid.next = self.txq.desc_valid.val();
        self.c_s_desc.opcode.next = self.txq.ds.val().get_bits::<8>(0);
        self.c_s_desc.ecn.next = self.txq.ds.val().get_bit(8);
        self.c_s_desc.flags.next = self.txq.ds.val().get_bits::<16>(16);
        self.c_s_desc.stream.next = self.txq.ds.val().get_bits::<16>(32);
        self.c_s_desc.path.next = self.txq.ds.val().get_bits::<16>(48);
        self.c_s_desc.dst_qpn.next = self.txq.ds.val().get_bits::<32>(64);
        self.c_s_desc.src_qpn.next = self.txq.ds.val().get_bits::<32>(96);
        self.c_s_desc.conn_psn.next = self.txq.ds.val().get_bits::<32>(128);
        self.c_s_desc.path_psn.next = self.txq.ds.val().get_bits::<32>(160);
        self.c_s_desc.timestamp.next = self.txq.ds.val().get_bits::<64>(192);
        self.c_s_desc.msn.next = self.txq.ds.val().get_bits::<32>(256);
        self.c_s_desc.recv_idx.next = self.txq.ds.val().get_bits::<32>(288);
        self.c_s_desc.msg_len.next = self.txq.ds.val().get_bits::<32>(320);
        self.c_s_desc.offset.next = self.txq.ds.val().get_bits::<32>(352);
        self.c_s_desc.remote_va.next = self.txq.ds.val().get_bits::<64>(384);
        self.c_s_desc.rkey.next = self.txq.ds.val().get_bits::<32>(448);
        self.c_s_desc.imm.next = self.txq.ds.val().get_bits::<32>(480);
        self.c_s_desc.addr.next = self.txq.ds.val().get_bits::<64>(512);
        self.c_s_desc.len.next = self.txq.ds.val().get_bits::<16>(576);

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
        self.op.op_ready.next = self.c_op.ready.val();
        self.op.res_valid.next = self.c_res.valid.val();
        self.op.res_ok.next = self.c_res.ok.val();
        self.op.res_psn.next = self.c_res.psn.val();
        self.op.res_pkts.next = self.c_res.pkts.val();
        self.op.res_bytes.next = self.c_res.bytes.val();
        self.op.ackrx_valid.next = self.c_m_ackrx_valid.val();
        self.op.ackrx_slot.next = self.c_m_ackrx_slot.val();
        self.c_op.valid.next = self.op.op_valid.val();
        self.c_op.code.next = self.op.op_code.val();
        self.c_op.slot.next = self.op.op_slot.val();
        self.c_op.probe.next = self.op.op_probe.val();
        self.c_op.retx.next = self.op.op_retx.val();
        self.c_op.rtt_valid.next = self.op.op_rtt_valid.val();
        self.c_op.psn.next = self.op.op_psn.val();
        self.c_op.len.next = self.op.op_len.val();
        self.c_op.rtt.next = self.op.op_rtt.val();
        self.c_op.ce_count.next = self.op.op_ce_count.val();
        self.c_op.acked.next = self.op.op_acked.val();
        self.c_op.value.next = self.op.op_value.val();
        self.c_op.sack.next = self.op.op_sack.val();
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
        self.c_s_axis.tdata.next = self.rxh.c_tdata.val();
        self.c_s_axis.tkeep.next = self.rxh.c_tkeep.val();
        self.c_s_axis.tvalid.next = self.rxh.c_tvalid.val();
        self.c_s_axis.tlast.next = self.rxh.c_tlast.val();
        self.rxh.c_tready.next = self.c_s_axis.tready.val();

        // ---- DMA reads ----
        self.ftq_ctrl.next = self.rw.val().get_bit(self.k_ftq_ctrl.val().index());
        self.ftq_prod.next = self.rw.val().get_bits::<32>(self.k_ftq_prod.val().index());
        self.ftq_base.next = self.rw.val().get_bits::<64>(self.k_ftq_base.val().index());
        self.ftq_size_log2.next = self.rw.val().get_bits::<5>(self.k_ftq_size.val().index());
        self.rd.rd_valid.next = self.c_m_rd.valid.val();
        self.rd.rd_addr.next = self.c_m_rd.addr.val();
        self.rd.rd_len.next = self.c_m_rd.len.val();
        self.c_m_rd.ready.next = self.rd.rd_ready.val();
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
        self.c_s_pay.tdata.next = self.rd.pay_tdata.val();
        self.c_s_pay.tkeep.next = self.rd.pay_tkeep.val();
        self.c_s_pay.tvalid.next = self.rd.pay_tvalid.val();
        self.c_s_pay.tlast.next = self.rd.pay_tlast.val();
        self.rd.pay_tready.next = self.c_s_pay.tready.val();

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
        self.wr.c_addr.next = self.c_m_dma.addr.val();
        self.wr.c_len.next = self.c_m_dma.len.val();
        self.wr.c_first.next = self.c_m_dma.first.val();
        self.wr.c_tdata.next = self.c_m_dma.tdata.val();
        self.wr.c_tkeep.next = self.c_m_dma.tkeep.val();
        self.wr.c_tvalid.next = self.c_m_dma.tvalid.val();
        self.wr.c_tlast.next = self.c_m_dma.tlast.val();
        self.c_m_dma.tready.next = self.wr.c_tready.val();
        self.wr.e_addr.next = self.evw.addr.val();
        self.wr.e_len.next = self.evw.len.val();
        self.wr.e_first.next = self.evw.first.val();
        self.wr.e_tdata.next = self.evw.tdata.val();
        self.wr.e_tkeep.next = self.evw.tkeep.val();
        self.wr.e_tvalid.next = self.evw.tvalid.val();
        self.wr.e_tlast.next = self.evw.tlast.val();
        self.evw.tready.next = self.wr.e_tready.val();
        self.wr.f_addr.next = self.frw.addr.val();
        self.wr.f_len.next = self.frw.len.val();
        self.wr.f_first.next = self.frw.first.val();
        self.wr.f_tdata.next = self.frw.tdata.val();
        self.wr.f_tkeep.next = self.frw.tkeep.val();
        self.wr.f_tvalid.next = self.frw.tvalid.val();
        self.wr.f_tlast.next = self.frw.tlast.val();
        self.frw.tready.next = self.wr.f_tready.val();
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

        // ---- the read-only registers: the one a BAR read asks for ----
        self.rd_flags.next = 0.into();
        self.rd_flags.next = self
            .rd_flags
            .val()
            .replace_bit(0, self.c_rd.rtt_valid.val());
        self.rd_flags.next = self
            .rd_flags
            .val()
            .replace_bit(1, self.c_rd.quarantined.val());
        self.rd_flags.next =
            self.rd_flags.val() | (bit_cast::<32, 4>(self.c_rd.backoff.val()) << 2);
        self.rd_flags.next = self.rd_flags.val().replace_bit(6, self.c_rd.can_send.val());
        self.ro_rd_data.next = 0.into();
        if self.ro_rd_valid.val() {
            if self.ro_rd_addr.val() == self.k_ro_cnt_bar_bad.val() {
                self.ro_rd_data.next = self.cnt_bar_bad.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_cfg_writes.val() {
                self.ro_rd_data.next = self.cnt.cfg_writes.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_cnt_val.val() {
                self.ro_rd_data.next = self.c_cnt.val.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_eth_cnt_val.val() {
                self.ro_rd_data.next = self.c_eth_cnt.val.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ack_cnt_frames.val() {
                self.ro_rd_data.next = self.c_ack_cnt_frames.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ack_cnt_ece.val() {
                self.ro_rd_data.next = self.c_ack_cnt_ece.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ack_cnt_v6.val() {
                self.ro_rd_data.next = self.c_ack_cnt_v6.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_applied.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.applied.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_unmapped.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.unmapped.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_overflow.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.overflow.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_pair_err.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.pair_err.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_ackrx_cnt_refused.val() {
                self.ro_rd_data.next = self.c_ackrx_cnt.refused.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_fw_cnt_up.val() {
                self.ro_rd_data.next = self.c_fw_cnt_up.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_fw_cnt_trunc.val() {
                self.ro_rd_data.next = self.c_fw_cnt_trunc.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_fwtx_cnt_frames.val() {
                self.ro_rd_data.next = self.c_fwtx_cnt_frames.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_tx_err.val() {
                self.ro_rd_data.next = bit_cast::<32, 1>(self.c_m_err.val().into());
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_eth_frames.val() {
                self.ro_rd_data.next = self.cnt.eth_frames.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_eth_drops.val() {
                self.ro_rd_data.next = self.cnt.eth_drops.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_rx_hold.val() {
                self.ro_rd_data.next = self.rxh.held.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_ev_lost.val() {
                self.ro_rd_data.next = self.cnt_ev_lost.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_txq_bad.val() {
                self.ro_rd_data.next = self.txq.bad.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_ftq_bad.val() {
                self.ro_rd_data.next = self.cnt_ftq_bad.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_bad_tag.val() {
                self.ro_rd_data.next = self.cnt.bad_tag.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_cnt_txq_ops.val() {
                self.ro_rd_data.next = self.op.ops.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_op_status.val() {
                self.ro_rd_data.next = bit_cast::<32, 3>(self.op.status.val());
            }
            if self.ro_rd_addr.val() == self.k_ro_op_res_psn.val() {
                self.ro_rd_data.next = self.op.last_psn.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_op_res_pkts.val() {
                self.ro_rd_data.next = self.op.last_pkts.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_op_res_bytes.val() {
                self.ro_rd_data.next = self.op.last_bytes.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_rd_entropy.val() {
                self.ro_rd_data.next = bit_cast::<32, 16>(self.c_rd.entropy.val());
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_next_psn.val() {
                self.ro_rd_data.next = self.c_rd.next_psn.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_una.val() {
                self.ro_rd_data.next = self.c_rd.una.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_inflight.val() {
                self.ro_rd_data.next = self.c_rd.inflight.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_window.val() {
                self.ro_rd_data.next = self.c_rd.window.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_srtt.val() {
                self.ro_rd_data.next = self.c_rd.srtt.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_rttvar.val() {
                self.ro_rd_data.next = self.c_rd.rttvar.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_ecn_ewma.val() {
                self.ro_rd_data.next = self.c_rd.ecn_ewma.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_loss_ewma.val() {
                self.ro_rd_data.next = self.c_rd.loss_ewma.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_samples.val() {
                self.ro_rd_data.next = self.c_rd.samples.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_sent.val() {
                self.ro_rd_data.next = self.c_rd.sent.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_retransmitted.val() {
                self.ro_rd_data.next = self.c_rd.retransmitted.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_acked.val() {
                self.ro_rd_data.next = self.c_rd.acked.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_lost.val() {
                self.ro_rd_data.next = self.c_rd.lost.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_ce_marked.val() {
                self.ro_rd_data.next = self.c_rd.ce_marked.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_repaths.val() {
                self.ro_rd_data.next = self.c_rd.repaths.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_c_rd_timeouts.val() {
                self.ro_rd_data.next = self.c_rd.timeouts.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_rd_flags.val() {
                self.ro_rd_data.next = self.rd_flags.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_txq_cons.val() {
                self.ro_rd_data.next = self.txq.cons.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_ftq_cons.val() {
                self.ro_rd_data.next = self.ftq_cons.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_evq_prod.val() {
                self.ro_rd_data.next = self.evq_prod.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_frq_prod.val() {
                self.ro_rd_data.next = self.frq_prod.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_irq_count0.val() {
                self.ro_rd_data.next = self.irq_count0.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_irq_count1.val() {
                self.ro_rd_data.next = self.irq_count1.val();
            }
            if self.ro_rd_addr.val() == self.k_ro_irq_count2.val() {
                self.ro_rd_data.next = self.irq_count2.val();
            }
        }
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

/// The address of the read-only register whose source in
/// [`regs::BLOCKS`](super::regs::BLOCKS) is the signal `src`.
///
/// # Panics
/// If no register, or more than one, names it.
pub(super) fn ro_addr(src: &str) -> Constant<Bits<16>> {
    let addrs: Vec<u16> = ro_sources()
        .into_iter()
        .filter(|(_, s)| *s == src)
        .map(|(a, _)| a)
        .collect();
    assert_eq!(
        addrs.len(),
        1,
        "the register map names {src} {} times",
        addrs.len()
    );
    konst(usize::from(addrs[0]))
}
