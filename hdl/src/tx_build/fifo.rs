//! The descriptor side: the FIFO of frames to build ([`TxFifo`]).

use rust_hdl::prelude::*;

use super::fifo_ptrs::TxFifoPtrs;
use super::links::{FrameOut, HeadOut, RegsIn};
use super::side::TxSide;
use super::{MR_BITS, REV_BITS, SIDE_BITS};
use crate::bus::{DescIn, ReadReqOut};
use crate::helpers::{BlockRam, LutRam, SWAPS_512, konst, low_halves, native_block};

native_block! {
    /// The descriptor side of [`TxBuild`](super::TxBuild) for `B`-lane
    /// beats: a 4-entry FIFO ([`LutRam`]s and, for the MetaRoCE headers, a
    /// [`BlockRam`]; its pointers and ready bits in [`TxFifoPtrs`]) of
    /// accepted descriptors. An
    /// entry holds the MetaRoCE headers (lane order), the payload fetch
    /// request, and the computed part that [`TxSide`] adds two cycles
    /// after the accept; it is ready for the generator (`head_ok`) once
    /// that part is written and its fetch request has left. Fetch requests
    /// leave from the FIFO ahead of the frames (`m_rd`; a descriptor with
    /// no payload makes none). `s_desc.ready` is a register: room in the
    /// FIFO after this cycle's accept and take, and no configuration write
    /// in this cycle or settling (`busy`).
    TxFifo [B]
    check { (8..=64).contains(&B), "TxFifo<{B}>: B must be 8..=64 lanes" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the FIFO."]
        rst: Signal<In, Bit>,
        #[doc = "Send descriptors."]
        s_desc: DescIn,
        #[doc = "Payload fetch requests."]
        m_rd: ReadReqOut,
        #[doc = "The entropy table (read address: the accepted descriptor's path) and the configuration."]
        regs: RegsIn,
        #[doc = "The generator takes the head entry this cycle."]
        take: Signal<In, Bit>,
        #[doc = "The head entry is ready to take."]
        head_ok: Signal<Out, Bit>,
        #[doc = "The head entry's lengths and CRC seed, for the generator."]
        m_frame: FrameOut,
        #[doc = "The head entry's fields for the headers."]
        head: HeadOut,
    }
    state {
        side: TxSide<B>,
        ptrs: TxFifoPtrs,
        // The headers: read at the next head (registered), without the
        // bypass: an entry is written at its accept, at least two edges
        // before it is ready (`head_ok`), and the header is taken only then.
        f_mr: BlockRam<MR_BITS, 2> = BlockRam::with_words(4).without_bypass(),
        f_fetch: LutRam<80, 2>,
        f_side: LutRam<SIDE_BITS, 2>,
        // Combinational temporaries.
        accept: Signal<Local, Bit>,
        be: Signal<Local, Bits<REV_BITS>>,
        mr: Signal<Local, Bits<MR_BITS>>,
    }
    consts {
        // The swap steps of the byte reversal: the halves they move, by
        // how much.
        c_lo: [Constant<Bits<REV_BITS>>; 6] = SWAPS_512.map(low_halves),
        c_sh: [Constant<Bits<16>>; 6] = SWAPS_512.map(konst),
    }
}

