//! The sender half of a connection: work requests become messages, messages
//! become packets sprayed over paths; ACKs and NACKs drive loss recovery and
//! completions.
//!
//! [`Tx`] (here: its state, set-up, accessors, and what a resolved
//! transmission means for its conn PSN) ties together one part per concern:
//! the message store ([`store`]), the conn-PSN records and loss queues
//! ([`records`]), the path set ([`paths`]), pacing ([`pacing`]) and the
//! connection timer and send times ([`timers`]). Its work is split the same
//! way: what to send next ([`transmit`]), what comes back (ACKs, NACKs, the
//! NIC's table results: [`feedback`]), RACK ([`rack`]), and its deadlines and
//! timeouts ([`deadlines`]).

mod deadlines;
mod feedback;
mod pacing;
mod parity;
mod paths;
mod rack;
mod records;
mod store;
mod timers;
mod transmit;

use alloc::vec;
use alloc::vec::Vec;

use crate::config::QpConfig;
use crate::counters::Stats;
use crate::path::{SLOT_BYTES, SlotFate};
use crate::verbs::{Completion, SendWr, VerbsError, WcStatus};

use pacing::Pacing;
pub(crate) use parity::MAX_PARITY_GROUP;
use parity::ParityQueue;
pub(crate) use paths::PathSet;
use records::{LossQueues, RecState, Record, Records};
pub(crate) use store::{MsgStore, TxStream};
use timers::Timers;

/// A packet the sender decided to send; the QP turns it into bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DataPlan {
    pub msg: u32,
    pub conn_psn: u32,
    pub path: u16,
    pub path_psn: u32,
    pub entropy: u16,
    pub offset: u32,
    pub len: u32,
    pub first: bool,
    pub last: bool,
    pub retransmission: bool,
    /// 0: a data packet. Otherwise a PARITY over this many packets from
    /// `conn_psn` and `offset` on, each `len` bytes (the message's last one
    /// maybe shorter; spec §3.12).
    pub parity: u16,
}

/// A probe the sender decided to send.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProbePlan {
    pub path: u16,
    pub path_psn: u32,
    pub entropy: u16,
}

/// Retry limits set at RTS.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub timeout_ns: u64,
}

/// The sender half.
pub(crate) struct Tx {
    cfg: QpConfig,
    mtu: u32,
    policy: RetryPolicy,
    /// The paths.
    pub paths: PathSet,
    /// The messages and their queues.
    store: MsgStore,
    /// The conn PSN space.
    psns: Records,
    /// What waits to be sent again.
    loss: LossQueues,
    /// PARITY packets waiting to be sent.
    parity: ParityQueue,
    pacing: Pacing,
    timers: Timers,
    /// Set when the connection must fail with this status.
    pub fatal: Option<WcStatus>,
    /// The send side has its first PSN ([`Tx::start`]): at RTS, or in RTR when the QP
    /// executed a READ (spec §9.1).
    started: bool,
    /// The paths' table entries are in the NIC (the hardware data path).
    hardware_table: bool,
    /// Fates of the ACK being applied (kept to reuse its allocation).
    fate_buf: Vec<SlotFate>,
    /// Per path: `rx_count` of the newest ACK applied.
    ack_rx_count: Vec<u32>,
}

/// What resolved a transmission, for the loss counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FateOrigin {
    /// An ACK (its SACK gap).
    Ack,
    /// RACK's time-based detection.
    Rack,
    /// The path's retransmission timeout.
    Timeout,
}

impl Tx {
    /// A sender whose paths' table entries are in the engine, or in the NIC
    /// when `hardware_table`.
    pub fn new(cfg: QpConfig, mtu: u32, seed: u64, hardware_table: bool) -> Self {
        Tx {
            mtu,
            policy: RetryPolicy {
                retry_cnt: 7,
                rnr_retry: 7,
                timeout_ns: 4_000_000,
            },
            paths: PathSet::new(&cfg, mtu, seed, hardware_table),
            store: MsgStore::default(),
            psns: Records::default(),
            loss: LossQueues::default(),
            parity: ParityQueue::default(),
            pacing: Pacing::new(cfg.recv_window),
            timers: Timers::default(),
            fatal: None,
            started: false,
            hardware_table,
            fate_buf: Vec::new(),
            ack_rx_count: vec![0; usize::from(cfg.paths)],
            cfg,
        }
    }

    /// The connection's configuration.
    pub fn cfg(&self) -> &QpConfig {
        &self.cfg
    }

