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
use crate::bus::{
    AckDoneOut, AckOut, AckRxCntOut, AxisIn, AxisOut, CfgIn, CounterPort, DatagramIn, DescIn,
    DmaWriteOut, EthEvOut, FateOut, FwRxOut, ReadReqOut, TapOut, TxCheck, TxOpIn, TxOpOut,
    TxReadPort, TxResOut, VerdictOut,
};
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
    /// Send descriptors into the TX builder.
    pub s_desc: DescIn,
    /// Payload fetch requests.
    pub m_rd: ReadReqOut,
    /// Fetched payload (`tlast`: the last beat of a fetch).
    pub s_pay: AxisIn<W, B>,
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
    /// TX table operations (the firmware's; `ready` low while the ACK
    /// receiver holds the table).
    pub op: TxOpIn<TX_SLOT_BITS>,
    /// TX table results of the firmware's operations.
    pub res: TxResOut,
    /// Fate events of the TX table.
    pub m_fate: FateOut,
    /// TX table read port: a slot's state.
    pub rd: TxReadPort<TX_SLOT_BITS>,
    /// Capture port: the last TX table result's slot's fields packed
    /// (`crate::tx_path::VIEW_BITS`), from its result's cycle until the
    /// next result (`TxPathTable::cap_view`).
    pub cap_view: Signal<Out, Bits<VIEW_BITS>>,
    /// Fate event (and `res_valid` suppressed) from an ACK the hardware
    /// applied; its slot is the next `m_ackrx_slot`.
    pub m_fate_hw: Signal<Out, Bit>,
    /// ACKs the ACK receiver applied to the table, one pulse each.
    pub m_ackrx: AckDoneOut<TX_SLOT_BITS>,
    /// The ACK receiver's counters (unmapped: left to the firmware;
    /// refused as impossible, spec §5.5 step 0).
    pub ackrx_cnt: AckRxCntOut,
    /// Firmware receive queue: the datagrams handed up (verdict 10).
    pub m_fw: FwRxOut<W, B>,
    /// Datagrams handed to the firmware.
    pub fw_cnt_up: Signal<Out, Bits<32>>,
    /// Of which cut to the queue's slot size.
    pub fw_cnt_trunc: Signal<Out, Bits<32>>,
    /// Firmware transmit port: datagrams the firmware built whole (NACK, DISCONNECT; up to 128 bytes), framed by the ACK framer between ACKs.
    pub s_fwtx: DatagramIn<W, B>,
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
        self.tx.cfg.we.next =
            self.cfg.we.val() & self.cfg.addr.val().get_bit(9) & !self.cfg.addr.val().get_bit(8);
        self.rx.cfg.addr.next = self.cfg.addr.val().get_bits::<9>(0);
        self.tx.cfg.addr.next = self.cfg.addr.val().get_bits::<8>(0);
        self.rx.cfg.data.next = self.cfg.data.val();
        self.tx.cfg.data.next = self.cfg.data.val();
        self.ackrx.cfg.we.next = self.cfg.we.val()
            & self.cfg.addr.val().get_bit(9)
            & !self.cfg.addr.val().get_bit(8)
            & self.cfg.addr.val().get_bit(7)
            & !self.cfg.addr.val().get_bit(6);
        self.ackrx.cfg.addr.next = self.cfg.addr.val().get_bits::<6>(0);
        self.ackrx.cfg.data.next = self.cfg.data.val().get_bits::<49>(0);

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
        AckOut::<W, B>::join(&mut self.rx.m_ack, &mut self.ackf.s_ack);
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
        DatagramIn::<W, B>::link(&mut self.s_fwtx, &mut self.ackf.s_fw);
        self.fwtx_cnt_frames.next = self.ackf.cnt_fw.val();

        // TX builder.
        DescIn::link(&mut self.s_desc, &mut self.tx.s_desc);
        ReadReqOut::link(&mut self.m_rd, &mut self.tx.m_rd);
        AxisIn::<W, B>::link(&mut self.s_pay, &mut self.tx.s_pay);
        self.m_err.next = self.tx.m_err.val();

        // Both frame sources into the arbiter, the arbiter to the MAC.
        AxisOut::<W, B>::join(&mut self.ackf.m_axis, &mut self.arb.s_ack);
        AxisOut::<W, B>::join(&mut self.tx.m_axis, &mut self.arb.s_data);
        AxisOut::<W, B>::link(&mut self.m_axis, &mut self.arb.m_axis);

        // Firmware receive queue: the core's input and events; it holds the
        // input while full.
        self.fwrx.clock.next = self.clock.val();
        self.fwrx.rst.next = self.rst.val();
        TapOut::<W, B>::join(&mut self.rx.m_tap, &mut self.fwrx.s_tap);
        self.fwrx.ev_valid.next = self.m_ev.valid.val();
        self.fwrx.ev_code.next = self.m_ev.code.val();
        self.fwrx.ev_src_port.next = self.m_ev.src_port.val();
        self.rx.s_hold.next = self.fwrx.hold.val();
        FwRxOut::<W, B>::link(&mut self.m_fw, &mut self.fwrx.m_fw);
        self.fw_cnt_up.next = self.fwrx.cnt_up.val();
        self.fw_cnt_trunc.next = self.fwrx.cnt_trunc.val();

        // ACK receiver: the core's input and events.
        self.ackrx.s_tap.tdata.next = self.rx.m_tap.tdata.val();
        self.ackrx.s_tap.tvalid.next = self.rx.m_tap.tvalid.val();
        self.ackrx.s_tap.tlast.next = self.rx.m_tap.tlast.val();
        self.ackrx.s_tap.ev_valid.next = self.m_ev.valid.val();
        self.ackrx.s_tap.ev_code.next = self.m_ev.code.val();
        self.ackrx.s_tap.ev_opcode.next = self.m_ev.opcode.val();
        self.ackrx.s_tap.ev_dst_qpn.next = self.m_ev.dst_qpn.val();
        self.ackrx.s_tap.ev_path.next = self.m_ev.path.val();
        self.ackrx.s_tap.ev_path_psn.next = self.m_ev.path_psn.val();
        self.ackrx.s_tap.ev_timestamp.next = self.m_ev.timestamp.val();
        self.ackrx.now.next = self.now.val();
        self.m_fate_hw.next = self.ackrx.busy.val();
        AckDoneOut::<TX_SLOT_BITS>::link(&mut self.m_ackrx, &mut self.ackrx.m_done);
        AckRxCntOut::link(&mut self.ackrx_cnt, &mut self.ackrx.cnt);

        // Per-path TX table: its operation port through the ACK receiver
        // (the firmware's operations, or its own Ack/Feedback pairs), the
        // firmware's results from it.
        TxOpIn::<TX_SLOT_BITS>::link(&mut self.op, &mut self.ackrx.s_op);
        TxOpOut::<TX_SLOT_BITS>::join(&mut self.ackrx.m_op, &mut self.paths.op);
        TxResOut::join(&mut self.paths.res, &mut self.ackrx.s_res);
        TxResOut::link(&mut self.res, &mut self.ackrx.m_res);
        TxCheck::<TX_SLOT_BITS>::join(&mut self.ackrx.ck, &mut self.paths.ck);
        FateOut::link(&mut self.m_fate, &mut self.paths.m_fate);
        self.cap_view.next = self.paths.cap_view.val();
        TxReadPort::<TX_SLOT_BITS>::link(&mut self.rd, &mut self.paths.rd);
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
