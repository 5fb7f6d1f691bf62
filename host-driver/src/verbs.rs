//! The Verbs-style API: context, protection domains, memory regions, completion queues
//! and channels, RC queue pairs — over any [`Backend`].
//!
//! ```no_run
//! use metaroce_driver::soft::SoftBackend;
//! use metaroce_driver::verbs::*;
//! # fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
//! let ctx = Context::open(SoftBackend::on("127.0.0.1".parse()?)?);
//! let pd = ctx.alloc_pd();
//! let mr = pd.alloc_mr(1 << 20, Access::LOCAL_WRITE | Access::REMOTE_WRITE)?;
//! let cq = ctx.create_cq(256, None);
//! let qp = pd.create_qp(&QpInit::new(&cq, &cq))?;
//! // ... exchange `qp.endpoint()` with the peer, then:
//! # let peer = qp.endpoint();
//! qp.connect(&peer, &ConnectOptions::default())?;
//! qp.post_send(&SendRequest::write(1, mr.sge(0, 4096), peer_va(), peer_rkey()))?;
//! let mut wc = [Wc::default(); 16];
//! let n = cq.poll(&mut wc);
//! # fn peer_va() -> u64 { 0 } fn peer_rkey() -> u32 { 0 }
//! # Ok(()) }
//! ```
//!
//! Semantics follow ibverbs: a call the QP cannot take returns an error and changes
//! nothing ([`Error::errno`] gives the errno ibverbs would return); a local protection
//! problem (an lkey or range outside registered memory) is reported as a completion
//! with [`WcStatus::LocProtErr`] and moves the QP to ERR, as hardware does.
//!
//! Extensions for MetaRoCE: [`QpConfig`] (paths, streams, windows, timeouts) at QP
//! creation, a `stream` on every work request, and [`QueuePair::path_stats`].

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

pub use metaroce_firmware::{
    Access, Drops, MAX_SGE, NicConfig, PathStats, QpConfig, QpState, QpTransition, RecvWr,
    RegisterError, RemoteEnd, SendOp, SgList, Sge, SrqAttr, Stats, VerbsError, WcOpcode, WcStatus,
};
use metaroce_firmware::{Completion, Event, SendWr};
pub use metaroce_proto::auth::AuthKey;

use crate::backend::{Backend, Control, DatapathStats, EventSink};
use crate::eventfd::EventFd;
use crate::hostmem::HostBuffer;

