//! S2's checks of one datagram ([`PlaceCheck`]).

use rust_hdl::prelude::*;

/// S2 of [`RxPlace`](super::RxPlace): the receive checks of one datagram in the engine's
/// order (first failure wins), from its registered metadata and the table
/// entries selected for it (QP, outstanding READ, MR, ring slot, MSN heads),
/// combinational. Computed only while `en` is high (a datagram in S2);
/// otherwise every output is 0, so Verilator skips it in idle cycles.
#[derive(LogicBlock, Default)]
pub struct PlaceCheck {
    /// A datagram is in S2.
    pub en: Signal<In, Bit>,
    /// Parser: drop.
    pub drop: Signal<In, Bit>,
    /// Parser: drop reason.
    pub reason: Signal<In, Bits<3>>,
    /// Datagram length.
    pub len: Signal<In, Bits<16>>,
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
    /// Connection PSN.
    pub conn_psn: Signal<In, Bits<32>>,
    /// Path PSN.
    pub path_psn: Signal<In, Bits<32>>,
    /// MSN.
    pub msn: Signal<In, Bits<32>>,
    /// Posted-receive index.
    pub recv_idx: Signal<In, Bits<32>>,
    /// Message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// Offset.
    pub offset: Signal<In, Bits<32>>,
    /// Remote address.
    pub remote_va: Signal<In, Bits<64>>,
    /// The QP was found.
    pub qhit: Signal<In, Bit>,
    /// QP: state.
    pub q_state: Signal<In, Bits<2>>,
    /// QP: the peer's QPN.
    pub q_peer: Signal<In, Bits<32>>,
    /// QP: the peer's IP.
    pub q_peer_ip: Signal<In, Bits<128>>,
    /// QP: protection domain.
    pub q_pd: Signal<In, Bits<32>>,
    /// QP: streams.
    pub q_streams: Signal<In, Bits<16>>,
    /// QP: connection cumulative PSN.
    pub q_cum: Signal<In, Bits<32>>,
    /// QP: connection bitmap (bit `p` for PSNs `p` mod 256).
    pub q_bm: Signal<In, Bits<256>>,
    /// MTU.
    pub mtu: Signal<In, Bits<16>>,
    /// The path tracker's cumulative PSN of the datagram's path.
    pub trk_cum: Signal<In, Bits<32>>,
    /// Ring control word of (QP, stream): {count, base `recv_idx`}.
    pub rq_ctl: Signal<In, Bits<36>>,
    /// Ring slot of `recv_idx`: SGE address.
    pub rq_addr: Signal<In, Bits<64>>,
    /// Ring slot of `recv_idx`: SGE length.
    pub rq_len: Signal<In, Bits<32>>,
    /// MSN heads of the stream pair.
    pub heads: Signal<In, Bits<64>>,
    /// An outstanding READ (atomic) matches the response.
    pub rdhit: Signal<In, Bit>,
    /// Its local address.
    pub rd_addr: Signal<In, Bits<64>>,
    /// Its length.
    pub rd_len: Signal<In, Bits<32>>,
    /// An MR has the key (rkey or lkey by opcode).
    pub mhit: Signal<In, Bit>,
    /// That MR's access bits.
    pub m_access: Signal<In, Bits<4>>,
    /// That MR's protection domain.
    pub m_pd: Signal<In, Bits<32>>,
    /// That MR's base.
    pub m_base: Signal<In, Bits<64>>,
    /// That MR's length.
    pub m_len: Signal<In, Bits<64>>,
    /// [`Verdict`](super::Verdict) code.
    pub code: Signal<Out, Bits<5>>,
    /// The engine path-tracks the packet.
    pub track: Signal<Out, Bit>,
    /// The connection PSN is accepted.
    pub accept: Signal<Out, Bit>,
    /// Placed (verdict 0).
    pub placed: Signal<Out, Bit>,
    /// The QP still receives after the verdict.
    pub live: Signal<Out, Bit>,
    /// Payload bytes (length - 68).
    pub plen: Signal<Out, Bits<16>>,
    /// The frame has payload beats.
    pub has_beats: Signal<Out, Bit>,
    /// Where the payload goes.
    pub dest: Signal<Out, Bits<64>>,
    is_write: Signal<Local, Bit>,
    is_send: Signal<Local, Bit>,
    is_wimm: Signal<Local, Bit>,
    is_recv: Signal<Local, Bit>,
    is_rkey: Signal<Local, Bit>,
    is_rresp: Signal<Local, Bit>,
    is_rreq: Signal<Local, Bit>,
    is_areq: Signal<Local, Bit>,
    is_aresp: Signal<Local, Bit>,
    is_fwmsg: Signal<Local, Bit>,
    pl: Signal<Local, Bits<16>>,
    rq_off: Signal<Local, Bits<32>>,
    rq_hit: Signal<Local, Bit>,
    laddr: Signal<Local, Bits<65>>,
    maddr: Signal<Local, Bits<65>>,
    need: Signal<Local, Bits<4>>,
    rlen: Signal<Local, Bits<32>>,
    d: Signal<Local, Bits<32>>,
    d256: Signal<Local, Bits<32>>,
    dup: Signal<Local, Bit>,
    oow: Signal<Local, Bit>,
    probe_far: Signal<Local, Bit>,
    dp: Signal<Local, Bits<32>>,
    path_oow: Signal<Local, Bit>,
    end_off: Signal<Local, Bits<33>>,
    wend: Signal<Local, Bits<66>>,
    mend: Signal<Local, Bits<65>>,
    mr_ok: Signal<Local, Bit>,
    rd_fits: Signal<Local, Bit>,
    dm: Signal<Local, Bits<32>>,
    msn_far: Signal<Local, Bit>,
    bad_len: Signal<Local, Bit>,
    receiving: Signal<Local, Bit>,
    c: Signal<Local, Bits<5>>,
}

