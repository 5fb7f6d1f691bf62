//! The NIC: the sans-IO endpoint a backend drives.
//!
//! The backend hands in datagrams with [`Nic::handle_datagram`], asks for
//! datagrams to send with [`Nic::poll_transmit`], fires timers with
//! [`Nic::handle_timeout`] at [`Nic::poll_timeout`], and collects completions
//! with [`Nic::poll_event`]. Time is always passed in, in nanoseconds.
//!
//! On the hardware data path ([`crate::datapath`]) the RTL's verdict events
//! go in through [`Nic::handle_placed`] (and the bytes of the packets it
//! passes up through [`Nic::handle_datagram`]), and [`Nic::poll_hardware`]
//! takes the place of [`Nic::poll_transmit`].

use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::vec::Vec;
use core::net::IpAddr;

use metaroce_proto::{
    BASE_LEN, Ext, ICRC_LEN, MsgRepr, Opcode, Packet, PseudoHeader, Repr, VERSION,
};

use crate::config::{MAX_PATHS, NicConfig, QpConfig};
use crate::counters::{Drops, Stats};
use crate::ctx::Shared;
use crate::datapath::{
    Datapath, HW_MAX_STREAMS, HwTransmit, HwVerdict, PlacedPacket, TableDone, TableRequest,
};
use crate::ids::IdGen;
use crate::memory::Memory;
use crate::mr::{MemoryRegion, MrTable, RegisterError};
use crate::path::{PathStats, PathView, SlotFate};
use crate::ports::PortsReady;
use crate::qp::{PseudoLocal, Qp, RxData};
use crate::srq::{Srq, SrqAttr, Srqs};
use crate::verbs::{
    ATOMIC_LEN, MAX_SGE, QpState, QpTransition, RecvWr, RemoteEnd, SendWr, SgList, Sge, VerbsError,
    WcStatus,
};
use metaroce_proto::auth::AUTH_TRAILER_LEN;

/// Metadata of a received datagram, from the IP and UDP headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxMeta {
    /// Source IP address.
    pub src_ip: IpAddr,
    /// UDP source port (the sender's path entropy).
    pub src_port: u16,
    /// Destination IP address.
    pub dst_ip: IpAddr,
    /// UDP destination port.
    pub dst_port: u16,
    /// The IP ECN field was CE.
    pub ecn_ce: bool,
}

/// A datagram the NIC wants sent; its bytes are the first `len` of the buffer
/// given to [`Nic::poll_transmit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Destination IP address.
    pub dst_ip: IpAddr,
    /// UDP destination port.
    pub dst_port: u16,
    /// UDP source port: the path's entropy value. With
    /// [`NicConfig::source_ports`] the datagram leaves from
    /// [`NicConfig::wire_port`] of it, which its ICRC already covers.
    pub src_port: u16,
    /// Datagram length.
    pub len: usize,
    /// Send as ECN-capable (ECT(0)).
    pub ecn_capable: bool,
}

/// Something the application should know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A work completion.
    Completion(crate::verbs::Completion),
    /// A QP moved to ERR.
    QpError {
        /// The QP.
        qpn: u32,
        /// Why.
        status: WcStatus,
    },
    /// A QP took a receive from a shared receive queue and left fewer posted
    /// than its armed limit (the limit is now disarmed; [`Nic::arm_srq_limit`]).
    SrqLimitReached {
        /// The shared receive queue.
        srqn: u32,
    },
}

/// How many of a destroyed QP's retransmission periods it lingers: its peer resends an
/// unacknowledged packet within one period (a path RTO, or the connection timeout at the
/// latest), so four periods cover the first resend plus two more after lost answers
/// (the connection timeout doubles: 1 + 2 periods), and every faster path-level resend.
pub const LINGER_PERIODS: u64 = 4;

/// A destroyed QP that still (re-)acknowledges what it accepted.
struct Lingering {
    qp: Qp,
    /// How long it lingers, ns.
    linger_ns: u64,
    /// When it goes; `None` until the engine next sees the time.
    until: Option<u64>,
}

