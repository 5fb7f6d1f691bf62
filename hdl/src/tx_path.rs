//! Per-path TX table: the sender's per-path state of the
//! engine's `TxPath` (metaroce-firmware `path.rs`) for `slots` path slots
//! (the firmware maps (QP, path) to a slot), with a 256-entry ring of
//! transmissions per slot, updated by one operation at a time with the
//! engine's rules and readable by the firmware.
//!
//! Hand-written Verilog (`tx_path.v.in`): rust-hdl kernels cannot index
//! arrays of registers. The top module is `top`:
//!
//! * `op_valid`/`op_ready`, `op_code` ([`TxOp`]), `op_slot` and the
//!   operands `op_psn` (connection PSN of a send, `path_cum` of an ACK,
//!   path PSN of a `Lose`),
//!   `op_len` (16), `op_probe`, `op_retx`, `op_sack` (256, the layout of
//!   `metaroce_proto::Sack`), `op_rtt_valid`, `op_rtt` (32, ns),
//!   `op_ce_count`, `op_acked`, `op_value` (entropy or window);
//! * `res_valid` (one pulse when the operation is done), `res_ok` (a send
//!   found room in the ring), `res_psn` (the send's path PSN), `res_pkts`,
//!   `res_bytes` (what an ACK acknowledged);
//! * `m_fate_valid`/`m_fate_ready`, `m_fate_lost`, `m_fate_conn_psn`: one
//!   event per data transmission an ACK, a timeout or a `Lose` resolved,
//!   in PSN order;
//! * `rd_slot`, `rd_len` in; `rd_*` out: the slot's state (a mux of the
//!   registers) and `rd_can_send` = `TxPath::can_send(rd_len)`;
//! * `cap_slot` in; `cap_view` out: a second read of the same fields (all
//!   but `can_send`) packed into [`VIEW_BITS`] bits, for the host interface
//!   to capture a slot in the cycle an operation's result appears while the
//!   `rd_*` port stays the register port's (`docs/hardware.md` §18);
//! * `ck_slot` in; `ck_una`, `ck_next_psn`, `ck_last_ce`, `ck_quarantined`
//!   out: a third read, of what the ACK receiver's evidence check (spec
//!   §5.5 step 0) needs (`docs/hardware.md` §16).
//!
//! RTO timers, RACK's timing, probe scheduling and congestion control stay
//! in the firmware; the window is a register it writes ([`TxOp::Window`]),
//! and a transmission RACK finds lost is reported with [`TxOp::Lose`].

use rust_hdl::prelude::*;

/// Largest number of slots the template is instantiated with here.
pub const MAX_SLOTS: usize = 64;

/// Transmissions a slot's ring holds (the engine's 256-PSN limit).
pub const RING: usize = 256;

/// Bits of `cap_view`, low bit first: `next_psn`, `una`, `inflight`,
/// `window`, `srtt`, `rttvar`, `ecn_ewma`, `loss_ewma`, `samples`, `sent`,
/// `retransmitted`, `acked`, `lost`, `ce_marked`, `repaths`, `timeouts` (32
/// each), then `entropy` (16), `rtt_valid`, `quarantined`, `backoff` (4).
/// Bits 319..0 are words 2..6 of a result's event entry, 511..320 words 0..2
/// of the view entry after it and 533..512 that entry's word 3.
pub const VIEW_BITS: usize = 534;

