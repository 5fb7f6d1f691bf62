//! Report rows of a traffic run's counters (per path of the sending QP, per relay
//! path), shared by the `bench` and `demo` reports.

use metaroce_driver::verbs::{QueuePair, Stats};
use metaroce_relay::{PathCounters, RelayHandle};
use serde::Serialize;

/// How NICs found their losses and what they sent again (the engine's [`Stats`],
/// summed), for reports. Flattened into a report, its fields are top-level keys.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct LossRow {
    /// Data packets sent the first time.
    pub data_sent: u64,
    /// Retransmissions sent.
    pub retransmits: u64,
    /// Packets declared lost from a SACK gap.
    pub sack_losses: u64,
    /// Packets declared lost by time-based (RACK) detection.
    pub rack_losses: u64,
    /// Packets declared lost by a path timeout.
    pub timeout_losses: u64,
    /// Packets forced back by the connection timer.
    pub conn_timeout_losses: u64,
    /// PROBEs sent (on quarantined paths).
    pub probes_sent: u64,
    /// Path timeouts that quarantined a path.
    pub quarantines: u64,
    /// Path timer expiries spared because the whole connection was silent
    /// (a PROBE on the same route, nothing declared lost).
    pub spared_expiries: u64,
}

impl LossRow {
    /// The counters of `stats`, summed.
    pub fn sum<'a>(stats: impl IntoIterator<Item = &'a Stats>) -> LossRow {
        stats.into_iter().fold(LossRow::default(), |r, s| LossRow {
            data_sent: r.data_sent + s.data_sent,
            retransmits: r.retransmits + s.retransmits,
            sack_losses: r.sack_losses + s.sack_losses,
            rack_losses: r.rack_losses + s.rack_losses,
            timeout_losses: r.timeout_losses + s.timeout_losses,
            conn_timeout_losses: r.conn_timeout_losses + s.conn_timeout_losses,
            probes_sent: r.probes_sent + s.probes_sent,
            quarantines: r.quarantines + s.quarantines,
            spared_expiries: r.spared_expiries + s.spared_expiries,
        })
    }

    /// One line for a table: the retransmissions and what found the losses.
    pub fn describe(&self) -> String {
        format!(
            "{} (losses found by SACK {}, RACK {}, path timeout {}, connection timer {}; \
             {} path timeouts, {} spared, {} probes)",
            self.retransmits,
            self.sack_losses,
            self.rack_losses,
            self.timeout_losses,
            self.conn_timeout_losses,
            self.quarantines,
            self.spared_expiries,
            self.probes_sent
        )
    }
}

/// Per-path counters of the sending QP, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct PathRow {
    /// Path index.
    pub path: usize,
    /// Current entropy value.
    pub entropy: u16,
    /// Packets sent.
    pub sent: u64,
    /// Retransmissions.
    pub retransmitted: u64,
    /// Packets declared lost.
    pub lost: u64,
    /// CE marks echoed.
    pub ce_marked: u64,
    /// Moves to a new entropy value (steering events).
    pub repaths: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Smoothed RTT, µs.
    pub srtt_us: f64,
}

/// Rows for `qp`'s paths.
pub fn path_rows(qp: &QueuePair) -> Vec<PathRow> {
    qp.path_stats()
        .iter()
        .enumerate()
        .map(|(i, p)| PathRow {
            path: i,
            entropy: p.entropy,
            sent: p.sent,
            retransmitted: p.retransmitted,
            lost: p.lost,
            ce_marked: p.ce_marked,
            repaths: p.repaths,
            timeouts: p.timeouts,
            srtt_us: p.srtt_ns as f64 / 1e3,
        })
        .collect()
}

/// Relay counters of one path, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct RelayRow {
    /// Relay path.
    pub path: usize,
    /// Datagrams forwarded.
    pub forwarded: u64,
    /// Dropped by random loss.
    pub dropped_loss: u64,
    /// Dropped by the queue.
    pub dropped_queue: u64,
    /// CE marks set.
    pub ce_marked: u64,
    /// Dropped for a bad ICRC.
    pub bad_icrc: u64,
}

/// Rows for every relay path.
pub fn relay_rows(relay: &RelayHandle) -> Vec<RelayRow> {
    relay
        .all_counters()
        .iter()
        .enumerate()
        .map(|(i, c): (usize, &PathCounters)| RelayRow {
            path: i,
            forwarded: c.forwarded,
            dropped_loss: c.dropped_loss,
            dropped_queue: c.dropped_queue,
            ce_marked: c.ce_marked,
            bad_icrc: c.bad_icrc,
        })
        .collect()
}
