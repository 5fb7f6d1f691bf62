//! rust-hdl simulation of the MAC ↔ beats path: frames of random lengths
//! (1 to 1,522 bytes) as bytes into [`RxCross`] (the GMII receive clock),
//! its beats in the core's clock (every `tkeep` and `tlast` checked)
//! through [`TxCross`] to a faster clock, and back out as bytes, against
//! the frames sent; with back-pressure at both ends and between (once for
//! long enough to fill the receive FIFO), then with the consumer always
//! ready (as the MAC is inside a frame), where a frame's bytes must come
//! one per clock without a gap, also when the beats stop in the middle
//! of a frame.

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::*;

/// Frames with back-pressure on the bytes out; after them, the consumer
/// is always ready and gaps are checked.
const PRESSED: usize = 12;

/// Core clocks without a beat taken at one frame: long enough for the
/// bytes (a 5-unit clock against the core's 13) to fill the receive FIFO's
/// 64 beats (512 bytes) several times over.
const FILL_STALL: usize = 1_000;

/// The frame (the first with the consumer always ready, 1,522 bytes) in
/// whose middle the link stops for [`FILL_STALL`] core clocks: the
/// beats come faster than the bytes leave, so only a frame let out
/// before it is whole in the FIFO would run dry here.
const MID_STALL: usize = 6 + PRESSED;

/// RxCross from the bytes' clock to the core's (`wclock`), TxCross from
/// the core's to its own read clock.
#[derive(LogicBlock, Default)]
struct Bench {
    bclock: Signal<In, Clock>,
    wclock: Signal<In, Clock>,
    rclock: Signal<In, Clock>,
    s_data: Signal<In, Bits<8>>,
    s_valid: Signal<In, Bit>,
    s_last: Signal<In, Bit>,
    s_ready: Signal<Out, Bit>,
    link: Signal<In, Bit>,
    mid_fire: Signal<Out, Bit>,
    mid_tdata: Signal<Out, Bits<64>>,
    mid_tkeep: Signal<Out, Bits<8>>,
    mid_tlast: Signal<Out, Bit>,
    m_data: Signal<Out, Bits<8>>,
    m_valid: Signal<Out, Bit>,
    m_last: Signal<Out, Bit>,
    m_ready: Signal<In, Bit>,
    rx: RxCross,
    cross: TxCross,
}

impl Logic for Bench {
    #[hdl_gen]
    fn update(&mut self) {
        self.rx.wclock.next = self.bclock.val();
        self.rx.wrst.next = false;
        self.rx.rclock.next = self.wclock.val();
        self.cross.wclock.next = self.wclock.val();
        self.cross.wrst.next = false;
        self.cross.rclock.next = self.rclock.val();
        self.cross.rrst.next = false;
        self.rx.s_data.next = self.s_data.val();
        self.rx.s_valid.next = self.s_valid.val();
        self.rx.s_last.next = self.s_last.val();
        self.s_ready.next = self.rx.s_ready.val();
        // The beats pass while `link` (random back-pressure between).
        self.cross.s_tdata.next = self.rx.m_tdata.val();
        self.cross.s_tkeep.next = self.rx.m_tkeep.val();
        self.cross.s_tlast.next = self.rx.m_tlast.val();
        self.cross.s_tvalid.next = self.rx.m_tvalid.val() & self.link.val();
        self.rx.m_tready.next = self.cross.s_tready.val() & self.link.val();
        self.mid_fire.next = self.rx.m_tvalid.val() & self.link.val() & self.cross.s_tready.val();
        self.mid_tdata.next = self.rx.m_tdata.val();
        self.mid_tkeep.next = self.rx.m_tkeep.val();
        self.mid_tlast.next = self.rx.m_tlast.val();
        self.m_data.next = self.cross.m_data.val();
        self.m_valid.next = self.cross.m_valid.val();
        self.m_last.next = self.cross.m_last.val();
        self.cross.m_ready.next = self.m_ready.val();
    }
}

