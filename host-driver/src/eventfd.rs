//! A non-blocking Linux eventfd: the wake-up behind completion channels.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// A counter the kernel can wait on (`eventfd(2)`, non-blocking, close-on-exec).
#[derive(Debug)]
pub struct EventFd {
    file: File,
}

impl EventFd {
    /// A new eventfd with count 0.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain FFI call with constant flags; the result is checked below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor we own and nobody else closes.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(EventFd {
            file: File::from(owned),
        })
    }

    /// Adds one to the counter, waking waiters.
    pub fn signal(&self) {
        // Fails only when the counter would overflow, and then waiters are awake anyway.
        let _ = (&self.file).write(&1u64.to_ne_bytes());
    }

    /// Reads and clears the counter; 0 when it was already clear.
    pub fn drain(&self) -> u64 {
        let mut b = [0u8; 8];
        match (&self.file).read(&mut b) {
            Ok(8) => u64::from_ne_bytes(b),
            _ => 0,
        }
    }

    /// Waits until the counter is non-zero or `timeout` passes (`None`: forever); true if
    /// it is readable. The counter is not cleared.
    pub fn wait(&self, timeout: Option<Duration>) -> io::Result<bool> {
        let mut pfd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
        // SAFETY: `pfd` is one valid pollfd on our stack, and we pass its count (1).
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        match r {
            r if r > 0 => Ok(true),
            0 => Ok(false),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    Ok(false)
                } else {
                    Err(e)
                }
            }
        }
    }
}

impl AsFd for EventFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}
