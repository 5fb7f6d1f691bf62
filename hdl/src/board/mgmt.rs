//! [`MgmtEngine`]: the management protocol's frames (`docs/hardware.md`
//! §19, *The management path over a UART*) into BAR0 register accesses and
//! board-memory accesses, and their responses.

use rust_hdl::prelude::*;

use crate::helpers::konst;
use crate::mac::{CrcByte, FCS_RESIDUE};

/// The protocol's constants, shared with the host driver's side.
pub mod proto {
    /// First byte of a request.
    pub const SYNC_REQ: u8 = 0xA5;
    /// First byte of a response.
    pub const SYNC_RESP: u8 = 0x5A;
    /// Op: read the 32-bit register at a BAR0 byte offset.
    pub const REG_READ: u8 = 1;
    /// Op: write the 32-bit register at a BAR0 byte offset.
    pub const REG_WRITE: u8 = 2;
    /// Op: read bytes of the board's memory.
    pub const MEM_READ: u8 = 3;
    /// Op: write bytes of the board's memory.
    pub const MEM_WRITE: u8 = 4;
    /// Status: done.
    pub const OK: u8 = 0;
    /// Status: the request's CRC is wrong; nothing was done.
    pub const BAD_CRC: u8 = 1;
    /// Status: unknown op; the rest of the frame was discarded.
    pub const BAD_OP: u8 = 2;
    /// Status: a length or address out of range; the rest of the frame was discarded.
    pub const BAD_ARG: u8 = 3;
    /// Most bytes in one MEM_READ or MEM_WRITE.
    pub const MAX_BURST: usize = 256;
    /// Bytes of a request's header (sync, op, address, length).
    pub const HEADER: usize = 8;
    /// REG_READ offset of the engine's count of bytes received outside a frame.
    pub const CNT_JUNK: u32 = 0x1_0000;
    /// REG_READ offset of the engine's count of bad frames (CRC, op, argument).
    pub const CNT_BAD: u32 = 0x1_0004;
    /// REG_READ offset of the engine's count of frames cut by the idle timeout.
    pub const CNT_TIMEOUT: u32 = 0x1_0008;
}

/// Where [`MgmtEngine`] is in a request or its response.
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
    /// One clock: the CRC judged, the access started.
    Exec,
    /// Waiting for a register read's answer.
    RegWait,
    /// A MEM_WRITE's staged bytes into the memory, one per two clocks.
    Copy,
    /// The response's sync, op and status bytes.
    RespHead,
    /// The response's data bytes.
    RespData,
    /// The response's four CRC bytes.
    RespCrc,
}

