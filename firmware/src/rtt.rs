//! Round-trip-time estimation from echoed timestamps (RFC 6298 smoothing).

/// Smoothed RTT and its variation, in nanoseconds, each in 32 bits as in
/// the NIC's TX table (samples above 2^32 − 1 ns, over 4 s, count as that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RttEstimator {
    srtt: u32,
    rttvar: u32,
    /// A sample was taken.
    sampled: bool,
}

impl RttEstimator {
    /// An estimator in a given state: `srtt` and `rttvar` after at least
    /// one sample when `sampled` (as a NIC's TX table reports it), none
    /// otherwise.
    pub fn from_parts(srtt: u64, rttvar: u64, sampled: bool) -> Self {
        RttEstimator {
            srtt: clamp(srtt),
            rttvar: clamp(rttvar),
            sampled,
        }
    }

    /// Feeds one sample.
    pub fn update(&mut self, sample_ns: u64) {
        let sample = u64::from(clamp(sample_ns));
        let (srtt, rttvar) = (u64::from(self.srtt), u64::from(self.rttvar));
        let (srtt, rttvar) = if self.sampled {
            (
                (7 * srtt + sample) / 8,
                (3 * rttvar + srtt.abs_diff(sample)) / 4,
            )
        } else {
            (sample, sample / 2)
        };
        // Means of values below 2^32 stay below it.
        (self.srtt, self.rttvar) = (clamp(srtt), clamp(rttvar));
        self.sampled = true;
    }

    /// Smoothed RTT, or `None` before the first sample.
    pub fn srtt(&self) -> Option<u64> {
        self.sampled.then_some(u64::from(self.srtt))
    }

    /// Smoothed mean deviation of the samples, ns (0 before a sample).
    pub fn rttvar(&self) -> u64 {
        u64::from(self.rttvar)
    }

    /// Retransmission timeout: `srtt + 4·rttvar`, at least `min_ns`
    /// (`initial_ns` before any sample).
    pub fn rto(&self, min_ns: u64, initial_ns: u64) -> u64 {
        match self.srtt() {
            Some(srtt) => (srtt + 4 * self.rttvar()).max(min_ns),
            None => initial_ns.max(min_ns),
        }
    }
}

/// `v` in 32 bits, saturated.
fn clamp(v: u64) -> u32 {
    v.min(u64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_and_respects_the_floor() {
        let mut r = RttEstimator::default();
        assert_eq!(r.rto(100, 1000), 1000);
        for _ in 0..50 {
            r.update(10_000);
        }
        assert_eq!(r.srtt(), Some(10_000));
        assert!(r.rto(0, 0) < 10_500);
        assert_eq!(r.rto(100_000, 0), 100_000);
    }
}
