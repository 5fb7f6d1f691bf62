//! The sender's connection-PSN records: one per conn PSN from its first
//! transmission until the receiver accepts it, and the queues of PSNs to
//! send again (lost, refused for now, or copied at the tail).

use alloc::collections::VecDeque;

/// Where a conn PSN's latest transmission stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RecState {
    /// A transmission is in flight.
    InFlight,
    /// Acknowledged at the path level (may still await acceptance).
    Delivered,
    /// Queued for retransmission.
    Lost,
    /// Refused by the receiver (RNR); retried after a delay.
    RnrWait,
}

/// One connection PSN, from first transmission until the receiver accepts it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Record {
    /// The message's key.
    pub msg: u32,
    /// Byte offset in the message.
    pub offset: u32,
    /// Payload bytes.
    pub len: u32,
    /// The path of its latest transmission.
    pub path: u16,
    /// Its latest transmission's fate.
    pub state: RecState,
}

/// The conn PSN space of the sender: the records between the peer's
/// cumulative acceptance point and the next PSN to send.
#[derive(Default)]
pub(super) struct Records {
    records: VecDeque<Record>,
    /// Connection PSN of `records[0]`.
    rec_base: u32,
    /// The next conn PSN to be sent.
    pub next_psn: u32,
    /// The peer's cumulative acceptance point.
    pub peer_conn_cum: u32,
}

impl Records {
    /// Starts the PSN space at `initial_psn`.
    pub fn start(&mut self, initial_psn: u32) {
        self.next_psn = initial_psn;
        self.rec_base = initial_psn;
        self.peer_conn_cum = initial_psn;
    }

    /// Records a new transmission, which takes the next conn PSN.
    pub fn push(&mut self, rec: Record) -> u32 {
        let psn = self.next_psn;
        self.next_psn = psn.wrapping_add(1);
        self.records.push_back(rec);
        psn
    }

    /// The record of `psn`, if it has one.
    pub fn get(&self, psn: u32) -> Option<&Record> {
        let i = psn.wrapping_sub(self.rec_base);
        self.records.get(i as usize).filter(|_| i < 1 << 31)
    }

    /// The record of `psn`, to change.
    pub fn get_mut(&mut self, psn: u32) -> Option<&mut Record> {
        let i = psn.wrapping_sub(self.rec_base);
        if i >= 1 << 31 {
            return None;
        }
        self.records.get_mut(i as usize)
    }

    /// Marks `conn_psn` lost if its latest transmission is the one on `path`
    /// (an older copy's fate no longer matters); true when it did.
    pub fn mark_lost(&mut self, conn_psn: u32, path: usize) -> bool {
        let Some(rec) = self.get_mut(conn_psn) else {
            return false;
        };
        if rec.state != RecState::InFlight || usize::from(rec.path) != path {
            return false;
        }
        rec.state = RecState::Lost;
        true
    }

    /// Drops the records the receiver accepted (those before `peer_conn_cum`).
    pub fn retire_accepted(&mut self) {
        while self.rec_base != self.peer_conn_cum && self.records.pop_front().is_some() {
            self.rec_base = self.rec_base.wrapping_add(1);
        }
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Forgets every record.
    pub fn clear(&mut self) {
        self.records.clear();
    }
}

/// Tail copies are sent only within this many new packets after the last
/// retransmission (spec §5.6): on a fabric that has lost nothing lately
/// they would only add duplicates.
const TAIL_COPY_MEMORY: u16 = 4096;

/// What waits to be sent again: lost conn PSNs, refused ones waiting out
/// their delay, and the state of the tail copies.
pub(super) struct LossQueues {
    /// Lost conn PSNs, to retransmit in order.
    pub retx: VecDeque<u32>,
    /// Conn PSNs refused (RNR) and when they may go again, in order.
    pub rnr_wait: VecDeque<(u64, u32)>,
    /// Packets the tail copies have walked past since the last new packet
    /// (`Tx::poll_tail_copy`): the next copy considers conn PSN
    /// `next_psn − 1 − copy_walked`.
    pub copy_walked: u16,
    /// New packets sent since the last retransmission (saturating;
    /// `u16::MAX` before the first): tail copies are sent only while it is
    /// below [`TAIL_COPY_MEMORY`].
    pub sent_since_resend: u16,
}

impl Default for LossQueues {
    fn default() -> Self {
        LossQueues {
            retx: VecDeque::new(),
            rnr_wait: VecDeque::new(),
            copy_walked: 0,
            sent_since_resend: u16::MAX,
        }
    }
}

impl LossQueues {
    /// True when a retransmission was sent recently enough for tail copies.
    pub fn copies_wanted(&self) -> bool {
        self.sent_since_resend < TAIL_COPY_MEMORY
    }

    /// Moves every refused PSN whose delay has passed at `now` to the
    /// retransmission queue, if `records` still has it waiting.
    pub fn release_rnr(&mut self, now: u64, records: &mut Records) {
        while self.rnr_wait.front().is_some_and(|&(due, _)| due <= now) {
            let (_, psn) = self.rnr_wait.pop_front().expect("checked");
            if let Some(r) = records.get_mut(psn)
                && r.state == RecState::RnrWait
            {
                r.state = RecState::Lost;
                self.retx.push_back(psn);
            }
        }
    }

    /// Forgets everything queued.
    pub fn clear(&mut self) {
        self.retx.clear();
        self.rnr_wait.clear();
    }
}
