//! RX front end bench: the Verilated `RxEth` at 64- and 512-bit beats
//! against `etherparse` (`metaroce_sim_tb::rx_eth`): every verdict, output
//! byte, pseudo-header field, ECN value and counter. Skips without
//! Verilator.

use metaroce_proto::DEFAULT_UDP_PORT as PORT;
use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::rx_eth::{
    EthRun, RxEthTb, mtu_frames, random_frames, reason, run_against_etherparse,
};

const WIDTHS: [usize; 2] = [64, 512];

/// The front end at `width`, or `None` (with a message) without Verilator.
fn front_end(width: usize) -> Option<RxEthTb> {
    match RxEthTb::new(width) {
        Ok(tb) => Some(tb),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn check(width: usize, what: &str, r: &EthRun) {
    assert_no_mismatches(
        &format!("{width}-bit {what}, {} frames", r.frames),
        &r.mismatches,
    );
}

#[test]
fn random_frames_match_etherparse_at_line_rate() {
    for width in WIDTHS {
        let Some(mut tb) = front_end(width) else {
            return;
        };
        let frames = random_frames(100_000, 0xE7E0 + width as u64, PORT);
        let r = run_against_etherparse(&mut tb, &frames, PORT, 1, false);
        println!(
            "{width}-bit: {} frames, by reason {:?}, {} beats, {} cycles, {} bubbles, {:.2} s ({:.2} M cycles/s)",
            r.frames,
            &r.by_reason[..reason::COUNT],
            r.beats,
            r.cycles,
            r.bubbles,
            r.sim_secs,
            r.cycles as f64 / r.sim_secs / 1e6
        );
        check(width, "random", &r);
        assert_eq!(r.bubbles, 0, "{width}-bit: input refused at line rate");
        for code in 0..reason::COUNT {
            if code != usize::from(reason::TOO_LONG) {
                assert!(
                    r.by_reason[code] > 0,
                    "{width}-bit: reason {code} never seen"
                );
            }
        }
    }
}

#[test]
fn random_frames_match_etherparse_with_backpressure() {
    for width in WIDTHS {
        let Some(mut tb) = front_end(width) else {
            return;
        };
        let frames = random_frames(10_000, 0xBAC0 + width as u64, PORT);
        let r = run_against_etherparse(&mut tb, &frames, PORT, 2, true);
        check(width, "backpressure", &r);
    }
}

#[test]
fn configured_port_and_oversized_frames() {
    for width in WIDTHS {
        let Some(mut tb) = front_end(width) else {
            return;
        };
        // Traffic to the default port, with another port configured: the
        // valid frames become `Port` drops, and 0x1234 frames pass.
        let mut frames = random_frames(500, 0x9090 + width as u64, PORT);
        frames.extend(random_frames(500, 0x9191 + width as u64, 0x1234));
        let r = run_against_etherparse(&mut tb, &frames, 0x1234, 3, false);
        check(width, "other port", &r);
        assert!(r.by_reason[usize::from(reason::PORT)] > 100);
        assert!(r.by_reason[usize::from(reason::ACCEPTED)] > 100);
        // Frames around the size limit (9215 and 9216 bytes pass the size
        // check and have trailing bytes, the 4 longer ones do not), then
        // normal ones (the FIFO recovers).
        let mut frames: Vec<Vec<u8>> = mtu_frames(3, 4, PORT);
        for extra in [0usize, 1, 2, 7, 64, 300] {
            let mut f = mtu_frames(1, 5, PORT).remove(0);
            f.resize(reason::MAX_FRAME - 1 + extra, 0xEE);
            frames.push(f);
        }
        frames.extend(mtu_frames(3, 6, PORT));
        let r = run_against_etherparse(&mut tb, &frames, PORT, 4, false);
        check(width, "oversized", &r);
        assert_eq!(r.by_reason[usize::from(reason::TOO_LONG)], 4);
    }
}

#[test]
fn back_to_back_mtu_frames_have_no_bubbles() {
    for width in WIDTHS {
        let Some(mut tb) = front_end(width) else {
            return;
        };
        let n = 2000;
        let frames = mtu_frames(n, 7, PORT);
        let r = run_against_etherparse(&mut tb, &frames, PORT, 5, false);
        check(width, "MTU", &r);
        println!(
            "{width}-bit: {n} back-to-back 1514-byte frames: {} beats ({} per frame), {} cycles ({:.2} per frame), {} bubbles",
            r.beats,
            r.beats / n as u64,
            r.cycles,
            r.cycles as f64 / n as f64,
            r.bubbles
        );
        assert_eq!(r.bubbles, 0, "{width}-bit: input refused at line rate");
        assert_eq!(r.by_reason[usize::from(reason::ACCEPTED)], n as u64);
    }
}
