//! The path entries of a MULTI_ACK (spec §3.11): each one path's receive
//! state, 24 bytes plus the SACK bitmap's bytes up to its last non-zero one.

use zerocopy::{FromBytes, IntoBytes};

use crate::header::AckEntryHeader;
use crate::{AckRepr, Error, MultiAckRepr, Result, Sack};

/// Bytes of an entry before its SACK bytes.
pub const ENTRY_FIXED_LEN: usize = size_of::<AckEntryHeader>();
/// Most entries in one MULTI_ACK: one per path.
pub const MAX_ENTRIES: usize = 64;
/// Entry flag bit: a packet marked on the path since its previous ACK
/// arrived with CE (the ACK's ECE flag).
const ENTRY_ECE: u8 = 1;

/// One path's part of a MULTI_ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckEntry {
    /// The acknowledged path, below 64.
    pub path: u16,
    /// ECE: a packet marked since the previous ACK for the path carried CE.
    pub ece: bool,
    /// Next path PSN not yet received on the path.
    pub path_cum: u32,
    /// Received path PSNs above `path_cum`.
    pub sack: Sack,
    /// Echoed timestamp.
    pub echo_ts: u64,
    /// CE-marked packets received on the path (wrapping).
    pub ce_count: u32,
    /// Packets received on the path (wrapping).
    pub rx_count: u32,
}

impl AckEntry {
    /// SACK bytes on the wire: up to the last non-zero byte of the bitmap.
    fn sack_len(&self) -> usize {
        self.sack.highest().map_or(0, |bit| bit as usize / 8 + 1)
    }

    /// Bytes the entry takes on the wire.
    pub fn wire_len(&self) -> usize {
        ENTRY_FIXED_LEN + self.sack_len()
    }

    /// Writes the entry at the start of `out` and returns its length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let sack_len = self.sack_len();
        let need = ENTRY_FIXED_LEN + sack_len;
        let path = u8::try_from(self.path)
            .ok()
            .filter(|&p| usize::from(p) < MAX_ENTRIES)
            .ok_or(Error::BadField("MULTI_ACK entry path"))?;
        let Some(out) = out.get_mut(..need) else {
            return Err(Error::BufferTooSmall {
                len: out.len(),
                need,
            });
        };
        let head = AckEntryHeader {
            path,
            flags: if self.ece { ENTRY_ECE } else { 0 },
            sack_len: sack_len as u8,
            reserved: 0,
            path_cum: self.path_cum.into(),
            echo_ts: self.echo_ts.into(),
            ce_count: self.ce_count.into(),
            rx_count: self.rx_count.into(),
        };
        head.write_to_prefix(out)
            .map_err(|_| Error::BadField("MULTI_ACK entry"))?;
        out[ENTRY_FIXED_LEN..].copy_from_slice(&self.sack.to_bytes()[..sack_len]);
        Ok(need)
    }

    /// The entry as the single-path ACK it stands for, with the MULTI_ACK's
    /// connection part.
    pub fn ack(&self, conn: &MultiAckRepr) -> AckRepr {
        AckRepr {
            conn_cum: conn.conn_cum,
            path_cum: self.path_cum,
            sack: self.sack,
            echo_ts: self.echo_ts,
            ce_count: self.ce_count,
            rate_hint: conn.rate_hint,
            credit: conn.credit,
            rx_count: self.rx_count,
        }
    }
}

/// Reads the entry at the start of `bytes`: the entry and its length, or
/// why it is malformed.
fn read_entry(bytes: &[u8]) -> Result<(AckEntry, usize)> {
    let (head, rest) = AckEntryHeader::ref_from_prefix(bytes).map_err(|_| Error::Truncated {
        len: bytes.len(),
        need: ENTRY_FIXED_LEN,
    })?;
    let sack_len = usize::from(head.sack_len);
    if sack_len > 32 {
        return Err(Error::BadField("MULTI_ACK entry sack_len"));
    }
    if usize::from(head.path) >= MAX_ENTRIES {
        return Err(Error::BadField("MULTI_ACK entry path"));
    }
    let sack_bytes = rest.get(..sack_len).ok_or(Error::Truncated {
        len: bytes.len(),
        need: ENTRY_FIXED_LEN + sack_len,
    })?;
    let mut sack = [0u8; 32];
    sack[..sack_len].copy_from_slice(sack_bytes);
    let entry = AckEntry {
        path: u16::from(head.path),
        ece: head.flags & ENTRY_ECE != 0,
        path_cum: head.path_cum.get(),
        sack: Sack::from_bytes(&sack),
        echo_ts: head.echo_ts.get(),
        ce_count: head.ce_count.get(),
        rx_count: head.rx_count.get(),
    };
    Ok((entry, ENTRY_FIXED_LEN + sack_len))
}

