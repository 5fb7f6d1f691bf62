//! Socket addresses between C (`struct sockaddr *`) and Rust, GIDs of addresses, and
//! the local address a destination is reached from.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};

use metaroce_cabi::ffi::Errno;

use crate::abi::{AF_IB, ibv_gid};

/// Reads a C socket address (IPv4 or IPv6).
///
/// # Safety
/// A non-NULL `p` must point to a socket address whose family field is readable and,
/// for `AF_INET`/`AF_INET6`, to a whole `sockaddr_in`/`sockaddr_in6`.
pub unsafe fn from_c(p: *const libc::sockaddr) -> Result<SocketAddr, Errno> {
    if p.is_null() {
        return Err(libc::EINVAL);
    }
    // SAFETY: non-NULL; the caller guarantees the family field is readable.
    let family = i32::from(unsafe { (*p).sa_family });
    match family {
        libc::AF_INET => {
            // SAFETY: an AF_INET address is a whole sockaddr_in (caller's guarantee).
            let sin = unsafe { p.cast::<libc::sockaddr_in>().read_unaligned() };
            Ok(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: an AF_INET6 address is a whole sockaddr_in6 (caller's guarantee).
            let sin6 = unsafe { p.cast::<libc::sockaddr_in6>().read_unaligned() };
            Ok(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(sin6.sin6_addr.s6_addr),
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        AF_IB => Err(libc::EAFNOSUPPORT),
        _ => Err(libc::EINVAL),
    }
}

/// A socket address as C sees it, and its length.
pub fn to_c(a: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    let sa = socket2::SockAddr::from(a);
    // SAFETY: a zeroed sockaddr_storage is a valid value.
    let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = sa.len() as usize;
    // SAFETY: `sa` holds `len` initialised bytes, and a sockaddr_storage is large enough
    // for any address socket2 builds.
    unsafe {
        std::ptr::copy_nonoverlapping(
            sa.as_ptr().cast::<u8>(),
            (&raw mut st).cast::<u8>(),
            len.min(size_of::<libc::sockaddr_storage>()),
        )
    };
    (st, sa.len())
}

/// The port of a C socket address stored in a `sockaddr_storage` (network order), or 0.
pub fn port_of(st: &libc::sockaddr_storage) -> u16 {
    // SAFETY: a sockaddr_storage is large enough for either family's view.
    match unsafe { from_c((st as *const libc::sockaddr_storage).cast()) } {
        Ok(a) => a.port().to_be(),
        Err(_) => 0,
    }
}

/// The GID standing for an address: `::ffff:a.b.c.d` for IPv4 (RoCE v2).
pub fn gid_of(ip: IpAddr) -> ibv_gid {
    ibv_gid {
        raw: match ip {
            IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            IpAddr::V6(v6) => v6.octets(),
        },
    }
}

/// The local address this host sends from to reach `dst` (the kernel's route choice).
pub fn route_source(dst: IpAddr) -> Result<IpAddr, Errno> {
    let any: IpAddr = match dst {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let probe = UdpSocket::bind((any, 0)).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    probe
        .connect((dst, 9))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::ENETUNREACH))?;
    probe
        .local_addr()
        .map(|a| a.ip())
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/// A destination of "any address" means this host (as the kernel treats it).
pub fn concrete_dst(dst: SocketAddr) -> SocketAddr {
    match dst.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), dst.port())
        }
        IpAddr::V6(v6) if v6.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), dst.port())
        }
        _ => dst,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_c() {
        for a in ["127.0.0.1:7174", "[::1]:18515", "[fe80::1%2]:1"] {
            let a: SocketAddr = a.parse().unwrap();
            let (st, len) = to_c(a);
            // SAFETY: `st` is a valid socket address of either family.
            let back = unsafe { from_c((&raw const st).cast()) }.unwrap();
            assert_eq!(back, a);
            assert_eq!(port_of(&st), a.port().to_be());
            assert!(len as usize <= size_of::<libc::sockaddr_storage>());
        }
        // SAFETY: NULL is refused before anything is read.
        assert_eq!(unsafe { from_c(std::ptr::null()) }, Err(libc::EINVAL));
        // SAFETY: a zeroed storage is readable; its family (0) is refused.
        let zero: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        assert_eq!(
            unsafe { from_c((&raw const zero).cast()) },
            Err(libc::EINVAL)
        );
    }

    #[test]
    fn loopback_routes_from_loopback() {
        assert_eq!(
            route_source(Ipv4Addr::LOCALHOST.into()),
            Ok(Ipv4Addr::LOCALHOST.into())
        );
        assert_eq!(
            gid_of(Ipv4Addr::LOCALHOST.into()).raw[10..],
            [0xff, 0xff, 127, 0, 0, 1]
        );
        assert_eq!(
            concrete_dst("0.0.0.0:5".parse().unwrap()),
            "127.0.0.1:5".parse().unwrap()
        );
    }
}
