//! The libibverbs functions this library calls, and safe wrappers for them.
//!
//! librdmacm uses libibverbs only through its exported functions (whatever
//! `libibverbs.so.1` the loader found: MetaRoCE's, with whatever backend it picked), and
//! through the two inline dispatchers of `verbs.h` (`ibv_create_qp_ex`,
//! `ibv_create_srq_ex`), which are reproduced here as the header writes them.

use std::ffi::{CStr, c_char, c_int, c_void};

use metaroce_cabi::ffi::{Errno, last_errno};

use crate::abi::{
    IBV_QP_INIT_ATTR_PD, IBV_SRQ_INIT_ATTR_PD, IBV_SRQ_INIT_ATTR_TYPE, IBV_SRQT_BASIC,
    ibv_comp_channel, ibv_context, ibv_cq, ibv_device, ibv_gid, ibv_pd, ibv_port_attr, ibv_qp,
    ibv_qp_attr, ibv_qp_init_attr, ibv_qp_init_attr_ex, ibv_srq, ibv_srq_init_attr,
    ibv_srq_init_attr_ex, vctx,
};

#[link(name = "ibverbs")]
unsafe extern "C" {
    fn ibv_get_device_list(num: *mut c_int) -> *mut *mut ibv_device;
    fn ibv_free_device_list(list: *mut *mut ibv_device);
    fn ibv_get_device_name(dev: *mut ibv_device) -> *const c_char;
    fn ibv_open_device(dev: *mut ibv_device) -> *mut ibv_context;
    fn ibv_close_device(ctx: *mut ibv_context) -> c_int;
    fn ibv_query_port(ctx: *mut ibv_context, port: u8, attr: *mut ibv_port_attr) -> c_int;
    fn ibv_query_gid(ctx: *mut ibv_context, port: u8, index: c_int, gid: *mut ibv_gid) -> c_int;
    fn ibv_alloc_pd(ctx: *mut ibv_context) -> *mut ibv_pd;
    fn ibv_dealloc_pd(pd: *mut ibv_pd) -> c_int;
    fn ibv_create_comp_channel(ctx: *mut ibv_context) -> *mut ibv_comp_channel;
    fn ibv_destroy_comp_channel(ch: *mut ibv_comp_channel) -> c_int;
    fn ibv_create_cq(
        ctx: *mut ibv_context,
        cqe: c_int,
        cq_context: *mut c_void,
        channel: *mut ibv_comp_channel,
        comp_vector: c_int,
    ) -> *mut ibv_cq;
    fn ibv_destroy_cq(cq: *mut ibv_cq) -> c_int;
    fn ibv_create_qp(pd: *mut ibv_pd, attr: *mut ibv_qp_init_attr) -> *mut ibv_qp;
    fn ibv_destroy_qp(qp: *mut ibv_qp) -> c_int;
    fn ibv_modify_qp(qp: *mut ibv_qp, attr: *mut ibv_qp_attr, mask: c_int) -> c_int;
    fn ibv_create_srq(pd: *mut ibv_pd, attr: *mut ibv_srq_init_attr) -> *mut ibv_srq;
    fn ibv_destroy_srq(srq: *mut ibv_srq) -> c_int;
}

/// NULL becomes the errno libibverbs set.
fn nonnull<T>(p: *mut T) -> Result<*mut T, Errno> {
    if p.is_null() {
        Err(last_errno())
    } else {
        Ok(p)
    }
}

/// A non-zero errno value returned by libibverbs becomes an error.
fn check(rc: c_int) -> Result<(), Errno> {
    match rc {
        0 => Ok(()),
        e if e > 0 => Err(e),
        _ => Err(last_errno()),
    }
}

/// Opens the device named `name` (`metaroceN`).
pub fn open_device(name: &str) -> Result<*mut ibv_context, Errno> {
    let mut n: c_int = 0;
    // SAFETY: plain libibverbs call; the list is freed below.
    let list = nonnull(unsafe { ibv_get_device_list(&mut n) })?;
    let mut found = Err(libc::ENODEV);
    for i in 0..usize::try_from(n).unwrap_or(0) {
        // SAFETY: `list` holds `n` device pointers.
        let dev = unsafe { *list.add(i) };
        // SAFETY: `dev` is a device of the list; the name is a NUL-terminated string.
        let dev_name = unsafe { ibv_get_device_name(dev) };
        // SAFETY: checked non-NULL; libibverbs keeps the name as long as the device.
        if !dev_name.is_null() && unsafe { CStr::from_ptr(dev_name) }.to_bytes() == name.as_bytes()
        {
            // SAFETY: `dev` is a live device of the list.
            found = nonnull(unsafe { ibv_open_device(dev) });
            break;
        }
    }
    // SAFETY: `list` came from ibv_get_device_list; the opened context does not need it.
    unsafe { ibv_free_device_list(list) };
    found
}

