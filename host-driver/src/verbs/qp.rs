//! RC queue pairs (`ibv_qp`): creation, connection, posting.

use std::net::SocketAddr;
use std::sync::Arc;

use metaroce_firmware::SendWr;
use metaroce_proto::auth::AuthKey;

use super::router::{Pending, Route, lock};
use super::{
    CompletionQueue, Context, Error, MemoryRegion, PathStats, QpConfig, QpState, QpTransition,
    RecvWr, RemoteEnd, Result, SendOp, SgList, Sge, SharedReceiveQueue, VerbsError,
};

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
    pub(super) ctx: Context,
    /// Its shared receive queue, kept alive while the QP exists.
    pub(super) srq: Option<SharedReceiveQueue>,
    pub(super) qpn: u32,
    /// First send PSN: random (spec §11.1), told to the peer by `endpoint`.
    pub(super) psn: u32,
    pub(super) streams: u16,
    pub(super) max_inline: u32,
    pub(super) inline: Option<MemoryRegion>,
    pub(super) route: Arc<Route>,
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
        self.ctx.inner.router.remove_route(qpn);
    }
}
