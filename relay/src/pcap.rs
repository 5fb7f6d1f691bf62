//! A minimal classic-pcap writer: `LINKTYPE_RAW` records with synthetic IPv4/IPv6 + UDP
//! headers, so Wireshark shows what the relay forwarded, with its addresses and ECN bits.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// `LINKTYPE_RAW`: each record starts with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Snapshot length written in the file header.
const SNAPLEN: u32 = 65_535;

/// Writes forwarded datagrams to a pcap file.
#[derive(Debug)]
pub(crate) struct PcapWriter {
    out: BufWriter<File>,
}

/// One's-complement sum of 16-bit big-endian words (odd tail padded with zero).
fn sum16(mut acc: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

/// Folds a one's-complement sum to 16 bits and complements it.
fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

impl PcapWriter {
    /// Creates (truncates) `path` and writes the file header.
    pub(crate) fn create(path: &Path) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        out.write_all(&0xa1b2_c3d4u32.to_le_bytes())?; // magic, microsecond timestamps
        out.write_all(&2u16.to_le_bytes())?; // version 2.4
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&SNAPLEN.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(PcapWriter { out })
    }

    /// Appends one record: IP + UDP header for `src` → `dst` with `ecn` bits, then `payload`.
    /// `src` and `dst` must be of one family (a mismatch writes nothing).
    pub(crate) fn write(
        &mut self,
        src: SocketAddr,
        dst: SocketAddr,
        ecn: u8,
        payload: &[u8],
    ) -> io::Result<()> {
        let mut hdr = [0u8; 48];
        let udp_len = 8 + payload.len();
        let Ok(udp_len16) = u16::try_from(udp_len) else {
            return Ok(());
        };
        let ip_len = match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let Ok(total) = u16::try_from(20 + udp_len) else {
                    return Ok(());
                };
                hdr[0] = 0x45;
                hdr[1] = ecn & 0b11;
                hdr[2..4].copy_from_slice(&total.to_be_bytes());
                hdr[6] = 0x40; // DF
                hdr[8] = 64; // TTL
                hdr[9] = 17; // UDP
                hdr[12..16].copy_from_slice(&s.octets());
                hdr[16..20].copy_from_slice(&d.octets());
                let csum = fold(sum16(0, &hdr[..20]));
                hdr[10..12].copy_from_slice(&csum.to_be_bytes());
                20
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let first = (6u32 << 28) | (u32::from(ecn & 0b11) << 20);
                hdr[0..4].copy_from_slice(&first.to_be_bytes());
                hdr[4..6].copy_from_slice(&udp_len16.to_be_bytes());
                hdr[6] = 17; // next header UDP
                hdr[7] = 64; // hop limit
                hdr[8..24].copy_from_slice(&s.octets());
                hdr[24..40].copy_from_slice(&d.octets());
                40
            }
            _ => return Ok(()),
        };
        let (ip, udp) = hdr.split_at_mut(ip_len);
        udp[0..2].copy_from_slice(&src.port().to_be_bytes());
        udp[2..4].copy_from_slice(&dst.port().to_be_bytes());
        udp[4..6].copy_from_slice(&udp_len16.to_be_bytes());
        // UDP checksum over the pseudo-header, the UDP header (checksum 0) and the payload.
        let addrs = if ip_len == 20 {
            &ip[12..20]
        } else {
            &ip[8..40]
        };
        let mut acc = sum16(0, addrs);
        acc += 17 + udp_len as u32;
        acc = sum16(acc, &udp[..8]);
        acc = sum16(acc, payload);
        let csum = match fold(acc) {
            0 => 0xffff,
            c => c,
        };
        udp[6..8].copy_from_slice(&csum.to_be_bytes());

        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let len = (ip_len + udp_len) as u32;
        self.out.write_all(&(now.as_secs() as u32).to_le_bytes())?;
        self.out.write_all(&now.subsec_micros().to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?; // captured
        self.out.write_all(&len.to_le_bytes())?; // original
        self.out.write_all(&hdr[..ip_len + 8])?;
        self.out.write_all(payload)
    }

    /// Flushes buffered records to the file.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_known_ipv4_header() {
        // Example header from RFC 1071 discussions (checksum field zeroed): 0xb861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(fold(sum16(0, &h)), 0xb861);
    }

    #[test]
    fn odd_length_sum_pads_with_zero() {
        assert_eq!(sum16(0, &[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
    }
}
