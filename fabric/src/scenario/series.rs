//! Goodput sampled in time bins (`Series`, `Recorder`) and percentiles.

use crate::network::Network;
use crate::packet::HostId;
use crate::time::{SimTime, from_us, to_secs};

/// Width of the bins goodput is sampled in.
pub const SAMPLE_BIN: SimTime = from_us(10);

/// A goodput time series: bytes per bin of `bin` simulated time.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Bin width.
    pub bin: SimTime,
    /// Time of the first bin's start.
    pub start: SimTime,
    /// Gbit/s in each bin, per series member (e.g. per sender).
    pub gbps: Vec<Vec<f64>>,
}

impl Series {
    /// Mean of member `member` over bins `from..to`.
    pub(super) fn mean(&self, member: usize, from: usize, to: usize) -> f64 {
        let bins = &self.gbps[member][from..to];
        bins.iter().sum::<f64>() / bins.len().max(1) as f64
    }

    /// Sum over members of the mean over bins `from..to`.
    pub(super) fn total_mean(&self, from: usize, to: usize) -> f64 {
        (0..self.gbps.len())
            .map(|member| self.mean(member, from, to))
            .sum()
    }

    /// Bins in the series.
    pub(super) fn bins(&self) -> usize {
        self.gbps.first().map_or(0, Vec::len)
    }
}

/// Records per-bin goodput of `members` from cumulative acknowledged data
/// packets of the given hosts.
pub(super) struct Recorder {
    hosts: Vec<HostId>,
    /// Each host's acknowledged data packets at the last sample.
    pub(super) last: Vec<u64>,
    /// The series so far.
    pub(super) series: Series,
    bytes_per_packet: f64,
}

impl Recorder {
    /// A recorder of `hosts` with bins of `bin` from `start`.
    pub(super) fn new(hosts: Vec<HostId>, start: SimTime, bin: SimTime, mtu: u32) -> Self {
        Self {
            last: vec![0; hosts.len()],
            series: Series {
                bin,
                start,
                gbps: vec![Vec::new(); hosts.len()],
            },
            hosts,
            bytes_per_packet: f64::from(mtu),
        }
    }

    /// Adds one bin per host: the goodput since the previous call (called once per bin).
    pub(super) fn sample(&mut self, network: &Network) {
        for (index, &host) in self.hosts.iter().enumerate() {
            let acked = network
                .sim
                .transport_stats(host)
                .map_or(0, |stats| stats.packets_acked);
            let delta = acked.saturating_sub(self.last[index]);
            self.last[index] = acked;
            let gbps = delta as f64 * self.bytes_per_packet * 8.0 / to_secs(self.series.bin) / 1e9;
            self.series.gbps[index].push(gbps);
        }
    }
}

/// Percentile `q` (0..=1) of `values` (sorted in place), 0 when empty.
pub fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = (q * (values.len() - 1) as f64).round() as usize;
    values[rank.min(values.len() - 1)]
}
