//! The per-path TX table (`metaroce_hdl::tx_path_verilog(16)`) against the
//! engine.
//!
//! The golden model is the engine's own `metaroce_firmware::TxPath`, one per
//! slot, built with the engine's congestion controller
//! (`QpConfig::default().cc`): every operation goes to both, and the bench
//! compares the returned path PSN, the fate events in order, the ACK's
//! (packets, bytes) and every read-port field against `TxPath::stats()`,
//! `rto()`, `health()`, `slots_len()`, `can_send()` and `wants_repath()`.
//!
//! ACKs come from the engine's receive side too: the 16 slots are two QPs
//! of 8 paths, each QP a [`crate::rx_path::Engine`] that receives the
//! transmissions that survive a lossy, reordering network (as PROBEs on
//! their path) and answers with its real ACK fields (`path_cum`, `sack`,
//! `ce_count`). The bench sends those ACKs, stale ones from the history,
//! duplicates and hostile ones (random `path_cum` and bitmap). RACK is
//! the engine's `on_rack`: each transmission it declares lost becomes one
//! `Lose` operation on the RTL.

use std::collections::HashMap;

use metaroce_firmware::{PathHealth, QpConfig, SlotFate, TableOp, TxPath};
use metaroce_hdl::tx_path::VIEW_BITS;
use metaroce_proto::Sack;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::rx_path::{self, Arrival, PathState};
use crate::{Model, Port, Sim, SimError};

/// `op_code` values (generated from `metaroce_hdl::TxOp`).
pub mod code {
    include!(concat!(env!("OUT_DIR"), "/tx_ops.rs"));
}

/// Slots of the Verilated model: 2 QPs × [`rx_path::PATHS`] paths.
pub const SLOTS: usize = 16;

/// MTU the congestion controllers are built for.
const MTU: u32 = 4096;

/// Longest an operation may take before the bench gives up, cycles.
const OP_TIMEOUT: u64 = 4096;

/// One operation on a slot.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A fresh path with this entropy.
    Init {
        /// Entropy value.
        entropy: u16,
    },
    /// A data transmission or a probe.
    Send {
        /// Connection PSN (data).
        conn_psn: u32,
        /// Payload bytes (data).
        len: u16,
        /// A probe rather than data.
        probe: bool,
        /// A retransmission (data).
        retx: bool,
    },
    /// An ACK's path fields.
    Ack {
        /// Cumulative path PSN.
        path_cum: u32,
        /// SACK bitmap above it.
        sack: Sack,
    },
    /// `on_ack_feedback`.
    Feedback {
        /// RTT sample, ns.
        rtt_ns: Option<u32>,
        /// The ACK's cumulative CE count.
        ce_count: u32,
        /// Packets the ACK acknowledged.
        acked: u32,
        /// Bytes the ACK acknowledged.
        bytes: u32,
    },
    /// The path timed out and moves to `entropy`.
    Timeout {
        /// New entropy value.
        entropy: u16,
    },
    /// The path moves to `entropy`.
    Move {
        /// New entropy value.
        entropy: u16,
    },
    /// The firmware writes the window.
    Window {
        /// Window, bytes.
        window: u32,
    },
    /// The firmware's RACK found this transmission lost.
    Lose {
        /// Path PSN.
        path_psn: u32,
    },
}

impl From<TableOp> for Op {
    /// The engine's table operation on the table's ports (an RTT sample
    /// saturates at 2^32 − 1 ns; the RTL needs no byte count).
    fn from(op: TableOp) -> Self {
        match op {
            TableOp::Init { entropy } => Op::Init { entropy },
            TableOp::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => Op::Send {
                conn_psn,
                len,
                probe,
                retx,
            },
            TableOp::Ack { path_cum, sack } => Op::Ack { path_cum, sack },
            TableOp::Feedback {
                rtt_ns,
                ce_count,
                acked,
            } => Op::Feedback {
                rtt_ns: rtt_ns.map(|r| r.min(u64::from(u32::MAX)) as u32),
                ce_count,
                acked,
                bytes: 0,
            },
            TableOp::Timeout { entropy } => Op::Timeout { entropy },
            TableOp::Move { entropy } => Op::Move { entropy },
            TableOp::Window { bytes } => Op::Window { window: bytes },
            TableOp::Lose { path_psn } => Op::Lose { path_psn },
        }
    }
}

/// What the firmware does next on a slot: one operation, or a RACK check
/// (the engine's `on_rack`, as `Lose` operations on the RTL).
#[derive(Clone, Debug)]
enum Action {
    Op(Op),
    Rack { delivered_sent_ns: u64 },
}

/// What one operation returned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpResult {
    /// A send found room (always true for other operations).
    pub ok: bool,
    /// A send's path PSN.
    pub psn: u32,
    /// An ACK's acknowledged packets.
    pub pkts: u32,
    /// An ACK's acknowledged bytes.
    pub bytes: u32,
    /// Fate events, in order.
    pub fates: Vec<SlotFate>,
}

/// The table's result port and fate stream, named alike in the standalone
/// table and in `NicCore`.
pub(crate) struct ResultPorts {
    /// `res_valid`.
    pub(crate) valid: Port,
    ok: Port,
    psn: Port,
    pkts: Port,
    bytes: Port,
    fate_valid: Port,
    /// `m_fate_ready`.
    pub(crate) fate_ready: Port,
    fate_lost: Port,
    fate_conn_psn: Port,
}

