//! [`AxilBar`]: an AXI4-Lite slave onto the device's BAR port.

use rust_hdl::prelude::*;

/// An AXI4-Lite slave (32-bit data, 16-bit address) onto
/// [`crate::NicDevice`]'s `bar_*` port.
///
/// A write is taken when its address and its data are both offered
/// (`AWREADY` and `WREADY` together, so the two are one `bar_wr` in
/// that cycle) and no write response is waiting; `WSTRB` is ignored
/// (the device's registers are whole words). A read is taken while
/// none is in progress: its address goes to `bar_rd` in that cycle,
/// and `bar_rd_resp` (two cycles later, §18) becomes the R beat. Both
/// responses are `OKAY`: a bad access is the device's to count
/// (`ID.BAR_BAD`). One write and one read may be in progress at once.
#[derive(LogicBlock, Default)]
pub struct AxilBar {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no response waiting.
    pub rst: Signal<In, Bit>,
    /// AXI-Lite write address: valid.
    pub s_axil_awvalid: Signal<In, Bit>,
    /// AXI-Lite write address: taken.
    pub s_axil_awready: Signal<Out, Bit>,
    /// AXI-Lite write address (bytes).
    pub s_axil_awaddr: Signal<In, Bits<16>>,
    /// AXI-Lite write data: valid.
    pub s_axil_wvalid: Signal<In, Bit>,
    /// AXI-Lite write data: taken.
    pub s_axil_wready: Signal<Out, Bit>,
    /// AXI-Lite write data.
    pub s_axil_wdata: Signal<In, Bits<32>>,
    /// AXI-Lite write response: valid.
    pub s_axil_bvalid: Signal<Out, Bit>,
    /// AXI-Lite write response: taken.
    pub s_axil_bready: Signal<In, Bit>,
    /// AXI-Lite write response (`OKAY`).
    pub s_axil_bresp: Signal<Out, Bits<2>>,
    /// AXI-Lite read address: valid.
    pub s_axil_arvalid: Signal<In, Bit>,
    /// AXI-Lite read address: taken.
    pub s_axil_arready: Signal<Out, Bit>,
    /// AXI-Lite read address (bytes).
    pub s_axil_araddr: Signal<In, Bits<16>>,
    /// AXI-Lite read data: valid.
    pub s_axil_rvalid: Signal<Out, Bit>,
    /// AXI-Lite read data: taken.
    pub s_axil_rready: Signal<In, Bit>,
    /// AXI-Lite read data.
    pub s_axil_rdata: Signal<Out, Bits<32>>,
    /// AXI-Lite read response (`OKAY`).
    pub s_axil_rresp: Signal<Out, Bits<2>>,
    /// To the device: a register write this cycle.
    pub bar_wr_valid: Signal<Out, Bit>,
    /// To the device: the write's byte address.
    pub bar_wr_addr: Signal<Out, Bits<16>>,
    /// To the device: the write's data.
    pub bar_wr_data: Signal<Out, Bits<32>>,
    /// To the device: a register read this cycle.
    pub bar_rd_valid: Signal<Out, Bit>,
    /// To the device: the read's byte address.
    pub bar_rd_addr: Signal<Out, Bits<16>>,
    /// From the device: the read's value is here.
    pub bar_rd_resp_valid: Signal<In, Bit>,
    /// From the device: the read's value.
    pub bar_rd_resp_data: Signal<In, Bits<32>>,
    // A write response is offered; a read is in progress (asked,
    // then its value offered); the value.
    b_pend: DFF<Bit>,
    r_busy: DFF<Bit>,
    r_have: DFF<Bit>,
    r_data: DFF<Bits<32>>,
    // Temporary: the write is taken.
    w_fire: Signal<Local, Bit>,
}

impl Logic for AxilBar {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, b_pend, r_busy, r_have, r_data);

        // Write: address and data together, one response at a time.
        self.w_fire.next =
            self.s_axil_awvalid.val() & self.s_axil_wvalid.val() & !self.b_pend.q.val();
        self.s_axil_awready.next = self.w_fire.val();
        self.s_axil_wready.next = self.w_fire.val();
        self.bar_wr_valid.next = self.w_fire.val();
        self.bar_wr_addr.next = self.s_axil_awaddr.val();
        self.bar_wr_data.next = self.s_axil_wdata.val();
        self.s_axil_bvalid.next = self.b_pend.q.val();
        self.s_axil_bresp.next = 0.into();
        if self.b_pend.q.val() & self.s_axil_bready.val() {
            self.b_pend.d.next = false;
        }
        if self.w_fire.val() {
            self.b_pend.d.next = true;
        }

        // Read: one at a time; the device answers two cycles later.
        self.s_axil_arready.next = !self.r_busy.q.val();
        self.bar_rd_valid.next = self.s_axil_arvalid.val() & !self.r_busy.q.val();
        self.bar_rd_addr.next = self.s_axil_araddr.val();
        self.s_axil_rvalid.next = self.r_have.q.val();
        self.s_axil_rdata.next = self.r_data.q.val();
        self.s_axil_rresp.next = 0.into();
        if self.bar_rd_resp_valid.val() & self.r_busy.q.val() & !self.r_have.q.val() {
            self.r_have.d.next = true;
            self.r_data.d.next = self.bar_rd_resp_data.val();
        }
        if self.r_have.q.val() & self.s_axil_rready.val() {
            self.r_have.d.next = false;
            self.r_busy.d.next = false;
        }
        if self.bar_rd_valid.val() {
            self.r_busy.d.next = true;
        }

        if self.rst.val() {
            self.b_pend.d.next = false;
            self.r_busy.d.next = false;
            self.r_have.d.next = false;
        }
    }
}
