//! The extended QP API: `ibv_create_qp_ex` (through `verbs_context.create_qp_ex`),
//! `ibv_qp_to_qp_ex`, and the `ibv_wr_*` work-request builder of `struct ibv_qp_ex`.
//!
//! A program builds work requests between `ibv_wr_start` and `ibv_wr_complete`: each
//! `ibv_wr_<op>` starts one (with the `wr_id` and `wr_flags` it set in the `ibv_qp_ex`),
//! `ibv_wr_set_sge*` / `ibv_wr_set_inline_data*` give it its data, and
//! `ibv_wr_complete` posts them in order. A mistake while building (an operation the QP
//! was not created for, data before any operation, too many SGEs or inline bytes, an
//! operation MetaRoCE does not have) is reported by `ibv_wr_complete`, which then posts
//! nothing; `ibv_wr_abort` drops what was built.

use std::ffi::{c_int, c_void};

use metaroce_driver::verbs::{MAX_SGE, Payload, SendOp, SendRequest, Sge};

use crate::abi::*;
use crate::ffi::{Errno, guard, out, ret_ptr, set_errno};
use crate::objects::{Qp, lock, reg};
use crate::verbs::resources::create_qp;

/// The `IBV_QP_EX_WITH_*` operations MetaRoCE has.
const SUPPORTED_OPS: u64 = IBV_QP_EX_WITH_RDMA_WRITE
    | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
    | IBV_QP_EX_WITH_SEND
    | IBV_QP_EX_WITH_SEND_WITH_IMM
    | IBV_QP_EX_WITH_RDMA_READ
    | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
    | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

/// The data of a work request being built.
enum Data {
    /// Registered buffers.
    Sges(Vec<Sge>),
    /// Bytes copied when they were set (`IBV_SEND_INLINE` semantics).
    Inline(Vec<u8>),
}

/// One work request being built.
struct Pending {
    wr_id: u64,
    flags: u32,
    op: SendOp,
    data: Data,
}

/// The work requests of one `ibv_wr_start` … `ibv_wr_complete` sequence, and the
/// first mistake made while building them.
#[derive(Default)]
pub struct WrBuilder {
    wrs: Vec<Pending>,
    error: Option<Errno>,
}

impl WrBuilder {
    fn fail(&mut self, e: Errno) {
        self.error.get_or_insert(e);
    }
}

/// The `ibv_qp_ex` of a new QP around `base`: with `send_ops` its builder functions are
/// set (every one: those of operations MetaRoCE does not have record `EOPNOTSUPP`).
pub fn qp_ex(base: ibv_qp, send_ops: u64) -> ibv_qp_ex {
    let on = send_ops != 0;
    ibv_qp_ex {
        qp_base: base,
        comp_mask: 0,
        wr_id: 0,
        wr_flags: 0,
        wr_atomic_cmp_swp: on.then_some(wr_atomic_cmp_swp as WrCmpSwpFn),
        wr_atomic_fetch_add: on.then_some(wr_atomic_fetch_add as WrFetchAddFn),
        wr_bind_mw: on.then_some(wr_bind_mw as WrBindMwFn),
        wr_local_inv: on.then_some(wr_unsupported_u32 as WrU32Fn),
        wr_rdma_read: on.then_some(wr_rdma_read as WrRdmaFn),
        wr_rdma_write: on.then_some(wr_rdma_write as WrRdmaFn),
        wr_rdma_write_imm: on.then_some(wr_rdma_write_imm as WrRdmaImmFn),
        wr_send: on.then_some(wr_send as WrFn),
        wr_send_imm: on.then_some(wr_send_imm as WrU32Fn),
        wr_send_inv: on.then_some(wr_unsupported_u32 as WrU32Fn),
        wr_send_tso: on.then_some(wr_send_tso as WrSendTsoFn),
        wr_set_ud_addr: on.then_some(wr_set_ud_addr as WrSetUdAddrFn),
        wr_set_xrc_srqn: on.then_some(wr_unsupported_u32 as WrU32Fn),
        wr_set_inline_data: on.then_some(wr_set_inline_data as WrInlineFn),
        wr_set_inline_data_list: on.then_some(wr_set_inline_data_list as WrInlineListFn),
        wr_set_sge: on.then_some(wr_set_sge as WrSgeFn),
        wr_set_sge_list: on.then_some(wr_set_sge_list as WrSgeListFn),
        wr_start: on.then_some(wr_start as WrFn),
        wr_complete: on.then_some(wr_complete as WrCompleteFn),
        wr_abort: on.then_some(wr_abort as WrFn),
        wr_atomic_write: on.then_some(wr_atomic_write as WrAtomicWriteFn),
    }
}

