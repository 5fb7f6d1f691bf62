//! Helpers with no device behind them (strings, rate conversions, fork support, sysfs)
//! and every exported symbol this library does not implement.
//!
//! Unsupported verbs fail the ibverbs way and never abort: pointer-returning ones return
//! NULL with `errno = EOPNOTSUPP`; int-returning ones return `EOPNOTSUPP` (and set
//! `errno`); destroy calls for objects that cannot exist return `EINVAL`; provider
//! hooks (`verbs_register_driver_34`, `verbs_set_ops`, …) do nothing, so providers
//! linked into a program (libmlx5, libefa) load harmlessly.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::AtomicBool;

use crate::ffi::{guard, set_errno};

fn table(t: &'static [&'static [u8]], i: c_int, unknown: &'static [u8]) -> *const c_char {
    usize::try_from(i)
        .ok()
        .and_then(|i| t.get(i))
        .copied()
        .unwrap_or(unknown)
        .as_ptr()
        .cast()
}

/// `ibv_wc_status_str`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_wc_status_str(status: c_int) -> *const c_char {
    const T: &[&[u8]] = &[
        b"success\0",
        b"local length error\0",
        b"local QP operation error\0",
        b"local EE context operation error\0",
        b"local protection error\0",
        b"Work Request Flushed Error\0",
        b"memory management operation error\0",
        b"bad response error\0",
        b"local access error\0",
        b"remote invalid request error\0",
        b"remote access error\0",
        b"remote operation error\0",
        b"transport retry counter exceeded\0",
        b"RNR retry counter exceeded\0",
        b"local RDD violation error\0",
        b"remote invalid RD request\0",
        b"aborted error\0",
        b"invalid EE context number\0",
        b"invalid EE context state\0",
        b"fatal error\0",
        b"response timeout error\0",
        b"general error\0",
        b"TM error\0",
        b"TM software rendezvous\0",
    ];
    table(T, status, b"unknown\0")
}

/// `ibv_node_type_str`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_node_type_str(node_type: c_int) -> *const c_char {
    const T: &[&[u8]] = &[
        b"unknown\0",
        b"InfiniBand channel adapter\0",
        b"InfiniBand switch\0",
        b"InfiniBand router\0",
        b"iWARP NIC\0",
        b"usNIC\0",
        b"usNIC UDP\0",
        b"unspecified\0",
    ];
    table(T, node_type, b"unknown\0")
}

/// `ibv_port_state_str`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_port_state_str(state: c_int) -> *const c_char {
    const T: &[&[u8]] = &[
        b"PORT_NOP\0",
        b"PORT_DOWN\0",
        b"PORT_INIT\0",
        b"PORT_ARMED\0",
        b"PORT_ACTIVE\0",
        b"PORT_ACTIVE_DEFER\0",
    ];
    table(T, state, b"invalid state\0")
}

/// `ibv_event_type_str`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_event_type_str(event: c_int) -> *const c_char {
    const T: &[&[u8]] = &[
        b"CQ error\0",
        b"local work queue catastrophic error\0",
        b"invalid request local work queue error\0",
        b"local access violation work queue error\0",
        b"communication established\0",
        b"send queue drained\0",
        b"path migrated\0",
        b"path migration request error\0",
        b"local catastrophic error\0",
        b"port active\0",
        b"port error\0",
        b"LID change\0",
        b"P_Key change\0",
        b"SM change\0",
        b"SRQ catastrophic error\0",
        b"SRQ limit reached\0",
        b"last WQE reached\0",
        b"client reregistration\0",
        b"GID table change\0",
        b"WQ fatal\0",
    ];
    table(T, event, b"unknown\0")
}

/// `enum ibv_rate` value, multiple of 2.5 Gbit/s (0: none), Mbit/s.
const RATES: &[(c_int, c_int, c_int)] = &[
    (2, 1, 2500),
    (5, 2, 5000),
    (3, 4, 10000),
    (6, 8, 20000),
    (4, 12, 30000),
    (7, 16, 40000),
    (8, 24, 60000),
    (9, 32, 80000),
    (10, 48, 120000),
    (11, 0, 14062),
    (12, 0, 56250),
    (13, 0, 112500),
    (14, 0, 168750),
    (15, 0, 25781),
    (16, 0, 103125),
    (17, 0, 206250),
    (18, 0, 309375),
    (19, 0, 28125),
    (20, 0, 53125),
    (21, 0, 425000),
    (22, 0, 637500),
];

