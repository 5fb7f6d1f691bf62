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
//! newest; the packets the `Ack` acknowledged): the pair is atomic. The table's one operation port is shared with the
//! firmware: at each idle point the firmware and the ACK queue take turns
//! (one firmware operation, one ACK pair); a lone requester goes at once.
//! `sel` tells the top to route the table's `op_*` inputs from this block;
//! the firmware's `op_ready` is low meanwhile, so its operation waits and
//! is never lost. `busy` marks the table's `res_valid` and fate events as
//! ours. After the pair, `m_done_*` reports the slot, the packets and bytes
//! acknowledged and the ACK's `conn_cum` (for the firmware's congestion
//! controller and connection state).
//!
//! # Pipeline
//! The tap merges each beat's lanes of bytes 20..95 into a capture
//! register (constant slices per beat index) and writes the datagram's
//! entry into the pairing FIFO at its last beat. At its event the entry is
//! decoded (network order to values) and queued with the highest path PSN
//! it reports ([`AckHigh`], the TX table's too; computed here so the
//! evidence check at the queue's head only subtracts and compares); the queue and
//! the pairing FIFO are [`LutRam`]s (asynchronous reads), the slot map and
//! the newest `rx_count` per slot registers searched by loop-and-compare.
//! A slot map write is registered first and applies one cycle after
//! `cfg_we` (so no path runs from `cfg_*` to `sel` through the block);
//! otherwise cycle for cycle as the template it replaces (`ack_rx.v.in`,
//! before issue #16).
//!
//! Native rust-hdl: rust-hdl's own simulator runs the block (the tests
//! below); it is verified under Verilator inside [`crate::NicCore`] (the
//! `ack_rx` bench).

use rust_hdl::prelude::*;

use crate::AckHigh;
use crate::helpers::{LutRam, byte_mask, konst, native_block};

/// First datagram byte kept (the base header's `path_psn`).
pub const CAP_FIRST: usize = 20;

/// Datagram bytes kept per datagram (through the ACK's `rx_count`).
pub const CAP_BYTES: usize = 76;

/// The slot map: configuration entry `s` (`cfg_addr` = `s`, below the slot
/// count) says which (local QPN, path) TX table slot `s` holds.
pub mod cfg {
    /// Bits 31..0: local QPN (the ACK's destination QPN).
    pub const QPN_SHIFT: u32 = 0;
    /// Bits 47..32: path index.
    pub const PATH_SHIFT: u32 = 32;
    /// Bit 48: the entry is valid (else ACKs for it are not applied).
    pub const VALID_BIT: u32 = 48;

    /// The configuration word mapping a slot to (`qpn`, `path`).
    pub const fn word(qpn: u32, path: u16) -> u64 {
        (qpn as u64) << QPN_SHIFT | (path as u64) << PATH_SHIFT | 1 << VALID_BIT
    }
}

/// Beats of the capture window at the narrowest width (8 bytes).
const WIN_MAX: usize = (CAP_FIRST + CAP_BYTES - 1) / 8 - CAP_FIRST / 8 + 1;
/// Bits of the capture register.
const CAP_BITS: usize = 8 * CAP_BYTES;
/// Bits of a pairing FIFO entry: capture bytes 0..63 and `rx_count`.
const PF_BITS: usize = 544;
/// Bits of an ACK queue entry: `conn_cum`, `path_cum`, SACK, `echo_ts`,
/// `ce_count`, `rx_count` (values, not wire order; the SACK as on the
/// wire) and the highest path PSN the ACK reports.
const Q_BITS: usize = 480;

/// One register per slot of a map of `2^sb` slots.
fn slot_regs<T: Synth>(sb: usize) -> Vec<DFF<T>> {
    (0..1 << sb).map(|_| DFF::default()).collect()
}

