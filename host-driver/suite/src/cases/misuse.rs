//! API misuse returns what ibverbs would: an errno at post time, or an error completion.

use std::net::SocketAddr;

use metaroce_driver::verbs::*;

use crate::{CaseKinds, Family, connect_direct, wait_until, wait_wcs};

const EINVAL: i32 = 22;
const ENOMEM: i32 = 12;

fn errno(r: Result<()>) -> i32 {
    r.expect_err("call must fail").errno()
}

/// Posting before RTS is EINVAL; RTS straight from INIT is refused; nothing is left
/// half-posted.
pub fn posting_in_wrong_state_is_einval(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    let wr = SendRequest::write(1, a.mr.sge(0, 8), b.mr.addr(), b.mr.rkey());
    assert_eq!(a.qp.state(), QpState::Reset);
    assert_eq!(errno(a.qp.post_send(&wr)), EINVAL);
    a.qp.modify(QpTransition::Init).unwrap();
    assert_eq!(errno(a.qp.post_send(&wr)), EINVAL);
    // RTS straight from INIT is not a legal transition.
    let rts = QpTransition::Rts {
        initial_psn: 0,
        retry_cnt: 7,
        rnr_retry: 7,
        timeout_ns: 1_000_000,
    };
    assert!(matches!(
        a.qp.modify(rts),
        Err(Error::Verbs(VerbsError::InvalidTransition))
    ));
    connect_direct(&a, &b, &p.connect_options());
    a.qp.post_send(&wr).unwrap();
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::Success);
    // Nothing half-posted was left behind by the refused calls.
    assert_eq!(a.qp.outstanding_sends(), 0);
}

/// A local address outside every region completes with LOC_PROT_ERR (even
/// unsignaled) and moves the QP to ERR; a receive into unregistered memory is EINVAL.
pub fn unregistered_memory_completes_with_local_protection_error(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
    // A local address outside every region, under a valid lkey.
    let bad = Sge {
        addr: a.mr.addr() + a.mr.len() as u64,
        len: 64,
        lkey: a.mr.lkey(),
    };
    a.qp.post_send(&SendRequest::write(5, bad, b.mr.addr(), b.mr.rkey()).signaled(false))
        .unwrap();
    let w = wait_wcs(&a.cq, 1);
    assert_eq!(
        (w[0].wr_id, w[0].status),
        (5, WcStatus::LocProtErr),
        "errors complete even unsignaled"
    );
    assert_eq!(ibv_wc_status(w[0].status), 4);
    assert_eq!(a.qp.state(), QpState::Error);
    // A receive into unregistered memory is refused at post time.
    let r = RecvWr {
        wr_id: 1,
        sgl: Sge {
            addr: 0x10,
            len: 8,
            lkey: 0xdead,
        }
        .into(),
        stream: 0,
    };
    assert_eq!(errno(b.qp.post_recv(r)), EINVAL);
}

/// A WRITE under a wrong rkey completes with REM_ACCESS_ERR, and B counts the refusal.
pub fn bad_remote_key_completes_with_remote_access_error(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
    a.qp.post_send(&SendRequest::write(
        6,
        a.mr.sge(0, 64),
        b.mr.addr(),
        b.mr.rkey() ^ 0x55,
    ))
    .unwrap();
    let w = wait_wcs(&a.cq, 1);
    assert_eq!((w[0].wr_id, w[0].status), (6, WcStatus::RemAccessErr));
    assert!(b.ctx.drops().remote_access > 0, "{:?}", b.ctx.drops());
}

/// Oversized, inline-too-long, inline READ and unknown-stream requests are EINVAL; a
/// SEND longer than the receive is REM_INV_REQ_ERR at the sender; bad registrations
/// are refused.
pub fn oversized_and_invalid_requests_are_refused(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
    let (va, rkey) = (b.mr.addr(), b.mr.rkey());
    // Longer than the largest message (2 GiB).
    let huge = Sge {
        addr: a.mr.addr(),
        len: u32::MAX,
        lkey: a.mr.lkey(),
    };
    assert_eq!(
        errno(a.qp.post_send(&SendRequest::write(1, huge, va, rkey))),
        EINVAL
    );
    // Inline data beyond max_inline, and an inline READ.
    let big = vec![0u8; 65];
    let wr = SendRequest::new(
        2,
        SendOp::Write {
            remote_va: va,
            rkey,
        },
        Payload::Inline(&big),
    );
    assert_eq!(errno(a.qp.post_send(&wr)), EINVAL);
    let wr = SendRequest::new(
        3,
        SendOp::Read {
            remote_va: va,
            rkey,
        },
        Payload::Inline(&big[..8]),
    );
    assert_eq!(errno(a.qp.post_send(&wr)), EINVAL);
    // A stream the QP does not have.
    let wr = SendRequest::write(4, a.mr.sge(0, 8), va, rkey).on_stream(999);
    assert_eq!(errno(a.qp.post_send(&wr)), EINVAL);
    // A SEND longer than the posted receive: the sender gets an invalid-request error
    // (the receiver NACKs it; it does not complete the receive with LOC_LEN_ERR).
    b.qp.post_recv(RecvWr {
        wr_id: 9,
        sgl: b.mr.sge(0, 100).into(),
        stream: 0,
    })
    .unwrap();
    a.qp.post_send(&SendRequest::send(5, a.mr.sge(0, 1000)))
        .unwrap();
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::RemInvReqErr);
    assert!(b.ctx.drops().invalid_request > 0, "{:?}", b.ctx.drops());
    // Zero-length registration is refused.
    assert!(matches!(
        a.pd.alloc_mr(0, Access::LOCAL_WRITE),
        Err(Error::Register(_))
    ));
    // REMOTE_WRITE without LOCAL_WRITE is refused (Verbs rule).
    assert!(a.pd.alloc_mr(64, Access::REMOTE_WRITE).is_err());
}

