//! rsockets (sockets over RDMA) are not provided: `rsocket` fails with `EOPNOTSUPP`, so
//! no rsocket descriptor ever exists, and every call on one fails with `EBADF` as
//! librdmacm's do for a descriptor that is not an rsocket. `rpoll` and `rselect` serve
//! ordinary descriptors as rdma-core's do (programs such as rping and ucmatose poll
//! their channels with `rpoll`).

use std::ffi::{c_int, c_void};

use metaroce_cabi::ffi::{guard, set_errno};

/// `rsocket`: not provided.
#[unsafe(no_mangle)]
pub extern "C" fn rsocket(_domain: c_int, _kind: c_int, _protocol: c_int) -> c_int {
    set_errno(libc::EOPNOTSUPP);
    -1
}

/// Defines functions on rsocket descriptors: none exists, so each fails with `EBADF`.
macro_rules! no_such_rsocket {
    ($($name:ident($($arg:ident: $t:ty),*) -> $r:ty;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: no rsocket exists (`EBADF`).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(_socket: c_int, $($arg: $t),*) -> $r {
            let _ = ($($arg,)*);
            set_errno(libc::EBADF);
            (-1i64) as $r
        }
    )*};
}

no_such_rsocket! {
    rbind(addr: *const libc::sockaddr, len: libc::socklen_t) -> c_int;
    rlisten(backlog: c_int) -> c_int;
    raccept(addr: *mut libc::sockaddr, len: *mut libc::socklen_t) -> c_int;
    rconnect(addr: *const libc::sockaddr, len: libc::socklen_t) -> c_int;
    rshutdown(how: c_int) -> c_int;
    rclose() -> c_int;
    rrecv(buf: *mut c_void, len: usize, flags: c_int) -> isize;
    rrecvfrom(buf: *mut c_void, len: usize, flags: c_int, src: *mut libc::sockaddr, slen: *mut libc::socklen_t) -> isize;
    rrecvmsg(msg: *mut libc::msghdr, flags: c_int) -> isize;
    rsend(buf: *const c_void, len: usize, flags: c_int) -> isize;
    rsendto(buf: *const c_void, len: usize, flags: c_int, dst: *const libc::sockaddr, dlen: libc::socklen_t) -> isize;
    rsendmsg(msg: *const libc::msghdr, flags: c_int) -> isize;
    rread(buf: *mut c_void, count: usize) -> isize;
    rreadv(iov: *const libc::iovec, n: c_int) -> isize;
    rwrite(buf: *const c_void, count: usize) -> isize;
    rwritev(iov: *const libc::iovec, n: c_int) -> isize;
    rgetpeername(addr: *mut libc::sockaddr, len: *mut libc::socklen_t) -> c_int;
    rgetsockname(addr: *mut libc::sockaddr, len: *mut libc::socklen_t) -> c_int;
    rsetsockopt(level: c_int, name: c_int, val: *const c_void, len: libc::socklen_t) -> c_int;
    rgetsockopt(level: c_int, name: c_int, val: *mut c_void, len: *mut libc::socklen_t) -> c_int;
    rfcntl(cmd: c_int, arg: usize) -> c_int;
    riomap(buf: *mut c_void, len: usize, prot: c_int, flags: c_int, offset: libc::off_t) -> libc::off_t;
    riounmap(buf: *mut c_void, len: usize) -> c_int;
    riowrite(buf: *const c_void, count: usize, offset: libc::off_t, flags: c_int) -> usize;
}

/// `rpoll`: `poll` (every descriptor is an ordinary one).
#[unsafe(no_mangle)]
pub extern "C" fn rpoll(fds: *mut libc::pollfd, nfds: libc::nfds_t, timeout: c_int) -> c_int {
    // SAFETY: forwards the caller's arguments to poll(2) unchanged.
    guard(-1, || unsafe { libc::poll(fds, nfds, timeout) })
}

/// `rselect`: `select` (every descriptor is an ordinary one).
#[unsafe(no_mangle)]
pub extern "C" fn rselect(
    nfds: c_int,
    readfds: *mut libc::fd_set,
    writefds: *mut libc::fd_set,
    exceptfds: *mut libc::fd_set,
    timeout: *mut libc::timeval,
) -> c_int {
    // SAFETY: forwards the caller's arguments to select(2) unchanged.
    guard(-1, || unsafe {
        libc::select(nfds, readfds, writefds, exceptfds, timeout)
    })
}
