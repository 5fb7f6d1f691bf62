//! Leading-ones count of a 256-bit SACK bitmap ([`LeadOnes`]).

use rust_hdl::prelude::*;

/// Number of consecutive set bits of `v` from bit 0 (0..=256): the lowest
/// clear bit, found radix 4 (per nibble, then per 4 nibbles, ...), four
/// levels of a 4-way priority choice rather than eight chained halvings.
/// Counts only while `en` is high, else `count` is 0: Verilator then skips
/// the tree in cycles without an arrival.
#[derive(LogicBlock, Default)]
pub struct LeadOnes {
    /// Count this cycle (else `count` is 0).
    pub en: Signal<In, Bit>,
    /// The vector.
    pub v: Signal<In, Bits<256>>,
    /// Its number of leading (low-end) ones.
    pub count: Signal<Out, Bits<9>>,
    // Per level: a group is all ones (`f*`), else its count (`c*`).
    f1: Signal<Local, Bits<64>>,
    c1: Signal<Local, Bits<128>>,
    f2: Signal<Local, Bits<16>>,
    c2: Signal<Local, Bits<64>>,
    f3: Signal<Local, Bits<4>>,
    c3: Signal<Local, Bits<24>>,
    nib: Signal<Local, Bits<4>>,
    kk: Signal<Local, Bits<2>>,
    c2s: Signal<Local, Bits<2>>,
    c3s: Signal<Local, Bits<4>>,
    g4: Signal<Local, Bits<4>>,
    g6: Signal<Local, Bits<6>>,
    cnt: Signal<Local, Bits<9>>,
}

impl Logic for LeadOnes {
    #[hdl_gen]
    fn update(&mut self) {
        self.f1.next = 0.into();
        self.c1.next = 0.into();
        self.f2.next = 0.into();
        self.c2.next = 0.into();
        self.f3.next = 0.into();
        self.c3.next = 0.into();
        self.nib.next = 0.into();
        self.kk.next = 0.into();
        self.c2s.next = 0.into();
        self.c3s.next = 0.into();
        self.g4.next = 0.into();
        self.g6.next = 0.into();
        self.cnt.next = 0.into();
        if self.en.val() {
            for j in 0..64 {
                self.nib.next = self.v.val().get_bits::<4>(4 * j);
                self.f1.next = self.f1.val().replace_bit(j, self.nib.val().all());
                if !self.nib.val().get_bit(0) {
                    self.c1.next = self.c1.val();
                } else if !self.nib.val().get_bit(1) {
                    self.c1.next = self.c1.val().replace_bit(2 * j, true);
                } else if !self.nib.val().get_bit(2) {
                    self.c1.next = self.c1.val().replace_bit(2 * j + 1, true);
                } else {
                    self.c1.next = self.c1.val().replace_bit(2 * j, true);
                    self.c1.next = self.c1.val().replace_bit(2 * j + 1, true);
                }
            }
            for j in 0..16 {
                self.nib.next = self.f1.val().get_bits::<4>(4 * j);
                self.f2.next = self.f2.val().replace_bit(j, self.nib.val().all());
                if !self.nib.val().get_bit(0) {
                    self.kk.next = 0.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j);
                } else if !self.nib.val().get_bit(1) {
                    self.kk.next = 1.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j + 2);
                } else if !self.nib.val().get_bit(2) {
                    self.kk.next = 2.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j + 4);
                } else {
                    self.kk.next = 3.into();
                    self.c2s.next = self.c1.val().get_bits::<2>(8 * j + 6);
                }
                self.g4.next =
                    bit_cast::<4, 2>(self.c2s.val()) | (bit_cast::<4, 2>(self.kk.val()) << 2);
                self.c2.next =
                    self.c2.val() | (bit_cast::<64, 4>(self.g4.val()) << (4 * j).to_bits::<8>());
            }
            for j in 0..4 {
                self.nib.next = self.f2.val().get_bits::<4>(4 * j);
                self.f3.next = self.f3.val().replace_bit(j, self.nib.val().all());
                if !self.nib.val().get_bit(0) {
                    self.kk.next = 0.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j);
                } else if !self.nib.val().get_bit(1) {
                    self.kk.next = 1.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j + 4);
                } else if !self.nib.val().get_bit(2) {
                    self.kk.next = 2.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j + 8);
                } else {
                    self.kk.next = 3.into();
                    self.c3s.next = self.c2.val().get_bits::<4>(16 * j + 12);
                }
                self.g6.next =
                    bit_cast::<6, 4>(self.c3s.val()) | (bit_cast::<6, 2>(self.kk.val()) << 4);
                self.c3.next =
                    self.c3.val() | (bit_cast::<24, 6>(self.g6.val()) << (6 * j).to_bits::<8>());
            }
            self.cnt.next = 256.into();
            if !self.f3.val().get_bit(0) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(0));
            } else if !self.f3.val().get_bit(1) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(6));
                self.cnt.next = self.cnt.val().replace_bit(6, true);
            } else if !self.f3.val().get_bit(2) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(12));
                self.cnt.next = self.cnt.val().replace_bit(7, true);
            } else if !self.f3.val().get_bit(3) {
                self.cnt.next = bit_cast::<9, 6>(self.c3.val().get_bits::<6>(18));
                self.cnt.next = self.cnt.val().replace_bit(6, true);
                self.cnt.next = self.cnt.val().replace_bit(7, true);
            }
        }
        self.count.next = self.cnt.val();
    }
}
