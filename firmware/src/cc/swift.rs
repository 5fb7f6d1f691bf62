//! Delay-based AIMD after Swift (Kumar et al., "Swift: Delay is Simple and
//! Effective for Congestion Control in the Datacenter", SIGCOMM 2020): the
//! path's window grows additively while the measured round trip is below a
//! target delay and shrinks multiplicatively, in proportion to how far the
//! delay is above the target, at most once per round trip. The target is a
//! base plus a per-hop allowance plus a flow-scaling term that gives small
//! windows more headroom (so many small flows converge to fairness).
//!
//! Our own code after the paper's description. Differences: windows are in
//! bytes with a floor of one MTU (no sub-packet windows, so no pacing below
//! one packet per RTT); the hop count is a setting (the engine does not see
//! the IP TTL); random loss does not cut the window (the fabric is lossy by
//! design and loss is repaired per packet, as with [`EcnAimd`](super::EcnAimd)),
//! a path timeout does, by the largest decrease factor.

use alloc::boxed::Box;

use super::{AckSample, CcFactory, PathController};

/// Parameters of [`Swift`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwiftParams {
    /// Window after start, bytes.
    pub initial_window: u32,
    /// Smallest window, bytes (at least one MTU is enforced).
    pub min_window: u32,
    /// Largest window, bytes.
    pub max_window: u32,
    /// Base of the target delay, ns: about the fabric's unloaded round trip
    /// plus the queueing the path may build.
    pub base_target_ns: u64,
    /// Target allowance per network hop, ns.
    pub per_hop_ns: u64,
    /// Network hops of a path, one way (a setting: the engine does not see TTLs).
    pub hops: u32,
    /// Largest flow-scaling addition to the target, ns (given to windows of
    /// `fs_min_packets` or less, falling to 0 at `fs_max_packets`).
    pub fs_range_ns: u64,
    /// Window, in MTUs, at and below which flow scaling adds `fs_range_ns`.
    pub fs_min_packets: u32,
    /// Window, in MTUs, at and above which flow scaling adds nothing.
    pub fs_max_packets: u32,
    /// Additive increase per round trip below the target, in MTUs.
    pub increase_packets: u32,
    /// Multiplicative decrease per unit of relative excess delay (Swift's β).
    pub beta: f32,
    /// Largest fraction one decrease takes (Swift's max_mdf).
    pub max_decrease: f32,
}

impl Default for SwiftParams {
    /// Windows as [`EcnAimdParams`](super::EcnAimdParams)'s; a 20 µs base
    /// target plus 1 µs for each of 4 hops (the simulator's leaf-spine round
    /// trip is about 10–14 µs unloaded); flow scaling up to 20 µs between 1
    /// and 64 packets; β = 0.8 and a decrease of at most half, as in the paper.
    fn default() -> Self {
        SwiftParams {
            initial_window: 64 * 1024,
            min_window: 4096,
            max_window: 1024 * 1024,
            base_target_ns: 20_000,
            per_hop_ns: 1_000,
            hops: 4,
            fs_range_ns: 20_000,
            fs_min_packets: 1,
            fs_max_packets: 64,
            increase_packets: 1,
            beta: 0.8,
            max_decrease: 0.5,
        }
    }
}

impl CcFactory for SwiftParams {
    fn build(&self, mtu: u32) -> Box<dyn PathController> {
        Box::new(Swift::new(*self, mtu))
    }
    fn name(&self) -> &str {
        "swift"
    }
}

/// Swift-like delay-based controller for one path.
#[derive(Debug, Clone)]
pub struct Swift {
    p: SwiftParams,
    mtu: u32,
    cwnd: u32,
    /// When the window last shrank (`None`: never).
    last_decrease_ns: Option<u64>,
}

/// `1 / sqrt(bytes / mtu)`: the flow-scaling curve's variable.
fn inv_sqrt_packets(bytes: u64, mtu: u32) -> f32 {
    // sqrt(bytes / mtu) in fixed point with 10 fractional bits.
    let root = ((bytes << 20) / u64::from(mtu.max(1))).isqrt().max(1);
    1024.0 / root as f32
}

