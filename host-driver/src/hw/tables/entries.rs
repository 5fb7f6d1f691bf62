//! The TX queue's entries and the result entries, word by word: descriptors, configuration writes and TX table operations in; the table's results and slot views out.

use metaroce_firmware::{PathView, RttEstimator, TableOp};
use metaroce_proto::{Ext, Repr};

use crate::hw::codes::regs;
use crate::hw::regs::{OP_SLOT_SHIFT, OpCtrl};

/// The ten words of a kind-0 TX queue entry (`docs/hardware.md` §18) for a
/// descriptor: headers `repr`, ECN-capable `ecn`, `len` payload bytes at host
/// address `addr`.
pub fn desc_words(repr: &Repr, ecn: bool, addr: u64, len: u16) -> [u64; 10] {
    let m = match repr.ext {
        Ext::Msg(m) => m,
        _ => Default::default(),
    };
    [
        repr.opcode as u64
            | u64::from(ecn) << 8
            | u64::from(repr.flags.bits()) << 16
            | u64::from(repr.stream) << 32
            | u64::from(repr.path) << 48,
        u64::from(repr.dst_qpn) | u64::from(repr.src_qpn) << 32,
        u64::from(repr.conn_psn) | u64::from(repr.path_psn) << 32,
        repr.timestamp,
        u64::from(m.msn) | u64::from(m.recv_idx) << 32,
        u64::from(m.msg_len) | u64::from(m.offset) << 32,
        m.remote_va,
        u64::from(m.rkey) | u64::from(m.imm) << 32,
        addr,
        u64::from(len),
    ]
}

/// The ten words of a kind-1 TX queue entry: a table write of `data` to `addr`,
/// ordered with the descriptors around it.
pub fn cfg_words(addr: u16, data: u64) -> [u64; 10] {
    [
        data,
        addr.into(),
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        u64::from(regs::TXQ_CFG) << 56,
    ]
}

/// The ten words of a kind-2 TX queue entry: the TX table operation `i` on `slot`,
/// ordered with the descriptors around it (`docs/hardware.md` §18): `w0`–`w3` the
/// SACK bitmap, `w4` \[31:0\] `op_psn`, \[47:32\] `op_len`, \[57:48\] the `OP_CTRL` value,
/// `w5` \[31:0\] `op_rtt`, \[63:32\] `op_ce_count`, `w6` \[31:0\] `op_acked`, \[63:32\]
/// `op_value`.
pub fn op_words(slot: usize, i: &OpInputs) -> [u64; 10] {
    let sack = |k: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&i.sack[8 * k..8 * k + 8]);
        u64::from_le_bytes(b)
    };
    [
        sack(0),
        sack(1),
        sack(2),
        sack(3),
        u64::from(i.psn) | u64::from(i.len) << 32 | u64::from(i.ctrl(slot)) << 48,
        u64::from(i.rtt.unwrap_or(0)) | u64::from(i.ce) << 32,
        u64::from(i.acked) | u64::from(i.value) << 32,
        0,
        0,
        u64::from(regs::TXQ_TABLE_OP) << 56,
    ]
}

/// A TX table result as its event entry carries it (words 0 and 1 of type 2, an ACK
/// the ACK receiver applied, or type 4, an operation from the TX queue).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResultEntry {
    /// Data packets acknowledged (`res_pkts`, `m_ackrx_pkts`).
    pub pkts: u32,
    /// Data bytes acknowledged.
    pub bytes: u32,
    /// Type 4: the path PSN a `Send` assigned (`res_psn`); type 2: the ACK's
    /// `conn_cum`.
    pub psn: u32,
    /// The TX table slot.
    pub slot: usize,
    /// Type 4: `res_ok`.
    pub ok: bool,
    /// Type 4: the operation's code.
    pub code: u8,
}

impl ResultEntry {
    /// Words 0 and 1 of a result entry: `w0` \[31:0\] packets, \[63:32\] bytes; `w1`
    /// \[31:0\] PSN, \[35:32\] slot, \[36\] ok, \[39:37\] code.
    pub fn parse(w: &[u64; 8]) -> Self {
        ResultEntry {
            pkts: w[0] as u32,
            bytes: (w[0] >> 32) as u32,
            psn: w[1] as u32,
            slot: (w[1] >> 32 & 0xF) as usize,
            ok: w[1] >> 36 & 1 == 1,
            code: (w[1] >> 37 & 0x7) as u8,
        }
    }
}

/// The placement address of a verdict event entry (type 1): bits 23..0 in
/// `w6` \[63:40\], 47..24 in `w7` \[55:32\], present when `w6` \[37\] is set (a placed
/// packet with a payload whose address fits in 48 bits).
pub fn placed_addr(w: &[u64; 8]) -> Option<u64> {
    (w[6] >> 37 & 1 == 1).then(|| w[6] >> 40 | (w[7] >> 32 & 0xFF_FFFF) << 24)
}

/// A TX table slot's state as its read port shows it.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct SlotState {
    /// Entropy value.
    pub entropy: u16,
    /// Next path PSN.
    pub next_psn: u32,
    /// Oldest unresolved path PSN (`next_psn` when none).
    pub una: u32,
    /// Bytes in flight.
    pub inflight: u32,
    /// Window, bytes.
    pub window: u32,
    /// Smoothed RTT, ns (0 before a sample).
    pub srtt: u32,
    /// RTT variation, ns.
    pub rttvar: u32,
    /// An RTT sample was taken.
    pub rtt_valid: bool,
    /// ECN fraction, 16.16.
    pub ecn_ewma: u32,
    /// Loss fraction, 16.16.
    pub loss_ewma: u32,
    /// Packets acknowledged since the last move (repath decisions).
    pub samples: u32,
    /// Packets sent.
    pub sent: u32,
    /// Retransmissions sent.
    pub retransmitted: u32,
    /// Packets acknowledged.
    pub acked: u32,
    /// Packets declared lost.
    pub lost: u32,
    /// CE marks echoed.
    pub ce_marked: u32,
    /// Moves to a new entropy.
    pub repaths: u32,
    /// Timeouts.
    pub timeouts: u32,
    /// Quarantined.
    pub quarantined: bool,
    /// Probe backoff multiplier (meaningful while quarantined).
    pub backoff: u32,
    /// `can_send(len)` for the `len` read with it.
    pub can_send: bool,
}

