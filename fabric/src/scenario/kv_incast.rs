//! `kv-incast`: many servers and one host exchange objects (KV-cache
//! blocks, say) through switches with shallow buffers.
//!
//! * [`KvOp::Read`]: the host fetches an object from each of `senders`
//!   servers at once, job after job. A job starts with a small request to
//!   every server; each server answers with its object (an RDMA WRITE to the
//!   requester, as a READ response would be); the job ends when the last
//!   object has arrived, and the next job's requests leave at that instant.
//!   The figure of merit is the distribution of job completion times (JCT).
//! * [`KvOp::Write`]: every server writes its objects to the host back to
//!   back (as prefill nodes offload KV-cache to a store); the figure of merit
//!   is the distribution of object completion times (first packet sent to
//!   the writer's completion).

use std::time::Instant;

use super::{
    FabricParams, RunReport, RunSetup, default_window_packets, flow_port, report, total_stats,
};
use crate::baseline::{FlowSpec, Gate};
use crate::error::FabricError;
use crate::link::serialization_time;
use crate::network::Network;
use crate::packet::HostId;
use crate::scenario::{TransportKind, Tuning};
use crate::time::{SimTime, from_us, to_secs};
use crate::topology::{LeafSpineSpec, leaf_spine};

/// Bytes of a request message (the job's "send me your object").
pub const REQUEST_BYTES: u64 = 64;

/// Whether the one host reads objects from the servers or they write to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvOp {
    /// Jobs of requests and responses (see the module documentation).
    Read,
    /// Back-to-back writes from every server.
    Write,
}

/// Shape of a `kv-incast` run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KvIncastSpec {
    /// Reads (jobs) or writes.
    pub op: KvOp,
    /// Servers, each answering every job with one object.
    pub senders: usize,
    /// Bytes of each object.
    pub object_bytes: u64,
    /// Jobs run one after the other (reads), or objects each server writes.
    pub jobs: u64,
    /// Egress buffer of every switch port, bytes (shallow).
    pub buffer_bytes: u64,
    /// Give up after this much simulated time.
    pub time_limit: SimTime,
}

/// Result of a `kv-incast` run.
#[derive(Clone, Debug, PartialEq)]
pub struct KvIncastReport {
    /// Whole-run report (goodput over the time the jobs took).
    pub run: RunReport,
    /// Completion time of every finished job (reads, in job order) or
    /// object (writes, server by server), µs.
    pub jct_us: Vec<f64>,
    /// Bandwidth bound of a job's completion time, µs: every object's
    /// packets through the requester's link at line rate (latency not
    /// included). For writes it bounds an object's completion while every
    /// server shares the link.
    pub ideal_jct_us: f64,
    /// Largest backlog of the requester's downlink queue, bytes.
    pub peak_queue_bytes: u64,
    /// Drops at the requester's downlink queue.
    pub receiver_queue_drops: u64,
    /// ECN marks at the requester's downlink queue.
    pub receiver_queue_marks: u64,
}

impl KvIncastSpec {
    fn validate(&self) -> Result<(), FabricError> {
        if self.senders == 0 || self.jobs == 0 {
            return Err(FabricError::InvalidTopology(
                "kv-incast needs at least one sender and one job".into(),
            ));
        }
        if self.object_bytes == 0 || self.object_bytes > u64::from(u32::MAX) {
            return Err(FabricError::InvalidParameter {
                name: "object_bytes",
                value: self.object_bytes as f64,
                reason: "an object must be 1 byte .. 4 GiB",
            });
        }
        if self.buffer_bytes == 0 {
            return Err(FabricError::InvalidParameter {
                name: "buffer_bytes",
                value: 0.0,
                reason: "switch buffers must hold at least one byte",
            });
        }
        Ok(())
    }
}

