//! [`MacRx`]: GMII to whole, checked frames on an 8-bit AXI-Stream.

use rust_hdl::prelude::*;

use super::{CrcByte, FCS_RESIDUE, MIN_PAYLOAD};

/// Address bits of [`MacRx`]'s frame buffer: 4 KiB, two ECP5 block RAMs
/// (one 2:1 multiplexer on the read side: eight, for 4 KiB, cost 125 MHz),
/// room for two full-size frames; frames over 4 KiB (jumbo) are dropped.
pub const RX_BUFFER_BITS: usize = 12;

/// Where [`MacRx`] is on the line.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum RxState {
    /// Line idle (or a frame just ended).
    Idle,
    /// In the preamble, waiting for the SFD.
    Preamble,
    /// In a frame's bytes (its FCS included).
    Data,
    /// In a frame being ignored (no preamble), until the line is idle.
    Skip,
}

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
#[derive(LogicBlock)]
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
    state: DFF<RxState>,
    rxd: DFF<Bits<8>>,
    rxdv: DFF<Bit>,
    rxer: DFF<Bit>,
    crc: DFF<Bits<32>>,
    len: DFF<Bits<16>>,
    err: DFF<Bit>,
    full: DFF<Bit>,
    hist: DFF<Bits<40>>,
    w_start: DFF<Bits<13>>,
    w_ptr: DFF<Bits<13>>,
    r_ptr: DFF<Bits<13>>,
    r_issued: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<9>>,
    s_valid: DFF<Bit>,
    s_data: DFF<Bits<9>>,
    n_frames: DFF<Bits<32>>,
    n_fcs: DFF<Bits<32>>,
    n_err: DFF<Bits<32>>,
    n_runt: DFF<Bits<32>>,
    n_room: DFF<Bits<32>>,
    ring: RAM<Bits<9>, 12>,
    check: CrcByte,
    used: Signal<Local, Bits<13>>,
    take: Signal<Local, Bit>,
    held: Signal<Local, Bits<2>>,
    c_residue: Constant<Bits<32>>,
    c_min: Constant<Bits<16>>,
    c_init: Constant<Bits<32>>,
    c_mark: Constant<Bits<9>>,
    c_cap: Constant<Bits<13>>,
}

impl Default for MacRx {
    fn default() -> Self {
        assert_eq!(
            RX_BUFFER_BITS, 12,
            "the buffer's RAM and pointers are sized for 12 bits"
        );
        Self {
            clock: Default::default(),
            rst: Default::default(),
            gmii_rxd: Default::default(),
            gmii_rx_dv: Default::default(),
            gmii_rx_er: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tready: Default::default(),
            frames: Default::default(),
            fcs_errors: Default::default(),
            rx_errors: Default::default(),
            runts: Default::default(),
            no_room: Default::default(),
            state: Default::default(),
            rxd: Default::default(),
            rxdv: Default::default(),
            rxer: Default::default(),
            crc: Default::default(),
            len: Default::default(),
            err: Default::default(),
            full: Default::default(),
            hist: Default::default(),
            w_start: Default::default(),
            w_ptr: Default::default(),
            r_ptr: Default::default(),
            r_issued: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            s_valid: Default::default(),
            s_data: Default::default(),
            n_frames: Default::default(),
            n_fcs: Default::default(),
            n_err: Default::default(),
            n_runt: Default::default(),
            n_room: Default::default(),
            ring: Default::default(),
            check: Default::default(),
            used: Default::default(),
            take: Default::default(),
            held: Default::default(),
            c_residue: Constant::new(FCS_RESIDUE.to_bits()),
            c_init: Constant::new(u32::MAX.to_bits()),
            c_min: Constant::new((MIN_PAYLOAD + 4).to_bits()),
            c_mark: Constant::new(0x100usize.to_bits()),
            c_cap: Constant::new((1usize << RX_BUFFER_BITS).to_bits()),
        }
    }
}

