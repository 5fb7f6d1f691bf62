//! [`MgmtRecv`]: a management request's bytes, from the sync byte to its
//! CRC, and the engine's counters.

use rust_hdl::prelude::*;

use super::header::MgmtHeader;
use super::links::RecvOut;
use super::proto::SYNC_REQ;
use crate::helpers::{konst, native_block};
use crate::mac::{CrcByte, FCS_RESIDUE};

/// Where [`MgmtRecv`] is in a request.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum State {
    /// Waiting for a request's sync byte (other bytes are counted as junk).
    Idle,
    /// The header's op, address and length bytes.
    Header,
    /// One clock: the header judged.
    Check,
    /// A write's data bytes.
    Data,
    /// The request's four CRC bytes.
    Crc,
    /// The request being done and answered (bytes are junk) until the
    /// response's last byte.
    Busy,
}

native_block! {
    /// The receiving side of [`super::MgmtEngine`]: takes a request's bytes,
    /// its header into a [`MgmtHeader`], every byte of the frame through the
    /// CRC; hands a refused header, or the whole request, over (`m_acc`), and
    /// waits for the response's end. A frame with no byte for `idle_clocks`
    /// clocks is dropped. Counts the bytes outside a frame, the bad frames
    /// (its own refusals and `m_acc.bad`) and the timeouts.
    MgmtRecv [M]
    /// The side that drops a frame after `idle_clocks` clocks without a byte.
    fn new(idle_clocks: usize);
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: idle, counters zero.
        rst: Signal<In, Bit>,
        /// A received byte.
        rx_data: Signal<In, Bits<8>>,
        /// `rx_data` is a new byte (one clock per byte).
        rx_valid: Signal<In, Bit>,
        /// The request, to the access side.
        m_acc: RecvOut,
    }
    state {
        hdr: MgmtHeader<M>,
        step: CrcByte,
        state: DFF<State>,
        cnt: DFF<Bits<16>>,
        crc: DFF<Bits<32>>,
        idle: DFF<Bits<32>>,
        n_junk: DFF<Bits<32>>,
        n_bad: DFF<Bits<32>>,
        n_timeout: DFF<Bits<32>>,
        // A request's bytes are being received.
        in_frame: Signal<Local, Bit>,
    }
    consts {
        k_sync_req: Constant<Bits<8>> = konst(SYNC_REQ.into()),
        k_init: Constant<Bits<32>> = konst(u32::MAX as usize),
        k_residue: Constant<Bits<32>> = konst(FCS_RESIDUE as usize),
        k_idle: Constant<Bits<32>> = konst(idle_clocks),
    }
}

impl<const M: usize> Logic for MgmtRecv<M> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, cnt, crc, idle, n_junk, n_bad, n_timeout);
        self.hdr.clock.next = self.clock.val();
        self.hdr.shift.next = (self.state.q.val() == State::Header) & self.rx_valid.val();
        self.hdr.din.next = self.rx_data.val();
        self.step.crc_in.next = self.crc.q.val();
        self.step.octet.next = self.rx_data.val();
        self.m_acc.exec.next = false;
        self.m_acc.crc_ok.next = self.crc.q.val() == self.k_residue.val();
        self.m_acc.refuse.next = false;
        self.m_acc.why.next = self.hdr.why.val();
        self.m_acc.data.next = false;
        self.m_acc.idx.next = self.cnt.q.val().get_bits::<8>(0);
        self.m_acc.op.next = self.hdr.op.val();
        self.m_acc.addr.next = self.hdr.addr.val();
        self.m_acc.len.next = self.hdr.len.val();
        self.m_acc.n_junk.next = self.n_junk.q.val();
        self.m_acc.n_bad.next = self.n_bad.q.val();
        self.m_acc.n_timeout.next = self.n_timeout.q.val();

        // Every byte of a frame goes through the CRC and restarts the idle
        // count; a frame that waits too long is dropped.
        self.idle.d.next = self.idle.q.val() + 1;
        if self.rx_valid.val() {
            self.idle.d.next = 0.into();
        }
        match self.state.q.val() {
            State::Idle => {
                if self.rx_valid.val() {
                    if self.rx_data.val() == self.k_sync_req.val() {
                        self.state.d.next = State::Header;
                        self.cnt.d.next = 0.into();
                        self.step.crc_in.next = self.k_init.val();
                        self.crc.d.next = self.step.crc_out.val();
                    } else {
                        self.n_junk.d.next = self.n_junk.q.val() + 1;
                    }
                }
            }
            State::Header => {
                if self.rx_valid.val() {
                    self.crc.d.next = self.step.crc_out.val();
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() == 6 {
                        self.state.d.next = State::Check;
                    }
                }
            }
            State::Check => {
                self.cnt.d.next = 0.into();
                self.state.d.next = State::Crc;
                if self.hdr.is_wr.val() {
                    self.state.d.next = State::Data;
                }
                if self.hdr.bad.val() {
                    self.m_acc.refuse.next = true;
                    self.n_bad.d.next = self.n_bad.q.val() + 1;
                    self.state.d.next = State::Busy;
                }
            }
            State::Data => {
                if self.rx_valid.val() {
                    self.crc.d.next = self.step.crc_out.val();
                    self.m_acc.data.next = true;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() + 1 == self.hdr.len.val() {
                        self.cnt.d.next = 0.into();
                        self.state.d.next = State::Crc;
                    }
                }
            }
            State::Crc => {
                if self.rx_valid.val() {
                    self.crc.d.next = self.step.crc_out.val();
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() == 3 {
                        self.cnt.d.next = 0.into();
                        self.m_acc.exec.next = true;
                        self.state.d.next = State::Busy;
                    }
                }
            }
            State::Busy => {
                if self.m_acc.done.val() {
                    self.state.d.next = State::Idle;
                }
            }
        }
        if self.m_acc.bad.val() {
            self.n_bad.d.next = self.n_bad.q.val() + 1;
        }
        self.in_frame.next = (self.state.q.val() == State::Header)
            | (self.state.q.val() == State::Data)
            | (self.state.q.val() == State::Crc);
        // Bytes that come while the engine is busy are junk too.
        if self.rx_valid.val() & !self.in_frame.val() & (self.state.q.val() != State::Idle) {
            self.n_junk.d.next = self.n_junk.q.val() + 1;
        }
        if self.in_frame.val() & (self.idle.q.val() == self.k_idle.val()) {
            self.state.d.next = State::Idle;
            self.n_timeout.d.next = self.n_timeout.q.val() + 1;
        }
        if self.rst.val() {
            self.state.d.next = State::Idle;
            self.n_junk.d.next = 0.into();
            self.n_bad.d.next = 0.into();
            self.n_timeout.d.next = 0.into();
        }
    }
}
