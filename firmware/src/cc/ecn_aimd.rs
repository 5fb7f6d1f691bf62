//! ECN AIMD in the style of DCTCP: the window shrinks in proportion to the
//! fraction of CE-marked packets, once per round trip, and grows by one MTU per
//! round trip otherwise. Random loss does not shrink it (the fabric is lossy by
//! design); a timeout resets it.

use alloc::boxed::Box;

use super::{AckSample, CcFactory, PathController};

/// Parameters of [`EcnAimd`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EcnAimdParams {
    /// Window after start and after a timeout, bytes.
    pub initial_window: u32,
    /// Smallest window, bytes (at least one MTU is enforced).
    pub min_window: u32,
    /// Largest window, bytes.
    pub max_window: u32,
    /// EWMA gain of the marked fraction (DCTCP's g), as 1/`gain_shift` power of two.
    pub gain_shift: u32,
}

impl Default for EcnAimdParams {
    fn default() -> Self {
        EcnAimdParams {
            initial_window: 64 * 1024,
            min_window: 4096,
            max_window: 1024 * 1024,
            gain_shift: 4,
        }
    }
}

impl CcFactory for EcnAimdParams {
    fn build(&self, mtu: u32) -> Box<dyn PathController> {
        Box::new(EcnAimd::new(*self, mtu))
    }
    fn name(&self) -> &str {
        "ecn-aimd"
    }
}

/// DCTCP-like controller for one path.
#[derive(Debug, Clone)]
pub struct EcnAimd {
    p: EcnAimdParams,
    mtu: u32,
    cwnd: u32,
    /// Marked fraction EWMA, scaled by 2^16.
    alpha: u32,
    round_acked: u32,
    round_marked: u32,
    round_end_ns: u64,
}

impl EcnAimd {
    /// A controller at its initial window.
    pub fn new(p: EcnAimdParams, mtu: u32) -> Self {
        EcnAimd {
            p,
            mtu,
            cwnd: p.initial_window,
            alpha: 0,
            round_acked: 0,
            round_marked: 0,
            round_end_ns: 0,
        }
    }

    fn floor(&self) -> u32 {
        self.p.min_window.max(self.mtu)
    }
}

impl PathController for EcnAimd {
    fn window(&self) -> u32 {
        self.cwnd
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let AckSample {
            now_ns,
            bytes,
            acked,
            ce,
            srtt_ns,
            ..
        } = *ack;
        self.round_acked += acked;
        self.round_marked += ce.min(acked);
        if ce == 0 {
            // Additive increase: one MTU per window's worth of acknowledged bytes.
            let inc = (u64::from(self.mtu) * u64::from(bytes) / u64::from(self.cwnd.max(1))) as u32;
            self.cwnd = (self.cwnd + inc.max(1)).min(self.p.max_window);
        }
        if now_ns >= self.round_end_ns && self.round_acked > 0 {
            let frac = (u64::from(self.round_marked) << 16) / u64::from(self.round_acked);
            let g = self.p.gain_shift;
            self.alpha = ((u64::from(self.alpha) * ((1 << g) - 1) + frac) >> g) as u32;
            if self.round_marked > 0 {
                let cut = ((u64::from(self.cwnd) * u64::from(self.alpha)) >> 17) as u32;
                self.cwnd = (self.cwnd - cut.min(self.cwnd)).max(self.floor());
            }
            self.round_acked = 0;
            self.round_marked = 0;
            self.round_end_ns = now_ns + srtt_ns.max(1);
        }
    }

    fn on_loss(&mut self, _now_ns: u64) {}

    fn on_timeout(&mut self, _now_ns: u64) {
        self.cwnd = self.p.initial_window.max(self.floor());
        self.round_acked = 0;
        self.round_marked = 0;
    }

    fn name(&self) -> &'static str {
        "ecn-aimd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now_ns: u64, ce: u32) -> AckSample {
        AckSample {
            now_ns,
            bytes: 4096,
            acked: 1,
            ce,
            srtt_ns: 10_000,
            rtt_ns: None,
        }
    }

    #[test]
    fn grows_without_marks_and_shrinks_with_them() {
        let mut cc = EcnAimd::new(EcnAimdParams::default(), 4096);
        let start = cc.window();
        for i in 0..64 {
            cc.on_ack(&ack(i * 1000, 0));
        }
        let grown = cc.window();
        assert!(grown > start);
        for i in 0..400 {
            cc.on_ack(&ack(100_000 + i * 1000, 1));
        }
        assert!(
            cc.window() < grown / 2,
            "window {} vs {}",
            cc.window(),
            grown
        );
        assert!(cc.window() >= 4096);
        cc.on_loss(0);
        let w = cc.window();
        cc.on_loss(1);
        assert_eq!(cc.window(), w, "random loss must not cut the window");
        cc.on_timeout(2);
        assert_eq!(cc.window(), EcnAimdParams::default().initial_window);
    }
}
