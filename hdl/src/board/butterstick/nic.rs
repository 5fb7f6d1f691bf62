//! [`NicBoard`]: the NIC on the ButterStick, driven over a UART.

use rust_hdl::prelude::*;

use super::beats::{RxCross, TxCross};
use super::phy::EthPhy;
use super::{CORE_MHZ, GMII_MHZ, OSCILLATOR_MHZ, UART_BAUD};
use crate::NicDevice;
use crate::board::ecp5::{GlobalBuffer, PllSettings};
use crate::board::mgmt_port::MgmtPort;
use crate::helpers::native_block;

/// Word address bits of the board's memory: 8 · 2^12 = 32 KiB of block RAM.
const MEM_N: usize = 12;
/// The management engine's window: 2^15 bytes, the memory.
const MEM_M: usize = 15;
/// Bits of the SYZYGY regulators' pulse-density counter.
const PDM_BITS: usize = 10;

/// The share of time (of 2^[`PDM_BITS`]) a SYZYGY VCCIO regulator's control
/// pin is high for `volts` on its bank, from the ButterStick's regulator
/// network as amaranth-boards' ButterStick platform describes it: a buck
/// converter holding its feedback node at 0.6 V, set resistor 13 kΩ,
/// feedback resistor 53.6 kΩ, the filtered control voltage injected
/// through 68 kΩ (a high pin lowers the output).
fn vccio_duty(volts: f64) -> usize {
    let (vfb, ri, rf, rs) = (0.6, 68_000.0, 53_600.0, 13_000.0);
    let vctl = vfb * (1.0 + ri / rf) + ri * vfb / rs - (ri / rf) * volts;
    (vctl / 3.3 * f64::from(1u32 << PDM_BITS)) as usize
}

native_block! {
    /// The NIC on the ButterStick: [`NicDevice`] at 64 bits on a 20 MHz core
    /// clock, its BAR0 and its host memory (32 KiB of block RAM) behind a
    /// [`MgmtPort`] on a UART (115,200 bit/s 8N1, on the SYZYGY0 port), and the
    /// RGMII PHY through the native MAC.
    ///
    /// Clocks: [`EthPhy`]'s PLL makes 125 MHz (the GMII transmit clock) and
    /// 20 MHz (the core) from the 30 MHz oscillator, both from a 500 MHz VCO;
    /// the receive MAC runs on the PHY's receive clock. Receive: the MAC →
    /// [`RxCross`] (bytes to beats in the PHY's clock, an asynchronous FIFO
    /// of 64 beats) → the device. Transmit: the device → [`TxCross`] (an 8 KiB asynchronous FIFO;
    /// a frame starts only when it is whole in it) → the MAC.
    ///
    /// Reset as [`EthPhy`]'s: the PHY is held for 2^20 GMII clocks after the
    /// PLL locks, everything else for 2^21 (synchronised into each clock);
    /// the core clock's reset reaches its flip-flops over a global network
    /// ([`GlobalBuffer`]).
    /// The SYZYGY banks' regulators (`vccio_pdm`, `vccio_en`) are set to 3.3 V
    /// (ports A and B) and 1.8 V (port C, the USB PHY's minimum) by pulse
    /// density and enabled 2^23 core clocks (0.42 s) after configuration,
    /// after the control filters settled. LEDs: a heartbeat (the core clock
    /// runs), the low bits of received and sent frame counts.
    NicBoard []
    let pll = PllSettings::exact_two(OSCILLATOR_MHZ, GMII_MHZ, CORE_MHZ)
        .expect("a PLL setting for 125 and 20 MHz");
    let core_hz = CORE_MHZ as usize * 1_000_000;
    let baud = UART_BAUD as usize;
    ports {
        /// The 30 MHz oscillator.
        clk30: Signal<In, Clock>,
        /// RGMII receive clock (from the PHY).
        rgmii_rxc: Signal<In, Clock>,
        /// RGMII receive data.
        rgmii_rxd: Signal<In, Bits<4>>,
        /// RGMII receive control.
        rgmii_rx_ctl: Signal<In, Bit>,
        /// RGMII transmit clock.
        rgmii_txc: Signal<Out, Bit>,
        /// RGMII transmit data.
        rgmii_txd: Signal<Out, Bits<4>>,
        /// RGMII transmit control.
        rgmii_tx_ctl: Signal<Out, Bit>,
        /// PHY reset, low active.
        eth_rst_n: Signal<Out, Bit>,
        /// The management line from the host (idle high).
        uart_rx: Signal<In, Bit>,
        /// The management line to the host.
        uart_tx: Signal<Out, Bit>,
        /// SYZYGY VCCIO regulators' control pins (ports A, B, C).
        vccio_pdm: Signal<Out, Bits<3>>,
        /// SYZYGY VCCIO regulators' enable.
        vccio_en: Signal<Out, Bit>,
        /// LED anodes.
        led_a: Signal<Out, Bits<7>>,
        /// LED colour cathodes.
        led_c: Signal<Out, Bits<3>>,
    }
    state {
        phy: EthPhy = EthPhy::new(pll),
        rx_cross: RxCross,
        tx_cross: TxCross,
        dev: NicDevice<64, 8>,
        mgmt: MgmtPort<MEM_N, MEM_M> = MgmtPort::new((core_hz + baud / 2) / baud),
        core_rst: BitSynchronizer,
        // The core's reset on a global network (3,000 flip-flops and more).
        core_rst_g: GlobalBuffer,
        now: DFF<Bits<64>>,
        pwm: DFF<Bits<PDM_BITS>>,
        settle: DFF<Bits<24>>,
        pdm: Signal<Local, Bits<3>>,
    }
    consts {
        c_ns: Constant<Bits<64>> = Constant::new((1000 / CORE_MHZ as usize).to_bits()),
        c_pdm: [Constant<Bits<PDM_BITS>>; 3] =
            [3.3, 3.3, 1.8].map(|v| Constant::new(vccio_duty(v).to_bits())),
        c_blue: Constant<Bits<3>> = Constant::new(2usize.to_bits()),
    }
}

