//! `#[repr(C)]` mirrors of the rdma-core v44 `<infiniband/verbs.h>` structures this
//! library reads or writes, and the constants it uses.
//!
//! Written by hand from the header; `tests::layout_matches_verbs_h` compiles a C program
//! against the installed header and compares every size and field offset used here.
//! Fields the library never touches are kept as opaque padding of the right size.

#![allow(non_camel_case_types)]

pub use metaroce_cabi::verbs_h::{
    ibv_ah_attr, ibv_gid, ibv_port_attr, ibv_qp_attr, ibv_qp_cap, ibv_srq_attr,
};
use std::ffi::{c_char, c_int, c_uint, c_void};

/// `IBV_SYSFS_NAME_MAX`.
pub const SYSFS_NAME_MAX: usize = 64;
/// `IBV_SYSFS_PATH_MAX`.
pub const SYSFS_PATH_MAX: usize = 256;

/// `struct ibv_device`.
#[repr(C)]
pub struct ibv_device {
    pub _ops: [*mut c_void; 2],
    pub node_type: c_int,
    pub transport_type: c_int,
    pub name: [c_char; SYSFS_NAME_MAX],
    pub dev_name: [c_char; SYSFS_NAME_MAX],
    pub dev_path: [c_char; SYSFS_PATH_MAX],
    pub ibdev_path: [c_char; SYSFS_PATH_MAX],
}

/// Index of `query_device_ex` in [`verbs_context`]'s extended ops.
pub const VCTX_QUERY_DEVICE_EX: usize = 27;
/// Index of `create_qp_ex` in [`verbs_context`]'s extended ops.
pub const VCTX_CREATE_QP_EX: usize = 33;

/// `verbs_context.create_qp_ex`.
pub type CreateQpExFn =
    unsafe extern "C" fn(*mut ibv_context, *mut ibv_qp_init_attr_ex) -> *mut ibv_qp;

/// `verbs_context.query_device_ex`.
pub type QueryDeviceExFn =
    unsafe extern "C" fn(*mut ibv_context, *const c_void, *mut ibv_device_attr, usize) -> c_int;

/// Offset of `phys_port_cnt_ex` in `struct ibv_device_attr_ex`.
pub const DEVICE_ATTR_EX_PHYS_PORT_CNT: usize = 396;

/// `ops.poll_cq`.
pub type PollCqFn = unsafe extern "C" fn(*mut ibv_cq, c_int, *mut ibv_wc) -> c_int;
/// `ops.req_notify_cq`.
pub type ReqNotifyCqFn = unsafe extern "C" fn(*mut ibv_cq, c_int) -> c_int;
/// `ops.post_send`.
pub type PostSendFn =
    unsafe extern "C" fn(*mut ibv_qp, *mut ibv_send_wr, *mut *mut ibv_send_wr) -> c_int;
