//! `#[repr(C)]` mirrors of the rdma-core v44 structures this library shares with
//! programs: those of `rdma/rdma_cma.h` (which programs read directly: `id->verbs`,
//! `id->qp`, `event->param.conn.private_data`, …) and the few of `infiniband/verbs.h`
//! and `infiniband/sa.h` it reads or fills. A test compiles a C program against the
//! installed headers and compares every size and offset used here.
//!
//! Objects of libibverbs (`ibv_context`, `ibv_pd`, `ibv_cq`, …) are opaque here except
//! for the leading fields read through [`ibv_qp`] and [`ibv_context`]: this library
//! only uses libibverbs through its exported functions.

#![allow(non_camel_case_types)]

pub use metaroce_cabi::verbs_h::{
    ibv_ah_attr, ibv_gid, ibv_port_attr, ibv_qp_attr, ibv_qp_cap, ibv_srq_attr,
};
use std::ffi::{c_char, c_int, c_void};

/// Opaque `struct ibv_device`.
pub enum ibv_device {}
/// The leading field of `struct ibv_pd`.
#[repr(C)]
pub struct ibv_pd {
    /// Its context.
    pub context: *mut ibv_context,
}
/// Opaque `struct ibv_cq`.
pub enum ibv_cq {}
/// Opaque `struct ibv_srq`.
pub enum ibv_srq {}
/// Opaque `struct ibv_comp_channel`.
pub enum ibv_comp_channel {}

/// The leading fields of `struct ibv_context` (the rest is libibverbs's).
#[repr(C)]
pub struct ibv_context {
    /// The device.
    pub device: *mut ibv_device,
}

/// The leading fields of `struct ibv_qp` (the rest is libibverbs's).
#[repr(C)]
pub struct ibv_qp {
    /// Its context.
    pub context: *mut ibv_context,
    /// The program's QP context.
    pub qp_context: *mut c_void,
    /// Its protection domain.
    pub pd: *mut ibv_pd,
    /// Send CQ.
    pub send_cq: *mut ibv_cq,
    /// Receive CQ.
    pub recv_cq: *mut ibv_cq,
    /// Shared receive queue, if any.
    pub srq: *mut ibv_srq,
    /// Kernel handle.
    pub handle: u32,
    /// QP number.
    pub qp_num: u32,
}

/// `struct ibv_qp_init_attr`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_qp_init_attr {
    /// The program's QP context.
    pub qp_context: *mut c_void,
    /// Send CQ.
    pub send_cq: *mut ibv_cq,
    /// Receive CQ.
    pub recv_cq: *mut ibv_cq,
    /// SRQ.
    pub srq: *mut ibv_srq,
    /// Capabilities.
    pub cap: ibv_qp_cap,
    /// `enum ibv_qp_type`.
    pub qp_type: c_int,
    /// Every send signals a completion.
    pub sq_sig_all: c_int,
}

/// `struct ibv_rx_hash_conf`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_rx_hash_conf {
    /// Hash function.
    pub rx_hash_function: u8,
    /// Key length.
    pub rx_hash_key_len: u8,
    /// Key.
    pub rx_hash_key: *mut u8,
    /// Fields hashed.
    pub rx_hash_fields_mask: u64,
}

/// `struct ibv_qp_init_attr_ex`: starts with the fields of [`ibv_qp_init_attr`] (not
/// its trailing padding: `comp_mask` follows `sq_sig_all` directly).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_qp_init_attr_ex {
    /// The program's QP context.
    pub qp_context: *mut c_void,
    /// Send CQ.
    pub send_cq: *mut ibv_cq,
    /// Receive CQ.
    pub recv_cq: *mut ibv_cq,
    /// SRQ.
    pub srq: *mut ibv_srq,
    /// Capabilities.
    pub cap: ibv_qp_cap,
    /// `enum ibv_qp_type`.
    pub qp_type: c_int,
    /// Every send signals a completion.
    pub sq_sig_all: c_int,
    /// Which of the fields below are valid (`IBV_QP_INIT_ATTR_*`).
    pub comp_mask: u32,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// XRC domain.
    pub xrcd: *mut c_void,
    /// Creation flags.
    pub create_flags: u32,
    /// TSO header size.
    pub max_tso_header: u16,
    /// RSS indirection table.
    pub rwq_ind_tbl: *mut c_void,
    /// RSS hash.
    pub rx_hash_conf: ibv_rx_hash_conf,
    /// Source QPN.
    pub source_qpn: u32,
    /// `ibv_wr_*` opcodes wanted.
    pub send_ops_flags: u64,
}

