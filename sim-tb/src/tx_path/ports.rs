//! The table's operation, result and read ports, named alike in the
//! standalone table and in `NicCore`.

use metaroce_driver::hw::tables::OpInputs;
use metaroce_firmware::{SlotFate, TableOp};
use metaroce_hdl::tx_path::VIEW_BITS;

use super::{Op, OpResult, SlotState};
use crate::{Port, Sim, SimError};

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
            cap_view: s.port("cap_view")?,
        })
    }

    /// Drives the operation inputs for `op` on `slot` (not `op_valid`), encoded
    /// as the host driver encodes the engine's operations.
    pub(crate) fn drive(&self, sim: &mut Sim, slot: usize, op: &Op) {
        let i = OpInputs::from_op(&TableOp::from(op));
        sim.set(self.op_code, i.code.into());
        sim.set(self.op_slot, slot as u64);
        sim.set(self.op_psn, i.psn.into());
        sim.set(self.op_len, i.len.into());
        sim.set(self.op_probe, i.probe.into());
        sim.set(self.op_retx, i.retx.into());
        sim.set_bytes(self.op_sack, &i.sack);
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
    /// The last result's slot's state on the capture port (`cap_view`, the
    /// layout the host interface's result entries carry; no `can_send`).
    pub(crate) fn capture(&self, sim: &mut Sim) -> SlotState {
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
