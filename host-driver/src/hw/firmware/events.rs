//! The firmware's side of the event ring: events read and sorted, the TX table's
//! results handed to the engine, placed packets and firmware datagrams followed up.

use metaroce_firmware::datapath::{TableDone, TableRequest};
use metaroce_firmware::{Nic, PathView, RxMeta, SlotFate, TableOutcome};
use metaroce_proto::Opcode;

use super::{Coherent, Firmware, Input, timed};
use crate::device::Device;
use crate::hostmem::MemoryMap;
use crate::hw::DriverError;
use crate::hw::codes::{core, regs};
use crate::hw::tables::{self, OpInputs, ResultEntry, SlotState, VerdictFields};

impl Firmware {
    /// Consumes the event entry `w` (checking its index).
    pub(super) fn take_event(&mut self, w: &[u64; 8]) {
        self.evq.advance();
        self.stats.events += 1;
        if w[7] as u32 != self.evq.index().wrapping_sub(1) {
            self.stats.interface_errors += 1;
        }
    }

    /// Reads the event ring (and the datagrams of verdict-10 events from the firmware
    /// receive ring): table results go to the engine, the rest to the inbox.
    pub(super) fn read_events(&mut self, nic: &mut Nic) -> Result<bool, DriverError> {
        let mut any = false;
        loop {
            // A verdict-10 event's datagram may land after the event itself.
            while self.fw_pending > 0 {
                let mut bytes = vec![0u8; regs::FW_SLOT_BYTES];
                let Some(hdr) = self.frq.next_bytes(&mut bytes) else {
                    break;
                };
                self.frq.advance();
                self.fw_pending -= 1;
                any = true;
                let len = (hdr & 0xFFFF) as usize;
                let src_port = (hdr >> 16) as u16;
                let cut = hdr >> 32 & 1 == 1;
                if cut || len > bytes.len() {
                    self.stats.fw_rx_truncated += 1;
                    continue;
                }
                bytes.truncate(len);
                self.inbox.push_back(Input::Datagram(bytes, src_port));
            }
            if self.fw_pending > 0 {
                return Ok(any);
            }
            let Some(w) = self.evq.next_words::<8>() else {
                return Ok(any);
            };
            let ty = (w[7] >> 56 & 0xF) as u8;
            // A result and its view entry are taken together.
            let view = if ty == regs::EV_ACKRX || ty == regs::EV_OP_RESULT {
                let Some(v) = self.evq.peek_words::<8>(1) else {
                    return Ok(any);
                };
                self.take_event(&w);
                self.take_event(&v);
                if (v[7] >> 56 & 0xF) as u8 != regs::EV_VIEW {
                    self.stats.interface_errors += 1;
                }
                SlotState::from_event(&w, &v).to_view()
            } else {
                self.take_event(&w);
                PathView::default()
            };
            any = true;
            match ty {
                regs::EV_VERDICT => {
                    let v = VerdictFields {
                        dst_qpn: w[0] as u32,
                        opcode: (w[0] >> 32) as u8,
                        flags: (w[0] >> 48) as u16,
                        path_psn: w[1] as u32,
                        path: (w[1] >> 32) as u16,
                        stream: (w[1] >> 48) as u16,
                        timestamp: w[2],
                        msn: w[3] as u32,
                        recv_idx: (w[3] >> 32) as u32,
                        imm: w[4] as u32,
                        conn_psn: (w[4] >> 32) as u32,
                        offset: w[5] as u32,
                        msg_len: (w[5] >> 32) as u32,
                        len: w[6] as u16,
                        src_port: (w[6] >> 16) as u16,
                        code: (w[6] >> 32 & 0x1F) as u8,
                    };
                    if v.code == core::V_FIRMWARE {
                        self.fw_pending += 1;
                    } else {
                        self.inbox
                            .push_back(Input::Verdict(v, tables::placed_addr(&w)));
                    }
                }
                regs::EV_ACKRX => {
                    let r = ResultEntry::parse(&w);
                    self.stats.hw_acks += 1;
                    self.refresh_queued_views(r.slot, view);
                    self.inbox.push_back(Input::AckApplied {
                        slot: r.slot,
                        pkts: r.pkts,
                        bytes: r.bytes,
                        fates: std::mem::take(&mut self.ack_fates),
                        view,
                    });
                }
                regs::EV_OP_RESULT => self.op_result(nic, &w, view)?,
                regs::EV_FATE => {
                    let conn_psn = w[0] as u32;
                    let f = if w[0] >> 32 & 1 == 1 {
                        SlotFate::Lost { conn_psn }
                    } else {
                        SlotFate::Acked { conn_psn }
                    };
                    if w[0] >> 33 & 1 == 1 {
                        self.ack_fates.push(f);
                    } else if self.in_flight.is_empty() {
                        // A fate with no operation in flight is the device's error.
                        self.stats.interface_errors += 1;
                    } else {
                        self.op_fates.push(f);
                    }
                }
                // Unknown types, and a view entry with no result before it.
                _ => self.stats.interface_errors += 1,
            }
        }
    }

    /// The result of the oldest operation in flight: to the engine, with its fates and
    /// the slot's state after it.
    pub(super) fn op_result(
        &mut self,
        nic: &mut Nic,
        w: &[u64; 8],
        view: PathView,
    ) -> Result<(), DriverError> {
        let fates = std::mem::take(&mut self.op_fates);
        let Some((slot, req)) = self.in_flight.pop_front() else {
            self.stats.interface_errors += 1;
            return Ok(());
        };
        let r = ResultEntry::parse(w);
        if r.slot != slot || r.code != OpInputs::from_op(&req.op).code {
            self.stats.interface_errors += 1;
        }
        self.refresh_queued_views(r.slot, view);
        let out = TableOutcome {
            ok: r.ok,
            psn: r.psn,
            pkts: r.pkts,
            bytes: r.bytes,
        };
        let TableRequest { qpn, path, op } = req;
        let now = self.now();
        timed(&mut self.time.engine_ns, || {
            nic.handle_table_result(now, qpn, path, &TableDone::Op(op, out), &fates, view)
        });
        self.follow(nic)
    }

