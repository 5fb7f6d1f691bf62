//! [`LocalMem`]: block RAM on the FPGA as the NIC's "host memory", serving
//! [`crate::NicDevice`]'s generic DMA ports and a byte port for the
//! management engine ([`super::mgmt::MgmtEngine`]).

use rust_hdl::prelude::*;

use crate::helpers::{BlockRam, konst, native_block};

native_block! {
    /// `8 · 2^N` bytes of block RAM answering [`crate::NicDevice`]'s 64-bit DMA
    /// ports (`docs/hardware.md` §18, *Ports*; the ports carry the device's
    /// names, so the two connect name to name), shared with a byte port for
    /// the management engine.
    ///
    /// The memory is eight byte lanes, each a [`BlockRam`] of `2^N` bytes:
    /// byte address `a` lives in lane `a mod 8`, word `a / 8`. A beat's eight
    /// consecutive bytes are in eight different lanes whatever the alignment,
    /// so any address is read or written at a beat per clock: each lane is
    /// given its own word address, and the beat is rotated by the address's
    /// low three bits. Addresses wrap: the bits above the window's are ignored
    /// (the host driver maps the window at an address whose low bits are the
    /// board's, `docs/hardware.md` §19).
    ///
    /// * **DMA reads**: one request at a time (`m_dmar_ready` while idle); its
    ///   bytes leave on `s_dmac_*`, lane 0 = the first byte asked for, packed
    ///   `tkeep`, `tlast` on the last beat, the tag on every beat, from the
    ///   second clock after the request. Back-pressure holds the beat.
    /// * **DMA writes**: the address with the first beat (`m_dmaw_first`), the
    ///   following beats at the next 8 bytes each, the bytes `tkeep` marks
    ///   written; `m_dmaw_len` is not needed. A write is visible to a read
    ///   that starts after its beat was taken.
    /// * **The byte port** (`mem_*`) wins a clock it asks for: a write stalls
    ///   the DMA write port for that clock, a read the DMA read stream for two.
    ///   A read's byte is on `mem_rdata` in the next clock.
    LocalMem [N]
    ports {
        /// Clock.
        clock: Signal<In, Clock>,
        /// Synchronous reset: no request in progress (the memory keeps its bytes).
        rst: Signal<In, Bit>,
        /// DMA read request: valid.
        m_dmar_valid: Signal<In, Bit>,
        /// DMA read request: taken (while no read is in progress).
        m_dmar_ready: Signal<Out, Bit>,
        /// DMA read request: byte address.
        m_dmar_addr: Signal<In, Bits<64>>,
        /// DMA read request: bytes (at least 1).
        m_dmar_len: Signal<In, Bits<16>>,
        /// DMA read request: tag, returned on every beat.
        m_dmar_tag: Signal<In, Bits<4>>,
        /// DMA read completion: data, lane 0 = the first byte of the beat.
        s_dmac_tdata: Signal<Out, Bits<64>>,
        /// DMA read completion: byte enables (packed).
        s_dmac_tkeep: Signal<Out, Bits<8>>,
        /// DMA read completion: beat valid.
        s_dmac_tvalid: Signal<Out, Bit>,
        /// DMA read completion: beat taken.
        s_dmac_tready: Signal<In, Bit>,
        /// DMA read completion: the request's last beat.
        s_dmac_tlast: Signal<Out, Bit>,
        /// DMA read completion: the request's tag.
        s_dmac_tag: Signal<Out, Bits<4>>,
        /// DMA write: byte address (with the first beat).
        m_dmaw_addr: Signal<In, Bits<64>>,
        /// DMA write: first beat of a request.
        m_dmaw_first: Signal<In, Bit>,
        /// DMA write: data, lane 0 first.
        m_dmaw_tdata: Signal<In, Bits<64>>,
        /// DMA write: byte enables (packed).
        m_dmaw_tkeep: Signal<In, Bits<8>>,
        /// DMA write: beat valid.
        m_dmaw_tvalid: Signal<In, Bit>,
        /// DMA write: beat taken.
        m_dmaw_tready: Signal<Out, Bit>,
        /// Byte port: an access this clock.
        mem_valid: Signal<In, Bit>,
        /// Byte port: the access is a write.
        mem_write: Signal<In, Bit>,
        /// Byte port: byte address.
        mem_addr: Signal<In, Bits<32>>,
        /// Byte port: the byte to write.
        mem_wdata: Signal<In, Bits<8>>,
        /// Byte port: the byte the previous clock's read asked for.
        mem_rdata: Signal<Out, Bits<8>>,
    }
    state {
        lanes: [BlockRam<8, N>; 8] = std::array::from_fn(|_| BlockRam::with_words(1 << N)),
        // The read in progress: its next beat's first byte, the bytes left,
        // the tag, and whether the lanes hold that beat now.
        r_act: DFF<Bit>,
        r_cur: DFF<Bits<32>>,
        r_left: DFF<Bits<16>>,
        r_tag: DFF<Bits<4>>,
        r_dv: DFF<Bit>,
        // The next write beat's first byte.
        w_cur: DFF<Bits<32>>,
        // The lane of the byte port's last read.
        u_lane: DFF<Bits<3>>,
        // Temporaries: the beat the lanes read for at this edge; the write
        // beat's address; the lanes' bytes side by side, twice (for the
        // rotation); one lane's byte; the write beat twice, its bytes and
        // enables rotated to their lanes; the lanes below the read and the
        // write beat's first byte (they hold the next word); one lane's read
        // and write word; the byte port reads; the read beat is taken.
        r_base: Signal<Local, Bits<32>>,
        w_base: Signal<Local, Bits<32>>,
        cat: Signal<Local, Bits<128>>,
        one: Signal<Local, Bits<8>>,
        wide: Signal<Local, Bits<128>>,
        w_rot: Signal<Local, Bits<64>>,
        k_rot: Signal<Local, Bits<16>>,
        r_low: Signal<Local, Bits<8>>,
        w_low: Signal<Local, Bits<8>>,
        r_word: Signal<Local, Bits<N>>,
        w_word: Signal<Local, Bits<N>>,
        u_rd: Signal<Local, Bit>,
        fire: Signal<Local, Bit>,
    }
    consts {
        k_lane: [Constant<Bits<3>>; 8] = std::array::from_fn(konst),
        c_full: Constant<Bits<8>> = konst(0xff),
        c_beat: Constant<Bits<16>> = konst(8),
    }
}