/// Checks the entries area of a MULTI_ACK announcing `count` entries: 1..=64
/// well-formed entries for distinct paths that fill it exactly.
pub(crate) fn check_entries(bytes: &[u8], count: u8) -> Result<()> {
    if count == 0 || usize::from(count) > MAX_ENTRIES {
        return Err(Error::BadField("MULTI_ACK count"));
    }
    let mut seen = 0u64;
    let mut at = 0;
    for _ in 0..count {
        let (entry, len) = read_entry(&bytes[at..])?;
        let bit = 1u64 << entry.path;
        if seen & bit != 0 {
            return Err(Error::BadField("MULTI_ACK path repeated"));
        }
        seen |= bit;
        at += len;
    }
    if at != bytes.len() {
        return Err(Error::BadField("MULTI_ACK entries length"));
    }
    Ok(())
}

/// The entries of a MULTI_ACK's entries area (`parse_datagram`'s payload),
/// in order; stops at the first malformed one (none in a parsed packet).
pub fn ack_entries(bytes: &[u8]) -> impl Iterator<Item = AckEntry> + '_ {
    let mut at = 0;
    core::iter::from_fn(move || {
        let (entry, len) = read_entry(bytes.get(at..)?).ok()?;
        at += len;
        Some(entry)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_entry() -> impl Strategy<Value = AckEntry> {
        (
            0u16..64,
            any::<bool>(),
            any::<[u32; 3]>(),
            any::<u64>(),
            proptest::collection::vec(0u32..256, 0..6),
        )
            .prop_map(|(path, ece, w, ts, bits)| {
                let mut sack = Sack::new();
                bits.iter().for_each(|&b| sack.set(b));
                AckEntry {
                    path,
                    ece,
                    path_cum: w[0],
                    sack,
                    echo_ts: ts,
                    ce_count: w[1],
                    rx_count: w[2],
                }
            })
    }

    fn write(entries: &[AckEntry]) -> std::vec::Vec<u8> {
        let mut out = std::vec![0u8; entries.iter().map(AckEntry::wire_len).sum()];
        let mut at = 0;
        for e in entries {
            at += e.emit(&mut out[at..]).unwrap();
        }
        out
    }

    #[test]
    fn an_empty_bitmap_takes_no_bytes_and_a_full_one_32() {
        let mut e = AckEntry::default();
        assert_eq!(e.wire_len(), 24);
        e.sack.set(8);
        assert_eq!(e.wire_len(), 26);
        e.sack.set(255);
        assert_eq!(e.wire_len(), 56);
    }

    #[test]
    fn malformed_areas_are_refused() {
        let e = AckEntry {
            path: 3,
            ..AckEntry::default()
        };
        let one = write(&[e]);
        assert_eq!(check_entries(&one, 1), Ok(()));
        assert!(check_entries(&one, 0).is_err());
        assert!(check_entries(&one, 2).is_err());
        assert!(check_entries(&write(&[e, e]), 2).is_err(), "repeated path");
        let mut long = one.clone();
        long.push(0);
        assert!(check_entries(&long, 1).is_err(), "trailing byte");
        let mut bad = one.clone();
        bad[2] = 33;
        assert!(check_entries(&bad, 1).is_err(), "sack_len 33");
        bad[2] = 0;
        bad[0] = 64;
        assert!(check_entries(&bad, 1).is_err(), "path 64");
        assert!(check_entries(&one[..23], 1).is_err());
    }

    proptest! {
        #[test]
        fn entries_round_trip(entries in proptest::collection::vec(arb_entry(), 1..10)) {
            let mut seen = 0u64;
            let entries: std::vec::Vec<_> = entries
                .into_iter()
                .filter(|e| {
                    let new = seen & 1 << e.path == 0;
                    seen |= 1 << e.path;
                    new
                })
                .collect();
            let bytes = write(&entries);
            prop_assert_eq!(check_entries(&bytes, entries.len() as u8), Ok(()));
            let back: std::vec::Vec<_> = ack_entries(&bytes).collect();
            prop_assert_eq!(back, entries);
        }

        #[test]
        fn hostile_areas_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), count in any::<u8>()) {
            let _ = check_entries(&bytes, count);
            let _ = ack_entries(&bytes).count();
        }
    }
}
