//! [`EthPhy`]: the clocks, the resets and the Ethernet port that every
//! ButterStick top shares.

use rust_hdl::prelude::*;

use crate::board::RgmiiIo;
use crate::board::ecp5::{Pll, PllSettings};
use crate::helpers::native_block;
use crate::mac::{MacRx, MacTx};

native_block! {
    /// The ButterStick's clocks and its Gigabit port as two byte streams: a
    /// PLL (`EHXPLLL`, its settings chosen by the top) makes `clk`, the
    /// 125 MHz GMII transmit clock, the same a quarter period late for the
    /// forwarded RGMII clock, and `clk2` (the third output, if the settings
    /// have one) from the 30 MHz oscillator; [`RgmiiIo`] and the native MAC
    /// ([`MacRx`] on the PHY's receive clock, [`MacTx`] on `clk`) turn the
    /// RGMII pins into frames of bytes (`rx_*`, in `rgmii_rxc`'s domain;
    /// `tx_*`, in `clk`'s).
    ///
    /// Reset: the PHY is held in reset (`eth_rst_n` low) for 2^20 `clk`
    /// clocks (8.4 ms) after the PLL locks, the MACs for 2^21; `rst` is that
    /// reset in `clk`'s domain (for the top's other blocks, to be synchronised
    /// into their clocks), `rx_rst` the same synchronised into `rgmii_rxc`.
    /// A PLL that loses lock restarts it all.
    EthPhy []
    /// The port with its PLL set to `pll`.
    fn new(pll: PllSettings);
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
        /// The GMII transmit clock (125 MHz).
        clk: Signal<Out, Clock>,
        /// The PLL's third output (low without one).
        clk2: Signal<Out, Clock>,
        /// Reset, in `clk`'s domain.
        rst: Signal<Out, Bit>,
        /// Reset, in `rgmii_rxc`'s domain.
        rx_rst: Signal<Out, Bit>,
        /// A received frame's byte (good frames only, no FCS).
        rx_data: Signal<Out, Bits<8>>,
        /// The byte is valid.
        rx_valid: Signal<Out, Bit>,
        /// The frame's last byte.
        rx_last: Signal<Out, Bit>,
        /// The byte is taken.
        rx_ready: Signal<In, Bit>,
        /// Good frames received.
        rx_frames: Signal<Out, Bits<32>>,
        /// A byte of a frame to send (no FCS).
        tx_data: Signal<In, Bits<8>>,
        /// The byte is valid.
        tx_valid: Signal<In, Bit>,
        /// The frame's last byte.
        tx_last: Signal<In, Bit>,
        /// The byte is taken.
        tx_ready: Signal<Out, Bit>,
        /// Frames sent.
        tx_frames: Signal<Out, Bits<32>>,
    }
    state {
        pll: Pll = Pll::new(pll),
        io: RgmiiIo,
        mac_rx: MacRx,
        mac_tx: MacTx,
        por: DFF<Bits<22>>,
        rx_sync: BitSynchronizer,
    }
    consts {
    }
}

impl Logic for EthPhy {
    #[hdl_gen]
    fn update(&mut self) {
        // Clocks and the power-on reset, restarted while the PLL is unlocked.
        self.pll.clock_in.next = self.clk30.val();
        self.clk.next = self.pll.clk.val();
        self.clk2.next = self.pll.clk2.val();
        self.por.clock.next = self.pll.clk.val();
        self.por.d.next = self.por.q.val();
        if !self.por.q.val().get_bit(21) {
            self.por.d.next = self.por.q.val() + 1;
        }
        if !self.pll.locked.val() {
            self.por.d.next = 0.into();
        }
        self.eth_rst_n.next = self.por.q.val().get_bit(20);
        self.rst.next = !self.por.q.val().get_bit(21);
        self.rx_sync.clock.next = self.rgmii_rxc.val();
        self.rx_sync.sig_in.next = !self.por.q.val().get_bit(21);
        self.rx_rst.next = self.rx_sync.sig_out.val();

        // The pins.
        self.io.clock.next = self.pll.clk.val();
        self.io.clock90.next = self.pll.clk90.val();
        self.io.rgmii_rxc.next = self.rgmii_rxc.val();
        self.io.rgmii_rxd.next = self.rgmii_rxd.val();
        self.io.rgmii_rx_ctl.next = self.rgmii_rx_ctl.val();
        self.rgmii_txc.next = self.io.rgmii_txc.val();
        self.rgmii_txd.next = self.io.rgmii_txd.val();
        self.rgmii_tx_ctl.next = self.io.rgmii_tx_ctl.val();

        // Receive, in the PHY's clock.
        self.mac_rx.clock.next = self.rgmii_rxc.val();
        self.mac_rx.rst.next = self.rx_sync.sig_out.val();
        self.mac_rx.gmii_rxd.next = self.io.gmii_rxd.val();
        self.mac_rx.gmii_rx_dv.next = self.io.gmii_rx_dv.val();
        self.mac_rx.gmii_rx_er.next = self.io.gmii_rx_er.val();
        self.rx_data.next = self.mac_rx.m_axis_tdata.val();
        self.rx_valid.next = self.mac_rx.m_axis_tvalid.val();
        self.rx_last.next = self.mac_rx.m_axis_tlast.val();
        self.mac_rx.m_axis_tready.next = self.rx_ready.val();
        self.rx_frames.next = self.mac_rx.frames.val();

        // Transmit, on the PLL's clock.
        self.mac_tx.clock.next = self.pll.clk.val();
        self.mac_tx.rst.next = !self.por.q.val().get_bit(21);
        self.mac_tx.s_axis_tdata.next = self.tx_data.val();
        self.mac_tx.s_axis_tvalid.next = self.tx_valid.val();
        self.mac_tx.s_axis_tlast.next = self.tx_last.val();
        self.tx_ready.next = self.mac_tx.s_axis_tready.val();
        self.tx_frames.next = self.mac_tx.frames.val();
        self.io.gmii_txd.next = self.mac_tx.gmii_txd.val();
        self.io.gmii_tx_en.next = self.mac_tx.gmii_tx_en.val();
        self.io.gmii_tx_er.next = self.mac_tx.gmii_tx_er.val();
    }
}
