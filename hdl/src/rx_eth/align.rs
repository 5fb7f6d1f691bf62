//! The read side's realigner and output of [`RxEth`](super::RxEth)
//! ([`RxEthAlign`]).

use rust_hdl::prelude::*;

use super::links::{PsIn, SlotIn};
use crate::helpers::{konst, native_block};

native_block! {
    /// Joins the previous buffer beat from byte `off` = 2 + 4q on with the
    /// current beat's first `off` bytes (the payload starts 2 (mod 4)
    /// bytes in), counts the payload length to trim padding and set
    /// `tlast`, and emits what is left of a frame's last beat in the next
    /// cycle. A frame's pseudo fields are popped from their queue with its
    /// first buffer beat and change on the output with its first payload
    /// beat. Every output is a register; it moves while `adv` is high.
    RxEthAlign [W, B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: nothing pending, the output empty."]
        rst: Signal<In, Bit>,
        #[doc = "The read side advances this cycle (the output register is free or taken)."]
        adv: Signal<In, Bit>,
        #[doc = "The slot and beat at the buffer's output register."]
        s_slot: SlotIn<W>,
        #[doc = "The pseudo-field queue's head."]
        s_ps: PsIn,
        #[doc = "UDP payload beat data, lane 0 first."]
        tdata: Signal<Out, Bits<W>>,
        #[doc = "Payload byte enables (packed)."]
        tkeep: Signal<Out, Bits<B>>,
        #[doc = "Payload beat valid."]
        tvalid: Signal<Out, Bit>,
        #[doc = "Last payload beat."]
        tlast: Signal<Out, Bit>,
        #[doc = "Source IP (IPv4 mapped into IPv6), network order."]
        src_ip: Signal<Out, Bits<128>>,
        #[doc = "Destination IP."]
        dst_ip: Signal<Out, Bits<128>>,
        #[doc = "UDP source port."]
        src_port: Signal<Out, Bits<16>>,
        #[doc = "UDP destination port."]
        dst_port: Signal<Out, Bits<16>>,
        #[doc = "UDP length."]
        udp_len: Signal<Out, Bits<16>>,
        #[doc = "IP ECN field."]
        ecn: Signal<Out, Bits<2>>,
    }
    state {
        // Previous beat, shifts (bits) for it and for the current beat,
        // payload bytes left, a final beat pending, the next beat out is
        // the frame's first, the frame's pseudo fields.
        prev: DFF<Bits<W>>,
        ra: DFF<Bits<16>>,
        la: DFF<Bits<16>>,
        rem: DFF<Bits<16>>,
        pend: DFF<Bit>,
        firsto: DFF<Bit>,
        cur_ps: DFF<Bits<306>>,
        // Output registers.
        o_v: DFF<Bit>,
        o_last: DFF<Bit>,
        o_data: DFF<Bits<W>>,
        o_keep: DFF<Bits<B>>,
        ps_src: DFF<Bits<128>>,
        ps_dst: DFF<Bits<128>>,
        ps_sport: DFF<Bits<16>>,
        ps_dport: DFF<Bits<16>>,
        ps_ulen: DFF<Bits<16>>,
        ps_ecn: DFF<Bits<2>>,
        pnext: Signal<Local, Bit>,
        emit: Signal<Local, Bit>,
        edata: Signal<Local, Bits<W>>,
        ekeep: Signal<Local, Bits<B>>,
    }
    consts {
        c_b: Constant<Bits<16>> = konst(B),
        c_qmask: Constant<Bits<4>> = konst(B / 4 - 1),
        c_one_b: Constant<Bits<B>> = konst(1),
        c_all_b: Constant<Bits<B>> = Constant::new(Bits::<B>::mask()),
    }
}

impl<const W: usize, const B: usize> Logic for RxEthAlign<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, prev, ra, la, rem, pend, firsto, cur_ps, o_v, o_last, o_data, o_keep,
            ps_src, ps_dst, ps_sport, ps_dport, ps_ulen, ps_ecn
        );
        // Realign: the previous beat from byte `off` = 2 + 4q on, then the
        // current beat's first `off` bytes.
        self.pnext.next = self.adv.val() & self.s_slot.v.val() & self.s_slot.first.val();
        self.emit.next = false;
        self.edata.next = (self.prev.q.val() >> 16) >> self.ra.q.val();
        if self.adv.val() {
            self.o_v.d.next = false;
            if self.s_slot.v.val() {
                if self.s_slot.first.val() {
                    // The previous frame's last beat, if still to go.
                    self.emit.next = self.pend.q.val();
                    self.ra.d.next = bit_cast::<16, 4>(self.s_slot.q.val()) << 5;
                    self.la.d.next =
                        bit_cast::<16, 4>(self.c_qmask.val() - self.s_slot.q.val()) << 5;
                    self.rem.d.next = self.s_slot.plen.val();
                    self.pend.d.next = self.s_slot.last.val();
                    self.cur_ps.d.next = self.s_ps.ps.val();
                } else {
                    self.emit.next = true;
                    self.edata.next =
                        self.edata.val() | ((self.s_slot.data.val() << 16) << self.la.q.val());
                    self.rem.d.next = self.rem.q.val() - self.c_b.val();
                    self.pend.d.next = self.s_slot.last.val() & (self.rem.q.val() > self.c_b.val());
                }
                self.prev.d.next = self.s_slot.data.val();
            } else if self.pend.q.val() {
                self.emit.next = true;
                self.pend.d.next = false;
            }
        }
        if self.rem.q.val() >= self.c_b.val() {
            self.ekeep.next = self.c_all_b.val();
        } else {
            self.ekeep.next = (self.c_one_b.val() << self.rem.q.val()) - 1;
        }
        if self.emit.val() {
            self.o_v.d.next = true;
            self.o_data.d.next = self.edata.val();
            self.o_keep.d.next = self.ekeep.val();
            self.o_last.d.next = self.rem.q.val() <= self.c_b.val();
            if self.firsto.q.val() {
                self.ps_src.d.next = self.cur_ps.q.val().get_bits::<128>(0);
                self.ps_dst.d.next = self.cur_ps.q.val().get_bits::<128>(128);
                self.ps_sport.d.next = self.cur_ps.q.val().get_bits::<16>(256);
                self.ps_dport.d.next = self.cur_ps.q.val().get_bits::<16>(272);
                self.ps_ulen.d.next = self.cur_ps.q.val().get_bits::<16>(288);
                self.ps_ecn.d.next = self.cur_ps.q.val().get_bits::<2>(304);
                self.firsto.d.next = false;
            }
        }
        if self.pnext.val() {
            self.firsto.d.next = true;
        }
        self.s_ps.pop.next = self.pnext.val();
        self.tvalid.next = self.o_v.q.val();
        self.tdata.next = self.o_data.q.val();
        self.tkeep.next = self.o_keep.q.val();
        self.tlast.next = self.o_last.q.val();
        self.src_ip.next = self.ps_src.q.val();
        self.dst_ip.next = self.ps_dst.q.val();
        self.src_port.next = self.ps_sport.q.val();
        self.dst_port.next = self.ps_dport.q.val();
        self.udp_len.next = self.ps_ulen.q.val();
        self.ecn.next = self.ps_ecn.q.val();

        if self.rst.val() {
            self.pend.d.next = false;
            self.firsto.d.next = false;
            self.o_v.d.next = false;
        }
    }
}