/// The engine's timer index, so that neither [`Nic::poll_timeout`] nor
/// [`Nic::handle_timeout`] looks at a QP whose timers did not change.
///
/// Every live QP whose send side runs (`Qp::sends`) with a pending timer is
/// filed once, under the earliest of its deadlines
/// ([`crate::tx::Tx::next_deadline`]: path RTOs, probes, RACK, the
/// connection timeout, RNR waits, pacing), and re-filed ([`Timers::rearm`])
/// after every call that touched it; lingering QPs are filed under the time
/// they go. Entries sort by (deadline, QPN).
#[derive(Default)]
struct Timers {
    /// (deadline, QPN) of every live QP with a pending timer.
    live: BTreeSet<(u64, u32)>,
    /// (until, QPN) of every lingering QP whose clock runs.
    linger: BTreeSet<(u64, u32)>,
    /// Lingering QPs whose clock has not started (destroyed since the engine
    /// last saw the time).
    linger_unclocked: Vec<u32>,
    /// The QPs due in a `handle_timeout` (kept to reuse its allocation).
    due: Vec<u32>,
    /// Work done on timers (see [`Nic::timer_work`]).
    work: u64,
}

impl Timers {
    /// Files `qp` under its earliest deadline (none unless its send side runs),
    /// after something may have changed it.
    fn rearm(&mut self, qp: &mut Qp) {
        let due = if qp.sends() {
            qp.next_deadline(&mut self.work)
        } else {
            None
        };
        if due != qp.timer_due {
            if let Some(old) = qp.timer_due {
                self.live.remove(&(old, qp.qpn));
            }
            if let Some(new) = due {
                self.live.insert((new, qp.qpn));
            }
            qp.timer_due = due;
        }
    }
}

/// One MetaRoCE NIC's transport engine.
pub struct Nic {
    cfg: NicConfig,
    /// What the QPs share (memory regions, SRQs, counters, events).
    shared: Shared,
    qps: BTreeMap<u32, Qp>,
    lingering: BTreeMap<u32, Lingering>,
    timers: Timers,
    ids: IdGen,
    /// QPs created so far plus 0x0f.
    qps_created: u32,
    next_pd: u32,
    ready: VecDeque<u32>,
    /// QPs the current poll passed over because their data was for busy ports.
    port_blocked: VecDeque<u32>,
    active_senders: u32,
    next_fair_recount: u64,
}

impl Nic {
    /// A NIC with no QPs or regions.
    pub fn new(cfg: NicConfig) -> Self {
        let mut ids = match cfg.id_seed {
            Some(seed) => IdGen::from_seed(seed),
            None => IdGen::from_u64(cfg.seed),
        };
        let mut key_seed = [0; 32];
        for chunk in key_seed.chunks_mut(4) {
            chunk.copy_from_slice(&ids.psn().to_le_bytes());
        }
        Nic {
            cfg,
            shared: Shared {
                mrs: MrTable::new(IdGen::from_seed(key_seed)),
                srqs: Srqs::new(),
                drops: Drops::default(),
                stats: Stats::default(),
                events: VecDeque::new(),
            },
            qps: BTreeMap::new(),
            lingering: BTreeMap::new(),
            timers: Timers::default(),
            ids,
            qps_created: 0x0f,
            next_pd: 1,
            ready: VecDeque::new(),
            port_blocked: VecDeque::new(),
            active_senders: 1,
            next_fair_recount: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NicConfig {
        &self.cfg
    }

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

    /// The next conn PSN QP `qpn` expects to receive (its cumulative
    /// acceptance point), for tests.
    pub fn debug_rx_conn_cum(&self, qpn: u32) -> Option<u32> {
        self.qps.get(&qpn).map(Qp::accepted_psn)
    }

    /// On an authenticated QP (the one `datagram`'s `dst_qpn` names), checks
    /// the auth trailer and the replay window before anything else and
    /// returns the packet without the trailer; `None` (counted) when it
    /// fails. Any other datagram is returned as it is.
    fn authenticate<'d>(&mut self, datagram: &'d [u8]) -> Option<&'d [u8]> {
        let Some(qpn) = datagram.get(4..8) else {
            return Some(datagram);
        };
        let qpn = u32::from_be_bytes([qpn[0], qpn[1], qpn[2], qpn[3]]);
        let qp = match self.qps.get_mut(&qpn) {
            Some(qp) => qp,
            None => match self.lingering.get_mut(&qpn) {
                Some(l) => &mut l.qp,
                None => return Some(datagram),
            },
        };
        let Some(auth) = qp.auth.as_mut() else {
            return Some(datagram);
        };
        let Ok((seq, len)) = auth.mac.open(auth.peer_qpn, datagram) else {
            self.shared.drops.bad_tag += 1;
            return None;
        };
        if !auth.rx.accept(seq) {
            self.shared.drops.replayed += 1;
            return None;
        }
        datagram.get(..len)
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
    /// RTOs), at most [`NicConfig::linger_max_ns`], counted from the first time the
    /// engine sees after the call; [`Nic::lingering_qps`] counts such QPs.
    pub fn destroy_qp(&mut self, qpn: u32) -> Result<(), VerbsError> {
        let mut qp = self.qps.remove(&qpn).ok_or(VerbsError::NoSuchQp)?;
        if let Some(due) = qp.timer_due.take() {
            self.timers.live.remove(&(due, qpn));
        }
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
            self.timers.linger_unclocked.push(qpn);
        }
        Ok(())
    }

