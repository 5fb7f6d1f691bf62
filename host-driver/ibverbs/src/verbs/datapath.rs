//! The fast path: `post_send`, `post_recv`, `poll_cq` and `req_notify_cq` (reached
//! through `context->ops` by the header's inline verbs), and completion events.

use std::ffi::{c_int, c_void};
use std::os::fd::AsRawFd;
use std::time::Duration;

use metaroce_driver::verbs::{
    MAX_SGE, Payload, RecvWr, SendOp, SendRequest, SgList, Sge, Wc, WcOpcode, ibv_wc_status,
};

use crate::abi::*;
use crate::ffi::{Errno, guard, out, ret_int, set_errno};
use crate::objects::{Ctx, Object, Qp, lock, reg};
use crate::verbs::device::{MAX_INLINE, neg1};

/// The scatter/gather list of a work request: `EINVAL` for more than [`MAX_SGE`]
/// elements (the device's own limit is checked by the Verbs API) or a NULL list.
///
/// # Safety
/// A non-NULL `sg_list` must hold `num_sge` elements.
unsafe fn sg_list_of(sg_list: *const ibv_sge, num_sge: c_int) -> Result<SgList, Errno> {
    let n = usize::try_from(num_sge).map_err(|_| libc::EINVAL)?;
    if n == 0 {
        return Ok(SgList::default());
    }
    if n > MAX_SGE || sg_list.is_null() {
        return Err(libc::EINVAL);
    }
    // SAFETY: forwarded to the caller; `sg_list` is non-NULL and holds `n` elements.
    let c = unsafe { std::slice::from_raw_parts(sg_list, n) };
    let mut sges = [Sge::default(); MAX_SGE];
    for (s, c) in sges.iter_mut().zip(c) {
        *s = Sge {
            addr: c.addr,
            len: c.length,
            lkey: c.lkey,
        };
    }
    SgList::new(&sges[..n]).map_err(|_| libc::EINVAL)
}

/// Gathers an inline payload into `buf`; returns its length.
///
/// # Safety
/// A non-NULL `sg_list` must hold `num_sge` elements, each naming readable memory.
unsafe fn gather_inline(
    sg_list: *const ibv_sge,
    num_sge: c_int,
    limit: usize,
    buf: &mut [u8; MAX_INLINE as usize],
) -> Result<usize, Errno> {
    let n = usize::try_from(num_sge).map_err(|_| libc::EINVAL)?;
    if n == 0 {
        return Ok(0);
    }
    if sg_list.is_null() {
        return Err(libc::EINVAL);
    }
    // SAFETY: forwarded to the caller.
    let sges = unsafe { std::slice::from_raw_parts(sg_list, n) };
    let mut len = 0usize;
    for s in sges {
        let l = s.length as usize;
        if len + l > limit {
            return Err(libc::EINVAL);
        }
        if l > 0 {
            if s.addr == 0 {
                return Err(libc::EFAULT);
            }
            // SAFETY: inline data is read at post time from memory the program names
            // (no registration needed, as in Verbs); `len + l <= limit <= buf.len()`.
            let src = unsafe { std::slice::from_raw_parts(s.addr as *const u8, l) };
            buf[len..len + l].copy_from_slice(src);
        }
        len += l;
    }
    Ok(len)
}

fn send_op(wr: &ibv_send_wr) -> Result<SendOp, Errno> {
    let rdma = wr.rdma();
    Ok(match wr.opcode {
        IBV_WR_RDMA_WRITE => SendOp::Write {
            remote_va: rdma.remote_addr,
            rkey: rdma.rkey,
        },
        IBV_WR_RDMA_WRITE_WITH_IMM => SendOp::WriteImm {
            remote_va: rdma.remote_addr,
            rkey: rdma.rkey,
            imm: wr.imm_data,
        },
        IBV_WR_SEND => SendOp::Send,
        IBV_WR_SEND_WITH_IMM => SendOp::SendImm { imm: wr.imm_data },
        IBV_WR_RDMA_READ => SendOp::Read {
            remote_va: rdma.remote_addr,
            rkey: rdma.rkey,
        },
        IBV_WR_ATOMIC_FETCH_AND_ADD => {
            let a = wr.atomic();
            SendOp::FetchAdd {
                remote_va: a.remote_addr,
                rkey: a.rkey,
                add: a.compare_add,
            }
        }
        IBV_WR_ATOMIC_CMP_AND_SWP => {
            let a = wr.atomic();
            SendOp::CompareSwap {
                remote_va: a.remote_addr,
                rkey: a.rkey,
                compare: a.compare_add,
                swap: a.swap,
            }
        }
        _ => return Err(libc::EOPNOTSUPP),
    })
}