    /// Gives the ACK results still queued for `slot` the slot's newer state `view`: the
    /// engine takes an ACK result with the slot as it is when it takes it (as the
    /// firmware model reads the slot then), never with a state older than one it has
    /// already seen (an operation's result taken at once, ahead of the queue): a view
    /// gone back would make it refuse later ACKs for packets it sent (`bad_ack`).
    pub(super) fn refresh_queued_views(&mut self, slot: usize, newer: PathView) {
        for input in &mut self.inbox {
            if let Input::AckApplied { slot: s, view, .. } = input
                && *s == slot
            {
                *view = newer;
            }
        }
    }

    /// Hands one report of the device to the engine.
    pub(super) fn handle_input(
        &mut self,
        nic: &mut Nic,
        memory: &mut MemoryMap,
        input: Input,
    ) -> Result<(), DriverError> {
        let now = self.now();
        match input {
            Input::Verdict(v, addr) => {
                self.time.rx_events += 1;
                let Some(p) = v.placed() else {
                    // A refusal is the engine's drop, as on the software data path.
                    tables::count_refusal(v.code, nic.drops_mut());
                    self.stats.other_events += 1;
                    return Ok(());
                };
                if v.code == core::V_PLACED && v.len > 0 {
                    self.sync_placed(nic, &v, addr)?;
                    self.stats.placed += 1;
                }
                let mut mem = Coherent {
                    map: memory,
                    dev: &mut self.dev,
                    failed: None,
                };
                timed(&mut self.time.engine_ns, || {
                    nic.handle_placed(now, &p, &mut mem)
                });
                if let Some(e) = mem.failed {
                    return Err(e.into());
                }
            }
            Input::Datagram(bytes, src_port) => {
                self.time.rx_events += 1;
                // The RTL checked that it comes from its QP's peer: the firmware
                // takes the peer's address from its own QP table.
                let dst_qpn = bytes
                    .get(4..8)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                let src_ip = nic
                    .qp_entry(dst_qpn)
                    .and_then(|(_, _, _, remote)| remote)
                    .map(|r| r.ip)
                    .or(self.peer.map(|p| p.0))
                    .unwrap_or(self.cfg.local.ip());
                let meta = RxMeta {
                    src_ip,
                    src_port,
                    dst_ip: self.cfg.local.ip(),
                    dst_port: self.cfg.local.port(),
                    ecn_ce: false,
                };
                self.stats.fw_rx += 1;
                let mut mem = Coherent {
                    map: memory,
                    dev: &mut self.dev,
                    failed: None,
                };
                timed(&mut self.time.engine_ns, || {
                    nic.handle_datagram(now, &bytes, meta, &mut mem)
                });
                if let Some(e) = mem.failed {
                    return Err(e.into());
                }
            }
            Input::AckApplied {
                slot,
                pkts,
                bytes,
                fates,
                view,
            } => {
                let Some((qpn, path)) = self.tables.slot(slot) else {
                    self.stats.interface_errors += 1;
                    return Ok(());
                };
                let done = TableDone::AckApplied { pkts, bytes };
                timed(&mut self.time.engine_ns, || {
                    nic.handle_table_result(now, qpn, path, &done, &fates, view)
                });
            }
        }
        self.follow(nic)
    }

    /// Makes the bytes the device placed for a verdict visible to the CPU: the range
    /// at the placement address the event carries, when it lies in a mapped region;
    /// else the posted receive's or the outstanding READ's range, or (a WRITE, whose
    /// address only its first packet carried) every region the peer may write.
    pub(super) fn sync_placed(
        &mut self,
        nic: &Nic,
        v: &VerdictFields,
        addr: Option<u64>,
    ) -> Result<(), DriverError> {
        let len = usize::from(v.len);
        if let Some(a) = addr {
            let end = a.checked_add(len as u64);
            let inside = |&(_, base, n): &(u32, u64, u64)| {
                a >= base && end.is_some_and(|e| e <= base.saturating_add(n))
            };
            if self.mapped.iter().any(inside) {
                return Ok(self.dev.sync_for_cpu(a, len)?);
            }
            // The device placed outside every mapped region: its error.
            self.stats.interface_errors += 1;
        }
        let op = Opcode::try_from(v.opcode).ok();
        let at = |base: u64| base.checked_add(v.offset.into());
        let range = match op {
            Some(Opcode::Send | Opcode::SendImm) => nic
                .posted_receives(v.dst_qpn, v.stream)
                .and_then(|(base, mut r)| r.nth(v.recv_idx.wrapping_sub(base) as usize).copied())
                .and_then(|wr| at(wr.sgl.first().addr)),
            Some(Opcode::ReadResp) => nic
                .outstanding_reads(v.dst_qpn)
                .find(|&(s, msn, _, _)| s == v.stream && msn == v.msn)
                .and_then(|(_, _, sge, _)| at(sge.addr)),
            _ => None,
        };
        match range {
            Some(a) => self.dev.sync_for_cpu(a, len)?,
            None => {
                let writable: Vec<_> = nic
                    .memory_regions()
                    .filter(|r| r.access.contains(metaroce_firmware::Access::REMOTE_WRITE))
                    .map(|r| (r.addr, r.len))
                    .collect();
                for (a, n) in writable {
                    self.dev.sync_for_cpu(a, n as usize)?;
                }
            }
        }
        Ok(())
    }
}
