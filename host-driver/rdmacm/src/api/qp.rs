//! QPs and SRQs on ids, as rdma-core's librdmacm makes them: completion queues (each
//! with its own completion channel) when the program gives none, the QP moved to INIT
//! at once, and the id's `qp`, `pd`, `send_cq`, `recv_cq`, … fields set for the
//! `rdma_verbs.h` helpers.

use std::ffi::c_int;
use std::sync::Arc;

use metaroce_cabi::ffi::{Errno, guard, out, ret_minus_one};

use super::id_arg;
use crate::abi::{
    IBV_QP_INIT_ATTR_PD, IBV_SRQ_INIT_ATTR_PD, IBV_SRQ_INIT_ATTR_TYPE, IBV_SRQT_BASIC, ibv_pd,
    ibv_qp_attr, ibv_qp_init_attr, ibv_qp_init_attr_ex, ibv_srq_init_attr, ibv_srq_init_attr_ex,
    rdma_cm_id,
};
use crate::id::Id;
use crate::verbs;

/// Destroys the completion queues and channels the library made for the id.
fn destroy_cqs(c: &mut rdma_cm_id) {
    if !c.recv_cq.is_null() {
        verbs::destroy_cq(c.recv_cq);
        if !c.send_cq.is_null() && c.send_cq != c.recv_cq {
            verbs::destroy_cq(c.send_cq);
        }
    } else if !c.send_cq.is_null() {
        verbs::destroy_cq(c.send_cq);
    }
    c.recv_cq = std::ptr::null_mut();
    c.send_cq = std::ptr::null_mut();
    for ch in [
        std::mem::replace(&mut c.recv_cq_channel, std::ptr::null_mut()),
        std::mem::replace(&mut c.send_cq_channel, std::ptr::null_mut()),
    ] {
        if !ch.is_null() {
            verbs::destroy_comp_channel(ch);
        }
    }
}

/// Makes the CQs (with channels) a QP needs when the program gave none.
fn create_cqs(c: &mut rdma_cm_id, send: u32, recv: u32) -> Result<(), Errno> {
    let cq_context = (c as *mut rdma_cm_id).cast();
    if recv > 0 {
        let (ch, cq) = verbs::create_cq_with_channel(c.verbs, recv, cq_context)?;
        (c.recv_cq_channel, c.recv_cq) = (ch, cq);
    }
    if send > 0 {
        match verbs::create_cq_with_channel(c.verbs, send, cq_context) {
            Ok((ch, cq)) => (c.send_cq_channel, c.send_cq) = (ch, cq),
            Err(e) => {
                destroy_cqs(c);
                return Err(e);
            }
        }
    }
    Ok(())
}

/// `rdma_create_qp_ex` on a looked-up id.
pub fn create_qp_ex(id: &Arc<Id>, attr: &mut ibv_qp_init_attr_ex) -> Result<(), Errno> {
    // SAFETY: the id is live; its C view is ours to update (the program does not write
    // these fields while it creates the QP).
    let c = unsafe { &mut *id.c() };
    if !c.qp.is_null() || c.verbs.is_null() {
        return Err(libc::EINVAL);
    }
    if attr.comp_mask & IBV_QP_INIT_ATTR_PD == 0 || attr.pd.is_null() {
        attr.comp_mask |= IBV_QP_INIT_ATTR_PD;
        attr.pd = c.pd;
    } else {
        // SAFETY: a non-NULL PD from the program is a live `ibv_pd`; its first field is
        // its context.
        if unsafe { (*attr.pd).context } != c.verbs {
            return Err(libc::EINVAL);
        }
    }
    let b = attr;
    if (!c.recv_cq.is_null() && !b.recv_cq.is_null() && c.recv_cq != b.recv_cq)
        || (!c.send_cq.is_null() && !b.send_cq.is_null() && c.send_cq != b.send_cq)
    {
        return Err(libc::EINVAL);
    }
    let send = if b.send_cq.is_null() && c.send_cq.is_null() {
        b.cap.max_send_wr
    } else {
        0
    };
    let recv = if b.recv_cq.is_null() && c.recv_cq.is_null() {
        b.cap.max_recv_wr
    } else {
        0
    };
    create_cqs(c, send, recv)?;
    if b.send_cq.is_null() {
        b.send_cq = c.send_cq;
    }
    if b.recv_cq.is_null() {
        b.recv_cq = c.recv_cq;
    }
    if b.srq.is_null() {
        b.srq = c.srq;
    }
    let qp = match verbs::create_qp_ex(c.verbs, b) {
        Ok(qp) => qp,
        Err(e) => {
            destroy_cqs(c);
            return Err(e);
        }
    };
    if let Err(e) = id.init_qp(qp) {
        verbs::destroy_qp(qp);
        destroy_cqs(c);
        return Err(e);
    }
    // SAFETY: `qp` is the live QP just made; its leading fields follow the ABI.
    c.pd = unsafe { (*qp).pd };
    c.qp = qp;
    Ok(())
}

