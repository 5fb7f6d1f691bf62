//! A round trip far longer than the first timeout (spec §5.5 step 2): with
//! no RTT sample yet, every path times out before its first ACK arrives and
//! is quarantined, and its probes back off to at most 8 × the initial RTO,
//! shorter than the round trip, so no probe is still in flight when its ACK
//! comes back. The first late ACK that reports new arrivals must give the
//! path its first RTT sample (from the timestamp it echoes); without it the
//! connection probes forever and its messages end in RETRY_EXC_ERR (seen
//! between a soft NIC and the slow simulated board).

mod support;

use metaroce_firmware::{QpConfig, WcStatus};
use support::{Channel, MEM_BASE, Pair, completions, pattern, write_wr};

#[test]
fn a_round_trip_longer_than_eight_initial_timeouts_still_completes() {
    let qp = QpConfig {
        paths: 4,
        streams: 1,
        ..QpConfig::default()
    };
    // 10 ms each way: a 20 ms round trip against a 1 ms initial RTO (and
    // within the pair's connection timeout of 0.5 ms with 7 retries).
    assert!(20_000_000 > 8 * qp.rto_initial_ns);
    let channel = Channel {
        base_delay_ns: 10_000_000,
        route_spread_ns: 1_000,
        ..Channel::default()
    };
    let mut pair = Pair::with_config(3, qp, channel);
    for i in 0..3u64 {
        let len = 16_384u32;
        let addr = MEM_BASE + i * u64::from(len);
        pattern(i, pair.a.mem.slice_mut(addr, len as usize));
        pair.a
            .nic
            .post_send(pair.a.qpn, write_wr(&pair, i, addr, len))
            .unwrap();
        let limit = pair.now + 5_000_000_000;
        let mut done = Vec::new();
        pair.run_until(limit, |p| {
            done.extend(completions(p.events().0));
            !done.is_empty()
        });
        assert_eq!(done.len(), 1, "message {i} did not complete within 5 s");
        assert_eq!(
            done[0].status,
            WcStatus::Success,
            "message {i} at {} ns: {:?} {:?}",
            pair.now,
            pair.a.nic.stats(),
            pair.b.nic.drops()
        );
        assert_eq!(
            pair.b.mem.slice(addr, len as usize),
            pair.a.mem.slice(addr, len as usize),
            "message {i} placed"
        );
    }
}
