//! The TX feeder's ports: configuration words one a cycle, and a
//! descriptor (after its entropy-table word) once the words before it are
//! in.

use metaroce_firmware::datapath::TxDescriptor;

use super::HwNic;
use crate::tx_build::Descriptor;

impl HwNic {
    /// Queues the engine's descriptor, after the entropy-table word it
    /// needs (when its path's entry differs); one for another peer than the
    /// TX builder's is an interface error.
    pub(super) fn queue_descriptor(&mut self, d: &TxDescriptor) {
        if d.dst_ip != self.cfg.peer_ip {
            self.counters.interface_errors += 1;
            return;
        }
        if let Some(word) = self.tables.entropy_write(d) {
            self.cfg_queue.push_back(word);
            self.counters.entropy_writes += 1;
        }
        self.desc = Some(Descriptor {
            repr: d.repr,
            len: d.payload_len as u16,
            addr: d.payload_addr,
            ecn: d.ecn_capable,
        });
        self.desc_driven = false;
    }

    /// Configuration: one word a cycle; a descriptor only once the words
    /// before it (its entropy) are in.
    pub(super) fn drive_feed(&mut self) {
        let cfg = self.cfg_queue.pop_front();
        self.sim.set(self.feed.cfg_we, u64::from(cfg.is_some()));
        if let Some((addr, data)) = cfg {
            self.sim.set(self.feed.cfg_addr, addr.into());
            self.sim.set(self.feed.cfg_data, data);
            self.counters.cfg_writes += 1;
        }
        let offer = cfg.is_none() && self.desc.is_some();
        self.offered = offer;
        if let Some(d) = self.desc.filter(|_| offer && !self.desc_driven) {
            self.feed.drive_desc(&mut self.sim, &d);
            self.desc_driven = true;
        }
        self.sim.set(self.feed.desc_valid, u64::from(offer));
    }

    /// The descriptor offered this cycle was taken: the slot is free, and
    /// the engine is asked for work again.
    pub(super) fn observe_feed(&mut self) {
        if self.offered && self.sim.get(self.feed.desc_ready) == 1 {
            self.desc = None;
            self.counters.descriptors += 1;
            self.next_poll_ns = 0;
        }
    }
}