impl Logic for MacRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, rxd, rxdv, rxer, crc, len, err, full, hist, w_start, w_ptr, r_ptr,
            r_issued, o_valid, o_data, s_valid, s_data, n_frames, n_fcs, n_err, n_runt, n_room
        );
        self.ring.read_clock.next = self.clock.val();
        self.ring.write_clock.next = self.clock.val();
        self.frames.next = self.n_frames.q.val();
        self.fcs_errors.next = self.n_fcs.q.val();
        self.rx_errors.next = self.n_err.q.val();
        self.runts.next = self.n_runt.q.val();
        self.no_room.next = self.n_room.q.val();

        // ---- Line side: registered GMII into the ring. ----
        self.rxd.d.next = self.gmii_rxd.val();
        self.rxdv.d.next = self.gmii_rx_dv.val();
        self.rxer.d.next = self.gmii_rx_er.val();
        self.check.crc_in.next = self.crc.q.val();
        self.check.octet.next = self.rxd.q.val();
        self.ring.write_address.next = bit_cast::<12, 13>(self.w_ptr.q.val());
        self.ring.write_data.next = bit_cast::<9, 8>(self.rxd.q.val());
        self.ring.write_enable.next = false;
        // Bytes in the ring, unread or of the frame arriving: 2^12 is full.
        self.used.next = self.w_ptr.q.val() - self.r_ptr.q.val();
        match self.state.q.val() {
            RxState::Idle => {
                if self.rxdv.q.val() {
                    if self.rxd.q.val() == 0x55 {
                        self.state.d.next = RxState::Preamble;
                    } else {
                        self.state.d.next = RxState::Skip;
                    }
                }
            }
            RxState::Preamble => {
                if !self.rxdv.q.val() {
                    self.state.d.next = RxState::Idle;
                } else if self.rxd.q.val() == 0xD5 {
                    self.state.d.next = RxState::Data;
                    self.crc.d.next = self.c_init.val();
                    self.len.d.next = 0.into();
                    self.err.d.next = false;
                    self.full.d.next = false;
                    self.w_ptr.d.next = self.w_start.q.val();
                } else if self.rxd.q.val() != 0x55 {
                    self.state.d.next = RxState::Skip;
                }
            }
            RxState::Data => {
                if self.rxdv.q.val() {
                    self.crc.d.next = self.check.crc_out.val();
                    self.len.d.next = self.len.q.val() + 1;
                    if self.rxer.q.val() {
                        self.err.d.next = true;
                    }
                    if (self.used.val() == self.c_cap.val()) | self.full.q.val() {
                        self.full.d.next = true;
                    } else {
                        self.ring.write_enable.next = true;
                        self.w_ptr.d.next = self.w_ptr.q.val() + 1;
                        self.hist.d.next =
                            (self.hist.q.val() << 8) | bit_cast::<40, 8>(self.rxd.q.val());
                    }
                } else {
                    self.state.d.next = RxState::Idle;
                    if self.err.q.val() {
                        self.n_err.d.next = self.n_err.q.val() + 1;
                    } else if self.crc.q.val() != self.c_residue.val() {
                        self.n_fcs.d.next = self.n_fcs.q.val() + 1;
                    } else if self.len.q.val() < self.c_min.val() {
                        self.n_runt.d.next = self.n_runt.q.val() + 1;
                    } else if self.full.q.val() {
                        self.n_room.d.next = self.n_room.q.val() + 1;
                    } else {
                        // Committed: the byte before the FCS marked last,
                        // and the next frame overwrites the FCS.
                        self.ring.write_address.next = bit_cast::<12, 13>(self.w_ptr.q.val() - 5);
                        self.ring.write_data.next =
                            bit_cast::<9, 8>(self.hist.q.val().get_bits::<8>(32))
                                | self.c_mark.val();
                        self.ring.write_enable.next = true;
                        self.w_start.d.next = self.w_ptr.q.val() - 4;
                        self.n_frames.d.next = self.n_frames.q.val() + 1;
                    }
                }
            }
            RxState::Skip => {
                if !self.rxdv.q.val() {
                    self.state.d.next = RxState::Idle;
                }
            }
        }

        // ---- Stream side: committed frames out of the ring. ----
        // A read issued in one clock (`r_ptr` then moves on) arrives from
        // the RAM in the next (`r_issued`) and goes to the output register,
        // or to the skid register while the output holds a byte not taken.
        // A read is issued while the output, the skid and the read in
        // flight leave a place for it, so the outputs are registers and
        // bytes still leave one per clock.
        self.m_axis_tvalid.next = self.o_valid.q.val();
        self.m_axis_tdata.next = self.o_data.q.val().get_bits::<8>(0);
        self.m_axis_tlast.next = self.o_data.q.val().get_bit(8);
        self.take.next = self.o_valid.q.val() & self.m_axis_tready.val();
        self.ring.read_address.next = bit_cast::<12, 13>(self.r_ptr.q.val());
        self.held.next = 0.into();
        if self.o_valid.q.val() {
            self.held.next = self.held.val() + 1;
        }
        if self.s_valid.q.val() {
            self.held.next = self.held.val() + 1;
        }
        if self.r_issued.q.val() {
            self.held.next = self.held.val() + 1;
        }
        if self.take.val() {
            self.held.next = self.held.val() - 1;
        }
        self.r_issued.d.next = false;
        if (self.r_ptr.q.val() != self.w_start.q.val()) & (self.held.val() < 2) {
            self.r_issued.d.next = true;
            self.r_ptr.d.next = self.r_ptr.q.val() + 1;
        }
        if self.take.val() | !self.o_valid.q.val() {
            // The output takes the skid's byte, else the RAM's.
            if self.s_valid.q.val() {
                self.o_valid.d.next = true;
                self.o_data.d.next = self.s_data.q.val();
                self.s_valid.d.next = self.r_issued.q.val();
                self.s_data.d.next = self.ring.read_data.val();
            } else {
                self.o_valid.d.next = self.r_issued.q.val();
                self.o_data.d.next = self.ring.read_data.val();
            }
        } else if self.r_issued.q.val() {
            self.s_valid.d.next = true;
            self.s_data.d.next = self.ring.read_data.val();
        }

        if self.rst.val() {
            self.state.d.next = RxState::Idle;
            self.w_start.d.next = 0.into();
            self.w_ptr.d.next = 0.into();
            self.r_ptr.d.next = 0.into();
            self.r_issued.d.next = false;
            self.o_valid.d.next = false;
            self.s_valid.d.next = false;
            self.n_frames.d.next = 0.into();
            self.n_fcs.d.next = 0.into();
            self.n_err.d.next = 0.into();
            self.n_runt.d.next = 0.into();
            self.n_room.d.next = 0.into();
        }
    }
}
