//! The verdict FIFO ([`PlaceVerdicts`]).

use rust_hdl::prelude::*;

use super::links::HeadOut;
use crate::helpers::BlockRam;

/// Depth of the verdict FIFO: the verdicts of the small frames that arrive
/// while a long write leaves (at 64 bits, a 4 KiB write takes 512 cycles;
/// 5-beat PROBEs arrive meanwhile). 32 gave 291 refused beats in 5.1 M
/// cycles of the bench's mix at 64 bits; 64 gives none.
pub(super) const VERDICTS: usize = 64;
/// Verdicts that can still be written after `can_accept` falls: the four
/// pipeline stages (S0..S3) and the frame the parser is finishing.
const IN_FLIGHT: usize = 4 + 1;
// `room`'s bound (a literal in the kernel).
const _: () = assert!(VERDICTS - IN_FLIGHT == 59);
/// Bits of a verdict FIFO entry: place (bit 0), has beats (1), length
/// (2..18), address (18..82).
const VQ_BITS: usize = 82;

/// The verdict FIFO of [`RxPlace`](super::RxPlace): one entry per
/// verdict (S3's, `push`: placed, the frame has payload beats, payload
/// bytes, the DMA address), in a [`BlockRam`] (3 `DP16KD`s) read at the
/// *next* read pointer (the pointer after this cycle's pop), so the head
/// is on its read port from the registers in every cycle, as from a
/// distributed RAM's asynchronous read, with no added cycle; its bypass
/// shows an entry pushed at the edge it becomes the head. `head` is
/// joined to [`PlaceOut`](super::PlaceOut), which pops it.
#[derive(LogicBlock, Default)]
pub struct PlaceVerdicts {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empty.
    pub rst: Signal<In, Bit>,
    /// Write an entry.
    pub push: Signal<In, Bit>,
    /// Its frame is placed.
    pub place: Signal<In, Bit>,
    /// Its frame has payload beats.
    pub beats: Signal<In, Bit>,
    /// Its payload bytes.
    pub len: Signal<In, Bits<16>>,
    /// Its DMA address.
    pub addr: Signal<In, Bits<64>>,
    /// The head.
    pub head: HeadOut,
    /// The head's DMA address.
    pub head_addr: Signal<Out, Bits<64>>,
    /// Room for every verdict still in flight: fewer than
    /// `VERDICTS - IN_FLIGHT` entries used.
    pub room: Signal<Out, Bit>,
    vq: BlockRam<VQ_BITS, 6>,
    v_wr: DFF<Bits<7>>,
    v_rd: DFF<Bits<7>>,
    // The read pointer after this cycle (the address the memory reads).
    v_rdn: Signal<Local, Bits<7>>,
    vqd: Signal<Local, Bits<VQ_BITS>>,
    v_count: Signal<Local, Bits<7>>,
}

impl Logic for PlaceVerdicts {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, v_wr, v_rd);
        self.vq.clock.next = self.clock.val();
        self.vq.write_enable.next = self.push.val();
        self.vq.write_address.next = self.v_wr.q.val().get_bits::<6>(0);
        self.vqd.next = (bit_cast::<VQ_BITS, 16>(self.len.val()) << 2)
            | (bit_cast::<VQ_BITS, 64>(self.addr.val()) << 18);
        if self.place.val() {
            self.vqd.next = self.vqd.val().replace_bit(0, true);
        }
        if self.beats.val() {
            self.vqd.next = self.vqd.val().replace_bit(1, true);
        }
        self.vq.write_data.next = self.vqd.val();
        if self.push.val() {
            self.v_wr.d.next = self.v_wr.q.val() + 1;
        }
        self.v_count.next = self.v_wr.q.val() - self.v_rd.q.val();
        self.head.valid.next = self.v_count.val() != 0;
        self.head.place.next = self.vq.read_data.val().get_bit(0);
        self.head.beats.next = self.vq.read_data.val().get_bit(1);
        self.head.len.next = self.vq.read_data.val().get_bits::<16>(2);
        self.head_addr.next = self.vq.read_data.val().get_bits::<64>(18);
        self.v_rdn.next = self.v_rd.q.val();
        if self.head.pop.val() {
            self.v_rdn.next = self.v_rd.q.val() + 1;
        }
        // Room for every verdict that can still come after `can_accept`
        // falls: one per stage in flight (S0..S3, 4 datagrams whose
        // metadata was taken) and the frame the parser is finishing (its
        // metadata still to come): 64 - (4 + 1) = 59.
        self.room.next = self.v_count.val() < 59;
        if self.rst.val() {
            self.v_wr.d.next = 0.into();
            self.v_rdn.next = 0.into();
        }
        self.v_rd.d.next = self.v_rdn.val();
        self.vq.read_address.next = self.v_rdn.val().get_bits::<6>(0);
    }
}
