//! The real MetaRoCE engine on the simulated fabric.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use metaroce_fabric::baseline::FlowSpec;
use metaroce_fabric::metaroce::{
    HostMemory, MetaRoceConfig, PatternMemory, REGION_BASE, metaroce_hosts,
};
use metaroce_fabric::network::LinkSpec;
use metaroce_fabric::queue::{EcnMarking, QueueConfig};
use metaroce_fabric::scenario::{
    FabricParams, MetaRoceOptions, TransportKind, run_failover, run_hotlink, run_loss,
};
use metaroce_fabric::time::{SimTime, from_ms, from_ns, from_us, to_ns};
use metaroce_fabric::topology::parallel_paths;
use metaroce_fabric::{HostId, Transport};
use metaroce_firmware::cc::{AckSample, CcAlgorithm, CcFactory, PathController};
use metaroce_firmware::{Memory, VecMemory};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A host's real memory, shared with the test so it can be read afterwards.
#[derive(Clone)]
struct Shared(Rc<RefCell<VecMemory>>);

impl Memory for Shared {
    fn write(&mut self, addr: u64, data: &[u8]) {
        self.0.borrow_mut().write(addr, data);
    }
    fn read(&mut self, addr: u64, out: &mut [u8]) {
        self.0.borrow_mut().read(addr, out);
    }
}

impl HostMemory for Shared {
    fn wrong_bytes(&self) -> u64 {
        0
    }
}

#[test]
fn adapter_moves_verified_bytes_over_a_lossy_multipath_fabric() {
    const MESSAGE: u64 = 256 << 10;
    const MESSAGES: u64 = 8;
    let region = MESSAGE * MESSAGES;
    let link = LinkSpec {
        rate_bps: 100_000_000_000,
        delay: from_ns(1_500),
        queue: QueueConfig {
            capacity_bytes: 1_000_000,
            ecn: EcnMarking::dcqcn(),
        },
    };
    let mut topology = parallel_paths(11, 8, link, link).unwrap();
    topology.network.set_host_ingress_loss(0.02).unwrap();
    let memories: Vec<Shared> = (0..2)
        .map(|_| {
            Shared(Rc::new(RefCell::new(VecMemory::new(
                REGION_BASE,
                region as usize,
            ))))
        })
        .collect();
    SmallRng::seed_from_u64(5).fill(
        memories[0]
            .0
            .borrow_mut()
            .slice_mut(REGION_BASE, region as usize),
    );
    let flow = FlowSpec {
        message_limit: Some(MESSAGES),
        ..FlowSpec::unlimited(0, topology.sender, topology.receiver, 0, MESSAGE)
    };
    let config = MetaRoceConfig {
        region_bytes: region,
        ..MetaRoceConfig::new(64, 4096, link.rate_bps)
    };
    let hosts = metaroce_hosts(2, &[flow], &config, 3, |host| {
        memories[host.0 as usize].clone()
    })
    .unwrap();
    let transports: Vec<Box<dyn Transport>> = hosts
        .into_iter()
        .map(|host| -> Box<dyn Transport> { Box::new(host) })
        .collect();
    let mut network = topology.network.build(transports).unwrap();
    network.sim.run_until(from_ms(2));

    let sender = network.sim.transport_stats(HostId(0)).unwrap();
    let receiver = network.sim.transport_stats(HostId(1)).unwrap();
    assert_eq!(sender.completed_messages, MESSAGES);
    assert_eq!(receiver.delivered_messages, MESSAGES);
    assert_eq!(sender.qp_errors + receiver.qp_errors, 0);
    assert!(
        network.sim.counters().random_drops > 0,
        "the fabric dropped nothing"
    );
    assert!(sender.retransmitted_packets > 0);
    let sent = memories[0].0.borrow();
    let received = memories[1].0.borrow();
    assert!(
        sent.slice(REGION_BASE, region as usize) == received.slice(REGION_BASE, region as usize),
        "the receiver's memory differs from the sender's"
    );
    // Every packet carried real engine datagrams, so the wire saw the bytes.
    assert!(receiver.bytes_placed >= region);
}

#[test]
fn metaroce_keeps_goodput_at_one_percent_loss_and_every_byte_checks() {
    let duration = from_ms(3);
    let lossless = run_loss(TransportKind::MetaRoce, 0.0, 2, duration).unwrap();
    let lossy = run_loss(TransportKind::MetaRoce, 0.01, 2, duration).unwrap();
    let fraction = lossy.goodput_gbps / lossless.goodput_gbps;
    assert!(lossy.network.random_drops > 0);
    assert!(lossy.stats.retransmitted_packets > 0);
    assert!(
        fraction >= 0.9,
        "goodput at 1% loss is {fraction:.3} of lossless"
    );
    assert!(lossless.goodput_gbps > 0.9 * lossless.line_rate_gbps);
    assert!(lossy.stats.bytes_placed > 0);
    assert_eq!(lossy.stats.bytes_wrong, 0);
    assert_eq!(lossy.stats.qp_errors, 0);
}