impl ResultPorts {
    /// Looks the ports up in `s`.
    pub(crate) fn new(s: &Sim) -> Result<Self, SimError> {
        Ok(Self {
            valid: s.port("res_valid")?,
            ok: s.port("res_ok")?,
            psn: s.port("res_psn")?,
            pkts: s.port("res_pkts")?,
            bytes: s.port("res_bytes")?,
            fate_valid: s.port("m_fate_valid")?,
            fate_ready: s.port("m_fate_ready")?,
            fate_lost: s.port("m_fate_lost")?,
            fate_conn_psn: s.port("m_fate_conn_psn")?,
        })
    }

    /// The fate event taken this cycle: one is valid while `ready` drives `m_fate_ready`.
    pub(crate) fn fate(&self, sim: &mut Sim, ready: bool) -> Option<SlotFate> {
        if !ready || sim.get(self.fate_valid) != 1 {
            return None;
        }
        let conn_psn = sim.get(self.fate_conn_psn) as u32;
        Some(if sim.get(self.fate_lost) == 1 {
            SlotFate::Lost { conn_psn }
        } else {
            SlotFate::Acked { conn_psn }
        })
    }

    /// The result on the port (in its `res_valid` cycle), with the fates taken while the operation ran.
    pub(crate) fn result(&self, sim: &mut Sim, fates: Vec<SlotFate>) -> OpResult {
        OpResult {
            ok: sim.get(self.ok) == 1,
            psn: sim.get(self.psn) as u32,
            pkts: sim.get(self.pkts) as u32,
            bytes: sim.get(self.bytes) as u32,
            fates,
        }
    }
}

pub use metaroce_driver::hw::tables::SlotState;

/// The table's operation, result and read ports, named alike in the
/// standalone table and in `NicCore`.
pub(crate) struct TablePorts {
    /// `op_valid`.
    pub(crate) op_valid: Port,
    /// `op_ready`.
    pub(crate) op_ready: Port,
    op_code: Port,
    op_slot: Port,
    op_psn: Port,
    op_len: Port,
    op_probe: Port,
    op_retx: Port,
    op_sack: Port,
    op_rtt_valid: Port,
    op_rtt: Port,
    op_ce_count: Port,
    op_acked: Port,
    op_value: Port,
    /// The result port and fate stream.
    pub(crate) res: ResultPorts,
    rd_slot: Port,
    rd_len: Port,
    rd: [Port; 21],
    cap_slot: Port,
    cap_view: Port,
}

impl TablePorts {
    /// Looks the ports up in `s`.
    pub(crate) fn new(s: &Sim) -> Result<Self, SimError> {
        let rd: Vec<Port> = RD_PORTS
            .iter()
            .map(|n| s.port(n))
            .collect::<Result<_, _>>()?;
        Ok(TablePorts {
            op_valid: s.port("op_valid")?,
            op_ready: s.port("op_ready")?,
            op_code: s.port("op_code")?,
            op_slot: s.port("op_slot")?,
            op_psn: s.port("op_psn")?,
            op_len: s.port("op_len")?,
            op_probe: s.port("op_probe")?,
            op_retx: s.port("op_retx")?,
            op_sack: s.port("op_sack")?,
            op_rtt_valid: s.port("op_rtt_valid")?,
            op_rtt: s.port("op_rtt")?,
            op_ce_count: s.port("op_ce_count")?,
            op_acked: s.port("op_acked")?,
            op_value: s.port("op_value")?,
            res: ResultPorts::new(s)?,
            rd_slot: s.port("rd_slot")?,
            rd_len: s.port("rd_len")?,
            rd: rd.try_into().expect("one port per name"),
            cap_slot: s.port("cap_slot")?,
            cap_view: s.port("cap_view")?,
        })
    }

    /// Drives the operation inputs for `op` on `slot` (not `op_valid`).
    pub(crate) fn drive(&self, sim: &mut Sim, slot: usize, op: &Op) {
        let none = Inputs::default();
        let i = match *op {
            Op::Init { entropy } => Inputs {
                code: code::INIT,
                value: entropy.into(),
                ..none
            },
            Op::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => Inputs {
                code: code::SEND,
                psn: conn_psn,
                len,
                probe,
                retx,
                ..none
            },
            Op::Ack { path_cum, sack } => Inputs {
                code: code::ACK,
                psn: path_cum,
                sack,
                ..none
            },
            Op::Feedback {
                rtt_ns,
                ce_count,
                acked,
                ..
            } => Inputs {
                code: code::FEEDBACK,
                rtt: rtt_ns,
                ce: ce_count,
                acked,
                ..none
            },
            Op::Timeout { entropy } => Inputs {
                code: code::TIMEOUT,
                value: entropy.into(),
                ..none
            },
            Op::Move { entropy } => Inputs {
                code: code::MOVE,
                value: entropy.into(),
                ..none
            },
            Op::Window { window } => Inputs {
                code: code::WINDOW,
                value: window,
                ..none
            },
            Op::Lose { path_psn } => Inputs {
                code: code::LOSE,
                psn: path_psn,
                ..none
            },
        };
        sim.set(self.op_code, i.code.into());
        sim.set(self.op_slot, slot as u64);
        sim.set(self.op_psn, i.psn.into());
        sim.set(self.op_len, i.len.into());
        sim.set(self.op_probe, i.probe.into());
        sim.set(self.op_retx, i.retx.into());
        sim.set_bytes(self.op_sack, &i.sack.to_bytes());
        sim.set(self.op_rtt_valid, i.rtt.is_some().into());
        sim.set(self.op_rtt, i.rtt.unwrap_or(0).into());
        sim.set(self.op_ce_count, i.ce.into());
        sim.set(self.op_acked, i.acked.into());
        sim.set(self.op_value, i.value.into());
    }

