//! The `failover` and `hotlink` scenarios: a path fails or slows mid-run;
//! goodput before and after, and the recovery time.

use std::time::Instant;

use super::series::Recorder;
use super::{
    FabricParams, MetaRoceOptions, PARALLEL_PATH_HOPS, RunReport, RunSetup, SAMPLE_BIN, Series,
    TransportKind, Tuning, default_window_packets, flows_between, percentile, run_and_report,
};
use crate::error::{FabricError, check_probability};
use crate::network::Network;
use crate::time::{SimTime, from_us, to_secs};
use crate::topology::parallel_paths;

/// Result of a run with a mid-run event (failure, hot link).
#[derive(Clone, Debug, PartialEq)]
pub struct PhasedReport {
    /// Whole-run report.
    pub run: RunReport,
    /// Goodput (acknowledged payload) before the event, Gbit/s.
    pub goodput_before_gbps: f64,
    /// Goodput (acknowledged payload) from the event to the end, Gbit/s.
    pub goodput_after_gbps: f64,
    /// Fabric capacity left after the event, Gbit/s.
    pub surviving_capacity_gbps: f64,
    /// Time from the event until the goodput, averaged over a sliding
    /// window, first reached 85 % of the surviving capacity (`None`: never).
    pub recovery_us: Option<f64>,
    /// Median message latency after the event, µs.
    pub latency_p50_us: f64,
    /// 99th-percentile message latency after the event, µs.
    pub latency_p99_us: f64,
    /// Largest message latency after the event, µs.
    pub latency_max_us: f64,
    /// Goodput per bin from the event on (sum over QPs).
    pub series: Series,
}

/// Width of the sliding window recovery and fairness are judged over.
pub const JUDGE_WINDOW: SimTime = from_us(50);

/// Fraction of the surviving capacity that counts as recovered.
pub const RECOVERED_FRACTION: f64 = 0.85;

/// Which path event a phased run applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PathEvent {
    /// Path 0 silently blackholed (routes unchanged).
    Blackhole,
    /// Path 0 loaded by constant-rate background traffic of this fraction.
    Background(f64),
}

