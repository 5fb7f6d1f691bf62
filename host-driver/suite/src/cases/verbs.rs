//! The Verbs data path both ways, and completion channels.

use std::time::Duration;

use metaroce_driver::verbs::*;

use crate::{CaseKinds, DEADLINE, Family, Side, connect_direct, pattern, wait_until, wait_wcs};

/// `from` WRITEs `data` (placed at `at` in its source region `src`) into the peer's
/// buffer at `at`, in `pieces` messages of which only the last is signaled; the bytes
/// are checked in `to`'s buffer.
fn write_pieces(from: &Side, src: &MemoryRegion, to: &Side, at: usize, data: &[u8], pieces: usize) {
    src.write(at, data);
    let piece = data.len() / pieces;
    for i in 0..pieces {
        let off = at + i * piece;
        let wr = SendRequest::write(
            i as u64,
            src.sge(off, piece as u32),
            to.mr.addr() + off as u64,
            to.mr.rkey(),
        )
        .signaled(i + 1 == pieces);
        from.qp.post_send(&wr).unwrap();
    }
    let wcs = wait_wcs(&from.cq, 1);
    assert_eq!(wcs.len(), 1, "one signaled completion");
    let last = pieces as u64 - 1;
    assert_eq!((wcs[0].wr_id, wcs[0].status), (last, WcStatus::Success));
    assert_eq!(wcs[0].opcode, WcOpcode::Write);
    // The sender's completion means the peer acknowledged the bytes; a device that
    // bounces placed data through a shadow makes them visible when its driver
    // handles the placement event, a moment later.
    assert!(wait_until(|| to.mr.equals(at, data)), "WRITE data placed");
}

/// `from` SENDs `msg` (from `at` in its source region `src`) with an immediate into a
/// receive `to` posted at `dst`.
fn send_imm(
    from: &Side,
    src: &MemoryRegion,
    to: &Side,
    at: usize,
    dst: usize,
    recv_len: u32,
    msg: &[u8],
) {
    src.write(at, msg);
    to.qp
        .post_recv(RecvWr {
            wr_id: 77,
            sgl: to.mr.sge(dst, recv_len).into(),
            stream: 0,
        })
        .unwrap();
    let mut wr = SendRequest::send(5, src.sge(at, msg.len() as u32));
    wr.op = SendOp::SendImm { imm: 0xabcd };
    from.qp.post_send(&wr).unwrap();
    let r = wait_wcs(&to.cq, 1);
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].wr_id, r[0].status, r[0].opcode),
        (77, WcStatus::Success, WcOpcode::Recv)
    );
    assert_eq!((r[0].byte_len, r[0].imm), (msg.len() as u32, Some(0xabcd)));
    assert!(to.mr.equals(dst, msg), "SEND placed in the receive");
    assert_eq!(wait_wcs(&from.cq, 1)[0].wr_id, 5);
}

/// `from` READs `len` bytes of the peer's buffer at `src` into its own at `dst`; they
/// must equal `expect`.
fn read(from: &Side, to: &Side, src: usize, dst: usize, expect: &[u8]) {
    let rd = SendRequest::read(
        9,
        from.mr.sge(dst, expect.len() as u32),
        to.mr.addr() + src as u64,
        to.mr.rkey(),
    );
    from.qp.post_send(&rd).unwrap();
    let w = wait_wcs(&from.cq, 1);
    assert_eq!(
        (w[0].wr_id, w[0].status, w[0].opcode),
        (9, WcStatus::Success, WcOpcode::Read)
    );
    assert!(from.mr.equals(dst, expect), "READ data placed");
}

/// An inline WRITE: the source is copied at post time and may change right after.
fn inline_write(from: &Side, to: &Side) {
    let mut small = *b"inline bytes!";
    let wr = SendRequest::new(
        11,
        SendOp::Write {
            remote_va: to.mr.addr() + 100,
            rkey: to.mr.rkey(),
        },
        Payload::Inline(&small),
    );
    from.qp.post_send(&wr).unwrap();
    small.fill(0);
    assert_eq!(wait_wcs(&from.cq, 1)[0].status, WcStatus::Success);
    assert!(wait_until(|| to.mr.equals(100, b"inline bytes!")));
}

