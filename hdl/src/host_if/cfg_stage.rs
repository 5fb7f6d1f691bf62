//! The register stage on the core's table port ([`CfgStage`]).
//!
//! [`super::HostIf`] issues a table write (from `CFG.CFG_DATA_HI` or a
//! TX-queue kind-1 entry) into this stage, and `NicCore` sees it on its
//! `cfg` port the cycle after. The stage cuts the board's longest core
//! path (route J, `docs/bitstreams.md`): the register file's strobe,
//! the host interface's choice between the two writers and the core's
//! table decode used to reach `RxPlace`'s MR lookup in one cycle. Writes
//! keep their order (one register for both writers); the TX queue holds
//! the descriptor after a kind-1 entry for a cycle
//! ([`super::TxqFetch`]), so a descriptor still meets the tables as they
//! are after the write before it.

use rust_hdl::prelude::*;

use crate::bus::{CfgIn, CfgOut};
use crate::helpers::EnReg;

/// One cycle of delay on a 10-bit table port: the strobe in a register
/// cleared by reset, the address and data in registers that load only
/// with a write (so a simulator copies them only then).
#[derive(LogicBlock, Default)]
pub struct CfgStage {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no write leaves the stage in the next cycle.
    pub rst: Signal<In, Bit>,
    /// The write as issued.
    pub s: CfgIn<10>,
    /// The same write, a cycle later.
    pub m: CfgOut<10>,
    we: DFF<Bit>,
    addr: EnReg<Bits<10>>,
    data: EnReg<Bits<64>>,
}

impl Logic for CfgStage {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, we);
        self.addr.clock.next = self.clock.val();
        self.data.clock.next = self.clock.val();
        self.addr.en.next = self.s.we.val();
        self.data.en.next = self.s.we.val();
        self.addr.d.next = self.s.addr.val();
        self.data.d.next = self.s.data.val();
        self.we.d.next = self.s.we.val() & !self.rst.val();
        self.m.we.next = self.we.q.val();
        self.m.addr.next = self.addr.q.val();
        self.m.data.next = self.data.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Drives `writes` (one a cycle: a write of (address, data), or none;
    /// reset in the cycles `resets` names) through rust-hdl's simulator
    /// of the stage; returns what its output showed just before each
    /// cycle's edge.
    fn simulate(
        writes: Vec<Option<(u64, u64)>>,
        resets: &'static [usize],
    ) -> Vec<Option<(u64, u64)>> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let out = seen.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<CfgStage>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<CfgStage>| {
            let mut x = sim.init()?;
            wait_clock_false!(sim, clock, x);
            for (c, w) in writes.iter().copied().enumerate() {
                x.rst.next = resets.contains(&c);
                x.s.we.next = w.is_some();
                let (a, d) = w.unwrap_or((0x3FF, 0xBAD));
                x.s.addr.next = a.to_bits();
                x.s.data.next = d.to_bits();
                x = sim.wait(1, x)?;
                seen.lock().unwrap().push(
                    x.m.we
                        .val()
                        .then(|| (x.m.addr.val().to_u64(), x.m.data.val().to_u64())),
                );
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            sim.done(x)
        });
        let mut uut = CfgStage::default();
        uut.connect_all();
        sim.run(Box::new(uut), 10_000).unwrap();
        Arc::try_unwrap(out).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_delays_every_write_by_one_cycle_in_order() {
        let w = |a: u64, d: u64| Some((a, d));
        let writes = vec![
            None,
            w(0x155, 0x1234_5678_9ABC_DEF0),
            w(0x200, 1),
            None,
            w(0x3FE, u64::MAX),
            // Reset in cycle 7: cycle 6's write still leaves in cycle 7,
            // cycle 7's own write is dropped.
            None,
            w(0x001, 2),
            w(0x002, 3),
            None,
            None,
        ];
        let seen = simulate(writes.clone(), &[7]);
        // Before cycle c's edge the output shows cycle c-1's write.
        let mut expect: Vec<Option<(u64, u64)>> = std::iter::once(None)
            .chain(writes[..writes.len() - 1].iter().copied())
            .collect();
        expect[8] = None;
        assert_eq!(seen, expect);
    }
}