/// Runs `qps` QPs from host 0 to host 1 over 8 parallel fabric paths of
/// `link_rate / 8` each (the fabric, not the NIC, is the bottleneck), with
/// `event` applied to forward path 0 at `event_at`; MetaRoCE runs with
/// `metaroce`.
pub fn run_path_event(
    kind: TransportKind,
    metaroce: &MetaRoceOptions,
    seed: u64,
    duration: SimTime,
    event_at: SimTime,
    qps: usize,
    event: PathEvent,
) -> Result<PhasedReport, FabricError> {
    if event_at >= duration || qps == 0 {
        return Err(FabricError::InvalidParameter {
            name: "event_at",
            value: event_at as f64,
            reason: "the event must fall inside the run and at least one QP must run",
        });
    }
    let params = FabricParams::default();
    const PATHS: u64 = 8;
    let path_rate = params.link_rate_bps / PATHS;
    let topology = parallel_paths(
        seed,
        PATHS as usize,
        params.link_spec(),
        params.link_spec_at(path_rate),
    )?;
    let mut builder = topology.network;
    let surviving_bps = match event {
        PathEvent::Blackhole => {
            builder.schedule_link_state(topology.forward_paths[0], event_at, false)?;
            params.link_rate_bps.min(path_rate * (PATHS - 1))
        }
        PathEvent::Background(fraction) => {
            builder.add_background_load(topology.forward_paths[0], fraction, 1_500, event_at)?;
            params
                .link_rate_bps
                .min(path_rate * (PATHS - 1) + (path_rate as f64 * (1.0 - fraction)) as u64)
        }
    };
    let flows = flows_between(topology.sender, topology.receiver, qps, 0, &params);
    let window_packets = default_window_packets(&params, PARALLEL_PATH_HOPS);
    let setup = RunSetup {
        kind,
        loss_probability: 0.0,
        seed,
        params,
        window_packets,
        hops: PARALLEL_PATH_HOPS,
        hosts: 2,
    };
    let mut network = setup.build(builder, &flows, 1, &Tuning::with_options(metaroce))?;
    let started = Instant::now();
    network.sim.run_until(event_at);
    let sender = topology.sender;
    let acked = |network: &Network| {
        network
            .sim
            .transport_stats(sender)
            .map_or(0, |stats| stats.packets_acked)
    };
    let acked_before = acked(&network);
    let latencies_before = network
        .sim
        .host(sender)
        .map_or(0, |host| host.transport().message_latencies().len());
    let mut recorder = Recorder::new(vec![sender], event_at, SAMPLE_BIN, params.mtu_bytes);
    recorder.last[0] = acked_before;
    let mut sample = |network: &Network| recorder.sample(network);
    let mut run = run_and_report(
        &setup,
        &mut network,
        duration,
        Some((SAMPLE_BIN, &mut sample)),
    );
    run.wall_seconds = started.elapsed().as_secs_f64();
    run.events_per_second = run.network.events as f64 / run.wall_seconds.max(1e-9);
    let series = recorder.series;
    let window_bins = (JUDGE_WINDOW / SAMPLE_BIN) as usize;
    let surviving_gbps = surviving_bps as f64 / 1e9;
    let recovery_us = (0..=series.bins().saturating_sub(window_bins))
        .find(|&first| {
            series.total_mean(first, first + window_bins) >= RECOVERED_FRACTION * surviving_gbps
        })
        .map(|first| to_secs((first + window_bins) as SimTime * SAMPLE_BIN) * 1e6);
    let mut latencies: Vec<f64> = network
        .sim
        .host(sender)
        .map(|host| {
            host.transport().message_latencies()[latencies_before..]
                .iter()
                .map(|&latency| to_secs(latency) * 1e6)
                .collect()
        })
        .unwrap_or_default();
    let mtu = f64::from(params.mtu_bytes);
    let acked_after = acked(&network) - acked_before;
    Ok(PhasedReport {
        goodput_before_gbps: acked_before as f64 * mtu * 8.0 / to_secs(event_at) / 1e9,
        goodput_after_gbps: acked_after as f64 * mtu * 8.0 / to_secs(duration - event_at) / 1e9,
        surviving_capacity_gbps: surviving_gbps,
        recovery_us,
        latency_p50_us: percentile(&mut latencies, 0.5),
        latency_p99_us: percentile(&mut latencies, 0.99),
        latency_max_us: percentile(&mut latencies, 1.0),
        series,
        run,
    })
}

/// `failover`: `qps` QPs over 8 paths; forward path 0 is blackholed at
/// `fail_at` (routes do not change). A baseline QP has one fixed path, so a
/// QP hashed onto path 0 stalls in timeouts until its retries run out.
pub fn run_failover(
    kind: TransportKind,
    seed: u64,
    duration: SimTime,
    fail_at: SimTime,
    qps: usize,
) -> Result<PhasedReport, FabricError> {
    let metaroce = MetaRoceOptions::default();
    run_path_event(
        kind,
        &metaroce,
        seed,
        duration,
        fail_at,
        qps,
        PathEvent::Blackhole,
    )
}

/// `hotlink`: `qps` QPs over 8 paths; from `hot_at`, forward path 0 carries
/// `load` (a fraction of its rate) of background traffic. MetaRoCE runs
/// with `metaroce` (the baselines run DCQCN).
pub fn run_hotlink(
    kind: TransportKind,
    metaroce: &MetaRoceOptions,
    seed: u64,
    duration: SimTime,
    hot_at: SimTime,
    qps: usize,
    load: f64,
) -> Result<PhasedReport, FabricError> {
    check_probability("background load", load)?;
    if load == 0.0 {
        return Err(FabricError::InvalidParameter {
            name: "background load",
            value: load,
            reason: "a hot link needs a positive background load",
        });
    }
    run_path_event(
        kind,
        metaroce,
        seed,
        duration,
        hot_at,
        qps,
        PathEvent::Background(load),
    )
}
