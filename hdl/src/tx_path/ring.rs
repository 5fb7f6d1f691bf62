//! The TX table's rings of transmissions and their walker: one
//! [`BlockRam`] of `{live, probe, len, connection PSN}` entries at
//! `slot << 8 | path PSN mod 256`, read at the walker's next position so
//! the walker ([`TxWalk`]) sees entry `p` in the cycle it is at `p`; the
//! running `Ack`'s operands (`path_cum`, SACK, and the SACK's highest bit,
//! [`SackTop`], found in the cycle it is taken from the operation
//! register) and the walker's distances from `path_cum` and from the
//! highest PSN the ACK knows (set in the cycle after, when the walker
//! waits; then stepped with the walker); the
//! ring's one write port (`Send` writes the entry at `next_psn` while the
//! table is idle, a walker clears the live bit of the entry it resolves);
//! the fate events; and
//! what the walk changes in the slot this cycle ([`WalkEvOut`]) and
//! acknowledges ([`AckedOut`]). A fate event the firmware does not take
//! stalls the walk.

use rust_hdl::prelude::*;

use super::links::{AckedOut, RingOpIn, WalkEvOut};
use super::walk::TxWalk;
use super::{ENTRY_BITS, RING, RING_ADDR, S_ACK, S_LOSE, S_TIMEOUT, TxOp};
use crate::SackTop;
use crate::bus::FateOut;
use crate::helpers::{BlockRam, konst, native_block};

native_block! {
    /// The rings and the walker for `2^SB` slots.
    TxRing[SB]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the registers hold, the ring is not written."]
        rst: Signal<In, Bit>,
        #[doc = "The operation taken."]
        op: RingOpIn<SB>,
        #[doc = "The control's state."]
        state: Signal<In, Bits<3>>,
        #[doc = "The operation's slot's `next_psn`: where a `Send` writes (mod 256), where a `Timeout`'s walk ends."]
        next_psn: Signal<In, Bits<32>>,
        #[doc = "The slot's `una`: where a walk starts."]
        una: Signal<In, Bits<32>>,
        #[doc = "Fate events."]
        m_fate: FateOut,
        #[doc = "The walk's changes to the slot."]
        ev: WalkEvOut,
        #[doc = "What the ACK walk acknowledges."]
        acked: AckedOut,
        #[doc = "The walker is at `next_psn`."]
        at_end: Signal<Out, Bit>,
        #[doc = "A fate event waits: the walk stalls."]
        stall: Signal<Out, Bit>,
    }
    state {
        ring: BlockRam<ENTRY_BITS, RING_ADDR> = BlockRam::with_words(RING << SB),
        walk: TxWalk,
        top: SackTop,
        // The walker's path PSN; the ACK's operands and its SACK's highest
        // bit (searched in the cycle the ACK is taken, from the operation
        // register); `p − path_cum − 1` and `p − highest` (set in the
        // cycle after, `c_pend`, from registers alone, so neither the
        // operation port's choice nor the 256-bit search reaches their
        // subtractions; then stepped with `p`, so the walk's cycle
        // subtracts nothing); not yet beyond the highest PSN; every entry
        // walked so far resolved (so `una` follows).
        p: DFF<Bits<32>>,
        c_cum: DFF<Bits<32>>,
        c_sack: DFF<Bits<256>>,
        c_k: DFF<Bits<9>>,
        c_dm1: DFF<Bits<32>>,
        c_dh: DFF<Bits<32>>,
        c_pend: DFF<Bit>,
        walking: DFF<Bit>,
        pfx: DFF<Bit>,
        // The walker's next path PSN (the ring's read address); it steps
        // to the next entry; a data entry resolved, lost by `Lose`, lost
        // by the timeout.
        p_n: Signal<Local, Bits<32>>,
        step: Signal<Local, Bit>,
        dm1_now: Signal<Local, Bits<32>>,
        k32: Signal<Local, Bits<32>>,
        take_ack: Signal<Local, Bit>,
        data_res: Signal<Local, Bit>,
        lose_data: Signal<Local, Bit>,
        tmo_data: Signal<Local, Bit>,
    }
    consts {
        s_ack: Constant<Bits<3>> = konst(S_ACK),
        s_timeout: Constant<Bits<3>> = konst(S_TIMEOUT),
        s_lose: Constant<Bits<3>> = konst(S_LOSE),
        k_ack: Constant<Bits<3>> = konst(TxOp::Ack as usize),
        k_lose: Constant<Bits<3>> = konst(TxOp::Lose as usize),
        k_probe_entry: Constant<Bits<ENTRY_BITS>> = konst(3 << 48),
        k_data_entry: Constant<Bits<ENTRY_BITS>> = konst(1 << 49),
        k_dead: Constant<Bits<ENTRY_BITS>> = Constant::new(Bits::<ENTRY_BITS>::mask() >> 1),
        k_none: Constant<Bits<9>> = konst(0x1FE),
        k_sext: Constant<Bits<32>> = konst(0xFFFF_FE00),
    }
}

