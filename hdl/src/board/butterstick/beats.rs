//! Between the MAC's bytes and the NIC's 64-bit beats: [`RxPack`] (bytes
//! into beats with `tkeep`/`tlast`), [`RxCross`], the receive path from
//! the GMII receive clock to the core's built of it, [`TxUnpack`] (beats
//! back into bytes),
//! [`TxGate`] (a frame starts only when it is whole in the FIFO) and
//! [`TxCross`], the transmit path from the core's clock to the GMII clock
//! built of them.

use rust_hdl::prelude::*;

/// A beat in an asynchronous FIFO: the data, `tkeep` above it, `tlast` on top.
pub type BeatWord = Bits<73>;

/// Bytes (one per clock at most, `s_*`, a frame ends with `s_last`) into
/// 64-bit beats (`m_*`): lane 0 the first byte, `m_tkeep` packed (all
/// eight lanes but on a frame's last beat), unused lanes zero. The beat
/// leaves from a register; a byte is taken while that register is free
/// or being taken, so a full-rate byte stream passes without a gap while
/// the beats are taken.
#[derive(LogicBlock, Default)]
pub struct RxPack {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no byte held, no beat offered.
    pub rst: Signal<In, Bit>,
    /// Byte in.
    pub s_data: Signal<In, Bits<8>>,
    /// Byte valid.
    pub s_valid: Signal<In, Bit>,
    /// The frame's last byte.
    pub s_last: Signal<In, Bit>,
    /// The byte is taken.
    pub s_ready: Signal<Out, Bit>,
    /// Beat data.
    pub m_tdata: Signal<Out, Bits<64>>,
    /// Beat byte enables (packed).
    pub m_tkeep: Signal<Out, Bits<8>>,
    /// Beat valid.
    pub m_tvalid: Signal<Out, Bit>,
    /// The beat is taken.
    pub m_tready: Signal<In, Bit>,
    /// The frame's last beat.
    pub m_tlast: Signal<Out, Bit>,
    acc: DFF<Bits<64>>,
    n: DFF<Bits<3>>,
    // One bit per byte held in `acc`.
    k: DFF<Bits<8>>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    o_valid: DFF<Bit>,
    free: Signal<Local, Bit>,
    word: Signal<Local, Bits<64>>,
}

impl Logic for RxPack {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, acc, n, k, o_data, o_keep, o_last, o_valid);
        self.m_tdata.next = self.o_data.q.val();
        self.m_tkeep.next = self.o_keep.q.val();
        self.m_tlast.next = self.o_last.q.val();
        self.m_tvalid.next = self.o_valid.q.val();
        self.free.next = !self.o_valid.q.val() | self.m_tready.val();
        self.s_ready.next = self.free.val();
        if self.m_tready.val() {
            self.o_valid.d.next = false;
        }
        self.word.next = self.acc.q.val()
            | (bit_cast::<64, 8>(self.s_data.val()) << (bit_cast::<64, 3>(self.n.q.val()) << 3));
        if self.s_valid.val() & self.free.val() {
            self.acc.d.next = self.word.val();
            self.n.d.next = self.n.q.val() + 1;
            self.k.d.next = (self.k.q.val() << 1) + 1;
            if self.s_last.val() | (self.n.q.val() == 7) {
                self.o_data.d.next = self.word.val();
                self.o_keep.d.next = (self.k.q.val() << 1) + 1;
                self.o_last.d.next = self.s_last.val();
                self.o_valid.d.next = true;
                self.acc.d.next = 0.into();
                self.n.d.next = 0.into();
                self.k.d.next = 0.into();
            }
        }
        if self.rst.val() {
            self.acc.d.next = 0.into();
            self.n.d.next = 0.into();
            self.k.d.next = 0.into();
            self.o_valid.d.next = false;
        }
    }
}