/// Beat `t` of the capture window at `b` bytes a beat: the beat's index,
/// the first of its lanes kept, and the capture bytes it fills
/// (`n0..=n1`).
fn window(b: usize, t: usize) -> (usize, usize, usize, usize) {
    let (first, last) = (CAP_FIRST, CAP_FIRST + CAP_BYTES - 1);
    let k = first / b + t;
    let lo = first.max(k * b);
    let hi = last.min(k * b + b - 1);
    (k, lo - k * b, lo - first, hi - first)
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
        #[doc = "Tap: a datagram beat the receive core takes."]
        s_tdata: Signal<In, Bits<W>>,
        #[doc = "Tap: the core takes the beat this cycle."]
        s_tvalid: Signal<In, Bit>,
        #[doc = "Tap: last beat of the datagram."]
        s_tlast: Signal<In, Bit>,
        #[doc = "Core event pulse (one per datagram, in order)."]
        ev_valid: Signal<In, Bit>,
        #[doc = "Core event verdict."]
        ev_code: Signal<In, Bits<5>>,
        #[doc = "Core event opcode."]
        ev_opcode: Signal<In, Bits<8>>,
        #[doc = "Core event destination QPN."]
        ev_dst_qpn: Signal<In, Bits<32>>,
        #[doc = "Core event path."]
        ev_path: Signal<In, Bits<16>>,
        #[doc = "Core event path PSN (pairing guard)."]
        ev_path_psn: Signal<In, Bits<32>>,
        #[doc = "Core event timestamp (pairing guard)."]
        ev_timestamp: Signal<In, Bits<64>>,
        #[doc = "Time in ns (RTT samples)."]
        now: Signal<In, Bits<64>>,
        #[doc = "Slot map write strobe."]
        cfg_we: Signal<In, Bit>,
        #[doc = "Slot map entry (= TX table slot; entries beyond the slots ignored)."]
        cfg_addr: Signal<In, Bits<6>>,
        #[doc = "Slot map word ([`cfg`](mod@crate::ack_rx::cfg))."]
        cfg_data: Signal<In, Bits<49>>,
        #[doc = "The firmware presents an operation."]
        fw_op_valid: Signal<In, Bit>,
        #[doc = "The table takes an operation."]
        t_op_ready: Signal<In, Bit>,
        #[doc = "The table finished an operation."]
        t_res_valid: Signal<In, Bit>,
        #[doc = "The table's `res_pkts`."]
        t_res_pkts: Signal<In, Bits<32>>,
        #[doc = "The table's `res_bytes`."]
        t_res_bytes: Signal<In, Bits<32>>,
        #[doc = "The table's `op_*` come from this block (firmware waits)."]
        sel: Signal<Out, Bit>,
        #[doc = "One of this block's operations runs: results and fates are ours."]
        busy: Signal<Out, Bit>,
        #[doc = "Operation valid."]
        a_op_valid: Signal<Out, Bit>,
        #[doc = "Operation code (`Ack` or `Feedback`)."]
        a_op_code: Signal<Out, Bits<3>>,
        #[doc = "Slot."]
        a_op_slot: Signal<Out, Bits<SB>>,
        #[doc = "`Ack`: `path_cum`."]
        a_op_psn: Signal<Out, Bits<32>>,
        #[doc = "`Ack`: SACK bitmap."]
        a_op_sack: Signal<Out, Bits<256>>,
        #[doc = "`Feedback`: an RTT sample is given."]
        a_op_rtt_valid: Signal<Out, Bit>,
        #[doc = "`Feedback`: RTT sample, ns."]
        a_op_rtt: Signal<Out, Bits<32>>,
        #[doc = "`Feedback`: the ACK's CE count."]
        a_op_ce_count: Signal<Out, Bits<32>>,
        #[doc = "`Feedback`: packets the `Ack` acknowledged."]
        a_op_acked: Signal<Out, Bits<32>>,
        #[doc = "The TX table slot whose state the evidence check reads (the queue head's)."]
        ck_slot: Signal<Out, Bits<SB>>,
        #[doc = "That slot's `una`."]
        ck_una: Signal<In, Bits<32>>,
        #[doc = "That slot's `next_psn`."]
        ck_next_psn: Signal<In, Bits<32>>,
        #[doc = "That slot's last `ce_count` applied."]
        ck_last_ce: Signal<In, Bits<32>>,
        #[doc = "That slot is quarantined."]
        ck_quarantined: Signal<In, Bit>,
        #[doc = "Pulse: an ACK was applied."]
        m_done_valid: Signal<Out, Bit>,
        #[doc = "Its slot."]
        m_done_slot: Signal<Out, Bits<SB>>,
        #[doc = "Data packets it acknowledged."]
        m_done_pkts: Signal<Out, Bits<32>>,
        #[doc = "Bytes it acknowledged."]
        m_done_bytes: Signal<Out, Bits<32>>,
        #[doc = "The ACK's `conn_cum`."]
        m_done_conn_cum: Signal<Out, Bits<32>>,
        #[doc = "ACKs applied."]
        cnt_applied: Signal<Out, Bits<32>>,
        #[doc = "Valid ACKs whose (QPN, path) has no slot (not applied)."]
        cnt_unmapped: Signal<Out, Bits<32>>,
        #[doc = "ACKs dropped because the queue (16) was full."]
        cnt_overflow: Signal<Out, Bits<32>>,
        #[doc = "Events whose path PSN or timestamp differed from the captured datagram's (not applied; 0 unless the pairing broke)."]
        cnt_pair_err: Signal<Out, Bits<32>>,
        #[doc = "ACKs refused by the evidence check (spec §5.5 step 0): no table operation, no `m_done_valid`; it counts in the cycle after the refused ACK's turn."]
        cnt_refused: Signal<Out, Bits<32>>,
    }
    state {
        // Capture: beat index within the datagram (saturates), bytes
        // 20..95 of the datagrams so far, with the current beat merged.
        beat: DFF<Bits<16>>,
        cap: DFF<Bits<CAP_BITS>>,
        cap_n: Signal<Local, Bits<CAP_BITS>>,
        lane: Signal<Local, Bits<W>>,
        wide: Signal<Local, Bits<CAP_BITS>>,
        // Pairing FIFO: one entry per datagram, popped by its event.
        pf: LutRam<PF_BITS, 3>,
        pf_wr: DFF<Bits<3>>,
        pf_rd: DFF<Bits<3>>,
        // The popped entry decoded (values), and the event's checks.
        octet: Signal<Local, Bits<8>>,
        e_psn: Signal<Local, Bits<32>>,
        e_ts: Signal<Local, Bits<64>>,
        e_conn: Signal<Local, Bits<32>>,
        e_cum: Signal<Local, Bits<32>>,
        e_echo: Signal<Local, Bits<64>>,
        e_ce: Signal<Local, Bits<32>>,
        e_rx: Signal<Local, Bits<32>>,
        e_ack: Signal<Local, Bit>,
        e_same: Signal<Local, Bit>,
        // The highest path PSN the ACK reports.
        highest: AckHigh,
        // A slot map write, registered. The slot map: TX table slot s
        // holds (QPN, path) when valid; the newest rx_count applied on it.
        map_we: DFF<Bit>,
        map_addr: DFF<Bits<6>>,
        map_word: DFF<Bits<49>>,
        map_valid: Vec<DFF<Bit>> = slot_regs(SB),
        map_qpn: Vec<DFF<Bits<32>>> = slot_regs(SB),
        map_path: Vec<DFF<Bits<16>>> = slot_regs(SB),
        last_rx: Vec<DFF<Bits<32>>> = slot_regs(SB),
        hit: Signal<Local, Bit>,
        hit_slot: Signal<Local, Bits<SB>>,
        // ACK queue: entries and their slots.
        q: LutRam<Q_BITS, 4>,
        qs: LutRam<SB, 4>,
        q_wr: DFF<Bits<5>>,
        q_rd: DFF<Bits<5>>,
        q_empty: Signal<Local, Bit>,
        q_full: Signal<Local, Bit>,
        // The queue's head: its fields, the evidence check, the RTT.
        h_cum: Signal<Local, Bits<32>>,
        h_echo: Signal<Local, Bits<64>>,
        h_ce: Signal<Local, Bits<32>>,
        h_rx: Signal<Local, Bits<32>>,
        h_last_rx: Signal<Local, Bits<32>>,
        ahead: Signal<Local, Bits<32>>,
        rx_step: Signal<Local, Bits<32>>,
        ce_step: Signal<Local, Bits<32>>,
        newest: Signal<Local, Bit>,
        refuse: Signal<Local, Bit>,
        rtt64: Signal<Local, Bits<64>>,
        // Table operations: 0 idle, 1 our Ack runs, 2 our Feedback runs;
        // the firmware had the last turn; the running ACK is its slot's
        // newest; its slot was quarantined before its Ack; the Ack's result.
        hs: DFF<Bits<2>>,
        turn_hw: DFF<Bit>,
        r_newest: DFF<Bit>,
        r_quar: DFF<Bit>,
        r_pkts: DFF<Bits<32>>,
        r_bytes: DFF<Bits<32>>,
        start: Signal<Local, Bit>,
        fb_now: Signal<Local, Bit>,
        done_valid: DFF<Bit>,
        done_slot: DFF<Bits<SB>>,
        done_pkts: DFF<Bits<32>>,
        done_bytes: DFF<Bits<32>>,
        done_conn_cum: DFF<Bits<32>>,
        n_applied: DFF<Bits<32>>,
        n_unmapped: DFF<Bits<32>>,
        n_overflow: DFF<Bits<32>>,
        n_pair_err: DFF<Bits<32>>,
        n_refused: DFF<Bits<32>>,
    }
    consts {
        k_cbeat: [Constant<Bits<16>>; WIN_MAX] = std::array::from_fn(|t| konst(window(B, t).0)),
        k_rsh: [Constant<Bits<16>>; WIN_MAX] = std::array::from_fn(|t| konst(8 * window(B, t).1)),
        k_lsh: [Constant<Bits<16>>; WIN_MAX] = std::array::from_fn(|t| konst(8 * window(B, t).2)),
        k_cmask: [Constant<Bits<CAP_BITS>>; WIN_MAX] = std::array::from_fn(|t| {
            let (_, _, n0, n1) = window(B, t);
            byte_mask(n0, n1 + 1)
        }),
        k_firmware: Constant<Bits<5>> = konst(crate::rx_place::Verdict::Firmware as usize),
        k_op_ack: Constant<Bits<8>> = konst(metaroce_proto::Opcode::Ack as usize),
        k_t_ack: Constant<Bits<3>> = konst(crate::TxOp::Ack as usize),
        k_t_feedback: Constant<Bits<3>> = konst(crate::TxOp::Feedback as usize),
        k_rtt_max: Constant<Bits<32>> = konst(u32::MAX as usize),
    }
}