/// `ibv_rate_to_mult`: -1 for rates that are no multiple of 2.5 Gbit/s.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_rate_to_mult(rate: c_int) -> c_int {
    RATES
        .iter()
        .find(|r| r.0 == rate && r.1 != 0)
        .map_or(-1, |r| r.1)
}

/// `mult_to_ibv_rate`: `IBV_RATE_MAX` (0) when unknown.
#[unsafe(no_mangle)]
pub extern "C" fn mult_to_ibv_rate(mult: c_int) -> c_int {
    RATES
        .iter()
        .find(|r| r.1 == mult && mult != 0)
        .map_or(0, |r| r.0)
}

/// `ibv_rate_to_mbps`: -1 when unknown.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_rate_to_mbps(rate: c_int) -> c_int {
    RATES.iter().find(|r| r.0 == rate).map_or(-1, |r| r.2)
}

/// `mbps_to_ibv_rate`: `IBV_RATE_MAX` (0) when unknown.
#[unsafe(no_mangle)]
pub extern "C" fn mbps_to_ibv_rate(mbps: c_int) -> c_int {
    RATES.iter().find(|r| r.2 == mbps).map_or(0, |r| r.0)
}

/// `ibv_fork_init`: nothing to do — registered memory is never pinned by a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_fork_init() -> c_int {
    0
}

/// `ibv_is_fork_initialized`: fork protection is not needed.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_is_fork_initialized() -> c_int {
    crate::abi::IBV_FORK_UNNEEDED
}

/// `ibv_dontfork_range`: nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_dontfork_range(_base: *mut c_void, _size: usize) -> c_int {
    0
}

/// `ibv_dofork_range`: nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_dofork_range(_base: *mut c_void, _size: usize) -> c_int {
    0
}

/// `ibv_query_qp_data_in_order`: 0 — MetaRoCE places data out of order (every packet
/// carries its address), so in-order data placement is never promised.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_qp_data_in_order(_qp: *mut c_void, _op: c_int, _flags: u32) -> c_int {
    0
}

/// `ibv_get_sysfs_path`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_sysfs_path() -> *const c_char {
    c"/sys".as_ptr()
}

/// `ibv_read_sysfs_file`: MetaRoCE devices have no sysfs entries; -1 with `ENOENT`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_read_sysfs_file() -> c_int {
    set_errno(libc::ENOENT);
    -1
}

/// `ibv_read_ibdev_sysfs_file`: as [`ibv_read_sysfs_file`].
#[unsafe(no_mangle)]
pub extern "C" fn ibv_read_ibdev_sysfs_file() -> c_int {
    set_errno(libc::ENOENT);
    -1
}

/// `ibv_rereg_mr`: not supported; `IBV_REREG_MR_ERR_INPUT` (-1), the old region stays
/// valid.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_rereg_mr() -> c_int {
    set_errno(libc::EOPNOTSUPP);
    -1
}

/// `__ioctl_final_num_attrs`: a provider-internal helper; never reached without a
/// kernel provider.
#[unsafe(no_mangle)]
pub extern "C" fn __ioctl_final_num_attrs(num_attrs: c_uint) -> c_uint {
    num_attrs
}

/// `verbs_allow_disassociate_destroy` (data object imported by providers).
#[unsafe(no_mangle)]
pub static verbs_allow_disassociate_destroy: AtomicBool = AtomicBool::new(false);