    /// Slot `slot`'s state on the read port, with `can_send(len)` (an
    /// asynchronous read: evaluates the model with the inputs as driven).
    pub(crate) fn read(&self, sim: &mut Sim, slot: usize, len: u16) -> SlotState {
        sim.set(self.rd_slot, slot as u64);
        sim.set(self.rd_len, len.into());
        sim.eval();
        let mut v = [0u32; 21];
        for (x, &port) in v.iter_mut().zip(&self.rd) {
            *x = sim.get(port) as u32;
        }
        SlotState {
            entropy: v[0] as u16,
            next_psn: v[1],
            una: v[2],
            inflight: v[3],
            window: v[4],
            srtt: v[5],
            rttvar: v[6],
            rtt_valid: v[7] == 1,
            ecn_ewma: v[8],
            loss_ewma: v[9],
            samples: v[10],
            sent: v[11],
            retransmitted: v[12],
            acked: v[13],
            lost: v[14],
            ce_marked: v[15],
            repaths: v[16],
            timeouts: v[17],
            quarantined: v[18] == 1,
            backoff: v[19],
            can_send: v[20] == 1,
        }
    }
}

impl TablePorts {
    /// Slot `slot`'s state on the capture port (`cap_view`, the layout the host
    /// interface's result entries carry; no `can_send`).
    pub(crate) fn capture(&self, sim: &mut Sim, slot: usize) -> SlotState {
        sim.set(self.cap_slot, slot as u64);
        sim.eval();
        let mut bytes = [0u8; 72];
        sim.get_bytes(self.cap_view, &mut bytes[..VIEW_BITS.div_ceil(8)]);
        let word = |k: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[8 * k..8 * k + 8]);
            u64::from_le_bytes(b)
        };
        // Bits 319..0 are the result entry's words 2..6, the rest the view
        // entry's words 0..3.
        let a: [u64; 8] =
            std::array::from_fn(|k| if (2..7).contains(&k) { word(k - 2) } else { 0 });
        let b: [u64; 8] = std::array::from_fn(|k| if k < 4 { word(5 + k) } else { 0 });
        SlotState::from_event(&a, &b)
    }
}

/// Values of the `op_*` inputs for one operation (zero where unused).
#[derive(Default)]
struct Inputs {
    code: u8,
    psn: u32,
    len: u16,
    probe: bool,
    retx: bool,
    sack: Sack,
    rtt: Option<u32>,
    ce: u32,
    acked: u32,
    value: u32,
}

/// Read-port outputs, in [`SlotState`] field order.
const RD_PORTS: [&str; 21] = [
    "rd_entropy",
    "rd_next_psn",
    "rd_una",
    "rd_inflight",
    "rd_window",
    "rd_srtt",
    "rd_rttvar",
    "rd_rtt_valid",
    "rd_ecn_ewma",
    "rd_loss_ewma",
    "rd_samples",
    "rd_sent",
    "rd_retransmitted",
    "rd_acked",
    "rd_lost",
    "rd_ce_marked",
    "rd_repaths",
    "rd_timeouts",
    "rd_quarantined",
    "rd_backoff",
    "rd_can_send",
];

/// Driver for the Verilated table.
pub struct TxPathTb {
    sim: Sim,
    p: TablePorts,
    /// Reads in which the capture port disagreed with the read port.
    capture_errors: Vec<String>,
    /// Decides `m_fate_ready` each cycle (back-pressure on the fate stream).
    ready_rng: SmallRng,
    /// Chance that `m_fate_ready` is high in a cycle.
    ready_share: f64,
}

impl TxPathTb {
    /// The 16-slot model, reset; the fate stream is ready 75% of cycles.
    pub fn new() -> Result<Self, SimError> {
        Self::on(Model::TxPath16)
    }

    /// The same on the table's ports inside `model` (`Model::TxPath16`, or
    /// the NIC top `Model::NicCore64`, whose 16-slot table has the same
    /// port names).
    pub fn on(model: Model) -> Result<Self, SimError> {
        let mut sim = Sim::new(model)?;
        let p = TablePorts::new(&sim)?;
        sim.reset()?;
        Ok(TxPathTb {
            sim,
            p,
            capture_errors: Vec::new(),
            ready_rng: SmallRng::seed_from_u64(0xFA7E),
            ready_share: 0.75,
        })
    }

    /// Sets the chance that `m_fate_ready` is high in a cycle (1.0: always).
    pub fn set_fate_ready_share(&mut self, share: f64) {
        self.ready_share = share;
    }

