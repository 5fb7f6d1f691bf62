//! RACK on the head of the line while data waits (spec §5.5 step 6): a lost
//! packet that holds up the receiver's cumulative point is found by RACK
//! within about a round trip even though the next message is already
//! waiting to be sent, instead of by the path's retransmission timeout.

mod support;

use metaroce_firmware::QpConfig;
use support::{Channel, MEM_BASE, Pair, completions, write_wr};

/// Paths of the connection; every message below puts one packet on each.
const PATHS: u16 = 8;
/// One packet per path.
const LEN: u32 = 4096 * PATHS as u32;

/// Runs the pair until A has `count` more completions.
fn complete(pair: &mut Pair, count: usize) {
    let mut done = 0;
    let limit = pair.now + 50_000_000;
    assert!(
        pair.run_until(limit, |p| {
            done += completions(p.events().0).len();
            done >= count
        }),
        "only {done} of {count} messages completed"
    );
}

#[test]
fn a_lost_head_of_line_packet_is_found_by_rack_while_the_next_message_waits() {
    // A receive window of one message: the next message waits for the
    // cumulative point, which the lost packet holds back.
    let qp = QpConfig {
        paths: PATHS,
        streams: 1,
        recv_window: u32::from(PATHS),
        ..QpConfig::default()
    };
    let mut pair = Pair::with_config(3, qp, Channel::default());
    // Two messages give every path an RTT sample (a packet sent at time 0
    // echoes no timestamp).
    for i in 0..2 {
        let addr = MEM_BASE + i * u64::from(LEN);
        pair.a
            .nic
            .post_send(pair.a.qpn, write_wr(&pair, i, addr, LEN))
            .unwrap();
        complete(&mut pair, 1);
    }
    assert!(
        pair.a
            .nic
            .path_stats(pair.a.qpn)
            .unwrap()
            .iter()
            .all(|p| p.srtt_ns > 0)
    );
    // The next message's first packet (the head of the line) is lost.
    let addr = MEM_BASE + 2 * u64::from(LEN);
    pair.a
        .nic
        .post_send(pair.a.qpn, write_wr(&pair, 2, addr, LEN))
        .unwrap();
    pair.channel.loss = 1.0;
    let dropped = pair.dropped_by_channel;
    while pair.dropped_by_channel == dropped {
        assert!(pair.step(), "nothing was sent");
    }
    pair.channel.loss = 0.0;
    // The message after it waits behind the receive window meanwhile.
    let addr = MEM_BASE + 3 * u64::from(LEN);
    pair.a
        .nic
        .post_send(pair.a.qpn, write_wr(&pair, 3, addr, LEN))
        .unwrap();
    complete(&mut pair, 2);
    let stats = pair.a.nic.stats();
    assert_eq!(stats.rack_losses, 1, "{stats:?}");
    assert_eq!(stats.quarantines, 0, "no path timed out: {stats:?}");
    assert_eq!(stats.retransmits, 1, "{stats:?}");
}