/// Operation codes (`op_code`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TxOp {
    /// `TxPath::new`: clears the slot, entropy from `op_value`, window 0.
    Init = 0,
    /// `on_send_data` (`op_probe` low: `op_psn`, `op_len`, `op_retx`) or
    /// `on_send_probe`; returns the path PSN; refused (`res_ok` low) when
    /// the ring is full. One cycle.
    Send = 1,
    /// `on_ack(op_psn, op_sack)`: walks the ring, emits fates, returns
    /// (`res_pkts`, `res_bytes`).
    Ack = 2,
    /// `on_ack_feedback`'s table part: RTT sample, CE count, acked packets.
    Feedback = 3,
    /// `on_timeout(op_value)`'s table part: every live transmission lost,
    /// quarantine with backoff, move to the new entropy.
    Timeout = 4,
    /// `move_to(op_value)`. One cycle.
    Move = 5,
    /// Sets the window (bytes) from `op_value`. One cycle.
    Window = 6,
    /// The table part of `on_rack` for one transmission the firmware found
    /// lost by time: path PSN `op_psn`, if unresolved data, is lost (fate
    /// event, in-flight, `lost`, loss EWMA); then resolved entries are
    /// popped.
    Lose = 7,
}

impl TxOp {
    /// Every operation.
    pub const ALL: [TxOp; 8] = [
        Self::Init,
        Self::Send,
        Self::Ack,
        Self::Feedback,
        Self::Timeout,
        Self::Move,
        Self::Window,
        Self::Lose,
    ];
}

/// Verilog source of the table for `slots` slots (a power of two, 2 to
/// [`MAX_SLOTS`]); top module `top`, `op_slot`/`rd_slot` are
/// `log2(slots)` bits.
///
/// # Panics
/// If `slots` is not a power of two in 2..=[`MAX_SLOTS`].
pub fn tx_path_verilog(slots: usize) -> String {
    assert!(
        slots.is_power_of_two() && (2..=MAX_SLOTS).contains(&slots),
        "unsupported slot count {slots}"
    );
    let bits = slots.trailing_zeros() as usize;
    let ring_bits = RING.trailing_zeros() as usize;
    include_str!("tx_path.v.in")
        .replace("@ACK_HIGH@", crate::helpers::ACK_HIGH_FN)
        .replace("@NSLOTS@", &slots.to_string())
        .replace("@SWM1@", &(bits - 1).to_string())
        .replace("@AWM1@", &(bits + ring_bits - 1).to_string())
}

