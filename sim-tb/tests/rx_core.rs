//! Receive core bench: the Verilated `RxCore` (parser, ICRC, QP/MR tables,
//! checks, placement) against the engine (`metaroce_sim_tb::core_check`),
//! at 64- and 512-bit beats. Skips without Verilator. Set `METAROCE_VCD`
//! to a path to dump the runs' waveforms there (one file, last run wins).

use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::core_check::{CoreRun, run_against_engine};

const WIDTHS: [usize; 2] = [64, 512];

fn run(width: usize, packets: usize, seed: u64, backpressure: bool) -> Option<CoreRun> {
    let vcd = std::env::var_os("METAROCE_VCD").map(std::path::PathBuf::from);
    match run_against_engine(width, packets, seed, backpressure, vcd.as_deref()) {
        Ok(r) => Some(r),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn check(width: usize, what: &str, r: &CoreRun) {
    assert_no_mismatches(
        &format!("{width}-bit {what}, {} packets", r.packets),
        &r.mismatches,
    );
    assert_eq!(
        r.writes_outside_mr, 0,
        "{width}-bit {what}: write outside the MR"
    );
}

#[test]
fn random_traffic_matches_the_engine_with_backpressure() {
    for width in WIDTHS {
        let Some(r) = run(width, 6000, 0xC0DE + width as u64, true) else {
            return;
        };
        println!(
            "{width}-bit: {} placed ({} SEND, {} WRITE_IMM, {} READ_RESP; SEND + WRITE_IMM per \
             stream {:?}), {} atomics and {} ATOMIC_RESPs handed up, {} receives posted, {} receive \
             completions found in the events, {} ACKs checked, verdicts {:?}",
            r.placed,
            r.placed_send,
            r.placed_write_imm,
            r.placed_read_resp,
            r.placed_recv_by_stream,
            r.atomics_handed_up,
            r.atomic_resps_handed_up,
            r.receives_posted,
            r.completions_checked,
            r.acks_checked,
            r.by_verdict
        );
        check(width, "random", &r);
        // The mix exercises every check the RTL makes (all verdicts but
        // the parser's version/opcode/payload ones).
        for (code, n) in r.by_verdict.iter().enumerate().take(24) {
            if ![2, 3, 4].contains(&code) {
                assert!(*n > 0, "{width}-bit: verdict {code} never seen");
            }
        }
        assert!(r.placed > r.packets / 3);
        assert!(r.placed_write_imm > 0, "{width}-bit: no WRITE_IMM placed");
        assert!(r.atomics_handed_up > 0, "{width}-bit: no atomic handed up");
        assert!(
            r.atomic_resps_handed_up > 0,
            "{width}-bit: no ATOMIC_RESP handed up"
        );
        assert!(
            r.completions_checked > 0,
            "{width}-bit: no receive completion"
        );
        assert!(
            r.placed_recv_by_stream.iter().all(|&n| n > 0),
            "{width}-bit: a stream with a ring never received"
        );
        assert!(r.acks_checked > r.packets / 4);
    }
}

#[test]
fn line_rate_traffic_has_no_bubbles() {
    for width in WIDTHS {
        let Some(r) = run(width, 3000, 0xBEEF + width as u64, false) else {
            return;
        };
        check(width, "line rate", &r);
        println!(
            "{width}-bit line rate: {} packets, {} ACKs checked, {} cycles, {} bubbles",
            r.packets, r.acks_checked, r.cycles, r.bubbles
        );
        assert_eq!(r.bubbles, 0, "{width}-bit: input refused at line rate");
    }
}

/// The full run of `docs/hardware.md` §8: 100,000 datagrams per width,
/// back to back (`cargo test -p metaroce-sim-tb --test rx_core -- --ignored`).
#[test]
#[ignore = "long: 100,000 datagrams per width"]
fn hundred_thousand_datagrams_per_width() {
    for width in WIDTHS {
        let Some(r) = run(width, 100_000, 0x5EED + width as u64, false) else {
            return;
        };
        println!(
            "{width}-bit: {} packets ({} placed: {} SEND, {} WRITE_IMM, {} READ_RESP; SEND + \
             WRITE_IMM per stream {:?}; {} atomics and {} ATOMIC_RESPs handed up; {} CE-marked), \
             {} receives posted, {} receive completions found in the events, {} ACKs checked, {} \
             mismatches, {} writes outside the MR, {} cycles, {} bubbles, {:.1} s, verdicts {:?}",
            r.packets,
            r.placed,
            r.placed_send,
            r.placed_write_imm,
            r.placed_read_resp,
            r.placed_recv_by_stream,
            r.atomics_handed_up,
            r.atomic_resps_handed_up,
            r.ce_marked,
            r.receives_posted,
            r.completions_checked,
            r.acks_checked,
            r.mismatches.len(),
            r.writes_outside_mr,
            r.cycles,
            r.bubbles,
            r.sim_secs,
            &r.by_verdict[..24]
        );
        check(width, "100k", &r);
        assert_eq!(r.bubbles, 0, "{width}-bit: input refused at line rate");
    }
}
