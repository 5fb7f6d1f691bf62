//! S2's state-free checks of one datagram ([`PlaceCheck`]).

use rust_hdl::prelude::*;

use super::links::{ChecksOut, MetaIn};
use super::{CheckHead, CheckLen, CheckTail};

/// S2 of [`RxPlace`](super::RxPlace): the receive checks of one datagram
/// that do not read the connection state (cumulative PSN, bitmap, QP
/// state) or the path tracker, from its registered metadata, S1's sums
/// ([`PlaceSums`](super::PlaceSums): the MR check's range, the ring's
/// checks) and the table entries selected for it (QP, outstanding READ,
/// MR, MSN heads), registered for S3 ([`PlaceDecide`](super::PlaceDecide), which puts them
/// in the engine's order with the stateful ones). The checks are split at
/// the stateful ones of the engine's order: `head` before the QP state,
/// `mid` from the peer to the stream checks, then the flags the chain
/// needs, and `tail`, the opcode's own checks after the duplicate check.
/// The combinational part is computed only while `m.valid` is high (a datagram
/// in S2), otherwise 0, so Verilator skips it in idle cycles.
#[derive(LogicBlock, Default)]
pub struct PlaceCheck {
    /// Clock (the outputs are registered).
    pub clock: Signal<In, Clock>,
    /// S2: the datagram's fields that only the checks read (`valid`: a
    /// datagram is here).
    pub m: MetaIn,
    /// MSG opcode (64 header bytes).
    pub is_msg: Signal<In, Bit>,
    /// Opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// Stream id.
    pub stream: Signal<In, Bits<16>>,
    /// Path id.
    pub path: Signal<In, Bits<16>>,
    /// MSN.
    pub msn: Signal<In, Bits<32>>,
    /// Message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// Offset.
    pub offset: Signal<In, Bits<32>>,
    /// The QP was found.
    pub qhit: Signal<In, Bit>,
    /// QP: the peer's QPN.
    pub q_peer: Signal<In, Bits<32>>,
    /// QP: the peer's IP.
    pub q_peer_ip: Signal<In, Bits<128>>,
    /// QP: streams.
    pub q_streams: Signal<In, Bits<16>>,
    /// MTU.
    pub mtu: Signal<In, Bits<16>>,
    /// `recv_idx` has a posted receive in its ring (from S1).
    pub rq_hit: Signal<In, Bit>,
    /// The message is longer than that receive (from S1).
    pub rq_long: Signal<In, Bit>,
    /// Where the payload goes (from S1).
    pub dest_s1: Signal<In, Bits<64>>,
    /// MSN heads of the stream pair.
    pub heads: Signal<In, Bits<64>>,
    /// An outstanding READ (atomic) matches the response.
    pub rdhit: Signal<In, Bit>,
    /// Its length.
    pub rd_len: Signal<In, Bits<32>>,
    /// An MR has the key (rkey or lkey by opcode).
    pub mhit: Signal<In, Bit>,
    /// That MR's access bits.
    pub m_access: Signal<In, Bits<4>>,
    /// That MR's protection domain is the QP's.
    pub m_pd_ok: Signal<In, Bit>,
    /// The MR check's range (S1's sums) lies inside that MR.
    pub m_in_range: Signal<In, Bit>,
    /// Registered: the checks, for S3's verdict.
    pub v: ChecksOut,
    /// Registered: payload bytes (length - 68).
    pub plen: Signal<Out, Bits<16>>,
    /// Registered: the frame has payload beats.
    pub has_beats: Signal<Out, Bit>,
    /// Registered: where the payload goes.
    pub dest: Signal<Out, Bits<64>>,
    // The checks before the window, on lengths and numbers, after the
    // duplicate check.
    c_head: CheckHead,
    c_len: CheckLen,
    c_tail: CheckTail,
    r_resp: DFF<Bit>,
    r_fwmsg: DFF<Bit>,
    r_plen: DFF<Bits<16>>,
    r_has_beats: DFF<Bit>,
    r_dest: DFF<Bits<64>>,
    is_write: Signal<Local, Bit>,
    is_send: Signal<Local, Bit>,
    is_wimm: Signal<Local, Bit>,
    is_recv: Signal<Local, Bit>,
    is_rkey: Signal<Local, Bit>,
    is_rresp: Signal<Local, Bit>,
    is_rreq: Signal<Local, Bit>,
    is_areq: Signal<Local, Bit>,
    is_aresp: Signal<Local, Bit>,
}

