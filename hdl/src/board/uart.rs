//! A UART (8 data bits, no parity, one stop bit, least significant bit
//! first) at a fixed number of clocks per bit: [`UartTx`] and [`UartRx`],
//! the byte stream of the management path ([`super::mgmt`]).

use rust_hdl::prelude::*;

use crate::helpers::native_block;

/// Where [`UartRx`] is in a character.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum RxState {
    /// Line idle (high), waiting for a start bit's falling edge.
    Idle,
    /// Half a bit after the falling edge: is the line still low?
    Start,
    /// The eight data bits, each sampled in its middle.
    Data,
    /// The stop bit's middle: high delivers the byte, low is a framing error.
    Stop,
    /// After a framing error: waiting for the line to go high again.
    Break,
}

/// Bits of the clocks-per-bit counters: up to 65,535 clocks per bit
/// (115,200 bit/s at clocks up to 7.5 GHz, 1 Mbit/s at 125 MHz is 125).
const DIV_BITS: usize = 16;

native_block! {
    /// UART receiver: `rxd` (asynchronous, through two flip-flops) into bytes.
    ///
    /// A character is a low start bit, eight data bits (bit 0 first) and a
    /// high stop bit, `clocks_per_bit` clocks each. The receiver samples the
    /// middle of each bit, timed from the start bit's falling edge; a start
    /// bit that is no longer low at its middle is a glitch and ignored. A byte
    /// whose stop bit is low is dropped and counted in `framing_errors`, and
    /// the receiver then waits for the line to be high before it looks for a
    /// start bit again (a break, or a rate mismatch, never yields bytes).
    UartRx []
    /// A receiver at `clocks_per_bit` clocks per bit (at least 4, below 2^16).
    fn new(clocks_per_bit: usize);
    check {
        (4..1 << DIV_BITS).contains(&clocks_per_bit),
        "UartRx: {clocks_per_bit} clocks per bit is out of 4..65536"
    }
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: idle, counter zero.
        rst: Signal<In, Bit>,
        /// The serial line (idle high).
        rxd: Signal<In, Bit>,
        /// The byte received (valid with `valid`).
        data: Signal<Out, Bits<8>>,
        /// High for one clock per byte received.
        valid: Signal<Out, Bit>,
        /// Characters dropped for a low stop bit (wraps).
        framing_errors: Signal<Out, Bits<16>>,
    }
    state {
        sync1: DFF<Bit>,
        sync2: DFF<Bit>,
        state: DFF<RxState>,
        div: DFF<Bits<DIV_BITS>>,
        nbit: DFF<Bits<3>>,
        shift: DFF<Bits<8>>,
        out_v: DFF<Bit>,
        n_fe: DFF<Bits<16>>,
    }
    consts {
        c_full: Constant<Bits<DIV_BITS>> = Constant::new((clocks_per_bit - 1).to_bits()),
        c_half: Constant<Bits<DIV_BITS>> = Constant::new((clocks_per_bit / 2 - 1).to_bits()),
    }
}

