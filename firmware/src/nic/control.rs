//! The Verbs-facing control operations: protection domains, memory regions, QPs and their transitions, posting work requests, SRQs.

use alloc::vec::Vec;

use super::{LINGER_PERIODS, Lingering, Nic};
use crate::config::{MAX_PATHS, QpConfig};
use crate::datapath::Datapath;
use crate::mr::{MemoryRegion, RegisterError};
use crate::qp::Qp;
use crate::srq::{Srq, SrqAttr};
use crate::verbs::{ATOMIC_LEN, QpState, QpTransition, RecvWr, SendWr, VerbsError, WcStatus};

impl Nic {
    /// Allocates a protection domain.
    pub fn alloc_pd(&mut self) -> u32 {
        self.next_pd += 1;
        self.next_pd - 1
    }

    /// Registers memory.
    pub fn register_mr(
        &mut self,
        pd: u32,
        addr: u64,
        len: u64,
        access: crate::mr::Access,
    ) -> Result<MemoryRegion, RegisterError> {
        self.shared.mrs.register(pd, addr, len, access)
    }

    /// Deregisters memory; false when the key is unknown.
    pub fn deregister_mr(&mut self, lkey: u32) -> bool {
        self.shared.mrs.deregister(lkey).is_some()
    }

    /// A random 32-bit PSN from the NIC's identifier generator, for an
    /// application to use as a QP's first send PSN (spec §11.1).
    pub fn random_psn(&mut self) -> u32 {
        self.ids.psn()
    }

    /// Creates a QP in RESET with the NIC's default QP configuration, or `cfg`.
    pub fn create_qp(&mut self, pd: u32, cfg: Option<QpConfig>) -> Result<u32, VerbsError> {
        let cfg = cfg.unwrap_or_else(|| self.cfg.qp.clone());
        if cfg.paths == 0 || cfg.paths > MAX_PATHS || cfg.streams == 0 || cfg.recv_window == 0 {
            return Err(VerbsError::InvalidArgument);
        }
        // The RTL keeps an MSN head for a few streams only (spec §6.5).
        if usize::from(cfg.streams) > self.cfg.max_streams() {
            return Err(VerbsError::InvalidArgument);
        }
        // The RTL has no authentication engine (spec §11.4).
        if cfg.auth.is_some() && self.cfg.datapath == Datapath::Hardware {
            return Err(VerbsError::InvalidArgument);
        }
        // A shared receive queue of the QP's protection domain.
        if let Some(srqn) = cfg.srq {
            let srq = self
                .shared
                .srqs
                .get_mut(&srqn.get())
                .ok_or(VerbsError::InvalidArgument)?;
            if srq.pd != pd {
                return Err(VerbsError::InvalidArgument);
            }
            srq.qps += 1;
        }
        let (qps, lingering) = (&self.qps, &self.lingering);
        let qpn = self
            .ids
            .qpn(|q| qps.contains_key(&q) || lingering.contains_key(&q));
        // The entropy generator's seed depends on the creation order only, so
        // a simulation's paths do not change with the identifiers.
        self.qps_created += 1;
        let seed = self.cfg.seed ^ u64::from(self.qps_created).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let hardware_table = self.cfg.datapath == Datapath::Hardware;
        self.qps.insert(
            qpn,
            Qp::new(qpn, pd, cfg, self.cfg.mtu, seed, hardware_table),
        );
        Ok(qpn)
    }