impl<const B: usize> Logic for TxFifo<B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.side.clock.next = self.clock.val();
        self.side.rst.next = self.rst.val();
        self.ptrs.clock.next = self.clock.val();
        self.ptrs.rst.next = self.rst.val();
        self.ptrs.busy.next = self.regs.busy.val();
        self.ptrs.take.next = self.take.val();
        self.f_mr.clock.next = self.clock.val();
        self.f_fetch.clock.next = self.clock.val();
        self.f_side.clock.next = self.clock.val();

        // ---- Descriptor in. ----
        self.s_desc.ready.next = self.ptrs.ready.val();
        self.accept.next = self.s_desc.valid.val() & self.ptrs.ready.val();
        self.ptrs.accept.next = self.accept.val();
        self.be.next = 0.into();
        self.mr.next = 0.into();
        if self.accept.val() {
            // The headers after the version byte, network order (first
            // byte in the top bits, a zero byte below), then in lane order
            // (six swap steps reverse the 64 bytes).
            self.be.next = (bit_cast::<REV_BITS, 8>(self.s_desc.opcode.val()) << 504)
                | (bit_cast::<REV_BITS, 16>(self.s_desc.flags.val()) << 488)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.dst_qpn.val()) << 456)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.src_qpn.val()) << 424)
                | (bit_cast::<REV_BITS, 16>(self.s_desc.stream.val()) << 408)
                | (bit_cast::<REV_BITS, 16>(self.s_desc.path.val()) << 392)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.conn_psn.val()) << 360)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.path_psn.val()) << 328)
                | (bit_cast::<REV_BITS, 64>(self.s_desc.timestamp.val()) << 264)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.msn.val()) << 232)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.recv_idx.val()) << 200)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.msg_len.val()) << 168)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.offset.val()) << 136)
                | (bit_cast::<REV_BITS, 64>(self.s_desc.remote_va.val()) << 72)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.rkey.val()) << 40)
                | (bit_cast::<REV_BITS, 32>(self.s_desc.imm.val()) << 8);
            for k in 0..6 {
                self.be.next = ((self.be.val() & self.c_lo[k].val()) << self.c_sh[k].val())
                    | ((self.be.val() >> self.c_sh[k].val()) & self.c_lo[k].val());
            }
            self.mr.next = self.be.val().get_bits::<MR_BITS>(0);
        }
        self.f_mr.write_enable.next = self.accept.val();
        self.f_mr.write_address.next = self.ptrs.wr.val();
        self.f_mr.write_data.next = self.mr.val();
        self.f_fetch.write_enable.next = self.accept.val();
        self.f_fetch.write_address.next = self.ptrs.wr.val();
        self.f_fetch.write_data.next = bit_cast::<80, 64>(self.s_desc.addr.val())
            | (bit_cast::<80, 16>(self.s_desc.len.val()) << 64);
        self.regs.ent_addr.next = self.s_desc.path.val().get_bits::<6>(0);

        // ---- The entry's computed part, two cycles later. ----
        self.side.in_v.next = self.accept.val();
        self.side.in_idx.next = self.ptrs.wr.val();
        self.side.in_plen.next = self.s_desc.len.val();
        self.side.in_msg.next =
            (self.s_desc.opcode.val() >= 0x01) & (self.s_desc.opcode.val() <= 0x06);
        self.side.in_ecn.next = self.s_desc.ecn.val();
        self.side.ent_data.next = self.regs.ent_data.val();
        self.side.ipv6.next = self.regs.ipv6.val();
        self.side.cks.next = self.regs.cks.val();
        self.side.cr_first.next = self.regs.cr_first.val();
        self.f_side.write_enable.next = self.side.out_v.val();
        self.f_side.write_address.next = self.side.out_idx.val();
        self.f_side.write_data.next = self.side.out_side.val();
        self.ptrs.side_v.next = self.side.out_v.val();
        self.ptrs.side_idx.next = self.side.out_idx.val();

        // ---- Fetch requests, from the FIFO ahead of the frame. ----
        self.f_fetch.read_address.next = self.ptrs.fe.val();
        // The outputs read registers and the FIFO only: Verilator splits
        // them off this block, so no loop appears through a DMA engine
        // whose `m_rd_ready` depends on `m_rd_valid`.
        self.m_rd.addr.next = self.f_fetch.read_data.val().get_bits::<64>(0);
        self.m_rd.len.next = self.f_fetch.read_data.val().get_bits::<16>(64);
        self.m_rd.valid.next =
            self.ptrs.fe_pending.val() & self.f_fetch.read_data.val().get_bits::<16>(64).any();
        self.ptrs.fetched.next = self.ptrs.fe_pending.val()
            & (!self.f_fetch.read_data.val().get_bits::<16>(64).any() | self.m_rd.ready.val());

        // ---- The head entry, for the generator. ----
        self.f_mr.read_address.next = self.ptrs.rd_next.val();
        self.f_side.read_address.next = self.ptrs.rd.val();
        self.m_frame.plen.next = self.f_side.read_data.val().get_bits::<16>(0);
        self.head.sport.next = self.f_side.read_data.val().get_bits::<16>(16);
        self.head.ulen.next = self.f_side.read_data.val().get_bits::<16>(32);
        self.head.l3len.next = self.f_side.read_data.val().get_bits::<16>(48);
        self.head.cks.next = self.f_side.read_data.val().get_bits::<16>(64);
        self.m_frame.icrc.next = self.f_side.read_data.val().get_bits::<16>(80);
        self.m_frame.flen.next = self.f_side.read_data.val().get_bits::<16>(96);
        self.m_frame.zeros.next = self.f_side.read_data.val().get_bits::<8>(112);
        self.m_frame.seed.next = self.f_side.read_data.val().get_bits::<32>(120);
        self.head.ecn.next = self.f_side.read_data.val().get_bit(152);
        self.head.msg.next = self.f_side.read_data.val().get_bit(153);
        self.head.mr.next = self.f_mr.read_data.val();
        self.head_ok.next = self.ptrs.head_ok.val();
    }
}