/// `ops.post_recv`.
pub type PostRecvFn =
    unsafe extern "C" fn(*mut ibv_qp, *mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> c_int;
/// `ops.post_srq_recv`.
pub type PostSrqRecvFn =
    unsafe extern "C" fn(*mut ibv_srq, *mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> c_int;

/// `struct ibv_context_ops`: only the entries the header's inline verbs call are set.
#[repr(C)]
pub struct ibv_context_ops {
    /// `_compat_query_device` … `dealloc_mw`, `_compat_create_cq` (unused, NULL).
    pub _before_poll_cq: [*mut c_void; 11],
    pub poll_cq: Option<PollCqFn>,
    pub req_notify_cq: Option<ReqNotifyCqFn>,
    /// `_compat_cq_event` … `_compat_destroy_srq` (unused, NULL).
    pub _before_post_srq_recv: [*mut c_void; 7],
    pub post_srq_recv: Option<PostSrqRecvFn>,
    /// `_compat_create_qp` … `_compat_destroy_qp` (unused, NULL).
    pub _before_post_send: [*mut c_void; 4],
    pub post_send: Option<PostSendFn>,
    pub post_recv: Option<PostRecvFn>,
    /// `_compat_create_ah` … `_compat_async_event` (unused, NULL).
    pub _after_post_recv: [*mut c_void; 5],
}

/// `struct ibv_context`.
#[repr(C)]
pub struct ibv_context {
    pub device: *mut ibv_device,
    pub ops: ibv_context_ops,
    pub cmd_fd: c_int,
    pub async_fd: c_int,
    pub num_comp_vectors: c_int,
    pub mutex: libc::pthread_mutex_t,
    pub abi_compat: *mut c_void,
}

/// `struct verbs_context`: the extended ops (all NULL here, so the header's inline
/// wrappers fall back to the exported functions), `sz`, then the `ibv_context`.
#[repr(C)]
pub struct verbs_context {
    /// `query_port` … `_ABI_placeholder3`; only `query_device_ex`
    /// ([`VCTX_QUERY_DEVICE_EX`]) and `create_qp_ex` ([`VCTX_CREATE_QP_EX`]) are set.
    pub _ext_ops: [*mut c_void; 39],
    pub sz: usize,
    pub context: ibv_context,
}

/// `struct ibv_device_attr`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_device_attr {
    pub fw_ver: [c_char; 64],
    pub node_guid: u64,
    pub sys_image_guid: u64,
    pub max_mr_size: u64,
    pub page_size_cap: u64,
    pub vendor_id: u32,
    pub vendor_part_id: u32,
    pub hw_ver: u32,
    pub max_qp: c_int,
    pub max_qp_wr: c_int,
    pub device_cap_flags: c_uint,
    pub max_sge: c_int,
    pub max_sge_rd: c_int,
    pub max_cq: c_int,
    pub max_cqe: c_int,
    pub max_mr: c_int,
    pub max_pd: c_int,
    pub max_qp_rd_atom: c_int,
    pub max_ee_rd_atom: c_int,
    pub max_res_rd_atom: c_int,
    pub max_qp_init_rd_atom: c_int,
    pub max_ee_init_rd_atom: c_int,
    pub atomic_cap: c_int,
    pub max_ee: c_int,
    pub max_rdd: c_int,
    pub max_mw: c_int,
    pub max_raw_ipv6_qp: c_int,
    pub max_raw_ethy_qp: c_int,
    pub max_mcast_grp: c_int,
    pub max_mcast_qp_attach: c_int,
    pub max_total_mcast_qp_attach: c_int,
    pub max_ah: c_int,
    pub max_fmr: c_int,
    pub max_map_per_fmr: c_int,
    pub max_srq: c_int,
    pub max_srq_wr: c_int,
    pub max_srq_sge: c_int,
    pub max_pkeys: u16,
    pub local_ca_ack_delay: u8,
    pub phys_port_cnt: u8,
}

/// `struct ibv_gid_entry`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_gid_entry {
    pub gid: ibv_gid,
    pub gid_index: u32,
    pub port_num: u32,
    pub gid_type: u32,
    pub ndev_ifindex: u32,
}

/// `struct ibv_pd`.
#[repr(C)]
pub struct ibv_pd {
    pub context: *mut ibv_context,
    pub handle: u32,
}

/// `struct ibv_mr`.
#[repr(C)]
pub struct ibv_mr {
    pub context: *mut ibv_context,
    pub pd: *mut ibv_pd,
    pub addr: *mut c_void,
    pub length: usize,
    pub handle: u32,
    pub lkey: u32,
    pub rkey: u32,
}

/// `struct ibv_comp_channel`.
#[repr(C)]
pub struct ibv_comp_channel {
    pub context: *mut ibv_context,
    pub fd: c_int,
    pub refcnt: c_int,
}

/// `struct ibv_cq`.
#[repr(C)]
pub struct ibv_cq {
    pub context: *mut ibv_context,
    pub channel: *mut ibv_comp_channel,
    pub cq_context: *mut c_void,
    pub handle: u32,
    pub cqe: c_int,
    pub mutex: libc::pthread_mutex_t,
    pub cond: libc::pthread_cond_t,
    pub comp_events_completed: u32,
    pub async_events_completed: u32,
}

/// `struct ibv_qp`.
#[repr(C)]
pub struct ibv_qp {
    pub context: *mut ibv_context,
    pub qp_context: *mut c_void,
    pub pd: *mut ibv_pd,
    pub send_cq: *mut ibv_cq,
    pub recv_cq: *mut ibv_cq,
    pub srq: *mut ibv_srq,
    pub handle: u32,
    pub qp_num: u32,
    pub state: c_int,
    pub qp_type: c_int,
    pub mutex: libc::pthread_mutex_t,
    pub cond: libc::pthread_cond_t,
    pub events_completed: u32,
}

/// `struct ibv_srq`.
#[repr(C)]
pub struct ibv_srq {
    pub context: *mut ibv_context,
    pub srq_context: *mut c_void,
    pub pd: *mut ibv_pd,
    pub handle: u32,
    pub mutex: libc::pthread_mutex_t,
    pub cond: libc::pthread_cond_t,
    pub events_completed: u32,
}

/// `struct ibv_srq_init_attr`.
#[repr(C)]
pub struct ibv_srq_init_attr {
    pub srq_context: *mut c_void,
    pub attr: ibv_srq_attr,
}

/// `struct ibv_qp_init_attr`.
#[repr(C)]
pub struct ibv_qp_init_attr {
    pub qp_context: *mut c_void,
    pub send_cq: *mut ibv_cq,
    pub recv_cq: *mut ibv_cq,
    pub srq: *mut ibv_srq,
    pub cap: ibv_qp_cap,
    pub qp_type: c_int,
    pub sq_sig_all: c_int,
}

