//! How the suite sets up the implementation under test.
//!
//! The suite is a black box on the wire: it builds and parses every packet itself
//! with `metaroce-proto` and talks to the target over real UDP sockets. What it
//! cannot do on the wire — create queue pairs and memory regions, post work, move a
//! QP through its states, read memory and completions — it asks of a [`Target`].
//! A vendor's NIC is tested by implementing these two traits (in process, or over a
//! control channel of the vendor's choice); `docs/compliance.md` lists what each
//! call must do.

use std::net::SocketAddr;

use metaroce_driver::verbs::{QpConfig, SendOp};
use serde::{Deserialize, Serialize};

/// Result of a target operation; the error is a human-readable reason.
pub type TargetResult<T> = Result<T, String>;

/// A kind of implementation under test. Each test case opens a fresh [`Device`],
/// so cases are independent and may run in parallel.
pub trait Target: Send + Sync {
    /// Short name for reports (`soft`, `soft+broken-sack`, a vendor's model...).
    fn name(&self) -> String;
    /// Brings up one fresh endpoint: no QPs, no memory regions, counters at 0.
    fn open(&self) -> TargetResult<Box<dyn Device>>;
}

/// Per-QP settings the suite asks for (spec §9.2). A target that cannot honour
/// one fails [`Device::create_qp`]; the cases that need it are then skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QpOptions {
    /// Paths this QP sprays over as a sender (1..=64).
    pub paths: u16,
    /// Streams (≥ 1).
    pub streams: u16,
    /// Receive window `W` in packets, advertised as credit.
    pub recv_window: u32,
    /// Delay asked for in RNR NACKs, µs.
    pub rnr_delay_us: u32,
    /// Path RTO before the first RTT sample, ns.
    pub rto_initial_ns: u64,
    /// Floor of the path RTO once RTT samples exist, ns (`None`: the
    /// target's own). A case that must see no path timeout after its first
    /// ACK sets it: the suite's ACKs come late on a loaded host, and an
    /// RTO from loopback RTT samples is a millisecond or two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_min_ns: Option<u64>,
    /// Connection timeout (`timeout_ns`, §5.12).
    pub timeout_ns: u64,
    /// Connection retries (0..=7).
    pub retry_cnt: u8,
    /// RNR retries (7 = unlimited).
    pub rnr_retry: u8,
}

impl Default for QpOptions {
    fn default() -> Self {
        QpOptions {
            paths: 4,
            streams: 4,
            recv_window: 256,
            rnr_delay_us: 100,
            // Long enough that a slow machine (or a remote agent) never sees a
            // spurious path timeout or connection timeout; cases that test the
            // timers set their own.
            rto_initial_ns: 100_000_000,
            rto_min_ns: None,
            timeout_ns: 1_000_000_000,
            retry_cnt: 7,
            rnr_retry: 7,
        }
    }
}

impl QpOptions {
    /// `base` (a target's own QP settings) with these options applied.
    pub fn qp_config(&self, base: QpConfig) -> QpConfig {
        QpConfig {
            paths: self.paths,
            streams: self.streams,
            recv_window: self.recv_window,
            rnr_delay_us: self.rnr_delay_us,
            rto_initial_ns: self.rto_initial_ns,
            rto_min_ns: self.rto_min_ns.unwrap_or(base.rto_min_ns),
            ..base
        }
    }
}

/// The peer parameters exchanged out of band before RTR (spec §9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerParams {
    /// The peer's QPN.
    pub qpn: u32,
    /// The peer's IP address and MetaRoCE UDP port (replies go there).
    pub addr: SocketAddr,
    /// The first conn PSN the peer sends.
    pub initial_psn: u32,
}

/// Memory-region access rights (spec §9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MrAccess {
    /// The NIC may write into it locally (receives, READ responses).
    pub local_write: bool,
    /// The peer may WRITE into it.
    pub remote_write: bool,
    /// The peer may READ from it.
    pub remote_read: bool,
    /// The peer's atomics may operate on it (targets without atomics ignore it).
    #[serde(default)]
    pub remote_atomic: bool,
}

impl MrAccess {
    /// Every right.
    pub const ALL: MrAccess = MrAccess {
        local_write: true,
        remote_write: true,
        remote_read: true,
        remote_atomic: true,
    };
}

/// A registered memory region as the peer and the suite see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MrInfo {
    /// Target-local handle.
    pub handle: u32,
    /// Address of its first byte (what a peer puts in `remote_va`).
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// Remote key.
    pub rkey: u32,
}

/// A send work request (spec §5.2). Local data is `len` bytes at `offset` of `mr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendWork {
    /// Caller's id.
    pub wr_id: u64,
    /// Operation.
    pub op: WorkOp,
    /// Local region.
    pub mr: u32,
    /// Offset in the local region.
    pub offset: u64,
    /// Length.
    pub len: u32,
    /// Stream.
    pub stream: u16,
    /// Ask for a solicited event.
    pub solicited: bool,
}

/// What a [`SendWork`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkOp {
    /// RDMA WRITE.
    Write {
        /// Peer address.
        remote_va: u64,
        /// Peer key.
        rkey: u32,
    },
    /// RDMA WRITE with immediate.
    WriteImm {
        /// Peer address.
        remote_va: u64,
        /// Peer key.
        rkey: u32,
        /// Immediate.
        imm: u32,
    },
    /// SEND.
    Send,
    /// SEND with immediate.
    SendImm {
        /// Immediate.
        imm: u32,
    },
    /// RDMA READ into the local buffer.
    Read {
        /// Peer address.
        remote_va: u64,
        /// Peer key.
        rkey: u32,
    },
}