/// Closes a context this library opened.
pub fn close_device(ctx: *mut ibv_context) {
    // SAFETY: `ctx` was opened by `open_device` and is closed once.
    let _ = unsafe { ibv_close_device(ctx) };
}

/// Port attributes (the header's inline `ibv_query_port` over the exported one).
pub fn query_port(ctx: *mut ibv_context, port: u8) -> Result<ibv_port_attr, Errno> {
    let mut attr = ibv_port_attr::default();
    // SAFETY: `attr` is a zeroed, writable `ibv_port_attr`, at least as large as the
    // compat structure the exported function fills.
    check(unsafe { ibv_query_port(ctx, port, &mut attr) })?;
    Ok(attr)
}

/// A GID of a port.
pub fn query_gid(ctx: *mut ibv_context, port: u8, index: c_int) -> Result<ibv_gid, Errno> {
    let mut gid = ibv_gid::default();
    // SAFETY: `gid` is writable.
    check(unsafe { ibv_query_gid(ctx, port, index, &mut gid) })?;
    Ok(gid)
}

/// Allocates a protection domain.
pub fn alloc_pd(ctx: *mut ibv_context) -> Result<*mut ibv_pd, Errno> {
    // SAFETY: plain libibverbs call on a context handle (validated by libibverbs).
    nonnull(unsafe { ibv_alloc_pd(ctx) })
}

/// Frees a protection domain.
pub fn dealloc_pd(pd: *mut ibv_pd) -> Result<(), Errno> {
    // SAFETY: plain libibverbs call (handles are validated by libibverbs).
    check(unsafe { ibv_dealloc_pd(pd) })
}

/// A completion channel and a CQ on it, with `cq_context` as the CQ's context.
pub fn create_cq_with_channel(
    ctx: *mut ibv_context,
    cqe: u32,
    cq_context: *mut c_void,
) -> Result<(*mut ibv_comp_channel, *mut ibv_cq), Errno> {
    // SAFETY: plain libibverbs call.
    let ch = nonnull(unsafe { ibv_create_comp_channel(ctx) })?;
    let cqe = c_int::try_from(cqe).unwrap_or(c_int::MAX);
    // SAFETY: plain libibverbs call with a channel of the same context.
    match nonnull(unsafe { ibv_create_cq(ctx, cqe, cq_context, ch, 0) }) {
        Ok(cq) => Ok((ch, cq)),
        Err(e) => {
            destroy_comp_channel(ch);
            Err(e)
        }
    }
}

/// Destroys a CQ (errors ignored: the program may already have destroyed it).
pub fn destroy_cq(cq: *mut ibv_cq) {
    // SAFETY: plain libibverbs call (handles are validated by libibverbs).
    let _ = unsafe { ibv_destroy_cq(cq) };
}

/// Destroys a completion channel (errors ignored, as for [`destroy_cq`]).
pub fn destroy_comp_channel(ch: *mut ibv_comp_channel) {
    // SAFETY: plain libibverbs call (handles are validated by libibverbs).
    let _ = unsafe { ibv_destroy_comp_channel(ch) };
}

