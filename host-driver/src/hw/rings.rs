//! The device's queues in host memory (`docs/hardware.md` §18): two the host
//! produces (the TX queue, the firmware TX queue) and two the device produces (the
//! event ring, the firmware receive ring).
//!
//! Indices are free-running 32-bit counters; an entry's slot is `idx mod size`. The
//! device writes an entry's phase bit last: 1 on even laps of the ring, 0 on odd ones,
//! so the host reads an entry only once its phase matches the lap it expects.

use super::DriverError;
use super::codes::regs;
use super::regs::RING_ENABLE;
use crate::device::{Device, DmaRegion};

/// Ring memory and its registers' block.
#[derive(Debug)]
struct RingMem {
    mem: DmaRegion,
    /// Offset of the ring in `mem` (rings are aligned to their size).
    at: usize,
    log2: u32,
    stride: usize,
    /// The ring's register block (BAR offset).
    block: u32,
}

impl RingMem {
    /// Allocates a zeroed ring of `2^log2` entries of `stride` bytes, aligned to its
    /// size, and programs the block at `block` (base, size, enable).
    fn new(
        dev: &mut dyn Device,
        block: u32,
        log2: u32,
        stride: usize,
    ) -> Result<RingMem, DriverError> {
        let bytes = stride << log2;
        let mem = dev.alloc_dma(2 * bytes)?;
        mem.zero();
        let at = (bytes - (mem.addr() as usize % bytes)) % bytes;
        let r = RingMem {
            mem,
            at,
            log2,
            stride,
            block,
        };
        // The block's registers are laid out alike for the four rings.
        let reg = |off: u16| block + u32::from(off);
        use regs::txq as q;
        let base = r.base();
        dev.write32(reg(q::CTRL), 0)?;
        dev.write32(reg(q::BASE_LO), base as u32)?;
        dev.write32(reg(q::BASE_HI), (base >> 32) as u32)?;
        dev.write32(reg(q::SIZE_LOG2), log2)?;
        let entry = dev.read32(reg(q::ENTRY_LOG2))?;
        if 1usize.checked_shl(entry) != Some(stride) {
            return Err(DriverError::Identity(format!(
                "ring block at {block:#x}: entries of 2^{entry} bytes, the driver writes {stride}"
            )));
        }
        dev.write32(reg(q::CTRL), RING_ENABLE)?;
        Ok(r)
    }

    fn base(&self) -> u64 {
        self.mem.addr() + self.at as u64
    }

    fn size(&self) -> u32 {
        1 << self.log2
    }

    /// Byte offset in `mem` of the entry with index `idx`.
    fn offset(&self, idx: u32) -> usize {
        self.at + (idx & (self.size() - 1)) as usize * self.stride
    }

    fn reg(&self, off: u16) -> u32 {
        self.block + u32::from(off)
    }
}

/// A queue the host fills and the device consumes (TX queue, firmware TX queue).
#[derive(Debug)]
pub struct TxRing {
    r: RingMem,
    /// Entries written.
    prod: u32,
    /// Entries written and announced with the doorbell.
    rung: u32,
    /// The device's `CONS` as last read.
    cons: u32,
}

impl TxRing {
    /// A zeroed, enabled queue of `2^log2` entries of `stride` bytes.
    pub fn new(
        dev: &mut dyn Device,
        block: u32,
        log2: u32,
        stride: usize,
    ) -> Result<TxRing, DriverError> {
        Ok(TxRing {
            r: RingMem::new(dev, block, log2, stride)?,
            prod: 0,
            rung: 0,
            cons: 0,
        })
    }

    /// Free entries, reading `CONS` again only when the last value says none.
    pub fn room(&mut self, dev: &mut dyn Device) -> Result<u32, DriverError> {
        let free = |s: &Self| s.r.size() - s.prod.wrapping_sub(s.cons);
        if free(self) == 0 {
            self.cons = dev.read32(self.r.reg(regs::txq::CONS))?;
            if self.prod.wrapping_sub(self.cons) > self.r.size() {
                return Err(DriverError::Protocol(format!(
                    "queue at {:#x}: CONS {} is ahead of PROD {}",
                    self.r.block, self.cons, self.prod
                )));
            }
        }
        Ok(free(self))
    }

