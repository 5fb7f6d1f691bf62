//! [`BurstSplit`]: one DMA request `{addr, len}` as AXI4 INCR bursts.

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};

/// Bytes a burst may span at most, and the boundary none crosses: the
/// AXI 4 KiB rule, or 64 beats if that is less (`B = 8`: 512 bytes).
pub const fn burst_bytes(b: usize) -> usize {
    if 64 * b < 4096 { 64 * b } else { 4096 }
}

native_block! {
    /// Splits a request of `len` bytes at `addr` into AXI4 INCR bursts of
    /// `B`-byte beats: the first starts at `addr` rounded down to a beat,
    /// each ends at the next `min(4096, 64·B)`-byte boundary or at the beat that
    /// holds the request's last byte, so no burst crosses 4 KiB and none
    /// is longer than 64 beats. A request is taken with `load` while
    /// `busy` is low; its bursts are offered one after the other
    /// (`valid`, `baddr`, `blen` = beats − 1, AXI's `AxLEN`), each until
    /// `ready`.
    BurstSplit[B]
    check {
        B.is_power_of_two() && (8..=64).contains(&B),
        "BurstSplit<{B}>: 8 to 64 byte beats, a power of two"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: idle."]
        rst: Signal<In, Bit>,
        #[doc = "Take a request (only while `busy` is low)."]
        load: Signal<In, Bit>,
        #[doc = "The request's first byte address."]
        addr: Signal<In, Bits<64>>,
        #[doc = "The request's bytes (at least 1)."]
        len: Signal<In, Bits<16>>,
        #[doc = "A request's bursts are being offered."]
        busy: Signal<Out, Bit>,
        #[doc = "A burst is offered."]
        valid: Signal<Out, Bit>,
        #[doc = "The burst is taken."]
        ready: Signal<In, Bit>,
        #[doc = "The burst's address (beat-aligned)."]
        baddr: Signal<Out, Bits<64>>,
        #[doc = "The burst's beats − 1."]
        blen: Signal<Out, Bits<8>>,
    }
    state {
        act: DFF<Bit>,
        // The next burst's address and the request's end (exclusive).
        cur: DFF<Bits<64>>,
        stop: DFF<Bits<64>>,
        // Temporaries: bytes from `cur` to the end and to the boundary,
        // this burst's beats and beats − 1, it is the request's last.
        span: Signal<Local, Bits<32>>,
        room: Signal<Local, Bits<32>>,
        beats: Signal<Local, Bits<32>>,
        bm1: Signal<Local, Bits<32>>,
        last: Signal<Local, Bit>,
    }
    consts {
        k_align: Constant<Bits<64>> = konst(!(B - 1)),
        k_bm1: Constant<Bits<32>> = konst(B - 1),
        k_s: Constant<Bits<32>> = konst(burst_bytes(B)),
        k_sm1: Constant<Bits<32>> = konst(burst_bytes(B) - 1),
        k_lg: Constant<Bits<32>> = konst(B.trailing_zeros() as usize),
    }
}

impl<const B: usize> Logic for BurstSplit<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, act, cur, stop);
        self.span.next = self.stop.q.val().get_bits::<32>(0) - self.cur.q.val().get_bits::<32>(0);
        self.room.next = self.k_s.val() - (self.cur.q.val().get_bits::<32>(0) & self.k_sm1.val());
        self.last.next = self.span.val() <= self.room.val();
        self.beats.next = self.room.val() >> self.k_lg.val();
        if self.last.val() {
            self.beats.next = (self.span.val() + self.k_bm1.val()) >> self.k_lg.val();
        }
        self.busy.next = self.act.q.val();
        self.valid.next = self.act.q.val();
        self.baddr.next = self.cur.q.val();
        self.bm1.next = self.beats.val() - 1;
        self.blen.next = self.bm1.val().get_bits::<8>(0);
        if self.act.q.val() & self.ready.val() {
            self.cur.d.next =
                self.cur.q.val() + (bit_cast::<64, 32>(self.beats.val()) << self.k_lg.val());
            if self.last.val() {
                self.act.d.next = false;
            }
        }
        if self.load.val() {
            self.act.d.next = true;
            self.cur.d.next = self.addr.val() & self.k_align.val();
            self.stop.d.next = self.addr.val() + bit_cast::<64, 16>(self.len.val());
        }
        if self.rst.val() {
            self.act.d.next = false;
        }
    }
}
