//! Verbs-level types: work requests, completions, QP states and errors.

use core::net::IpAddr;

/// Queue-pair states (RC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QpState {
    /// Created, nothing configured.
    Reset,
    /// Receives may be posted.
    Init,
    /// Ready to receive: the peer is known.
    Rtr,
    /// Ready to send.
    Rts,
    /// Failed; all work is flushed.
    Error,
}

impl QpState {
    /// True when the Verbs QP state machine allows `self → to`.
    pub fn can_move_to(self, to: QpState) -> bool {
        use QpState::*;
        matches!(
            (self, to),
            (Reset, Init)
                | (Init, Init)
                | (Init, Rtr)
                | (Rtr, Rts)
                | (Rts, Rts)
                | (_, Error)
                | (_, Reset)
        )
    }
}

/// The peer of a connection, learned out of band (or through CONNECT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteEnd {
    /// Peer QP number.
    pub qpn: u32,
    /// Peer IP address.
    pub ip: IpAddr,
    /// Peer NIC's UDP destination port.
    pub udp_port: u16,
    /// First connection PSN the peer will send (our expected receive PSN).
    pub initial_psn: u32,
}

/// A state change requested through `modify_qp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpTransition {
    /// → INIT.
    Init,
    /// → RTR with the peer.
    Rtr(RemoteEnd),
    /// → RTS with our first send PSN and retry limits.
    Rts {
        /// First connection PSN we send.
        initial_psn: u32,
        /// Timeouts without progress tolerated before RETRY_EXC_ERR (Verbs retry_cnt, 0–7).
        retry_cnt: u8,
        /// RNR retries tolerated (7 = unlimited, as in Verbs).
        rnr_retry: u8,
        /// Connection timeout base in ns (Verbs: 4.096 µs × 2^timeout).
        timeout_ns: u64,
    },
    /// → ERR (flushes outstanding work).
    Error,
    /// → RESET (forgets everything).
    Reset,
}

/// What a send work request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOp {
    /// RDMA WRITE to `remote_va` through `rkey`.
    Write {
        /// Receiver address.
        remote_va: u64,
        /// Receiver's key.
        rkey: u32,
    },
    /// RDMA WRITE with immediate data; consumes a posted receive at the peer.
    WriteImm {
        /// Receiver address.
        remote_va: u64,
        /// Receiver's key.
        rkey: u32,
        /// Immediate data.
        imm: u32,
    },
    /// SEND into the peer's next posted receive.
    Send,
    /// SEND with immediate data.
    SendImm {
        /// Immediate data.
        imm: u32,
    },
    /// RDMA READ of `len` bytes from `remote_va` into the local buffer.
    Read {
        /// Peer address.
        remote_va: u64,
        /// Peer's key.
        rkey: u32,
    },
    /// Atomic fetch-and-add of the 8-byte integer at `remote_va` (8-byte aligned,
    /// in the peer's byte order); the value found there lands in the 8-byte local
    /// buffer.
    FetchAdd {
        /// Peer address.
        remote_va: u64,
        /// Peer's key (with remote atomic access).
        rkey: u32,
        /// Added (wrapping).
        add: u64,
    },
    /// Atomic compare-and-swap of the 8-byte integer at `remote_va`: replaced by
    /// `swap` if it equals `compare`; the value found there lands in the 8-byte
    /// local buffer.
    CompareSwap {
        /// Peer address.
        remote_va: u64,
        /// Peer's key (with remote atomic access).
        rkey: u32,
        /// Compared with the value found.
        compare: u64,
        /// Written when they are equal.
        swap: u64,
    },
}

impl SendOp {
    /// True for the operations whose local buffer is written (READ and atomics).
    pub fn writes_local(&self) -> bool {
        matches!(
            self,
            SendOp::Read { .. } | SendOp::FetchAdd { .. } | SendOp::CompareSwap { .. }
        )
    }

