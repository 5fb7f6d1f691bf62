//! Memory shared with a device: a `memfd` mapped into this process.
//!
//! The memfd lets a device process (vfio-user) map the same pages; the kernel's VFIO
//! maps the pages by their address. The memfd is sealed at its size (`F_SEAL_SHRINK`,
//! `F_SEAL_GROW`), which a device process checks before it maps it. Rings live here, so the driver reads what the
//! device wrote without a copy: entries are read and written with volatile accesses,
//! and a ring entry's last word (its phase bit) is read with acquire ordering before
//! the rest of it.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use super::DeviceError;

const PAGE: usize = 4096;

/// Zeroed, page-aligned memory the device can reach at IOVA = [`DmaRegion::addr`].
#[derive(Debug)]
pub struct DmaRegion {
    ptr: NonNull<u8>,
    len: usize,
    file: File,
}

// SAFETY: the region is plain memory owned by this value; accesses go through its
// methods, which use volatile or atomic operations, so sharing it between threads is
// no different from sharing a `&[AtomicU8]`.
unsafe impl Send for DmaRegion {}
// SAFETY: as above.
unsafe impl Sync for DmaRegion {}

impl DmaRegion {
    /// `len` bytes (rounded up to pages) of a new memfd, mapped shared and zeroed.
    pub fn new(len: usize) -> Result<Self, DeviceError> {
        Self::create(len, None)
    }

    /// As [`DmaRegion::new`], mapped at `addr` (page-aligned), which must be free in
    /// this process: for a device whose memory window sits at a fixed address, so
    /// the region's address here is its device address too
    /// ([`super::uart::UartDevice`]).
    pub fn new_at(addr: u64, len: usize) -> Result<Self, DeviceError> {
        Self::create(len, Some(addr))
    }

    fn create(len: usize, at: Option<u64>) -> Result<Self, DeviceError> {
        let len = len.max(1).div_ceil(PAGE) * PAGE;
        // SAFETY: plain FFI call with a NUL-terminated name; the result is checked.
        let fd = unsafe {
            libc::memfd_create(
                c"metaroce-dma".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            )
        };
        if fd < 0 {
            return Err(DeviceError::Io(
                "memfd_create",
                std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        file.set_len(len as u64)
            .map_err(|e| DeviceError::Io("memfd set_len", e))?;
        // Sealed at its size: a device process that maps the memfd can then trust that
        // the file never shrinks under its mapping (an access past the end of a shrunk
        // file would kill it with SIGBUS), and refuses memory that is not sealed.
        // SAFETY: plain FFI call on a descriptor we own; the result is checked.
        let sealed = unsafe {
            libc::fcntl(
                file.as_raw_fd(),
                libc::F_ADD_SEALS,
                libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL,
            )
        };
        if sealed < 0 {
            return Err(DeviceError::Io(
                "sealing DMA memory",
                std::io::Error::last_os_error(),
            ));
        }
        // A fixed address never replaces a mapping: MAP_FIXED_NOREPLACE fails instead
        // (and a kernel older than 4.17, which ignores the flag, maps elsewhere:
        // refused below).
        let (hint, fixed) = match at {
            Some(a) => (a as *mut libc::c_void, libc::MAP_FIXED_NOREPLACE),
            None => (std::ptr::null_mut(), 0),
        };
        // SAFETY: mapping a file we own, of the length we just gave it, where nothing
        // is mapped (no MAP_FIXED); the result is checked and unmapped in `drop`.
        let p = unsafe {
            libc::mmap(
                hint,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | fixed,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(DeviceError::Io(
                "mmap of DMA memory",
                std::io::Error::last_os_error(),
            ));
        }
        if at.is_some_and(|a| a != p as u64) {
            // SAFETY: unmapping the mapping just made, once.
            unsafe { libc::munmap(p, len) };
            return Err(DeviceError::Unusable(format!(
                "DMA memory asked for at {:#x} was mapped at {p:p} (kernel without MAP_FIXED_NOREPLACE)",
                at.unwrap_or(0)
            )));
        }
        let ptr = NonNull::new(p.cast::<u8>()).expect("mmap returned a non-null mapping");
        Ok(DmaRegion { ptr, len, file })
    }

    /// The region's address here, which is also its IOVA.
    pub fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// Length in bytes (whole pages).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a region has at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The memfd behind the region (for a device process to map).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    fn check(&self, offset: usize, len: usize) {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len),
            "DMA region access {offset}+{len} beyond its {} bytes",
            self.len
        );
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        self.check(offset, 8);
        assert!(offset % 8 == 0, "unaligned 64-bit access at {offset}");
        // SAFETY: in bounds and 8-byte aligned (checked above; the mapping is
        // page-aligned); the memory lives as long as `self`, and every access to it
        // is atomic or volatile.
        unsafe { AtomicU64::from_ptr(self.ptr.as_ptr().add(offset).cast::<u64>()) }
    }

    /// Reads the little-endian 64-bit word at `offset` (8-byte aligned) with acquire
    /// ordering: later reads see what the device wrote before it.
    pub fn load_u64(&self, offset: usize) -> u64 {
        u64::from_le(self.word(offset).load(Ordering::Acquire))
    }

    /// Writes the little-endian 64-bit word at `offset` (8-byte aligned) with release
    /// ordering: the device sees earlier writes before it.
    pub fn store_u64(&self, offset: usize, value: u64) {
        self.word(offset).store(value.to_le(), Ordering::Release);
    }

    /// Copies `out.len()` bytes at `offset` out of the region.
    pub fn read(&self, offset: usize, out: &mut [u8]) {
        self.check(offset, out.len());
        for (i, b) in out.iter_mut().enumerate() {
            // SAFETY: in bounds (checked above), valid for the region's life.
            *b = unsafe { self.ptr.as_ptr().add(offset + i).read_volatile() };
        }
    }

    /// Copies `data` into the region at `offset`.
    pub fn write(&self, offset: usize, data: &[u8]) {
        self.check(offset, data.len());
        for (i, b) in data.iter().enumerate() {
            // SAFETY: in bounds (checked above), valid for the region's life.
            unsafe { self.ptr.as_ptr().add(offset + i).write_volatile(*b) };
        }
    }

    /// Zeroes the whole region.
    pub fn zero(&self) {
        // SAFETY: the whole mapping, valid for the region's life.
        unsafe { std::ptr::write_bytes(self.ptr.as_ptr(), 0, self.len) };
    }
}

impl Drop for DmaRegion {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`, once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_is_zeroed_page_rounded_and_shared_through_its_fd() {
        let r = DmaRegion::new(100).unwrap();
        assert_eq!(r.len(), PAGE);
        assert_eq!(r.load_u64(8), 0);
        r.store_u64(8, 0x1122_3344_5566_7788);
        r.write(100, b"hello");
        // A second mapping of the same memfd (what a device process does) sees it.
        let dup = r.fd().try_clone_to_owned().unwrap();
        let mut f = File::from(dup);
        let mut all = vec![0u8; PAGE];
        use std::io::Read;
        f.read_exact(&mut all).unwrap();
        assert_eq!(&all[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&all[100..105], b"hello");
        let mut back = [0u8; 5];
        r.read(100, &mut back);
        assert_eq!(&back, b"hello");
    }

    #[test]
    #[should_panic(expected = "beyond")]
    fn access_past_the_end_is_refused() {
        let r = DmaRegion::new(PAGE).unwrap();
        r.store_u64(PAGE, 1);
    }
}
