//! ACK receiver: received ACK datagrams update the per-path TX table in
//! hardware, as the engine's `Tx::on_ack` does (`TxPath::on_ack`, then
//! `TxPath::on_ack_feedback` with the RTT from the echoed timestamp).
//!
//! [`AckRx`] taps the datagram stream entering the receive core (every
//! beat the core takes) and keeps bytes 20..95 of each datagram (path PSN,
//! timestamp, and the ACK extension's `conn_cum`, `path_cum`, SACK,
//! `echo_ts`, `ce_count`, `rate_hint`, `credit`, `rx_count`) in a small
//! pairing FIFO, one entry per datagram.
//! The core's verdict events come out in datagram order, one per datagram,
//! so each event pops its datagram's entry; the checks (ICRC, QP, state,
//! peer, path) are the core's, not repeated here. An event with verdict 10
//! (handed to the firmware) and opcode ACK whose (destination QPN, path)
//! is in the slot map ([`cfg`](mod@crate::ack_rx::cfg)) queues the ACK for its TX table slot; the
//! entry's path PSN and timestamp must equal the event's (a guard on the
//! pairing, counted in `cnt_pair_err` if it ever fails).
//!
//! At its turn the queue's head is first checked as the engine checks an
//! ACK (spec §5.5 step 0, `PathView::ack_evidence`), against its slot's
//! `una`, `next_psn` and last `ce_count` (the table's check port, `ck_*`)
//! and the `rx_count` of the newest ACK applied on the slot (kept here,
//! cleared when the slot is mapped): an ACK whose highest reported path
//! PSN was never sent, or that as the newest counts more new CE marks
//! than new packets, is refused (counted in `cnt_refused`) and changes
//! nothing. Otherwise it becomes the table's `Ack` (`path_cum`, SACK) and,
//! in the cycle its result comes, `Feedback` (RTT = `now` − `echo_ts` when
//! `echo_ts` > 0 and not ahead of `now`, saturated to 32 bits, and only if
//! the `Ack` acknowledged a data packet or ended the slot's quarantine;
//! the ACK's `ce_count`, or the slot's last one when the ACK is not the
//! newest; the packets the `Ack` acknowledged): the pair is atomic.
//!
//! The table's one operation port is shared with the firmware and runs
//! through this block: the firmware's operations come in on `s_op`
//! ([`TxOpIn`]) and go out to the table on `m_op` ([`TxOpOut`]), the
//! table's results come in on `s_res` and go on to the firmware on
//! `m_res`. At each idle point the firmware and the ACK queue take turns
//! (one firmware operation, one ACK pair); a lone requester goes at once.
//! While this block holds the table `m_op` carries its operands and the
//! firmware's `s_op.ready` is low, so its operation waits and is never
//! lost; `busy` marks the table's results (kept off `m_res`) and fate
//! events as ours. After the pair, `m_done` ([`AckDoneOut`]) reports the
//! slot, the packets and bytes acknowledged and the ACK's `conn_cum` (for
//! the firmware's congestion controller and connection state).
//!
//! # Pipeline
//! Five parts, one file each, joined by the buses of `links.rs`: the
//! capture and the pairing FIFO (`cap.rs`), the slot map (`map.rs`), the
//! event's decode and pairing check (`event.rs`), the queue with its
//! head's evidence check and the newest `rx_count` per slot
//! (`queue.rs`), the table operations and the turns (`ops.rs`).
//!
//! The tap merges each beat's lanes of bytes 20..95 into a capture
//! register (constant slices per beat index) and writes the datagram's
//! entry from it into the pairing FIFO in the cycle after its last beat.
//! At its event the entry is decoded (network order to values) and queued
//! with the highest path PSN it reports ([`AckHigh`](crate::AckHigh), the
//! TX table's too; computed here so the evidence check at the queue's head
//! only subtracts and compares). The pairing FIFO and the queue are
//! [`BlockRam`](crate::helpers::BlockRam)s read at their next head (no
//! cycle added): the pairing FIFO's and the queue's `conn_cum` and
//! `echo_ts` without the bypass (their words are read at least 2 cycles
//! after they are written: `cap.rs`, `queue.rs`); the newest `rx_count`
//! per slot a [`LutRam`](crate::helpers::LutRam) with a flag per slot
//! (cleared by a mapping); the slot map registers searched by
//! loop-and-compare.
//! A slot map write is registered first and applies one cycle after
//! `cfg_we` (so no path runs from `cfg_*` to the table's operation port
//! through the block). The head's evidence check is registered too: a
//! head starts one cycle after a check that still holds (same head, no
//! table write, no mapping in between; at the queue's turn the firmware
//! waits that cycle), so the check's subtractions and compares (through
//! the table's check port and the `rx_count` LUT RAM) no longer run into
//! the table's operation decode in the same cycle: the routed NIC top's
//! critical core path in session 46. Otherwise cycle for cycle as the
//! template it replaced (`ack_rx.v.in`, before issue #16).
//!
//! Native rust-hdl: rust-hdl's own simulator runs the block (the tests
//! below); it is verified under Verilator inside [`crate::NicCore`] (the
//! `ack_rx` bench).

