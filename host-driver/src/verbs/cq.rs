//! Completion queues (`ibv_cq`) and completion channels (`ibv_comp_channel`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::router::lock;
use super::{Error, Result, Wc, WcStatus};
use crate::eventfd::EventFd;

/// A completion queue's state, shared by its handle and the QPs whose completions it takes.
pub(super) struct CqInner {
    id: u32,
    cqe: usize,
    queue: Mutex<VecDeque<Wc>>,
    overflows: AtomicU64,
    armed: AtomicBool,
    solicited_only: AtomicBool,
    channel: Option<Arc<ChannelInner>>,
}

impl CqInner {
    pub(super) fn push(&self, wc: Wc) {
        {
            let mut q = lock(&self.queue);
            if q.len() >= self.cqe {
                self.overflows.fetch_add(1, Ordering::Relaxed);
            }
            q.push_back(wc);
        }
        let Some(ch) = &self.channel else { return };
        let wanted = !self.solicited_only.load(Ordering::Acquire)
            || wc.solicited
            || wc.status != WcStatus::Success;
        if wanted && self.armed.swap(false, Ordering::AcqRel) {
            lock(&ch.fired).push_back(self.id);
            ch.fd.signal();
        }
    }
}

/// A completion queue (`ibv_cq`).
#[derive(Clone)]
pub struct CompletionQueue {
    pub(super) inner: Arc<CqInner>,
}

impl std::fmt::Debug for CompletionQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionQueue")
            .field("id", &self.inner.id)
            .finish()
    }
}

impl CompletionQueue {
    /// A queue numbered `id` of `cqe` entries (at least 1), tied to `channel` if any.
    pub(super) fn new(id: u32, cqe: usize, channel: Option<&CompChannel>) -> Self {
        CompletionQueue {
            inner: Arc::new(CqInner {
                id,
                cqe: cqe.max(1),
                queue: Mutex::new(VecDeque::with_capacity(cqe.max(1))),
                overflows: AtomicU64::new(0),
                armed: AtomicBool::new(false),
                solicited_only: AtomicBool::new(false),
                channel: channel.map(|c| Arc::clone(&c.inner)),
            }),
        }
    }

    /// Moves up to `out.len()` completions into `out`; returns how many (`ibv_poll_cq`).
    pub fn poll(&self, out: &mut [Wc]) -> usize {
        let mut q = lock(&self.inner.queue);
        let n = out.len().min(q.len());
        for (slot, wc) in out.iter_mut().zip(q.drain(..n)) {
            *slot = wc;
        }
        n
    }

    /// Arms the queue: the next completion (or, with `solicited_only`, the next solicited
    /// or failed one) fires the channel once (`ibv_req_notify_cq`).
    pub fn req_notify(&self, solicited_only: bool) -> Result<()> {
        let Some(ch) = &self.inner.channel else {
            return Err(Error::Invalid("completion queue has no channel"));
        };
        self.inner
            .solicited_only
            .store(solicited_only, Ordering::Release);
        self.inner.armed.store(true, Ordering::Release);
        // A completion that raced with arming is already queued: fire for it now.
        let pending = !lock(&self.inner.queue).is_empty();
        if pending && !solicited_only && self.inner.armed.swap(false, Ordering::AcqRel) {
            lock(&ch.fired).push_back(self.inner.id);
            ch.fd.signal();
        }
        Ok(())
    }

    /// Identifier, as returned by [`CompChannel::get_cq_event`].
    pub fn id(&self) -> u32 {
        self.inner.id
    }

    /// Times a completion was queued beyond `cqe` entries.
    pub fn overflows(&self) -> u64 {
        self.inner.overflows.load(Ordering::Relaxed)
    }
}

/// A completion channel's eventfd and the CQs that fired since it was last read.
pub(super) struct ChannelInner {
    fd: EventFd,
    fired: Mutex<VecDeque<u32>>,
}

/// A completion channel (`ibv_comp_channel`), backed by an eventfd: its descriptor can
/// join any `poll`/`epoll` loop.
#[derive(Clone)]
pub struct CompChannel {
    inner: Arc<ChannelInner>,
}

impl std::fmt::Debug for CompChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::os::fd::AsRawFd;
        f.debug_struct("CompChannel")
            .field("fd", &self.inner.fd.as_raw_fd())
            .finish()
    }
}

impl CompChannel {
    /// A channel with a new eventfd.
    pub(super) fn new() -> Result<Self> {
        Ok(CompChannel {
            inner: Arc::new(ChannelInner {
                fd: EventFd::new()?,
                fired: Mutex::new(VecDeque::new()),
            }),
        })
    }

    /// Waits up to `timeout` (`None`: forever) for an armed CQ to fire; returns its
    /// [`CompletionQueue::id`], or `None` on timeout (`ibv_get_cq_event`).
    pub fn get_cq_event(&self, timeout: Option<Duration>) -> Result<Option<u32>> {
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        loop {
            if let Some(id) = lock(&self.inner.fired).pop_front() {
                return Ok(Some(id));
            }
            let left = match deadline {
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(l) => Some(l),
                    None => return Ok(None),
                },
                None => None,
            };
            if self.inner.fd.wait(left)? {
                self.inner.fd.drain();
            }
        }
    }
}

impl std::os::fd::AsRawFd for CompChannel {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.inner.fd.as_raw_fd()
    }
}