impl ibv_qp_init_attr_ex {
    /// The extended attributes of `rdma_create_qp`: `attr` and a PD.
    pub fn from_basic(a: &ibv_qp_init_attr, pd: *mut ibv_pd) -> Self {
        ibv_qp_init_attr_ex {
            qp_context: a.qp_context,
            send_cq: a.send_cq,
            recv_cq: a.recv_cq,
            srq: a.srq,
            cap: a.cap,
            qp_type: a.qp_type,
            sq_sig_all: a.sq_sig_all,
            comp_mask: IBV_QP_INIT_ATTR_PD,
            pd,
            xrcd: std::ptr::null_mut(),
            create_flags: 0,
            max_tso_header: 0,
            rwq_ind_tbl: std::ptr::null_mut(),
            rx_hash_conf: ibv_rx_hash_conf {
                rx_hash_function: 0,
                rx_hash_key_len: 0,
                rx_hash_key: std::ptr::null_mut(),
                rx_hash_fields_mask: 0,
            },
            source_qpn: 0,
            send_ops_flags: 0,
        }
    }

    /// The fields shared with `ibv_qp_init_attr`.
    pub fn basic(&self) -> ibv_qp_init_attr {
        ibv_qp_init_attr {
            qp_context: self.qp_context,
            send_cq: self.send_cq,
            recv_cq: self.recv_cq,
            srq: self.srq,
            cap: self.cap,
            qp_type: self.qp_type,
            sq_sig_all: self.sq_sig_all,
        }
    }
}

/// `struct ibv_srq_init_attr`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_srq_init_attr {
    /// The program's SRQ context.
    pub srq_context: *mut c_void,
    /// Attributes.
    pub attr: ibv_srq_attr,
}

/// `struct ibv_srq_init_attr_ex`: starts with the fields of [`ibv_srq_init_attr`] (not
/// its trailing padding).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_srq_init_attr_ex {
    /// The program's SRQ context.
    pub srq_context: *mut c_void,
    /// Attributes.
    pub attr: ibv_srq_attr,
    /// Which of the fields below are valid (`IBV_SRQ_INIT_ATTR_*`).
    pub comp_mask: u32,
    /// `enum ibv_srq_type`.
    pub srq_type: c_int,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// XRC domain.
    pub xrcd: *mut c_void,
    /// XRC CQ.
    pub cq: *mut ibv_cq,
    /// Tag matching capabilities.
    pub tm_cap: [u32; 2],
}

/// `struct ibv_ece`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ibv_ece {
    /// Vendor (IEEE OUI).
    pub vendor_id: u32,
    /// Vendor options.
    pub options: u32,
    /// Extensions.
    pub comp_mask: u32,
}

/// `struct ibv_sa_path_rec` (`infiniband/sa.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ibv_sa_path_rec {
    /// Destination GID.
    pub dgid: ibv_gid,
    /// Source GID.
    pub sgid: ibv_gid,
    /// Destination LID (big-endian).
    pub dlid: u16,
    /// Source LID (big-endian).
    pub slid: u16,
    /// Raw traffic.
    pub raw_traffic: c_int,
    /// Flow label (big-endian).
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Reversible.
    pub reversible: c_int,
    /// Number of paths.
    pub numb_path: u8,
    /// P_Key (big-endian).
    pub pkey: u16,
    /// Service level.
    pub sl: u8,
    /// MTU selector.
    pub mtu_selector: u8,
    /// `enum ibv_mtu`.
    pub mtu: u8,
    /// Rate selector.
    pub rate_selector: u8,
    /// Rate.
    pub rate: u8,
    /// Packet lifetime selector.
    pub packet_life_time_selector: u8,
    /// Packet lifetime.
    pub packet_life_time: u8,
    /// Preference.
    pub preference: u8,
}

