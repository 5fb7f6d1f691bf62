//! Protection domains, memory regions, completion channels and queues, queue pairs.

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

use metaroce_driver::verbs::{Access, AuthKey, QpInit, QpState, QpTransition, RemoteEnd};

use crate::abi::*;
use crate::backend;
use crate::device::gid_to_ip;
use crate::ffi::{Errno, arg, out, ret_int, ret_ptr};
use crate::objects::{Channel, Cq, Mr, Object, Pd, Qp, lock, reg};
use crate::verbs::device::{MAX_CQE, MAX_INLINE, MAX_QP_WR, ctx_of};

/// `ibv_alloc_pd`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_alloc_pd(ctx: *mut ibv_context) -> *mut ibv_pd {
    ret_ptr(|| {
        let ctx = ctx_of(ctx)?;
        let pd = ctx.verbs.alloc_pd();
        let obj = Arc::new(Pd {
            c: UnsafeCell::new(ibv_pd {
                context: ctx.c_ptr(),
                handle: pd.handle(),
            }),
            ctx,
            pd,
        });
        Ok(reg().pds.insert(obj))
    })
}

/// `ibv_dealloc_pd` (`EBUSY` while memory regions or QPs use it).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_dealloc_pd(pd: *mut ibv_pd) -> c_int {
    ret_int(|| reg().pds.remove(pd).map(drop))
}

fn access_of(flags: c_int) -> Result<Access, Errno> {
    let known = IBV_ACCESS_LOCAL_WRITE
        | IBV_ACCESS_REMOTE_WRITE
        | IBV_ACCESS_REMOTE_READ
        | IBV_ACCESS_REMOTE_ATOMIC
        | IBV_ACCESS_OPTIONAL_RANGE;
    if flags & !known != 0 {
        return Err(libc::EINVAL);
    }
    // As in Verbs, remote write and remote atomic need local write.
    let remote_changes = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
    if flags & remote_changes != 0 && flags & IBV_ACCESS_LOCAL_WRITE == 0 {
        return Err(libc::EINVAL);
    }
    let mut a = Access::empty();
    a.set(Access::LOCAL_WRITE, flags & IBV_ACCESS_LOCAL_WRITE != 0);
    a.set(Access::REMOTE_WRITE, flags & IBV_ACCESS_REMOTE_WRITE != 0);
    a.set(Access::REMOTE_READ, flags & IBV_ACCESS_REMOTE_READ != 0);
    a.set(Access::REMOTE_ATOMIC, flags & IBV_ACCESS_REMOTE_ATOMIC != 0);
    Ok(a)
}

fn reg_mr(pd: *mut ibv_pd, addr: *mut c_void, len: usize, iova: u64, access: c_int) -> *mut ibv_mr {
    ret_ptr(|| {
        let pd = reg().pds.get(pd)?;
        if addr.is_null() || len == 0 || iova != addr as u64 {
            return Err(libc::EINVAL);
        }
        let access = access_of(access)?;
        let start = addr as usize;
        let end = start.checked_add(len).ok_or(libc::EINVAL)?;
        // The NIC's memory map holds non-overlapping ranges: refuse a second
        // registration of any byte (checked and registered under one lock).
        static REGISTERING: Mutex<()> = Mutex::new(());
        let _one_at_a_time = lock(&REGISTERING);
        let overlapping = reg().mrs.find(|m| {
            // SAFETY: `addr` and `length` of a live region's C view are written once,
            // before it is published.
            let c = unsafe { &*m.c_ptr() };
            let other = c.addr as usize;
            Arc::ptr_eq(&m.pd.ctx, &pd.ctx) && start < other + c.length && other < end
        });
        if overlapping.is_some() {
            return Err(libc::EINVAL);
        }
        // SAFETY: the program registers memory it owns and keeps valid until
        // `ibv_dereg_mr`, as the ibv_reg_mr contract requires.
        let mr = unsafe { backend::register(&pd.pd, addr.cast(), len, access) }?;
        let obj = Arc::new(Mr {
            c: UnsafeCell::new(ibv_mr {
                context: pd.ctx.c_ptr(),
                pd: pd.c_ptr(),
                addr,
                length: len,
                handle: mr.lkey(),
                lkey: mr.lkey(),
                rkey: mr.rkey(),
            }),
            pd,
            _mr: mr,
        });
        Ok(reg().mrs.insert(obj))
    })
}

