//! The exported functions of `librdmacm.so.1`.
//!
//! Every function runs under `catch_unwind` and fails the librdmacm way: -1 (or NULL)
//! with `errno` set. Handles are looked up in the registries before use, so NULL, stale
//! and foreign pointers get `EINVAL`.

mod addrinfo;
mod cm;
mod misc;
mod qp;
mod rsocket;

use std::ffi::c_void;
use std::sync::Arc;

use metaroce_cabi::ffi::Errno;

use crate::abi::rdma_cm_id;
use crate::id::{Id, reg};

/// The id behind a handle.
fn id_arg(p: *mut rdma_cm_id) -> Result<Arc<Id>, Errno> {
    reg().ids.get(p)
}

/// Private data the program passes (`NULL`/0: none).
///
/// # Safety
/// A non-NULL `p` must point to `len` readable bytes.
unsafe fn bytes<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: forwarded to the caller.
        unsafe { std::slice::from_raw_parts(p.cast(), len) }
    }
}
