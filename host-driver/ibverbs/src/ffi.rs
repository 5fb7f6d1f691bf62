//! The rules every exported function follows at the C boundary: no panic unwinds into C
//! (each body runs under [`catch_unwind`]); failures follow the ibverbs conventions
//! (a pointer-returning verb returns NULL and sets `errno`; an int-returning verb returns
//! the errno value, and sets `errno` too).

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

/// A pointer-returning verb: NULL and `errno` on failure.
pub fn ret_ptr<T>(f: impl FnOnce() -> Result<*mut T, Errno>) -> *mut T {
    guard(std::ptr::null_mut(), || match f() {
        Ok(p) => p,
        Err(e) => {
            set_errno(e);
            std::ptr::null_mut()
        }
    })
}

/// An int-returning verb: 0, or the errno value (also stored in `errno`).
pub fn ret_int(f: impl FnOnce() -> Result<(), Errno>) -> c_int {
    guard(libc::EIO, || match f() {
        Ok(()) => 0,
        Err(e) => {
            set_errno(e);
            e
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

/// Copies `s` into a fixed C string buffer, NUL-terminated and truncated to fit.
pub fn copy_cstr(dst: &mut [std::ffi::c_char], s: &str) {
    let n = s.len().min(dst.len().saturating_sub(1));
    for (d, b) in dst.iter_mut().zip(&s.as_bytes()[..n]) {
        *d = *b as std::ffi::c_char;
    }
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors() {
        let r = ret_int(|| panic!("boom"));
        assert_eq!(r, libc::EIO);
        let p: *mut u8 = ret_ptr(|| panic!("boom"));
        assert!(p.is_null());
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EIO)
        );
    }

    #[test]
    fn errors_set_errno() {
        assert_eq!(ret_int(|| Err(libc::EOPNOTSUPP)), libc::EOPNOTSUPP);
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EOPNOTSUPP)
        );
        let p: *mut u8 = ret_ptr(|| Err(libc::ENOMEM));
        assert!(p.is_null());
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOMEM)
        );
        assert_eq!(ret_int(|| Ok(())), 0);
    }

    #[test]
    fn cstr_truncates_and_terminates() {
        let mut buf = [1 as std::ffi::c_char; 4];
        copy_cstr(&mut buf, "metaroce0");
        assert_eq!(buf, [b'm' as _, b'e' as _, b't' as _, 0]);
        copy_cstr(&mut buf, "a");
        assert_eq!(&buf[..2], &[b'a' as _, 0]);
    }
}
