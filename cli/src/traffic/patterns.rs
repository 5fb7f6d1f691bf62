//! Message contents of verified traffic: what the sender writes and what the receiver
//! checks.

use metaroce_driver::verbs::MemoryRegion;

/// Message contents: a fixed random pattern per slot, stamped with the message number
/// every 1 KiB.
pub struct Patterns {
    size: usize,
    base: Vec<u8>,
    /// The last message filled into each slot (base with that message's stamps).
    filled: Vec<u8>,
    scratch: Vec<u8>,
}

const STAMP_EVERY: usize = 1024;

impl Patterns {
    /// Patterns for `slots` slots of `size` bytes.
    pub fn new(size: usize, slots: usize) -> Self {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let base: Vec<u8> = (0..size * slots)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        Patterns {
            size,
            filled: base.clone(),
            base,
            scratch: vec![0; size],
        }
    }

    fn stamp(buf: &mut [u8], msg: u64) {
        let stamp = msg.to_le_bytes();
        for at in (0..buf.len()).step_by(STAMP_EVERY) {
            let n = (buf.len() - at).min(8);
            buf[at..at + n].copy_from_slice(&stamp[..n]);
        }
    }

    fn slot(&self, slot: usize) -> std::ops::Range<usize> {
        slot * self.size..(slot + 1) * self.size
    }

    /// Writes message `msg` of slot `slot` into `mr` at `off`, and remembers it as the
    /// slot's last message.
    pub fn fill(&mut self, mr: &MemoryRegion, off: usize, slot: usize, msg: u64) {
        self.remember(slot, msg);
        mr.write(off, &self.filled[self.slot(slot)]);
    }

    /// Remembers message `msg` as the last one filled into `slot` without writing it
    /// anywhere (a remote receiver filled it).
    pub fn remember(&mut self, slot: usize, msg: u64) {
        let r = self.slot(slot);
        // Only the stamps differ from the slot's previous message.
        Self::stamp(&mut self.filled[r], msg);
    }

    /// True if `mr` holds the last message filled into `slot`, at `off`.
    pub fn check_filled(&self, mr: &MemoryRegion, off: usize, slot: usize) -> bool {
        mr.equals(off, &self.filled[self.slot(slot)])
    }

    /// True if `mr` holds message `msg` of slot `slot` at `off` (built from scratch).
    pub fn check(&mut self, mr: &MemoryRegion, off: usize, slot: usize, msg: u64) -> bool {
        let r = self.slot(slot);
        self.scratch.copy_from_slice(&self.base[r]);
        Self::stamp(&mut self.scratch, msg);
        mr.equals(off, &self.scratch)
    }
}
