//! The invariant CRC (ICRC) trailer.
//!
//! CRC-32 (IEEE 802.3, as Ethernet's FCS and zlib's `crc32`) over a 40-byte
//! pseudo-header and then every byte of the UDP payload before the trailer.
//! The pseudo-header covers addresses and both UDP ports — including the
//! source port, so a NIC that rewrites the source port to a path's entropy
//! computes the ICRC after the rewrite — and leaves out what switches may
//! change in flight: ECN/DSCP, TTL, flow label and the IP/UDP checksums.

use core::net::IpAddr;

/// The invariant fields of the IP and UDP headers that the ICRC covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PseudoHeader {
    /// Source IP address, IPv4 mapped into IPv6 (`::ffff:a.b.c.d`).
    pub src_ip: [u8; 16],
    /// Destination IP address, IPv4 mapped into IPv6.
    pub dst_ip: [u8; 16],
    /// UDP source port (the path entropy).
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

impl PseudoHeader {
    /// Pseudo-header for a datagram between two socket addresses.
    pub fn new(src_ip: IpAddr, src_port: u16, dst_ip: IpAddr, dst_port: u16) -> Self {
        PseudoHeader {
            src_ip: mapped(src_ip),
            dst_ip: mapped(dst_ip),
            src_port,
            dst_port,
        }
    }

    /// The 40 bytes fed to the CRC before a UDP payload of `payload_len` bytes.
    pub fn bytes(&self, payload_len: usize) -> [u8; 40] {
        let mut out = [0u8; 40];
        out[0..16].copy_from_slice(&self.src_ip);
        out[16..32].copy_from_slice(&self.dst_ip);
        out[32..34].copy_from_slice(&self.src_port.to_be_bytes());
        out[34..36].copy_from_slice(&self.dst_port.to_be_bytes());
        // UDP length: 8-byte UDP header plus payload; saturates for jumbo input.
        let udp_len = u16::try_from(payload_len + 8).unwrap_or(u16::MAX);
        out[36..38].copy_from_slice(&udp_len.to_be_bytes());
        out
    }
}

fn mapped(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// ICRC of a whole UDP payload `datagram` (whose last 4 bytes are the trailer,
/// not covered). Returns 0-length-safe results for any input length.
pub fn compute_icrc(pseudo: &PseudoHeader, datagram: &[u8]) -> u32 {
    let covered = &datagram[..datagram.len().saturating_sub(crate::ICRC_LEN)];
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&pseudo.bytes(datagram.len()));
    hasher.update(covered);
    hasher.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv4Addr;

    #[test]
    fn crc_is_the_ethernet_crc32() {
        // The standard check value of CRC-32/ISO-HDLC.
        let mut h = crc32fast::Hasher::new();
        h.update(b"123456789");
        assert_eq!(h.finalize(), 0xCBF4_3926);
    }

    #[test]
    fn source_port_is_covered_and_ecn_is_not_an_input() {
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let b = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let data = [7u8; 40];
        let p1 = PseudoHeader::new(a, 50000, b, 4798);
        let p2 = PseudoHeader::new(a, 50001, b, 4798);
        assert_ne!(compute_icrc(&p1, &data), compute_icrc(&p2, &data));
        let mapped_prefix = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1];
        assert_eq!(p1.bytes(0)[0..16], mapped_prefix);
    }
}