impl Logic for UartRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, sync1, sync2, state, div, nbit, shift, out_v, n_fe
        );
        self.sync1.d.next = self.rxd.val();
        self.sync2.d.next = self.sync1.q.val();
        self.data.next = self.shift.q.val();
        self.valid.next = self.out_v.q.val();
        self.framing_errors.next = self.n_fe.q.val();
        self.out_v.d.next = false;
        self.div.d.next = self.div.q.val() - 1;
        match self.state.q.val() {
            RxState::Idle => {
                if !self.sync2.q.val() {
                    self.state.d.next = RxState::Start;
                    self.div.d.next = self.c_half.val();
                }
            }
            RxState::Start => {
                if self.div.q.val() == 0 {
                    if self.sync2.q.val() {
                        self.state.d.next = RxState::Idle;
                    } else {
                        self.state.d.next = RxState::Data;
                        self.div.d.next = self.c_full.val();
                        self.nbit.d.next = 0.into();
                    }
                }
            }
            RxState::Data => {
                if self.div.q.val() == 0 {
                    self.shift.d.next = (self.shift.q.val() >> 1)
                        | (bit_cast::<8, 1>(self.sync2.q.val().into()) << 7);
                    self.div.d.next = self.c_full.val();
                    self.nbit.d.next = self.nbit.q.val() + 1;
                    if self.nbit.q.val() == 7 {
                        self.state.d.next = RxState::Stop;
                    }
                }
            }
            RxState::Stop => {
                if self.div.q.val() == 0 {
                    if self.sync2.q.val() {
                        self.out_v.d.next = true;
                        self.state.d.next = RxState::Idle;
                    } else {
                        self.n_fe.d.next = self.n_fe.q.val() + 1;
                        self.state.d.next = RxState::Break;
                    }
                }
            }
            RxState::Break => {
                if self.sync2.q.val() {
                    self.state.d.next = RxState::Idle;
                }
            }
        }
        if self.rst.val() {
            self.state.d.next = RxState::Idle;
            self.out_v.d.next = false;
            self.n_fe.d.next = 0.into();
        }
    }
}

native_block! {
    /// UART transmitter: a byte offered on `data`/`valid` and taken while
    /// `ready` is high goes out on `txd` (registered, idle high) as a start
    /// bit, eight data bits (bit 0 first) and a stop bit, `clocks_per_bit`
    /// clocks each; `ready` is high again after the stop bit.
    UartTx []
    /// A transmitter at `clocks_per_bit` clocks per bit (at least 4, below 2^16).
    fn new(clocks_per_bit: usize);
    check {
        (4..1 << DIV_BITS).contains(&clocks_per_bit),
        "UartTx: {clocks_per_bit} clocks per bit is out of 4..65536"
    }
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: idle, line high.
        rst: Signal<In, Bit>,
        /// The byte to send.
        data: Signal<In, Bits<8>>,
        /// A byte is offered.
        valid: Signal<In, Bit>,
        /// The transmitter takes the offered byte this clock.
        ready: Signal<Out, Bit>,
        /// The serial line.
        txd: Signal<Out, Bit>,
    }
    state {
        busy: DFF<Bit>,
        // The character still to send, start bit first: 1 + 8 + 1 bits.
        frame: DFF<Bits<10>>,
        nbit: DFF<Bits<4>>,
        div: DFF<Bits<DIV_BITS>>,
        // The line, inverted (so that it idles high from power-up).
        line_n: DFF<Bit>,
    }
    consts {
        c_full: Constant<Bits<DIV_BITS>> = Constant::new((clocks_per_bit - 1).to_bits()),
        c_stop: Constant<Bits<10>> = Constant::new(0x200usize.to_bits()),
    }
}

impl Logic for UartTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, frame, nbit, div, line_n);
        self.txd.next = !self.line_n.q.val();
        self.ready.next = !self.busy.q.val();
        if self.busy.q.val() {
            self.div.d.next = self.div.q.val() - 1;
            if self.div.q.val() == 0 {
                self.div.d.next = self.c_full.val();
                self.line_n.d.next = !self.frame.q.val().get_bit(0);
                self.frame.d.next = self.frame.q.val() >> 1;
                self.nbit.d.next = self.nbit.q.val() + 1;
                if self.nbit.q.val() == 10 {
                    // The stop bit has had its whole time.
                    self.busy.d.next = false;
                    self.line_n.d.next = false;
                }
            }
        } else if self.valid.val() {
            self.busy.d.next = true;
            self.div.d.next = 0.into();
            self.nbit.d.next = 0.into();
            // Stop bit (1), the byte, start bit (0), sent from bit 0 up.
            self.frame.d.next = (bit_cast::<10, 8>(self.data.val()) << 1) | self.c_stop.val();
        }
        if self.rst.val() {
            self.busy.d.next = false;
            self.line_n.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests;
