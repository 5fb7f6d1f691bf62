//! The driver of the Verilated table: operations to their result, the read
//! and capture ports, back-pressure on the fate stream.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{Op, OpResult, SlotState, TablePorts};
use crate::{Model, Sim, SimError};

/// Longest an operation may take before the bench gives up, cycles.
const OP_TIMEOUT: u64 = 4096;

/// Driver for the Verilated table.
pub struct TxPathTb {
    sim: Sim,
    p: TablePorts,
    /// Results in whose cycle the capture port disagreed with the read
    /// port at the operation's slot.
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
    /// from the operation's cycle to the result. In the result's cycle the
    /// capture port must show the slot as the read port does (every
    /// disagreement recorded, [`TxPathTb::capture_errors`]): later another
    /// source's operation (the NIC top's ACK receiver) may replace it.
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
        let (result, cycles) = (p.res.result(sim, fates), sim.cycles() - start);
        self.check_capture(slot);
        Ok((result, cycles))
    }

    /// Records a disagreement between the capture port and the read port
    /// at `slot` (all fields but `can_send`, which the capture port lacks).
    fn check_capture(&mut self, slot: usize) {
        let got = self.p.read(&mut self.sim, slot, 0);
        let cap = self.p.capture(&mut self.sim);
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
    }

    /// Slot `slot`'s state on the read port, with `can_send(len)`.
    pub fn read(&mut self, slot: usize, len: u16) -> SlotState {
        self.p.read(&mut self.sim, slot, len)
    }

    /// The results in whose cycle the capture port (`cap_view`) disagreed
    /// with the read port (the first ten).
    pub fn capture_errors(&self) -> &[String] {
        &self.capture_errors
    }
}