/// The table as a rust-hdl block with `2^SB` slots, for instancing in a
/// top ([`crate::NicCore`]): the ports of [`tx_path_verilog`] under the
/// same names, the module itself (renamed `tx_path_table`) wrapped.
#[derive(LogicBlock, Default)]
pub struct TxPathTable<const SB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, Bit>,
    /// Operation valid.
    pub op_valid: Signal<In, Bit>,
    /// The table takes an operation (none running).
    pub op_ready: Signal<Out, Bit>,
    /// Operation (`TxOp`).
    pub op_code: Signal<In, Bits<3>>,
    /// Slot operated on.
    pub op_slot: Signal<In, Bits<SB>>,
    /// `Send`: connection PSN; `Ack`: `path_cum`; `Lose`: path PSN.
    pub op_psn: Signal<In, Bits<32>>,
    /// `Send`: payload bytes.
    pub op_len: Signal<In, Bits<16>>,
    /// `Send`: a probe.
    pub op_probe: Signal<In, Bit>,
    /// `Send`: a retransmission.
    pub op_retx: Signal<In, Bit>,
    /// `Ack`: SACK bitmap.
    pub op_sack: Signal<In, Bits<256>>,
    /// `Feedback`: an RTT sample is given.
    pub op_rtt_valid: Signal<In, Bit>,
    /// `Feedback`: RTT sample, ns.
    pub op_rtt: Signal<In, Bits<32>>,
    /// `Feedback`: the ACK's cumulative CE count.
    pub op_ce_count: Signal<In, Bits<32>>,
    /// `Feedback`: packets the ACK acknowledged.
    pub op_acked: Signal<In, Bits<32>>,
    /// `Init`/`Timeout`/`Move`: entropy; `Window`: window in bytes.
    pub op_value: Signal<In, Bits<32>>,
    /// Pulse: the operation is done.
    pub res_valid: Signal<Out, Bit>,
    /// `Send`: the ring had room.
    pub res_ok: Signal<Out, Bit>,
    /// `Send`: path PSN assigned.
    pub res_psn: Signal<Out, Bits<32>>,
    /// `Ack`: data packets acknowledged.
    pub res_pkts: Signal<Out, Bits<32>>,
    /// `Ack`: bytes acknowledged.
    pub res_bytes: Signal<Out, Bits<32>>,
    /// Fate event valid.
    pub m_fate_valid: Signal<Out, Bit>,
    /// The firmware takes the fate event.
    pub m_fate_ready: Signal<In, Bit>,
    /// Fate: lost (1) or acked (0).
    pub m_fate_lost: Signal<Out, Bit>,
    /// Fate: connection PSN of the transmission.
    pub m_fate_conn_psn: Signal<Out, Bits<32>>,
    /// Slot to read.
    pub rd_slot: Signal<In, Bits<SB>>,
    /// Length for `rd_can_send`.
    pub rd_len: Signal<In, Bits<16>>,
    /// Read: entropy.
    pub rd_entropy: Signal<Out, Bits<16>>,
    /// Read: next path PSN.
    pub rd_next_psn: Signal<Out, Bits<32>>,
    /// Read: oldest unresolved path PSN.
    pub rd_una: Signal<Out, Bits<32>>,
    /// Read: bytes in flight.
    pub rd_inflight: Signal<Out, Bits<32>>,
    /// Read: window (bytes).
    pub rd_window: Signal<Out, Bits<32>>,
    /// Read: smoothed RTT, ns.
    pub rd_srtt: Signal<Out, Bits<32>>,
    /// Read: RTT variation, ns.
    pub rd_rttvar: Signal<Out, Bits<32>>,
    /// Read: an RTT sample was taken.
    pub rd_rtt_valid: Signal<Out, Bit>,
    /// Read: ECN EWMA (16.16).
    pub rd_ecn_ewma: Signal<Out, Bits<32>>,
    /// Read: loss EWMA (16.16).
    pub rd_loss_ewma: Signal<Out, Bits<32>>,
    /// Read: acked packets since the last move.
    pub rd_samples: Signal<Out, Bits<32>>,
    /// Read: data packets sent.
    pub rd_sent: Signal<Out, Bits<32>>,
    /// Read: retransmissions sent.
    pub rd_retransmitted: Signal<Out, Bits<32>>,
    /// Read: packets acknowledged.
    pub rd_acked: Signal<Out, Bits<32>>,
    /// Read: packets lost.
    pub rd_lost: Signal<Out, Bits<32>>,
    /// Read: CE marks counted.
    pub rd_ce_marked: Signal<Out, Bits<32>>,
    /// Read: moves.
    pub rd_repaths: Signal<Out, Bits<32>>,
    /// Read: timeouts.
    pub rd_timeouts: Signal<Out, Bits<32>>,
    /// Read: quarantined.
    pub rd_quarantined: Signal<Out, Bit>,
    /// Read: probe backoff multiplier.
    pub rd_backoff: Signal<Out, Bits<4>>,
    /// Read: `TxPath::can_send(rd_len)`.
    pub rd_can_send: Signal<Out, Bit>,
    /// Slot the capture port shows.
    pub cap_slot: Signal<In, Bits<SB>>,
    /// Capture port: the slot's fields packed ([`VIEW_BITS`]).
    pub cap_view: Signal<Out, Bits<VIEW_BITS>>,
    /// Slot the check port shows (the ACK receiver's).
    pub ck_slot: Signal<In, Bits<SB>>,
    /// Check port: `una`.
    pub ck_una: Signal<Out, Bits<32>>,
    /// Check port: `next_psn`.
    pub ck_next_psn: Signal<Out, Bits<32>>,
    /// Check port: the last `ce_count` applied.
    pub ck_last_ce: Signal<Out, Bits<32>>,
    /// Check port: quarantined.
    pub ck_quarantined: Signal<Out, Bit>,
}