/// WRITE (16 pieces one way, 4 the other), SEND with immediate, READ and inline WRITE,
/// each both ways, every byte checked; no datagram dropped on either side.
pub fn write_send_read(p: &CaseKinds<'_>, family: Family, busy_poll: bool) {
    let bulk = p.bulk();
    let mut o = p.opts(family);
    o.busy_poll = busy_poll;
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());

    // What a side sends comes from a region of its own that the peer cannot write: on
    // a device that bounces placed data through a shadow (vfio-user), a placement
    // makes the driver copy every remotely writable region back, over bytes written
    // locally and not sent yet (docs/driver.md).
    let access = Access::LOCAL_WRITE;
    let (a_src, b_src) = (
        a.pd.alloc_mr(4 * bulk, access).unwrap(),
        b.pd.alloc_mr(4 * bulk, access).unwrap(),
    );
    // Each side's buffer: [0, bulk) the A→B WRITE, [bulk, 2 bulk) the B→A WRITE,
    // [2 bulk, 3 bulk) the READs, [3 bulk, 4 bulk) the receives.
    let data = pattern(1, bulk);
    write_pieces(&a, &a_src, &b, 0, &data, 16);
    let back = pattern(2, bulk);
    write_pieces(&b, &b_src, &a, bulk, &back, 4);

    let msg_len = 10_000.min(bulk / 4);
    let recv_len = (bulk / 2).min(16384) as u32;
    let at = 2 * bulk;
    send_imm(&a, &a_src, &b, at, 3 * bulk, recv_len, &pattern(3, msg_len));
    let dst = 3 * bulk + bulk / 2;
    send_imm(&b, &b_src, &a, at, dst, recv_len, &pattern(4, msg_len));

    // READ back what each side's WRITE left in the other.
    read(&a, &b, 0, 2 * bulk, &data);
    read(&b, &a, bulk, 2 * bulk, &back);

    inline_write(&a, &b);
    inline_write(&b, &a);
    assert_eq!(a.ctx.drops(), Drops::default(), "A dropped nothing");
    assert_eq!(b.ctx.drops(), Drops::default(), "B dropped nothing");
}

/// A completion channel fires once armed, and not again until re-armed; B's second
/// QP receives through a CQ on the channel.
pub fn completion_channel_fires_once_armed(p: &CaseKinds<'_>) {
    let o = p.opts(Family::V4);
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    let ch = b.ctx.create_comp_channel().unwrap();
    let rcq = b.ctx.create_cq(16, Some(&ch));
    let qp = b.pd.create_qp(&QpInit::new(&b.cq, &rcq)).unwrap();
    a.qp.connect(&qp.endpoint(), &p.connect_options()).unwrap();
    qp.connect(&a.qp.endpoint(), &p.connect_options()).unwrap();
    assert!(ch.get_cq_event(Some(Duration::ZERO)).unwrap().is_none());
    rcq.req_notify(false).unwrap();
    qp.post_recv(RecvWr {
        wr_id: 1,
        sgl: b.mr.sge(0, 64).into(),
        stream: 0,
    })
    .unwrap();
    a.qp.post_send(&SendRequest::new(
        3,
        SendOp::Send,
        Payload::Inline(b"hello"),
    ))
    .unwrap();
    let fired = ch.get_cq_event(Some(DEADLINE)).unwrap();
    assert_eq!(fired, Some(rcq.id()));
    let mut wc = [Wc::default(); 4];
    assert_eq!(rcq.poll(&mut wc), 1);
    assert_eq!((wc[0].wr_id, wc[0].byte_len), (1, 5));
    // Not re-armed: a second completion does not fire.
    qp.post_recv(RecvWr {
        wr_id: 2,
        sgl: b.mr.sge(64, 64).into(),
        stream: 0,
    })
    .unwrap();
    a.qp.post_send(&SendRequest::new(
        4,
        SendOp::Send,
        Payload::Inline(b"again"),
    ))
    .unwrap();
    assert_eq!(wait_wcs(&rcq, 1).len(), 1);
    assert!(ch.get_cq_event(Some(Duration::ZERO)).unwrap().is_none());
}

