//! The Verbs-style API: context, protection domains, memory regions, completion queues
//! and channels, RC queue pairs — over any [`Backend`](crate::backend::Backend).
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

use metaroce_firmware::Completion;
pub use metaroce_firmware::{
    Access, Drops, MAX_SGE, NicConfig, PathStats, QpConfig, QpState, QpTransition, RecvWr,
    RegisterError, RemoteEnd, SendOp, SgList, Sge, SrqAttr, Stats, VerbsError, WcOpcode, WcStatus,
};
pub use metaroce_proto::auth::AuthKey;

mod context;
mod cq;
mod pd;
mod qp;
mod router;
mod srq;

pub use context::Context;
pub use cq::{CompChannel, CompletionQueue};
pub use pd::{MemoryRegion, ProtectionDomain};
pub use qp::{ConnectOptions, Payload, QpEndpoint, QpInit, QueuePair, SendRequest};
pub use srq::SharedReceiveQueue;

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
