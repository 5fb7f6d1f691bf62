//! The FFI layer of `metaroce-udp`: every `unsafe` block of the crate lives here.
//!
//! Raw `libc` calls for what `socket2` does not cover: `sendmmsg`/`recvmmsg`,
//! control messages (`UDP_SEGMENT`, `UDP_GRO`, `IP_TOS`, `IPV6_TCLASS`),
//! socket options by number, `sockaddr` conversion and `ppoll`.

use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr;
use std::time::Duration;

/// `UDP_SEGMENT` (linux/udp.h): GSO segment size, socket option and cmsg.
pub(super) const UDP_SEGMENT: libc::c_int = 103;
/// `UDP_GRO` (linux/udp.h): enable GRO on receive; cmsg carries the segment size.
pub(super) const UDP_GRO: libc::c_int = 104;
/// `SO_RCVBUFFORCE` (asm-generic/socket.h): like `SO_RCVBUF`, ignores `rmem_max` (needs CAP_NET_ADMIN).
pub(super) const SO_RCVBUFFORCE: libc::c_int = 33;
/// `SO_SNDBUFFORCE` (asm-generic/socket.h).
pub(super) const SO_SNDBUFFORCE: libc::c_int = 32;

/// Room for the control messages of one datagram: two `int`-sized cmsgs fit in 48 bytes,
/// 64 leaves slack for one unexpected message on receive.
pub(super) const CMSG_BUF_LEN: usize = 64;

/// Storage for one datagram's control messages, aligned for `cmsghdr`.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub(super) struct CmsgBuf(pub(super) [u8; CMSG_BUF_LEN]);

impl CmsgBuf {
    pub(super) const ZERO: CmsgBuf = CmsgBuf([0; CMSG_BUF_LEN]);
}

/// An all-zero `mmsghdr` (null pointers, zero lengths).
pub(super) fn zeroed_mmsghdr() -> libc::mmsghdr {
    // SAFETY: `mmsghdr` is a plain C struct of integers and raw pointers, for which
    // the all-zero bit pattern is a valid value (null pointers, zero lengths).
    unsafe { std::mem::zeroed() }
}

/// An all-zero `sockaddr_storage`.
pub(super) fn zeroed_storage() -> libc::sockaddr_storage {
    // SAFETY: `sockaddr_storage` is a plain C struct of integers; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// `setsockopt(fd, level, name, &value, sizeof(int))`.
pub(super) fn setsockopt_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `fd` is an open descriptor borrowed for the call; the option value points
    // to a live `c_int` on the stack and its exact size is passed.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&raw const value).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `addr` into `out` as a `sockaddr_in`/`sockaddr_in6`; returns its length.
pub(super) fn write_sockaddr(
    addr: &SocketAddr,
    out: &mut libc::sockaddr_storage,
) -> libc::socklen_t {
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: `sockaddr_storage` is at least as large as and at least as aligned as
            // `sockaddr_in` (that is its purpose); `out` is a valid exclusive reference.
            unsafe { ptr::write((out as *mut libc::sockaddr_storage).cast(), sin) };
            size_of::<libc::sockaddr_in>() as libc::socklen_t
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above, `sockaddr_storage` can hold a `sockaddr_in6`.
            unsafe { ptr::write((out as *mut libc::sockaddr_storage).cast(), sin6) };
            size_of::<libc::sockaddr_in6>() as libc::socklen_t
        }
    }
}