    /// Destroyed QPs still lingering (see [`Nic::destroy_qp`]).
    pub fn lingering_qps(&self) -> usize {
        self.lingering.len()
    }

    /// Starts the linger clock of QPs destroyed since the engine last saw the time.
    fn clock_lingering(&mut self, now: u64) {
        for qpn in self.timers.linger_unclocked.drain(..) {
            if let Some(l) = self.lingering.get_mut(&qpn) {
                let until = *l.until.get_or_insert(now.saturating_add(l.linger_ns));
                self.timers.linger.insert((until, qpn));
            }
        }
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
    /// `limit` posted, [`Event::SrqLimitReached`] is reported and the limit
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

    fn mark_ready(ready: &mut VecDeque<u32>, qp: &mut Qp) {
        if !qp.ready {
            qp.ready = true;
            ready.push_back(qp.qpn);
        }
    }

    /// After a call changed a live QP: it may have something to send, and
    /// its timers may have moved.
    fn touched(ready: &mut VecDeque<u32>, timers: &mut Timers, qp: &mut Qp) {
        Self::mark_ready(ready, qp);
        timers.rearm(qp);
    }

    /// Handles one received datagram. Whatever is wrong with it is counted in
    /// [`Nic::drops`]; nothing invalid is ever placed.
    pub fn handle_datagram<M: Memory>(
        &mut self,
        now: u64,
        datagram: &[u8],
        meta: RxMeta,
        mem: &mut M,
    ) {
        let Some(datagram) = self.authenticate(datagram) else {
            return;
        };
        // Without atomics their opcodes are unknown (§6.2 step 3, after the
        // length and version checks).
        if !self.cfg.has_atomics()
            && datagram.len() >= BASE_LEN + ICRC_LEN
            && datagram[0] == VERSION
            && Opcode::try_from(datagram[1]).is_ok_and(Opcode::is_atomic)
        {
            self.shared.drops.bad_opcode += 1;
            return;
        }
        let packet = match Packet::new_checked(datagram) {
            Ok(p) => p,
            Err(e) => return self.shared.drops.count_wire_error(&e),
        };
        let pseudo = PseudoHeader::new(meta.src_ip, meta.src_port, meta.dst_ip, meta.dst_port);
        if let Err(e) = packet.verify_icrc(&pseudo) {
            return self.shared.drops.count_wire_error(&e);
        }
        let repr = match Repr::parse(&packet) {
            Ok(r) => r,
            Err(e) => return self.shared.drops.count_wire_error(&e),
        };
        self.clock_lingering(now);
        let mut ctx = self.shared.ctx(now, mem, self.cfg.mtu);
        let Some(qp) = self.qps.get_mut(&repr.dst_qpn) else {
            let Some(l) = self
                .lingering
                .get_mut(&repr.dst_qpn)
                .filter(|l| l.until.is_none_or(|u| u > now))
            else {
                ctx.drops.unknown_qp += 1;
                return;
            };
            l.qp.on_packet_closed(&mut ctx, &repr, &meta);
            Self::mark_ready(&mut self.ready, &mut l.qp);
            return;
        };
        let was_sending = qp.received_data_within(now, self.cfg.fair_share_window_ns);
        qp.on_packet(&mut ctx, &repr, RxData::Bytes(packet.payload()), &meta);
        if !was_sending && qp.received_data_within(now, 0) {
            // A connection that starts sending to us changes everyone's fair
            // share: recount now rather than at the end of the window, so an
            // incast is paced from its first round trip.
            self.next_fair_recount = now;
        }
        Self::touched(&mut self.ready, &mut self.timers, qp);
    }

    /// Hardware data path: handles the verdict event of a message packet the
    /// RTL checked (and placed, if its verdict says so). The engine applies
    /// its own connection, stream and message rules, with the RTL's verdict
    /// in place of its memory and receive checks, and completes messages as
    /// for [`Nic::handle_datagram`]. Where its rules disagree with the
    /// verdict, [`Stats::hw_disagreements`] counts it. `mem` is the
    /// firmware's own access to host memory: touched only to execute an
    /// atomic that retires with this packet (the RTL placed the packet).
    pub fn handle_placed<M: Memory>(&mut self, now: u64, p: &PlacedPacket, mem: &mut M) {
        let Some(qp) = self.qps.get_mut(&p.dst_qpn) else {
            // The RTL's QP table holds only live QPs: it should not get here.
            self.shared.stats.hw_disagreements += 1;
            return;
        };
        let Some(remote) = qp.remote else {
            self.shared.stats.hw_disagreements += 1;
            return;
        };
        // The RTL checked the peer: the packet comes from the QP's peer.
        let repr = Repr {
            opcode: p.opcode,
            flags: p.flags,
            dst_qpn: p.dst_qpn,
            src_qpn: remote.qpn,
            stream: p.stream,
            path: p.path,
            conn_psn: p.conn_psn,
            path_psn: p.path_psn,
            timestamp: p.timestamp,
            ext: Ext::Msg(MsgRepr {
                msn: p.msn,
                recv_idx: p.recv_idx,
                msg_len: p.msg_len,
                offset: p.offset,
                remote_va: 0,
                rkey: 0,
                imm: p.imm,
            }),
        };
        let meta = RxMeta {
            src_ip: remote.ip,
            src_port: p.src_port,
            dst_ip: self.cfg.local_ip,
            dst_port: self.cfg.udp_port,
            ecn_ce: p.ecn_ce,
        };
        let was_sending = qp.received_data_within(now, self.cfg.fair_share_window_ns);
        let before = (
            self.shared.stats.data_accepted,
            self.shared.stats.duplicates,
        );
        let mut ctx = self.shared.ctx(now, mem, self.cfg.mtu);
        let data = RxData::Placed {
            len: p.payload_len,
            verdict: p.verdict,
        };
        qp.on_packet(&mut ctx, &repr, data, &meta);
        let after = (
            self.shared.stats.data_accepted,
            self.shared.stats.duplicates,
        );
        let agreed = match p.verdict {
            HwVerdict::Placed => after.0 > before.0,
            HwVerdict::Duplicate => after.1 > before.1,
            _ => true,
        };
        if !agreed {
            self.shared.stats.hw_disagreements += 1;
        }
        if !was_sending && qp.received_data_within(now, 0) {
            // As on the software data path: a new sender recounts at once.
            self.next_fair_recount = now;
        }
        Self::touched(&mut self.ready, &mut self.timers, qp);
    }

    /// Hardware data path: the next operation for the NIC's TX table, for
    /// path `path` of QP `qpn` (which table slot holds it is the
    /// firmware's choice). A path's operations must be performed in the
    /// order they come, and each one's result given to
    /// [`Nic::handle_table_result`].
    pub fn poll_table_op(&mut self) -> Option<TableRequest> {
        let timers = &mut self.timers;
        self.qps.values_mut().find_map(|qp| {
            let (path, op) = qp.poll_table_op()?;
            timers.rearm(qp);
            Some(TableRequest {
                qpn: qp.qpn,
                path,
                op,
            })
        })
    }

    /// Hardware data path: the NIC's TX table finished `done` for path
    /// `path` of QP `qpn` (an operation from [`Nic::poll_table_op`], or a
    /// received ACK its ACK receiver applied). `fates` are the data
    /// transmissions it resolved, in order; `view` is the path's entry read
    /// back after it. Acknowledged transmissions are delivered, lost ones
    /// retransmitted on another path; a result the engine did not expect
    /// counts in [`Stats::hw_disagreements`].
    pub fn handle_table_result(
        &mut self,
        now: u64,
        qpn: u32,
        path: u16,
        done: &TableDone,
        fates: &[SlotFate],
        view: PathView,
    ) {
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return; // destroyed meanwhile
        };
        let mut mem = NoMemory;
        let mut ctx = self.shared.ctx(now, &mut mem, self.cfg.mtu);
        qp.on_table_result(&mut ctx, path, done, fates, view);
        Self::touched(&mut self.ready, &mut self.timers, qp);
    }

