//! Host memory the NIC reads and writes: registered buffers and the engine's view of them.
//!
//! This is the only module of the Verbs layer with `unsafe` code. A [`HostBuffer`] is a
//! heap allocation that never moves and is freed only when its last `Arc` goes; a
//! [`MemoryMap`] holds an `Arc` of every buffer the datapath may touch and implements
//! the engine's [`Memory`] trait by copying through raw pointers, after checking the
//! range lies inside one mapped buffer. So a datagram can never make the engine touch
//! memory that is not registered, or that was freed.
//!
//! The bytes are shared with the NIC the way RDMA memory is: the datapath (another
//! thread) may write a buffer while the application reads it. The copies here never
//! create Rust references to the shared bytes, but they are plain (non-atomic) copies:
//! an application copy that overlaps a datapath copy of the same bytes at the same time
//! is a data race, which Rust's memory model (like C's) leaves undefined, not merely a
//! stale read. Verbs rules out exactly these overlaps — the application touches a
//! buffer posted for receive, or given to a send or as a remote-access target, only
//! after the completion that hands it back — and this API relies on the application
//! keeping that rule; it does not enforce it. (Doing the copies with byte-wise atomics
//! would make a race merely stale, at several times the cost of `memcpy`, for memory
//! that C programs also touch directly.)

use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::Arc;

use metaroce_firmware::Memory;

/// A fixed buffer shared between the application and the NIC: allocated here, or
/// lent by the application (C programs register their own memory).
pub struct HostBuffer {
    ptr: NonNull<UnsafeCell<u8>>,
    len: usize,
    /// Allocated by [`HostBuffer::zeroed`] and freed on drop; otherwise lent.
    owned: bool,
}

// SAFETY: the bytes are only accessed through raw-pointer copies (`read_at`/`write_at`);
// no `&`/`&mut` reference to the contents is ever handed out, so sharing across threads
// cannot create aliasing references. Overlapping copies from two threads at once would
// race; the Verbs ownership rule in the module doc is what keeps them apart.
unsafe impl Sync for HostBuffer {}
// SAFETY: the buffer owns its allocation, or borrows memory its lender promised stays
// valid for the buffer's whole life; moving the owner to another thread is fine.
unsafe impl Send for HostBuffer {}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        if self.owned {
            let slice = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
            // SAFETY: an owned buffer's pointer and length come from `Box::into_raw` of a
            // boxed slice in `zeroed`, and this is the only place that frees it.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer")
            .field("addr", &format_args!("{:#x}", self.addr()))
            .field("len", &self.len())
            .finish()
    }
}

impl HostBuffer {
    /// A zeroed buffer of `len` bytes (at least 1, so every buffer has its own address).
    pub fn zeroed(len: usize) -> Self {
        let bytes: Box<[UnsafeCell<u8>]> = (0..len.max(1)).map(|_| UnsafeCell::new(0)).collect();
        let len = bytes.len();
        let ptr =
            NonNull::new(Box::into_raw(bytes).cast::<UnsafeCell<u8>>()).expect("Box is never null");
        HostBuffer {
            ptr,
            len,
            owned: true,
        }
    }

    /// Lends `len` bytes at `ptr` to the NIC in place (what `ibv_reg_mr` does with
    /// application memory). `None` for a null pointer or zero length.
    ///
    /// # Safety
    /// `ptr..ptr + len` must be valid for reads and writes, and stay so, for as long
    /// as the returned buffer (and every `Arc` of it) lives; the buffer never frees it.
    pub unsafe fn from_raw_parts(ptr: *mut u8, len: usize) -> Option<Self> {
        let ptr = NonNull::new(ptr.cast::<UnsafeCell<u8>>())?;
        (len > 0).then_some(HostBuffer {
            ptr,
            len,
            owned: false,
        })
    }

    /// A buffer holding `data` (copied once, at registration).
    pub fn from_slice(data: &[u8]) -> Self {
        let b = HostBuffer::zeroed(data.len());
        b.write_at(0, data);
        b
    }

