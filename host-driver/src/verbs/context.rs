//! The device context (`ibv_context`): the backend and the event router.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::router::{Router, lock};
use super::{
    AsyncEvent, CompChannel, CompletionQueue, Drops, ProtectionDomain, QpConfig, Result, Stats,
};
use crate::backend::{Backend, Control, DatapathStats, EventSink};

/// What the context's handles share: the backend and the event router.
pub(super) struct CtxInner {
    backend: Arc<dyn Backend>,
    pub(super) router: Arc<Router>,
    next_cq: AtomicU32,
}

impl CtxInner {
    pub(super) fn control<R>(&self, f: impl FnOnce(Control<'_>) -> R) -> R {
        let mut f = Some(f);
        let mut out = None;
        self.backend.control(&mut |c| {
            if let Some(f) = f.take() {
                out = Some(f(c));
            }
        });
        out.expect("backend ran the control operation")
    }
}

/// An opened device (`ibv_context`): the entry point of the API.
///
/// The device closes when the last reference goes (every object made from it holds
/// one): the backend then sends what it still owes and answers for destroyed QPs while
/// they linger before it stops, and the drop waits for that (bounded; see
/// [`Backend::shutdown`]).
#[derive(Clone)]
pub struct Context {
    pub(super) inner: Arc<CtxInner>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("backend", &self.inner.backend.name())
            .field("address", &self.inner.backend.address())
            .finish()
    }
}

impl Context {
    /// Opens a context on a backend (e.g. [`SoftBackend`](crate::soft::SoftBackend)).
    pub fn open(backend: Arc<impl Backend + 'static>) -> Context {
        let backend: Arc<dyn Backend> = backend;
        let router = Arc::new(Router::default());
        backend.set_event_sink(Arc::clone(&router) as Arc<dyn EventSink>);
        Context {
            inner: Arc::new(CtxInner {
                backend,
                router,
                next_cq: AtomicU32::new(1),
            }),
        }
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &'static str {
        self.inner.backend.name()
    }

    /// Where peers reach this device (IP and UDP port).
    pub fn address(&self) -> SocketAddr {
        self.inner.backend.address()
    }

    /// Allocates a protection domain.
    pub fn alloc_pd(&self) -> ProtectionDomain {
        let pd = self.inner.control(|c| c.nic.alloc_pd());
        ProtectionDomain {
            ctx: self.clone(),
            pd,
        }
    }

    /// Creates a completion queue of `cqe` entries, optionally tied to a channel.
    /// The queue grows past `cqe` rather than lose a completion; [`CompletionQueue::overflows`]
    /// counts how often it did.
    pub fn create_cq(&self, cqe: usize, channel: Option<&CompChannel>) -> CompletionQueue {
        let id = self.inner.next_cq.fetch_add(1, Ordering::Relaxed);
        CompletionQueue::new(id, cqe, channel)
    }

    /// Creates a completion channel (backed by an eventfd).
    pub fn create_comp_channel(&self) -> Result<CompChannel> {
        CompChannel::new()
    }

    /// The next asynchronous event, if any.
    pub fn poll_async_event(&self) -> Option<AsyncEvent> {
        lock(&self.inner.router.async_events).pop_front()
    }

    /// The engine's transport counters.
    pub fn stats(&self) -> Stats {
        self.inner.control(|c| *c.nic.stats())
    }

    /// The engine's drop counters (every dropped datagram, by reason).
    pub fn drops(&self) -> Drops {
        self.inner.control(|c| *c.nic.drops())
    }

    /// The backend datapath's counters.
    pub fn datapath_stats(&self) -> DatapathStats {
        self.inner.backend.datapath_stats()
    }

    /// The NIC's default QP configuration.
    pub fn default_qp_config(&self) -> QpConfig {
        self.inner.control(|c| c.nic.config().qp.clone())
    }

    /// Most scatter/gather elements a work request may carry on this device:
    /// [`MAX_SGE`](super::MAX_SGE), or 1 on a hardware data path.
    pub fn max_sge(&self) -> usize {
        self.inner.control(|c| c.nic.config().max_sge())
    }
}
