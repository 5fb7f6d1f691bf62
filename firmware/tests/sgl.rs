//! Scatter/gather lists: a send gathered from several buffers, a receive and a
//! READ scattered into several, each element checked under its own key.

mod support;

use metaroce_firmware::{
    QpState, RecvWr, SendOp, SendWr, SgList, Sge, VerbsError, WcOpcode, WcStatus,
};
use support::{Channel, MEM_BASE, MEM_LEN, Pair, completions, pattern};

/// Elements of `lens` bytes from `base` on, 100 bytes apart, under `lkey`.
fn spread(base: u64, lens: &[u32], lkey: u32) -> Vec<Sge> {
    let mut at = base;
    lens.iter()
        .map(|&len| {
            let s = Sge {
                addr: at,
                len,
                lkey,
            };
            at += u64::from(len) + 100;
            s
        })
        .collect()
}

/// The bytes of `sges`, in order.
fn gathered(mem: &metaroce_firmware::VecMemory, sges: &[Sge]) -> Vec<u8> {
    sges.iter()
        .flat_map(|s| mem.slice(s.addr, s.len as usize).to_vec())
        .collect()
}

fn wr(wr_id: u64, op: SendOp, sges: &[Sge]) -> SendWr {
    SendWr {
        wr_id,
        op,
        sgl: SgList::new(sges).unwrap(),
        signaled: true,
        solicited: false,
        stream: 0,
    }
}

#[test]
fn sends_gathered_from_three_buffers_are_scattered_into_four_under_loss() {
    let channel = Channel {
        loss: 0.1,
        ..Channel::default()
    };
    let mut pair = Pair::new(51, 8, channel);
    let (a_lkey, b_lkey) = (pair.a.mr.lkey, pair.b.mr.lkey);
    let (msgs, sent_len) = (8u64, 5000 + 100 + 7000 + 1);
    let mut sent = Vec::new();
    let mut recvs = Vec::new();
    for i in 0..msgs {
        let base = MEM_BASE + i * 0x10_0000;
        let src = spread(base, &[5000, 100, 7000, 1], a_lkey);
        for (k, s) in src.iter().enumerate() {
            pattern(
                i * 10 + k as u64,
                pair.a.mem.slice_mut(s.addr, s.len as usize),
            );
        }
        sent.push(gathered(&pair.a.mem, &src));
        let dst = spread(base, &[3000, 1, 8000, 2000], b_lkey);
        let r = RecvWr {
            wr_id: 100 + i,
            sgl: SgList::new(&dst).unwrap(),
            stream: 0,
        };
        pair.b.nic.post_recv(pair.b.qpn, r).unwrap();
        recvs.push(dst);
        pair.a
            .nic
            .post_send(pair.a.qpn, wr(i, SendOp::Send, &src))
            .unwrap();
    }
    let (mut a_done, mut b_done) = (Vec::new(), Vec::new());
    let ok = pair.run_until(500_000_000, |p| {
        let (a, b) = p.events();
        a_done.extend(completions(a));
        b_done.extend(completions(b));
        a_done.len() == msgs as usize && b_done.len() == msgs as usize
    });
    assert!(ok, "{a_done:?} {b_done:?}");
    assert!(pair.dropped_by_channel > 0, "the channel dropped nothing");
    for (i, c) in b_done.iter().enumerate() {
        assert_eq!(
            (c.wr_id, c.status, c.opcode, c.byte_len),
            (100 + i as u64, WcStatus::Success, WcOpcode::Recv, sent_len)
        );
        let dst = &recvs[i];
        let got = gathered(&pair.b.mem, dst);
        assert_eq!(&got[..sent_len as usize], &sent[i][..], "message {i}");
        // Past the message, and between the buffers, nothing was written.
        assert!(got[sent_len as usize..].iter().all(|&b| b == 0));
        let gap = dst[0].addr + u64::from(dst[0].len);
        assert!(pair.b.mem.slice(gap, 100).iter().all(|&b| b == 0));
    }
}

