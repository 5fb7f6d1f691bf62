//! The sender's pacing: the peer's receive credit and the rate hint its
//! ACKs carry, and the time the next packet may go under that rate.

/// What the peer's ACKs allow the sender, and when it may send next.
pub(super) struct Pacing {
    /// Receive credit of the newest ACK (conn PSNs past `peer_conn_cum`).
    credit: u32,
    /// Rate hint of the newest ACK, Mbit/s (0: none).
    pub rate_hint_mbps: u32,
    /// The earliest time the next packet may go under the rate hint, ns.
    pub next_send_ns: u64,
}

impl Pacing {
    /// Pacing with `credit` conn PSNs of credit and no rate hint.
    pub fn new(credit: u32) -> Self {
        Pacing {
            credit,
            rate_hint_mbps: 0,
            next_send_ns: 0,
        }
    }

    /// Takes the credit and rate hint of the newest ACK of a path.
    pub fn on_ack(&mut self, credit: u32, rate_hint_mbps: u32) {
        self.credit = credit;
        self.rate_hint_mbps = rate_hint_mbps;
    }

    /// True when the rate hint (if `honor`ed) holds the next packet back at `now`.
    pub fn holds(&self, now: u64, honor: bool) -> bool {
        honor && self.rate_hint_mbps > 0 && now < self.next_send_ns
    }

    /// The conn PSN the peer's receive window ends at: its credit, at most
    /// `recv_window`, past `peer_conn_cum`.
    pub fn window_end(&self, peer_conn_cum: u32, recv_window: u32) -> u32 {
        peer_conn_cum.wrapping_add(self.credit.min(recv_window))
    }

    /// A packet of `len` payload bytes went at `now`: the next one waits
    /// its time at the hinted rate.
    pub fn on_send(&mut self, now: u64, len: u32) {
        if self.rate_hint_mbps > 0 {
            let bytes = u64::from(len) + 100;
            self.next_send_ns =
                self.next_send_ns.max(now) + bytes * 8000 / u64::from(self.rate_hint_mbps);
        }
    }

    /// The pacing deadline, while data waits (`has_data`) and the rate hint
    /// holds it later than the last timer firing (`fired`).
    pub fn deadline(&self, has_data: bool, fired: u64) -> Option<u64> {
        (has_data && self.rate_hint_mbps > 0 && self.next_send_ns > fired)
            .then_some(self.next_send_ns)
    }
}
