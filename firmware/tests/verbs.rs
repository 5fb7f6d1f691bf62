//! Verbs semantics: QP states, errors, RNR, streams, unsignalled work.

mod support;

use metaroce_firmware::{
    Event, QpState, QpTransition, RecvWr, SendOp, SendWr, Sge, VerbsError, WcOpcode, WcStatus,
};
use support::{Channel, MEM_BASE, Pair, completions, pattern};

fn send(id: u64, addr: u64, len: u32, lkey: u32, stream: u16) -> SendWr {
    SendWr {
        wr_id: id,
        op: SendOp::Send,
        sgl: Sge { addr, len, lkey }.into(),
        signaled: true,
        solicited: false,
        stream,
    }
}

#[test]
fn a_vanished_peer_fails_the_qp_with_retry_exceeded_and_flushes_the_rest() {
    let channel = Channel {
        b_vanishes_at_ns: Some(0),
        ..Channel::default()
    };
    let mut pair = Pair::new(11, 8, channel);
    let lkey = pair.a.mr.lkey;
    let rkey = pair.b.mr.rkey;
    for id in 1..=3 {
        let wr = SendWr {
            wr_id: id,
            op: SendOp::Write {
                remote_va: MEM_BASE,
                rkey,
            },
            sgl: Sge {
                addr: MEM_BASE,
                len: 10_000,
                lkey,
            }
            .into(),
            signaled: true,
            solicited: false,
            stream: 0,
        };
        pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    }
    assert_fails_with_retry_exceeded(&mut pair, [1, 2, 3]);
    assert_eq!(pair.a.nic.qp_state(pair.a.qpn), Some(QpState::Error));
    let again = send(9, MEM_BASE, 1, lkey, 0);
    assert_eq!(
        pair.a.nic.post_send(pair.a.qpn, again),
        Err(VerbsError::WrongState)
    );
}

/// The connection timer covers data that cannot leave: A's only path is
/// quarantined (its first packet timed out on a slow fabric, 2 ms each way), the
/// packet's late ACK then accepts everything sent, and B vanishes before A's
/// probe reaches it. Writes posted now find no path to go out on; they must
/// still end in RETRY_EXC_ERR, not in probes forever.
#[test]
fn data_stuck_behind_a_quarantined_path_still_ends_in_retry_exceeded() {
    let channel = Channel {
        base_delay_ns: 2_000_000,
        route_spread_ns: 0,
        b_vanishes_at_ns: Some(2_500_000),
        ..Channel::default()
    };
    let mut pair = Pair::new(13, 1, channel);
    let wr = |p: &Pair, id| support::write_wr(p, id, MEM_BASE, 64);
    let first = wr(&pair, 1);
    pair.a.nic.post_send(pair.a.qpn, first).unwrap();
    let mut events = Vec::new();
    pair.run_until(5_000_000, |p| {
        events.extend(completions(p.events().0));
        false
    });
    assert_eq!(
        events
            .iter()
            .map(|c| (c.wr_id, c.status))
            .collect::<Vec<_>>(),
        [(1, WcStatus::Success)],
        "the first write is accepted by its late ACK"
    );
    for id in 2..=4 {
        let w = wr(&pair, id);
        pair.a.nic.post_send(pair.a.qpn, w).unwrap();
    }
    assert_fails_with_retry_exceeded(&mut pair, [2, 3, 4]);
}

/// Runs `pair` until A's QP fails (at most 10 s of simulated time): it must fail
/// with RETRY_EXC_ERR, the first of `wr_ids` completing with it and the other two
/// flushed.
fn assert_fails_with_retry_exceeded(pair: &mut Pair, wr_ids: [u64; 3]) {
    let mut events = Vec::new();
    let failed = pair.run_until(10_000_000_000, |p| {
        events.extend(p.events().0);
        events.iter().any(|e| matches!(e, Event::QpError { .. }))
    });
    assert!(failed, "the QP must fail, not hang");
    assert!(events.contains(&Event::QpError {
        qpn: pair.a.qpn,
        status: WcStatus::RetryExcErr
    }));
    let statuses: Vec<_> = completions(events)
        .iter()
        .map(|c| (c.wr_id, c.status))
        .collect();
    let [first, second, third] = wr_ids;
    assert_eq!(
        statuses,
        [
            (first, WcStatus::RetryExcErr),
            (second, WcStatus::WrFlushErr),
            (third, WcStatus::WrFlushErr)
        ]
    );
}

