//! One AXI-Stream port of a Verilated model: its five signals (`{prefix}_tdata`,
//! `_tkeep`, `_tvalid`, `_tready`, `_tlast`) resolved once by name, driven and
//! watched a beat at a time, lane 0 first with packed `tkeep`. Shared by the
//! benches and the device process.

use crate::{Port, Sim, SimError};

/// Largest beat in bytes (512 bits).
const MAX_LANES: usize = 64;

/// The `tkeep` value of a beat whose first `n` lanes hold bytes.
pub fn keep_mask(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// One beat taken from a port the model sends on, for the stream rules.
#[derive(Clone, Copy, Debug)]
pub struct Beat {
    /// The `tkeep` value.
    pub keep: u64,
    /// Lanes of the port.
    pub lanes: usize,
    /// The frame's last beat.
    pub last: bool,
}

impl Beat {
    /// The first stream rule the beat breaks: `tkeep` not packed from lane 0
    /// (or empty), or, when `short_ends_frame`, a beat short of full width
    /// that is not the frame's last.
    pub fn violation(&self, short_ends_frame: bool) -> Option<String> {
        let count = self.keep.count_ones() as usize;
        if count == 0 || self.keep != u64::MAX >> (64 - count) {
            Some(format!("tkeep {:#x} not packed", self.keep))
        } else if short_ends_frame && count < self.lanes && !self.last {
            Some(format!("partial beat {:#x} without tlast", self.keep))
        } else {
            None
        }
    }
}

/// The five signals of one AXI-Stream port.
#[derive(Clone, Copy, Debug)]
pub struct Axis {
    tdata: Port,
    tkeep: Port,
    tvalid: Port,
    tready: Port,
    tlast: Port,
}

impl Axis {
    /// Looks the port `prefix` (for example `s_axis`) up in `sim`.
    pub fn new(sim: &Sim, prefix: &str) -> Result<Self, SimError> {
        let port = |signal: &str| sim.port(&format!("{prefix}_{signal}"));
        Ok(Self {
            tdata: port("tdata")?,
            tkeep: port("tkeep")?,
            tvalid: port("tvalid")?,
            tready: port("tready")?,
            tlast: port("tlast")?,
        })
    }

    /// Lanes (bytes) of a beat.
    pub fn lanes(&self) -> usize {
        self.tdata.bits() / 8
    }

    /// Offers a beat of `data` (lane 0 first; lanes past it driven as zero)
    /// whose first `kept` lanes are kept, the frame's last with `last`.
    pub fn offer(&self, sim: &mut Sim, data: &[u8], kept: usize, last: bool) {
        sim.set_bytes(self.tdata, data);
        sim.set(self.tkeep, keep_mask(kept));
        sim.set(self.tlast, u64::from(last));
        sim.set(self.tvalid, 1);
    }

    /// Offers nothing this cycle.
    pub fn idle(&self, sim: &mut Sim) {
        sim.set(self.tvalid, 0);
    }

    /// Drives `tready` (for a port the model sends on).
    pub fn set_ready(&self, sim: &mut Sim, ready: bool) {
        sim.set(self.tready, u64::from(ready));
    }

    /// Whether the model offers a beat this cycle.
    pub fn valid(&self, sim: &mut Sim) -> bool {
        sim.get(self.tvalid) == 1
    }

    /// Whether the model takes the offered beat this cycle.
    pub fn ready(&self, sim: &mut Sim) -> bool {
        sim.get(self.tready) == 1
    }

    /// The beat on the port this cycle, if one is valid: its lanes copied
    /// into `beat` (as many as fit); how many are kept (`tkeep`'s bits set,
    /// at most the lanes copied) and whether it is the frame's last.
    pub fn read_beat(&self, sim: &mut Sim, beat: &mut [u8]) -> Option<(usize, bool)> {
        self.read(sim, beat).map(|(_, n, last)| (n, last))
    }

    /// [`Axis::read_beat`], with the beat's `tkeep` first.
    fn read(&self, sim: &mut Sim, beat: &mut [u8]) -> Option<(u64, usize, bool)> {
        if !self.valid(sim) {
            return None;
        }
        let lanes = (self.tdata.bits() / 8).min(beat.len());
        sim.get_bytes(self.tdata, &mut beat[..lanes]);
        let keep = sim.get(self.tkeep);
        let n = (keep.count_ones() as usize).min(lanes);
        Some((keep, n, sim.get(self.tlast) == 1))
    }

    /// Monitors the beat on the port this cycle, if one is valid: its kept
    /// bytes appended to `out`, and the beat for the rule checks.
    pub fn watch(&self, sim: &mut Sim, out: &mut Vec<u8>) -> Option<Beat> {
        let mut beat = [0u8; MAX_LANES];
        let (keep, n, last) = self.read(sim, &mut beat)?;
        out.extend_from_slice(&beat[..n]);
        Some(Beat {
            keep,
            lanes: self.lanes(),
            last,
        })
    }

    /// The beat on the port this cycle, if one is valid: its kept bytes
    /// appended to `out`; whether it is the frame's last.
    pub fn take(&self, sim: &mut Sim, out: &mut Vec<u8>) -> Option<bool> {
        let mut beat = [0u8; MAX_LANES];
        let (n, last) = self.read_beat(sim, &mut beat)?;
        out.extend_from_slice(&beat[..n]);
        Some(last)
    }
}