#[test]
fn metaroce_survives_a_blackholed_path_without_qp_error() {
    let report = run_failover(TransportKind::MetaRoce, 3, from_ms(3), from_ms(1), 8).unwrap();
    assert!(
        report.run.network.blackholed > 0,
        "nothing crossed the dead path"
    );
    assert_eq!(report.run.stats.qp_errors, 0);
    let recovery = report.recovery_us.expect("goodput never recovered");
    assert!(recovery <= 1_000.0, "recovery took {recovery} µs");
    assert!(report.goodput_after_gbps >= 0.85 * report.surviving_capacity_gbps);
}

/// Calls a [`CountingFactory`]'s controllers received.
#[derive(Debug, Default)]
struct CcCalls {
    built: AtomicU64,
    acks: AtomicU64,
    acked_packets: AtomicU64,
}

/// A congestion controller from outside the engine's crate: a fixed window
/// that counts what the engine tells it.
#[derive(Debug)]
struct CountingFactory {
    window: u32,
    calls: Arc<CcCalls>,
}

struct Counting {
    window: u32,
    calls: Arc<CcCalls>,
}

impl PathController for Counting {
    fn window(&self) -> u32 {
        self.window
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.calls.acks.fetch_add(1, Ordering::Relaxed);
        self.calls
            .acked_packets
            .fetch_add(u64::from(ack.acked), Ordering::Relaxed);
    }
    fn on_loss(&mut self, _: u64) {}
    fn on_timeout(&mut self, _: u64) {}
    fn name(&self) -> &'static str {
        "counting"
    }
}

impl CcFactory for CountingFactory {
    fn build(&self, _mtu: u32) -> Box<dyn PathController> {
        self.calls.built.fetch_add(1, Ordering::Relaxed);
        Box::new(Counting {
            window: self.window,
            calls: self.calls.clone(),
        })
    }
    fn name(&self) -> &str {
        "counting"
    }
}

#[test]
fn a_controller_from_outside_the_crate_runs_every_path() {
    let calls = Arc::new(CcCalls::default());
    let cc = CcAlgorithm::Custom(Arc::new(CountingFactory {
        window: 64 * 1024,
        calls: calls.clone(),
    }));
    assert_eq!(cc.name(), "counting");
    let qps = 2;
    let metaroce = MetaRoceOptions {
        cc,
        ..MetaRoceOptions::default()
    };
    let report = run_hotlink(
        TransportKind::MetaRoce,
        &metaroce,
        1,
        from_us(400),
        from_us(200),
        qps,
        0.5,
    )
    .unwrap();
    // Both ends of every QP build one controller per path.
    let paths = u64::from(FabricParams::default().metaroce_paths);
    assert_eq!(calls.built.load(Ordering::Relaxed), 2 * qps as u64 * paths);
    let acks = calls.acks.load(Ordering::Relaxed);
    let acked = calls.acked_packets.load(Ordering::Relaxed);
    assert!(acks > 0 && acked >= acks, "{acks} ACKs, {acked} packets");
    // The controllers saw every data packet the sender had acknowledged.
    assert!(
        acked >= report.run.stats.packets_acked,
        "{acked} vs {}",
        report.run.stats.packets_acked
    );
}

/// Eight parallel paths that mark ECN above 48 KiB and lose nothing.
struct MarkingPaths {
    /// Host link rate, bit/s.
    host_bps: u64,
    /// Path link rate, bit/s.
    path_bps: u64,
    /// Every link's delay.
    delay: SimTime,
    /// Every queue's capacity, bytes.
    queue_bytes: u64,
    /// The connection timer.
    conn_timeout_ns: u64,
}

/// What [`marking_paths_run`] saw.
struct MarkingRun {
    /// The sender's data packets sent.
    sent: u64,
    /// The sender's packets sent twice.
    resent: u64,
    /// The sender's path timeouts.
    timeouts: u64,
    /// Payload bytes the receiver placed after the start-up.
    placed: u64,
}