#[test]
fn a_send_without_a_posted_receive_waits_then_lands_and_other_streams_go_on() {
    let mut pair = Pair::new(12, 4, Channel::default());
    let (a_lkey, b_lkey) = (pair.a.mr.lkey, pair.b.mr.lkey);
    pattern(1, pair.a.mem.slice_mut(MEM_BASE, 5000));
    pattern(2, pair.a.mem.slice_mut(MEM_BASE + 8192, 300));
    pair.a
        .nic
        .post_send(pair.a.qpn, send(1, MEM_BASE, 5000, a_lkey, 0))
        .unwrap();
    // Stream 1 has its receive; stream 0 does not yet.
    pair.b
        .nic
        .post_recv(
            pair.b.qpn,
            RecvWr {
                wr_id: 20,
                sgl: Sge {
                    addr: MEM_BASE + 8192,
                    len: 4096,
                    lkey: b_lkey,
                }
                .into(),
                stream: 1,
            },
        )
        .unwrap();
    pair.a
        .nic
        .post_send(pair.a.qpn, send(2, MEM_BASE + 8192, 300, a_lkey, 1))
        .unwrap();
    let mut b_events = Vec::new();
    pair.run_until(pair.now + 300_000, |p| {
        b_events.extend(completions(p.events().1));
        false
    });
    assert!(
        pair.b.nic.drops().receiver_not_ready > 0,
        "the SEND must have been refused with RNR"
    );
    assert_eq!(
        b_events.len(),
        1,
        "stream 1 completes while stream 0 waits: {b_events:?}"
    );
    assert_eq!(
        (b_events[0].wr_id, b_events[0].byte_len, b_events[0].stream),
        (20, 300, 1)
    );
    pair.b
        .nic
        .post_recv(
            pair.b.qpn,
            RecvWr {
                wr_id: 10,
                sgl: Sge {
                    addr: MEM_BASE,
                    len: 8192,
                    lkey: b_lkey,
                }
                .into(),
                stream: 0,
            },
        )
        .unwrap();
    let mut a_done = Vec::new();
    let mut b_done = Vec::new();
    let ok = pair.run_until(pair.now + 50_000_000, |p| {
        let (a, b) = p.events();
        a_done.extend(completions(a));
        b_done.extend(completions(b));
        a_done.len() == 2 && !b_done.is_empty()
    });
    assert!(ok, "RNR retry must deliver once the receive is posted");
    assert_eq!(
        (b_done[0].wr_id, b_done[0].status, b_done[0].byte_len),
        (10, WcStatus::Success, 5000)
    );
    let mut want = vec![0u8; 5000];
    pattern(1, &mut want);
    assert_eq!(pair.b.mem.slice(MEM_BASE, 5000), &want[..]);
    assert!(
        a_done
            .iter()
            .all(|c| c.status == WcStatus::Success && c.opcode == WcOpcode::Send)
    );
}

