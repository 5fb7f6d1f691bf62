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

use alloc::collections::{BTreeMap, VecDeque};
use core::net::IpAddr;

use crate::config::NicConfig;
use crate::counters::{Drops, Stats};
use crate::ctx::Shared;
use crate::datapath::{Datapath, HW_MAX_STREAMS};
use crate::ids::IdGen;
use crate::mr::MrTable;
use crate::qp::Qp;
use crate::srq::Srqs;
use crate::verbs::{MAX_SGE, SgList, VerbsError, WcStatus};

mod control;
mod inspect;
mod io;
mod timing;

use timing::Timers;

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
