//! The `allreduce` scenario: a ring allreduce over a leaf-spine fabric; completion time.

use std::time::Instant;

use super::{
    FabricParams, RunReport, RunSetup, TransportKind, Tuning, default_window_packets, flow_port,
    report, total_stats,
};
use crate::baseline::{FlowSpec, Gate};
use crate::error::{FabricError, check_probability};
use crate::packet::HostId;
use crate::time::{SimTime, from_us, to_secs};
use crate::topology::{LeafSpineSpec, multi_plane};

/// Shape of the `allreduce` scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllreduceSpec {
    /// Hosts in the ring.
    pub hosts: usize,
    /// Independent leaf-spine planes.
    pub planes: usize,
    /// Hosts under each leaf.
    pub hosts_per_leaf: usize,
    /// Spines per plane.
    pub spines: usize,
    /// Bytes reduced (the buffer every host holds).
    pub data_bytes: u64,
    /// Random loss on every packet.
    pub loss_probability: f64,
    /// Give up after this much simulated time.
    pub time_limit: SimTime,
}

impl AllreduceSpec {
    fn validate(&self) -> Result<(), FabricError> {
        check_probability("loss probability", self.loss_probability)?;
        if self.hosts < 2 || self.planes == 0 || self.hosts_per_leaf == 0 || self.spines == 0 {
            return Err(FabricError::InvalidTopology(format!(
                "a ring all-reduce needs at least 2 hosts, 1 plane, 1 spine and 1 host per leaf (got {} hosts, {} planes, {} spines, {} hosts per leaf)",
                self.hosts, self.planes, self.spines, self.hosts_per_leaf
            )));
        }
        if self.hosts % self.hosts_per_leaf != 0 {
            return Err(FabricError::InvalidTopology(format!(
                "{} hosts do not fill leaves of {} hosts",
                self.hosts, self.hosts_per_leaf
            )));
        }
        let chunk = self.data_bytes / (self.hosts * self.planes) as u64;
        if chunk == 0 || self.data_bytes / self.hosts as u64 > u64::from(u32::MAX) {
            return Err(FabricError::InvalidParameter {
                name: "data_bytes",
                value: self.data_bytes as f64,
                reason: "the per-host chunk must be 1 byte .. 4 GiB",
            });
        }
        Ok(())
    }
}

/// Result of an all-reduce run.
#[derive(Clone, Debug, PartialEq)]
pub struct AllreduceReport {
    /// Whole-run report (goodput over the time the run lasted).
    pub run: RunReport,
    /// When the last host received its last chunk (`None`: not within the
    /// time limit).
    pub completion_ms: Option<f64>,
    /// Fraction of all ring messages delivered.
    pub delivered_fraction: f64,
    /// Algorithm bandwidth: data bytes / completion time, Gbit/s.
    pub algbw_gbps: f64,
    /// Bandwidth lower bound on completion: each host sends 2(N−1)/N of
    /// the data at the line rate of all its ports (latency not included).
    pub ideal_ms: f64,
}

/// `allreduce`: ring all-reduce (reduce-scatter then all-gather, 2(N−1)
/// steps; step s of a host waits for step s−1 from its left neighbour)
/// over a multi-plane leaf-spine. MetaRoCE runs one connection per ring
/// neighbour and sprays it over every plane; each baseline QP has one path,
/// so the baselines run one ring per plane over a 1/planes slice of the data
/// (as collective libraries run one channel per NIC port).
pub fn run_allreduce(
    kind: TransportKind,
    spec: &AllreduceSpec,
    seed: u64,
) -> Result<AllreduceReport, FabricError> {
    spec.validate()?;
    let params = FabricParams::default();
    let leaf_spine_spec = LeafSpineSpec {
        leaves: spec.hosts / spec.hosts_per_leaf,
        spines: spec.spines,
        hosts_per_leaf: spec.hosts_per_leaf,
        host_link: params.link_spec(),
        fabric_link: params.link_spec(),
    };
    let fabric = multi_plane(seed, spec.planes, &leaf_spine_spec)?;
    let mut builder = fabric.network;
    builder.set_host_ingress_loss(spec.loss_probability)?;
    let n = spec.hosts as u32;
    let rings = if kind == TransportKind::MetaRoce {
        1
    } else {
        spec.planes as u32
    };
    let chunk = spec.data_bytes / u64::from(n) / u64::from(rings);
    let steps = 2 * u64::from(n - 1);
    let mut flows = Vec::new();
    for ring in 0..rings {
        for host in 0..n {
            let qpn = ring * n + host;
            let left = ring * n + (host + n - 1) % n;
            let plane_port = flow_port(qpn) - flow_port(qpn) % rings as u16 + ring as u16;
            flows.push(FlowSpec {
                message_limit: Some(steps),
                gate: Some(Gate::After(left)),
                ..FlowSpec::unlimited(qpn, HostId(host), HostId((host + 1) % n), plane_port, chunk)
            });
        }
    }
    let hops = 4;
    let window_packets = default_window_packets(&params, hops);
    let host_count = spec.hosts;
    let setup = RunSetup {
        kind,
        loss_probability: spec.loss_probability,
        seed,
        params,
        window_packets,
        hops,
        hosts: host_count,
    };
    let mut network = setup.build(builder, &flows, spec.planes as u32, &Tuning::default())?;
    let expected = steps * u64::from(rings) * u64::from(n);
    let started = Instant::now();
    let slice = from_us(100);
    let mut delivered = 0;
    while network.sim.now() < spec.time_limit {
        let next = (network.sim.now() + slice).min(spec.time_limit);
        network.sim.run_until(next);
        delivered = total_stats(&network, host_count).delivered_messages;
        if delivered >= expected {
            break;
        }
    }
    let stats = total_stats(&network, host_count);
    let done = delivered >= expected;
    let end = if done {
        stats.last_delivery_at
    } else {
        network.sim.now()
    };
    let run = report(
        &setup,
        &network,
        end.max(1),
        started.elapsed().as_secs_f64(),
    );
    let completion_ms = done.then(|| to_secs(end) * 1e3);
    let port_rate = params.link_rate_bps as f64 * spec.planes as f64;
    let per_host_bytes = spec.data_bytes as f64 * steps as f64 / f64::from(n);
    let ideal_seconds = per_host_bytes * 8.0 / port_rate;
    Ok(AllreduceReport {
        completion_ms,
        delivered_fraction: delivered as f64 / expected as f64,
        algbw_gbps: completion_ms.map_or(0.0, |ms| spec.data_bytes as f64 * 8.0 / (ms / 1e3) / 1e9),
        ideal_ms: ideal_seconds * 1e3,
        run,
    })
}
