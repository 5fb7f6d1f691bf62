//! A destroyed QP lingers: it still sends the ACKs it owed and re-acknowledges
//! retransmissions of what it accepted, so a peer whose last ACK was lost completes —
//! without a completion, an event or a memory access on the destroyed side.
//!
//! The two NICs are driven by hand (no random channel): every datagram is either
//! delivered or dropped on purpose, so each test is exact.

mod support;

use metaroce_firmware::{
    Event, LINGER_PERIODS, Nic, NicConfig, QpConfig, RecvWr, RxMeta, SendOp, SendWr, Sge, WcStatus,
};
use support::{Channel, MEM_BASE, Pair, Side};

/// Sends everything `from` wants to send now to `to`; returns how many datagrams.
fn deliver(now: u64, from: &mut Side, to: &mut Side) -> usize {
    let mut buf = vec![0u8; 9000];
    let mut n = 0;
    while let Some(t) = from.nic.poll_transmit(now, &mut buf, &mut from.mem) {
        let meta = RxMeta {
            src_ip: from.ip,
            src_port: t.src_port,
            dst_ip: t.dst_ip,
            dst_port: t.dst_port,
            ecn_ce: false,
        };
        to.nic
            .handle_datagram(now, &buf[..t.len], meta, &mut to.mem);
        n += 1;
    }
    n
}

/// Drops everything `from` wants to send now; returns how many datagrams.
fn lose(now: u64, from: &mut Side) -> usize {
    let mut buf = vec![0u8; 9000];
    let mut n = 0;
    while from
        .nic
        .poll_transmit(now, &mut buf, &mut from.mem)
        .is_some()
    {
        n += 1;
    }
    n
}

fn events(nic: &mut Nic) -> Vec<Event> {
    std::iter::from_fn(|| nic.poll_event()).collect()
}

/// B posts a receive, A sends one 4096-byte SEND and B takes it (B's ACK not yet sent).
fn one_send_received(pair: &mut Pair) {
    let b = &mut pair.b;
    let sge = Sge {
        addr: MEM_BASE,
        len: 4096,
        lkey: b.mr.lkey,
    };
    b.nic
        .post_recv(
            b.qpn,
            RecvWr {
                wr_id: 7,
                sgl: sge.into(),
                stream: 0,
            },
        )
        .unwrap();
    send(pair, 1, 0x5a);
    assert!(deliver(0, &mut pair.a, &mut pair.b) > 0);
    let got = events(&mut pair.b.nic);
    assert!(
        matches!(got[..], [Event::Completion(c)] if c.is_recv && c.status == WcStatus::Success),
        "{got:?}"
    );
}