impl SlotState {
    /// The slot as a result's two event entries carry it (the TX table's capture
    /// port, `metaroce_hdl::tx_path::VIEW_BITS`): `a` the result entry (type 2 or
    /// 4, words 2..6), `b` the view entry after it (type 5, words 0..3). There is
    /// no `can_send` (it needs a length): false.
    pub fn from_event(a: &[u64; 8], b: &[u64; 8]) -> SlotState {
        let lo = |w: u64| w as u32;
        let hi = |w: u64| (w >> 32) as u32;
        SlotState {
            next_psn: lo(a[2]),
            una: hi(a[2]),
            inflight: lo(a[3]),
            window: hi(a[3]),
            srtt: lo(a[4]),
            rttvar: hi(a[4]),
            ecn_ewma: lo(a[5]),
            loss_ewma: hi(a[5]),
            samples: lo(a[6]),
            sent: hi(a[6]),
            retransmitted: lo(b[0]),
            acked: hi(b[0]),
            lost: lo(b[1]),
            ce_marked: hi(b[1]),
            repaths: lo(b[2]),
            timeouts: hi(b[2]),
            entropy: b[3] as u16,
            rtt_valid: b[3] >> 16 & 1 == 1,
            quarantined: b[3] >> 17 & 1 == 1,
            backoff: (b[3] >> 18 & 0xF) as u32,
            can_send: false,
        }
    }

    /// The slot as the engine reads it (32-bit counters widened).
    pub fn to_view(&self) -> PathView {
        PathView {
            entropy: self.entropy,
            next_psn: self.next_psn,
            una: self.una,
            inflight: self.inflight,
            window: self.window,
            rtt: RttEstimator::from_parts(self.srtt.into(), self.rttvar.into(), self.rtt_valid),
            ecn_ewma: self.ecn_ewma,
            loss_ewma: self.loss_ewma,
            samples: self.samples,
            quarantined: self.quarantined,
            backoff: self.backoff as u8,
            sent: self.sent.into(),
            retransmitted: self.retransmitted.into(),
            acked: self.acked.into(),
            lost: self.lost.into(),
            ce_marked: self.ce_marked.into(),
            repaths: self.repaths.into(),
            timeouts: self.timeouts.into(),
        }
    }
}

/// The inputs of one TX table operation (`op_*` of `NicCore`, the `TXT` block's
/// `OP_*` registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpInputs {
    /// `op_code` (`metaroce_hdl::TxOp`).
    pub code: u8,
    /// `op_psn`.
    pub psn: u32,
    /// `op_len`.
    pub len: u16,
    /// `op_probe`.
    pub probe: bool,
    /// `op_retx`.
    pub retx: bool,
    /// `op_rtt` when valid.
    pub rtt: Option<u32>,
    /// `op_ce_count`.
    pub ce: u32,
    /// `op_acked`.
    pub acked: u32,
    /// `op_value`.
    pub value: u32,
    /// `op_sack`, 256 bits little-endian.
    pub sack: [u8; 32],
}

impl OpInputs {
    /// The `OP_CTRL` value of this operation on `slot` (code, slot, flags).
    pub fn ctrl(&self, slot: usize) -> u32 {
        let mut f = OpCtrl::empty();
        f.set(OpCtrl::PROBE, self.probe);
        f.set(OpCtrl::RETX, self.retx);
        f.set(OpCtrl::RTT_VALID, self.rtt.is_some());
        u32::from(self.code) | (slot as u32) << OP_SLOT_SHIFT | f.bits()
    }

    /// The engine's table operation as the table's inputs (an RTT sample saturates
    /// at 2^32 − 1 ns; the RTL needs no byte count).
    pub fn from_op(op: &TableOp) -> Self {
        use crate::hw::codes::tx_op as code;
        let none = OpInputs::default();
        match *op {
            TableOp::Init { entropy } => OpInputs {
                code: code::INIT,
                value: entropy.into(),
                ..none
            },
            TableOp::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => OpInputs {
                code: code::SEND,
                psn: conn_psn,
                len,
                probe,
                retx,
                ..none
            },
            TableOp::Ack { path_cum, sack } => OpInputs {
                code: code::ACK,
                psn: path_cum,
                sack: sack.to_bytes(),
                ..none
            },
            TableOp::Feedback {
                rtt_ns,
                ce_count,
                acked,
            } => OpInputs {
                code: code::FEEDBACK,
                rtt: rtt_ns.map(|r| r.min(u64::from(u32::MAX)) as u32),
                ce: ce_count,
                acked,
                ..none
            },
            TableOp::Timeout { entropy } => OpInputs {
                code: code::TIMEOUT,
                value: entropy.into(),
                ..none
            },
            TableOp::Move { entropy } => OpInputs {
                code: code::MOVE,
                value: entropy.into(),
                ..none
            },
            TableOp::Window { bytes } => OpInputs {
                code: code::WINDOW,
                value: bytes,
                ..none
            },
            TableOp::Lose { path_psn } => OpInputs {
                code: code::LOSE,
                psn: path_psn,
                ..none
            },
        }
    }
}
