//! The TX table's estimators on one slot, combinational: the RTT
//! estimator ([`RttUpdate`], RFC 6298 as the engine's `RttEstimator`)
//! and the loss EWMA ([`LossEwma`]); [`super::update::SlotUpdate`] takes
//! their results into the slot's word.

use rust_hdl::prelude::*;

/// `srtt`, `rttvar` and `rtt_valid` after an RTT sample (RFC 6298: the
/// first sample sets `srtt` = sample, `rttvar` = sample / 2; later ones
/// `rttvar` = (3·rttvar + |srtt − sample|) / 4, `srtt` = (7·srtt +
/// sample) / 8); unchanged without one.
#[derive(LogicBlock, Default)]
pub(super) struct RttUpdate {
    /// A sample this cycle.
    pub en: Signal<In, Bit>,
    /// The sample, ns.
    pub sample: Signal<In, Bits<32>>,
    /// `srtt` before.
    pub srtt: Signal<In, Bits<32>>,
    /// `rttvar` before.
    pub rttvar: Signal<In, Bits<32>>,
    /// `rtt_valid` before (a sample was taken).
    pub valid: Signal<In, Bit>,
    /// `srtt` after.
    pub srtt_n: Signal<Out, Bits<32>>,
    /// `rttvar` after.
    pub rttvar_n: Signal<Out, Bits<32>>,
    /// `rtt_valid` after.
    pub valid_n: Signal<Out, Bit>,
    // |srtt − sample|, 3·rttvar + err, 7·srtt + sample.
    err: Signal<Local, Bits<32>>,
    v34: Signal<Local, Bits<34>>,
    m35: Signal<Local, Bits<35>>,
}

impl Logic for RttUpdate {
    #[hdl_gen]
    fn update(&mut self) {
        self.err.next = self.sample.val() - self.srtt.val();
        if self.srtt.val() > self.sample.val() {
            self.err.next = self.srtt.val() - self.sample.val();
        }
        self.v34.next = bit_cast::<34, 32>(self.rttvar.val())
            + (bit_cast::<34, 32>(self.rttvar.val()) << 1)
            + bit_cast::<34, 32>(self.err.val());
        self.m35.next = (bit_cast::<35, 32>(self.srtt.val()) << 3)
            - bit_cast::<35, 32>(self.srtt.val())
            + bit_cast::<35, 32>(self.sample.val());
        self.srtt_n.next = self.srtt.val();
        self.rttvar_n.next = self.rttvar.val();
        self.valid_n.next = self.valid.val();
        if self.en.val() {
            self.srtt_n.next = bit_cast::<32, 35>(self.m35.val() >> 3);
            self.rttvar_n.next = bit_cast::<32, 34>(self.v34.val() >> 2);
            if !self.valid.val() {
                self.srtt_n.next = self.sample.val();
                self.rttvar_n.next = self.sample.val() >> 1;
            }
            self.valid_n.next = true;
        }
    }
}

/// The loss EWMA (16.16) after a loss (`ewma(x, 1.0)`: one decay, then
/// 1.0 >> 4 added) or after up to four decays (`ewma(x, 0)` each: x −
/// x >> 4); unchanged with neither.
#[derive(LogicBlock, Default)]
pub(super) struct LossEwma {
    /// The EWMA before.
    pub loss: Signal<In, Bits<32>>,
    /// A loss this cycle.
    pub up: Signal<In, Bit>,
    /// Decays this cycle (up to 4 apply; 0: none).
    pub decay: Signal<In, Bits<9>>,
    /// The EWMA after.
    pub loss_n: Signal<Out, Bits<32>>,
    // After 1..4 decays.
    l1: Signal<Local, Bits<32>>,
    l2: Signal<Local, Bits<32>>,
    l3: Signal<Local, Bits<32>>,
    l4: Signal<Local, Bits<32>>,
}

impl Logic for LossEwma {
    #[hdl_gen]
    fn update(&mut self) {
        self.l1.next = self.loss.val() - (self.loss.val() >> 4);
        self.l2.next = self.l1.val() - (self.l1.val() >> 4);
        self.l3.next = self.l2.val() - (self.l2.val() >> 4);
        self.l4.next = self.l3.val() - (self.l3.val() >> 4);
        self.loss_n.next = self.loss.val();
        if self.up.val() {
            self.loss_n.next = self.l1.val() + 4096;
        }
        if self.decay.val() == 1 {
            self.loss_n.next = self.l1.val();
        } else if self.decay.val() == 2 {
            self.loss_n.next = self.l2.val();
        } else if self.decay.val() == 3 {
            self.loss_n.next = self.l3.val();
        } else if self.decay.val() != 0 {
            self.loss_n.next = self.l4.val();
        }
    }
}
