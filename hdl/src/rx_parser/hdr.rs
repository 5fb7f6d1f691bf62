//! [`ParserHdr`], [`RxParser`](super::RxParser)'s header capture.

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};

native_block! {
    /// The first 64 bytes of the frame in network order (byte 0 at bits
    /// 511..504), captured beat by beat from the byte-swapped beats the
    /// parser accepts, with the frame's opcode class and source IP taken
    /// with its first beat. Outputs from the registers alone (the frame
    /// before's until the next first beat is accepted).
    ParserHdr[W]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "The parser takes the input beat."]
        accept: Signal<In, Bit>,
        #[doc = "It is the frame's first beat."]
        first: Signal<In, Bit>,
        #[doc = "Beats of the frame before this one (saturating)."]
        beat_idx: Signal<In, Bits<16>>,
        #[doc = "The beat, byte-swapped (its first byte in the top lane)."]
        swapped: Signal<In, Bits<W>>,
        #[doc = "The frame has a MSG opcode (with the first beat)."]
        msg_in: Signal<In, Bit>,
        #[doc = "ICRC pseudo-header: source IP (with the first beat)."]
        src_ip_in: Signal<In, Bits<128>>,
        #[doc = "The captured header."]
        hdr: Signal<Out, Bits<512>>,
        #[doc = "The frame has a MSG opcode."]
        msg: Signal<Out, Bit>,
        #[doc = "The frame's source IP."]
        src_ip: Signal<Out, Bits<128>>,
    }
    state {
        h: DFF<Bits<512>>,
        // Where the next header beat goes in `h`.
        shift: DFF<Bits<16>>,
        msg_r: DFF<Bit>,
        ip: DFF<Bits<128>>,
    }
    consts {
        c_width: Constant<Bits<16>> = konst(W),
        c_hdr_beats: Constant<Bits<16>> = konst(512 / W),
        c_hdr_top: Constant<Bits<16>> = konst(512 - W),
    }
}

impl<const W: usize> Logic for ParserHdr<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, h, shift, msg_r, ip);
        self.hdr.next = self.h.q.val();
        self.msg.next = self.msg_r.q.val();
        self.src_ip.next = self.ip.q.val();
        if self.accept.val() & self.first.val() {
            self.msg_r.d.next = self.msg_in.val();
            self.ip.d.next = self.src_ip_in.val();
            self.h.d.next = bit_cast::<512, W>(self.swapped.val()) << self.c_hdr_top.val();
            self.shift.d.next = self.c_hdr_top.val() - self.c_width.val();
        } else if self.accept.val() & (self.beat_idx.val() < self.c_hdr_beats.val()) {
            self.h.d.next =
                self.h.q.val() | (bit_cast::<512, W>(self.swapped.val()) << self.shift.q.val());
            self.shift.d.next = self.shift.q.val() - self.c_width.val();
        }
    }
}
