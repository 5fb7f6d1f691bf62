//! S3's verdict of one datagram ([`PlaceDecide`]).

use rust_hdl::prelude::*;

use super::links::ChecksIn;

/// S3 of [`RxPlace`](super::RxPlace): the verdict, in the engine's order
/// (first failure wins), from S2's registered state-free checks
/// ([`PlaceCheck`](super::PlaceCheck)) and the state read in S3 itself:
/// the QP's state, its connection cumulative PSN and bitmap (from S3's
/// registers, loaded in S2 with the previous datagram's result when it was
/// of the same QP) and the path tracker's cumulative PSN.
/// Combinational; computed only while `en` is high (a datagram in S3),
/// otherwise every output is 0.
#[derive(LogicBlock, Default)]
pub struct PlaceDecide {
    /// A datagram is in S3.
    pub en: Signal<In, Bit>,
    /// The QP was found.
    pub qhit: Signal<In, Bit>,
    /// [`PlaceCheck`](super::PlaceCheck)'s checks.
    pub chk: ChecksIn,
    /// QP: state.
    pub q_state: Signal<In, Bits<2>>,
    /// QP: connection cumulative PSN.
    pub q_cum: Signal<In, Bits<32>>,
    /// QP: connection bitmap (bit `p` for PSNs `p` mod 256).
    pub q_bm: Signal<In, Bits<256>>,
    /// Connection PSN.
    pub conn_psn: Signal<In, Bits<32>>,
    /// Path PSN.
    pub path_psn: Signal<In, Bits<32>>,
    /// The path tracker's cumulative PSN of the datagram's path.
    pub trk_cum: Signal<In, Bits<32>>,
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
    d: Signal<Local, Bits<32>>,
    d256: Signal<Local, Bits<32>>,
    dup: Signal<Local, Bit>,
    oow: Signal<Local, Bit>,
    probe_far: Signal<Local, Bit>,
    dp: Signal<Local, Bits<32>>,
    path_oow: Signal<Local, Bit>,
    receiving: Signal<Local, Bit>,
    c: Signal<Local, Bits<5>>,
}

impl Logic for PlaceDecide {
    #[hdl_gen]
    fn update(&mut self) {
        self.d.next = 0.into();
        self.d256.next = 0.into();
        self.dup.next = false;
        self.oow.next = false;
        self.probe_far.next = false;
        self.dp.next = 0.into();
        self.path_oow.next = false;
        self.receiving.next = false;
        self.c.next = 0.into();
        self.code.next = 0.into();
        self.track.next = false;
        self.accept.next = false;
        self.placed.next = false;
        self.live.next = false;
        if self.en.val() {
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
            self.receiving.next = (self.q_state.val() == 1) | (self.q_state.val() == 2);
            if self.chk.head_hit.val() {
                self.c.next = self.chk.head.val();
            } else if !self.receiving.val() {
                self.c.next = 7.into();
            } else if self.chk.mid_hit.val() {
                self.c.next = self.chk.mid.val();
            } else if self.chk.probe.val() {
                if self.probe_far.val() {
                    self.c.next = 12.into();
                } else if self.path_oow.val() {
                    self.c.next = 16.into();
                } else {
                    self.c.next = 17.into();
                }
            } else if self.oow.val() {
                self.c.next = 12.into();
            } else if self.chk.bad_len.val() {
                self.c.next = 13.into();
            } else if self.chk.resp.val() & !self.dup.val() & !self.chk.rd_ok.val() {
                // A new response is matched to its request before anything
                // else takes note of it (spec §6.8).
                self.c.next = 21.into();
            } else if !self.chk.resp.val() & !self.dup.val() & self.chk.msn_before.val() {
                // A new packet of a completed message (spec §6.5).
                self.c.next = 4.into();
            } else if !self.chk.resp.val() & !self.dup.val() & self.chk.msn_far.val() {
                self.c.next = 23.into();
            } else if self.path_oow.val() {
                self.c.next = 16.into();
            } else if self.dup.val() {
                self.c.next = 14.into();
            } else {
                self.c.next = self.chk.tail.val();
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
                | (self.chk.fwmsg.val() & (self.c.val() == 10));
            // Connection PSN accepted: placed, a READ response matched to
            // its READ whatever its lkey check, the messages handed up.
            self.accept.next = (self.c.val() == 0)
                | (self.c.val() == 22)
                | (self.chk.fwmsg.val() & (self.c.val() == 10));
            self.placed.next = self.c.val() == 0;
            self.live.next = self.qhit.val() & (self.c.val() != 22) & self.receiving.val();
        }
    }
}
