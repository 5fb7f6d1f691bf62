//! The verdict event and the header fields it carries ([`PlaceEvent`]).

use rust_hdl::prelude::*;

use crate::bus::VerdictOut;

/// The verdict event of [`RxPlace`](super::RxPlace) (`m_ev`, the cycle
/// after S3): the datagram's header fields, taken from S2's registers into
/// S3's when S2 holds a datagram (`en2`), then with S3's verdict (`code`,
/// `track`, `live`, the connection's cumulative PSN after it) into the
/// event's when S3 holds one (`en3`). `len` is the payload's for a MSG
/// opcode, else 0. S3's copies of the QP hit and the two PSNs go to the
/// verdict too (`s3_*`). Every output is a register.
#[derive(LogicBlock, Default)]
pub struct PlaceEvent {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no event.
    pub rst: Signal<In, Bit>,
    /// S2: a datagram is here.
    pub en2: Signal<In, Bit>,
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
    /// S3: a datagram is here (its verdict below).
    pub en3: Signal<In, Bit>,
    /// S3: the [`Verdict`](super::Verdict) code.
    pub code: Signal<In, Bits<5>>,
    /// S3: the engine path-tracks the packet.
    pub track: Signal<In, Bit>,
    /// S3: the QP still receives after the verdict.
    pub live: Signal<In, Bit>,
    /// S3: the connection's cumulative PSN after the verdict.
    pub conn_cum: Signal<In, Bits<32>>,
    /// S3: payload bytes.
    pub plen: Signal<In, Bits<16>>,
    /// S3 (registered): the QP was found.
    pub s3_qhit: Signal<Out, Bit>,
    /// S3 (registered): connection PSN.
    pub s3_conn_psn: Signal<Out, Bits<32>>,
    /// S3 (registered): path PSN.
    pub s3_path_psn: Signal<Out, Bits<32>>,
    /// The event.
    pub m_ev: VerdictOut,
    /// Event: the engine path-tracks the packet.
    pub m_track: Signal<Out, Bit>,
    /// Event: the QP was found.
    pub m_qhit: Signal<Out, Bit>,
    /// Event: the connection's cumulative PSN after the verdict.
    pub m_conn_cum: Signal<Out, Bits<32>>,
    /// Event: IP ECN CE mark.
    pub m_ce: Signal<Out, Bit>,
    /// Event: the QP still receives.
    pub m_live: Signal<Out, Bit>,
    // ---- S3 ----
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
    // ---- the event ----
    e_valid: DFF<Bit>,
    e_code: DFF<Bits<5>>,
    e_track: DFF<Bit>,
    e_qhit: DFF<Bit>,
    e_conn_cum: DFF<Bits<32>>,
    e_live: DFF<Bit>,
    e_stream: DFF<Bits<16>>,
    e_conn_psn: DFF<Bits<32>>,
    e_offset: DFF<Bits<32>>,
    e_msg_len: DFF<Bits<32>>,
    e_len: DFF<Bits<16>>,
    e_version: DFF<Bits<8>>,
    e_opcode: DFF<Bits<8>>,
    e_flags: DFF<Bits<16>>,
    e_dst_qpn: DFF<Bits<32>>,
    e_path: DFF<Bits<16>>,
    e_path_psn: DFF<Bits<32>>,
    e_timestamp: DFF<Bits<64>>,
    e_src_port: DFF<Bits<16>>,
    e_ce: DFF<Bit>,
    e_msn: DFF<Bits<32>>,
    e_recv_idx: DFF<Bits<32>>,
    e_imm: DFF<Bits<32>>,
}

impl Logic for PlaceEvent {
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
            y_imm,
            e_valid,
            e_code,
            e_track,
            e_qhit,
            e_conn_cum,
            e_live,
            e_stream,
            e_conn_psn,
            e_offset,
            e_msg_len,
            e_len,
            e_version,
            e_opcode,
            e_flags,
            e_dst_qpn,
            e_path,
            e_path_psn,
            e_timestamp,
            e_src_port,
            e_ce,
            e_msn,
            e_recv_idx,
            e_imm
        );
        if self.en2.val() {
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
        self.s3_qhit.next = self.y_qhit.q.val();
        self.s3_conn_psn.next = self.y_conn_psn.q.val();
        self.s3_path_psn.next = self.y_path_psn.q.val();
        self.e_valid.d.next = self.en3.val();
        if self.en3.val() {
            self.e_code.d.next = self.code.val();
            self.e_track.d.next = self.track.val();
            self.e_qhit.d.next = self.y_qhit.q.val();
            self.e_conn_cum.d.next = self.conn_cum.val();
            self.e_live.d.next = self.live.val();
            self.e_stream.d.next = self.y_stream.q.val();
            self.e_conn_psn.d.next = self.y_conn_psn.q.val();
            self.e_offset.d.next = self.y_offset.q.val();
            self.e_msg_len.d.next = self.y_msg_len.q.val();
            self.e_len.d.next = 0.into();
            if self.y_is_msg.q.val() {
                self.e_len.d.next = self.plen.val();
            }
            self.e_version.d.next = self.y_version.q.val();
            self.e_opcode.d.next = self.y_opcode.q.val();
            self.e_flags.d.next = self.y_flags.q.val();
            self.e_dst_qpn.d.next = self.y_dst_qpn.q.val();
            self.e_path.d.next = self.y_path.q.val();
            self.e_path_psn.d.next = self.y_path_psn.q.val();
            self.e_timestamp.d.next = self.y_timestamp.q.val();
            self.e_src_port.d.next = self.y_src_port.q.val();
            self.e_ce.d.next = self.y_ce.q.val();
            self.e_msn.d.next = self.y_msn.q.val();
            self.e_recv_idx.d.next = self.y_recv_idx.q.val();
            self.e_imm.d.next = self.y_imm.q.val();
        }
        if self.rst.val() {
            self.e_valid.d.next = false;
        }
        self.m_ev.valid.next = self.e_valid.q.val();
        self.m_ev.code.next = self.e_code.q.val();
        self.m_track.next = self.e_track.q.val();
        self.m_qhit.next = self.e_qhit.q.val();
        self.m_conn_cum.next = self.e_conn_cum.q.val();
        self.m_live.next = self.e_live.q.val();
        self.m_ce.next = self.e_ce.q.val();
        self.m_ev.stream.next = self.e_stream.q.val();
        self.m_ev.conn_psn.next = self.e_conn_psn.q.val();
        self.m_ev.offset.next = self.e_offset.q.val();
        self.m_ev.msg_len.next = self.e_msg_len.q.val();
        self.m_ev.len.next = self.e_len.q.val();
        self.m_ev.version.next = self.e_version.q.val();
        self.m_ev.opcode.next = self.e_opcode.q.val();
        self.m_ev.flags.next = self.e_flags.q.val();
        self.m_ev.dst_qpn.next = self.e_dst_qpn.q.val();
        self.m_ev.path.next = self.e_path.q.val();
        self.m_ev.path_psn.next = self.e_path_psn.q.val();
        self.m_ev.timestamp.next = self.e_timestamp.q.val();
        self.m_ev.src_port.next = self.e_src_port.q.val();
        self.m_ev.msn.next = self.e_msn.q.val();
        self.m_ev.recv_idx.next = self.e_recv_idx.q.val();
        self.m_ev.imm.next = self.e_imm.q.val();
    }
}
