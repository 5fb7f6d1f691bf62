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
    /// How far ahead of `next_send_ns` a packet may go, ns: one full
    /// packet's gap per NIC port beyond the first, as of the latest poll.
    burst_ns: u64,
}

impl Pacing {
    /// Pacing with `credit` conn PSNs of credit and no rate hint.
    pub fn new(credit: u32) -> Self {
        Pacing {
            credit,
            rate_hint_mbps: 0,
            next_send_ns: 0,
            burst_ns: 0,
        }
    }

    /// Takes the credit and rate hint of the newest ACK of a path.
    pub fn on_ack(&mut self, credit: u32, rate_hint_mbps: u32) {
        self.credit = credit;
        self.rate_hint_mbps = rate_hint_mbps;
    }

    /// True when the rate hint (if `honor`ed) holds the next packet back at
    /// `now`, on a NIC with `ports` ports and packets of up to `mtu` bytes.
    /// The hinted rate is the NIC's, the sum of its ports, so one packet per
    /// port may start at once: without that allowance the second port of a
    /// burst idles for a packet's gap while the first sends (spec §5.4).
    pub fn holds(&mut self, now: u64, honor: bool, ports: u8, mtu: u32) -> bool {
        self.burst_ns = u64::from(ports.saturating_sub(1)) * self.gap_ns(mtu);
        honor && self.rate_hint_mbps > 0 && now + self.burst_ns < self.next_send_ns
    }

    /// The time a packet of `len` payload bytes takes at the hinted rate, ns
    /// (0 without a hint): 100 bytes stand for its headers.
    fn gap_ns(&self, len: u32) -> u64 {
        match self.rate_hint_mbps {
            0 => 0,
            rate => (u64::from(len) + 100) * 8000 / u64::from(rate),
        }
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
            self.next_send_ns = self.next_send_ns.max(now) + self.gap_ns(len);
        }
    }

    /// The pacing deadline (the burst allowance of the latest poll taken
    /// off), while data waits (`has_data`) and the rate hint holds it later
    /// than the last timer firing (`fired`).
    pub fn deadline(&self, has_data: bool, fired: u64) -> Option<u64> {
        let due = self.next_send_ns.saturating_sub(self.burst_ns);
        (has_data && self.rate_hint_mbps > 0 && due > fired).then_some(due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_packet_per_port_may_start_at_once() {
        let mut pacing = Pacing::new(64);
        pacing.on_ack(64, 200_000);
        // One port: the second packet waits its gap, (4096 + 100) · 8 bits
        // at 200 Gbit/s.
        pacing.on_send(1_000, 4096);
        assert!(pacing.holds(1_000, true, 1, 4096));
        assert_eq!(pacing.deadline(true, 0), Some(1_000 + 167));
        // Two ports: the second packet starts with the first, the third
        // waits until the pair's first gap has passed.
        assert!(!pacing.holds(1_000, true, 2, 4096));
        assert_eq!(pacing.deadline(true, 0), Some(1_000));
        pacing.on_send(1_000, 4096);
        assert!(pacing.holds(1_000, true, 2, 4096));
        assert!(!pacing.holds(1_000 + 167, true, 2, 4096));
        // Not honoured, or no hint: nothing is held.
        assert!(!pacing.holds(1_000, false, 2, 4096));
        assert!(!Pacing::new(64).holds(0, true, 2, 4096));
    }
}