/// `struct ibv_qp_init_attr_ex`: an `ibv_qp_init_attr` followed by the extended
/// attributes.
#[repr(C)]
pub struct ibv_qp_init_attr_ex {
    pub qp_context: *mut c_void,
    pub send_cq: *mut ibv_cq,
    pub recv_cq: *mut ibv_cq,
    pub srq: *mut ibv_srq,
    pub cap: ibv_qp_cap,
    pub qp_type: c_int,
    pub sq_sig_all: c_int,
    pub comp_mask: u32,
    pub pd: *mut ibv_pd,
    pub xrcd: *mut c_void,
    pub create_flags: u32,
    pub max_tso_header: u16,
    pub rwq_ind_tbl: *mut c_void,
    /// `struct ibv_rx_hash_conf` (unused).
    pub _rx_hash_conf: [u64; 3],
    pub source_qpn: u32,
    pub send_ops_flags: u64,
}

/// `wr_<op>(qp)` of `struct ibv_qp_ex`.
pub type WrFn = unsafe extern "C" fn(*mut ibv_qp_ex);
/// `wr_complete(qp)`.
pub type WrCompleteFn = unsafe extern "C" fn(*mut ibv_qp_ex) -> c_int;
/// `wr_rdma_read` / `wr_rdma_write(qp, rkey, remote_addr)`; also `wr_local_inv`,
/// `wr_send_inv` and `wr_set_xrc_srqn` take one 32-bit argument (`WrU32Fn`).
pub type WrRdmaFn = unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64);
/// `wr_rdma_write_imm(qp, rkey, remote_addr, imm)`.
pub type WrRdmaImmFn = unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u32);
/// `wr_send_imm(qp, imm)`, `wr_local_inv`, `wr_send_inv`, `wr_set_xrc_srqn`.
pub type WrU32Fn = unsafe extern "C" fn(*mut ibv_qp_ex, u32);
/// `wr_atomic_cmp_swp(qp, rkey, remote_addr, compare, swap)`.
pub type WrCmpSwpFn = unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u64, u64);
/// `wr_atomic_fetch_add(qp, rkey, remote_addr, add)`.
pub type WrFetchAddFn = unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u64);
/// `wr_bind_mw(qp, mw, rkey, bind_info)`.
pub type WrBindMwFn = unsafe extern "C" fn(*mut ibv_qp_ex, *mut c_void, u32, *const c_void);
/// `wr_send_tso(qp, hdr, hdr_sz, mss)`.
pub type WrSendTsoFn = unsafe extern "C" fn(*mut ibv_qp_ex, *mut c_void, u16, u16);
/// `wr_set_ud_addr(qp, ah, remote_qpn, remote_qkey)`.
pub type WrSetUdAddrFn = unsafe extern "C" fn(*mut ibv_qp_ex, *mut c_void, u32, u32);
/// `wr_set_inline_data(qp, addr, length)`.
pub type WrInlineFn = unsafe extern "C" fn(*mut ibv_qp_ex, *mut c_void, usize);
/// `wr_set_inline_data_list(qp, num_buf, buf_list)`.
pub type WrInlineListFn = unsafe extern "C" fn(*mut ibv_qp_ex, usize, *const ibv_data_buf);
/// `wr_set_sge(qp, lkey, addr, length)`.
pub type WrSgeFn = unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u32);
/// `wr_set_sge_list(qp, num_sge, sg_list)`.
pub type WrSgeListFn = unsafe extern "C" fn(*mut ibv_qp_ex, usize, *const ibv_sge);
/// `wr_atomic_write(qp, rkey, remote_addr, atomic_wr)`.
pub type WrAtomicWriteFn = unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, *const c_void);

/// `struct ibv_data_buf`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ibv_data_buf {
    pub addr: *mut c_void,
    pub length: usize,
}

/// `struct ibv_qp_ex`: an `ibv_qp` followed by the work-request builder
/// (`ibv_wr_*`).
#[repr(C)]
pub struct ibv_qp_ex {
    pub qp_base: ibv_qp,
    pub comp_mask: u64,
    pub wr_id: u64,
    pub wr_flags: c_uint,
    pub wr_atomic_cmp_swp: Option<WrCmpSwpFn>,
    pub wr_atomic_fetch_add: Option<WrFetchAddFn>,
    pub wr_bind_mw: Option<WrBindMwFn>,
    pub wr_local_inv: Option<WrU32Fn>,
    pub wr_rdma_read: Option<WrRdmaFn>,
    pub wr_rdma_write: Option<WrRdmaFn>,
    pub wr_rdma_write_imm: Option<WrRdmaImmFn>,
    pub wr_send: Option<WrFn>,
    pub wr_send_imm: Option<WrU32Fn>,
    pub wr_send_inv: Option<WrU32Fn>,
    pub wr_send_tso: Option<WrSendTsoFn>,
    pub wr_set_ud_addr: Option<WrSetUdAddrFn>,
    pub wr_set_xrc_srqn: Option<WrU32Fn>,
    pub wr_set_inline_data: Option<WrInlineFn>,
    pub wr_set_inline_data_list: Option<WrInlineListFn>,
    pub wr_set_sge: Option<WrSgeFn>,
    pub wr_set_sge_list: Option<WrSgeListFn>,
    pub wr_start: Option<WrFn>,
    pub wr_complete: Option<WrCompleteFn>,
    pub wr_abort: Option<WrFn>,
    pub wr_atomic_write: Option<WrAtomicWriteFn>,
}

