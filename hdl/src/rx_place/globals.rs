//! The global registers ([`PlaceGlobals`]).

use rust_hdl::prelude::*;

use crate::bus::CfgIn;

/// The global registers of [`RxPlace`](super::RxPlace) (table 2,
/// `cfg::GLOBAL_*`): the MTU (S2's length check) and the local IP (the
/// ACK's source), written by the firmware through `cfg`.
#[derive(LogicBlock, Default)]
pub struct PlaceGlobals {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: MTU 0.
    pub rst: Signal<In, Bit>,
    /// Table write port of table 2 (`we`: a write to it; `addr`: the word).
    pub cfg: CfgIn<4>,
    /// The MTU.
    pub mtu: Signal<Out, Bits<16>>,
    /// The local IP.
    pub local_ip: Signal<Out, Bits<128>>,
    r_mtu: DFF<Bits<16>>,
    r_ip: DFF<Bits<128>>,
}

impl Logic for PlaceGlobals {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_mtu, r_ip);
        self.mtu.next = self.r_mtu.q.val();
        self.local_ip.next = self.r_ip.q.val();
        if self.cfg.we.val() {
            if self.cfg.addr.val() == 0 {
                self.r_mtu.d.next = self.cfg.data.val().get_bits::<16>(0);
            }
            if self.cfg.addr.val() == 1 {
                self.r_ip.d.next = bit_cast::<128, 64>(self.r_ip.q.val().get_bits::<64>(0))
                    | (bit_cast::<128, 64>(self.cfg.data.val()) << 64);
            }
            if self.cfg.addr.val() == 2 {
                self.r_ip.d.next = (bit_cast::<128, 64>(self.r_ip.q.val().get_bits::<64>(64))
                    << 64)
                    | bit_cast::<128, 64>(self.cfg.data.val());
            }
        }
        if self.rst.val() {
            self.r_mtu.d.next = 0.into();
        }
    }
}