#[test]
fn misuse_returns_verbs_errors_and_changes_nothing() {
    let mut pair = Pair::new(13, 2, Channel::default());
    let lkey = pair.a.mr.lkey;
    let nic = &mut pair.a.nic;
    let pd = nic.alloc_pd();
    let fresh = nic.create_qp(pd, None).unwrap();
    assert_eq!(
        nic.post_send(fresh, send(1, MEM_BASE, 8, lkey, 0)),
        Err(VerbsError::WrongState)
    );
    let rwr = RecvWr {
        wr_id: 1,
        sgl: Sge {
            addr: MEM_BASE,
            len: 8,
            lkey,
        }
        .into(),
        stream: 0,
    };
    assert_eq!(nic.post_recv(fresh, rwr), Err(VerbsError::WrongState));
    let rts = QpTransition::Rts {
        initial_psn: 0,
        retry_cnt: 7,
        rnr_retry: 7,
        timeout_ns: 1_000_000,
    };
    assert_eq!(
        nic.modify_qp(fresh, rts),
        Err(VerbsError::InvalidTransition)
    );
    assert_eq!(nic.qp_state(fresh), Some(QpState::Reset));
    assert_eq!(
        nic.post_send(0xbad, send(1, MEM_BASE, 8, lkey, 0)),
        Err(VerbsError::NoSuchQp)
    );

    let qpn = pair.a.qpn;
    let nic = &mut pair.a.nic;
    assert_eq!(
        nic.post_send(qpn, send(1, MEM_BASE, 8, lkey, 999)),
        Err(VerbsError::InvalidStream)
    );
    let bad_recv = RecvWr {
        wr_id: 1,
        sgl: Sge {
            addr: MEM_BASE,
            len: 8,
            lkey: lkey ^ 0xffff,
        }
        .into(),
        stream: 0,
    };
    assert_eq!(
        nic.post_recv(qpn, bad_recv),
        Err(VerbsError::InvalidArgument)
    );
    let too_long = send(1, MEM_BASE, u32::MAX, lkey, 0);
    assert_eq!(
        nic.post_send(qpn, too_long),
        Err(VerbsError::MessageTooLong)
    );
    assert_eq!(
        nic.qp_state(qpn),
        Some(QpState::Rts),
        "refused calls change nothing"
    );

    // Unregistered memory: the work request completes with a local
    // protection error and the QP fails, as on Verbs hardware.
    nic.post_send(qpn, send(7, 0x10, 64, lkey, 0)).unwrap();
    let events: Vec<_> = std::iter::from_fn(|| nic.poll_event()).collect();
    assert!(events.iter().any(
        |e| matches!(e, Event::Completion(c) if c.wr_id == 7 && c.status == WcStatus::LocProtErr)
    ));
    assert_eq!(nic.qp_state(qpn), Some(QpState::Error));
}

#[test]
fn zero_length_and_unsignalled_work_complete_correctly() {
    let mut pair = Pair::new(14, 8, Channel::default());
    let (a_lkey, b_lkey) = (pair.a.mr.lkey, pair.b.mr.lkey);
    pair.b
        .nic
        .post_recv(
            pair.b.qpn,
            RecvWr {
                wr_id: 5,
                sgl: Sge {
                    addr: MEM_BASE,
                    len: 64,
                    lkey: b_lkey,
                }
                .into(),
                stream: 0,
            },
        )
        .unwrap();
    let mut quiet = send(1, MEM_BASE, 0, 0, 0);
    quiet.signaled = false;
    pair.a.nic.post_send(pair.a.qpn, quiet).unwrap();
    pair.a
        .nic
        .post_send(
            pair.a.qpn,
            SendWr {
                op: SendOp::Write {
                    remote_va: MEM_BASE + 64,
                    rkey: pair.b.mr.rkey,
                },
                ..send(2, MEM_BASE, 100, a_lkey, 0)
            },
        )
        .unwrap();
    let (mut a_done, mut b_done) = (Vec::new(), Vec::new());
    let ok = pair.run_until(10_000_000, |p| {
        let (a, b) = p.events();
        a_done.extend(completions(a));
        b_done.extend(completions(b));
        !a_done.is_empty() && !b_done.is_empty()
    });
    assert!(ok);
    let ids: Vec<_> = a_done.iter().map(|c| c.wr_id).collect();
    assert_eq!(
        ids,
        vec![2],
        "only the signalled request completes at the sender"
    );
    assert_eq!(
        (b_done[0].wr_id, b_done[0].byte_len, b_done[0].status),
        (5, 0, WcStatus::Success)
    );
}

#[test]
fn disconnect_fails_the_peer_and_flushes_its_receives() {
    let mut pair = Pair::new(15, 2, Channel::default());
    let b_lkey = pair.b.mr.lkey;
    pair.b
        .nic
        .post_recv(
            pair.b.qpn,
            RecvWr {
                wr_id: 3,
                sgl: Sge {
                    addr: MEM_BASE,
                    len: 64,
                    lkey: b_lkey,
                }
                .into(),
                stream: 0,
            },
        )
        .unwrap();
    pair.a.nic.disconnect(pair.a.qpn).unwrap();
    let mut b_events = Vec::new();
    pair.run_until(1_000_000, |p| {
        b_events.extend(p.events().1);
        b_events.iter().any(|e| matches!(e, Event::QpError { .. }))
    });
    assert_eq!(pair.b.nic.qp_state(pair.b.qpn), Some(QpState::Error));
    assert!(
        completions(b_events)
            .iter()
            .any(|c| c.wr_id == 3 && c.status == WcStatus::WrFlushErr && c.is_recv)
    );
}

