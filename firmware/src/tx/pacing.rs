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
    /// `now`, on a NIC with `ports` ports and `line_rate_mbps` in all, for
    /// packets of up to `mtu` bytes. The hint can be the NIC's whole rate,
    /// the sum of its ports, so a packet may go as early as the NIC at that
    /// rate takes to start one packet on each of its other ports: without
    /// that allowance the second port of a burst idles for a packet's gap
    /// while the first sends (spec §5.4). A connection paced to a share of
    /// the NIC gains only that much time, not a burst at its own pace.
    pub fn holds(
        &mut self,
        now: u64,
        honor: bool,
        ports: u8,
        mtu: u32,
        line_rate_mbps: u32,
    ) -> bool {
        let rate = self.rate_hint_mbps.max(line_rate_mbps);
        self.burst_ns = u64::from(ports.saturating_sub(1)) * gap_ns(mtu, rate);
        honor && self.rate_hint_mbps > 0 && now + self.burst_ns < self.next_send_ns
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
            self.next_send_ns = self.next_send_ns.max(now) + gap_ns(len, self.rate_hint_mbps);
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

/// The time a packet of `len` payload bytes takes at `rate_mbps`, ns (0 at
/// rate 0): 100 bytes stand for its headers.
fn gap_ns(len: u32, rate_mbps: u32) -> u64 {
    match rate_mbps {
        0 => 0,
        rate => (u64::from(len) + 100) * 8000 / u64::from(rate),
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
        assert!(pacing.holds(1_000, true, 1, 4096, 200_000));
        assert_eq!(pacing.deadline(true, 0), Some(1_000 + 167));
        // Two ports: the second packet starts with the first, the third
        // waits until the pair's first gap has passed.
        assert!(!pacing.holds(1_000, true, 2, 4096, 200_000));
        assert_eq!(pacing.deadline(true, 0), Some(1_000));
        pacing.on_send(1_000, 4096);
        assert!(pacing.holds(1_000, true, 2, 4096, 200_000));
        assert!(!pacing.holds(1_000 + 167, true, 2, 4096, 200_000));
        // Not honoured, or no hint: nothing is held.
        assert!(!pacing.holds(1_000, false, 2, 4096, 200_000));
        assert!(!Pacing::new(64).holds(0, true, 2, 4096, 200_000));
    }

    #[test]
    fn a_share_of_the_nic_gains_the_nics_allowance_only() {
        // A tenth of a 2-port 200 Gbit/s NIC: 1,678 ns per packet, and the
        // second packet may go 167 ns (a packet at the NIC's rate) early.
        let mut pacing = Pacing::new(64);
        pacing.on_ack(64, 20_000);
        pacing.on_send(0, 4096);
        assert!(pacing.holds(1_678 - 168, true, 2, 4096, 200_000));
        assert!(!pacing.holds(1_678 - 167, true, 2, 4096, 200_000));
    }
}
