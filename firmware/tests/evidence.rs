//! State moves forward only on evidence (spec §5.5 step 0, §6.5, §6.8,
//! §9.4): forged or stale ACKs, far-ahead MSNs and DISCONNECTs without the
//! connection's PSNs are counted and change nothing.

mod support;

use metaroce_firmware::{QpState, RxMeta};
use metaroce_proto::{AckRepr, CmRepr, Ext, Flags, MsgRepr, Opcode, Repr, Sack};
use support::{Channel, MEM_BASE, Pair, datagram, write_wr};

/// A's first send PSN and B's (the loopback bench's `connect`).
const A_PSN: u32 = 1000;
const B_PSN: u32 = 5000;

fn meta_to_a(p: &Pair) -> RxMeta {
    RxMeta {
        src_ip: p.b.ip,
        src_port: 50000,
        dst_ip: p.a.ip,
        dst_port: metaroce_proto::DEFAULT_UDP_PORT,
        ecn_ce: false,
    }
}

fn meta_to_b(p: &Pair) -> RxMeta {
    RxMeta {
        src_ip: p.a.ip,
        src_port: 50000,
        dst_ip: p.b.ip,
        dst_port: metaroce_proto::DEFAULT_UDP_PORT,
        ecn_ce: false,
    }
}

/// A pair on one path where A has written `n` messages of 4 KiB to B and
/// everything is acknowledged.
fn settled(n: u64) -> Pair {
    let mut p = Pair::new(3, 1, Channel::default());
    for i in 0..n {
        let wr = write_wr(&p, i, MEM_BASE + (i << 12), 4096);
        p.a.nic.post_send(p.a.qpn, wr).unwrap();
    }
    let mut done = 0;
    assert!(p.run_until(10_000_000, |p| {
        done += p.events().0.len();
        done as u64 >= n
    }));
    let until = p.now + 1_000_000;
    p.run_until(until, |_| false);
    p
}

fn ack(p: &Pair, a: AckRepr) -> Repr {
    Repr {
        opcode: Opcode::Ack,
        flags: Flags::empty(),
        dst_qpn: p.a.qpn,
        src_qpn: p.b.qpn,
        stream: 0,
        path: 0,
        conn_psn: 0,
        path_psn: 0,
        timestamp: 0,
        ext: Ext::Ack(a),
    }
}

/// The ACK B would send now for path 0 after `settled(n)` (nothing
/// outstanding), with `rx_count` packets received.
fn current_ack(n: u32, rx_count: u32) -> AckRepr {
    AckRepr {
        conn_cum: A_PSN + n,
        path_cum: n,
        sack: Sack::new(),
        echo_ts: 0,
        ce_count: 0,
        rate_hint: 0,
        credit: 4096,
        rx_count,
    }
}

fn inject_to_a(p: &mut Pair, a: AckRepr) {
    let m = meta_to_a(p);
    let bytes = datagram(&ack(p, a), &[], &m);
    p.inject_to_a(bytes, m);
    let until = p.now + 100_000;
    p.run_until(until, |_| false);
}

#[test]
fn an_ack_for_path_psns_never_sent_is_refused() {
    let mut p = settled(4);
    let before = p.a.nic.path_stats(p.a.qpn).unwrap()[0];
    // Path PSNs 0..4 were sent; the ACK claims 0..=9 arrived.
    let mut a = current_ack(4, 100);
    a.sack.set(5);
    inject_to_a(&mut p, a);
    assert_eq!(p.a.nic.drops().bad_ack, 1);
    let after = p.a.nic.path_stats(p.a.qpn).unwrap()[0];
    assert_eq!(before.acked, after.acked);
    // A conn_cum beyond what was sent is refused too.
    let mut a = current_ack(4, 100);
    a.conn_cum = A_PSN + 50;
    inject_to_a(&mut p, a);
    assert_eq!(p.a.nic.drops().bad_ack, 2);
    // The control: the true ACK is accepted.
    inject_to_a(&mut p, current_ack(4, 100));
    assert_eq!(p.a.nic.drops().bad_ack, 2);
}

