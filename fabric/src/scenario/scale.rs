//! `scale`: many connections over a multi-plane fabric. Half the hosts send
//! and half receive (senders under one leaf, receivers under the other, one
//! NIC port per plane, `hosts / 2` spines per plane, so the fabric core is
//! non-blocking and the hosts' links are the bottleneck); connection `c`
//! runs from sender `c mod S` to a receiver chosen so every sender spreads
//! its connections evenly over the receivers. Each connection sends
//! back-to-back WRITEs. Reported: goodput against the bottleneck, Jain's
//! fairness over the connections, and the engine's state per connection.

use std::time::Instant;

use super::{FabricParams, RunReport, RunSetup, Tuning, flow_port, report};
use crate::baseline::FlowSpec;
use crate::error::FabricError;
use crate::metaroce::MetaRoceConfig;
use crate::network::Network;
use crate::packet::HostId;
use crate::scenario::{TransportKind, jain_fairness};
use crate::time::{SimTime, from_us, to_secs};
use crate::topology::{LeafSpineSpec, multi_plane};

/// Shape of a `scale` run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleSpec {
    /// Connections (QP pairs).
    pub connections: usize,
    /// Independent leaf-spine planes (one NIC port each).
    pub planes: usize,
    /// Hosts, half senders and half receivers (even, at least 2).
    pub hosts: usize,
    /// Paths (entropy values) per MetaRoCE connection.
    pub paths: u16,
    /// Rate of every link, bit/s.
    pub link_rate_bps: u64,
    /// Size of every WRITE.
    pub message_bytes: u64,
    /// Simulated time.
    pub duration: SimTime,
    /// Goodput and fairness are measured from here to the end.
    pub warmup: SimTime,
}

/// Result of a `scale` run.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleReport {
    /// Whole-run report.
    pub run: RunReport,
    /// Goodput of each connection after the warm-up (acknowledged
    /// payload), Gbit/s.
    pub per_connection_gbps: Vec<f64>,
    /// Sum of the connections' goodput after the warm-up, Gbit/s.
    pub goodput_gbps: f64,
    /// Capacity of the bottleneck (the receivers' links), Gbit/s.
    pub bottleneck_gbps: f64,
    /// Jain's index over the connections' goodput after the warm-up.
    pub jain_fairness: f64,
    /// Mean over the samples of the sender state for packets in flight,
    /// bytes per connection (MetaRoCE only; 0 otherwise).
    pub inflight_state_mean_bytes: f64,
    /// Largest sender state for packets in flight one connection held at a
    /// sample, bytes (MetaRoCE only).
    pub inflight_state_max_bytes: usize,
}

impl ScaleSpec {
    fn validate(&self) -> Result<(), FabricError> {
        if self.connections == 0 || self.planes == 0 || self.hosts < 2 || self.hosts % 2 != 0 {
            return Err(FabricError::InvalidTopology(format!(
                "scale needs connections, planes and an even number of at least 2 hosts (got {} connections, {} planes, {} hosts)",
                self.connections, self.planes, self.hosts
            )));
        }
        if self.warmup >= self.duration {
            return Err(FabricError::InvalidParameter {
                name: "warmup",
                value: self.warmup as f64,
                reason: "the warm-up must end before the run does",
            });
        }
        Ok(())
    }
}

/// Interval at which in-flight state is sampled.
const STATE_SAMPLE: SimTime = from_us(100);