    /// Writes the next datagram to send into `buf` (at least MTU + 128 bytes)
    /// and says where it goes. QPs take turns.
    pub fn poll_transmit<M: Memory>(
        &mut self,
        now: u64,
        buf: &mut [u8],
        mem: &mut M,
    ) -> Option<Transmit> {
        self.poll_transmit_on(now, buf, mem, PortsReady::ALL)
    }

    /// [`Nic::poll_transmit`] for a NIC with several ports (planes) of which
    /// only `ports` can take a packet now: data goes only on paths whose
    /// entropy value maps to a ready port (spec §5.3). A QP with data only for
    /// busy ports keeps its turn for a later call.
    pub fn poll_transmit_on<M: Memory>(
        &mut self,
        now: u64,
        buf: &mut [u8],
        mem: &mut M,
        ports: PortsReady,
    ) -> Option<Transmit> {
        match self.poll_out(now, buf, mem, Datapath::Software, ports)? {
            HwTransmit::Datagram(t) => Some(t),
            // The software data path seals every packet itself.
            HwTransmit::Descriptor(_) => None,
        }
    }

    /// Hardware data path: the next packet for the RTL. A data packet or
    /// PROBE comes as a descriptor (nothing is read from `mem`: the RTL
    /// fetches the payload; the memory region is still checked); a NACK or
    /// DISCONNECT is written whole into `buf`. No ACKs: the RTL sends them.
    pub fn poll_hardware(&mut self, now: u64, buf: &mut [u8]) -> Option<HwTransmit> {
        self.poll_out(now, buf, &mut NoMemory, Datapath::Hardware, PortsReady::ALL)
    }

