//! The auth trailer of an authenticated QP (spec §11.2).
//!
//! Every packet of an authenticated QP is followed, after its ICRC, by a
//! 24-byte trailer: a 64-bit big-endian sequence number (per direction,
//! never repeated under one key) and a 128-bit tag. The tag is AES-256-GCM
//! (NIST SP 800-38D) with no plaintext, i.e. GMAC: the packet from the MRH
//! through the payload (not the ICRC, which a soft NIC recomputes after it
//! picks the source port) is the associated data, and the nonce is
//! `sender QPN ‖ seq`, so a tag is valid for one packet, one sending QP and
//! one sequence number only. `aws-lc-rs` computes it: its GHASH hashes
//! associated data many blocks at a time with VPCLMULQDQ on 512-bit
//! registers where the CPU has them (22 GB/s on the reference machine,
//! `cargo run --release -p metaroce-proto --example auth_speed`).

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};

/// Bytes the auth trailer adds to a datagram.
pub const AUTH_TRAILER_LEN: usize = 24;

const ICRC_LEN: usize = 4;

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
    /// The datagram is too short to hold a packet and a trailer.
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

fn nonce(sender_qpn: u32, seq: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[..4].copy_from_slice(&sender_qpn.to_be_bytes());
    n[4..].copy_from_slice(&seq.to_be_bytes());
    Nonce::assume_unique_for_key(n)
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

    /// The trailer for `packet` (MRH through ICRC: the ICRC is not covered)
    /// sent by the QP numbered `sender_qpn` with sequence number `seq`.
    pub fn trailer(&self, sender_qpn: u32, seq: u64, packet: &[u8]) -> [u8; AUTH_TRAILER_LEN] {
        let covered = &packet[..packet.len().saturating_sub(ICRC_LEN)];
        let mut out = [0u8; AUTH_TRAILER_LEN];
        out[..8].copy_from_slice(&seq.to_be_bytes());
        // Sealing nothing fails only on a message longer than GCM allows
        // (2^61 bytes of associated data); then the tag stays zero, which
        // no receiver accepts.
        if let Ok(tag) =
            self.key
                .seal_in_place_separate_tag(nonce(sender_qpn, seq), Aad::from(covered), &mut [])
        {
            out[8..].copy_from_slice(tag.as_ref());
        }
        out
    }

    /// Checks the trailer at the end of `datagram`, sent by the QP numbered
    /// `sender_qpn` (in constant time); returns the sequence number and the
    /// packet's length without the trailer.
    pub fn open(&self, sender_qpn: u32, datagram: &[u8]) -> Result<(u64, usize), AuthError> {
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
        // An empty ciphertext followed by its tag.
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&trailer[8..]);
        self.key
            .open_in_place(nonce(sender_qpn, seq), Aad::from(covered), &mut tag)
            .map_err(|_| AuthError::BadTag)?;
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

    #[test]
    fn a_trailer_opens_only_unchanged_in_its_direction() {
        let a = Authenticator::new(&AuthKey([7; 32]));
        let mut d = [0x5au8; 100].to_vec();
        let t = a.trailer(1, 42, &d);
        d.extend_from_slice(&t);
        assert_eq!(a.open(1, &d), Ok((42, 100)));
        assert_eq!(a.open(2, &d), Err(AuthError::BadTag));
        let mut m = d.clone();
        m[3] ^= 1;
        assert_eq!(a.open(1, &m), Err(AuthError::BadTag));
        let mut m = d.clone();
        m[97] ^= 1; // the ICRC is not covered (a soft NIC reseals it)
        assert_eq!(a.open(1, &m), Ok((42, 100)));
        let mut m = d.clone();
        m[107] ^= 1; // the sequence number
        assert_eq!(a.open(1, &m), Err(AuthError::BadTag));
        let other = Authenticator::new(&AuthKey([8; 32]));
        assert_eq!(other.open(1, &d), Err(AuthError::BadTag));
        assert_eq!(a.open(1, &d[..20]), Err(AuthError::Truncated));
    }

    #[test]
    fn the_tag_is_standard_aes_256_gcm_of_the_packet_as_aad() {
        // GCM specification (McGrew & Viega), test case 13: a zero 256-bit
        // key, a zero 96-bit nonce (QPN 0, seq 0), nothing at all to
        // encrypt or authenticate (an empty packet before its 4 ICRC bytes).
        let a = Authenticator::new(&AuthKey([0; 32]));
        let t = a.trailer(0, 0, &[0; 4]);
        let want = [
            0x53, 0x0f, 0x8a, 0xfb, 0xc7, 0x45, 0x36, 0xb9, 0xa9, 0x63, 0xb4, 0xf1, 0xc4, 0xcb,
            0x73, 0x8b,
        ];
        assert_eq!(t[8..], want);
        // The packet is associated data: its tag is GHASH-dependent on it.
        assert_ne!(a.trailer(0, 0, &[0; 20])[8..], want);
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
