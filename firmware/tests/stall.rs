//! A stalled receive thread (spec §5.7): when no ACK reaches the sender on
//! any path for longer than the paths' RTOs, every path's timer expires at
//! about the same time. The engine spares those expiries (a PROBE on the
//! same route, nothing declared lost, no quarantine) instead of resending
//! every path's flight and moving every path to a new route.

mod support;

use support::{Channel, MEM_BASE, Pair, pattern};

/// Paths of the connection.
const PATHS: u16 = 8;
/// Bytes per WRITE.
const LEN: u32 = 256 << 10;
/// WRITEs posted behind the first one.
const MESSAGES: u64 = 12;
/// How long A hears nothing: a few RTOs (100 µs at least; the pair's
/// round trip is tens of µs), below the connection timeout (500 µs).
const STALL_NS: u64 = 400_000;

#[test]
fn a_stall_longer_than_the_rto_declares_nothing_lost_and_moves_no_path() {
    let mut pair = Pair::new(5, PATHS, Channel::default());
    // A first WRITE gives every path its RTT estimate.
    pair.post_pattern_write(0, LEN);
    assert!(pair.run_to_completion(), "first WRITE");
    let routes = |p: &Pair| -> Vec<u16> {
        let stats = p.a.nic.path_stats(p.a.qpn).unwrap();
        stats.iter().map(|s| s.entropy).collect()
    };
    let before = routes(&pair);
    for i in 1..=MESSAGES {
        pair.post_pattern_write(i, LEN);
    }
    // Data flows for a while, then A hears nothing for STALL_NS.
    let start = pair.now + 20_000;
    pair.run_until(start, |_| false);
    pair.channel.a_stalled = Some((start, start + STALL_NS));
    let mut done = 0;
    assert!(
        pair.run_until(start + 50_000_000, |p| {
            done += support::completions(p.events().0).len();
            done == MESSAGES as usize
        }),
        "{done} of {MESSAGES} WRITEs completed"
    );
    for i in 1..=MESSAGES {
        let mut want = vec![0; LEN as usize];
        pattern(i, &mut want);
        let addr = MEM_BASE + i * u64::from(LEN);
        assert!(pair.b.mem.slice(addr, LEN as usize) == want, "WRITE {i}");
    }
    let stats = *pair.a.nic.stats();
    assert!(stats.spared_expiries >= 1, "no timer expired: {stats:?}");
    assert_eq!(stats.quarantines, 0, "{stats:?}");
    assert_eq!(stats.timeout_losses, 0, "{stats:?}");
    assert_eq!(stats.retransmits, 0, "{stats:?}");
    assert_eq!(stats.repaths, 0, "{stats:?}");
    assert_eq!(routes(&pair), before, "a path moved");
}

#[test]
fn a_failed_route_still_times_out_and_moves_while_the_others_are_acknowledged() {
    let mut pair = Pair::new(5, PATHS, Channel::default());
    pair.post_pattern_write(0, LEN);
    assert!(pair.run_to_completion(), "first WRITE");
    let dead = pair.a.nic.path_stats(pair.a.qpn).unwrap()[0].entropy;
    pair.channel.dead_port = Some(dead);
    for i in 1..=MESSAGES {
        pair.post_pattern_write(i, LEN);
    }
    let mut done = 0;
    assert!(
        pair.run_until(pair.now + 50_000_000, |p| {
            done += support::completions(p.events().0).len();
            done == MESSAGES as usize
        }),
        "{done} of {MESSAGES} WRITEs completed"
    );
    let stats = *pair.a.nic.stats();
    assert!(stats.quarantines >= 1, "{stats:?}");
    assert_eq!(stats.spared_expiries, 0, "{stats:?}");
    let path0 = pair.a.nic.path_stats(pair.a.qpn).unwrap()[0].entropy;
    assert_ne!(path0, dead, "path 0 stayed on its failed route");
}
