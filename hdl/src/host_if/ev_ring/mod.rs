//! The event path of the host interface: the event FIFOs and the event
//! ring's writer, as a native rust-hdl block.
//!
//! [`EvRing`] keeps three FIFOs of 64 entries:
//!
//! * the **verdict FIFO** (a [`BlockRam`]): the core's verdict events
//!   (`NicCore::m_ev_*`), words 0..5 and bits 36..0 of word 6 of their
//!   entries;
//! * the **TX-table FIFO** (a [`BlockRam`]): fate events
//!   (`NicCore::m_fate_*`, taken while it has room for them and for a
//!   result in the same cycle), the ACK receiver's results
//!   (`NicCore::m_ackrx_*`) and the results of the TX queue's table
//!   operations, each result with its slot's view from the table's
//!   capture port; a result arriving in the cycle a fate (or the skid) is
//!   pushed waits a cycle in a skid register;
//! * the **placement addresses** (a [`LutRam`]): the address of each
//!   placement write (the core's `m_dma_*`, taken on the DMA write
//!   arbiter's first port), for the verdict event of its packet.
//!
//! The writer takes the FIFOs' heads in turn (the TX-table FIFO first
//! when both hold entries and the verdict FIFO went last) while the ring
//! is enabled and has room (`prod - cons < 2^size_log2`), and writes each
//! as a 64-byte entry at `base + (prod mod 2^size_log2) · 64` through the
//! DMA write arbiter's second port, a beat at a time. A verdict event of
//! a placed packet with a payload waits until the placement writes before
//! it have all been taken and carries its write's address (when it fits in
//! 48 bits); the writer serves the other FIFO meanwhile. A result entry
//! is followed by a view entry with the rest of its slot's view. Every
//! entry carries `prod` in word 7 and its phase bit (the inverse of bit
//! `size_log2` of `prod`) in bit 511, written last; then `prod` counts one
//! up and `inc` is high for a cycle (the interrupt vector's count). The
//! FIFOs' fill holds the MAC RX port (`hold`) and the TX queue's table
//! operations (`qop_room`), so no event is lost (`lost` counts one that
//! was: 0 by design).
//!
//! rust-hdl's simulator runs it (the test below); under Verilator it is
//! part of [`crate::NicDevice`] (`metaroce-sim-tb`, `nic_device`).
//! `docs/hardware.md` §18 gives the entry formats.

use rust_hdl::prelude::*;

use crate::bus::{AckDoneIn, DmaWriteOut, FateIn, VerdictIn};

use super::{EV_HOLD, EVQ_ENTRY, TT_HOLD, ev_type};
use crate::helpers::{BlockRam, LutRam, konst, native_block};
use crate::nic_core::TX_SLOT_BITS;
use crate::tx_path::VIEW_BITS;

mod seq;
pub use seq::EvSeq;

/// Bits of a verdict FIFO entry: words 0..5 and bits 36..0 of word 6.
pub const EVF_BITS: usize = 421;
/// Bits of a TX-table FIFO entry: `{type[3:0], slot view, payload[127:0]}`.
pub const TT_BITS: usize = 4 + VIEW_BITS + 128;
/// Bits of a slot view that a result entry carries (words 2..6).
const VIEW_LO: usize = 320;
/// Bits of a slot view that its view entry carries.
const VHI_BITS: usize = VIEW_BITS - VIEW_LO;
/// Bits of an event ring entry.
const ENTRY_BITS: usize = 8 * EVQ_ENTRY;
/// TX-table FIFO fill below which a queued table operation is issued: its
/// result always finds room (results have no back-pressure).
const TT_QOP: usize = 32;
/// TX-table FIFO fill up to which a fate event is taken (room for it and
/// for a result in the same cycle).
const TT_FATE: usize = 62;
/// Entries of each FIFO.
const DEPTH: usize = 64;

/// Where [`EvRing`]'s writer is with an entry.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum EvState {
    /// No entry, or no room.
    Idle,
    /// A FIFO's head is taken into the entry (or left, fenced).
    Load,
    /// The entry's beats go out.
    Write,
    /// A result's view entry is to be written.
    View,
}

