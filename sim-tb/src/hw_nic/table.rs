//! The TX table's port: the firmware's operations offered one at a time,
//! their fate events and results, and the ACKs the RTL's ACK receiver
//! applied (with their fate events).

use metaroce_firmware::datapath::{TableDone, TableRequest};
use metaroce_firmware::{SlotFate, TableOutcome};

use super::HwNic;
use super::firmware::Input;
use crate::tx_path::Op;

/// The firmware's operation on the TX table's port.
pub(super) struct OpRun {
    /// The slot it runs on.
    pub(super) slot: usize,
    /// The engine's request.
    pub(super) req: TableRequest,
    /// The table took it (else it is still offered).
    pub(super) taken: bool,
    /// Fate events while it ran.
    pub(super) fates: Vec<SlotFate>,
}

impl HwNic {
    /// The next operation is offered until the table takes it.
    pub(super) fn drive_table(&mut self) {
        if self.op_run.is_none() {
            if let Some((slot, req)) = self.table_ops.pop_front() {
                self.table.drive(&mut self.sim, slot, &Op::from(req.op));
                self.op_run = Some(OpRun {
                    slot,
                    req,
                    taken: false,
                    fates: Vec::new(),
                });
            }
        }
        let offer = self.op_run.as_ref().is_some_and(|r| !r.taken);
        self.sim.set(self.table.op_valid, offer.into());
    }

    /// The TX table: fate events, ACKs the ACK receiver applied, and the
    /// firmware's operation (taken, then done: its result goes to the
    /// engine with the slot read back). Last in the cycle: reading the slot
    /// evaluates the model again.
    pub(super) fn observe_table(&mut self, now: u64) {
        if let Some(f) = self.table.res.fate(&mut self.sim, true) {
            if self.sim.get(self.p.ackrx[0]) == 1 {
                self.ack_fates.push(f);
            } else if let Some(r) = self.op_run.as_mut().filter(|r| r.taken) {
                r.fates.push(f);
            } else {
                self.counters.interface_errors += 1;
            }
        }
        if self.sim.get(self.p.ackrx[1]) == 1 {
            let [_, _, slot, pkts, bytes] = self.p.ackrx.map(|p| self.sim.get(p));
            let fates = std::mem::take(&mut self.ack_fates);
            self.inbox.push_back(Input::AckApplied(
                slot as usize,
                pkts as u32,
                bytes as u32,
                fates,
            ));
            self.counters.rtl_acks_applied += 1;
        }
        let Some(run) = self.op_run.as_mut() else {
            return;
        };
        if !run.taken {
            run.taken = self.sim.get(self.table.op_ready) == 1;
            return;
        }
        if self.sim.get(self.table.res.valid) != 1 {
            return;
        }
        let run = self.op_run.take().expect("checked");
        let r = self.table.res.result(&mut self.sim, Vec::new());
        let out = TableOutcome {
            ok: r.ok,
            psn: r.psn,
            pkts: r.pkts,
            bytes: r.bytes,
        };
        let view = self.table.read(&mut self.sim, run.slot, 0).to_view();
        let TableRequest { qpn, path, op } = run.req;
        self.fw
            .handle_table_result(now, qpn, path, &TableDone::Op(op, out), &run.fates, view);
        self.after_engine();
    }
}