#[test]
fn a_write_gathers_and_a_read_scatters_sixteen_elements() {
    let mut pair = Pair::new(52, 4, Channel::default());
    let (a_lkey, rkey) = (pair.a.mr.lkey, pair.b.mr.rkey);
    let lens: Vec<u32> = (1..=16).map(|k| k * 517).collect();
    let src = spread(MEM_BASE, &lens, a_lkey);
    for (k, s) in src.iter().enumerate() {
        pattern(k as u64, pair.a.mem.slice_mut(s.addr, s.len as usize));
    }
    let total: u32 = lens.iter().sum();
    let remote = MEM_BASE + 0x100_0000;
    let write = SendOp::Write {
        remote_va: remote,
        rkey,
    };
    pair.a
        .nic
        .post_send(pair.a.qpn, wr(1, write, &src))
        .unwrap();
    // The READ brings the written bytes back into other buffers of A.
    let dst = spread(MEM_BASE + 0x200_0000, &lens, a_lkey);
    let read = SendOp::Read {
        remote_va: remote,
        rkey,
    };
    pair.a.nic.post_send(pair.a.qpn, wr(2, read, &dst)).unwrap();
    let mut done = Vec::new();
    assert!(pair.run_until(100_000_000, |p| {
        done.extend(completions(p.events().0));
        done.len() == 2
    }));
    assert!(
        done.iter().all(|c| c.status == WcStatus::Success),
        "{done:?}"
    );
    assert_eq!((done[1].opcode, done[1].byte_len), (WcOpcode::Read, total));
    let want = gathered(&pair.a.mem, &src);
    assert_eq!(pair.b.mem.slice(remote, total as usize), &want[..]);
    assert_eq!(gathered(&pair.a.mem, &dst), want);
}

#[test]
fn a_bad_element_fails_its_request_locally_and_nothing_is_sent() {
    let mut pair = Pair::new(53, 4, Channel::default());
    let (a_lkey, b_lkey) = (pair.a.mr.lkey, pair.b.mr.lkey);
    let recv = RecvWr {
        wr_id: 9,
        sgl: Sge {
            addr: MEM_BASE,
            len: 4096,
            lkey: b_lkey,
        }
        .into(),
        stream: 0,
    };
    pair.b.nic.post_recv(pair.b.qpn, recv).unwrap();
    // Refused at post, nothing changes: a receive whose second element has no
    // region, and a list longer than 2^31 bytes.
    let mut bad = spread(MEM_BASE, &[64, 64], b_lkey);
    bad[1].lkey ^= 0x55;
    let r = RecvWr {
        wr_id: 10,
        sgl: SgList::new(&bad).unwrap(),
        stream: 0,
    };
    assert_eq!(
        pair.b.nic.post_recv(pair.b.qpn, r),
        Err(VerbsError::InvalidArgument)
    );
    let huge = spread(MEM_BASE, &[1 << 30, (1 << 30) + 1], a_lkey);
    assert_eq!(
        pair.a.nic.post_send(pair.a.qpn, wr(1, SendOp::Send, &huge)),
        Err(VerbsError::MessageTooLong)
    );
    // A SEND whose third element ends past the region: a local protection
    // error completion, the QP fails, and the peer sees nothing.
    pattern(3, pair.a.mem.slice_mut(MEM_BASE, 300));
    let mut src = spread(MEM_BASE, &[100, 100], a_lkey);
    src.push(Sge {
        addr: MEM_BASE + MEM_LEN as u64 - 50,
        len: 100,
        lkey: a_lkey,
    });
    pair.a
        .nic
        .post_send(pair.a.qpn, wr(2, SendOp::Send, &src))
        .unwrap();
    let (mut a_done, mut b_done) = (Vec::new(), Vec::new());
    pair.run_until(50_000_000, |p| {
        let (a, b) = p.events();
        a_done.extend(completions(a));
        b_done.extend(completions(b));
        false
    });
    assert_eq!(
        a_done
            .iter()
            .map(|c| (c.wr_id, c.status))
            .collect::<Vec<_>>(),
        [(2, WcStatus::LocProtErr)]
    );
    assert_eq!(pair.a.nic.qp_state(pair.a.qpn), Some(QpState::Error));
    assert!(b_done.is_empty(), "{b_done:?}");
    assert_eq!(pair.b.nic.stats().data_accepted, 0);
    assert!(pair.b.mem.slice(MEM_BASE, 4096).iter().all(|&b| b == 0));
}

#[test]
fn a_send_longer_than_all_elements_of_its_receive_is_refused() {
    let mut pair = Pair::new(54, 4, Channel::default());
    let (a_lkey, b_lkey) = (pair.a.mr.lkey, pair.b.mr.lkey);
    let dst = spread(MEM_BASE, &[600, 400], b_lkey);
    let r = RecvWr {
        wr_id: 5,
        sgl: SgList::new(&dst).unwrap(),
        stream: 0,
    };
    pair.b.nic.post_recv(pair.b.qpn, r).unwrap();
    let src = spread(MEM_BASE, &[1001], a_lkey);
    pair.a
        .nic
        .post_send(pair.a.qpn, wr(1, SendOp::Send, &src))
        .unwrap();
    let mut a_done = Vec::new();
    assert!(pair.run_until(50_000_000, |p| {
        a_done.extend(completions(p.events().0));
        !a_done.is_empty()
    }));
    assert_eq!(a_done[0].status, WcStatus::RemInvReqErr);
    assert!(pair.b.mem.slice(MEM_BASE, 1200).iter().all(|&b| b == 0));
}