native_block! {
    /// The event FIFOs and the event ring's writer at `W`-bit beats
    /// (`B = W / 8` lanes; 64 or 512).
    EvRing[W, B]
    check {
        W == 8 * B && (W == 64 || W == 512),
        "EvRing<{W}, {B}>: 64 or 512 bits, W = 8 * B"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: FIFOs empty, idle, counters 0."]
        rst: Signal<In, Bit>,
        #[doc = "`EVQ.CTRL`: enabled."]
        ctrl: Signal<In, Bit>,
        #[doc = "`EVQ.BASE_HI:BASE_LO`: the ring's base address."]
        base: Signal<In, Bits<64>>,
        #[doc = "`EVQ.SIZE_LOG2`: log2 of the ring's entries."]
        size_log2: Signal<In, Bits<5>>,
        #[doc = "`EVQ.CONS`: the host's consumer index."]
        cons: Signal<In, Bits<32>>,
        #[doc = "The core's verdict events (`NicCore::m_ev`)."]
        ev: VerdictIn,
        #[doc = "The TX table's fate events (`NicCore::m_fate`)."]
        fate: FateIn,
        #[doc = "`NicCore::m_fate_hw`."]
        fate_hw: Signal<In, Bit>,
        #[doc = "ACKs the ACK receiver applied (`NicCore::m_ackrx`)."]
        ackrx: AckDoneIn<TX_SLOT_BITS>,
        #[doc = "A queued table operation's result (`NicCore::res_*` while it runs)."]
        qres_valid: Signal<In, Bit>,
        #[doc = "The queued operation's code."]
        qop_code: Signal<In, Bits<3>>,
        #[doc = "The queued operation's slot."]
        qop_slot: Signal<In, Bits<TX_SLOT_BITS>>,
        #[doc = "`NicCore::res_ok`."]
        res_ok: Signal<In, Bit>,
        #[doc = "`NicCore::res_psn`."]
        res_psn: Signal<In, Bits<32>>,
        #[doc = "`NicCore::res_pkts`."]
        res_pkts: Signal<In, Bits<32>>,
        #[doc = "`NicCore::res_bytes`."]
        res_bytes: Signal<In, Bits<32>>,
        #[doc = "`NicCore::cap_view`: the view of the result's slot (this cycle's)."]
        cap_view: Signal<In, Bits<VIEW_BITS>>,
        #[doc = "Placement write (the core's `m_dma_*`): beat valid."]
        pl_tvalid: Signal<In, Bit>,
        #[doc = "Placement write: the arbiter takes the beat."]
        pl_tready: Signal<In, Bit>,
        #[doc = "Placement write: first beat of a request."]
        pl_first: Signal<In, Bit>,
        #[doc = "Placement write: last beat of a request."]
        pl_tlast: Signal<In, Bit>,
        #[doc = "Placement write: host address (with the first beat)."]
        pl_addr: Signal<In, Bits<64>>,
        #[doc = "The event ring's DMA writes, through the host interface's write arbiter (`tvalid` from the writer's state alone)."]
        w: DmaWriteOut<W, B>,
        #[doc = "`EVQ.PROD`: entries written (free-running)."]
        prod: Signal<Out, Bits<32>>,
        #[doc = "An entry was written in the cycle before (the vector's count)."]
        inc: Signal<Out, Bit>,
        #[doc = "`CNT.EV_LOST`: events that found their FIFO full (0 by design)."]
        lost: Signal<Out, Bits<32>>,
        #[doc = "A FIFO is filling: hold the MAC RX port at a frame boundary."]
        hold: Signal<Out, Bit>,
        #[doc = "The TX-table FIFO has room for a queued operation's result."]
        qop_room: Signal<Out, Bit>,
    }
    state {
        seq: EvSeq<B>,
        evf: BlockRam<EVF_BITS, 6> = BlockRam::with_words(DEPTH),
        ttf: BlockRam<TT_BITS, 6> = BlockRam::with_words(DEPTH),
        pa: LutRam<64, 6>,
        entry: DFF<Bits<ENTRY_BITS>>,
        vhi: DFF<Bits<VHI_BITS>>,
        skid: DFF<Bits<TT_BITS>>,
        // Temporaries of the outputs (of registers and the ring's
        // registers only): the ring's index mask, the beat's offset.
        mask: Signal<Local, Bits<32>>,
        sel: Signal<Local, Bits<9>>,
        // Temporaries of the registers' inputs, none read by an output
        // (the arbiter's ready and the core's handshakes depend on those):
        // the FIFOs' inputs, a fate or a result comes, the ring has room,
        // the verdict event is fenced and has its address, the entry.
        ev_in: Signal<Local, Bits<EVF_BITS>>,
        res_in: Signal<Local, Bits<TT_BITS>>,
        tt_in: Signal<Local, Bits<TT_BITS>>,
        fate_take: Signal<Local, Bit>,
        res_push: Signal<Local, Bit>,
        pa_push: Signal<Local, Bit>,
        room: Signal<Local, Bit>,
        fence: Signal<Local, Bit>,
        pa_ok: Signal<Local, Bit>,
        ttype: Signal<Local, Bits<4>>,
        ent: Signal<Local, Bits<ENTRY_BITS>>,
    }
    consts {
        k_one: Constant<Bits<32>> = konst(1),
        k_depth: Constant<Bits<7>> = konst(DEPTH),
        k_ev_hold: Constant<Bits<7>> = konst(EV_HOLD),
        k_tt_hold: Constant<Bits<7>> = konst(TT_HOLD),
        k_tt_qop: Constant<Bits<7>> = konst(TT_QOP),
        k_tt_fate: Constant<Bits<7>> = konst(TT_FATE),
        k_w_shift: Constant<Bits<4>> = konst(W.trailing_zeros() as usize),
        k_entry: Constant<Bits<16>> = konst(EVQ_ENTRY),
        k_keep: Constant<Bits<B>> = Constant::new(Bits::<B>::mask()),
        k_ttype_at: Constant<Bits<16>> = konst(TT_BITS - 4),
        k_verdict: Constant<Bits<4>> = konst(usize::from(ev_type::VERDICT)),
        k_ackrx: Constant<Bits<4>> = konst(usize::from(ev_type::ACKRX)),
        k_fate: Constant<Bits<4>> = konst(usize::from(ev_type::FATE)),
        k_op_result: Constant<Bits<4>> = konst(usize::from(ev_type::OP_RESULT)),
        k_view: Constant<Bits<4>> = konst(usize::from(ev_type::VIEW)),
    }
}