impl<const N: usize> LocalMem<N> {
    /// The window's size in bytes.
    pub const BYTES: usize = 8 << N;
}

impl<const N: usize> Logic for LocalMem<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_act, r_cur, r_left, r_tag, r_dv, w_cur, u_lane
        );

        // The lanes' bytes in lane order, twice: a read beat is them
        // rotated right by its first byte's lane.
        self.cat.next = 0.into();
        for l in 0..8 {
            self.one.next = self.lanes[l].read_data.val();
            self.cat.next = self.cat.val()
                | (bit_cast::<128, 8>(self.one.val()) << (8 * l).to_bits::<16>())
                | (bit_cast::<128, 8>(self.one.val()) << (64 + 8 * l).to_bits::<16>());
        }
        self.mem_rdata.next = self
            .cat
            .val()
            .get_bits::<8>(bit_cast::<7, 3>(self.u_lane.q.val()).index() << 3);

        // Read stream.
        self.s_dmac_tvalid.next = self.r_act.q.val() & self.r_dv.q.val();
        self.s_dmac_tdata.next = self
            .cat
            .val()
            .get_bits::<64>(bit_cast::<7, 3>(self.r_cur.q.val().get_bits::<3>(0)).index() << 3);
        self.s_dmac_tkeep.next = self.c_full.val();
        if self.r_left.q.val() < self.c_beat.val() {
            self.s_dmac_tkeep.next = !(self.c_full.val() << bit_cast::<8, 16>(self.r_left.q.val()));
        }
        self.s_dmac_tlast.next = self.r_left.q.val() <= self.c_beat.val();
        self.s_dmac_tag.next = self.r_tag.q.val();
        self.fire.next = self.r_act.q.val() & self.r_dv.q.val() & self.s_dmac_tready.val();
        self.m_dmar_ready.next = !self.r_act.q.val();
        self.r_base.next = self.r_cur.q.val();
        if self.fire.val() {
            self.r_base.next = self.r_cur.q.val() + 8;
            self.r_cur.d.next = self.r_cur.q.val() + 8;
            self.r_left.d.next = self.r_left.q.val() - 8;
            if self.r_left.q.val() <= self.c_beat.val() {
                self.r_act.d.next = false;
            }
        }
        if !self.r_act.q.val() & self.m_dmar_valid.val() {
            self.r_act.d.next = true;
            self.r_cur.d.next = self.m_dmar_addr.val().get_bits::<32>(0);
            self.r_left.d.next = self.m_dmar_len.val();
            self.r_tag.d.next = self.m_dmar_tag.val();
        }
        // The lanes read for `r_base` unless the byte port reads; the
        // beat they give next clock is valid if it is still the one due.
        self.u_rd.next = self.mem_valid.val() & !self.mem_write.val();
        self.r_dv.d.next = self.r_act.q.val() & !self.u_rd.val();
        if !self.r_act.q.val() | (self.fire.val() & (self.r_left.q.val() <= self.c_beat.val())) {
            self.r_dv.d.next = false;
        }

        // Write stream: the beat's bytes rotated left by its first byte's
        // lane, so lane l takes the byte for it.
        self.m_dmaw_tready.next = !(self.mem_valid.val() & self.mem_write.val());
        self.w_base.next = self.w_cur.q.val();
        if self.m_dmaw_first.val() {
            self.w_base.next = self.m_dmaw_addr.val().get_bits::<32>(0);
        }
        self.wide.next = bit_cast::<128, 64>(self.m_dmaw_tdata.val())
            | (bit_cast::<128, 64>(self.m_dmaw_tdata.val()) << 64);
        self.w_rot.next = self.wide.val().get_bits::<64>(
            64 - (bit_cast::<7, 3>(self.w_base.val().get_bits::<3>(0)).index() << 3),
        );
        self.k_rot.next = bit_cast::<16, 8>(self.m_dmaw_tkeep.val())
            | (bit_cast::<16, 8>(self.m_dmaw_tkeep.val()) << 8);
        if self.m_dmaw_tvalid.val() & self.m_dmaw_tready.val() {
            self.w_cur.d.next = self.w_base.val() + 8;
        }

        // Lanes below the first byte's lane hold the next word (a mask, not
        // a comparison per lane: lane 7's would be constant).
        self.r_low.next =
            !(self.c_full.val() << bit_cast::<8, 3>(self.r_base.val().get_bits::<3>(0)));
        self.w_low.next =
            !(self.c_full.val() << bit_cast::<8, 3>(self.w_base.val().get_bits::<3>(0)));
        for l in 0..8 {
            self.lanes[l].clock.next = self.clock.val();
            // Read.
            self.r_word.next = self.r_base.val().get_bits::<N>(3);
            if self.r_low.val().get_bit(l) {
                self.r_word.next = self.r_base.val().get_bits::<N>(3) + 1;
            }
            if self.u_rd.val() {
                self.r_word.next = self.mem_addr.val().get_bits::<N>(3);
            }
            self.lanes[l].read_address.next = self.r_word.val();
            // Write.
            self.w_word.next = self.w_base.val().get_bits::<N>(3);
            if self.w_low.val().get_bit(l) {
                self.w_word.next = self.w_base.val().get_bits::<N>(3) + 1;
            }
            self.lanes[l].write_address.next = self.w_word.val();
            self.lanes[l].write_data.next = self.w_rot.val().get_bits::<8>(8 * l);
            self.lanes[l].write_enable.next = self.m_dmaw_tvalid.val()
                & self.m_dmaw_tready.val()
                & self
                    .k_rot
                    .val()
                    .get_bit(8 + l - bit_cast::<7, 3>(self.w_base.val().get_bits::<3>(0)).index());
            if self.mem_valid.val() & self.mem_write.val() {
                self.lanes[l].write_address.next = self.mem_addr.val().get_bits::<N>(3);
                self.lanes[l].write_data.next = self.mem_wdata.val();
                self.lanes[l].write_enable.next =
                    self.mem_addr.val().get_bits::<3>(0) == self.k_lane[l].val();
            }
        }
        if self.u_rd.val() {
            self.u_lane.d.next = self.mem_addr.val().get_bits::<3>(0);
        }

        if self.rst.val() {
            self.r_act.d.next = false;
            self.r_dv.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests;
