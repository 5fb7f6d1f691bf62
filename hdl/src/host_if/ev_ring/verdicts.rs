//! [`EvVerdicts`], [`EvRing`]'s verdict FIFO (its RAM; the pointers are
//! [`EvSeq`]'s).

use rust_hdl::prelude::*;

use super::*;

native_block! {
    /// The verdict FIFO's 64 entries (a [`BlockRam`]): each verdict event
    /// (`NicCore::m_ev_*`) is written, its fields packed as words 0..5 and
    /// bits 36..0 of word 6 of its ring entry (`docs/hardware.md` §18), at
    /// `wr` unless the FIFO is full; the entry at `rd` is read (registered,
    /// without a same-edge bypass: the writer takes the head only when
    /// the FIFO held it in the cycle before, so never in the cycle after
    /// the push that filled it while empty, the only same-address write
    /// and read).
    EvVerdicts[]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "The core's verdict events (`NicCore::m_ev`)."]
        ev: VerdictIn,
        #[doc = "The FIFO is full: the event is dropped (`EvSeq` counts it lost)."]
        full: Signal<In, Bit>,
        #[doc = "The write address."]
        wr: Signal<In, Bits<6>>,
        #[doc = "The read address."]
        rd: Signal<In, Bits<6>>,
        #[doc = "The entry read (the FIFO's head)."]
        head: Signal<Out, Bits<EVF_BITS>>,
    }
    state {
        evf: BlockRam<EVF_BITS, 6> = BlockRam::with_words(DEPTH).without_bypass(),
    }
    consts {}
}

impl Logic for EvVerdicts {
    #[hdl_gen]
    fn update(&mut self) {
        self.evf.clock.next = self.clock.val();
        self.evf.write_data.next = bit_cast::<EVF_BITS, 32>(self.ev.dst_qpn.val())
            | (bit_cast::<EVF_BITS, 8>(self.ev.opcode.val()) << 32)
            | (bit_cast::<EVF_BITS, 8>(self.ev.version.val()) << 40)
            | (bit_cast::<EVF_BITS, 16>(self.ev.flags.val()) << 48)
            | (bit_cast::<EVF_BITS, 32>(self.ev.path_psn.val()) << 64)
            | (bit_cast::<EVF_BITS, 16>(self.ev.path.val()) << 96)
            | (bit_cast::<EVF_BITS, 16>(self.ev.stream.val()) << 112)
            | (bit_cast::<EVF_BITS, 64>(self.ev.timestamp.val()) << 128)
            | (bit_cast::<EVF_BITS, 32>(self.ev.msn.val()) << 192)
            | (bit_cast::<EVF_BITS, 32>(self.ev.recv_idx.val()) << 224)
            | (bit_cast::<EVF_BITS, 32>(self.ev.imm.val()) << 256)
            | (bit_cast::<EVF_BITS, 32>(self.ev.conn_psn.val()) << 288)
            | (bit_cast::<EVF_BITS, 32>(self.ev.offset.val()) << 320)
            | (bit_cast::<EVF_BITS, 32>(self.ev.msg_len.val()) << 352)
            | (bit_cast::<EVF_BITS, 16>(self.ev.len.val()) << 384)
            | (bit_cast::<EVF_BITS, 16>(self.ev.src_port.val()) << 400)
            | (bit_cast::<EVF_BITS, 5>(self.ev.code.val()) << 416);
        self.evf.write_enable.next = self.ev.valid.val() & !self.full.val();
        self.evf.write_address.next = self.wr.val();
        self.evf.read_address.next = self.rd.val();
        self.head.next = self.evf.read_data.val();
    }
}