/// One WRITE stream of 256 KiB messages over `m` for `run` under ECMP seed
/// `seed`; checks that nothing was dropped or corrupted and that some path
/// marked. `placed` counts from `startup` on.
fn marking_paths_run(m: &MarkingPaths, seed: u64, startup: SimTime, run: SimTime) -> MarkingRun {
    let host = LinkSpec {
        rate_bps: m.host_bps,
        delay: m.delay,
        queue: QueueConfig {
            capacity_bytes: m.queue_bytes,
            ecn: EcnMarking::Off,
        },
    };
    let path = LinkSpec {
        rate_bps: m.path_bps,
        queue: QueueConfig {
            capacity_bytes: m.queue_bytes,
            ecn: EcnMarking::Threshold { k_bytes: 48 << 10 },
        },
        ..host
    };
    let topology = parallel_paths(seed, 8, host, path).unwrap();
    let flow = FlowSpec::unlimited(0, topology.sender, topology.receiver, 0, 256 << 10);
    let mut config = MetaRoceConfig::new(8, 4096, host.rate_bps);
    config.conn_timeout_ns = m.conn_timeout_ns;
    let hosts = metaroce_hosts(2, &[flow], &config, seed, |_| PatternMemory::default()).unwrap();
    let transports: Vec<Box<dyn Transport>> = hosts
        .into_iter()
        .map(|host| -> Box<dyn Transport> { Box::new(host) })
        .collect();
    let mut network = topology.network.build(transports).unwrap();
    network.sim.run_until(startup);
    let placed_before = network.sim.transport_stats(HostId(1)).unwrap().bytes_placed;
    network.sim.run_until(run);
    let sender = network.sim.transport_stats(HostId(0)).unwrap();
    let receiver = network.sim.transport_stats(HostId(1)).unwrap();
    let c = network.sim.counters();
    assert!(sender.completed_messages > 0);
    assert_eq!(sender.bytes_wrong, 0);
    assert_eq!(c.random_drops + c.queue_drops, 0);
    assert!(c.ecn_marks > 0, "seed {seed}: no path marked");
    MarkingRun {
        sent: sender.data_packets_sent,
        resent: sender.retransmitted_packets,
        timeouts: sender.timeouts,
        placed: receiver.bytes_placed - placed_before,
    }
}

/// Issue #20 item 7, kept fixed: eight equal paths that each mark ECN above a
/// queue threshold and lose nothing. Marks on every path come from the paths'
/// shared load, so they must not drive route changes that reorder a path's
/// packets (a path moved with packets in flight has its new packets overtake
/// the old ones, and the SACK gap declares the old ones lost). Six seeds
/// (ECMP placements of the eight paths).
#[test]
fn equal_marking_paths_without_loss_resend_nothing() {
    let (mut sent, mut resent) = (0, 0);
    for seed in 1..=6 {
        let m = MarkingPaths {
            host_bps: 100_000_000_000,
            path_bps: 12_500_000_000,
            delay: from_ns(1_500),
            queue_bytes: 1_000_000,
            conn_timeout_ns: MetaRoceConfig::new(8, 4096, 1).conn_timeout_ns,
        };
        let r = marking_paths_run(&m, seed, 0, from_ms(3));
        sent += r.sent;
        resent += r.resent;
    }
    // The goal of issue #20: at most 0.1 % (before the fix: about 10 %).
    assert!(
        resent * 1000 <= sent,
        "{resent} of {sent} data packets sent twice"
    );
}

/// Issue #20 item 7 at the relay's scale (`metaroce demo --loss 0
/// --path-rate-mbps 200`: eight 200 Mbit/s paths, 1 MiB queues marking ECN
/// above 48 KiB, a short base round trip): a path's queue swings its round
/// trip by milliseconds, far more than the microseconds of the test above,
/// and the loss detectors must take that for queueing, not loss (spec §5.7:
/// the RTO's peak and move floor). And the goodput goal: ECMP hashes the
/// eight paths onto the eight links at random (about 1 − (7/8)^8 ≈ 66 % of
/// the links used), so paths that share a link must move until each has one
/// of its own (spec §5.9: a marked path outpaced by a sibling moves). Three
/// seeds, 600 ms each, the first 300 ms the start-up.
#[test]
fn slow_marking_paths_without_loss_resend_nothing() {
    let (mut sent, mut resent, mut timeouts) = (0, 0, 0);
    let (startup, run) = (from_ms(300), from_ms(600));
    for seed in 1..=3 {
        let m = MarkingPaths {
            host_bps: 10_000_000_000,
            path_bps: 200_000_000,
            delay: from_us(10),
            queue_bytes: 1 << 20,
            // Longer than the deepest queue (1 MiB at 200 Mbit/s: 42 ms).
            conn_timeout_ns: 100_000_000,
        };
        let r = marking_paths_run(&m, seed, startup, run);
        sent += r.sent;
        resent += r.resent;
        timeouts += r.timeouts;
        // The goal of issue #20: at least 90 % of the links' capacity in
        // payload after the start-up (before the fix: 64-68 % over 300 ms,
        // the links used changing with every ECN repath; after it 97 %, the
        // payload's share of a 4 KiB packet on the wire).
        let capacity = 8 * m.path_bps / 8 * to_ns(run - startup) / 1_000_000_000;
        assert!(
            r.placed * 10 >= capacity * 9,
            "seed {seed}: {} of {capacity} bytes placed after the start-up",
            r.placed
        );
    }
    // The goal of issue #20: at most 0.1 % resent (before the RTO's peak and
    // move floor: 615 of 29,435 over 300 ms, 2.1 %, with 92 path timeouts;
    // after them 16 of 29,079 with one timeout).
    assert!(
        resent * 1000 <= sent,
        "{resent} of {sent} data packets sent twice, {timeouts} path timeouts"
    );
}
