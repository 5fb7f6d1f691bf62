//! Event channels: a queue of connection manager events behind a pollable descriptor.
//!
//! The descriptor (`channel->fd`) is an eventfd that is readable exactly while the queue
//! holds an event: the first event written into an empty queue raises it, taking the last
//! one out lowers it again (both under the queue's lock), so a program may `poll` it and
//! then call `rdma_get_cm_event`, or set `O_NONBLOCK` on it and get `EAGAIN` from an
//! empty channel, as with the kernel's channel.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ffi::c_int;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use metaroce_cabi::ffi::{Errno, last_errno};
use metaroce_cabi::registry::{Object, lock};

use crate::abi::{rdma_conn_param, rdma_event_channel};
use crate::id::Id;

/// An event not yet handed to the program.
pub struct Pending {
    /// The id it is about (for a connection request: the new id).
    pub id: Arc<Id>,
    /// For a connection request: the listening id.
    pub listener: Option<Arc<Id>>,
    /// `enum rdma_cm_event_type`.
    pub kind: c_int,
    /// 0, or an error.
    pub status: c_int,
    /// Connection parameters (`private_data` unset: see `pdata`).
    pub param: rdma_conn_param,
    /// Private data.
    pub pdata: Vec<u8>,
}

/// An event channel.
pub struct Channel {
    c: UnsafeCell<rdma_event_channel>,
    efd: OwnedFd,
    queue: Mutex<VecDeque<Pending>>,
}

// SAFETY: the C view holds only the descriptor number, written before publication.
unsafe impl Sync for Channel {}
// SAFETY: as above.
unsafe impl Send for Channel {}

impl Object for Channel {
    type C = rdma_event_channel;
    fn c_ptr(&self) -> *mut rdma_event_channel {
        self.c.get()
    }
}

impl Channel {
    /// A new, empty channel.
    pub fn new() -> Result<Arc<Channel>, Errno> {
        // SAFETY: plain eventfd creation; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(last_errno());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        let efd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Arc::new(Channel {
            c: UnsafeCell::new(rdma_event_channel { fd }),
            efd,
            queue: Mutex::new(VecDeque::new()),
        }))
    }

    fn raise(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our eventfd; the counter never
        // overflows (it is 0 or 1 here).
        let _ = unsafe { libc::write(self.efd.as_raw_fd(), (&raw const one).cast(), 8) };
    }

    fn lower(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a valid u64; the counter is non-zero whenever the
        // queue is non-empty, so this never blocks.
        let _ = unsafe { libc::read(self.efd.as_raw_fd(), (&raw mut v).cast(), 8) };
    }

    /// Queues an event.
    pub fn push(&self, ev: Pending) {
        let mut q = lock(&self.queue);
        if q.is_empty() {
            self.raise();
        }
        q.push_back(ev);
    }

    /// Takes the oldest event; waits for one unless the program made the descriptor
    /// non-blocking (then `EAGAIN`).
    pub fn pop(&self) -> Result<Pending, Errno> {
        loop {
            {
                let mut q = lock(&self.queue);
                if let Some(ev) = q.pop_front() {
                    if q.is_empty() {
                        self.lower();
                    }
                    return Ok(ev);
                }
            }
            // SAFETY: F_GETFL on our own descriptor.
            let flags = unsafe { libc::fcntl(self.efd.as_raw_fd(), libc::F_GETFL) };
            if flags >= 0 && flags & libc::O_NONBLOCK != 0 {
                return Err(libc::EAGAIN);
            }
            let mut pfd = libc::pollfd {
                fd: self.efd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; waits until the descriptor is raised.
            if unsafe { libc::poll(&mut pfd, 1, -1) } < 0 && last_errno() != libc::EINTR {
                return Err(last_errno());
            }
        }
    }

    /// Removes and returns the queued events matching `pred`.
    pub fn take_where(&self, pred: impl Fn(&Pending) -> bool) -> Vec<Pending> {
        let mut q = lock(&self.queue);
        if q.is_empty() {
            return Vec::new();
        }
        let (taken, kept): (Vec<Pending>, Vec<Pending>) = q.drain(..).partition(|e| pred(e));
        *q = kept.into();
        if q.is_empty() && !taken.is_empty() {
            self.lower();
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(ch: &Channel) -> bool {
        let mut pfd = libc::pollfd {
            fd: ch.efd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        unsafe { libc::poll(&mut pfd, 1, 0) == 1 }
    }

    #[test]
    fn descriptor_is_readable_exactly_while_events_wait() {
        let ch = Channel::new().unwrap();
        assert!(!readable(&ch));
        let id = Id::for_test(ch.clone());
        for kind in [1, 2, 3] {
            ch.push(Pending {
                id: id.clone(),
                listener: None,
                kind,
                status: 0,
                param: rdma_conn_param::default(),
                pdata: Vec::new(),
            });
            assert!(readable(&ch));
        }
        assert_eq!(ch.pop().unwrap().kind, 1);
        assert!(readable(&ch));
        assert_eq!(ch.take_where(|e| e.kind == 3).len(), 1);
        assert!(readable(&ch));
        assert_eq!(ch.pop().unwrap().kind, 2);
        assert!(!readable(&ch));
        // An empty non-blocking channel says EAGAIN instead of waiting.
        let fd = ch.efd.as_raw_fd();
        // SAFETY: F_SETFL on our own descriptor.
        unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) };
        assert_eq!(ch.pop().err(), Some(libc::EAGAIN));
    }
}
