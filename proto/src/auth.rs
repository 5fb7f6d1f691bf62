//! The auth trailer of an authenticated QP (spec §11.2).
//!
//! Every packet of an authenticated QP is followed, after its ICRC, by a
//! 24-byte trailer: a 64-bit big-endian sequence number (per direction,
//! never repeated under one key) and a 128-bit tag. The tag is the
//! AES-256-GCM tag (NIST SP 800-38D) of encrypting the packet from the MRH
//! through the payload (not the ICRC, which a soft NIC recomputes after it
//! picks the source port) under the connection key with the nonce
//! `sender QPN ‖ seq` and no associated data. The ciphertext is not sent:
//! the packet travels in clear and the receiver recomputes the tag. A tag is
//! valid for one packet, one sending QP and one sequence number only.
//!
//! Why GCM over the packet as plaintext rather than as associated data: the
//! tag is the same kind of GHASH-based MAC either way, but `ring`'s AES-GCM
//! hashes the plaintext in a kernel that interleaves AES-CTR and carry-less
//! multiplication over many blocks (VAES/VPCLMULQDQ where the CPU has them),
//! while it hashes associated data one block at a time: about three times
//! faster on the reference machine (`cargo run --release -p metaroce-proto
//! --example auth_speed`).

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};

/// Bytes the auth trailer adds to a datagram.
pub const AUTH_TRAILER_LEN: usize = 24;

const ICRC_LEN: usize = 4;

/// Scratch bytes [`Authenticator::trailer`] and [`Authenticator::open`]
/// need for any datagram (a UDP payload is below 64 KiB): they compute a
/// ciphertext there and throw it away.
pub const AUTH_SCRATCH_LEN: usize = 65536;

/// A 256-bit connection key, agreed out of band. `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthKey(pub [u8; 32]);

impl core::fmt::Debug for AuthKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("AuthKey(..)")
    }
}

impl AuthKey {
    /// Parses 64 hexadecimal digits.
    pub fn from_hex(s: &str) -> Option<AuthKey> {
        let s = s.trim().as_bytes();
        if s.len() != 64 {
            return None;
        }
        let mut key = [0u8; 32];
        for (i, pair) in s.chunks(2).enumerate() {
            let digit = |c: u8| (c as char).to_digit(16);
            key[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
        }
        Some(AuthKey(key))
    }
}

/// Why a trailer was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthError {
    /// The datagram is too short to hold a packet and a trailer, or longer
    /// than any UDP payload.
    Truncated,
    /// The tag does not match.
    BadTag,
}

/// Tags and checks packets under one connection key.
pub struct Authenticator {
    key: LessSafeKey,
}

impl core::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Authenticator(..)")
    }
}

impl Authenticator {
    /// An authenticator for `key`.
    pub fn new(key: &AuthKey) -> Self {
        // A 32-byte key is always valid for AES-256-GCM.
        let unbound = UnboundKey::new(&AES_256_GCM, &key.0).unwrap_or_else(|_| unreachable!());
        Authenticator {
            key: LessSafeKey::new(unbound),
        }
    }

    /// The tag of `covered` (MRH through payload) sent by `sender_qpn` with
    /// sequence number `seq`; `None` when it is longer than `scratch`.
    fn tag(
        &self,
        sender_qpn: u32,
        seq: u64,
        covered: &[u8],
        scratch: &mut [u8],
    ) -> Option<[u8; 16]> {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&sender_qpn.to_be_bytes());
        n[4..].copy_from_slice(&seq.to_be_bytes());
        let buf = scratch.get_mut(..covered.len())?;
        buf.copy_from_slice(covered);
        let tag = self
            .key
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(n), Aad::empty(), buf)
            .ok()?;
        let mut out = [0u8; 16];
        out.copy_from_slice(tag.as_ref());
        Some(out)
    }

    /// The trailer for `packet` (MRH through ICRC: the ICRC is not covered)
    /// sent by the QP numbered `sender_qpn` with sequence number `seq`;
    /// `scratch` ([`AUTH_SCRATCH_LEN`] bytes fit any packet) is overwritten.
    /// A packet longer than `scratch` gets an all-zero tag, which no
    /// receiver accepts.
    pub fn trailer(
        &self,
        sender_qpn: u32,
        seq: u64,
        packet: &[u8],
        scratch: &mut [u8],
    ) -> [u8; AUTH_TRAILER_LEN] {
        let covered = &packet[..packet.len().saturating_sub(ICRC_LEN)];
        let tag = self
            .tag(sender_qpn, seq, covered, scratch)
            .unwrap_or_default();
        let mut out = [0u8; AUTH_TRAILER_LEN];
        out[..8].copy_from_slice(&seq.to_be_bytes());
        out[8..].copy_from_slice(&tag);
        out
    }

    /// Checks the trailer at the end of `datagram`, sent by the QP numbered
    /// `sender_qpn`; returns the sequence number and the packet's length
    /// without the trailer. `scratch` is overwritten, as in
    /// [`Authenticator::trailer`].
    pub fn open(
        &self,
        sender_qpn: u32,
        datagram: &[u8],
        scratch: &mut [u8],
    ) -> Result<(u64, usize), AuthError> {
        let len = datagram
            .len()
            .checked_sub(AUTH_TRAILER_LEN)
            .ok_or(AuthError::Truncated)?;
        let (packet, trailer) = datagram.split_at(len);
        let covered = packet
            .get(..len.checked_sub(ICRC_LEN).ok_or(AuthError::Truncated)?)
            .ok_or(AuthError::Truncated)?;
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&trailer[..8]);
        let seq = u64::from_be_bytes(seq);
        let tag = self
            .tag(sender_qpn, seq, covered, scratch)
            .ok_or(AuthError::Truncated)?;
        // Compared without an early exit, so the time says nothing about
        // where a forged tag first differs.
        let diff = tag
            .iter()
            .zip(&trailer[8..])
            .fold(0u8, |d, (a, b)| d | (a ^ b));
        if core::hint::black_box(diff) != 0 {
            return Err(AuthError::BadTag);
        }
        Ok((seq, len))
    }
}