/// `ibv_reg_mr`: registers application memory in place.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_reg_mr(
    pd: *mut ibv_pd,
    addr: *mut c_void,
    length: usize,
    access: c_int,
) -> *mut ibv_mr {
    reg_mr(pd, addr, length, addr as u64, access)
}

/// `ibv_reg_mr_iova`: only `iova == addr` is supported (`EINVAL` otherwise).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_reg_mr_iova(
    pd: *mut ibv_pd,
    addr: *mut c_void,
    length: usize,
    iova: u64,
    access: c_int,
) -> *mut ibv_mr {
    reg_mr(pd, addr, length, iova, access)
}

/// `ibv_reg_mr_iova2`: as [`ibv_reg_mr_iova`].
#[unsafe(no_mangle)]
pub extern "C" fn ibv_reg_mr_iova2(
    pd: *mut ibv_pd,
    addr: *mut c_void,
    length: usize,
    iova: u64,
    access: std::ffi::c_uint,
) -> *mut ibv_mr {
    reg_mr(pd, addr, length, iova, access as c_int)
}

/// `ibv_dereg_mr`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_dereg_mr(mr: *mut ibv_mr) -> c_int {
    ret_int(|| reg().mrs.remove(mr).map(drop))
}

/// `ibv_create_comp_channel`: its `fd` is an eventfd, readable when an armed CQ fired.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_create_comp_channel(ctx: *mut ibv_context) -> *mut ibv_comp_channel {
    ret_ptr(|| {
        let ctx = ctx_of(ctx)?;
        let ch = ctx.verbs.create_comp_channel().map_err(|e| e.errno())?;
        // Programs expect a blocking descriptor and make it non-blocking themselves when
        // they poll it; `ibv_get_cq_event` then returns EAGAIN instead of waiting. The
        // Verbs API's eventfd starts non-blocking and only reads it once readable, so
        // it works in either mode.
        let fd = ch.as_raw_fd();
        // SAFETY: F_GETFL/F_SETFL on the channel's own descriptor.
        let blocking = unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            fl >= 0 && libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK) == 0
        };
        if !blocking {
            return Err(libc::EIO);
        }
        let obj = Arc::new(Channel {
            c: UnsafeCell::new(ibv_comp_channel {
                context: ctx.c_ptr(),
                fd: ch.as_raw_fd(),
                refcnt: 0,
            }),
            ctx,
            ch,
            cqs: Mutex::new(HashMap::new()),
        });
        Ok(reg().channels.insert(obj))
    })
}

/// `ibv_destroy_comp_channel` (`EBUSY` while CQs use it).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_destroy_comp_channel(ch: *mut ibv_comp_channel) -> c_int {
    ret_int(|| reg().channels.remove(ch).map(drop))
}

/// `ibv_create_cq`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_create_cq(
    ctx: *mut ibv_context,
    cqe: c_int,
    cq_context: *mut c_void,
    channel: *mut ibv_comp_channel,
    comp_vector: c_int,
) -> *mut ibv_cq {
    ret_ptr(|| {
        let ctx = ctx_of(ctx)?;
        let cqe = u32::try_from(cqe).map_err(|_| libc::EINVAL)?;
        if cqe == 0 || cqe > MAX_CQE || comp_vector != 0 {
            return Err(libc::EINVAL);
        }
        let channel = if channel.is_null() {
            None
        } else {
            Some(reg().channels.get(channel)?)
        };
        if channel
            .as_ref()
            .is_some_and(|ch| !Arc::ptr_eq(&ch.ctx, &ctx))
        {
            return Err(libc::EINVAL);
        }
        let cq = ctx
            .verbs
            .create_cq(cqe as usize, channel.as_ref().map(|c| &c.ch));
        let obj = Arc::new(Cq {
            c: UnsafeCell::new(ibv_cq {
                context: ctx.c_ptr(),
                channel: channel.as_ref().map_or(std::ptr::null_mut(), |c| c.c_ptr()),
                cq_context,
                handle: cq.id(),
                cqe: cqe as c_int,
                mutex: libc::PTHREAD_MUTEX_INITIALIZER,
                cond: libc::PTHREAD_COND_INITIALIZER,
                comp_events_completed: 0,
                async_events_completed: 0,
            }),
            ctx,
            channel,
            cq,
            events: Mutex::new(()),
        });
        let id = obj.cq.id();
        let handle = reg().cqs.insert(Arc::clone(&obj));
        if let Some(ch) = &obj.channel {
            lock(&ch.cqs).insert(id, handle as usize);
        }
        Ok(handle)
    })
}

