//! The highest bit of an ACK's SACK bitmap ([`SackTop`], the TX table's
//! ACK walk, [`crate::TxPathTable`]) and the highest path PSN an ACK
//! reports ([`AckHigh`], the ACK receiver's evidence check,
//! [`crate::AckRx`]).
//!
//! Native rust-hdl: two kernels; rust-hdl's own simulator runs it against
//! `metaroce_proto::Sack::highest` (the test below).

use rust_hdl::prelude::*;

/// The highest set bit of a 256-bit SACK bitmap (`found` low when it is
/// empty), found by halving (take the high half if any bit of it is set):
/// 8 levels of a 2:1 choice rather than a 256-step chain. Computes only
/// while `en` is high (else `found` and `idx` are 0), so Verilator skips it
/// in cycles without an ACK. The TX table's walker registers its result in
/// the cycle the ACK is taken and adds it to the distances a cycle later.
#[derive(LogicBlock, Default)]
pub struct SackTop {
    /// Compute this cycle.
    pub en: Signal<In, Bit>,
    /// The bitmap (bit `i`: PSN `path_cum + 1 + i`).
    pub sack: Signal<In, Bits<256>>,
    /// Some bit is set.
    pub found: Signal<Out, Bit>,
    /// The highest set bit's index (0 when none).
    pub idx: Signal<Out, Bits<8>>,
    w128: Signal<Local, Bits<128>>,
    w64: Signal<Local, Bits<64>>,
    w32: Signal<Local, Bits<32>>,
    w16: Signal<Local, Bits<16>>,
    w8: Signal<Local, Bits<8>>,
    w4: Signal<Local, Bits<4>>,
    w2: Signal<Local, Bits<2>>,
}

impl Logic for SackTop {
    #[hdl_gen]
    fn update(&mut self) {
        self.w128.next = 0.into();
        self.w64.next = 0.into();
        self.w32.next = 0.into();
        self.w16.next = 0.into();
        self.w8.next = 0.into();
        self.w4.next = 0.into();
        self.w2.next = 0.into();
        self.idx.next = 0.into();
        self.found.next = false;
        if self.en.val() {
            self.w128.next = self.sack.val().get_bits::<128>(0);
            if self.sack.val().get_bits::<128>(128).any() {
                self.idx.next = self.idx.val() | 128;
                self.w128.next = self.sack.val().get_bits::<128>(128);
            }
            self.w64.next = self.w128.val().get_bits::<64>(0);
            if self.w128.val().get_bits::<64>(64).any() {
                self.idx.next = self.idx.val() | 64;
                self.w64.next = self.w128.val().get_bits::<64>(64);
            }
            self.w32.next = self.w64.val().get_bits::<32>(0);
            if self.w64.val().get_bits::<32>(32).any() {
                self.idx.next = self.idx.val() | 32;
                self.w32.next = self.w64.val().get_bits::<32>(32);
            }
            self.w16.next = self.w32.val().get_bits::<16>(0);
            if self.w32.val().get_bits::<16>(16).any() {
                self.idx.next = self.idx.val() | 16;
                self.w16.next = self.w32.val().get_bits::<16>(16);
            }
            self.w8.next = self.w16.val().get_bits::<8>(0);
            if self.w16.val().get_bits::<8>(8).any() {
                self.idx.next = self.idx.val() | 8;
                self.w8.next = self.w16.val().get_bits::<8>(8);
            }
            self.w4.next = self.w8.val().get_bits::<4>(0);
            if self.w8.val().get_bits::<4>(4).any() {
                self.idx.next = self.idx.val() | 4;
                self.w4.next = self.w8.val().get_bits::<4>(4);
            }
            self.w2.next = self.w4.val().get_bits::<2>(0);
            if self.w4.val().get_bits::<2>(2).any() {
                self.idx.next = self.idx.val() | 2;
                self.w2.next = self.w4.val().get_bits::<2>(2);
            }
            if self.w2.val().get_bit(1) {
                self.idx.next = self.idx.val() | 1;
            }
            self.found.next = self.w2.val().any();
        }
    }
}

/// The highest path PSN an ACK of `cum` and `sack` reports (the SACK's
/// highest bit, `metaroce_proto::Sack::highest`, else `cum` − 1), in one
/// cycle: [`SackTop`] and an addition. For the ACK receiver's evidence
/// check ([`crate::AckRx`]). Computes only while `en` is high (else
/// `high` is 0).
#[derive(LogicBlock, Default)]
pub struct AckHigh {
    /// Compute this cycle.
    pub en: Signal<In, Bit>,
    /// The ACK's `path_cum`.
    pub cum: Signal<In, Bits<32>>,
    /// Its SACK bitmap (bit `i`: PSN `cum + 1 + i`).
    pub sack: Signal<In, Bits<256>>,
    /// The highest path PSN it reports.
    pub high: Signal<Out, Bits<32>>,
    top: SackTop,
}

impl Logic for AckHigh {
    #[hdl_gen]
    fn update(&mut self) {
        self.top.en.next = self.en.val();
        self.top.sack.next = self.sack.val();
        self.high.next = 0.into();
        if self.en.val() {
            if self.top.found.val() {
                self.high.next = self.cum.val() + bit_cast::<32, 8>(self.top.idx.val()) + 1;
            } else {
                self.high.next = self.cum.val() - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaroce_proto::Sack;
    use rand::{Rng, SeedableRng};

    #[test]
    fn ack_high_is_the_highest_sack_bit_or_cum_minus_one() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xACE);
        let mut hi = AckHigh::default();
        hi.en.next = true;
        for round in 0..2000 {
            let cum: u32 = rng.gen_range(0..=u32::MAX);
            let mut sack = Sack::default();
            for _ in 0..round % 4 {
                sack.set(rng.gen_range(0..256));
            }
            let mut bits = Bits::<256>::default();
            for i in 0..256 {
                bits = bits.replace_bit(i, sack.get(i as u32));
            }
            hi.cum.next = u64::from(cum).to_bits();
            hi.sack.next = bits;
            // Combinational: run the kernels until no signal changes.
            hi.update_all();
            while hi.has_changed() {
                hi.update_all();
            }
            let want = match sack.highest() {
                Some(h) => cum.wrapping_add(h).wrapping_add(1),
                None => cum.wrapping_sub(1),
            };
            assert_eq!(
                hi.high.next.to_u64(),
                u64::from(want),
                "cum {cum}, round {round}"
            );
        }
    }
}
