//! The host's usable addresses in device order.
//!
//! MetaRoCE's libibverbs shows one device per address, named `metaroce0`, `metaroce1`, …
//! in the order of [`host_addresses`]: interface order, IPv4 before IPv6 on each
//! interface, IPv6 link-local addresses left out. librdmacm finds the device of an
//! address with the same list, so both libraries must take it from here.

use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One usable address of the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostAddr {
    /// Interface index.
    pub ifindex: u32,
    /// The address.
    pub ip: IpAddr,
    /// The interface's MAC address, when it has one.
    pub mac: Option<[u8; 6]>,
}

/// Every address of every interface that is up, in device order (see the module
/// documentation). If the interfaces cannot be listed, the IPv4 loopback alone.
pub fn host_addresses() -> Vec<HostAddr> {
    let mut addrs = list().unwrap_or_else(|| {
        vec![HostAddr {
            ifindex: 1,
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            mac: None,
        }]
    });
    addrs.sort_by_key(|a| (a.ifindex, a.ip.is_ipv6()));
    addrs
}

/// The device index of `ip` (an IPv4-mapped IPv6 address counts as its IPv4 address).
pub fn device_index(ip: IpAddr) -> Option<usize> {
    let ip = unmap(ip);
    host_addresses().iter().position(|a| a.ip == ip)
}

/// `::ffff:a.b.c.d` as `a.b.c.d`; anything else unchanged.
pub fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn list() -> Option<Vec<HostAddr>> {
    let mut ifap: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `ifap` with a list we free below.
    if unsafe { libc::getifaddrs(&mut ifap) } != 0 {
        return None;
    }
    let mut macs: Vec<(String, [u8; 6])> = Vec::new();
    let mut found: Vec<(String, IpAddr)> = Vec::new();
    let mut cur = ifap;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_flags & libc::IFF_UP as u32 == 0 {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: ifa_addr is non-NULL; sa_family tells which sockaddr it is, and each
        // cast below matches its family.
        let family = i32::from(unsafe { (*ifa.ifa_addr).sa_family });
        match family {
            libc::AF_INET => {
                // SAFETY: an AF_INET address is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                found.push((name, IpAddr::V4(ip)));
            }
            libc::AF_INET6 => {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                if !ip.is_unicast_link_local() {
                    found.push((name, IpAddr::V6(ip)));
                }
            }
            libc::AF_PACKET => {
                // SAFETY: an AF_PACKET address is a sockaddr_ll.
                let sll = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_ll) };
                if sll.sll_halen == 6 {
                    let mut m = [0u8; 6];
                    m.copy_from_slice(&sll.sll_addr[..6]);
                    macs.push((name, m));
                }
            }
            _ => {}
        }
    }
    // SAFETY: `ifap` came from getifaddrs and is freed once; no reference into it is
    // kept (names were copied).
    unsafe { libc::freeifaddrs(ifap) };
    Some(
        found
            .into_iter()
            .map(|(name, ip)| {
                let cname = std::ffi::CString::new(name.clone()).unwrap_or_default();
                // SAFETY: `cname` is a valid NUL-terminated string.
                let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
                let mac = macs.iter().find(|(n, _)| *n == name).map(|(_, m)| *m);
                HostAddr { ifindex, ip, mac }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_ipv4_comes_first() {
        let a = host_addresses();
        assert_eq!(a[0].ip, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(device_index(IpAddr::V4(Ipv4Addr::LOCALHOST)), Some(0));
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(device_index(mapped), Some(0));
        assert_eq!(device_index("192.0.2.77".parse().unwrap()), None);
    }
}