/// The replay window of one receiving direction: the highest sequence
/// number accepted and which of the 1,024 below it were.
#[derive(Debug, Clone, Default)]
pub struct ReplayWindow {
    highest: u64,
    seen: [u64; 16],
}

/// Sequence numbers a [`ReplayWindow`] remembers below its highest.
pub const REPLAY_WINDOW: u64 = 1024;

impl ReplayWindow {
    /// Accepts `seq` if it is new (not seen, and less than 1,024 below the
    /// highest); sequence number 0 is never valid.
    pub fn accept(&mut self, seq: u64) -> bool {
        if seq == 0 {
            return false;
        }
        if seq > self.highest {
            let shift = seq - self.highest;
            if shift >= REPLAY_WINDOW {
                self.seen = [0; 16];
            } else {
                // Bit i of the bitmap is `highest - i`: shift up by `shift`.
                let (words, bits) = ((shift / 64) as usize, (shift % 64) as u32);
                for i in (0..self.seen.len()).rev() {
                    let lo = i.checked_sub(words).map_or(0, |j| self.seen[j]);
                    let below = i.checked_sub(words + 1).map_or(0, |j| self.seen[j]);
                    self.seen[i] = if bits == 0 {
                        lo
                    } else {
                        (lo << bits) | (below >> (64 - bits))
                    };
                }
            }
            self.highest = seq;
            self.seen[0] |= 1;
            return true;
        }
        let back = self.highest - seq;
        if back >= REPLAY_WINDOW {
            return false;
        }
        let (w, b) = ((back / 64) as usize, back % 64);
        if self.seen[w] & (1 << b) != 0 {
            return false;
        }
        self.seen[w] |= 1 << b;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> [u8; 256] {
        [0; 256]
    }

    #[test]
    fn a_trailer_opens_only_unchanged_in_its_direction() {
        let a = Authenticator::new(&AuthKey([7; 32]));
        let mut d = [0x5au8; 100].to_vec();
        let t = a.trailer(1, 42, &d, &mut scratch());
        d.extend_from_slice(&t);
        assert_eq!(a.open(1, &d, &mut scratch()), Ok((42, 100)));
        assert_eq!(a.open(2, &d, &mut scratch()), Err(AuthError::BadTag));
        let mut m = d.clone();
        m[3] ^= 1;
        assert_eq!(a.open(1, &m, &mut scratch()), Err(AuthError::BadTag));
        let mut m = d.clone();
        m[97] ^= 1; // the ICRC is not covered (a soft NIC reseals it)
        assert_eq!(a.open(1, &m, &mut scratch()), Ok((42, 100)));
        let mut m = d.clone();
        m[107] ^= 1; // the sequence number
        assert_eq!(a.open(1, &m, &mut scratch()), Err(AuthError::BadTag));
        let other = Authenticator::new(&AuthKey([8; 32]));
        assert_eq!(other.open(1, &d, &mut scratch()), Err(AuthError::BadTag));
        assert_eq!(
            a.open(1, &d[..20], &mut scratch()),
            Err(AuthError::Truncated)
        );
        // Scratch too small for the packet.
        assert_eq!(a.open(1, &d, &mut [0; 8]), Err(AuthError::Truncated));
    }

    #[test]
    fn the_tag_is_standard_aes_256_gcm_of_the_packet() {
        // GCM specification (McGrew & Viega), test case 14: a zero 256-bit
        // key, a zero 96-bit nonce (QPN 0, seq 0), 16 zero bytes of
        // plaintext (here the covered packet, then 4 ICRC bytes), no AAD.
        let a = Authenticator::new(&AuthKey([0; 32]));
        let t = a.trailer(0, 0, &[0; 20], &mut scratch());
        let want = [
            0xd0, 0xd1, 0xc8, 0xa7, 0x99, 0x99, 0x6b, 0xf0, 0x26, 0x5b, 0x98, 0xb5, 0xd4, 0x8a,
            0xb9, 0x19,
        ];
        assert_eq!(t[8..], want);
    }

    #[test]
    fn the_replay_window_takes_each_number_once() {
        let mut w = ReplayWindow::default();
        assert!(!w.accept(0));
        assert!(w.accept(1));
        assert!(!w.accept(1));
        assert!(w.accept(5));
        assert!(w.accept(3));
        assert!(!w.accept(3));
        assert!(w.accept(2000));
        assert!(!w.accept(5), "more than 1,024 below the highest");
        assert!(w.accept(2000 - 1023));
        assert!(!w.accept(2000 - 1023));
        assert!(w.accept(2001));
        assert!(!w.accept(2000));
    }

    #[test]
    fn hex_keys_parse() {
        let k = AuthKey::from_hex(&"0f".repeat(32)).unwrap();
        assert_eq!(k.0, [0x0f; 32]);
        assert!(AuthKey::from_hex("0f").is_none());
        assert!(AuthKey::from_hex(&"zz".repeat(32)).is_none());
    }
}