/// `ibv_resize_cq`: the queue grows on demand, so only the reported size changes.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_resize_cq(cq: *mut ibv_cq, cqe: c_int) -> c_int {
    ret_int(|| {
        let cq = reg().cqs.get(cq)?;
        if cqe <= 0 || cqe as u32 > MAX_CQE {
            return Err(libc::EINVAL);
        }
        // SAFETY: `cqe` is a plain int of our C view.
        unsafe { (*cq.c_ptr()).cqe = cqe };
        Ok(())
    })
}

/// `ibv_destroy_cq` (`EBUSY` while QPs use it).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_destroy_cq(cq: *mut ibv_cq) -> c_int {
    ret_int(|| {
        let obj = reg().cqs.remove(cq)?;
        if let Some(ch) = &obj.channel {
            lock(&ch.cqs).remove(&obj.cq.id());
        }
        Ok(())
    })
}

/// `ibv_create_qp`: RC only, with or without an SRQ, up to the device's `max_sge` scatter/gather
/// elements per work request. The granted capabilities are written back to
/// `init_attr->cap`: the SGE limits granted are the device's, which is what
/// `ibv_post_send`/`ibv_post_recv` enforce.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_create_qp(pd: *mut ibv_pd, init: *mut ibv_qp_init_attr) -> *mut ibv_qp {
    ret_ptr(|| {
        // SAFETY: a non-NULL `init` points to the caller's init attributes.
        create_qp(pd, unsafe { out(init) }?, 0)
    })
}

