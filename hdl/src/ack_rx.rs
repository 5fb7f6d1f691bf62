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
//! Hand-written Verilog (`ack_rx.v.in`, the capture generated here for the
//! beat width); verified under Verilator inside [`crate::NicCore`].

use std::fmt::Write as _;

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

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

/// The ACK receiver at `W`-bit beats (`B = W / 8` lanes, 8 to 64) for a
/// TX table of `2^SB` slots.
#[derive(LogicBlock, Default)]
pub struct AckRx<const W: usize, const B: usize, const SB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: clears the map, the FIFOs and the counters.
    pub rst: Signal<In, Bit>,
    /// Tap: a datagram beat the receive core takes.
    pub s_tdata: Signal<In, Bits<W>>,
    /// Tap: the core takes the beat this cycle.
    pub s_tvalid: Signal<In, Bit>,
    /// Tap: last beat of the datagram.
    pub s_tlast: Signal<In, Bit>,
    /// Core event pulse (one per datagram, in order).
    pub ev_valid: Signal<In, Bit>,
    /// Core event verdict.
    pub ev_code: Signal<In, Bits<5>>,
    /// Core event opcode.
    pub ev_opcode: Signal<In, Bits<8>>,
    /// Core event destination QPN.
    pub ev_dst_qpn: Signal<In, Bits<32>>,
    /// Core event path.
    pub ev_path: Signal<In, Bits<16>>,
    /// Core event path PSN (pairing guard).
    pub ev_path_psn: Signal<In, Bits<32>>,
    /// Core event timestamp (pairing guard).
    pub ev_timestamp: Signal<In, Bits<64>>,
    /// Time in ns (RTT samples).
    pub now: Signal<In, Bits<64>>,
    /// Slot map write strobe.
    pub cfg_we: Signal<In, Bit>,
    /// Slot map entry (= TX table slot; entries beyond the slots ignored).
    pub cfg_addr: Signal<In, Bits<6>>,
    /// Slot map word ([`cfg`](mod@crate::ack_rx::cfg)).
    pub cfg_data: Signal<In, Bits<49>>,
    /// The firmware presents an operation.
    pub fw_op_valid: Signal<In, Bit>,
    /// The table takes an operation.
    pub t_op_ready: Signal<In, Bit>,
    /// The table finished an operation.
    pub t_res_valid: Signal<In, Bit>,
    /// The table's `res_pkts`.
    pub t_res_pkts: Signal<In, Bits<32>>,
    /// The table's `res_bytes`.
    pub t_res_bytes: Signal<In, Bits<32>>,
    /// The table's `op_*` come from this block (firmware waits).
    pub sel: Signal<Out, Bit>,
    /// One of this block's operations runs: results and fates are ours.
    pub busy: Signal<Out, Bit>,
    /// Operation valid.
    pub a_op_valid: Signal<Out, Bit>,
    /// Operation code (`Ack` or `Feedback`).
    pub a_op_code: Signal<Out, Bits<3>>,
    /// Slot.
    pub a_op_slot: Signal<Out, Bits<SB>>,
    /// `Ack`: `path_cum`.
    pub a_op_psn: Signal<Out, Bits<32>>,
    /// `Ack`: SACK bitmap.
    pub a_op_sack: Signal<Out, Bits<256>>,
    /// `Feedback`: an RTT sample is given.
    pub a_op_rtt_valid: Signal<Out, Bit>,
    /// `Feedback`: RTT sample, ns.
    pub a_op_rtt: Signal<Out, Bits<32>>,
    /// `Feedback`: the ACK's CE count.
    pub a_op_ce_count: Signal<Out, Bits<32>>,
    /// `Feedback`: packets the `Ack` acknowledged.
    pub a_op_acked: Signal<Out, Bits<32>>,
    /// The TX table slot whose state the evidence check reads (the queue
    /// head's).
    pub ck_slot: Signal<Out, Bits<SB>>,
    /// That slot's `una`.
    pub ck_una: Signal<In, Bits<32>>,
    /// That slot's `next_psn`.
    pub ck_next_psn: Signal<In, Bits<32>>,
    /// That slot's last `ce_count` applied.
    pub ck_last_ce: Signal<In, Bits<32>>,
    /// That slot is quarantined.
    pub ck_quarantined: Signal<In, Bit>,
    /// Pulse: an ACK was applied.
    pub m_done_valid: Signal<Out, Bit>,
    /// Its slot.
    pub m_done_slot: Signal<Out, Bits<SB>>,
    /// Data packets it acknowledged.
    pub m_done_pkts: Signal<Out, Bits<32>>,
    /// Bytes it acknowledged.
    pub m_done_bytes: Signal<Out, Bits<32>>,
    /// The ACK's `conn_cum`.
    pub m_done_conn_cum: Signal<Out, Bits<32>>,
    /// ACKs applied.
    pub cnt_applied: Signal<Out, Bits<32>>,
    /// Valid ACKs whose (QPN, path) has no slot (not applied).
    pub cnt_unmapped: Signal<Out, Bits<32>>,
    /// ACKs dropped because the queue (16) was full.
    pub cnt_overflow: Signal<Out, Bits<32>>,
    /// Events whose path PSN or timestamp differed from the captured
    /// datagram's (not applied; 0 unless the pairing broke).
    pub cnt_pair_err: Signal<Out, Bits<32>>,
    /// ACKs refused by the evidence check (spec §5.5 step 0): no table
    /// operation, no `m_done_valid`; it counts in the cycle after the
    /// refused ACK's turn.
    pub cnt_refused: Signal<Out, Bits<32>>,
}

