//! Simulator speed check: runs the default MetaRoCE `allreduce` (64 hosts,
//! 2 planes, 16 MiB, loss 0 and 1 %) and `incast` (16 senders, 3 ms) and
//! prints, per run, the events, CPU seconds, events per CPU second and the
//! trace digest (which must not change when the simulator is only made
//! faster). Linux only (CPU time from `/proc/thread-self/schedstat`).
//!
//! `cargo run --release -p metaroce-fabric --example speed [repeats]`

use metaroce_fabric::scenario::{
    AllreduceSpec, MetaRoceOptions, TransportKind, run_allreduce, run_incast,
};
use metaroce_fabric::time::from_ms;

/// CPU time this thread has run, seconds.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

fn main() {
    let repeats: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    for _ in 0..repeats {
        for loss in [0.0, 0.01] {
            let spec = AllreduceSpec {
                hosts: 64,
                planes: 2,
                hosts_per_leaf: 8,
                spines: 8,
                data_bytes: 16 << 20,
                loss_probability: loss,
                time_limit: from_ms(300),
            };
            let cpu = cpu_seconds();
            let r = run_allreduce(TransportKind::MetaRoce, &spec, 1).expect("allreduce");
            let cpu = cpu_seconds() - cpu;
            println!(
                "allreduce loss {loss}: events {} cpu {cpu:.3} s  {:.3} M events/cpu-s  digest {:016x}  completion {:?} ms",
                r.run.network.events,
                r.run.network.events as f64 / cpu / 1e6,
                r.run.trace_digest,
                r.completion_ms
            );
        }
        let cpu = cpu_seconds();
        let r = run_incast(
            TransportKind::MetaRoce,
            &MetaRoceOptions::default(),
            16,
            1,
            from_ms(3),
        )
        .expect("incast");
        let cpu = cpu_seconds() - cpu;
        println!(
            "incast 16: events {} cpu {cpu:.3} s  {:.3} M events/cpu-s  digest {:016x}  jain {:.4}",
            r.run.network.events,
            r.run.network.events as f64 / cpu / 1e6,
            r.run.trace_digest,
            r.jain_fairness
        );
    }
}