/// A READ of `len` bytes from `remote` into `local`, on `stream`.
fn read(id: u64, local: u64, remote: u64, len: u32, lkey: u32, rkey: u32, stream: u16) -> SendWr {
    SendWr {
        wr_id: id,
        op: SendOp::Read {
            remote_va: remote,
            rkey,
        },
        sgl: Sge {
            addr: local,
            len,
            lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream,
    }
}

/// Source of READ `i` in the responder's memory, and its destination in the
/// requester's.
fn read_slots(i: u64) -> (u64, u64) {
    (MEM_BASE + i * 0x10000, MEM_BASE + 0x100_0000 + i * 0x10000)
}

#[test]
fn reads_in_flight_stay_within_max_rd_atomic_and_all_complete() {
    let qp = metaroce_firmware::QpConfig {
        paths: 4,
        streams: 4,
        max_rd_atomic: 2,
        ..metaroce_firmware::QpConfig::default()
    };
    let mut pair = Pair::with_config(31, qp, Channel::default());
    let (len, reads) = (6000u32, 7u64);
    let (lkey, rkey) = (pair.a.mr.lkey, pair.b.mr.rkey);
    for i in 0..reads {
        let (src, dst) = read_slots(i);
        pattern(i, pair.b.mem.slice_mut(src, len as usize));
        let wr = read(i, dst, src, len, lkey, rkey, (i % 4) as u16);
        pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    }
    let (qpn, mut done, mut most) = (pair.a.qpn, 0, 0);
    let finished = pair.run_until(50_000_000, |p| {
        most = most.max(p.a.nic.outstanding_reads(qpn).count());
        done += completions(p.events().0).len();
        done == reads as usize
    });
    assert!(finished, "{done} of {reads} READs completed");
    assert_eq!(most, 2, "READs in flight at once");
    for i in 0..reads {
        let mut want = vec![0u8; len as usize];
        pattern(i, &mut want);
        let got = pair.a.mem.slice(read_slots(i).1, len as usize);
        assert_eq!(got, &want[..], "READ {i}");
    }
}

#[test]
fn two_nics_reading_from_each_other_at_the_read_limit_do_not_deadlock() {
    // Each side's READ requests wait at the limit while its READ responses
    // to the other side must still go out: held behind a waiting request in
    // one send FIFO, they would wait for each other for ever.
    let qp = metaroce_firmware::QpConfig {
        paths: 4,
        max_rd_atomic: 1,
        ..metaroce_firmware::QpConfig::default()
    };
    let channel = Channel {
        loss: 0.02,
        ..Channel::default()
    };
    let mut pair = Pair::with_config(32, qp, channel);
    let (len, reads) = (9000u32, 12u64);
    for i in 0..reads {
        let (src, dst) = read_slots(i);
        pattern(i, pair.b.mem.slice_mut(src, len as usize));
        pattern(100 + i, pair.a.mem.slice_mut(src, len as usize));
        let (a, b) = (&mut pair.a, &mut pair.b);
        let wr = read(i, dst, src, len, a.mr.lkey, b.mr.rkey, 0);
        a.nic.post_send(a.qpn, wr).unwrap();
        let wr = read(i, dst, src, len, b.mr.lkey, a.mr.rkey, 0);
        b.nic.post_send(b.qpn, wr).unwrap();
    }
    let mut done = (0, 0);
    let finished = pair.run_until(200_000_000, |p| {
        let (a, b) = p.events();
        done.0 += completions(a).len();
        done.1 += completions(b).len();
        done == (reads as usize, reads as usize)
    });
    assert!(finished, "{done:?} of {reads} READs each way completed");
    for i in 0..reads {
        let dst = read_slots(i).1;
        let mut want = vec![0u8; len as usize];
        pattern(i, &mut want);
        assert_eq!(
            pair.a.mem.slice(dst, len as usize),
            &want[..],
            "A's READ {i}"
        );
        pattern(100 + i, &mut want);
        assert_eq!(
            pair.b.mem.slice(dst, len as usize),
            &want[..],
            "B's READ {i}"
        );
    }
}

#[test]
fn a_responder_in_rtr_answers_reads_under_loss_then_sends_from_rts() {
    // perftest's ib_read_bw server never moves its QP to RTS: a Verbs
    // responder answers READs from RTR, so B's send side starts at the PSN
    // A expects (the READ_REQ's resp_psn) and keeps it at RTS.
    let channel = Channel {
        loss: 0.05,
        ..Channel::default()
    };
    let mut pair = Pair::responder_in_rtr(41, 8, channel);
    assert_eq!(pair.b.nic.qp_state(pair.b.qpn), Some(QpState::Rtr));
    let (len, reads) = (30_000u32, 6u64);
    let (lkey, rkey) = (pair.a.mr.lkey, pair.b.mr.rkey);
    for i in 0..reads {
        let (src, dst) = read_slots(i);
        pattern(i, pair.b.mem.slice_mut(src, len as usize));
        let wr = read(i, dst, src, len, lkey, rkey, 0);
        pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    }
    let mut done = Vec::new();
    let finished = pair.run_until(500_000_000, |p| {
        done.extend(completions(p.events().0));
        done.len() == reads as usize
    });
    assert!(finished, "{} of {reads} READs completed", done.len());
    assert!(
        done.iter().all(|c| c.status == WcStatus::Success),
        "{done:?}"
    );
    assert!(pair.dropped_by_channel > 0, "the channel dropped nothing");
    for i in 0..reads {
        let mut want = vec![0u8; len as usize];
        pattern(i, &mut want);
        let got = pair.a.mem.slice(read_slots(i).1, len as usize);
        assert_eq!(got, &want[..], "READ {i}");
    }
    assert_eq!(pair.b.nic.qp_state(pair.b.qpn), Some(QpState::Rtr));
    // B moves to RTS with the PSN it told A: its send side goes on from
    // where its responses left it, and a WRITE to A lands.
    let rts = QpTransition::Rts {
        initial_psn: 5000,
        retry_cnt: 7,
        rnr_retry: 7,
        timeout_ns: 500_000,
    };
    pair.b.nic.modify_qp(pair.b.qpn, rts).unwrap();
    let addr = MEM_BASE + 0x200_0000;
    pattern(99, pair.b.mem.slice_mut(addr, 10_000));
    let wr = SendWr {
        wr_id: 7,
        op: SendOp::Write {
            remote_va: addr,
            rkey: pair.a.mr.rkey,
        },
        sgl: Sge {
            addr,
            len: 10_000,
            lkey: pair.b.mr.lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream: 0,
    };
    pair.b.nic.post_send(pair.b.qpn, wr).unwrap();
    let mut written = Vec::new();
    assert!(pair.run_until(pair.now + 500_000_000, |p| {
        written.extend(completions(p.events().1));
        !written.is_empty()
    }));
    assert_eq!(written[0].status, WcStatus::Success);
    assert_eq!(
        pair.a.mem.slice(addr, 10_000),
        pair.b.mem.slice(addr, 10_000)
    );
}

#[test]
fn the_hardware_data_path_refuses_more_streams_than_the_rtl_keeps_heads_for() {
    use metaroce_firmware::datapath::{Datapath, HW_MAX_STREAMS};
    use metaroce_firmware::{Nic, NicConfig, QpConfig};
    let qp = |streams: usize| QpConfig {
        streams: streams as u16,
        ..QpConfig::default()
    };
    let mut hw = Nic::new(NicConfig {
        datapath: Datapath::Hardware,
        ..NicConfig::default()
    });
    let pd = hw.alloc_pd();
    assert!(hw.create_qp(pd, Some(qp(HW_MAX_STREAMS))).is_ok());
    assert_eq!(
        hw.create_qp(pd, Some(qp(HW_MAX_STREAMS + 1))),
        Err(VerbsError::InvalidArgument)
    );
    // The software data path keeps per-stream state in the engine.
    let mut soft = Nic::new(NicConfig::default());
    let pd = soft.alloc_pd();
    assert!(soft.create_qp(pd, Some(qp(HW_MAX_STREAMS + 1))).is_ok());
}
