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
//!   registers) and `rd_can_send` = `TxPath::can_send(rd_len)`.
//!
//! RTO timers, RACK's timing, probe scheduling and congestion control stay
//! in the firmware; the window is a register it writes ([`TxOp::Window`]),
//! and a transmission RACK finds lost is reported with [`TxOp::Lose`].

/// Largest number of slots the template is instantiated with here.
pub const MAX_SLOTS: usize = 64;

/// Transmissions a slot's ring holds (the engine's 256-PSN limit).
pub const RING: usize = 256;

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
        .replace("@NSLOTS@", &slots.to_string())
        .replace("@SWM1@", &(bits - 1).to_string())
        .replace("@AWM1@", &(bits + ring_bits - 1).to_string())
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