/// `struct rdma_ib_addr`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rdma_ib_addr {
    /// Source GID.
    pub sgid: ibv_gid,
    /// Destination GID.
    pub dgid: ibv_gid,
    /// P_Key (big-endian).
    pub pkey: u16,
}

/// `struct rdma_addr`: source and destination (each a `sockaddr_storage` union) and the
/// IB addresses.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rdma_addr {
    /// Source address.
    pub src: libc::sockaddr_storage,
    /// Destination address.
    pub dst: libc::sockaddr_storage,
    /// GIDs and P_Key.
    pub ibaddr: rdma_ib_addr,
}

/// `struct rdma_route`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rdma_route {
    /// Addresses.
    pub addr: rdma_addr,
    /// Path records (this library allocates one after route resolution).
    pub path_rec: *mut ibv_sa_path_rec,
    /// How many.
    pub num_paths: c_int,
}

/// `struct rdma_event_channel`.
#[repr(C)]
pub struct rdma_event_channel {
    /// The pollable descriptor.
    pub fd: c_int,
}

/// `struct rdma_cm_id`.
#[repr(C)]
pub struct rdma_cm_id {
    /// The device context (NULL until the id is bound to an address of a device).
    pub verbs: *mut ibv_context,
    /// The event channel.
    pub channel: *mut rdma_event_channel,
    /// The program's context.
    pub context: *mut c_void,
    /// The QP made by `rdma_create_qp`.
    pub qp: *mut ibv_qp,
    /// Addresses and path.
    pub route: rdma_route,
    /// `enum rdma_port_space`.
    pub ps: c_int,
    /// Port of the device.
    pub port_num: u8,
    /// The last event, for ids without a channel (synchronous use).
    pub event: *mut rdma_cm_event,
    /// Send completion channel made by `rdma_create_qp`.
    pub send_cq_channel: *mut ibv_comp_channel,
    /// Send CQ made by `rdma_create_qp`.
    pub send_cq: *mut ibv_cq,
    /// Receive completion channel made by `rdma_create_qp`.
    pub recv_cq_channel: *mut ibv_comp_channel,
    /// Receive CQ made by `rdma_create_qp`.
    pub recv_cq: *mut ibv_cq,
    /// SRQ made by `rdma_create_srq`.
    pub srq: *mut ibv_srq,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// `enum ibv_qp_type`.
    pub qp_type: c_int,
}

/// `struct rdma_conn_param`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rdma_conn_param {
    /// Private data.
    pub private_data: *const c_void,
    /// Its length.
    pub private_data_len: u8,
    /// Incoming RDMA reads/atomics accepted.
    pub responder_resources: u8,
    /// Outgoing RDMA reads/atomics.
    pub initiator_depth: u8,
    /// Flow control.
    pub flow_control: u8,
    /// Transport retries.
    pub retry_count: u8,
    /// RNR retries.
    pub rnr_retry_count: u8,
    /// The QP uses an SRQ (when no QP is on the id).
    pub srq: u8,
    /// QP number (when no QP is on the id; in events: the remote QPN).
    pub qp_num: u32,
}

impl Default for rdma_conn_param {
    fn default() -> Self {
        rdma_conn_param {
            private_data: std::ptr::null(),
            private_data_len: 0,
            responder_resources: 0,
            initiator_depth: 0,
            flow_control: 0,
            retry_count: 0,
            rnr_retry_count: 0,
            srq: 0,
            qp_num: 0,
        }
    }
}

/// `struct rdma_ud_param`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rdma_ud_param {
    /// Private data.
    pub private_data: *const c_void,
    /// Its length.
    pub private_data_len: u8,
    /// Address of the remote end.
    pub ah_attr: ibv_ah_attr,
    /// Remote QPN.
    pub qp_num: u32,
    /// Q_Key.
    pub qkey: u32,
}

/// The `param` union of `struct rdma_cm_event`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union rdma_cm_event_param {
    /// Connected port spaces.
    pub conn: rdma_conn_param,
    /// Datagram port spaces.
    pub ud: rdma_ud_param,
}