/// The receive path across clocks: the MAC's bytes (`s_*`) in the GMII
/// receive clock (`wclock`) into beats ([`RxPack`]) and an asynchronous
/// FIFO of 64 beats; the beats (`m_*`) in the core's clock (`rclock`).
/// `RxPack`'s ready is a register (`room`) loaded with "the FIFO is not
/// almost full", so the FIFO's fill arithmetic does not reach the MAC's
/// read decision through `RxPack`'s ready in the same clock (on routed NIC
/// tops, sessions 49 and 50, FIFO address → `full` → `RxPack`'s ready →
/// the MAC's `take` → `r_issued` was the GMII receive clock's critical
/// path). The FIFO's write side counts a write a clock late and `room` is
/// another clock late, so "almost full" is two beats short of full
/// (`BLOCK_SIZE` 2): with `room` high the FIFO holds at most 63 beats
/// now, and this clock's beat fits (a bound for beats on consecutive
/// clocks; `RxPack` gives at most one beat per eight bytes, so in this
/// path one beat of margin would do as well).
#[derive(LogicBlock, Default)]
pub struct RxCross {
    /// The bytes' clock.
    pub wclock: Signal<In, Clock>,
    /// Reset in `wclock`'s domain.
    pub wrst: Signal<In, Bit>,
    /// The beats' clock.
    pub rclock: Signal<In, Clock>,
    /// Byte in.
    pub s_data: Signal<In, Bits<8>>,
    /// Byte valid.
    pub s_valid: Signal<In, Bit>,
    /// The frame's last byte.
    pub s_last: Signal<In, Bit>,
    /// The byte is taken.
    pub s_ready: Signal<Out, Bit>,
    /// Beat data.
    pub m_tdata: Signal<Out, Bits<64>>,
    /// Beat byte enables (packed).
    pub m_tkeep: Signal<Out, Bits<8>>,
    /// The frame's last beat.
    pub m_tlast: Signal<Out, Bit>,
    /// Beat valid.
    pub m_tvalid: Signal<Out, Bit>,
    /// The beat is taken.
    pub m_tready: Signal<In, Bit>,
    pack: RxPack,
    fifo: AsynchronousFIFO<BeatWord, 6, 7, 2>,
    room: DFF<Bit>,
}

impl Logic for RxCross {
    #[hdl_gen]
    fn update(&mut self) {
        // Write side: bytes into beats, a beat into the FIFO while `room`.
        self.room.clock.next = self.wclock.val();
        self.room.d.next = !self.fifo.almost_full.val() & !self.wrst.val();
        self.pack.clock.next = self.wclock.val();
        self.pack.rst.next = self.wrst.val();
        self.pack.s_data.next = self.s_data.val();
        self.pack.s_valid.next = self.s_valid.val();
        self.pack.s_last.next = self.s_last.val();
        self.s_ready.next = self.pack.s_ready.val();
        self.fifo.write_clock.next = self.wclock.val();
        self.fifo.data_in.next = bit_cast::<73, 64>(self.pack.m_tdata.val())
            | (bit_cast::<73, 8>(self.pack.m_tkeep.val()) << 64)
            | (bit_cast::<73, 1>(self.pack.m_tlast.val().into()) << 72);
        self.fifo.write.next = self.pack.m_tvalid.val() & self.room.q.val();
        self.pack.m_tready.next = self.room.q.val();
        // Read side: the beats in the core's clock.
        self.fifo.read_clock.next = self.rclock.val();
        self.m_tdata.next = self.fifo.data_out.val().get_bits::<64>(0);
        self.m_tkeep.next = self.fifo.data_out.val().get_bits::<8>(64);
        self.m_tlast.next = self.fifo.data_out.val().get_bit(72);
        self.m_tvalid.next = !self.fifo.empty.val();
        self.fifo.read.next = !self.fifo.empty.val() & self.m_tready.val();
    }
}

