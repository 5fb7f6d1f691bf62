//! Firmware receive queue: the bytes of the datagrams the receive core
//! hands to the firmware (verdict 10: ACKs, NACKs, READ requests, CM, and
//! SENDs of streams without a receive ring).
//!
//! [`FwRx`] taps the datagram stream entering the receive core (every beat
//! the core takes, as [`crate::AckRx`] does) and keeps the first
//! [`SLOT_BYTES`] bytes of each datagram, with its length, in one of 8
//! slots. The core emits one verdict event per datagram, in order, a few
//! cycles after its last beat; the event of the oldest undecided slot
//! marks it to be handed up (verdict 10, with the event's UDP source port)
//! or freed. The oldest decided slot is handed up on `m_fw_*`, one beat per
//! cycle, lane 0 first, packed `tkeep`, with the datagram's length
//! (`m_fw_len`) and `m_fw_trunc` when it was longer than a slot (its first
//! [`SLOT_BYTES`] only: an ACK is 100 bytes, a READ request 68, so only
//! SENDs of streams 4 and up are cut). When all 8 slots are taken, `hold`
//! stops the core's input before the next datagram: nothing the core
//! accepted is lost on the way to the firmware, however slowly it reads.
//!
//! Hand-written Verilog (`fw_rx.v.in`); verified under Verilator inside
//! [`crate::NicCore`] by the two-NIC harness (`metaroce-sim-tb`
//! `hw_pair`), whose firmware processes every ACK and READ request from
//! these bytes.

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

/// Bytes of a datagram kept for the firmware.
pub const SLOT_BYTES: usize = 128;

/// The firmware receive queue at `W`-bit beats (`B = W / 8` lanes, 8 to 64).
#[derive(LogicBlock, Default)]
pub struct FwRx<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empties the slots, clears the counters.
    pub rst: Signal<In, Bit>,
    /// Tap: a datagram beat the receive core takes.
    pub s_tdata: Signal<In, Bits<W>>,
    /// Tap: its byte enables (packed).
    pub s_tkeep: Signal<In, Bits<B>>,
    /// Tap: the core takes the beat this cycle.
    pub s_tvalid: Signal<In, Bit>,
    /// Tap: last beat of the datagram.
    pub s_tlast: Signal<In, Bit>,
    /// Core event pulse (one per datagram, in order).
    pub ev_valid: Signal<In, Bit>,
    /// Core event verdict.
    pub ev_code: Signal<In, Bits<5>>,
    /// Core event UDP source port.
    pub ev_src_port: Signal<In, Bits<16>>,
    /// No slot is free: the core must not start another datagram.
    pub hold: Signal<Out, Bit>,
    /// Handed up: data.
    pub m_fw_tdata: Signal<Out, Bits<W>>,
    /// Handed up: byte enables (packed).
    pub m_fw_tkeep: Signal<Out, Bits<B>>,
    /// Handed up: beat valid.
    pub m_fw_tvalid: Signal<Out, Bit>,
    /// The firmware takes the beat.
    pub m_fw_tready: Signal<In, Bit>,
    /// Handed up: last beat.
    pub m_fw_tlast: Signal<Out, Bit>,
    /// The datagram's length in bytes (held for the datagram).
    pub m_fw_len: Signal<Out, Bits<16>>,
    /// It was longer than a slot: only its first [`SLOT_BYTES`] come up.
    pub m_fw_trunc: Signal<Out, Bit>,
    /// Its UDP source port.
    pub m_fw_src_port: Signal<Out, Bits<16>>,
    /// Datagrams handed up.
    pub cnt_up: Signal<Out, Bits<32>>,
    /// Of which cut to a slot.
    pub cnt_trunc: Signal<Out, Bits<32>>,
}

impl<const W: usize, const B: usize> Logic for FwRx<W, B> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "FwRx: W must be 8 * B");
        assert!(
            B.is_power_of_two() && (8..=64).contains(&B),
            "FwRx: B must be 8, 16, 32 or 64"
        );
        self.hold.connect();
        self.m_fw_tdata.connect();
        self.m_fw_tkeep.connect();
        self.m_fw_tvalid.connect();
        self.m_fw_tlast.connect();
        self.m_fw_len.connect();
        self.m_fw_trunc.connect();
        self.m_fw_src_port.connect();
        self.cnt_up.connect();
        self.cnt_trunc.connect();
    }

    fn hdl(&self) -> Verilog {
        let beats = SLOT_BYTES / B;
        hand_written(
            include_str!("fw_rx.v.in")
                .replace("@SBEATS@", &beats.to_string())
                .replace("@SLOT_BYTES@", &SLOT_BYTES.to_string())
                .replace("@BEATW@", &beats.trailing_zeros().max(1).to_string())
                .replace("@W@", &W.to_string())
                .replace("@B@", &B.to_string()),
        )
    }
}
