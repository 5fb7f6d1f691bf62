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
//! The tap merges each beat's lanes of bytes 20..95 into a capture
//! register (constant slices per beat index) and writes the datagram's
//! entry into the pairing FIFO at its last beat. At its event the entry is
//! decoded (network order to values) and queued with the highest path PSN
//! it reports ([`AckHigh`], the TX table's too; computed here so the
//! evidence check at the queue's head only subtracts and compares); the queue and
//! the pairing FIFO are [`LutRam`]s (asynchronous reads), the slot map and
//! the newest `rx_count` per slot registers searched by loop-and-compare.
//! A slot map write is registered first and applies one cycle after
//! `cfg_we` (so no path runs from `cfg_*` to the table's operation port
//! through the block);
//! otherwise cycle for cycle as the template it replaces (`ack_rx.v.in`,
//! before issue #16).
//!
//! Native rust-hdl: rust-hdl's own simulator runs the block (the tests
//! below); it is verified under Verilator inside [`crate::NicCore`] (the
//! `ack_rx` bench).

use rust_hdl::prelude::*;

use crate::AckHigh;
use crate::bus::{
    AckDoneOut, AckRxCntOut, AckTapIn, CfgIn, TxCheck, TxOpIn, TxOpOut, TxResIn, TxResOut,
};
use crate::helpers::{LutRam, byte_mask, konst, native_block};

/// First datagram byte kept (the base header's `path_psn`).
pub const CAP_FIRST: usize = 20;

/// Datagram bytes kept per datagram (through the ACK's `rx_count`).
pub const CAP_BYTES: usize = 76;