/// The frames: the edge lengths, then random ones.
fn frames() -> Vec<Vec<u8>> {
    let mut rng = SmallRng::seed_from_u64(1522);
    let mut lens = vec![1, 7, 8, 9, 1522, 64];
    lens.extend((0..PRESSED).map(|_| rng.gen_range(1..=1522)));
    lens.extend([1522, 60, 1, 9]);
    lens.extend((0..4).map(|_| rng.gen_range(1..=1522)));
    lens.iter()
        .map(|&n| (0..n).map(|_| rng.r#gen()).collect())
        .collect()
}

#[test]
fn bytes_to_beats_and_back() {
    let mut sim = Simulation::new();
    // The core's clock 3.25 times slower than the GMII clocks (bytes in,
    // bytes out): a frame let out early would run dry.
    sim.add_clock(5, |x: &mut Box<Bench>| x.bclock.next = !x.bclock.val());
    sim.add_clock(13, |x: &mut Box<Bench>| x.wclock.next = !x.wclock.val());
    sim.add_clock(4, |x: &mut Box<Bench>| x.rclock.next = !x.rclock.val());
    // The MAC's bytes, in the bytes' clock.
    sim.add_testbench(move |mut sim: Sim<Bench>| {
        let mut x = sim.init()?;
        let mut rng = SmallRng::seed_from_u64(6);
        for f in frames() {
            let mut sent = 0;
            while sent < f.len() {
                wait_clock_false!(sim, bclock, x);
                x.s_valid.next = rng.gen_bool(0.8);
                x.s_data.next = u64::from(f[sent]).into();
                x.s_last.next = sent + 1 == f.len();
                x = sim.wait(1, x)?;
                if x.s_valid.val() && x.s_ready.val() {
                    sent += 1;
                }
                wait_clock_true!(sim, bclock, x);
            }
        }
        wait_clock_false!(sim, bclock, x);
        x.s_valid.next = false;
        sim.done(x)
    });
    // The beats between, in the core's clock.
    sim.add_testbench(move |mut sim: Sim<Bench>| {
        let mut x = sim.init()?;
        let mut rng = SmallRng::seed_from_u64(7);
        for (i, f) in frames().into_iter().enumerate() {
            let mut seen = Vec::new();
            // At the first 1,522-byte frame the link stops for long enough
            // that the receive FIFO fills and the bytes are held: no beat
            // may be lost to a full FIFO.
            let mut stall = if i == 4 { FILL_STALL } else { 0 };
            let mut mid = i == MID_STALL;
            while seen.len() < f.len() {
                if mid && seen.len() >= 256 {
                    stall = FILL_STALL;
                    mid = false;
                }
                wait_clock_false!(sim, wclock, x);
                x.link.next = stall == 0 && rng.gen_bool(0.7);
                stall = stall.saturating_sub(1);
                x = sim.wait(1, x)?;
                if x.mid_fire.val() {
                    // Every beat but the frame's last is whole; the last
                    // holds the rest, its lanes packed, the others zero.
                    let rest = f.len() - seen.len();
                    let n = rest.min(8);
                    let keep = x.mid_tkeep.val().index();
                    sim_assert_eq!(sim, keep, (1usize << n) - 1, x);
                    sim_assert_eq!(sim, x.mid_tlast.val(), rest <= 8, x);
                    let word = x.mid_tdata.val().to_u64().to_le_bytes();
                    sim_assert!(sim, word[n..].iter().all(|&b| b == 0), x);
                    seen.extend_from_slice(&word[..n]);
                }
                if stall > 0 && x.s_valid.val() {
                    sim_assert!(sim, stall >= FILL_STALL / 2 || !x.s_ready.val(), x);
                }
                wait_clock_true!(sim, wclock, x);
            }
            sim_assert_eq!(sim, seen, f, x);
        }
        sim.done(x)
    });
    sim.add_testbench(move |mut sim: Sim<Bench>| {
        let mut x = sim.init()?;
        let mut rng = SmallRng::seed_from_u64(8);
        for (i, f) in frames().into_iter().enumerate() {
            let pressed = i < 6 + PRESSED;
            let mut got = Vec::new();
            loop {
                wait_clock_false!(sim, rclock, x);
                x.m_ready.next = !pressed || rng.gen_bool(0.6);
                x = sim.wait(1, x)?;
                if !pressed && !got.is_empty() {
                    // Inside a frame with the consumer ready: never dry.
                    sim_assert!(sim, x.m_valid.val(), x);
                }
                if x.m_valid.val() && x.m_ready.val() {
                    got.push(x.m_data.val().index() as u8);
                    sim_assert_eq!(sim, x.m_last.val(), got.len() == f.len(), x);
                    if x.m_last.val() {
                        wait_clock_true!(sim, rclock, x);
                        break;
                    }
                }
                wait_clock_true!(sim, rclock, x);
            }
            sim_assert_eq!(sim, got, f, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(Bench::default()), 200_000_000).unwrap();
}