    /// The underlying model.
    pub fn sim(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// Drives the operation inputs for `op` on `slot`.
    pub(crate) fn drive(&mut self, slot: usize, op: &Op) {
        self.p.drive(&mut self.sim, slot, op);
    }

    /// Runs `op` on `slot` to its `res_valid` pulse, taking fate events
    /// whenever `m_fate_ready` is high; returns the result and the cycles
    /// from the operation's cycle to the result.
    pub fn run(&mut self, slot: usize, op: &Op) -> Result<(OpResult, u64), String> {
        self.drive(slot, op);
        let p = &self.p;
        let sim = &mut self.sim;
        sim.set(p.op_valid, 1);
        sim.eval();
        if sim.get(p.op_ready) != 1 {
            return Err("op_ready low between operations".into());
        }
        let start = sim.cycles();
        let mut fates = Vec::new();
        loop {
            let ready = self.ready_rng.gen_bool(self.ready_share);
            sim.set(p.res.fate_ready, ready.into());
            sim.eval();
            fates.extend(p.res.fate(sim, ready));
            sim.tick();
            sim.set(p.op_valid, 0);
            sim.eval();
            if sim.get(p.res.valid) == 1 {
                break;
            }
            if sim.cycles() - start > OP_TIMEOUT {
                return Err(format!("no res_valid within {OP_TIMEOUT} cycles"));
            }
        }
        Ok((p.res.result(sim, fates), sim.cycles() - start))
    }

    /// Slot `slot`'s state on the read port, with `can_send(len)`; the capture
    /// port is read for the same slot and every disagreement recorded
    /// ([`TxPathTb::capture_errors`]).
    pub fn read(&mut self, slot: usize, len: u16) -> SlotState {
        let got = self.p.read(&mut self.sim, slot, len);
        let cap = self.p.capture(&mut self.sim, slot);
        if cap
            != (SlotState {
                can_send: false,
                ..got
            })
            && self.capture_errors.len() < 10
        {
            self.capture_errors.push(format!(
                "slot {slot}: capture port {cap:?}, read port {got:?}"
            ));
        }
        got
    }

    /// The reads in which the capture port (`cap_view`) disagreed with the read
    /// port (the first ten).
    pub fn capture_errors(&self) -> &[String] {
        &self.capture_errors
    }
}

/// The golden model of one slot: the engine's `TxPath` and the next path
/// PSN it handed out (it does not expose it otherwise).
pub struct Golden {
    path: TxPath,
    next_psn: u32,
}

impl Golden {
    /// A fresh engine path with `entropy` and the engine's default
    /// congestion controller.
    pub fn new(entropy: u16) -> Self {
        Golden {
            path: TxPath::new(entropy, QpConfig::default().cc.build(MTU)),
            next_psn: 0,
        }
    }

    /// The engine's path.
    pub fn path(&self) -> &TxPath {
        &self.path
    }

    /// The path's RTO as the engine computes it.
    fn rto(&self) -> u64 {
        let cfg = QpConfig::default();
        self.path.rto(cfg.rto_min_ns, cfg.rto_initial_ns)
    }

    /// Applies `op` at `now_ns` and returns what the RTL must return.
    pub fn apply(&mut self, op: &Op, now_ns: u64) -> OpResult {
        let mut r = OpResult {
            ok: true,
            ..OpResult::default()
        };
        let rto = self.rto();
        match *op {
            Op::Init { entropy } => *self = Golden::new(entropy),
            Op::Send {
                conn_psn,
                len,
                probe,
                retx,
            } => {
                r.psn = if probe {
                    self.path.on_send_probe(now_ns, rto)
                } else {
                    self.path
                        .on_send_data(conn_psn, len.into(), retx, now_ns, rto)
                };
                self.next_psn = r.psn.wrapping_add(1);
            }
            Op::Ack { path_cum, sack } => {
                (r.pkts, r.bytes) = self.path.on_ack(path_cum, &sack, |f| r.fates.push(f));
            }
            Op::Feedback {
                rtt_ns,
                ce_count,
                acked,
                bytes,
            } => self.path.on_ack_feedback(
                now_ns,
                rtt_ns.map(u64::from),
                ce_count,
                acked,
                bytes,
                rto,
            ),
            Op::Timeout { entropy } => self.path.on_timeout(now_ns, entropy, |f| r.fates.push(f)),
            Op::Move { entropy } => self.path.move_to(entropy),
            // The engine's controller owns the window; the RTL mirrors it.
            Op::Window { .. } => {}
            // The engine has no single-transmission loss: see `rack`.
            Op::Lose { .. } => {}
        }
        r
    }

    /// The engine's RACK check (`on_rack`) at `now_ns`: the transmissions
    /// it declares lost.
    pub fn rack(&mut self, now_ns: u64, delivered_sent_ns: u64) -> Vec<SlotFate> {
        let mut fates = Vec::new();
        self.path
            .on_rack(now_ns, delivered_sent_ns, |f| fates.push(f));
        fates
    }

