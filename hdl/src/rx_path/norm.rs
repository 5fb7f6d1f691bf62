//! [`PathNorm`]: the write-back shift of [`super::RxPathTable`].

use rust_hdl::prelude::*;

/// The logical SACK bitmap (256 bits) of a bitmap kept with its shift
/// pending ([`super::PathMark`]): `raw >> k`, for the RAMs; combinational,
/// 0 unless `en`.
///
/// Not split, `raw` is the 512-bit pending bitmap ([`super::PathMark`]'s
/// `new_raw`). Split ([`PathNorm::new`]), it is the split mark's
/// `new_raw` in two parts: the bitmap without the PSN's bit (bits 255..0)
/// and that bit (bit 265 set, bits 264..256 its position); the bitmap is
/// shifted with 256 bits in and the bit placed at `position - k` (a
/// decoder), rather than 512 bits shifted.
///
/// Not split, the shift is built by levels, largest first: each keeps only
/// the bits the later levels can still bring into the low 256 (yosys maps
/// one 512-bit `>>` by 9 bits to about three times as many LUTs). Split,
/// it is one 256-bit `>>` by `k`'s low 8 bits (0 when `k` ≥ 256), which
/// `synth_ecp5` maps to fewer LUTs than the nine levels (their 2:1
/// multiplexers merged by ABC into wide ones).
#[derive(LogicBlock)]
pub struct PathNorm {
    /// Compute this cycle (else `out` is 0).
    pub en: Signal<In, Bit>,
    /// The bitmap, shift pending (split: its two parts, above).
    pub raw: Signal<In, Bits<512>>,
    /// The pending shift (0..=257).
    pub k: Signal<In, Bits<9>>,
    /// `raw >> k`, 256 bits.
    pub out: Signal<Out, Bits<256>>,
    c_split: Constant<Bit>,
    c_one: Constant<Bits<256>>,
    sh: Signal<Local, Bits<512>>,
    pk: Signal<Local, Bits<10>>,
    ob: Signal<Local, Bits<256>>,
}

impl PathNorm {
    /// For the combinational mark's `new_raw`, or the `split` one's parts.
    pub fn new(split: bool) -> Self {
        Self {
            en: Default::default(),
            raw: Default::default(),
            k: Default::default(),
            out: Default::default(),
            c_split: Constant::new(split),
            c_one: Constant::new(1.into()),
            sh: Default::default(),
            pk: Default::default(),
            ob: Default::default(),
        }
    }
}

impl Logic for PathNorm {
    #[hdl_gen]
    fn update(&mut self) {
        self.sh.next = 0.into();
        self.pk.next = 0.into();
        self.ob.next = 0.into();
        if self.en.val() {
            if self.c_split.val() {
                // k ≥ 256 shifts all 256 bits out.
                if !self.k.val().get_bit(8) {
                    self.ob.next =
                        self.raw.val().get_bits::<256>(0) >> self.k.val().get_bits::<8>(0);
                }
            } else {
                self.sh.next = self.raw.val();
                for j in 0..9 {
                    if self.k.val().get_bit(8 - j) {
                        self.sh.next = self.sh.val() >> (256 >> j);
                    }
                }
                self.ob.next = self.sh.val().get_bits::<256>(0);
            }
            // Split: the PSN's bit, if set and not shifted out.
            self.pk.next = bit_cast::<10, 9>(self.raw.val().get_bits::<9>(256))
                - bit_cast::<10, 9>(self.k.val());
            if self.c_split.val()
                & self.raw.val().get_bit(265)
                & !self.pk.val().get_bit(9)
                & !self.pk.val().get_bit(8)
            {
                self.ob.next = self.ob.val() | (self.c_one.val() << self.pk.val().get_bits::<8>(0));
            }
        }
        self.out.next = self.ob.val();
    }
}
