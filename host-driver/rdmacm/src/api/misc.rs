//! Devices, options, ports, event names, ECE, and the multicast functions (which need
//! UD QPs and fail with `EOPNOTSUPP`).

use std::ffi::{c_char, c_int, c_void};

use metaroce_cabi::ffi::{guard, out, ret_minus_one, ret_ptr};

use super::cm::with_id;
use super::id_arg;
use crate::abi::{
    RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, RDMA_OPTION_ID_AFONLY, RDMA_OPTION_ID_REUSEADDR,
    RDMA_OPTION_ID_TOS, event, ibv_context, ibv_ece, rdma_cm_id,
};
use crate::{addr, device};

/// `rdma_event_str`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_event_str(ev: c_int) -> *const c_char {
    let s: &'static [u8] = match ev {
        event::ADDR_RESOLVED => b"RDMA_CM_EVENT_ADDR_RESOLVED\0",
        event::ADDR_ERROR => b"RDMA_CM_EVENT_ADDR_ERROR\0",
        event::ROUTE_RESOLVED => b"RDMA_CM_EVENT_ROUTE_RESOLVED\0",
        event::ROUTE_ERROR => b"RDMA_CM_EVENT_ROUTE_ERROR\0",
        event::CONNECT_REQUEST => b"RDMA_CM_EVENT_CONNECT_REQUEST\0",
        event::CONNECT_RESPONSE => b"RDMA_CM_EVENT_CONNECT_RESPONSE\0",
        event::CONNECT_ERROR => b"RDMA_CM_EVENT_CONNECT_ERROR\0",
        event::UNREACHABLE => b"RDMA_CM_EVENT_UNREACHABLE\0",
        event::REJECTED => b"RDMA_CM_EVENT_REJECTED\0",
        event::ESTABLISHED => b"RDMA_CM_EVENT_ESTABLISHED\0",
        event::DISCONNECTED => b"RDMA_CM_EVENT_DISCONNECTED\0",
        event::DEVICE_REMOVAL => b"RDMA_CM_EVENT_DEVICE_REMOVAL\0",
        event::MULTICAST_JOIN => b"RDMA_CM_EVENT_MULTICAST_JOIN\0",
        event::MULTICAST_ERROR => b"RDMA_CM_EVENT_MULTICAST_ERROR\0",
        event::ADDR_CHANGE => b"RDMA_CM_EVENT_ADDR_CHANGE\0",
        event::TIMEWAIT_EXIT => b"RDMA_CM_EVENT_TIMEWAIT_EXIT\0",
        _ => b"UNKNOWN EVENT\0",
    };
    s.as_ptr().cast()
}

/// `rdma_get_src_port` (network order; 0 for a bad id).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_get_src_port(id: *mut rdma_cm_id) -> u16 {
    with_id(id, 0, |c| addr::port_of(&c.route.addr.src))
}

/// `rdma_get_dst_port` (network order; 0 for a bad id).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_get_dst_port(id: *mut rdma_cm_id) -> u16 {
    with_id(id, 0, |c| addr::port_of(&c.route.addr.dst))
}

/// `rdma_get_devices`: a NULL-terminated array of every device's context (opened by this
/// library, shared with its ids); free it with `rdma_free_devices`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_get_devices(num: *mut c_int) -> *mut *mut ibv_context {
    ret_ptr(|| {
        let devs = device::all();
        // SAFETY: zeroed storage for the pointers and the terminating NULL; checked.
        let list = unsafe { libc::calloc(devs.len() + 1, size_of::<*mut ibv_context>()) }
            .cast::<*mut ibv_context>();
        if list.is_null() {
            return Err(libc::ENOMEM);
        }
        for (i, d) in devs.iter().enumerate() {
            // SAFETY: `list` holds `devs.len() + 1` slots.
            unsafe { *list.add(i) = d.ctx };
        }
        // SAFETY: a non-NULL `num` points to the caller's int.
        if let Some(n) = unsafe { num.as_mut() } {
            *n = c_int::try_from(devs.len()).unwrap_or(c_int::MAX);
        }
        Ok(list)
    })
}