/// Errors of Verbs calls.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine refused the call (state, queue, stream, length).
    #[error(transparent)]
    Verbs(#[from] VerbsError),
    /// Memory registration was refused.
    #[error(transparent)]
    Register(#[from] RegisterError),
    /// An invalid argument caught by the Verbs layer.
    #[error("invalid argument: {0}")]
    Invalid(&'static str),
    /// An OS call failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    /// The errno ibverbs returns for this failure.
    pub fn errno(&self) -> i32 {
        match self {
            Error::Verbs(VerbsError::QueueFull) => libc::ENOMEM,
            Error::Verbs(VerbsError::NoSuchQp) => libc::ENOENT,
            Error::Verbs(VerbsError::InUse) => libc::EBUSY,
            Error::Io(e) => e.raw_os_error().unwrap_or(libc::EIO),
            _ => libc::EINVAL,
        }
    }
}

/// Result of Verbs calls.
pub type Result<T> = std::result::Result<T, Error>;

/// The numeric `enum ibv_wc_status` value of a completion status.
pub fn ibv_wc_status(s: WcStatus) -> u32 {
    match s {
        WcStatus::Success => 0,
        WcStatus::LocLenErr => 1,
        WcStatus::LocQpOpErr => 2,
        WcStatus::LocProtErr => 4,
        WcStatus::WrFlushErr => 5,
        WcStatus::BadRespErr => 7,
        WcStatus::RemInvReqErr => 9,
        WcStatus::RemAccessErr => 10,
        WcStatus::RemOpErr => 11,
        WcStatus::RetryExcErr => 12,
        WcStatus::RnrRetryExcErr => 13,
    }
}

/// A work completion (`struct ibv_wc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wc {
    /// The work request's id.
    pub wr_id: u64,
    /// Outcome.
    pub status: WcStatus,
    /// What completed.
    pub opcode: WcOpcode,
    /// Bytes transferred (receives: bytes placed).
    pub byte_len: u32,
    /// Immediate data, if the message carried one.
    pub imm: Option<u32>,
    /// QP number.
    pub qp_num: u32,
    /// Stream (MetaRoCE extension; 0 for plain Verbs).
    pub stream: u16,
    /// The sender asked for a solicited event.
    pub solicited: bool,
}

impl Default for Wc {
    fn default() -> Self {
        Wc {
            wr_id: 0,
            status: WcStatus::Success,
            opcode: WcOpcode::Send,
            byte_len: 0,
            imm: None,
            qp_num: 0,
            stream: 0,
            solicited: false,
        }
    }
}

impl Wc {
    fn from_engine(c: &Completion, wr_id: u64) -> Self {
        Wc {
            wr_id,
            status: c.status,
            opcode: c.opcode,
            byte_len: c.byte_len,
            imm: c.imm,
            qp_num: c.qpn,
            stream: c.stream,
            solicited: c.solicited,
        }
    }
}

/// An asynchronous event (`ibv_get_async_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsyncEvent {
    /// A QP moved to ERR (IBV_EVENT_QP_FATAL), with the reason.
    QpFatal {
        /// The QP.
        qp_num: u32,
        /// Why.
        status: WcStatus,
    },
    /// The device failed and its datapath stopped (IBV_EVENT_DEVICE_FATAL): every QP
    /// was flushed; the context can only be closed.
    DeviceFatal,
    /// A shared receive queue fell below its armed limit
    /// (IBV_EVENT_SRQ_LIMIT_REACHED; the limit is disarmed).
    SrqLimitReached {
        /// The queue ([`SharedReceiveQueue::handle`]).
        srq: u32,
    },
}

// ---------------------------------------------------------------------------------------
// Event routing.

/// One outstanding send work request.
#[derive(Clone, Copy)]
struct Pending {
    wr_id: u64,
    signaled: bool,
}

/// The send queue's slots: engine work requests carry a slot index as their id, so the
/// Verbs layer can hide unsignaled successes and reuse inline buffers safely.
struct SendSlots {
    slots: Vec<Option<Pending>>,
    free: Vec<u32>,
}

impl SendSlots {
    fn new(depth: usize) -> Self {
        SendSlots {
            slots: vec![None; depth],
            free: (0..depth as u32).rev().collect(),
        }
    }
}

/// Where a QP's completions go.
struct Route {
    send_cq: Arc<CqInner>,
    recv_cq: Arc<CqInner>,
    sq: Mutex<SendSlots>,
}

