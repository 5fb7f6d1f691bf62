//! [`MacRx`]: GMII to whole, checked frames on an 8-bit AXI-Stream.

use rust_hdl::prelude::*;

use line::MacRxLine;
use out::MacRxOut;

mod line;
mod out;

/// Address bits of [`MacRx`]'s frame buffer: 4 KiB, two ECP5 block RAMs
/// (one 2:1 multiplexer on the read side: eight, for 4 KiB, cost 125 MHz),
/// room for two full-size frames; frames over 4 KiB (jumbo) are dropped.
pub const RX_BUFFER_BITS: usize = 12;

/// GMII receive MAC, store and forward: each frame's bytes go into a 4 KiB
/// ring (`RX_BUFFER_BITS`, 9 bits per byte: the byte and a last-byte
/// mark) as they arrive. When the line goes idle the frame is committed if
/// its FCS is right, no receive error was signalled, it has at least 64
/// bytes with its FCS, and it fitted: its last byte before the FCS is
/// rewritten with the mark and the committed end moves there, so the next
/// frame overwrites the FCS. Otherwise its bytes are forgotten and one
/// counter says why. Committed frames leave on `m_axis_*`, one byte per
/// clock, without their FCS.
///
/// Latency: a frame starts to leave 5 clocks after its last FCS byte was on
/// `gmii_*`. Inputs and outputs are registered.
///
/// Two sub-blocks: `MacRxLine` (`line.rs`) holds the ring and writes and
/// judges the frames, `MacRxOut` (`out.rs`) reads the committed ones out
/// through the ring's read port; each gives the other its pointer (both
/// registers).
#[derive(LogicBlock, Default)]
pub struct MacRx {
    /// The GMII receive clock (125 MHz).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: buffer empty, counters zero.
    pub rst: Signal<In, Bit>,
    /// GMII receive data.
    pub gmii_rxd: Signal<In, Bits<8>>,
    /// GMII receive data valid.
    pub gmii_rx_dv: Signal<In, Bit>,
    /// GMII receive error.
    pub gmii_rx_er: Signal<In, Bit>,
    /// Frame byte.
    pub m_axis_tdata: Signal<Out, Bits<8>>,
    /// A byte is offered.
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// It is the frame's last.
    pub m_axis_tlast: Signal<Out, Bit>,
    /// The byte is taken this clock.
    pub m_axis_tready: Signal<In, Bit>,
    /// Frames committed (wraps).
    pub frames: Signal<Out, Bits<32>>,
    /// Frames dropped for a wrong FCS.
    pub fcs_errors: Signal<Out, Bits<32>>,
    /// Frames dropped for a receive error signalled by the PHY.
    pub rx_errors: Signal<Out, Bits<32>>,
    /// Frames dropped for being shorter than 64 bytes with their FCS.
    pub runts: Signal<Out, Bits<32>>,
    /// Frames dropped for want of room in the buffer or the queue.
    pub no_room: Signal<Out, Bits<32>>,
    line: MacRxLine,
    out: MacRxOut,
}

impl Logic for MacRx {
    #[hdl_gen]
    fn update(&mut self) {
        self.line.clock.next = self.clock.val();
        self.out.clock.next = self.clock.val();
        self.line.rst.next = self.rst.val();
        self.out.rst.next = self.rst.val();

        // Line side: GMII into the ring.
        self.line.gmii_rxd.next = self.gmii_rxd.val();
        self.line.gmii_rx_dv.next = self.gmii_rx_dv.val();
        self.line.gmii_rx_er.next = self.gmii_rx_er.val();
        self.line.read_ptr.next = self.out.read_ptr.val();
        self.frames.next = self.line.frames.val();
        self.fcs_errors.next = self.line.fcs_errors.val();
        self.rx_errors.next = self.line.rx_errors.val();
        self.runts.next = self.line.runts.val();
        self.no_room.next = self.line.no_room.val();

        // Stream side: committed frames out of the ring.
        self.out.committed.next = self.line.committed.val();
        self.line.ring_raddr.next = self.out.ring_addr.val();
        self.out.ring_data.next = self.line.ring_rdata.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();
    }
}
