//! The devices this library shows: one per usable address of the host, named
//! `metaroce0`, `metaroce1`, … in interface order (IPv4 before IPv6 on each interface), so
//! `metaroce0` is the loopback's 127.0.0.1. Each device has one port whose one GID
//! (index 0, RoCE v2) is the address of the NIC an open context runs: the device's own
//! (the soft NIC binds it), or that of the hardware NIC behind it (`METAROCE_IBV_BACKEND=device`:
//! a simulated board has an address of its own); `::ffff:a.b.c.d` for IPv4.

use std::net::{IpAddr, Ipv6Addr};
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

/// Every device, discovered once per process, in the device order librdmacm shares
/// ([`metaroce_cabi::netif`]).
pub fn devices() -> &'static [Device] {
    static DEVICES: OnceLock<Vec<Device>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        metaroce_cabi::netif::host_addresses()
            .into_iter()
            .enumerate()
            .map(|(index, a)| make_device(index, a.ifindex, a.ip, a.mac))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;
    use std::net::Ipv4Addr;

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
