use super::*;
use crate::cc::CcAlgorithm;
use alloc::vec::Vec;

fn path() -> TxPath {
    TxPath::new(50000, CcAlgorithm::Fixed { window: 1 << 20 }.build(4096))
}

#[test]
fn a_gap_below_a_sacked_psn_is_a_loss_and_the_tail_is_not() {
    let mut p = path();
    for c in 0..6 {
        p.on_send_data(100 + c, 1000, false, 0, 1000);
    }
    // Receiver got 0, 1, 3, 4 (cum = 2, bits for 3 and 4): 2 lost, 5 still in flight.
    let mut sack = Sack::new();
    sack.set(0);
    sack.set(1);
    let mut fates = Vec::new();
    let (pkts, bytes) = p.on_ack(2, &sack, |f| fates.push(f));
    assert_eq!((pkts, bytes), (4, 4000));
    assert!(fates.contains(&SlotFate::Lost { conn_psn: 102 }));
    assert!(!fates.iter().any(|f| matches!(
        f,
        SlotFate::Lost { conn_psn: 105 } | SlotFate::Acked { conn_psn: 105 }
    )));
    assert_eq!(p.inflight_bytes(), 1000);
    // The same ACK again changes nothing.
    let mut again = Vec::new();
    p.on_ack(2, &sack, |f| again.push(f));
    assert!(again.is_empty());
}

#[test]
fn timeout_loses_everything_and_quarantines_until_a_probe_is_acked() {
    let mut p = path();
    p.on_send_data(1, 10, false, 0, 1000);
    p.on_send_data(2, 10, false, 0, 1000);
    let mut lost = Vec::new();
    p.on_timeout(5000, 50001, 0, |f| lost.push(f));
    assert_eq!(lost.len(), 2);
    assert_eq!(p.entropy(), 50001);
    assert!(!p.can_send(10));
    let probe = p.on_send_probe(5000, 1000);
    assert_eq!(probe, 2);
    p.on_ack(3, &Sack::new(), |_| {});
    assert_eq!(p.health(), PathHealth::Active);
    assert!(p.can_send(10));
}

/// Sends one packet at `t` and acknowledges it `rtt` later (an RTT sample);
/// returns the time of the ACK.
fn round_trip(p: &mut TxPath, t: u64, rtt: u64) -> u64 {
    let psn = p.on_send_data(psn_of(t), 1000, false, t, p.rto(100_000, 1_000_000));
    p.on_ack(psn.wrapping_add(1), &Sack::new(), |_| {});
    let rto = p.rto(100_000, 1_000_000);
    p.on_ack_feedback(t + rtt, Some(rtt), 0, 1, 1000, rto);
    t + rtt
}

/// A conn PSN for a packet sent at `t` (any distinct value will do).
fn psn_of(t: u64) -> u32 {
    (t / 1000) as u32
}

/// Issue #20 item 7: a queue that fills and drains swings the round trip by
/// milliseconds. Once it has, a quiet stretch must not bring the RTO back
/// below the swing (`srtt + 4·rttvar` alone falls to about the quiet round
/// trip in a few dozen samples, and the next swing times a healthy path
/// out); after a thousand quiet round trips it does come down.
#[test]
fn the_rto_covers_the_last_queueing_swing() {
    let mut p = path();
    let mut t = 1_000_000;
    for _ in 0..4 {
        t = round_trip(&mut p, t, 1_000_000);
        t = round_trip(&mut p, t, 5_000_000);
    }
    for _ in 0..20 {
        t = round_trip(&mut p, t, 1_000_000);
    }
    assert!(p.view().rtt.rto(0, 0) < 2_000_000, "the estimate settled");
    assert!(p.rto(100_000, 1_000_000) > 5_000_000, "the RTO did not");
    for _ in 0..1000 {
        t = round_trip(&mut p, t, 1_000_000);
    }
    assert!(p.rto(100_000, 1_000_000) < 2_000_000);
}

/// A path moved to a new route keeps the connection's slowest RTO until
/// packets on the new route are acknowledged: its estimate is the old
/// route's.
#[test]
fn a_moved_path_waits_as_long_as_the_slowest_route() {
    let mut p = path();
    let mut t = 1_000_000;
    for _ in 0..8 {
        t = round_trip(&mut p, t, 500_000);
    }
    p.move_to(50001, 9_000_000);
    assert_eq!(p.rto(100_000, 1_000_000), 9_000_000);
    for _ in 0..ROUTE_SAMPLES {
        t = round_trip(&mut p, t, 500_000);
    }
    // The path's own estimate again (its peak, from 3 × the first sample).
    assert!(p.rto(100_000, 1_000_000) < 1_500_000);
}

/// Acknowledges `n` packets, one round trip each, from `t`; returns the
/// time after them.
fn deliver(p: &mut TxPath, mut t: u64, n: u32) -> u64 {
    for _ in 0..n {
        t = round_trip(p, t, 1000);
    }
    t
}

#[test]
fn the_delivery_average_counts_packets_per_interval_once_the_route_settled() {
    let mut p = path();
    // Fewer than 8 packets on the route before the interval: not measured.
    let t = deliver(&mut p, 1_000, 6);
    p.close_interval();
    let t = deliver(&mut p, t, 4);
    p.close_interval();
    assert_eq!(p.delivery_rate(), 0);
    // The next interval began after the 8th packet: its count sets the
    // average (×8), and later counts move it by a quarter of the difference.
    let t = deliver(&mut p, t, 4);
    p.close_interval();
    assert_eq!(p.delivery_rate(), 4 * 8);
    let t = deliver(&mut p, t, 8);
    p.close_interval();
    assert_eq!(p.delivery_rate(), (3 * 32 + 64) / 4);
    // A move starts the route over: the average is forgotten.
    p.move_to(50001, 0);
    deliver(&mut p, t, 4);
    p.close_interval();
    assert_eq!(p.delivery_rate(), 0);
}
