//! The receive rings and MSN heads ([`PlaceRings`]).

use rust_hdl::prelude::*;

use crate::bus::CfgIn;

/// The RAMs of [`RxPlace`](super::RxPlace) without reset, written by the
/// firmware and read once per datagram (block-RAM style: the address in
/// S0, the word registered for S1):
///
/// * per QP and stream below [`RQ_STREAMS`](super::RQ_STREAMS), the
///   receive ring's control word (table 3, words 0..4: the base
///   `recv_idx` and the count) and its [`RQ_SLOTS`](super::RQ_SLOTS)
///   slots (`cfg_addr[8]` set, [`cfg::ring`](super::cfg::ring): the SGE's
///   address, then its length and lkey), the slot `recv_idx mod 8`;
/// * per QP, the MSN heads (table 3, words 8..15, two streams a word), the
///   word of the datagram's stream, held a cycle more for S2's checks.
#[derive(LogicBlock, Default)]
pub struct PlaceRings {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Table write port (table 3 and the ring slots).
    pub cfg: CfgIn<9>,
    /// S0: the datagram's QP entry.
    pub qi0: Signal<In, Bits<2>>,
    /// S0: its stream id's low bits (a stream ≥ `RQ_STREAMS` never uses
    /// the ring; the MSN heads' word takes bits 3..1).
    pub stream: Signal<In, Bits<4>>,
    /// S0: its `recv_idx`'s low bits (the slot).
    pub slot: Signal<In, Bits<3>>,
    /// S1: the ring's control word.
    pub ctl: Signal<Out, Bits<36>>,
    /// S1: the slot's SGE address.
    pub sge_addr: Signal<Out, Bits<64>>,
    /// S1: the slot's SGE {lkey, length}.
    pub sge_ll: Signal<Out, Bits<64>>,
    /// S1: a datagram is here (hold the MSN heads' word).
    pub en1: Signal<In, Bit>,
    /// S2: the MSN heads' word of the stream pair.
    pub heads: Signal<Out, Bits<64>>,
    x_heads: DFF<Bits<64>>,
    rq_ctl: RAM<Bits<36>, 4>,
    rq_addr: RAM<Bits<64>, 7>,
    rq_ll: RAM<Bits<64>, 7>,
    msn_heads: RAM<Bits<64>, 5>,
}

impl Logic for PlaceRings {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, x_heads);
        self.rq_ctl.read_clock.next = self.clock.val();
        self.rq_ctl.write_clock.next = self.clock.val();
        self.rq_addr.read_clock.next = self.clock.val();
        self.rq_addr.write_clock.next = self.clock.val();
        self.rq_ll.read_clock.next = self.clock.val();
        self.rq_ll.write_clock.next = self.clock.val();
        self.msn_heads.read_clock.next = self.clock.val();
        self.msn_heads.write_clock.next = self.clock.val();
        // ---- S0: the ring's control word of (QP, stream), the slot and the
        // MSN heads' word ----
        self.rq_ctl.read_address.next = (bit_cast::<4, 2>(self.qi0.val()) << 2)
            | bit_cast::<4, 2>(self.stream.val().get_bits::<2>(0));
        self.rq_addr.read_address.next = (bit_cast::<7, 2>(self.qi0.val()) << 5)
            | (bit_cast::<7, 2>(self.stream.val().get_bits::<2>(0)) << 3)
            | bit_cast::<7, 3>(self.slot.val());
        self.rq_ll.read_address.next = (bit_cast::<7, 2>(self.qi0.val()) << 5)
            | (bit_cast::<7, 2>(self.stream.val().get_bits::<2>(0)) << 3)
            | bit_cast::<7, 3>(self.slot.val());
        self.msn_heads.read_address.next = (bit_cast::<5, 2>(self.qi0.val()) << 3)
            | bit_cast::<5, 3>(self.stream.val().get_bits::<3>(1));
        self.ctl.next = self.rq_ctl.read_data.val();
        self.sge_addr.next = self.rq_addr.read_data.val();
        self.sge_ll.next = self.rq_ll.read_data.val();
        if self.en1.val() {
            self.x_heads.d.next = self.msn_heads.read_data.val();
        }
        self.heads.next = self.x_heads.q.val();
        // ---- table writes: table 3 (entry = QP) words 0..RQ_STREAMS the
        // ring control words, words 8..15 the MSN heads; `cfg_addr[8]` the
        // ring slots (`1 << 8 | QP << 6 | stream << 4 | slot << 1 | word`:
        // 0 address, 1 {lkey, length}) ----
        self.rq_ctl.write_enable.next = self.cfg.we.val()
            & (self.cfg.addr.val().get_bits::<3>(6) == 3)
            & (self.cfg.addr.val().get_bits::<2>(2) == 0);
        self.rq_ctl.write_address.next = (bit_cast::<4, 2>(self.cfg.addr.val().get_bits::<2>(4))
            << 2)
            | bit_cast::<4, 2>(self.cfg.addr.val().get_bits::<2>(0));
        self.rq_ctl.write_data.next = self.cfg.data.val().get_bits::<36>(0);
        self.msn_heads.write_enable.next = self.cfg.we.val()
            & (self.cfg.addr.val().get_bits::<3>(6) == 3)
            & self.cfg.addr.val().get_bit(3);
        self.msn_heads.write_address.next =
            (bit_cast::<5, 2>(self.cfg.addr.val().get_bits::<2>(4)) << 3)
                | bit_cast::<5, 3>(self.cfg.addr.val().get_bits::<3>(0));
        self.msn_heads.write_data.next = self.cfg.data.val();
        self.rq_addr.write_enable.next =
            self.cfg.we.val() & self.cfg.addr.val().get_bit(8) & !self.cfg.addr.val().get_bit(0);
        self.rq_addr.write_address.next = self.cfg.addr.val().get_bits::<7>(1);
        self.rq_addr.write_data.next = self.cfg.data.val();
        self.rq_ll.write_enable.next =
            self.cfg.we.val() & self.cfg.addr.val().get_bit(8) & self.cfg.addr.val().get_bit(0);
        self.rq_ll.write_address.next = self.cfg.addr.val().get_bits::<7>(1);
        self.rq_ll.write_data.next = self.cfg.data.val();
    }
}
