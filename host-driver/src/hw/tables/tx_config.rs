//! The TX builder's registers: the addresses and IP settings of its one peer, the entropy table's addresses.

use std::net::IpAddr;

use crate::hw::codes::tx;

/// The addresses and IP settings of the TX builder (its one peer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addresses {
    /// Local MAC (Ethernet source).
    pub local_mac: [u8; 6],
    /// Peer (next hop) MAC.
    pub peer_mac: [u8; 6],
    /// Local IP address (both IPv4 or both IPv6).
    pub local_ip: IpAddr,
    /// Peer IP address.
    pub peer_ip: IpAddr,
    /// UDP destination port.
    pub dst_port: u16,
    /// IPv4 TTL / IPv6 hop limit.
    pub ttl: u8,
    /// IPv4 DSCP (6 bits).
    pub dscp: u8,
}

fn mac_word(mac: [u8; 6]) -> u64 {
    mac.iter().fold(0, |w, &b| w << 8 | u64::from(b))
}

/// Writes the TX builder's address registers of [`Addresses`] through `write(addr,
/// data)` (`metaroce_hdl::tx_build::cfg` addresses, without [`NIC_CORE_TX_CFG`](super::NIC_CORE_TX_CFG)).
/// False, with nothing written, when one address is IPv4 and the other IPv6.
pub fn configure_tx(a: &Addresses, write: &mut dyn FnMut(u8, u64)) -> bool {
    use tx::*;
    let v6 = match (a.local_ip, a.peer_ip) {
        (IpAddr::V4(_), IpAddr::V4(_)) => false,
        (IpAddr::V6(_), IpAddr::V6(_)) => true,
        _ => return false,
    };
    write(
        cfg_addr(CFG_REGS, REG_LOCAL),
        mac_word(a.local_mac) | u64::from(a.dst_port) << 48,
    );
    match (a.local_ip, a.peer_ip) {
        (IpAddr::V4(local), IpAddr::V4(peer)) => write(
            cfg_addr(CFG_REGS, REG_IPV4),
            u64::from(local.to_bits()) | u64::from(peer.to_bits()) << 32,
        ),
        (local, peer) => {
            for (reg, ip) in [(REG_LOCAL_IPV6, local), (REG_PEER_IPV6, peer)] {
                let bits = u128::from_be_bytes(mapped(ip));
                write(cfg_addr(CFG_REGS, reg), (bits >> 64) as u64);
                write(cfg_addr(CFG_REGS, reg + 1), bits as u64);
            }
        }
    }
    write(
        cfg_addr(CFG_REGS, REG_PEER),
        mac_word(a.peer_mac)
            | u64::from(a.ttl) << 48
            | u64::from(a.dscp) << 56
            | u64::from(v6) << PEER_IPV6_BIT,
    );
    true
}

/// The `tx_build::cfg` address of `path`'s entry in the entropy table (the table is
/// indexed by the path's low bits).
pub fn entropy_cfg_addr(path: u16) -> u8 {
    tx::cfg_addr(tx::CFG_ENTROPY, (usize::from(path) % tx::PATHS) as u8)
}

/// An address as the RTL's tables hold it: IPv6, or IPv4 mapped into IPv6.
pub fn mapped(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}
