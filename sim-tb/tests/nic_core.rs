//! NIC top bench: the core bench's receive traffic in Ethernet frames and
//! the TX bench's engine descriptors, at the same time, through the
//! Verilated `NicCore` at 64 bits (`metaroce_sim_tb::nic_core`): verdicts,
//! DMA writes, counters, ACK frames (payload and headers) and data frames
//! against the engines, on one shared MAC TX port; with IPv4 and with IPv6
//! receive traffic (IPv4 and IPv6 ACK frames). Skips without Verilator.

use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::nic_core::{Family, NicCoreRun, run_against_engines_in};

fn run(family: Family, rx: usize, tx: usize, seed: u64, backpressure: bool) -> Option<NicCoreRun> {
    match run_against_engines_in(family, rx, tx, seed, backpressure, None) {
        Ok(r) => Some(r),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn report(what: &str, family: Family, r: &NicCoreRun) {
    println!(
        "64-bit NicCore, {what}: {} datagrams in ({} placed, {} CE-marked, {} bubbles), {} ACKs vs engine, \
         {} ACK frames ({} IPv6) + {} data frames ({} retransmissions) on the MAC TX port, {} source switches, \
         {} MAC beats in {} cycles ({:.1} % utilisation), {:.2} s ({:.2} M cycles/s), {} mismatches",
        r.rx.packets,
        r.rx.placed,
        r.rx.ce_marked,
        r.rx.bubbles,
        r.rx.acks_checked,
        r.ack_frames,
        r.ack_frames_v6,
        r.data_frames,
        r.retransmissions,
        r.switches,
        r.mac_beats,
        r.cycles,
        100.0 * r.mac_beats as f64 / r.cycles as f64,
        r.sim_secs,
        r.cycles as f64 / r.sim_secs / 1e6,
        r.mismatches().len()
    );
    for m in r.mismatches().iter().take(10) {
        eprintln!("  {m}");
    }
    assert!(
        r.mismatches().is_empty(),
        "{what}: {} mismatches",
        r.mismatches().len()
    );
    assert_eq!(r.rx.writes_outside_mr, 0, "{what}: write outside the MR");
    assert_eq!(r.ack_frames, r.rx.acks_checked, "{what}: ACK frames");
    assert!(
        r.switches > 0,
        "{what}: ACK and data frames never alternated"
    );
    let v6 = if family == Family::Ipv6 {
        r.ack_frames
    } else {
        0
    };
    assert_eq!(r.ack_frames_v6, v6, "{what}: IPv6 ACK frames");
}

#[test]
fn receive_and_transmit_at_line_rate_match_the_engines() {
    let Some(r) = run(Family::Ipv4, 10_000, 3_000, 0xC0E0, false) else {
        return;
    };
    report("line rate", Family::Ipv4, &r);
    assert_eq!(r.rx.bubbles, 0, "MAC RX input refused at line rate");
}

#[test]
fn receive_and_transmit_with_backpressure_match_the_engines() {
    let Some(r) = run(Family::Ipv4, 3_000, 1_000, 0xC0E1, true) else {
        return;
    };
    report("backpressure", Family::Ipv4, &r);
}

#[test]
fn ipv6_acks_at_line_rate_match_the_engines() {
    let Some(r) = run(Family::Ipv6, 10_000, 3_000, 0xC0E6, false) else {
        return;
    };
    report("IPv6 line rate", Family::Ipv6, &r);
    assert!(r.ack_frames > 0, "no IPv6 ACK frames");
    assert_eq!(r.rx.bubbles, 0, "MAC RX input refused at line rate");
}

#[test]
fn ipv6_acks_with_backpressure_match_the_engines() {
    let Some(r) = run(Family::Ipv6, 3_000, 1_000, 0xC0E7, true) else {
        return;
    };
    report("IPv6 backpressure", Family::Ipv6, &r);
    assert!(r.ack_frames > 0, "no IPv6 ACK frames");
}

#[test]
fn the_tx_table_inside_the_top_matches_the_engine() {
    use metaroce_sim_tb::Model;
    use metaroce_sim_tb::tx_path::{TxPathTb, run_against_engine};
    let mut tb = match TxPathTb::on(Model::NicCore64) {
        Ok(tb) => tb,
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let run = run_against_engine(&mut tb, 20_000, 0x7A82);
    println!(
        "TX table in NicCore: {} ops, {} cycles, {} reads, {} mismatches",
        run.ops,
        run.cycles,
        run.reads,
        run.mismatches.len()
    );
    assert_no_mismatches("NIC core", &run.mismatches);
}
