//! [`MgmtHeader`]: a management request's header and its judgement.

use rust_hdl::prelude::*;

use super::proto::*;
use crate::helpers::{konst, native_block};

native_block! {
    /// The header after the sync byte (op, address, length), shifted in a
    /// byte at a time (`shift`), its fields, and whether it is refused: a
    /// register op must be four bytes, aligned, inside BAR0 (a read may also
    /// name one of the engine's counters); a memory op 1 to
    /// [`MAX_BURST`] bytes inside the `2^M` bytes of memory; any other op is
    /// unknown. The outputs follow the register only.
    MgmtHeader [M]
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Take `din` as the header's next byte.
        shift: Signal<In, Bit>,
        /// A received byte.
        din: Signal<In, Bits<8>>,
        /// Op.
        op: Signal<Out, Bits<8>>,
        /// Address.
        addr: Signal<Out, Bits<32>>,
        /// Length.
        len: Signal<Out, Bits<16>>,
        /// The op writes: data bytes follow the header.
        is_wr: Signal<Out, Bit>,
        /// The header is refused.
        bad: Signal<Out, Bit>,
        /// Why: [`BAD_ARG`] or [`BAD_OP`].
        why: Signal<Out, Bits<8>>,
    }
    state {
        // Op in bits 7..0, address in 39..8, length in 55..40 (shifted in
        // from the top).
        hdr: DFF<Bits<56>>,
        // Temporaries: the fields; the op is a register op, a write; the
        // range ends inside the memory.
        o: Signal<Local, Bits<8>>,
        a: Signal<Local, Bits<32>>,
        l: Signal<Local, Bits<16>>,
        is_reg: Signal<Local, Bit>,
        w: Signal<Local, Bit>,
        fits: Signal<Local, Bit>,
    }
    consts {
        k_reg_read: Constant<Bits<8>> = konst(REG_READ.into()),
        k_reg_write: Constant<Bits<8>> = konst(REG_WRITE.into()),
        k_mem_read: Constant<Bits<8>> = konst(MEM_READ.into()),
        k_mem_write: Constant<Bits<8>> = konst(MEM_WRITE.into()),
        k_bad_op: Constant<Bits<8>> = konst(BAD_OP.into()),
        k_bad_arg: Constant<Bits<8>> = konst(BAD_ARG.into()),
        k_max: Constant<Bits<16>> = konst(MAX_BURST),
        k_mem_bytes: Constant<Bits<33>> = Constant::new(bits::<33>(1u64 << M)),
        k_cnt_junk: Constant<Bits<32>> = konst(CNT_JUNK as usize),
        k_cnt_bad: Constant<Bits<32>> = konst(CNT_BAD as usize),
        k_cnt_timeout: Constant<Bits<32>> = konst(CNT_TIMEOUT as usize),
    }
}

impl<const M: usize> Logic for MgmtHeader<M> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hdr);
        if self.shift.val() {
            self.hdr.d.next = (self.hdr.q.val() >> 8) | (bit_cast::<56, 8>(self.din.val()) << 48);
        }
        self.o.next = self.hdr.q.val().get_bits::<8>(0);
        self.a.next = self.hdr.q.val().get_bits::<32>(8);
        self.l.next = self.hdr.q.val().get_bits::<16>(40);
        self.op.next = self.o.val();
        self.addr.next = self.a.val();
        self.len.next = self.l.val();
        self.is_reg.next =
            (self.o.val() == self.k_reg_read.val()) | (self.o.val() == self.k_reg_write.val());
        self.w.next =
            (self.o.val() == self.k_reg_write.val()) | (self.o.val() == self.k_mem_write.val());
        self.fits.next = (bit_cast::<33, 32>(self.a.val()) + bit_cast::<33, 16>(self.l.val()))
            <= self.k_mem_bytes.val();
        self.is_wr.next = self.w.val();
        self.bad.next = false;
        self.why.next = self.k_bad_arg.val();
        if self.is_reg.val() {
            // Four bytes, aligned, inside BAR0 (or, for a read, one of the
            // engine's counters).
            self.bad.next = (self.l.val() != 4)
                | self.a.val().get_bits::<2>(0).any()
                | (self.a.val().get_bits::<16>(16).any()
                    & (self.w.val()
                        | ((self.a.val() != self.k_cnt_junk.val())
                            & (self.a.val() != self.k_cnt_bad.val())
                            & (self.a.val() != self.k_cnt_timeout.val()))));
        } else if (self.o.val() == self.k_mem_read.val()) | self.w.val() {
            self.bad.next =
                (self.l.val() == 0) | (self.l.val() > self.k_max.val()) | !self.fits.val();
        } else {
            self.bad.next = true;
            self.why.next = self.k_bad_op.val();
        }
    }
}