/// `verbs_context.create_qp_ex`, behind the header's inline `ibv_create_qp_ex`: an RC
/// QP of `attr.pd` (which must be given), with the `ibv_wr_*` builder for the
/// operations in `send_ops_flags` (RDMA WRITE with or without immediate, SEND with or
/// without immediate, RDMA READ, the two atomics; others: `EOPNOTSUPP`). Other
/// extended attributes (XRC, TSO, RSS, creation flags) are refused with `EOPNOTSUPP`.
pub unsafe extern "C" fn create_qp_ex(
    ctx: *mut ibv_context,
    attr: *mut ibv_qp_init_attr_ex,
) -> *mut ibv_qp {
    ret_ptr(|| {
        // SAFETY: a non-NULL `attr` points to the caller's extended init attributes.
        let a = unsafe { out(attr) }?;
        let known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
        if a.comp_mask & IBV_QP_INIT_ATTR_PD == 0 {
            return Err(libc::EINVAL);
        }
        if a.comp_mask & !known != 0 {
            return Err(libc::EOPNOTSUPP);
        }
        let send_ops = if a.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS != 0 {
            a.send_ops_flags
        } else {
            0
        };
        if send_ops & !SUPPORTED_OPS != 0 {
            return Err(libc::EOPNOTSUPP);
        }
        let pd = reg().pds.get(a.pd)?;
        if !std::ptr::eq(crate::objects::Object::c_ptr(&*pd.ctx), ctx) {
            return Err(libc::EINVAL);
        }
        let mut init = ibv_qp_init_attr {
            qp_context: a.qp_context,
            send_cq: a.send_cq,
            recv_cq: a.recv_cq,
            srq: a.srq,
            cap: a.cap,
            qp_type: a.qp_type,
            sq_sig_all: a.sq_sig_all,
        };
        let qp = create_qp(a.pd, &mut init, send_ops)?;
        a.cap = init.cap;
        Ok(qp)
    })
}

/// `ibv_qp_to_qp_ex`: the `ibv_qp_ex` of a QP created with `send_ops_flags`; NULL
/// (`EOPNOTSUPP`) for any other QP, as rdma-core's.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_qp_to_qp_ex(qp: *mut ibv_qp) -> *mut ibv_qp_ex {
    ret_ptr(|| {
        let qp = reg().qps.get(qp)?;
        if qp.send_ops == 0 {
            return Err(libc::EOPNOTSUPP);
        }
        Ok(qp.c.get())
    })
}

/// Runs `f` on the QP behind a builder call's `ibv_qp_ex` (nothing for a handle that
/// is not a live QP's: `ibv_wr_complete` then fails).
fn with_qp(qp: *mut ibv_qp_ex, f: impl FnOnce(&Qp, &mut WrBuilder)) {
    guard((), || {
        if let Ok(q) = reg().qps.get(qp.cast::<ibv_qp>()) {
            let mut b = lock(&q.builder);
            f(&q, &mut b);
        }
    })
}

