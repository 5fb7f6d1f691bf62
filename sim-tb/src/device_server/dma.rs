//! The client's DMA memory as the device process sees it: file descriptors the client
//! sent with `DMA_MAP`, mapped here and looked up by IOVA.
//!
//! A map is refused (and counted by the caller) unless it is safe to keep: the fd must
//! be a file at least `offset + size` long and **sealed against shrinking**
//! (`F_SEAL_SHRINK`, as a sealed memfd is), because an access past the end of a file
//! that shrank under the mapping would kill this process with `SIGBUS`; the offset must
//! be page-aligned, the IOVA range must not wrap and must not overlap another map.
//!
//! An access is served only when every byte of it lies in mapped memory: a read of
//! anything else returns `None` (the board answers zeros) and a write writes nothing,
//! so the device never writes outside what the client mapped.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsRawFd;

use vm_memory::{FileOffset, MmapRegion, VolatileMemory};

const PAGE: u64 = 4096;

/// Why a map was refused.
pub(crate) type Refusal = String;

/// One mapped range.
struct Map {
    len: u64,
    mem: MmapRegion,
}

/// Mapped client memory by IOVA.
#[derive(Default)]
pub(crate) struct DmaMaps {
    maps: BTreeMap<u64, Map>,
}

/// Checks `file` and maps `size` bytes of it from `offset` (see the module docs).
pub(crate) fn map_file(file: File, offset: u64, size: u64) -> Result<MmapRegion, Refusal> {
    if size == 0 || offset % PAGE != 0 {
        return Err(format!(
            "size {size} / offset {offset:#x}: empty or not page-aligned"
        ));
    }
    let len = file
        .metadata()
        .map_err(|e| format!("fstat of the fd: {e}"))?
        .len();
    if offset.checked_add(size).is_none_or(|end| end > len) {
        return Err(format!(
            "{size} bytes from offset {offset:#x} of a file of {len} bytes"
        ));
    }
    // SAFETY: plain FFI call on a descriptor `file` owns; the result is checked.
    let seals = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GET_SEALS) };
    if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
        return Err(
            "the fd is not sealed against shrinking (F_SEAL_SHRINK): a memfd with seals is required"
                .into(),
        );
    }
    let size = usize::try_from(size).map_err(|_| format!("size {size} too large"))?;
    MmapRegion::from_file(FileOffset::new(file, offset), size).map_err(|e| format!("mmap: {e}"))
}

impl DmaMaps {
    /// Adds `mem` at `iova`; refused if the range wraps or overlaps another map.
    pub(crate) fn insert(&mut self, iova: u64, mem: MmapRegion) -> Result<(), Refusal> {
        let len = mem.len() as u64;
        let end = iova
            .checked_add(len)
            .ok_or_else(|| format!("IOVA range {iova:#x}+{len:#x} wraps"))?;
        if let Some((b, m)) = self.maps.range(..end).next_back() {
            if b + m.len > iova {
                return Err(format!(
                    "IOVA range {iova:#x}+{len:#x} overlaps the map at {b:#x}+{:#x}",
                    m.len
                ));
            }
        }
        self.maps.insert(iova, Map { len, mem });
        Ok(())
    }

    /// Removes the map at exactly `iova` of `len` bytes; false if there is none.
    pub(crate) fn remove(&mut self, iova: u64, len: u64) -> bool {
        match self.maps.get(&iova) {
            Some(m) if m.len == len => {
                self.maps.remove(&iova);
                true
            }
            _ => false,
        }
    }

    /// Removes every map.
    pub(crate) fn clear(&mut self) {
        self.maps.clear();
    }

    /// Mapped ranges.
    pub(crate) fn len(&self) -> usize {
        self.maps.len()
    }