impl<const SB: usize> Logic for TxRing<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, p, c_cum, c_sack, c_k, c_dm1, c_dh, c_pend, walking, pfx
        );
        self.c_pend.d.next = false;
        // An `Ack` taken. `SackTop`'s enable is the same expression, not
        // `take_ack`: through the local, Verilator sees this block's
        // `top.en` write and `top.idx` read as a loop (UNOPTFLAT).
        self.take_ack.next = self.op.accept.val() & (self.op.code.val() == self.k_ack.val());
        self.top.en.next = self.op.accept.val() & (self.op.code.val() == self.k_ack.val());
        self.top.sack.next = self.op.sack.val();
        // The walker at entry p of the operation's slot (read at p_n the cycle before);
        // an ACK's walk waits while its highest PSN is computed.
        self.walk.in_ack.next = (self.state.val() == self.s_ack.val()) & !self.c_pend.q.val();
        self.walk.in_tmo.next = self.state.val() == self.s_timeout.val();
        self.walk.in_lose.next = self.state.val() == self.s_lose.val();
        self.walk.p.next = self.p.q.val();
        self.walk.dm1.next = self.c_dm1.q.val();
        self.walk.dh.next = self.c_dh.q.val();
        self.walk.sack.next = self.c_sack.q.val();
        self.walk.walking.next = self.walking.q.val();
        self.walk.pfx.next = self.pfx.q.val();
        self.walk.next_psn.next = self.next_psn.val();
        self.walk.una.next = self.una.val();
        self.walk.live.next = self.ring.read_data.val().get_bit(49);
        self.walk.probe.next = self.ring.read_data.val().get_bit(48);
        self.at_end.next = self.walk.at_end.val();
        self.m_fate.valid.next = self.walk.fate_valid.val();
        self.m_fate.lost.next = self.walk.fate_lost.val();
        self.m_fate.conn_psn.next = self.ring.read_data.val().get_bits::<32>(0);
        self.stall.next = self.walk.fate_valid.val() & !self.m_fate.ready.val();
        self.p_n.next = self.p.q.val();
        self.step.next = false;
        if self.op.accept.val() {
            self.p_n.next = self.una.val();
            if self.op.code.val() == self.k_lose.val() {
                self.p_n.next = self.op.psn.val();
            }
        } else if self.stall.val() {
            self.p_n.next = self.p.q.val();
        } else if self.walk.walk_now.val() | self.walk.pop_on.val() | self.walk.tmo_now.val() {
            self.p_n.next = self.p.q.val() + 1;
            self.step.next = true;
        } else if self.state.val() == self.s_lose.val() {
            self.p_n.next = self.una.val();
        }
        self.ring.clock.next = self.clock.val();
        self.ring.read_address.next = (bit_cast::<RING_ADDR, SB>(self.op.slot.val()) << 8)
            | bit_cast::<RING_ADDR, 8>(self.p_n.val().get_bits::<8>(0));
        self.ring.write_enable.next = !self.rst.val()
            & (self.op.send.val()
                | (!self.stall.val()
                    & ((self.walk.walk_now.val() & self.walk.resolve.val())
                        | self.walk.lose_now.val()
                        | (self.walk.tmo_now.val() & self.ring.read_data.val().get_bit(49)))));
        self.ring.write_address.next = (bit_cast::<RING_ADDR, SB>(self.op.slot.val()) << 8)
            | bit_cast::<RING_ADDR, 8>(self.p.q.val().get_bits::<8>(0));
        self.ring.write_data.next = self.ring.read_data.val() & self.k_dead.val();
        if self.op.send.val() {
            self.ring.write_address.next = (bit_cast::<RING_ADDR, SB>(self.op.slot.val()) << 8)
                | bit_cast::<RING_ADDR, 8>(self.next_psn.val().get_bits::<8>(0));
            self.ring.write_data.next = self.k_data_entry.val()
                | (bit_cast::<ENTRY_BITS, 16>(self.op.len.val()) << 32)
                | bit_cast::<ENTRY_BITS, 32>(self.op.psn.val());
            if self.op.probe.val() {
                self.ring.write_data.next = self.k_probe_entry.val();
            }
        }
        // The walk's changes to the slot; none while a fate event waits.
        self.data_res.next =
            self.walk.resolve.val() & !self.stall.val() & !self.ring.read_data.val().get_bit(48);
        self.lose_data.next = self.walk.lose_now.val() & !self.stall.val();
        self.tmo_data.next = self.walk.tmo_now.val()
            & !self.stall.val()
            & self.ring.read_data.val().get_bit(49)
            & !self.ring.read_data.val().get_bit(48);
        self.ev.sub_len.next = self.data_res.val() | self.lose_data.val() | self.tmo_data.val();
        self.ev.e_len.next = self.ring.read_data.val().get_bits::<16>(32);
        self.ev.lost_one.next = (self.data_res.val() & !self.walk.is_acked.val())
            | self.lose_data.val()
            | self.tmo_data.val();
        self.ev.loss_up.next =
            (self.data_res.val() & !self.walk.is_acked.val()) | self.lose_data.val();
        self.ev.una_set.next = (self.walk.tmo_now.val() & !self.stall.val())
            | (self.walk.pop_on.val() & !self.stall.val())
            | (self.walk.walk_now.val()
                & !self.stall.val()
                & self.pfx.q.val()
                & (!self.ring.read_data.val().get_bit(49) | self.walk.resolve.val()));
        self.ev.una_new.next = self.p.q.val() + 1;
        self.ev.tmo_end.next = (self.state.val() == self.s_timeout.val()) & self.walk.at_end.val();
        self.acked.one.next = self.walk.walk_now.val()
            & !self.stall.val()
            & self.walk.resolve.val()
            & self.walk.is_acked.val();
        self.acked.probe.next = self.ring.read_data.val().get_bit(48);
        self.acked.len.next = self.ring.read_data.val().get_bits::<16>(32);
        self.acked.done.next = (self.state.val() == self.s_ack.val())
            & !self.c_pend.q.val()
            & !self.stall.val()
            & !self.walk.walk_now.val()
            & !self.walk.pop_on.val();
        // highest = path_cum + 1 + k: k the highest SACK bit's index, or
        // −2 with none (path_cum − 1); `c_k` holds k in 9 bits.
        self.dm1_now.next = self.p.q.val() - self.c_cum.q.val() - 1;
        self.k32.next = bit_cast::<32, 9>(self.c_k.q.val());
        if self.c_k.q.val().get_bit(8) {
            self.k32.next = self.k32.val() | self.k_sext.val();
        }
        if !self.rst.val() {
            self.p.d.next = self.p_n.val();
            if self.take_ack.val() {
                self.c_cum.d.next = self.op.psn.val();
                self.c_sack.d.next = self.op.sack.val();
                self.c_k.d.next = self.k_none.val();
                if self.top.found.val() {
                    self.c_k.d.next = bit_cast::<9, 8>(self.top.idx.val());
                }
                self.c_pend.d.next = true;
                self.walking.d.next = true;
                self.pfx.d.next = true;
            }
            if self.c_pend.q.val() {
                self.c_dm1.d.next = self.dm1_now.val();
                self.c_dh.d.next = self.dm1_now.val() - self.k32.val();
            } else if self.step.val() {
                self.c_dm1.d.next = self.c_dm1.q.val() + 1;
                self.c_dh.d.next = self.c_dh.q.val() + 1;
            }
            if (self.state.val() == self.s_ack.val()) & !self.stall.val() {
                if self.walk.walk_now.val() {
                    if self.ring.read_data.val().get_bit(49) & !self.walk.resolve.val() {
                        self.pfx.d.next = false;
                    }
                } else if self.walk.pop_on.val() {
                    self.walking.d.next = false;
                }
            }
            if (self.state.val() == self.s_lose.val()) & !self.stall.val() {
                self.walking.d.next = false;
                self.pfx.d.next = true;
            }
        }
    }
}