/// Reads the address the kernel wrote into `st` (`len` bytes); `None` for other families.
pub(super) fn read_sockaddr(
    st: &libc::sockaddr_storage,
    len: libc::socklen_t,
) -> Option<SocketAddr> {
    let len = len as usize;
    match libc::c_int::from(st.ss_family) {
        libc::AF_INET if len >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: the family says the storage holds a `sockaddr_in`, the kernel wrote at
            // least its size, and `sockaddr_storage` is suitably aligned for it.
            let sin: libc::sockaddr_in =
                unsafe { ptr::read((st as *const libc::sockaddr_storage).cast()) };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes()),
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 if len >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above for `sockaddr_in6`.
            let sin6: libc::sockaddr_in6 =
                unsafe { ptr::read((st as *const libc::sockaddr_storage).cast()) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(sin6.sin6_addr.s6_addr),
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Appends `int`-valued control messages to `buf`; returns the bytes used (`msg_controllen`).
///
/// Every entry is `(level, type, value, width)` with `width` 1, 2 or 4 bytes (`IP_TOS` may be
/// a byte or an int, `UDP_SEGMENT` is a `u16`, `IPV6_TCLASS` an `int`).
pub(super) fn write_cmsgs(
    buf: &mut CmsgBuf,
    msgs: &[(libc::c_int, libc::c_int, u32, usize)],
) -> usize {
    let mut used = 0usize;
    for &(level, ty, value, width) in msgs {
        // SAFETY: CMSG_SPACE/CMSG_LEN only compute sizes from their argument.
        let (space, len) = unsafe {
            (
                libc::CMSG_SPACE(width as u32) as usize,
                libc::CMSG_LEN(width as u32) as usize,
            )
        };
        if used + space > CMSG_BUF_LEN {
            break;
        }
        let hdr = libc::cmsghdr {
            cmsg_len: len as _,
            cmsg_level: level,
            cmsg_type: ty,
        };
        let base = buf.0[used..].as_mut_ptr();
        // SAFETY: `base` points at `space` writable bytes inside `buf` (checked above), and
        // `used` is a multiple of the cmsg alignment (CMSG_SPACE rounds up) inside an 8-aligned
        // buffer, so the header write is aligned; the data area starts `CMSG_LEN(0)` bytes in,
        // as CMSG_DATA computes, and `width` bytes fit in `space`.
        unsafe {
            ptr::write(base.cast::<libc::cmsghdr>(), hdr);
            let data = libc::CMSG_DATA(base.cast::<libc::cmsghdr>());
            match width {
                1 => ptr::write(data, value as u8),
                2 => ptr::write_unaligned(data.cast::<u16>(), value as u16),
                _ => ptr::write_unaligned(data.cast::<u32>(), value),
            }
        }
        used += space;
    }
    used
}

/// Control-message facts of one received datagram.
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct RxCmsg {
    /// TOS / traffic class byte, if reported.
    pub(super) tos: Option<u8>,
    /// GRO segment size, if the read was a GRO merge.
    pub(super) gro_size: Option<u16>,
}

/// Parses the control messages the kernel wrote for `hdr`.
#[allow(clippy::unnecessary_cast)] // `msg_controllen` is `size_t` on glibc, `socklen_t` on musl
pub(super) fn parse_cmsgs(hdr: &libc::msghdr) -> RxCmsg {
    let mut out = RxCmsg::default();
    if hdr.msg_control.is_null() || (hdr.msg_controllen as usize) < size_of::<libc::cmsghdr>() {
        return out;
    }
    // SAFETY: `hdr` describes a control buffer we own (pointer + the length the kernel
    // wrote back, never more than what we supplied); the CMSG_* macros walk it within
    // `msg_controllen`, returning null at the end. Data reads are unaligned-safe and only
    // happen when `cmsg_len` covers them.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            let level = (*c).cmsg_level;
            let ty = (*c).cmsg_type;
            let data_len = ((*c).cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize);
            let data = libc::CMSG_DATA(c);
            match (level, ty) {
                (libc::IPPROTO_IP, libc::IP_TOS) if data_len >= 1 => out.tos = Some(*data),
                (libc::IPPROTO_IPV6, libc::IPV6_TCLASS) if data_len >= 4 => {
                    out.tos = Some(ptr::read_unaligned(data.cast::<i32>()) as u8)
                }
                (libc::SOL_UDP, UDP_GRO) if data_len >= 4 => {
                    let v = ptr::read_unaligned(data.cast::<i32>());
                    out.gro_size = u16::try_from(v).ok().filter(|&s| s > 0);
                }
                (libc::SOL_UDP, UDP_GRO) if data_len >= 2 => {
                    let v = ptr::read_unaligned(data.cast::<u16>());
                    out.gro_size = Some(v).filter(|&s| s > 0);
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    out
}

/// `sendmmsg(fd, hdrs, len, MSG_DONTWAIT)`: number of messages sent.
pub(super) fn sendmmsg(fd: BorrowedFd<'_>, hdrs: &mut [libc::mmsghdr]) -> io::Result<usize> {
    let n = hdrs.len().min(libc::c_uint::MAX as usize) as libc::c_uint;
    // SAFETY: `hdrs` is a valid mutable slice of `n` headers whose name/iov/control pointers
    // the caller filled to point at live buffers that outlive this call; the kernel writes
    // only `msg_len` fields.
    let rc = unsafe { libc::sendmmsg(fd.as_raw_fd(), hdrs.as_mut_ptr(), n, libc::MSG_DONTWAIT) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

/// `recvmmsg(fd, hdrs, len, MSG_DONTWAIT, NULL)`: number of messages received.
pub(super) fn recvmmsg(fd: BorrowedFd<'_>, hdrs: &mut [libc::mmsghdr]) -> io::Result<usize> {
    let n = hdrs.len().min(libc::c_uint::MAX as usize) as libc::c_uint;
    // SAFETY: `hdrs` is a valid mutable slice of `n` headers whose name/iov/control pointers
    // point at live, writable buffers of the stated lengths, owned by the caller for the call.
    let rc = unsafe {
        libc::recvmmsg(
            fd.as_raw_fd(),
            hdrs.as_mut_ptr(),
            n,
            libc::MSG_DONTWAIT,
            ptr::null_mut(),
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

/// `ppoll(fds, timeout)`: `None` waits forever. `EINTR` counts as "nothing ready".
pub(super) fn ppoll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> io::Result<usize> {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is a valid mutable slice of pollfd; `ts_ptr` is null or points to a live
    // timespec on the stack; a null signal mask leaves the mask unchanged.
    let rc = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            ts_ptr,
            ptr::null(),
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(rc as usize)
}