#[test]
fn a_ce_count_step_larger_than_the_packets_received_is_refused() {
    let mut p = settled(4);
    // 4 data packets were received on the path: 4 CE marks could be true,
    // 1000 cannot.
    let mut a = current_ack(4, 4);
    a.ce_count = 1000;
    inject_to_a(&mut p, a);
    assert_eq!(p.a.nic.drops().bad_ack, 1);
    assert_eq!(p.a.nic.path_stats(p.a.qpn).unwrap()[0].ce_marked, 0);
    // The control: 2 marks among 2 more packets are taken.
    let mut a = current_ack(4, 6);
    a.ce_count = 2;
    inject_to_a(&mut p, a);
    assert_eq!(p.a.nic.drops().bad_ack, 1);
    assert_eq!(p.a.nic.path_stats(p.a.qpn).unwrap()[0].ce_marked, 2);
}

#[test]
fn an_ack_that_acknowledges_nothing_new_gives_no_rtt_sample() {
    let mut p = settled(4);
    let srtt = p.a.nic.path_stats(p.a.qpn).unwrap()[0].srtt_ns;
    assert!(srtt > 0);
    // A replayed ACK echoing a timestamp long past.
    let mut a = current_ack(4, 4);
    a.echo_ts = 1;
    inject_to_a(&mut p, a);
    assert_eq!(p.a.nic.path_stats(p.a.qpn).unwrap()[0].srtt_ns, srtt);
}

#[test]
fn credit_and_rate_hint_come_only_from_the_newest_ack() {
    let mut p = settled(4);
    // A stale ACK (an older receive count) with credit 0: if it were taken,
    // A could send nothing more and the next WRITE would never complete.
    let mut a = current_ack(4, 0);
    a.credit = 0;
    a.rate_hint = 1;
    let stale = AckRepr { rx_count: 0, ..a };
    // Make the receive count of the newest ACK known first.
    inject_to_a(&mut p, current_ack(4, 4));
    inject_to_a(&mut p, stale);
    let wr = write_wr(&p, 99, MEM_BASE, 4096);
    p.a.nic.post_send(p.a.qpn, wr).unwrap();
    let until = p.now + 2_000_000;
    assert!(
        p.run_until(until, |p| p.events().0.iter().any(|e| matches!(
            e,
            metaroce_firmware::Event::Completion(c) if c.wr_id == 99
        ))),
        "a stale ACK's credit of 0 stopped the sender"
    );
}

#[test]
fn an_msn_beyond_the_receive_window_is_refused() {
    let mut p = settled(1);
    let m = meta_to_b(&p);
    let (aq, bq, rkey) = (p.a.qpn, p.b.qpn, p.b.mr.rkey);
    let write = |msn: u32, psn: u32| Repr {
        opcode: Opcode::Write,
        flags: Flags::FIRST | Flags::LAST,
        dst_qpn: bq,
        src_qpn: aq,
        stream: 0,
        path: 1,
        conn_psn: psn,
        path_psn: 0,
        timestamp: 1,
        ext: Ext::Msg(MsgRepr {
            msn,
            msg_len: 8,
            remote_va: MEM_BASE,
            rkey,
            ..MsgRepr::default()
        }),
    };
    // Message 1 is next; 1 + 4096 is a whole receive window ahead.
    let far = datagram(&write(1 + 4096, A_PSN + 3), &[1; 8], &m);
    p.inject_to_b(far, m);
    let until = p.now + 100_000;
    p.run_until(until, |_| false);
    assert_eq!(p.b.nic.drops().msn_window, 1);
    // The control: a near one is accepted.
    let near = datagram(&write(2, A_PSN + 4), &[1; 8], &m);
    p.inject_to_b(near, m);
    let until = p.now + 100_000;
    p.run_until(until, |_| false);
    assert_eq!(p.b.nic.drops().msn_window, 1);
    assert_eq!(p.b.nic.drops().total(), 1);
}

