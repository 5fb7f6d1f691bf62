//! The RTL's verdict events (`m_ev_*`): each one's fields read and queued
//! for the engine, counted by what the RTL did with the packet.

use metaroce_driver::hw::tables::VerdictFields;
use metaroce_proto::Opcode;

use super::HwNic;
use super::firmware::Input;
use super::mac::Held;
use crate::core_check::metaroce_hdl_codes::{V_FIRMWARE, V_PLACED};

impl HwNic {
    /// The firmware's receive side: one verdict event, queued for the engine.
    pub(super) fn on_event(&mut self, code: u8, held: Held) {
        let f = self.p.ev.map(|p| self.sim.get(p));
        let [
            opcode,
            flags,
            dst_qpn,
            stream,
            path,
            conn_psn,
            path_psn,
            timestamp,
            msn,
            recv_idx,
            msg_len,
            offset,
            imm,
            len,
            src_port,
        ] = f;
        let v = VerdictFields {
            code,
            opcode: opcode as u8,
            flags: flags as u16,
            dst_qpn: dst_qpn as u32,
            stream: stream as u16,
            path: path as u16,
            conn_psn: conn_psn as u32,
            path_psn: path_psn as u32,
            timestamp,
            msn: msn as u32,
            recv_idx: recv_idx as u32,
            msg_len: msg_len as u32,
            offset: offset as u32,
            imm: imm as u32,
            len: len as u16,
            src_port: src_port as u16,
        };
        if code == V_FIRMWARE {
            match Opcode::try_from(v.opcode).ok() {
                Some(Opcode::Ack | Opcode::Nack) => self.counters.firmware_acks_in += 1,
                Some(op) if op.is_message() => self.counters.firmware_data += 1,
                _ => {}
            }
            // Its bytes come up on the firmware receive queue; it keeps
            // its place among the inputs meanwhile.
            self.fw_expect.push_back(held);
            self.inbox.push_back(Input::Datagram(None));
        } else if let Some(p) = v.placed() {
            if code == V_PLACED {
                self.counters.rtl_placed += 1;
                if len > 0 {
                    self.placed_data += 1;
                }
            } else {
                self.counters.other_events += 1;
            }
            self.inbox.push_back(Input::Placed(p));
        } else {
            self.counters.other_events += 1;
        }
    }
}
