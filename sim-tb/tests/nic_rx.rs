//! Whole receive side bench: the core bench's traffic
//! (`metaroce_sim_tb::core_check`), every datagram wrapped into an
//! Ethernet/IPv4/UDP frame and fed through the Verilated `NicRx`
//! (`RxEth` then `RxCore`) at 64 bits, against the engine: the same
//! verdicts, DMA writes and counters as `RxCore` alone. Skips without
//! Verilator.

use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::core_check::{CoreRun, run_against_engine_via};
use metaroce_sim_tb::rx_core::Input;

fn run(packets: usize, seed: u64, backpressure: bool) -> Option<CoreRun> {
    match run_against_engine_via(Input::Ethernet, 64, packets, seed, backpressure, None) {
        Ok(r) => Some(r),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn check(what: &str, r: &CoreRun) {
    assert_no_mismatches(&format!("{what}, {} packets", r.packets), &r.mismatches);
    assert_eq!(r.writes_outside_mr, 0, "{what}: write outside the MR");
}

#[test]
fn ethernet_traffic_matches_the_engine_at_line_rate() {
    let Some(r) = run(20_000, 0xE7C0, false) else {
        return;
    };
    println!(
        "64-bit NicRx: {} datagrams in Ethernet frames, {} placed, verdicts {:?}, {} beats, {} cycles, {} bubbles, {:.2} s ({:.2} M cycles/s)",
        r.packets,
        r.placed,
        r.by_verdict,
        r.beats,
        r.cycles,
        r.bubbles,
        r.sim_secs,
        r.cycles as f64 / r.sim_secs / 1e6
    );
    check("line rate", &r);
    assert_eq!(r.bubbles, 0, "input refused at line rate");
}

#[test]
fn ethernet_traffic_matches_the_engine_with_backpressure() {
    let Some(r) = run(4000, 0xE7C1, true) else {
        return;
    };
    check("backpressure", &r);
}
