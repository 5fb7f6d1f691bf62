//! The table part of a path ([`PathEntry`]): the state only [`TableOp`]s change,
//! held by the engine on the software data path and by the NIC's TX table on
//! the hardware one; and the types that cross that seam.

use alloc::collections::VecDeque;

use metaroce_proto::{SACK_BITS, Sack};

use crate::rtt::RttEstimator;

/// One transmission in the table's ring, waiting for its fate.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// Connection PSN carried (unused for probes).
    pub(super) conn_psn: u32,
    /// The firmware's column: the send time (low 32 bits of ns; ages are
    /// taken modulo 2^32), kept here when the engine holds the table. A
    /// NIC's table has no such column: the firmware keeps it beside it.
    pub(super) sent_ns: u32,
    /// Payload bytes.
    len: u16,
    /// Still unresolved (neither acknowledged nor declared lost).
    live: bool,
    /// A PROBE rather than data.
    pub(super) probe: bool,
}

/// Bytes of path state per transmission in flight, the table holding the
/// send times (the software data path).
pub(crate) const SLOT_BYTES: usize = size_of::<Slot>();

/// Health of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathHealth {
    /// Carrying traffic.
    Active,
    /// Timed out; only probes are sent until one is acknowledged.
    Quarantined {
        /// When the next probe is due.
        probe_due_ns: u64,
        /// Current probe timeout multiplier.
        backoff: u32,
    },
}

/// Per-path statistics, readable by users through the extension API.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathStats {
    /// Current entropy value (UDP source port).
    pub entropy: u16,
    /// Packets sent (first transmissions and retransmissions).
    pub sent: u64,
    /// Retransmissions and tail copies sent on this path (every second
    /// transmission of a connection PSN).
    pub retransmitted: u64,
    /// Packets acknowledged.
    pub acked: u64,
    /// Packets declared lost on this path.
    pub lost: u64,
    /// CE marks echoed for this path.
    pub ce_marked: u64,
    /// Times this path moved to a new entropy value.
    pub repaths: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Smoothed RTT, ns (0 before a sample).
    pub srtt_ns: u64,
    /// Congestion window, bytes.
    pub window: u32,
    /// Bytes in flight.
    pub inflight_bytes: u32,
    /// CE fraction EWMA.
    pub ecn_fraction: f32,
    /// Loss fraction EWMA.
    pub loss_fraction: f32,
    /// True while quarantined.
    pub quarantined: bool,
}

/// What an ACK told about one transmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotFate {
    /// Data acknowledged.
    Acked {
        /// Connection PSN.
        conn_psn: u32,
    },
    /// Data lost (a later PSN on the same path arrived).
    Lost {
        /// Connection PSN.
        conn_psn: u32,
    },
}

/// An operation on a path's table entry: the operations of the NIC's TX
/// table (`docs/hardware.md` §12), which [`PathEntry::apply`] performs in
/// software.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOp {
    /// A fresh entry with this entropy and a window of 0.
    Init {
        /// Entropy value (UDP source port).
        entropy: u16,
    },
    /// A data transmission or a PROBE takes the next path PSN.
    Send {
        /// Connection PSN (data).
        conn_psn: u32,
        /// Payload bytes (data).
        len: u16,
        /// A PROBE rather than data.
        probe: bool,
        /// A retransmission or a tail copy (data).
        retx: bool,
    },
    /// An ACK's cumulative path PSN and SACK bitmap.
    Ack {
        /// Cumulative path PSN.
        path_cum: u32,
        /// Bitmap above it.
        sack: Sack,
    },
    /// An ACK's RTT sample, cumulative CE count and acknowledged packets.
    Feedback {
        /// RTT sample, ns.
        rtt_ns: Option<u64>,
        /// The ACK's cumulative CE count.
        ce_count: u32,
        /// Data packets the ACK acknowledged.
        acked: u32,
    },
    /// The path timed out: every unresolved transmission is lost, the path
    /// is quarantined and moves to `entropy`.
    Timeout {
        /// New entropy value.
        entropy: u16,
    },
    /// The path moves to `entropy` and forgets its route's estimates.
    Move {
        /// New entropy value.
        entropy: u16,
    },
    /// The congestion controller's window.
    Window {
        /// Window, bytes.
        bytes: u32,
    },
    /// The firmware's RACK found this transmission lost.
    Lose {
        /// Path PSN.
        path_psn: u32,
    },
}

