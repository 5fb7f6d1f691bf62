//! Path tracker bench: the Verilated `rx_path_verilog(8)` against the
//! engine's ACKs (`metaroce_sim_tb::rx_path`).
//!
//! Built with the opt-out `METAROCE_SKIP_VERILATOR=1` (no models), every test
//! prints why it skipped and passes; without that opt-out a build without
//! Verilator fails instead.

use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::rx_path::{
    Arrival, ArrivalStreams, Engine, RxPathTb, code, run_against_engine,
};

fn tracker() -> Option<RxPathTb> {
    match RxPathTb::new() {
        Ok(tb) => Some(tb),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn random_arrivals_match_the_engine() {
    let Some(mut tb) = tracker() else { return };
    let run = run_against_engine(&mut tb, 20_000, 0x9A7B);
    println!(
        "{} events ({:?} new/dup/oow), kinds {:?}, {} reads, {} cycles, {} mismatches",
        run.events,
        run.by_verdict,
        run.kinds,
        run.reads,
        run.cycles,
        run.mismatches.len()
    );
    assert_no_mismatches("path tracker", &run.mismatches);
    assert_eq!(run.events, 20_000);
    assert_eq!(run.cycles, 20_001, "one event per cycle");
    assert!(
        run.by_verdict.iter().all(|&n| n > 200),
        "{:?}",
        run.by_verdict
    );
}

#[test]
fn the_engine_reference_sees_every_kind_of_arrival() {
    // Guards the generator and the golden model without Verilator.
    let mut t = ArrivalStreams::new(1);
    let mut e = Engine::new();
    let (mut oow, mut acks) = (0, 0);
    for i in 0..5000u16 {
        let (ack, o, other) = e.arrive(t.next_arrival(), 0xC000 | i);
        assert_eq!(other, 0);
        assert_eq!(ack.is_none(), o);
        oow += u32::from(o);
        acks += u32::from(ack.is_some());
    }
    assert!(t.kinds.iter().all(|&n| n > 30), "{:?}", t.kinds);
    assert!(oow > 30 && acks > 4000, "{oow} {acks}");
    // A hand-checked case: 0, 2, 2 → cum 1, bit 0 (PSN 2) set, dup counted.
    let mut e = Engine::new();
    let ev = |psn| Arrival {
        path: 3,
        psn,
        ce: psn == 2,
    };
    e.arrive(ev(0), 1);
    e.arrive(ev(2), 1);
    let s = e.arrive(ev(2), 1).0.expect("ACK");
    assert_eq!(
        (s.cum, s.sack.get(0), s.rx_count, s.ce_count),
        (1, true, 3, 2)
    );
    let _ = code::NEW;
}
