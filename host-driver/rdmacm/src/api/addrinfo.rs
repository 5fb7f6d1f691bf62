//! `rdma_getaddrinfo` (over the C library's `getaddrinfo`) and the endpoint helpers
//! `rdma_create_ep` / `rdma_destroy_ep` built on it.

use std::ffi::{c_char, c_int, c_void};

use metaroce_cabi::ffi::{Errno, guard, out, ret_minus_one, set_errno};

use super::id_arg;
use super::qp::{create_qp, destroy_qp, destroy_srq};
use crate::abi::{
    AF_IB, IBV_QPT_RC, IBV_QPT_UD, RAI_NUMERICHOST, RAI_PASSIVE, RDMA_PS_IB, RDMA_PS_TCP,
    RDMA_PS_UDP, ibv_pd, ibv_qp_init_attr, rdma_addrinfo, rdma_cm_id,
};
use crate::addr;
use crate::id::{Id, reg};

/// A malloc'd copy of `len` bytes (freed by `rdma_freeaddrinfo`).
fn copy_bytes<T>(src: *const T, len: usize) -> Result<*mut T, Errno> {
    // SAFETY: plain allocation; checked below.
    let p = unsafe { libc::malloc(len.max(1)) }.cast::<T>();
    if p.is_null() {
        return Err(libc::ENOMEM);
    }
    // SAFETY: `src` holds `len` readable bytes (callers pass an address and its length);
    // `p` holds `len` writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(src.cast::<u8>(), p.cast::<u8>(), len) };
    Ok(p)
}

/// The `getaddrinfo` hints for rdma_cm hints, as rdma-core converts them.
fn ai_hints(h: &rdma_addrinfo) -> libc::addrinfo {
    // SAFETY: all-zero is a valid `addrinfo`.
    let mut ai: libc::addrinfo = unsafe { std::mem::zeroed() };
    if h.ai_flags & RAI_PASSIVE != 0 {
        ai.ai_flags = libc::AI_PASSIVE;
    }
    if h.ai_flags & RAI_NUMERICHOST != 0 {
        ai.ai_flags |= libc::AI_NUMERICHOST;
    }
    if h.ai_family != AF_IB {
        ai.ai_family = h.ai_family;
    }
    ai.ai_socktype = match h.ai_qp_type {
        IBV_QPT_UD => libc::SOCK_DGRAM,
        0 => 0,
        _ => libc::SOCK_STREAM,
    };
    ai.ai_protocol = match h.ai_port_space {
        RDMA_PS_TCP => libc::IPPROTO_TCP,
        RDMA_PS_UDP => libc::IPPROTO_UDP,
        RDMA_PS_IB if ai.ai_socktype == libc::SOCK_STREAM => libc::IPPROTO_TCP,
        RDMA_PS_IB if ai.ai_socktype == libc::SOCK_DGRAM => libc::IPPROTO_UDP,
        _ => 0,
    };
    ai
}

