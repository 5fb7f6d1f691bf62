//! One stage of the check-only fields ([`PlaceStage`]).

use rust_hdl::prelude::*;

use super::links::{MetaIn, MetaOut};

/// The fields of a datagram in [`RxPlace`](super::RxPlace)'s pipeline that
/// only the state-free checks read, and its QP entry, taken from the stage
/// before when it holds a datagram (`d.valid`), registered (`m`, `m_qi`);
/// `m.valid` follows `d.valid` (cleared by `rst`). Two in a row (S1, S2),
/// S1's `m` joined to S2's `d`; S2's to [`PlaceCheck`](super::PlaceCheck).
/// The header fields travel beside them in [`PlaceHdr`](super::PlaceHdr)s.
#[derive(LogicBlock, Default)]
pub struct PlaceStage {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no datagram in the stage.
    pub rst: Signal<In, Bit>,
    /// The fields in the stage before.
    pub d: MetaIn,
    /// The QP entry in the stage before.
    pub qi: Signal<In, Bits<2>>,
    /// The fields, registered.
    pub m: MetaOut,
    /// The QP entry, registered.
    pub m_qi: Signal<Out, Bits<2>>,
    r_valid: DFF<Bit>,
    r_drop: DFF<Bit>,
    r_reason: DFF<Bits<3>>,
    r_len: DFF<Bits<16>>,
    r_src_qpn: DFF<Bits<32>>,
    r_src_ip: DFF<Bits<128>>,
    r_va_low: DFF<Bits<3>>,
    r_pl: DFF<Bits<16>>,
    r_end_off: DFF<Bits<33>>,
    r_qi: DFF<Bits<2>>,
}

impl Logic for PlaceStage {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_valid, r_drop, r_reason, r_len, r_src_qpn, r_src_ip, r_va_low, r_pl,
            r_end_off, r_qi
        );
        self.r_valid.d.next = self.d.valid.val() & !self.rst.val();
        if self.d.valid.val() {
            self.r_drop.d.next = self.d.drop.val();
            self.r_reason.d.next = self.d.reason.val();
            self.r_len.d.next = self.d.len.val();
            self.r_src_qpn.d.next = self.d.src_qpn.val();
            self.r_src_ip.d.next = self.d.src_ip.val();
            self.r_va_low.d.next = self.d.va_low.val();
            self.r_pl.d.next = self.d.pl.val();
            self.r_end_off.d.next = self.d.end_off.val();
            self.r_qi.d.next = self.qi.val();
        }
        self.m.valid.next = self.r_valid.q.val();
        self.m.drop.next = self.r_drop.q.val();
        self.m.reason.next = self.r_reason.q.val();
        self.m.len.next = self.r_len.q.val();
        self.m.src_qpn.next = self.r_src_qpn.q.val();
        self.m.src_ip.next = self.r_src_ip.q.val();
        self.m.va_low.next = self.r_va_low.q.val();
        self.m.pl.next = self.r_pl.q.val();
        self.m.end_off.next = self.r_end_off.q.val();
        self.m_qi.next = self.r_qi.q.val();
    }
}