fn post_one(qp: &Qp, wr: &ibv_send_wr) -> Result<(), Errno> {
    let op = send_op(wr)?;
    let mut inline_buf = [0u8; MAX_INLINE as usize];
    let inline = wr.send_flags & IBV_SEND_INLINE != 0 && !op.writes_local();
    let sgl;
    let payload = if inline {
        let limit = qp.cap.max_inline_data as usize;
        // SAFETY: the program's work request names `num_sge` elements at `sg_list`.
        let n = unsafe { gather_inline(wr.sg_list, wr.num_sge, limit, &mut inline_buf) }?;
        Payload::Inline(&inline_buf[..n])
    } else {
        // SAFETY: as above.
        sgl = unsafe { sg_list_of(wr.sg_list, wr.num_sge) }?;
        Payload::Sges(sgl.as_slice())
    };
    let req = SendRequest {
        wr_id: wr.wr_id,
        op,
        payload,
        signaled: qp.sig_all || wr.send_flags & IBV_SEND_SIGNALED != 0,
        solicited: wr.send_flags & IBV_SEND_SOLICITED != 0,
        stream: 0,
    };
    qp.qp.post_send(&req).map_err(|e| e.errno())
}

/// Walks a work request list, posting each; on failure `*bad` names the failed one.
fn post_list<W>(
    first: *mut W,
    bad: *mut *mut W,
    next: impl Fn(&W) -> *mut W,
    mut post: impl FnMut(&W) -> Result<(), Errno>,
) -> c_int {
    let mut cur = first;
    let r = ret_int(|| {
        while !cur.is_null() {
            // SAFETY: `cur` is the program's work request (or one its list links to).
            let wr = unsafe { &*cur };
            post(wr)?;
            cur = next(wr);
        }
        Ok(())
    });
    if r != 0 {
        // SAFETY: a non-NULL `bad` points to the caller's pointer.
        if let Ok(b) = unsafe { out(bad) } {
            *b = cur;
        }
    }
    r
}

/// `ops.post_send`.
pub unsafe extern "C" fn post_send(
    qp: *mut ibv_qp,
    wr: *mut ibv_send_wr,
    bad: *mut *mut ibv_send_wr,
) -> c_int {
    let qp = match reg().qps.get(qp) {
        Ok(q) => q,
        Err(e) => return post_list(wr, bad, |w| w.next, |_| Err(e)),
    };
    post_list(wr, bad, |w| w.next, |w| post_one(&qp, w))
}

/// `ops.post_recv`.
pub unsafe extern "C" fn post_recv(
    qp: *mut ibv_qp,
    wr: *mut ibv_recv_wr,
    bad: *mut *mut ibv_recv_wr,
) -> c_int {
    let qp = match reg().qps.get(qp) {
        Ok(q) => q,
        Err(e) => return post_list(wr, bad, |w| w.next, |_| Err(e)),
    };
    post_list(
        wr,
        bad,
        |w| w.next,
        |w| qp.qp.post_recv(recv_wr_of(w)?).map_err(|e| e.errno()),
    )
}

/// A program's receive work request.
fn recv_wr_of(w: &ibv_recv_wr) -> Result<RecvWr, Errno> {
    // SAFETY: the program's work request names `num_sge` elements at `sg_list`.
    let sgl = unsafe { sg_list_of(w.sg_list, w.num_sge) }?;
    Ok(RecvWr {
        wr_id: w.wr_id,
        sgl,
        stream: 0,
    })
}

/// `ops.post_srq_recv`.
pub unsafe extern "C" fn post_srq_recv(
    srq: *mut ibv_srq,
    wr: *mut ibv_recv_wr,
    bad: *mut *mut ibv_recv_wr,
) -> c_int {
    let srq = match reg().srqs.get(srq) {
        Ok(s) => s,
        Err(e) => return post_list(wr, bad, |w| w.next, |_| Err(e)),
    };
    post_list(
        wr,
        bad,
        |w| w.next,
        |w| srq.srq.post_recv(recv_wr_of(w)?).map_err(|e| e.errno()),
    )
}

