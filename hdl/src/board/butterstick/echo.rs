//! [`EthEcho`]: the ButterStick top that sends back every good frame it
//! receives, to bring up the MAC and the PHY.

use rust_hdl::prelude::*;

use super::{GMII_MHZ, OSCILLATOR_MHZ};
use crate::board::RgmiiIo;
use crate::board::ecp5::{Pll, PllSettings};
use crate::mac::{MacRx, MacTx};

/// Ethernet echo: every frame [`MacRx`] takes from the PHY (FCS right, 64
/// bytes or more) goes back out through [`MacTx`] unchanged, with a fresh
/// FCS. For a cable straight to a host (a switch would learn the host's
/// address on the wrong port).
///
/// Clocks: a PLL makes 125 MHz (and the same a quarter period late for the
/// forwarded transmit clock) from the 30 MHz oscillator; the receive MAC runs
/// on the PHY's receive clock. An asynchronous FIFO (4,096 bytes with their
/// last-byte marks) joins the two; the transmit side starts a frame only
/// when 16 bytes of it wait, so the few parts per million between the two
/// clocks can never starve it within a frame (the receive side writes one
/// byte per clock until the frame's end).
///
/// Reset: the PHY is held in reset for 2^20 clocks (8.4 ms) after the PLL
/// locks, the MACs for 2^21. The LEDs show the low bits of the echoed frame
/// count.
#[derive(LogicBlock)]
pub struct EthEcho {
    /// The 30 MHz oscillator.
    pub clk30: Signal<In, Clock>,
    /// RGMII receive clock (from the PHY).
    pub rgmii_rxc: Signal<In, Clock>,
    /// RGMII receive data.
    pub rgmii_rxd: Signal<In, Bits<4>>,
    /// RGMII receive control.
    pub rgmii_rx_ctl: Signal<In, Bit>,
    /// RGMII transmit clock.
    pub rgmii_txc: Signal<Out, Bit>,
    /// RGMII transmit data.
    pub rgmii_txd: Signal<Out, Bits<4>>,
    /// RGMII transmit control.
    pub rgmii_tx_ctl: Signal<Out, Bit>,
    /// PHY reset, low active.
    pub eth_rst_n: Signal<Out, Bit>,
    /// LED anodes.
    pub led_a: Signal<Out, Bits<7>>,
    /// LED colour cathodes.
    pub led_c: Signal<Out, Bits<3>>,
    pll: Pll,
    io: RgmiiIo,
    rx: MacRx,
    tx: MacTx,
    fifo: AsynchronousFIFO<Bits<9>, 12, 13, 16>,
    por: DFF<Bits<22>>,
    rx_rst: BitSynchronizer,
    in_frame: DFF<Bit>,
    may_start: DFF<Bit>,
    offer: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    c_blue: Constant<Bits<3>>,
}

impl Default for EthEcho {
    fn default() -> Self {
        let pll = PllSettings::exact(OSCILLATOR_MHZ, GMII_MHZ).expect("a PLL setting for 125 MHz");
        Self {
            clk30: Default::default(),
            rgmii_rxc: Default::default(),
            rgmii_rxd: Default::default(),
            rgmii_rx_ctl: Default::default(),
            rgmii_txc: Default::default(),
            rgmii_txd: Default::default(),
            rgmii_tx_ctl: Default::default(),
            eth_rst_n: Default::default(),
            led_a: Default::default(),
            led_c: Default::default(),
            pll: Pll::new(pll),
            io: Default::default(),
            rx: Default::default(),
            tx: Default::default(),
            fifo: Default::default(),
            por: Default::default(),
            rx_rst: Default::default(),
            in_frame: Default::default(),
            may_start: Default::default(),
            offer: Default::default(),
            take: Default::default(),
            c_blue: Constant::new(2usize.to_bits()),
        }
    }
}

impl Logic for EthEcho {
    #[hdl_gen]
    fn update(&mut self) {
        self.pll.clock_in.next = self.clk30.val();
        self.por.clock.next = self.pll.clk.val();
        self.por.d.next = self.por.q.val();
        self.in_frame.clock.next = self.pll.clk.val();
        self.in_frame.d.next = self.in_frame.q.val();
        self.may_start.clock.next = self.pll.clk.val();
        // Power-on reset, restarted while the PLL is unlocked.
        if !self.por.q.val().get_bit(21) {
            self.por.d.next = self.por.q.val() + 1;
        }
        if !self.pll.locked.val() {
            self.por.d.next = 0.into();
        }
        self.eth_rst_n.next = self.por.q.val().get_bit(20);
        self.rx_rst.clock.next = self.rgmii_rxc.val();
        self.rx_rst.sig_in.next = !self.por.q.val().get_bit(21);

        // Pins.
        self.io.clock.next = self.pll.clk.val();
        self.io.clock90.next = self.pll.clk90.val();
        self.io.rgmii_rxc.next = self.rgmii_rxc.val();
        self.io.rgmii_rxd.next = self.rgmii_rxd.val();
        self.io.rgmii_rx_ctl.next = self.rgmii_rx_ctl.val();
        self.rgmii_txc.next = self.io.rgmii_txc.val();
        self.rgmii_txd.next = self.io.rgmii_txd.val();
        self.rgmii_tx_ctl.next = self.io.rgmii_tx_ctl.val();

        // Receive side, in the PHY's clock domain, into the FIFO.
        self.rx.clock.next = self.rgmii_rxc.val();
        self.rx.rst.next = self.rx_rst.sig_out.val();
        self.rx.gmii_rxd.next = self.io.gmii_rxd.val();
        self.rx.gmii_rx_dv.next = self.io.gmii_rx_dv.val();
        self.rx.gmii_rx_er.next = self.io.gmii_rx_er.val();
        self.fifo.write_clock.next = self.rgmii_rxc.val();
        self.fifo.data_in.next = bit_cast::<9, 8>(self.rx.m_axis_tdata.val())
            | (bit_cast::<9, 1>(self.rx.m_axis_tlast.val().into()) << 8);
        self.fifo.write.next = self.rx.m_axis_tvalid.val() & !self.fifo.full.val();
        self.rx.m_axis_tready.next = !self.fifo.full.val();

        // Transmit side, on the PLL's clock, out of the FIFO.
        self.fifo.read_clock.next = self.pll.clk.val();
        self.tx.clock.next = self.pll.clk.val();
        self.tx.rst.next = !self.por.q.val().get_bit(21);
        // 16 bytes wait, a clock late: off the FIFO's fill-level arithmetic
        // (safe, as the fill only grows while no frame is being read).
        self.may_start.d.next = !self.fifo.almost_empty.val();
        self.offer.next = !self.fifo.empty.val() & (self.in_frame.q.val() | self.may_start.q.val());
        self.tx.s_axis_tvalid.next = self.offer.val();
        self.tx.s_axis_tdata.next = self.fifo.data_out.val().get_bits::<8>(0);
        self.tx.s_axis_tlast.next = self.fifo.data_out.val().get_bit(8);
        self.take.next = self.offer.val() & self.tx.s_axis_tready.val();
        self.fifo.read.next = self.take.val();
        if self.take.val() {
            self.in_frame.d.next = !self.fifo.data_out.val().get_bit(8);
        }
        self.io.gmii_txd.next = self.tx.gmii_txd.val();
        self.io.gmii_tx_en.next = self.tx.gmii_tx_en.val();
        self.io.gmii_tx_er.next = self.tx.gmii_tx_er.val();

        self.led_a.next = self.tx.frames.val().get_bits::<7>(0);
        self.led_c.next = self.c_blue.val();
    }
}