use rust_hdl::prelude::*;

use crate::bus::{
    AckDoneOut, AckRxCntOut, AckTapIn, CfgIn, TxCheck, TxOpIn, TxOpOut, TxResIn, TxResOut,
};
use crate::helpers::native_block;

use cap::AckRxCap;
use event::AckRxEvent;
use map::AckRxMap;
use ops::AckRxOps;
use queue::AckRxQueue;

/// First datagram byte kept (the base header's `path_psn`).
pub const CAP_FIRST: usize = 20;

/// Datagram bytes kept per datagram (through the ACK's `rx_count`).
pub const CAP_BYTES: usize = 76;

mod cap;
pub mod cfg;
mod event;
mod links;
mod map;
mod ops;
mod queue;
#[cfg(test)]
mod tests;

/// Bits of a pairing FIFO entry: capture bytes 0..63 and `rx_count`.
const PF_BITS: usize = 544;
/// Bits of an ACK queue entry: `conn_cum`, `path_cum`, SACK, `echo_ts`,
/// `ce_count`, `rx_count` (values, not wire order; the SACK as on the
/// wire) and the highest path PSN the ACK reports.
const Q_BITS: usize = 480;
/// Bits of the queue's first memory: entry bits 32..319 and 384..479
/// (`path_cum`, SACK, `ce_count`, `rx_count`, highest path PSN), what the
/// head's turn uses in its first cycle.
const Q_NOW: usize = 384;
/// Bits of the queue's second memory: entry bits 0..31 and 320..383
/// (`conn_cum`, `echo_ts`), used from the `Feedback` on.
const Q_LATER: usize = Q_BITS - Q_NOW;

/// One register per slot of a map of `2^sb` slots.
fn slot_regs<T: Synth>(sb: usize) -> Vec<DFF<T>> {
    (0..1 << sb).map(|_| DFF::default()).collect()
}

native_block! {
    /// The ACK receiver at `W`-bit beats (`B = W / 8` lanes, 8 to 64) for a
    /// TX table of `2^SB` slots (2 to 64).
    AckRx[W, B, SB]
    check {
        W == 8 * B && B.is_power_of_two() && (8..=64).contains(&B) && (1..=6).contains(&SB),
        "AckRx<{W}, {B}, {SB}>: B must be 8, 16, 32 or 64, W = 8 * B, 2 to 64 slots"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: clears the map, the FIFOs and the counters."]
        rst: Signal<In, Bit>,
        #[doc = "The receive core's input beats and verdict events."]
        s_tap: AckTapIn<W>,
        #[doc = "Time in ns (RTT samples)."]
        now: Signal<In, Bits<64>>,
        #[doc = "Slot map writes: entry (= TX table slot; entries beyond the slots ignored) and word ([`cfg`](mod@crate::ack_rx::cfg))."]
        cfg: CfgIn<6, 49>,
        #[doc = "The firmware's table operations (`ready` low while this block holds the table)."]
        s_op: TxOpIn<SB>,
        #[doc = "The table's operation port: the firmware's operations, or this block's `Ack` and `Feedback` while it holds the table."]
        m_op: TxOpOut<SB>,
        #[doc = "The table's results."]
        s_res: TxResIn,
        #[doc = "The firmware's results: the table's, without those of this block's operations."]
        m_res: TxResOut,
        #[doc = "One of this block's operations runs: results and fates are ours."]
        busy: Signal<Out, Bit>,
        #[doc = "The table's check port: the queue head's slot (`una`, `next_psn`, last `ce_count`, quarantine)."]
        ck: TxCheck<SB>,
        #[doc = "Pulse per ACK applied: its slot, the packets and bytes acknowledged, its `conn_cum`."]
        m_done: AckDoneOut<SB>,
        #[doc = "Counters."]
        cnt: AckRxCntOut,
    }
    state {
        cap: AckRxCap<W, B>,
        map: AckRxMap<SB>,
        decode: AckRxEvent<SB>,
        queue: AckRxQueue<SB>,
        ops: AckRxOps<SB>,
    }
    consts {}
}