pub mod cfg;

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
        // The table's operation port is ours this cycle.
        sel: Signal<Local, Bit>,
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
        self.map_we.d.next = self.cfg.we.val();
        self.map_addr.d.next = self.cfg.addr.val();
        self.map_word.d.next = self.cfg.data.val();
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
        if self.s_tap.tvalid.val() {
            for t in 0..Self::WIN {
                if self.beat.q.val() == self.k_cbeat[t].val() {
                    self.lane.next = self.s_tap.tdata.val() >> self.k_rsh[t].val();
                    self.wide.next =
                        bit_cast::<CAP_BITS, W>(self.lane.val()) << self.k_lsh[t].val();
                    self.cap_n.next = (self.cap_n.val() & !self.k_cmask[t].val())
                        | (self.wide.val() & self.k_cmask[t].val());
                }
            }
            self.cap.d.next = self.cap_n.val();
            if self.s_tap.tlast.val() {
                self.beat.d.next = 0.into();
                self.pf_wr.d.next = self.pf_wr.q.val() + 1;
            } else if self.beat.q.val() != 0xFFFF {
                self.beat.d.next = self.beat.q.val() + 1;
            }
        }
        // Bytes 0..63 and rx_count (rate_hint and credit are the firmware's).
        self.pf.write_enable.next = self.s_tap.tvalid.val() & self.s_tap.tlast.val();
        self.pf.write_address.next = self.pf_wr.q.val();
        self.pf.write_data.next = bit_cast::<PF_BITS, 512>(self.cap_n.val().get_bits::<512>(0))
            | (bit_cast::<PF_BITS, 32>(self.cap_n.val().get_bits::<32>(576)) << 512);
        self.pf.read_address.next = self.pf_rd.q.val();

        // ---- the event: its datagram's entry, decoded; the slot search ----
        self.e_ack.next = self.s_tap.ev_valid.val()
            & (self.s_tap.ev_code.val() == self.k_firmware.val())
            & (self.s_tap.ev_opcode.val() == self.k_op_ack.val());
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
        self.e_same.next = (self.e_psn.val() == self.s_tap.ev_path_psn.val())
            & (self.e_ts.val() == self.s_tap.ev_timestamp.val());
        // The highest path PSN it reports (`AckHigh`; only an ACK's event
        // computes it). Its inputs come from ports and the pairing FIFO's
        // read alone, not from the decode above (whose shared `octet`
        // temporary would tie them to the queue entry that reads the
        // output: Verilator would see a loop), so Verilator orders them apart.
        self.highest.en.next = self.s_tap.ev_valid.val()
            & (self.s_tap.ev_code.val() == self.k_firmware.val())
            & (self.s_tap.ev_opcode.val() == self.k_op_ack.val());
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
                    & (self.map_qpn[i].q.val() == self.s_tap.ev_dst_qpn.val())
                    & (self.map_path[i].q.val() == self.s_tap.ev_path.val())
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
        if self.s_tap.ev_valid.val() {
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
        self.ahead.next = self.q.read_data.val().get_bits::<32>(448) - self.ck.una.val();
        self.refuse.next = !self.ahead.val().get_bit(31)
            & (self.ahead.val() >= (self.ck.next_psn.val() - self.ck.una.val()));
        // As the newest, more new CE marks than new packets.
        self.rx_step.next = self.h_rx.val() - self.h_last_rx.val();
        self.newest.next = !self.rx_step.val().get_bit(31);
        self.ce_step.next = self.h_ce.val() - self.ck.last_ce.val();
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
            & self.m_op.ready.val()
            & (!self.s_op.valid.val() | self.turn_hw.q.val());
        self.fb_now.next = (self.hs.q.val() == 1) & self.s_res.valid.val();
        self.sel.next = self.start.val() | (self.hs.q.val() != 0);
        self.busy.next = self.hs.q.val() != 0;
        // The table's operation port: the firmware's, or ours (`Ack`,
        // `Feedback`: the operands below) while we hold it; the firmware
        // sees `ready` low then, and no result of ours.
        self.m_op.valid.next = self.s_op.valid.val();
        self.m_op.code.next = self.s_op.code.val();
        self.m_op.slot.next = self.s_op.slot.val();
        self.m_op.psn.next = self.s_op.psn.val();
        self.m_op.len.next = self.s_op.len.val();
        self.m_op.probe.next = self.s_op.probe.val();
        self.m_op.retx.next = self.s_op.retx.val();
        self.m_op.sack.next = self.s_op.sack.val();
        self.m_op.rtt_valid.next = self.s_op.rtt_valid.val();
        self.m_op.rtt.next = self.s_op.rtt.val();
        self.m_op.ce_count.next = self.s_op.ce_count.val();
        self.m_op.acked.next = self.s_op.acked.val();
        self.m_op.value.next = self.s_op.value.val();
        self.s_op.ready.next = self.m_op.ready.val() & !self.sel.val();
        self.m_res.valid.next = self.s_res.valid.val() & !self.busy.val();
        self.m_res.ok.next = self.s_res.ok.val();
        self.m_res.psn.next = self.s_res.psn.val();
        self.m_res.pkts.next = self.s_res.pkts.val();
        self.m_res.bytes.next = self.s_res.bytes.val();
        self.rtt64.next = self.now.val() - self.h_echo.val();
        if self.sel.val() {
            self.m_op.valid.next = (self.start.val() & !self.refuse.val()) | self.fb_now.val();
            self.m_op.code.next = self.k_t_feedback.val();
            if self.hs.q.val() == 0 {
                self.m_op.code.next = self.k_t_ack.val();
            }
            self.m_op.slot.next = self.qs.read_data.val();
            self.m_op.psn.next = self.h_cum.val();
            self.m_op.sack.next = self.q.read_data.val().get_bits::<256>(64);
            // RTT as the engine's `Tx::on_ack`: now - echo_ts when echo_ts
            // > 0 and not in the future, 32 bits saturated, only when the
            // Ack acknowledged a data packet or ended the quarantine (its
            // PROBE; the table shows the new quarantine bit in the Ack's
            // result cycle).
            self.m_op.rtt_valid.next = (self.h_echo.val() != 0)
                & (self.now.val() >= self.h_echo.val())
                & ((self.s_res.pkts.val() != 0)
                    | (self.r_quar.q.val() & !self.ck.quarantined.val()));
            self.m_op.rtt.next = self.rtt64.val().get_bits::<32>(0);
            if self.rtt64.val().get_bits::<32>(32) != 0 {
                self.m_op.rtt.next = self.k_rtt_max.val();
            }
            // An ACK that is not the newest brings no CE marks: the last count.
            self.m_op.ce_count.next = self.ck.last_ce.val();
            if self.r_newest.q.val() {
                self.m_op.ce_count.next = self.h_ce.val();
            }
            self.m_op.acked.next = self.s_res.pkts.val();
        }
        self.ck.slot.next = self.qs.read_data.val();

        if !self.sel.val() & self.s_op.valid.val() & self.m_op.ready.val() {
            self.turn_hw.d.next = true;
        }
        if self.start.val() {
            self.turn_hw.d.next = false;
            self.r_newest.d.next = self.newest.val();
            self.r_quar.d.next = self.ck.quarantined.val();
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
            self.r_pkts.d.next = self.s_res.pkts.val();
            self.r_bytes.d.next = self.s_res.bytes.val();
            self.hs.d.next = 2.into();
        }
        if (self.hs.q.val() == 2) & self.s_res.valid.val() {
            self.done_valid.d.next = true;
            self.done_slot.d.next = self.qs.read_data.val();
            self.done_pkts.d.next = self.r_pkts.q.val();
            self.done_bytes.d.next = self.r_bytes.q.val();
            self.done_conn_cum.d.next = self.q.read_data.val().get_bits::<32>(0);
            self.n_applied.d.next = self.n_applied.q.val() + 1;
            self.q_rd.d.next = self.q_rd.q.val() + 1;
            self.hs.d.next = 0.into();
        }
        self.m_done.valid.next = self.done_valid.q.val();
        self.m_done.slot.next = self.done_slot.q.val();
        self.m_done.pkts.next = self.done_pkts.q.val();
        self.m_done.bytes.next = self.done_bytes.q.val();
        self.m_done.conn_cum.next = self.done_conn_cum.q.val();
        self.cnt.applied.next = self.n_applied.q.val();
        self.cnt.unmapped.next = self.n_unmapped.q.val();
        self.cnt.overflow.next = self.n_overflow.q.val();
        self.cnt.pair_err.next = self.n_pair_err.q.val();
        self.cnt.refused.next = self.n_refused.q.val();

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
mod tests;