/// Runs `scale` for `kind`.
pub fn run_scale(
    kind: TransportKind,
    spec: &ScaleSpec,
    seed: u64,
) -> Result<ScaleReport, FabricError> {
    spec.validate()?;
    let params = FabricParams {
        link_rate_bps: spec.link_rate_bps,
        message_bytes: spec.message_bytes,
        metaroce_paths: spec.paths,
        ..FabricParams::default()
    };
    params.validate()?;
    let half = spec.hosts / 2;
    let fabric = multi_plane(
        seed,
        spec.planes,
        &LeafSpineSpec {
            leaves: 2,
            spines: half,
            hosts_per_leaf: half,
            host_link: params.link_spec(),
            fabric_link: params.link_spec(),
        },
    )?;
    let senders = &fabric.hosts[..half];
    let receivers = &fabric.hosts[half..];
    let flows = scale_flows(spec, senders, receivers, params.message_bytes);
    let hops = 4;
    let window_packets = super::default_window_packets(&params, hops);
    let config = MetaRoceConfig::new(
        params.metaroce_paths,
        params.mtu_bytes,
        params.link_rate_bps * spec.planes as u64,
    );
    let tuning = Tuning {
        metaroce: Some(config),
        ..Tuning::default()
    };
    let setup = RunSetup {
        kind,
        loss_probability: 0.0,
        seed,
        params,
        window_packets,
        hops,
        hosts: spec.hosts,
    };
    let mut network = setup.build(fabric.network, &flows, spec.planes as u32, &tuning)?;
    let started = Instant::now();
    let mut state = StateSamples::default();
    let mut next_sample = STATE_SAMPLE;
    let mut run_to = |network: &mut Network, end: SimTime| {
        while next_sample <= end {
            network.sim.run_until(next_sample);
            state.sample(network, senders, spec.connections);
            next_sample += STATE_SAMPLE;
        }
        network.sim.run_until(end);
    };
    run_to(&mut network, spec.warmup);
    let before = acked_by_flow(&network, senders, spec.connections);
    run_to(&mut network, spec.duration);
    let after = acked_by_flow(&network, senders, spec.connections);
    let run = report(
        &setup,
        &network,
        spec.duration,
        started.elapsed().as_secs_f64(),
    );
    let seconds = to_secs(spec.duration - spec.warmup);
    let per_connection_gbps: Vec<f64> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| (a - b) as f64 * f64::from(params.mtu_bytes) * 8.0 / seconds / 1e9)
        .collect();
    let goodput_gbps = per_connection_gbps.iter().sum();
    Ok(ScaleReport {
        run,
        jain_fairness: jain_fairness(&per_connection_gbps),
        goodput_gbps,
        bottleneck_gbps: (half * spec.planes) as f64 * params.link_rate_bps as f64 / 1e9,
        per_connection_gbps,
        inflight_state_mean_bytes: state.sum / state.samples.max(1) as f64,
        inflight_state_max_bytes: state.max,
    })
}

/// The flows of a run: connection `c` from sender `c mod half` to the
/// receiver `(c div half + sender) mod half`, so every sender and every
/// receiver has the same number of connections.
fn scale_flows(
    spec: &ScaleSpec,
    senders: &[HostId],
    receivers: &[HostId],
    message_bytes: u64,
) -> Vec<FlowSpec> {
    let half = senders.len();
    (0..spec.connections)
        .map(|c| {
            let sender = c % half;
            let round = c / half;
            let receiver = (round + sender) % half;
            let qpn = c as u32;
            // A baseline QP's one path: the sender's k-th connection leaves
            // on plane k mod P (the NIC port is the source port mod P), and
            // ECMP inside the plane hashes the whole port.
            let planes = spec.planes as u32;
            let base = u32::from(flow_port(qpn));
            let mut port = base - base % planes + round as u32 % planes;
            if port > u32::from(u16::MAX) {
                port -= planes;
            }
            FlowSpec::unlimited(
                qpn,
                senders[sender],
                receivers[receiver],
                port as u16,
                message_bytes,
            )
        })
        .collect()
}

/// In-flight engine state of the senders' connections, sampled through a run.
#[derive(Default)]
struct StateSamples {
    /// Sum over the samples of the mean bytes per connection.
    sum: f64,
    /// Samples taken.
    samples: u64,
    /// Largest state of one connection seen, bytes.
    max: usize,
}

impl StateSamples {
    /// Adds one sample of the `connections` connections of `senders`.
    fn sample(&mut self, network: &Network, senders: &[HostId], connections: usize) {
        let mut total = 0;
        for &host in senders {
            if let Some(host) = network.sim.host(host) {
                for bytes in host.transport().inflight_state_bytes() {
                    total += bytes;
                    self.max = self.max.max(bytes);
                }
            }
        }
        self.sum += total as f64 / connections as f64;
        self.samples += 1;
    }
}

/// Acknowledged data packets of every flow, indexed by flow QPN.
fn acked_by_flow(network: &Network, senders: &[HostId], flows: usize) -> Vec<u64> {
    let mut acked = vec![0; flows];
    for &host in senders {
        if let Some(host) = network.sim.host(host) {
            for (qpn, packets) in host.transport().flow_acked_packets() {
                if let Some(slot) = acked.get_mut(qpn as usize) {
                    *slot = packets;
                }
            }
        }
    }
    acked
}