impl Swift {
    /// A controller at its initial window.
    pub fn new(p: SwiftParams, mtu: u32) -> Self {
        let mut cc = Swift {
            p,
            mtu,
            cwnd: p.initial_window,
            last_decrease_ns: None,
        };
        cc.cwnd = cc.clamp(u64::from(p.initial_window));
        cc
    }

    fn floor(&self) -> u32 {
        self.p.min_window.max(self.mtu)
    }

    fn clamp(&self, bytes: u64) -> u32 {
        let top = self.p.max_window.max(self.floor());
        bytes.clamp(u64::from(self.floor()), u64::from(top)) as u32
    }

    /// The delay the path aims at with its current window, ns: base, plus
    /// the hops' allowance, plus flow scaling `α/√w + β` clamped to
    /// `0..=fs_range` (`w` in MTUs; α and β put the range between
    /// `fs_min_packets` and `fs_max_packets`).
    pub fn target_ns(&self) -> u64 {
        let fixed = self.p.base_target_ns + self.p.per_hop_ns * u64::from(self.p.hops);
        let mtu = u64::from(self.mtu.max(1));
        let lo = inv_sqrt_packets(u64::from(self.p.fs_max_packets) * mtu, self.mtu);
        let hi = inv_sqrt_packets(u64::from(self.p.fs_min_packets) * mtu, self.mtu);
        if hi <= lo {
            return fixed;
        }
        let range = self.p.fs_range_ns as f32;
        let x = inv_sqrt_packets(u64::from(self.cwnd), self.mtu);
        let fs = (range * (x - lo) / (hi - lo)).clamp(0.0, range);
        fixed + fs as u64
    }

    /// Whether a round trip (`rtt_ns`) has passed since the last decrease.
    fn can_decrease(&self, now_ns: u64, rtt_ns: u64) -> bool {
        self.last_decrease_ns
            .is_none_or(|t| now_ns.saturating_sub(t) >= rtt_ns)
    }

    /// Shrinks the window by `fraction` (capped at `max_decrease`).
    fn decrease(&mut self, now_ns: u64, fraction: f32) {
        let keep = 1.0 - fraction.min(self.p.max_decrease).clamp(0.0, 1.0);
        self.cwnd = self.clamp((self.cwnd as f32 * keep) as u64);
        self.last_decrease_ns = Some(now_ns);
    }
}

impl PathController for Swift {
    fn window(&self) -> u32 {
        self.cwnd
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let delay = ack.rtt_ns.unwrap_or(ack.srtt_ns);
        let target = self.target_ns();
        if delay < target {
            // Additive increase: `increase_packets` MTUs per window of
            // acknowledged bytes, i.e. per round trip.
            let step = u64::from(self.p.increase_packets) * u64::from(self.mtu);
            let inc = (step * u64::from(ack.bytes) / u64::from(self.cwnd.max(1))).max(1);
            self.cwnd = self.clamp(u64::from(self.cwnd) + inc);
        } else if self.can_decrease(ack.now_ns, ack.srtt_ns.max(delay)) {
            let excess = (delay - target) as f32 / delay.max(1) as f32;
            self.decrease(ack.now_ns, self.p.beta * excess);
        }
    }

    fn on_loss(&mut self, _now_ns: u64) {}

    fn on_timeout(&mut self, now_ns: u64) {
        self.decrease(now_ns, self.p.max_decrease);
    }

    fn name(&self) -> &'static str {
        "swift"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u32 = 4096;

    fn ack(now_ns: u64, rtt_ns: u64) -> AckSample {
        AckSample {
            now_ns,
            bytes: MTU,
            acked: 1,
            ce: 0,
            srtt_ns: 10_000,
            rtt_ns: Some(rtt_ns),
        }
    }

