//! S2's checks after the duplicate check ([`CheckTail`]).

use rust_hdl::prelude::*;

/// The opcode's own checks of [`PlaceCheck`](super::PlaceCheck), after
/// the duplicate check in the engine's order, with the MR check they share
/// (`MrTable::check`, one for every opcode: the rkey with REMOTE_WRITE for
/// WRITE and WRITE_IMM, REMOTE_READ over the message for a READ request,
/// REMOTE_ATOMIC over 8 bytes for an atomic request, else the SGE's lkey
/// with LOCAL_WRITE, `check_local`; its range summed in S1,
/// [`PlaceSums`](super::PlaceSums), compared in
/// [`PlaceMr`](super::PlaceMr)). `tail` is the code (0: placed).
/// Registered for S3; computed only while `en` is high, otherwise 0.
#[derive(LogicBlock, Default)]
pub struct CheckTail {
    /// Clock (the output is registered).
    pub clock: Signal<In, Clock>,
    /// A datagram is in S2.
    pub en: Signal<In, Bit>,
    /// WRITE.
    pub is_write: Signal<In, Bit>,
    /// SEND or SEND_IMM.
    pub is_send: Signal<In, Bit>,
    /// WRITE_IMM.
    pub is_wimm: Signal<In, Bit>,
    /// Placed at the remote address under the rkey (WRITE, WRITE_IMM).
    pub is_rkey: Signal<In, Bit>,
    /// READ request.
    pub is_rreq: Signal<In, Bit>,
    /// Atomic request.
    pub is_areq: Signal<In, Bit>,
    /// ATOMIC_RESP.
    pub is_aresp: Signal<In, Bit>,
    /// Payload bytes.
    pub pl: Signal<In, Bits<16>>,
    /// Message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// The remote address's low 3 bits (an atomic's alignment).
    pub va_low: Signal<In, Bits<3>>,
    /// `recv_idx` has a posted receive in its ring.
    pub rq_hit: Signal<In, Bit>,
    /// The message is longer than that receive.
    pub rq_long: Signal<In, Bit>,
    /// An MR has the key.
    pub mhit: Signal<In, Bit>,
    /// That MR's access bits.
    pub m_access: Signal<In, Bits<4>>,
    /// That MR's protection domain is the QP's.
    pub m_pd_ok: Signal<In, Bit>,
    /// The MR check's range lies inside that MR.
    pub m_in_range: Signal<In, Bit>,
    /// Registered: the code (0: placed).
    pub tail: Signal<Out, Bits<5>>,
    r_tail: DFF<Bits<5>>,
    need: Signal<Local, Bits<4>>,
    mr_ok: Signal<Local, Bit>,
}

impl Logic for CheckTail {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_tail);
        self.tail.next = self.r_tail.q.val();
        self.need.next = 0.into();
        self.mr_ok.next = false;
        self.r_tail.d.next = 0.into();
        if self.en.val() {
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
        }
    }
}