/// Fills `rai` from the first `getaddrinfo` result. Returns 0 or a `getaddrinfo` error.
///
/// # Safety
/// `node` and `service` are NULL or C strings.
unsafe fn resolve(
    node: *const c_char,
    service: *const c_char,
    h: &rdma_addrinfo,
    rai: &mut rdma_addrinfo,
) -> Result<c_int, Errno> {
    if h.ai_family == AF_IB {
        return Ok(libc::EAI_FAMILY);
    }
    let hints = ai_hints(h);
    let mut res: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid hints; `node`/`service` per the caller; `res` is freed below.
    let rc = unsafe { libc::getaddrinfo(node, service, &hints, &mut res) };
    if rc != 0 {
        return Ok(rc);
    }
    // SAFETY: getaddrinfo succeeded: `res` is a non-empty list.
    let ai = unsafe { &*res };
    rai.ai_qp_type = match (h.ai_qp_type, ai.ai_socktype) {
        (0, libc::SOCK_DGRAM) => IBV_QPT_UD,
        (0, _) => IBV_QPT_RC,
        (t, _) => t,
    };
    rai.ai_port_space = match (h.ai_port_space, ai.ai_protocol) {
        (0, libc::IPPROTO_UDP) => RDMA_PS_UDP,
        (0, _) => RDMA_PS_TCP,
        (ps, _) => ps,
    };
    rai.ai_family = ai.ai_family;
    let copied = copy_bytes(ai.ai_addr, ai.ai_addrlen as usize);
    if let Ok(a) = copied {
        if h.ai_flags & RAI_PASSIVE != 0 {
            rai.ai_flags = RAI_PASSIVE;
            (rai.ai_src_addr, rai.ai_src_len) = (a, ai.ai_addrlen);
        } else {
            (rai.ai_dst_addr, rai.ai_dst_len) = (a, ai.ai_addrlen);
        }
    }
    // SAFETY: `res` came from getaddrinfo and is freed once.
    unsafe { libc::freeaddrinfo(res) };
    copied.map(|_| 0)
}

/// `rdma_getaddrinfo`: the first address `getaddrinfo` gives for `node`/`service`, as
/// the source (`RAI_PASSIVE`) or destination. Returns 0, a `getaddrinfo` error code, or
/// -1 with `errno`. `AF_IB` addresses are not supported (`EAI_FAMILY`).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_getaddrinfo(
    node: *const c_char,
    service: *const c_char,
    hints: *const rdma_addrinfo,
    res: *mut *mut rdma_addrinfo,
) -> c_int {
    guard(-1, || {
        if (node.is_null() && service.is_null() && hints.is_null()) || res.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: calloc'd (zeroed) storage for one `rdma_addrinfo`; checked below.
        let rai = unsafe { libc::calloc(1, size_of::<rdma_addrinfo>()) }.cast::<rdma_addrinfo>();
        if rai.is_null() {
            set_errno(libc::ENOMEM);
            return -1;
        }
        // SAFETY: zeroed hints stand in for NULL; otherwise the caller's hints.
        let zero: rdma_addrinfo = unsafe { std::mem::zeroed() };
        // SAFETY: a non-NULL `hints` points to the caller's hints.
        let h = unsafe { hints.as_ref() }.unwrap_or(&zero);
        // SAFETY: `rai` is a fresh, zeroed allocation.
        let r = unsafe { &mut *rai };
        let outcome = if node.is_null() && service.is_null() {
            r.ai_flags = h.ai_flags;
            r.ai_family = h.ai_family;
            r.ai_qp_type = h.ai_qp_type;
            r.ai_port_space = h.ai_port_space;
            if h.ai_dst_len > 0 && !h.ai_dst_addr.is_null() {
                copy_bytes(h.ai_dst_addr, h.ai_dst_len as usize).map(|a| {
                    (r.ai_dst_addr, r.ai_dst_len) = (a, h.ai_dst_len);
                    0
                })
            } else {
                Ok(0)
            }
        } else {
            // SAFETY: the caller passes NULL or C strings.
            unsafe { resolve(node, service, h, r) }
        };
        let outcome = outcome.and_then(|rc| {
            if rc == 0 && r.ai_src_len == 0 && h.ai_src_len > 0 && !h.ai_src_addr.is_null() {
                let a = copy_bytes(h.ai_src_addr, h.ai_src_len as usize)?;
                (r.ai_src_addr, r.ai_src_len) = (a, h.ai_src_len);
            }
            Ok(rc)
        });
        match outcome {
            Ok(0) => {
                // SAFETY: `res` is non-NULL (checked).
                unsafe { *res = rai };
                0
            }
            Ok(rc) => {
                rdma_freeaddrinfo(rai);
                rc
            }
            Err(e) => {
                rdma_freeaddrinfo(rai);
                set_errno(e);
                -1
            }
        }
    })
}

