//! Scenario runners, each for MetaRoCE (the real engine) and the RoCEv2 and
//! IRN baselines: `loss`, `failover`, `hotlink`, `incast` and `allreduce`.

use std::time::Instant;

use metaroce_firmware::cc::CcAlgorithm;

use crate::baseline::dcqcn::DcqcnConfig;
use crate::baseline::irn::{Irn, IrnConfig};
use crate::baseline::nic::{BaselineNic, NicConfig};
use crate::baseline::roce::{Roce, RoceConfig};
use crate::baseline::{FlowSpec, Gate, ack_wire_bytes, data_wire_bytes};
use crate::error::{FabricError, check_probability};
use crate::metaroce::{MetaRoceConfig, PatternMemory, metaroce_hosts};
use crate::network::{LinkSpec, Network, NetworkBuilder};
use crate::packet::HostId;
use crate::queue::{EcnMarking, QueueConfig};
use crate::sim::SimCounters;
use crate::time::{PS_PER_S, SimTime, from_ns, from_us, to_secs};
use crate::topology::{LeafSpineSpec, leaf_spine, multi_plane, parallel_paths};
use crate::transport::{Transport, TransportStats};

pub mod kv_incast;
pub mod scale;
pub mod scale_across;

pub use kv_incast::{KvIncastReport, KvIncastSpec, KvOp, run_kv_incast};
pub use scale::{ScaleReport, ScaleSpec, run_scale};
pub use scale_across::{ScaleAcrossReport, ScaleAcrossSpec, run_scale_across};

/// Which transport a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// The MetaRoCE engine (`metaroce-firmware`), spraying over many paths.
    MetaRoce,
    /// RoCEv2: go-back-N + DCQCN, one path per QP.
    RoceV2,
    /// IRN: selective repeat + BDP cap + DCQCN, one path per QP.
    Irn,
}

impl TransportKind {
    /// All transports, in report order.
    pub const ALL: [TransportKind; 3] = [
        TransportKind::MetaRoce,
        TransportKind::RoceV2,
        TransportKind::Irn,
    ];

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::MetaRoce => "metaroce",
            TransportKind::RoceV2 => "rocev2",
            TransportKind::Irn => "irn",
        }
    }
}

/// Fabric and workload shared by the scenarios.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FabricParams {
    /// Every host link's rate, bit/s.
    pub link_rate_bps: u64,
    /// Propagation delay of every link.
    pub link_delay: SimTime,
    /// Payload bytes per packet.
    pub mtu_bytes: u32,
    /// RDMA WRITE size.
    pub message_bytes: u64,
    /// Switch egress buffer per port.
    pub queue_capacity_bytes: u64,
    /// Use DCQCN (CNPs from RED marking) in the baselines.
    pub dcqcn: bool,
    /// Paths (entropy values) per MetaRoCE connection.
    pub metaroce_paths: u16,
}

impl Default for FabricParams {
    /// 100 Gbit/s links, 1.5 µs per link (about 10 µs base RTT over three
    /// hops), 4 KiB MTU, 1 MiB WRITEs, 1 MB buffers, DCQCN on, 64 MetaRoCE
    /// paths (entropy values; MRC uses 128–256 over 8 planes).
    fn default() -> Self {
        Self {
            link_rate_bps: 100_000_000_000,
            link_delay: from_ns(1_500),
            mtu_bytes: 4096,
            message_bytes: 1 << 20,
            queue_capacity_bytes: 1_000_000,
            dcqcn: true,
            metaroce_paths: 64,
        }
    }
}

impl FabricParams {
    fn link_spec_at(&self, rate_bps: u64) -> LinkSpec {
        LinkSpec {
            rate_bps,
            delay: self.link_delay,
            queue: QueueConfig {
                capacity_bytes: self.queue_capacity_bytes,
                ecn: EcnMarking::dcqcn(),
            },
        }
    }

    fn link_spec(&self) -> LinkSpec {
        self.link_spec_at(self.link_rate_bps)
    }

    /// Base RTT over `hops` links each way: propagation, one full data
    /// packet and one ACK serialised per hop.
    pub fn base_rtt(&self, hops: u32) -> SimTime {
        let data = crate::link::serialization_time(
            data_wire_bytes(self.mtu_bytes, false),
            self.link_rate_bps,
        );
        let ack = crate::link::serialization_time(ack_wire_bytes(), self.link_rate_bps);
        u64::from(hops) * (2 * self.link_delay + data + ack)
    }