impl<const W: usize, const B: usize, const SB: usize> AckRx<W, B, SB> {
    /// Slots in the map.
    const N: usize = 1 << SB;
    /// Beats of the capture window.
    const WIN: usize = (CAP_FIRST + CAP_BYTES - 1) / B - CAP_FIRST / B + 1;
}

impl<const W: usize, const B: usize, const SB: usize> Logic for AckRx<W, B, SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            beat,
            cap,
            pf_wr,
            pf_rd,
            map_we,
            map_addr,
            map_word,
            q_wr,
            q_rd,
            hs,
            turn_hw,
            r_newest,
            r_quar,
            r_pkts,
            r_bytes,
            done_valid,
            done_slot,
            done_pkts,
            done_bytes,
            done_conn_cum,
            n_applied,
            n_unmapped,
            n_overflow,
            n_pair_err,
            n_refused
        );
        for i in 0..Self::N {
            self.map_valid[i].clock.next = self.clock.val();
            self.map_valid[i].d.next = self.map_valid[i].q.val();
            self.map_qpn[i].clock.next = self.clock.val();
            self.map_qpn[i].d.next = self.map_qpn[i].q.val();
            self.map_path[i].clock.next = self.clock.val();
            self.map_path[i].d.next = self.map_path[i].q.val();
            self.last_rx[i].clock.next = self.clock.val();
            self.last_rx[i].d.next = self.last_rx[i].q.val();
        }
        self.pf.clock.next = self.clock.val();
        self.q.clock.next = self.clock.val();
        self.qs.clock.next = self.clock.val();
        self.done_valid.d.next = false;

        // ---- slot map writes (registered) ----
        self.map_we.d.next = self.cfg_we.val();
        self.map_addr.d.next = self.cfg_addr.val();
        self.map_word.d.next = self.cfg_data.val();
        if self.map_we.q.val() {
            for i in 0..Self::N {
                if self.map_addr.q.val() == i.to_bits::<6>() {
                    self.map_qpn[i].d.next = self.map_word.q.val().get_bits::<32>(0);
                    self.map_path[i].d.next = self.map_word.q.val().get_bits::<16>(32);
                    self.map_valid[i].d.next = self.map_word.q.val().get_bit(48);
                    // A slot (re)mapped is a new path: no ACK applied on it yet.
                    self.last_rx[i].d.next = 0.into();
                }
            }
        }

        // ---- capture: datagram bytes 20..95 of every datagram the core
        // takes; cap byte n = datagram byte 20 + n: path_psn (0..3),
        // timestamp (4..11), conn_cum (12..15), path_cum (16..19), sack
        // (20..51), echo_ts (52..59), ce_count (60..63), rate_hint
        // (64..67), credit (68..71), rx_count (72..75) ----
        self.cap_n.next = self.cap.q.val();
        self.lane.next = 0.into();
        self.wide.next = 0.into();
        if self.s_tvalid.val() {
            for t in 0..Self::WIN {
                if self.beat.q.val() == self.k_cbeat[t].val() {
                    self.lane.next = self.s_tdata.val() >> self.k_rsh[t].val();
                    self.wide.next =
                        bit_cast::<CAP_BITS, W>(self.lane.val()) << self.k_lsh[t].val();
                    self.cap_n.next = (self.cap_n.val() & !self.k_cmask[t].val())
                        | (self.wide.val() & self.k_cmask[t].val());
                }
            }
            self.cap.d.next = self.cap_n.val();
            if self.s_tlast.val() {
                self.beat.d.next = 0.into();
                self.pf_wr.d.next = self.pf_wr.q.val() + 1;
            } else if self.beat.q.val() != 0xFFFF {
                self.beat.d.next = self.beat.q.val() + 1;
            }
        }
        // Bytes 0..63 and rx_count (rate_hint and credit are the firmware's).
        self.pf.write_enable.next = self.s_tvalid.val() & self.s_tlast.val();
        self.pf.write_address.next = self.pf_wr.q.val();
        self.pf.write_data.next = bit_cast::<PF_BITS, 512>(self.cap_n.val().get_bits::<512>(0))
            | (bit_cast::<PF_BITS, 32>(self.cap_n.val().get_bits::<32>(576)) << 512);
        self.pf.read_address.next = self.pf_rd.q.val();

        // ---- the event: its datagram's entry, decoded; the slot search ----
        self.e_ack.next = self.ev_valid.val()
            & (self.ev_code.val() == self.k_firmware.val())
            & (self.ev_opcode.val() == self.k_op_ack.val());
        self.octet.next = 0.into();
        self.e_psn.next = 0.into();
        self.e_ts.next = 0.into();
        self.e_conn.next = 0.into();
        self.e_cum.next = 0.into();
        self.e_echo.next = 0.into();
        self.e_ce.next = 0.into();
        self.e_rx.next = 0.into();
        if self.e_ack.val() {
            // Big-endian wire bytes (lane order) to values.
            for j in 0..4 {
                self.octet.next = self.pf.read_data.val().get_bits::<8>(8 * j);
                self.e_psn.next = self.e_psn.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.pf.read_data.val().get_bits::<8>(96 + 8 * j);
                self.e_conn.next = self.e_conn.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.pf.read_data.val().get_bits::<8>(128 + 8 * j);
                self.e_cum.next = self.e_cum.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.pf.read_data.val().get_bits::<8>(480 + 8 * j);
                self.e_ce.next = self.e_ce.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.pf.read_data.val().get_bits::<8>(512 + 8 * j);
                self.e_rx.next = self.e_rx.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
            }
            for j in 0..8 {
                self.octet.next = self.pf.read_data.val().get_bits::<8>(32 + 8 * j);
                self.e_ts.next = self.e_ts.val()
                    | (bit_cast::<64, 8>(self.octet.val()) << (56 - 8 * j).to_bits::<16>());
                self.octet.next = self.pf.read_data.val().get_bits::<8>(416 + 8 * j);
                self.e_echo.next = self.e_echo.val()
                    | (bit_cast::<64, 8>(self.octet.val()) << (56 - 8 * j).to_bits::<16>());
            }
        }
        // The event is the captured datagram's (the check guards the pairing).
        self.e_same.next = (self.e_psn.val() == self.ev_path_psn.val())
            & (self.e_ts.val() == self.ev_timestamp.val());
        // The highest path PSN it reports (`AckHigh`; only an ACK's event
        // computes it). Its inputs come from ports and the pairing FIFO's
        // read alone, not from the decode above (whose shared `octet`
        // temporary would tie them to the queue entry that reads the
        // output: Verilator would see a loop), so Verilator orders them apart.
        self.highest.en.next = self.ev_valid.val()
            & (self.ev_code.val() == self.k_firmware.val())
            & (self.ev_opcode.val() == self.k_op_ack.val());
        self.highest.cum.next = (bit_cast::<32, 8>(self.pf.read_data.val().get_bits::<8>(128))
            << 24)
            | (bit_cast::<32, 8>(self.pf.read_data.val().get_bits::<8>(136)) << 16)
            | (bit_cast::<32, 8>(self.pf.read_data.val().get_bits::<8>(144)) << 8)
            | bit_cast::<32, 8>(self.pf.read_data.val().get_bits::<8>(152));
        self.highest.sack.next = self.pf.read_data.val().get_bits::<256>(160);
        // Lowest matching slot wins; only an ACK's event searches.
        self.hit.next = false;
        self.hit_slot.next = 0.into();
        if self.e_ack.val() {
            for i in 0..Self::N {
                if !self.hit.val()
                    & self.map_valid[i].q.val()
                    & (self.map_qpn[i].q.val() == self.ev_dst_qpn.val())
                    & (self.map_path[i].q.val() == self.ev_path.val())
                {
                    self.hit.next = true;
                    self.hit_slot.next = i.to_bits::<SB>();
                }
            }
        }
        self.q_empty.next = self.q_wr.q.val() == self.q_rd.q.val();
        self.q_full.next = (self.q_wr.q.val() - self.q_rd.q.val()) == 16;
        self.q.write_address.next = self.q_wr.q.val().get_bits::<4>(0);
        self.qs.write_address.next = self.q_wr.q.val().get_bits::<4>(0);
        self.q.write_data.next = bit_cast::<Q_BITS, 32>(self.e_conn.val())
            | (bit_cast::<Q_BITS, 32>(self.e_cum.val()) << 32)
            | (bit_cast::<Q_BITS, 256>(self.pf.read_data.val().get_bits::<256>(160)) << 64)
            | (bit_cast::<Q_BITS, 64>(self.e_echo.val()) << 320)
            | (bit_cast::<Q_BITS, 32>(self.e_ce.val()) << 384)
            | (bit_cast::<Q_BITS, 32>(self.e_rx.val()) << 416)
            | (bit_cast::<Q_BITS, 32>(self.highest.high.val()) << 448);
        self.qs.write_data.next = self.hit_slot.val();
        self.q.write_enable.next = false;
        self.qs.write_enable.next = false;
        if self.ev_valid.val() {
            self.pf_rd.d.next = self.pf_rd.q.val() + 1;
            if self.e_ack.val() {
                if !self.e_same.val() {
                    self.n_pair_err.d.next = self.n_pair_err.q.val() + 1;
                } else if !self.hit.val() {
                    self.n_unmapped.d.next = self.n_unmapped.q.val() + 1;
                } else if self.q_full.val() {
                    self.n_overflow.d.next = self.n_overflow.q.val() + 1;
                } else {
                    self.q.write_enable.next = true;
                    self.qs.write_enable.next = true;
                    self.q_wr.d.next = self.q_wr.q.val() + 1;
                }
            }
        }

        // ---- the queue's head: evidence check (spec §5.5 step 0,
        // `PathView::ack_evidence`) against its slot in the table (check
        // port) and the newest rx_count applied on the slot ----
        self.q.read_address.next = self.q_rd.q.val().get_bits::<4>(0);
        self.qs.read_address.next = self.q_rd.q.val().get_bits::<4>(0);
        self.h_cum.next = self.q.read_data.val().get_bits::<32>(32);
        self.h_echo.next = self.q.read_data.val().get_bits::<64>(320);
        self.h_ce.next = self.q.read_data.val().get_bits::<32>(384);
        self.h_rx.next = self.q.read_data.val().get_bits::<32>(416);
        self.h_last_rx.next = 0.into();
        for i in 0..Self::N {
            if self.qs.read_data.val() == i.to_bits::<SB>() {
                self.h_last_rx.next = self.last_rx[i].q.val();
            }
        }
        // The highest path PSN reported was never sent.
        self.ahead.next = self.q.read_data.val().get_bits::<32>(448) - self.ck_una.val();
        self.refuse.next = !self.ahead.val().get_bit(31)
            & (self.ahead.val() >= (self.ck_next_psn.val() - self.ck_una.val()));
        // As the newest, more new CE marks than new packets.
        self.rx_step.next = self.h_rx.val() - self.h_last_rx.val();
        self.newest.next = !self.rx_step.val().get_bit(31);
        self.ce_step.next = self.h_ce.val() - self.ck_last_ce.val();
        if self.newest.val()
            & !self.ce_step.val().get_bit(31)
            & (self.ce_step.val() > self.rx_step.val())
        {
            self.refuse.next = true;
        }

        // ---- table operations and the turns with the firmware: an ACK
        // starts when the table is idle and it is our turn (or the
        // firmware wants nothing); its Feedback follows in the Ack's
        // result cycle, so the pair is atomic. A refused ACK takes its
        // turn (one cycle) but no table operation. ----
        self.start.next = (self.hs.q.val() == 0)
            & !self.q_empty.val()
            & self.t_op_ready.val()
            & (!self.fw_op_valid.val() | self.turn_hw.q.val());
        self.fb_now.next = (self.hs.q.val() == 1) & self.t_res_valid.val();
        self.sel.next = self.start.val() | (self.hs.q.val() != 0);
        self.busy.next = self.hs.q.val() != 0;
        self.a_op_valid.next = (self.start.val() & !self.refuse.val()) | self.fb_now.val();
        self.a_op_code.next = self.k_t_feedback.val();
        if self.hs.q.val() == 0 {
            self.a_op_code.next = self.k_t_ack.val();
        }
        self.a_op_slot.next = self.qs.read_data.val();
        self.a_op_psn.next = self.h_cum.val();
        self.a_op_sack.next = self.q.read_data.val().get_bits::<256>(64);
        // RTT as the engine's `Tx::on_ack`: now - echo_ts when echo_ts > 0
        // and not in the future, 32 bits saturated, only when the Ack
        // acknowledged a data packet or ended the quarantine (its PROBE;
        // the table shows the new quarantine bit in the Ack's result cycle).
        self.rtt64.next = self.now.val() - self.h_echo.val();
        self.a_op_rtt_valid.next = (self.h_echo.val() != 0)
            & (self.now.val() >= self.h_echo.val())
            & ((self.t_res_pkts.val() != 0) | (self.r_quar.q.val() & !self.ck_quarantined.val()));
        self.a_op_rtt.next = self.rtt64.val().get_bits::<32>(0);
        if self.rtt64.val().get_bits::<32>(32) != 0 {
            self.a_op_rtt.next = self.k_rtt_max.val();
        }
        // An ACK that is not the newest brings no CE marks: the last count.
        self.a_op_ce_count.next = self.ck_last_ce.val();
        if self.r_newest.q.val() {
            self.a_op_ce_count.next = self.h_ce.val();
        }
        self.a_op_acked.next = self.t_res_pkts.val();
        self.ck_slot.next = self.qs.read_data.val();

        if !self.sel.val() & self.fw_op_valid.val() & self.t_op_ready.val() {
            self.turn_hw.d.next = true;
        }
        if self.start.val() {
            self.turn_hw.d.next = false;
            self.r_newest.d.next = self.newest.val();
            self.r_quar.d.next = self.ck_quarantined.val();
            if self.refuse.val() {
                self.n_refused.d.next = self.n_refused.q.val() + 1;
                self.q_rd.d.next = self.q_rd.q.val() + 1;
            } else {
                if self.newest.val() {
                    for i in 0..Self::N {
                        if self.qs.read_data.val() == i.to_bits::<SB>() {
                            self.last_rx[i].d.next = self.h_rx.val();
                        }
                    }
                }
                self.hs.d.next = 1.into();
            }
        }
        if self.fb_now.val() {
            self.r_pkts.d.next = self.t_res_pkts.val();
            self.r_bytes.d.next = self.t_res_bytes.val();
            self.hs.d.next = 2.into();
        }
        if (self.hs.q.val() == 2) & self.t_res_valid.val() {
            self.done_valid.d.next = true;
            self.done_slot.d.next = self.qs.read_data.val();
            self.done_pkts.d.next = self.r_pkts.q.val();
            self.done_bytes.d.next = self.r_bytes.q.val();
            self.done_conn_cum.d.next = self.q.read_data.val().get_bits::<32>(0);
            self.n_applied.d.next = self.n_applied.q.val() + 1;
            self.q_rd.d.next = self.q_rd.q.val() + 1;
            self.hs.d.next = 0.into();
        }
        self.m_done_valid.next = self.done_valid.q.val();
        self.m_done_slot.next = self.done_slot.q.val();
        self.m_done_pkts.next = self.done_pkts.q.val();
        self.m_done_bytes.next = self.done_bytes.q.val();
        self.m_done_conn_cum.next = self.done_conn_cum.q.val();
        self.cnt_applied.next = self.n_applied.q.val();
        self.cnt_unmapped.next = self.n_unmapped.q.val();
        self.cnt_overflow.next = self.n_overflow.q.val();
        self.cnt_pair_err.next = self.n_pair_err.q.val();
        self.cnt_refused.next = self.n_refused.q.val();

        if self.rst.val() {
            for i in 0..Self::N {
                self.map_valid[i].d.next = false;
            }
            self.beat.d.next = 0.into();
            self.pf_wr.d.next = 0.into();
            self.pf_rd.d.next = 0.into();
            self.q_wr.d.next = 0.into();
            self.q_rd.d.next = 0.into();
            self.hs.d.next = 0.into();
            self.turn_hw.d.next = false;
            self.done_valid.d.next = false;
            self.n_applied.d.next = 0.into();
            self.n_unmapped.d.next = 0.into();
            self.n_overflow.d.next = 0.into();
            self.n_pair_err.d.next = 0.into();
            self.n_refused.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TxOp;
    use metaroce_proto::Sack;
    use rand::{Rng, SeedableRng};
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    const QPN: u32 = 0x11;
    const PATH: u16 = 2;
    const SLOT: u64 = 45;
    const UNA: u64 = 100;
    const NEXT_PSN: u64 = 200;
    const NOW: u64 = 10_000;

    /// One datagram on the tap and its event: opcode, path, the event's
    /// path PSN (the datagram's unless the pairing is to break), the
    /// ACK's `path_cum`, SACK bits, `echo_ts`, `ce_count`, `rx_count`.
    struct Gram {
        opcode: u64,
        path: u16,
        ev_psn_delta: u32,
        cum: u32,
        sack: Vec<usize>,
        echo: u64,
        ce: u32,
        rx: u32,
    }

    impl Gram {
        const PSN: u32 = 77;
        const TS: u64 = 0x0102_0304_0506_0708;
        const CONN_CUM: u32 = 0xC0C0;

        /// The ACK datagram's 100 bytes, fields in network order.
        fn bytes(&self) -> Vec<u8> {
            let mut b: Vec<u8> = (0..100).map(|i| i as u8 ^ 0x5A).collect();
            b[20..24].copy_from_slice(&Self::PSN.to_be_bytes());
            b[24..32].copy_from_slice(&Self::TS.to_be_bytes());
            b[32..36].copy_from_slice(&Self::CONN_CUM.to_be_bytes());
            b[36..40].copy_from_slice(&self.cum.to_be_bytes());
            b[40..72].fill(0);
            for &i in &self.sack {
                b[40 + i / 8] |= 1 << (i % 8);
            }
            b[72..80].copy_from_slice(&self.echo.to_be_bytes());
            b[80..84].copy_from_slice(&self.ce.to_be_bytes());
            b[92..96].copy_from_slice(&self.rx.to_be_bytes());
            b
        }
    }

    /// A table operation as the block issued it.
    #[derive(Debug, PartialEq)]
    enum Op {
        /// `Ack`: slot, `path_cum`, the SACK's low 64 bits.
        Ack(u64, u64, u64),
        /// `Feedback`: slot, RTT sample, CE count, packets acked.
        Feedback(u64, Option<u64>, u64, u64),
    }

    /// What the block did: operations, `m_done_*` (slot, packets, bytes,
    /// `conn_cum`), counters (applied, unmapped, overflow, pair error,
    /// refused).
    #[derive(Debug, Default)]
    struct Run {
        ops: Vec<Op>,
        done: Vec<(u64, u64, u64, u64)>,
        counters: [u64; 5],
    }

    /// Runs `grams` through rust-hdl's simulator of `AckRx<64, 8, 6>`
    /// with slot 45 mapped to (`QPN`, `PATH`), each event 3 cycles after
    /// its datagram's last beat, and a table that answers every operation
    /// two cycles later (5 packets, 500 bytes acked).
    fn simulate(grams: Vec<Gram>) -> Run {
        let run = Arc::new(Mutex::new(Run::default()));
        let result = run.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<AckRx<64, 8, 6>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<AckRx<64, 8, 6>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            x.cfg_we.next = true;
            x.cfg_addr.next = SLOT.to_bits();
            x.cfg_data.next = cfg::word(QPN, PATH).to_bits();
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            x.cfg_we.next = false;
            x.t_op_ready.next = true;
            x.ck_una.next = UNA.to_bits();
            x.ck_next_psn.next = NEXT_PSN.to_bits();
            x.now.next = NOW.to_bits();
            let beats: Vec<Vec<u8>> = grams.iter().map(Gram::bytes).collect();
            let (mut g, mut off) = (0usize, 0usize);
            let mut events: VecDeque<(usize, usize)> = VecDeque::new();
            let mut results: VecDeque<usize> = VecDeque::new();
            for cycle in 0..100 + 20 * grams.len() {
                // This cycle's inputs, settled before the outputs are read.
                x.s_tvalid.next = false;
                if g < grams.len() {
                    let mut beat = [0u8; 8];
                    beat.copy_from_slice(&beats[g][off..off + 8]);
                    x.s_tdata.next = u64::from_le_bytes(beat).to_bits();
                    x.s_tvalid.next = true;
                    off += 8;
                    x.s_tlast.next = off + 8 > beats[g].len();
                    if off + 8 > beats[g].len() {
                        events.push_back((cycle + 3, g));
                        g += 1;
                        off = 0;
                    }
                }
                x.ev_valid.next = false;
                if events.front().is_some_and(|&(c, _)| c == cycle) {
                    let (_, e) = events.pop_front().unwrap();
                    let d = &grams[e];
                    x.ev_valid.next = true;
                    x.ev_code.next = 10u64.to_bits();
                    x.ev_opcode.next = d.opcode.to_bits();
                    x.ev_dst_qpn.next = u64::from(QPN).to_bits();
                    x.ev_path.next = u64::from(d.path).to_bits();
                    x.ev_path_psn.next = u64::from(Gram::PSN + d.ev_psn_delta).to_bits();
                    x.ev_timestamp.next = Gram::TS.to_bits();
                }
                x.t_res_valid.next = results.front() == Some(&cycle);
                if x.t_res_valid.next {
                    results.pop_front();
                }
                x.t_res_pkts.next = 5u64.to_bits();
                x.t_res_bytes.next = 500u64.to_bits();
                x = sim.wait(1, x)?;
                let mut r = run.lock().unwrap();
                if x.a_op_valid.val() {
                    assert!(x.sel.val(), "an operation of ours without sel");
                    // The fields the table reads for the operation.
                    let code = x.a_op_code.val().to_u64();
                    let slot = x.a_op_slot.val().to_u64();
                    r.ops.push(if code == TxOp::Ack as u64 {
                        Op::Ack(
                            slot,
                            x.a_op_psn.val().to_u64(),
                            x.a_op_sack.val().get_bits::<64>(0).to_u64(),
                        )
                    } else {
                        let rtt = x.a_op_rtt_valid.val().then(|| x.a_op_rtt.val().to_u64());
                        Op::Feedback(
                            slot,
                            rtt,
                            x.a_op_ce_count.val().to_u64(),
                            x.a_op_acked.val().to_u64(),
                        )
                    });
                    results.push_back(cycle + 2);
                }
                if x.m_done_valid.val() {
                    r.done.push((
                        x.m_done_slot.val().to_u64(),
                        x.m_done_pkts.val().to_u64(),
                        x.m_done_bytes.val().to_u64(),
                        x.m_done_conn_cum.val().to_u64(),
                    ));
                }
                drop(r);
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            run.lock().unwrap().counters = [
                x.cnt_applied.val().to_u64(),
                x.cnt_unmapped.val().to_u64(),
                x.cnt_overflow.val().to_u64(),
                x.cnt_pair_err.val().to_u64(),
                x.cnt_refused.val().to_u64(),
            ];
            sim.done(x)
        });
        let mut uut = AckRx::<64, 8, 6>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 100_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_applies_true_acks_and_refuses_the_rest() {
        let ack = |cum: u32, sack: Vec<usize>| Gram {
            opcode: metaroce_proto::Opcode::Ack as u64,
            path: PATH,
            ev_psn_delta: 0,
            cum,
            sack,
            echo: NOW - 1000,
            ce: 2,
            rx: 10,
        };
        let grams = vec![
            // Applied: highest reported 150 + 5 + 1 = 156, sent.
            ack(150, vec![0, 5]),
            // Refused: 150 + 100 + 1 = 251 was never sent (next 200).
            ack(150, vec![100]),
            // Unmapped path.
            Gram {
                path: PATH + 1,
                ..ack(150, vec![])
            },
            // The event is not this datagram's.
            Gram {
                ev_psn_delta: 1,
                ..ack(150, vec![])
            },
            // Not an ACK: ignored.
            Gram {
                opcode: 0x01,
                ..ack(150, vec![])
            },
            // Applied, not the newest (rx_count behind): the slot's last
            // CE count (0) instead of its own; no RTT (echo 0).
            Gram {
                rx: 9,
                echo: 0,
                ..ack(160, vec![])
            },
        ];
        let run = simulate(grams);
        let sack_lo = (1u64 << 0) | (1 << 5);
        assert_eq!(
            run.ops,
            vec![
                Op::Ack(SLOT, 150, sack_lo),
                Op::Feedback(SLOT, Some(1000), 2, 5),
                Op::Ack(SLOT, 160, 0),
                Op::Feedback(SLOT, None, 0, 5),
            ]
        );
        let done = (SLOT, 5, 500, u64::from(Gram::CONN_CUM));
        assert_eq!(run.done, vec![done, done]);
        assert_eq!(run.counters, [2, 1, 0, 1, 1]);
    }

    #[test]
    fn rust_hdl_model_refuses_by_the_highest_sack_bit() {
        // path_cum 150, una 100, next_psn 200: the highest reported PSN
        // 150 + h + 1 was sent exactly when the SACK's highest bit h is
        // below 49 (no bit: 149, sent). Each ACK is the slot's newest
        // with no CE marks, so only that decides.
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xACE);
        let mut grams = Vec::new();
        let mut want = Vec::new();
        let mut refused = 0;
        let random: Vec<Option<usize>> = (0..20).map(|_| Some(rng.gen_range(0..256))).collect();
        for (k, top) in [None, Some(0), Some(48), Some(49), Some(255)]
            .into_iter()
            .chain(random)
            .enumerate()
        {
            let mut sack = Sack::default();
            let mut bits = Vec::new();
            if let Some(top) = top {
                for _ in 0..k % 4 {
                    bits.push(rng.gen_range(0..=top));
                }
                bits.push(top);
            }
            for &i in &bits {
                sack.set(i as u32);
            }
            let high = sack.highest().map_or(149, |h| 151 + h);
            if u64::from(high) < NEXT_PSN {
                let lo = bits
                    .iter()
                    .filter(|&&i| i < 64)
                    .fold(0u64, |m, &i| m | 1 << i);
                want.push(Op::Ack(SLOT, 150, lo));
            } else {
                refused += 1;
            }
            grams.push(Gram {
                opcode: metaroce_proto::Opcode::Ack as u64,
                path: PATH,
                ev_psn_delta: 0,
                cum: 150,
                sack: bits,
                echo: 0,
                ce: 0,
                rx: 10 * (k as u32 + 1),
            });
        }
        let n = grams.len() as u64;
        let run = simulate(grams);
        let acks: Vec<Op> = run
            .ops
            .into_iter()
            .filter(|op| matches!(op, Op::Ack(..)))
            .collect();
        assert_eq!(acks, want);
        assert!(refused > 0 && !want.is_empty());
        assert_eq!(run.counters, [n - refused, 0, 0, 0, refused]);
    }
}
