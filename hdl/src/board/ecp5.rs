//! ECP5 primitives as small custom leaves: the DDR I/O registers, the global
//! buffer and the PLL have no rust-hdl widget, and synthesis must see the
//! vendor cell itself (yosys `synth_ecp5` maps `ODDRX1F`, `IDDRX1F`, `DCCA`
//! and `EHXPLLL` to the chip's I/O and clock resources). Each has a Rust model for rust-hdl's simulator,
//! which has one edge per clock, so the models show what a one-edge world can.

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

/// Output DDR register (`ODDRX1F`): `d0` leaves on the pin for the clock's
/// high half, `d1` for its low half.
///
/// Model: the pin shows `d0`, registered (the low half has no time of its
/// own in the simulator).
#[derive(LogicBlock, Default)]
pub struct Oddr {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Bit for the high half.
    pub d0: Signal<In, Bit>,
    /// Bit for the low half.
    pub d1: Signal<In, Bit>,
    /// The pin.
    pub q: Signal<Out, Bit>,
    _held: Bit,
}

impl Logic for Oddr {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._held = self.d0.val();
        }
        self.q.next = self._held;
    }

    fn connect(&mut self) {
        self.q.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(
            "wire pin;\nODDRX1F prim(.D0(d0), .D1(d1), .SCLK(clock), .RST(1'b0), .Q(pin));\n\
             always @(*) q = pin;\n",
        )
    }
}

/// Input DDR register (`IDDRX1F`): `q0` is the pin sampled at the clock's
/// rising edge, `q1` at the falling edge after it, both presented at the
/// next rising edge.
///
/// Model: both are the pin at the rising edge.
#[derive(LogicBlock, Default)]
pub struct Iddr {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The pin.
    pub d: Signal<In, Bit>,
    /// Sampled at the rising edge.
    pub q0: Signal<Out, Bit>,
    /// Sampled at the falling edge.
    pub q1: Signal<Out, Bit>,
    _held: Bit,
}

impl Logic for Iddr {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._held = self.d.val();
        }
        self.q0.next = self._held;
        self.q1.next = self._held;
    }

    fn connect(&mut self) {
        self.q0.connect();
        self.q1.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(
            "wire rise, fall;\nIDDRX1F prim(.D(d), .SCLK(clock), .RST(1'b0), .Q0(rise), .Q1(fall));\n\
             always @(*) begin\n    q0 = rise;\n    q1 = fall;\nend\n",
        )
    }
}

/// Global buffer (`DCCA`): drives `o` from `i` over one of the chip's
/// global networks, which reach every slice's clock, reset and clock-enable
/// multiplexers with no general routing. For a synchronous reset of
/// thousands of flip-flops: nextpnr-ecp5 promotes only clocks to the
/// global networks itself, and a reset routed through the general routing
/// crowds it across the whole die (measured in `docs/bitstreams.md`).
///
/// Model: `o` is `i`.
#[derive(LogicBlock, Default)]
pub struct GlobalBuffer {
    /// The signal.
    pub i: Signal<In, Bit>,
    /// The same signal, on a global network.
    pub o: Signal<Out, Bit>,
}

impl Logic for GlobalBuffer {
    fn update(&mut self) {
        self.o.next = self.i.val();
    }

    fn connect(&mut self) {
        self.o.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(
            "wire buffered;\nDCCA prim(.CLKI(i), .CE(1'b1), .CLKO(buffered));\nalways @(*) o = buffered;\n",
        )
    }
}

/// Settings of an `EHXPLLL` making `out` MHz from `input` MHz: the input
/// divider, the feedback divider and the output divider (feedback from the
/// primary output), with the VCO at `out * op` in 400..=800 MHz; and, for
/// a third output of another frequency, its divider of the same VCO.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PllSettings {
    /// `CLKI_DIV`.
    pub clki_div: u32,
    /// `CLKFB_DIV`.
    pub clkfb_div: u32,
    /// `CLKOP_DIV` (and `CLKOS_DIV`: the second output has the same frequency).
    pub clkop_div: u32,
    /// `CLKOS2_DIV`, when the third output is used.
    pub clkos2_div: Option<u32>,
}

impl PllSettings {
    /// The smallest dividers that give exactly `out` from `input` (MHz), if
    /// any: input 8..=400 MHz, phase detector at least 3.125 MHz, VCO
    /// 400..=800 MHz (the ECP5 family data sheet's ranges).
    pub fn exact(input: u32, out: u32) -> Option<Self> {
        Self::exact_with(input, out, None)
    }

    /// As [`Self::exact`], with a third output of exactly `second` MHz from
    /// the same VCO (which must then be a multiple of both).
    pub fn exact_two(input: u32, out: u32, second: u32) -> Option<Self> {
        Self::exact_with(input, out, Some(second))
    }

    fn exact_with(input: u32, out: u32, second: Option<u32>) -> Option<Self> {
        (1..=128u32).find_map(|clki_div| {
            let fb = out * clki_div;
            if fb % input != 0 || f64::from(input) / f64::from(clki_div) < 3.125 {
                return None;
            }
            let clkfb_div = fb / input;
            // The VCO nearest 600 MHz, as Project Trellis' `ecppll` picks.
            let clkop_div = (1..=128u32)
                .filter(|d| (400..=800).contains(&(out * d)))
                .filter(|d| second.is_none_or(|s| (out * d) % s == 0 && out * d / s <= 128))
                .min_by_key(|d| (out * d).abs_diff(600))?;
            (clkfb_div <= 80).then_some(Self {
                clki_div,
                clkfb_div,
                clkop_div,
                clkos2_div: second.map(|s| out * clkop_div / s),
            })
        })
    }