/// Reads `verbs_context` operation `before` bytes before `ctx`, as `verbs.h`'s
/// `verbs_get_ctx_op` does: only for an extended context whose size covers it.
fn ctx_op(ctx: *mut ibv_context, before: usize) -> Option<*const c_void> {
    let base = ctx.cast::<u8>();
    // SAFETY: `ctx` is a live context of libibverbs (ABI: `struct ibv_context`, so
    // `abi_compat` is at its fixed offset).
    let compat = unsafe { base.add(vctx::ABI_COMPAT).cast::<usize>().read_unaligned() };
    if compat != usize::MAX {
        return None;
    }
    // SAFETY: `abi_compat == UINTPTR_MAX` marks a context inside a `verbs_context`, whose
    // `sz` and operations precede it at the header's fixed distances.
    let sz = unsafe { base.sub(vctx::SZ_BEFORE).cast::<usize>().read_unaligned() };
    // `sz < sizeof(struct verbs_context) - offsetof(struct verbs_context, op)`: too old.
    if sz < vctx::SIZE - (vctx::CONTEXT - before) {
        return None;
    }
    // SAFETY: as above; the slot is within the `sz` bytes the library declares.
    let op = unsafe { base.sub(before).cast::<*const c_void>().read_unaligned() };
    (!op.is_null()).then_some(op)
}

/// Calls the context's extended operation `before` bytes before it (`EOPNOTSUPP` when
/// the context has none), as `verbs.h`'s inline functions do.
fn call_ext<A, R>(ctx: *mut ibv_context, before: usize, attr: &mut A) -> Result<*mut R, Errno> {
    let op = ctx_op(ctx, before).ok_or(libc::EOPNOTSUPP)?;
    // SAFETY: the slot holds the operation `before` names (`create_qp_ex` or
    // `create_srq_ex` of `struct verbs_context`), non-NULL, which takes the context and
    // the matching attribute structure.
    let f = unsafe {
        std::mem::transmute::<*const c_void, unsafe extern "C" fn(*mut ibv_context, *mut A) -> *mut R>(
            op,
        )
    };
    // SAFETY: calling the library's own operation with its declared arguments.
    nonnull(unsafe { f(ctx, attr) })
}

/// `ibv_create_qp_ex` as `verbs.h` writes it: `ibv_create_qp` when only the PD is given,
/// otherwise the context's extended operation, or `EOPNOTSUPP`.
pub fn create_qp_ex(
    ctx: *mut ibv_context,
    attr: &mut ibv_qp_init_attr_ex,
) -> Result<*mut ibv_qp, Errno> {
    if attr.comp_mask == IBV_QP_INIT_ATTR_PD {
        // SAFETY: `attr` starts with the fields of an `ibv_qp_init_attr` (checked layout).
        return nonnull(unsafe {
            ibv_create_qp(attr.pd, (attr as *mut ibv_qp_init_attr_ex).cast())
        });
    }
    call_ext(ctx, vctx::CREATE_QP_EX_BEFORE, attr)
}

/// `ibv_create_srq_ex` as `verbs.h` writes it: `ibv_create_srq` for a basic SRQ on a
/// PD, otherwise the context's extended operation, or `EOPNOTSUPP`.
pub fn create_srq_ex(
    ctx: *mut ibv_context,
    attr: &mut ibv_srq_init_attr_ex,
) -> Result<*mut ibv_srq, Errno> {
    let mask = attr.comp_mask;
    if mask & !(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE) == 0
        && mask & IBV_SRQ_INIT_ATTR_PD != 0
        && (mask & IBV_SRQ_INIT_ATTR_TYPE == 0 || attr.srq_type == IBV_SRQT_BASIC)
    {
        // SAFETY: `attr` starts with the fields of an `ibv_srq_init_attr` (checked layout).
        return nonnull(unsafe {
            ibv_create_srq(attr.pd, (attr as *mut ibv_srq_init_attr_ex).cast())
        });
    }
    call_ext(ctx, vctx::CREATE_SRQ_EX_BEFORE, attr)
}

/// Destroys a QP (errors ignored: the program may have destroyed it itself).
pub fn destroy_qp(qp: *mut ibv_qp) {
    // SAFETY: plain libibverbs call (handles are validated by libibverbs).
    let _ = unsafe { ibv_destroy_qp(qp) };
}

/// Destroys an SRQ (errors ignored, as for [`destroy_qp`]).
pub fn destroy_srq(srq: *mut ibv_srq) {
    // SAFETY: plain libibverbs call (handles are validated by libibverbs).
    let _ = unsafe { ibv_destroy_srq(srq) };
}

/// Modifies a QP.
pub fn modify_qp(qp: *mut ibv_qp, attr: &mut ibv_qp_attr, mask: c_int) -> Result<(), Errno> {
    // SAFETY: plain libibverbs call (handles are validated by libibverbs).
    check(unsafe { ibv_modify_qp(qp, attr, mask) })
}
