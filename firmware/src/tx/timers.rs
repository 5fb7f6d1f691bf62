//! The sender's clocks: the connection timer with its backoff, and the send
//! times its RACK deadlines and timer queries start from.

/// The connection timer and the send times the sender's deadlines use.
pub(super) struct Timers {
    /// The connection timer's deadline (`u64::MAX`: not running).
    pub conn_rto: u64,
    /// Connection timeouts since the last progress.
    pub conn_backoff: u32,
    /// Time of the last `Tx::on_timeout`: transmit-side deadlines (probe
    /// due, pacing) at or before it are pending work, not timers.
    pub fired_ns: u64,
    /// Send time of the newest packet the peer acknowledged (echoed), ns.
    pub delivered_sent_ns: u64,
    /// Send time of the newest data transmission, ns.
    pub newest_sent_ns: u64,
    /// When the newest ACK reporting new arrivals (on any path) came, ns:
    /// the connection is silent while this is long past (spec §5.7).
    pub heard_ns: u64,
    /// Send time of the newest data transmission after which the sender had
    /// nothing left to send (`u64::MAX`: none yet; see `Tx::rack_head`).
    pub drained_sent_ns: u64,
}

impl Default for Timers {
    fn default() -> Self {
        Timers {
            conn_rto: u64::MAX,
            conn_backoff: 0,
            fired_ns: 0,
            delivered_sent_ns: 0,
            newest_sent_ns: 0,
            heard_ns: 0,
            drained_sent_ns: u64::MAX,
        }
    }
}

impl Timers {
    /// Starts the connection timer at `now` if it is not running, with
    /// `timeout_ns` backed off.
    pub fn arm(&mut self, now: u64, timeout_ns: u64) {
        if self.conn_rto == u64::MAX {
            self.conn_rto = now + (timeout_ns << self.conn_backoff);
        }
    }

    /// Something was delivered: the connection timer starts over, running
    /// only while something is `outstanding`.
    pub fn progressed(&mut self, now: u64, timeout_ns: u64, outstanding: bool) {
        self.conn_backoff = 0;
        self.conn_rto = if outstanding {
            now + timeout_ns
        } else {
            u64::MAX
        };
    }

    /// The connection timer's deadline, if it runs.
    pub fn conn_deadline(&self) -> Option<u64> {
        (self.conn_rto != u64::MAX).then_some(self.conn_rto)
    }

    /// True when the connection timer runs and is due at `now`.
    pub fn conn_due(&self, now: u64) -> bool {
        self.conn_rto != u64::MAX && self.conn_rto <= now
    }

    /// Stops the connection timer.
    pub fn stop(&mut self) {
        self.conn_rto = u64::MAX;
    }
}
