//! One stage of the header fields ([`PlaceHdr`]).

use rust_hdl::prelude::*;

use super::links::{HdrIn, HdrOut};

/// The header fields of a datagram in [`RxPlace`](super::RxPlace)'s
/// pipeline that the lookups, checks, verdict and event need, taken from
/// the stage before when it holds a datagram (`en`), registered (`m`).
/// Three in a row (S1, S2, S3), each one's `m` joined to the next one's
/// `d`; S3's to [`PlaceEvent`](super::PlaceEvent).
#[derive(LogicBlock, Default)]
pub struct PlaceHdr {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// A datagram is in the stage before: take `d`.
    pub en: Signal<In, Bit>,
    /// The fields in the stage before.
    pub d: HdrIn,
    /// The fields, registered.
    pub m: HdrOut,
    y_qhit: DFF<Bit>,
    y_is_msg: DFF<Bit>,
    y_version: DFF<Bits<8>>,
    y_opcode: DFF<Bits<8>>,
    y_flags: DFF<Bits<16>>,
    y_dst_qpn: DFF<Bits<32>>,
    y_src_port: DFF<Bits<16>>,
    y_ce: DFF<Bit>,
    y_stream: DFF<Bits<16>>,
    y_path: DFF<Bits<16>>,
    y_conn_psn: DFF<Bits<32>>,
    y_path_psn: DFF<Bits<32>>,
    y_timestamp: DFF<Bits<64>>,
    y_msn: DFF<Bits<32>>,
    y_recv_idx: DFF<Bits<32>>,
    y_msg_len: DFF<Bits<32>>,
    y_offset: DFF<Bits<32>>,
    y_imm: DFF<Bits<32>>,
}

impl Logic for PlaceHdr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            y_qhit,
            y_is_msg,
            y_version,
            y_opcode,
            y_flags,
            y_dst_qpn,
            y_src_port,
            y_ce,
            y_stream,
            y_path,
            y_conn_psn,
            y_path_psn,
            y_timestamp,
            y_msn,
            y_recv_idx,
            y_msg_len,
            y_offset,
            y_imm
        );
        if self.en.val() {
            self.y_qhit.d.next = self.d.qhit.val();
            self.y_is_msg.d.next = self.d.is_msg.val();
            self.y_version.d.next = self.d.version.val();
            self.y_opcode.d.next = self.d.opcode.val();
            self.y_flags.d.next = self.d.flags.val();
            self.y_dst_qpn.d.next = self.d.dst_qpn.val();
            self.y_src_port.d.next = self.d.src_port.val();
            self.y_ce.d.next = self.d.ce.val();
            self.y_stream.d.next = self.d.stream.val();
            self.y_path.d.next = self.d.path.val();
            self.y_conn_psn.d.next = self.d.conn_psn.val();
            self.y_path_psn.d.next = self.d.path_psn.val();
            self.y_timestamp.d.next = self.d.timestamp.val();
            self.y_msn.d.next = self.d.msn.val();
            self.y_recv_idx.d.next = self.d.recv_idx.val();
            self.y_msg_len.d.next = self.d.msg_len.val();
            self.y_offset.d.next = self.d.offset.val();
            self.y_imm.d.next = self.d.imm.val();
        }
        self.m.qhit.next = self.y_qhit.q.val();
        self.m.is_msg.next = self.y_is_msg.q.val();
        self.m.version.next = self.y_version.q.val();
        self.m.opcode.next = self.y_opcode.q.val();
        self.m.flags.next = self.y_flags.q.val();
        self.m.dst_qpn.next = self.y_dst_qpn.q.val();
        self.m.src_port.next = self.y_src_port.q.val();
        self.m.ce.next = self.y_ce.q.val();
        self.m.stream.next = self.y_stream.q.val();
        self.m.path.next = self.y_path.q.val();
        self.m.conn_psn.next = self.y_conn_psn.q.val();
        self.m.path_psn.next = self.y_path_psn.q.val();
        self.m.timestamp.next = self.y_timestamp.q.val();
        self.m.msn.next = self.y_msn.q.val();
        self.m.recv_idx.next = self.y_recv_idx.q.val();
        self.m.msg_len.next = self.y_msg_len.q.val();
        self.m.offset.next = self.y_offset.q.val();
        self.m.imm.next = self.y_imm.q.val();
    }
}
