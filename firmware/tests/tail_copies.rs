//! Tail copies (spec §5.6): once the connection has resent something, a
//! sender with nothing else to send copies its newest unacknowledged packets
//! onto other paths; the receiver takes a copy as a duplicate, nothing is
//! placed twice, and the copies are not counted as retransmissions. On a
//! connection that has lost nothing, no copy is sent.

mod support;

use metaroce_firmware::QpConfig;
use support::{Channel, MEM_BASE, Pair};

/// Paths of the connection; every message below puts one packet on each.
const PATHS: u16 = 8;
/// One packet per path.
const LEN: u32 = 4096 * PATHS as u32;

/// Writes message `i`'s pattern into A's memory, posts it and runs the pair
/// until it completes; with `lose_first`, the message's first datagram on
/// the wire is dropped.
fn send(pair: &mut Pair, i: u64, lose_first: bool) {
    pair.post_pattern_write(i, LEN);
    if lose_first {
        pair.channel.loss = 1.0;
        let dropped = pair.dropped_by_channel;
        while pair.dropped_by_channel == dropped {
            assert!(pair.step(), "nothing was sent");
        }
        pair.channel.loss = 0.0;
    }
    assert!(pair.run_to_completion(), "message {i} did not complete");
}

fn pair() -> Pair {
    let qp = QpConfig {
        paths: PATHS,
        streams: 1,
        ..QpConfig::default()
    };
    Pair::with_config(5, qp, Channel::default())
}

#[test]
fn after_a_loss_the_tail_of_a_message_is_copied_onto_other_paths() {
    let mut pair = pair();
    // RTT samples on every path, then a loss that is resent.
    send(&mut pair, 0, false);
    send(&mut pair, 1, false);
    send(&mut pair, 2, true);
    let before = pair.a.nic.stats().retransmits;
    assert_eq!(before, 1);
    // A message after the loss: its tail is copied while A idles.
    send(&mut pair, 3, false);
    // Let the last copies arrive and be acknowledged.
    let until = pair.now + 1_000_000;
    pair.run_until(until, |_| false);
    let a = *pair.a.nic.stats();
    let b = *pair.b.nic.stats();
    assert!(a.tail_copies > 0, "no tail copy: {a:?}");
    assert!(
        a.tail_copies <= u64::from(QpConfig::default().tail_copies) * 2,
        "{a:?}"
    );
    assert_eq!(a.retransmits, before, "copies are not retransmissions");
    assert!(b.duplicates > 0, "B saw no copy as a duplicate: {b:?}");
    let paths = pair.a.nic.path_stats(pair.a.qpn).unwrap();
    let second: u64 = paths.iter().map(|p| p.retransmitted).sum();
    assert_eq!(second, a.retransmits + a.tail_copies);
    // Every byte placed once and right.
    let len = 4 * LEN as usize;
    assert_eq!(
        pair.a.mem.slice(MEM_BASE, len),
        pair.b.mem.slice(MEM_BASE, len)
    );
}

#[test]
fn a_connection_that_lost_nothing_sends_no_copy() {
    let mut pair = pair();
    for i in 0..4 {
        send(&mut pair, i, false);
    }
    let a = *pair.a.nic.stats();
    assert_eq!(a.retransmits + a.tail_copies, 0, "{a:?}");
}