impl Logic for NicBoard {
    #[hdl_gen]
    fn update(&mut self) {
        // Pins, and the core clock's reset.
        self.phy.clk30.next = self.clk30.val();
        self.phy.rgmii_rxc.next = self.rgmii_rxc.val();
        self.phy.rgmii_rxd.next = self.rgmii_rxd.val();
        self.phy.rgmii_rx_ctl.next = self.rgmii_rx_ctl.val();
        self.rgmii_txc.next = self.phy.rgmii_txc.val();
        self.rgmii_txd.next = self.phy.rgmii_txd.val();
        self.rgmii_tx_ctl.next = self.phy.rgmii_tx_ctl.val();
        self.eth_rst_n.next = self.phy.eth_rst_n.val();
        self.core_rst.clock.next = self.phy.clk2.val();
        self.core_rst.sig_in.next = self.phy.rst.val();
        self.core_rst_g.i.next = self.core_rst.sig_out.val();

        // Receive, in the PHY's clock: the MAC's bytes into beats, across.
        self.rx_cross.wclock.next = self.rgmii_rxc.val();
        self.rx_cross.wrst.next = self.phy.rx_rst.val();
        self.rx_cross.s_data.next = self.phy.rx_data.val();
        self.rx_cross.s_valid.next = self.phy.rx_valid.val();
        self.rx_cross.s_last.next = self.phy.rx_last.val();
        self.phy.rx_ready.next = self.rx_cross.s_ready.val();

        // The device, on the core clock.
        self.dev.clock.next = self.phy.clk2.val();
        self.dev.rst.next = self.core_rst_g.o.val();
        self.now.clock.next = self.phy.clk2.val();
        self.now.d.next = self.now.q.val() + self.c_ns.val();
        self.dev.now.next = self.now.q.val();
        self.rx_cross.rclock.next = self.phy.clk2.val();
        self.dev.s_axis_tdata.next = self.rx_cross.m_tdata.val();
        self.dev.s_axis_tkeep.next = self.rx_cross.m_tkeep.val();
        self.dev.s_axis_tlast.next = self.rx_cross.m_tlast.val();
        self.dev.s_axis_tvalid.next = self.rx_cross.m_tvalid.val();
        self.rx_cross.m_tready.next = self.dev.s_axis_tready.val();
        // Interrupts have nowhere to go: taken and dropped.
        self.dev.m_irq_ready.next = true;

        // The management path: BAR0 and the device's host memory.
        self.mgmt.clock.next = self.phy.clk2.val();
        self.mgmt.rst.next = self.core_rst_g.o.val();
        self.mgmt.rxd.next = self.uart_rx.val();
        self.uart_tx.next = self.mgmt.txd.val();
        self.dev.bar_wr_valid.next = self.mgmt.bar_wr_valid.val();
        self.dev.bar_wr_addr.next = self.mgmt.bar_wr_addr.val();
        self.dev.bar_wr_data.next = self.mgmt.bar_wr_data.val();
        self.dev.bar_rd_valid.next = self.mgmt.bar_rd_valid.val();
        self.dev.bar_rd_addr.next = self.mgmt.bar_rd_addr.val();
        self.mgmt.bar_rd_resp_valid.next = self.dev.bar_rd_resp_valid.val();
        self.mgmt.bar_rd_resp_data.next = self.dev.bar_rd_resp_data.val();
        self.mgmt.m_dmar_valid.next = self.dev.m_dmar_valid.val();
        self.dev.m_dmar_ready.next = self.mgmt.m_dmar_ready.val();
        self.mgmt.m_dmar_addr.next = self.dev.m_dmar_addr.val();
        self.mgmt.m_dmar_len.next = self.dev.m_dmar_len.val();
        self.mgmt.m_dmar_tag.next = self.dev.m_dmar_tag.val();
        self.dev.s_dmac_tdata.next = self.mgmt.s_dmac_tdata.val();
        self.dev.s_dmac_tkeep.next = self.mgmt.s_dmac_tkeep.val();
        self.dev.s_dmac_tvalid.next = self.mgmt.s_dmac_tvalid.val();
        self.mgmt.s_dmac_tready.next = self.dev.s_dmac_tready.val();
        self.dev.s_dmac_tlast.next = self.mgmt.s_dmac_tlast.val();
        self.dev.s_dmac_tag.next = self.mgmt.s_dmac_tag.val();
        self.mgmt.m_dmaw_addr.next = self.dev.m_dmaw_addr.val();
        self.mgmt.m_dmaw_first.next = self.dev.m_dmaw_first.val();
        self.mgmt.m_dmaw_tdata.next = self.dev.m_dmaw_tdata.val();
        self.mgmt.m_dmaw_tkeep.next = self.dev.m_dmaw_tkeep.val();
        self.mgmt.m_dmaw_tvalid.next = self.dev.m_dmaw_tvalid.val();
        self.dev.m_dmaw_tready.next = self.mgmt.m_dmaw_tready.val();

        // Transmit: the device's beats across to the GMII clock, as bytes.
        self.tx_cross.wclock.next = self.phy.clk2.val();
        self.tx_cross.wrst.next = self.core_rst_g.o.val();
        self.tx_cross.rclock.next = self.phy.clk.val();
        self.tx_cross.rrst.next = self.phy.rst.val();
        self.tx_cross.s_tdata.next = self.dev.m_axis_tdata.val();
        self.tx_cross.s_tkeep.next = self.dev.m_axis_tkeep.val();
        self.tx_cross.s_tvalid.next = self.dev.m_axis_tvalid.val();
        self.dev.m_axis_tready.next = self.tx_cross.s_tready.val();
        self.tx_cross.s_tlast.next = self.dev.m_axis_tlast.val();
        self.phy.tx_data.next = self.tx_cross.m_data.val();
        self.phy.tx_valid.next = self.tx_cross.m_valid.val();
        self.phy.tx_last.next = self.tx_cross.m_last.val();
        self.tx_cross.m_ready.next = self.phy.tx_ready.val();

        // SYZYGY VCCIO: pulse density per bank, enabled once settled.
        self.pwm.clock.next = self.phy.clk2.val();
        self.pwm.d.next = self.pwm.q.val() + 1;
        self.settle.clock.next = self.phy.clk2.val();
        self.settle.d.next = self.settle.q.val();
        if !self.settle.q.val().get_bit(23) {
            self.settle.d.next = self.settle.q.val() + 1;
        }
        self.pdm.next = 0.into();
        for i in 0..3 {
            self.pdm.next = self
                .pdm
                .val()
                .replace_bit(i, self.pwm.q.val() < self.c_pdm[i].val());
        }
        self.vccio_pdm.next = self.pdm.val();
        self.vccio_en.next = self.settle.q.val().get_bit(23);

        // LEDs: heartbeat (bit 29 of the ns count: about 0.5 s), frames.
        self.led_a.next = bit_cast::<7, 1>(self.now.q.val().get_bit(29).into())
            | (bit_cast::<7, 3>(self.phy.rx_frames.val().get_bits::<3>(0)) << 1)
            | (bit_cast::<7, 3>(self.phy.tx_frames.val().get_bits::<3>(0)) << 4);
        self.led_c.next = self.c_blue.val();
    }
}
