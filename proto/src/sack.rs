//! The 256-bit selective-acknowledgement bitmap.

/// A 256-bit bitmap of path PSNs above a cumulative point.
///
/// Bit `i` stands for PSN `cum + 1 + i`, where `cum` is the first PSN not yet
/// received. On the wire it is 32 bytes, bit `i` in byte `i / 8` at bit
/// position `i % 8` (least significant first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Sack([u64; 4]);

impl Sack {
    /// Number of bits in the bitmap.
    pub const BITS: u32 = crate::SACK_BITS;

    /// The empty bitmap.
    pub const fn new() -> Self {
        Sack([0; 4])
    }

    /// True when bit `i` is set; false for `i >= 256`.
    pub fn get(&self, i: u32) -> bool {
        i < Self::BITS && self.0[(i / 64) as usize] & (1 << (i % 64)) != 0
    }

    /// Sets bit `i`; ignored for `i >= 256`.
    pub fn set(&mut self, i: u32) {
        if i < Self::BITS {
            self.0[(i / 64) as usize] |= 1 << (i % 64);
        }
    }

    /// True when no bit is set.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// Number of set bits.
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Index of the highest set bit.
    pub fn highest(&self) -> Option<u32> {
        (0..4)
            .rev()
            .find(|&w| self.0[w] != 0)
            .map(|w| w as u32 * 64 + 63 - self.0[w].leading_zeros())
    }

    /// Number of consecutive set bits starting at bit 0.
    pub fn leading_ones(&self) -> u32 {
        let mut n = 0;
        for w in self.0 {
            let run = w.trailing_ones();
            n += run;
            if run < 64 {
                break;
            }
        }
        n
    }

    /// Shifts the bitmap down by `n` bits (bit `n` becomes bit 0); used when the
    /// cumulative point advances by `n`.
    pub fn shift_down(&mut self, n: u32) {
        if n >= Self::BITS {
            *self = Sack::new();
            return;
        }
        let words = (n / 64) as usize;
        let bits = n % 64;
        let mut out = [0u64; 4];
        for (i, slot) in out.iter_mut().enumerate() {
            let src = i + words;
            if src < 4 {
                let mut v = self.0[src] >> bits;
                if bits != 0 && src + 1 < 4 {
                    v |= self.0[src + 1] << (64 - bits);
                }
                *slot = v;
            }
        }
        self.0 = out;
    }

    /// Wire image (32 bytes).
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (i, w) in self.0.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Parses the wire image.
    pub fn from_bytes(bytes: &[u8; 32]) -> Self {
        let mut words = [0u64; 4];
        for (i, w) in words.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            *w = u64::from_le_bytes(b);
        }
        Sack(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bit_order_on_the_wire_is_lsb_first_per_byte() {
        let mut s = Sack::new();
        s.set(0);
        s.set(9);
        s.set(255);
        let b = s.to_bytes();
        assert_eq!(b[0], 0x01);
        assert_eq!(b[1], 0x02);
        assert_eq!(b[31], 0x80);
        assert_eq!(Sack::from_bytes(&b), s);
        assert_eq!(s.highest(), Some(255));
        assert_eq!(s.count(), 3);
    }

    #[test]
    fn leading_ones_counts_across_words() {
        let mut s = Sack::new();
        for i in 0..70 {
            s.set(i);
        }
        s.set(71);
        assert_eq!(s.leading_ones(), 70);
    }

    proptest! {
        #[test]
        fn shift_down_moves_every_bit(bits in proptest::collection::vec(0u32..256, 0..40), n in 0u32..300) {
            let mut s = Sack::new();
            for &b in &bits { s.set(b); }
            let mut shifted = s;
            shifted.shift_down(n);
            for i in 0..256u32 {
                prop_assert_eq!(shifted.get(i), i + n < 256 && s.get(i + n));
            }
        }
    }
}
