//! One output beat of the generator ([`TxBeat`]).

use rust_hdl::prelude::*;

use super::HLEN;
use super::links::{BeatOut, GenIn};
use crate::helpers::{konst, native_block};

native_block! {
    /// The beat [`TxBuild`](super::TxBuild)'s generator makes this cycle,
    /// combinational, at `W`-bit beats (`B = W / 8` lanes): header lanes
    /// (the low `W` bits of the header shift register), then payload lanes
    /// realigned by the header length mod `B` (the previous payload beat's
    /// top lanes, then this one's bottom lanes: one constant shift per
    /// header size), then zeros; lane masks from the down-counters,
    /// compared lane by lane. The data is 0 while `s_gen.en` is low (the
    /// masks are not: they are read only with `en`).
    TxBeat [W, B]
    check { W == 8 * B, "TxBeat<{W}, {B}>: W = 8 * B" }
    ports {
        #[doc = "What the beat is made of (the generator's state)."]
        s_gen: GenIn<W>,
        #[doc = "The beat, its `tkeep` (lanes before the frame's end) and the lanes the ICRC covers (in the datagram, before the ICRC)."]
        m_beat: BeatOut<W, B>,
    }
    state {
        hm: Signal<Local, Bits<B>>,
        em: Signal<Local, Bits<B>>,
        dm: Signal<Local, Bits<B>>,
        km: Signal<Local, Bits<B>>,
        pay: Signal<Local, Bits<W>>,
        acc: Signal<Local, Bits<W>>,
        lane: Signal<Local, Bits<W>>,
    }
    consts {
        c_ff: Constant<Bits<W>> = konst(0xFF),
        c_psr: [Constant<Bits<16>>; 4] = HLEN.map(|h| konst(W - 8 * (h % B))),
        c_psl: [Constant<Bits<16>>; 4] = HLEN.map(|h| konst(8 * (h % B))),
    }
}

impl<const W: usize, const B: usize> Logic for TxBeat<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.hm.next = 0.into();
        self.em.next = 0.into();
        self.dm.next = 0.into();
        self.km.next = 0.into();
        self.pay.next = 0.into();
        self.acc.next = 0.into();
        self.lane.next = 0.into();
        // The lane masks from the counters (registers) alone, outside `en`
        // (the generator's `go`, which reads `tready`): a simulator decodes
        // them once per cycle, not again in the pass for the inputs.
        for i in 0..B {
            self.hm.next = self
                .hm
                .val()
                .replace_bit(i, self.s_gen.hrem.val() > i.to_bits::<8>());
            self.em.next = self
                .em
                .val()
                .replace_bit(i, self.s_gen.erem.val() > i.to_bits::<16>());
            self.dm.next = self
                .dm
                .val()
                .replace_bit(i, self.s_gen.drem.val() > i.to_bits::<8>());
            self.km.next = self
                .km
                .val()
                .replace_bit(i, self.s_gen.trem.val() > i.to_bits::<16>());
        }
        if self.s_gen.en.val() {
            // Payload byte j sits at frame offset hlen + j.
            for j in 0..4 {
                if self.s_gen.kind.val() == j.to_bits::<2>() {
                    self.pay.next = (self.s_gen.prev.val() >> self.c_psr[j].val())
                        | (self.s_gen.pay_in.val() << self.c_psl[j].val());
                }
            }
            for i in 0..B {
                self.lane.next = self.c_ff.val() << (8 * i).to_bits::<16>();
                if self.hm.val().get_bit(i) {
                    self.acc.next = self.acc.val() | (self.s_gen.hdr.val() & self.lane.val());
                } else if self.em.val().get_bit(i) {
                    self.acc.next = self.acc.val() | (self.pay.val() & self.lane.val());
                }
            }
        }
        self.m_beat.data.next = self.acc.val();
        self.m_beat.keep.next = self.km.val();
        self.m_beat.cov.next = self.em.val() & !self.dm.val();
    }
}