    /// Bandwidth-delay product over `hops` links, in full packets (rounded up).
    pub fn bdp_packets(&self, hops: u32) -> u32 {
        let bits = u128::from(self.base_rtt(hops)) * u128::from(self.link_rate_bps);
        let packet_bits =
            u128::from(data_wire_bytes(self.mtu_bytes, false)) * 8 * u128::from(PS_PER_S);
        bits.div_ceil(packet_bits.max(1)) as u32
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), FabricError> {
        if self.link_rate_bps == 0 || self.mtu_bytes == 0 || self.message_bytes == 0 {
            return Err(FabricError::InvalidTopology(
                "link rate, MTU and message size must be positive".into(),
            ));
        }
        if !(256..=9000).contains(&self.mtu_bytes) {
            return Err(FabricError::InvalidParameter {
                name: "mtu",
                value: f64::from(self.mtu_bytes),
                reason: "the MTU must be 256..=9000 bytes",
            });
        }
        if self.message_bytes > u64::from(u32::MAX) {
            return Err(FabricError::InvalidParameter {
                name: "message_bytes",
                value: self.message_bytes as f64,
                reason: "a message must fit in 32 bits",
            });
        }
        Ok(())
    }
}

/// ACK coalescing of both baselines (packets per ACK).
const ACK_EVERY_PACKETS: u32 = 4;

/// The window both baselines use on a path of `hops` links: the BDP in
/// packets plus the ACK coalescing batch, so one flow can fill the link.
pub fn default_window_packets(params: &FabricParams, hops: u32) -> u32 {
    params.bdp_packets(hops) + ACK_EVERY_PACKETS
}

/// Transport settings a scenario sets instead of the defaults (long round
/// trips need larger windows and timeouts).
#[derive(Clone, Debug, Default)]
struct Tuning {
    /// MetaRoCE engine settings (instead of [`MetaRoceConfig::new`]).
    metaroce: Option<MetaRoceConfig>,
    /// MetaRoCE settings the caller chose (over the engine settings).
    options: Option<MetaRoceOptions>,
    /// RoCEv2 retransmission timeout and its doubling cap.
    roce_rto: Option<(SimTime, SimTime)>,
    /// IRN's RTO_low and RTO_high.
    irn_rto: Option<(SimTime, SimTime)>,
}

impl Tuning {
    /// The defaults with the caller's MetaRoCE `options`.
    fn with_options(options: &MetaRoceOptions) -> Self {
        Tuning {
            options: Some(options.clone()),
            ..Tuning::default()
        }
    }
}

/// MetaRoCE settings a scenario takes from its caller (the rest are the
/// scenario's own); the baselines ignore them.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaRoceOptions {
    /// Per-path congestion controller.
    pub cc: CcAlgorithm,
    /// Senders pace to the receiver's fair-share rate hint (on by default;
    /// off, only the congestion controllers and windows limit them).
    pub honor_rate_hint: bool,
}

impl Default for MetaRoceOptions {
    /// The engine's defaults: ECN AIMD, rate hint honoured.
    fn default() -> Self {
        MetaRoceOptions {
            cc: CcAlgorithm::default(),
            honor_rate_hint: metaroce_firmware::QpConfig::default().honor_rate_hint,
        }
    }
}

/// The transports of `host_count` hosts running `setup`'s transport
/// (`ports` NIC ports each) for `flows`.
fn make_transports(
    setup: &RunSetup,
    host_count: usize,
    flows: &[FlowSpec],
    ports: u32,
    tuning: &Tuning,
) -> Result<Vec<Box<dyn Transport>>, FabricError> {
    let RunSetup {
        kind,
        seed,
        ref params,
        window_packets,
        ..
    } = *setup;
    let nic = NicConfig {
        mtu_bytes: params.mtu_bytes,
        line_rate_bps: params.link_rate_bps,
        dcqcn: params
            .dcqcn
            .then(|| DcqcnConfig::paper(params.link_rate_bps)),
    };
    if kind == TransportKind::MetaRoce {
        // The engine's NIC rate (its receiver's fair-share hint) is the sum
        // of its ports: a MetaRoCE connection sprays over every plane.
        let mut config = tuning.metaroce.clone().unwrap_or_else(|| {
            MetaRoceConfig::new(
                params.metaroce_paths,
                params.mtu_bytes,
                params.link_rate_bps * u64::from(ports.max(1)),
            )
        });
        if let Some(options) = &tuning.options {
            config.cc = options.cc.clone();
            config.honor_rate_hint = options.honor_rate_hint;
        }
        let hosts = metaroce_hosts(host_count, flows, &config, seed, |_| {
            PatternMemory::default()
        })?;
        return Ok(hosts
            .into_iter()
            .map(|host| -> Box<dyn Transport> { Box::new(host) })
            .collect());
    }
    Ok((0..host_count)
        .map(|host| -> Box<dyn Transport> {
            let host = HostId(host as u32);
            if kind == TransportKind::RoceV2 {
                let mut config = RoceConfig::connectx(window_packets);
                config.ack_every_packets = ACK_EVERY_PACKETS;
                if let Some((rto, rto_max)) = tuning.roce_rto {
                    config.rto = rto;
                    config.rto_max = rto_max;
                }
                Box::new(BaselineNic::new(host, Roce { config }, nic, flows))
            } else {
                let mut config = IrnConfig::paper(window_packets);
                config.ack_every_packets = ACK_EVERY_PACKETS;
                if let Some((rto_low, rto_high)) = tuning.irn_rto {
                    config.rto_low = rto_low;
                    config.rto_high = rto_high;
                }
                Box::new(BaselineNic::new(host, Irn { config }, nic, flows))
            }
        })
        .collect())
}

