//! [`MacTx`]: frames from an 8-bit AXI-Stream onto GMII.

use rust_hdl::prelude::*;

use super::{CrcByte, MIN_PAYLOAD};
use crate::helpers::native_block;

/// Where [`MacTx`] is in a frame.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum TxState {
    /// Line idle, waiting for a frame's first byte.
    Idle,
    /// Seven preamble bytes and the SFD.
    Preamble,
    /// The frame's bytes, one per clock.
    Data,
    /// Zero bytes up to [`MIN_PAYLOAD`].
    Pad,
    /// The four FCS bytes.
    Fcs,
    /// The inter-frame gap.
    Gap,
}

native_block! {
    /// GMII transmit MAC: takes a frame (destination MAC onward, no FCS) from
    /// `s_axis_*`, one byte per clock, and sends preamble, SFD, the frame, zero
    /// padding to 60 bytes, its FCS and a 12-byte gap on `gmii_*`.
    ///
    /// The upstream must deliver a frame's bytes on consecutive clocks once its
    /// first byte was taken (GMII cannot pause): a clock without a byte in the
    /// middle of a frame is sent as a transmit error (`gmii_tx_er`), so the
    /// receiver drops the frame, and is counted in `underruns`. A store-and-forward
    /// FIFO in front guarantees it. `gmii_*` are registered.
    MacTx []
    ports {
        /// The GMII transmit clock (125 MHz).
        clock: Signal<In, Clock>,
        /// Synchronous reset: idle, counters zero.
        rst: Signal<In, Bit>,
        /// Frame byte.
        s_axis_tdata: Signal<In, Bits<8>>,
        /// A byte is offered.
        s_axis_tvalid: Signal<In, Bit>,
        /// It is the frame's last.
        s_axis_tlast: Signal<In, Bit>,
        /// The byte is taken this clock.
        s_axis_tready: Signal<Out, Bit>,
        /// GMII transmit data.
        gmii_txd: Signal<Out, Bits<8>>,
        /// GMII transmit enable.
        gmii_tx_en: Signal<Out, Bit>,
        /// GMII transmit error.
        gmii_tx_er: Signal<Out, Bit>,
        /// Frames sent (wraps).
        frames: Signal<Out, Bits<32>>,
        /// Clocks without a byte inside a frame (wraps).
        underruns: Signal<Out, Bits<32>>,
    }
    state {
        state: DFF<TxState>,
        step: DFF<Bits<4>>,
        len: DFF<Bits<16>>,
        crc: DFF<Bits<32>>,
        txd: DFF<Bits<8>>,
        tx_en: DFF<Bit>,
        tx_er: DFF<Bit>,
        n_frames: DFF<Bits<32>>,
        n_underruns: DFF<Bits<32>>,
        step_crc: CrcByte,
    }
    consts {
        c_min: Constant<Bits<16>> = Constant::new(MIN_PAYLOAD.to_bits()),
        c_init: Constant<Bits<32>> = Constant::new(u32::MAX.to_bits()),
    }
}

impl Logic for MacTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            step,
            len,
            crc,
            txd,
            tx_en,
            tx_er,
            n_frames,
            n_underruns
        );
        self.gmii_txd.next = self.txd.q.val();
        self.gmii_tx_en.next = self.tx_en.q.val();
        self.gmii_tx_er.next = self.tx_er.q.val();
        self.frames.next = self.n_frames.q.val();
        self.underruns.next = self.n_underruns.q.val();
        self.s_axis_tready.next = self.state.q.val() == TxState::Data;
        // The byte the CRC takes this clock: the frame's, or a pad byte.
        self.step_crc.crc_in.next = self.crc.q.val();
        self.step_crc.octet.next = 0.into();
        if self.state.q.val() == TxState::Data {
            self.step_crc.octet.next = self.s_axis_tdata.val();
        }
        self.tx_en.d.next = false;
        self.tx_er.d.next = false;
        self.txd.d.next = 0.into();
        match self.state.q.val() {
            TxState::Idle => {
                if self.s_axis_tvalid.val() {
                    self.state.d.next = TxState::Preamble;
                    self.step.d.next = 0.into();
                }
            }
            TxState::Preamble => {
                self.tx_en.d.next = true;
                self.txd.d.next = 0x55.into();
                self.step.d.next = self.step.q.val() + 1;
                if self.step.q.val() == 7 {
                    self.txd.d.next = 0xD5.into();
                    self.state.d.next = TxState::Data;
                    self.len.d.next = 0.into();
                    self.crc.d.next = self.c_init.val();
                }
            }
            TxState::Data => {
                self.tx_en.d.next = true;
                if self.s_axis_tvalid.val() {
                    self.txd.d.next = self.s_axis_tdata.val();
                    self.crc.d.next = self.step_crc.crc_out.val();
                    self.len.d.next = self.len.q.val() + 1;
                    if self.s_axis_tlast.val() {
                        self.step.d.next = 0.into();
                        if self.len.q.val() + 1 < self.c_min.val() {
                            self.state.d.next = TxState::Pad;
                        } else {
                            self.state.d.next = TxState::Fcs;
                        }
                    }
                } else {
                    self.tx_er.d.next = true;
                    self.n_underruns.d.next = self.n_underruns.q.val() + 1;
                }
            }
            TxState::Pad => {
                self.tx_en.d.next = true;
                self.crc.d.next = self.step_crc.crc_out.val();
                self.len.d.next = self.len.q.val() + 1;
                if self.len.q.val() + 1 == self.c_min.val() {
                    self.state.d.next = TxState::Fcs;
                }
            }
            TxState::Fcs => {
                self.tx_en.d.next = true;
                // The FCS is the inverted register, low byte first.
                self.txd.d.next = !self.crc.q.val().get_bits::<8>(0);
                self.crc.d.next = self.crc.q.val() >> 8;
                self.step.d.next = self.step.q.val() + 1;
                if self.step.q.val() == 3 {
                    self.state.d.next = TxState::Gap;
                    self.step.d.next = 0.into();
                    self.n_frames.d.next = self.n_frames.q.val() + 1;
                }
            }
            TxState::Gap => {
                self.step.d.next = self.step.q.val() + 1;
                if self.step.q.val() == 10 {
                    self.state.d.next = TxState::Idle;
                }
            }
        }
        if self.rst.val() {
            self.state.d.next = TxState::Idle;
            self.tx_en.d.next = false;
            self.tx_er.d.next = false;
            self.n_frames.d.next = 0.into();
            self.n_underruns.d.next = 0.into();
        }
    }
}
