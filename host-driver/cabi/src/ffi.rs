//! The rules every exported function follows at the C boundary: no panic unwinds into C
//! (each body runs under [`catch_unwind`]), and failures follow the C library's
//! convention: a pointer-returning function returns NULL and sets `errno`; an
//! int-returning one returns either the errno value (libibverbs: [`ret_errno`]) or -1
//! (librdmacm, POSIX: [`ret_minus_one`]), and sets `errno` too.

use std::ffi::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// An errno value.
pub type Errno = c_int;

/// Sets the calling thread's `errno`.
pub fn set_errno(e: Errno) {
    // SAFETY: `__errno_location` returns the calling thread's errno slot, valid for the
    // thread's lifetime.
    unsafe { *libc::__errno_location() = e };
}

/// The calling thread's `errno` after a failed libc call (EIO when there is none).
pub fn last_errno() -> Errno {
    std::io::Error::last_os_error()
        .raw_os_error()
        .filter(|&e| e != 0)
        .unwrap_or(libc::EIO)
}

/// Runs `f`, turning a panic into `on_panic` (with `errno` = EIO).
pub fn guard<R>(on_panic: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => {
            set_errno(libc::EIO);
            on_panic
        }
    }
}

/// A pointer-returning function: NULL and `errno` on failure.
pub fn ret_ptr<T>(f: impl FnOnce() -> Result<*mut T, Errno>) -> *mut T {
    guard(std::ptr::null_mut(), || match f() {
        Ok(p) => p,
        Err(e) => {
            set_errno(e);
            std::ptr::null_mut()
        }
    })
}

/// An int-returning function in the ibverbs style: 0, or the errno value (also stored in
/// `errno`).
pub fn ret_errno(f: impl FnOnce() -> Result<(), Errno>) -> c_int {
    guard(libc::EIO, || match f() {
        Ok(()) => 0,
        Err(e) => {
            set_errno(e);
            e
        }
    })
}

/// An int-returning function in the POSIX style: 0, or -1 with `errno` set.
pub fn ret_minus_one(f: impl FnOnce() -> Result<(), Errno>) -> c_int {
    guard(-1, || match f() {
        Ok(()) => 0,
        Err(e) => {
            set_errno(e);
            -1
        }
    })
}

/// Turns a NULL pointer into `EINVAL`, anything else into a shared reference.
///
/// # Safety
/// A non-NULL `p` must point to a valid, initialised `T` that is not written for `'a`.
pub unsafe fn arg<'a, T>(p: *const T) -> Result<&'a T, Errno> {
    // SAFETY: forwarded to the caller.
    unsafe { p.as_ref() }.ok_or(libc::EINVAL)
}

/// Turns a NULL pointer into `EINVAL`, anything else into an exclusive reference.
///
/// # Safety
/// A non-NULL `p` must point to memory valid for writes of a `T` (and reads, once
/// initialised), not otherwise accessed for `'a`.
pub unsafe fn out<'a, T>(p: *mut T) -> Result<&'a mut T, Errno> {
    // SAFETY: forwarded to the caller.
    unsafe { p.as_mut() }.ok_or(libc::EINVAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errno() -> Option<Errno> {
        std::io::Error::last_os_error().raw_os_error()
    }

    #[test]
    fn panics_become_errors() {
        assert_eq!(ret_errno(|| panic!("boom")), libc::EIO);
        assert_eq!(ret_minus_one(|| panic!("boom")), -1);
        let p: *mut u8 = ret_ptr(|| panic!("boom"));
        assert!(p.is_null());
        assert_eq!(errno(), Some(libc::EIO));
    }

    #[test]
    fn errors_set_errno_in_both_conventions() {
        assert_eq!(ret_errno(|| Err(libc::EOPNOTSUPP)), libc::EOPNOTSUPP);
        assert_eq!(errno(), Some(libc::EOPNOTSUPP));
        assert_eq!(ret_minus_one(|| Err(libc::EINVAL)), -1);
        assert_eq!(errno(), Some(libc::EINVAL));
        let p: *mut u8 = ret_ptr(|| Err(libc::ENOMEM));
        assert!(p.is_null());
        assert_eq!(errno(), Some(libc::ENOMEM));
        assert_eq!(ret_errno(|| Ok(())), 0);
        assert_eq!(ret_minus_one(|| Ok(())), 0);
    }
}