#[derive(Default)]
struct Router {
    routes: RwLock<HashMap<u32, Arc<Route>>>,
    async_events: Mutex<VecDeque<AsyncEvent>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl EventSink for Router {
    fn deliver(&self, event: Event) {
        match event {
            Event::Completion(c) => {
                let routes = self.routes.read().unwrap_or_else(|p| p.into_inner());
                let Some(route) = routes.get(&c.qpn) else {
                    return;
                };
                if c.is_recv {
                    route.recv_cq.push(Wc::from_engine(&c, c.wr_id));
                    return;
                }
                let mut sq = lock(&route.sq);
                let Some(p) = sq.slots.get_mut(c.wr_id as usize).and_then(Option::take) else {
                    return;
                };
                sq.free.push(c.wr_id as u32);
                drop(sq);
                if p.signaled || c.status != WcStatus::Success {
                    route.send_cq.push(Wc::from_engine(&c, p.wr_id));
                }
            }
            Event::QpError { qpn, status } => {
                lock(&self.async_events).push_back(AsyncEvent::QpFatal {
                    qp_num: qpn,
                    status,
                });
            }
            Event::SrqLimitReached { srqn } => {
                lock(&self.async_events).push_back(AsyncEvent::SrqLimitReached { srq: srqn });
            }
        }
    }

    fn device_fatal(&self, _why: &str) {
        lock(&self.async_events).push_back(AsyncEvent::DeviceFatal);
    }
}

// ---------------------------------------------------------------------------------------
// Context.

struct CtxInner {
    backend: Arc<dyn Backend>,
    router: Arc<Router>,
    next_cq: AtomicU32,
}

impl CtxInner {
    fn control<R>(&self, f: impl FnOnce(Control<'_>) -> R) -> R {
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
    inner: Arc<CtxInner>,
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

    /// Creates a completion channel (backed by an eventfd).
    pub fn create_comp_channel(&self) -> Result<CompChannel> {
        Ok(CompChannel {
            inner: Arc::new(ChannelInner {
                fd: EventFd::new()?,
                fired: Mutex::new(VecDeque::new()),
            }),
        })
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
    /// [`MAX_SGE`], or 1 on a hardware data path.
    pub fn max_sge(&self) -> usize {
        self.inner.control(|c| c.nic.config().max_sge())
    }
}

// ---------------------------------------------------------------------------------------
// Protection domain and memory regions.

/// A protection domain (`ibv_pd`).
pub struct ProtectionDomain {
    ctx: Context,
    pd: u32,
}

impl std::fmt::Debug for ProtectionDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectionDomain")
            .field("pd", &self.pd)
            .finish()
    }
}

impl ProtectionDomain {
    /// Registers a new zeroed buffer of `len` bytes.
    pub fn alloc_mr(&self, len: usize, access: Access) -> Result<MemoryRegion> {
        if len == 0 {
            return Err(Error::Register(RegisterError::InvalidRange));
        }
        self.reg_mr(HostBuffer::zeroed(len), access)
    }

    /// Registers `buf`; the region owns it, so the NIC can never touch freed memory.
    pub fn reg_mr(&self, buf: HostBuffer, access: Access) -> Result<MemoryRegion> {
        let buf = Arc::new(buf);
        let (pd, addr, len) = (self.pd, buf.addr(), buf.len() as u64);
        let mr = self.ctx.inner.control(|c| {
            let mr = c.nic.register_mr(pd, addr, len, access)?;
            c.memory.insert(Arc::clone(&buf));
            Ok::<_, Error>(mr)
        })?;
        Ok(MemoryRegion {
            ctx: Arc::clone(&self.ctx.inner),
            buf,
            mr,
        })
    }

    /// Creates a shared receive queue of `max_wr` receives.
    pub fn create_srq(&self, max_wr: usize) -> Result<SharedReceiveQueue> {
        let pd = self.pd;
        let srqn = self.ctx.inner.control(|c| c.nic.create_srq(pd, max_wr))?;
        Ok(SharedReceiveQueue {
            inner: Arc::new(SrqInner {
                ctx: Arc::clone(&self.ctx.inner),
                srqn,
            }),
        })
    }

    /// Creates an RC queue pair in RESET.
    pub fn create_qp(&self, init: &QpInit<'_>) -> Result<QueuePair> {
        let mut cfg = match &init.config {
            Some(c) => c.clone(),
            None => self.ctx.default_qp_config(),
        };
        cfg.srq = init
            .srq
            .and_then(|s| std::num::NonZeroU32::new(s.inner.srqn));
        let depth = cfg.max_send_wr.clamp(1, 1 << 20);
        let inline = if init.max_inline > 0 {
            let len = init.max_inline as usize * depth;
            Some(self.alloc_mr(len, Access::LOCAL_WRITE)?)
        } else {
            None
        };
        let pd = self.pd;
        let (qpn, psn) = self.ctx.inner.control(|c| {
            let qpn = c.nic.create_qp(pd, Some(cfg.clone()))?;
            Ok::<_, VerbsError>((qpn, c.nic.random_psn()))
        })?;
        let route = Arc::new(Route {
            send_cq: Arc::clone(&init.send_cq.inner),
            recv_cq: Arc::clone(&init.recv_cq.inner),
            sq: Mutex::new(SendSlots::new(depth)),
        });
        self.ctx
            .inner
            .router
            .routes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(qpn, Arc::clone(&route));
        Ok(QueuePair {
            ctx: self.ctx.clone(),
            srq: init.srq.cloned(),
            qpn,
            psn,
            streams: cfg.streams,
            max_inline: init.max_inline,
            inline,
            route,
        })
    }

