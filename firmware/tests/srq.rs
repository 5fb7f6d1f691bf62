//! Shared receive queues: two QPs taking their receives from one queue, the
//! limit event, RNR while it is empty, and the rules around it.

mod support;

use std::num::NonZeroU32;

use metaroce_firmware::{Event, QpConfig, RecvWr, SendOp, SendWr, Sge, VerbsError, WcStatus};
use support::{Channel, MEM_BASE, Pair, completions, pattern};

fn send(wr_id: u64, addr: u64, len: u32, lkey: u32) -> SendWr {
    SendWr {
        wr_id,
        op: SendOp::Send,
        sgl: Sge { addr, len, lkey }.into(),
        signaled: true,
        solicited: false,
        stream: 0,
    }
}

/// Receive `i` of the shared queue: 8 KiB at its own place in B's memory.
fn recv(i: u64, lkey: u32) -> RecvWr {
    RecvWr {
        wr_id: 100 + i,
        sgl: Sge {
            addr: MEM_BASE + 0x10_0000 + i * 0x2000,
            len: 0x2000,
            lkey,
        }
        .into(),
        stream: 0,
    }
}

#[test]
fn two_qps_share_receives_under_loss_and_the_limit_fires_once() {
    let channel = Channel {
        loss: 0.1,
        ..Channel::default()
    };
    let mut pair = Pair::new(61, 4, channel);
    let (a_lkey, b_lkey, b_pd) = (pair.a.mr.lkey, pair.b.mr.lkey, pair.b.pd);
    let srq = pair.b.nic.create_srq(b_pd, 8).unwrap();
    let cfg = QpConfig {
        srq: NonZeroU32::new(srq),
        ..QpConfig::default()
    };
    let (a_pd, mut qps) = (pair.a.pd, Vec::new());
    for _ in 0..2 {
        let a_qpn = pair.a.nic.create_qp(a_pd, None).unwrap();
        let b_qpn = pair.b.nic.create_qp(b_pd, Some(cfg.clone())).unwrap();
        pair.connect_qps(a_qpn, b_qpn);
        qps.push((a_qpn, b_qpn));
    }
    for i in 0..6 {
        pair.b.nic.post_srq_recv(srq, recv(i, b_lkey)).unwrap();
    }
    pair.b.nic.arm_srq_limit(srq, 3).unwrap();
    // A receive of its own on a QP with a shared queue is refused.
    assert_eq!(
        pair.b.nic.post_recv(qps[0].1, recv(9, b_lkey)),
        Err(VerbsError::InvalidArgument)
    );
    // Five SENDs of 5000 bytes, three on one connection and two on the other.
    let mut sent = Vec::new();
    for m in 0..5u64 {
        let addr = MEM_BASE + m * 0x2000;
        pattern(m, pair.a.mem.slice_mut(addr, 5000));
        sent.push(pair.a.mem.slice(addr, 5000).to_vec());
        let qpn = qps[(m % 2) as usize].0;
        pair.a
            .nic
            .post_send(qpn, send(m, addr, 5000, a_lkey))
            .unwrap();
    }
    let (mut b_done, mut limit_events) = (Vec::new(), 0);
    let ok = pair.run_until(500_000_000, |p| {
        let (_, b) = p.events();
        limit_events += b
            .iter()
            .filter(|e| matches!(e, Event::SrqLimitReached { srqn } if *srqn == srq))
            .count();
        b_done.extend(completions(b));
        b_done.len() == 5
    });
    assert!(ok, "{b_done:?}");
    assert!(pair.dropped_by_channel > 0, "the channel dropped nothing");
    assert_eq!(limit_events, 1, "the limit of 3 fires once, then disarms");
    let mut used: Vec<u64> = b_done.iter().map(|c| c.wr_id).collect();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used.len(), 5, "each SEND took its own receive: {b_done:?}");
    // Each connection's SENDs complete in order, into the receives they took.
    for (k, &(_, b_qpn)) in qps.iter().enumerate() {
        let mine: Vec<_> = b_done.iter().filter(|c| c.qpn == b_qpn).collect();
        assert_eq!(mine.len(), if k == 0 { 3 } else { 2 });
        for (j, c) in mine.iter().enumerate() {
            assert_eq!((c.status, c.byte_len), (WcStatus::Success, 5000));
            let m = 2 * j + k;
            let addr = MEM_BASE + 0x10_0000 + (c.wr_id - 100) * 0x2000;
            assert_eq!(pair.b.mem.slice(addr, 5000), &sent[m][..], "SEND {m}");
        }
    }
    assert_eq!(pair.b.nic.query_srq(srq).unwrap().posted, 1);
    assert_eq!(pair.b.nic.destroy_srq(srq), Err(VerbsError::InUse));
}

#[test]
fn a_send_waits_for_an_empty_shared_queue_then_lands() {
    let mut pair = Pair::new(62, 4, Channel::default());
    let (a_lkey, b_lkey, b_pd) = (pair.a.mr.lkey, pair.b.mr.lkey, pair.b.pd);
    let srq = pair.b.nic.create_srq(b_pd, 4).unwrap();
    let other_pd = pair.b.nic.alloc_pd();
    let cfg = |srq| QpConfig {
        srq: NonZeroU32::new(srq),
        ..QpConfig::default()
    };
    // A QP of another protection domain, or with no such queue, is refused.
    assert_eq!(
        pair.b.nic.create_qp(other_pd, Some(cfg(srq))),
        Err(VerbsError::InvalidArgument)
    );
    assert_eq!(
        pair.b.nic.create_qp(b_pd, Some(cfg(srq + 1))),
        Err(VerbsError::InvalidArgument)
    );
    let a_qpn = pair.a.nic.create_qp(pair.a.pd, None).unwrap();
    let b_qpn = pair.b.nic.create_qp(b_pd, Some(cfg(srq))).unwrap();
    pair.connect_qps(a_qpn, b_qpn);
    pattern(7, pair.a.mem.slice_mut(MEM_BASE, 3000));
    pair.a
        .nic
        .post_send(a_qpn, send(1, MEM_BASE, 3000, a_lkey))
        .unwrap();
    let mut b_done = Vec::new();
    pair.run_until(300_000, |p| {
        b_done.extend(completions(p.events().1));
        false
    });
    assert!(b_done.is_empty());
    assert!(pair.b.nic.drops().receiver_not_ready > 0, "RNR while empty");
    pair.b.nic.post_srq_recv(srq, recv(0, b_lkey)).unwrap();
    assert!(pair.run_until(pair.now + 50_000_000, |p| {
        b_done.extend(completions(p.events().1));
        !b_done.is_empty()
    }));
    assert_eq!((b_done[0].wr_id, b_done[0].qpn), (100, b_qpn));
    let dst = MEM_BASE + 0x10_0000;
    assert_eq!(
        pair.b.mem.slice(dst, 3000),
        pair.a.mem.slice(MEM_BASE, 3000)
    );
    // Once its QPs are gone, the queue can go.
    pair.b.nic.destroy_qp(b_qpn).unwrap();
    pair.b.nic.destroy_srq(srq).unwrap();
    assert_eq!(pair.b.nic.query_srq(srq), None);
}