/// One SEND gathered from two regions into a receive scattered over two, then
/// a READ scattered back over two; more elements than the device takes are
/// refused. Skipped where a side takes one element per request (the hardware
/// data path).
pub fn gather_and_scatter_lists_over_two_regions(p: &CaseKinds<'_>) {
    let o = p.opts(Family::V4);
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    let max = a.ctx.max_sge().min(b.ctx.max_sge());
    if max < 2 {
        p.skip(format!("max_sge is {max}: one buffer per work request"));
        return;
    }
    connect_direct(&a, &b, &p.connect_options());
    assert_eq!(a.ctx.max_sge(), MAX_SGE);
    // A second region on each side: one work request spans both.
    let a2 = a.pd.alloc_mr(1 << 16, Access::LOCAL_WRITE).unwrap();
    let b2 = b.pd.alloc_mr(1 << 16, Access::LOCAL_WRITE).unwrap();
    let head = pattern(3, 6000);
    let tail = pattern(4, 9000);
    a.mr.write(0, &head);
    a2.write(100, &tail);
    let msg = [head.clone(), tail.clone()].concat();
    // The receive: 5000 bytes in b2, then 20 000 in b's region.
    b.qp.post_recv(RecvWr {
        wr_id: 1,
        sgl: SgList::new(&[b2.sge(0, 5000), b.mr.sge(16 << 10, 20_000)]).unwrap(),
        stream: 0,
    })
    .unwrap();
    let sges = [a.mr.sge(0, 6000), a2.sge(100, 9000)];
    let send = SendRequest::new(2, SendOp::Send, Payload::Sges(&sges));
    a.qp.post_send(&send).unwrap();
    let r = wait_wcs(&b.cq, 1);
    assert_eq!(
        (r[0].wr_id, r[0].status, r[0].byte_len),
        (1, WcStatus::Success, 15_000)
    );
    assert!(b2.equals(0, &msg[..5000]));
    assert!(b.mr.equals(16 << 10, &msg[5000..]));
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::Success);
    // A READ of those bytes scattered back over both of A's regions.
    let back = [a2.sge(20_000, 3000), a.mr.sge(40 << 10, 5000)];
    let read = SendRequest::new(
        3,
        SendOp::Read {
            remote_va: b.mr.addr() + (16 << 10) + 2000,
            rkey: b.mr.rkey(),
        },
        Payload::Sges(&back),
    );
    a.qp.post_send(&read).unwrap();
    let w = wait_wcs(&a.cq, 1);
    assert_eq!((w[0].status, w[0].byte_len), (WcStatus::Success, 8000));
    assert!(a2.equals(20_000, &msg[7000..10_000]));
    assert!(a.mr.equals(40 << 10, &msg[10_000..15_000]));
    // More elements than the device takes: refused, nothing posted.
    let many = [a.mr.sge(0, 1); MAX_SGE + 1];
    let wr = SendRequest::new(4, SendOp::Send, Payload::Sges(&many));
    assert_eq!(
        a.qp.post_send(&wr).unwrap_err().errno(),
        22 /* EINVAL */
    );
    assert_eq!(a.qp.outstanding_sends(), 0);
}