/// Creates a QP for `ibv_create_qp` and `ibv_create_qp_ex`: with `send_ops` (the
/// `IBV_QP_EX_WITH_*` flags, 0 for none) its `ibv_qp_ex` has the `ibv_wr_*` builder.
pub(crate) fn create_qp(
    pd: *mut ibv_pd,
    init: &mut ibv_qp_init_attr,
    send_ops: u64,
) -> Result<*mut ibv_qp, Errno> {
    let pd = reg().pds.get(pd)?;
    if init.qp_type != IBV_QPT_RC {
        return Err(libc::EOPNOTSUPP);
    }
    let send_cq = reg().cqs.get(init.send_cq)?;
    let recv_cq = reg().cqs.get(init.recv_cq)?;
    let srq = (!init.srq.is_null())
        .then(|| reg().srqs.get(init.srq))
        .transpose()?;
    let same_ctx = |cq: &Cq| Arc::ptr_eq(&cq.ctx, &pd.ctx);
    let cap = init.cap;
    let max_sge = pd.ctx.verbs.max_sge() as u32;
    if !same_ctx(&send_cq)
        || !same_ctx(&recv_cq)
        || srq.as_ref().is_some_and(|s| !Arc::ptr_eq(&s.pd, &pd))
        || cap.max_send_wr > MAX_QP_WR
        || cap.max_recv_wr > MAX_QP_WR
        || cap.max_send_sge > max_sge
        || cap.max_recv_sge > max_sge
        || cap.max_inline_data > MAX_INLINE
    {
        return Err(libc::EINVAL);
    }
    let granted = ibv_qp_cap {
        max_send_wr: cap.max_send_wr.max(1),
        max_recv_wr: cap.max_recv_wr.max(1),
        max_send_sge: max_sge,
        max_recv_sge: max_sge,
        max_inline_data: cap.max_inline_data,
    };
    let mut config = pd.ctx.verbs.default_qp_config();
    config.max_send_wr = granted.max_send_wr as usize;
    config.max_recv_wr = granted.max_recv_wr as usize;
    // Authenticated mode for unmodified programs: every QP of the process
    // uses the key (docs/verbs.md); a malformed key fails the QP.
    if let Some(hex) = crate::backend::env("METAROCE_IBV_AUTH_KEY") {
        config.auth = Some(AuthKey::from_hex(&hex).ok_or(libc::EINVAL)?);
    }
    let qp = pd
        .pd
        .create_qp(&QpInit {
            send_cq: &send_cq.cq,
            recv_cq: &recv_cq.cq,
            config: Some(config),
            max_inline: granted.max_inline_data,
            srq: srq.as_ref().map(|s| &s.srq),
        })
        .map_err(|e| e.errno())?;
    init.cap = granted;
    let attr = ibv_qp_attr {
        cap: granted,
        port_num: 1,
        ..Default::default()
    };
    let base = ibv_qp {
        context: pd.ctx.c_ptr(),
        qp_context: init.qp_context,
        pd: pd.c_ptr(),
        send_cq: send_cq.c_ptr(),
        recv_cq: recv_cq.c_ptr(),
        srq: srq.as_ref().map_or(std::ptr::null_mut(), |s| s.c_ptr()),
        handle: qp.qpn(),
        qp_num: qp.qpn(),
        state: IBV_QPS_RESET,
        qp_type: IBV_QPT_RC,
        mutex: libc::PTHREAD_MUTEX_INITIALIZER,
        cond: libc::PTHREAD_COND_INITIALIZER,
        events_completed: 0,
    };
    let obj = Arc::new(Qp {
        c: UnsafeCell::new(crate::verbs::qp_ex::qp_ex(base, send_ops)),
        send_ops,
        builder: Mutex::new(Default::default()),
        pd,
        _cqs: [send_cq, recv_cq],
        _srq: srq,
        qp,
        sig_all: init.sq_sig_all != 0,
        cap: granted,
        attr: Mutex::new(attr),
    });
    Ok(reg().qps.insert(obj))
}

/// `ibv_destroy_qp`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_destroy_qp(qp: *mut ibv_qp) -> c_int {
    ret_int(|| reg().qps.remove(qp).map(drop))
}

/// Copies the attributes named in `mask` from `new` into `saved`.
fn merge_attr(saved: &mut ibv_qp_attr, new: &ibv_qp_attr, mask: c_int) {
    let has = |bit: c_int| mask & bit != 0;
    if has(1 << 3) {
        saved.qp_access_flags = new.qp_access_flags;
    }
    if has(1 << 4) {
        saved.pkey_index = new.pkey_index;
    }
    if has(1 << 5) {
        saved.port_num = new.port_num;
    }
    if has(1 << 6) {
        saved.qkey = new.qkey;
    }
    if has(IBV_QP_AV) {
        saved.ah_attr = new.ah_attr;
    }
    if has(1 << 8) {
        saved.path_mtu = new.path_mtu;
    }
    if has(IBV_QP_TIMEOUT) {
        saved.timeout = new.timeout;
    }
    if has(IBV_QP_RETRY_CNT) {
        saved.retry_cnt = new.retry_cnt;
    }
    if has(IBV_QP_RNR_RETRY) {
        saved.rnr_retry = new.rnr_retry;
    }
    if has(IBV_QP_RQ_PSN) {
        saved.rq_psn = new.rq_psn;
    }
    if has(1 << 13) {
        saved.max_rd_atomic = new.max_rd_atomic;
    }
    if has(1 << 15) {
        saved.min_rnr_timer = new.min_rnr_timer;
    }
    if has(IBV_QP_SQ_PSN) {
        saved.sq_psn = new.sq_psn;
    }
    if has(1 << 17) {
        saved.max_dest_rd_atomic = new.max_dest_rd_atomic;
    }
    if has(IBV_QP_DEST_QPN) {
        saved.dest_qp_num = new.dest_qp_num;
    }
}

