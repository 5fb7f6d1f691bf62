//! The rules every exported function follows at the C boundary (shared with librdmacm in
//! [`metaroce_cabi::ffi`]): no panic unwinds into C (each body runs under
//! `catch_unwind`); failures follow the ibverbs conventions (a pointer-returning verb
//! returns NULL and sets `errno`; an int-returning verb returns the errno value, and
//! sets `errno` too).

pub use metaroce_cabi::ffi::{Errno, arg, guard, out, ret_ptr, set_errno};

/// An int-returning verb: 0, or the errno value (also stored in `errno`).
pub use metaroce_cabi::ffi::ret_errno as ret_int;

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
    fn cstr_truncates_and_terminates() {
        let mut buf = [1 as std::ffi::c_char; 4];
        copy_cstr(&mut buf, "metaroce0");
        assert_eq!(buf, [b'm' as _, b'e' as _, b't' as _, 0]);
        copy_cstr(&mut buf, "a");
        assert_eq!(&buf[..2], &[b'a' as _, 0]);
    }
}