/// `rdma_free_devices` (the contexts stay open, as in rdma-core).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_free_devices(list: *mut *mut ibv_context) {
    // SAFETY: `list` came from `rdma_get_devices` (calloc) or is NULL.
    guard((), || unsafe { libc::free(list.cast()) })
}

/// `rdma_set_option`: `RDMA_OPTION_ID` TOS (the QPs' traffic class), REUSEADDR (ports
/// are always reusable), AFONLY (IPv6 listeners only take IPv6), ACK_TIMEOUT (the QPs'
/// local ACK timeout). IB path options: `EOPNOTSUPP`; anything else: `ENOSYS`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_set_option(
    id: *mut rdma_cm_id,
    level: c_int,
    name: c_int,
    val: *mut c_void,
    len: usize,
) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        if val.is_null() {
            return Err(libc::EINVAL);
        }
        let byte = || {
            // SAFETY: `val` is non-NULL and holds at least one byte (checked length).
            (len >= 1)
                .then(|| unsafe { *val.cast::<u8>() })
                .ok_or(libc::EINVAL)
        };
        let int = || {
            // SAFETY: `val` is non-NULL and holds an int (checked length).
            (len >= size_of::<c_int>())
                .then(|| unsafe { val.cast::<c_int>().read_unaligned() })
                .ok_or(libc::EINVAL)
        };
        if level != RDMA_OPTION_ID {
            return Err(libc::EOPNOTSUPP);
        }
        let mut st = id.st();
        match name {
            RDMA_OPTION_ID_TOS => st.tos = byte()?,
            RDMA_OPTION_ID_REUSEADDR => {
                int()?;
            }
            RDMA_OPTION_ID_AFONLY => st.afonly = Some(int()? != 0),
            RDMA_OPTION_ID_ACK_TIMEOUT => st.ack_timeout = Some(byte()?.min(31)),
            _ => return Err(libc::ENOSYS),
        }
        Ok(())
    })
}

/// `rdma_set_local_ece`: kept and sent in the REQ/REP.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_set_local_ece(id: *mut rdma_cm_id, ece: *mut ibv_ece) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: a non-NULL `ece` points to the caller's ECE.
        let e = unsafe { out(ece) }?;
        if !id.qp().is_null() || e.vendor_id == 0 || e.comp_mask != 0 {
            return Err(libc::EINVAL);
        }
        id.st().local_ece = (e.vendor_id, e.options);
        Ok(())
    })
}

/// `rdma_get_remote_ece`: what the peer's REQ/REP said.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_get_remote_ece(id: *mut rdma_cm_id, ece: *mut ibv_ece) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: a non-NULL `ece` points to the caller's ECE.
        let e = unsafe { out(ece) }?;
        if !id.qp().is_null() {
            return Err(libc::EINVAL);
        }
        let (vendor_id, options) = id.st().remote_ece;
        *e = ibv_ece {
            vendor_id,
            options,
            comp_mask: 0,
        };
        Ok(())
    })
}

/// `rdma_join_multicast`: needs UD QPs (`EOPNOTSUPP`).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_join_multicast(
    id: *mut rdma_cm_id,
    _addr: *mut libc::sockaddr,
    _context: *mut c_void,
) -> c_int {
    ret_minus_one(|| id_arg(id).and(Err(libc::EOPNOTSUPP)))
}

/// `rdma_join_multicast_ex`: needs UD QPs (`EOPNOTSUPP`).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_join_multicast_ex(
    id: *mut rdma_cm_id,
    _attr: *mut c_void,
    _context: *mut c_void,
) -> c_int {
    ret_minus_one(|| id_arg(id).and(Err(libc::EOPNOTSUPP)))
}

/// `rdma_leave_multicast`: nothing was joined (`EOPNOTSUPP`).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_leave_multicast(id: *mut rdma_cm_id, _addr: *mut libc::sockaddr) -> c_int {
    ret_minus_one(|| id_arg(id).and(Err(libc::EOPNOTSUPP)))
}
