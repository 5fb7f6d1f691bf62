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
//! * the **placement addresses** (a [`BlockRam`]): the address of each
//!   placement write (the core's `m_dma_*`, taken on the DMA write
//!   arbiter's first port), for the verdict event of its packet. Read at
//!   the read pointer: only the writer's `Load` pops, and it always follows
//!   an `Idle` cycle, so the registered read has the head by then (a push
//!   at that edge through the bypass).
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
use crate::helpers::{BlockRam, konst, native_block};
use crate::nic_core::TX_SLOT_BITS;
use crate::tx_path::VIEW_BITS;

mod entry;
mod ptrs;
mod result;
mod seq;
mod verdicts;
pub use entry::EvEntry;
pub use ptrs::EvPtrs;
pub use result::EvResult;
pub use seq::EvSeq;
pub use verdicts::EvVerdicts;

/// Bits of a verdict FIFO entry: words 0..5 and bits 36..0 of word 6.
pub const EVF_BITS: usize = 421;
/// Bits of a TX-table FIFO entry: `{type[3:0], slot view, payload[127:0]}`.
pub const TT_BITS: usize = 4 + VIEW_BITS + 128;
/// Bits of a TX-table FIFO entry below its type.
const TT_LO: usize = TT_BITS - 4;
/// Bits of a slot view that a result entry carries (words 2..6).
const VIEW_LO: usize = 320;
/// Bits of a slot view that its view entry carries.
const VHI_BITS: usize = VIEW_BITS - VIEW_LO;
/// Bits of an event ring entry.
const ENTRY_BITS: usize = 8 * EVQ_ENTRY;
/// TX-table FIFO fill below which a queued table operation is issued: its
/// result always finds room (results have no back-pressure). Checked a
/// cycle late ([`EvSeq::qop_room`]).
const TT_QOP: usize = 32;
/// TX-table FIFO fill below which a fate event is taken (room for it and
/// for a result in the same cycle). Checked a cycle late
/// ([`EvSeq::fate_room`]).
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
        evf: EvVerdicts,
        ttf: BlockRam<TT_BITS, 6> = BlockRam::with_words(DEPTH).without_bypass(),
        pa: BlockRam<64, 6> = BlockRam::with_words(DEPTH),
        entry: EvEntry,
        result: EvResult,
        skid: DFF<Bits<TT_BITS>>,
        // Temporaries of the outputs (of registers and the ring's
        // registers only): the ring's index mask, the beat's offset.
        mask: Signal<Local, Bits<32>>,
        sel: Signal<Local, Bits<9>>,
        // Temporaries of the registers' inputs, none read by an output
        // (the arbiter's ready and the core's handshakes depend on those):
        // the TX-table FIFO's inputs, a fate or a result comes, the ring
        // has room, the verdict event is fenced and has its address.
        tt_in: Signal<Local, Bits<TT_BITS>>,
        fate_take: Signal<Local, Bit>,
        res_push: Signal<Local, Bit>,
        pa_push: Signal<Local, Bit>,
        room: Signal<Local, Bit>,
        fence: Signal<Local, Bit>,
        pa_ok: Signal<Local, Bit>,
        ttype: Signal<Local, Bits<4>>,
    }
    consts {
        k_one: Constant<Bits<32>> = konst(1),
        k_depth: Constant<Bits<7>> = konst(DEPTH),
        k_ev_hold: Constant<Bits<7>> = konst(EV_HOLD),
        k_tt_hold: Constant<Bits<7>> = konst(TT_HOLD),
        k_w_shift: Constant<Bits<4>> = konst(W.trailing_zeros() as usize),
        k_entry: Constant<Bits<16>> = konst(EVQ_ENTRY),
        k_keep: Constant<Bits<B>> = Constant::new(Bits::<B>::mask()),
        k_ttype_at: Constant<Bits<16>> = konst(TT_BITS - 4),
        k_ackrx: Constant<Bits<4>> = konst(usize::from(ev_type::ACKRX)),
        k_fate: Constant<Bits<4>> = konst(usize::from(ev_type::FATE)),
        k_op_result: Constant<Bits<4>> = konst(usize::from(ev_type::OP_RESULT)),
    }
}

