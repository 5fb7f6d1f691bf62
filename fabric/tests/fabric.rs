//! Integration tests of the simulator core, topologies and baselines.

use metaroce_fabric::event::ComponentId;
use metaroce_fabric::link::{Link, serialization_time};
use metaroce_fabric::network::{LinkSpec, NetworkBuilder};
use metaroce_fabric::queue::{EcnMarking, OutputQueue, QueueConfig};
use metaroce_fabric::scenario::{MetaRoceOptions, TransportKind, run_incast, run_loss};
use metaroce_fabric::sim::SimContext;
use metaroce_fabric::switch::EcmpSwitch;
use metaroce_fabric::time::{SimTime, from_ms, from_ns, from_us};
use metaroce_fabric::topology::{LeafSpineSpec, leaf_spine, multi_plane, parallel_paths};
use metaroce_fabric::{Ecn, FabricError, HostId, Packet, Transport, TransportStats};

use std::cell::RefCell;
use std::rc::Rc;

const GBPS_100: u64 = 100_000_000_000;

/// Arrival times and source ports seen by a [`Probe`].
type Arrivals = Rc<RefCell<Vec<(SimTime, u16)>>>;

fn spec(rate_bps: u64, delay: SimTime) -> LinkSpec {
    LinkSpec {
        rate_bps,
        delay,
        queue: QueueConfig {
            capacity_bytes: 1_000_000,
            ecn: EcnMarking::Off,
        },
    }
}

/// Sends `count` packets of `wire_bytes` to `dst` as fast as the NIC pulls,
/// with source ports 0, 1, 2, ...; records arrival times and source ports.
struct Probe {
    dst: HostId,
    remaining: u32,
    wire_bytes: u32,
    next_port: u16,
    arrivals: Arrivals,
}

impl Transport for Probe {
    fn handle_packet(&mut self, now: SimTime, packet: &Packet) {
        self.arrivals.borrow_mut().push((now, packet.src_port));
    }
    fn poll_transmit(&mut self, _now: SimTime, packet: &mut Packet) -> bool {
        if self.remaining == 0 {
            return false;
        }
        self.remaining -= 1;
        packet.dst = self.dst;
        packet.src_port = self.next_port;
        self.next_port += 1;
        packet.wire_bytes = self.wire_bytes;
        true
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }
    fn handle_timeout(&mut self, _now: SimTime) {}
    fn stats(&self) -> TransportStats {
        TransportStats::default()
    }
    fn message_latencies(&self) -> &[SimTime] {
        &[]
    }
}

fn probe(dst: u32, count: u32, wire_bytes: u32) -> (Box<dyn Transport>, Arrivals) {
    let arrivals = Rc::new(RefCell::new(Vec::new()));
    let transport = Probe {
        dst: HostId(dst),
        remaining: count,
        wire_bytes,
        next_port: 0,
        arrivals: arrivals.clone(),
    };
    (Box::new(transport), arrivals)
}

#[test]
fn link_serialisation_and_delay_are_exact() {
    // Host 0 (100G, 1 µs) -> switch -> host 1 (25G, 2 µs).
    let mut network = NetworkBuilder::new(1);
    let a = network.add_host();
    let b = network.add_host();
    let switch = network.add_switch();
    network
        .connect_host(a, switch, spec(GBPS_100, from_us(1)))
        .unwrap();
    network
        .connect_host(b, switch, spec(25_000_000_000, from_us(2)))
        .unwrap();
    let (sender, _) = probe(1, 2, 1000);
    let (receiver, arrivals) = probe(0, 0, 0);
    let mut built = network.build(vec![sender, receiver]).unwrap();
    built.sim.run_until(from_ms(1));
    let first = serialization_time(1000, GBPS_100)
        + from_us(1)
        + serialization_time(1000, 25_000_000_000)
        + from_us(2);
    assert_eq!(serialization_time(1000, GBPS_100), 80_000);
    assert_eq!(serialization_time(1000, 25_000_000_000), 320_000);
    // The second packet queues behind the first at the slower 25G port.
    let second = first + 320_000;
    let times: Vec<SimTime> = arrivals.borrow().iter().map(|&(t, _)| t).collect();
    assert_eq!(times, vec![first, second]);
}

