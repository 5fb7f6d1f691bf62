//! The frame buffer, a small custom leaf with a Rust model.

use rust_hdl::prelude::*;

use super::fifo_depth;
use crate::helpers::hand_written;

/// The frame buffer: a simple dual-port RAM of [`fifo_depth`]`(W / 8)`
/// words of `W` bits, with a registered read and an output register, both
/// advancing only while `read_enable` is high (block RAM with its output
/// register: the data of the address given in cycle `t` is on `read_data`
/// after the second enabled edge). Addresses wrap at the depth.
///
/// A custom leaf because rust-hdl's `RAM<D, N>` takes its depth from its
/// address type `Bits<N>`, a const generic that stable Rust cannot derive
/// from the beat width `W` (the depth is 4096 at 64 bits and 512 at 512),
/// and its read port has neither an enable nor an output register. The
/// Rust model below is what rust-hdl's simulator runs.
#[derive(LogicBlock)]
pub struct FrameRam<const W: usize> {
    /// Clock of both ports.
    pub clock: Signal<In, Clock>,
    /// Write `write_data` at `write_address` on the clock edge.
    pub write_enable: Signal<In, Bit>,
    /// Write address (taken modulo the depth).
    pub write_address: Signal<In, Bits<16>>,
    /// Write data.
    pub write_data: Signal<In, Bits<W>>,
    /// Advance the read pipeline (RAM register and output register).
    pub read_enable: Signal<In, Bit>,
    /// Read address (taken modulo the depth).
    pub read_address: Signal<In, Bits<16>>,
    /// Read data, two enabled edges after its address.
    pub read_data: Signal<Out, Bits<W>>,
    _stage: Bits<W>,
    _mem: Vec<Bits<W>>,
}

impl<const W: usize> FrameRam<W> {
    /// Words in the RAM.
    pub const DEPTH: usize = fifo_depth(W / 8);
}

impl<const W: usize> Default for FrameRam<W> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_enable: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _stage: Default::default(),
            _mem: vec![Bits::default(); Self::DEPTH],
        }
    }
}

impl<const W: usize> Logic for FrameRam<W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let mask = Self::DEPTH - 1;
            if self.read_enable.val() {
                self.read_data.next = self._stage;
                self._stage = self._mem[self.read_address.val().index() & mask];
            }
            if self.write_enable.val() {
                self._mem[self.write_address.val().index() & mask] = self.write_data.val();
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let depth = Self::DEPTH;
        hand_written(format!(
            "reg [{wm1}:0] mem [0:{dm1}];
reg [{wm1}:0] stage;
always @(posedge clock) begin
    if (write_enable) mem[write_address & 16'd{dm1}] <= write_data;
    if (read_enable) begin
        stage <= mem[read_address & 16'd{dm1}];
        read_data <= stage;
    end
end
",
            wm1 = W - 1,
            dm1 = depth - 1,
        ))
    }
}
