//! ACK receiver bench: received ACK datagrams update the TX table inside
//! the Verilated `NicCore` (64 bits), against the engine
//! (`metaroce_sim_tb::ack_rx`).
//!
//! Built with the opt-out `METAROCE_SKIP_VERILATOR=1` (no models), the test
//! prints why it skipped and passes; without that opt-out a build without
//! Verilator fails instead.

use metaroce_sim_tb::ack_rx::run_against_engine;
use metaroce_sim_tb::assert_no_mismatches;

#[test]
fn received_acks_update_the_table_as_the_engine() {
    let t = std::time::Instant::now();
    let run = match run_against_engine(10_000, 0xACC5) {
        Ok(run) => run,
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    println!(
        "{} rounds in {:.1} s, {} cycles: {} ACKs fed ({} stale), {} applied ({:.1} table cycles each, event to m_fate_hw {} cycles at best), {} RTT samples, \
         hostile bad-ICRC/unknown-QP/wrong-peer/unmapped-path {:?}, forged unsent/CE/old-CE {:?} ({} refused), {} peer PROBEs, \
         {} firmware ops ({} waited for the table, longest {} cycles), hardware fates acked/lost {:?}, \
         {} slot read-backs ({} fields), {} mismatches",
        run.rounds,
        t.elapsed().as_secs_f64(),
        run.cycles,
        run.acks_fed,
        run.stale,
        run.acks_applied,
        run.hw_cycles as f64 / run.acks_applied.max(1) as f64,
        run.ev_to_busy_min,
        run.rtt_samples,
        run.hostile,
        run.forged,
        run.refused,
        run.probes,
        run.fw_ops,
        run.fw_waited,
        run.fw_max_wait,
        run.hw_fates,
        run.reads,
        run.reads * 21,
        run.mismatches.len()
    );
    assert_no_mismatches("ACK receiver", &run.mismatches);
    assert!(run.acks_applied > 1000 && run.fw_waited > 100);
    assert!(run.hostile.iter().all(|&n| n > 20));
    // Every forged kind met, and the refused ones were refused (each
    // refusal is one the engine makes; the unsent and CE kinds always are).
    assert!(run.forged.iter().all(|&n| n > 20));
    assert!(run.refused >= run.forged[0] + run.forged[1]);
}