    /// The rate hint the NIC's ACKs carry now, Mbit/s: the line rate shared
    /// among the connections sending to it (the hardware data path writes
    /// it into the RTL's QP table).
    pub fn ack_rate_hint(&mut self, now: u64) -> u32 {
        self.recount_active_senders(now);
        self.cfg.line_rate_mbps / self.active_senders.max(1)
    }

    fn poll_out<M: Memory>(
        &mut self,
        now: u64,
        buf: &mut [u8],
        mem: &mut M,
        datapath: Datapath,
        ports: PortsReady,
    ) -> Option<HwTransmit> {
        let rate_hint = self.ack_rate_hint(now);
        self.clock_lingering(now);
        let local = PseudoLocal { cfg: &self.cfg };
        while let Some(qpn) = self.ready.pop_front() {
            let (qp, live) = match self.qps.get_mut(&qpn) {
                Some(qp) => (qp, true),
                None => match self.lingering.get_mut(&qpn) {
                    Some(l) => (&mut l.qp, false),
                    None => continue,
                },
            };
            let mut ctx = self.shared.ctx(now, mem, self.cfg.mtu);
            let transmit = qp.poll_transmit(&mut ctx, &local, rate_hint, buf, datapath, ports);
            if live {
                self.timers.rearm(qp);
            }
            match transmit {
                Some(mut t) => {
                    if let (Some(auth), HwTransmit::Datagram(d)) = (qp.auth.as_mut(), &mut t) {
                        // The trailer follows the ICRC (spec §11.2); callers
                        // give buffers with room (MTU + 256 bytes).
                        let trailer = auth.mac.trailer(qpn, auth.tx_seq, &buf[..d.len]);
                        if let Some(room) = buf.get_mut(d.len..d.len + AUTH_TRAILER_LEN) {
                            room.copy_from_slice(&trailer);
                            d.len += AUTH_TRAILER_LEN;
                            auth.tx_seq += 1;
                        }
                    }
                    // It may have more: back of the line, so QPs take turns.
                    self.ready.push_back(qpn);
                    self.requeue_port_blocked();
                    return Some(t);
                }
                // Data only for busy ports: it keeps its place in line.
                None if qp.take_port_blocked() => self.port_blocked.push_back(qpn),
                None => qp.ready = false,
            }
        }
        self.requeue_port_blocked();
        None
    }