    /// Destroys a QP: it is gone for the Verbs calls at once, and outstanding work is
    /// dropped without completions (no event about it is produced any more, and it
    /// never touches memory again).
    ///
    /// A QP destroyed while connected (RTR or RTS) lingers: it still sends the ACKs (and
    /// NACKs) it owed, and acknowledges again any retransmission of a packet it had
    /// accepted and any path probe, so a peer whose last ACK was lost (or not sent yet:
    /// an application may destroy its QP as soon as it sees its last receive) still
    /// completes. A hardware NIC sends its ACKs before the host even sees the
    /// completion; on a lossy network even that is not enough without this. Anything else addressed
    /// to it is dropped (`unknown_qp`). It lingers for [`LINGER_PERIODS`] of its
    /// retransmission period (the larger of its connection timeout and its paths'
    /// RTOs), at most [`NicConfig::linger_max_ns`](crate::config::NicConfig::linger_max_ns), counted from the first time the
    /// engine sees after the call; [`Nic::lingering_qps`] counts such QPs.
    pub fn destroy_qp(&mut self, qpn: u32) -> Result<(), VerbsError> {
        let mut qp = self.qps.remove(&qpn).ok_or(VerbsError::NoSuchQp)?;
        self.timers.unfile(&mut qp);
        if let Some(srq) = qp
            .cfg()
            .srq
            .and_then(|n| self.shared.srqs.get_mut(&n.get()))
        {
            // Receives it took for messages that never came go back.
            srq.give_back(qp.drain_receives().collect::<Vec<_>>().into_iter());
            srq.qps -= 1;
        }
        let linger_ns = qp
            .close()
            .map_or(0, |period| period.saturating_mul(LINGER_PERIODS))
            .min(self.cfg.linger_max_ns);
        if linger_ns > 0 {
            Self::mark_ready(&mut self.ready, &mut qp);
            self.lingering.insert(
                qpn,
                Lingering {
                    qp,
                    linger_ns,
                    until: None,
                },
            );
            self.timers.start_lingering(qpn);
        }
        Ok(())
    }

    /// Destroyed QPs still lingering (see [`Nic::destroy_qp`]).
    pub fn lingering_qps(&self) -> usize {
        self.lingering.len()
    }

    /// Applies a Verbs state transition.
    pub fn modify_qp(&mut self, qpn: u32, t: QpTransition) -> Result<(), VerbsError> {
        let qp = self.qps.get_mut(&qpn).ok_or(VerbsError::NoSuchQp)?;
        // Each end's nonces start with its own QPN (spec §11.2): the two
        // ends of an authenticated connection need different ones.
        if let (QpTransition::Rtr(remote), Some(_)) = (t, qp.auth.as_ref())
            && remote.qpn == qpn
        {
            return Err(VerbsError::InvalidArgument);
        }
        qp.modify(t, &mut self.shared.events)?;
        if let (QpTransition::Rtr(remote), Some(auth)) = (t, qp.auth.as_mut()) {
            // The sequence numbers start at a random point, so a QP reset
            // and connected again under the same key does not repeat them.
            auth.peer_qpn = remote.qpn;
            let start = (u64::from(self.ids.psn()) << 32 | u64::from(self.ids.psn())) >> 2;
            auth.tx_seq = start.max(1);
            auth.rx = Default::default();
        }
        Self::touched(&mut self.ready, &mut self.timers, qp);
        Ok(())
    }

    /// A QP's state.
    pub fn qp_state(&self, qpn: u32) -> Option<QpState> {
        self.qps.get(&qpn).map(|q| q.state)
    }

    /// Sends DISCONNECT to the peer and moves the QP to ERR.
    pub fn disconnect(&mut self, qpn: u32) -> Result<(), VerbsError> {
        let qp = self.qps.get_mut(&qpn).ok_or(VerbsError::NoSuchQp)?;
        qp.disconnect(&mut self.shared.events);
        Self::touched(&mut self.ready, &mut self.timers, qp);
        Ok(())
    }

    /// Posts a send work request. A local protection error (an element of
    /// its list with a bad lkey or range) completes the request with
    /// `LocProtErr` and fails the QP, as Verbs hardware does; a call the QP
    /// cannot take returns an error and changes nothing.
    pub fn post_send(&mut self, qpn: u32, wr: SendWr) -> Result<(), VerbsError> {
        let qp = self.qps.get_mut(&qpn).ok_or(VerbsError::NoSuchQp)?;
        if qp.state != QpState::Rts {
            return Err(VerbsError::WrongState);
        }
        let len = self.cfg.message_len(&wr.sgl)?;
        // An atomic's local buffer is the 8 bytes its value lands in.
        if wr.op.is_atomic() && (len != ATOMIC_LEN || !self.cfg.has_atomics()) {
            return Err(VerbsError::InvalidArgument);
        }
        let write_local = wr.op.writes_local();
        let local_ok = self
            .shared
            .mrs
            .check_local_all(qp.pd, wr.sgl.as_slice().iter().copied(), write_local)
            .is_ok();
        let key = qp.post_send(&wr, len)?;
        if !local_ok {
            qp.refuse_send(key, WcStatus::LocProtErr);
            qp.fail(WcStatus::LocProtErr, &mut self.shared.events);
            self.timers.rearm(qp);
            return Ok(());
        }
        Self::touched(&mut self.ready, &mut self.timers, qp);
        Ok(())
    }