/// The management engine: takes request bytes (from [`super::uart::UartRx`]),
/// performs the request on BAR0's `bar_*` port (the shape of
/// [`crate::NicDevice`]'s: a read answered on `bar_rd_resp_*` some clocks
/// later) or on a memory byte port ([`super::local_mem::LocalMem`]'s
/// `mem_*`: a read's byte in the next clock), and sends the response's
/// bytes (to [`super::uart::UartTx`]). One request at a time.
///
/// `2^M` bytes of board memory are reachable; a frame with no byte for
/// `idle_clocks` clocks is dropped and counted. A MEM_WRITE's bytes wait in
/// a 256-byte staging memory until the frame's CRC checked.
#[derive(LogicBlock)]
pub struct MgmtEngine<const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: idle, counters zero.
    pub rst: Signal<In, Bit>,
    /// A received byte.
    pub rx_data: Signal<In, Bits<8>>,
    /// `rx_data` is a new byte (one clock per byte).
    pub rx_valid: Signal<In, Bit>,
    /// A response byte.
    pub tx_data: Signal<Out, Bits<8>>,
    /// `tx_data` is offered.
    pub tx_valid: Signal<Out, Bit>,
    /// The transmitter takes it this clock.
    pub tx_ready: Signal<In, Bit>,
    /// BAR0 write: valid (one clock).
    pub bar_wr_valid: Signal<Out, Bit>,
    /// BAR0 write: byte offset.
    pub bar_wr_addr: Signal<Out, Bits<16>>,
    /// BAR0 write: value.
    pub bar_wr_data: Signal<Out, Bits<32>>,
    /// BAR0 read: valid (one clock).
    pub bar_rd_valid: Signal<Out, Bit>,
    /// BAR0 read: byte offset.
    pub bar_rd_addr: Signal<Out, Bits<16>>,
    /// BAR0 read answer: valid.
    pub bar_rd_resp_valid: Signal<In, Bit>,
    /// BAR0 read answer: value.
    pub bar_rd_resp_data: Signal<In, Bits<32>>,
    /// Memory byte port: an access this clock.
    pub mem_valid: Signal<Out, Bit>,
    /// Memory byte port: a write.
    pub mem_write: Signal<Out, Bit>,
    /// Memory byte port: byte address.
    pub mem_addr: Signal<Out, Bits<32>>,
    /// Memory byte port: the byte to write.
    pub mem_wdata: Signal<Out, Bits<8>>,
    /// Memory byte port: the byte the previous clock's read asked for.
    pub mem_rdata: Signal<In, Bits<8>>,
    state: DFF<State>,
    // The header after the sync byte, shifted in from the top: op in bits
    // 7..0, address in 39..8, length in 55..40.
    hdr: DFF<Bits<56>>,
    cnt: DFF<Bits<16>>,
    phase: DFF<Bit>,
    crc: DFF<Bits<32>>,
    // A register's value (written, or read and sent low byte first).
    word: DFF<Bits<32>>,
    status: DFF<Bits<8>>,
    idle: DFF<Bits<32>>,
    txb: DFF<Bits<8>>,
    txv: DFF<Bit>,
    n_junk: DFF<Bits<32>>,
    n_bad: DFF<Bits<32>>,
    n_timeout: DFF<Bits<32>>,
    stage: crate::helpers::BlockRam<8, 8>,
    step: CrcByte,
    // Temporaries: the header's fields; the request is a register op, a
    // write, its range ends inside the memory; the response byte to load,
    // to load it, it is the first (the CRC starts again); a request's
    // bytes are being received.
    op: Signal<Local, Bits<8>>,
    addr: Signal<Local, Bits<32>>,
    len: Signal<Local, Bits<16>>,
    is_reg: Signal<Local, Bit>,
    is_wr: Signal<Local, Bit>,
    fits: Signal<Local, Bit>,
    ob: Signal<Local, Bits<8>>,
    load: Signal<Local, Bit>,
    fresh: Signal<Local, Bit>,
    in_frame: Signal<Local, Bit>,
    k_sync_req: Constant<Bits<8>>,
    k_sync_resp: Constant<Bits<8>>,
    k_reg_read: Constant<Bits<8>>,
    k_reg_write: Constant<Bits<8>>,
    k_mem_read: Constant<Bits<8>>,
    k_mem_write: Constant<Bits<8>>,
    k_ok: Constant<Bits<8>>,
    k_bad_crc: Constant<Bits<8>>,
    k_bad_op: Constant<Bits<8>>,
    k_bad_arg: Constant<Bits<8>>,
    k_max: Constant<Bits<16>>,
    k_mem_bytes: Constant<Bits<33>>,
    k_init: Constant<Bits<32>>,
    k_residue: Constant<Bits<32>>,
    k_idle: Constant<Bits<32>>,
    k_cnt_junk: Constant<Bits<32>>,
    k_cnt_bad: Constant<Bits<32>>,
    k_cnt_timeout: Constant<Bits<32>>,
}

impl<const M: usize> MgmtEngine<M> {
    /// An engine that drops a frame after `idle_clocks` clocks without a byte.
    pub fn new(idle_clocks: usize) -> Self {
        use proto::*;
        assert!(M <= 32, "MgmtEngine: a memory of 2^{M} bytes");
        Self {
            clock: Default::default(),
            rst: Default::default(),
            rx_data: Default::default(),
            rx_valid: Default::default(),
            tx_data: Default::default(),
            tx_valid: Default::default(),
            tx_ready: Default::default(),
            bar_wr_valid: Default::default(),
            bar_wr_addr: Default::default(),
            bar_wr_data: Default::default(),
            bar_rd_valid: Default::default(),
            bar_rd_addr: Default::default(),
            bar_rd_resp_valid: Default::default(),
            bar_rd_resp_data: Default::default(),
            mem_valid: Default::default(),
            mem_write: Default::default(),
            mem_addr: Default::default(),
            mem_wdata: Default::default(),
            mem_rdata: Default::default(),
            state: Default::default(),
            hdr: Default::default(),
            cnt: Default::default(),
            phase: Default::default(),
            crc: Default::default(),
            word: Default::default(),
            status: Default::default(),
            idle: Default::default(),
            txb: Default::default(),
            txv: Default::default(),
            n_junk: Default::default(),
            n_bad: Default::default(),
            n_timeout: Default::default(),
            stage: crate::helpers::BlockRam::with_words(MAX_BURST),
            step: Default::default(),
            op: Default::default(),
            addr: Default::default(),
            len: Default::default(),
            is_reg: Default::default(),
            is_wr: Default::default(),
            fits: Default::default(),
            ob: Default::default(),
            load: Default::default(),
            fresh: Default::default(),
            in_frame: Default::default(),
            k_sync_req: konst(SYNC_REQ.into()),
            k_sync_resp: konst(SYNC_RESP.into()),
            k_reg_read: konst(REG_READ.into()),
            k_reg_write: konst(REG_WRITE.into()),
            k_mem_read: konst(MEM_READ.into()),
            k_mem_write: konst(MEM_WRITE.into()),
            k_ok: konst(OK.into()),
            k_bad_crc: konst(BAD_CRC.into()),
            k_bad_op: konst(BAD_OP.into()),
            k_bad_arg: konst(BAD_ARG.into()),
            k_max: konst(MAX_BURST),
            k_mem_bytes: Constant::new(bits::<33>(1u64 << M)),
            k_init: konst(u32::MAX as usize),
            k_residue: konst(FCS_RESIDUE as usize),
            k_idle: konst(idle_clocks),
            k_cnt_junk: konst(CNT_JUNK as usize),
            k_cnt_bad: konst(CNT_BAD as usize),
            k_cnt_timeout: konst(CNT_TIMEOUT as usize),
        }
    }
}

