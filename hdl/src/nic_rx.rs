//! The whole receive side from Ethernet frames: [`RxEth`] (Ethernet, IP,
//! UDP) feeding [`RxCore`] (parser, ICRC, tables, checks, placement).
//!
//! A thin wrapper: the front end's payload stream and pseudo-header fields
//! drive the core's `s_axis` and `s_pseudo`; every other core bus
//! ([`crate::bus`]) passes through under its own name (one `link` each), and
//! the front end's own ports get an `eth_` prefix (`eth_cfg_port*`,
//! `eth_cnt`, `m_eth_ev`). The IP CE mark of the datagram whose first beat
//! enters the core (same timing as `s_pseudo`) drives the core's
//! `s_ecn_ce`, the path tracker's CE input.

use rust_hdl::prelude::*;

use crate::bus::{AckOut, AxisIn, CfgIn, CounterPort, DmaWriteOut, EthEvOut, TapOut, VerdictOut};
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
    pub s_axis: AxisIn<W, B>,
    /// Front end: write the accepted UDP port.
    pub eth_cfg_port_we: Signal<In, Bit>,
    /// Front end: the UDP port.
    pub eth_cfg_port: Signal<In, Bits<16>>,
    /// Front end: counters per `EthDrop` code.
    pub eth_cnt: CounterPort<4>,
    /// Front end: one event per Ethernet frame.
    pub m_eth_ev: EthEvOut,
    /// Core: time in ns (timestamps the ACKs).
    pub now: Signal<In, Bits<64>>,
    /// Core: table write port (9-bit address, `rx_place::cfg`).
    pub cfg: CfgIn<9>,
    /// Core: DMA writes.
    pub m_dma: DmaWriteOut<W, B>,
    /// Core: verdict events.
    pub m_ev: VerdictOut,
    /// Core: counters per verdict code.
    pub cnt: CounterPort<5>,
    /// Core: ACK datagrams.
    pub m_ack: AckOut<W, B>,
    /// Tap: the datagram beats the core takes (the front end's output).
    pub m_tap: TapOut<W, B>,
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
        self.eth.s_axis_tdata.next = self.s_axis.tdata.val();
        self.eth.s_axis_tkeep.next = self.s_axis.tkeep.val();
        self.eth.s_axis_tvalid.next = self.s_axis.tvalid.val();
        self.eth.s_axis_tlast.next = self.s_axis.tlast.val();
        self.s_axis.tready.next = self.eth.s_axis_tready.val();
        self.eth.cfg_port_we.next = self.eth_cfg_port_we.val();
        self.eth.cfg_port.next = self.eth_cfg_port.val();
        self.eth.cnt_sel.next = self.eth_cnt.sel.val();
        self.eth_cnt.val.next = self.eth.cnt_val.val();
        self.m_eth_ev.valid.next = self.eth.m_ev_valid.val();
        self.m_eth_ev.reason.next = self.eth.m_ev_reason.val();

        // Front end to core.
        self.core.s_axis.tdata.next = self.eth.m_axis_tdata.val();
        self.core.s_axis.tkeep.next = self.eth.m_axis_tkeep.val();
        self.core.s_axis.tvalid.next = self.eth.m_axis_tvalid.val() & !self.s_hold.val();
        self.core.s_axis.tlast.next = self.eth.m_axis_tlast.val();
        self.eth.m_axis_tready.next = self.core.s_axis.tready.val() & !self.s_hold.val();
        self.core.s_pseudo.src_ip.next = self.eth.m_pseudo_src_ip.val();
        self.core.s_pseudo.dst_ip.next = self.eth.m_pseudo_dst_ip.val();
        self.core.s_pseudo.src_port.next = self.eth.m_pseudo_src_port.val();
        self.core.s_pseudo.dst_port.next = self.eth.m_pseudo_dst_port.val();
        self.core.s_pseudo.udp_len.next = self.eth.m_pseudo_udp_len.val();
        self.core.s_ecn_ce.next = self.eth.m_ecn.val().all();

        // Core buses, passed through.
        self.core.now.next = self.now.val();
        CfgIn::<9>::link(&mut self.cfg, &mut self.core.cfg);
        DmaWriteOut::<W, B>::link(&mut self.m_dma, &mut self.core.m_dma);
        VerdictOut::link(&mut self.m_ev, &mut self.core.m_ev);
        CounterPort::<5>::link(&mut self.cnt, &mut self.core.cnt);
        AckOut::<W, B>::link(&mut self.m_ack, &mut self.core.m_ack);

        // The core's input as taken, for the ACK receiver in the top.
        self.m_tap.tdata.next = self.eth.m_axis_tdata.val();
        self.m_tap.tkeep.next = self.eth.m_axis_tkeep.val();
        self.m_tap.tvalid.next =
            self.eth.m_axis_tvalid.val() & self.core.s_axis.tready.val() & !self.s_hold.val();
        self.m_tap.tlast.next = self.eth.m_axis_tlast.val();
    }
}