impl<const W: usize, const B: usize> Logic for EvRing<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, entry, vhi, skid);
        self.seq.clock.next = self.clock.val();
        self.seq.rst.next = self.rst.val();
        self.evf.clock.next = self.clock.val();
        self.ttf.clock.next = self.clock.val();
        self.pa.clock.next = self.clock.val();

        // ---- outputs ----
        self.mask.next = (self.k_one.val() << self.size_log2.val()) - 1;
        self.w.addr.next =
            self.base.val() + (bit_cast::<64, 32>(self.seq.prod.val() & self.mask.val()) << 6);
        self.w.len.next = self.k_entry.val();
        self.w.first.next = self.seq.beat.val() == 0;
        self.sel.next = bit_cast::<9, 4>(self.seq.beat.val()) << self.k_w_shift.val();
        self.w.tdata.next = self.entry.q.val().get_bits::<W>(self.sel.val().index());
        self.w.tkeep.next = self.k_keep.val();
        self.w.tvalid.next = self.seq.st.val() == EvState::Write;
        self.w.tlast.next = self.seq.last.val();
        self.fate.ready.next =
            (self.seq.ttf_count.val() < self.k_tt_fate.val()) & !self.seq.skid_v.val();
        self.hold.next = (self.seq.evf_count.val() >= self.k_ev_hold.val())
            | (self.seq.ttf_count.val() >= self.k_tt_hold.val());
        self.qop_room.next = self.seq.ttf_count.val() < self.k_tt_qop.val();
        self.prod.next = self.seq.prod.val();
        self.inc.next = self.seq.inc.val();
        self.lost.next = self.seq.lost.val();

        // ---- the verdict FIFO ----
        self.ev_in.next = bit_cast::<EVF_BITS, 32>(self.ev.dst_qpn.val())
            | (bit_cast::<EVF_BITS, 8>(self.ev.opcode.val()) << 32)
            | (bit_cast::<EVF_BITS, 8>(self.ev.version.val()) << 40)
            | (bit_cast::<EVF_BITS, 16>(self.ev.flags.val()) << 48)
            | (bit_cast::<EVF_BITS, 32>(self.ev.path_psn.val()) << 64)
            | (bit_cast::<EVF_BITS, 16>(self.ev.path.val()) << 96)
            | (bit_cast::<EVF_BITS, 16>(self.ev.stream.val()) << 112)
            | (bit_cast::<EVF_BITS, 64>(self.ev.timestamp.val()) << 128)
            | (bit_cast::<EVF_BITS, 32>(self.ev.msn.val()) << 192)
            | (bit_cast::<EVF_BITS, 32>(self.ev.recv_idx.val()) << 224)
            | (bit_cast::<EVF_BITS, 32>(self.ev.imm.val()) << 256)
            | (bit_cast::<EVF_BITS, 32>(self.ev.conn_psn.val()) << 288)
            | (bit_cast::<EVF_BITS, 32>(self.ev.offset.val()) << 320)
            | (bit_cast::<EVF_BITS, 32>(self.ev.msg_len.val()) << 352)
            | (bit_cast::<EVF_BITS, 16>(self.ev.len.val()) << 384)
            | (bit_cast::<EVF_BITS, 16>(self.ev.src_port.val()) << 400)
            | (bit_cast::<EVF_BITS, 5>(self.ev.code.val()) << 416);
        self.evf.write_enable.next =
            self.ev.valid.val() & (self.seq.evf_count.val() != self.k_depth.val());
        self.evf.write_address.next = self.seq.evf_wr.val();
        self.evf.write_data.next = self.ev_in.val();
        self.evf.read_address.next = self.seq.evf_rd.val();
        self.seq.ev_valid.next = self.ev.valid.val();

        // ---- the TX-table FIFO: the skid, else a fate, else a result ----
        self.res_in.next = (bit_cast::<TT_BITS, 3>(self.qop_code.val()) << 101)
            | (bit_cast::<TT_BITS, TX_SLOT_BITS>(self.qop_slot.val()) << 96)
            | (bit_cast::<TT_BITS, 32>(self.res_psn.val()) << 64)
            | (bit_cast::<TT_BITS, 32>(self.res_bytes.val()) << 32)
            | bit_cast::<TT_BITS, 32>(self.res_pkts.val())
            | (bit_cast::<TT_BITS, 4>(self.k_op_result.val()) << self.k_ttype_at.val());
        self.res_in.next = self.res_in.val().replace_bit(100, self.res_ok.val());
        if self.ackrx.valid.val() {
            self.res_in.next = (bit_cast::<TT_BITS, TX_SLOT_BITS>(self.ackrx.slot.val()) << 96)
                | (bit_cast::<TT_BITS, 32>(self.ackrx.conn_cum.val()) << 64)
                | (bit_cast::<TT_BITS, 32>(self.ackrx.bytes.val()) << 32)
                | bit_cast::<TT_BITS, 32>(self.ackrx.pkts.val())
                | (bit_cast::<TT_BITS, 4>(self.k_ackrx.val()) << self.k_ttype_at.val());
        }
        self.res_in.next =
            self.res_in.val() | (bit_cast::<TT_BITS, VIEW_BITS>(self.cap_view.val()) << 128);
        self.fate_take.next = self.fate.valid.val()
            & (self.seq.ttf_count.val() < self.k_tt_fate.val())
            & !self.seq.skid_v.val();
        self.res_push.next = self.ackrx.valid.val() | self.qres_valid.val();
        self.tt_in.next = self.res_in.val();
        if self.fate_take.val() {
            self.tt_in.next = bit_cast::<TT_BITS, 32>(self.fate.conn_psn.val())
                | (bit_cast::<TT_BITS, 4>(self.k_fate.val()) << self.k_ttype_at.val());
            self.tt_in.next = self.tt_in.val().replace_bit(32, self.fate.lost.val());
            self.tt_in.next = self.tt_in.val().replace_bit(33, self.fate_hw.val());
        }
        if self.seq.skid_v.val() {
            self.tt_in.next = self.skid.q.val();
        }
        // A result arriving while the skid or a fate is pushed waits in
        // the skid for the next cycle (its view captured now).
        self.seq.skid_load.next =
            (self.seq.skid_v.val() | self.fate_take.val()) & self.res_push.val();
        self.seq.tt_push.next = self.seq.skid_v.val() | self.fate_take.val() | self.res_push.val();
        if (self.seq.skid_v.val() | self.fate_take.val()) & self.res_push.val() {
            self.skid.d.next = self.res_in.val();
        }
        self.ttf.write_enable.next =
            (self.seq.skid_v.val() | self.fate_take.val() | self.res_push.val())
                & (self.seq.ttf_count.val() != self.k_depth.val());
        self.ttf.write_address.next = self.seq.ttf_wr.val();
        self.ttf.write_data.next = self.tt_in.val();
        self.ttf.read_address.next = self.seq.ttf_rd.val();

        // ---- the placement addresses ----
        self.pa_push.next = self.pl_tvalid.val() & self.pl_tready.val() & self.pl_first.val();
        self.seq.pa_push.next = self.pa_push.val();
        self.seq.pl_last.next = self.pl_tvalid.val() & self.pl_tready.val() & self.pl_tlast.val();
        self.pa.write_enable.next =
            self.pa_push.val() & (self.seq.pa_count.val() != self.k_depth.val());
        self.pa.write_address.next = self.seq.pa_wr.val();
        self.pa.write_data.next = self.pl_addr.val();
        self.pa.read_address.next = self.seq.pa_rd.val();

        // ---- the writer: a FIFO's head into the entry ----
        self.room.next =
            (self.seq.prod.val() - self.cons.val()) < (self.k_one.val() << self.size_log2.val());
        self.seq.start.next = self.ctrl.val()
            & self.room.val()
            & ((self.seq.evf_count.val() != 0) | (self.seq.ttf_count.val() != 0));
        self.seq.room.next = self.room.val();
        self.seq.w_tready.next = self.w.tready.val();
        // A placed packet with a payload: its event waits for its DMA
        // write, and carries the write's address when it fits in 48 bits.
        self.fence.next = (self.evf.read_data.val().get_bits::<5>(416) == 0)
            & (self.evf.read_data.val().get_bits::<16>(384) != 0);
        self.seq.fence.next = self.fence.val();
        self.pa_ok.next = self.fence.val()
            & (self.seq.pa_count.val() != 0)
            & (self.pa.read_data.val().get_bits::<16>(48) == 0);
        self.ttype.next = self
            .ttf
            .read_data
            .val()
            .get_bits::<4>(self.k_ttype_at.val().index());
        self.seq.vpend_in.next =
            (self.ttype.val() == self.k_ackrx.val()) | (self.ttype.val() == self.k_op_result.val());
        // Word 7: the entry's index in bits 31..0, its type in 59..56, the
        // phase in 63.
        self.ent.next = bit_cast::<ENTRY_BITS, 32>(self.seq.prod.val()) << 448;
        self.ent.next = self.ent.val().replace_bit(
            511,
            !self.seq.prod.val().get_bit(self.size_log2.val().index()),
        );
        if self.seq.load_tt.val() {
            // Words 2..6 carry the first part of a result's slot view
            // (zeros for a fate); the rest follows in a view entry.
            self.ent.next = self.ent.val()
                | (bit_cast::<ENTRY_BITS, 4>(self.ttype.val()) << 504)
                | bit_cast::<ENTRY_BITS, 448>(self.ttf.read_data.val().get_bits::<448>(0));
            self.vhi.d.next = self.ttf.read_data.val().get_bits::<VHI_BITS>(448);
        }
        if self.seq.load_ev.val() {
            // The placement address: bits 23..0 in w6[63:40], 47..24 in
            // w7[55:32], w6[37] set when it is there.
            self.ent.next = self.ent.val()
                | (bit_cast::<ENTRY_BITS, 4>(self.k_verdict.val()) << 504)
                | bit_cast::<ENTRY_BITS, EVF_BITS>(self.evf.read_data.val());
            if self.pa_ok.val() {
                self.ent.next = self.ent.val().replace_bit(421, true)
                    | (bit_cast::<ENTRY_BITS, 24>(self.pa.read_data.val().get_bits::<24>(0))
                        << 424)
                    | (bit_cast::<ENTRY_BITS, 24>(self.pa.read_data.val().get_bits::<24>(24))
                        << 480);
            }
        }
        if self.seq.load_view.val() {
            self.ent.next = self.ent.val()
                | (bit_cast::<ENTRY_BITS, 4>(self.k_view.val()) << 504)
                | bit_cast::<ENTRY_BITS, VHI_BITS>(self.vhi.q.val());
        }
        if self.seq.load_tt.val() | self.seq.load_ev.val() | self.seq.load_view.val() {
            self.entry.d.next = self.ent.val();
        }
    }
}

#[cfg(test)]
mod tests;