/// `rdma_create_qp` on a looked-up id: `attr` is updated with what was granted.
pub fn create_qp(id: &Arc<Id>, pd: *mut ibv_pd, attr: &mut ibv_qp_init_attr) -> Result<(), Errno> {
    // SAFETY: reads a plain field of the live id's C view.
    let pd = if pd.is_null() {
        unsafe { (*id.c()).pd }
    } else {
        pd
    };
    let mut ex = ibv_qp_init_attr_ex::from_basic(attr, pd);
    let r = create_qp_ex(id, &mut ex);
    *attr = ex.basic();
    r
}

/// `rdma_create_qp`: an RC QP on the id's device (CQs made when `send_cq`/`recv_cq` are
/// NULL), moved to INIT; `id->qp` is set.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_create_qp(
    id: *mut rdma_cm_id,
    pd: *mut ibv_pd,
    attr: *mut ibv_qp_init_attr,
) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: a non-NULL `attr` points to the caller's attributes.
        create_qp(&id, pd, unsafe { out(attr) }?)
    })
}

/// `rdma_create_qp_ex`: as `rdma_create_qp`, with `verbs.h`'s `ibv_create_qp_ex` rules
/// (extended attributes need libibverbs's extended operation).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_create_qp_ex(id: *mut rdma_cm_id, attr: *mut ibv_qp_init_attr_ex) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: a non-NULL `attr` points to the caller's attributes.
        create_qp_ex(&id, unsafe { out(attr) }?)
    })
}

/// `rdma_destroy_qp`: the QP, then the CQs the library made.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_destroy_qp(id: *mut rdma_cm_id) {
    guard((), || {
        if let Ok(id) = id_arg(id) {
            destroy_qp(&id);
        }
    })
}

/// Destroys the id's QP (if any) and the CQs the library made.
pub fn destroy_qp(id: &Id) {
    // SAFETY: the id is live; its C view is ours to update.
    let c = unsafe { &mut *id.c() };
    if !c.qp.is_null() {
        verbs::destroy_qp(std::mem::replace(&mut c.qp, std::ptr::null_mut()));
    }
    destroy_cqs(c);
}

/// `rdma_create_srq_ex`: basic SRQs through libibverbs (XRC: `EOPNOTSUPP`).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_create_srq_ex(
    id: *mut rdma_cm_id,
    attr: *mut ibv_srq_init_attr_ex,
) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: a non-NULL `attr` points to the caller's attributes.
        create_srq_ex(&id, unsafe { out(attr) }?)
    })
}

fn create_srq_ex(id: &Id, attr: &mut ibv_srq_init_attr_ex) -> Result<(), Errno> {
    // SAFETY: the id is live; its C view is ours to update.
    let c = unsafe { &mut *id.c() };
    if attr.comp_mask & IBV_SRQ_INIT_ATTR_TYPE == 0 || c.verbs.is_null() {
        return Err(libc::EINVAL);
    }
    if attr.srq_type != IBV_SRQT_BASIC {
        return Err(libc::EOPNOTSUPP);
    }
    if attr.comp_mask & IBV_SRQ_INIT_ATTR_PD == 0 || attr.pd.is_null() {
        attr.pd = c.pd;
        attr.comp_mask |= IBV_SRQ_INIT_ATTR_PD;
    }
    let srq = verbs::create_srq_ex(c.verbs, attr)?;
    if c.pd.is_null() {
        c.pd = attr.pd;
    }
    c.srq = srq;
    Ok(())
}

/// `rdma_create_srq`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_create_srq(
    id: *mut rdma_cm_id,
    pd: *mut ibv_pd,
    attr: *mut ibv_srq_init_attr,
) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: a non-NULL `attr` points to the caller's attributes.
        let attr = unsafe { out(attr) }?;
        let mut ex = ibv_srq_init_attr_ex {
            srq_context: attr.srq_context,
            attr: attr.attr,
            comp_mask: IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
            srq_type: IBV_SRQT_BASIC,
            pd,
            xrcd: std::ptr::null_mut(),
            cq: std::ptr::null_mut(),
            tm_cap: [0; 2],
        };
        let r = create_srq_ex(&id, &mut ex);
        attr.attr = ex.attr;
        r
    })
}

/// `rdma_destroy_srq`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_destroy_srq(id: *mut rdma_cm_id) {
    guard((), || {
        if let Ok(id) = id_arg(id) {
            destroy_srq(&id);
        }
    })
}

/// Destroys the id's SRQ (if any) and the CQs the library made.
pub fn destroy_srq(id: &Id) {
    // SAFETY: the id is live; its C view is ours to update.
    let c = unsafe { &mut *id.c() };
    if !c.srq.is_null() {
        verbs::destroy_srq(std::mem::replace(&mut c.srq, std::ptr::null_mut()));
    }
    destroy_cqs(c);
}

/// `rdma_init_qp_attr`: the attributes (and mask) the connection gives a QP for the
/// state in `attr->qp_state` (INIT, RTR or RTS), for programs that move their own QP.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_init_qp_attr(
    id: *mut rdma_cm_id,
    attr: *mut ibv_qp_attr,
    mask: *mut c_int,
) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: non-NULL pointers to the caller's attributes and mask.
        let (attr, mask) = unsafe { (out(attr)?, out(mask)?) };
        let (a, m) = id.init_qp_attr(attr.qp_state)?;
        *attr = a;
        *mask = m;
        Ok(())
    })
}
