//! One clock cycle: the firmware acts, every port is driven, the model
//! evaluates, every port is watched, the clock ticks.

use super::{HwNic, LANES};

impl HwNic {
    /// Runs one clock cycle at the simulated time ([`HwNic::now_ns`]);
    /// frames the MAC TX port finished (and frames the firmware built
    /// itself) are pushed to `out`.
    pub fn step(&mut self, out: &mut Vec<Vec<u8>>) {
        self.step_at(self.now_ns(), out);
    }

    /// Runs one clock cycle in which the RTL and the engine see the time
    /// `now` (ns; never going back), for a NIC that runs against real time,
    /// such as one that talks to a soft NIC over sockets.
    pub fn step_at(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        self.now = now;
        self.firmware(now);
        self.drive(now);
        self.sim.eval();
        self.observe(now, out);
        self.sim.tick();
    }

    /// Every input port for this cycle (the data ports share one beat
    /// buffer, in this order).
    fn drive(&mut self, now: u64) {
        self.sim.set(self.p.now, now);
        self.drive_table();
        self.drive_feed();
        let mut beat = [0u8; LANES];
        self.drive_mac_rx(&mut beat);
        self.drive_fw_tx(&mut beat);
        self.drive_fetch(&mut beat);
    }

    /// Every output port of this cycle, in the order their effects on the
    /// firmware's queues need (the front end's decision before the verdict
    /// event; the firmware receive queue's datagram before the next
    /// verdict-10 event; the TX table last, as reading a slot evaluates
    /// the model again).
    fn observe(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        self.observe_feed();
        self.observe_mac(out);
        self.observe_dma();
        self.observe_fetch();
        self.observe_fw();
        if self.sim.get(self.p.err) == 1 {
            self.counters.interface_errors += 1;
        }
        if self.sim.get(self.p.ev_valid) == 1 {
            let code = self.sim.get(self.p.ev_code) as u8;
            let held = self.held.pop_front().flatten();
            self.on_event(code, held);
        }
        self.observe_table(now);
    }
}
