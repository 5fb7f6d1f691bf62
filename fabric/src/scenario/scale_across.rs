//! `scale-across`: two sites joined by long links. Connections of
//! back-to-back 1 MiB WRITEs from a host at site A to a host at site B over
//! `long_links` parallel inter-site links (each at the host rate, so the NIC
//! is the bottleneck), a base round trip of milliseconds, and random loss on
//! every packet. Every transport's window and timeouts are sized for the
//! path's bandwidth-delay product (BDP), as a long-haul deployment would set
//! them.

use metaroce_firmware::cc::{CcAlgorithm, EcnAimdParams};

use super::{FabricParams, RunReport, RunSetup, Tuning, flows_between, run_and_report};
use crate::baseline::roce::RoceConfig;
use crate::baseline::{ack_wire_bytes, data_wire_bytes};
use crate::error::{FabricError, check_probability};
use crate::link::serialization_time;
use crate::metaroce::MetaRoceConfig;
use crate::network::LinkSpec;
use crate::scenario::TransportKind;
use crate::time::{PS_PER_S, SimTime, from_us, to_ns};
use crate::topology::parallel_paths;

/// Shape of a `scale-across` run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleAcrossSpec {
    /// Base round trip between the two hosts (propagation; serialisation
    /// adds a few µs).
    pub rtt: SimTime,
    /// Random loss on every packet, data and ACK alike.
    pub loss_probability: f64,
    /// Host and inter-site link rate, bit/s.
    pub link_rate_bps: u64,
    /// Parallel inter-site links.
    pub long_links: usize,
    /// Connections (QPs) between the two hosts, sharing the NIC.
    pub connections: usize,
    /// Simulated time.
    pub duration: SimTime,
}

/// Hops each way: host → site A switch → long link → site B switch → host.
const HOPS: u32 = 3;

/// Windows are this many BDPs: the receiver's window must also span the
/// packets sent while a hole waits one round trip to be found and another
/// to be refilled (more when the retransmission is lost too).
const WINDOW_OVER_BDP: u64 = 4;

/// Result of a `scale-across` run.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleAcrossReport {
    /// Whole-run report (goodput: completed messages over the duration).
    pub run: RunReport,
    /// Base round trip including serialisation, µs.
    pub base_rtt_us: f64,
    /// Bandwidth-delay product, bytes.
    pub bdp_bytes: u64,
    /// Bandwidth-delay product in full data packets (the baselines' window
    /// is this plus the ACK batch).
    pub bdp_packets: u32,
    /// Most bytes MetaRoCE may keep in flight with this configuration:
    /// paths × 256 packets (the per-path PSN rule) × MTU, capped by the
    /// connection window.
    pub metaroce_inflight_cap_bytes: u64,
}

impl ScaleAcrossSpec {
    fn validate(&self, params: &FabricParams) -> Result<(), FabricError> {
        check_probability("loss probability", self.loss_probability)?;
        if self.long_links == 0 || self.link_rate_bps == 0 || self.connections == 0 {
            return Err(FabricError::InvalidTopology(
                "scale-across needs at least one long link and connection and a positive rate"
                    .into(),
            ));
        }
        if self.rtt < 4 * params.link_delay || self.duration == 0 {
            return Err(FabricError::InvalidParameter {
                name: "rtt",
                value: self.rtt as f64,
                reason: "the round trip must exceed the local links' delays and the run must last",
            });
        }
        Ok(())
    }
}

