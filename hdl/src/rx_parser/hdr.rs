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
        #[doc = "Beats of the frame before this one (saturating): 0 on its first beat."]
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
        msg_r: DFF<Bit>,
        ip: DFF<Bits<128>>,
    }
    consts {
        c_hdr_top: Constant<Bits<16>> = konst(512 - W),
        // A beat's bits at the bottom of `h`, and where header beat `k`
        // goes (slots past the header unused).
        c_slot: Constant<Bits<512>> = Constant::new(bit_cast::<512, W>(Bits::<W>::mask())),
        c_at: [Constant<Bits<16>>; HDR_SLOTS] =
            std::array::from_fn(|k| konst(512usize.saturating_sub(W * (k + 1)))),
    }
}

/// Header beats at the narrowest width (64 bits).
const HDR_SLOTS: usize = 8;

impl<const W: usize> Logic for ParserHdr<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, h, msg_r, ip);
        self.hdr.next = self.h.q.val();
        self.msg.next = self.msg_r.q.val();
        self.src_ip.next = self.ip.q.val();
        // Each header beat written into its own slot (a constant place, so
        // every bit of `h` is a register with an enable, no shifter); a
        // first beat clears the others.
        if self.accept.val() & (self.beat_idx.val() == 0) {
            self.msg_r.d.next = self.msg_in.val();
            self.ip.d.next = self.src_ip_in.val();
            self.h.d.next = bit_cast::<512, W>(self.swapped.val()) << self.c_hdr_top.val();
        } else if self.accept.val() {
            for k in 1..(512 / W) {
                if self.beat_idx.val() == k.to_bits::<16>() {
                    self.h.d.next = (self.h.q.val() & !(self.c_slot.val() << self.c_at[k].val()))
                        | (bit_cast::<512, W>(self.swapped.val()) << self.c_at[k].val());
                }
            }
        }
    }
}