    /// The protection domain number.
    pub fn handle(&self) -> u32 {
        self.pd
    }
}

/// A registered memory region (`ibv_mr`) that owns its buffer. Dropping it deregisters
/// the region and takes the buffer away from the datapath before it is freed.
pub struct MemoryRegion {
    ctx: Arc<CtxInner>,
    buf: Arc<HostBuffer>,
    mr: metaroce_firmware::MemoryRegion,
}

impl std::fmt::Debug for MemoryRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRegion")
            .field("addr", &format_args!("{:#x}", self.mr.addr))
            .field("len", &self.mr.len)
            .field("lkey", &self.mr.lkey)
            .field("rkey", &self.mr.rkey)
            .finish()
    }
}

impl MemoryRegion {
    /// Address of the first byte.
    pub fn addr(&self) -> u64 {
        self.mr.addr
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Always false (regions are never empty).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Local key.
    pub fn lkey(&self) -> u32 {
        self.mr.lkey
    }
    /// Remote key.
    pub fn rkey(&self) -> u32 {
        self.mr.rkey
    }
    /// Access rights.
    pub fn access(&self) -> Access {
        self.mr.access
    }
    /// A scatter/gather element for `offset..offset + len` of this region (not checked
    /// here; the NIC checks it when the work request runs).
    pub fn sge(&self, offset: usize, len: u32) -> Sge {
        Sge {
            addr: self.mr.addr.wrapping_add(offset as u64),
            len,
            lkey: self.mr.lkey,
        }
    }
    /// Copies `data` into the region at `offset`; false if it does not fit.
    pub fn write(&self, offset: usize, data: &[u8]) -> bool {
        self.buf.write_at(offset, data)
    }
    /// Copies the region's bytes at `offset` into `out`; false if out of range.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> bool {
        self.buf.read_at(offset, out)
    }
    /// True if the bytes at `offset` equal `expected`.
    pub fn equals(&self, offset: usize, expected: &[u8]) -> bool {
        self.buf.equals(offset, expected)
    }
    /// The region's contents, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.len()];
        self.buf.read_at(0, &mut v);
        v
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        let (lkey, addr) = (self.mr.lkey, self.mr.addr);
        self.ctx.control(|c| {
            c.nic.deregister_mr(lkey);
            c.memory.remove(addr);
        });
    }
}

// ---------------------------------------------------------------------------------------
// Completion queues and channels.

struct CqInner {
    id: u32,
    cqe: usize,
    queue: Mutex<VecDeque<Wc>>,
    overflows: AtomicU64,
    armed: AtomicBool,
    solicited_only: AtomicBool,
    channel: Option<Arc<ChannelInner>>,
}

impl CqInner {
    fn push(&self, wc: Wc) {
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
    inner: Arc<CqInner>,
}

impl std::fmt::Debug for CompletionQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionQueue")
            .field("id", &self.inner.id)
            .finish()
    }
}

impl CompletionQueue {
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

struct ChannelInner {
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

// ---------------------------------------------------------------------------------------
// Queue pairs.

/// How to create a queue pair (`ibv_qp_init_attr`).
#[derive(Debug)]
pub struct QpInit<'a> {
    /// Completions of send work requests.
    pub send_cq: &'a CompletionQueue,
    /// Completions of receive work requests.
    pub recv_cq: &'a CompletionQueue,
    /// MetaRoCE settings (paths, streams, windows); `None`: the NIC's default.
    pub config: Option<QpConfig>,
    /// Largest inline payload (`max_inline_data`).
    pub max_inline: u32,
    /// The shared receive queue its receives come from (`srq`); `None`: its own.
    pub srq: Option<&'a SharedReceiveQueue>,
}

impl<'a> QpInit<'a> {
    /// Authenticated mode (spec §11.2) with the connection key `key`, agreed with the
    /// peer out of band like the QPN; both ends must use it. Starts from
    /// [`QpConfig::default`] when no configuration is set.
    pub fn with_auth(mut self, key: AuthKey) -> Self {
        self.config.get_or_insert_with(QpConfig::default).auth = Some(key);
        self
    }