/// 64-bit beats (`s_*`, `s_tkeep` packed) back into bytes (`m_*`, one per
/// clock while `m_ready`), `m_last` on the frame's last byte. The byte
/// leaves from a register; a beat is taken (`s_tready`) in the clock its
/// last byte moves into it.
#[derive(LogicBlock, Default)]
pub struct TxUnpack {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: at a beat's first byte, no byte offered.
    pub rst: Signal<In, Bit>,
    /// Beat data.
    pub s_tdata: Signal<In, Bits<64>>,
    /// Beat byte enables (packed, at least one).
    pub s_tkeep: Signal<In, Bits<8>>,
    /// Beat valid.
    pub s_tvalid: Signal<In, Bit>,
    /// The beat is taken.
    pub s_tready: Signal<Out, Bit>,
    /// The frame's last beat.
    pub s_tlast: Signal<In, Bit>,
    /// Byte out.
    pub m_data: Signal<Out, Bits<8>>,
    /// Byte valid.
    pub m_valid: Signal<Out, Bit>,
    /// The frame's last byte.
    pub m_last: Signal<Out, Bit>,
    /// The byte is taken.
    pub m_ready: Signal<In, Bit>,
    idx: DFF<Bits<3>>,
    o_data: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    o_valid: DFF<Bit>,
    free: Signal<Local, Bit>,
    // (`end` is a Verilog keyword.)
    beat_end: Signal<Local, Bit>,
}

impl Logic for TxUnpack {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, idx, o_data, o_last, o_valid);
        self.m_data.next = self.o_data.q.val();
        self.m_last.next = self.o_last.q.val();
        self.m_valid.next = self.o_valid.q.val();
        self.free.next = !self.o_valid.q.val() | self.m_ready.val();
        if self.m_ready.val() {
            self.o_valid.d.next = false;
        }
        // This lane is the beat's last: the next lane's enable is off
        // (`s_tkeep` is packed, so the enables from this lane up are 1 or 0).
        // A bit test, not `< 2`: yosys builds that compare as a 32-bit
        // carry chain, which was on the GMII clock's critical path.
        self.beat_end.next = ((self.s_tkeep.val() >> bit_cast::<8, 3>(self.idx.q.val())) & 2) == 0;
        // The same written out from the ports and registers: through the
        // locals above, which the beat's update below shares, Verilator
        // would see a loop from `s_tvalid` to `s_tready` (UNOPTFLAT).
        self.s_tready.next = (!self.o_valid.q.val() | self.m_ready.val())
            & (((self.s_tkeep.val() >> bit_cast::<8, 3>(self.idx.q.val())) & 2) == 0);
        if self.free.val() & self.s_tvalid.val() {
            self.o_data.d.next = self
                .s_tdata
                .val()
                .get_bits::<8>(bit_cast::<6, 3>(self.idx.q.val()).index() << 3);
            self.o_last.d.next = self.s_tlast.val() & self.beat_end.val();
            self.o_valid.d.next = true;
            self.idx.d.next = self.idx.q.val() + 1;
            if self.beat_end.val() {
                self.idx.d.next = 0.into();
            }
        }
        if self.rst.val() {
            self.idx.d.next = 0.into();
            self.o_valid.d.next = false;
        }
    }
}

/// The transmit gate: a frame's beats are offered (`open`) only once the
/// whole frame is in the FIFO, so the bytes after it never wait inside a
/// frame (GMII cannot pause). A token (`tok_*`) arrives for every whole
/// frame: [`TxCross`] writes it a core clock after the frame's last beat,
/// so by the time the read side sees the token it sees every beat of the
/// frame (both FIFOs' write pointers cross with the same synchronisers,
/// and the token's moves a whole core clock later). A frame starts when a
/// token waits. The decision is a register, from the token FIFO's empty
/// flag alone (no fill arithmetic: the FIFO's fill against the token's
/// beat count, two carry chains, was the GMII transmit clock's critical
/// path on routed NIC tops), cleared in the clock a frame starts.
#[derive(LogicBlock, Default)]
pub struct TxGate {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: between frames.
    pub rst: Signal<In, Bit>,
    /// No token waits.
    pub tok_empty: Signal<In, Bit>,
    /// Take the token (the frame's first beat is taken).
    pub tok_read: Signal<Out, Bit>,
    /// A beat is taken from the FIFO this clock.
    pub take: Signal<In, Bit>,
    /// It is its frame's last.
    pub take_last: Signal<In, Bit>,
    /// Beats may be offered.
    pub open: Signal<Out, Bit>,
    in_frame: DFF<Bit>,
    may_start: DFF<Bit>,
    start: Signal<Local, Bit>,
}

