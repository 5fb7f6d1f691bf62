//! [`MgmtAccess`]: a received management request done on BAR0 or the
//! board's memory.

use rust_hdl::prelude::*;

use super::links::{AnswerOut, BarOut, MemOut, RecvIn};
use super::proto::*;
use crate::helpers::{BlockRam, konst, native_block};

/// Where [`MgmtAccess`] is in a request.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum State {
    /// No request to do.
    Off,
    /// One clock: the CRC judged, the access started.
    Exec,
    /// Waiting for a register read's answer.
    RegWait,
    /// A MEM_WRITE's staged bytes into the memory, one per two clocks.
    Copy,
}

native_block! {
    /// The access side of [`super::MgmtEngine`]: a write's data bytes into the
    /// register value (`word`) and a 256-byte staging memory as they come
    /// (`s_recv.data`); once the request's CRC checked (`s_recv.exec`), the
    /// BAR0 access (`m_bar`), a read of one of the engine's counters, or the
    /// staged bytes into the memory (`m_mem`); then the response (`m_reply`),
    /// whose memory reads and register bytes it serves. A refused header is
    /// answered at once.
    MgmtAccess []
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: no access in progress.
        rst: Signal<In, Bit>,
        /// A received byte (a write's data byte with `s_recv.data`).
        rx_data: Signal<In, Bits<8>>,
        /// The request, from the receiving side.
        s_recv: RecvIn,
        /// The response to send.
        m_reply: AnswerOut,
        /// BAR0.
        m_bar: BarOut,
        /// The memory byte port.
        m_mem: MemOut,
    }
    state {
        stage: BlockRam<8, 8> = BlockRam::with_words(MAX_BURST),
        state: DFF<State>,
        cnt: DFF<Bits<16>>,
        phase: DFF<Bit>,
        // A register's value (written, or read and sent low byte first).
        word: DFF<Bits<32>>,
        // The BAR0 access, from registers: a clock after the CRC is judged,
        // so the CRC check does not reach the blocks' configuration ports
        // in the same clock (on the routed NIC top of session 50 the
        // frame's CRC register → a configuration write → `RxPlace` was the
        // core clock's critical path, 24.2 ns).
        b_wr: DFF<Bit>,
        b_rd: DFF<Bit>,
        b_addr: DFF<Bits<16>>,
        b_data: DFF<Bits<32>>,
    }
    consts {
        k_reg_read: Constant<Bits<8>> = konst(REG_READ.into()),
        k_reg_write: Constant<Bits<8>> = konst(REG_WRITE.into()),
        k_mem_write: Constant<Bits<8>> = konst(MEM_WRITE.into()),
        k_ok: Constant<Bits<8>> = konst(OK.into()),
        k_bad_crc: Constant<Bits<8>> = konst(BAD_CRC.into()),
        k_cnt_junk: Constant<Bits<32>> = konst(CNT_JUNK as usize),
        k_cnt_bad: Constant<Bits<32>> = konst(CNT_BAD as usize),
        k_cnt_timeout: Constant<Bits<32>> = konst(CNT_TIMEOUT as usize),
    }
}

