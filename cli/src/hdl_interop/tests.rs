use metaroce_sim_tb::SimError;

use super::check::expected;
use super::*;

/// How long a test's run may take, on the model's clock: a loaded host
/// stretches a run's wall time, not its cycles (runs here take 70k–260k
/// cycles; this is about 15 s of an idle host).
const MAX_CYCLES: u64 = 3_000_000;

/// Runs `cfg`, or `None` (with a message) without the Verilated models.
fn run_or_skip(cfg: &InteropConfig) -> Option<InteropReport> {
    match run_interop(cfg) {
        Ok(r) => Some(r),
        Err(e) if e.downcast_ref().is_some_and(SimError::is_absent) => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("interop run failed: {e:#}"),
    }
}

fn check(what: &str, cfg: &InteropConfig, r: &InteropReport) {
    eprintln!(
        "{what}: {} messages, {} bytes verified, {} wrong, completions {} ok / {} error, \
         {} QP errors, RTL placed {} firmware {} RTL ACKs {} firmware frames {}, \
         soft retransmits {} RTL retransmits {}, bridge kernel drops {}, relay lost {}, \
         {:.2} s, {:.0} cycles/s, disagreements {:?}",
        r.traffic.messages,
        r.traffic.bytes_verified,
        r.traffic.bytes_wrong,
        r.traffic.completions_ok,
        r.traffic.completions_error,
        r.traffic.qp_errors,
        r.rtl.placed,
        r.rtl.firmware_packets,
        r.rtl.ack_frames,
        r.rtl.firmware_frames,
        r.soft.retransmits,
        r.rtl.retransmits,
        r.bridge.kernel_drops,
        r.relay.as_ref().map_or(0, |x| x.dropped_loss),
        r.wall_seconds,
        r.cycles_per_second,
        r.disagreements,
    );
    assert!(r.finished, "{what}: stopped early: {r:#?}");
    assert_eq!(r.traffic.messages as usize, cfg.messages);
    assert_eq!(r.traffic.bytes_wrong, 0, "{what}: {r:#?}");
    assert!(r.traffic.bytes_verified > 0);
    assert_eq!(r.traffic.completions_error, 0, "{what}: {r:#?}");
    assert_eq!(r.traffic.qp_errors, 0, "{what}: {r:#?}");
    assert_eq!(r.traffic.atomic_errors, 0, "{what}: {r:#?}");
    assert!(r.rtl.placed > 0 && r.rtl.ack_frames > 0, "{r:#?}");
    // The two implementations agree on every packet: nothing either NIC
    // or the relay refused. (A bind failure would be a port taken by
    // another program on this host, not a disagreement.)
    let (verdicts, drops) = expected(cfg);
    assert!(
        r.soft.drops.keys().all(|k| drops.contains(&k.as_str())),
        "{what}: {r:#?}"
    );
    assert!(r.rtl.eth_drops.is_empty(), "{what}: {r:#?}");
    assert!(
        r.rtl
            .firmware_drops
            .keys()
            .all(|k| drops.contains(&k.as_str())),
        "{what}: {r:#?}"
    );
    assert!(
        r.rtl.verdicts.keys().all(|k| verdicts.contains(k)),
        "{what}: {r:#?}"
    );
    let b = &r.bridge;
    assert_eq!(
        (b.bad_checksums, b.wrong_source, b.non_udp_frames),
        (0, 0, 0),
        "{what}: {r:#?}"
    );
    assert_eq!(
        (r.rtl.interface_errors, r.rtl.hw_disagreements),
        (0, 0),
        "{what}: {r:#?}"
    );
    if let Some(relay) = &r.relay {
        assert_eq!(relay.bad_icrc, 0, "{what}: {r:#?}");
    }
}

#[test]
fn hdl_interop_direct() {
    let cfg = InteropConfig {
        messages: 200,
        max_cycles: MAX_CYCLES,
        max_time: Duration::MAX,
        ..InteropConfig::default()
    };
    if let Some(r) = run_or_skip(&cfg) {
        check("direct", &cfg, &r);
    }
}

#[test]
fn hdl_interop_relay_1pct_loss_4_paths() {
    let cfg = InteropConfig {
        messages: 400,
        relay: true,
        paths: 4,
        loss: 0.01,
        // Its own address: the tests run in parallel, and two RTL NICs
        // with one seed pick the same source ports.
        rtl_ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)),
        max_cycles: MAX_CYCLES,
        max_time: Duration::MAX,
        ..InteropConfig::default()
    };
    if let Some(r) = run_or_skip(&cfg) {
        check("relay 1% loss", &cfg, &r);
        let relay = r.relay.as_ref().expect("relay counters");
        // About 12 of some 1,200 datagrams.
        assert!(relay.dropped_loss > 0, "{r:#?}");
    }
}

#[test]
fn hdl_interop_atomics_through_relay_at_1pct_loss() {
    let cfg = InteropConfig {
        messages: 200,
        relay: true,
        loss: 0.01,
        atomics: true,
        rtl_ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 5)),
        max_cycles: MAX_CYCLES,
        max_time: Duration::MAX,
        ..InteropConfig::default()
    };
    if let Some(r) = run_or_skip(&cfg) {
        check("atomics, relay 1% loss", &cfg, &r);
        // The soft NIC and the RTL's firmware execute each other's
        // FETCH_ADDs; the RTL checks and hands up both directions'.
        assert!(r.traffic.fetch_adds > 0, "{r:#?}");
    }
}

#[test]
fn hdl_interop_late_receives_rnr_nacks() {
    let cfg = InteropConfig {
        messages: 100,
        late_receives: true,
        rtl_ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 4)),
        max_cycles: MAX_CYCLES,
        max_time: Duration::MAX,
        ..InteropConfig::default()
    };
    if let Some(r) = run_or_skip(&cfg) {
        check("late receives", &cfg, &r);
        // Both NICs NACKed and both retried: the RTL's RNR verdicts
        // became NACKs its firmware built, which the soft NIC obeyed.
        assert!(r.rtl.verdicts.contains_key("Rnr"), "{r:#?}");
        assert!(r.rtl.firmware_frames > 0, "{r:#?}");
        assert!(r.soft.drops.contains_key("receiver_not_ready"), "{r:#?}");
    }
}