/// `struct ibv_sge`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ibv_sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

/// The `wr.rdma` member of `struct ibv_send_wr`'s `wr` union.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_send_wr_rdma {
    pub remote_addr: u64,
    pub rkey: u32,
}

/// `struct ibv_send_wr` (`wr` holds the largest member, `atomic`; the bind/TSO union at
/// the end is opaque).
#[repr(C)]
pub struct ibv_send_wr {
    pub wr_id: u64,
    pub next: *mut ibv_send_wr,
    pub sg_list: *mut ibv_sge,
    pub num_sge: c_int,
    pub opcode: c_int,
    pub send_flags: c_uint,
    /// `imm_data` (network byte order) / `invalidate_rkey`.
    pub imm_data: u32,
    /// `wr.rdma` / `wr.atomic` / `wr.ud`.
    pub wr: [u64; 4],
    pub qp_type: u32,
    pub _bind_mw_tso: [u64; 6],
}

/// `struct ibv_send_wr`'s `wr.atomic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ibv_send_wr_atomic {
    pub remote_addr: u64,
    pub compare_add: u64,
    pub swap: u64,
    pub rkey: u32,
}

impl ibv_send_wr {
    /// The `wr.rdma` member.
    pub fn rdma(&self) -> ibv_send_wr_rdma {
        ibv_send_wr_rdma {
            remote_addr: self.wr[0],
            rkey: self.wr[1] as u32,
        }
    }

    /// The `wr.atomic` member.
    pub fn atomic(&self) -> ibv_send_wr_atomic {
        ibv_send_wr_atomic {
            remote_addr: self.wr[0],
            compare_add: self.wr[1],
            swap: self.wr[2],
            rkey: self.wr[3] as u32,
        }
    }
}

/// `struct ibv_recv_wr`.
#[repr(C)]
pub struct ibv_recv_wr {
    pub wr_id: u64,
    pub next: *mut ibv_recv_wr,
    pub sg_list: *mut ibv_sge,
    pub num_sge: c_int,
}

/// `struct ibv_wc`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct ibv_wc {
    pub wr_id: u64,
    pub status: c_int,
    pub opcode: c_int,
    pub vendor_err: u32,
    pub byte_len: u32,
    pub imm_data: u32,
    pub qp_num: u32,
    pub src_qp: u32,
    pub wc_flags: c_uint,
    pub pkey_index: u16,
    pub slid: u16,
    pub sl: u8,
    pub dlid_path_bits: u8,
}

/// `struct ibv_async_event`.
#[repr(C)]
pub struct ibv_async_event {
    /// `element` union (cq / qp / srq / wq pointer, or port number).
    pub element: *mut c_void,
    pub event_type: c_int,
}

// Enumerations and flags (values from verbs.h).
pub const IBV_NODE_CA: c_int = 1;
pub const IBV_TRANSPORT_IB: c_int = 0;
pub const IBV_PORT_ACTIVE: c_int = 4;
pub const IBV_LINK_LAYER_ETHERNET: u8 = 2;
pub const IBV_GID_TYPE_ROCE_V2: u32 = 2;
/// `IBV_GID_TYPE_SYSFS_ROCE_V2` (rdma-core's private `driver.h`).
pub const IBV_GID_TYPE_SYSFS_ROCE_V2: u32 = 1;
pub const IBV_QPT_RC: c_int = 2;

pub const IBV_QPS_RESET: c_int = 0;
pub const IBV_QPS_INIT: c_int = 1;
pub const IBV_QPS_RTR: c_int = 2;
pub const IBV_QPS_RTS: c_int = 3;
pub const IBV_QPS_SQD: c_int = 4;
pub const IBV_QPS_SQE: c_int = 5;
pub const IBV_QPS_ERR: c_int = 6;