/// `rdma_freeaddrinfo`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_freeaddrinfo(res: *mut rdma_addrinfo) {
    guard((), || {
        let mut cur = res;
        while !cur.is_null() {
            // SAFETY: every node and its members were allocated with malloc/calloc (by
            // this library, or by the program following the same contract).
            unsafe {
                let r = &*cur;
                let next = r.ai_next;
                for p in [
                    r.ai_connect,
                    r.ai_route,
                    r.ai_src_canonname.cast::<c_void>(),
                    r.ai_dst_canonname.cast::<c_void>(),
                    r.ai_src_addr.cast::<c_void>(),
                    r.ai_dst_addr.cast::<c_void>(),
                ] {
                    libc::free(p);
                }
                libc::free(cur.cast());
                cur = next;
            }
        }
    })
}

/// `rdma_create_ep`: a synchronous id, bound (passive) or resolved to its destination
/// with a QP when `qp_init_attr` is given (active).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_create_ep(
    id: *mut *mut rdma_cm_id,
    res: *mut rdma_addrinfo,
    pd: *mut ibv_pd,
    qp_init_attr: *mut ibv_qp_init_attr,
) -> c_int {
    ret_minus_one(|| {
        // SAFETY: non-NULL pointers to the caller's slot and address information.
        let (slot, res) = unsafe { (out(id)?, res.as_ref().ok_or(libc::EINVAL)?) };
        // SAFETY: a non-NULL `qp_init_attr` points to the caller's attributes.
        let attr = unsafe { qp_init_attr.as_mut() };
        let handle = Id::create(None, std::ptr::null_mut(), res.ai_port_space)?;
        let new = id_arg(handle)?;
        match set_up_ep(&new, res, pd, attr) {
            Ok(()) => {
                *slot = handle;
                Ok(())
            }
            Err(e) => {
                rdma_destroy_ep(handle);
                Err(e)
            }
        }
    })
}

fn set_up_ep(
    id: &std::sync::Arc<Id>,
    res: &rdma_addrinfo,
    pd: *mut ibv_pd,
    attr: Option<&mut ibv_qp_init_attr>,
) -> Result<(), Errno> {
    if res.ai_flags & RAI_PASSIVE != 0 {
        // SAFETY: the address information holds socket addresses of their family.
        id.bind(unsafe { addr::from_c(res.ai_src_addr) }?)?;
        if !pd.is_null() {
            // SAFETY: writes a plain field of the live id's C view.
            unsafe { (*id.c()).pd = pd };
        }
        if let Some(a) = attr {
            let mut a = *a;
            a.qp_type = res.ai_qp_type;
            id.st().qp_init = Some(a);
        }
        return Ok(());
    }
    let src = if res.ai_src_addr.is_null() {
        None
    } else {
        // SAFETY: as above.
        Some(unsafe { addr::from_c(res.ai_src_addr) }?)
    };
    // SAFETY: as above.
    let dst = unsafe { addr::from_c(res.ai_dst_addr) }?;
    id.resolve_addr(src, dst)?;
    id.complete()?;
    id.resolve_route(crate::id::DEFAULT_ROUTE_TIMEOUT)?;
    id.complete()?;
    if let Some(a) = attr {
        a.qp_type = res.ai_qp_type;
        create_qp(id, pd, a)?;
    }
    if res.ai_connect_len > 0 && !res.ai_connect.is_null() {
        // SAFETY: `ai_connect` holds `ai_connect_len` bytes.
        let data =
            unsafe { std::slice::from_raw_parts(res.ai_connect.cast::<u8>(), res.ai_connect_len) };
        id.st().connect_data = data.to_vec();
    }
    Ok(())
}

/// `rdma_destroy_ep`: the QP, the SRQ, then the id.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_destroy_ep(id: *mut rdma_cm_id) {
    guard((), || {
        if let Ok(id) = reg().ids.remove_any(id) {
            destroy_qp(&id);
            destroy_srq(&id);
            id.destroy();
        }
    })
}