/// `struct rdma_cm_event`.
#[repr(C)]
pub struct rdma_cm_event {
    /// The id the event is about (for a connection request: the new id).
    pub id: *mut rdma_cm_id,
    /// For a connection request: the listening id.
    pub listen_id: *mut rdma_cm_id,
    /// `enum rdma_cm_event_type`.
    pub event: c_int,
    /// 0, or an error.
    pub status: c_int,
    /// Connection parameters.
    pub param: rdma_cm_event_param,
}

/// `struct rdma_addrinfo`.
#[repr(C)]
pub struct rdma_addrinfo {
    /// `RAI_*`.
    pub ai_flags: c_int,
    /// Address family.
    pub ai_family: c_int,
    /// `enum ibv_qp_type`.
    pub ai_qp_type: c_int,
    /// `enum rdma_port_space`.
    pub ai_port_space: c_int,
    /// Source address length.
    pub ai_src_len: libc::socklen_t,
    /// Destination address length.
    pub ai_dst_len: libc::socklen_t,
    /// Source address.
    pub ai_src_addr: *mut libc::sockaddr,
    /// Destination address.
    pub ai_dst_addr: *mut libc::sockaddr,
    /// Source name.
    pub ai_src_canonname: *mut c_char,
    /// Destination name.
    pub ai_dst_canonname: *mut c_char,
    /// Route length.
    pub ai_route_len: usize,
    /// Route.
    pub ai_route: *mut c_void,
    /// Connect data length.
    pub ai_connect_len: usize,
    /// Connect data (prepended to `rdma_connect`'s private data).
    pub ai_connect: *mut c_void,
    /// Next result.
    pub ai_next: *mut rdma_addrinfo,
}

/// `enum rdma_cm_event_type`.
pub mod event {
    #![allow(missing_docs)]
    use std::ffi::c_int;
    pub const ADDR_RESOLVED: c_int = 0;
    pub const ADDR_ERROR: c_int = 1;
    pub const ROUTE_RESOLVED: c_int = 2;
    pub const ROUTE_ERROR: c_int = 3;
    pub const CONNECT_REQUEST: c_int = 4;
    pub const CONNECT_RESPONSE: c_int = 5;
    pub const CONNECT_ERROR: c_int = 6;
    pub const UNREACHABLE: c_int = 7;
    pub const REJECTED: c_int = 8;
    pub const ESTABLISHED: c_int = 9;
    pub const DISCONNECTED: c_int = 10;
    pub const DEVICE_REMOVAL: c_int = 11;
    pub const MULTICAST_JOIN: c_int = 12;
    pub const MULTICAST_ERROR: c_int = 13;
    pub const ADDR_CHANGE: c_int = 14;
    pub const TIMEWAIT_EXIT: c_int = 15;
}

/// `RDMA_PS_TCP`.
pub const RDMA_PS_TCP: c_int = 0x0106;
/// `RDMA_PS_UDP`.
pub const RDMA_PS_UDP: c_int = 0x0111;
/// `RDMA_PS_IB`.
pub const RDMA_PS_IB: c_int = 0x013F;
/// `RDMA_MAX_RESP_RES`: "as many as the device allows".
pub const RDMA_MAX_RESP_RES: u8 = 0xFF;
/// `RDMA_MAX_INIT_DEPTH`: "as many as the device allows".
pub const RDMA_MAX_INIT_DEPTH: u8 = 0xFF;
/// `RAI_PASSIVE`.
pub const RAI_PASSIVE: c_int = 1;
/// `RAI_NUMERICHOST`.
pub const RAI_NUMERICHOST: c_int = 2;
/// `AF_IB`.
pub const AF_IB: c_int = 27;
/// `RDMA_OPTION_ID`.
pub const RDMA_OPTION_ID: c_int = 0;
/// `RDMA_OPTION_ID_TOS`.
pub const RDMA_OPTION_ID_TOS: c_int = 0;
/// `RDMA_OPTION_ID_REUSEADDR`.
pub const RDMA_OPTION_ID_REUSEADDR: c_int = 1;
/// `RDMA_OPTION_ID_AFONLY`.
pub const RDMA_OPTION_ID_AFONLY: c_int = 2;
/// `RDMA_OPTION_ID_ACK_TIMEOUT`.
pub const RDMA_OPTION_ID_ACK_TIMEOUT: c_int = 3;