    /// Puts the QPs a poll passed over for busy ports back at the front of
    /// the line, in their order.
    fn requeue_port_blocked(&mut self) {
        while let Some(qpn) = self.port_blocked.pop_back() {
            self.ready.push_front(qpn);
        }
    }

    fn recount_active_senders(&mut self, now: u64) {
        if now < self.next_fair_recount {
            return;
        }
        let window = self.cfg.fair_share_window_ns;
        let active = self
            .qps
            .values()
            .filter(|q| q.received_data_within(now, window))
            .count();
        self.active_senders = (active as u32).max(1);
        self.next_fair_recount = now + window;
    }

    /// When [`Nic::handle_timeout`] should next be called. It reads the
    /// earliest entry of the engine's timer index: its cost does not depend
    /// on how many QPs or paths there are.
    pub fn poll_timeout(&self) -> Option<u64> {
        let live = self.timers.live.first().map(|&(due, _)| due);
        // A lingering QP whose clock has not started is due at once (to start it).
        let lingering = if self.timers.linger_unclocked.is_empty() {
            self.timers.linger.first().map(|&(until, _)| until)
        } else {
            Some(0)
        };
        let earliest = live.into_iter().chain(lingering).min();
        debug_assert_eq!(earliest, self.scan_timeout(), "timer index out of date");
        earliest
    }

    /// What [`Nic::poll_timeout`] must say, found by looking at every QP and
    /// every path: debug builds check the timer index against it.
    fn scan_timeout(&self) -> Option<u64> {
        let mut work = 0;
        let live = self
            .qps
            .values()
            .filter(|q| q.sends())
            .filter_map(|q| q.next_deadline(&mut work))
            .min();
        let lingering = self.lingering.values().map(|l| l.until.unwrap_or(0)).min();
        live.into_iter().chain(lingering).min()
    }

    /// Fires every timer due at `now`: takes the due entries off the timer
    /// index and fires the QPs in QPN order (a scan's order, which decides
    /// the order of their events and transmissions), each re-filed after.
    pub fn handle_timeout<M: Memory>(&mut self, now: u64, mem: &mut M) {
        self.clock_lingering(now);
        while let Some(&(until, qpn)) = self.timers.linger.first()
            && until <= now
        {
            self.timers.linger.pop_first();
            self.timers.work += 1;
            self.lingering.remove(&qpn);
        }
        let mut due = core::mem::take(&mut self.timers.due);
        due.clear();
        while let Some(&(deadline, qpn)) = self.timers.live.first()
            && deadline <= now
        {
            self.timers.live.pop_first();
            self.timers.work += 1;
            due.push(qpn);
        }
        due.sort_unstable();
        debug_assert!(
            {
                let mut work = 0;
                self.qps
                    .values()
                    .filter(|q| q.sends() && q.next_deadline(&mut work).is_some_and(|d| d <= now))
                    .map(|q| q.qpn)
                    .eq(due.iter().copied())
            },
            "timer index out of date"
        );
        for &qpn in &due {
            let qp = self.qps.get_mut(&qpn).expect("the index holds live QPs");
            qp.timer_due = None;
            let mut ctx = self.shared.ctx(now, &mut *mem, self.cfg.mtu);
            qp.on_timeout(&mut ctx);
            Self::touched(&mut self.ready, &mut self.timers, qp);
        }
        self.timers.due = due;
    }

    /// Work the engine has spent on its timers so far: every evaluation of a
    /// QP's deadlines counts one plus the QP's paths, every timer taken off
    /// the index when due counts one. It grows with the QPs that change or
    /// fire, not with the QPs and paths that exist (the engine's tests check
    /// that idle QPs add nothing).
    pub fn timer_work(&self) -> u64 {
        self.timers.work
    }

