//! S3's copy of the header fields ([`PlaceHdr`]).

use rust_hdl::prelude::*;

use super::links::HdrOut;

/// The header fields of the datagram in S3 of [`RxPlace`](super::RxPlace)
/// that the verdict and the event need, taken from S2's registers when S2
/// holds a datagram (`en`), registered (`m`, joined to
/// [`PlaceEvent`](super::PlaceEvent)).
#[derive(LogicBlock, Default)]
pub struct PlaceHdr {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// S2: a datagram is here.
    pub en: Signal<In, Bit>,
    /// S2: the QP was found.
    pub qhit: Signal<In, Bit>,
    /// S2: MSG opcode.
    pub is_msg: Signal<In, Bit>,
    /// S2: base header version.
    pub version: Signal<In, Bits<8>>,
    /// S2: opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// S2: flags.
    pub flags: Signal<In, Bits<16>>,
    /// S2: destination QPN.
    pub dst_qpn: Signal<In, Bits<32>>,
    /// S2: UDP source port.
    pub src_port: Signal<In, Bits<16>>,
    /// S2: IP ECN CE mark.
    pub ce: Signal<In, Bit>,
    /// S2: stream id.
    pub stream: Signal<In, Bits<16>>,
    /// S2: path id.
    pub path: Signal<In, Bits<16>>,
    /// S2: connection PSN.
    pub conn_psn: Signal<In, Bits<32>>,
    /// S2: path PSN.
    pub path_psn: Signal<In, Bits<32>>,
    /// S2: sender timestamp.
    pub timestamp: Signal<In, Bits<64>>,
    /// S2: MSN.
    pub msn: Signal<In, Bits<32>>,
    /// S2: posted-receive index.
    pub recv_idx: Signal<In, Bits<32>>,
    /// S2: message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// S2: offset.
    pub offset: Signal<In, Bits<32>>,
    /// S2: immediate.
    pub imm: Signal<In, Bits<32>>,
    /// S3: the fields.
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
            self.y_qhit.d.next = self.qhit.val();
            self.y_is_msg.d.next = self.is_msg.val();
            self.y_version.d.next = self.version.val();
            self.y_opcode.d.next = self.opcode.val();
            self.y_flags.d.next = self.flags.val();
            self.y_dst_qpn.d.next = self.dst_qpn.val();
            self.y_src_port.d.next = self.src_port.val();
            self.y_ce.d.next = self.ce.val();
            self.y_stream.d.next = self.stream.val();
            self.y_path.d.next = self.path.val();
            self.y_conn_psn.d.next = self.conn_psn.val();
            self.y_path_psn.d.next = self.path_psn.val();
            self.y_timestamp.d.next = self.timestamp.val();
            self.y_msn.d.next = self.msn.val();
            self.y_recv_idx.d.next = self.recv_idx.val();
            self.y_msg_len.d.next = self.msg_len.val();
            self.y_offset.d.next = self.offset.val();
            self.y_imm.d.next = self.imm.val();
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