impl Logic for TxGate {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, in_frame, may_start);
        self.open.next = self.in_frame.q.val() | self.may_start.q.val();
        self.start.next = self.take.val() & !self.in_frame.q.val();
        self.tok_read.next = self.start.val();
        self.may_start.d.next = !self.tok_empty.val() & !self.start.val();
        if self.take.val() {
            self.in_frame.d.next = !self.take_last.val();
        }
        if self.rst.val() {
            self.in_frame.d.next = false;
            self.may_start.d.next = false;
        }
    }
}

/// The transmit path across clocks: 64-bit beats (`s_*`) in the core's
/// clock (`wclock`) into an asynchronous FIFO of 1,024 beats (8 KiB) and
/// a token for each whole frame into a token FIFO, a clock after the
/// frame's last beat (no beat is taken in that clock); in the GMII clock
/// (`rclock`), [`TxGate`] and [`TxUnpack`] give the bytes (`m_*`) of
/// whole frames only, one per clock while `m_ready`. A frame must fit the
/// FIFO (1,024 beats; a longer one never starts and blocks the path).
#[derive(LogicBlock, Default)]
pub struct TxCross {
    /// The beats' clock.
    pub wclock: Signal<In, Clock>,
    /// Reset in `wclock`'s domain.
    pub wrst: Signal<In, Bit>,
    /// The bytes' clock.
    pub rclock: Signal<In, Clock>,
    /// Reset in `rclock`'s domain.
    pub rrst: Signal<In, Bit>,
    /// Beat data.
    pub s_tdata: Signal<In, Bits<64>>,
    /// Beat byte enables (packed).
    pub s_tkeep: Signal<In, Bits<8>>,
    /// Beat valid.
    pub s_tvalid: Signal<In, Bit>,
    /// The beat is taken.
    pub s_tready: Signal<Out, Bit>,
    /// The frame's last beat.
    pub s_tlast: Signal<In, Bit>,
    /// Byte out.
    pub m_data: Signal<Out, Bits<8>>,
    /// Byte valid.
    pub m_valid: Signal<Out, Bit>,
    /// The frame's last byte.
    pub m_last: Signal<Out, Bit>,
    /// The byte is taken.
    pub m_ready: Signal<In, Bit>,
    fifo: AsynchronousFIFO<BeatWord, 10, 11, 1>,
    tokens: AsynchronousFIFO<Bit, 4, 5, 1>,
    /// A frame's last beat went in at the last edge: its token goes in now.
    tok_w: DFF<Bit>,
    gate: TxGate,
    unpack: TxUnpack,
    /// The beat before [`TxUnpack`] and the one after it: the FIFO is read
    /// while `nxt` is free, a decision of registers alone, so neither the
    /// FIFO's output nor `TxUnpack`'s byte position reaches the FIFO's read
    /// address (on routed NIC tops, block RAM output → `TxUnpack` → read
    /// address, then `TxUnpack`'s lane index → take → read address, were
    /// the GMII clock's critical paths).
    beat: DFF<BeatWord>,
    beat_v: DFF<Bit>,
    nxt: DFF<BeatWord>,
    nxt_v: DFF<Bit>,
    put: Signal<Local, Bit>,
    offer: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    pull: Signal<Local, Bit>,
}