/// The capture statements: each beat's lanes that hold bytes
/// `CAP_FIRST..CAP_FIRST + CAP_BYTES` go into `cap_n`.
fn capture_code(b: usize) -> String {
    let mut out = String::new();
    let (first, last) = (CAP_FIRST, CAP_FIRST + CAP_BYTES - 1);
    for k in first / b..=last / b {
        let lo = first.max(k * b);
        let hi = last.min(k * b + b - 1);
        let (n0, n1) = (lo - first, hi - first);
        let (j0, j1) = (lo - k * b, hi - k * b);
        writeln!(
            out,
            "        if (beat == 16'd{k}) cap_n[{}:{}] = s_tdata[{}:{}];",
            8 * n1 + 7,
            8 * n0,
            8 * j1 + 7,
            8 * j0
        )
        .expect("write to String");
    }
    out
}

impl<const W: usize, const B: usize, const SB: usize> Logic for AckRx<W, B, SB> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "AckRx: W must be 8 * B");
        assert!(
            B.is_power_of_two() && (8..=64).contains(&B),
            "AckRx: B must be 8, 16, 32 or 64"
        );
        assert!((1..=6).contains(&SB), "AckRx: 2 to 64 slots");
        self.sel.connect();
        self.busy.connect();
        self.a_op_valid.connect();
        self.a_op_code.connect();
        self.a_op_slot.connect();
        self.a_op_psn.connect();
        self.a_op_sack.connect();
        self.a_op_rtt_valid.connect();
        self.a_op_rtt.connect();
        self.a_op_ce_count.connect();
        self.a_op_acked.connect();
        self.ck_slot.connect();
        self.m_done_valid.connect();
        self.m_done_slot.connect();
        self.m_done_pkts.connect();
        self.m_done_bytes.connect();
        self.m_done_conn_cum.connect();
        self.cnt_applied.connect();
        self.cnt_unmapped.connect();
        self.cnt_overflow.connect();
        self.cnt_pair_err.connect();
        self.cnt_refused.connect();
    }

    fn hdl(&self) -> Verilog {
        hand_written(
            include_str!("ack_rx.v.in")
                .replace("@ACK_HIGH@", crate::helpers::ACK_HIGH_FN)
                .replace("@CAPTURE@", capture_code(B).trim_end())
                .replace("@NSLOTS@", &(1usize << SB).to_string())
                .replace("@SWM1@", &(SB - 1).to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_covers_every_lane_once_per_window() {
        for b in [8, 16, 32, 64] {
            let code = capture_code(b);
            // Every captured byte is written exactly once.
            let bytes: usize = code
                .lines()
                .map(|l| {
                    let r = l.split("cap_n[").nth(1).expect("cap_n");
                    let (hi, rest) = r.split_once(':').expect("range");
                    let lo = rest.split(']').next().expect("]");
                    (hi.parse::<usize>().unwrap() + 1 - lo.parse::<usize>().unwrap()) / 8
                })
                .sum();
            assert_eq!(bytes, CAP_BYTES, "B = {b}");
        }
    }
}