impl<const W: usize, const B: usize> Logic for EvRing<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, skid);
        self.seq.clock.next = self.clock.val();
        self.seq.rst.next = self.rst.val();
        self.evf.clock.next = self.clock.val();
        self.entry.clock.next = self.clock.val();
        self.ttf.clock.next = self.clock.val();
        self.pa.clock.next = self.clock.val();

        // ---- outputs ----
        self.mask.next = (self.k_one.val() << self.size_log2.val()) - 1;
        self.w.addr.next =
            self.base.val() + (bit_cast::<64, 32>(self.seq.prod.val() & self.mask.val()) << 6);
        self.w.len.next = self.k_entry.val();
        self.w.first.next = self.seq.beat.val() == 0;
        self.sel.next = bit_cast::<9, 4>(self.seq.beat.val()) << self.k_w_shift.val();
        self.w.tdata.next = self.entry.word.val().get_bits::<W>(self.sel.val().index());
        self.w.tkeep.next = self.k_keep.val();
        self.w.tvalid.next = self.seq.st.val() == EvState::Write;
        self.w.tlast.next = self.seq.last.val();
        self.fate.ready.next = self.seq.fate_room.val() & !self.seq.skid_v.val();
        self.hold.next = (self.seq.evf_count.val() >= self.k_ev_hold.val())
            | (self.seq.ttf_count.val() >= self.k_tt_hold.val());
        self.qop_room.next = self.seq.qop_room.val();
        self.prod.next = self.seq.prod.val();
        self.inc.next = self.seq.inc.val();
        self.lost.next = self.seq.lost.val();

        // ---- the verdict FIFO ----
        VerdictIn::link(&mut self.ev, &mut self.evf.ev);
        self.evf.full.next = self.seq.evf_count.val() == self.k_depth.val();
        self.evf.wr.next = self.seq.evf_wr.val();
        self.evf.rd.next = self.seq.evf_rd.val();
        self.seq.ev_valid.next = self.ev.valid.val();

        // ---- the TX-table FIFO: the skid, else a fate, else a result ----
        AckDoneIn::<TX_SLOT_BITS>::link(&mut self.ackrx, &mut self.result.ackrx);
        self.result.qop_code.next = self.qop_code.val();
        self.result.qop_slot.next = self.qop_slot.val();
        self.result.res_ok.next = self.res_ok.val();
        self.result.res_psn.next = self.res_psn.val();
        self.result.res_pkts.next = self.res_pkts.val();
        self.result.res_bytes.next = self.res_bytes.val();
        self.result.cap_view.next = self.cap_view.val();
        self.result.push.next = self.ackrx.valid.val() | self.qres_valid.val();
        self.fate_take.next =
            self.fate.valid.val() & self.seq.fate_room.val() & !self.seq.skid_v.val();
        self.res_push.next = self.ackrx.valid.val() | self.qres_valid.val();
        self.tt_in.next = self.result.entry.val();
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
            self.skid.d.next = self.result.entry.val();
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
        self.fence.next = (self.evf.head.val().get_bits::<5>(416) == 0)
            & (self.evf.head.val().get_bits::<16>(384) != 0);
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
        self.entry.size_log2.next = self.size_log2.val();
        self.entry.prod.next = self.seq.prod.val();
        self.entry.load_tt.next = self.seq.load_tt.val();
        self.entry.load_ev.next = self.seq.load_ev.val();
        self.entry.load_view.next = self.seq.load_view.val();
        self.entry.tt.next = self.ttf.read_data.val().get_bits::<TT_LO>(0);
        self.entry.ttype.next = self.ttype.val();
        self.entry.ev.next = self.evf.head.val();
        self.entry.pa_ok.next = self.pa_ok.val();
        self.entry.pa.next = self.pa.read_data.val().get_bits::<48>(0);
    }
}

#[cfg(test)]
mod tests;