    /// True for the atomics.
    pub fn is_atomic(&self) -> bool {
        matches!(self, SendOp::FetchAdd { .. } | SendOp::CompareSwap { .. })
    }
}

/// Bytes an atomic operates on (and its local buffer holds).
pub const ATOMIC_LEN: u32 = 8;

/// One scatter/gather element: a local buffer inside a registered region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sge {
    /// Address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u32,
    /// Local key of the region.
    pub lkey: u32,
}

/// Most scatter/gather elements a work request may carry (the Verbs `max_sge`).
pub const MAX_SGE: usize = 16;

/// A work request's scatter/gather list: 0 to [`MAX_SGE`] elements, which
/// together make one message buffer, in order.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct SgList {
    len: u8,
    sges: [Sge; MAX_SGE],
}

impl core::fmt::Debug for SgList {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl From<Sge> for SgList {
    fn from(sge: Sge) -> Self {
        let mut l = SgList::default();
        l.sges[0] = sge;
        l.len = 1;
        l
    }
}

impl SgList {
    /// The list of `sges`; `InvalidArgument` when there are more than [`MAX_SGE`].
    pub fn new(sges: &[Sge]) -> Result<Self, VerbsError> {
        let mut l = SgList::default();
        l.sges
            .get_mut(..sges.len())
            .ok_or(VerbsError::InvalidArgument)?
            .copy_from_slice(sges);
        l.len = sges.len() as u8;
        Ok(l)
    }

    /// The elements.
    pub fn as_slice(&self) -> &[Sge] {
        &self.sges[..usize::from(self.len)]
    }

    /// The first element, or an empty one when the list is empty (a list of
    /// at most one element, as the hardware data path takes, is all in it).
    pub fn first(&self) -> Sge {
        self.sges[0]
    }

    /// Bytes of the whole list; `None` if they do not fit in 32 bits.
    pub fn total_len(&self) -> Option<u32> {
        self.as_slice()
            .iter()
            .try_fold(0u32, |sum, s| sum.checked_add(s.len))
    }

    /// The parts of the elements holding bytes `offset..offset + len` of the
    /// message, in order (elements without any of those bytes left out); they
    /// cover fewer than `len` bytes when the range goes past the list.
    pub fn pieces(&self, offset: u32, len: u32) -> impl Iterator<Item = Sge> + '_ {
        let (start, end) = (u64::from(offset), u64::from(offset) + u64::from(len));
        let mut at = 0u64;
        self.as_slice().iter().filter_map(move |s| {
            let (s_start, s_end) = (at, at + u64::from(s.len));
            at = s_end;
            let (from, to) = (start.max(s_start), end.min(s_end));
            (from < to).then(|| Sge {
                addr: s.addr.wrapping_add(from - s_start),
                len: (to - from) as u32,
                lkey: s.lkey,
            })
        })
    }
}

/// A send work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendWr {
    /// Caller's id, returned in the completion.
    pub wr_id: u64,
    /// Operation.
    pub op: SendOp,
    /// Local buffers (the source gathered in order, or the destination a READ
    /// scatters into).
    pub sgl: SgList,
    /// Produce a completion on success (errors always complete).
    pub signaled: bool,
    /// Ask the peer for a solicited event.
    pub solicited: bool,
    /// Stream within the connection (0 for plain Verbs).
    pub stream: u16,
}

/// A receive work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvWr {
    /// Caller's id.
    pub wr_id: u64,
    /// Buffers to receive into, filled in order.
    pub sgl: SgList,
    /// Stream the receive belongs to.
    pub stream: u16,
}