macro_rules! unsupported {
    (null: $($name:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not supported; NULL with errno `EOPNOTSUPP`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> *mut c_void {
            guard(std::ptr::null_mut(), || {
                set_errno(libc::EOPNOTSUPP);
                std::ptr::null_mut()
            })
        }
    )*};
    (errno $e:ident: $($name:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not supported; returns `", stringify!($e), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> c_int {
            set_errno(libc::$e);
            libc::$e
        }
    )*};
    (noop: $($name:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: nothing to do here.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() {}
    )*};
}

unsupported!(null:
    ibv_create_ah, ibv_create_ah_from_wc,
    ibv_import_device, ibv_import_pd, ibv_import_mr, ibv_import_dm, ibv_reg_dmabuf_mr,
    _verbs_init_and_alloc_context,
);

// Objects that can never be created cannot be destroyed either.
unsupported!(errno EINVAL: ibv_destroy_ah);

unsupported!(errno EOPNOTSUPP:
    ibv_attach_mcast, ibv_detach_mcast, ibv_init_ah_from_wc,
    ibv_resolve_eth_l2_from_gid, ibv_query_ece, ibv_set_ece, execute_ioctl, verbs_init_cq,
    verbs_open_device,
    ibv_cmd_advise_mr, ibv_cmd_alloc_dm, ibv_cmd_alloc_mw, ibv_cmd_alloc_pd,
    ibv_cmd_attach_mcast, ibv_cmd_close_xrcd, ibv_cmd_create_ah, ibv_cmd_create_counters,
    ibv_cmd_create_cq, ibv_cmd_create_cq_ex, ibv_cmd_create_flow,
    ibv_cmd_create_flow_action_esp, ibv_cmd_create_qp, ibv_cmd_create_qp_ex,
    ibv_cmd_create_qp_ex2, ibv_cmd_create_rwq_ind_table, ibv_cmd_create_srq,
    ibv_cmd_create_srq_ex, ibv_cmd_create_wq, ibv_cmd_dealloc_mw, ibv_cmd_dealloc_pd,
    ibv_cmd_dereg_mr, ibv_cmd_destroy_ah, ibv_cmd_destroy_counters, ibv_cmd_destroy_cq,
    ibv_cmd_destroy_flow, ibv_cmd_destroy_flow_action, ibv_cmd_destroy_qp,
    ibv_cmd_destroy_rwq_ind_table, ibv_cmd_destroy_srq, ibv_cmd_destroy_wq,
    ibv_cmd_detach_mcast, ibv_cmd_free_dm, ibv_cmd_get_context, ibv_cmd_modify_cq,
    ibv_cmd_modify_flow_action_esp, ibv_cmd_modify_qp, ibv_cmd_modify_qp_ex,
    ibv_cmd_modify_srq, ibv_cmd_modify_wq, ibv_cmd_open_qp, ibv_cmd_open_xrcd,
    ibv_cmd_poll_cq, ibv_cmd_post_recv, ibv_cmd_post_send, ibv_cmd_post_srq_recv,
    ibv_cmd_query_context, ibv_cmd_query_device_any, ibv_cmd_query_mr, ibv_cmd_query_port,
    ibv_cmd_query_qp, ibv_cmd_query_srq, ibv_cmd_read_counters, ibv_cmd_reg_dm_mr,
    ibv_cmd_reg_dmabuf_mr, ibv_cmd_reg_mr, ibv_cmd_req_notify_cq, ibv_cmd_rereg_mr,
    ibv_cmd_resize_cq,
);

unsupported!(noop:
    ibv_unimport_pd, ibv_unimport_mr, ibv_unimport_dm, ibv_copy_ah_attr_from_kern,
    ibv_copy_path_rec_from_kern, ibv_copy_path_rec_to_kern, ibv_copy_qp_attr_from_kern,
    verbs_register_driver_34, verbs_set_ops, verbs_uninit_context, __verbs_log,
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn s(p: *const c_char) -> &'static str {
        // SAFETY: every table entry is a NUL-terminated static string.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap()
    }

    #[test]
    fn strings() {
        assert_eq!(s(ibv_wc_status_str(0)), "success");
        assert_eq!(s(ibv_wc_status_str(12)), "transport retry counter exceeded");
        assert_eq!(s(ibv_wc_status_str(-3)), "unknown");
        assert_eq!(s(ibv_wc_status_str(1000)), "unknown");
        assert_eq!(s(ibv_port_state_str(4)), "PORT_ACTIVE");
        assert_eq!(s(ibv_node_type_str(1)), "InfiniBand channel adapter");
        assert_eq!(
            s(ibv_event_type_str(1)),
            "local work queue catastrophic error"
        );
    }

    #[test]
    fn rates_round_trip() {
        assert_eq!(ibv_rate_to_mult(3), 4);
        assert_eq!(mult_to_ibv_rate(4), 3);
        assert_eq!(ibv_rate_to_mult(16), -1);
        assert_eq!(ibv_rate_to_mbps(16), 103125);
        assert_eq!(mbps_to_ibv_rate(103125), 16);
        assert_eq!(mbps_to_ibv_rate(1), 0);
    }

    #[test]
    fn unsupported_verbs_fail_cleanly() {
        assert!(ibv_create_ah().is_null());
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EOPNOTSUPP)
        );
        assert_eq!(ibv_cmd_alloc_pd(), libc::EOPNOTSUPP);
        assert_eq!(ibv_destroy_ah(), libc::EINVAL);
        assert_eq!(ibv_rereg_mr(), -1);
    }
}
