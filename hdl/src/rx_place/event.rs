//! The verdict event and the header fields it carries ([`PlaceEvent`]).

use rust_hdl::prelude::*;

use super::links::HdrIn;
use crate::bus::VerdictOut;

/// The verdict event of [`RxPlace`](super::RxPlace) (`m_ev`, the cycle
/// after S3): S3's header fields (`s_hdr`, joined from
/// [`PlaceHdr`](super::PlaceHdr)) with S3's verdict (`code`, `track`,
/// `live`, the connection's cumulative PSN after it), registered when S3
/// holds a datagram (`en3`). `len` is the payload's for a MSG opcode,
/// else 0. Every output is a register.
#[derive(LogicBlock, Default)]
pub struct PlaceEvent {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no event.
    pub rst: Signal<In, Bit>,
    /// S3: the header fields.
    pub s_hdr: HdrIn,
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
        self.e_valid.d.next = self.en3.val();
        if self.en3.val() {
            self.e_code.d.next = self.code.val();
            self.e_track.d.next = self.track.val();
            self.e_qhit.d.next = self.s_hdr.qhit.val();
            self.e_conn_cum.d.next = self.conn_cum.val();
            self.e_live.d.next = self.live.val();
            self.e_stream.d.next = self.s_hdr.stream.val();
            self.e_conn_psn.d.next = self.s_hdr.conn_psn.val();
            self.e_offset.d.next = self.s_hdr.offset.val();
            self.e_msg_len.d.next = self.s_hdr.msg_len.val();
            self.e_len.d.next = 0.into();
            if self.s_hdr.is_msg.val() {
                self.e_len.d.next = self.plen.val();
            }
            self.e_version.d.next = self.s_hdr.version.val();
            self.e_opcode.d.next = self.s_hdr.opcode.val();
            self.e_flags.d.next = self.s_hdr.flags.val();
            self.e_dst_qpn.d.next = self.s_hdr.dst_qpn.val();
            self.e_path.d.next = self.s_hdr.path.val();
            self.e_path_psn.d.next = self.s_hdr.path_psn.val();
            self.e_timestamp.d.next = self.s_hdr.timestamp.val();
            self.e_src_port.d.next = self.s_hdr.src_port.val();
            self.e_ce.d.next = self.s_hdr.ce.val();
            self.e_msn.d.next = self.s_hdr.msn.val();
            self.e_recv_idx.d.next = self.s_hdr.recv_idx.val();
            self.e_imm.d.next = self.s_hdr.imm.val();
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