/// `IBV_QPT_RC`.
pub const IBV_QPT_RC: c_int = 2;
/// `IBV_QPT_UD`.
pub const IBV_QPT_UD: c_int = 4;
/// `IBV_QPS_INIT`.
pub const IBV_QPS_INIT: c_int = 1;
/// `IBV_QPS_RTR`.
pub const IBV_QPS_RTR: c_int = 2;
/// `IBV_QPS_RTS`.
pub const IBV_QPS_RTS: c_int = 3;
/// `IBV_QPS_ERR`.
pub const IBV_QPS_ERR: c_int = 6;
/// `IBV_QP_STATE`.
pub const IBV_QP_STATE: c_int = 1 << 0;
/// `IBV_QP_ACCESS_FLAGS`.
pub const IBV_QP_ACCESS_FLAGS: c_int = 1 << 3;
/// `IBV_QP_PKEY_INDEX`.
pub const IBV_QP_PKEY_INDEX: c_int = 1 << 4;
/// `IBV_QP_PORT`.
pub const IBV_QP_PORT: c_int = 1 << 5;
/// `IBV_QP_AV`.
pub const IBV_QP_AV: c_int = 1 << 7;
/// `IBV_QP_PATH_MTU`.
pub const IBV_QP_PATH_MTU: c_int = 1 << 8;
/// `IBV_QP_TIMEOUT`.
pub const IBV_QP_TIMEOUT: c_int = 1 << 9;
/// `IBV_QP_RETRY_CNT`.
pub const IBV_QP_RETRY_CNT: c_int = 1 << 10;
/// `IBV_QP_RNR_RETRY`.
pub const IBV_QP_RNR_RETRY: c_int = 1 << 11;
/// `IBV_QP_RQ_PSN`.
pub const IBV_QP_RQ_PSN: c_int = 1 << 12;
/// `IBV_QP_MAX_QP_RD_ATOMIC`.
pub const IBV_QP_MAX_QP_RD_ATOMIC: c_int = 1 << 13;
/// `IBV_QP_MIN_RNR_TIMER`.
pub const IBV_QP_MIN_RNR_TIMER: c_int = 1 << 15;
/// `IBV_QP_SQ_PSN`.
pub const IBV_QP_SQ_PSN: c_int = 1 << 16;
/// `IBV_QP_MAX_DEST_RD_ATOMIC`.
pub const IBV_QP_MAX_DEST_RD_ATOMIC: c_int = 1 << 17;
/// `IBV_QP_DEST_QPN`.
pub const IBV_QP_DEST_QPN: c_int = 1 << 20;
/// `IBV_ACCESS_REMOTE_WRITE`.
pub const IBV_ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// `IBV_ACCESS_REMOTE_READ`.
pub const IBV_ACCESS_REMOTE_READ: u32 = 1 << 2;
/// `IBV_ACCESS_REMOTE_ATOMIC`.
pub const IBV_ACCESS_REMOTE_ATOMIC: u32 = 1 << 3;
/// `IBV_QP_INIT_ATTR_PD`.
pub const IBV_QP_INIT_ATTR_PD: u32 = 1 << 0;
/// `IBV_SRQ_INIT_ATTR_TYPE`.
pub const IBV_SRQ_INIT_ATTR_TYPE: u32 = 1 << 0;
/// `IBV_SRQ_INIT_ATTR_PD`.
pub const IBV_SRQ_INIT_ATTR_PD: u32 = 1 << 1;
/// `IBV_SRQT_BASIC`.
pub const IBV_SRQT_BASIC: c_int = 0;

/// Where `verbs.h`'s inline `verbs_get_ctx_op` finds the extended operations of a
/// context: `struct verbs_context` ends with `..., create_qp_ex, get_srq_num,
/// create_srq_ex, open_xrcd, close_xrcd, _ABI_placeholder3, sz, context`.
pub mod vctx {
    /// Offset of `ibv_context.abi_compat` (`UINTPTR_MAX` marks a `verbs_context`).
    pub const ABI_COMPAT: usize = 320;
    /// Distance from `ibv_context` back to `verbs_context.sz`.
    pub const SZ_BEFORE: usize = 8;
    /// Distance from `ibv_context` back to `verbs_context.create_qp_ex`.
    pub const CREATE_QP_EX_BEFORE: usize = 56;
    /// Distance from `ibv_context` back to `verbs_context.create_srq_ex`.
    pub const CREATE_SRQ_EX_BEFORE: usize = 40;
    /// `offsetof(struct verbs_context, context)`.
    pub const CONTEXT: usize = 320;
    /// `sizeof(struct verbs_context)`.
    pub const SIZE: usize = 648;
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaroce_cabi::verbs_h::ibv_global_route;
    use metaroce_cabi::{c_offsetof as off, c_sizeof as size};