/// What a [`TableOp`] returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableOutcome {
    /// `Send`: the ring had room.
    pub ok: bool,
    /// `Send`: the path PSN assigned.
    pub psn: u32,
    /// `Ack`: data packets acknowledged.
    pub pkts: u32,
    /// `Ack`: data bytes acknowledged.
    pub bytes: u32,
}

/// A path's table entry as its read port shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathView {
    /// Entropy value (UDP source port).
    pub entropy: u16,
    /// Next path PSN.
    pub next_psn: u32,
    /// Oldest unresolved path PSN (`next_psn` when none).
    pub una: u32,
    /// Data bytes in flight.
    pub inflight: u32,
    /// Window, bytes.
    pub window: u32,
    /// RTT estimate.
    pub rtt: RttEstimator,
    /// CE fraction EWMA, 16.16.
    pub ecn_ewma: u32,
    /// Loss fraction EWMA, 16.16.
    pub loss_ewma: u32,
    /// Packets acknowledged since the last move.
    pub samples: u32,
    /// Quarantined (only probes go until one is acknowledged).
    pub quarantined: bool,
    /// Probe backoff multiplier while quarantined: 1, 2, 4 or 8 (0 while Active).
    pub backoff: u8,
    /// Packets sent.
    pub sent: u64,
    /// Retransmissions and tail copies sent.
    pub retransmitted: u64,
    /// Packets acknowledged.
    pub acked: u64,
    /// Packets declared lost.
    pub lost: u64,
    /// CE marks echoed.
    pub ce_marked: u64,
    /// Moves to a new entropy value.
    pub repaths: u64,
    /// Timeouts.
    pub timeouts: u64,
}

impl PathView {
    /// True when an Active path can take a packet of `len` bytes now: its
    /// window has room (an empty path always takes one) and the 256-PSN
    /// receive window is not exhausted.
    pub fn can_send(&self, len: u32) -> bool {
        !self.quarantined
            && self.next_psn.wrapping_sub(self.una) < SACK_BITS
            && (self.inflight == 0 || self.inflight + len <= self.window)
    }

    /// Some transmission is unresolved. (The ring's front entry is always
    /// unresolved: resolved ones at the front are popped at once.)
    pub fn unresolved(&self) -> bool {
        self.una != self.next_psn
    }

    /// Spec §5.5 step 0, the path part: `None` when an ACK reporting
    /// `path_cum` and `sack` cannot be true, given `rx_step`, its
    /// `rx_count` minus that of the newest ACK applied on the path: its
    /// highest reported path PSN was never sent (at or after `next_psn`,
    /// not before `una`), or, as the newest ACK (`rx_step` below 2^31), it
    /// counts more new CE marks than new packets. Otherwise the `ce_count`
    /// to apply: the ACK's, or for an ACK that is not the newest the last
    /// one applied (no new marks).
    pub fn ack_evidence(
        &self,
        path_cum: u32,
        sack: &Sack,
        ce_count: u32,
        rx_step: u32,
    ) -> Option<u32> {
        let highest = match sack.highest() {
            Some(b) => path_cum.wrapping_add(1 + b),
            None => path_cum.wrapping_sub(1),
        };
        let ahead = highest.wrapping_sub(self.una);
        if ahead < 1 << 31 && ahead >= self.next_psn.wrapping_sub(self.una) {
            return None;
        }
        // The table's `ce_marked` sums the steps applied from 0: the last
        // `ce_count` applied, modulo 2^32.
        let last_ce = self.ce_marked as u32;
        let ce_step = ce_count.wrapping_sub(last_ce);
        if rx_step >= 1 << 31 {
            Some(last_ce)
        } else if ce_step > rx_step && ce_step < 1 << 31 {
            None
        } else {
            Some(ce_count)
        }
    }

    /// Spec §5.5 step 2: the RTT sample of an ACK echoing `echo_ts` at
    /// `now`, taken only when it acknowledged something new (`new`: a data
    /// packet, or the PROBE that ended a quarantine).
    pub fn ack_rtt(now: u64, echo_ts: u64, new: bool) -> Option<u64> {
        now.checked_sub(echo_ts).filter(|_| echo_ts > 0 && new)
    }