impl Logic for PlaceCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.is_write.next = false;
        self.is_send.next = false;
        self.is_wimm.next = false;
        self.is_recv.next = false;
        self.is_rkey.next = false;
        self.is_rresp.next = false;
        self.is_rreq.next = false;
        self.is_areq.next = false;
        self.is_aresp.next = false;
        self.is_fwmsg.next = false;
        self.pl.next = 0.into();
        self.rq_off.next = 0.into();
        self.rq_hit.next = false;
        self.laddr.next = 0.into();
        self.maddr.next = 0.into();
        self.need.next = 0.into();
        self.rlen.next = 0.into();
        self.d.next = 0.into();
        self.d256.next = 0.into();
        self.dup.next = false;
        self.oow.next = false;
        self.probe_far.next = false;
        self.dp.next = 0.into();
        self.path_oow.next = false;
        self.end_off.next = 0.into();
        self.wend.next = 0.into();
        self.mend.next = 0.into();
        self.mr_ok.next = false;
        self.rd_fits.next = false;
        self.dm.next = 0.into();
        self.msn_far.next = false;
        self.bad_len.next = false;
        self.receiving.next = false;
        self.c.next = 0.into();
        self.code.next = 0.into();
        self.track.next = false;
        self.accept.next = false;
        self.placed.next = false;
        self.live.next = false;
        self.plen.next = 0.into();
        self.has_beats.next = false;
        self.dest.next = 0.into();
        if self.en.val() {
            self.pl.next = self.len.val() - 68;
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
            self.is_fwmsg.next = self.is_rreq.val() | self.is_areq.val() | self.is_aresp.val();
            // The posted receive the message consumes (`receive_for`).
            self.rq_off.next = self.recv_idx.val() - self.rq_ctl.val().get_bits::<32>(0);
            self.rq_hit.next =
                self.rq_off.val() < bit_cast::<32, 4>(self.rq_ctl.val().get_bits::<4>(32));
            // Where the bytes go: the WRITE's address, or the local SGE +
            // offset (65 bits: a sum past 2^64 never passes the MR check).
            if self.is_rresp.val() {
                self.laddr.next =
                    bit_cast::<65, 64>(self.rd_addr.val()) + bit_cast::<65, 32>(self.offset.val());
            } else {
                self.laddr.next =
                    bit_cast::<65, 64>(self.rq_addr.val()) + bit_cast::<65, 32>(self.offset.val());
            }
            self.dest.next = self.laddr.val().get_bits::<64>(0);
            if self.is_rkey.val() {
                self.dest.next = self.remote_va.val();
            }
            // One MR check (`MrTable::check`) for every opcode: the rkey
            // with REMOTE_WRITE (WRITE, WRITE_IMM), REMOTE_READ over the
            // message (READ request), REMOTE_ATOMIC over 8 bytes (atomic
            // request), or the SGE's lkey with LOCAL_WRITE (`check_local`).
            self.maddr.next = self.laddr.val();
            if self.is_rkey.val() | self.is_rreq.val() | self.is_areq.val() {
                self.maddr.next = bit_cast::<65, 64>(self.remote_va.val());
            }
            self.need.next = 1.into();
            self.rlen.next = bit_cast::<32, 16>(self.pl.val());
            if self.is_rkey.val() {
                self.need.next = 2.into();
            } else if self.is_rreq.val() {
                self.need.next = 4.into();
                self.rlen.next = self.msg_len.val();
            } else if self.is_areq.val() {
                self.need.next = 8.into();
                self.rlen.next = 8.into();
            }
            self.d.next = self.conn_psn.val() - self.q_cum.val();
            self.dup.next = self.d.val().get_bit(31)
                | self
                    .q_bm
                    .val()
                    .get_bit(self.conn_psn.val().get_bits::<8>(0).index());
            self.oow.next = !self.d.val().get_bit(31) & (self.d.val() >= 256);
            // A PROBE's connection PSN (the sender's next one, spec §3.7)
            // lies within one window either side of the cumulative PSN
            // (`Qp::probe_current`); 32-bit wrap-around.
            self.d256.next = self.d.val() + 256;
            self.probe_far.next = self.d256.val() > 512;
            // The engine's path window (`PathMark::OutOfWindow`).
            self.dp.next = self.path_psn.val() - self.trk_cum.val();
            self.path_oow.next = (self.dp.val() >= 0x4000_0000) & !self.dp.val().get_bit(31);
            self.end_off.next =
                bit_cast::<33, 32>(self.offset.val()) + bit_cast::<33, 16>(self.pl.val());
            self.wend.next =
                bit_cast::<66, 65>(self.maddr.val()) + bit_cast::<66, 32>(self.rlen.val());
            self.mend.next =
                bit_cast::<65, 64>(self.m_base.val()) + bit_cast::<65, 64>(self.m_len.val());
            self.mr_ok.next = self.mhit.val()
                & (self.m_pd.val() == self.q_pd.val())
                & !self.maddr.val().get_bit(64)
                & (self.maddr.val().get_bits::<64>(0) >= self.m_base.val())
                & (self.wend.val() <= bit_cast::<66, 65>(self.mend.val()))
                & ((self.m_access.val() & self.need.val()) == self.need.val());
            // The response fits its READ (`Tx::read_response_fits`).
            self.rd_fits.next = (self.msg_len.val() == self.rd_len.val())
                & (self.end_off.val() <= bit_cast::<33, 32>(self.rd_len.val()));
            // The MSN window (spec §6.5): before the stream's head is a
            // completed message, a window or more after it too far.
            if self.stream.val().get_bit(0) {
                self.dm.next = self.msn.val() - self.heads.val().get_bits::<32>(32);
            } else {
                self.dm.next = self.msn.val() - self.heads.val().get_bits::<32>(0);
            }
            self.msn_far.next = !self.dm.val().get_bit(31) & (self.dm.val() >= 256);
            // An atomic request's payload is its operands (8 bytes, 16 for
            // COMPARE_SWAP), its offset 0 and its message length 8.
            if self.is_areq.val() {
                if self.opcode.val() == 0x09 {
                    self.bad_len.next = self.pl.val() != 16;
                } else {
                    self.bad_len.next = self.pl.val() != 8;
                }
                self.bad_len.next =
                    self.bad_len.val() | (self.offset.val() != 0) | (self.msg_len.val() != 8);
            } else {
                self.bad_len.next = (self.pl.val() > self.mtu.val())
                    | (self.end_off.val() > bit_cast::<33, 32>(self.msg_len.val()))
                    | (self.is_rreq.val() & ((self.pl.val() != 0) | (self.offset.val() != 0)));
            }
            self.receiving.next = (self.q_state.val() == 1) | (self.q_state.val() == 2);
            if self.drop.val() {
                self.c.next = bit_cast::<5, 3>(self.reason.val());
            } else if !self.qhit.val() {
                self.c.next = 6.into();
            } else if !self.receiving.val() {
                self.c.next = 7.into();
            } else if (self.src_qpn.val() != self.q_peer.val())
                | (self.src_ip.val() != self.q_peer_ip.val())
            {
                self.c.next = 8.into();
            } else if self.path.val() >= 64 {
                self.c.next = 9.into();
            } else if self.opcode.val() == 0x12 {
                if self.probe_far.val() {
                    self.c.next = 12.into();
                } else if self.path_oow.val() {
                    self.c.next = 16.into();
                } else {
                    self.c.next = 17.into();
                }
            } else if !self.is_write.val()
                & !self.is_recv.val()
                & !self.is_rresp.val()
                & !self.is_fwmsg.val()
            {
                self.c.next = 10.into();
            } else if self.stream.val() >= self.q_streams.val() {
                self.c.next = 11.into();
            } else if self.is_recv.val() & (self.stream.val() >= 4) {
                // Receives of streams without a ring are the firmware's.
                self.c.next = 10.into();
            } else if self.oow.val() {
                self.c.next = 12.into();
            } else if self.bad_len.val() {
                self.c.next = 13.into();
            } else if (self.is_rresp.val() | self.is_aresp.val())
                & !self.dup.val()
                & !(self.rdhit.val() & self.rd_fits.val())
            {
                // A new response is matched to its request before anything
                // else takes note of it (spec §6.8).
                self.c.next = 21.into();
            } else if !self.is_rresp.val()
                & !self.is_aresp.val()
                & !self.dup.val()
                & self.dm.val().get_bit(31)
            {
                // A new packet of a completed message (spec §6.5).
                self.c.next = 4.into();
            } else if !self.is_rresp.val()
                & !self.is_aresp.val()
                & !self.dup.val()
                & self.msn_far.val()
            {
                self.c.next = 23.into();
            } else if self.path_oow.val() {
                self.c.next = 16.into();
            } else if self.dup.val() {
                self.c.next = 14.into();
            } else if self.is_write.val() {
                if (self.pl.val() != 0) & !self.mr_ok.val() {
                    self.c.next = 15.into();
                }
            } else if self.is_rreq.val() {
                // The rkey check, then up to the firmware, PSN accepted.
                if (self.msg_len.val() != 0) & !self.mr_ok.val() {
                    self.c.next = 15.into();
                } else {
                    self.c.next = 10.into();
                }
            } else if self.is_areq.val() {
                // The rkey check, then 8-byte alignment, then up.
                if !self.mr_ok.val() {
                    self.c.next = 15.into();
                } else if self.remote_va.val().get_bits::<3>(0) != 0 {
                    self.c.next = 19.into();
                } else {
                    self.c.next = 10.into();
                }
            } else if self.is_aresp.val() {
                self.c.next = 10.into();
            } else if self.is_wimm.val() {
                // A posted receive first (its completion), then the rkey.
                if !self.rq_hit.val() {
                    self.c.next = 18.into();
                } else if (self.pl.val() != 0) & !self.mr_ok.val() {
                    self.c.next = 15.into();
                }
            } else if self.is_send.val() {
                if !self.rq_hit.val() {
                    self.c.next = 18.into();
                } else if self.msg_len.val() > self.rq_len.val() {
                    self.c.next = 19.into();
                } else if (self.pl.val() != 0) & !self.mr_ok.val() {
                    self.c.next = 20.into();
                }
            } else if (self.pl.val() != 0) & !self.mr_ok.val() {
                // A READ response that fits its READ: the lkey check.
                self.c.next = 22.into();
            }
            self.code.next = self.c.val();
            // The engine path-tracks (and ACKs) every message that passed
            // the checks up to the path window, and PROBEs.
            self.track.next = (self.c.val() == 0)
                | (self.c.val() == 14)
                | (self.c.val() == 15)
                | (self.c.val() == 17)
                | (self.c.val() == 18)
                | (self.c.val() == 19)
                | (self.c.val() == 20)
                | (self.c.val() == 22)
                | (self.is_fwmsg.val() & (self.c.val() == 10));
            // Connection PSN accepted: placed, a READ response matched to
            // its READ whatever its lkey check, the messages handed up.
            self.accept.next = (self.c.val() == 0)
                | (self.c.val() == 22)
                | (self.is_fwmsg.val() & (self.c.val() == 10));
            self.placed.next = self.c.val() == 0;
            self.live.next = self.qhit.val() & (self.c.val() != 22) & self.receiving.val();
            self.plen.next = self.pl.val();
            if self.is_msg.val() {
                self.has_beats.next = self.len.val() > 64;
            } else {
                self.has_beats.next = self.len.val() > 32;
            }
        }
    }
}
