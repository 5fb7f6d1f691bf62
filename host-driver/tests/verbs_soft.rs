//! The Verbs API over two soft NICs on real loopback sockets (IPv4 and IPv6).

mod common;

use std::time::Duration;

use common::*;
use metaroce_driver::verbs::*;

fn write_send_read(ip: &str, busy_poll: bool) {
    let mut o = SideOpts::new(ip);
    o.busy_poll = busy_poll;
    let a = side(&o);
    let b = side(&o);
    connect_direct(&a, &b, &ConnectOptions::default());

    // WRITE 1 MiB, unsignaled 64 KiB pieces then one signaled.
    let data = pattern(1, 1 << 20);
    a.mr.write(0, &data);
    for i in 0..16u64 {
        let off = (i as usize) << 16;
        let wr = SendRequest::write(
            i,
            a.mr.sge(off, 1 << 16),
            b.mr.addr() + off as u64,
            b.mr.rkey(),
        )
        .signaled(i == 15);
        a.qp.post_send(&wr).unwrap();
    }
    let wcs = wait_wcs(&a.cq, 1);
    assert_eq!(wcs.len(), 1, "one signaled completion");
    assert_eq!((wcs[0].wr_id, wcs[0].status), (15, WcStatus::Success));
    assert_eq!(wcs[0].opcode, WcOpcode::Write);
    assert!(b.mr.equals(0, &data), "WRITE data placed");

    // SEND with immediate into a posted receive.
    let msg = pattern(2, 10_000);
    a.mr.write(2 << 20, &msg);
    b.qp.post_recv(RecvWr {
        wr_id: 77,
        sgl: b.mr.sge(3 << 20, 16384).into(),
        stream: 0,
    })
    .unwrap();
    let mut wr = SendRequest::send(5, a.mr.sge(2 << 20, msg.len() as u32));
    wr.op = SendOp::SendImm { imm: 0xabcd };
    a.qp.post_send(&wr).unwrap();
    let r = wait_wcs(&b.cq, 1);
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].wr_id, r[0].status, r[0].opcode),
        (77, WcStatus::Success, WcOpcode::Recv)
    );
    assert_eq!((r[0].byte_len, r[0].imm), (msg.len() as u32, Some(0xabcd)));
    assert!(b.mr.equals(3 << 20, &msg));
    assert_eq!(wait_wcs(&a.cq, 1)[0].wr_id, 5);

    // READ back what B holds.
    let rd = SendRequest::read(9, a.mr.sge(1 << 20, 1 << 20), b.mr.addr(), b.mr.rkey());
    a.qp.post_send(&rd).unwrap();
    let w = wait_wcs(&a.cq, 1);
    assert_eq!(
        (w[0].wr_id, w[0].status, w[0].opcode),
        (9, WcStatus::Success, WcOpcode::Read)
    );
    assert!(a.mr.equals(1 << 20, &data));

    // Inline WRITE: the source is copied at post time and may change right after.
    let mut small = *b"inline bytes!";
    let wr = SendRequest::new(
        11,
        SendOp::Write {
            remote_va: b.mr.addr() + 100,
            rkey: b.mr.rkey(),
        },
        Payload::Inline(&small),
    );
    a.qp.post_send(&wr).unwrap();
    small.fill(0);
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::Success);
    assert!(b.mr.equals(100, b"inline bytes!"));
    assert_eq!(a.drops().total(), 0);
    assert_eq!(b.drops().total(), 0);
}

trait DropsOf {
    fn drops(&self) -> Drops;
}
impl DropsOf for Side {
    fn drops(&self) -> Drops {
        self.ctx.drops()
    }
}

#[test]
fn write_send_read_ipv4() {
    write_send_read("127.0.0.1", false);
}

#[test]
fn write_send_read_busy_polling() {
    write_send_read("127.0.0.1", true);
}

#[test]
fn write_send_read_ipv6() {
    write_send_read("::1", false);
}

#[test]
fn completion_channel_fires_once_armed() {
    let a = side(&SideOpts::new("127.0.0.1"));
    let b = side(&SideOpts::new("127.0.0.1"));
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

#[test]
fn gather_and_scatter_lists_over_two_regions() {
    let a = side(&SideOpts::new("127.0.0.1"));
    let b = side(&SideOpts::new("127.0.0.1"));
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
        sgl: SgList::new(&[b2.sge(0, 5000), b.mr.sge(1 << 20, 20_000)]).unwrap(),
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
    assert!(b.mr.equals(1 << 20, &msg[5000..]));
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::Success);
    // A READ of those bytes scattered back over both of A's regions.
    let back = [a2.sge(20_000, 3000), a.mr.sge(2 << 20, 5000)];
    let read = SendRequest::new(
        3,
        SendOp::Read {
            remote_va: b.mr.addr() + (1 << 20) + 2000,
            rkey: b.mr.rkey(),
        },
        Payload::Sges(&back),
    );
    a.qp.post_send(&read).unwrap();
    let w = wait_wcs(&a.cq, 1);
    assert_eq!((w[0].status, w[0].byte_len), (WcStatus::Success, 8000));
    assert!(a2.equals(20_000, &msg[7000..10_000]));
    assert!(a.mr.equals(2 << 20, &msg[10_000..15_000]));
    // More elements than the device takes: refused, nothing posted.
    let many = [a.mr.sge(0, 1); MAX_SGE + 1];
    let wr = SendRequest::new(4, SendOp::Send, Payload::Sges(&many));
    assert_eq!(a.qp.post_send(&wr).unwrap_err().errno(), libc::EINVAL);
    assert_eq!(a.qp.outstanding_sends(), 0);
}
