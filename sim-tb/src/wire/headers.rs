//! What the wire reads and changes in a frame: the UDP source port that
//! picks its path, and the IP ECN field it marks CE.

/// Ethernet header length (no VLAN tag).
pub(super) const ETH_LEN: usize = 14;
/// EtherType of IPv4.
const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
const ETHERTYPE_IPV6: u16 = 0x86DD;
/// IPv6 fixed header length.
pub(super) const IPV6_LEN: usize = 40;
/// UDP header length.
pub(super) const UDP_LEN: usize = 8;
/// IP protocol number of UDP.
const PROTO_UDP: u8 = 17;
/// The IP ECN field's CE codepoint.
const ECN_CE: u8 = 0b11;

/// Where a frame's IP header is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum L3 {
    /// IPv4, header length in bytes (complete in the frame).
    V4(usize),
    /// IPv6 (the fixed header complete in the frame).
    V6,
}

/// The frame's IP header, if it is Ethernet II IPv4 or IPv6 and the header
/// is complete.
fn l3(frame: &[u8]) -> Option<L3> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let first = *frame.get(ETH_LEN)?;
    match (ethertype, first >> 4) {
        (ETHERTYPE_IPV4, 4) => {
            let ihl = usize::from(first & 0x0f) * 4;
            (ihl >= 20 && frame.len() >= ETH_LEN + ihl).then_some(L3::V4(ihl))
        }
        (ETHERTYPE_IPV6, 6) => (frame.len() >= ETH_LEN + IPV6_LEN).then_some(L3::V6),
        _ => None,
    }
}

/// The UDP source port, if the frame is IPv4 (first or only fragment) or
/// IPv6 (no extension headers) UDP with a complete UDP header.
pub(super) fn udp_src_port(frame: &[u8]) -> Option<u16> {
    let l4 = match l3(frame)? {
        L3::V4(ihl) => {
            let frag_offset = u16::from_be_bytes([frame[ETH_LEN + 6], frame[ETH_LEN + 7]]) & 0x1fff;
            if frame[ETH_LEN + 9] != PROTO_UDP || frag_offset != 0 {
                return None;
            }
            ETH_LEN + ihl
        }
        L3::V6 => {
            if frame[ETH_LEN + 6] != PROTO_UDP {
                return None;
            }
            ETH_LEN + IPV6_LEN
        }
    };
    let udp = frame.get(l4..l4 + UDP_LEN)?;
    Some(u16::from_be_bytes([udp[0], udp[1]]))
}

/// The frame's IP header if it may be marked CE: its ECN field is ECT(0)
/// or ECT(1) and, for IPv4, its header checksum verifies.
pub(super) fn markable(frame: &[u8]) -> Option<L3> {
    let l3 = l3(frame)?;
    let ecn = match l3 {
        L3::V4(_) => frame[ETH_LEN + 1] & 0b11,
        L3::V6 => (frame[ETH_LEN + 1] >> 4) & 0b11,
    };
    if ecn == 0 || ecn == ECN_CE {
        return None;
    }
    match l3 {
        L3::V4(ihl) => (ones_sum(&frame[ETH_LEN..ETH_LEN + ihl]) == 0xffff).then_some(l3),
        L3::V6 => Some(l3),
    }
}

/// Sets the ECN field of the header `l3` (from [`markable`]) to CE; for
/// IPv4 recomputes the header checksum.
pub(super) fn set_ce(frame: &mut [u8], l3: L3) {
    match l3 {
        L3::V4(ihl) => {
            frame[ETH_LEN + 1] |= ECN_CE;
            frame[ETH_LEN + 10..ETH_LEN + 12].fill(0);
            let sum = !ones_sum(&frame[ETH_LEN..ETH_LEN + ihl]);
            frame[ETH_LEN + 10..ETH_LEN + 12].copy_from_slice(&sum.to_be_bytes());
        }
        // Traffic class: low nibble of byte 0 and high nibble of byte 1;
        // ECN is its two low bits.
        L3::V6 => frame[ETH_LEN + 1] |= ECN_CE << 4,
    }
}

/// Ones'-complement sum of the big-endian 16-bit words of `bytes` (an even
/// number of them).
fn ones_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks_exact(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}
