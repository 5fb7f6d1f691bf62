//! TX frame builder bench: the Verilated `TxBuild` against the engine's
//! datagrams and `metaroce_proto` (`metaroce_sim_tb::tx_check`), at 64- and
//! 512-bit beats. Skips without Verilator. Set `METAROCE_VCD` to a path to
//! dump the engine runs' waveforms there (one file, last run wins).

use metaroce_sim_tb::tx_check::{TxRun, run_against_engine, run_line_rate, run_random};
use metaroce_sim_tb::{SimError, assert_no_mismatches};

const WIDTHS: [usize; 2] = [64, 512];
const PACKETS: usize = 10_000;

fn skip<T>(r: Result<T, SimError>) -> Option<T> {
    match r {
        Ok(r) => Some(r),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn check(width: usize, what: &str, r: &TxRun) {
    assert_no_mismatches(
        &format!("{width}-bit {what}, {} packets", r.packets),
        &r.mismatches,
    );
}

#[test]
fn engine_traffic_with_loss_matches_byte_for_byte() {
    let vcd = std::env::var_os("METAROCE_VCD").map(std::path::PathBuf::from);
    for width in WIDTHS {
        let Some(r) = skip(run_against_engine(
            width,
            PACKETS,
            0x7C0 + width as u64,
            0.05,
            true,
            vcd.as_deref(),
        )) else {
            return;
        };
        println!(
            "{width}-bit engine: {} frames compared ({:?}), {} retransmissions, {} ACK/NACK/CM skipped, \
             {} entropy writes, {} cycles, {} mismatches, {:.2} s",
            r.packets,
            r.by_opcode,
            r.retransmissions,
            r.skipped,
            r.entropy_writes,
            r.out.cycles,
            r.mismatches.len(),
            r.sim_secs
        );
        check(width, "engine", &r);
        assert!(r.packets >= PACKETS as u64);
        assert!(r.retransmissions > 0, "no retransmission in the traffic");
        for op in ["Write", "WriteImm", "Send", "SendImm", "ReadReq"] {
            assert!(
                r.by_opcode.iter().any(|(n, c)| n == op && *c > 0),
                "{width}-bit: no {op} in the traffic"
            );
        }
    }
}

#[test]
fn random_descriptors_with_entropy_rewrites_match_and_their_icrc_follows_the_port() {
    for (width, ipv6) in [(64, false), (512, false), (64, true), (512, true)] {
        let ip = if ipv6 { "IPv6" } else { "IPv4" };
        let Some(r) = skip(run_random(width, PACKETS, 0xE17 + width as u64, ipv6)) else {
            return;
        };
        println!(
            "{width}-bit {ip} random: {} frames ({:?}), {} entropy writes, ICRC ok with the new port {}, \
             fails with the old port {}, {} cycles, bubbles {} in / {} between frames, {} mismatches, {:.2} s",
            r.packets,
            r.by_opcode,
            r.entropy_writes,
            r.icrc_ok_new_port,
            r.icrc_fail_old_port,
            r.out.cycles,
            r.out.bubbles_in_frame,
            r.out.bubbles_between,
            r.mismatches.len(),
            r.sim_secs
        );
        check(width, &format!("{ip} random"), &r);
        assert_eq!(r.icrc_ok_new_port, r.packets);
        assert!(r.icrc_fail_old_port > r.packets / 2);
        assert_eq!(r.entropy_writes, r.packets);
    }
}

#[test]
fn mtu_frames_back_to_back_at_line_rate() {
    for (width, ipv6) in [(64, false), (512, false), (64, true), (512, true)] {
        let ip = if ipv6 { "IPv6" } else { "IPv4" };
        let Some(r) = skip(run_line_rate(width, 300, 0x11E + width as u64, ipv6)) else {
            return;
        };
        println!(
            "{width}-bit {ip} line rate: {} MTU frames, {} beats each, {:.3} cycles/packet, \
             bubbles {} inside / {} between frames",
            r.packets,
            r.beats_per_frame,
            r.cycles_per_packet,
            r.bubbles_in_frame,
            r.bubbles_between
        );
        assert_no_mismatches(&format!("{width}-bit line rate"), &r.mismatches);
        assert_eq!(r.bubbles_in_frame, 0, "{width}-bit: bubble inside a frame");
        assert_eq!(r.bubbles_between, 0, "{width}-bit: bubble between frames");
        assert!((r.cycles_per_packet - r.beats_per_frame as f64).abs() < 1e-9);
    }
}