#[test]
fn a_disconnect_is_honoured_only_with_the_connections_psns() {
    let mut p = settled(2);
    let m = meta_to_a(&p);
    let (aq, bq) = (p.a.qpn, p.b.qpn);
    let disconnect = |conn_psn: u32, acked: u32| Repr {
        opcode: Opcode::Disconnect,
        flags: Flags::empty(),
        dst_qpn: aq,
        src_qpn: bq,
        stream: 0,
        path: 0,
        conn_psn,
        path_psn: 0,
        timestamp: 0,
        ext: Ext::Cm(CmRepr {
            initial_psn: acked,
            ..CmRepr::default()
        }),
    };
    // All zero, as v0.1 sent it: a blind guess.
    let blind = datagram(&disconnect(0, 0), &[], &m);
    p.inject_to_a(blind, m);
    // The right send PSN, but a claim of accepting what A never sent.
    let wrong = datagram(&disconnect(B_PSN, A_PSN + 100), &[], &m);
    p.inject_to_a(wrong, m);
    let until = p.now + 100_000;
    p.run_until(until, |_| false);
    assert_eq!(p.a.nic.drops().bad_disconnect, 2);
    assert_eq!(p.a.nic.qp_state(p.a.qpn), Some(QpState::Rts));
    // B's own DISCONNECT carries them and is honoured.
    p.b.nic.disconnect(p.b.qpn).unwrap();
    let until = p.now + 1_000_000;
    p.run_until(until, |_| false);
    assert_eq!(p.a.nic.drops().bad_disconnect, 2);
    assert_eq!(p.a.nic.qp_state(p.a.qpn), Some(QpState::Error));
}

#[test]
fn a_probe_without_the_connections_psns_moves_no_path() {
    let mut p = settled(4);
    let m = meta_to_b(&p);
    let (aq, bq) = (p.a.qpn, p.b.qpn);
    let probe = |conn_psn: u32, path_psn: u32| Repr {
        opcode: Opcode::Probe,
        flags: Flags::ACK_REQ,
        dst_qpn: bq,
        src_qpn: aq,
        stream: 0,
        path: 0,
        conn_psn,
        path_psn,
        timestamp: 1,
        ext: Ext::None,
    };
    // A blind PROBE (a guessed conn PSN far from A's) a million PSNs ahead:
    // with it B would slide path 0 past everything A will send, and A
    // would refuse B's ACKs for PSNs it never sent.
    let blind = datagram(&probe(A_PSN + (1 << 31), 1 << 20), &[], &m);
    p.inject_to_b(blind, m);
    let until = p.now + 100_000;
    p.run_until(until, |_| false);
    assert_eq!(p.b.nic.drops().conn_window, 1);
    // The control: with A's next conn PSN (a window either side is current)
    // a PROBE is taken and acknowledged (here a path-level duplicate of A's
    // last path PSN, so the ACK reports nothing A did not send).
    let acks = p.b.nic.stats().acks_sent;
    let current = datagram(&probe(A_PSN + 4, 3), &[], &m);
    p.inject_to_b(current, m);
    let until = p.now + 100_000;
    p.run_until(until, |_| false);
    assert_eq!(p.b.nic.drops().total(), 1);
    assert_eq!(p.b.nic.stats().acks_sent, acks + 1);
    // The path still carries A's next WRITE, acknowledged as usual.
    let wr = write_wr(&p, 9, MEM_BASE, 4096);
    p.a.nic.post_send(p.a.qpn, wr).unwrap();
    let mut done = 0;
    assert!(p.run_until(p.now + 10_000_000, |p| {
        done += p.events().0.len();
        done >= 1
    }));
    assert_eq!(p.a.nic.drops().bad_ack, 0);
    assert_eq!(p.b.nic.drops().total(), 1);
}
