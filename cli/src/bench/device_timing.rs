//! The `device_timing` row of `metaroce bench --backend device`: where the device
//! backend's wall time went during the measured traffic.

use metaroce_driver::hw::timing::DeviceTiming;
use serde::Serialize;

/// Clock of the 64-bit model taken for its simulated rate: a 10 Gbit/s MAC's 156.25 MHz
/// (6.4 ns per cycle).
const MODEL_CYCLE_NS: f64 = 6.4;

/// Where a device backend's wall time went during the measured traffic
/// (`docs/driver.md`, "Where the time goes"). Shares are of the run's wall time; the
/// driver's thread is busy, waiting or idle; the model's thread runs the whole time.
#[derive(Serialize, Debug, Clone)]
pub struct DeviceTimingRow {
    /// Wall time of the traffic, s.
    pub wall_s: f64,
    /// Packets through the device: data packets and PROBEs posted, verdict events and
    /// firmware datagrams taken.
    pub packets: u64,
    /// Wall time per packet, µs.
    pub wall_us_per_packet: f64,
    /// Goodput if the model's cycles took 6.4 ns each (a 156.25 MHz, 10 Gbit/s MAC
    /// clock at 64 bits), Gbit/s.
    pub sim_goodput_gbps: f64,
    /// Model clock cycles per second of wall time.
    pub model_cycles_per_s: f64,
    /// Model cycles per packet.
    pub model_cycles_per_packet: f64,
    /// Share of the model's cycles in which a port moved something.
    pub model_busy_share: f64,
    /// Model evaluation time per packet, µs.
    pub model_eval_us_per_packet: f64,
    /// Share of the wall time the model thread spent evaluating the model.
    pub model_eval_share: f64,
    /// Engine time per packet (on the host CPU), µs.
    pub engine_us_per_packet: f64,
    /// Share of the wall time in the engine.
    pub engine_share: f64,
    /// Time in device accesses per packet (vfio-user messages and bounce copies), µs.
    pub transport_us_per_packet: f64,
    /// Share of the wall time in device accesses.
    pub transport_share: f64,
    /// Of which in bounce copies (`sync_for_device`, `sync_for_cpu`).
    pub copy_share: f64,
    /// Share of the wall time the driver worked outside the engine and the device
    /// calls (tables, rings, bookkeeping).
    pub driver_other_share: f64,
    /// Share of the wall time the driver waited for TX table results.
    pub wait_share: f64,
    /// Share of the wall time the driver slept with nothing to do.
    pub idle_share: f64,
    /// Share of the wall time the device process's socket thread spent on BAR
    /// accesses.
    pub socket_share: f64,
    /// BAR0 reads per packet.
    pub bar_reads_per_packet: f64,
    /// BAR0 writes per packet.
    pub bar_writes_per_packet: f64,
    /// Bounce-copied bytes per packet.
    pub copy_bytes_per_packet: f64,
    /// TX table operations posted.
    pub table_ops: u64,
    /// The raw counters of the run (ns, counts).
    pub raw: serde_json::Value,
}

impl DeviceTimingRow {
    /// The row for `t` (a run's difference of two snapshots) that moved `bytes` of
    /// messages.
    pub fn new(t: &DeviceTiming, bytes: u64) -> Self {
        let d = &t.driver;
        let c = &t.device;
        let packets = d.descriptors + d.rx_events;
        let per = |x: u64| x as f64 / packets.max(1) as f64;
        let us_per = |ns: u64| per(ns) / 1e3;
        let wall = t.wall_ns.max(1) as f64;
        let share = |ns: u64| ns as f64 / wall;
        let device_ns = c.total_ns();
        DeviceTimingRow {
            wall_s: wall / 1e9,
            packets,
            wall_us_per_packet: us_per(t.wall_ns),
            sim_goodput_gbps: bytes as f64 * 8.0 / (t.model_cycles.max(1) as f64 * MODEL_CYCLE_NS),
            model_cycles_per_s: t.model_cycles as f64 / (wall / 1e9),
            model_cycles_per_packet: per(t.model_cycles),
            model_busy_share: t.model_busy_cycles as f64 / t.model_cycles.max(1) as f64,
            model_eval_us_per_packet: us_per(t.model_eval_ns),
            model_eval_share: share(t.model_eval_ns),
            engine_us_per_packet: us_per(d.engine_ns),
            engine_share: share(d.engine_ns),
            transport_us_per_packet: us_per(device_ns),
            transport_share: share(device_ns),
            copy_share: share(c.sync_ns),
            driver_other_share: share(d.busy_ns.saturating_sub(d.engine_ns + device_ns)),
            wait_share: share(d.wait_ns),
            idle_share: share(d.idle_ns),
            socket_share: share(t.socket_ns),
            bar_reads_per_packet: per(c.bar_reads),
            bar_writes_per_packet: per(c.bar_writes),
            copy_bytes_per_packet: per(c.sync_bytes),
            table_ops: d.table_ops,
            raw: serde_json::json!({
                "wall_ns": t.wall_ns,
                "engine_ns": d.engine_ns,
                "busy_ns": d.busy_ns,
                "wait_ns": d.wait_ns,
                "idle_ns": d.idle_ns,
                "rounds": d.rounds,
                "descriptors": d.descriptors,
                "rx_events": d.rx_events,
                "bar_reads": c.bar_reads,
                "bar_read_ns": c.bar_read_ns,
                "bar_writes": c.bar_writes,
                "bar_write_ns": c.bar_write_ns,
                "syncs": c.syncs,
                "sync_bytes": c.sync_bytes,
                "sync_ns": c.sync_ns,
                "other_device_ns": c.other_ns,
                "model_cycles": t.model_cycles,
                "model_busy_cycles": t.model_busy_cycles,
                "model_eval_ns": t.model_eval_ns,
                "socket_ns": t.socket_ns,
            }),
        }
    }
}
