//! Scenario runners, each for MetaRoCE (the real engine) and the RoCEv2 and
//! IRN baselines: `loss`, `failover`, `hotlink`, `incast` and `allreduce`.

use std::time::Instant;

use metaroce_firmware::cc::CcAlgorithm;

use crate::baseline::dcqcn::DcqcnConfig;
use crate::baseline::irn::{Irn, IrnConfig};
use crate::baseline::nic::{BaselineNic, NicConfig};
use crate::baseline::roce::{Roce, RoceConfig};
use crate::baseline::{FlowSpec, ack_wire_bytes, data_wire_bytes};
use crate::error::FabricError;
use crate::metaroce::{MetaRoceConfig, PatternMemory, metaroce_hosts};
use crate::network::{LinkSpec, Network, NetworkBuilder};
use crate::packet::HostId;
use crate::queue::{EcnMarking, QueueConfig};
use crate::sim::SimCounters;
use crate::time::{PS_PER_S, SimTime, from_ns, to_secs};
use crate::transport::{Transport, TransportStats};

mod allreduce;
mod incast;
pub mod kv_incast;
mod loss;
mod path_event;
pub mod scale;
pub mod scale_across;
mod series;

pub use allreduce::{AllreduceReport, AllreduceSpec, run_allreduce};
pub use incast::{FAIR_JAIN, IncastReport, jain_fairness, run_incast};
pub use kv_incast::{KvIncastReport, KvIncastSpec, KvOp, run_kv_incast};
pub use loss::{run_loss, run_loss_with};
pub use path_event::{
    JUDGE_WINDOW, PathEvent, PhasedReport, RECOVERED_FRACTION, run_failover, run_hotlink,
    run_path_event,
};
pub use scale::{ScaleReport, ScaleSpec, run_scale};
pub use scale_across::{ScaleAcrossReport, ScaleAcrossSpec, run_scale_across};
pub use series::{SAMPLE_BIN, Series, percentile};

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
