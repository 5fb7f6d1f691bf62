//! The verbs the application calls: each goes to the engine, and the
//! RTL's tables follow it (configuration words queued in order).

use metaroce_firmware::{
    Access, Event, MemoryRegion, QpConfig, QpTransition, RecvWr, RegisterError, SendWr, VerbsError,
};

use super::HwNic;
use crate::core_check::metaroce_hdl_codes::{CONN_WINDOW, READS};

impl HwNic {
    /// Allocates a protection domain.
    pub fn alloc_pd(&mut self) -> u32 {
        self.fw.alloc_pd()
    }

    /// Registers memory in the engine and in a free entry of the RTL's MR
    /// table (4 entries); an error when both are taken.
    pub fn register_mr(
        &mut self,
        pd: u32,
        addr: u64,
        len: u64,
        access: Access,
    ) -> Result<MemoryRegion, RegisterError> {
        if !self.tables.has_free_mr() {
            self.counters.interface_errors += 1;
            return Err(RegisterError::InvalidRange);
        }
        let mr = self.fw.register_mr(pd, addr, len, access)?;
        let q = &mut self.cfg_queue;
        // A free entry exists (checked above).
        let _ = self.tables.add_mr(&mr, &mut |a, d| q.push_back((a, d)));
        Ok(mr)
    }

    /// Deregisters memory in the engine and frees its entry of the RTL's MR
    /// table; false when the key is unknown.
    pub fn deregister_mr(&mut self, lkey: u32) -> bool {
        let q = &mut self.cfg_queue;
        if !self.tables.remove_mr(lkey, &mut |a, d| q.push_back((a, d))) {
            return false;
        }
        self.fw.deregister_mr(lkey)
    }

    /// Disconnects a QP (spec §9.4): the engine's DISCONNECT goes down the
    /// firmware transmit port and the QP enters ERR.
    pub fn disconnect(&mut self, qpn: u32) -> Result<(), VerbsError> {
        self.fw.disconnect(qpn)?;
        self.next_poll_ns = 0;
        self.after_engine();
        self.sync_tables();
        Ok(())
    }

    /// Creates a QP in the engine (its receive window is the RTL's, 256
    /// packets) and takes an entry of the RTL's QP table (4 entries) for it.
    pub fn create_qp(&mut self, pd: u32, mut cfg: QpConfig) -> Result<u32, VerbsError> {
        // A QP entry, and a TX table slot for each path.
        if !self.tables.has_room_for_qp(cfg.paths) {
            self.counters.interface_errors += 1;
            return Err(VerbsError::QueueFull);
        }
        cfg.recv_window = CONN_WINDOW;
        // The engine keeps its READs in flight to the RTL's READ entries.
        cfg.max_rd_atomic = READS as u32;
        let qpn = self.fw.create_qp(pd, Some(cfg))?;
        // Room checked above.
        let _ = self.tables.add_qp(qpn);
        self.take_table_ops();
        Ok(qpn)
    }

    /// Moves a QP through the engine; the RTL's entry follows (written in
    /// full at RTR).
    pub fn modify_qp(&mut self, qpn: u32, t: QpTransition) -> Result<(), VerbsError> {
        self.fw.modify_qp(qpn, t)?;
        if let QpTransition::Rtr(_) = t {
            let q = &mut self.cfg_queue;
            let sink = &mut |a, d| q.push_back((a, d));
            self.tables
                .write_qp_entry(&mut self.fw, qpn, self.now, sink);
        }
        self.sync_tables();
        // A reset QP starts its paths' table slots again (`Init`).
        self.take_table_ops();
        Ok(())
    }

    /// Posts a send work request.
    pub fn post_send(&mut self, qpn: u32, wr: SendWr) -> Result<(), VerbsError> {
        self.fw.post_send(qpn, wr)?;
        self.next_poll_ns = 0;
        self.sync_tables();
        Ok(())
    }

    /// Posts a receive.
    pub fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> Result<(), VerbsError> {
        self.fw.post_recv(qpn, wr)?;
        self.sync_tables();
        Ok(())
    }

    /// The next completion or QP error. A completion is released only once
    /// the DMA writes of every packet placed before it have finished, as a
    /// NIC orders its completion-queue write behind the data.
    pub fn poll_event(&mut self) -> Option<Event> {
        let &(fence, _) = self.events.front()?;
        if self.dma_done < fence {
            return None;
        }
        self.events.pop_front().map(|(_, e)| e)
    }

    /// Brings the RTL's QP states, receive rings and READ entries up to the
    /// engine's (`Tables::sync`).
    pub(super) fn sync_tables(&mut self) {
        let q = &mut self.cfg_queue;
        self.tables
            .sync(&mut self.fw, self.now, &mut |a, d| q.push_back((a, d)));
    }
}
