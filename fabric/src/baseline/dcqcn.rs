//! DCQCN reaction point (sender rate control) and the constants of its
//! notification point (CNP pacing), after Zhu et al., "Congestion Control
//! for Large-Scale RDMA Deployments", SIGCOMM 2015. See `docs/baselines.md`.

use crate::time::{SimTime, from_us};

/// DCQCN parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnConfig {
    /// Line rate: the starting and maximum sending rate, bit/s.
    pub line_rate_bps: u64,
    /// Lowest rate a CNP can push the sender to, bit/s.
    pub min_rate_bps: u64,
    /// EWMA gain g of the congestion estimate alpha.
    pub g: f64,
    /// Alpha decays by (1 − g) every `alpha_timer` without a CNP (K).
    pub alpha_timer: SimTime,
    /// Rate increase timer T.
    pub increase_timer: SimTime,
    /// Rate increase byte counter B.
    pub byte_counter: u64,
    /// Fast-recovery stages F before additive increase.
    pub fast_recovery_stages: u32,
    /// Additive increase step R_AI, bit/s.
    pub rate_ai_bps: u64,
    /// Hyper increase step R_HAI, bit/s.
    pub rate_hai_bps: u64,
    /// The receiver sends at most one CNP per QP per `cnp_interval` (N).
    pub cnp_interval: SimTime,
}

impl DcqcnConfig {
    /// The paper's parameters at `line_rate_bps` (see `docs/baselines.md`).
    pub fn paper(line_rate_bps: u64) -> Self {
        Self {
            line_rate_bps,
            min_rate_bps: 10_000_000,
            g: 1.0 / 256.0,
            alpha_timer: from_us(55),
            increase_timer: from_us(55),
            byte_counter: 10_000_000,
            fast_recovery_stages: 5,
            rate_ai_bps: 40_000_000,
            rate_hai_bps: 400_000_000,
            cnp_interval: from_us(50),
        }
    }
}

/// Rate state of one QP.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    config: DcqcnConfig,
    current_rate: f64,
    target_rate: f64,
    alpha: f64,
    timer_stage: u32,
    byte_stage: u32,
    bytes_since_stage: u64,
    next_alpha_update: Option<SimTime>,
    next_increase: Option<SimTime>,
}

impl Dcqcn {
    /// A sender at line rate, not yet congested.
    pub fn new(config: DcqcnConfig) -> Self {
        Self {
            config,
            current_rate: config.line_rate_bps as f64,
            target_rate: config.line_rate_bps as f64,
            alpha: 1.0,
            timer_stage: 0,
            byte_stage: 0,
            bytes_since_stage: 0,
            next_alpha_update: None,
            next_increase: None,
        }
    }

    /// Current sending rate Rc in bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.current_rate as u64
    }

    /// Current congestion estimate alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// A CNP arrived: cut the rate by alpha/2 and restart the increase stages.
    pub fn on_cnp(&mut self, now: SimTime) {
        self.target_rate = self.current_rate;
        self.current_rate =
            (self.current_rate * (1.0 - self.alpha / 2.0)).max(self.config.min_rate_bps as f64);
        self.alpha = (1.0 - self.config.g) * self.alpha + self.config.g;
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes_since_stage = 0;
        self.next_alpha_update = Some(now + self.config.alpha_timer);
        self.next_increase = Some(now + self.config.increase_timer);
    }

    /// `bytes` were sent; may trigger a byte-counter increase stage.
    pub fn on_sent(&mut self, bytes: u64) {
        if self.next_increase.is_none() {
            return;
        }
        self.bytes_since_stage += bytes;
        if self.bytes_since_stage >= self.config.byte_counter {
            self.bytes_since_stage = 0;
            self.byte_stage += 1;
            self.increase();
        }
    }

    /// Earliest pending timer.
    pub fn next_timer(&self) -> Option<SimTime> {
        match (self.next_alpha_update, self.next_increase) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the timers due at `now`.
    pub fn on_timers(&mut self, now: SimTime) {
        if let Some(due) = self.next_alpha_update
            && due <= now
        {
            self.alpha *= 1.0 - self.config.g;
            self.next_alpha_update = Some(now + self.config.alpha_timer);
        }
        if let Some(due) = self.next_increase
            && due <= now
        {
            self.timer_stage += 1;
            self.next_increase = Some(now + self.config.increase_timer);
            self.increase();
        }
    }

    fn increase(&mut self) {
        let line = self.config.line_rate_bps as f64;
        let stages = self.config.fast_recovery_stages;
        let high = self.timer_stage.max(self.byte_stage);
        let low = self.timer_stage.min(self.byte_stage);
        if high < stages {
            // Fast recovery: move halfway back to the target.
        } else if low > stages {
            self.target_rate += f64::from(low - stages) * self.config.rate_hai_bps as f64;
        } else {
            self.target_rate += self.config.rate_ai_bps as f64;
        }
        self.target_rate = self.target_rate.min(line);
        self.current_rate = ((self.target_rate + self.current_rate) / 2.0).min(line);
        if self.current_rate >= line * 0.999_999 {
            // Back at line rate: the rate limiter is released.
            self.current_rate = line;
            self.next_alpha_update = None;
            self.next_increase = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cnp_halves_rate_at_alpha_one_and_recovers() {
        let config = DcqcnConfig::paper(100_000_000_000);
        let mut dcqcn = Dcqcn::new(config);
        dcqcn.on_cnp(0);
        assert_eq!(dcqcn.rate_bps(), 50_000_000_000);
        let mut now = 0;
        for _ in 0..200 {
            now += config.increase_timer;
            dcqcn.on_timers(now);
        }
        assert_eq!(dcqcn.rate_bps(), 100_000_000_000);
        assert_eq!(dcqcn.next_timer(), None);
    }
}