    /// Next application event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.shared.events.pop_front()
    }

    /// Drop counters.
    pub fn drops(&self) -> &Drops {
        &self.shared.drops
    }

    /// The drop counters, for a hardware data path to count the packets its RTL
    /// refused before the engine saw them (verdict events that name a reason).
    pub fn drops_mut(&mut self) -> &mut Drops {
        &mut self.shared.drops
    }

    /// Transport counters.
    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// Per-path statistics of a QP.
    pub fn path_stats(&self, qpn: u32) -> Option<Vec<PathStats>> {
        self.qps.get(&qpn).map(|q| q.path_stats().collect())
    }

    /// Hardware data path: every QP's number (not the lingering ones), for a driver
    /// that mirrors them in the RTL's QP table.
    pub fn qpns(&self) -> impl Iterator<Item = u32> + '_ {
        self.qps.keys().copied()
    }

    /// Hardware data path: every registered memory region, for a driver that mirrors
    /// them in the RTL's MR table and maps them for the device.
    pub fn memory_regions(&self) -> impl Iterator<Item = &MemoryRegion> + '_ {
        self.shared.mrs.iter()
    }

    /// Hardware data path: a QP's state, protection domain, stream count
    /// and peer, as the RTL's QP table needs them.
    pub fn qp_entry(&self, qpn: u32) -> Option<(QpState, u32, u16, Option<RemoteEnd>)> {
        self.qps
            .get(&qpn)
            .map(|q| (q.state, q.pd, q.cfg().streams, q.remote))
    }

    /// Hardware data path: the receives posted on a QP's stream and not yet
    /// consumed, oldest first, with the receive index of the first (the
    /// RTL's receive ring holds the oldest of them).
    pub fn posted_receives(
        &self,
        qpn: u32,
        stream: u16,
    ) -> Option<(u32, impl Iterator<Item = &RecvWr> + '_)> {
        let s = self.qps.get(&qpn)?.rx_stream(stream)?;
        Some((s.recv_base, s.recvs.iter()))
    }

    /// Hardware data path: a stream's MSN head (its oldest message not yet
    /// retired), which bounds the MSNs the RTL accepts (spec §6.5).
    pub fn msn_head(&self, qpn: u32, stream: u16) -> Option<u32> {
        let s = self.qps.get(&qpn)?.rx_stream(stream)?;
        Some(s.msn_head())
    }

    /// Hardware data path: the READs and atomics a QP has sent and not
    /// completed, as (stream, MSN, local SGE the response goes to: its one
    /// element, whether it is an atomic), for the RTL's READ table: at most
    /// the QP's `max_rd_atomic`.
    pub fn outstanding_reads(&self, qpn: u32) -> impl Iterator<Item = (u16, u32, Sge, bool)> + '_ {
        self.qps
            .get(&qpn)
            .into_iter()
            .flat_map(Qp::outstanding_reads)
    }

    /// Bytes of sender state a QP holds for its packets in flight.
    pub fn qp_inflight_state_bytes(&self, qpn: u32) -> Option<usize> {
        self.qps.get(&qpn).map(Qp::inflight_state_bytes)
    }
}

/// The memory of the hardware data path's calls that take none: the RTL
/// places and fetches every payload (atomics, the exception, go through
/// the memory the firmware gives `handle_datagram` and `handle_placed`).
struct NoMemory;

impl Memory for NoMemory {
    fn write(&mut self, _addr: u64, _data: &[u8]) {}

    fn read(&mut self, _addr: u64, _out: &mut [u8]) {}
}

impl NicConfig {
    /// Largest message a work request may carry.
    pub fn max_message(&self) -> u32 {
        1 << 31
    }

    /// Most elements a work request's scatter/gather list may have: [`MAX_SGE`],
    /// or 1 on the hardware data path (the RTL's descriptors, receive rings and
    /// READ entries hold one buffer each).
    pub fn max_sge(&self) -> usize {
        match self.datapath {
            Datapath::Software => MAX_SGE,
            Datapath::Hardware => 1,
        }
    }

    /// Most streams a QP may have: any number, or [`HW_MAX_STREAMS`] on the
    /// hardware data path (the RTL's MSN window keeps a head for that many).
    pub fn max_streams(&self) -> usize {
        match self.datapath {
            Datapath::Software => usize::from(u16::MAX),
            Datapath::Hardware => HW_MAX_STREAMS,
        }
    }

    /// The length of the message a work request with `sgl` describes, or why
    /// it cannot be posted: more elements than [`NicConfig::max_sge`]
    /// (`InvalidArgument`), or longer than [`NicConfig::max_message`].
    fn message_len(&self, sgl: &SgList) -> Result<u32, VerbsError> {
        if sgl.as_slice().len() > self.max_sge() {
            return Err(VerbsError::InvalidArgument);
        }
        sgl.total_len()
            .filter(|&l| l <= self.max_message())
            .ok_or(VerbsError::MessageTooLong)
    }
}