impl Logic for TxCross {
    #[hdl_gen]
    fn update(&mut self) {
        // Write side: beats in, and a token a clock after a frame's last.
        self.tok_w.clock.next = self.wclock.val();
        self.fifo.write_clock.next = self.wclock.val();
        self.tokens.write_clock.next = self.wclock.val();
        self.s_tready.next = !self.fifo.full.val() & !self.tokens.full.val() & !self.tok_w.q.val();
        self.put.next = self.s_tvalid.val()
            & !self.fifo.full.val()
            & !self.tokens.full.val()
            & !self.tok_w.q.val();
        self.fifo.write.next = self.put.val();
        self.fifo.data_in.next = bit_cast::<73, 64>(self.s_tdata.val())
            | (bit_cast::<73, 8>(self.s_tkeep.val()) << 64)
            | (bit_cast::<73, 1>(self.s_tlast.val().into()) << 72);
        self.tokens.write.next = self.tok_w.q.val();
        self.tokens.data_in.next = true;
        self.tok_w.d.next = self.put.val() & self.s_tlast.val() & !self.wrst.val();

        // Read side: whole frames only, into bytes.
        self.fifo.read_clock.next = self.rclock.val();
        self.tokens.read_clock.next = self.rclock.val();
        self.gate.clock.next = self.rclock.val();
        self.unpack.clock.next = self.rclock.val();
        self.gate.rst.next = self.rrst.val();
        self.unpack.rst.next = self.rrst.val();
        self.gate.tok_empty.next = self.tokens.empty.val();
        self.tokens.read.next = self.gate.tok_read.val();
        self.beat.clock.next = self.rclock.val();
        self.beat_v.clock.next = self.rclock.val();
        self.nxt.clock.next = self.rclock.val();
        self.nxt_v.clock.next = self.rclock.val();
        self.beat.d.next = self.beat.q.val();
        self.beat_v.d.next = self.beat_v.q.val();
        self.nxt.d.next = self.nxt.q.val();
        self.nxt_v.d.next = self.nxt_v.q.val();
        self.offer.next = self.gate.open.val() & !self.fifo.empty.val();
        self.unpack.s_tvalid.next = self.beat_v.q.val();
        self.unpack.s_tdata.next = self.beat.q.val().get_bits::<64>(0);
        self.unpack.s_tkeep.next = self.beat.q.val().get_bits::<8>(64);
        self.unpack.s_tlast.next = self.beat.q.val().get_bit(72);
        self.take.next = self.beat_v.q.val() & self.unpack.s_tready.val();
        // A beat leaves the FIFO while `nxt` is free (`nxt` holds a beat
        // only while `beat` does). It goes to `beat` when that is empty or
        // being taken, else to `nxt`; a taken `beat` is refilled from `nxt`
        // at the same edge, so the bytes of a frame follow each other
        // without a gap.
        self.pull.next = self.offer.val() & !self.nxt_v.q.val();
        self.fifo.read.next = self.pull.val();
        self.gate.take.next = self.pull.val();
        self.gate.take_last.next = self.fifo.data_out.val().get_bit(72);
        if self.take.val() {
            self.beat_v.d.next = false;
            if self.nxt_v.q.val() {
                self.beat.d.next = self.nxt.q.val();
                self.beat_v.d.next = true;
                self.nxt_v.d.next = false;
            }
        }
        if self.pull.val() {
            if !self.beat_v.q.val() | self.take.val() {
                self.beat.d.next = self.fifo.data_out.val();
                self.beat_v.d.next = true;
            } else {
                self.nxt.d.next = self.fifo.data_out.val();
                self.nxt_v.d.next = true;
            }
        }
        if self.rrst.val() {
            self.beat_v.d.next = false;
            self.nxt_v.d.next = false;
        }
        self.m_data.next = self.unpack.m_data.val();
        self.m_valid.next = self.unpack.m_valid.val();
        self.m_last.next = self.unpack.m_last.val();
        self.unpack.m_ready.next = self.m_ready.val();
    }
}

#[cfg(test)]
mod tests;