    /// The VCO frequency in MHz.
    pub fn vco(&self, out: u32) -> u32 {
        out * self.clkop_div
    }
}

/// A PLL (`EHXPLLL`) with two outputs of the same frequency: `clk` and
/// `clk90`, a quarter period later (for a forwarded clock centred in its
/// data), `clk2` at the third output's frequency (when the settings have
/// one; otherwise low), and `locked`.
///
/// Model: the outputs follow the input clock (the simulator cannot change
/// frequency) and `locked` is high.
#[derive(LogicBlock)]
pub struct Pll {
    /// Reference clock.
    pub clock_in: Signal<In, Clock>,
    /// Output clock.
    pub clk: Signal<Out, Clock>,
    /// The same, a quarter period later.
    pub clk90: Signal<Out, Clock>,
    /// The third output (`PllSettings::clkos2_div`).
    pub clk2: Signal<Out, Clock>,
    /// The outputs are stable.
    pub locked: Signal<Out, Bit>,
    _settings: PllSettings,
}

impl Pll {
    /// A PLL with `settings`.
    pub fn new(settings: PllSettings) -> Self {
        Self {
            clock_in: Default::default(),
            clk: Default::default(),
            clk90: Default::default(),
            clk2: Default::default(),
            locked: Default::default(),
            _settings: settings,
        }
    }
}

impl Logic for Pll {
    fn update(&mut self) {
        self.clk.next = self.clock_in.val();
        self.clk90.next = self.clock_in.val();
        self.clk2.next = self.clock_in.val();
        self.locked.next = true;
    }

    fn connect(&mut self) {
        self.clk.connect();
        self.clk90.connect();
        self.clk2.connect();
        self.locked.connect();
    }

    fn hdl(&self) -> Verilog {
        let PllSettings {
            clki_div,
            clkfb_div,
            clkop_div,
            clkos2_div,
        } = self._settings;
        // Phases count VCO periods (CPHASE) and eighths of one (FPHASE), as
        // Project Trellis' `ecppll` sets them: CLKOP at (div - 1) / 2, CLKOS
        // a quarter of the output period (div / 4 VCO periods) after it.
        let op_phase = (clkop_div - 1) / 2;
        let quarter_eighths = 2 * clkop_div;
        // The third output, in phase with CLKOP's (its own CPHASE, as
        // `ecppll` sets a secondary output), or off.
        let (os2_enable, os2_div) = match clkos2_div {
            Some(d) => ("ENABLED", d),
            None => ("DISABLED", 1),
        };
        hand_written(format!(
            "wire clkop, clkos, clkos2, lock;
(* ICP_CURRENT=\"12\" *) (* LPF_RESISTOR=\"8\" *) (* MFG_ENABLE_FILTEROPAMP=\"1\" *)
(* MFG_GMCREF_SEL=\"2\" *)
EHXPLLL #(
    .PLLRST_ENA(\"DISABLED\"), .INTFB_WAKE(\"DISABLED\"), .STDBY_ENABLE(\"DISABLED\"),
    .DPHASE_SOURCE(\"DISABLED\"), .OUTDIVIDER_MUXA(\"DIVA\"), .OUTDIVIDER_MUXB(\"DIVB\"),
    .CLKOP_ENABLE(\"ENABLED\"), .CLKOS_ENABLE(\"ENABLED\"),
    .CLKI_DIV({clki_div}), .CLKFB_DIV({clkfb_div}), .FEEDBK_PATH(\"CLKOP\"),
    .CLKOP_DIV({clkop_div}), .CLKOP_CPHASE({op_phase}), .CLKOP_FPHASE(0),
    .CLKOS_DIV({clkop_div}), .CLKOS_CPHASE({os_c}), .CLKOS_FPHASE({os_f}),
    .CLKOS2_ENABLE(\"{os2_enable}\"), .CLKOS2_DIV({os2_div}), .CLKOS2_CPHASE({os2_c}),
    .CLKOS2_FPHASE(0)
) prim (
    .CLKI(clock_in), .CLKFB(clkop), .CLKOP(clkop), .CLKOS(clkos), .CLKOS2(clkos2), .LOCK(lock),
    .RST(1'b0), .STDBY(1'b0), .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1),
    .PHASESTEP(1'b1), .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0)
);
always @(*) begin
    clk = clkop;
    clk90 = clkos;
    clk2 = clkos2;
    locked = lock;
end
",
            os_c = op_phase + quarter_eighths / 8,
            os_f = quarter_eighths % 8,
            os2_c = (os2_div - 1) / 2,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pll_settings_for_the_butterstick_clock() {
        let s = PllSettings::exact(30, 125).expect("30 MHz to 125 MHz");
        assert_eq!(30 * s.clkfb_div, 125 * s.clki_div);
        assert!((400..=800).contains(&s.vco(125)));
        assert_eq!(s.clkos2_div, None);
    }

    #[test]
    fn pll_settings_with_a_core_clock() {
        let s = PllSettings::exact_two(30, 125, 20).expect("125 and 20 MHz from 30");
        assert_eq!(30 * s.clkfb_div, 125 * s.clki_div);
        let vco = s.vco(125);
        assert!((400..=800).contains(&vco));
        assert_eq!(vco, 20 * s.clkos2_div.expect("a third output"));
        assert_eq!(PllSettings::exact_two(30, 125, 7), None);
    }
}