impl<const SB: usize> Logic for TxPathTable<SB> {
    /// No rust-hdl model: the table is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.op_ready.connect();
        self.res_valid.connect();
        self.res_ok.connect();
        self.res_psn.connect();
        self.res_pkts.connect();
        self.res_bytes.connect();
        self.m_fate_valid.connect();
        self.m_fate_lost.connect();
        self.m_fate_conn_psn.connect();
        self.rd_entropy.connect();
        self.rd_next_psn.connect();
        self.rd_una.connect();
        self.rd_inflight.connect();
        self.rd_window.connect();
        self.rd_srtt.connect();
        self.rd_rttvar.connect();
        self.rd_rtt_valid.connect();
        self.rd_ecn_ewma.connect();
        self.rd_loss_ewma.connect();
        self.rd_samples.connect();
        self.rd_sent.connect();
        self.rd_retransmitted.connect();
        self.rd_acked.connect();
        self.rd_lost.connect();
        self.rd_ce_marked.connect();
        self.rd_repaths.connect();
        self.rd_timeouts.connect();
        self.rd_quarantined.connect();
        self.rd_backoff.connect();
        self.rd_can_send.connect();
        self.cap_view.connect();
        self.ck_una.connect();
        self.ck_next_psn.connect();
        self.ck_last_ce.connect();
        self.ck_quarantined.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Wrapper(Wrapper {
            code: "tx_path_table t(.clock(clock), .rst(rst), .op_valid(op_valid), .op_ready(op_ready), .op_code(op_code), .op_slot(op_slot), .op_psn(op_psn), .op_len(op_len), .op_probe(op_probe), .op_retx(op_retx), .op_sack(op_sack), .op_rtt_valid(op_rtt_valid), .op_rtt(op_rtt), .op_ce_count(op_ce_count), .op_acked(op_acked), .op_value(op_value), .res_valid(res_valid), .res_ok(res_ok), .res_psn(res_psn), .res_pkts(res_pkts), .res_bytes(res_bytes), .m_fate_valid(m_fate_valid), .m_fate_ready(m_fate_ready), .m_fate_lost(m_fate_lost), .m_fate_conn_psn(m_fate_conn_psn), .rd_slot(rd_slot), .rd_len(rd_len), .rd_entropy(rd_entropy), .rd_next_psn(rd_next_psn), .rd_una(rd_una), .rd_inflight(rd_inflight), .rd_window(rd_window), .rd_srtt(rd_srtt), .rd_rttvar(rd_rttvar), .rd_rtt_valid(rd_rtt_valid), .rd_ecn_ewma(rd_ecn_ewma), .rd_loss_ewma(rd_loss_ewma), .rd_samples(rd_samples), .rd_sent(rd_sent), .rd_retransmitted(rd_retransmitted), .rd_acked(rd_acked), .rd_lost(rd_lost), .rd_ce_marked(rd_ce_marked), .rd_repaths(rd_repaths), .rd_timeouts(rd_timeouts), .rd_quarantined(rd_quarantined), .rd_backoff(rd_backoff), .rd_can_send(rd_can_send), .cap_slot(cap_slot), .cap_view(cap_view), .ck_slot(ck_slot), .ck_una(ck_una), .ck_next_psn(ck_next_psn), .ck_last_ce(ck_last_ce), .ck_quarantined(ck_quarantined));\n".into(),
            cores: tx_path_verilog(1 << SB).replace("module top(", "module tx_path_table("),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_is_fully_substituted() {
        for slots in [2, 16, 64] {
            let v = tx_path_verilog(slots);
            for key in ["@NSLOTS@", "@SWM1@", "@AWM1@"] {
                assert!(!v.contains(key), "{key} left in the template");
            }
            let bits = slots.trailing_zeros() - 1;
            assert!(v.contains(&format!("input wire [{bits}:0] op_slot;")));
            assert!(v.contains("module top("));
        }
    }
}