    /// Default settings with 64 bytes of inline data.
    pub fn new(send_cq: &'a CompletionQueue, recv_cq: &'a CompletionQueue) -> Self {
        QpInit {
            send_cq,
            recv_cq,
            config: None,
            max_inline: 64,
            srq: None,
        }
    }
}

/// What a peer needs to connect to a QP (exchanged out of band).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpEndpoint {
    /// QP number.
    pub qpn: u32,
    /// Where to send to reach it (its NIC's address, or a relay in front of it).
    pub addr: SocketAddr,
    /// First PSN it sends.
    pub psn: u32,
}

/// Retry and timeout settings for [`QueuePair::connect`] (the RTR/RTS attributes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectOptions {
    /// Timeouts without progress tolerated before RETRY_EXC_ERR (0–7).
    pub retry_cnt: u8,
    /// RNR retries (7 = unlimited).
    pub rnr_retry: u8,
    /// Connection timeout base, ns.
    pub timeout_ns: u64,
}

impl Default for ConnectOptions {
    /// 7 retries, unlimited RNR retries, 4 ms timeout.
    fn default() -> Self {
        ConnectOptions {
            retry_cnt: 7,
            rnr_retry: 7,
            timeout_ns: 4_000_000,
        }
    }
}

/// Where a send's local data comes from.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// A registered buffer.
    Sge(Sge),
    /// Registered buffers, gathered in order (a READ scatters into them): up to
    /// [`Context::max_sge`] of them.
    Sges(&'a [Sge]),
    /// Bytes copied at post time (`IBV_SEND_INLINE`); no registration needed.
    Inline(&'a [u8]),
}

/// A send work request (`ibv_send_wr`).
#[derive(Debug, Clone, Copy)]
pub struct SendRequest<'a> {
    /// Caller's id, returned in the completion.
    pub wr_id: u64,
    /// Operation.
    pub op: SendOp,
    /// Local data (destination for READ).
    pub payload: Payload<'a>,
    /// Report a completion on success (`IBV_SEND_SIGNALED`); failures always complete.
    pub signaled: bool,
    /// Ask the peer for a solicited event.
    pub solicited: bool,
    /// Stream (MetaRoCE extension).
    pub stream: u16,
}

impl<'a> SendRequest<'a> {
    /// A signaled request on stream 0.
    pub fn new(wr_id: u64, op: SendOp, payload: Payload<'a>) -> Self {
        SendRequest {
            wr_id,
            op,
            payload,
            signaled: true,
            solicited: false,
            stream: 0,
        }
    }
    /// RDMA WRITE of `sge` to `remote_va`.
    pub fn write(wr_id: u64, sge: Sge, remote_va: u64, rkey: u32) -> Self {
        Self::new(wr_id, SendOp::Write { remote_va, rkey }, Payload::Sge(sge))
    }
    /// SEND of `sge`.
    pub fn send(wr_id: u64, sge: Sge) -> Self {
        Self::new(wr_id, SendOp::Send, Payload::Sge(sge))
    }
    /// RDMA READ from `remote_va` into `sge`.
    pub fn read(wr_id: u64, sge: Sge, remote_va: u64, rkey: u32) -> Self {
        Self::new(wr_id, SendOp::Read { remote_va, rkey }, Payload::Sge(sge))
    }
    /// Sets `signaled`.
    pub fn signaled(mut self, yes: bool) -> Self {
        self.signaled = yes;
        self
    }
    /// Sets the stream.
    pub fn on_stream(mut self, stream: u16) -> Self {
        self.stream = stream;
        self
    }
}

