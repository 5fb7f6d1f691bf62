//! The firmware's decisions: what the RTL reported goes to the engine in
//! order, timers fire, and the engine's next packet becomes a descriptor
//! or a firmware datagram, each only while its TX table operations are
//! done.

use metaroce_firmware::datapath::{HwTransmit, PlacedPacket, TableDone};
use metaroce_firmware::{RxMeta, SlotFate};
use metaroce_proto::Opcode;

use super::HwNic;

/// What the RTL reported that the firmware handles when its TX table
/// operations are done (it reads the table only between its own operations).
#[derive(Clone, Debug)]
pub(super) enum Input {
    /// A verdict event on a message packet.
    Placed(PlacedPacket),
    /// A verdict-10 event: its datagram and UDP source port once the
    /// firmware receive queue has handed it up whole, `None` until then.
    /// The firmware takes inputs in event order, so the ones after a
    /// datagram still coming up wait for it (as the host driver's
    /// firmware does): a later copy of the same packet must not overtake it.
    Datagram(Option<(Vec<u8>, u16)>),
    /// The ACK receiver applied an ACK to a slot: packets and bytes
    /// acknowledged, and the transmissions it resolved.
    AckApplied(usize, u32, u32, Vec<SlotFate>),
}

impl HwNic {
    /// The firmware's TX table operations are queued or running: it reads
    /// the table only between them, so it waits.
    pub(super) fn table_busy(&self) -> bool {
        self.op_run.is_some() || !self.table_ops.is_empty()
    }

    /// The firmware: handles what the RTL reported, fires timers and takes
    /// the engine's next packet, each only while its TX table operations
    /// are done.
    pub(super) fn firmware(&mut self, now: u64) {
        while !self.table_busy() {
            if matches!(self.inbox.front(), Some(Input::Datagram(None))) {
                break;
            }
            let Some(input) = self.inbox.pop_front() else {
                break;
            };
            self.handle_input(now, input);
        }
        if self.table_busy() {
            return;
        }
        if self.fw.poll_timeout().is_some_and(|t| t <= now) {
            self.fw.handle_timeout(now, &mut self.mem);
            self.next_poll_ns = 0;
            self.after_engine();
            if self.table_busy() {
                return;
            }
        }
        self.firmware_transmit(now);
    }

    /// The firmware's transmit side: takes the engine's next packet when
    /// the descriptor slot is free.
    pub(super) fn firmware_transmit(&mut self, now: u64) {
        if self.desc.is_some() || now < self.next_poll_ns {
            return;
        }
        match self.fw.poll_hardware(now, &mut self.buf) {
            Some(HwTransmit::Descriptor(d)) => {
                self.queue_descriptor(&d);
                // A READ request: its entry in the RTL's READ table goes in
                // (a configuration word, before the descriptor) first.
                if d.repr.opcode == Opcode::ReadReq {
                    self.sync_tables();
                }
            }
            // The RTL frames it from the firmware transmit port. An atomic
            // request's READ entry goes in first, as a READ request's.
            Some(HwTransmit::Datagram(t)) => {
                let op = Opcode::try_from(self.buf[1]).ok();
                if op.is_some_and(Opcode::is_atomic_request) {
                    self.sync_tables();
                }
                self.fw_tx.push_back((self.buf[..t.len].to_vec(), t));
                if op.is_some_and(Opcode::is_atomic) {
                    self.counters.firmware_atomics += 1;
                } else {
                    self.counters.firmware_frames += 1;
                }
            }
            // Nothing now: ask again in a while (or when something happens).
            None => self.next_poll_ns = now + 200,
        }
        self.after_engine();
    }

    /// After any engine call: its events for the application and its TX
    /// table operations.
    pub(super) fn after_engine(&mut self) {
        self.collect_events();
        self.take_table_ops();
    }

    /// Queues the engine's TX table operations, each on its path's slot
    /// (a path's `Init` takes a free slot and maps it in the ACK receiver).
    pub(super) fn take_table_ops(&mut self) {
        while let Some(req) = self.fw.poll_table_op() {
            let q = &mut self.cfg_queue;
            let Ok(slot) = self.tables.slot_for(&req, &mut |a, d| q.push_back((a, d))) else {
                continue;
            };
            self.table_ops.push_back((slot, req));
            self.counters.table_ops += 1;
        }
    }

    /// Hands one report of the RTL to the engine.
    pub(super) fn handle_input(&mut self, now: u64, input: Input) {
        match input {
            // The memory is touched only to execute an atomic that retires.
            Input::Placed(p) => self.fw.handle_placed(now, &p, &mut self.mem),
            Input::Datagram(None) => unreachable!("the firmware waits for it"),
            Input::Datagram(Some((bytes, src_port))) => {
                // The RTL checked that it comes from its QP's peer: the
                // firmware takes the peer's address from its own QP table.
                let dst_qpn = bytes
                    .get(4..8)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                let src_ip = self
                    .fw
                    .qp_entry(dst_qpn)
                    .and_then(|(_, _, _, remote)| remote)
                    .map_or(self.cfg.peer_ip, |r| r.ip);
                let meta = RxMeta {
                    src_ip,
                    src_port,
                    dst_ip: self.cfg.ip,
                    dst_port: self.cfg.udp_port,
                    ecn_ce: false,
                };
                self.fw.handle_datagram(now, &bytes, meta, &mut self.mem);
            }
            Input::AckApplied(slot, pkts, bytes, fates) => {
                let Some((qpn, path)) = self.tables.slot(slot) else {
                    self.counters.interface_errors += 1;
                    return;
                };
                let view = self.table.read(&mut self.sim, slot, 0).to_view();
                let done = TableDone::AckApplied { pkts, bytes };
                self.fw
                    .handle_table_result(now, qpn, path, &done, &fates, view);
            }
        }
        self.next_poll_ns = 0;
        self.after_engine();
        self.sync_tables();
    }

    pub(super) fn collect_events(&mut self) {
        while let Some(e) = self.fw.poll_event() {
            self.events.push_back((self.placed_data, e));
        }
    }
}