/// Completion status, with the meaning of the Verbs `IBV_WC_*` statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WcStatus {
    /// Done.
    Success,
    /// Local length error (a receive buffer too small).
    LocLenErr,
    /// Local QP operation error.
    LocQpOpErr,
    /// Local protection error (bad lkey or range).
    LocProtErr,
    /// Flushed because the QP is in ERR.
    WrFlushErr,
    /// The peer's response did not fit the request (a READ response of the
    /// wrong length or beyond the local buffer).
    BadRespErr,
    /// Peer refused the access (rkey, bounds, rights).
    RemAccessErr,
    /// Peer found the request invalid.
    RemInvReqErr,
    /// Peer failed to execute.
    RemOpErr,
    /// Retries exhausted without an answer.
    RetryExcErr,
    /// Receiver-not-ready retries exhausted.
    RnrRetryExcErr,
}

/// What completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WcOpcode {
    /// A SEND left.
    Send,
    /// A WRITE finished.
    Write,
    /// A READ finished.
    Read,
    /// A fetch-and-add finished (the value found is in its buffer).
    FetchAdd,
    /// A compare-and-swap finished (the value found is in its buffer).
    CompSwap,
    /// A receive was filled by a SEND.
    Recv,
    /// A receive was consumed by a WRITE with immediate.
    RecvWriteImm,
}

/// A work completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// QP it belongs to.
    pub qpn: u32,
    /// The work request's id.
    pub wr_id: u64,
    /// Outcome.
    pub status: WcStatus,
    /// What completed.
    pub opcode: WcOpcode,
    /// Bytes received (receives) or transferred.
    pub byte_len: u32,
    /// Immediate data, if the message carried one.
    pub imm: Option<u32>,
    /// Stream.
    pub stream: u16,
    /// True for completions of the receive queue.
    pub is_recv: bool,
    /// The sender asked for a solicited event.
    pub solicited: bool,
}

/// Why a Verbs call was refused (nothing changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerbsError {
    /// No QP with this number.
    #[error("no such QP")]
    NoSuchQp,
    /// The QP state does not allow the call.
    #[error("QP state does not allow this")]
    WrongState,
    /// The state transition is not allowed.
    #[error("invalid QP state transition")]
    InvalidTransition,
    /// The message is longer than the connection allows.
    #[error("message too long")]
    MessageTooLong,
    /// A stream id beyond the QP's streams.
    #[error("invalid stream id")]
    InvalidStream,
    /// The send or receive queue is full.
    #[error("work queue full")]
    QueueFull,
    /// An invalid argument.
    #[error("invalid argument")]
    InvalidArgument,
    /// The object is still in use (a shared receive queue with QPs).
    #[error("resource in use")]
    InUse,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sge(addr: u64, len: u32) -> Sge {
        Sge { addr, len, lkey: 1 }
    }

    #[test]
    fn pieces_cut_a_range_across_elements() {
        let l = SgList::new(&[sge(100, 10), sge(500, 0), sge(1000, 5), sge(2000, 20)]).unwrap();
        assert_eq!(l.total_len(), Some(35));
        let p: alloc::vec::Vec<_> = l.pieces(8, 10).collect();
        assert_eq!(p, [sge(108, 2), sge(1000, 5), sge(2000, 3)]);
        assert_eq!(l.pieces(0, 35).map(|s| s.len).sum::<u32>(), 35);
        assert_eq!(l.pieces(30, 100).map(|s| s.len).sum::<u32>(), 5);
        assert_eq!(l.pieces(35, 1).count(), 0);
        assert_eq!(l.pieces(3, 0).count(), 0);
    }

    #[test]
    fn lists_are_bounded() {
        assert_eq!(
            SgList::new(&[sge(0, 1); MAX_SGE]).unwrap().as_slice().len(),
            MAX_SGE
        );
        assert_eq!(
            SgList::new(&[sge(0, 1); MAX_SGE + 1]),
            Err(VerbsError::InvalidArgument)
        );
        let big = SgList::new(&[sge(0, u32::MAX), sge(0, 1)]).unwrap();
        assert_eq!(big.total_len(), None);
        assert_eq!(SgList::default().total_len(), Some(0));
        assert_eq!(SgList::from(sge(7, 3)).first(), sge(7, 3));
    }
}