fn wc_of(w: &Wc) -> ibv_wc {
    let opcode = match w.opcode {
        WcOpcode::Send => IBV_WC_SEND,
        WcOpcode::Write => IBV_WC_RDMA_WRITE,
        WcOpcode::Read => IBV_WC_RDMA_READ,
        WcOpcode::FetchAdd => IBV_WC_FETCH_ADD,
        WcOpcode::CompSwap => IBV_WC_COMP_SWAP,
        WcOpcode::Recv => IBV_WC_RECV,
        WcOpcode::RecvWriteImm => IBV_WC_RECV_RDMA_WITH_IMM,
    };
    ibv_wc {
        wr_id: w.wr_id,
        status: ibv_wc_status(w.status) as c_int,
        opcode,
        byte_len: w.byte_len,
        imm_data: w.imm.unwrap_or(0),
        qp_num: w.qp_num,
        wc_flags: if w.imm.is_some() { IBV_WC_WITH_IMM } else { 0 },
        ..Default::default()
    }
}

/// `ops.poll_cq`: completions written, or a negative value on error.
pub unsafe extern "C" fn poll_cq(cq: *mut ibv_cq, num: c_int, wc: *mut ibv_wc) -> c_int {
    guard(-1, || {
        let Ok(cq) = reg().cqs.get(cq) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let want = usize::try_from(num).unwrap_or(0);
        if want == 0 {
            return 0;
        }
        if wc.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        let mut buf = [Wc::default(); 32];
        let mut done = 0usize;
        while done < want {
            let chunk = (want - done).min(buf.len());
            let n = cq.cq.poll(&mut buf[..chunk]);
            for (i, w) in buf[..n].iter().enumerate() {
                // SAFETY: the program passed room for `num` completions at `wc`, and
                // `done + i < want <= num`.
                unsafe { wc.add(done + i).write(wc_of(w)) };
            }
            done += n;
            if n < chunk {
                break;
            }
        }
        if done == 0 {
            // Nothing yet: let the NIC's progress thread run (programs spin on poll_cq,
            // and a software NIC shares their cores).
            std::thread::yield_now();
        }
        done as c_int
    })
}

/// `ops.req_notify_cq`.
pub unsafe extern "C" fn req_notify_cq(cq: *mut ibv_cq, solicited_only: c_int) -> c_int {
    ret_int(|| {
        let cq = reg().cqs.get(cq)?;
        cq.cq.req_notify(solicited_only != 0).map_err(|e| e.errno())
    })
}

/// `ibv_get_cq_event`: waits for an armed CQ of the channel to fire (or, when the
/// channel's fd was made non-blocking, returns -1 with `EAGAIN` at once). 0, or -1.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_cq_event(
    channel: *mut ibv_comp_channel,
    cq_out: *mut *mut ibv_cq,
    cq_context: *mut *mut c_void,
) -> c_int {
    neg1(ret_int(|| {
        let ch = reg().channels.get(channel)?;
        if cq_out.is_null() || cq_context.is_null() {
            return Err(libc::EINVAL);
        }
        // SAFETY: F_GETFL on the channel's own descriptor.
        let flags = unsafe { libc::fcntl(ch.ch.as_raw_fd(), libc::F_GETFL) };
        let timeout = (flags >= 0 && flags & libc::O_NONBLOCK != 0).then_some(Duration::ZERO);
        loop {
            let id = ch
                .ch
                .get_cq_event(timeout)
                .map_err(|e| e.errno())?
                .ok_or(libc::EAGAIN)?;
            // A CQ destroyed after it fired has no event to report any more.
            let Some(&handle) = lock(&ch.cqs).get(&id) else {
                continue;
            };
            let cq = reg().cqs.get(handle as *const ibv_cq)?;
            // SAFETY: both pointers were checked non-NULL and belong to the caller;
            // `cq_context` is a plain field of our C view.
            unsafe {
                *cq_out = cq.c_ptr();
                *cq_context = (*cq.c_ptr()).cq_context;
            }
            return Ok(());
        }
    }))
}