    /// True when the path's CE or loss fraction has stayed above the limits.
    pub fn wants_repath(&self, ecn_limit: f32, loss_limit: f32) -> bool {
        self.samples >= 8
            && (self.ecn_fraction() > ecn_limit || fraction(self.loss_ewma) > loss_limit)
    }

    /// Fraction of acknowledged packets that carried a CE mark (EWMA).
    pub fn ecn_fraction(&self) -> f32 {
        fraction(self.ecn_ewma)
    }

    /// True when the path's CE fraction (EWMA) is above 1/64: its route has
    /// a queue that comes and goes, so its round trips vary, and RACK
    /// gives it the longer wait (spec §5.5 step 6).
    pub fn marked(&self) -> bool {
        self.ecn_ewma > ONE / 64
    }
}

/// A path's table entry held by the engine (the software data path's TX
/// table).
#[derive(Debug, Clone)]
pub struct PathEntry {
    v: PathView,
    slots: VecDeque<Slot>,
    last_ce_count: u32,
    /// The firmware's column: the path's delivery rate, kept here when the
    /// engine holds the table (a NIC's table has no such column).
    pub(super) delivery: super::Delivery,
}

const ONE: u32 = 1 << 16;

impl PathEntry {
    /// A fresh entry (`TableOp::Init`).
    pub fn new(entropy: u16) -> Self {
        PathEntry {
            v: PathView {
                entropy,
                ..PathView::default()
            },
            slots: VecDeque::new(),
            last_ce_count: 0,
            delivery: super::Delivery::default(),
        }
    }

    /// The entry as the read port shows it.
    pub fn view(&self) -> &PathView {
        &self.v
    }

    /// Transmissions in the ring (unresolved ones and resolved ones behind them).
    pub fn slots_len(&self) -> usize {
        self.slots.len()
    }

    /// Performs `op`, reporting each data transmission it resolves to
    /// `fate` in PSN order.
    pub fn apply(&mut self, op: &TableOp, mut fate: impl FnMut(SlotFate)) -> TableOutcome {
        let mut out = TableOutcome {
            ok: true,
            ..TableOutcome::default()
        };
        match *op {
            TableOp::Init { entropy } => *self = PathEntry::new(entropy),
            TableOp::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => {
                self.slots.push_back(Slot {
                    conn_psn,
                    sent_ns: 0,
                    len,
                    live: true,
                    probe,
                });
                out.psn = self.v.next_psn;
                self.v.next_psn = self.v.next_psn.wrapping_add(1);
                if !probe {
                    self.v.inflight += u32::from(len);
                    self.v.sent += 1;
                    self.v.retransmitted += u64::from(retx);
                }
            }
            TableOp::Ack { path_cum, sack } => {
                (out.pkts, out.bytes) = self.ack(path_cum, &sack, fate)
            }
            TableOp::Feedback {
                rtt_ns,
                ce_count,
                acked,
            } => self.feedback(rtt_ns, ce_count, acked),
            TableOp::Timeout { entropy } => {
                for slot in self.slots.iter_mut().filter(|s| s.live) {
                    slot.live = false;
                    if !slot.probe {
                        self.v.inflight -= u32::from(slot.len);
                        self.v.lost += 1;
                        fate(SlotFate::Lost {
                            conn_psn: slot.conn_psn,
                        });
                    }
                }
                self.pop_resolved();
                self.v.timeouts += 1;
                self.v.backoff = if self.v.quarantined {
                    (self.v.backoff * 2).min(8)
                } else {
                    1
                };
                self.v.quarantined = true;
                self.move_to(entropy);
            }
            TableOp::Move { entropy } => self.move_to(entropy),
            TableOp::Window { bytes } => self.v.window = bytes,
            TableOp::Lose { path_psn } => {
                let i = path_psn.wrapping_sub(self.v.una) as usize;
                if let Some(slot) = self.slots.get_mut(i).filter(|s| s.live && !s.probe) {
                    slot.live = false;
                    self.v.inflight -= u32::from(slot.len);
                    self.v.lost += 1;
                    self.v.loss_ewma = ewma(self.v.loss_ewma, ONE);
                    fate(SlotFate::Lost {
                        conn_psn: slot.conn_psn,
                    });
                    self.pop_resolved();
                }
            }
        }
        out
    }

