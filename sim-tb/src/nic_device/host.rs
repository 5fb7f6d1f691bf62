//! The host's side of the device's memory: the host-memory model, the rings
//! as the driver keeps them, a DMA read waiting for its completion, and the
//! encoders of the entries the host posts.

use std::collections::HashMap;

use metaroce_driver::hw::tables;

use super::regs;
use crate::tx_build::Descriptor;

const PAGE: u64 = 4096;

/// Where the bench puts its rings (host addresses) and their sizes.
pub(super) const TXQ_BASE: u64 = 0x7_1000_0000;
/// Log2 of the TX queue's entries.
pub(super) const TXQ_LOG2: u32 = 6;
/// The firmware TX queue's base.
pub(super) const FTQ_BASE: u64 = 0x7_1001_0000;
/// Log2 of the firmware TX queue's entries.
pub(super) const FTQ_LOG2: u32 = 3;
/// The event ring's base.
pub(super) const EVQ_BASE: u64 = 0x7_1002_0000;
/// Log2 of the event ring's entries.
pub(super) const EVQ_LOG2: u32 = 6;
/// The firmware receive ring's base.
pub(super) const FRQ_BASE: u64 = 0x7_1003_0000;
/// Log2 of the firmware receive ring's entries.
pub(super) const FRQ_LOG2: u32 = 3;

/// Host memory: 4 KiB pages mapped on demand by the bench; a DMA access
/// to an unmapped page is an error.
#[derive(Default)]
pub(super) struct HostMem {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
}

impl HostMem {
    /// Maps the pages of `len` bytes at `base` (zeroed where new).
    pub(super) fn map(&mut self, base: u64, len: u64) {
        let mut p = base / PAGE;
        while p * PAGE < base + len {
            self.pages
                .entry(p)
                .or_insert_with(|| Box::new([0; PAGE as usize]));
            p += 1;
        }
    }

    fn mapped(&self, addr: u64, len: usize) -> bool {
        (addr / PAGE..=(addr + len.max(1) as u64 - 1) / PAGE).all(|p| self.pages.contains_key(&p))
    }

    /// Writes `data` at `addr`; false (nothing written) if unmapped.
    pub(super) fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        if !self.mapped(addr, data.len()) {
            return false;
        }
        for (i, b) in data.iter().enumerate() {
            let a = addr + i as u64;
            self.pages.get_mut(&(a / PAGE)).expect("mapped")[(a % PAGE) as usize] = *b;
        }
        true
    }

    /// Reads `len` bytes at `addr`; `None` if unmapped.
    pub(super) fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        if !self.mapped(addr, len) {
            return None;
        }
        Some(
            (0..len as u64)
                .map(|i| {
                    let a = addr + i;
                    self.pages[&(a / PAGE)][(a % PAGE) as usize]
                })
                .collect(),
        )
    }

    /// The little-endian word at `addr` (0 if unmapped).
    pub(super) fn u64_at(&self, addr: u64) -> u64 {
        let b = self.read(addr, 8).unwrap_or_default();
        u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
    }

    /// Writes `entry` in the host's next slot of `ring` (host → device) and
    /// advances the host's index.
    pub(super) fn post(&mut self, ring: &mut Ring, entry: &[u8]) {
        let slot = ring.slot(ring.idx);
        self.write(slot, entry);
        ring.idx += 1;
    }
}

/// A read request waiting for its completion.
pub(super) struct ReadReq {
    /// The cycle its first completion beat may be offered.
    pub(super) due: u64,
    /// Its host address.
    pub(super) addr: u64,
    /// Its length in bytes.
    pub(super) len: usize,
    /// Its tag, carried by the completion.
    pub(super) tag: u8,
    /// Bytes already offered.
    pub(super) sent: usize,
}

/// A ring as the host driver keeps it.
#[derive(Clone, Copy)]
pub(super) struct Ring {
    /// Host address of entry 0.
    pub(super) base: u64,
    /// Log2 of its entries.
    pub(super) log2: u32,
    /// Bytes per entry.
    pub(super) stride: u64,
    /// Host-side index: produced (host → device) or consumed (device → host).
    pub(super) idx: u32,
    /// The device's index as last read (host → device) or last written to
    /// the device (device → host).
    pub(super) dev: u32,
}

impl Ring {
    /// An empty ring of `1 << log2` entries of `stride` bytes at `base`.
    pub(super) fn new(base: u64, log2: u32, stride: usize) -> Self {
        Ring {
            base,
            log2,
            stride: stride as u64,
            idx: 0,
            dev: 0,
        }
    }

    /// Its entries.
    pub(super) fn size(&self) -> u32 {
        1 << self.log2
    }

    /// The host address of entry `idx`.
    pub(super) fn slot(&self, idx: u32) -> u64 {
        self.base + u64::from(idx & (self.size() - 1)) * self.stride
    }

    /// The phase bit an entry written on lap `idx / size` carries.
    pub(super) fn phase(&self, idx: u32) -> bool {
        (idx >> self.log2) & 1 == 0
    }

    /// Entries the host can still post (host → device), by the device's
    /// index as last read.
    pub(super) fn room(&self) -> u32 {
        self.size() - self.idx.wrapping_sub(self.dev)
    }

    /// Whether `addr` falls in the ring.
    pub(super) fn holds(&self, addr: u64) -> bool {
        addr >= self.base && addr < self.base + (self.stride << self.log2)
    }
}

/// A TX queue entry for `d` (kind 0; the driver's own words,
/// `metaroce_driver::hw::tables::desc_words`).
pub(super) fn desc_entry(d: &Descriptor) -> Vec<u8> {
    entry(&tables::desc_words(&d.repr, d.ecn, d.addr, d.len))
}

/// A TX queue entry that writes `data` to the table address `addr` (kind 1).
pub(super) fn cfg_entry(addr: u16, data: u64) -> Vec<u8> {
    entry(&tables::cfg_words(addr, data))
}

/// A TX queue entry of these words (little-endian, zero-padded).
pub(super) fn entry(words: &[u64]) -> Vec<u8> {
    let mut e = vec![0u8; regs::TXQ_ENTRY];
    for (i, w) in words.iter().enumerate() {
        e[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    e
}

/// A firmware transmit entry: 32-byte header, then the datagram.
pub(super) fn ftq_entry(
    dst_ip: u128,
    src_port: u16,
    dst_port: u16,
    len: u16,
    data: &[u8],
) -> Vec<u8> {
    let mut e = vec![0u8; regs::FTQ_ENTRY];
    e[..16].copy_from_slice(&dst_ip.to_le_bytes());
    e[16..18].copy_from_slice(&src_port.to_le_bytes());
    e[18..20].copy_from_slice(&dst_port.to_le_bytes());
    e[20..22].copy_from_slice(&len.to_le_bytes());
    e[32..32 + data.len()].copy_from_slice(data);
    e
}
