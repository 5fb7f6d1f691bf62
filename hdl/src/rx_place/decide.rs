//! S3's verdict of one datagram ([`PlaceDecide`]).

use rust_hdl::prelude::*;

use super::links::ChecksIn;

/// S3 of [`RxPlace`](super::RxPlace): the verdict, in the engine's order
/// (first failure wins), from S2's registered state-free checks
/// ([`PlaceCheck`](super::PlaceCheck)), the connection window's tests
/// (computed in S2 by [`ConnAhead`](super::ConnAhead), registered) and the
/// state read in S3 itself: the QP's state (from S3's register, loaded in
/// S2 with the previous datagram's result when it was of the same QP) and
/// the path tracker's cumulative PSN.
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
    /// Connection PSN beyond the window ([`ConnAhead`](super::ConnAhead)).
    pub oow: Signal<In, Bit>,
    /// Connection PSN more than 256 from the cumulative PSN either way.
    pub far: Signal<In, Bit>,
    /// Connection PSN accepted before.
    pub dup: Signal<In, Bit>,
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
    dp: Signal<Local, Bits<32>>,
    path_oow: Signal<Local, Bit>,
    receiving: Signal<Local, Bit>,
    c: Signal<Local, Bits<5>>,
}

impl Logic for PlaceDecide {
    #[hdl_gen]
    fn update(&mut self) {
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
            // The engine's path window (`PathMark::OutOfWindow`: `dp` in
            // [2^30, 2^31), a test of its two top bits).
            self.dp.next = self.path_psn.val() - self.trk_cum.val();
            self.path_oow.next = (self.dp.val() >> 30) == 1;
            self.receiving.next = (self.q_state.val() == 1) | (self.q_state.val() == 2);
            if self.chk.head_hit.val() {
                self.c.next = self.chk.head.val();
            } else if !self.receiving.val() {
                self.c.next = 7.into();
            } else if self.chk.mid_hit.val() {
                self.c.next = self.chk.mid.val();
            } else if self.chk.probe.val() {
                if self.far.val() {
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