/// A reliable-connected queue pair (`ibv_qp`). Dropping it destroys the QP: no
/// completion of it is delivered afterwards and the NIC no longer touches memory for it,
/// but a connected QP lingers in the NIC for a bounded time, sending the ACKs it owed
/// and re-acknowledging retransmissions of what it received, so the peer's last sends
/// complete (see [`Nic::destroy_qp`](metaroce_firmware::Nic::destroy_qp)).
pub struct QueuePair {
    ctx: Context,
    /// Its shared receive queue, kept alive while the QP exists.
    srq: Option<SharedReceiveQueue>,
    qpn: u32,
    /// First send PSN: random (spec §11.1), told to the peer by `endpoint`.
    psn: u32,
    streams: u16,
    max_inline: u32,
    inline: Option<MemoryRegion>,
    route: Arc<Route>,
}

impl std::fmt::Debug for QueuePair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueuePair").field("qpn", &self.qpn).finish()
    }
}

impl QueuePair {
    /// QP number.
    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    /// Current state.
    pub fn state(&self) -> QpState {
        let qpn = self.qpn;
        self.ctx
            .inner
            .control(|c| c.nic.qp_state(qpn))
            .unwrap_or(QpState::Error)
    }

    /// Applies a state transition (`ibv_modify_qp`).
    pub fn modify(&self, t: QpTransition) -> Result<()> {
        let qpn = self.qpn;
        self.ctx.inner.control(|c| c.nic.modify_qp(qpn, t))?;
        Ok(())
    }

    /// What the peer needs to connect here, with this device's own address.
    pub fn endpoint(&self) -> QpEndpoint {
        QpEndpoint {
            qpn: self.qpn,
            addr: self.ctx.address(),
            psn: self.psn,
        }
    }

    /// RESET → INIT → RTR → RTS towards `peer`.
    pub fn connect(&self, peer: &QpEndpoint, opts: &ConnectOptions) -> Result<()> {
        if self.state() == QpState::Reset {
            self.modify(QpTransition::Init)?;
        }
        self.modify(QpTransition::Rtr(RemoteEnd {
            qpn: peer.qpn,
            ip: peer.addr.ip(),
            udp_port: peer.addr.port(),
            initial_psn: peer.psn,
        }))?;
        self.modify(QpTransition::Rts {
            initial_psn: self.psn,
            retry_cnt: opts.retry_cnt,
            rnr_retry: opts.rnr_retry,
            timeout_ns: opts.timeout_ns,
        })
    }

    /// Posts a send work request (`ibv_post_send`).
    pub fn post_send(&self, wr: &SendRequest<'_>) -> Result<()> {
        if wr.stream >= self.streams {
            return Err(VerbsError::InvalidStream.into());
        }
        let slot = {
            let mut sq = lock(&self.route.sq);
            let Some(slot) = sq.free.pop() else {
                return Err(VerbsError::QueueFull.into());
            };
            sq.slots[slot as usize] = Some(Pending {
                wr_id: wr.wr_id,
                signaled: wr.signaled,
            });
            slot
        };
        let res = self.stage_and_post(wr, slot);
        if res.is_err() {
            let mut sq = lock(&self.route.sq);
            sq.slots[slot as usize] = None;
            sq.free.push(slot);
        }
        res
    }

    fn stage_and_post(&self, wr: &SendRequest<'_>, slot: u32) -> Result<()> {
        let sgl = match wr.payload {
            Payload::Sge(sge) => sge.into(),
            Payload::Sges(sges) => SgList::new(sges)?,
            Payload::Inline(data) => {
                if wr.op.writes_local() {
                    return Err(Error::Invalid("READ and atomics cannot be inline"));
                }
                let (Some(arena), true) = (&self.inline, data.len() <= self.max_inline as usize)
                else {
                    return Err(Error::Invalid("inline data longer than max_inline"));
                };
                // The slot is ours until its completion arrives, so is its inline buffer.
                let off = slot as usize * self.max_inline as usize;
                arena.write(off, data);
                arena.sge(off, data.len() as u32).into()
            }
        };
        let ewr = SendWr {
            wr_id: u64::from(slot),
            op: wr.op,
            sgl,
            signaled: true,
            solicited: wr.solicited,
            stream: wr.stream,
        };
        let qpn = self.qpn;
        self.ctx.inner.control(|c| c.nic.post_send(qpn, ewr))?;
        Ok(())
    }

