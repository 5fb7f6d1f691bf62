//! RX parser bench: the Verilated RTL at 64- and 512-bit beats against the
//! `metaroce-proto` parser and ICRC on the same bytes
//! (`metaroce_sim_tb::rx_check`).
//!
//! Built with `METAROCE_SKIP_VERILATOR=1` and no Verilator, every test prints
//! why it skipped and passes; without that opt-out the build fails instead.

use metaroce_proto::{Opcode, Packet};
use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::rx_check::{
    check_run, expected_reason, packet, random_frame, random_pseudo, run_random,
};
use metaroce_sim_tb::rx_parser::{Frame, RxParserTb, reason};
use rand::SeedableRng;
use rand::rngs::SmallRng;

const WIDTHS: [usize; 2] = [64, 512];

/// The parser at `width`, or `None` (with a message) without Verilator.
fn parser(width: usize) -> Option<RxParserTb> {
    match RxParserTb::new(width) {
        Ok(tb) => Some(tb),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn report(width: usize, what: &str, frames: usize, errors: &[String]) {
    assert_no_mismatches(&format!("{width}-bit {what}, {frames} frames"), errors);
}

fn sealed(rng: &mut SmallRng, op: Opcode, payload: usize) -> Frame {
    let pseudo = random_pseudo(rng);
    Frame {
        bytes: packet(rng, op as u8, payload, &pseudo),
        pseudo,
    }
}

#[test]
fn random_frames_match_proto_with_backpressure() {
    for width in WIDTHS {
        let Some(mut tb) = parser(width) else { return };
        let run = run_random(&mut tb, 20_000, 0x5EED_0000 + width as u64, true);
        println!(
            "{width}-bit: {} frames ({} to drop), {} beats, {} cycles",
            run.frames, run.dropped, run.beats, run.cycles
        );
        assert!(
            run.dropped > 100 && run.dropped < run.frames / 2,
            "traffic mix"
        );
        report(width, "random", run.frames as usize, &run.mismatches);
    }
}

#[test]
fn every_single_bit_flip_and_a_rewritten_port_fail_the_icrc() {
    for width in WIDTHS {
        let Some(mut tb) = parser(width) else { return };
        let mut rng = SmallRng::seed_from_u64(11);
        let good = sealed(&mut rng, Opcode::Write, 13);
        let mut frames = vec![good.clone()];
        for at in 0..good.bytes.len() {
            let mut f = good.clone();
            f.bytes[at] ^= 1 << (at % 8);
            frames.push(f);
        }
        let mut moved = good.clone();
        moved.pseudo.src_port ^= 1;
        frames.push(moved);
        let mut ip = good.clone();
        ip.pseudo.dst_ip[15] ^= 0x80;
        frames.push(ip);
        let out = tb.run(&frames, &mut || (true, true));
        report(width, "bit flips", frames.len(), &check_run(&frames, &out));
        assert_eq!(out.metas[0].reason, reason::NONE);
        // Flips in the header may fail framing first; all others are ICRC.
        let icrc = out.metas[1..]
            .iter()
            .filter(|m| m.reason == reason::BAD_ICRC)
            .count();
        assert!(icrc >= frames.len() - 1 - 2, "{icrc} ICRC drops");
        assert!(out.metas[1..].iter().all(|m| m.drop));
    }
}

#[test]
fn corner_cases_match_proto() {
    for width in WIDTHS {
        let Some(mut tb) = parser(width) else { return };
        let mut rng = SmallRng::seed_from_u64(7);
        let mut frames = Vec::new();
        for op in Opcode::ALL {
            let full = sealed(&mut rng, op, usize::from(op.has_payload()));
            // Every length around the header boundaries, and the full frame.
            for len in [
                1, 2, 3, 4, 5, 31, 32, 33, 35, 36, 37, 63, 64, 65, 67, 68, 69, 99, 100,
            ] {
                if len <= full.bytes.len() {
                    let mut f = full.clone();
                    f.bytes.truncate(len);
                    frames.push(f);
                }
            }
            frames.push(full);
            // Payloads that end (and put the trailer) on every lane position.
            for payload in 56..=72 {
                frames.push(sealed(&mut rng, op, payload));
            }
        }
        assert!(
            frames
                .iter()
                .filter(|f| expected_reason(f) == reason::NONE)
                .count()
                > 80
        );
        let out = tb.run(&frames, &mut || (true, true));
        report(width, "corner", frames.len(), &check_run(&frames, &out));
    }
}

#[test]
fn back_to_back_mtu_packets_have_no_bubbles() {
    for width in WIDTHS {
        let Some(mut tb) = parser(width) else { return };
        let mut rng = SmallRng::seed_from_u64(42);
        let frames: Vec<_> = (0..500)
            .map(|_| sealed(&mut rng, Opcode::Write, 4096))
            .collect();
        let out = tb.run(&frames, &mut || (true, true));
        let lanes = width / 8;
        let beats: u64 = frames
            .iter()
            .map(|f| f.bytes.len().div_ceil(lanes) as u64)
            .sum();
        assert_eq!(out.bubbles, 0, "{width}-bit: tready fell with tvalid high");
        assert_eq!(out.beats, beats);
        // One beat per cycle, plus the pipeline drain after the last beat.
        assert!(
            out.cycles <= beats + 4,
            "{} cycles for {beats} beats",
            out.cycles
        );
        assert!(out.metas.iter().all(|m| !m.drop));
        report(
            width,
            "back-to-back",
            frames.len(),
            &check_run(&frames, &out),
        );
    }
}

#[test]
fn back_to_back_mixed_opcodes_have_no_bubbles() {
    // Non-MSG frames at 512 bits take the realignment path, whose last beat
    // may need a flush cycle; it must overlap the next frame's first beat.
    for width in WIDTHS {
        let Some(mut tb) = parser(width) else { return };
        let run = run_random(&mut tb, 2000, 43, false);
        assert_eq!(run.bubbles, 0, "{width}-bit: tready fell with tvalid high");
        report(
            width,
            "mixed back-to-back",
            run.frames as usize,
            &run.mismatches,
        );
    }
}

#[test]
fn stalled_consumer_stalls_the_input() {
    for width in WIDTHS {
        let Some(mut tb) = parser(width) else { return };
        let mut rng = SmallRng::seed_from_u64(44);
        let frames = vec![sealed(&mut rng, Opcode::Send, 1000)];
        let mut cycle = 0u32;
        // Consumer ready only every fourth cycle: the parser must hold beats,
        // not lose them, and push back on the input.
        let out = tb.run(&frames, &mut || {
            cycle += 1;
            (true, cycle % 4 == 0)
        });
        assert!(out.bubbles > 0, "{width}-bit: input never stalled");
        report(width, "stalled", frames.len(), &check_run(&frames, &out));
    }
}

#[test]
fn random_traffic_is_varied() {
    // Guards the generator: every verdict appears.
    let mut rng = SmallRng::seed_from_u64(1);
    let mut seen = [0u32; 8];
    for _ in 0..5000 {
        seen[usize::from(expected_reason(&random_frame(&mut rng)))] += 1;
    }
    assert!(seen[..6].iter().all(|&n| n > 10), "{seen:?}");
    // And a sealed packet really is valid for the reference.
    let f = sealed(&mut rng, Opcode::Write, 10);
    assert!(Packet::new_checked(&f.bytes[..]).is_ok());
    assert_eq!(expected_reason(&f), reason::NONE);
}

#[test]
fn vcd_trace_records_the_ports() {
    let Some(mut tb) = parser(64) else { return };
    let path = std::env::temp_dir().join(format!("rx_parser_{}.vcd", std::process::id()));
    tb.sim().trace(&path).expect("open VCD");
    let mut rng = SmallRng::seed_from_u64(45);
    let frames = vec![sealed(&mut rng, Opcode::Write, 16)];
    let out = tb.run(&frames, &mut || (true, true));
    report(64, "traced", 1, &check_run(&frames, &out));
    drop(tb); // closes the file
    let vcd = std::fs::read_to_string(&path).expect("read VCD");
    std::fs::remove_file(&path).ok();
    assert!(vcd.contains("$enddefinitions"), "no VCD header");
    assert!(vcd.contains("s_axis_tdata") && vcd.contains("m_meta_valid"));
    let samples = vcd.lines().filter(|l| l.starts_with('#')).count();
    assert!(samples as u64 >= 2 * out.cycles, "{samples} time steps");
}