/// Runs `kv-incast` for `kind`.
pub fn run_kv_incast(
    kind: TransportKind,
    spec: &KvIncastSpec,
    seed: u64,
) -> Result<KvIncastReport, FabricError> {
    spec.validate()?;
    let params = FabricParams {
        queue_capacity_bytes: spec.buffer_bytes,
        ..FabricParams::default()
    };
    let leaves = 4;
    let topology = leaf_spine(
        seed,
        &LeafSpineSpec {
            leaves,
            spines: 4,
            hosts_per_leaf: (spec.senders + 1).div_ceil(leaves),
            host_link: params.link_spec(),
            fabric_link: params.link_spec(),
        },
    )?;
    let requester = topology.hosts[0];
    let n = spec.senders as u32;
    let flows = kv_flows(spec, &topology.hosts);
    let hops = 4;
    let window_packets = default_window_packets(&params, hops);
    let hosts = topology.hosts.len();
    let setup = RunSetup {
        kind,
        loss_probability: 0.0,
        seed,
        params,
        window_packets,
        hops,
        hosts,
    };
    let mut network = setup.build(topology.network, &flows, 1, &Tuning::default())?;
    let started = Instant::now();
    let expected = u64::from(n) * spec.jobs;
    let servers = &topology.hosts[1..=spec.senders];
    // Reads end when the requester has every object; writes when every
    // server has seen its last write complete.
    let delivered = |network: &Network| match spec.op {
        KvOp::Read => network
            .sim
            .transport_stats(requester)
            .map_or(0, |stats| stats.delivered_messages),
        KvOp::Write => servers
            .iter()
            .filter_map(|&server| network.sim.transport_stats(server))
            .map(|stats| stats.completed_messages)
            .sum(),
    };
    let slice = from_us(100);
    while network.sim.now() < spec.time_limit && delivered(&network) < expected {
        let next = (network.sim.now() + slice).min(spec.time_limit);
        network.sim.run_until(next);
    }
    let stats = total_stats(&network, hosts);
    let done = delivered(&network) >= expected;
    let end = if done && spec.op == KvOp::Read {
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
    let jct_us = match spec.op {
        KvOp::Read => job_completion_times(&network, requester, n, spec.jobs),
        KvOp::Write => write_completion_times(&network, servers),
    };
    let queue = network
        .link_stats(topology.host_downlinks[0])
        .unwrap_or_default();
    Ok(KvIncastReport {
        run,
        jct_us,
        ideal_jct_us: ideal_jct_us(spec, &params),
        peak_queue_bytes: queue.max_queued_bytes,
        receiver_queue_drops: queue.dropped,
        receiver_queue_marks: queue.marked,
    })
}

/// The flows of a run over `hosts` (`hosts[0]` is the requester, the
/// servers follow): flow `i` carries server `i`'s objects; for reads, flow
/// `n + i` carries the requests to server `i`.
fn kv_flows(spec: &KvIncastSpec, hosts: &[HostId]) -> Vec<FlowSpec> {
    let requester = hosts[0];
    let n = spec.senders as u32;
    let mut flows = Vec::with_capacity(2 * spec.senders);
    for index in 0..n {
        let server = hosts[index as usize + 1];
        // Object flow `index`, answering request flow `n + index`.
        flows.push(FlowSpec {
            message_limit: Some(spec.jobs),
            gate: (spec.op == KvOp::Read).then_some(Gate::RespondsTo(n + index)),
            ..FlowSpec::unlimited(
                index,
                server,
                requester,
                flow_port(index),
                spec.object_bytes,
            )
        });
    }
    for index in (0..n).filter(|_| spec.op == KvOp::Read) {
        let server = hosts[index as usize + 1];
        // A job's requests leave once every object of the previous job has arrived.
        flows.push(FlowSpec {
            message_limit: Some(spec.jobs),
            gate: Some(Gate::AllInbound),
            ..FlowSpec::unlimited(
                n + index,
                requester,
                server,
                flow_port(n + index),
                REQUEST_BYTES,
            )
        });
    }
    flows
}

/// The bandwidth bound of a job, µs: every server's object through the
/// requester's link at line rate.
fn ideal_jct_us(spec: &KvIncastSpec, params: &FabricParams) -> f64 {
    let object_wire = spec
        .object_bytes
        .div_ceil(u64::from(params.mtu_bytes))
        .saturating_mul(u64::from(crate::baseline::data_wire_bytes(
            params.mtu_bytes,
            false,
        )));
    let transfer = serialization_time(
        u32::try_from(object_wire.saturating_mul(spec.senders as u64)).unwrap_or(u32::MAX),
        params.link_rate_bps,
    );
    to_secs(transfer) * 1e6
}

/// Completion time of every written object, µs, server by server.
fn write_completion_times(network: &Network, servers: &[HostId]) -> Vec<f64> {
    servers
        .iter()
        .filter_map(|&server| network.sim.host(server))
        .flat_map(|host| host.transport().message_latencies().to_vec())
        .map(|latency| to_secs(latency) * 1e6)
        .collect()
}

/// Completion time of every finished job, µs: job `k` ends when the last of
/// its objects arrived and starts when job `k − 1` ended (job 0 at zero).
fn job_completion_times(network: &Network, requester: HostId, objects: u32, jobs: u64) -> Vec<f64> {
    let Some(host) = network.sim.host(requester) else {
        return Vec::new();
    };
    let times: Vec<Vec<SimTime>> = host
        .transport()
        .flow_delivery_times()
        .into_iter()
        .filter(|(qpn, _)| *qpn < objects)
        .map(|(_, times)| times)
        .collect();
    let mut jct = Vec::new();
    let mut start = 0;
    for job in 0..jobs as usize {
        let ends: Option<Vec<SimTime>> = times.iter().map(|t| t.get(job).copied()).collect();
        let Some(end) = ends.and_then(|ends| ends.into_iter().max()) else {
            break;
        };
        if times.len() != objects as usize {
            break;
        }
        jct.push(to_secs(end - start) * 1e6);
        start = end;
    }
    jct
}