impl<const M: usize> Logic for MgmtEngine<M> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, hdr, cnt, phase, crc, word, status, idle, txb, txv, n_junk, n_bad,
            n_timeout
        );
        self.stage.clock.next = self.clock.val();
        self.op.next = self.hdr.q.val().get_bits::<8>(0);
        self.addr.next = self.hdr.q.val().get_bits::<32>(8);
        self.len.next = self.hdr.q.val().get_bits::<16>(40);
        self.is_reg.next =
            (self.op.val() == self.k_reg_read.val()) | (self.op.val() == self.k_reg_write.val());
        self.is_wr.next =
            (self.op.val() == self.k_reg_write.val()) | (self.op.val() == self.k_mem_write.val());
        self.fits.next = (bit_cast::<33, 32>(self.addr.val()) + bit_cast::<33, 16>(self.len.val()))
            <= self.k_mem_bytes.val();

        // Ports' defaults.
        self.tx_data.next = self.txb.q.val();
        self.tx_valid.next = self.txv.q.val();
        if self.txv.q.val() & self.tx_ready.val() {
            self.txv.d.next = false;
        }
        self.bar_wr_valid.next = false;
        self.bar_wr_addr.next = self.addr.val().get_bits::<16>(0);
        self.bar_wr_data.next = self.word.q.val();
        self.bar_rd_valid.next = false;
        self.bar_rd_addr.next = self.addr.val().get_bits::<16>(0);
        self.mem_valid.next = false;
        self.mem_write.next = false;
        self.mem_addr.next = self.addr.val() + bit_cast::<32, 16>(self.cnt.q.val());
        self.mem_wdata.next = self.stage.read_data.val();
        self.stage.write_enable.next = false;
        self.stage.write_address.next = self.cnt.q.val().get_bits::<8>(0);
        self.stage.write_data.next = self.rx_data.val();
        self.stage.read_address.next = self.cnt.q.val().get_bits::<8>(0);
        self.step.crc_in.next = self.crc.q.val();
        self.step.octet.next = self.rx_data.val();
        self.ob.next = 0.into();
        self.load.next = false;
        self.fresh.next = false;

        // Receiving: every byte of a frame goes through the CRC and
        // restarts the idle count; a frame that waits too long is dropped.
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
                    self.hdr.d.next =
                        (self.hdr.q.val() >> 8) | (bit_cast::<56, 8>(self.rx_data.val()) << 48);
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() == 6 {
                        self.state.d.next = State::Check;
                    }
                }
            }
            State::Check => {
                self.cnt.d.next = 0.into();
                self.state.d.next = State::Crc;
                if self.is_wr.val() {
                    self.state.d.next = State::Data;
                }
                if self.is_reg.val() {
                    // Four bytes, aligned, inside BAR0 (or, for a read, one
                    // of the engine's counters).
                    if (self.len.val() != 4)
                        | self.addr.val().get_bits::<2>(0).any()
                        | (self.addr.val().get_bits::<16>(16).any()
                            & (self.is_wr.val()
                                | ((self.addr.val() != self.k_cnt_junk.val())
                                    & (self.addr.val() != self.k_cnt_bad.val())
                                    & (self.addr.val() != self.k_cnt_timeout.val()))))
                    {
                        self.status.d.next = self.k_bad_arg.val();
                        self.state.d.next = State::RespHead;
                        self.n_bad.d.next = self.n_bad.q.val() + 1;
                    }
                } else if (self.op.val() == self.k_mem_read.val()) | self.is_wr.val() {
                    if (self.len.val() == 0)
                        | (self.len.val() > self.k_max.val())
                        | !self.fits.val()
                    {
                        self.status.d.next = self.k_bad_arg.val();
                        self.state.d.next = State::RespHead;
                        self.n_bad.d.next = self.n_bad.q.val() + 1;
                    }
                } else {
                    self.status.d.next = self.k_bad_op.val();
                    self.state.d.next = State::RespHead;
                    self.n_bad.d.next = self.n_bad.q.val() + 1;
                }
            }
            State::Data => {
                if self.rx_valid.val() {
                    self.crc.d.next = self.step.crc_out.val();
                    self.word.d.next =
                        (self.word.q.val() >> 8) | (bit_cast::<32, 8>(self.rx_data.val()) << 24);
                    self.stage.write_enable.next = true;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() + 1 == self.len.val() {
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
                        self.state.d.next = State::Exec;
                    }
                }
            }
            State::Exec => {
                self.status.d.next = self.k_ok.val();
                self.state.d.next = State::RespHead;
                if self.crc.q.val() != self.k_residue.val() {
                    self.status.d.next = self.k_bad_crc.val();
                    self.n_bad.d.next = self.n_bad.q.val() + 1;
                } else if self.op.val() == self.k_reg_write.val() {
                    self.bar_wr_valid.next = true;
                } else if self.op.val() == self.k_mem_write.val() {
                    self.state.d.next = State::Copy;
                    self.phase.d.next = false;
                } else if self.op.val() == self.k_reg_read.val() {
                    if self.addr.val() == self.k_cnt_junk.val() {
                        self.word.d.next = self.n_junk.q.val();
                    } else if self.addr.val() == self.k_cnt_bad.val() {
                        self.word.d.next = self.n_bad.q.val();
                    } else if self.addr.val() == self.k_cnt_timeout.val() {
                        self.word.d.next = self.n_timeout.q.val();
                    } else {
                        self.bar_rd_valid.next = true;
                        self.state.d.next = State::RegWait;
                    }
                }
            }
            State::RegWait => {
                if self.bar_rd_resp_valid.val() {
                    self.word.d.next = self.bar_rd_resp_data.val();
                    self.state.d.next = State::RespHead;
                }
            }
            State::Copy => {
                // The staging memory reads `cnt` at every edge: its byte is
                // there in the second clock.
                self.phase.d.next = !self.phase.q.val();
                if self.phase.q.val() {
                    self.mem_valid.next = true;
                    self.mem_write.next = true;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() + 1 == self.len.val() {
                        self.cnt.d.next = 0.into();
                        self.state.d.next = State::RespHead;
                    }
                }
            }
            State::RespHead => {
                if !self.txv.q.val() {
                    self.load.next = true;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() == 0 {
                        self.ob.next = self.k_sync_resp.val();
                        self.fresh.next = true;
                    } else if self.cnt.q.val() == 1 {
                        self.ob.next = self.op.val();
                    } else {
                        self.ob.next = self.status.q.val();
                        self.cnt.d.next = 0.into();
                        self.phase.d.next = false;
                        self.state.d.next = State::RespCrc;
                        if (self.status.q.val() == self.k_ok.val())
                            & ((self.op.val() == self.k_reg_read.val())
                                | (self.op.val() == self.k_mem_read.val()))
                        {
                            self.state.d.next = State::RespData;
                        }
                    }
                }
            }
            State::RespData => {
                if !self.txv.q.val() {
                    if self.op.val() == self.k_reg_read.val() {
                        self.load.next = true;
                        self.ob.next = self.word.q.val().get_bits::<8>(0);
                        self.word.d.next = self.word.q.val() >> 8;
                        self.cnt.d.next = self.cnt.q.val() + 1;
                        if self.cnt.q.val() == 3 {
                            self.cnt.d.next = 0.into();
                            self.state.d.next = State::RespCrc;
                        }
                    } else if !self.phase.q.val() {
                        self.mem_valid.next = true;
                        self.phase.d.next = true;
                    } else {
                        self.load.next = true;
                        self.ob.next = self.mem_rdata.val();
                        self.phase.d.next = false;
                        self.cnt.d.next = self.cnt.q.val() + 1;
                        if self.cnt.q.val() + 1 == self.len.val() {
                            self.cnt.d.next = 0.into();
                            self.state.d.next = State::RespCrc;
                        }
                    }
                }
            }
            State::RespCrc => {
                if !self.txv.q.val() {
                    // The inverted register, low byte first.
                    self.txb.d.next = !self.crc.q.val().get_bits::<8>(0);
                    self.txv.d.next = true;
                    self.crc.d.next = self.crc.q.val() >> 8;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                    if self.cnt.q.val() == 3 {
                        self.state.d.next = State::Idle;
                    }
                }
            }
        }
        // A response byte: sent, and through the CRC.
        if self.load.val() {
            self.txb.d.next = self.ob.val();
            self.txv.d.next = true;
            self.step.octet.next = self.ob.val();
            self.step.crc_in.next = self.crc.q.val();
            if self.fresh.val() {
                self.step.crc_in.next = self.k_init.val();
            }
            self.crc.d.next = self.step.crc_out.val();
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
            self.txv.d.next = false;
            self.n_junk.d.next = 0.into();
            self.n_bad.d.next = 0.into();
            self.n_timeout.d.next = 0.into();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
