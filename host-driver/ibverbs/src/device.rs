//! The devices this library shows: one per usable address of the host, named
//! `metaroce0`, `metaroce1`, … in interface order (IPv4 before IPv6 on each interface), so
//! `metaroce0` is the loopback's 127.0.0.1. Each device has one port whose one GID
//! (index 0, RoCE v2) is the address of the NIC an open context runs: the device's own
//! (the soft NIC binds it), or that of the hardware NIC behind it (`METAROCE_IBV_BACKEND=device`:
//! a simulated board has an address of its own); `::ffff:a.b.c.d` for IPv4.

use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use crate::abi::{self, ibv_device, ibv_gid};
use crate::ffi::copy_cstr;

/// One device: a host address.
pub struct Device {
    /// What C programs see (address stable for the process lifetime).
    pub c: Box<ibv_device>,
    /// Its position in the list (`ibv_get_device_index`).
    pub index: usize,
    /// The address the device's NIC binds.
    pub ip: IpAddr,
    /// Interface index of the address.
    pub ifindex: u32,
    /// Node GUID (big-endian value as stored in `ibv_device_attr`).
    pub guid: u64,
}

// SAFETY: the C view is written once at discovery and only read afterwards; its raw
// pointers are NULL.
unsafe impl Send for Device {}
// SAFETY: as above: never written after discovery.
unsafe impl Sync for Device {}

/// The GID that stands for `ip` (`::ffff:a.b.c.d` for IPv4).
pub fn ip_to_gid(ip: IpAddr) -> ibv_gid {
    ibv_gid {
        raw: match ip {
            IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            IpAddr::V6(v6) => v6.octets(),
        },
    }
}

/// The address a GID stands for (`::ffff:a.b.c.d` is IPv4).
pub fn gid_to_ip(gid: &ibv_gid) -> IpAddr {
    let v6 = Ipv6Addr::from(gid.raw);
    match v6.to_ipv4_mapped() {
        Some(v4) => IpAddr::V4(v4),
        None => IpAddr::V6(v6),
    }
}

/// Every device, discovered once per process.
pub fn devices() -> &'static [Device] {
    static DEVICES: OnceLock<Vec<Device>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        let mut addrs = host_addresses();
        addrs.sort_by_key(|&(ifindex, ip, _)| (ifindex, ip.is_ipv6()));
        addrs
            .into_iter()
            .enumerate()
            .map(|(index, (ifindex, ip, mac))| make_device(index, ifindex, ip, mac))
            .collect()
    })
}

/// Finds the device behind a C device pointer.
pub fn by_ptr(p: *const ibv_device) -> Option<&'static Device> {
    devices().iter().find(|d| std::ptr::eq(&*d.c, p))
}

fn make_device(index: usize, ifindex: u32, ip: IpAddr, mac: Option<[u8; 6]>) -> Device {
    // EUI-64 from the MAC when there is one (with the device index in its middle byte,
    // as one interface may carry several addresses); otherwise a locally administered
    // GUID made from the address.
    let guid_bytes: [u8; 8] = match mac {
        Some(m) if m != [0; 6] => [m[0] ^ 2, m[1], m[2], 0xff, index as u8, m[3], m[4], m[5]],
        _ => {
            let h = match ip {
                IpAddr::V4(v4) => u64::from(u32::from(v4)),
                IpAddr::V6(v6) => {
                    let o = v6.octets();
                    u64::from_be_bytes([o[8], o[9], o[10], o[11], o[12], o[13], o[14], o[15]])
                }
            };
            (0x0200_0000_0000_0000 | (h & 0xffff_ffff_ffff) | ((index as u64) << 48)).to_be_bytes()
        }
    };
    let mut c = Box::new(ibv_device {
        _ops: [std::ptr::null_mut(); 2],
        node_type: abi::IBV_NODE_CA,
        transport_type: abi::IBV_TRANSPORT_IB,
        name: [0; abi::SYSFS_NAME_MAX],
        dev_name: [0; abi::SYSFS_NAME_MAX],
        dev_path: [0; abi::SYSFS_PATH_MAX],
        ibdev_path: [0; abi::SYSFS_PATH_MAX],
    });
    let name = format!("metaroce{index}");
    copy_cstr(&mut c.name, &name);
    copy_cstr(&mut c.dev_name, &format!("uverbs{index}"));
    copy_cstr(
        &mut c.dev_path,
        &format!("/sys/class/infiniband_verbs/uverbs{index}"),
    );
    copy_cstr(&mut c.ibdev_path, &format!("/sys/class/infiniband/{name}"));
    Device {
        c,
        index,
        ip,
        ifindex,
        guid: u64::from_ne_bytes(guid_bytes),
    }
}

/// (interface index, address, MAC) of every address of every interface that is up;
/// IPv6 link-local addresses are left out (they need a scope to be used).
fn host_addresses() -> Vec<(u32, IpAddr, Option<[u8; 6]>)> {
    let mut ifap: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `ifap` with a list we free below.
    if unsafe { libc::getifaddrs(&mut ifap) } != 0 {
        return vec![(1, IpAddr::V4(Ipv4Addr::LOCALHOST), None)];
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
    found
        .into_iter()
        .map(|(name, ip)| {
            let cname = std::ffi::CString::new(name.clone()).unwrap_or_default();
            // SAFETY: `cname` is a valid NUL-terminated string.
            let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
            let mac = macs.iter().find(|(n, _)| *n == name).map(|(_, m)| *m);
            (ifindex, ip, mac)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_ipv4_is_first_device() {
        let d = &devices()[0];
        assert_eq!(d.ip, IpAddr::V4(Ipv4Addr::LOCALHOST));
        // SAFETY: the name was written NUL-terminated at discovery.
        let name = unsafe { CStr::from_ptr(d.c.name.as_ptr()) };
        assert_eq!(name.to_str().unwrap(), "metaroce0");
        assert!(std::ptr::eq(by_ptr(&*d.c).unwrap(), d));
        assert!(by_ptr(std::ptr::null()).is_none());
    }

    #[test]
    fn gids_round_trip() {
        for ip in ["127.0.0.1", "::1", "10.1.2.3"] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(gid_to_ip(&ip_to_gid(ip)), ip);
        }
        assert_eq!(
            ip_to_gid("127.0.0.1".parse().unwrap()).raw,
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1]
        );
    }
}
