//! The record queues of [`RxEth`](super::RxEth) ([`RxEthQueue`]), verdict
//! stage V7.
//!
//! Control record layout (70 bits): accepted [0], one payload beat [1],
//! buffer addresses of the first [2..18) and last [18..34) payload beat
//! and of the frame's end [34..50), realignment shift code [50..54),
//! payload bytes [54..70).

use rust_hdl::prelude::*;

use super::QUEUE_BITS;
use super::links::{HeadOut, PsOut, RecordIn};
use crate::helpers::{BlockRam, native_block};

native_block! {
    /// V7 (t + 8): each frame's control record goes into a 32-entry queue,
    /// an accepted frame's pseudo fields (306 bits) into a second one
    /// (both [`BlockRam`]s without the bypass: 2 + 9 `DP16KD`s, where
    /// yosys would put 32-word memories in 188 `DPR16X4`s). A queue's head
    /// is on its read port every cycle: a pop presents the next address in
    /// its own cycle, and a record is readable the cycle after its write
    /// (`c_wrd`; the pseudo fields are popped later still).
    RxEthQueue []
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: both queues empty."]
        rst: Signal<In, Bit>,
        #[doc = "V6's records."]
        s_rec: RecordIn,
        #[doc = "The control record queue's head (popped by the issue stage)."]
        m_head: HeadOut,
        #[doc = "The pseudo-field queue's head (popped by the realigner)."]
        m_ps: PsOut,
    }
    state {
        cq: BlockRam<70, QUEUE_BITS> = BlockRam::with_words(1 << QUEUE_BITS).without_bypass(),
        pq: BlockRam<306, QUEUE_BITS> = BlockRam::with_words(1 << QUEUE_BITS).without_bypass(),
        // Pointers (6 bits for 32 entries); `c_wrd` is `c_wr` a cycle late.
        c_wr: DFF<Bits<6>>,
        c_wrd: DFF<Bits<6>>,
        c_rd: DFF<Bits<6>>,
        p_wr: DFF<Bits<6>>,
        p_rd: DFF<Bits<6>>,
        crec: Signal<Local, Bits<70>>,
    }
    consts {}
}

impl Logic for RxEthQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, c_wr, c_wrd, c_rd, p_wr, p_rd);
        self.cq.clock.next = self.clock.val();
        self.pq.clock.next = self.clock.val();
        // ---- V7: queue the records. ----
        self.crec.next = (bit_cast::<70, 16>(self.s_rec.first.val()) << 2)
            | (bit_cast::<70, 16>(self.s_rec.last.val()) << 18)
            | (bit_cast::<70, 16>(self.s_rec.end.val()) << 34)
            | (bit_cast::<70, 4>(self.s_rec.q.val()) << 50)
            | (bit_cast::<70, 16>(self.s_rec.plen.val()) << 54);
        if self.s_rec.acc.val() {
            self.crec.next = self.crec.val() | 1;
        }
        if self.s_rec.single.val() {
            self.crec.next = self.crec.val() | 2;
        }
        self.cq.write_enable.next = self.s_rec.v.val();
        self.cq.write_address.next = bit_cast::<QUEUE_BITS, 6>(self.c_wr.q.val());
        self.cq.write_data.next = self.crec.val();
        self.pq.write_enable.next = self.s_rec.v.val() & self.s_rec.acc.val();
        self.pq.write_address.next = bit_cast::<QUEUE_BITS, 6>(self.p_wr.q.val());
        self.pq.write_data.next = self.s_rec.ps.val();
        if self.s_rec.v.val() {
            self.c_wr.d.next = self.c_wr.q.val() + 1;
            if self.s_rec.acc.val() {
                self.p_wr.d.next = self.p_wr.q.val() + 1;
            }
        }
        self.c_wrd.d.next = self.c_wr.q.val();

        // ---- The heads; a pop presents the next address at once. ----
        self.m_head.rec.next = self.cq.read_data.val();
        self.m_head.valid.next = self.c_rd.q.val() != self.c_wrd.q.val();
        if self.m_head.pop.val() {
            self.c_rd.d.next = self.c_rd.q.val() + 1;
            self.cq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.c_rd.q.val() + 1);
        } else {
            self.cq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.c_rd.q.val());
        }
        self.m_ps.ps.next = self.pq.read_data.val();
        if self.m_ps.pop.val() {
            self.p_rd.d.next = self.p_rd.q.val() + 1;
            self.pq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.p_rd.q.val() + 1);
        } else {
            self.pq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.p_rd.q.val());
        }

        if self.rst.val() {
            self.c_wr.d.next = 0.into();
            self.c_wrd.d.next = 0.into();
            self.c_rd.d.next = 0.into();
            self.p_wr.d.next = 0.into();
            self.p_rd.d.next = 0.into();
        }
    }
}
