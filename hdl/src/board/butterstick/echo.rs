//! [`EthEcho`]: the ButterStick top that sends back every good frame it
//! receives, to bring up the MAC and the PHY.

use rust_hdl::prelude::*;

use super::phy::EthPhy;
use super::{GMII_MHZ, OSCILLATOR_MHZ};
use crate::board::ecp5::PllSettings;
use crate::helpers::native_block;

native_block! {
    /// Ethernet echo: every frame the MAC takes from the PHY (FCS right, 64
    /// bytes or more, [`EthPhy`]) goes back out unchanged, with a fresh
    /// FCS. For a cable straight to a host (a switch would learn the host's
    /// address on the wrong port).
    ///
    /// Clocks: [`EthPhy`]'s PLL makes 125 MHz from the 30 MHz oscillator (its
    /// third output unused); the receive MAC runs on the PHY's receive clock.
    /// An asynchronous FIFO (4,096 bytes with their
    /// last-byte marks) joins the two; the transmit side starts a frame only
    /// when 16 bytes of it wait, so the few parts per million between the two
    /// clocks can never starve it within a frame (the receive side writes one
    /// byte per clock until the frame's end).
    ///
    /// Reset as [`EthPhy`]'s. The LEDs show the low bits of the echoed frame
    /// count.
    EthEcho []
    let pll = PllSettings::exact(OSCILLATOR_MHZ, GMII_MHZ).expect("a PLL setting for 125 MHz");
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
        /// LED anodes.
        led_a: Signal<Out, Bits<7>>,
        /// LED colour cathodes.
        led_c: Signal<Out, Bits<3>>,
    }
    state {
        phy: EthPhy = EthPhy::new(pll),
        fifo: AsynchronousFIFO<Bits<9>, 12, 13, 16>,
        in_frame: DFF<Bit>,
        may_start: DFF<Bit>,
        offer: Signal<Local, Bit>,
        take: Signal<Local, Bit>,
    }
    consts {
        c_blue: Constant<Bits<3>> = Constant::new(2usize.to_bits()),
    }
}

impl Logic for EthEcho {
    #[hdl_gen]
    fn update(&mut self) {
        // Pins.
        self.phy.clk30.next = self.clk30.val();
        self.phy.rgmii_rxc.next = self.rgmii_rxc.val();
        self.phy.rgmii_rxd.next = self.rgmii_rxd.val();
        self.phy.rgmii_rx_ctl.next = self.rgmii_rx_ctl.val();
        self.rgmii_txc.next = self.phy.rgmii_txc.val();
        self.rgmii_txd.next = self.phy.rgmii_txd.val();
        self.rgmii_tx_ctl.next = self.phy.rgmii_tx_ctl.val();
        self.eth_rst_n.next = self.phy.eth_rst_n.val();

        // Receive side, in the PHY's clock domain, into the FIFO.
        self.fifo.write_clock.next = self.rgmii_rxc.val();
        self.fifo.data_in.next = bit_cast::<9, 8>(self.phy.rx_data.val())
            | (bit_cast::<9, 1>(self.phy.rx_last.val().into()) << 8);
        self.fifo.write.next = self.phy.rx_valid.val() & !self.fifo.full.val();
        self.phy.rx_ready.next = !self.fifo.full.val();

        // Transmit side, on the PLL's clock, out of the FIFO.
        self.fifo.read_clock.next = self.phy.clk.val();
        self.in_frame.clock.next = self.phy.clk.val();
        self.in_frame.d.next = self.in_frame.q.val();
        self.may_start.clock.next = self.phy.clk.val();
        // 16 bytes wait, a clock late: off the FIFO's fill-level arithmetic
        // (safe, as the fill only grows while no frame is being read).
        self.may_start.d.next = !self.fifo.almost_empty.val();
        self.offer.next = !self.fifo.empty.val() & (self.in_frame.q.val() | self.may_start.q.val());
        self.phy.tx_valid.next = self.offer.val();
        self.phy.tx_data.next = self.fifo.data_out.val().get_bits::<8>(0);
        self.phy.tx_last.next = self.fifo.data_out.val().get_bit(8);
        self.take.next = self.offer.val() & self.phy.tx_ready.val();
        self.fifo.read.next = self.take.val();
        if self.take.val() {
            self.in_frame.d.next = !self.fifo.data_out.val().get_bit(8);
        }

        self.led_a.next = self.phy.tx_frames.val().get_bits::<7>(0);
        self.led_c.next = self.c_blue.val();
    }
}
