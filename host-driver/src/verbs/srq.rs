//! Shared receive queues (`ibv_srq`).

use std::sync::Arc;

use super::context::CtxInner;
use super::{RecvWr, Result, SrqAttr};

/// An SRQ's number; destroys it in the engine when the last handle goes.
pub(super) struct SrqInner {
    pub(super) ctx: Arc<CtxInner>,
    pub(super) srqn: u32,
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
/// (created with it in [`QpInit::srq`](super::QpInit::srq)) whose SEND needs one; the completion goes to
/// that QP's receive CQ. It is destroyed when the last handle and the last QP using it
/// are gone.
#[derive(Clone)]
pub struct SharedReceiveQueue {
    pub(super) inner: Arc<SrqInner>,
}

impl std::fmt::Debug for SharedReceiveQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedReceiveQueue")
            .field("srqn", &self.inner.srqn)
            .finish()
    }
}

impl SharedReceiveQueue {
    /// Its number, as [`AsyncEvent::SrqLimitReached`](super::AsyncEvent::SrqLimitReached) reports it.
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
    /// receive that leaves fewer than `limit` posted, [`AsyncEvent::SrqLimitReached`](super::AsyncEvent::SrqLimitReached)
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