    /// The fields the read port must show, from the engine's accessors.
    /// Counters are the low 32 bits of the engine's; the EWMAs are the
    /// engine's `f32` fractions times 2^16 (exact: they are 16.16 values
    /// below 2^24, which `f32` holds exactly); `samples` only as
    /// far as the engine shows it (`wants_repath` with limits below 0 is
    /// `samples >= 8`).
    fn expect(&self, len: u16) -> [(&'static str, u64); 21] {
        let s = self.path.stats();
        let unsampled = self.path.rto(0, u64::MAX) == u64::MAX;
        let rttvar = if unsampled {
            0
        } else {
            (self.path.rto(0, 0) - s.srtt_ns) / 4
        };
        let backoff = match self.path.health() {
            PathHealth::Quarantined { backoff, .. } => backoff,
            PathHealth::Active => 0,
        };
        let una = self.next_psn.wrapping_sub(self.path.slots_len() as u32);
        [
            ("entropy", s.entropy.into()),
            ("next_psn", self.next_psn.into()),
            ("una", una.into()),
            ("inflight", s.inflight_bytes.into()),
            ("window", s.window.into()),
            ("srtt", s.srtt_ns),
            ("rttvar", rttvar),
            ("rtt_valid", (!unsampled).into()),
            ("ecn_ewma", (f64::from(s.ecn_fraction) * 65536.0) as u64),
            ("loss_ewma", (f64::from(s.loss_fraction) * 65536.0) as u64),
            ("samples>=8", self.path.wants_repath(-1.0, -1.0).into()),
            ("sent", s.sent & 0xFFFF_FFFF),
            ("retransmitted", s.retransmitted & 0xFFFF_FFFF),
            ("acked", s.acked & 0xFFFF_FFFF),
            ("lost", s.lost & 0xFFFF_FFFF),
            ("ce_marked", s.ce_marked & 0xFFFF_FFFF),
            ("repaths", s.repaths & 0xFFFF_FFFF),
            ("timeouts", s.timeouts & 0xFFFF_FFFF),
            ("quarantined", s.quarantined.into()),
            ("backoff", backoff.into()),
            ("can_send", self.path.can_send(len.into()).into()),
        ]
    }
}

/// The same fields as [`Golden::expect`], from the RTL.
fn slot_view(s: &SlotState) -> [(&'static str, u64); 21] {
    [
        ("entropy", s.entropy.into()),
        ("next_psn", s.next_psn.into()),
        ("una", s.una.into()),
        ("inflight", s.inflight.into()),
        ("window", s.window.into()),
        ("srtt", s.srtt.into()),
        ("rttvar", s.rttvar.into()),
        ("rtt_valid", s.rtt_valid.into()),
        ("ecn_ewma", s.ecn_ewma.into()),
        ("loss_ewma", s.loss_ewma.into()),
        ("samples>=8", (s.samples >= 8).into()),
        ("sent", s.sent.into()),
        ("retransmitted", s.retransmitted.into()),
        ("acked", s.acked.into()),
        ("lost", s.lost.into()),
        ("ce_marked", s.ce_marked.into()),
        ("repaths", s.repaths.into()),
        ("timeouts", s.timeouts.into()),
        ("quarantined", s.quarantined.into()),
        ("backoff", if s.quarantined { s.backoff.into() } else { 0 }),
        ("can_send", s.can_send.into()),
    ]
}

/// First read-port field where the RTL and the engine differ.
pub(crate) fn diff_state(got: &SlotState, want: &Golden, len: u16) -> Option<String> {
    slot_view(got)
        .iter()
        .zip(want.expect(len))
        .find(|((_, g), (_, w))| g != w)
        .map(|((name, g), (_, w))| format!("{name} RTL {g:#x}, engine {w:#x}"))
}

/// First difference between the RTL's and the engine's results.
pub(crate) fn diff_result(got: &OpResult, want: &OpResult) -> Option<String> {
    if got.ok != want.ok {
        return Some(format!("res_ok RTL {}, engine {}", got.ok, want.ok));
    }
    if got.psn != want.psn {
        return Some(format!(
            "path PSN RTL {:#x}, engine {:#x}",
            got.psn, want.psn
        ));
    }
    if (got.pkts, got.bytes) != (want.pkts, want.bytes) {
        return Some(format!(
            "(pkts, bytes) RTL {:?}, engine {:?}",
            (got.pkts, got.bytes),
            (want.pkts, want.bytes)
        ));
    }
    let n = got.fates.len().max(want.fates.len());
    (0..n)
        .find(|&i| got.fates.get(i) != want.fates.get(i))
        .map(|i| {
            format!(
                "fate #{i} RTL {:?}, engine {:?} ({} vs {} events)",
                got.fates.get(i),
                want.fates.get(i),
                got.fates.len(),
                want.fates.len()
            )
        })
}

/// Operation counts and cycles of a run, per [`Op`] kind (init, send,
/// ack, feedback, timeout, move, window, lose).
#[derive(Clone, Debug, Default)]
pub struct TxRun {
    /// Operations compared.
    pub ops: u64,
    /// Operations per kind.
    pub by_kind: [u64; 8],
    /// Cycles per kind (from the operation's cycle to its result).
    pub cycles_by_kind: [u64; 8],
    /// Longest operation per kind, cycles.
    pub max_cycles: [u64; 8],
    /// ACK operations by origin: receiver's latest, stale, hostile.
    pub acks: [u64; 3],
    /// Sends refused by the RTL because the ring was full.
    pub refused: u64,
    /// Operations after which the operated slot held 256 transmissions
    /// (the 256-PSN limit reached).
    pub full: u64,
    /// ACKs that ended a quarantine (a probe acknowledged).
    pub recovered: u64,
    /// RACK checks, and transmissions they declared lost.
    pub racks: [u64; 2],
    /// Fate events compared: acked, lost.
    pub fates: [u64; 2],
    /// Slot read-backs compared.
    pub reads: u64,
    /// Mismatches: operation and first differing field.
    pub mismatches: Vec<String>,
    /// Clock cycles in all.
    pub cycles: u64,
}

fn kind(op: &Op) -> usize {
    match op {
        Op::Init { .. } => 0,
        Op::Send { .. } => 1,
        Op::Ack { .. } => 2,
        Op::Feedback { .. } => 3,
        Op::Timeout { .. } => 4,
        Op::Move { .. } => 5,
        Op::Window { .. } => 6,
        Op::Lose { .. } => 7,
    }
}

/// The bench's world: the engine's paths, their receivers behind a lossy
/// reordering network, and the random choices of the firmware.
struct World {
    rng: SmallRng,
    /// Golden model per slot.
    gold: Vec<Golden>,
    /// Receive side: one engine QP per 8 slots.
    rx: Vec<rx_path::Engine>,
    /// Path PSNs in the network per slot (sent, not lost, not delivered).
    net: Vec<Vec<u32>>,
    /// ACK fields the receiver sent per slot, oldest first (last = latest).
    history: Vec<Vec<PathState>>,
    /// Offset added to the receiver's CE count per slot (so it wraps).
    ce_offset: Vec<u32>,
    /// The window the RTL holds per slot.
    rtl_window: Vec<u32>,
    /// Path PSN of each connection PSN sent as data, per slot.
    psn_of: Vec<HashMap<u32, u32>>,
    next_conn_psn: u32,
    now_ns: u64,
    src_port: u16,
    /// Steps taken; every third period of 3000 is a burst: mostly small
    /// sends and few deliveries, so rings fill to the 256-PSN limit.
    steps: u64,
    burst: bool,
}

impl World {
    /// A world seeded with `seed`.
    fn new(seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let ce_offset = (0..SLOTS)
            .map(|s| match s % 4 {
                0 => 0,
                1 => u32::MAX - 60,
                2 => (1 << 31) - 40,
                _ => rng.r#gen(),
            })
            .collect();
        World {
            rng,
            gold: (0..SLOTS).map(|_| Golden::new(0)).collect(),
            rx: (0..SLOTS / rx_path::PATHS)
                .map(|_| rx_path::Engine::new())
                .collect(),
            net: vec![Vec::new(); SLOTS],
            history: vec![vec![PathState::default()]; SLOTS],
            ce_offset,
            rtl_window: vec![0; SLOTS],
            psn_of: vec![HashMap::new(); SLOTS],
            next_conn_psn: 0,
            now_ns: 1_000_000,
            src_port: 0xC000,
            steps: 0,
            burst: false,
        }
    }

    /// Delivers path PSN `psn` of `slot` to its receiver.
    fn deliver(&mut self, slot: usize, psn: u32) {
        let ev = Arrival {
            path: (slot % rx_path::PATHS) as u16,
            psn,
            ce: self.rng.gen_bool(0.2),
        };
        self.src_port = 0xC000 | (self.src_port.wrapping_add(1) & 0x3FFF);
        let (ack, _, _) = self.rx[slot / rx_path::PATHS].arrive(ev, self.src_port);
        if let Some(a) = ack {
            let h = &mut self.history[slot];
            if h.len() == 64 {
                h.remove(0);
            }
            h.push(a);
        }
    }

    /// An ACK for `slot`: first some packets arrive (in random order
    /// outside bursts, some twice), then the receiver's latest ACK, an older one, or a hostile
    /// one. Returns the ACK and its origin (0 latest, 1 stale, 2 hostile).
    fn ack(&mut self, slot: usize) -> (PathState, usize) {
        let k = self.rng.gen_range(0..=if self.burst { 2 } else { 8 });
        for _ in 0..k {
            if self.net[slot].is_empty() {
                break;
            }
            // Random order; in a burst the oldest first, so the ring grows.
            let psn = if self.burst {
                self.net[slot].remove(0)
            } else {
                let i = self.rng.gen_range(0..self.net[slot].len());
                self.net[slot].swap_remove(i)
            };
            self.deliver(slot, psn);
            if self.rng.gen_bool(0.03) {
                self.deliver(slot, psn);
            }
        }
        let h = &self.history[slot];
        let latest = *h.last().expect("history starts non-empty");
        match self.rng.gen_range(0..100) {
            0..=79 => (latest, 0),
            80..=94 => (h[self.rng.gen_range(0..h.len())], 1),
            _ => {
                let g = &self.gold[slot];
                let una = g.next_psn.wrapping_sub(g.path.slots_len() as u32);
                let mut sack = Sack::new();
                for _ in 0..self.rng.gen_range(0..12) {
                    sack.set(self.rng.gen_range(0..256));
                }
                let cum = match self.rng.gen_range(0..4) {
                    0 => self.rng.r#gen(),
                    _ => una
                        .wrapping_add(self.rng.gen_range(0..600))
                        .wrapping_sub(300),
                };
                let a = PathState {
                    cum,
                    sack,
                    ..latest
                };
                (a, 2)
            }
        }
    }

    /// An RTT sample: mostly 2–200 µs, sometimes tiny, rarely up to
    /// 2^32 - 1 ns.
    fn rtt(&mut self) -> Option<u32> {
        let r = &mut self.rng;
        match r.gen_range(0..100) {
            0..=14 => None,
            15..=79 => Some(r.gen_range(2_000..200_000)),
            80..=97 => Some(r.gen_range(0..2_000)),
            _ => Some(r.r#gen()),
        }
    }

    /// The next operation on a random slot: a send (data when the engine's
    /// `can_send` allows it, probes on quarantined paths; an ACK instead
    /// when neither fits), an ACK, a feedback alone, a timeout, a move or a
    /// RACK check; with the ACK's origin (see [`TxRun::acks`]).
    fn step(&mut self) -> (usize, Action, Option<usize>) {
        self.burst = (self.steps / 3000) % 3 == 2;
        self.steps += 1;
        let slot = if self.rng.gen_bool(0.5) {
            [0, 1, 8][self.rng.gen_range(0..3)]
        } else {
            self.rng.gen_range(0..SLOTS)
        };
        self.now_ns += self.rng.gen_range(0..20_000);
        let g = &self.gold[slot];
        let quarantined = g.path.stats().quarantined;
        let room = g.path.slots_len() < 256;
        let len: u16 = match self.rng.gen_range(0..10) {
            _ if self.burst => self.rng.gen_range(0..=64),
            0 => 0,
            1 => 4096,
            _ => self.rng.gen_range(0..=4096),
        };
        // 0: a send (an ACK when none is possible); else the other kinds.
        let r = if self.rng.gen_bool(if self.burst { 0.85 } else { 0.5 }) {
            0
        } else {
            self.rng.gen_range(50..100)
        };
        let send_ok = g.path.can_send(len.into()) || (room && self.rng.gen_bool(0.05));
        match r {
            // Probes on quarantined paths, and a few on Active ones (so a
            // live probe can sit before transmissions RACK declared lost).
            0 if (quarantined || self.rng.gen_bool(0.03)) && room => {
                (slot, Action::Op(self.send(true, 0)), None)
            }
            0 if send_ok && !quarantined => (slot, Action::Op(self.send(false, len)), None),
            90..=93 => {
                let ce = self.history[slot].last().map_or(0, |a| a.ce_count);
                let op = Op::Feedback {
                    rtt_ns: self.rtt(),
                    ce_count: ce
                        .wrapping_add(self.ce_offset[slot])
                        .wrapping_add(self.rng.gen_range(0..40))
                        .wrapping_sub(20),
                    acked: self.rng.gen_range(0..10),
                    bytes: self.rng.gen_range(0..40_000),
                };
                (slot, Action::Op(op), None)
            }
            94..=95 if !self.burst => {
                let entropy = self.rng.r#gen();
                (slot, Action::Op(Op::Timeout { entropy }), None)
            }
            96..=97 => {
                let entropy = self.rng.r#gen();
                (slot, Action::Op(Op::Move { entropy }), None)
            }
            98..=99 => {
                let ago = self.rng.gen_range(0..400_000);
                let delivered_sent_ns = self.now_ns.saturating_sub(ago);
                (slot, Action::Rack { delivered_sent_ns }, None)
            }
            _ => {
                let (a, origin) = self.ack(slot);
                let op = Op::Ack {
                    path_cum: a.cum,
                    sack: a.sack,
                };
                (slot, Action::Op(op), Some(origin))
            }
        }
    }

    /// A send on the network side: lost with 8% probability.
    fn send(&mut self, probe: bool, len: u16) -> Op {
        self.next_conn_psn = self.next_conn_psn.wrapping_add(1);
        Op::Send {
            conn_psn: self.next_conn_psn,
            len,
            probe,
            retx: !probe && self.rng.gen_bool(0.1),
        }
    }
}

/// Runs at least `ops` random operations (seed `seed`) through the RTL and
/// the engine, comparing after every operation its result, its fate events
/// and the read port of its slot and of one other slot; at the end every
/// slot.
pub fn run_against_engine(tb: &mut TxPathTb, ops: u64, seed: u64) -> TxRun {
    let mut w = World::new(seed);
    let mut run = TxRun::default();
    let start = tb.sim().cycles();
    // An ACK's feedback, due next.
    let mut pending: Option<(usize, Op)> = None;
    let mut n = 0u64;
    // Every slot becomes a fresh engine path with its window first.
    for slot in 0..SLOTS {
        let window = w.gold[slot].path().stats().window;
        for op in [
            Op::Init {
                entropy: 0xC000 + slot as u16,
            },
            Op::Window { window },
        ] {
            n += 1;
            if exec(tb, &mut w, &mut run, n, slot, &op).is_none() {
                return run;
            }
        }
        w.rtl_window[slot] = window;
    }
    while run.ops < ops {
        let (slot, action) = match pending.take() {
            Some((slot, op)) => (slot, Action::Op(op)),
            None => {
                let (slot, action, origin) = w.step();
                if let Some(o) = origin {
                    run.acks[o] += 1;
                }
                (slot, action)
            }
        };
        n += 1;
        let was_quarantined = w.gold[slot].path().stats().quarantined;
        match &action {
            Action::Op(op) => {
                let Some((got, want)) = exec(tb, &mut w, &mut run, n, slot, op) else {
                    break;
                };
                pending = after_op(&mut w, &mut run, slot, op, &got, &want).map(|fb| (slot, fb));
            }
            Action::Rack { delivered_sent_ns } => {
                if exec_rack(tb, &mut w, &mut run, n, slot, *delivered_sent_ns).is_none() {
                    break;
                }
            }
        }
        run.full += u64::from(w.gold[slot].path().slots_len() == 256);
        run.recovered += u64::from(was_quarantined && !w.gold[slot].path().stats().quarantined);
        // The firmware mirrors the engine controller's window.
        let window = w.gold[slot].path().stats().window;
        if window != w.rtl_window[slot] {
            n += 1;
            if exec(tb, &mut w, &mut run, n, slot, &Op::Window { window }).is_none() {
                break;
            }
            w.rtl_window[slot] = window;
        }
        let other = (n as usize * 7 + 3) % SLOTS;
        for q in [slot, other] {
            let len = w.rng.gen_range(0..=4096);
            let got = tb.read(q, len);
            run.reads += 1;
            if let Some(d) = diff_state(&got, &w.gold[q], len) {
                run.mismatches
                    .push(format!("op {n} slot {slot} {action:?}: slot {q} {d}"));
            }
        }
    }
    for q in 0..SLOTS {
        let got = tb.read(q, 1500);
        run.reads += 1;
        if let Some(d) = diff_state(&got, &w.gold[q], 1500) {
            run.mismatches.push(format!("end: slot {q} {d}"));
        }
    }
    run.mismatches.extend_from_slice(tb.capture_errors());
    run.cycles = tb.sim().cycles() - start;
    run
}

/// Runs operation number `n`, `op` on `slot`, in the RTL and the engine and
/// compares the results; `None` when the RTL did not finish it.
fn exec(
    tb: &mut TxPathTb,
    w: &mut World,
    run: &mut TxRun,
    n: u64,
    slot: usize,
    op: &Op,
) -> Option<(OpResult, OpResult)> {
    let want = w.gold[slot].apply(op, w.now_ns);
    let (got, cycles) = match tb.run(slot, op) {
        Ok(r) => r,
        Err(e) => {
            run.mismatches
                .push(format!("op {n} slot {slot} {op:?}: {e}"));
            return None;
        }
    };
    let k = kind(op);
    run.ops += 1;
    run.by_kind[k] += 1;
    run.cycles_by_kind[k] += cycles;
    run.max_cycles[k] = run.max_cycles[k].max(cycles);
    if let Some(d) = diff_result(&got, &want) {
        run.mismatches
            .push(format!("op {n} slot {slot} {op:?}: {d}"));
    }
    for f in &got.fates {
        run.fates[usize::from(matches!(f, SlotFate::Lost { .. }))] += 1;
    }
    Some((got, want))
}

/// A RACK check on `slot` as operation `n`: the engine's `on_rack`, and one
/// `Lose` on the RTL per transmission it declared lost (one for the next
/// path PSN, which must change nothing, when there is none); compares the
/// fate events. `None` when the RTL did not finish an operation.
fn exec_rack(
    tb: &mut TxPathTb,
    w: &mut World,
    run: &mut TxRun,
    n: u64,
    slot: usize,
    delivered_sent_ns: u64,
) -> Option<()> {
    let want = OpResult {
        ok: true,
        fates: w.gold[slot].rack(w.now_ns, delivered_sent_ns),
        ..OpResult::default()
    };
    run.racks[0] += 1;
    run.racks[1] += want.fates.len() as u64;
    let mut psns = Vec::new();
    for f in &want.fates {
        let psn = match f {
            SlotFate::Lost { conn_psn } => w.psn_of[slot].get(conn_psn),
            SlotFate::Acked { .. } => None,
        };
        match psn {
            Some(&p) => psns.push(p),
            None => run
                .mismatches
                .push(format!("op {n} slot {slot}: RACK reported {f:?}")),
        }
    }
    if psns.is_empty() {
        psns.push(w.gold[slot].next_psn);
    }
    let mut got = OpResult {
        ok: true,
        ..OpResult::default()
    };
    for path_psn in psns {
        let op = Op::Lose { path_psn };
        let (r, cycles) = match tb.run(slot, &op) {
            Ok(r) => r,
            Err(e) => {
                run.mismatches
                    .push(format!("op {n} slot {slot} {op:?}: {e}"));
                return None;
            }
        };
        run.ops += 1;
        run.by_kind[7] += 1;
        run.cycles_by_kind[7] += cycles;
        run.max_cycles[7] = run.max_cycles[7].max(cycles);
        got.ok &= r.ok;
        got.pkts += r.pkts;
        got.bytes += r.bytes;
        got.fates.extend(r.fates);
    }
    run.fates[1] += got.fates.len() as u64;
    if let Some(d) = diff_result(&got, &want) {
        run.mismatches
            .push(format!("op {n} slot {slot} RACK at {}: {d}", w.now_ns));
    }
    Some(())
}

/// The world's side of a finished operation: a send enters the network
/// (8% are lost); an ACK is usually followed by its feedback, returned.
fn after_op(
    w: &mut World,
    run: &mut TxRun,
    slot: usize,
    op: &Op,
    got: &OpResult,
    want: &OpResult,
) -> Option<Op> {
    match *op {
        Op::Send {
            conn_psn, probe, ..
        } => {
            run.refused += u64::from(!got.ok);
            if got.ok && !probe {
                w.psn_of[slot].insert(conn_psn, got.psn);
            }
            if got.ok && !w.rng.gen_bool(0.08) {
                w.net[slot].push(got.psn);
            }
            None
        }
        Op::Ack { .. } if w.rng.gen_bool(0.85) => {
            // The engine's order: the ACK, then its feedback.
            let ce = w.history[slot].last().map_or(0, |a| a.ce_count);
            Some(Op::Feedback {
                rtt_ns: w.rtt(),
                ce_count: ce.wrapping_add(w.ce_offset[slot]),
                acked: want.pkts,
                bytes: want.bytes,
            })
        }
        _ => None,
    }
}
