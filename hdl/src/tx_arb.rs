//! MAC transmit arbiter: two frame sources share one AXI-Stream, frame by
//! frame.
//!
//! [`TxArb`] forwards whole frames from `s_ack_*` (ACK frames) and
//! `s_data_*` (data frames from the TX builder) to `m_axis_*`, one beat per
//! cycle, never mixing beats of two frames. **Policy: round robin per
//! frame.** When both sources have a frame waiting at a frame boundary,
//! the one not served last goes; a lone source goes at once. So an ACK
//! waits at most one data frame and data frames are never starved by ACKs.
//!
//! The choice is made from the sources' `tvalid` only and is locked from
//! the cycle the first beat is shown until the last beat is taken, so a
//! beat, once offered on `m_axis_*`, stays until it is taken (AXI-Stream),
//! even if the other source becomes valid meanwhile. The path is
//! combinational (multiplexer, no register): no bubble between frames and
//! no added latency.
//!
//! Hand-written Verilog; verified under Verilator inside [`crate::NicCore`].

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

/// The arbiter at `W`-bit beats (`B = W / 8` lanes).
#[derive(LogicBlock, Default)]
pub struct TxArb<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no frame in progress, ACKs first next.
    pub rst: Signal<In, Bit>,
    /// ACK frame beats.
    pub s_ack_tdata: Signal<In, Bits<W>>,
    /// ACK byte enables.
    pub s_ack_tkeep: Signal<In, Bits<B>>,
    /// ACK beat valid.
    pub s_ack_tvalid: Signal<In, Bit>,
    /// ACK beat taken.
    pub s_ack_tready: Signal<Out, Bit>,
    /// Last beat of an ACK frame.
    pub s_ack_tlast: Signal<In, Bit>,
    /// Data frame beats.
    pub s_data_tdata: Signal<In, Bits<W>>,
    /// Data byte enables.
    pub s_data_tkeep: Signal<In, Bits<B>>,
    /// Data beat valid.
    pub s_data_tvalid: Signal<In, Bit>,
    /// Data beat taken.
    pub s_data_tready: Signal<Out, Bit>,
    /// Last beat of a data frame.
    pub s_data_tlast: Signal<In, Bit>,
    /// MAC beats.
    pub m_axis_tdata: Signal<Out, Bits<W>>,
    /// MAC byte enables.
    pub m_axis_tkeep: Signal<Out, Bits<B>>,
    /// MAC beat valid.
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// The MAC takes the beat.
    pub m_axis_tready: Signal<In, Bit>,
    /// Last beat of a frame.
    pub m_axis_tlast: Signal<Out, Bit>,
}

impl<const W: usize, const B: usize> Logic for TxArb<W, B> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "TxArb: W must be 8 * B");
        self.s_ack_tready.connect();
        self.s_data_tready.connect();
        self.m_axis_tdata.connect();
        self.m_axis_tkeep.connect();
        self.m_axis_tvalid.connect();
        self.m_axis_tlast.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(
            "reg locked;    // a frame is in progress on m_axis
reg owner;     // its source: 1 ACK, 0 data
reg last_ack;  // the last frame served was an ACK frame
reg sel;
always @(*) begin
    if (locked) sel = owner;
    else if (s_ack_tvalid && s_data_tvalid) sel = !last_ack;
    else sel = s_ack_tvalid;
    m_axis_tvalid = sel ? s_ack_tvalid : s_data_tvalid;
    m_axis_tdata = sel ? s_ack_tdata : s_data_tdata;
    m_axis_tkeep = sel ? s_ack_tkeep : s_data_tkeep;
    m_axis_tlast = sel ? s_ack_tlast : s_data_tlast;
    s_ack_tready = sel && m_axis_tready;
    s_data_tready = !sel && m_axis_tready;
end
always @(posedge clock) begin
    if (m_axis_tvalid) begin
        owner <= sel;
        locked <= !(m_axis_tready && m_axis_tlast);
        if (m_axis_tready && m_axis_tlast) last_ack <= sel;
    end
    if (rst) begin
        locked <= 1'b0;
        last_ack <= 1'b0;
    end
end
",
        )
    }
}