#[test]
fn queue_drops_tail_and_marks_above_threshold() {
    let mut ctx = SimContext::new(3);
    let link = Link::new(GBPS_100, 0, ComponentId(0)).unwrap();
    let config = QueueConfig {
        capacity_bytes: 3000,
        ecn: EcnMarking::Threshold { k_bytes: 1000 },
    };
    let mut queue = OutputQueue::new(link, config).unwrap();
    let mut packets = Vec::new();
    for _ in 0..5 {
        let id = ctx.pool.alloc();
        ctx.pool.get_mut(id).wire_bytes = 1000;
        ctx.pool.get_mut(id).ecn = Ecn::Ect0;
        packets.push(id);
        queue.enqueue(ComponentId(1), &mut ctx, id);
    }
    // 1st goes on the wire at once; 2nd and 3rd find 0 and 1000 bytes
    // queued (not above K); 4th finds 2000 (> K): marked; 5th would
    // exceed 3000 bytes: dropped.
    let stats = queue.stats();
    assert_eq!((stats.enqueued, stats.marked, stats.dropped), (4, 1, 1));
    let ecn: Vec<Ecn> = packets[..4]
        .iter()
        .map(|&id| ctx.pool.get(id).ecn)
        .collect();
    assert_eq!(ecn, vec![Ecn::Ect0, Ecn::Ect0, Ecn::Ect0, Ecn::Ce]);
    assert_eq!(queue.queued_bytes(), 3000);
}

#[test]
fn ecmp_spreads_ports_and_pins_each_port_to_one_path() {
    let hops: Vec<ComponentId> = (10..18).map(ComponentId).collect();
    let mut switch = EcmpSwitch::new(42, &[Vec::new(), hops.clone()]);
    let mut counts = [0u32; 8];
    let mut packet = Packet::default();
    packet.src = HostId(0);
    packet.dst = HostId(1);
    packet.dst_port = 4791;
    for port in 0..4000u16 {
        packet.src_port = 49152 + port;
        let hop = switch.route(&packet).unwrap();
        counts[(hop.0 - 10) as usize] += 1;
        assert_eq!(switch.route(&packet), Some(hop), "port {port} moved");
    }
    for count in counts {
        assert!((400..=600).contains(&count), "uneven spread {counts:?}");
    }
    // With few ports, collisions happen as in a real fabric.
    let mut used = std::collections::HashSet::new();
    for port in 0..8u16 {
        packet.src_port = 49152 + port;
        used.insert(switch.route(&packet).unwrap());
    }
    assert!(
        used.len() < 8,
        "8 ports on 8 paths should collide sometimes"
    );
    packet.dst = HostId(0);
    assert_eq!(switch.route(&packet), None);
}

#[test]
fn multi_plane_host_sprays_by_source_port() {
    let spec = LeafSpineSpec {
        leaves: 2,
        spines: 2,
        hosts_per_leaf: 1,
        host_link: spec(GBPS_100, from_us(1)),
        fabric_link: spec(GBPS_100, from_us(1)),
    };
    let fabric = multi_plane(5, 4, &spec).unwrap();
    let (sender, _) = probe(1, 8, 4000);
    let (receiver, arrivals) = probe(0, 0, 0);
    let mut built = fabric.network.build(vec![sender, receiver]).unwrap();
    built.sim.run_until(from_ms(1));
    let arrivals = arrivals.borrow();
    assert_eq!(arrivals.len(), 8);
    // Four ports in parallel: packets on planes 0..3 arrive together.
    assert_eq!(arrivals[0].0, arrivals[3].0);
    let per_plane: Vec<usize> = fabric.planes[0..4]
        .iter()
        .map(|plane| built.link_stats(plane.host_downlinks[1]).unwrap().enqueued as usize)
        .collect();
    assert_eq!(per_plane, vec![2, 2, 2, 2]);
}

#[test]
fn impossible_topologies_are_errors() {
    let link = spec(GBPS_100, 0);
    assert!(matches!(
        parallel_paths(1, 0, link, link),
        Err(FabricError::InvalidTopology(_))
    ));
    let bad = LeafSpineSpec {
        leaves: 2,
        spines: 0,
        hosts_per_leaf: 1,
        host_link: link,
        fabric_link: link,
    };
    assert!(leaf_spine(1, &bad).is_err());
    assert!(multi_plane(1, 0, &LeafSpineSpec { spines: 1, ..bad }).is_err());
    let mut network = NetworkBuilder::new(1);
    network.add_host();
    assert!(matches!(
        network.clone().build(Vec::new()),
        Err(FabricError::TransportCount { .. })
    ));
    let (lonely, _) = probe(0, 0, 0);
    assert!(network.build(vec![lonely]).is_err());
    assert!(run_loss(TransportKind::RoceV2, 1.5, 1, from_us(10)).is_err());
    let mut paths = parallel_paths(1, 2, link, link).unwrap();
    assert!(
        paths
            .network
            .set_loss(paths.forward_paths[0], -0.1)
            .is_err()
    );
    let uplink_of_sender = metaroce_fabric::network::LinkId(0);
    assert!(matches!(
        paths
            .network
            .schedule_link_state(uplink_of_sender, 0, false),
        Err(FabricError::UnsupportedFault(_))
    ));
}

