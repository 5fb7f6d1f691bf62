//! Host memory as the engine sees it.
//!
//! The engine never owns payload bytes: it places received data straight at
//! its final address and re-reads registered memory to (re)transmit. The
//! backend supplies the memory through this trait; the engine calls it only for
//! ranges it has already checked against the memory-region table.

use alloc::vec;
use alloc::vec::Vec;

/// Byte-addressed memory that registered regions live in.
pub trait Memory {
    /// Copies `data` to `addr..addr + data.len()`.
    fn write(&mut self, addr: u64, data: &[u8]);
    /// Copies `addr..addr + out.len()` into `out`.
    fn read(&mut self, addr: u64, out: &mut [u8]);
}

/// A flat memory of `len` bytes starting at address `base`, for tests and
/// simulations. Accesses outside it panic: the engine must never make one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VecMemory {
    base: u64,
    bytes: Vec<u8>,
}

impl VecMemory {
    /// Zeroed memory covering `base..base + len`.
    pub fn new(base: u64, len: usize) -> Self {
        VecMemory {
            base,
            bytes: vec![0; len],
        }
    }

    /// First address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes covered.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Covers no byte.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes at `addr..addr + len`.
    pub fn slice(&self, addr: u64, len: usize) -> &[u8] {
        let start = self.offset(addr, len);
        &self.bytes[start..start + len]
    }

    /// The bytes at `addr..addr + len`, writable.
    pub fn slice_mut(&mut self, addr: u64, len: usize) -> &mut [u8] {
        let start = self.offset(addr, len);
        &mut self.bytes[start..start + len]
    }

    fn offset(&self, addr: u64, len: usize) -> usize {
        let start = addr
            .checked_sub(self.base)
            .and_then(|o| usize::try_from(o).ok())
            .filter(|&o| {
                o.checked_add(len)
                    .is_some_and(|end| end <= self.bytes.len())
            });
        start.unwrap_or_else(|| panic!("access {addr:#x}+{len} outside VecMemory"))
    }
}

impl Memory for VecMemory {
    fn write(&mut self, addr: u64, data: &[u8]) {
        self.slice_mut(addr, data.len()).copy_from_slice(data);
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) {
        out.copy_from_slice(self.slice(addr, out.len()));
    }
}