/// A Verbs responder answers READs while still in RTR (perftest's `ib_read_bw` server
/// never moves to RTS): A is only moved to RTR, B connects and READs A's buffer in two
/// requests; both complete with A's bytes and A stays in RTR.
pub fn reads_answered_from_rtr(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    let peer = b.qp.endpoint();
    a.qp.modify(QpTransition::Init).unwrap();
    a.qp.modify(QpTransition::Rtr(RemoteEnd {
        qpn: peer.qpn,
        ip: peer.addr.ip(),
        udp_port: peer.addr.port(),
        initial_psn: peer.psn,
    }))
    .expect("A to RTR");
    b.qp.connect(&a.qp.endpoint(), &p.connect_options())
        .expect("connect B");
    let bulk = p.bulk();
    let data = pattern(5, 2 * bulk);
    a.mr.write(0, &data);
    for (i, (at, len)) in [(0, bulk), (bulk, bulk)].into_iter().enumerate() {
        let wr = SendRequest::read(
            i as u64,
            b.mr.sge(at, len as u32),
            a.mr.addr() + at as u64,
            a.mr.rkey(),
        );
        b.qp.post_send(&wr).unwrap();
    }
    let wcs = wait_wcs(&b.cq, 2);
    let got: Vec<_> = wcs.iter().map(|w| (w.wr_id, w.status, w.opcode)).collect();
    assert_eq!(
        got,
        [
            (0, WcStatus::Success, WcOpcode::Read),
            (1, WcStatus::Success, WcOpcode::Read)
        ]
    );
    assert!(b.mr.equals(0, &data), "A's bytes READ into B");
    assert_eq!(a.qp.state(), QpState::Rtr);
}

/// Fetch-and-add and compare-and-swap, each way, on an 8-byte counter in a region of
/// the peer with REMOTE_ATOMIC: every atomic returns the value it found, the counter
/// ends at the sum of the adds and then at the swapped value, a compare that fails
/// leaves it unchanged; at last an atomic at an address that is not 8-byte aligned
/// fails with a remote invalid-request error and changes nothing.
pub fn atomics_fetch_add_and_compare_swap(p: &CaseKinds<'_>) {
    let o = p.opts(Family::V4);
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
    let mut targets = Vec::new();
    for (k, (from, to)) in [(&a, &b), (&b, &a)].into_iter().enumerate() {
        let start = 1000 * (k as u64 + 1);
        let target = to
            .pd
            .alloc_mr(64, Access::LOCAL_WRITE | Access::REMOTE_ATOMIC)
            .unwrap();
        target.write(8, &start.to_ne_bytes());
        let found = from.pd.alloc_mr(64, Access::LOCAL_WRITE).unwrap();
        let (va, rkey) = (target.addr() + 8, target.rkey());
        for i in 0..3 {
            let add = SendOp::FetchAdd {
                remote_va: va,
                rkey,
                add: 7,
            };
            let got = atomic(from, &found, i, add);
            assert_eq!(got, (WcStatus::Success, WcOpcode::FetchAdd));
            assert_eq!(found_value(&found, i), start + 7 * i, "fetch-and-add {i}");
        }
        let after_adds = start + 21;
        // A compare that fails, then one that succeeds.
        for (i, compare) in [(3, start), (4, after_adds)] {
            let cas = SendOp::CompareSwap {
                remote_va: va,
                rkey,
                compare,
                swap: 42,
            };
            let got = atomic(from, &found, i, cas);
            assert_eq!(got, (WcStatus::Success, WcOpcode::CompSwap));
            assert_eq!(found_value(&found, i), after_adds, "compare-and-swap {i}");
        }
        assert!(
            wait_until(|| target.equals(8, &42u64.to_ne_bytes())),
            "the counter holds the swapped value"
        );
        targets.push((target, found));
    }
    // Misaligned (A to B): refused by the responder; the requester's QP fails.
    let (target, found) = &targets[0];
    let bad = SendOp::FetchAdd {
        remote_va: target.addr() + 12,
        rkey: target.rkey(),
        add: 1,
    };
    assert_eq!(atomic(&a, found, 5, bad).0, WcStatus::RemInvReqErr);
    assert!(target.equals(8, &42u64.to_ne_bytes()), "nothing changed");
}

