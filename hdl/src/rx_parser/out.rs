//! [`ParserOut`], [`RxParser`](super::RxParser)'s payload path.

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};

native_block! {
    /// The payload path of [`RxParser`](super::RxParser): each beat the
    /// parser accepts goes to the output register once the stripped
    /// headers are behind it (64 bytes for a MSG opcode, else 32), or,
    /// where 32 bytes are half a beat (`W` = 512, base header only),
    /// realigned by half a beat: out = the upper half of the previous beat
    /// (`hold`) and the lower half of this one, the frame's final half
    /// beat flushed in the next free cycle. Outputs from the registers
    /// alone (the output register drains when `ready`).
    ParserOut[W, B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: output register empty, nothing to flush."]
        rst: Signal<In, Bit>,
        #[doc = "The parser takes the input beat."]
        accept: Signal<In, Bit>,
        #[doc = "It is the frame's first beat."]
        first: Signal<In, Bit>,
        #[doc = "The frame has a MSG opcode (64 header bytes)."]
        msg: Signal<In, Bit>,
        #[doc = "Beats of the frame before this one (saturating)."]
        beat_idx: Signal<In, Bits<16>>,
        #[doc = "Input beat data."]
        tdata: Signal<In, Bits<W>>,
        #[doc = "Input byte enables (packed)."]
        tkeep: Signal<In, Bits<B>>,
        #[doc = "Last beat of the frame."]
        tlast: Signal<In, Bit>,
        #[doc = "The consumer takes the output beat."]
        ready: Signal<In, Bit>,
        #[doc = "Output beat data."]
        m_tdata: Signal<Out, Bits<W>>,
        #[doc = "Output byte enables."]
        m_tkeep: Signal<Out, Bits<B>>,
        #[doc = "Output beat valid."]
        m_tvalid: Signal<Out, Bit>,
        #[doc = "Last output beat of the frame."]
        m_tlast: Signal<Out, Bit>,
    }
    state {
        // Realignment: upper half of the last beat.
        hold: DFF<Bits<W>>,
        hold_keep: DFF<Bits<B>>,
        // `hold` is the frame's final payload beat and is still to be sent.
        flush: DFF<Bit>,
        // Output register.
        out_data: DFF<Bits<W>>,
        out_keep: DFF<Bits<B>>,
        out_valid: DFF<Bit>,
        out_last: DFF<Bit>,
        // Header beats to strip, realign by half a beat (of the frame's class).
        strip_beats: Signal<Local, Bits<16>>,
        realign: Signal<Local, Bit>,
    }
    consts {
        c_half: Constant<Bits<16>> = konst(W / 2),
        c_half_bytes: Constant<Bits<16>> = konst(B / 2),
        c_msg_beats: Constant<Bits<16>> = konst(64 / B),
        c_base_beats: Constant<Bits<16>> = konst(32 / B),
        c_base_realign: Constant<Bit> = Constant::new(32 % B != 0),
    }
}

impl<const W: usize, const B: usize> Logic for ParserOut<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, hold, hold_keep, flush, out_data, out_keep, out_valid, out_last
        );
        self.m_tdata.next = self.out_data.q.val();
        self.m_tkeep.next = self.out_keep.q.val();
        self.m_tvalid.next = self.out_valid.q.val();
        self.m_tlast.next = self.out_last.q.val();
        if self.msg.val() {
            self.strip_beats.next = self.c_msg_beats.val();
            self.realign.next = false;
        } else {
            self.strip_beats.next = self.c_base_beats.val();
            self.realign.next = self.c_base_realign.val();
        }

        if self.ready.val() {
            self.out_valid.d.next = false;
        }
        // A pending final beat goes out first. It is only pending between a
        // frame's end and the next frame's first beat, which emits nothing.
        if self.flush.q.val() & (!self.out_valid.q.val() | self.ready.val()) {
            self.out_data.d.next = self.hold.q.val();
            self.out_keep.d.next = self.hold_keep.q.val();
            self.out_last.d.next = true;
            self.out_valid.d.next = true;
            self.flush.d.next = false;
        }
        if self.accept.val() & self.realign.val() {
            // Strip half a beat: out = upper half of the previous beat
            // followed by the lower half of this one.
            self.hold.d.next = self.tdata.val() >> self.c_half.val();
            self.hold_keep.d.next = self.tkeep.val() >> self.c_half_bytes.val();
            if !self.first.val() {
                self.out_data.d.next = self.hold.q.val() | (self.tdata.val() << self.c_half.val());
                self.out_keep.d.next =
                    self.hold_keep.q.val() | (self.tkeep.val() << self.c_half_bytes.val());
                self.out_last.d.next =
                    self.tlast.val() & !self.tkeep.val().get_bit(self.c_half_bytes.val().index());
                self.out_valid.d.next = true;
            }
            if self.tlast.val() & self.tkeep.val().get_bit(self.c_half_bytes.val().index()) {
                self.flush.d.next = true;
            }
        } else if self.accept.val() & (self.beat_idx.val() >= self.strip_beats.val()) {
            self.out_data.d.next = self.tdata.val();
            self.out_keep.d.next = self.tkeep.val();
            self.out_last.d.next = self.tlast.val();
            self.out_valid.d.next = true;
        }
        if self.rst.val() {
            self.flush.d.next = false;
            self.out_valid.d.next = false;
        }
    }
}