/// Baseline UDP source port of flow `index`, choosing plane `index % planes`
/// on a multi-plane fabric (the NIC port is `src_port % planes`).
fn flow_port(index: u32) -> u16 {
    49152 + ((index * 7) % 16384) as u16
}

fn flows_between(
    src: HostId,
    dst: HostId,
    count: usize,
    first_qpn: u32,
    params: &FabricParams,
) -> Vec<FlowSpec> {
    (0..count)
        .map(|index| {
            let qpn = first_qpn + index as u32;
            FlowSpec::unlimited(qpn, src, dst, flow_port(qpn), params.message_bytes)
        })
        .collect()
}

/// Result of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// Transport name.
    pub transport: &'static str,
    /// Random loss probability per packet.
    pub loss_probability: f64,
    /// RNG seed.
    pub seed: u64,
    /// Simulated duration, seconds.
    pub simulated_seconds: f64,
    /// Application goodput: bytes of completed messages / duration, Gbit/s.
    pub goodput_gbps: f64,
    /// Line rate of the sender, Gbit/s.
    pub line_rate_gbps: f64,
    /// Baseline window W in packets (RoCEv2 outstanding window, IRN BDP cap).
    pub window_packets: u32,
    /// Base RTT, microseconds.
    pub base_rtt_us: f64,
    /// Analytic go-back-N goodput fraction 1/(1+pW) for this run's p and W.
    pub analytic_gbn_fraction: f64,
    /// Transport counters summed over all hosts.
    pub stats: TransportStats,
    /// Network counters.
    pub network: SimCounters,
    /// Wall-clock seconds the run took.
    pub wall_seconds: f64,
    /// Simulated events per wall-clock second.
    pub events_per_second: f64,
    /// Digest of the event trace (equal for equal inputs and seed).
    pub trace_digest: u64,
    /// Packet pool high-water mark (packets ever alive at once).
    pub peak_packets: usize,
}

fn total_stats(network: &Network, hosts: usize) -> TransportStats {
    let mut total = TransportStats::default();
    for host in 0..hosts {
        if let Some(stats) = network.sim.transport_stats(HostId(host as u32)) {
            total.accumulate(&stats);
        }
    }
    total
}

/// What a scenario runs: the transport and its settings, for building
/// the network ([`RunSetup::build`]) and its report.
struct RunSetup {
    kind: TransportKind,
    loss_probability: f64,
    seed: u64,
    params: FabricParams,
    window_packets: u32,
    hops: u32,
    hosts: usize,
}

impl RunSetup {
    /// Builds the network `builder` describes with this setup's transport
    /// on every host (`ports` NIC ports each), `tuning` for settings other
    /// than the defaults.
    fn build(
        &self,
        builder: NetworkBuilder,
        flows: &[FlowSpec],
        ports: u32,
        tuning: &Tuning,
    ) -> Result<Network, FabricError> {
        let hosts = builder.host_count();
        builder.build(make_transports(self, hosts, flows, ports, tuning)?)
    }
}

/// A periodic probe of a running network: (period, callback).
type Sampler<'a> = (SimTime, &'a mut dyn FnMut(&Network));

/// Runs `network` until `duration` (calling `sample` at every multiple of
/// `sample_every` on the way, if given) and measures it.
fn run_and_report(
    setup: &RunSetup,
    network: &mut Network,
    duration: SimTime,
    mut sample: Option<Sampler<'_>>,
) -> RunReport {
    let started = Instant::now();
    match sample.as_mut() {
        Some((every, callback)) => {
            let every = (*every).max(1);
            let mut next = network.sim.now() - network.sim.now() % every + every;
            while next <= duration {
                network.sim.run_until(next);
                callback(network);
                next += every;
            }
            network.sim.run_until(duration);
        }
        None => network.sim.run_until(duration),
    }
    report(setup, network, duration, started.elapsed().as_secs_f64())
}

