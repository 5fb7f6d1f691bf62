// Simulation stand-ins for the ECP5 primitives the board tops instantiate
// (hdl/src/board/ecp5.rs): enough for Verilator to lint the emitted tops
// (the hdl crate's test `board::butterstick::tests`) and to run them in a
// simulator, not a model of the silicon. yosys `synth_ecp5` maps the real
// cells from its own library: this file is never synthesised.
//
// The ports and parameters are the ones the leaves use, with the vendor's
// names; what a stand-in cannot model (the PLL's dividers and phases, its
// control pins) it takes and ignores, each waived below where it is.

// Output DDR register: D0 on the pin while SCLK is high, D1 while it is
// low, both taken at the rising edge.
module ODDRX1F (input wire D0, D1, SCLK, RST, output wire Q);
    reg r0 = 1'b0;
    reg r1 = 1'b0;
    always @(posedge SCLK) begin
        r0 <= RST ? 1'b0 : D0;
        r1 <= RST ? 1'b0 : D1;
    end
    assign Q = SCLK ? r0 : r1;
endmodule

// Input DDR register: Q0 the pin at a rising edge, Q1 at the falling edge
// after it, both presented at the next rising edge.
module IDDRX1F (input wire D, SCLK, RST, output reg Q0, Q1);
    reg rise = 1'b0;
    reg fall = 1'b0;
    always @(negedge SCLK) fall <= D;
    always @(posedge SCLK) begin
        rise <= D;
        Q0 <= RST ? 1'b0 : rise;
        Q1 <= RST ? 1'b0 : fall;
    end
endmodule

// Global buffer: CLKO follows CLKI while CE is high (the tops tie CE high).
module DCCA (input wire CLKI, CE, output wire CLKO);
    assign CLKO = CLKI & CE;
endmodule

// PLL: every output is the reference clock and LOCK is high (a simulator
// run cannot change a clock's frequency here; the tops' testbenches drive
// the clocks they need).
module EHXPLLL #(
    // The settings the leaf sets, by output, and the loop's.
    parameter CLKOP_ENABLE = "ENABLED", CLKOP_DIV = 8, CLKOP_CPHASE = 0, CLKOP_FPHASE = 0,
    parameter CLKOS_ENABLE = "DISABLED", CLKOS_DIV = 8, CLKOS_CPHASE = 0, CLKOS_FPHASE = 0,
    parameter CLKOS2_ENABLE = "DISABLED", CLKOS2_DIV = 8, CLKOS2_CPHASE = 0, CLKOS2_FPHASE = 0,
    parameter CLKI_DIV = 1, CLKFB_DIV = 1, FEEDBK_PATH = "CLKOP",
    parameter OUTDIVIDER_MUXA = "DIVA", OUTDIVIDER_MUXB = "DIVB",
    parameter PLLRST_ENA = "DISABLED", INTFB_WAKE = "DISABLED", STDBY_ENABLE = "DISABLED",
    parameter DPHASE_SOURCE = "DISABLED"
) (
    input  wire CLKI,
    // The stand-in has no feedback loop and no control: these pins are
    // taken and not read.
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire CLKFB, RST, STDBY, PLLWAKESYNC, ENCLKOP,
    input  wire PHASESEL0, PHASESEL1, PHASEDIR, PHASESTEP, PHASELOADREG,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire CLKOP, CLKOS, CLKOS2, LOCK
);
    assign CLKOP = CLKI;
    assign CLKOS = CLKI;
    assign CLKOS2 = CLKI;
    assign LOCK = 1'b1;
endmodule
