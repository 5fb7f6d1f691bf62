//! The capture of [`AckRx`](super::AckRx) ([`AckRxCap`]): bytes 20..95
//! of every datagram the receive core takes, one pairing FIFO entry per
//! datagram.

use rust_hdl::prelude::*;

use super::links::EntryOut;
use super::{CAP_BYTES, CAP_FIRST, PF_BITS};
use crate::helpers::{BlockRam, byte_mask, konst, native_block};

/// Beats of the capture window at the narrowest width (8 bytes).
const WIN_MAX: usize = (CAP_FIRST + CAP_BYTES - 1) / 8 - CAP_FIRST / 8 + 1;
/// Bits of the capture register.
const CAP_BITS: usize = 8 * CAP_BYTES;

/// Beat `t` of the capture window at `b` bytes a beat: the beat's index,
/// the first of its lanes kept, and the capture bytes it fills
/// (`n0..=n1`).
fn window(b: usize, t: usize) -> (usize, usize, usize, usize) {
    let (first, last) = (CAP_FIRST, CAP_FIRST + CAP_BYTES - 1);
    let k = first / b + t;
    let lo = first.max(k * b);
    let hi = last.min(k * b + b - 1);
    (k, lo - k * b, lo - first, hi - first)
}

native_block! {
    /// Merges each beat's lanes of bytes 20..95 into a capture register
    /// (constant slices per beat index) and writes the datagram's entry
    /// (bytes 0..63 and `rx_count`; `rate_hint` and `credit` are the
    /// firmware's) from that register into the pairing FIFO in the cycle
    /// after its last beat; each verdict event pops one entry.
    AckRxCap[W, B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the FIFO."]
        rst: Signal<In, Bit>,
        #[doc = "Beat data the core takes."]
        tdata: Signal<In, Bits<W>>,
        #[doc = "The core takes a beat."]
        tvalid: Signal<In, Bit>,
        #[doc = "It is the datagram's last."]
        tlast: Signal<In, Bit>,
        #[doc = "A verdict event: its datagram's entry is done with."]
        ev_valid: Signal<In, Bit>,
        #[doc = "The oldest entry."]
        m_entry: EntryOut,
    }
    state {
        // Beat index within the datagram (saturates), bytes 20..95 of
        // the datagrams so far; a beat's lanes of them, moved to their
        // place.
        beat: DFF<Bits<16>>,
        cap: DFF<Bits<CAP_BITS>>,
        lane: Signal<Local, Bits<W>>,
        wide: Signal<Local, Bits<CAP_BITS>>,
        // Pairing FIFO: one entry per datagram, popped by its event. A
        // block RAM (16 `DP16KD`) read at the read pointer after this
        // cycle's pop, so the head is on its read port from the registers
        // in every cycle, as from the asynchronous read before. The entry
        // is written from the capture register in the cycle after the
        // datagram's last beat (`pf_we`; t + 1 for a last beat at t: no
        // multiplexer merges the last beat into the word written) and read
        // first at its verdict event, at t + 3 (`RxCore` emits one event
        // per datagram, in order, 3 cycles after its last beat). So no
        // bypass: even when the read pointer already names the entry at
        // the write's edge (an empty FIFO), the read at the next edge puts
        // the word on the read port at t + 3.
        pf: BlockRam<PF_BITS, 3> = BlockRam::default().without_bypass(),
        pf_we: DFF<Bit>,
        pf_wr: DFF<Bits<3>>,
        pf_rd: DFF<Bits<3>>,
        // The read pointer after this cycle (the address the FIFO reads).
        pf_rdn: Signal<Local, Bits<3>>,
    }
    consts {
        k_cbeat: [Constant<Bits<16>>; WIN_MAX] = std::array::from_fn(|t| konst(window(B, t).0)),
        k_rsh: [Constant<Bits<16>>; WIN_MAX] = std::array::from_fn(|t| konst(8 * window(B, t).1)),
        k_lsh: [Constant<Bits<16>>; WIN_MAX] = std::array::from_fn(|t| konst(8 * window(B, t).2)),
        k_cmask: [Constant<Bits<CAP_BITS>>; WIN_MAX] = std::array::from_fn(|t| {
            let (_, _, n0, n1) = window(B, t);
            byte_mask(n0, n1 + 1)
        }),
    }
}

impl<const W: usize, const B: usize> AckRxCap<W, B> {
    /// Beats of the capture window.
    const WIN: usize = (CAP_FIRST + CAP_BYTES - 1) / B - CAP_FIRST / B + 1;
}

impl<const W: usize, const B: usize> Logic for AckRxCap<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, beat, cap, pf_we, pf_wr, pf_rd);
        self.pf.clock.next = self.clock.val();
        // Cap byte n = datagram byte 20 + n: path_psn (0..3), timestamp
        // (4..11), conn_cum (12..15), path_cum (16..19), sack (20..51),
        // echo_ts (52..59), ce_count (60..63), rate_hint (64..67), credit
        // (68..71), rx_count (72..75).
        // Only a beat of the window writes the register (the others leave
        // it: a simulator copies none of its 608 bits there).
        self.lane.next = 0.into();
        self.wide.next = 0.into();
        if self.tvalid.val() {
            for t in 0..Self::WIN {
                if self.beat.q.val() == self.k_cbeat[t].val() {
                    self.lane.next = self.tdata.val() >> self.k_rsh[t].val();
                    self.wide.next =
                        bit_cast::<CAP_BITS, W>(self.lane.val()) << self.k_lsh[t].val();
                    self.cap.d.next = (self.cap.q.val() & !self.k_cmask[t].val())
                        | (self.wide.val() & self.k_cmask[t].val());
                }
            }
            if self.tlast.val() {
                self.beat.d.next = 0.into();
            } else if self.beat.q.val() != 0xFFFF {
                self.beat.d.next = self.beat.q.val() + 1;
            }
        }
        // The entry of the datagram whose last beat came in the last cycle.
        self.pf_we.d.next = self.tvalid.val() & self.tlast.val();
        self.pf.write_enable.next = self.pf_we.q.val();
        self.pf.write_address.next = self.pf_wr.q.val();
        self.pf.write_data.next = bit_cast::<PF_BITS, 512>(self.cap.q.val().get_bits::<512>(0))
            | (bit_cast::<PF_BITS, 32>(self.cap.q.val().get_bits::<32>(576)) << 512);
        if self.pf_we.q.val() {
            self.pf_wr.d.next = self.pf_wr.q.val() + 1;
        }
        self.m_entry.data.next = self.pf.read_data.val();
        self.pf_rdn.next = self.pf_rd.q.val();
        if self.ev_valid.val() {
            self.pf_rdn.next = self.pf_rd.q.val() + 1;
        }
        if self.rst.val() {
            self.beat.d.next = 0.into();
            self.pf_we.d.next = false;
            self.pf_wr.d.next = 0.into();
            self.pf_rdn.next = 0.into();
        }
        self.pf_rd.d.next = self.pf_rdn.val();
        self.pf.read_address.next = self.pf_rdn.val();
    }
}