    /// The pieces `[addr, addr + len)` is made of: (map, offset in it, bytes); `None`
    /// if any byte is unmapped.
    fn pieces(&self, addr: u64, len: usize) -> Option<Vec<(&MmapRegion, usize, usize)>> {
        let mut out = Vec::with_capacity(1);
        let mut at = addr;
        let mut left = len as u64;
        while left > 0 {
            let (base, m) = self.maps.range(..=at).next_back()?;
            let off = at - base;
            if off >= m.len {
                return None;
            }
            let n = left.min(m.len - off);
            out.push((&m.mem, off as usize, n as usize));
            at = at.checked_add(n)?;
            left -= n;
        }
        Some(out)
    }

    /// Reads `out.len()` bytes at `addr`; false (and `out` untouched) if any is unmapped.
    pub(crate) fn read(&self, addr: u64, out: &mut [u8]) -> bool {
        let Some(pieces) = self.pieces(addr, out.len()) else {
            return false;
        };
        let mut done = 0;
        for (mem, off, n) in pieces {
            match mem.get_slice(off, n) {
                Ok(s) => {
                    s.copy_to(&mut out[done..done + n]);
                }
                Err(_) => return false,
            }
            done += n;
        }
        true
    }

    /// Writes `data` at `addr`; false (nothing written) if any byte is unmapped.
    pub(crate) fn write(&self, addr: u64, data: &[u8]) -> bool {
        let Some(pieces) = self.pieces(addr, data.len()) else {
            return false;
        };
        let mut done = 0;
        for (mem, off, n) in pieces {
            match mem.get_slice(off, n) {
                Ok(s) => s.copy_from(&data[done..done + n]),
                Err(_) => return false,
            }
            done += n;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaroce_driver::device::DmaRegion;

    fn region_map(r: &DmaRegion) -> MmapRegion {
        let f = File::from(r.fd().try_clone_to_owned().unwrap());
        map_file(f, 0, r.len() as u64).unwrap()
    }

    #[test]
    fn accesses_are_served_only_inside_maps() {
        let a = DmaRegion::new(4096).unwrap();
        let b = DmaRegion::new(4096).unwrap();
        let mut maps = DmaMaps::default();
        maps.insert(0x10_000, region_map(&a)).unwrap();
        maps.insert(0x11_000, region_map(&b)).unwrap();
        // Overlaps and wrapping ranges are refused.
        assert!(maps.insert(0x10_800, region_map(&a)).is_err());
        assert!(maps.insert(u64::MAX - 100, region_map(&a)).is_err());
        // A write across two adjacent maps lands in both.
        assert!(maps.write(0x10_ffc, b"abcdefgh"));
        let mut back = [0u8; 4];
        a.read(4092, &mut back);
        assert_eq!(&back, b"abcd");
        b.read(0, &mut back);
        assert_eq!(&back, b"efgh");
        // One byte past the maps: nothing written, nothing read.
        assert!(!maps.write(0x11_ffc, b"12345"));
        b.read(4092, &mut back);
        assert_eq!(back, [0; 4]);
        let mut out = [9u8; 8];
        assert!(!maps.read(0x11_ffc, &mut out));
        assert_eq!(out, [9; 8]);
        assert!(maps.read(0x10_ffc, &mut out));
        assert_eq!(&out, b"abcdefgh");
        assert!(!maps.remove(0x10_000, 100));
        assert!(maps.remove(0x10_000, 4096));
        assert!(!maps.read(0x10_ffc, &mut out));
        assert_eq!(maps.len(), 1);
    }

    #[test]
    fn unsealed_short_or_misaligned_files_are_refused() {
        let r = DmaRegion::new(8192).unwrap();
        let f = || File::from(r.fd().try_clone_to_owned().unwrap());
        assert!(
            map_file(f(), 0, 8192 + 4096).is_err(),
            "longer than the file"
        );
        assert!(map_file(f(), 100, 4096).is_err(), "misaligned offset");
        assert!(map_file(f(), 0, 0).is_err(), "empty");
        assert!(map_file(f(), 4096, 4096).is_ok());
        let plain = tempfile::tempfile().unwrap();
        plain.set_len(4096).unwrap();
        let e = map_file(plain, 0, 4096).err().unwrap();
        assert!(e.contains("sealed"), "{e}");
    }
}
