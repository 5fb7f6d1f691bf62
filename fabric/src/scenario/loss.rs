//! The `loss` scenario: goodput of one connection over parallel paths at a given random loss.

use super::{
    FabricParams, PARALLEL_PATH_HOPS, RunReport, RunSetup, TransportKind, Tuning,
    default_window_packets, flows_between, run_and_report,
};
use crate::error::{FabricError, check_probability};
use crate::time::SimTime;
use crate::topology::parallel_paths;

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