    /// Entries the device has not consumed yet (as of the last `CONS` read).
    pub fn pending(&self) -> u32 {
        self.prod.wrapping_sub(self.cons)
    }

    /// Writes the next entry (the caller checked [`TxRing::room`]): `words` from
    /// byte 0, then `tail` bytes right after them; the rest of the entry is zeroed.
    pub fn push(&mut self, words: &[u64], tail: &[u8]) {
        let at = self.r.offset(self.prod);
        let zero = [0u8; 256];
        let mem = &self.r.mem;
        mem.write(at, &zero[..self.r.stride.min(zero.len())]);
        for (i, w) in words.iter().enumerate() {
            mem.store_u64(at + 8 * i, *w);
        }
        mem.write(at + 8 * words.len(), tail);
        self.prod = self.prod.wrapping_add(1);
    }

    /// Rings the doorbell (`PROD`) if entries were written since the last time.
    pub fn doorbell(&mut self, dev: &mut dyn Device) -> Result<bool, DriverError> {
        if self.rung == self.prod {
            return Ok(false);
        }
        dev.write32(self.r.reg(regs::txq::PROD), self.prod)?;
        self.rung = self.prod;
        Ok(true)
    }

    /// Reads `CONS` again (entries consumed, for a drained check).
    pub fn refresh(&mut self, dev: &mut dyn Device) -> Result<(), DriverError> {
        self.cons = dev.read32(self.r.reg(regs::txq::CONS))?;
        Ok(())
    }
}

/// A ring the device fills and the host consumes (event ring, firmware receive
/// ring).
#[derive(Debug)]
pub struct RxRing {
    r: RingMem,
    /// Byte offset in an entry of the word holding the phase bit (bit 63).
    phase_word: usize,
    /// Entries consumed.
    cons: u32,
    /// `CONS` as last written to the device.
    released: u32,
}

/// Bit 63 of an entry's last word: its phase.
pub const PHASE_BIT: u64 = 1 << 63;

impl RxRing {
    /// A zeroed, enabled ring of `2^log2` entries of `stride` bytes whose phase bit
    /// is bit 63 of the word at byte `phase_word` of each entry.
    pub fn new(
        dev: &mut dyn Device,
        block: u32,
        log2: u32,
        stride: usize,
        phase_word: usize,
    ) -> Result<RxRing, DriverError> {
        Ok(RxRing {
            r: RingMem::new(dev, block, log2, stride)?,
            phase_word,
            cons: 0,
            released: 0,
        })
    }

    /// The phase an entry written on `idx`'s lap carries.
    fn phase(&self, idx: u32) -> bool {
        (idx >> self.r.log2) & 1 == 0
    }

    /// The byte offset and phase word of the entry `ahead` entries after the next
    /// one, if the device wrote it.
    fn peek(&self, ahead: u32) -> Option<(usize, u64)> {
        let idx = self.cons.wrapping_add(ahead);
        let at = self.r.offset(idx);
        let w = self.r.mem.load_u64(at + self.phase_word);
        (((w & PHASE_BIT) != 0) == self.phase(idx)).then_some((at, w))
    }

    /// The next entry's 64-bit words `0..N`, if the device wrote it (the phase word
    /// is read first, with acquire ordering, then the rest).
    pub fn next_words<const N: usize>(&self) -> Option<[u64; N]> {
        self.peek_words(0)
    }

    /// The words `0..N` of the entry `ahead` entries after the next one, if the device
    /// wrote it (the device writes entries in order, so the ones before it are too).
    pub fn peek_words<const N: usize>(&self, ahead: u32) -> Option<[u64; N]> {
        let (at, _) = self.peek(ahead)?;
        Some(std::array::from_fn(|i| self.r.mem.load_u64(at + 8 * i)))
    }

    /// The next entry's first `out.len()` bytes and its phase word, if written.
    pub fn next_bytes(&self, out: &mut [u8]) -> Option<u64> {
        let (at, w) = self.peek(0)?;
        self.r.mem.read(at, out);
        Some(w)
    }

    /// The index of the next entry.
    pub fn index(&self) -> u32 {
        self.cons
    }

