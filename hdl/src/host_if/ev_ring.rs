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

use super::{EV_HOLD, EVQ_ENTRY, TT_HOLD, ev_type};
use crate::helpers::{BlockRam, LutRam, konst, native_block};
use crate::nic_core::TX_SLOT_BITS;
use crate::tx_path::VIEW_BITS;

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
        #[doc = "`NicCore::m_ev_valid`: a verdict event."]
        ev_valid: Signal<In, Bit>,
        #[doc = "`NicCore::m_ev_code`."]
        ev_code: Signal<In, Bits<5>>,
        #[doc = "`NicCore::m_ev_version`."]
        ev_version: Signal<In, Bits<8>>,
        #[doc = "`NicCore::m_ev_opcode`."]
        ev_opcode: Signal<In, Bits<8>>,
        #[doc = "`NicCore::m_ev_flags`."]
        ev_flags: Signal<In, Bits<16>>,
        #[doc = "`NicCore::m_ev_dst_qpn`."]
        ev_dst_qpn: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_path`."]
        ev_path: Signal<In, Bits<16>>,
        #[doc = "`NicCore::m_ev_path_psn`."]
        ev_path_psn: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_timestamp`."]
        ev_timestamp: Signal<In, Bits<64>>,
        #[doc = "`NicCore::m_ev_msn`."]
        ev_msn: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_recv_idx`."]
        ev_recv_idx: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_imm`."]
        ev_imm: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_stream`."]
        ev_stream: Signal<In, Bits<16>>,
        #[doc = "`NicCore::m_ev_conn_psn`."]
        ev_conn_psn: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_src_port`."]
        ev_src_port: Signal<In, Bits<16>>,
        #[doc = "`NicCore::m_ev_offset`."]
        ev_offset: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_msg_len`."]
        ev_msg_len: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ev_len`."]
        ev_len: Signal<In, Bits<16>>,
        #[doc = "`NicCore::m_fate_valid`: a fate event."]
        fate_valid: Signal<In, Bit>,
        #[doc = "`NicCore::m_fate_ready`: taken (room for it and a result)."]
        fate_ready: Signal<Out, Bit>,
        #[doc = "`NicCore::m_fate_lost`."]
        fate_lost: Signal<In, Bit>,
        #[doc = "`NicCore::m_fate_hw`."]
        fate_hw: Signal<In, Bit>,
        #[doc = "`NicCore::m_fate_conn_psn`."]
        fate_conn_psn: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ackrx_valid`: an ACK the ACK receiver applied."]
        ackrx_valid: Signal<In, Bit>,
        #[doc = "`NicCore::m_ackrx_slot`."]
        ackrx_slot: Signal<In, Bits<TX_SLOT_BITS>>,
        #[doc = "`NicCore::m_ackrx_pkts`."]
        ackrx_pkts: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ackrx_bytes`."]
        ackrx_bytes: Signal<In, Bits<32>>,
        #[doc = "`NicCore::m_ackrx_conn_cum`."]
        ackrx_conn_cum: Signal<In, Bits<32>>,
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
        #[doc = "DMA write: the entry's host address."]
        w_addr: Signal<Out, Bits<64>>,
        #[doc = "DMA write: bytes (an entry, 64)."]
        w_len: Signal<Out, Bits<16>>,
        #[doc = "DMA write: the request's first beat."]
        w_first: Signal<Out, Bit>,
        #[doc = "DMA write: data."]
        w_tdata: Signal<Out, Bits<W>>,
        #[doc = "DMA write: byte enables (all)."]
        w_tkeep: Signal<Out, Bits<B>>,
        #[doc = "DMA write: beat valid (from the state alone)."]
        w_tvalid: Signal<Out, Bit>,
        #[doc = "DMA write: the arbiter gives this block the port and the beat is taken."]
        w_tready: Signal<In, Bit>,
        #[doc = "DMA write: the request's last beat."]
        w_tlast: Signal<Out, Bit>,
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
        self.w_addr.next =
            self.base.val() + (bit_cast::<64, 32>(self.seq.prod.val() & self.mask.val()) << 6);
        self.w_len.next = self.k_entry.val();
        self.w_first.next = self.seq.beat.val() == 0;
        self.sel.next = bit_cast::<9, 4>(self.seq.beat.val()) << self.k_w_shift.val();
        self.w_tdata.next = self.entry.q.val().get_bits::<W>(self.sel.val().index());
        self.w_tkeep.next = self.k_keep.val();
        self.w_tvalid.next = self.seq.st.val() == EvState::Write;
        self.w_tlast.next = self.seq.last.val();
        self.fate_ready.next =
            (self.seq.ttf_count.val() < self.k_tt_fate.val()) & !self.seq.skid_v.val();
        self.hold.next = (self.seq.evf_count.val() >= self.k_ev_hold.val())
            | (self.seq.ttf_count.val() >= self.k_tt_hold.val());
        self.qop_room.next = self.seq.ttf_count.val() < self.k_tt_qop.val();
        self.prod.next = self.seq.prod.val();
        self.inc.next = self.seq.inc.val();
        self.lost.next = self.seq.lost.val();

        // ---- the verdict FIFO ----
        self.ev_in.next = bit_cast::<EVF_BITS, 32>(self.ev_dst_qpn.val())
            | (bit_cast::<EVF_BITS, 8>(self.ev_opcode.val()) << 32)
            | (bit_cast::<EVF_BITS, 8>(self.ev_version.val()) << 40)
            | (bit_cast::<EVF_BITS, 16>(self.ev_flags.val()) << 48)
            | (bit_cast::<EVF_BITS, 32>(self.ev_path_psn.val()) << 64)
            | (bit_cast::<EVF_BITS, 16>(self.ev_path.val()) << 96)
            | (bit_cast::<EVF_BITS, 16>(self.ev_stream.val()) << 112)
            | (bit_cast::<EVF_BITS, 64>(self.ev_timestamp.val()) << 128)
            | (bit_cast::<EVF_BITS, 32>(self.ev_msn.val()) << 192)
            | (bit_cast::<EVF_BITS, 32>(self.ev_recv_idx.val()) << 224)
            | (bit_cast::<EVF_BITS, 32>(self.ev_imm.val()) << 256)
            | (bit_cast::<EVF_BITS, 32>(self.ev_conn_psn.val()) << 288)
            | (bit_cast::<EVF_BITS, 32>(self.ev_offset.val()) << 320)
            | (bit_cast::<EVF_BITS, 32>(self.ev_msg_len.val()) << 352)
            | (bit_cast::<EVF_BITS, 16>(self.ev_len.val()) << 384)
            | (bit_cast::<EVF_BITS, 16>(self.ev_src_port.val()) << 400)
            | (bit_cast::<EVF_BITS, 5>(self.ev_code.val()) << 416);
        self.evf.write_enable.next =
            self.ev_valid.val() & (self.seq.evf_count.val() != self.k_depth.val());
        self.evf.write_address.next = self.seq.evf_wr.val();
        self.evf.write_data.next = self.ev_in.val();
        self.evf.read_address.next = self.seq.evf_rd.val();
        self.seq.ev_valid.next = self.ev_valid.val();

        // ---- the TX-table FIFO: the skid, else a fate, else a result ----
        self.res_in.next = (bit_cast::<TT_BITS, 3>(self.qop_code.val()) << 101)
            | (bit_cast::<TT_BITS, TX_SLOT_BITS>(self.qop_slot.val()) << 96)
            | (bit_cast::<TT_BITS, 32>(self.res_psn.val()) << 64)
            | (bit_cast::<TT_BITS, 32>(self.res_bytes.val()) << 32)
            | bit_cast::<TT_BITS, 32>(self.res_pkts.val())
            | (bit_cast::<TT_BITS, 4>(self.k_op_result.val()) << self.k_ttype_at.val());
        self.res_in.next = self.res_in.val().replace_bit(100, self.res_ok.val());
        if self.ackrx_valid.val() {
            self.res_in.next = (bit_cast::<TT_BITS, TX_SLOT_BITS>(self.ackrx_slot.val()) << 96)
                | (bit_cast::<TT_BITS, 32>(self.ackrx_conn_cum.val()) << 64)
                | (bit_cast::<TT_BITS, 32>(self.ackrx_bytes.val()) << 32)
                | bit_cast::<TT_BITS, 32>(self.ackrx_pkts.val())
                | (bit_cast::<TT_BITS, 4>(self.k_ackrx.val()) << self.k_ttype_at.val());
        }
        self.res_in.next =
            self.res_in.val() | (bit_cast::<TT_BITS, VIEW_BITS>(self.cap_view.val()) << 128);
        self.fate_take.next = self.fate_valid.val()
            & (self.seq.ttf_count.val() < self.k_tt_fate.val())
            & !self.seq.skid_v.val();
        self.res_push.next = self.ackrx_valid.val() | self.qres_valid.val();
        self.tt_in.next = self.res_in.val();
        if self.fate_take.val() {
            self.tt_in.next = bit_cast::<TT_BITS, 32>(self.fate_conn_psn.val())
                | (bit_cast::<TT_BITS, 4>(self.k_fate.val()) << self.k_ttype_at.val());
            self.tt_in.next = self.tt_in.val().replace_bit(32, self.fate_lost.val());
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
        self.seq.w_tready.next = self.w_tready.val();
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

native_block! {
    /// The sequencer of [`EvRing`]: the writer's state, beat and producer
    /// index, the FIFOs' pointers, the fence's counts, the skid's flag and
    /// the lost counter, with the transitions the DMA write port's ready and
    /// the core's handshakes decide. A block of its own so that those reach
    /// only these registers' inputs, and its outputs are registers' (the
    /// arbiter's ready depends on `EvRing::w_tvalid`, the core's handshakes
    /// on `fate_ready` and `qop_room`; in one kernel with them Verilator
    /// would see a combinational loop).
    EvSeq[B]
    check {
        EVQ_ENTRY % B == 0 && EVQ_ENTRY / B <= 16,
        "EvSeq<{B}>: an entry is at most 16 beats"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: idle, FIFOs empty, counters 0."]
        rst: Signal<In, Bit>,
        #[doc = "A verdict event comes."]
        ev_valid: Signal<In, Bit>,
        #[doc = "An entry for the TX-table FIFO comes."]
        tt_push: Signal<In, Bit>,
        #[doc = "A result waits in the skid for the next cycle."]
        skid_load: Signal<In, Bit>,
        #[doc = "A placement write's first beat is taken."]
        pa_push: Signal<In, Bit>,
        #[doc = "A placement write's last beat is taken."]
        pl_last: Signal<In, Bit>,
        #[doc = "The ring is enabled, has room, and a FIFO holds an entry."]
        start: Signal<In, Bit>,
        #[doc = "The ring has room."]
        room: Signal<In, Bit>,
        #[doc = "The verdict FIFO's head waits for its placement write."]
        fence: Signal<In, Bit>,
        #[doc = "The TX-table FIFO's head is a result (a view entry follows)."]
        vpend_in: Signal<In, Bit>,
        #[doc = "The DMA write port takes the beat."]
        w_tready: Signal<In, Bit>,
        #[doc = "The writer's state."]
        st: Signal<Out, EvState>,
        #[doc = "The beat going out."]
        beat: Signal<Out, Bits<4>>,
        #[doc = "It is the entry's last."]
        last: Signal<Out, Bit>,
        #[doc = "Entries written."]
        prod: Signal<Out, Bits<32>>,
        #[doc = "An entry was written in the cycle before."]
        inc: Signal<Out, Bit>,
        #[doc = "Events lost."]
        lost: Signal<Out, Bits<32>>,
        #[doc = "The verdict FIFO's write address (its write pointer's slot)."]
        evf_wr: Signal<Out, Bits<6>>,
        #[doc = "Its read address."]
        evf_rd: Signal<Out, Bits<6>>,
        #[doc = "Its fill."]
        evf_count: Signal<Out, Bits<7>>,
        #[doc = "The TX-table FIFO's write address."]
        ttf_wr: Signal<Out, Bits<6>>,
        #[doc = "Its read address."]
        ttf_rd: Signal<Out, Bits<6>>,
        #[doc = "Its fill."]
        ttf_count: Signal<Out, Bits<7>>,
        #[doc = "The placement addresses' write address."]
        pa_wr: Signal<Out, Bits<6>>,
        #[doc = "Their read address."]
        pa_rd: Signal<Out, Bits<6>>,
        #[doc = "Their fill."]
        pa_count: Signal<Out, Bits<7>>,
        #[doc = "The skid holds a result."]
        skid_v: Signal<Out, Bit>,
        #[doc = "The TX-table FIFO's head is loaded into the entry this cycle."]
        load_tt: Signal<Out, Bit>,
        #[doc = "The verdict FIFO's head is (it is written unless fenced)."]
        load_ev: Signal<Out, Bit>,
        #[doc = "The view entry is (it is written when the ring has room)."]
        load_view: Signal<Out, Bit>,
    }
    state {
        // The writer: state, the FIFO taken (1: TX-table) and the one
        // taken before, beat, a view entry to follow, `prod`, `inc`.
        s: DFF<EvState>,
        src: DFF<Bit>,
        last_src: DFF<Bit>,
        b: DFF<Bits<4>>,
        vpend: DFF<Bit>,
        n_prod: DFF<Bits<32>>,
        i: DFF<Bit>,
        n_lost: DFF<Bits<32>>,
        // The FIFOs' pointers (7 bits: full and empty apart), the
        // placement writes finished and the fenced events written, the
        // skid's flag.
        ewr: DFF<Bits<7>>,
        erd: DFF<Bits<7>>,
        twr: DFF<Bits<7>>,
        trd: DFF<Bits<7>>,
        pwr: DFF<Bits<7>>,
        prd: DFF<Bits<7>>,
        pl_done: DFF<Bits<32>>,
        pl_ev: DFF<Bits<32>>,
        sv: DFF<Bit>,
    }
    consts {
        k_last: Constant<Bits<4>> = konst(EVQ_ENTRY / B - 1),
        k_depth: Constant<Bits<7>> = konst(DEPTH),
    }
}

impl<const B: usize> Logic for EvSeq<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s, src, last_src, b, vpend, n_prod, i, n_lost, ewr, erd, twr, trd, pwr,
            prd, pl_done, pl_ev, sv
        );
        self.st.next = self.s.q.val();
        self.beat.next = self.b.q.val();
        self.last.next = self.b.q.val() == self.k_last.val();
        self.prod.next = self.n_prod.q.val();
        self.inc.next = self.i.q.val();
        self.lost.next = self.n_lost.q.val();
        self.evf_wr.next = self.ewr.q.val().get_bits::<6>(0);
        self.evf_rd.next = self.erd.q.val().get_bits::<6>(0);
        self.evf_count.next = self.ewr.q.val() - self.erd.q.val();
        self.ttf_wr.next = self.twr.q.val().get_bits::<6>(0);
        self.ttf_rd.next = self.trd.q.val().get_bits::<6>(0);
        self.ttf_count.next = self.twr.q.val() - self.trd.q.val();
        self.pa_wr.next = self.pwr.q.val().get_bits::<6>(0);
        self.pa_rd.next = self.prd.q.val().get_bits::<6>(0);
        self.pa_count.next = self.pwr.q.val() - self.prd.q.val();
        self.skid_v.next = self.sv.q.val();
        self.load_tt.next = (self.s.q.val() == EvState::Load) & self.src.q.val();
        self.load_ev.next = (self.s.q.val() == EvState::Load) & !self.src.q.val();
        self.load_view.next = self.s.q.val() == EvState::View;

        self.i.d.next = false;
        match self.s.q.val() {
            EvState::Idle => {
                if self.start.val() {
                    self.src.d.next = (self.twr.q.val() != self.trd.q.val())
                        & ((self.ewr.q.val() == self.erd.q.val()) | !self.last_src.q.val());
                    self.s.d.next = EvState::Load;
                }
            }
            EvState::Load => {
                self.b.d.next = 0.into();
                self.last_src.d.next = self.src.q.val();
                if self.src.q.val() {
                    self.vpend.d.next = self.vpend_in.val();
                    self.trd.d.next = self.trd.q.val() + 1;
                    self.s.d.next = EvState::Write;
                } else if !self.fence.val() | (self.pl_done.q.val() != self.pl_ev.q.val()) {
                    self.erd.d.next = self.erd.q.val() + 1;
                    if self.fence.val() {
                        self.pl_ev.d.next = self.pl_ev.q.val() + 1;
                        if self.pwr.q.val() != self.prd.q.val() {
                            self.prd.d.next = self.prd.q.val() + 1;
                        }
                    }
                    self.vpend.d.next = false;
                    self.s.d.next = EvState::Write;
                } else {
                    // Its data is not written yet: serve the other FIFO.
                    self.s.d.next = EvState::Idle;
                }
            }
            EvState::Write => {
                if self.w_tready.val() {
                    self.b.d.next = self.b.q.val() + 1;
                    if self.b.q.val() == self.k_last.val() {
                        self.n_prod.d.next = self.n_prod.q.val() + 1;
                        self.i.d.next = true;
                        self.s.d.next = EvState::Idle;
                        if self.vpend.q.val() {
                            self.s.d.next = EvState::View;
                        }
                    }
                }
            }
            _ => {
                // The result's view entry.
                if self.room.val() {
                    self.vpend.d.next = false;
                    self.b.d.next = 0.into();
                    self.s.d.next = EvState::Write;
                }
            }
        }
        if self.ev_valid.val() {
            if (self.ewr.q.val() - self.erd.q.val()) != self.k_depth.val() {
                self.ewr.d.next = self.ewr.q.val() + 1;
            } else {
                self.n_lost.d.next = self.n_lost.q.val() + 1;
            }
        }
        if self.tt_push.val() {
            if (self.twr.q.val() - self.trd.q.val()) != self.k_depth.val() {
                self.twr.d.next = self.twr.q.val() + 1;
            } else {
                self.n_lost.d.next = self.n_lost.q.val() + 1;
            }
        }
        // A placement address that found its FIFO full (never, by the MAC
        // RX hold: at most the events in the verdict FIFO and the core's).
        if self.pa_push.val() {
            if (self.pwr.q.val() - self.prd.q.val()) != self.k_depth.val() {
                self.pwr.d.next = self.pwr.q.val() + 1;
            } else {
                self.n_lost.d.next = self.n_lost.q.val() + 1;
            }
        }
        if self.pl_last.val() {
            self.pl_done.d.next = self.pl_done.q.val() + 1;
        }
        self.sv.d.next = self.skid_load.val();
        if self.rst.val() {
            self.s.d.next = EvState::Idle;
            self.src.d.next = false;
            self.last_src.d.next = false;
            self.b.d.next = 0.into();
            self.vpend.d.next = false;
            self.n_prod.d.next = 0.into();
            self.i.d.next = false;
            self.n_lost.d.next = 0.into();
            self.ewr.d.next = 0.into();
            self.erd.d.next = 0.into();
            self.twr.d.next = 0.into();
            self.trd.d.next = 0.into();
            self.pwr.d.next = 0.into();
            self.prd.d.next = 0.into();
            self.pl_done.d.next = 0.into();
            self.pl_ev.d.next = 0.into();
            self.sv.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// Ring base address of the test (above 4 GiB, as the bench's).
    const BASE: u64 = 0x3_0000_0000;
    /// Entries of the test's ring (`size_log2` 2).
    const RING: u64 = 4;
    /// Cycle until which the host consumes nothing (`cons` 0).
    const FREE_AT: usize = 400;
    /// Cycles the test runs.
    const CYCLES: usize = 2000;

    /// A 64-byte event entry, bytes in the order they are written.
    #[derive(Clone, PartialEq, Eq, Debug)]
    struct Entry([u8; 64]);

    impl Entry {
        fn zero() -> Self {
            Entry([0; 64])
        }
        /// Sets bits `at..at + width` to `v`.
        fn put(&mut self, at: usize, width: usize, v: u64) {
            for i in 0..width {
                let (byte, bit) = ((at + i) / 8, (at + i) % 8);
                self.0[byte] &= !(1 << bit);
                self.0[byte] |= (((v >> i) & 1) as u8) << bit;
            }
        }
        fn get(&self, at: usize, width: usize) -> u64 {
            (0..width).fold(0, |v, i| {
                v | (u64::from(self.0[(at + i) / 8] >> ((at + i) % 8) & 1) << i)
            })
        }
    }

    /// A verdict event's fields, widths and offsets in its entry (the
    /// ports' order of `EvRing`, the layout of `docs/hardware.md` §18).
    const EV_FIELDS: [(usize, usize); 17] = [
        (416, 5),  // code
        (40, 8),   // version
        (32, 8),   // opcode
        (48, 16),  // flags
        (0, 32),   // dst_qpn
        (96, 16),  // path
        (64, 32),  // path_psn
        (128, 64), // timestamp
        (192, 32), // msn
        (224, 32), // recv_idx
        (256, 32), // imm
        (112, 16), // stream
        (288, 32), // conn_psn
        (400, 16), // src_port
        (320, 32), // offset
        (352, 32), // msg_len
        (384, 16), // len
    ];

    /// Event `k`'s field `f` (within the field's width): a placed packet
    /// with a payload (code 0, length not 0) when `k % 3 == 0`.
    fn ev_field(k: usize, f: usize) -> u64 {
        let (_, width) = EV_FIELDS[f];
        let v = match f {
            0 => (k % 3 != 0) as u64 * (1 + k as u64 % 5),
            16 => (k % 3 == 0) as u64 * (100 + k as u64),
            _ => (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (f * 3),
        };
        if width == 64 {
            v
        } else {
            v & ((1 << width) - 1)
        }
    }

    /// Event `k`'s placement write address (when it has one): one of
    /// them does not fit in 48 bits.
    fn pl_addr(k: usize) -> u64 {
        if k == 9 {
            1 << 50
        } else {
            0x0000_ABCD_0000_0000 + 0x1_0000 * k as u64 + 0x40
        }
    }

    /// Slot view `j` of the results.
    fn view_bit(j: usize, i: usize) -> bool {
        (i * 7 + j * 13) % 5 == 0
    }

    /// What the core offers to the TX-table FIFO.
    #[derive(Clone, Copy)]
    enum Tt {
        /// A fate: lost, hw, conn_psn.
        Fate(bool, bool, u32),
        /// An ACK receiver result `j`: slot, pkts, bytes, conn_cum.
        Ackrx(usize, u8, u32, u32, u32),
        /// A queued operation's result `j`: code, ok, slot, psn, pkts, bytes.
        Qres(usize, u8, bool, u8, u32, u32, u32),
    }

    /// The TX-table entries `t` becomes (a result and its view entry).
    fn tt_entries(t: Tt) -> Vec<Entry> {
        let mut e = Entry::zero();
        let view = |e: &mut Entry, j: usize| -> Entry {
            for i in 0..VIEW_LO {
                e.put(128 + i, 1, view_bit(j, i).into());
            }
            let mut v = Entry::zero();
            for i in VIEW_LO..VIEW_BITS {
                v.put(i - VIEW_LO, 1, view_bit(j, i).into());
            }
            v.put(504, 4, ev_type::VIEW.into());
            v
        };
        match t {
            Tt::Fate(lost, hw, psn) => {
                e.put(0, 32, psn.into());
                e.put(32, 1, lost.into());
                e.put(33, 1, hw.into());
                e.put(504, 4, ev_type::FATE.into());
                vec![e]
            }
            Tt::Ackrx(j, slot, pkts, bytes, cum) => {
                e.put(0, 32, pkts.into());
                e.put(32, 32, bytes.into());
                e.put(64, 32, cum.into());
                e.put(96, 4, slot.into());
                e.put(504, 4, ev_type::ACKRX.into());
                let v = view(&mut e, j);
                vec![e, v]
            }
            Tt::Qres(j, code, ok, slot, psn, pkts, bytes) => {
                e.put(0, 32, pkts.into());
                e.put(32, 32, bytes.into());
                e.put(64, 32, psn.into());
                e.put(96, 4, slot.into());
                e.put(100, 1, ok.into());
                e.put(101, 3, code.into());
                e.put(504, 4, ev_type::OP_RESULT.into());
                let v = view(&mut e, j);
                vec![e, v]
            }
        }
    }

    /// One event entry the block wrote: its address, bytes, and the cycle
    /// of its first beat.
    #[derive(Debug)]
    struct Written {
        addr: u64,
        entry: Entry,
        cycle: usize,
        cons: u64,
    }

    /// What the block did.
    #[derive(Debug, Default)]
    struct Run {
        written: Vec<Written>,
        /// The TX-table entries as offered, in the order taken.
        tt_want: Vec<Entry>,
        /// The cycle each placement write's last beat was taken, by event.
        pl_done: Vec<(usize, usize)>,
        held: bool,
        prod: u64,
        incs: u64,
        lost: u64,
    }

    /// Sets a wide input from its bits.
    fn wide<const N: usize>(bit: impl Fn(usize) -> bool) -> Bits<N> {
        (0..N).fold(Bits::default(), |b, i| b.replace_bit(i, bit(i)))
    }

    /// Runs the 64-bit block: `EVENTS` verdict events, a burst while the
    /// ring is stalled; fates, ACK results and queued operations' results
    /// (some in the cycle a fate is taken); placement writes before and
    /// after their events; the DMA port taking two cycles of three, one
    /// request at a time; the host consuming nothing until `FREE_AT`, then
    /// moving `cons` to `prod` every 7 cycles.
    fn simulate(events: usize, tts: Vec<(usize, Tt)>) -> Run {
        let run = Arc::new(Mutex::new(Run::default()));
        let result = run.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<EvRing<64, 8>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<EvRing<64, 8>>| {
            let mut x = sim.init()?;
            // The ring's registers; a reset in the first two cycles.
            x.ctrl.next = true;
            x.base.next = BASE.to_bits();
            x.size_log2.next = 2.into();
            let ev_at = |k: usize| 10 + 3 * k;
            // Placement writes (two beats each) of the placed packets, in
            // their order: the first four before their event, the rest
            // after it.
            let mut pls: VecDeque<(usize, usize)> = (0..events)
                .filter(|k| k % 3 == 0)
                .map(|k| (if k < 12 { ev_at(k) - 5 } else { ev_at(k) + 40 }, k))
                .collect();
            let mut tts: VecDeque<(usize, Tt)> = tts.iter().copied().collect();
            let (mut pl_beat, mut ev_beat, mut owner, mut cons) = (0usize, 0usize, 0u8, 0u64);
            let mut open: Option<Written> = None;
            for cycle in 0..CYCLES {
                let mut r = run.lock().unwrap();
                x.rst.next = cycle < 2;
                if cycle >= FREE_AT && cycle % 7 == 0 {
                    cons = x.prod.val().to_u64();
                }
                x.cons.next = cons.to_bits();
                // A verdict event.
                let k = (cycle >= 10 && (cycle - 10) % 3 == 0).then(|| (cycle - 10) / 3);
                let k = k.filter(|&k| k < events);
                x.ev_valid.next = k.is_some();
                let f = |i: usize| ev_field(k.unwrap_or(0), i);
                x.ev_code.next = f(0).to_bits();
                x.ev_version.next = f(1).to_bits();
                x.ev_opcode.next = f(2).to_bits();
                x.ev_flags.next = f(3).to_bits();
                x.ev_dst_qpn.next = f(4).to_bits();
                x.ev_path.next = f(5).to_bits();
                x.ev_path_psn.next = f(6).to_bits();
                x.ev_timestamp.next = f(7).to_bits();
                x.ev_msn.next = f(8).to_bits();
                x.ev_recv_idx.next = f(9).to_bits();
                x.ev_imm.next = f(10).to_bits();
                x.ev_stream.next = f(11).to_bits();
                x.ev_conn_psn.next = f(12).to_bits();
                x.ev_src_port.next = f(13).to_bits();
                x.ev_offset.next = f(14).to_bits();
                x.ev_msg_len.next = f(15).to_bits();
                x.ev_len.next = f(16).to_bits();
                // Fates wait for `fate_ready`; results come when due.
                x.fate_valid.next = false;
                x.ackrx_valid.next = false;
                x.qres_valid.next = false;
                let mut fate = None;
                let mut res = None;
                for &(at, t) in tts.iter().filter(|(at, _)| *at <= cycle) {
                    match t {
                        Tt::Fate(lost, hw, psn) if fate.is_none() => {
                            fate = Some(t);
                            x.fate_valid.next = true;
                            x.fate_lost.next = lost;
                            x.fate_hw.next = hw;
                            x.fate_conn_psn.next = u64::from(psn).to_bits();
                        }
                        Tt::Ackrx(j, slot, pkts, bytes, cum) if at == cycle => {
                            res = Some(t);
                            x.ackrx_valid.next = true;
                            x.ackrx_slot.next = u64::from(slot).to_bits();
                            x.ackrx_pkts.next = u64::from(pkts).to_bits();
                            x.ackrx_bytes.next = u64::from(bytes).to_bits();
                            x.ackrx_conn_cum.next = u64::from(cum).to_bits();
                            x.cap_view.next = wide(|i| view_bit(j, i));
                        }
                        Tt::Qres(j, code, ok, slot, psn, pkts, bytes) if at == cycle => {
                            res = Some(t);
                            x.qres_valid.next = true;
                            x.qop_code.next = u64::from(code).to_bits();
                            x.res_ok.next = ok;
                            x.qop_slot.next = u64::from(slot).to_bits();
                            x.res_psn.next = u64::from(psn).to_bits();
                            x.res_pkts.next = u64::from(pkts).to_bits();
                            x.res_bytes.next = u64::from(bytes).to_bits();
                            x.cap_view.next = wide(|i| view_bit(j, i));
                        }
                        _ => {}
                    }
                }
                // The DMA write arbiter: a request at a time, the
                // placement first; the port takes two beats of three.
                let pl = pls.front().copied().filter(|&(at, _)| at <= cycle);
                if owner == 0 {
                    owner = if pl.is_some() {
                        1
                    } else if x.w_tvalid.val() {
                        2
                    } else {
                        0
                    };
                }
                let ready = cycle % 3 != 1;
                x.pl_tvalid.next = owner == 1;
                x.pl_first.next = pl_beat == 0;
                x.pl_tlast.next = pl_beat == 1;
                x.pl_addr.next = pl_addr(pl.map_or(0, |p| p.1)).to_bits();
                x.pl_tready.next = owner == 1 && ready;
                x.w_tready.next = owner == 2 && ready;
                x = sim.wait(1, x)?;
                r.held |= x.hold.val();
                if x.inc.val() {
                    r.incs += 1;
                }
                if x.fate_valid.val() && x.fate_ready.val() {
                    r.tt_want.extend(tt_entries(fate.unwrap()));
                    let i = tts.iter().position(|(_, t)| matches!(t, Tt::Fate(..)));
                    tts.remove(i.unwrap());
                }
                if let Some(t) = res {
                    r.tt_want.extend(tt_entries(t));
                    let i = tts
                        .iter()
                        .position(|(at, t)| *at == cycle && !matches!(t, Tt::Fate(..)));
                    tts.remove(i.unwrap());
                }
                if owner == 1 && ready {
                    pl_beat += 1;
                    if pl_beat == 2 {
                        r.pl_done.push((pl.unwrap().1, cycle));
                        pls.pop_front();
                        (pl_beat, owner) = (0, 0);
                    }
                }
                if owner == 2 && ready {
                    assert!(x.w_tvalid.val(), "the event writer's request broke off");
                    assert_eq!(
                        (x.w_len.val().to_u64(), x.w_tkeep.val().to_u64()),
                        (64, 0xFF)
                    );
                    if x.w_first.val() {
                        assert!(open.is_none(), "a request started inside another");
                        open = Some(Written {
                            addr: x.w_addr.val().to_u64(),
                            entry: Entry::zero(),
                            cycle,
                            cons,
                        });
                    }
                    let w = open.as_mut().expect("a beat outside a request");
                    w.entry.0[8 * ev_beat..8 * ev_beat + 8]
                        .copy_from_slice(&x.w_tdata.val().to_u64().to_le_bytes());
                    ev_beat += 1;
                    if x.w_tlast.val() {
                        assert_eq!(ev_beat, 8, "an entry is 8 beats");
                        r.written.extend(open.take());
                        (ev_beat, owner) = (0, 0);
                    }
                }
                drop(r);
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            let mut r = run.lock().unwrap();
            r.prod = x.prod.val().to_u64();
            r.lost = x.lost.val().to_u64();
            drop(r);
            sim.done(x)
        });
        let mut uut = EvRing::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 200_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    /// Verdict event `k`'s entry (without its index and phase), its
    /// placement write's address in it when it has one in 48 bits.
    fn verdict_entry(k: usize) -> Entry {
        let mut e = Entry::zero();
        for (f, &(at, width)) in EV_FIELDS.iter().enumerate() {
            e.put(at, width, ev_field(k, f));
        }
        if k % 3 == 0 && pl_addr(k) >> 48 == 0 {
            e.put(421, 1, 1);
            e.put(424, 24, pl_addr(k));
            e.put(480, 24, pl_addr(k) >> 24);
        }
        e.put(504, 4, ev_type::VERDICT.into());
        e
    }

    #[test]
    fn rust_hdl_model_writes_every_event_in_order_with_its_phase_and_waits_for_room() {
        const EVENTS: usize = 24;
        let tts = vec![
            // A fate and a queued result in one cycle: the result waits
            // in the skid; another result in the next cycle waits too.
            (20, Tt::Fate(true, false, 0x1111_0001)),
            (20, Tt::Qres(0, 3, true, 5, 0x2222_0002, 7, 9000)),
            (21, Tt::Ackrx(1, 9, 3, 4096, 0x3333_0003)),
            (45, Tt::Fate(false, true, 0x1111_0004)),
            (70, Tt::Ackrx(2, 2, 1, 1024, 0x3333_0005)),
            (95, Tt::Fate(true, true, 0x1111_0006)),
            (95, Tt::Ackrx(3, 15, 8, 65536, 0x3333_0007)),
            (130, Tt::Qres(4, 1, false, 0, 0x2222_0008, 0, 0)),
            (160, Tt::Fate(false, false, 0x1111_0009)),
            (500, Tt::Ackrx(5, 4, 2, 2048, 0x3333_000A)),
            (501, Tt::Fate(false, true, 0x1111_000B)),
        ];
        let run = simulate(EVENTS, tts);
        let n = run.written.len();
        assert_eq!(n, EVENTS + run.tt_want.len(), "every event written once");
        assert_eq!((run.prod, run.incs, run.lost), (n as u64, n as u64, 0));
        assert!(run.held, "the verdict FIFO never reached the MAC RX hold");
        let (mut verdicts, mut tts) = (Vec::new(), Vec::new());
        for (i, w) in run.written.iter().enumerate() {
            // Its slot, index and phase: 1 on the first lap, 0 on the second...
            assert_eq!(w.addr, BASE + 64 * (i as u64 % RING), "entry {i}'s address");
            assert_eq!(w.entry.get(448, 32), i as u64, "entry {i}'s index");
            assert_eq!(
                w.entry.get(511, 1),
                (i as u64 / RING + 1) % 2,
                "entry {i}'s phase"
            );
            // ... written only with room: the host's `cons` gives it.
            assert!(
                i as u64 - w.cons < RING,
                "entry {i} overwrote an unread one"
            );
            // A result's view entry follows it.
            let ty = w.entry.get(504, 4);
            let next = run.written.get(i + 1).map(|w| w.entry.get(504, 4));
            if ty == u64::from(ev_type::ACKRX) || ty == u64::from(ev_type::OP_RESULT) {
                assert_eq!(next, Some(u64::from(ev_type::VIEW)), "entry {i}'s view");
            }
            let mut e = w.entry.clone();
            e.put(448, 32, 0);
            e.put(511, 1, 0);
            if e.get(504, 4) == u64::from(ev_type::VERDICT) {
                verdicts.push((e, w.cycle));
            } else {
                tts.push(e);
            }
        }
        assert!(
            run.written[RING as usize].cycle > FREE_AT,
            "the ring's room held nothing"
        );
        for (k, (e, cycle)) in verdicts.iter().enumerate() {
            assert_eq!(*e, verdict_entry(k), "verdict event {k}");
            // A placed packet's event comes after its placement write.
            if let Some(&(_, done)) = run.pl_done.iter().find(|p| p.0 == k) {
                assert!(*cycle > done, "event {k} before its placement write");
            }
        }
        assert_eq!(verdicts.len(), EVENTS);
        assert_eq!(
            tts, run.tt_want,
            "the TX-table entries, each result's view after it"
        );
    }
}
