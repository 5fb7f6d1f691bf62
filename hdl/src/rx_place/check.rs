//! S2's state-free checks of one datagram ([`PlaceCheck`]).

use rust_hdl::prelude::*;

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
/// The combinational part is computed only while `en` is high (a datagram
/// in S2), otherwise 0, so Verilator skips it in idle cycles.
#[derive(LogicBlock, Default)]
pub struct PlaceCheck {
    /// Clock (the outputs are registered).
    pub clock: Signal<In, Clock>,
    /// A datagram is in S2.
    pub en: Signal<In, Bit>,
    /// Parser: drop.
    pub drop: Signal<In, Bit>,
    /// Parser: drop reason.
    pub reason: Signal<In, Bits<3>>,
    /// Datagram length.
    pub len: Signal<In, Bits<16>>,
    /// Payload bytes (length - 68, from S0).
    pub pl: Signal<In, Bits<16>>,
    /// Offset + payload bytes (33 bits, from S0).
    pub end_off: Signal<In, Bits<33>>,
    /// MSG opcode (64 header bytes).
    pub is_msg: Signal<In, Bit>,
    /// Opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// Source QPN.
    pub src_qpn: Signal<In, Bits<32>>,
    /// Source IP.
    pub src_ip: Signal<In, Bits<128>>,
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
    /// The remote address's low 3 bits (an atomic's alignment).
    pub va_low: Signal<In, Bits<3>>,
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
    /// Registered: a code from the checks before the QP state (parser
    /// drop, unknown QP) is in `head`.
    pub head_hit: Signal<Out, Bit>,
    /// Registered: that code.
    pub head: Signal<Out, Bits<5>>,
    /// Registered: a code from the checks after the QP state and before
    /// the connection window (peer, path, opcode, stream) is in `mid`.
    pub mid_hit: Signal<Out, Bit>,
    /// Registered: that code.
    pub mid: Signal<Out, Bits<5>>,
    /// Registered: a PROBE that passed `mid` (its code is 12, 16 or 17).
    pub probe: Signal<Out, Bit>,
    /// Registered: the length checks fail (13).
    pub bad_len: Signal<Out, Bit>,
    /// Registered: a READ or atomic response.
    pub resp: Signal<Out, Bit>,
    /// Registered: the response matches an outstanding READ (atomic) and
    /// fits it.
    pub rd_ok: Signal<Out, Bit>,
    /// Registered: the MSN is before its stream's head (4 when new).
    pub msn_before: Signal<Out, Bit>,
    /// Registered: the MSN is a window or more after its stream's head (23
    /// when new).
    pub msn_far: Signal<Out, Bit>,
    /// Registered: the opcode's own checks after the duplicate check (0:
    /// placed).
    pub tail: Signal<Out, Bits<5>>,
    /// Registered: a READ request, atomic request or ATOMIC_RESP (tracked
    /// and accepted when handed up).
    pub fwmsg: Signal<Out, Bit>,
    /// Registered: payload bytes (length - 68).
    pub plen: Signal<Out, Bits<16>>,
    /// Registered: the frame has payload beats.
    pub has_beats: Signal<Out, Bit>,
    /// Registered: where the payload goes.
    pub dest: Signal<Out, Bits<64>>,
    r_head_hit: DFF<Bit>,
    r_head: DFF<Bits<5>>,
    r_mid_hit: DFF<Bit>,
    r_mid: DFF<Bits<5>>,
    r_probe: DFF<Bit>,
    r_bad_len: DFF<Bit>,
    r_resp: DFF<Bit>,
    r_rd_ok: DFF<Bit>,
    r_msn_before: DFF<Bit>,
    r_msn_far: DFF<Bit>,
    r_tail: DFF<Bits<5>>,
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
    need: Signal<Local, Bits<4>>,
    mr_ok: Signal<Local, Bit>,
    rd_fits: Signal<Local, Bit>,
    dm: Signal<Local, Bits<32>>,
    bl: Signal<Local, Bit>,
}

