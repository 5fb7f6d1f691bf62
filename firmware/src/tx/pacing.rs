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
    /// its time at the hinted rate, counted from no earlier than
    /// `allowance_ns` before `now` ([`Pacing::allowance_ns`]).
    pub fn on_send(&mut self, now: u64, len: u32, allowance_ns: u64) {
        if self.rate_hint_mbps > 0 {
            let from = self.next_send_ns.max(now.saturating_sub(allowance_ns));
            self.next_send_ns = from + gap_ns(len, self.rate_hint_mbps);
        }
    }

    /// How far the pacing clock may lag behind the time of a send, ns, on a
    /// NIC with `ports` ports and `line_rate_mbps` in all, for packets of up
    /// to `mtu` bytes: as long as the NIC at the larger of that rate and
    /// the hint takes to start one packet on each of its other ports. The
    /// hint can be the NIC's whole rate, the sum of its ports; without the
    /// allowance the second port of a burst idles for a packet's gap while
    /// the first sends (spec §5.4). A connection paced to a share of the
    /// NIC gains only that much time, not a burst at its own pace.
    pub fn allowance_ns(&self, ports: u8, mtu: u32, line_rate_mbps: u32) -> u64 {
        let rate = self.rate_hint_mbps.max(line_rate_mbps);
        u64::from(ports.saturating_sub(1)) * gap_ns(mtu, rate)
    }

    /// The pacing deadline, while data waits (`has_data`) and the rate hint
    /// holds it later than the last timer firing (`fired`).
    pub fn deadline(&self, has_data: bool, fired: u64) -> Option<u64> {
        (has_data && self.rate_hint_mbps > 0 && self.next_send_ns > fired)
            .then_some(self.next_send_ns)
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

    /// Sends a packet of 4096 bytes at `now` on a 2-port NIC of 200 Gbit/s.
    fn send(pacing: &mut Pacing, now: u64, ports: u8) {
        let allowance = pacing.allowance_ns(ports, 4096, 200_000);
        pacing.on_send(now, 4096, allowance);
    }

    #[test]
    fn one_packet_per_port_may_start_at_once() {
        // One port: the second packet waits its gap, (4096 + 100) · 8 bits
        // at 200 Gbit/s.
        let mut pacing = Pacing::new(64);
        pacing.on_ack(64, 200_000);
        send(&mut pacing, 1_000, 1);
        assert!(pacing.holds(1_000, true));
        assert_eq!(pacing.deadline(true, 0), Some(1_000 + 167));
        // Two ports: the second packet starts with the first, the third
        // waits until the pair's first gap has passed.
        let mut pacing = Pacing::new(64);
        pacing.on_ack(64, 200_000);
        send(&mut pacing, 1_000, 2);
        assert!(!pacing.holds(1_000, true));
        send(&mut pacing, 1_000, 2);
        assert!(pacing.holds(1_000, true));
        assert_eq!(pacing.deadline(true, 0), Some(1_000 + 167));
        // Not honoured, or no hint: nothing is held.
        assert!(!pacing.holds(1_000, false));
        assert!(!Pacing::new(64).holds(0, true));
    }

    #[test]
    fn a_share_of_the_nic_gains_the_nics_allowance_only() {
        // A tenth of a 2-port 200 Gbit/s NIC: 1,678 ns per packet, and the
        // second packet may go 167 ns (a packet at the NIC's rate) early.
        let mut pacing = Pacing::new(64);
        pacing.on_ack(64, 20_000);
        send(&mut pacing, 1_000, 2);
        assert_eq!(pacing.deadline(true, 0), Some(1_000 + 1_678 - 167));
        // The allowance does not accumulate: a sender on time stays on time.
        send(&mut pacing, 1_000 + 1_678 - 167, 2);
        assert_eq!(pacing.deadline(true, 0), Some(1_000 + 2 * 1_678 - 167));
    }
}