impl<const W: usize, const B: usize, const SB: usize> Logic for AckRx<W, B, SB> {
    #[hdl_gen]
    fn update(&mut self) {
        self.cap.clock.next = self.clock.val();
        self.map.clock.next = self.clock.val();
        self.decode.clock.next = self.clock.val();
        self.queue.clock.next = self.clock.val();
        self.ops.clock.next = self.clock.val();
        self.cap.rst.next = self.rst.val();
        self.map.rst.next = self.rst.val();
        self.decode.rst.next = self.rst.val();
        self.queue.rst.next = self.rst.val();
        self.ops.rst.next = self.rst.val();
        // The tap: the beats to the capture, the events to their decode
        // and the slot map's search.
        self.cap.tdata.next = self.s_tap.tdata.val();
        self.cap.tvalid.next = self.s_tap.tvalid.val();
        self.cap.tlast.next = self.s_tap.tlast.val();
        self.cap.ev_valid.next = self.s_tap.ev_valid.val();
        self.decode.ev_valid.next = self.s_tap.ev_valid.val();
        self.decode.ev_code.next = self.s_tap.ev_code.val();
        self.decode.ev_opcode.next = self.s_tap.ev_opcode.val();
        self.map.ev_valid.next = self.s_tap.ev_valid.val();
        self.map.ev_code.next = self.s_tap.ev_code.val();
        self.map.ev_opcode.next = self.s_tap.ev_opcode.val();
        self.map.ev_dst_qpn.next = self.s_tap.ev_dst_qpn.val();
        self.map.ev_path.next = self.s_tap.ev_path.val();
        self.decode.ev_path_psn.next = self.s_tap.ev_path_psn.val();
        self.decode.ev_timestamp.next = self.s_tap.ev_timestamp.val();
        CfgIn::<6, 49>::link(&mut self.cfg, &mut self.map.cfg);
        // Capture → event (with the slot map's answer) → queue → table
        // operations; the queue's turn from the operations' registers.
        links::EntryOut::join(&mut self.cap.m_entry, &mut self.decode.s_entry);
        links::HitOut::<SB>::join(&mut self.map.m_hit, &mut self.decode.s_hit);
        links::RemapOut::join(&mut self.map.m_remap, &mut self.queue.s_remap);
        links::PushOut::<SB>::join(&mut self.decode.m_push, &mut self.queue.s_push);
        links::HeadOut::<SB>::join(&mut self.queue.m_head, &mut self.ops.s_head);
        links::TurnOut::join(&mut self.ops.m_turn, &mut self.queue.s_turn);
        self.queue.op_valid.next = self.s_op.valid.val();
        self.queue.op_ready.next = self.m_op.ready.val();
        self.queue.res_valid.next = self.s_res.valid.val();
        TxCheck::<SB>::link(&mut self.ck, &mut self.queue.ck);
        self.ops.now.next = self.now.val();
        TxOpIn::<SB>::link(&mut self.s_op, &mut self.ops.s_op);
        TxOpOut::<SB>::link(&mut self.m_op, &mut self.ops.m_op);
        TxResIn::link(&mut self.s_res, &mut self.ops.s_res);
        TxResOut::link(&mut self.m_res, &mut self.ops.m_res);
        AckDoneOut::<SB>::link(&mut self.m_done, &mut self.ops.m_done);
        self.busy.next = self.ops.busy.val();
        self.cnt.applied.next = self.ops.applied.val();
        self.cnt.unmapped.next = self.decode.unmapped.val();
        self.cnt.overflow.next = self.queue.overflow.val();
        self.cnt.pair_err.next = self.decode.pair_err.val();
        self.cnt.refused.next = self.queue.refused.val();
    }
}