impl From<WorkOp> for SendOp {
    fn from(op: WorkOp) -> Self {
        match op {
            WorkOp::Write { remote_va, rkey } => SendOp::Write { remote_va, rkey },
            WorkOp::WriteImm {
                remote_va,
                rkey,
                imm,
            } => SendOp::WriteImm {
                remote_va,
                rkey,
                imm,
            },
            WorkOp::Send => SendOp::Send,
            WorkOp::SendImm { imm } => SendOp::SendImm { imm },
            WorkOp::Read { remote_va, rkey } => SendOp::Read { remote_va, rkey },
        }
    }
}

/// A work completion, reduced to what the suite checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// The work request's id.
    pub wr_id: u64,
    /// Verbs status name: `SUCCESS`, `REM_ACCESS_ERR`, `WR_FLUSH_ERR`, ...
    pub status: String,
    /// `SEND`, `WRITE`, `READ`, `RECV`, `RECV_RDMA_WITH_IMM`.
    pub opcode: String,
    /// Bytes (receives: the message length).
    pub byte_len: u32,
    /// Immediate data, if any.
    pub imm: Option<u32>,
}

/// QP state names of spec §9.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum QpStateName {
    /// RESET.
    Reset,
    /// INIT.
    Init,
    /// RTR.
    Rtr,
    /// RTS.
    Rts,
    /// ERR.
    Err,
}

/// One endpoint of the implementation under test, opened for one test case.
pub trait Device: Send {
    /// The endpoint's IP address and MetaRoCE UDP port: where the suite sends.
    fn address(&self) -> SocketAddr;
    /// Creates a QP in RESET; returns its QPN.
    fn create_qp(&mut self, opts: &QpOptions) -> TargetResult<u32>;
    /// RESET → INIT → RTR (towards `peer`) → RTS with `own_initial_psn` as the
    /// first conn PSN the QP sends.
    fn connect(&mut self, qpn: u32, peer: &PeerParams, own_initial_psn: u32) -> TargetResult<()>;
    /// RESET → INIT → RTR (towards `peer`) only: the QP has no first send PSN of its
    /// own, as a Verbs READ responder that never sends a request (§9.1). A target
    /// that cannot do this returns an error and the cases that need it are skipped.
    fn connect_rtr(&mut self, qpn: u32, peer: &PeerParams) -> TargetResult<()> {
        let _ = (qpn, peer);
        Err("this target cannot leave a QP in RTR".into())
    }
    /// Registers a zeroed region of `len` bytes in the QPs' protection domain.
    fn reg_mr(&mut self, len: u64, access: MrAccess) -> TargetResult<MrInfo>;
    /// Writes local memory of a region.
    fn write_mr(&mut self, mr: u32, offset: u64, data: &[u8]) -> TargetResult<()>;
    /// Reads local memory of a region.
    fn read_mr(&mut self, mr: u32, offset: u64, len: usize) -> TargetResult<Vec<u8>>;
    /// Deregisters a region (its keys stop covering it; §6.2 step 22).
    fn dereg_mr(&mut self, mr: u32) -> TargetResult<()>;
    /// Posts a send work request.
    fn post_send(&mut self, qpn: u32, work: &SendWork) -> TargetResult<()>;
    /// Posts a receive of `len` bytes at `offset` of `mr` on `stream`.
    fn post_recv(
        &mut self,
        qpn: u32,
        wr_id: u64,
        mr: u32,
        offset: u64,
        len: u32,
        stream: u16,
    ) -> TargetResult<()>;
    /// Takes the completions delivered so far (send and receive) of the QP.
    fn poll_completions(&mut self, qpn: u32) -> Vec<Completion>;
    /// The QP's state, if the QP exists.
    fn qp_state(&mut self, qpn: u32) -> Option<QpStateName>;
    /// Application disconnect (spec §9.4): queue one DISCONNECT and enter ERR.
    fn disconnect(&mut self, qpn: u32) -> TargetResult<()>;
    /// The endpoint's drop counters by the names of spec §6.2, if it exposes them.
    /// Cases use them as extra evidence only; every verdict stands on the wire.
    fn drop_counters(&mut self) -> Option<Vec<(String, u64)>> {
        None
    }
    /// Whether the endpoint can send each packet from a source port of its choice
    /// (§2.3). A software endpoint that sends from a fixed set of sockets may not;
    /// the case on ACK source ports is then skipped.
    fn chooses_source_ports(&self) -> bool {
        true
    }
    /// The endpoint's mtu (largest payload per packet, §2.6).
    fn mtu(&self) -> u32 {
        4096
    }
    /// Whether the endpoint implements the atomics of revision v0.1.2 (§3.3, §6.8);
    /// the atomic cases are skipped for targets that do not.
    fn atomics(&self) -> bool {
        false
    }
    /// The fair-share line rate the endpoint divides in its rate hints (§6.9), Mbit/s,
    /// if it follows the reference policy; `None` skips the rate-hint policy case.
    fn line_rate_mbps(&self) -> Option<u32> {
        None
    }
}