/// Posts atomic `op` from `from` with its value landing at `8 * wr_id` in `found`, and
/// waits for its completion: (status, opcode).
fn atomic(from: &Side, found: &MemoryRegion, wr_id: u64, op: SendOp) -> (WcStatus, WcOpcode) {
    let sge = found.sge(8 * wr_id as usize, 8);
    from.qp
        .post_send(&SendRequest::new(wr_id, op, Payload::Sge(sge)))
        .unwrap();
    let w = wait_wcs(&from.cq, 1);
    assert_eq!(w[0].wr_id, wr_id);
    (w[0].status, w[0].opcode)
}

/// The value atomic `wr_id` of [`atomic`] found.
fn found_value(found: &MemoryRegion, wr_id: u64) -> u64 {
    let mut v = [0u8; 8];
    assert!(found.read(8 * wr_id as usize, &mut v));
    u64::from_ne_bytes(v)
}

/// B's two QPs share one receive queue: A SENDs on its two QPs in turn, each message
/// takes the receive queue's next receive in arrival order, and every message arrives
/// whole, once, in a receive of the queue, completed on the QP it came to.
pub fn shared_receive_queue_feeds_two_qps(p: &CaseKinds<'_>) {
    let o = p.opts(Family::V4);
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    const MSGS: usize = 8;
    const SLOT: usize = 2048;
    let srq = b.pd.create_srq(2 * MSGS).unwrap();
    let rcq = b.ctx.create_cq(4 * MSGS, None);
    let (b1, b2) = (
        b.pd.create_qp(&QpInit {
            srq: Some(&srq),
            ..QpInit::new(&b.cq, &rcq)
        })
        .unwrap(),
        b.pd.create_qp(&QpInit {
            srq: Some(&srq),
            ..QpInit::new(&b.cq, &rcq)
        })
        .unwrap(),
    );
    let a2 = a.pd.create_qp(&QpInit::new(&a.cq, &a.cq)).unwrap();
    let opts = p.connect_options();
    for (x, y) in [(&a.qp, &b1), (&a2, &b2)] {
        x.connect(&y.endpoint(), &opts).unwrap();
        y.connect(&x.endpoint(), &opts).unwrap();
    }
    for r in 0..MSGS {
        let wr = RecvWr {
            wr_id: r as u64,
            sgl: b.mr.sge(r * SLOT, SLOT as u32).into(),
            stream: 0,
        };
        srq.post_recv(wr).unwrap();
    }
    let src = a.pd.alloc_mr(MSGS * SLOT, Access::LOCAL_WRITE).unwrap();
    // Message m: 100 + 37 m bytes of pattern m, on A's QP m % 2.
    let msg = |m: usize| pattern(0x5e00 + m as u64, 100 + 37 * m);
    for m in 0..MSGS {
        let data = msg(m);
        src.write(m * SLOT, &data);
        let qp = if m % 2 == 0 { &a.qp } else { &a2 };
        let wr = SendRequest::send(m as u64, src.sge(m * SLOT, data.len() as u32));
        qp.post_send(&wr).unwrap();
    }
    let sent = wait_wcs(&a.cq, MSGS);
    assert!(
        sent.iter().all(|w| w.status == WcStatus::Success),
        "{sent:?}"
    );
    let got = wait_wcs(&rcq, MSGS);
    assert_eq!(got.len(), MSGS);
    let mut seen = [false; MSGS];
    for w in &got {
        assert_eq!((w.status, w.opcode), (WcStatus::Success, WcOpcode::Recv));
        // The message is the one of that length (lengths differ).
        let m = (w.byte_len as usize - 100) / 37;
        assert!(m < MSGS && !seen[m], "message {m} once: {w:?}");
        seen[m] = true;
        let qpn = if m % 2 == 0 { b1.qpn() } else { b2.qpn() };
        assert_eq!(w.qp_num, qpn, "message {m} completes on its QP");
        let at = w.wr_id as usize * SLOT;
        assert!(
            wait_until(|| b.mr.equals(at, &msg(m))),
            "message {m} placed"
        );
    }
    assert_eq!(srq.query().posted, 0, "every receive taken");
}
