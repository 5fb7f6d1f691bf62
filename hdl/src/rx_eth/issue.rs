//! The frame buffer and the read side's issue stage of
//! [`RxEth`](super::RxEth) ([`RxEthIssue`]): records to buffer reads.

use rust_hdl::prelude::*;

use super::FrameRam;
use super::links::{BufIn, FreeOut, HeadIn, SlotOut};
use crate::helpers::{konst, native_block};

native_block! {
    /// Holds the frame buffer ([`FrameRam`], written through `s_buf`) and
    /// takes one record or one payload beat per cycle while `adv` is high:
    /// a dropped frame frees its buffer space at once (`m_free.fr_ptr`),
    /// an accepted one reads only the beats holding payload (its space is
    /// freed with its last beat). The slot issued moves beside the
    /// buffer's RAM register (s1) and output register (s2, `m_slot` with
    /// the beat) as they advance.
    RxEthIssue [W, B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: nothing in flight, the buffer empty."]
        rst: Signal<In, Bit>,
        #[doc = "The read side advances this cycle (the output register is free or taken)."]
        adv: Signal<In, Bit>,
        #[doc = "The control record queue's head."]
        s_head: HeadIn,
        #[doc = "The frame buffer's write port."]
        s_buf: BufIn<W>,
        #[doc = "The buffer space freed, and the pop, for the write side."]
        m_free: FreeOut,
        #[doc = "The slot beside the buffer's output register."]
        m_slot: SlotOut<W>,
    }
    state {
        fbuf: FrameRam<W>,
        // Inside an accepted frame: its next and last payload beat
        // addresses, its end; the free pointer.
        busy: DFF<Bit>,
        rd_addr: DFF<Bits<16>>,
        cur_last: DFF<Bits<16>>,
        cur_end: DFF<Bits<16>>,
        fr_ptr: DFF<Bits<16>>,
        s1_v: DFF<Bit>,
        s1_first: DFF<Bit>,
        s1_last: DFF<Bit>,
        s1_q: DFF<Bits<4>>,
        s1_plen: DFF<Bits<16>>,
        s2_v: DFF<Bit>,
        s2_first: DFF<Bit>,
        s2_last: DFF<Bit>,
        s2_q: DFF<Bits<4>>,
        s2_plen: DFF<Bits<16>>,
        hrec: Signal<Local, Bits<70>>,
        pop: Signal<Local, Bit>,
        slot_v: Signal<Local, Bit>,
        slot_first: Signal<Local, Bit>,
        slot_last: Signal<Local, Bit>,
        slot_addr: Signal<Local, Bits<16>>,
    }
    consts {
        c_qmask: Constant<Bits<4>> = konst(B / 4 - 1),
    }
}

impl<const W: usize, const B: usize> Logic for RxEthIssue<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, busy, rd_addr, cur_last, cur_end, fr_ptr, s1_v, s1_first, s1_last, s1_q,
            s1_plen, s2_v, s2_first, s2_last, s2_q, s2_plen
        );
        self.hrec.next = self.s_head.rec.val();
        self.pop.next = false;
        self.slot_v.next = false;
        self.slot_first.next = false;
        self.slot_last.next = false;
        self.slot_addr.next = self.rd_addr.q.val();
        if self.adv.val() {
            if self.busy.q.val() {
                self.slot_v.next = true;
                self.slot_last.next = self.rd_addr.q.val() == self.cur_last.q.val();
                self.rd_addr.d.next = self.rd_addr.q.val() + 1;
                if self.slot_last.val() {
                    self.busy.d.next = false;
                    self.fr_ptr.d.next = self.cur_end.q.val();
                }
            } else if self.s_head.valid.val() {
                self.pop.next = true;
                if self.hrec.val().get_bit(0) {
                    self.slot_v.next = true;
                    self.slot_first.next = true;
                    self.slot_last.next = self.hrec.val().get_bit(1);
                    self.slot_addr.next = self.hrec.val().get_bits::<16>(2);
                    if self.hrec.val().get_bit(1) {
                        self.fr_ptr.d.next = self.hrec.val().get_bits::<16>(34);
                    } else {
                        self.busy.d.next = true;
                        self.rd_addr.d.next = self.hrec.val().get_bits::<16>(2) + 1;
                        self.cur_last.d.next = self.hrec.val().get_bits::<16>(18);
                        self.cur_end.d.next = self.hrec.val().get_bits::<16>(34);
                    }
                } else {
                    // Dropped: its buffer space is free at once.
                    self.fr_ptr.d.next = self.hrec.val().get_bits::<16>(34);
                }
            }
            self.s1_v.d.next = self.slot_v.val();
            self.s1_first.d.next = self.slot_first.val();
            self.s1_last.d.next = self.slot_last.val();
            self.s1_q.d.next = self.hrec.val().get_bits::<4>(50) & self.c_qmask.val();
            self.s1_plen.d.next = self.hrec.val().get_bits::<16>(54);
            self.s2_v.d.next = self.s1_v.q.val();
            self.s2_first.d.next = self.s1_first.q.val();
            self.s2_last.d.next = self.s1_last.q.val();
            self.s2_q.d.next = self.s1_q.q.val();
            self.s2_plen.d.next = self.s1_plen.q.val();
        }
        self.fbuf.clock.next = self.clock.val();
        self.fbuf.write_enable.next = self.s_buf.we.val();
        self.fbuf.write_address.next = self.s_buf.addr.val();
        self.fbuf.write_data.next = self.s_buf.data.val();
        self.fbuf.read_enable.next = self.adv.val();
        self.fbuf.read_address.next = self.slot_addr.val();
        self.m_slot.data.next = self.fbuf.read_data.val();
        self.s_head.pop.next = self.pop.val();
        self.m_free.pop.next = self.pop.val();
        self.m_free.fr_ptr.next = self.fr_ptr.q.val();
        self.m_slot.v.next = self.s2_v.q.val();
        self.m_slot.first.next = self.s2_first.q.val();
        self.m_slot.last.next = self.s2_last.q.val();
        self.m_slot.q.next = self.s2_q.q.val();
        self.m_slot.plen.next = self.s2_plen.q.val();

        if self.rst.val() {
            self.fr_ptr.d.next = 0.into();
            self.busy.d.next = false;
            self.s1_v.d.next = false;
            self.s2_v.d.next = false;
        }
    }
}