pub const IBV_QP_INIT_ATTR_PD: u32 = 1 << 0;
pub const IBV_QP_INIT_ATTR_SEND_OPS_FLAGS: u32 = 1 << 6;
pub const IBV_QP_EX_WITH_RDMA_WRITE: u64 = 1 << 0;
pub const IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM: u64 = 1 << 1;
pub const IBV_QP_EX_WITH_SEND: u64 = 1 << 2;
pub const IBV_QP_EX_WITH_SEND_WITH_IMM: u64 = 1 << 3;
pub const IBV_QP_EX_WITH_RDMA_READ: u64 = 1 << 4;
pub const IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP: u64 = 1 << 5;
pub const IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD: u64 = 1 << 6;

pub const IBV_QP_STATE: c_int = 1 << 0;
pub const IBV_QP_AV: c_int = 1 << 7;
pub const IBV_QP_TIMEOUT: c_int = 1 << 9;
pub const IBV_QP_RETRY_CNT: c_int = 1 << 10;
pub const IBV_QP_RNR_RETRY: c_int = 1 << 11;
pub const IBV_QP_RQ_PSN: c_int = 1 << 12;
pub const IBV_QP_SQ_PSN: c_int = 1 << 16;
pub const IBV_QP_DEST_QPN: c_int = 1 << 20;

pub const IBV_WR_RDMA_WRITE: c_int = 0;
pub const IBV_WR_RDMA_WRITE_WITH_IMM: c_int = 1;
pub const IBV_WR_SEND: c_int = 2;
pub const IBV_WR_SEND_WITH_IMM: c_int = 3;
pub const IBV_WR_RDMA_READ: c_int = 4;
pub const IBV_WR_ATOMIC_CMP_AND_SWP: c_int = 5;
pub const IBV_WR_ATOMIC_FETCH_AND_ADD: c_int = 6;

pub const IBV_SEND_SIGNALED: c_uint = 1 << 1;
pub const IBV_SEND_SOLICITED: c_uint = 1 << 2;
pub const IBV_SEND_INLINE: c_uint = 1 << 3;

pub const IBV_WC_SEND: c_int = 0;
pub const IBV_WC_RDMA_WRITE: c_int = 1;
pub const IBV_WC_RDMA_READ: c_int = 2;
pub const IBV_WC_COMP_SWAP: c_int = 3;
pub const IBV_WC_FETCH_ADD: c_int = 4;
pub const IBV_WC_RECV: c_int = 1 << 7;
pub const IBV_WC_RECV_RDMA_WITH_IMM: c_int = (1 << 7) + 1;
pub const IBV_WC_WITH_IMM: c_uint = 1 << 1;

pub const IBV_ACCESS_LOCAL_WRITE: c_int = 1;
pub const IBV_ACCESS_REMOTE_WRITE: c_int = 1 << 1;
pub const IBV_ACCESS_REMOTE_READ: c_int = 1 << 2;
pub const IBV_ACCESS_REMOTE_ATOMIC: c_int = 1 << 3;
/// `IBV_ACCESS_OPTIONAL_RANGE`: hints a provider may ignore.
pub const IBV_ACCESS_OPTIONAL_RANGE: c_int = 0x3ff0_0000;

pub const IBV_ATOMIC_HCA: c_int = 1;

pub const IBV_EVENT_QP_FATAL: c_int = 1;
pub const IBV_EVENT_SRQ_LIMIT_REACHED: c_int = 15;
pub const IBV_EVENT_DEVICE_FATAL: c_int = 8;

pub const IBV_SRQ_MAX_WR: c_int = 1 << 0;
pub const IBV_SRQ_LIMIT: c_int = 1 << 1;