    /// `TableOp::Ack`: returns (acked packets, acked bytes).
    fn ack(&mut self, path_cum: u32, sack: &Sack, mut fate: impl FnMut(SlotFate)) -> (u32, u32) {
        let is_acked = |psn: u32| {
            let d = psn.wrapping_sub(path_cum);
            d >= 1 << 31 || (d >= 1 && sack.get(d - 1))
        };
        let highest = match sack.highest() {
            Some(h) => path_cum.wrapping_add(h + 1),
            None => path_cum.wrapping_sub(1),
        };
        let (mut pkts, mut bytes) = (0, 0);
        let mut probe_acked = false;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let psn = self.v.una.wrapping_add(i as u32);
            if psn.wrapping_sub(highest) < 1 << 31 && psn != highest {
                break; // beyond everything this ACK knows about
            }
            if !slot.live {
                continue;
            }
            if is_acked(psn) {
                slot.live = false;
                if slot.probe {
                    probe_acked = true;
                } else {
                    self.v.inflight -= u32::from(slot.len);
                    pkts += 1;
                    bytes += u32::from(slot.len);
                    fate(SlotFate::Acked {
                        conn_psn: slot.conn_psn,
                    });
                }
            } else if psn != highest {
                // A later PSN on this in-order path arrived: this one is lost.
                slot.live = false;
                if !slot.probe {
                    self.v.inflight -= u32::from(slot.len);
                    self.v.lost += 1;
                    self.v.loss_ewma = ewma(self.v.loss_ewma, ONE);
                    fate(SlotFate::Lost {
                        conn_psn: slot.conn_psn,
                    });
                }
            }
        }
        if probe_acked {
            self.v.quarantined = false;
            self.v.backoff = 0;
        }
        self.v.acked += u64::from(pkts);
        for _ in 0..pkts {
            self.v.loss_ewma = ewma(self.v.loss_ewma, 0);
        }
        self.pop_resolved();
        (pkts, bytes)
    }

    /// `TableOp::Feedback`.
    fn feedback(&mut self, rtt_ns: Option<u64>, ce_count: u32, acked: u32) {
        if let Some(rtt) = rtt_ns {
            self.v.rtt.update(rtt);
        }
        let new_ce = ce_count.wrapping_sub(self.last_ce_count);
        let new_ce = if new_ce < 1 << 31 {
            self.last_ce_count = ce_count;
            new_ce
        } else {
            0
        };
        self.v.ce_marked += u64::from(new_ce);
        if acked > 0 {
            let frac = (u64::from(new_ce.min(acked)) << 16) / u64::from(acked);
            self.v.ecn_ewma = ewma(self.v.ecn_ewma, frac as u32);
            self.v.samples += acked;
        }
    }

    fn move_to(&mut self, entropy: u16) {
        self.v.entropy = entropy;
        self.v.ecn_ewma = 0;
        self.v.loss_ewma = 0;
        self.v.samples = 0;
        self.v.repaths += 1;
    }

    /// The transmission with path PSN `psn`, while the ring holds it.
    pub(super) fn slot(&self, psn: u32) -> Option<&Slot> {
        let i = psn.wrapping_sub(self.v.una);
        self.slots.get(i as usize).filter(|_| i < 1 << 31)
    }

    /// Records the newest transmission's send time (low 32 bits, ns): the
    /// firmware's column, kept in the ring when the engine holds the table.
    pub(super) fn stamp_newest(&mut self, sent_ns: u32) {
        if let Some(slot) = self.slots.back_mut() {
            slot.sent_ns = sent_ns;
        }
    }

    fn pop_resolved(&mut self) {
        while self.slots.front().is_some_and(|s| !s.live) {
            self.slots.pop_front();
            self.v.una = self.v.una.wrapping_add(1);
        }
    }
}

/// One step of a 1/16-weight EWMA.
fn ewma(old: u32, sample: u32) -> u32 {
    old - (old >> 4) + (sample >> 4)
}

/// A 16.16 fixed-point fraction (`ONE` = 1.0) as a float.
pub(super) fn fraction(v: u32) -> f32 {
    v as f32 / ONE as f32
}