    /// Posts a receive work request; `InvalidArgument` (nothing posted) when
    /// an element of its list is not covered by its lkey with LOCAL_WRITE, or
    /// the QP takes its receives from a shared receive queue.
    pub fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> Result<(), VerbsError> {
        let qp = self.qps.get_mut(&qpn).ok_or(VerbsError::NoSuchQp)?;
        if qp.state == QpState::Reset {
            return Err(VerbsError::WrongState);
        }
        if qp.cfg().srq.is_some() {
            return Err(VerbsError::InvalidArgument);
        }
        self.cfg.message_len(&wr.sgl)?;
        self.shared
            .mrs
            .check_local_all(qp.pd, wr.sgl.as_slice().iter().copied(), true)
            .map_err(|_| VerbsError::InvalidArgument)?;
        qp.post_recv(wr, &mut self.shared.events)?;
        Self::touched(&mut self.ready, &mut self.timers, qp);
        Ok(())
    }

    /// Creates a shared receive queue of `max_wr` receives in protection
    /// domain `pd`; returns its number, never 0. A QP created with it
    /// ([`QpConfig::srq`]) takes its receives from it. On the hardware data
    /// path a receive moves from the SRQ to the QP's stream (and so into the
    /// RTL's receive ring) when a message for it first arrives: the RTL
    /// refuses that arrival (RNR) and places the retransmission.
    pub fn create_srq(&mut self, pd: u32, max_wr: usize) -> Result<u32, VerbsError> {
        if max_wr == 0 {
            return Err(VerbsError::InvalidArgument);
        }
        let srqn = self.shared.srqs.last_key_value().map_or(1, |(&n, _)| n + 1);
        self.shared.srqs.insert(srqn, Srq::new(pd, max_wr));
        Ok(srqn)
    }

    /// Arms the limit of a shared receive queue (`ibv_modify_srq` with
    /// `IBV_SRQ_LIMIT`): once a QP takes a receive that leaves fewer than
    /// `limit` posted, [`Event::SrqLimitReached`](super::Event::SrqLimitReached) is reported and the limit
    /// disarms. 0 disarms it; a limit above its size is refused.
    pub fn arm_srq_limit(&mut self, srqn: u32, limit: u32) -> Result<(), VerbsError> {
        let srq = self
            .shared
            .srqs
            .get_mut(&srqn)
            .ok_or(VerbsError::InvalidArgument)?;
        srq.set_limit(limit)
    }

    /// A shared receive queue's attributes.
    pub fn query_srq(&self, srqn: u32) -> Option<SrqAttr> {
        self.shared.srqs.get(&srqn).map(Srq::attr)
    }

    /// Destroys a shared receive queue (its posted receives are dropped without
    /// completions); `InUse` while a QP takes its receives from it.
    pub fn destroy_srq(&mut self, srqn: u32) -> Result<(), VerbsError> {
        let srq = self
            .shared
            .srqs
            .get(&srqn)
            .ok_or(VerbsError::InvalidArgument)?;
        if srq.qps > 0 {
            return Err(VerbsError::InUse);
        }
        self.shared.srqs.remove(&srqn);
        Ok(())
    }

    /// Posts a receive on a shared receive queue; `InvalidArgument` when an
    /// element of its list is not covered by its lkey with LOCAL_WRITE in the
    /// queue's protection domain, `QueueFull` when it holds its `max_wr`.
    pub fn post_srq_recv(&mut self, srqn: u32, wr: RecvWr) -> Result<(), VerbsError> {
        let srq = self
            .shared
            .srqs
            .get_mut(&srqn)
            .ok_or(VerbsError::InvalidArgument)?;
        self.cfg.message_len(&wr.sgl)?;
        self.shared
            .mrs
            .check_local_all(srq.pd, wr.sgl.as_slice().iter().copied(), true)
            .map_err(|_| VerbsError::InvalidArgument)?;
        srq.post(wr)
    }
}
