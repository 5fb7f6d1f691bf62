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
    p.on_timeout(5000, 50001, |f| lost.push(f));
    assert_eq!(lost.len(), 2);
    assert_eq!(p.entropy(), 50001);
    assert!(!p.can_send(10));
    let probe = p.on_send_probe(5000, 1000);
    assert_eq!(probe, 2);
    p.on_ack(3, &Sack::new(), |_| {});
    assert_eq!(p.health(), PathHealth::Active);
    assert!(p.can_send(10));
}
