//! rust-hdl simulations of the UART: [`UartTx`] into [`UartRx`] at a few
//! rates, and a line driven by the test (framing errors, glitches).

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::*;

/// [`UartTx`] into [`UartRx`]; with `inject` high the receiver sees
/// `inj_line` instead.
#[derive(LogicBlock)]
struct Loop {
    clock: Signal<In, Clock>,
    data: Signal<In, Bits<8>>,
    valid: Signal<In, Bit>,
    ready: Signal<Out, Bit>,
    rx_data: Signal<Out, Bits<8>>,
    rx_valid: Signal<Out, Bit>,
    framing_errors: Signal<Out, Bits<16>>,
    inject: Signal<In, Bit>,
    inj_line: Signal<In, Bit>,
    tx: UartTx,
    rx: UartRx,
}

impl Loop {
    fn new(cpb: usize) -> Self {
        Self {
            clock: Default::default(),
            data: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            rx_data: Default::default(),
            rx_valid: Default::default(),
            framing_errors: Default::default(),
            inject: Default::default(),
            inj_line: Default::default(),
            tx: UartTx::new(cpb),
            rx: UartRx::new(cpb),
        }
    }
}

impl Logic for Loop {
    #[hdl_gen]
    fn update(&mut self) {
        self.tx.clock.next = self.clock.val();
        self.rx.clock.next = self.clock.val();
        self.tx.rst.next = false;
        self.rx.rst.next = false;
        self.tx.data.next = self.data.val();
        self.tx.valid.next = self.valid.val();
        self.ready.next = self.tx.ready.val();
        self.rx.rxd.next = self.tx.txd.val();
        if self.inject.val() {
            self.rx.rxd.next = self.inj_line.val();
        }
        self.rx_data.next = self.rx.data.val();
        self.rx_valid.next = self.rx.valid.val();
        self.framing_errors.next = self.rx.framing_errors.val();
    }
}

fn new_sim() -> Simulation<Loop> {
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Loop>| x.clock.next = !x.clock.val());
    sim
}

#[test]
fn bytes_cross_the_loop_at_several_rates() {
    for cpb in [4usize, 7, 16] {
        let mut rng = SmallRng::seed_from_u64(cpb as u64);
        let sent: Vec<u8> = (0..64).map(|_| rng.r#gen()).collect();
        let mut sim = new_sim();
        let expect = sent.clone();
        sim.add_testbench(move |mut sim: Sim<Loop>| {
            let mut x = sim.init()?;
            wait_clock_false!(sim, clock, x);
            let mut got = Vec::new();
            let mut next = 0;
            // Each character takes 10 bit times; a little slack for the tail.
            for _ in 0..(expect.len() + 2) * 11 * cpb {
                // Inputs set now take effect at the next edge; `val()` reads
                // the outputs before it.
                let valid = next < expect.len();
                x.valid.next = valid;
                x.data.next = (*expect.get(next).unwrap_or(&0) as u64).into();
                let taken = valid && x.ready.val();
                if x.rx_valid.val() {
                    got.push(x.rx_data.val().index() as u8);
                }
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                next += usize::from(taken);
            }
            sim_assert_eq!(sim, got, expect, x);
            sim_assert_eq!(sim, x.framing_errors.val(), bits::<16>(0), x);
            sim.done(x)
        });
        sim.run(Box::new(Loop::new(cpb)), 1_000_000).unwrap();
    }
}

/// The line level of each bit time of one character: start, `byte` bit 0
/// first, then `stop`.
fn character(byte: u8, stop: bool) -> Vec<bool> {
    let mut bits = vec![false];
    bits.extend((0..8).map(|i| byte >> i & 1 == 1));
    bits.push(stop);
    bits
}

#[test]
fn framing_errors_and_glitches_are_dropped() {
    let cpb = 8;
    let mut sim = new_sim();
    sim.add_testbench(move |mut sim: Sim<Loop>| {
        let mut x = sim.init()?;
        wait_clock_false!(sim, clock, x);
        x.inject.next = true;
        // Per bit time: idle, a bad character (stop bit low) and three more
        // low bit times (a short break), idle, a glitch of a quarter bit,
        // idle, then a good character.
        let mut line: Vec<(bool, usize)> = vec![(true, 3 * cpb)];
        line.extend(character(0x3c, false).into_iter().map(|b| (b, cpb)));
        line.extend([(false, 3 * cpb), (true, 4 * cpb), (false, cpb / 4)]);
        line.push((true, 4 * cpb));
        line.extend(character(0xa5, true).into_iter().map(|b| (b, cpb)));
        line.push((true, 4 * cpb));
        let mut got = Vec::new();
        for (level, clocks) in line {
            for _ in 0..clocks {
                x.inj_line.next = level;
                if x.rx_valid.val() {
                    got.push(x.rx_data.val().index() as u8);
                }
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
        }
        sim_assert_eq!(sim, got, vec![0xa5u8], x);
        sim_assert_eq!(sim, x.framing_errors.val(), bits::<16>(1), x);
        sim.done(x)
    });
    sim.run(Box::new(Loop::new(cpb)), 1_000_000).unwrap();
}