/// Where the peer of an RTR transition is: the address of `ah_attr.grh.dgid` (or the
/// context's NIC's own address without a GRH) and the UDP port in `ah_attr.dlid` — or, for
/// programs that leave the LID out on Ethernet (NCCL, RCCL), the fixed port
/// `fixed_port` every host's NIC uses (`METAROCE_IBV_PORT`). `via` (`METAROCE_IBV_VIA`)
/// overrides both: everything goes to that relay.
fn peer_addr(
    local: IpAddr,
    ah: &ibv_ah_attr,
    fixed_port: Option<u16>,
    via: Option<&str>,
) -> Result<SocketAddr, Errno> {
    if let Some(via) = via {
        return via.parse().map_err(|_| libc::EINVAL);
    }
    let ip = if ah.is_global != 0 {
        gid_to_ip(&ah.grh.dgid)
    } else {
        local
    };
    let port = match (ah.dlid, fixed_port) {
        (0, Some(p)) if p != 0 => p,
        (0, _) => return Err(libc::EINVAL),
        (lid, _) => lid,
    };
    if ip.is_ipv6() != local.is_ipv6() {
        return Err(libc::EINVAL);
    }
    Ok(SocketAddr::new(ip, port))
}

/// Verbs `timeout` (4.096 µs × 2^t; 0 = infinite, here the longest) in ns.
fn timeout_ns(t: u8) -> u64 {
    let t = if t == 0 { 31 } else { t.min(31) };
    4096u64 << t
}

fn ibv_state(s: QpState) -> c_int {
    match s {
        QpState::Reset => IBV_QPS_RESET,
        QpState::Init => IBV_QPS_INIT,
        QpState::Rtr => IBV_QPS_RTR,
        QpState::Rts => IBV_QPS_RTS,
        QpState::Error => IBV_QPS_ERR,
    }
}

/// `ibv_modify_qp`: RESET → INIT → RTR → RTS, → ERR, → RESET. Attributes without a
/// state change are recorded (and reported by `ibv_query_qp`).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_modify_qp(qp: *mut ibv_qp, attr: *mut ibv_qp_attr, mask: c_int) -> c_int {
    ret_int(|| {
        let qp = reg().qps.get(qp)?;
        // SAFETY: a non-NULL `attr` points to the caller's attributes.
        let new = unsafe { arg(attr) }?;
        let mut saved = lock(&qp.attr);
        let mut next = *saved;
        merge_attr(&mut next, new, mask);
        if mask & IBV_QP_STATE == 0 {
            *saved = next;
            return Ok(());
        }
        let current = ibv_state(qp.qp.state());
        let t = match new.qp_state {
            IBV_QPS_INIT if current == IBV_QPS_INIT => None,
            IBV_QPS_INIT => Some(QpTransition::Init),
            IBV_QPS_RTR => {
                let need = IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
                if mask & need != need {
                    return Err(libc::EINVAL);
                }
                let fixed = backend::env("METAROCE_IBV_PORT").and_then(|p| p.parse().ok());
                let via = backend::env("METAROCE_IBV_VIA");
                let peer = peer_addr(
                    qp.pd.ctx.verbs.address().ip(),
                    &next.ah_attr,
                    fixed,
                    via.as_deref(),
                )?;
                Some(QpTransition::Rtr(RemoteEnd {
                    qpn: next.dest_qp_num,
                    ip: peer.ip(),
                    udp_port: peer.port(),
                    initial_psn: next.rq_psn & 0xff_ffff,
                }))
            }
            IBV_QPS_RTS if current == IBV_QPS_RTS => None,
            IBV_QPS_RTS => {
                if mask & IBV_QP_SQ_PSN == 0 {
                    return Err(libc::EINVAL);
                }
                Some(QpTransition::Rts {
                    initial_psn: next.sq_psn & 0xff_ffff,
                    retry_cnt: next.retry_cnt.min(7),
                    rnr_retry: next.rnr_retry.min(7),
                    timeout_ns: timeout_ns(next.timeout),
                })
            }
            IBV_QPS_ERR => Some(QpTransition::Error),
            IBV_QPS_RESET => Some(QpTransition::Reset),
            IBV_QPS_SQD | IBV_QPS_SQE => return Err(libc::EOPNOTSUPP),
            _ => return Err(libc::EINVAL),
        };
        if let Some(t) = t {
            qp.qp.modify(t).map_err(|e| e.errno())?;
        }
        *saved = next;
        qp.set_state(&mut saved, new.qp_state);
        Ok(())
    })
}