#[test]
fn same_seed_same_trace_different_seed_different_trace() {
    let run = |seed| run_loss(TransportKind::Irn, 0.01, seed, from_us(500)).unwrap();
    let (first, second, other) = (run(7), run(7), run(8));
    assert_eq!(first.trace_digest, second.trace_digest);
    assert_eq!(first.stats, second.stats);
    assert_eq!(first.network, second.network);
    assert_ne!(first.trace_digest, other.trace_digest);
}

#[test]
fn rocev2_reaches_line_rate_without_loss() {
    let report = run_loss(TransportKind::RoceV2, 0.0, 1, from_ms(2)).unwrap();
    // Header overhead alone caps goodput at 4096 / 4178 of the line rate.
    assert!(
        report.goodput_gbps > 0.93 * report.line_rate_gbps,
        "goodput {} Gbit/s",
        report.goodput_gbps
    );
    assert_eq!(report.stats.retransmitted_packets, 0);
}

#[test]
fn rocev2_goodput_matches_go_back_n_model_at_0_1_percent() {
    let lossless = run_loss(TransportKind::RoceV2, 0.0, 2, from_ms(5)).unwrap();
    let lossy = run_loss(TransportKind::RoceV2, 0.001, 2, from_ms(60)).unwrap();
    let measured = lossy.goodput_gbps / lossless.goodput_gbps;
    let analytic = lossy.analytic_gbn_fraction;
    assert!(lossy.stats.recoveries > 0);
    assert!(
        (measured / analytic - 1.0).abs() <= 0.15,
        "measured {measured:.3} vs 1/(1+pW) = {analytic:.3} (W = {})",
        lossy.window_packets
    );
}

#[test]
fn irn_stays_high_at_one_percent_loss_where_rocev2_collapses() {
    let duration = from_ms(10);
    let irn_base = run_loss(TransportKind::Irn, 0.0, 3, from_ms(2)).unwrap();
    let irn = run_loss(TransportKind::Irn, 0.01, 3, duration).unwrap();
    let roce = run_loss(TransportKind::RoceV2, 0.01, 3, duration).unwrap();
    let irn_fraction = irn.goodput_gbps / irn_base.goodput_gbps;
    assert!(irn_fraction > 0.6, "IRN at 1%: {irn_fraction:.3}");
    assert!(irn.goodput_gbps > 1.5 * roce.goodput_gbps);
}

#[test]
fn incast_shares_the_receiver_link() {
    let report = run_incast(
        TransportKind::Irn,
        &MetaRoceOptions::default(),
        4,
        9,
        from_ms(2),
    )
    .unwrap();
    let total: f64 = report.per_sender_gbps.iter().sum();
    assert_eq!(report.per_sender_gbps.len(), 4);
    assert!(total <= report.run.line_rate_gbps);
    assert!(total > 0.5 * report.run.line_rate_gbps, "total {total}");
    assert!(report.jain_fairness > 0.0 && report.jain_fairness <= 1.0);
    assert!(report.receiver_queue_marks > 0);
}

#[test]
fn nanoseconds_convert_for_the_engine() {
    assert_eq!(from_ns(3), 3_000);
    assert_eq!(metaroce_fabric::time::to_ns(from_ns(3) + 999), 3);
}

#[test]
fn failover_and_hotlink_runs_report_phases() {
    use metaroce_fabric::scenario::{run_failover, run_hotlink};
    let failover = run_failover(TransportKind::RoceV2, 4, from_ms(2), from_ms(1), 8).unwrap();
    // Eight single-path QPs over eight 12.5 Gbit/s paths: ECMP collisions
    // leave some paths idle, but the QPs still move a good part of it.
    assert!(failover.goodput_before_gbps > 0.3 * failover.surviving_capacity_gbps);
    assert!(failover.run.network.blackholed > 0);
    let hot = run_hotlink(
        TransportKind::Irn,
        &MetaRoceOptions::default(),
        4,
        from_ms(2),
        from_ms(1),
        8,
        0.5,
    )
    .unwrap();
    assert!(hot.run.network.background_delivered > 0);
    assert!(run_failover(TransportKind::Irn, 4, from_ms(1), from_ms(2), 8).is_err());
}