    /// Every size and offset this module relies on, as (C expression, Rust value).
    fn checks() -> Vec<(&'static str, usize)> {
        vec![
            size!("union ibv_gid", ibv_gid),
            off!("struct ibv_qp, qp_num", ibv_qp, qp_num),
            off!("struct ibv_qp, srq", ibv_qp, srq),
            off!("struct ibv_qp, pd", ibv_qp, pd),
            size!("struct ibv_qp_init_attr", ibv_qp_init_attr),
            off!("struct ibv_qp_init_attr, cap", ibv_qp_init_attr, cap),
            off!(
                "struct ibv_qp_init_attr, sq_sig_all",
                ibv_qp_init_attr,
                sq_sig_all
            ),
            size!("struct ibv_qp_init_attr_ex", ibv_qp_init_attr_ex),
            off!(
                "struct ibv_qp_init_attr_ex, comp_mask",
                ibv_qp_init_attr_ex,
                comp_mask
            ),
            off!("struct ibv_qp_init_attr_ex, pd", ibv_qp_init_attr_ex, pd),
            off!(
                "struct ibv_qp_init_attr_ex, rx_hash_conf",
                ibv_qp_init_attr_ex,
                rx_hash_conf
            ),
            off!(
                "struct ibv_qp_init_attr_ex, source_qpn",
                ibv_qp_init_attr_ex,
                source_qpn
            ),
            off!(
                "struct ibv_qp_init_attr_ex, send_ops_flags",
                ibv_qp_init_attr_ex,
                send_ops_flags
            ),
            size!("struct ibv_srq_init_attr", ibv_srq_init_attr),
            size!("struct ibv_srq_init_attr_ex", ibv_srq_init_attr_ex),
            off!(
                "struct ibv_srq_init_attr_ex, comp_mask",
                ibv_srq_init_attr_ex,
                comp_mask
            ),
            off!(
                "struct ibv_srq_init_attr_ex, srq_type",
                ibv_srq_init_attr_ex,
                srq_type
            ),
            off!("struct ibv_srq_init_attr_ex, pd", ibv_srq_init_attr_ex, pd),
            off!(
                "struct ibv_srq_init_attr_ex, tm_cap",
                ibv_srq_init_attr_ex,
                tm_cap
            ),
            size!("struct ibv_ah_attr", ibv_ah_attr),
            off!("struct ibv_ah_attr, dlid", ibv_ah_attr, dlid),
            off!("struct ibv_ah_attr, is_global", ibv_ah_attr, is_global),
            off!("struct ibv_ah_attr, port_num", ibv_ah_attr, port_num),
            off!(
                "struct ibv_global_route, sgid_index",
                ibv_global_route,
                sgid_index
            ),
            off!(
                "struct ibv_global_route, traffic_class",
                ibv_global_route,
                traffic_class
            ),
            size!("struct ibv_qp_attr", ibv_qp_attr),
            off!("struct ibv_qp_attr, dest_qp_num", ibv_qp_attr, dest_qp_num),
            off!(
                "struct ibv_qp_attr, qp_access_flags",
                ibv_qp_attr,
                qp_access_flags
            ),
            off!("struct ibv_qp_attr, ah_attr", ibv_qp_attr, ah_attr),
            off!("struct ibv_qp_attr, pkey_index", ibv_qp_attr, pkey_index),
            off!(
                "struct ibv_qp_attr, max_rd_atomic",
                ibv_qp_attr,
                max_rd_atomic
            ),
            off!(
                "struct ibv_qp_attr, min_rnr_timer",
                ibv_qp_attr,
                min_rnr_timer
            ),
            off!("struct ibv_qp_attr, port_num", ibv_qp_attr, port_num),
            off!("struct ibv_qp_attr, rnr_retry", ibv_qp_attr, rnr_retry),
            off!("struct ibv_qp_attr, rate_limit", ibv_qp_attr, rate_limit),
            size!("struct ibv_port_attr", ibv_port_attr),
            off!(
                "struct ibv_port_attr, active_mtu",
                ibv_port_attr,
                active_mtu
            ),
            off!("struct ibv_port_attr, lid", ibv_port_attr, lid),
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
            size!("struct ibv_ece", ibv_ece),
            size!("struct ibv_sa_path_rec", ibv_sa_path_rec),
            off!("struct ibv_sa_path_rec, dlid", ibv_sa_path_rec, dlid),
            off!(
                "struct ibv_sa_path_rec, reversible",
                ibv_sa_path_rec,
                reversible
            ),
            off!("struct ibv_sa_path_rec, pkey", ibv_sa_path_rec, pkey),
            off!("struct ibv_sa_path_rec, mtu", ibv_sa_path_rec, mtu),
            off!(
                "struct ibv_sa_path_rec, preference",
                ibv_sa_path_rec,
                preference
            ),
            size!("struct rdma_ib_addr", rdma_ib_addr),
            off!("struct rdma_ib_addr, pkey", rdma_ib_addr, pkey),
            size!("struct rdma_addr", rdma_addr),
            off!("struct rdma_addr, dst_addr", rdma_addr, dst),
            off!("struct rdma_addr, addr", rdma_addr, ibaddr),
            size!("struct rdma_route", rdma_route),
            off!("struct rdma_route, path_rec", rdma_route, path_rec),
            off!("struct rdma_route, num_paths", rdma_route, num_paths),
            size!("struct rdma_event_channel", rdma_event_channel),
            size!("struct rdma_cm_id", rdma_cm_id),
            off!("struct rdma_cm_id, verbs", rdma_cm_id, verbs),
            off!("struct rdma_cm_id, channel", rdma_cm_id, channel),
            off!("struct rdma_cm_id, context", rdma_cm_id, context),
            off!("struct rdma_cm_id, qp", rdma_cm_id, qp),
            off!("struct rdma_cm_id, route", rdma_cm_id, route),
            off!("struct rdma_cm_id, ps", rdma_cm_id, ps),
            off!("struct rdma_cm_id, port_num", rdma_cm_id, port_num),
            off!("struct rdma_cm_id, event", rdma_cm_id, event),
            off!(
                "struct rdma_cm_id, send_cq_channel",
                rdma_cm_id,
                send_cq_channel
            ),
            off!("struct rdma_cm_id, send_cq", rdma_cm_id, send_cq),
            off!(
                "struct rdma_cm_id, recv_cq_channel",
                rdma_cm_id,
                recv_cq_channel
            ),
            off!("struct rdma_cm_id, recv_cq", rdma_cm_id, recv_cq),
            off!("struct rdma_cm_id, srq", rdma_cm_id, srq),
            off!("struct rdma_cm_id, pd", rdma_cm_id, pd),
            off!("struct rdma_cm_id, qp_type", rdma_cm_id, qp_type),
            size!("struct rdma_conn_param", rdma_conn_param),
            off!(
                "struct rdma_conn_param, private_data_len",
                rdma_conn_param,
                private_data_len
            ),
            off!(
                "struct rdma_conn_param, responder_resources",
                rdma_conn_param,
                responder_resources
            ),
            off!(
                "struct rdma_conn_param, initiator_depth",
                rdma_conn_param,
                initiator_depth
            ),
            off!(
                "struct rdma_conn_param, flow_control",
                rdma_conn_param,
                flow_control
            ),
            off!(
                "struct rdma_conn_param, retry_count",
                rdma_conn_param,
                retry_count
            ),
            off!(
                "struct rdma_conn_param, rnr_retry_count",
                rdma_conn_param,
                rnr_retry_count
            ),
            off!("struct rdma_conn_param, srq", rdma_conn_param, srq),
            off!("struct rdma_conn_param, qp_num", rdma_conn_param, qp_num),
            size!("struct rdma_ud_param", rdma_ud_param),
            off!("struct rdma_ud_param, ah_attr", rdma_ud_param, ah_attr),
            off!("struct rdma_ud_param, qp_num", rdma_ud_param, qp_num),
            off!("struct rdma_ud_param, qkey", rdma_ud_param, qkey),
            size!("struct rdma_cm_event", rdma_cm_event),
            off!("struct rdma_cm_event, listen_id", rdma_cm_event, listen_id),
            off!("struct rdma_cm_event, event", rdma_cm_event, event),
            off!("struct rdma_cm_event, status", rdma_cm_event, status),
            off!("struct rdma_cm_event, param", rdma_cm_event, param),
            size!("struct rdma_addrinfo", rdma_addrinfo),
            off!(
                "struct rdma_addrinfo, ai_src_len",
                rdma_addrinfo,
                ai_src_len
            ),
            off!(
                "struct rdma_addrinfo, ai_src_addr",
                rdma_addrinfo,
                ai_src_addr
            ),
            off!(
                "struct rdma_addrinfo, ai_route_len",
                rdma_addrinfo,
                ai_route_len
            ),
            off!(
                "struct rdma_addrinfo, ai_connect_len",
                rdma_addrinfo,
                ai_connect_len
            ),
            off!(
                "struct rdma_addrinfo, ai_connect",
                rdma_addrinfo,
                ai_connect
            ),
            off!("struct rdma_addrinfo, ai_next", rdma_addrinfo, ai_next),
            ("offsetof(struct ibv_context, abi_compat)", vctx::ABI_COMPAT),
            (
                "offsetof(struct verbs_context, context) - offsetof(struct verbs_context, sz)",
                vctx::SZ_BEFORE,
            ),
            (
                "offsetof(struct verbs_context, context) - offsetof(struct verbs_context, create_qp_ex)",
                vctx::CREATE_QP_EX_BEFORE,
            ),
            (
                "offsetof(struct verbs_context, context) - offsetof(struct verbs_context, create_srq_ex)",
                vctx::CREATE_SRQ_EX_BEFORE,
            ),
            ("sizeof(struct verbs_context)", vctx::SIZE),
            ("offsetof(struct verbs_context, context)", vctx::CONTEXT),
            ("IBV_QPT_UD", IBV_QPT_UD as usize),
            ("IBV_QP_DEST_QPN", IBV_QP_DEST_QPN as usize),
            (
                "IBV_QP_MAX_DEST_RD_ATOMIC",
                IBV_QP_MAX_DEST_RD_ATOMIC as usize,
            ),
            ("IBV_SRQ_INIT_ATTR_PD", IBV_SRQ_INIT_ATTR_PD as usize),
            ("RDMA_CM_EVENT_TIMEWAIT_EXIT", event::TIMEWAIT_EXIT as usize),
            ("RDMA_PS_IB", RDMA_PS_IB as usize),
            ("AF_IB", AF_IB as usize),
        ]
    }

    /// Compiles a C program printing each expression against the installed rdma-core
    /// headers (`librdmacm-dev`) and compares it with the Rust layout.
    #[test]
    fn layout_matches_rdma_cma_h() {
        metaroce_cabi::check::require_packages(&[
            ("/usr/include/rdma/rdma_cma.h", "librdmacm-dev"),
            ("/usr/include/infiniband/verbs.h", "libibverbs-dev"),
        ]);
        let checks = checks();
        let exprs: Vec<&str> = checks.iter().map(|(e, _)| *e).collect();
        let got = metaroce_cabi::check::c_values(
            &["infiniband/verbs.h", "infiniband/sa.h", "rdma/rdma_cma.h"],
            &exprs,
        )
        .expect("librdmacm-dev and libibverbs-dev are needed for this test");
        assert_eq!(got.len(), checks.len());
        let mismatches: Vec<String> = checks
            .iter()
            .zip(&got)
            .filter(|((_, rust), c)| *rust != **c)
            .map(|((expr, rust), c)| format!("{expr}: C {c}, Rust {rust}"))
            .collect();
        assert!(
            mismatches.is_empty(),
            "layout mismatches:\n{}",
            mismatches.join("\n")
        );
    }
}