impl Logic for PlaceCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_head_hit,
            r_head,
            r_mid_hit,
            r_mid,
            r_probe,
            r_bad_len,
            r_resp,
            r_rd_ok,
            r_msn_before,
            r_msn_far,
            r_tail,
            r_fwmsg,
            r_plen,
            r_has_beats,
            r_dest
        );
        self.head_hit.next = self.r_head_hit.q.val();
        self.head.next = self.r_head.q.val();
        self.mid_hit.next = self.r_mid_hit.q.val();
        self.mid.next = self.r_mid.q.val();
        self.probe.next = self.r_probe.q.val();
        self.bad_len.next = self.r_bad_len.q.val();
        self.resp.next = self.r_resp.q.val();
        self.rd_ok.next = self.r_rd_ok.q.val();
        self.msn_before.next = self.r_msn_before.q.val();
        self.msn_far.next = self.r_msn_far.q.val();
        self.tail.next = self.r_tail.q.val();
        self.fwmsg.next = self.r_fwmsg.q.val();
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
        self.need.next = 0.into();
        self.mr_ok.next = false;
        self.rd_fits.next = false;
        self.dm.next = 0.into();
        self.bl.next = false;
        self.r_head_hit.d.next = false;
        self.r_head.d.next = 0.into();
        self.r_mid_hit.d.next = false;
        self.r_mid.d.next = 0.into();
        self.r_probe.d.next = false;
        self.r_bad_len.d.next = false;
        self.r_resp.d.next = false;
        self.r_rd_ok.d.next = false;
        self.r_msn_before.d.next = false;
        self.r_msn_far.d.next = false;
        self.r_tail.d.next = 0.into();
        self.r_fwmsg.d.next = false;
        self.r_plen.d.next = 0.into();
        self.r_has_beats.d.next = false;
        self.r_dest.d.next = 0.into();
        if self.en.val() {
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
            // One MR check (`MrTable::check`) for every opcode, over the
            // range summed in S1 (`PlaceSums`, compared in `PlaceMr`): the rkey with REMOTE_WRITE
            // (WRITE, WRITE_IMM), REMOTE_READ over the message (READ
            // request), REMOTE_ATOMIC over 8 bytes (atomic request), or
            // the SGE's lkey with LOCAL_WRITE (`check_local`).
            self.need.next = 1.into();
            if self.is_rkey.val() {
                self.need.next = 2.into();
            } else if self.is_rreq.val() {
                self.need.next = 4.into();
            } else if self.is_areq.val() {
                self.need.next = 8.into();
            }
            self.mr_ok.next = self.mhit.val()
                & self.m_pd_ok.val()
                & self.m_in_range.val()
                & ((self.m_access.val() & self.need.val()) == self.need.val());
            // The response fits its READ (`Tx::read_response_fits`).
            self.rd_fits.next = (self.msg_len.val() == self.rd_len.val())
                & (self.end_off.val() <= bit_cast::<33, 32>(self.rd_len.val()));
            self.r_rd_ok.d.next = self.rdhit.val() & self.rd_fits.val();
            // The MSN window (spec §6.5): before the stream's head is a
            // completed message, a window or more after it too far.
            if self.stream.val().get_bit(0) {
                self.dm.next = self.msn.val() - self.heads.val().get_bits::<32>(32);
            } else {
                self.dm.next = self.msn.val() - self.heads.val().get_bits::<32>(0);
            }
            self.r_msn_before.d.next = self.dm.val().get_bit(31);
            self.r_msn_far.d.next = !self.dm.val().get_bit(31) & (self.dm.val() >= 256);
            // An atomic request's payload is its operands (8 bytes, 16 for
            // COMPARE_SWAP), its offset 0 and its message length 8.
            if self.is_areq.val() {
                if self.opcode.val() == 0x09 {
                    self.bl.next = self.pl.val() != 16;
                } else {
                    self.bl.next = self.pl.val() != 8;
                }
                self.r_bad_len.d.next =
                    self.bl.val() | (self.offset.val() != 0) | (self.msg_len.val() != 8);
            } else {
                self.r_bad_len.d.next = (self.pl.val() > self.mtu.val())
                    | (self.end_off.val() > bit_cast::<33, 32>(self.msg_len.val()))
                    | (self.is_rreq.val() & ((self.pl.val() != 0) | (self.offset.val() != 0)));
            }
            // Before the QP state (7, S3's).
            if self.drop.val() {
                self.r_head_hit.d.next = true;
                self.r_head.d.next = bit_cast::<5, 3>(self.reason.val());
            } else if !self.qhit.val() {
                self.r_head_hit.d.next = true;
                self.r_head.d.next = 6.into();
            }
            // After it, before the connection window (12, S3's).
            self.r_mid_hit.d.next = true;
            if (self.src_qpn.val() != self.q_peer.val())
                | (self.src_ip.val() != self.q_peer_ip.val())
            {
                self.r_mid.d.next = 8.into();
            } else if self.path.val() >= 64 {
                self.r_mid.d.next = 9.into();
            } else if self.opcode.val() == 0x12 {
                self.r_mid_hit.d.next = false;
                self.r_probe.d.next = true;
            } else if !self.is_write.val()
                & !self.is_recv.val()
                & !self.is_rresp.val()
                & !self.is_areq.val()
                & !self.is_aresp.val()
                & !self.is_rreq.val()
            {
                self.r_mid.d.next = 10.into();
            } else if self.stream.val() >= self.q_streams.val() {
                self.r_mid.d.next = 11.into();
            } else if self.is_recv.val() & (self.stream.val() >= 4) {
                // Receives of streams without a ring are the firmware's.
                self.r_mid.d.next = 10.into();
            } else {
                self.r_mid_hit.d.next = false;
            }
            // The opcode's own checks, after the duplicate check.
            if self.is_write.val() {
                if (self.pl.val() != 0) & !self.mr_ok.val() {
                    self.r_tail.d.next = 15.into();
                }
            } else if self.is_rreq.val() {
                // The rkey check, then up to the firmware, PSN accepted.
                if (self.msg_len.val() != 0) & !self.mr_ok.val() {
                    self.r_tail.d.next = 15.into();
                } else {
                    self.r_tail.d.next = 10.into();
                }
            } else if self.is_areq.val() {
                // The rkey check, then 8-byte alignment, then up.
                if !self.mr_ok.val() {
                    self.r_tail.d.next = 15.into();
                } else if self.va_low.val() != 0 {
                    self.r_tail.d.next = 19.into();
                } else {
                    self.r_tail.d.next = 10.into();
                }
            } else if self.is_aresp.val() {
                self.r_tail.d.next = 10.into();
            } else if self.is_wimm.val() {
                // A posted receive first (its completion), then the rkey.
                if !self.rq_hit.val() {
                    self.r_tail.d.next = 18.into();
                } else if (self.pl.val() != 0) & !self.mr_ok.val() {
                    self.r_tail.d.next = 15.into();
                }
            } else if self.is_send.val() {
                if !self.rq_hit.val() {
                    self.r_tail.d.next = 18.into();
                } else if self.rq_long.val() {
                    self.r_tail.d.next = 19.into();
                } else if (self.pl.val() != 0) & !self.mr_ok.val() {
                    self.r_tail.d.next = 20.into();
                }
            } else if (self.pl.val() != 0) & !self.mr_ok.val() {
                // A READ response that fits its READ: the lkey check.
                self.r_tail.d.next = 22.into();
            }
            self.r_plen.d.next = self.pl.val();
            if self.is_msg.val() {
                self.r_has_beats.d.next = self.len.val() > 64;
            } else {
                self.r_has_beats.d.next = self.len.val() > 32;
            }
        }
    }
}
