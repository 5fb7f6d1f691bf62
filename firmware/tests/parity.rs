//! PARITY (spec §3.12, §5.6, §6.10): once the connection has lost a packet,
//! the sender follows the groups at the end of each WRITE with a PARITY, and
//! the receiver rebuilds a lost packet of the group from it, so the message
//! completes without a retransmission. A receiver configured without PARITY
//! does not announce it and is sent none.

mod support;

use metaroce_firmware::QpConfig;
use support::{Channel, MEM_BASE, Pair};

/// Paths of the connection.
const PATHS: u16 = 8;
/// Packets per message.
const PKTS: u32 = 8;
/// Message length: [`PKTS`] full packets.
const LEN: u32 = 4096 * PKTS;

/// Which packet of a message the channel drops.
#[derive(Clone, Copy, PartialEq)]
enum Lose {
    Nothing,
    First,
    Last,
}

/// Writes message `i`'s pattern into A's memory, posts it and runs the pair
/// until it completes at A, dropping the message's packet `lose` on the wire.
fn send(pair: &mut Pair, i: u64, lose: Lose) {
    let sent = pair.a.nic.stats().data_sent;
    pair.post_pattern_write(i, LEN);
    let before = match lose {
        Lose::Nothing => None,
        Lose::First => Some(0),
        Lose::Last => Some(u64::from(PKTS) - 1),
    };
    if let Some(before) = before {
        // A sends one datagram per step once its link is busy: drop the one
        // that is the message's packet `before` (an ACK of B's dropped on
        // the way costs nothing: later ACKs carry the same state).
        while pair.a.nic.stats().data_sent < sent + before {
            assert!(pair.step(), "nothing was sent");
        }
        pair.channel.loss = 1.0;
        while pair.a.nic.stats().data_sent == sent + before {
            assert!(pair.step(), "nothing was sent");
        }
        pair.channel.loss = 0.0;
    }
    assert!(pair.run_to_completion(), "message {i} did not complete");
}

/// A pair whose QPs use PARITY as `a_group` and `b_group` say (B's decides
/// whether it is announced), without tail copies, which would also repair
/// a lost last packet.
fn pair(a_group: u16, b_group: u16) -> Pair {
    pair_on(a_group, b_group, Channel::default())
}

/// [`pair`] over `channel`.
fn pair_on(a_group: u16, b_group: u16, channel: Channel) -> Pair {
    let qp = |parity_group| QpConfig {
        paths: PATHS,
        streams: 1,
        tail_copies: 0,
        parity_group,
        ..QpConfig::default()
    };
    Pair::with_configs(5, qp(a_group), qp(b_group), channel)
}

/// Runs messages 0–3 with the last packet of message 3 lost (message 2 loses
/// its first, so the connection has resent something), lets everything
/// settle, and checks every byte arrived right.
fn lose_a_last_packet(pair: &mut Pair) {
    send(pair, 0, Lose::Nothing);
    send(pair, 1, Lose::Nothing);
    send(pair, 2, Lose::First);
    assert_eq!(pair.a.nic.stats().retransmits, 1);
    send(pair, 3, Lose::Last);
    let until = pair.now + 1_000_000;
    pair.run_until(until, |_| false);
    let len = 4 * LEN as usize;
    assert_eq!(
        pair.a.mem.slice(MEM_BASE, len),
        pair.b.mem.slice(MEM_BASE, len)
    );
}

#[test]
fn a_lost_last_packet_is_rebuilt_from_the_parity_without_a_resend() {
    let mut pair = pair(32, 32);
    lose_a_last_packet(&mut pair);
    let a = *pair.a.nic.stats();
    let b = *pair.b.nic.stats();
    assert_eq!(b.parity_rebuilt, 1, "{b:?}");
    assert_eq!(a.retransmits, 1, "the rebuilt packet was resent: {a:?}");
    // Only message 3 followed the loss: one PARITY over its 8 packets.
    assert_eq!(a.parity_sent, 1, "{a:?}");
    assert_eq!(b.parity_unused, 0, "{b:?}");
    assert_eq!(b.duplicates, 0, "{b:?}");
    assert_eq!(pair.b.nic.drops().total(), 0);
}

#[test]
fn a_receiver_without_parity_is_sent_none_and_the_loss_is_resent() {
    let mut pair = pair(32, 0);
    lose_a_last_packet(&mut pair);
    let a = *pair.a.nic.stats();
    let b = *pair.b.nic.stats();
    assert_eq!(a.parity_sent + b.parity_rebuilt, 0, "{a:?} {b:?}");
    assert_eq!(a.retransmits, 2, "{a:?}");
}

#[test]
fn a_connection_that_lost_nothing_sends_no_parity() {
    let mut pair = pair(32, 32);
    for i in 0..4 {
        send(&mut pair, i, Lose::Nothing);
    }
    let a = *pair.a.nic.stats();
    assert_eq!(a.retransmits + a.parity_sent, 0, "{a:?}");
}

#[test]
fn a_connection_whose_paths_see_ecn_marks_sends_no_parity() {
    // Every packet towards B marked: A's paths are all marked (a congested
    // fabric, where a PARITY adds to the queue that drops).
    let channel = Channel {
        ce_to_b: 1.0,
        ..Channel::default()
    };
    let mut pair = pair_on(32, 32, channel);
    lose_a_last_packet(&mut pair);
    let a = *pair.a.nic.stats();
    let b = *pair.b.nic.stats();
    assert_eq!(a.parity_sent + b.parity_rebuilt, 0, "{a:?} {b:?}");
    assert_eq!(a.retransmits, 2, "{a:?}");
}
