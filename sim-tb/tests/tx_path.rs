//! TX table bench: the Verilated `tx_path_verilog(16)` against the engine's
//! `TxPath` (`metaroce_sim_tb::tx_path`).
//!
//! Built with the opt-out `METAROCE_SKIP_VERILATOR=1` (no models), every test
//! prints why it skipped and passes; without that opt-out a build without
//! Verilator fails instead.

use metaroce_firmware::SlotFate;
use metaroce_proto::Sack;
use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::tx_path::{Golden, Op, SLOTS, TxPathTb, run_against_engine};

fn table() -> Option<TxPathTb> {
    match TxPathTb::new() {
        Ok(tb) => Some(tb),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn random_operations_match_the_engine() {
    let Some(mut tb) = table() else { return };
    let t = std::time::Instant::now();
    let run = run_against_engine(&mut tb, 100_000, 0x7A81);
    let names = [
        "init", "send", "ack", "feedback", "timeout", "move", "window", "lose",
    ];
    println!(
        "{} ops in {:.1} s, {} cycles, {} reads, fates acked/lost {:?}, acks latest/stale/hostile {:?}, {} refused, {} at 256 PSNs, {} quarantines ended, RACK checks/losses {:?}, {} mismatches",
        run.ops,
        t.elapsed().as_secs_f64(),
        run.cycles,
        run.reads,
        run.fates,
        run.acks,
        run.refused,
        run.full,
        run.recovered,
        run.racks,
        run.mismatches.len()
    );
    for (k, name) in names.iter().enumerate() {
        let n = run.by_kind[k].max(1);
        println!(
            "  {name:>8}: {:>6} ops, {:.2} cycles avg, {} max",
            run.by_kind[k],
            run.cycles_by_kind[k] as f64 / n as f64,
            run.max_cycles[k]
        );
    }
    assert_no_mismatches("TX table", &run.mismatches);
    assert!(run.ops >= 100_000);
    assert!(run.by_kind.iter().all(|&n| n >= 16), "{:?}", run.by_kind);
    assert!(run.fates.iter().all(|&n| n > 1000), "{:?}", run.fates);
    assert!(run.acks.iter().all(|&n| n > 500), "{:?}", run.acks);
    assert_eq!(run.refused, 0);
    assert!(run.racks[1] > 100, "RACK checks/losses {:?}", run.racks);
    assert!(run.recovered > 100, "{} quarantines ended", run.recovered);
    assert!(
        run.full > 100,
        "the 256-PSN limit was reached {} times",
        run.full
    );
}

#[test]
fn a_sack_gap_is_a_loss_in_the_golden_model() {
    // Guards the golden model's use without Verilator: 0..6 sent, the
    // receiver has 0, 1, 3, 4 (cum 2, bits for 3 and 4).
    let mut g = Golden::new(0xC000);
    for c in 0..6 {
        let op = Op::Send {
            conn_psn: 100 + c,
            len: 1000,
            probe: false,
            retx: false,
        };
        assert_eq!(g.apply(&op, 0).psn, c);
    }
    let mut sack = Sack::new();
    sack.set(0);
    sack.set(1);
    let r = g.apply(&Op::Ack { path_cum: 2, sack }, 0);
    assert_eq!((r.pkts, r.bytes, r.fates.len()), (4, 4000, 5));
    assert_eq!(g.path().inflight_bytes(), 1000);
    assert_eq!(SLOTS, 16);
}

#[test]
fn a_full_ring_refuses_a_send_and_one_ack_resolves_it() {
    // The engine has no limit here (its ring is a VecDeque), so this is
    // checked against the documented contract: 256 transmissions, then
    // `res_ok` low and nothing changes; one ACK walks all 256.
    let Some(mut tb) = table() else { return };
    let run = |tb: &mut TxPathTb, op: &Op| tb.run(3, op).expect("operation finishes").0;
    run(&mut tb, &Op::Init { entropy: 7 });
    for c in 0..256 {
        let op = Op::Send {
            conn_psn: 1000 + c,
            len: 0,
            probe: false,
            retx: false,
        };
        let r = run(&mut tb, &op);
        assert!(r.ok && r.psn == c, "send {c}: {r:?}");
    }
    assert!(!tb.read(3, 0).can_send);
    let r = run(
        &mut tb,
        &Op::Send {
            conn_psn: 1,
            len: 10,
            probe: true,
            retx: false,
        },
    );
    assert!(!r.ok);
    let s = tb.read(3, 0);
    assert_eq!((s.next_psn, s.una, s.sent, s.inflight), (256, 0, 256, 0));
    // Received 0..=254 and not 255 (cum 255): 255 is beyond what the ACK
    // knows and stays in flight. With the fate stream always ready: a cycle
    // in the table's operation register, then the walk's 2 + 255 + 1 cycles
    // (the first while the ACK's highest PSN is computed) and the loss-EWMA
    // decay's ceil(255 / 4).
    tb.set_fate_ready_share(1.0);
    let (r, cycles) = tb
        .run(
            3,
            &Op::Ack {
                path_cum: 255,
                sack: Sack::new(),
            },
        )
        .expect("ACK finishes");
    println!("ACK resolving 255 of 256 entries: {cycles} cycles");
    assert_eq!(cycles, 1 + 2 + 255 + 1 + 64);
    assert_eq!((r.pkts, r.fates.len()), (255, 255));
    assert_eq!(r.fates[254], SlotFate::Acked { conn_psn: 1254 });
    let s = tb.read(3, 0);
    assert_eq!((s.una, s.acked, s.lost), (255, 255, 0));
    assert!(s.can_send);
}
