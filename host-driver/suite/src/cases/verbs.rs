//! The Verbs data path both ways, and completion channels.

use std::time::Duration;

use metaroce_driver::verbs::*;

use crate::{DEADLINE, Family, Pair, Side, connect_direct, pattern, wait_until, wait_wcs};

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
pub fn write_send_read(p: &Pair<'_>, family: Family, busy_poll: bool) {
    let bulk = p.bulk();
    let mut o = p.opts(family);
    o.busy_poll = busy_poll;
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    connect_direct(&a, &b, &ConnectOptions::default());

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
pub fn completion_channel_fires_once_armed(p: &Pair<'_>) {
    let o = p.opts(Family::V4);
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    let ch = b.ctx.create_comp_channel().unwrap();
    let rcq = b.ctx.create_cq(16, Some(&ch));
    let qp = b.pd.create_qp(&QpInit::new(&b.cq, &rcq)).unwrap();
    a.qp.connect(&qp.endpoint(), &ConnectOptions::default())
        .unwrap();
    qp.connect(&a.qp.endpoint(), &ConnectOptions::default())
        .unwrap();
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
pub fn gather_and_scatter_lists_over_two_regions(p: &Pair<'_>) {
    let o = p.opts(Family::V4);
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    let max = a.ctx.max_sge().min(b.ctx.max_sge());
    if max < 2 {
        p.skip(format!("max_sge is {max}: one buffer per work request"));
        return;
    }
    connect_direct(&a, &b, &ConnectOptions::default());
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
