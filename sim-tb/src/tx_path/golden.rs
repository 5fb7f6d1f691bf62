//! The golden model of a slot (the engine's `TxPath`) and the diffs of the
//! RTL's results and read port against it.

use metaroce_firmware::{PathHealth, QpConfig, SlotFate, TxPath};

use super::{MTU, Op, OpResult, SlotState};

/// The golden model of one slot: the engine's `TxPath` and the next path
/// PSN it handed out (it does not expose it otherwise).
pub struct Golden {
    pub(super) path: TxPath,
    pub(super) next_psn: u32,
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
            Op::Timeout { entropy } => self
                .path
                .on_timeout(now_ns, entropy, 0, |f| r.fates.push(f)),
            Op::Move { entropy } => self.path.move_to(entropy, 0),
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
        // The table's own estimate: the RTO's peak and move floor are the
        // firmware's (spec §5.7), not the table's.
        let rtt = self.path.view().rtt;
        let unsampled = rtt.srtt().is_none();
        let rttvar = if unsampled { 0 } else { rtt.rttvar() };
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