/// `ibv_ack_cq_events`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_ack_cq_events(cq: *mut ibv_cq, nevents: std::ffi::c_uint) {
    guard((), || {
        if let Ok(cq) = reg().cqs.get(cq) {
            let _g = lock(&cq.events);
            // SAFETY: updated only here, under `events`.
            unsafe {
                let c = cq.c_ptr();
                (*c).comp_events_completed = (*c).comp_events_completed.wrapping_add(nevents);
            }
        }
    })
}

/// The C handle of the QP numbered `qpn` on `ctx`, or NULL.
pub fn qp_by_num(ctx: &Ctx, qpn: u32) -> *mut ibv_qp {
    reg()
        .qps
        .find(|q| q.qp.qpn() == qpn && std::ptr::eq(&*q.pd.ctx, ctx))
        .map_or(std::ptr::null_mut(), |q| q.c_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaroce_driver::verbs::WcStatus;

    #[test]
    fn completions_map_to_ibv_wc() {
        let w = Wc {
            wr_id: 7,
            status: WcStatus::RemAccessErr,
            opcode: WcOpcode::RecvWriteImm,
            byte_len: 100,
            imm: Some(0x1234_5678),
            qp_num: 9,
            stream: 0,
            solicited: false,
        };
        let c = wc_of(&w);
        assert_eq!(
            (c.wr_id, c.status, c.opcode),
            (7, 10, IBV_WC_RECV_RDMA_WITH_IMM)
        );
        assert_eq!((c.byte_len, c.imm_data, c.qp_num), (100, 0x1234_5678, 9));
        assert_eq!(c.wc_flags, IBV_WC_WITH_IMM);
    }

    #[test]
    fn inline_gathers_and_bounds() {
        let a = *b"hello ";
        let b = *b"world";
        let sges = [
            ibv_sge {
                addr: a.as_ptr() as u64,
                length: 6,
                lkey: 0,
            },
            ibv_sge {
                addr: b.as_ptr() as u64,
                length: 5,
                lkey: 0,
            },
        ];
        let mut buf = [0u8; MAX_INLINE as usize];
        // SAFETY: `sges` holds two elements naming live arrays.
        let n = unsafe { gather_inline(sges.as_ptr(), 2, 64, &mut buf) }.unwrap();
        assert_eq!(&buf[..n], b"hello world");
        // SAFETY: as above.
        let r = unsafe { gather_inline(sges.as_ptr(), 2, 8, &mut buf) };
        assert_eq!(r, Err(libc::EINVAL));
        // SAFETY: NULL lists are refused before any read.
        assert_eq!(
            unsafe { sg_list_of(std::ptr::null(), 1) },
            Err(libc::EINVAL)
        );
        // SAFETY: `sges` holds two elements.
        let l = unsafe { sg_list_of(sges.as_ptr(), 2) }.unwrap();
        assert_eq!((l.as_slice().len(), l.total_len()), (2, Some(11)));
        assert_eq!(l.as_slice()[1].addr, b.as_ptr() as u64);
        // SAFETY: the count is refused before any read.
        let r = unsafe { sg_list_of(sges.as_ptr(), MAX_SGE as c_int + 1) };
        assert_eq!(r, Err(libc::EINVAL));
    }

    #[test]
    fn bad_handles_are_refused() {
        let mut wc = ibv_wc::default();
        // SAFETY: a dangling handle is looked up, never dereferenced.
        let r = unsafe { poll_cq(std::ptr::dangling_mut::<ibv_cq>(), 1, &mut wc) };
        assert_eq!(r, -1);
        let mut wr = ibv_recv_wr {
            wr_id: 1,
            next: std::ptr::null_mut(),
            sg_list: std::ptr::null_mut(),
            num_sge: 0,
        };
        let mut bad = std::ptr::null_mut();
        // SAFETY: as above; `wr` and `bad` are live locals.
        let r = unsafe { post_recv(std::ptr::dangling_mut::<ibv_qp>(), &mut wr, &mut bad) };
        assert_eq!(r, libc::EINVAL);
        assert_eq!(bad, &raw mut wr);
        assert_eq!(
            ibv_get_cq_event(
                std::ptr::null_mut(),
                &mut std::ptr::null_mut(),
                &mut std::ptr::null_mut()
            ),
            -1
        );
    }
}
