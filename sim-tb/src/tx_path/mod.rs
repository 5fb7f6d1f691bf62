//! The per-path TX table (`metaroce_hdl::tx_path_verilog(16)`) against the
//! engine.
//!
//! The golden model is the engine's own `metaroce_firmware::TxPath`, one per
//! slot, built with the engine's congestion controller
//! (`QpConfig::default().cc`): every operation goes to both, and the bench
//! compares the returned path PSN, the fate events in order, the ACK's
//! (packets, bytes) and every read-port field against `TxPath::stats()`,
//! `rto()`, `health()`, `slots_len()`, `can_send()` and `wants_repath()`.
//!
//! ACKs come from the engine's receive side too: the 16 slots are two QPs
//! of 8 paths, each QP a [`crate::rx_path::Engine`] that receives the
//! transmissions that survive a lossy, reordering network (as PROBEs on
//! their path) and answers with its real ACK fields (`path_cum`, `sack`,
//! `ce_count`). The bench sends those ACKs, stale ones from the history,
//! duplicates and hostile ones (random `path_cum` and bitmap). RACK is
//! the engine's `on_rack`: each transmission it declares lost becomes one
//! `Lose` operation on the RTL.
//!
//! Where each part lives: `ports.rs` the table's ports (shared with the NIC
//! top's benches), `tb.rs` the driver [`TxPathTb`], `golden.rs` the golden
//! model [`Golden`] and the diffs, `world.rs` the paths' receivers, network
//! and the firmware's random choices, `check.rs` the run
//! ([`run_against_engine`]); this file the operations and their results.

mod check;
mod golden;
mod ports;
mod tb;
mod world;

use metaroce_firmware::{SlotFate, TableOp};
use metaroce_proto::Sack;

pub use check::{TxRun, run_against_engine};
pub use golden::Golden;
pub(crate) use golden::{diff_result, diff_state};
pub(crate) use ports::{ResultPorts, TablePorts};
pub use tb::TxPathTb;

/// `op_code` values (generated from `metaroce_hdl::TxOp`).
pub use metaroce_driver::hw::codes::tx_op as code;

/// Slots of the Verilated model: 2 QPs × [`crate::rx_path::PATHS`] paths.
pub const SLOTS: usize = 16;

/// MTU the congestion controllers are built for.
const MTU: u32 = 4096;

/// One operation on a slot.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A fresh path with this entropy.
    Init {
        /// Entropy value.
        entropy: u16,
    },
    /// A data transmission or a probe.
    Send {
        /// Connection PSN (data).
        conn_psn: u32,
        /// Payload bytes (data).
        len: u16,
        /// A probe rather than data.
        probe: bool,
        /// A retransmission (data).
        retx: bool,
    },
    /// An ACK's path fields.
    Ack {
        /// Cumulative path PSN.
        path_cum: u32,
        /// SACK bitmap above it.
        sack: Sack,
    },
    /// `on_ack_feedback`.
    Feedback {
        /// RTT sample, ns.
        rtt_ns: Option<u32>,
        /// The ACK's cumulative CE count.
        ce_count: u32,
        /// Packets the ACK acknowledged.
        acked: u32,
        /// Bytes the ACK acknowledged.
        bytes: u32,
    },
    /// The path timed out and moves to `entropy`.
    Timeout {
        /// New entropy value.
        entropy: u16,
    },
    /// The path moves to `entropy`.
    Move {
        /// New entropy value.
        entropy: u16,
    },
    /// The firmware writes the window.
    Window {
        /// Window, bytes.
        window: u32,
    },
    /// The firmware's RACK found this transmission lost.
    Lose {
        /// Path PSN.
        path_psn: u32,
    },
}

impl From<TableOp> for Op {
    /// The engine's table operation on the table's ports (an RTT sample
    /// saturates at 2^32 − 1 ns; the RTL needs no byte count).
    fn from(op: TableOp) -> Self {
        match op {
            TableOp::Init { entropy } => Op::Init { entropy },
            TableOp::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => Op::Send {
                conn_psn,
                len,
                probe,
                retx,
            },
            TableOp::Ack { path_cum, sack } => Op::Ack { path_cum, sack },
            TableOp::Feedback {
                rtt_ns,
                ce_count,
                acked,
            } => Op::Feedback {
                rtt_ns: rtt_ns.map(|r| r.min(u64::from(u32::MAX)) as u32),
                ce_count,
                acked,
                bytes: 0,
            },
            TableOp::Timeout { entropy } => Op::Timeout { entropy },
            TableOp::Move { entropy } => Op::Move { entropy },
            TableOp::Window { bytes } => Op::Window { window: bytes },
            TableOp::Lose { path_psn } => Op::Lose { path_psn },
        }
    }
}

impl From<&Op> for TableOp {
    /// The bench's operation as the engine's (the byte count, which only the
    /// golden model uses, is dropped).
    fn from(op: &Op) -> Self {
        match *op {
            Op::Init { entropy } => TableOp::Init { entropy },
            Op::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => TableOp::Send {
                conn_psn,
                len,
                probe,
                retx,
            },
            Op::Ack { path_cum, sack } => TableOp::Ack { path_cum, sack },
            Op::Feedback {
                rtt_ns,
                ce_count,
                acked,
                ..
            } => TableOp::Feedback {
                rtt_ns: rtt_ns.map(u64::from),
                ce_count,
                acked,
            },
            Op::Timeout { entropy } => TableOp::Timeout { entropy },
            Op::Move { entropy } => TableOp::Move { entropy },
            Op::Window { window } => TableOp::Window { bytes: window },
            Op::Lose { path_psn } => TableOp::Lose { path_psn },
        }
    }
}

/// What one operation returned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpResult {
    /// A send found room (always true for other operations).
    pub ok: bool,
    /// A send's path PSN.
    pub psn: u32,
    /// An ACK's acknowledged packets.
    pub pkts: u32,
    /// An ACK's acknowledged bytes.
    pub bytes: u32,
    /// Fate events, in order.
    pub fates: Vec<SlotFate>,
}

pub use metaroce_driver::hw::tables::SlotState;
