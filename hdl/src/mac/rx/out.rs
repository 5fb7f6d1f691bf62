//! [`MacRx`](super::MacRx)'s stream side ([`MacRxOut`]): committed frames
//! out of the ring, one byte per clock.

use rust_hdl::prelude::*;

use crate::helpers::native_block;

native_block! {
    /// Reads the ring up to the end of the committed frames (`committed`)
    /// and offers each byte on `m_axis_*` (bit 8 of a ring byte is its
    /// frame's `tlast`). The outputs are registers (an output register and
    /// a skid register), and bytes still leave one per clock.
    MacRxOut []
    ports {
        #[doc = "The GMII receive clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: nothing read, the outputs empty."]
        rst: Signal<In, Bit>,
        #[doc = "The end of the committed frames."]
        committed: Signal<In, Bits<13>>,
        #[doc = "The next ring address to read (a register)."]
        read_ptr: Signal<Out, Bits<13>>,
        #[doc = "Ring read address."]
        ring_addr: Signal<Out, Bits<12>>,
        #[doc = "Ring read data, the clock after its address."]
        ring_data: Signal<In, Bits<9>>,
        #[doc = "Frame byte."]
        m_axis_tdata: Signal<Out, Bits<8>>,
        #[doc = "A byte is offered."]
        m_axis_tvalid: Signal<Out, Bit>,
        #[doc = "It is the frame's last."]
        m_axis_tlast: Signal<Out, Bit>,
        #[doc = "The byte is taken this clock."]
        m_axis_tready: Signal<In, Bit>,
    }
    state {
        r_ptr: DFF<Bits<13>>,
        r_issued: DFF<Bit>,
        o_valid: DFF<Bit>,
        o_data: DFF<Bits<9>>,
        s_valid: DFF<Bit>,
        s_data: DFF<Bits<9>>,
        take: Signal<Local, Bit>,
        held: Signal<Local, Bits<2>>,
    }
    consts {}
}

impl Logic for MacRxOut {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_ptr, r_issued, o_valid, o_data, s_valid, s_data
        );
        self.read_ptr.next = self.r_ptr.q.val();
        // A read issued in one clock (`r_ptr` then moves on) arrives from
        // the RAM in the next (`r_issued`) and goes to the output register,
        // or to the skid register while the output holds a byte not taken.
        // A read is issued while the output, the skid and the read in
        // flight leave a place for it, so the outputs are registers and
        // bytes still leave one per clock.
        self.m_axis_tvalid.next = self.o_valid.q.val();
        self.m_axis_tdata.next = self.o_data.q.val().get_bits::<8>(0);
        self.m_axis_tlast.next = self.o_data.q.val().get_bit(8);
        self.take.next = self.o_valid.q.val() & self.m_axis_tready.val();
        self.ring_addr.next = bit_cast::<12, 13>(self.r_ptr.q.val());
        self.held.next = 0.into();
        if self.o_valid.q.val() {
            self.held.next = self.held.val() + 1;
        }
        if self.s_valid.q.val() {
            self.held.next = self.held.val() + 1;
        }
        if self.r_issued.q.val() {
            self.held.next = self.held.val() + 1;
        }
        if self.take.val() {
            self.held.next = self.held.val() - 1;
        }
        self.r_issued.d.next = false;
        if (self.r_ptr.q.val() != self.committed.val()) & (self.held.val() < 2) {
            self.r_issued.d.next = true;
            self.r_ptr.d.next = self.r_ptr.q.val() + 1;
        }
        if self.take.val() | !self.o_valid.q.val() {
            // The output takes the skid's byte, else the RAM's.
            if self.s_valid.q.val() {
                self.o_valid.d.next = true;
                self.o_data.d.next = self.s_data.q.val();
                self.s_valid.d.next = self.r_issued.q.val();
                self.s_data.d.next = self.ring_data.val();
            } else {
                self.o_valid.d.next = self.r_issued.q.val();
                self.o_data.d.next = self.ring_data.val();
            }
        } else if self.r_issued.q.val() {
            self.s_valid.d.next = true;
            self.s_data.d.next = self.ring_data.val();
        }

        if self.rst.val() {
            self.r_ptr.d.next = 0.into();
            self.r_issued.d.next = false;
            self.o_valid.d.next = false;
            self.s_valid.d.next = false;
        }
    }
}
