//! [`RgmiiIo`]: GMII bytes to and from the RGMII pins of a Gigabit PHY.

use rust_hdl::prelude::*;

use super::ecp5::{Iddr, Oddr};

/// RGMII pins around a GMII interface, with ECP5 DDR registers: on transmit,
/// the low nibble and `tx_en` leave for the clock's high half, the high
/// nibble and `tx_en ^ tx_er` for its low half, and the forwarded clock
/// (`rgmii_txc`) comes from `clock90`, a quarter period late, so its edges
/// fall in the middle of the data; on receive, the same coding sampled with
/// the PHY's clock, whose domain `gmii_rx*` belong to.
///
/// Whether the PHY or the board adds the RGMII clock skew on receive is the
/// board's: this block adds none.
#[derive(LogicBlock, Default)]
pub struct RgmiiIo {
    /// Transmit clock (125 MHz).
    pub clock: Signal<In, Clock>,
    /// The same, a quarter period later.
    pub clock90: Signal<In, Clock>,
    /// GMII transmit data.
    pub gmii_txd: Signal<In, Bits<8>>,
    /// GMII transmit enable.
    pub gmii_tx_en: Signal<In, Bit>,
    /// GMII transmit error.
    pub gmii_tx_er: Signal<In, Bit>,
    /// RGMII transmit data pins.
    pub rgmii_txd: Signal<Out, Bits<4>>,
    /// RGMII transmit control pin.
    pub rgmii_tx_ctl: Signal<Out, Bit>,
    /// RGMII transmit clock pin.
    pub rgmii_txc: Signal<Out, Bit>,
    /// RGMII receive clock pin (the PHY's).
    pub rgmii_rxc: Signal<In, Clock>,
    /// RGMII receive data pins.
    pub rgmii_rxd: Signal<In, Bits<4>>,
    /// RGMII receive control pin.
    pub rgmii_rx_ctl: Signal<In, Bit>,
    /// GMII receive data (in `rgmii_rxc`'s domain).
    pub gmii_rxd: Signal<Out, Bits<8>>,
    /// GMII receive data valid.
    pub gmii_rx_dv: Signal<Out, Bit>,
    /// GMII receive error.
    pub gmii_rx_er: Signal<Out, Bit>,
    tx: [Oddr; 4],
    tx_ctl: Oddr,
    txc: Oddr,
    rx: [Iddr; 4],
    rx_ctl: Iddr,
    pins: Signal<Local, Bits<4>>,
    rx_lo: Signal<Local, Bits<4>>,
    rx_hi: Signal<Local, Bits<4>>,
}

impl Logic for RgmiiIo {
    #[hdl_gen]
    fn update(&mut self) {
        self.pins.next = 0.into();
        self.rx_lo.next = 0.into();
        self.rx_hi.next = 0.into();
        for i in 0..4 {
            self.tx[i].clock.next = self.clock.val();
            self.tx[i].d0.next = self.gmii_txd.val().get_bit(i);
            self.tx[i].d1.next = self.gmii_txd.val().get_bit(i + 4);
            self.rx[i].clock.next = self.rgmii_rxc.val();
            self.rx[i].d.next = self.rgmii_rxd.val().get_bit(i);
            self.pins.next = self.pins.val().replace_bit(i, self.tx[i].q.val());
            self.rx_lo.next = self.rx_lo.val().replace_bit(i, self.rx[i].q0.val());
            self.rx_hi.next = self.rx_hi.val().replace_bit(i, self.rx[i].q1.val());
        }
        self.rgmii_txd.next = self.pins.val();
        self.tx_ctl.clock.next = self.clock.val();
        self.tx_ctl.d0.next = self.gmii_tx_en.val();
        self.tx_ctl.d1.next = self.gmii_tx_en.val() ^ self.gmii_tx_er.val();
        self.rgmii_tx_ctl.next = self.tx_ctl.q.val();
        self.txc.clock.next = self.clock90.val();
        self.txc.d0.next = true;
        self.txc.d1.next = false;
        self.rgmii_txc.next = self.txc.q.val();
        self.rx_ctl.clock.next = self.rgmii_rxc.val();
        self.rx_ctl.d.next = self.rgmii_rx_ctl.val();
        self.gmii_rxd.next =
            bit_cast::<8, 4>(self.rx_lo.val()) | (bit_cast::<8, 4>(self.rx_hi.val()) << 4);
        self.gmii_rx_dv.next = self.rx_ctl.q0.val();
        self.gmii_rx_er.next = self.rx_ctl.q0.val() ^ self.rx_ctl.q1.val();
    }
}
