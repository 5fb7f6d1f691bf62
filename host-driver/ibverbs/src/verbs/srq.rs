//! Shared receive queues: `ibv_create_srq`, `ibv_modify_srq`, `ibv_query_srq`,
//! `ibv_destroy_srq` (`ibv_post_srq_recv` is in `datapath`).

use std::cell::UnsafeCell;
use std::ffi::c_int;
use std::sync::Arc;

use crate::abi::*;
use crate::ffi::{arg, out, ret_int, ret_ptr};
use crate::objects::{Ctx, Object, Srq, reg};
use crate::verbs::device::MAX_QP_WR;

/// `ibv_create_srq`: a shared receive queue of at least `attr.max_wr` receives of up to
/// `attr.max_sge` elements; the sizes granted are written back. `srq_limit` is ignored
/// (arm it with `ibv_modify_srq`).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_create_srq(pd: *mut ibv_pd, init: *mut ibv_srq_init_attr) -> *mut ibv_srq {
    ret_ptr(|| {
        let pd = reg().pds.get(pd)?;
        // SAFETY: a non-NULL `init` points to the caller's init attributes.
        let init = unsafe { out(init) }?;
        let max_sge = pd.ctx.verbs.max_sge() as u32;
        let want = init.attr;
        if want.max_wr == 0 || want.max_wr > MAX_QP_WR || want.max_sge > max_sge {
            return Err(libc::EINVAL);
        }
        let srq = pd
            .pd
            .create_srq(want.max_wr as usize)
            .map_err(|e| e.errno())?;
        init.attr = ibv_srq_attr {
            max_wr: want.max_wr,
            max_sge,
            srq_limit: 0,
        };
        let obj = Arc::new(Srq {
            c: UnsafeCell::new(ibv_srq {
                context: pd.ctx.c_ptr(),
                srq_context: init.srq_context,
                pd: pd.c_ptr(),
                handle: srq.handle(),
                mutex: libc::PTHREAD_MUTEX_INITIALIZER,
                cond: libc::PTHREAD_COND_INITIALIZER,
                events_completed: 0,
            }),
            pd,
            srq,
        });
        Ok(reg().srqs.insert(obj))
    })
}

/// `ibv_modify_srq`: `IBV_SRQ_LIMIT` arms the limit (0 disarms): when a QP takes a
/// receive that leaves fewer posted, the context reports
/// `IBV_EVENT_SRQ_LIMIT_REACHED` once. Resizing (`IBV_SRQ_MAX_WR`) is refused with
/// `EINVAL`, as providers that cannot resize do.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_modify_srq(srq: *mut ibv_srq, attr: *mut ibv_srq_attr, mask: c_int) -> c_int {
    ret_int(|| {
        let srq = reg().srqs.get(srq)?;
        // SAFETY: a non-NULL `attr` points to the caller's attributes.
        let attr = unsafe { arg(attr) }?;
        if mask & !(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT) != 0 || mask & IBV_SRQ_MAX_WR != 0 {
            return Err(libc::EINVAL);
        }
        if mask & IBV_SRQ_LIMIT != 0 {
            srq.srq.arm_limit(attr.srq_limit).map_err(|e| e.errno())?;
        }
        Ok(())
    })
}

/// `ibv_query_srq`: its size, element limit and armed limit (0 once it fired).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_srq(srq: *mut ibv_srq, attr: *mut ibv_srq_attr) -> c_int {
    ret_int(|| {
        let srq = reg().srqs.get(srq)?;
        // SAFETY: a non-NULL `attr` points to the caller's attribute struct.
        let out = unsafe { out(attr) }?;
        let a = srq.srq.query();
        *out = ibv_srq_attr {
            max_wr: a.max_wr,
            max_sge: srq.pd.ctx.verbs.max_sge() as u32,
            srq_limit: a.limit,
        };
        Ok(())
    })
}

/// `ibv_destroy_srq` (`EBUSY` while QPs take their receives from it).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_destroy_srq(srq: *mut ibv_srq) -> c_int {
    ret_int(|| reg().srqs.remove(srq).map(drop))
}

/// The C handle of the shared receive queue numbered `srqn` on `ctx`, or NULL.
pub fn srq_by_num(ctx: &Ctx, srqn: u32) -> *mut ibv_srq {
    reg()
        .srqs
        .find(|s| s.srq.handle() == srqn && std::ptr::eq(&*s.pd.ctx, ctx))
        .map_or(std::ptr::null_mut(), |s| s.c_ptr())
}