pub const IBV_FORK_UNNEEDED: c_int = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use metaroce_cabi::verbs_h::ibv_global_route;
    use metaroce_cabi::{c_offsetof as off, c_sizeof as size};
    use std::mem::{offset_of, size_of};
    use std::process::Command;

    /// Every size and offset this module relies on, as (C expression, Rust value).
    fn checks() -> Vec<(&'static str, usize)> {
        vec![
            size!("struct ibv_device", ibv_device),
            off!("struct ibv_device, node_type", ibv_device, node_type),
            off!("struct ibv_device, name", ibv_device, name),
            off!("struct ibv_device, dev_name", ibv_device, dev_name),
            off!("struct ibv_device, dev_path", ibv_device, dev_path),
            off!("struct ibv_device, ibdev_path", ibv_device, ibdev_path),
            size!("struct ibv_context_ops", ibv_context_ops),
            off!("struct ibv_context_ops, poll_cq", ibv_context_ops, poll_cq),
            off!(
                "struct ibv_context_ops, req_notify_cq",
                ibv_context_ops,
                req_notify_cq
            ),
            off!(
                "struct ibv_context_ops, post_srq_recv",
                ibv_context_ops,
                post_srq_recv
            ),
            off!(
                "struct ibv_context_ops, post_send",
                ibv_context_ops,
                post_send
            ),
            off!(
                "struct ibv_context_ops, post_recv",
                ibv_context_ops,
                post_recv
            ),
            size!("struct ibv_context", ibv_context),
            off!("struct ibv_context, ops", ibv_context, ops),
            off!("struct ibv_context, cmd_fd", ibv_context, cmd_fd),
            off!("struct ibv_context, async_fd", ibv_context, async_fd),
            off!(
                "struct ibv_context, num_comp_vectors",
                ibv_context,
                num_comp_vectors
            ),
            off!("struct ibv_context, mutex", ibv_context, mutex),
            off!("struct ibv_context, abi_compat", ibv_context, abi_compat),
            size!("struct verbs_context", verbs_context),
            off!("struct verbs_context, sz", verbs_context, sz),
            off!("struct verbs_context, context", verbs_context, context),
            size!("struct ibv_device_attr", ibv_device_attr),
            off!(
                "struct ibv_device_attr, node_guid",
                ibv_device_attr,
                node_guid
            ),
            off!(
                "struct ibv_device_attr, vendor_id",
                ibv_device_attr,
                vendor_id
            ),
            off!(
                "struct ibv_device_attr, max_qp_wr",
                ibv_device_attr,
                max_qp_wr
            ),
            off!("struct ibv_device_attr, max_sge", ibv_device_attr, max_sge),
            off!("struct ibv_device_attr, max_cqe", ibv_device_attr, max_cqe),
            off!(
                "struct ibv_device_attr, max_qp_rd_atom",
                ibv_device_attr,
                max_qp_rd_atom
            ),
            off!(
                "struct ibv_device_attr, atomic_cap",
                ibv_device_attr,
                atomic_cap
            ),
            off!(
                "struct ibv_device_attr, max_srq_sge",
                ibv_device_attr,
                max_srq_sge
            ),
            off!(
                "struct ibv_device_attr, max_pkeys",
                ibv_device_attr,
                max_pkeys
            ),
            off!(
                "struct ibv_device_attr, phys_port_cnt",
                ibv_device_attr,
                phys_port_cnt
            ),
            size!("struct ibv_port_attr", ibv_port_attr),
            off!(
                "struct ibv_port_attr, active_mtu",
                ibv_port_attr,
                active_mtu
            ),
            off!(
                "struct ibv_port_attr, max_msg_sz",
                ibv_port_attr,
                max_msg_sz
            ),
            off!("struct ibv_port_attr, lid", ibv_port_attr, lid),
            off!("struct ibv_port_attr, lmc", ibv_port_attr, lmc),
            off!(
                "struct ibv_port_attr, active_width",
                ibv_port_attr,
                active_width
            ),
            off!(
                "struct ibv_port_attr, link_layer",
                ibv_port_attr,
                link_layer
            ),
            off!(
                "struct ibv_port_attr, port_cap_flags2",
                ibv_port_attr,
                port_cap_flags2
            ),
            size!("union ibv_gid", ibv_gid),
            size!("struct ibv_gid_entry", ibv_gid_entry),
            off!("struct ibv_gid_entry, gid_type", ibv_gid_entry, gid_type),
            off!(
                "struct ibv_gid_entry, ndev_ifindex",
                ibv_gid_entry,
                ndev_ifindex
            ),
            size!("struct ibv_pd", ibv_pd),
            off!("struct ibv_pd, handle", ibv_pd, handle),
            size!("struct ibv_mr", ibv_mr),
            off!("struct ibv_mr, length", ibv_mr, length),
            off!("struct ibv_mr, lkey", ibv_mr, lkey),
            off!("struct ibv_mr, rkey", ibv_mr, rkey),
            size!("struct ibv_comp_channel", ibv_comp_channel),
            off!("struct ibv_comp_channel, fd", ibv_comp_channel, fd),
            size!("struct ibv_cq", ibv_cq),
            off!("struct ibv_cq, cq_context", ibv_cq, cq_context),
            off!("struct ibv_cq, cqe", ibv_cq, cqe),
            off!("struct ibv_cq, mutex", ibv_cq, mutex),
            off!("struct ibv_cq, cond", ibv_cq, cond),
            off!(
                "struct ibv_cq, comp_events_completed",
                ibv_cq,
                comp_events_completed
            ),
            off!(
                "struct ibv_cq, async_events_completed",
                ibv_cq,
                async_events_completed
            ),
            size!("struct ibv_qp", ibv_qp),
            off!("struct ibv_qp, srq", ibv_qp, srq),
            off!("struct ibv_qp, qp_num", ibv_qp, qp_num),
            off!("struct ibv_qp, state", ibv_qp, state),
            off!("struct ibv_qp, qp_type", ibv_qp, qp_type),
            off!("struct ibv_qp, mutex", ibv_qp, mutex),
            off!("struct ibv_qp, cond", ibv_qp, cond),
            off!("struct ibv_qp, events_completed", ibv_qp, events_completed),
            (
                "offsetof(struct verbs_context, query_device_ex)",
                VCTX_QUERY_DEVICE_EX * size_of::<*mut c_void>(),
            ),
            // `query_device_ex` fills whatever size the program's header has.
            ("sizeof(struct ibv_device_attr_ex)", 400),
            (
                "offsetof(struct ibv_device_attr_ex, phys_port_cnt_ex)",
                DEVICE_ATTR_EX_PHYS_PORT_CNT,
            ),
            (
                "offsetof(struct verbs_context, create_qp_ex)",
                VCTX_CREATE_QP_EX * size_of::<*mut c_void>(),
            ),
            size!("struct ibv_qp_init_attr_ex", ibv_qp_init_attr_ex),
            off!(
                "struct ibv_qp_init_attr_ex, comp_mask",
                ibv_qp_init_attr_ex,
                comp_mask
            ),
            off!("struct ibv_qp_init_attr_ex, pd", ibv_qp_init_attr_ex, pd),
            off!(
                "struct ibv_qp_init_attr_ex, send_ops_flags",
                ibv_qp_init_attr_ex,
                send_ops_flags
            ),
            size!("struct ibv_qp_ex", ibv_qp_ex),
            off!("struct ibv_qp_ex, wr_id", ibv_qp_ex, wr_id),
            off!("struct ibv_qp_ex, wr_flags", ibv_qp_ex, wr_flags),
            off!("struct ibv_qp_ex, wr_rdma_read", ibv_qp_ex, wr_rdma_read),
            off!("struct ibv_qp_ex, wr_send", ibv_qp_ex, wr_send),
            off!(
                "struct ibv_qp_ex, wr_set_sge_list",
                ibv_qp_ex,
                wr_set_sge_list
            ),
            off!("struct ibv_qp_ex, wr_start", ibv_qp_ex, wr_start),
            off!(
                "struct ibv_qp_ex, wr_atomic_write",
                ibv_qp_ex,
                wr_atomic_write
            ),
            size!("struct ibv_data_buf", ibv_data_buf),
            size!("struct ibv_srq", ibv_srq),
            off!("struct ibv_srq, srq_context", ibv_srq, srq_context),
            off!("struct ibv_srq, handle", ibv_srq, handle),
            off!("struct ibv_srq, mutex", ibv_srq, mutex),
            off!("struct ibv_srq, cond", ibv_srq, cond),
            off!(
                "struct ibv_srq, events_completed",
                ibv_srq,
                events_completed
            ),
            size!("struct ibv_srq_attr", ibv_srq_attr),
            off!("struct ibv_srq_attr, srq_limit", ibv_srq_attr, srq_limit),
            size!("struct ibv_srq_init_attr", ibv_srq_init_attr),
            off!("struct ibv_srq_init_attr, attr", ibv_srq_init_attr, attr),
            (
                "IBV_EVENT_SRQ_LIMIT_REACHED",
                IBV_EVENT_SRQ_LIMIT_REACHED as usize,
            ),
            ("IBV_EVENT_DEVICE_FATAL", IBV_EVENT_DEVICE_FATAL as usize),
            size!("struct ibv_qp_cap", ibv_qp_cap),
            size!("struct ibv_qp_init_attr", ibv_qp_init_attr),
            off!("struct ibv_qp_init_attr, cap", ibv_qp_init_attr, cap),
            off!(
                "struct ibv_qp_init_attr, qp_type",
                ibv_qp_init_attr,
                qp_type
            ),
            off!(
                "struct ibv_qp_init_attr, sq_sig_all",
                ibv_qp_init_attr,
                sq_sig_all
            ),
            size!("struct ibv_global_route", ibv_global_route),
            off!(
                "struct ibv_global_route, sgid_index",
                ibv_global_route,
                sgid_index
            ),
            size!("struct ibv_ah_attr", ibv_ah_attr),
            off!("struct ibv_ah_attr, dlid", ibv_ah_attr, dlid),
            off!("struct ibv_ah_attr, is_global", ibv_ah_attr, is_global),
            off!("struct ibv_ah_attr, port_num", ibv_ah_attr, port_num),
            size!("struct ibv_qp_attr", ibv_qp_attr),
            (
                "_Alignof(struct ibv_qp_attr)",
                std::mem::align_of::<ibv_qp_attr>(),
            ),
            ("_Alignof(union ibv_gid)", std::mem::align_of::<ibv_gid>()),
            off!("struct ibv_qp_attr, rq_psn", ibv_qp_attr, rq_psn),
            off!("struct ibv_qp_attr, sq_psn", ibv_qp_attr, sq_psn),
            off!("struct ibv_qp_attr, dest_qp_num", ibv_qp_attr, dest_qp_num),
            off!("struct ibv_qp_attr, cap", ibv_qp_attr, cap),
            off!("struct ibv_qp_attr, ah_attr", ibv_qp_attr, ah_attr),
            off!("struct ibv_qp_attr, pkey_index", ibv_qp_attr, pkey_index),
            off!(
                "struct ibv_qp_attr, max_rd_atomic",
                ibv_qp_attr,
                max_rd_atomic
            ),
            off!("struct ibv_qp_attr, timeout", ibv_qp_attr, timeout),
            off!("struct ibv_qp_attr, retry_cnt", ibv_qp_attr, retry_cnt),
            off!("struct ibv_qp_attr, rnr_retry", ibv_qp_attr, rnr_retry),
            off!("struct ibv_qp_attr, rate_limit", ibv_qp_attr, rate_limit),
            size!("struct ibv_sge", ibv_sge),
            size!("struct ibv_send_wr", ibv_send_wr),
            off!("struct ibv_send_wr, num_sge", ibv_send_wr, num_sge),
            off!("struct ibv_send_wr, opcode", ibv_send_wr, opcode),
            off!("struct ibv_send_wr, send_flags", ibv_send_wr, send_flags),
            off!("struct ibv_send_wr, imm_data", ibv_send_wr, imm_data),
            off!("struct ibv_send_wr, wr.rdma.remote_addr", ibv_send_wr, wr),
            (
                "offsetof(struct ibv_send_wr, wr.rdma.rkey)",
                offset_of!(ibv_send_wr, wr) + 8,
            ),
            off!("struct ibv_send_wr, qp_type", ibv_send_wr, qp_type),
            (
                "offsetof(struct ibv_send_wr, wr.atomic.swap)",
                offset_of!(ibv_send_wr, wr) + 16,
            ),
            (
                "offsetof(struct ibv_send_wr, wr.atomic.rkey)",
                offset_of!(ibv_send_wr, wr) + 24,
            ),
            (
                "IBV_WR_ATOMIC_FETCH_AND_ADD",
                IBV_WR_ATOMIC_FETCH_AND_ADD as usize,
            ),
            ("IBV_WC_FETCH_ADD", IBV_WC_FETCH_ADD as usize),
            ("IBV_ATOMIC_HCA", IBV_ATOMIC_HCA as usize),
            off!("struct ibv_send_wr, bind_mw", ibv_send_wr, _bind_mw_tso),
            size!("struct ibv_recv_wr", ibv_recv_wr),
            off!("struct ibv_recv_wr, num_sge", ibv_recv_wr, num_sge),
            size!("struct ibv_wc", ibv_wc),
            off!("struct ibv_wc, byte_len", ibv_wc, byte_len),
            off!("struct ibv_wc, imm_data", ibv_wc, imm_data),
            off!("struct ibv_wc, qp_num", ibv_wc, qp_num),
            off!("struct ibv_wc, wc_flags", ibv_wc, wc_flags),
            off!("struct ibv_wc, slid", ibv_wc, slid),
            off!("struct ibv_wc, dlid_path_bits", ibv_wc, dlid_path_bits),
            size!("struct ibv_async_event", ibv_async_event),
            off!(
                "struct ibv_async_event, event_type",
                ibv_async_event,
                event_type
            ),
        ]
    }

    /// Compiles a C program printing each expression against the installed v44 header
    /// and compares it with the Rust layout.
    #[test]
    fn layout_matches_verbs_h() {
        metaroce_cabi::check::require_packages(&[(
            "/usr/include/infiniband/verbs.h",
            "libibverbs-dev",
        )]);
        let checks = checks();
        let mut src = String::from(
            "#include <stdio.h>\n#include <stddef.h>\n#include <infiniband/verbs.h>\nint main(void) {\n",
        );
        for (expr, _) in &checks {
            src.push_str(&format!("  printf(\"%zu\\n\", (size_t){expr});\n"));
        }
        src.push_str("  return 0;\n}\n");
        let dir = std::env::temp_dir().join(format!("metaroce-ibv-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = dir.join("layout.c");
        let exe = dir.join("layout");
        std::fs::write(&c, src).unwrap();
        let st = Command::new("cc")
            .arg(&c)
            .arg("-o")
            .arg(&exe)
            .status()
            .unwrap();
        assert!(st.success(), "compiling the layout probe failed");
        let out = Command::new(&exe).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let got: Vec<usize> = text.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(got.len(), checks.len());
        let mismatches: Vec<String> = checks
            .iter()
            .zip(&got)
            .filter(|((_, rust), c)| *rust != **c)
            .map(|((expr, rust), c)| format!("{expr}: C {c}, Rust {rust}"))
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            mismatches.is_empty(),
            "layout mismatches:\n{}",
            mismatches.join("\n")
        );
    }
}
