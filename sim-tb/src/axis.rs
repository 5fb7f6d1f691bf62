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

/// What became of the beat a [`FrameFeed`] offered this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fed {
    /// No beat was offered.
    Nothing,
    /// The model did not take the offered beat (a bubble).
    Refused,
    /// The model took the beat.
    Taken {
        /// The frame it belongs to.
        frame: usize,
        /// It was the frame's last.
        last: bool,
    },
}

/// Feeds a list of frames into a port the model receives on, beat by beat:
/// `tkeep` covers the frame's bytes and the lanes past them carry junk, so
/// the model must ignore them.
#[derive(Clone, Debug)]
pub struct FrameFeed {
    frame: usize,
    off: usize,
    beat: Vec<u8>,
    junk: u8,
    offered: Option<(usize, bool)>,
}

impl FrameFeed {
    /// A feed of `lanes`-byte beats; `junk` seeds the bytes outside `tkeep`.
    pub fn new(lanes: usize, junk: u8) -> Self {
        Self {
            frame: 0,
            off: 0,
            beat: vec![0; lanes],
            junk,
            offered: None,
        }
    }

    /// The frame the next beat belongs to (the frame count once all are taken).
    pub fn frame(&self) -> usize {
        self.frame
    }

    /// Whether the next beat is a frame's first.
    pub fn at_frame_start(&self) -> bool {
        self.off == 0
    }

    /// Offers the next beat of `bytes`, the current frame's bytes (non-empty),
    /// on `port`; idles the port when `bytes` is `None`.
    pub fn drive(&mut self, sim: &mut Sim, port: &Axis, bytes: Option<&[u8]>) {
        let Some(f) = bytes else {
            self.offered = None;
            port.idle(sim);
            return;
        };
        let n = (f.len() - self.off).min(self.beat.len());
        let last = self.off + n == f.len();
        self.beat[..n].copy_from_slice(&f[self.off..self.off + n]);
        for (i, b) in self.beat[n..].iter_mut().enumerate() {
            *b = self.junk ^ (i as u8).wrapping_mul(37);
        }
        port.offer(sim, &self.beat, n, last);
        self.offered = Some((n, last));
    }

    /// After the model has been evaluated: whether it took the offered beat
    /// (`tready`), moving past it if so.
    pub fn settle(&mut self, sim: &mut Sim, port: &Axis) -> Fed {
        let Some((n, last)) = self.offered.take() else {
            return Fed::Nothing;
        };
        if !port.ready(sim) {
            return Fed::Refused;
        }
        let frame = self.frame;
        self.off += n;
        if last {
            self.frame += 1;
            self.off = 0;
        }
        Fed::Taken { frame, last }
    }
}