    /// Address of the first byte (what work requests use).
    pub fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a buffer has at least one byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `data` to `offset..`; false (nothing copied) if it does not fit.
    pub fn write_at(&self, offset: usize, data: &[u8]) -> bool {
        if !self.fits(offset, data.len()) {
            return false;
        }
        // SAFETY: `offset + data.len() <= len` was checked, so the destination lies in
        // our buffer, which stays valid as long as `self` (owned, or lent under
        // `from_raw_parts`'s contract). `UnsafeCell` makes writing
        // through a shared reference legal; `data` cannot overlap it because no
        // reference to our bytes is ever handed out.
        unsafe {
            let dst = UnsafeCell::raw_get(self.ptr.as_ptr().add(offset));
            std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len());
        }
        true
    }

    /// Copies `offset..offset + out.len()` into `out`; false (nothing copied) if out of range.
    pub fn read_at(&self, offset: usize, out: &mut [u8]) -> bool {
        if !self.fits(offset, out.len()) {
            return false;
        }
        // SAFETY: the source range was checked to lie in our live allocation; `out` is a
        // caller-owned buffer, never one of our bytes (none are handed out).
        unsafe {
            let src = UnsafeCell::raw_get(self.ptr.as_ptr().add(offset));
            std::ptr::copy_nonoverlapping(src.cast_const(), out.as_mut_ptr(), out.len());
        }
        true
    }

    /// Compares `offset..offset + expected.len()` with `expected` without copying it out.
    pub fn equals(&self, offset: usize, expected: &[u8]) -> bool {
        let mut chunk = [0u8; 4096];
        let mut done = 0;
        while done < expected.len() {
            let n = (expected.len() - done).min(chunk.len());
            if !self.read_at(offset + done, &mut chunk[..n])
                || chunk[..n] != expected[done..done + n]
            {
                return false;
            }
            done += n;
        }
        true
    }

    fn fits(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.len())
    }
}

/// The buffers the datapath may touch, by address; the engine's [`Memory`].
#[derive(Debug, Default)]
pub struct MemoryMap {
    by_addr: BTreeMap<u64, Arc<HostBuffer>>,
    /// Accesses refused because no mapped buffer holds the range (0 unless the engine errs).
    pub refused: u64,
}

impl MemoryMap {
    /// Lets the datapath touch `buf` (idempotent).
    pub fn insert(&mut self, buf: Arc<HostBuffer>) {
        self.by_addr.insert(buf.addr(), buf);
    }

    /// Takes `buf` away from the datapath; the map's reference is dropped.
    pub fn remove(&mut self, addr: u64) -> bool {
        self.by_addr.remove(&addr).is_some()
    }

    /// The buffer holding `addr..addr + len`, with the offset of `addr` in it.
    fn find(&self, addr: u64, len: usize) -> Option<(&HostBuffer, usize)> {
        let (&base, buf) = self.by_addr.range(..=addr).next_back()?;
        let off = usize::try_from(addr - base).ok()?;
        buf.fits(off, len).then_some((buf.as_ref(), off))
    }
}

impl Memory for MemoryMap {
    fn write(&mut self, addr: u64, data: &[u8]) {
        match self.find(addr, data.len()) {
            Some((buf, off)) => {
                buf.write_at(off, data);
            }
            None => self.refused += 1,
        }
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) {
        match self.find(addr, out.len()) {
            Some((buf, off)) => {
                buf.read_at(off, out);
            }
            None => {
                out.fill(0);
                self.refused += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_refuses_unmapped_and_straddling_ranges() {
        let a = Arc::new(HostBuffer::from_slice(&[1, 2, 3, 4]));
        let mut m = MemoryMap::default();
        m.insert(Arc::clone(&a));
        let mut out = [0u8; 2];
        m.read(a.addr() + 2, &mut out);
        assert_eq!(out, [3, 4]);
        m.read(a.addr() + 3, &mut out);
        assert_eq!((out, m.refused), ([0, 0], 1));
        m.write(a.addr() - 1, &[9]);
        assert_eq!(m.refused, 2);
        m.write(a.addr() + 1, &[7, 8]);
        assert!(a.equals(0, &[1, 7, 8, 4]));
        assert!(m.remove(a.addr()));
        m.write(a.addr(), &[5]);
        assert_eq!(m.refused, 3);
        assert!(a.equals(0, &[1, 7, 8, 4]));
    }

    #[test]
    fn lent_memory_is_used_in_place_and_not_freed() {
        let mut mine = vec![0u8; 16];
        // SAFETY: `mine` outlives `b`, which is dropped first.
        let b = unsafe { HostBuffer::from_raw_parts(mine.as_mut_ptr(), mine.len()) }.unwrap();
        assert_eq!(b.addr(), mine.as_ptr() as u64);
        assert!(b.write_at(3, &[7, 8]));
        drop(b);
        assert_eq!(&mine[2..6], &[0, 7, 8, 0]);
        // SAFETY: a null pointer is refused before it is used.
        assert!(unsafe { HostBuffer::from_raw_parts(std::ptr::null_mut(), 4) }.is_none());
    }

    #[test]
    fn buffer_bounds() {
        let b = HostBuffer::zeroed(8);
        assert!(!b.write_at(7, &[1, 2]));
        assert!(!b.write_at(usize::MAX, &[1]));
        assert!(b.write_at(6, &[1, 2]));
        let mut out = [0u8; 3];
        assert!(!b.read_at(6, &mut out));
        assert!(b.read_at(5, &mut out));
        assert_eq!(out, [0, 1, 2]);
    }
}