    /// The MTU the sender cuts messages into.
    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// Sets the first PSN: at RTS, or in RTR when the QP answers its first READ with
    /// the requester's `resp_psn` (spec §9.1). Only the first call counts.
    pub fn start(&mut self, initial_psn: u32) {
        if self.started {
            return;
        }
        self.started = true;
        self.psns.start(initial_psn);
    }

    /// True once the send side has its first PSN ([`Tx::start`]).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Sets the retry limits (RTS).
    pub fn set_policy(&mut self, policy: RetryPolicy) {
        self.policy = policy;
    }

    /// Queues a work request of `len` bytes (already checked against the MR table).
    pub fn post(&mut self, wr: &SendWr, len: u32) -> Result<u32, VerbsError> {
        self.store.post(&self.cfg, wr, len)
    }

    /// The messages: the QP reads and places through it, and queues
    /// responses and completes READs on it.
    pub fn messages(&self) -> &MsgStore {
        &self.store
    }

    /// The messages, to change.
    pub fn messages_mut(&mut self) -> &mut MsgStore {
        &mut self.store
    }

    /// True when data or retransmissions wait to go out.
    pub fn has_data(&self) -> bool {
        !self.loss.retx.is_empty() || self.next_to_cut().is_some()
    }

    /// The message whose next packet goes out next ([`MsgStore::next_to_cut`]).
    fn next_to_cut(&self) -> Option<u32> {
        self.store.next_to_cut(self.cfg.max_rd_atomic)
    }

    fn rto(&self, path: usize) -> u64 {
        self.paths[path].rto(self.cfg.rto_min_ns, self.cfg.rto_initial_ns)
    }

    /// The longest a peer with this connection's settings waits before it resends
    /// something unacknowledged: its connection timeout (the Verbs `timeout`), or a
    /// path's retransmission timeout when that is longer. The peer's paths run over
    /// the same network as ours, so our own estimates stand in for its.
    pub fn retransmit_period(&self) -> u64 {
        (0..self.paths.len())
            .map(|p| self.rto(p))
            .fold(self.policy.timeout_ns, u64::max)
    }

    /// The next conn PSN to be sent.
    pub fn next_psn(&self) -> u32 {
        self.psns.next_psn
    }

    /// The peer's cumulative acceptance point.
    pub fn peer_conn_cum(&self) -> u32 {
        self.psns.peer_conn_cum
    }

    /// Applies the fates of transmissions on `path` to their connection
    /// PSNs: an acknowledged one is delivered, a lost one is queued for
    /// retransmission (if its latest transmission is this one). Returns
    /// true when something was delivered.
    fn apply_fates(
        &mut self,
        path: usize,
        origin: FateOrigin,
        fates: &[SlotFate],
        stats: &mut Stats,
    ) -> bool {
        let mut progressed = false;
        for &fate in fates {
            match fate {
                SlotFate::Lost { conn_psn } => {
                    if self.psns.mark_lost(conn_psn, path) {
                        self.loss.retx.push_back(conn_psn);
                        match origin {
                            FateOrigin::Ack => stats.sack_losses += 1,
                            FateOrigin::Rack => stats.rack_losses += 1,
                            FateOrigin::Timeout => stats.timeout_losses += 1,
                        }
                    }
                }
                SlotFate::Acked { conn_psn } => {
                    if let Some(rec) = self.psns.get_mut(conn_psn)
                        && matches!(rec.state, RecState::InFlight | RecState::Lost)
                    {
                        rec.state = RecState::Delivered;
                        progressed = true;
                    }
                }
            }
        }
        progressed
    }

    /// Fails the connection: the message with an error keeps it, every other
    /// outstanding work request completes with WR_FLUSH_ERR.
    pub fn flush(&mut self, qpn: u32, out: &mut impl FnMut(Completion)) {
        self.store.flush(qpn, out);
        self.psns.clear();
        self.loss.clear();
        self.clear_parity();
        self.timers.stop();
    }

    /// Bytes of sender state per packet in flight (records + path slots).
    pub fn state_bytes(&self) -> usize {
        self.psns.len() * size_of::<Record>()
            + self
                .paths
                .iter()
                .map(|p| p.slots_len() * SLOT_BYTES)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_packet_sender_state_fits_the_budget() {
        // Brief: at most 32 bytes per packet in flight; no payload copies.
        let per_packet = size_of::<Record>() + SLOT_BYTES;
        assert!(per_packet <= 32, "{per_packet} bytes");
    }
}
