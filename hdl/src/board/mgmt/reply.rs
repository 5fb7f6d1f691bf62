//! [`MgmtReply`]: a management response's bytes.

use rust_hdl::prelude::*;

use super::links::AnswerIn;
use super::proto::*;
use crate::helpers::{konst, native_block};
use crate::mac::CrcByte;

/// Where [`MgmtReply`] is in a response.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum State {
    /// No response to send.
    Off,
    /// The response's sync, op and status bytes.
    Head,
    /// The response's data bytes.
    Data,
    /// The response's four CRC bytes.
    Crc,
}

native_block! {
    /// The sending side of [`super::MgmtEngine`]: from `s_acc.go`, the
    /// response's header, a read's data (a register's four bytes from
    /// `s_acc.word`, or the memory's bytes, each read (`s_acc.rd`) a clock
    /// before it is sent) and the CRC of it all, a byte at a time to the
    /// transmitter (`tx_*`); `s_acc.done` with the last.
    MgmtReply []
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: nothing to send.
        rst: Signal<In, Bit>,
        /// The response to send.
        s_acc: AnswerIn,
        /// A response byte.
        tx_data: Signal<Out, Bits<8>>,
        /// `tx_data` is offered.
        tx_valid: Signal<Out, Bit>,
        /// The transmitter takes it this clock.
        tx_ready: Signal<In, Bit>,
        /// The memory byte `s_acc.rd` asked for the previous clock.
        mem_rdata: Signal<In, Bits<8>>,
    }
    state {
        step: CrcByte,
        state: DFF<State>,
        cnt: DFF<Bits<16>>,
        phase: DFF<Bit>,
        crc: DFF<Bits<32>>,
        status: DFF<Bits<8>>,
        txb: DFF<Bits<8>>,
        txv: DFF<Bit>,
        // Temporaries: the byte to load, to load it, it is the first (the CRC
        // starts again).
        ob: Signal<Local, Bits<8>>,
        load: Signal<Local, Bit>,
        fresh: Signal<Local, Bit>,
    }
    consts {
        k_sync_resp: Constant<Bits<8>> = konst(SYNC_RESP.into()),
        k_reg_read: Constant<Bits<8>> = konst(REG_READ.into()),
        k_mem_read: Constant<Bits<8>> = konst(MEM_READ.into()),
        k_ok: Constant<Bits<8>> = konst(OK.into()),
        k_init: Constant<Bits<32>> = konst(u32::MAX as usize),
    }
}

impl Logic for MgmtReply {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, cnt, phase, crc, status, txb, txv);
        self.tx_data.next = self.txb.q.val();
        self.tx_valid.next = self.txv.q.val();
        if self.txv.q.val() & self.tx_ready.val() {
            self.txv.d.next = false;
        }
        self.step.crc_in.next = self.crc.q.val();
        self.step.octet.next = 0.into();
        self.ob.next = 0.into();
        self.load.next = false;
        self.fresh.next = false;
        self.s_acc.shift.next = false;
        self.s_acc.rd.next = false;
        self.s_acc.off.next = self.cnt.q.val();
        self.s_acc.done.next = false;
        if self.s_acc.go.val() {
            self.state.d.next = State::Head;
            self.status.d.next = self.s_acc.status.val();
            self.cnt.d.next = 0.into();
        }
        match self.state.q.val() {
            State::Off => {}
            State::Head => {
                if !self.txv.q.val() {
                    self.load.next = true;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() == 0 {
                        self.ob.next = self.k_sync_resp.val();
                        self.fresh.next = true;
                    } else if self.cnt.q.val() == 1 {
                        self.ob.next = self.s_acc.op.val();
                    } else {
                        self.ob.next = self.status.q.val();
                        self.cnt.d.next = 0.into();
                        self.phase.d.next = false;
                        self.state.d.next = State::Crc;
                        if (self.status.q.val() == self.k_ok.val())
                            & ((self.s_acc.op.val() == self.k_reg_read.val())
                                | (self.s_acc.op.val() == self.k_mem_read.val()))
                        {
                            self.state.d.next = State::Data;
                        }
                    }
                }
            }
            State::Data => {
                if !self.txv.q.val() {
                    if self.s_acc.op.val() == self.k_reg_read.val() {
                        self.load.next = true;
                        self.ob.next = self.s_acc.word.val();
                        self.s_acc.shift.next = true;
                        self.cnt.d.next = self.cnt.q.val() + 1;
                        if self.cnt.q.val() == 3 {
                            self.cnt.d.next = 0.into();
                            self.state.d.next = State::Crc;
                        }
                    } else if !self.phase.q.val() {
                        self.s_acc.rd.next = true;
                        self.phase.d.next = true;
                    } else {
                        self.load.next = true;
                        self.ob.next = self.mem_rdata.val();
                        self.phase.d.next = false;
                        self.cnt.d.next = self.cnt.q.val() + 1;
                        if self.cnt.q.val() + 1 == self.s_acc.len.val() {
                            self.cnt.d.next = 0.into();
                            self.state.d.next = State::Crc;
                        }
                    }
                }
            }
            State::Crc => {
                if !self.txv.q.val() {
                    // The inverted register, low byte first.
                    self.txb.d.next = !self.crc.q.val().get_bits::<8>(0);
                    self.txv.d.next = true;
                    self.crc.d.next = self.crc.q.val() >> 8;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() == 3 {
                        self.state.d.next = State::Off;
                        self.s_acc.done.next = true;
                    }
                }
            }
        }
        // A response byte: sent, and through the CRC.
        if self.load.val() {
            self.txb.d.next = self.ob.val();
            self.txv.d.next = true;
            self.step.octet.next = self.ob.val();
            if self.fresh.val() {
                self.step.crc_in.next = self.k_init.val();
            }
            self.crc.d.next = self.step.crc_out.val();
        }
        if self.rst.val() {
            self.state.d.next = State::Off;
            self.txv.d.next = false;
        }
    }
}
