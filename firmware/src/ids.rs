//! Unpredictable identifiers: QPNs, initial PSNs and memory keys.
//!
//! A blind attacker (one that cannot see the traffic) must guess a live
//! connection's QPN, a conn PSN inside its window and, to touch memory, an
//! rkey. All of them come from one ChaCha12 generator per NIC, seeded with
//! [`NicConfig::id_seed`](crate::NicConfig::id_seed) (the soft NIC takes it
//! from the operating system) or, when that is `None`, derived from
//! [`NicConfig::seed`](crate::NicConfig::seed) so that simulations and tests
//! stay deterministic for a given seed (spec §11.1).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Largest Verbs QPN (QPNs are 24-bit in Verbs and on RoCE's wire).
pub const QPN_MASK: u32 = 0x00ff_ffff;

/// QPNs below this are never handed out (Verbs reserves QP0 and QP1; a
/// zeroed field never matches).
pub const QPN_MIN: u32 = 0x10;

/// The generator of a NIC's identifiers.
#[derive(Debug, Clone)]
pub struct IdGen {
    rng: ChaCha12Rng,
    key_generation: u8,
}

impl IdGen {
    /// A generator seeded with 32 secret bytes.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        IdGen {
            rng: ChaCha12Rng::from_seed(seed),
            key_generation: 0,
        }
    }

    /// A deterministic generator derived from a 64-bit seed (simulator and
    /// tests: predictable by whoever knows the seed).
    pub fn from_u64(seed: u64) -> Self {
        IdGen {
            rng: ChaCha12Rng::seed_from_u64(seed ^ 0x6d65_7461_726f_6365),
            key_generation: 0,
        }
    }

    /// A random QPN in `QPN_MIN..=QPN_MASK` (24 bits) for which `taken`
    /// is false.
    pub fn qpn(&mut self, mut taken: impl FnMut(u32) -> bool) -> u32 {
        loop {
            let v = self.rng.next_u32() & QPN_MASK;
            if v >= QPN_MIN && !taken(v) {
                return v;
            }
        }
    }

    /// A random 32-bit PSN.
    pub fn psn(&mut self) -> u32 {
        self.rng.next_u32()
    }

    /// A memory key: 24 random bits above an 8-bit generation that counts
    /// registrations, so the 256 keys handed out in a row all differ (a
    /// region slot reused at once never gets the key it had), never 0, and
    /// never one for which `taken` is true.
    pub fn key(&mut self, mut taken: impl FnMut(u32) -> bool) -> u32 {
        loop {
            self.key_generation = self.key_generation.wrapping_add(1);
            let v = (self.rng.next_u32() & !0xff) | u32::from(self.key_generation);
            if v != 0 && !taken(v) {
                return v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_ids_other_seed_other_ids() {
        let (mut a, mut b, mut c) = (IdGen::from_u64(1), IdGen::from_u64(1), IdGen::from_u64(2));
        let ids = |g: &mut IdGen| (g.qpn(|_| false), g.psn(), g.key(|_| false));
        assert_eq!(ids(&mut a), ids(&mut b));
        assert_ne!(ids(&mut a), ids(&mut c));
    }

    #[test]
    fn qpns_are_24_bit_and_keys_do_not_repeat_within_a_generation_cycle() {
        let mut g = IdGen::from_seed([7; 32]);
        let mut keys = alloc::collections::BTreeSet::new();
        for _ in 0..256 {
            let q = g.qpn(|_| false);
            assert!((QPN_MIN..=QPN_MASK).contains(&q));
            assert!(keys.insert(g.key(|_| false)));
        }
        // Spread: the high bits of 256 keys are not all alike.
        let high: alloc::collections::BTreeSet<u32> = keys.iter().map(|k| k >> 24).collect();
        assert!(high.len() > 100, "{}", high.len());
        // `taken` is honoured.
        let k = g.key(|k| k & 0xff == 1);
        assert_ne!(k & 0xff, 1);
    }
}