    #[test]
    fn grows_one_mtu_per_window_below_the_target() {
        let mut cc = Swift::new(SwiftParams::default(), MTU);
        let start = cc.window();
        assert!(10_000 < cc.target_ns());
        // One window's worth of ACKs below the target: about one MTU more.
        for i in 0..u64::from(start / MTU) {
            cc.on_ack(&ack(i * 100, 10_000));
        }
        let grown = cc.window();
        assert!(grown > start && grown <= start + MTU, "{start} -> {grown}");
    }

    #[test]
    fn shrinks_in_proportion_to_the_excess_at_most_once_per_rtt() {
        let p = SwiftParams::default();
        let mut cc = Swift::new(p, MTU);
        let start = cc.window();
        let target = cc.target_ns();
        // Delay 25 % above the target: cut by β · (d − t) / d, about 0.8 · 0.2.
        let delay = target * 5 / 4;
        cc.on_ack(&ack(1_000, delay));
        let cut = cc.window();
        let excess = (delay - target) as f64 / delay as f64;
        let expected = (f64::from(start) * (1.0 - f64::from(p.beta) * excess)) as u32;
        assert!(cut.abs_diff(expected) <= 2, "{cut} vs {expected}");
        // More ACKs above the target within the same round trip change nothing.
        for i in 1..10 {
            cc.on_ack(&ack(1_000 + i * 1_000, delay));
        }
        assert_eq!(cc.window(), cut);
        // One round trip (the delay) later it may shrink again.
        cc.on_ack(&ack(1_000 + delay, delay));
        assert!(cc.window() < cut);
    }

    #[test]
    fn one_decrease_takes_at_most_max_decrease() {
        let mut cc = Swift::new(SwiftParams::default(), MTU);
        let start = cc.window();
        cc.on_ack(&ack(1_000, 10_000_000));
        assert_eq!(cc.window(), start / 2);
    }

    #[test]
    fn window_stays_between_floor_and_ceiling() {
        let p = SwiftParams {
            max_window: 128 * 1024,
            ..SwiftParams::default()
        };
        let mut cc = Swift::new(p, MTU);
        for i in 0..10_000 {
            cc.on_ack(&ack(i * 100, 1_000));
        }
        assert_eq!(cc.window(), 128 * 1024);
        for i in 0..100 {
            cc.on_ack(&ack(1_000_000 + i * 1_000_000, 900_000));
        }
        assert_eq!(cc.window(), MTU);
        cc.on_timeout(1 << 40);
        assert_eq!(cc.window(), MTU, "a timeout keeps the floor");
        // The floor is at least one MTU even when min_window is smaller.
        let tiny = SwiftParams {
            min_window: 100,
            ..SwiftParams::default()
        };
        let mut cc = Swift::new(tiny, 9000);
        cc.on_timeout(0);
        for i in 1..30 {
            cc.on_ack(&ack(i * 10_000_000, 9_000_000));
        }
        assert_eq!(cc.window(), 9000);
    }

    #[test]
    fn small_windows_get_a_larger_target_and_loss_does_not_cut() {
        let p = SwiftParams::default();
        let mut cc = Swift::new(p, MTU);
        let at_initial = cc.target_ns();
        let fixed = p.base_target_ns + p.per_hop_ns * u64::from(p.hops);
        assert!(at_initial > fixed && at_initial < fixed + p.fs_range_ns);
        for i in 0..20 {
            cc.on_timeout(i);
        }
        assert_eq!(cc.window(), MTU);
        assert_eq!(cc.target_ns(), fixed + p.fs_range_ns);
        let w = cc.window();
        cc.on_loss(5);
        assert_eq!(cc.window(), w, "random loss must not cut the window");
        let big = Swift {
            cwnd: 64 * MTU,
            ..cc.clone()
        };
        assert_eq!(big.target_ns(), fixed);
    }

    #[test]
    fn falls_back_on_the_smoothed_rtt_without_a_sample() {
        let mut cc = Swift::new(SwiftParams::default(), MTU);
        let start = cc.window();
        let sample = AckSample {
            rtt_ns: None,
            srtt_ns: 1_000_000,
            ..ack(1_000, 0)
        };
        cc.on_ack(&sample);
        assert!(cc.window() < start);
    }
}