/// `ibv_query_qp`: the attributes set so far and the current state.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_qp(
    qp: *mut ibv_qp,
    attr: *mut ibv_qp_attr,
    _mask: c_int,
    init: *mut ibv_qp_init_attr,
) -> c_int {
    ret_int(|| {
        let qp = reg().qps.get(qp)?;
        // SAFETY: non-NULL pointers to the caller's attribute structs.
        let (attr, init) = unsafe { (out(attr)?, out(init)?) };
        let mut saved = lock(&qp.attr);
        // The engine may have moved the QP to ERR on its own: report (and record) that.
        let state = ibv_state(qp.qp.state());
        qp.set_state(&mut saved, state);
        let mut a = *saved;
        drop(saved);
        a.cap = qp.cap;
        *attr = a;
        // SAFETY: reading plain fields of our own C view.
        let c = unsafe { &*qp.c_ptr() };
        *init = ibv_qp_init_attr {
            qp_context: c.qp_context,
            send_cq: c.send_cq,
            recv_cq: c.recv_cq,
            srq: c.srq,
            cap: qp.cap,
            qp_type: IBV_QPT_RC,
            sq_sig_all: c_int::from(qp.sig_all),
        };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_rules() {
        assert!(access_of(IBV_ACCESS_REMOTE_WRITE).is_err());
        assert!(access_of(IBV_ACCESS_REMOTE_ATOMIC).is_err());
        assert_eq!(
            access_of(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC),
            Ok(Access::LOCAL_WRITE | Access::REMOTE_ATOMIC)
        );
        assert!(access_of(1 << 12).is_err());
        let a =
            access_of(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
                .unwrap();
        assert_eq!(
            a,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ
        );
        assert_eq!(access_of(0).unwrap(), Access::empty());
    }

    #[test]
    fn peer_from_gid_and_lid() {
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let mut ah = ibv_ah_attr {
            dlid: 4791,
            ..Default::default()
        };
        let addr = |s: &str| -> SocketAddr { s.parse().unwrap() };
        assert_eq!(
            peer_addr(local, &ah, None, None),
            Ok(addr("127.0.0.1:4791"))
        );
        ah.is_global = 1;
        ah.grh.dgid.raw = std::net::Ipv4Addr::new(127, 0, 0, 2)
            .to_ipv6_mapped()
            .octets();
        assert_eq!(
            peer_addr(local, &ah, Some(9), None),
            Ok(addr("127.0.0.2:4791"))
        );
        assert_eq!(
            peer_addr(local, &ah, None, Some("127.0.0.1:7000")),
            Ok(addr("127.0.0.1:7000"))
        );
        ah.grh.dgid.raw = std::net::Ipv6Addr::LOCALHOST.octets();
        assert_eq!(peer_addr(local, &ah, None, None), Err(libc::EINVAL));
        ah.dlid = 0;
        let v6: IpAddr = "::1".parse().unwrap();
        assert_eq!(peer_addr(v6, &ah, None, None), Err(libc::EINVAL));
        assert_eq!(peer_addr(v6, &ah, Some(4791), None), Ok(addr("[::1]:4791")));
    }

    #[test]
    fn timeouts() {
        assert_eq!(timeout_ns(14), 4096 << 14);
        assert_eq!(timeout_ns(0), 4096 << 31);
    }

    #[test]
    fn merge_only_masked() {
        let mut saved = ibv_qp_attr::default();
        let new = ibv_qp_attr {
            sq_psn: 5,
            rq_psn: 6,
            timeout: 14,
            ..Default::default()
        };
        merge_attr(&mut saved, &new, IBV_QP_SQ_PSN | IBV_QP_TIMEOUT);
        assert_eq!((saved.sq_psn, saved.rq_psn, saved.timeout), (5, 0, 14));
    }
}