/// Runs `scale-across` for `kind`.
pub fn run_scale_across(
    kind: TransportKind,
    spec: &ScaleAcrossSpec,
    seed: u64,
) -> Result<ScaleAcrossReport, FabricError> {
    let params = FabricParams {
        link_rate_bps: spec.link_rate_bps,
        ..FabricParams::default()
    };
    spec.validate(&params)?;
    let host_link = params.link_spec();
    // Two local links each way, the long link in the middle.
    let long_delay = spec.rtt / 2 - 2 * params.link_delay;
    let long_link = LinkSpec {
        delay: long_delay,
        ..host_link
    };
    let topology = parallel_paths(seed, spec.long_links, host_link, long_link)?;
    let mut builder = topology.network;
    builder.set_host_ingress_loss(spec.loss_probability)?;
    let data_bytes = data_wire_bytes(params.mtu_bytes, false);
    let per_hop = serialization_time(data_bytes, params.link_rate_bps)
        + serialization_time(ack_wire_bytes(), params.link_rate_bps);
    let base_rtt = 2 * (2 * params.link_delay + long_delay) + u64::from(HOPS) * per_hop;
    let bdp_bytes = (u128::from(base_rtt) * u128::from(params.link_rate_bps)
        / (8 * u128::from(PS_PER_S))) as u64;
    let bdp_packets = (u128::from(base_rtt) * u128::from(params.link_rate_bps))
        .div_ceil(u128::from(data_bytes) * 8 * u128::from(PS_PER_S)) as u32;
    let window_packets = bdp_packets + super::ACK_EVERY_PACKETS;

    // MetaRoCE: connection and receive windows of twice the BDP, per-path
    // windows starting at the BDP's share, enough messages posted to fill
    // them, and timeouts above the round trip.
    let mut config = MetaRoceConfig::new(
        params.metaroce_paths,
        params.mtu_bytes,
        params.link_rate_bps,
    );
    let window_bytes = (bdp_bytes * WINDOW_OVER_BDP).max(u64::from(config.conn_window_bytes));
    config.conn_window_bytes = u32::try_from(window_bytes).unwrap_or(u32::MAX);
    config.recv_window = config
        .recv_window
        .max(u32::try_from(u64::from(bdp_packets) * WINDOW_OVER_BDP).unwrap_or(u32::MAX));
    let defaults = EcnAimdParams::default();
    let per_path_share = bdp_bytes.div_ceil(u64::from(config.paths));
    config.cc = CcAlgorithm::EcnAimd(EcnAimdParams {
        initial_window: u32::try_from(per_path_share)
            .unwrap_or(u32::MAX)
            .clamp(defaults.initial_window, defaults.max_window),
        ..defaults
    });
    config.outstanding_messages = window_bytes.div_ceil(params.message_bytes) + 4;
    config.rto_initial_ns = 3 * to_ns(base_rtt);
    config.conn_timeout_ns = config.conn_timeout_ns.max(4 * to_ns(base_rtt));
    let metaroce_inflight_cap_bytes =
        (u64::from(config.paths) * u64::from(PATH_PSN_WINDOW) * u64::from(params.mtu_bytes))
            .min(u64::from(config.conn_window_bytes));

    let roce = RoceConfig::connectx(window_packets);
    let tuning = Tuning {
        metaroce: Some(config),
        // RoCEv2's timeout above two round trips; IRN's RTO_low / RTO_high
        // its paper values on top of one and two round trips.
        roce_rto: Some((
            (2 * base_rtt).max(roce.rto),
            (32 * base_rtt).max(roce.rto_max),
        )),
        irn_rto: Some((base_rtt + from_us(100), 2 * base_rtt + from_us(320))),
        ..Tuning::default()
    };
    let flows = flows_between(
        topology.sender,
        topology.receiver,
        spec.connections,
        0,
        &params,
    );
    let setup = RunSetup {
        kind,
        loss_probability: spec.loss_probability,
        seed,
        params,
        window_packets,
        hops: HOPS,
        hosts: 2,
    };
    let mut network = setup.build(builder, &flows, 1, &tuning)?;
    let mut run = run_and_report(&setup, &mut network, spec.duration, None);
    run.base_rtt_us = base_rtt as f64 / 1e6;
    Ok(ScaleAcrossReport {
        run,
        base_rtt_us: base_rtt as f64 / 1e6,
        bdp_bytes,
        bdp_packets,
        metaroce_inflight_cap_bytes,
    })
}

/// Packets a MetaRoCE path may have between its oldest unacknowledged and
/// its newest packet (the 256-bit SACK vector, `docs/spec.md`).
pub const PATH_PSN_WINDOW: u32 = 256;