/// A posts a 4096-byte SEND of bytes `fill`.
fn send(pair: &mut Pair, wr_id: u64, fill: u8) {
    let a = &mut pair.a;
    a.mem.slice_mut(MEM_BASE, 4096).fill(fill);
    let wr = SendWr {
        wr_id,
        op: SendOp::Send,
        sgl: Sge {
            addr: MEM_BASE,
            len: 4096,
            lkey: a.mr.lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream: 0,
    };
    a.nic.post_send(a.qpn, wr).unwrap();
}

/// Runs both NICs' timers and delivers everything both ways until A has an event or
/// `limit` ns of simulated time passed; returns A's events.
fn run_a_until_event(pair: &mut Pair, limit: u64) -> Vec<Event> {
    let mut now = pair.now;
    while now < limit {
        deliver(now, &mut pair.a, &mut pair.b);
        deliver(now, &mut pair.b, &mut pair.a);
        let got = events(&mut pair.a.nic);
        if !got.is_empty() {
            pair.now = now;
            return got;
        }
        let next = [pair.a.nic.poll_timeout(), pair.b.nic.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(limit);
        now = next.max(now + 1);
        for side in [&mut pair.a, &mut pair.b] {
            if side.nic.poll_timeout().is_some_and(|t| t <= now) {
                side.nic.handle_timeout(now, &mut side.mem);
            }
        }
    }
    pair.now = now;
    Vec::new()
}

fn statuses(evs: &[Event]) -> Vec<WcStatus> {
    evs.iter()
        .filter_map(|e| match e {
            Event::Completion(c) => Some(c.status),
            _ => None,
        })
        .collect()
}

#[test]
fn the_ack_owed_at_destroy_is_still_sent() {
    let mut pair = Pair::new(1, 4, Channel::default());
    one_send_received(&mut pair);
    // The application saw its receive and destroys the QP before the NIC sent the ACK.
    pair.b.nic.destroy_qp(pair.b.qpn).unwrap();
    assert!(
        deliver(0, &mut pair.b, &mut pair.a) > 0,
        "the ACK is flushed"
    );
    assert_eq!(pair.b.nic.lingering_qps(), 1);
    let got = run_a_until_event(&mut pair, 1_000_000);
    assert_eq!(statuses(&got), [WcStatus::Success], "{got:?}");
    assert_eq!(pair.a.nic.stats().retransmits, 0, "no resend was needed");
    assert!(events(&mut pair.b.nic).is_empty(), "no event after destroy");
}

#[test]
fn a_destroyed_receiver_acknowledges_a_retransmission_after_its_ack_was_lost() {
    let mut pair = Pair::new(2, 4, Channel::default());
    one_send_received(&mut pair);
    assert!(lose(0, &mut pair.b) > 0, "B's ACK is lost");
    pair.b.nic.destroy_qp(pair.b.qpn).unwrap();
    let placed = pair.b.mem.slice(MEM_BASE, 1 << 20).to_vec();
    // A resends after its timeout; B answers from its lingering state.
    let got = run_a_until_event(&mut pair, 1_000_000_000);
    assert_eq!(statuses(&got), [WcStatus::Success], "{got:?}");
    assert!(pair.a.nic.stats().retransmits > 0, "A had to resend");
    assert!(pair.b.nic.stats().duplicates > 0);
    assert!(events(&mut pair.b.nic).is_empty(), "no event after destroy");
    assert!(
        pair.b.mem.slice(MEM_BASE, 1 << 20) == placed,
        "nothing placed after destroy"
    );
}

#[test]
fn new_data_for_a_destroyed_qp_is_neither_placed_nor_acknowledged() {
    let mut pair = Pair::new(3, 4, Channel::default());
    one_send_received(&mut pair);
    deliver(0, &mut pair.b, &mut pair.a);
    assert_eq!(statuses(&events(&mut pair.a.nic)), [WcStatus::Success]);
    pair.b.nic.destroy_qp(pair.b.qpn).unwrap();
    // A second SEND (another pattern) arrives at the destroyed QP: dropped, and A,
    // never acknowledged, ends in RETRY_EXC_ERR.
    send(&mut pair, 2, 0xa5);
    let unknown = pair.b.nic.drops().unknown_qp;
    let got = run_a_until_event(&mut pair, 10_000_000_000);
    assert_eq!(statuses(&got), [WcStatus::RetryExcErr], "{got:?}");
    assert!(pair.b.nic.drops().unknown_qp > unknown);
    assert!(events(&mut pair.b.nic).is_empty(), "no event after destroy");
    assert!(
        pair.b.mem.slice(MEM_BASE, 4096).iter().all(|&x| x == 0x5a),
        "the first SEND's bytes stay; the second was not placed"
    );
}

#[test]
fn the_linger_ends_after_its_periods() {
    let mut pair = Pair::new(4, 4, Channel::default());
    one_send_received(&mut pair);
    deliver(0, &mut pair.b, &mut pair.a);
    pair.b.nic.destroy_qp(pair.b.qpn).unwrap();
    // The clock starts at the first time B sees (t = 1000 here); B's timer says when
    // the linger ends: at most LINGER_PERIODS × the largest period (A's 0.5 ms connection
    // timeout, 1 ms initial path RTO), at least LINGER_PERIODS × the timeout.
    pair.b.nic.handle_timeout(1000, &mut pair.b.mem);
    let end = pair.b.nic.poll_timeout().expect("linger timer");
    assert!(
        (1000 + LINGER_PERIODS * 500_000..=1000 + LINGER_PERIODS * 1_000_000).contains(&end),
        "{end}"
    );
    pair.b.nic.handle_timeout(end - 1, &mut pair.b.mem);
    assert_eq!(pair.b.nic.lingering_qps(), 1);
    pair.b.nic.handle_timeout(end, &mut pair.b.mem);
    assert_eq!(pair.b.nic.lingering_qps(), 0);
    assert_eq!(pair.b.nic.poll_timeout(), None);
}

#[test]
fn only_a_connected_qp_lingers_and_linger_max_zero_turns_it_off() {
    let mut nic = Nic::new(NicConfig::default());
    let pd = nic.alloc_pd();
    let qpn = nic.create_qp(pd, None).unwrap();
    nic.destroy_qp(qpn).unwrap();
    assert_eq!(nic.lingering_qps(), 0, "a QP in RESET has no peer waiting");
    assert!(nic.destroy_qp(qpn).is_err(), "gone for the Verbs calls");

    let cfg = NicConfig {
        linger_max_ns: 0,
        qp: QpConfig {
            paths: 2,
            ..QpConfig::default()
        },
        ..NicConfig::default()
    };
    let mut pair = Pair::new(5, 2, Channel::default());
    pair.b.nic = Nic::new(cfg);
    let pd = pair.b.nic.alloc_pd();
    let qpn = pair.b.nic.create_qp(pd, None).unwrap();
    pair.b
        .nic
        .modify_qp(qpn, metaroce_firmware::QpTransition::Init)
        .unwrap();
    pair.b
        .nic
        .modify_qp(
            qpn,
            metaroce_firmware::QpTransition::Rtr(metaroce_firmware::RemoteEnd {
                qpn: pair.a.qpn,
                ip: pair.a.ip,
                udp_port: 4791,
                initial_psn: 0,
            }),
        )
        .unwrap();
    pair.b.nic.destroy_qp(qpn).unwrap();
    assert_eq!(pair.b.nic.lingering_qps(), 0);
}