/// Starts a work request of `op` (needing `flag` among the QP's `send_ops`), with the
/// `wr_id` and `wr_flags` the program set.
fn begin(qp: *mut ibv_qp_ex, flag: u64, op: SendOp) {
    with_qp(qp, |q, b| {
        if q.send_ops & flag == 0 {
            return b.fail(libc::EINVAL);
        }
        // SAFETY: `wr_id` and `wr_flags` are plain fields of our C view, which the
        // program writes before calling the builder, on its own thread.
        let (wr_id, flags) = unsafe { ((*q.c.get()).wr_id, (*q.c.get()).wr_flags) };
        b.wrs.push(Pending {
            wr_id,
            flags,
            op,
            data: Data::Sges(Vec::new()),
        });
    })
}

/// Gives the work request being built its data.
fn set_data(qp: *mut ibv_qp_ex, data: impl FnOnce(&Qp) -> Result<Data, Errno>) {
    with_qp(qp, |q, b| match (data(q), b.wrs.last_mut()) {
        (Ok(d), Some(w)) => w.data = d,
        (Err(e), _) => b.fail(e),
        (_, None) => b.fail(libc::EINVAL),
    })
}

unsafe extern "C" fn wr_start(qp: *mut ibv_qp_ex) {
    with_qp(qp, |_, b| *b = WrBuilder::default());
}

unsafe extern "C" fn wr_abort(qp: *mut ibv_qp_ex) {
    with_qp(qp, |_, b| *b = WrBuilder::default());
}

/// Posts what was built, in order: 0, or the first mistake made while building (then
/// nothing is posted), or the errno of the first post that failed (the ones before it
/// are posted).
unsafe extern "C" fn wr_complete(qp: *mut ibv_qp_ex) -> c_int {
    let mut r = libc::EINVAL;
    with_qp(qp, |q, b| {
        let built = std::mem::take(b);
        r = match built.error {
            Some(e) => e,
            None => built
                .wrs
                .iter()
                .map(|w| post(q, w))
                .find(|&e| e != 0)
                .unwrap_or(0),
        };
    });
    if r != 0 {
        set_errno(r);
    }
    r
}

/// Posts one built work request.
fn post(q: &Qp, w: &Pending) -> c_int {
    let payload = match &w.data {
        Data::Sges(s) => Payload::Sges(s),
        Data::Inline(d) => Payload::Inline(d),
    };
    let req = SendRequest {
        wr_id: w.wr_id,
        op: w.op,
        payload,
        signaled: q.sig_all || w.flags & IBV_SEND_SIGNALED != 0,
        solicited: w.flags & IBV_SEND_SOLICITED != 0,
        stream: 0,
    };
    q.qp.post_send(&req).map_or_else(|e| e.errno(), |()| 0)
}

unsafe extern "C" fn wr_rdma_write(qp: *mut ibv_qp_ex, rkey: u32, remote_va: u64) {
    begin(
        qp,
        IBV_QP_EX_WITH_RDMA_WRITE,
        SendOp::Write { remote_va, rkey },
    );
}

unsafe extern "C" fn wr_rdma_write_imm(qp: *mut ibv_qp_ex, rkey: u32, remote_va: u64, imm: u32) {
    let op = SendOp::WriteImm {
        remote_va,
        rkey,
        imm,
    };
    begin(qp, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, op);
}

unsafe extern "C" fn wr_send(qp: *mut ibv_qp_ex) {
    begin(qp, IBV_QP_EX_WITH_SEND, SendOp::Send);
}

unsafe extern "C" fn wr_send_imm(qp: *mut ibv_qp_ex, imm: u32) {
    begin(qp, IBV_QP_EX_WITH_SEND_WITH_IMM, SendOp::SendImm { imm });
}

unsafe extern "C" fn wr_rdma_read(qp: *mut ibv_qp_ex, rkey: u32, remote_va: u64) {
    begin(
        qp,
        IBV_QP_EX_WITH_RDMA_READ,
        SendOp::Read { remote_va, rkey },
    );
}

unsafe extern "C" fn wr_atomic_fetch_add(qp: *mut ibv_qp_ex, rkey: u32, remote_va: u64, add: u64) {
    let op = SendOp::FetchAdd {
        remote_va,
        rkey,
        add,
    };
    begin(qp, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, op);
}