    /// Posts a receive work request (`ibv_post_recv`); refused on a QP with a
    /// shared receive queue.
    pub fn post_recv(&self, wr: RecvWr) -> Result<()> {
        if wr.stream >= self.streams {
            return Err(VerbsError::InvalidStream.into());
        }
        let qpn = self.qpn;
        self.ctx.inner.control(|c| c.nic.post_recv(qpn, wr))?;
        Ok(())
    }

    /// The shared receive queue its receives come from, if any.
    pub fn srq(&self) -> Option<&SharedReceiveQueue> {
        self.srq.as_ref()
    }

    /// Per-path state and counters (MetaRoCE extension).
    pub fn path_stats(&self) -> Vec<PathStats> {
        let qpn = self.qpn;
        self.ctx
            .inner
            .control(|c| c.nic.path_stats(qpn))
            .unwrap_or_default()
    }

    /// Send work requests posted and not yet completed.
    pub fn outstanding_sends(&self) -> usize {
        let sq = lock(&self.route.sq);
        sq.slots.len() - sq.free.len()
    }
}

impl Drop for QueuePair {
    fn drop(&mut self) {
        let qpn = self.qpn;
        self.ctx.inner.control(|c| {
            // The QP exists until here; destroying it cannot fail.
            let _ = c.nic.destroy_qp(qpn);
        });
        self.ctx
            .inner
            .router
            .routes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&qpn);
    }
}

// ---------------------------------------------------------------------------------------
// Shared receive queues.

struct SrqInner {
    ctx: Arc<CtxInner>,
    srqn: u32,
}

impl Drop for SrqInner {
    fn drop(&mut self) {
        let srqn = self.srqn;
        // The last QP using it is gone (each holds a reference): this cannot fail.
        self.ctx.control(|c| {
            let _ = c.nic.destroy_srq(srqn);
        });
    }
}

/// A shared receive queue (`ibv_srq`): receives posted once, each taken by the QP
/// (created with it in [`QpInit::srq`]) whose SEND needs one; the completion goes to
/// that QP's receive CQ. It is destroyed when the last handle and the last QP using it
/// are gone.
#[derive(Clone)]
pub struct SharedReceiveQueue {
    inner: Arc<SrqInner>,
}

impl std::fmt::Debug for SharedReceiveQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedReceiveQueue")
            .field("srqn", &self.inner.srqn)
            .finish()
    }
}

impl SharedReceiveQueue {
    /// Its number, as [`AsyncEvent::SrqLimitReached`] reports it.
    pub fn handle(&self) -> u32 {
        self.inner.srqn
    }

    /// Posts a receive (`ibv_post_srq_recv`); its `stream` is set by the QP that
    /// takes it.
    pub fn post_recv(&self, wr: RecvWr) -> Result<()> {
        let srqn = self.inner.srqn;
        self.inner.ctx.control(|c| c.nic.post_srq_recv(srqn, wr))?;
        Ok(())
    }

    /// Arms the limit (`ibv_modify_srq` with `IBV_SRQ_LIMIT`): when a QP takes a
    /// receive that leaves fewer than `limit` posted, [`AsyncEvent::SrqLimitReached`]
    /// is reported once; 0 disarms.
    pub fn arm_limit(&self, limit: u32) -> Result<()> {
        let srqn = self.inner.srqn;
        self.inner
            .ctx
            .control(|c| c.nic.arm_srq_limit(srqn, limit))?;
        Ok(())
    }

    /// Its size, armed limit and receives posted (`ibv_query_srq`).
    pub fn query(&self) -> SrqAttr {
        let srqn = self.inner.srqn;
        self.inner
            .ctx
            .control(|c| c.nic.query_srq(srqn))
            .expect("a live handle's queue exists")
    }
}