/// A zero-length WRITE with a null SGE succeeds, as in ibverbs.
pub fn zero_length_write_is_legal_as_in_ibverbs(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
    let zero = Sge {
        addr: 0,
        len: 0,
        lkey: 0,
    };
    a.qp.post_send(&SendRequest::write(1, zero, b.mr.addr(), b.mr.rkey()))
        .unwrap();
    let w = wait_wcs(&a.cq, 1);
    assert_eq!((w[0].status, w[0].byte_len), (WcStatus::Success, 0));
}

/// A send queue of 4 towards a peer that never answers: the fifth post is ENOMEM.
pub fn full_send_queue_is_enomem(p: &CaseKinds<'_>) {
    let Some(a) = p.side_a(&p.opts(Family::V4)) else {
        return;
    };
    let cfg = QpConfig {
        max_send_wr: 4,
        ..a.ctx.default_qp_config()
    };
    let mut init = QpInit::new(&a.cq, &a.cq);
    init.config = Some(cfg);
    let qp = a.pd.create_qp(&init).unwrap();
    // Towards a peer that never answers, so nothing completes.
    let peer = QpEndpoint {
        qpn: 0x99,
        addr: SocketAddr::new(Family::V4.loopback(), 9),
        psn: 0,
    };
    qp.connect(&peer, &p.connect_options()).unwrap();
    for i in 0..4 {
        qp.post_send(&SendRequest::write(i, a.mr.sge(0, 8), 0, 1))
            .unwrap();
    }
    assert_eq!(
        errno(qp.post_send(&SendRequest::write(9, a.mr.sge(0, 8), 0, 1))),
        ENOMEM
    );
}

/// A source region dropped right after posting, and a destination region dropped
/// while WRITEs into it are in flight: every request completes (successfully or
/// cleanly failed), and both NICs still work for a fresh QP pair.
pub fn dropping_regions_mid_transfer_never_touches_freed_memory(p: &CaseKinds<'_>) {
    let bulk = p.bulk();
    let mut o = p.opts(Family::V4);
    o.mem = bulk;
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
    let access = Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ;
    let src = a.pd.alloc_mr(8 * bulk, access).unwrap();
    let dst = b.pd.alloc_mr(8 * bulk, access).unwrap();
    for i in 0..8u64 {
        let off = i as usize * bulk;
        let wr = SendRequest::write(
            i,
            src.sge(off, bulk as u32),
            dst.addr() + off as u64,
            dst.rkey(),
        );
        a.qp.post_send(&wr).unwrap();
    }
    drop(dst);
    drop(src);
    let wcs = wait_wcs(&a.cq, 8);
    assert_eq!(
        wcs.len(),
        8,
        "every request completes: {wcs:?}; A {:?} {:?}; B {:?}",
        a.ctx.stats(),
        a.ctx.datapath_stats(),
        b.ctx.drops()
    );
    // Whatever got through before the drops succeeded; the rest failed cleanly.
    assert!(wcs.iter().all(|w| matches!(
        w.status,
        WcStatus::Success | WcStatus::LocProtErr | WcStatus::RemAccessErr | WcStatus::WrFlushErr
    )));
    // The same NICs and their other regions still work, for a fresh QP pair.
    let qa = a.pd.create_qp(&QpInit::new(&a.cq, &a.cq)).unwrap();
    let qb = b.pd.create_qp(&QpInit::new(&b.cq, &b.cq)).unwrap();
    qa.connect(&qb.endpoint(), &p.connect_options()).unwrap();
    qb.connect(&qa.endpoint(), &p.connect_options()).unwrap();
    a.mr.write(0, b"alive");
    let wr = SendRequest::write(1, a.mr.sge(0, 5), b.mr.addr(), b.mr.rkey());
    qa.post_send(&wr).unwrap();
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::Success);
    assert!(wait_until(|| b.mr.equals(0, b"alive")));
}
