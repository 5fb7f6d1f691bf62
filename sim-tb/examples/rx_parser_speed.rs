//! Verilator simulation speed of the RX parser, driven from Rust with
//! back-to-back MTU-sized WRITE packets (every cycle sets the inputs, reads
//! the outputs and ticks the clock):
//!
//! and, for comparison, the model alone: the clock ticking with the inputs
//! held (one endless frame streaming through).
//!
//! `cargo run --release -p metaroce-sim-tb --example rx_parser_speed [width] [packets]`
use std::time::Instant;

use metaroce_sim_tb::rx_check::{packet, random_pseudo};
use metaroce_sim_tb::rx_parser::{Frame, RxParserTb};
use rand::SeedableRng;
use rand::rngs::SmallRng;

fn main() {
    let mut args = std::env::args().skip(1);
    let width: usize = args.next().map_or(64, |a| a.parse().expect("width"));
    let packets: usize = args.next().map_or(2000, |a| a.parse().expect("packets"));
    let mut tb = match RxParserTb::new(width) {
        Ok(tb) => tb,
        Err(e) => {
            eprintln!("{e}");
            return;
        }
    };
    // Sealed WRITEs with 4096-byte payloads; header fields vary per packet.
    let mut rng = SmallRng::seed_from_u64(1);
    let frames: Vec<Frame> = (0..packets)
        .map(|_| {
            let pseudo = random_pseudo(&mut rng);
            Frame {
                bytes: packet(&mut rng, 0x01, 4096, &pseudo),
                pseudo,
            }
        })
        .collect();
    let started = Instant::now();
    let out = tb.run(&frames, &mut || (true, true));
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(out.metas.len(), packets);
    assert!(
        out.metas.iter().all(|m| !m.drop),
        "a sealed WRITE was dropped"
    );
    println!(
        "rx_parser {width}-bit: {} cycles in {:.3} s = {:.2} M cycles/s ({} bubbles)",
        out.cycles,
        secs,
        out.cycles as f64 / secs / 1e6,
        out.bubbles
    );

    let sim = tb.sim();
    let port = |name: &str| sim.port(name).expect("RX parser port");
    let (tvalid, tkeep, tlast, m_tready) = (
        port("s_axis_tvalid"),
        port("s_axis_tkeep"),
        port("s_axis_tlast"),
        port("m_axis_tready"),
    );
    sim.set(tvalid, 1);
    sim.set(tkeep, u64::MAX >> (64 - tkeep.bits()));
    sim.set(tlast, 0);
    sim.set(m_tready, 1);
    let cycles = 5_000_000;
    let started = Instant::now();
    for _ in 0..cycles {
        sim.tick();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "rx_parser {width}-bit, clock only: {cycles} cycles in {secs:.3} s = {:.2} M cycles/s",
        cycles as f64 / secs / 1e6
    );
}