unsafe extern "C" fn wr_atomic_cmp_swp(
    qp: *mut ibv_qp_ex,
    rkey: u32,
    remote_va: u64,
    compare: u64,
    swap: u64,
) {
    let op = SendOp::CompareSwap {
        remote_va,
        rkey,
        compare,
        swap,
    };
    begin(qp, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, op);
}

unsafe extern "C" fn wr_set_sge(qp: *mut ibv_qp_ex, lkey: u32, addr: u64, len: u32) {
    set_data(qp, |_| Ok(Data::Sges(vec![Sge { addr, len, lkey }])));
}

unsafe extern "C" fn wr_set_sge_list(qp: *mut ibv_qp_ex, n: usize, list: *const ibv_sge) {
    set_data(qp, |_| {
        if n > MAX_SGE || (n > 0 && list.is_null()) {
            return Err(libc::EINVAL);
        }
        if n == 0 {
            return Ok(Data::Sges(Vec::new()));
        }
        // SAFETY: the program passed `n` elements at `list` (non-NULL, checked).
        let c = unsafe { std::slice::from_raw_parts(list, n) };
        let sges = c.iter().map(|s| Sge {
            addr: s.addr,
            len: s.length,
            lkey: s.lkey,
        });
        Ok(Data::Sges(sges.collect()))
    });
}

unsafe extern "C" fn wr_set_inline_data(qp: *mut ibv_qp_ex, addr: *mut c_void, len: usize) {
    let buf = ibv_data_buf { addr, length: len };
    // SAFETY: one element, on the stack.
    unsafe { wr_set_inline_data_list(qp, 1, &buf) };
}

unsafe extern "C" fn wr_set_inline_data_list(
    qp: *mut ibv_qp_ex,
    n: usize,
    list: *const ibv_data_buf,
) {
    set_data(qp, |q| {
        if n > 0 && list.is_null() {
            return Err(libc::EINVAL);
        }
        let bufs = match n {
            0 => &[][..],
            // SAFETY: the program passed `n` elements at `list` (non-NULL, checked).
            _ => unsafe { std::slice::from_raw_parts(list, n) },
        };
        let total = bufs.iter().try_fold(0usize, |t, b| t.checked_add(b.length));
        if total.is_none_or(|t| t > q.cap.max_inline_data as usize) {
            return Err(libc::EINVAL);
        }
        let mut data = Vec::with_capacity(total.unwrap_or(0));
        for b in bufs.iter().filter(|b| b.length > 0) {
            if b.addr.is_null() {
                return Err(libc::EFAULT);
            }
            // SAFETY: inline data is read now, from memory the program names (no
            // registration needed, as in Verbs); the total is bounded above.
            data.extend_from_slice(unsafe {
                std::slice::from_raw_parts(b.addr.cast::<u8>(), b.length)
            });
        }
        Ok(Data::Inline(data))
    });
}

/// An operation MetaRoCE does not have: `ibv_wr_complete` reports `EOPNOTSUPP`.
fn unsupported(qp: *mut ibv_qp_ex) {
    with_qp(qp, |_, b| b.fail(libc::EOPNOTSUPP));
}

unsafe extern "C" fn wr_unsupported_u32(qp: *mut ibv_qp_ex, _: u32) {
    unsupported(qp);
}

unsafe extern "C" fn wr_bind_mw(qp: *mut ibv_qp_ex, _: *mut c_void, _: u32, _: *const c_void) {
    unsupported(qp);
}

unsafe extern "C" fn wr_send_tso(qp: *mut ibv_qp_ex, _: *mut c_void, _: u16, _: u16) {
    unsupported(qp);
}

unsafe extern "C" fn wr_set_ud_addr(qp: *mut ibv_qp_ex, _: *mut c_void, _: u32, _: u32) {
    unsupported(qp);
}

unsafe extern "C" fn wr_atomic_write(qp: *mut ibv_qp_ex, _: u32, _: u64, _: *const c_void) {
    unsupported(qp);
}