impl Logic for MgmtAccess {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, cnt, phase, word, b_wr, b_rd, b_addr, b_data
        );
        self.stage.clock.next = self.clock.val();
        self.stage.write_enable.next = self.s_recv.data.val();
        self.stage.write_address.next = self.s_recv.idx.val();
        self.stage.write_data.next = self.rx_data.val();
        self.stage.read_address.next = self.cnt.q.val().get_bits::<8>(0);
        if self.s_recv.data.val() {
            self.word.d.next =
                (self.word.q.val() >> 8) | (bit_cast::<32, 8>(self.rx_data.val()) << 24);
        }
        if self.m_reply.shift.val() {
            self.word.d.next = self.word.q.val() >> 8;
        }
        self.m_bar.wr_valid.next = self.b_wr.q.val();
        self.m_bar.wr_addr.next = self.b_addr.q.val();
        self.m_bar.wr_data.next = self.b_data.q.val();
        self.m_bar.rd_valid.next = self.b_rd.q.val();
        self.m_bar.rd_addr.next = self.b_addr.q.val();
        self.b_wr.d.next = false;
        self.b_rd.d.next = false;
        // The memory: the response's reads, or the staged bytes.
        self.m_mem.valid.next = self.m_reply.rd.val();
        self.m_mem.write.next = false;
        self.m_mem.addr.next = self.s_recv.addr.val() + bit_cast::<32, 16>(self.cnt.q.val());
        if self.m_reply.rd.val() {
            self.m_mem.addr.next =
                self.s_recv.addr.val() + bit_cast::<32, 16>(self.m_reply.off.val());
        }
        self.m_mem.wdata.next = self.stage.read_data.val();
        // A refused header is answered at once.
        self.m_reply.go.next = self.s_recv.refuse.val();
        self.m_reply.status.next = self.s_recv.why.val();
        self.m_reply.op.next = self.s_recv.op.val();
        self.m_reply.len.next = self.s_recv.len.val();
        self.m_reply.word.next = self.word.q.val().get_bits::<8>(0);
        self.s_recv.bad.next = false;
        self.s_recv.done.next = self.m_reply.done.val();
        if self.s_recv.exec.val() {
            self.state.d.next = State::Exec;
        }
        match self.state.q.val() {
            State::Off => {}
            State::Exec => {
                self.state.d.next = State::Off;
                self.m_reply.go.next = true;
                self.m_reply.status.next = self.k_ok.val();
                if !self.s_recv.crc_ok.val() {
                    self.m_reply.status.next = self.k_bad_crc.val();
                    self.s_recv.bad.next = true;
                } else if self.s_recv.op.val() == self.k_reg_write.val() {
                    self.b_wr.d.next = true;
                    self.b_addr.d.next = self.s_recv.addr.val().get_bits::<16>(0);
                    self.b_data.d.next = self.word.q.val();
                } else if self.s_recv.op.val() == self.k_mem_write.val() {
                    self.m_reply.go.next = false;
                    self.state.d.next = State::Copy;
                    self.cnt.d.next = 0.into();
                    self.phase.d.next = false;
                } else if self.s_recv.op.val() == self.k_reg_read.val() {
                    if self.s_recv.addr.val() == self.k_cnt_junk.val() {
                        self.word.d.next = self.s_recv.n_junk.val();
                    } else if self.s_recv.addr.val() == self.k_cnt_bad.val() {
                        self.word.d.next = self.s_recv.n_bad.val();
                    } else if self.s_recv.addr.val() == self.k_cnt_timeout.val() {
                        self.word.d.next = self.s_recv.n_timeout.val();
                    } else {
                        self.m_reply.go.next = false;
                        self.b_rd.d.next = true;
                        self.b_addr.d.next = self.s_recv.addr.val().get_bits::<16>(0);
                        self.state.d.next = State::RegWait;
                    }
                }
            }
            State::RegWait => {
                if self.m_bar.rd_resp_valid.val() {
                    self.word.d.next = self.m_bar.rd_resp_data.val();
                    self.m_reply.go.next = true;
                    self.m_reply.status.next = self.k_ok.val();
                    self.state.d.next = State::Off;
                }
            }
            State::Copy => {
                // The staging memory reads `cnt` at every edge: its byte is
                // there in the second clock.
                self.phase.d.next = !self.phase.q.val();
                if self.phase.q.val() {
                    self.m_mem.valid.next = true;
                    self.m_mem.write.next = true;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() + 1 == self.s_recv.len.val() {
                        self.cnt.d.next = 0.into();
                        self.m_reply.go.next = true;
                        self.m_reply.status.next = self.k_ok.val();
                        self.state.d.next = State::Off;
                    }
                }
            }
        }
        if self.rst.val() {
            self.state.d.next = State::Off;
            self.b_wr.d.next = false;
            self.b_rd.d.next = false;
        }
    }
}