fn report(setup: &RunSetup, network: &Network, duration: SimTime, wall_seconds: f64) -> RunReport {
    let stats = total_stats(network, setup.hosts);
    let counters = network.sim.counters();
    let seconds = to_secs(duration).max(f64::MIN_POSITIVE);
    RunReport {
        transport: setup.kind.name(),
        loss_probability: setup.loss_probability,
        seed: setup.seed,
        simulated_seconds: to_secs(duration),
        goodput_gbps: stats.completed_bytes as f64 * 8.0 / seconds / 1e9,
        line_rate_gbps: setup.params.link_rate_bps as f64 / 1e9,
        window_packets: setup.window_packets,
        base_rtt_us: setup.params.base_rtt(setup.hops) as f64 / 1e6,
        analytic_gbn_fraction: 1.0
            / (1.0 + setup.loss_probability * f64::from(setup.window_packets)),
        stats,
        network: counters,
        wall_seconds,
        events_per_second: counters.events as f64 / wall_seconds.max(1e-9),
        trace_digest: network.sim.trace_digest(),
        peak_packets: network.sim.packet_pool_capacity(),
    }
}

/// Hops each way between the two hosts of the parallel-path topology.
const PARALLEL_PATH_HOPS: u32 = 3;

/// The `loss` scenario with default fabric parameters: two hosts, 8
/// equal-cost paths, 100 Gbit/s, ~10 µs base RTT, 4 KiB MTU, back-to-back
/// 1 MiB WRITEs on one connection, every packet (data and ACK) dropped with
/// `loss_probability`.
pub fn run_loss(
    kind: TransportKind,
    loss_probability: f64,
    seed: u64,
    duration: SimTime,
) -> Result<RunReport, FabricError> {
    run_loss_with(
        kind,
        loss_probability,
        seed,
        duration,
        &FabricParams::default(),
    )
}

/// [`run_loss`] with explicit fabric parameters.
pub fn run_loss_with(
    kind: TransportKind,
    loss_probability: f64,
    seed: u64,
    duration: SimTime,
    params: &FabricParams,
) -> Result<RunReport, FabricError> {
    check_probability("loss probability", loss_probability)?;
    params.validate()?;
    let topology = parallel_paths(seed, 8, params.link_spec(), params.link_spec())?;
    let mut builder = topology.network;
    builder.set_host_ingress_loss(loss_probability)?;
    let flows = flows_between(topology.sender, topology.receiver, 1, 0, params);
    let window_packets = default_window_packets(params, PARALLEL_PATH_HOPS);
    let setup = RunSetup {
        kind,
        loss_probability,
        seed,
        params: *params,
        window_packets,
        hops: PARALLEL_PATH_HOPS,
        hosts: 2,
    };
    let mut network = setup.build(builder, &flows, 1, &Tuning::default())?;
    Ok(run_and_report(&setup, &mut network, duration, None))
}

/// A goodput time series: bytes per bin of `bin` simulated time.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Bin width.
    pub bin: SimTime,
    /// Time of the first bin's start.
    pub start: SimTime,
    /// Gbit/s in each bin, per series member (e.g. per sender).
    pub gbps: Vec<Vec<f64>>,
}

impl Series {
    /// Mean of member `member` over bins `from..to`.
    fn mean(&self, member: usize, from: usize, to: usize) -> f64 {
        let bins = &self.gbps[member][from..to];
        bins.iter().sum::<f64>() / bins.len().max(1) as f64
    }

    /// Sum over members of the mean over bins `from..to`.
    fn total_mean(&self, from: usize, to: usize) -> f64 {
        (0..self.gbps.len())
            .map(|member| self.mean(member, from, to))
            .sum()
    }

    fn bins(&self) -> usize {
        self.gbps.first().map_or(0, Vec::len)
    }
}

/// Records per-bin goodput of `members` from cumulative acknowledged data
/// packets of the given hosts.
struct Recorder {
    hosts: Vec<HostId>,
    last: Vec<u64>,
    series: Series,
    bytes_per_packet: f64,
}

impl Recorder {
    fn new(hosts: Vec<HostId>, start: SimTime, bin: SimTime, mtu: u32) -> Self {
        Self {
            last: vec![0; hosts.len()],
            series: Series {
                bin,
                start,
                gbps: vec![Vec::new(); hosts.len()],
            },
            hosts,
            bytes_per_packet: f64::from(mtu),
        }
    }

    fn sample(&mut self, network: &Network) {
        for (index, &host) in self.hosts.iter().enumerate() {
            let acked = network
                .sim
                .transport_stats(host)
                .map_or(0, |stats| stats.packets_acked);
            let delta = acked.saturating_sub(self.last[index]);
            self.last[index] = acked;
            let gbps = delta as f64 * self.bytes_per_packet * 8.0 / to_secs(self.series.bin) / 1e9;
            self.series.gbps[index].push(gbps);
        }
    }
}

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

/// Width of the bins goodput is sampled in.
pub const SAMPLE_BIN: SimTime = from_us(10);
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

/// Percentile `q` (0..=1) of `values` (sorted in place), 0 when empty.
pub fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = (q * (values.len() - 1) as f64).round() as usize;
    values[rank.min(values.len() - 1)]
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