impl Logic for PlaceCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_resp, r_fwmsg, r_plen, r_has_beats, r_dest);
        self.v.resp.next = self.r_resp.q.val();
        self.v.fwmsg.next = self.r_fwmsg.q.val();
        self.plen.next = self.r_plen.q.val();
        self.has_beats.next = self.r_has_beats.q.val();
        self.dest.next = self.r_dest.q.val();
        self.is_write.next = false;
        self.is_send.next = false;
        self.is_wimm.next = false;
        self.is_recv.next = false;
        self.is_rkey.next = false;
        self.is_rresp.next = false;
        self.is_rreq.next = false;
        self.is_areq.next = false;
        self.is_aresp.next = false;
        self.r_resp.d.next = false;
        self.r_fwmsg.d.next = false;
        self.r_plen.d.next = 0.into();
        self.r_has_beats.d.next = false;
        self.r_dest.d.next = 0.into();
        if self.m.valid.val() {
            self.is_write.next = self.opcode.val() == 0x01;
            self.is_send.next = (self.opcode.val() == 0x03) | (self.opcode.val() == 0x04);
            self.is_wimm.next = self.opcode.val() == 0x02;
            // The opcodes that consume a posted receive of their stream.
            self.is_recv.next = self.is_send.val() | self.is_wimm.val();
            // The opcodes placed at the remote address under the rkey.
            self.is_rkey.next = self.is_write.val() | self.is_wimm.val();
            self.is_rresp.next = self.opcode.val() == 0x06;
            // A READ request: checked and accepted here like a message,
            // executed by the firmware.
            self.is_rreq.next = self.opcode.val() == 0x05;
            // Atomics (spec §6.8): a request checked like a READ request,
            // a response matched like a READ response; both handed up.
            self.is_areq.next = (self.opcode.val() == 0x08) | (self.opcode.val() == 0x09);
            self.is_aresp.next = self.opcode.val() == 0x0A;
            self.r_fwmsg.d.next = self.is_rreq.val() | self.is_areq.val() | self.is_aresp.val();
            self.r_resp.d.next = self.is_rresp.val() | self.is_aresp.val();
            self.r_dest.d.next = self.dest_s1.val();
            self.r_plen.d.next = self.m.pl.val();
            if self.is_msg.val() {
                self.r_has_beats.d.next = self.m.len.val() > 64;
            } else {
                self.r_has_beats.d.next = self.m.len.val() > 32;
            }
        }
        // Before the connection window.
        self.c_head.clock.next = self.clock.val();
        self.c_head.en.next = self.m.valid.val();
        self.c_head.drop.next = self.m.drop.val();
        self.c_head.reason.next = self.m.reason.val();
        self.c_head.qhit.next = self.qhit.val();
        self.c_head.src_qpn.next = self.m.src_qpn.val();
        self.c_head.src_ip.next = self.m.src_ip.val();
        self.c_head.q_peer.next = self.q_peer.val();
        self.c_head.q_peer_ip.next = self.q_peer_ip.val();
        self.c_head.path.next = self.path.val();
        self.c_head.opcode.next = self.opcode.val();
        self.c_head.known.next = self.is_write.val()
            | self.is_recv.val()
            | self.is_rresp.val()
            | self.is_areq.val()
            | self.is_aresp.val()
            | self.is_rreq.val();
        self.c_head.is_recv.next = self.is_recv.val();
        self.c_head.stream.next = self.stream.val();
        self.c_head.q_streams.next = self.q_streams.val();
        self.v.head_hit.next = self.c_head.head_hit.val();
        self.v.head.next = self.c_head.head.val();
        self.v.mid_hit.next = self.c_head.mid_hit.val();
        self.v.mid.next = self.c_head.mid.val();
        self.v.probe.next = self.c_head.probe.val();
        // Lengths, the READ's fit, the MSN window.
        self.c_len.clock.next = self.clock.val();
        self.c_len.en.next = self.m.valid.val();
        self.c_len.opcode.next = self.opcode.val();
        self.c_len.is_rreq.next = self.is_rreq.val();
        self.c_len.is_areq.next = self.is_areq.val();
        self.c_len.pl.next = self.m.pl.val();
        self.c_len.end_off.next = self.m.end_off.val();
        self.c_len.mtu.next = self.mtu.val();
        self.c_len.msg_len.next = self.msg_len.val();
        self.c_len.offset.next = self.offset.val();
        self.c_len.rdhit.next = self.rdhit.val();
        self.c_len.rd_len.next = self.rd_len.val();
        self.c_len.msn.next = self.msn.val();
        self.c_len.odd.next = self.stream.val().get_bit(0);
        self.c_len.heads.next = self.heads.val();
        self.v.bad_len.next = self.c_len.bad_len.val();
        self.v.rd_ok.next = self.c_len.rd_ok.val();
        self.v.msn_before.next = self.c_len.msn_before.val();
        self.v.msn_far.next = self.c_len.msn_far.val();
        // After the duplicate check.
        self.c_tail.clock.next = self.clock.val();
        self.c_tail.en.next = self.m.valid.val();
        self.c_tail.is_write.next = self.is_write.val();
        self.c_tail.is_send.next = self.is_send.val();
        self.c_tail.is_wimm.next = self.is_wimm.val();
        self.c_tail.is_rkey.next = self.is_rkey.val();
        self.c_tail.is_rreq.next = self.is_rreq.val();
        self.c_tail.is_areq.next = self.is_areq.val();
        self.c_tail.is_aresp.next = self.is_aresp.val();
        self.c_tail.pl.next = self.m.pl.val();
        self.c_tail.msg_len.next = self.msg_len.val();
        self.c_tail.va_low.next = self.m.va_low.val();
        self.c_tail.rq_hit.next = self.rq_hit.val();
        self.c_tail.rq_long.next = self.rq_long.val();
        self.c_tail.mhit.next = self.mhit.val();
        self.c_tail.m_access.next = self.m_access.val();
        self.c_tail.m_pd_ok.next = self.m_pd_ok.val();
        self.c_tail.m_in_range.next = self.m_in_range.val();
        self.v.tail.next = self.c_tail.tail.val();
    }
}