    /// Consumes the entry [`RxRing::next_words`] returned.
    pub fn advance(&mut self) {
        self.cons = self.cons.wrapping_add(1);
    }

    /// Gives the consumed entries back to the device (`CONS`) once a quarter of the
    /// ring (at least one entry) was consumed since the last time: one BAR write per
    /// quarter ring, and the device always has three quarters of it (less what is
    /// unread) to write into.
    pub fn release(&mut self, dev: &mut dyn Device) -> Result<(), DriverError> {
        if self.cons.wrapping_sub(self.released) >= (self.r.size() / 4).max(1) {
            dev.write32(self.r.reg(regs::evq::CONS), self.cons)?;
            self.released = self.cons;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::regs::tests::FakeBar;

    fn fake() -> FakeBar {
        let mut bar = FakeBar::new();
        let evq = u32::from(regs::BLOCKS[6].1);
        bar.set(evq, regs::evq::ENTRY_LOG2, regs::EVQ_ENTRY.trailing_zeros());
        bar
    }

    #[test]
    fn entries_are_taken_by_phase_lap_by_lap() {
        let mut bar = fake();
        let evq = u32::from(regs::BLOCKS[6].1);
        assert_eq!(regs::BLOCKS[6].0, regs::evq::TYPE);
        let mut ring = RxRing::new(&mut bar, evq, 1, regs::EVQ_ENTRY, 56).expect("ring");
        assert_eq!(ring.r.base() % (2 * regs::EVQ_ENTRY as u64), 0, "aligned");
        assert!(ring.next_words::<8>().is_none(), "zeroed: nothing yet");
        // The device writes entries 0 and 1 on lap 0 (phase 1).
        let mem = &ring.r.mem;
        for i in 0..2 {
            mem.store_u64(ring.r.offset(i), 100 + u64::from(i));
            mem.store_u64(ring.r.offset(i) + 56, PHASE_BIT | u64::from(i));
        }
        // The entry after the next one, before the next is consumed (a result
        // and its view entry are taken together).
        assert_eq!(ring.peek_words::<8>(1).expect("written")[0], 101);
        assert!(
            ring.peek_words::<8>(2).is_none(),
            "entry 2 is on the next lap"
        );
        for i in 0..2u64 {
            let w = ring.next_words::<8>().expect("written");
            assert_eq!(w[0], 100 + i);
            ring.advance();
        }
        // Lap 1 expects phase 0: the old entry (phase 1) is not new.
        assert!(ring.next_words::<8>().is_none());
        ring.r.mem.store_u64(ring.r.offset(2) + 56, 2);
        assert!(ring.next_words::<8>().is_some());
        ring.release(&mut bar).expect("release");
        assert_eq!(bar.regs[&(evq + u32::from(regs::evq::CONS))], 2);
    }

    #[test]
    fn a_mismatched_entry_size_is_refused() {
        let mut bar = fake();
        let txq = u32::from(regs::BLOCKS[4].1);
        bar.set(txq, regs::txq::ENTRY_LOG2, 6);
        let e = TxRing::new(&mut bar, txq, 2, regs::TXQ_ENTRY)
            .unwrap_err()
            .to_string();
        assert!(e.contains("entries of 2^6 bytes"), "{e}");
    }

    #[test]
    fn a_full_queue_reads_cons_again() {
        let mut bar = fake();
        let txq = u32::from(regs::BLOCKS[4].1);
        bar.set(txq, regs::txq::ENTRY_LOG2, regs::TXQ_ENTRY.trailing_zeros());
        let mut q = TxRing::new(&mut bar, txq, 1, regs::TXQ_ENTRY).expect("queue");
        q.push(&[1], &[]);
        q.push(&[2], &[]);
        assert_eq!(q.room(&mut bar).expect("room"), 0);
        assert!(q.doorbell(&mut bar).expect("bell"));
        assert!(!q.doorbell(&mut bar).expect("bell"), "nothing new");
        bar.set(txq, regs::txq::CONS, 1);
        assert_eq!(q.room(&mut bar).expect("room"), 1);
        bar.set(txq, regs::txq::CONS, 7);
        q.push(&[3], &[]);
        assert!(q.room(&mut bar).is_err(), "CONS ahead of PROD");
    }
}
