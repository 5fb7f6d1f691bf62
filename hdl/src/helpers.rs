//! Small building blocks written as custom Verilog with a matching Rust
//! model for rust-hdl's own simulator (combinational helpers, the
//! register with an enable `EnReg`, and the two memories rust-hdl lacks,
//! `LutRam` and `BlockRam`), and the pieces the native blocks share to
//! declare their constants (`native_block`, `konst`, `byte_mask`).

use rust_hdl::prelude::*;

/// The line that marks a module's body as hand-written Verilog: every
/// custom body of this crate starts with it (`hand_written`), so
/// [`crate::census`] can tell our Verilog from rust-hdl's.
pub const HAND_WRITTEN: &str = "// metaroce: hand-written Verilog";

/// A custom (hand-written) module body, marked with [`HAND_WRITTEN`].
pub(crate) fn hand_written(body: impl Into<String>) -> Verilog {
    Verilog::Custom(format!("{HAND_WRITTEN}\n{}", body.into()))
}

/// Declares a native block whose `Default` fills in constants: ports
/// (public, each with its doc), then state (default values, or the value
/// given after `=`), then constants (with their values), so each field is
/// written once; `check` (an `assert!`'s arguments) runs when the block is
/// made, then the `let`s bind values the state and constants may use. A
/// block made with arguments gives them (and the doc of its `new`) as
/// `fn new(a: T, …);` after its name: then it has that `new`, not `Default`.
macro_rules! native_block {
    (
        $(#[doc = $doc:literal])*
        $name:ident [$($g:ident),*]
        $($(#[doc = $ndoc:literal])+ fn new($($arg:ident : $argt:ty),*);)?
        $(check { $($check:tt)+ })?
        $(let $bind:ident = $bindv:expr;)*
        ports { $( $(#[doc = $pd:literal])+ $p:ident : $pt:ty, )* }
        state { $( $s:ident : $st:ty $(= $sv:expr)?, )* }
        consts { $( $c:ident : $ct:ty = $cv:expr, )* }
    ) => {
        $(#[doc = $doc])*
        #[derive(LogicBlock)]
        pub struct $name<$(const $g: usize),*> {
            $( $(#[doc = $pd])+ pub $p: $pt, )*
            $( $s: $st, )*
            $( $c: $ct, )*
        }

        $crate::helpers::native_block!(@make $name [$($g),*]
            [$($(#[doc = $ndoc])+ ($($arg: $argt),*))?]
            {
                $( assert!($($check)+); )?
                $( let $bind = $bindv; )*
                Self {
                    $( $p: Default::default(), )*
                    $( $s: $crate::helpers::or_default!($($sv)?), )*
                    $( $c: $cv, )*
                }
            });
    };
    // How the block is made: `Default`, or `new` with its arguments.
    (@make $name:ident [$($g:ident),*] [] { $($body:tt)* }) => {
        impl<$(const $g: usize),*> Default for $name<$($g),*> {
            fn default() -> Self {
                $($body)*
            }
        }
    };
    (@make $name:ident [$($g:ident),*]
        [$(#[doc = $ndoc:literal])+ ($($arg:ident : $argt:ty),*)] { $($body:tt)* }) => {
        impl<$(const $g: usize),*> $name<$($g),*> {
            $(#[doc = $ndoc])+
            pub fn new($($arg: $argt),*) -> Self {
                $($body)*
            }
        }
    };
}
pub(crate) use native_block;

/// The value given, else `Default::default()` (for [`native_block`]).
macro_rules! or_default {
    () => {
        Default::default()
    };
    ($e:expr) => {
        $e
    };
}
pub(crate) use or_default;

/// A Constant with bytes `first..end` of `N` bits set (clipped to `N`).
pub(crate) fn byte_mask<const N: usize>(first: usize, end: usize) -> Constant<Bits<N>> {
    let mut m = Bits::<N>::default();
    for bit in (8 * first).min(N)..(8 * end).min(N) {
        m = m.replace_bit(bit, true);
    }
    Constant::new(m)
}

/// The swap steps that reverse the byte order of 512 bits: halves of 256
/// bits swapped, then of 128, ... down to bytes (each step
/// `(x & low_halves(h)) << h | (x >> h) & low_halves(h)`).
pub(crate) const SWAPS_512: [usize; 6] = [256, 128, 64, 32, 16, 8];
/// The swap steps that reverse the bytes of 128 bits: halves of 64 bits,
/// then of 32, 16, 8.
pub(crate) const SWAPS_128: [usize; 4] = [64, 32, 16, 8];

/// A constant of `N` bits with the low `half` bits of every `2 * half`
/// set: the halves a swap step moves up.
pub(crate) fn low_halves<const N: usize>(half: usize) -> Constant<Bits<N>> {
    Constant::new((0..N).fold(Bits::default(), |m, i| {
        m.replace_bit(i, i % (2 * half) < half)
    }))
}

/// A Constant holding `v`.
pub(crate) fn konst<const N: usize>(v: usize) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

/// Reverses the byte order of a `W`-bit word (`B = W / 8` bytes).
///
/// AXI-Stream puts the first byte of a beat in lane 0 (`tdata[7:0]`); after
/// the swap the first byte is in the top lane, so a big-endian (network
/// order) field at byte offset `o` of `n` bytes is the bit slice
/// `[W - 8*(o+n) +: 8*n]`.
#[derive(LogicBlock, Default)]
pub struct ByteSwap<const W: usize, const B: usize> {
    /// Word in AXI-Stream lane order.
    pub data_in: Signal<In, Bits<W>>,
    /// The same bytes in reverse lane order.
    pub data_out: Signal<Out, Bits<W>>,
}

impl<const W: usize, const B: usize> Logic for ByteSwap<W, B> {
    fn update(&mut self) {
        let mut out = Bits::<W>::default();
        for i in 0..B {
            out.set_bits::<8>(8 * i, self.data_in.val().get_bits::<8>(W - 8 - 8 * i));
        }
        self.data_out.next = out;
    }

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "ByteSwap: W must be 8 * B");
        self.data_out.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(format!(
            "integer i;
always @(*) begin
    for (i = 0; i < {B}; i = i + 1)
        data_out[8*i +: 8] = data_in[{W} - 8 - 8*i +: 8];
end
"
        ))
    }
}

/// Number of valid bytes in an AXI-Stream beat with `B` lanes.
///
/// `tkeep` is contiguous from lane 0 (packed stream), so the count is the
/// index of the highest set bit plus one; 0 when no bit is set.
#[derive(LogicBlock, Default)]
pub struct KeepCount<const B: usize> {
    /// `tkeep` of the beat.
    pub keep: Signal<In, Bits<B>>,
    /// Valid bytes in the beat.
    pub count: Signal<Out, Bits<16>>,
}

impl<const B: usize> Logic for KeepCount<B> {
    fn update(&mut self) {
        let mut count = 0u64;
        for i in 0..B {
            if self.keep.val().get_bit(i) {
                count = i as u64 + 1;
            }
        }
        self.count.next = count.into();
    }

    fn connect(&mut self) {
        self.count.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(format!(
            "integer i;
always @(*) begin
    count = 16'd0;
    for (i = 0; i < {B}; i = i + 1)
        if (keep[i]) count = i + 1;
end
"
        ))
    }
}

/// A register with a clock enable: `q` takes `d` at a rising edge of
/// `clock` when `en` is high and holds otherwise (on the ECP5 a flip-flop
/// with its clock enable, as yosys maps a `DFF` whose `d` defaults to `q`).
///
/// A custom leaf for the simulators: with rust-hdl's `DFF` the parent's
/// kernel copies `q` into `d` (`dff_setup!`) and overwrites it under the
/// load condition, so `d` depends on that condition, and Verilator keeps
/// everything that feeds `d` in the same evaluation as the condition. When
/// the condition reads the top's inputs (flow control), that is the pass
/// Verilator runs for the inputs as well as the one after the clock edge:
/// wide copies and CRC matrices computed from registers alone run twice a
/// cycle. Here the parent drives `en` with the condition and `d` from
/// registers, so only `en` is in that pass and the register is copied
/// only when loaded. The parent's kernel gives it the clock, sets `en`
/// low at its top (`#[hdl_gen]` takes no macro but `dff_setup!`) and
/// drives `d` in every cycle. The Rust model is what rust-hdl's simulator
/// runs.
#[derive(LogicBlock, Default)]
pub struct EnReg<T: Synth> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// `q` takes `d` at this cycle's edge.
    pub en: Signal<In, Bit>,
    /// The value taken.
    pub d: Signal<In, T>,
    /// The register.
    pub q: Signal<Out, T>,
}

impl<T: Synth> Logic for EnReg<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.en.val() {
            self.q.next = self.d.val();
        }
    }

    fn connect(&mut self) {
        self.q.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(format!(
            "initial begin
   q = {:x};
end

always @(posedge clock) if (en) q <= d;
",
            T::default().verilog()
        ))
    }
}

/// A memory of `2^N` words (or fewer: [`LutRam::with_words`]) of `D` bits
/// with one synchronous write port and one asynchronous read port: the
/// read data is the word at `read_address` now, and a word written at a clock edge is read from the next cycle on
/// (distributed RAM on an FPGA: `TRELLIS_DPR16X4` on the ECP5).
///
/// A custom leaf because rust-hdl has no asynchronous-read memory: its
/// `RAM` registers the read, which would put a cycle between a FIFO
/// pointer and the entry it names, and an array of `DFF`s costs a
/// flip-flop per bit per word plus a read multiplexer. The Rust model
/// ([`Ram`]'s) is what rust-hdl's simulator runs.
pub type LutRam<const D: usize, const N: usize> = Ram<D, N, false>;

/// A simple dual-port memory of `words` (a power of two, at most `2^N`)
/// words of `D` bits with a synchronous read: the address given before a
/// clock edge has its word on `read_data` after the edge, *including* a word
/// written to that address at the same edge (a bypass register supplies
/// it). Addresses must stay below `words`: the memory uses their low bits,
/// the bypass compares them whole. The memory reads at every edge (no read
/// enable), so a FIFO gives it its *next* read pointer.
///
/// Deeper than [`DISTRIBUTED_MAX_WORDS`] it maps to block RAM (`DP16KD` on
/// the ECP5): the memory carries `ram_style = "block"`, without which yosys
/// puts a shallow one (32 words, say) in distributed RAM. A memory of at
/// most that many words stays in distributed RAM with its output register
/// in flip-flops: a block RAM is at most 36 bits wide, so a wide shallow
/// memory (544 bits × 16, say) would take many of the die's 208 and crowd
/// the routing around their four rows (measured in `docs/bitstreams.md`,
/// *Where the routing crowds*). Every memory carries `no_rw_check`,
/// without which yosys rebuilds the old-word read of a same-edge write in
/// the fabric (a flip-flop and a LUT per bit: the block RAM's two ports
/// do not define it). Plus the bypass (a register of `D` bits, a
/// comparator and a multiplexer), which gives such a read its word; left
/// out by [`Ram::without_bypass`] where no read needs it.
///
/// A custom leaf because rust-hdl's `RAM<D, N>` takes its depth from its
/// address type (`2^N` words, while a FIFO's depth follows the beat width:
/// 2,048 at 64 bits, 256 at 512) and reads the old word when the same
/// address is written at the same edge, which would cost a FIFO a cycle
/// whenever it runs nearly empty. The Rust model ([`Ram`]'s) is what
/// rust-hdl's simulator runs.
pub type BlockRam<const D: usize, const N: usize> = Ram<D, N, true>;

/// The deepest [`BlockRam`] (in words) that stays in distributed RAM.
pub const DISTRIBUTED_MAX_WORDS: usize = 16;

/// The two memories rust-hdl lacks, one write port and one read port of
/// `D`-bit words at `N`-bit addresses: read asynchronously ([`LutRam`],
/// `SYNC` false) or at the clock edge ([`BlockRam`], `SYNC` true).
#[derive(LogicBlock)]
pub struct Ram<const D: usize, const N: usize, const SYNC: bool> {
    /// Clock of the write port (and of a synchronous read).
    pub clock: Signal<In, Clock>,
    /// Write `write_data` at `write_address` on the clock edge.
    pub write_enable: Signal<In, Bit>,
    /// Write address.
    pub write_address: Signal<In, Bits<N>>,
    /// Write data.
    pub write_data: Signal<In, Bits<D>>,
    /// Read address (taken at the clock edge by a synchronous read).
    pub read_address: Signal<In, Bits<N>>,
    /// The word at `read_address` ([`LutRam`]: now, combinational;
    /// [`BlockRam`]: at the last edge's).
    pub read_data: Signal<Out, Bits<D>>,
    _mem: Vec<Bits<D>>,
    /// [`BlockRam`]: a read of the address written at the same edge gives
    /// the word written (else undefined on the FPGA: [`BlockRam::without_bypass`]).
    _bypass: bool,
}

impl<const D: usize, const N: usize, const SYNC: bool> Ram<D, N, SYNC> {
    /// A memory of only `words` words, a power of two of at most `2^N`:
    /// the addresses must stay below `words`.
    pub fn with_words(words: usize) -> Self {
        assert!(
            words.is_power_of_two() && words <= 1 << N,
            "Ram: {words} words is not a power of two of at most {N} address bits"
        );
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _mem: vec![Bits::default(); words],
            _bypass: true,
        }
    }
}

impl<const D: usize, const N: usize> BlockRam<D, N> {
    /// This memory without the same-edge bypass (no bypass register and
    /// multiplexer): a read of the address written at the same edge gives
    /// an undefined word on the FPGA (`no_rw_check`), and the complement
    /// of the word written in the model and under Verilator (the Verilog's
    /// `ifdef VERILATOR`), so a user that relies on such a read fails its
    /// tests instead of reading the old word. For a FIFO that never uses
    /// its head in the cycle after a push into it while it was empty.
    pub fn without_bypass(mut self) -> Self {
        self._bypass = false;
        self
    }
}

impl<const D: usize, const N: usize, const SYNC: bool> Default for Ram<D, N, SYNC> {
    fn default() -> Self {
        Self::with_words(1 << N)
    }
}

impl<const D: usize, const N: usize, const SYNC: bool> Logic for Ram<D, N, SYNC> {
    fn update(&mut self) {
        if SYNC {
            self.update_sync();
        } else {
            self.update_async();
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        if SYNC {
            self.hdl_sync()
        } else {
            self.hdl_async()
        }
    }
}

impl<const D: usize, const N: usize, const SYNC: bool> Ram<D, N, SYNC> {
    /// [`LutRam`]'s model.
    fn update_async(&mut self) {
        // As the Verilog: with fewer words than addresses, a write beyond
        // them is ignored and a read beyond them gives 0.
        if self.clock.pos_edge() && self.write_enable.val() {
            if let Some(w) = self._mem.get_mut(self.write_address.val().index()) {
                *w = self.write_data.val();
            }
        }
        self.read_data.next = self
            ._mem
            .get(self.read_address.val().index())
            .copied()
            .unwrap_or_default();
    }

    /// [`BlockRam`]'s model.
    fn update_sync(&mut self) {
        if self.clock.pos_edge() {
            let mask = self._mem.len() - 1;
            let (wa, ra) = (self.write_address.val(), self.read_address.val());
            let we = self.write_enable.val();
            self.read_data.next = if self._bypass && we && wa == ra {
                self.write_data.val()
            } else if !self._bypass && we && (wa.index() & mask) == (ra.index() & mask) {
                !self.write_data.val()
            } else {
                self._mem[ra.index() & mask]
            };
            if self.write_enable.val() {
                self._mem[wa.index() & mask] = self.write_data.val();
            }
        }
    }

    /// [`LutRam`]'s Verilog.
    fn hdl_async(&self) -> Verilog {
        let words = self._mem.len();
        if words == 1 << N {
            return hand_written(format!(
                "reg [{dm1}:0] mem [0:{nm1}];
always @(posedge clock) if (write_enable) mem[write_address] <= write_data;
always @(*) read_data = mem[read_address];
",
                dm1 = D - 1,
                nm1 = words - 1,
            ));
        }
        // Fewer words: the address bits above them must be 0 (a write
        // beyond is ignored, a read beyond gives 0), so every address bit
        // is used.
        let k = words.trailing_zeros();
        hand_written(format!(
            "reg [{dm1}:0] mem [0:{nm1}];
always @(posedge clock)
    if (write_enable && write_address[{am1}:{k}] == 0) mem[write_address[{km1}:0]] <= write_data;
always @(*) read_data = (read_address[{am1}:{k}] == 0) ? mem[read_address[{km1}:0]] : {D}'d0;
",
            dm1 = D - 1,
            nm1 = words - 1,
            am1 = N - 1,
            km1 = k - 1,
        ))
    }

    /// [`BlockRam`]'s Verilog: the memory and its output register, plus
    /// the bypass (the word written and whether the read's address was
    /// written at the same edge) unless it was left out; without it,
    /// Verilator reads the complement of the word written (as the model).
    fn hdl_sync(&self) -> Verilog {
        let dm1 = D - 1;
        let words = self._mem.len();
        let k = words.trailing_zeros();
        let km1 = k - 1;
        let (byp_regs, byp_edge, read) = if self._bypass {
            (
                format!("reg [{dm1}:0] byp_data;\nreg byp;\n"),
                "    byp <= write_enable && write_address == read_address;
    byp_data <= write_data;
"
                .to_string(),
                "byp ? byp_data : ram_q",
            )
        } else {
            (
                String::new(),
                format!(
                    "`ifdef VERILATOR
    if (write_enable && write_address[{km1}:0] == read_address[{km1}:0]) ram_q <= ~write_data;
`endif
"
                ),
                "ram_q",
            )
        };
        // Fewer words than the address spans: the high address bits are
        // ignored, as in the model (named so Verilator's lint lets them be).
        let high = if words < 1 << N {
            format!(
                "wire unused_high = &{{1'b0, write_address[{am1}:{k}], read_address[{am1}:{k}]}};\n",
                am1 = N - 1
            )
        } else {
            String::new()
        };
        let style = if words > DISTRIBUTED_MAX_WORDS {
            "ram_style = \"block\", "
        } else {
            ""
        };
        hand_written(format!(
            "(* {style}no_rw_check *) reg [{dm1}:0] mem [0:{nm1}];
reg [{dm1}:0] ram_q;
{high}{byp_regs}always @(posedge clock) begin
    if (write_enable) mem[write_address[{km1}:0]] <= write_data;
    ram_q <= mem[read_address[{km1}:0]];
{byp_edge}end
always @(*) read_data = {read};
",
            nm1 = words - 1,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_swap_model_reverses_lanes() {
        let mut swap = ByteSwap::<64, 8>::default();
        swap.data_in.next = bits(0x0102_0304_0506_0708);
        swap.data_in.update_all();
        swap.update();
        assert_eq!(swap.data_out.next, bits::<64>(0x0807_0605_0403_0201));
    }

    #[test]
    fn keep_count_model_counts_packed_lanes() {
        let mut kc = KeepCount::<8>::default();
        for (keep, want) in [(0x00u64, 0u64), (0x01, 1), (0x0f, 4), (0xff, 8)] {
            kc.keep.next = keep.into();
            kc.keep.update_all();
            kc.update();
            assert_eq!(kc.count.next, bits::<16>(want));
        }
    }
    #[test]
    fn en_reg_model_loads_only_when_enabled() {
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<EnReg<Bits<8>>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<EnReg<Bits<8>>>| {
            let mut x = sim.init()?;
            // (en, d, q after the edge)
            for (en, d, want) in [
                (true, 0x5au64, 0x5au64),
                (false, 0x66, 0x5a),
                (true, 0x66, 0x66),
            ] {
                x.en.next = en;
                x.d.next = d.into();
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                sim_assert_eq!(sim, x.q.val(), bits::<8>(want), x);
            }
            sim.done(x)
        });
        sim.run(Box::new(EnReg::<Bits<8>>::default()), 1_000)
            .unwrap();
    }

    #[test]
    fn block_ram_model_reads_synchronously_with_the_bypass() {
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<BlockRam<8, 4>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<BlockRam<8, 4>>| {
            let mut x = sim.init()?;
            // (write?, write address, data, read address, word read after the edge)
            let steps = [
                // Written and read at one edge: the new word.
                (true, 3u64, 0x5au64, 3u64, 0x5au64),
                // Another address written, one never written read.
                (true, 4, 0x66, 5, 0),
                // Both words kept.
                (false, 0, 0, 4, 0x66),
                (false, 0, 0, 3, 0x5a),
            ];
            for (we, wa, wd, ra, want) in steps {
                x.write_enable.next = we;
                x.write_address.next = wa.into();
                x.write_data.next = wd.into();
                x.read_address.next = ra.into();
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                sim_assert_eq!(sim, x.read_data.val(), bits::<8>(want), x);
            }
            sim.done(x)
        });
        sim.run(Box::new(BlockRam::<8, 4>::with_words(8)), 1_000)
            .unwrap();
    }
}
