//! The `incast` scenario: many senders to one receiver through a shallow buffer; fairness and queue.

use super::series::Recorder;
use super::{
    FabricParams, JUDGE_WINDOW, MetaRoceOptions, RunReport, RunSetup, SAMPLE_BIN, TransportKind,
    Tuning, default_window_packets, flows_between, run_and_report,
};
use crate::baseline::FlowSpec;
use crate::error::FabricError;
use crate::network::Network;
use crate::packet::HostId;
use crate::time::{SimTime, to_secs};
use crate::topology::{LeafSpineSpec, leaf_spine};

/// Result of an incast run.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastReport {
    /// Whole-run report.
    pub run: RunReport,
    /// Goodput of each sender over the whole run, Gbit/s.
    pub per_sender_gbps: Vec<f64>,
    /// Jain's fairness index of the per-sender goodputs over the whole run.
    pub jain_fairness: f64,
    /// Time from the start until Jain's index over a sliding window first
    /// reached 0.95 (`None`: never).
    pub time_to_fair_us: Option<f64>,
    /// Largest backlog of the receiver's downlink queue, bytes.
    pub peak_queue_bytes: u64,
    /// Drops at the receiver's downlink queue.
    pub receiver_queue_drops: u64,
    /// ECN marks at the receiver's downlink queue.
    pub receiver_queue_marks: u64,
}

/// Jain's fairness index: (Σx)² / (n Σx²); 1 when all are equal.
pub fn jain_fairness(values: &[f64]) -> f64 {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|v| v * v).sum();
    if values.is_empty() || squares == 0.0 {
        return 0.0;
    }
    sum * sum / (values.len() as f64 * squares)
}

/// Jain index a fair-share incast must reach.
pub const FAIR_JAIN: f64 = 0.95;

/// `incast`: `senders` hosts write to one receiver across a leaf-spine
/// (4 leaves, 4 spines); the receiver's downlink is the bottleneck.
/// MetaRoCE runs with `metaroce` (the baselines run DCQCN).
pub fn run_incast(
    kind: TransportKind,
    metaroce: &MetaRoceOptions,
    senders: usize,
    seed: u64,
    duration: SimTime,
) -> Result<IncastReport, FabricError> {
    if senders == 0 {
        return Err(FabricError::InvalidTopology(
            "incast needs at least one sender".into(),
        ));
    }
    let params = FabricParams::default();
    let leaves = 4;
    let spec = LeafSpineSpec {
        leaves,
        spines: 4,
        hosts_per_leaf: (senders + 1).div_ceil(leaves),
        host_link: params.link_spec(),
        fabric_link: params.link_spec(),
    };
    let topology = leaf_spine(seed, &spec)?;
    let receiver = topology.hosts[0];
    let flows: Vec<FlowSpec> = (1..=senders)
        .flat_map(|sender| {
            flows_between(topology.hosts[sender], receiver, 1, sender as u32, &params)
        })
        .collect();
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
    let mut network = setup.build(topology.network, &flows, 1, &Tuning::with_options(metaroce))?;
    let sender_hosts: Vec<HostId> = topology.hosts[1..=senders].to_vec();
    let mut recorder = Recorder::new(sender_hosts.clone(), 0, SAMPLE_BIN, params.mtu_bytes);
    let mut sample = |network: &Network| recorder.sample(network);
    let run = run_and_report(
        &setup,
        &mut network,
        duration,
        Some((SAMPLE_BIN, &mut sample)),
    );
    let series = recorder.series;
    let window_bins = (JUDGE_WINDOW / SAMPLE_BIN) as usize;
    let time_to_fair_us = (0..=series.bins().saturating_sub(window_bins))
        .find(|&first| {
            let rates: Vec<f64> = (0..senders)
                .map(|member| series.mean(member, first, first + window_bins))
                .collect();
            jain_fairness(&rates) >= FAIR_JAIN
        })
        .map(|first| to_secs((first + window_bins) as SimTime * SAMPLE_BIN) * 1e6);
    let mtu = f64::from(params.mtu_bytes);
    let per_sender_gbps: Vec<f64> = sender_hosts
        .iter()
        .map(|&host| {
            network.sim.transport_stats(host).map_or(0.0, |stats| {
                stats.packets_acked as f64 * mtu * 8.0
                    / to_secs(duration).max(f64::MIN_POSITIVE)
                    / 1e9
            })
        })
        .collect();
    let queue = network
        .link_stats(topology.host_downlinks[0])
        .unwrap_or_default();
    Ok(IncastReport {
        jain_fairness: jain_fairness(&per_sender_gbps),
        per_sender_gbps,
        time_to_fair_us,
        peak_queue_bytes: queue.max_queued_bytes,
        receiver_queue_drops: queue.dropped,
        receiver_queue_marks: queue.marked,
        run,
    })
}
