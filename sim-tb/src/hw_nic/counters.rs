//! What one simulated NIC counts ([`HwCounters`]), and the RTL's own
//! counters read through its counter ports.

use super::HwNic;

/// Counters of one simulated NIC: what the RTL did and what the firmware
/// had to do itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HwCounters {
    /// Data packets (WRITE … READ_RESP) the RTL placed (verdict 0).
    pub rtl_placed: u64,
    /// Data packets whose bytes the firmware received (verdict 10 message
    /// opcodes: READ requests, SENDs of streams without a ring).
    pub firmware_data: u64,
    /// ACKs and NACKs the firmware received (verdict 10).
    pub firmware_acks_in: u64,
    /// Datagrams the RTL's firmware receive queue handed up whose bytes,
    /// length or source port differ from the frame that came in, or that
    /// came up without a verdict-10 event for them.
    pub fw_rx_mismatches: u64,
    /// Verdict-10 datagrams longer than the queue's slot (only their first
    /// bytes came up: not processed).
    pub fw_rx_truncated: u64,
    /// Other verdict events (duplicates, refusals, PROBEs, drops).
    pub other_events: u64,
    /// Descriptors the firmware gave the RTL.
    pub descriptors: u64,
    /// Entropy-table rewrites before a descriptor.
    pub entropy_writes: u64,
    /// Configuration words written.
    pub cfg_writes: u64,
    /// Datagrams the firmware built itself (NACK, DISCONNECT).
    pub firmware_frames: u64,
    /// Atomic data packets (FETCH_ADD, COMPARE_SWAP, ATOMIC_RESP) the
    /// firmware built itself: their payload is a value, not host memory.
    pub firmware_atomics: u64,
    /// DMA writes, and bytes written.
    pub dma_writes: u64,
    /// Bytes the DMA port wrote.
    pub dma_bytes: u64,
    /// Payload fetches served.
    pub fetches: u64,
    /// Frames sent on the MAC TX port.
    pub mac_tx_frames: u64,
    /// Frames offered to the MAC RX port.
    pub mac_rx_frames: u64,
    /// Interface errors: a DMA write outside host memory or with a length
    /// that disagrees with its data, a fetch outside host memory, `m_err`,
    /// a table that cannot hold what the engine has (more QPs, regions or
    /// outstanding READs than the RTL's tables), a descriptor for another
    /// peer than the TX builder's, a path for which no TX table slot is
    /// free.
    pub interface_errors: u64,
    /// Operations the firmware issued to the TX table (`Init`, `Send`,
    /// `Window`, `Move`, `Timeout`, `Lose`).
    pub table_ops: u64,
    /// Received ACKs the RTL's ACK receiver applied to the TX table.
    pub rtl_acks_applied: u64,
}

impl HwNic {
    /// This NIC's counters.
    pub fn counters(&self) -> HwCounters {
        HwCounters {
            // What the tables could not follow counts too.
            interface_errors: self.counters.interface_errors + self.tables.errors(),
            ..self.counters
        }
    }

    /// The RTL's receive counter of verdict `code` (takes a clock of its
    /// own, every port idle: call between runs).
    pub fn rtl_counter(&mut self, code: u8) -> u64 {
        self.sim.set(self.p.cnt_sel, code.into());
        self.quiet_tick();
        self.sim.get(self.p.cnt_val)
    }

    /// The RTL front end's counter of frames with drop reason `reason`
    /// (`metaroce_hdl::rx_eth::EthDrop`; takes a clock of its own, every
    /// port idle: call between runs).
    pub fn rtl_eth_counter(&mut self, reason: u8) -> u64 {
        let sel = self.sim.port("eth_cnt_sel").expect("NicCore port");
        let val = self.sim.port("eth_cnt_val").expect("NicCore port");
        self.sim.set(sel, reason.into());
        self.quiet_tick();
        self.sim.get(val)
    }

    /// The clock of a counter read, with every handshake closed: the
    /// harness watches no port in it, so nothing may be offered (a MAC RX
    /// port left valid on a frame's last beat would take that beat again
    /// as a one-beat frame, counted `Truncated`) and nothing taken.
    fn quiet_tick(&mut self) {
        self.p.rx.idle(&mut self.sim);
        self.p.fw_tx.idle(&mut self.sim);
        self.feed.pay.idle(&mut self.sim);
        for port in [
            self.feed.cfg_we,
            self.feed.desc_valid,
            self.feed.rd_ready,
            self.table.op_valid,
        ] {
            self.sim.set(port, 0);
        }
        self.set_outputs_ready(false);
        self.sim.tick();
        self.set_outputs_ready(true);
        self.sim.eval();
    }

    /// ACK frames the RTL sent.
    pub fn rtl_ack_frames(&mut self) -> u64 {
        self.sim.eval();
        // The framer also sends the firmware's datagrams: not the RTL's ACKs.
        self.sim.get(self.p.ack_frames) - self.sim.get(self.p.fw_tx_frames)
    }
}
