//! The builder's ICRC stages and output register ([`TxCrcPipe`]).

use rust_hdl::prelude::*;

use super::UNZ_BITS;
use super::links::{BeatIn, CrcCtlIn};
use super::matrices::{BeatRows, unzero_rows};
use crate::bus::AxisOut;
use crate::helpers::{EnReg, konst, native_block};

native_block! {
    /// Stages A to O of [`TxBuild`](super::TxBuild) at `W`-bit beats
    /// (`B = W / 8` lanes): the generator's beats in, the frame with its
    /// ICRC out. A: the beat, its lane masks and the frame's CRC constants
    /// registered; P: the beat's share of the CRC, the XOR matrix of the
    /// whole beat over its covered lanes (uncovered lanes zeroed); R: the
    /// CRC register, `Z·crc ^ share` (`Z` = the matrix of `B` zero bytes),
    /// seeded on a frame's first beat with `s_ctl.s1` (the pseudo-header CRC
    /// moved back over the lanes before the datagram), held on beats past
    /// the datagram; U: the trailing zero lanes of the last covered beat
    /// taken back out and O: the ICRC into its lanes ([`TxIcrcOut`]). All
    /// stages advance together while `adv` is high; the parent computes it
    /// from `m_axis` (the output register is free or taken), so no path runs
    /// from this block's inputs to its outputs.
    TxCrcPipe [W, B]
    check { W == 8 * B, "TxCrcPipe<{W}, {B}>: W = 8 * B" }
    let rows = BeatRows::<W>::new();
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the stages."]
        rst: Signal<In, Bit>,
        #[doc = "The beat, its `tkeep` and the lanes the ICRC covers."]
        s_beat: BeatIn<W, B>,
        #[doc = "The beat's place in its frame (`valid` only while `adv`; `first` seeds the CRC register, `hold` holds it)."]
        s_ctl: CrcCtlIn,
        #[doc = "The stages advance this cycle (a beat may enter): the output register is free or taken."]
        adv: Signal<In, Bit>,
        #[doc = "Frames (packed `tkeep`)."]
        m_axis: AxisOut<W, B>,
    }
    state {
        // A: the beat, its lane masks and the frame's CRC constants.
        a_v: DFF<Bit>,
        a_first: DFF<Bit>,
        a_last: DFF<Bit>,
        a_hold: DFF<Bit>,
        a_data: DFF<Bits<W>>,
        a_keep: DFF<Bits<B>>,
        a_cov: DFF<Bits<B>>,
        a_t: DFF<Bits<8>>,
        a_s1: DFF<Bits<32>>,
        a_m: DFF<Bits<8>>,
        // P: the beat's share of the CRC.
        p_v: DFF<Bit>,
        p_first: DFF<Bit>,
        p_last: DFF<Bit>,
        p_hold: DFF<Bit>,
        p_data: DFF<Bits<W>>,
        p_keep: DFF<Bits<B>>,
        p_t: DFF<Bits<8>>,
        p_s1: DFF<Bits<32>>,
        p_m: DFF<Bits<8>>,
        p_x: EnReg<Bits<32>>,
        // R: the CRC register after the beat.
        r_v: DFF<Bit>,
        r_last: DFF<Bit>,
        r_data: DFF<Bits<W>>,
        r_keep: DFF<Bits<B>>,
        r_t: DFF<Bits<8>>,
        r_m: DFF<Bits<8>>,
        crc: EnReg<Bits<32>>,
        // U and O.
        out: TxIcrcOut<W, B>,
        // Combinational temporaries.
        cd: Signal<Local, Bits<W>>,
        acc: Signal<Local, Bits<32>>,
        zc: Signal<Local, Bits<32>>,
    }
    consts {
        c_ff: Constant<Bits<W>> = konst(0xFF),
        c_bm1: Constant<Bits<8>> = konst(B - 1),
        c_beat_z: [Constant<Bits<32>>; 32] = rows.beat_z,
        c_beat_d: [Constant<Bits<W>>; 32] = rows.beat_d,
    }
}

impl<const W: usize, const B: usize> Logic for TxCrcPipe<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, a_v, a_first, a_last, a_hold, a_data, a_keep, a_cov, a_t, a_s1, a_m, p_v,
            p_first, p_last, p_hold, p_data, p_keep, p_t, p_s1, p_m, r_v, r_last, r_data, r_keep,
            r_t, r_m
        );
        // The CRC registers load under `adv`, which reads the output's
        // `tready`; their values come from registers alone (`EnReg`), so a
        // simulator computes the matrices once per cycle, not again in the
        // pass for the inputs.
        self.p_x.clock.next = self.clock.val();
        self.p_x.en.next = false;
        self.crc.clock.next = self.clock.val();
        self.crc.en.next = false;
        self.out.clock.next = self.clock.val();
        self.out.rst.next = self.rst.val();
        AxisOut::<W, B>::link(&mut self.m_axis, &mut self.out.m_axis);

        // ---- A: the beat in. ----
        if self.adv.val() {
            self.a_v.d.next = self.s_ctl.valid.val();
            if self.s_ctl.valid.val() {
                self.a_data.d.next = self.s_beat.data.val();
                self.a_keep.d.next = self.s_beat.keep.val();
                self.a_cov.d.next = self.s_beat.cov.val();
                self.a_first.d.next = self.s_ctl.first.val();
                self.a_last.d.next = self.s_ctl.last.val();
                self.a_hold.d.next = self.s_ctl.hold.val();
                self.a_t.d.next = self.s_ctl.t.val();
                self.a_s1.d.next = self.s_ctl.s1.val();
                // `m < B`: masked, the `Z^-m` tables are indexed by a
                // small count (a few-input function per row bit, not a
                // shifter over the whole table), and the upper bits of
                // the `m` registers are constant.
                self.a_m.d.next = self.s_ctl.m.val() & self.c_bm1.val();
            }
        }

        // ---- P: the beat's share of the CRC over its covered lanes. ----
        self.cd.next = 0.into();
        self.acc.next = 0.into();
        if self.a_v.q.val() {
            for i in 0..B {
                if self.a_cov.q.val().get_bit(i) {
                    self.cd.next = self.cd.val()
                        | (self.a_data.q.val() & (self.c_ff.val() << (8 * i).to_bits::<16>()));
                }
            }
            for o in 0..32 {
                self.acc.next = self
                    .acc
                    .val()
                    .replace_bit(o, (self.cd.val() & self.c_beat_d[o].val()).xor());
            }
        }
        if self.adv.val() {
            self.p_v.d.next = self.a_v.q.val();
            self.p_first.d.next = self.a_first.q.val();
            self.p_last.d.next = self.a_last.q.val();
            self.p_hold.d.next = self.a_hold.q.val();
            self.p_data.d.next = self.a_data.q.val();
            self.p_keep.d.next = self.a_keep.q.val();
            self.p_t.d.next = self.a_t.q.val();
            self.p_s1.d.next = self.a_s1.q.val();
            self.p_m.d.next = self.a_m.q.val();
            self.p_x.en.next = self.a_v.q.val();
        }
        self.p_x.d.next = self.acc.val();

        // ---- R: the CRC register. ----
        self.zc.next = 0.into();
        if self.p_v.q.val() & !self.p_first.q.val() & !self.p_hold.q.val() {
            for o in 0..32 {
                self.zc.next = self
                    .zc
                    .val()
                    .replace_bit(o, (self.crc.q.val() & self.c_beat_z[o].val()).xor());
            }
        }
        if self.adv.val() {
            self.r_v.d.next = self.p_v.q.val();
            self.r_last.d.next = self.p_last.q.val();
            self.r_data.d.next = self.p_data.q.val();
            self.r_keep.d.next = self.p_keep.q.val();
            self.r_t.d.next = self.p_t.q.val();
            self.r_m.d.next = self.p_m.q.val();
            self.crc.en.next = self.p_v.q.val() & (self.p_first.q.val() | !self.p_hold.q.val());
        }
        self.crc.d.next = self.zc.val() ^ self.p_x.q.val();
        if self.p_first.q.val() {
            self.crc.d.next = self.p_s1.q.val() ^ self.p_x.q.val();
        }

        // ---- U and O. ----
        self.out.r_v.next = self.r_v.q.val();
        self.out.r_last.next = self.r_last.q.val();
        self.out.r_data.next = self.r_data.q.val();
        self.out.r_keep.next = self.r_keep.q.val();
        self.out.r_t.next = self.r_t.q.val();
        self.out.r_m.next = self.r_m.q.val();
        self.out.crc.next = self.crc.q.val();

        if self.rst.val() {
            self.a_v.d.next = false;
            self.p_v.d.next = false;
            self.r_v.d.next = false;
        }
    }
}

native_block! {
    /// Stages U and O of [`TxCrcPipe`] at `W`-bit beats (`B = W / 8`
    /// lanes). U: the trailing zero lanes of the frame's last covered beat
    /// (`r_m`) taken back out of the CRC register (`Z^-m`, one matrix per
    /// count) and the CRC inverted: the ICRC; the lanes of its four bytes
    /// from the bytes to the frame's end (`r_t`). O: the ICRC written
    /// big-endian into its lanes (in the last covered beat and possibly the
    /// next), the output register. The stages move while the output
    /// register is free or taken, as [`TxCrcPipe`]'s (its `adv`).
    TxIcrcOut [W, B]
    check { W == 8 * B, "TxIcrcOut<{W}, {B}>: W = 8 * B" }
    let unz = unzero_rows(B);
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the stages."]
        rst: Signal<In, Bit>,
        #[doc = "Stage R holds a beat."]
        r_v: Signal<In, Bit>,
        #[doc = "It is the frame's last."]
        r_last: Signal<In, Bit>,
        #[doc = "The beat."]
        r_data: Signal<In, Bits<W>>,
        #[doc = "Its `tkeep`."]
        r_keep: Signal<In, Bits<B>>,
        #[doc = "Bytes from it to the frame's end when below `B + 4`, else 0."]
        r_t: Signal<In, Bits<8>>,
        #[doc = "Trailing zero lanes of the frame's last covered beat."]
        r_m: Signal<In, Bits<8>>,
        #[doc = "The CRC register after the beat."]
        crc: Signal<In, Bits<32>>,
        #[doc = "Frames (packed `tkeep`)."]
        m_axis: AxisOut<W, B>,
    }
    state {
        // U: the ICRC and the lanes of its bytes 0..3.
        u_v: DFF<Bit>,
        u_last: DFF<Bit>,
        u_data: DFF<Bits<W>>,
        u_keep: DFF<Bits<B>>,
        u_ic: EnReg<Bits<32>>,
        u_sel: [DFF<Bits<B>>; 4],
        // O: the output register.
        o_v: DFF<Bit>,
        o_last: DFF<Bit>,
        o_data: EnReg<Bits<W>>,
        o_keep: DFF<Bits<B>>,
        // Combinational temporaries.
        go: Signal<Local, Bit>,
        acc: Signal<Local, Bits<32>>,
        unz: Signal<Local, Bits<11>>,
        sel: [Signal<Local, Bits<B>>; 4],
        icw: Signal<Local, Bits<W>>,
        octet: Signal<Local, Bits<8>>,
    }
    consts {
        c_unz: [Constant<Bits<UNZ_BITS>>; 32] = unz,
    }
}

impl<const W: usize, const B: usize> Logic for TxIcrcOut<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, u_v, u_last, u_data, u_keep, o_v, o_last, o_keep
        );
        // The ICRC and the output data load under `go`, which reads
        // `tready`; their values come from registers alone (`EnReg`), so a
        // simulator computes them once per cycle, not again in the pass
        // for the inputs.
        self.u_ic.clock.next = self.clock.val();
        self.u_ic.en.next = false;
        self.o_data.clock.next = self.clock.val();
        self.o_data.en.next = false;
        for j in 0..4 {
            self.u_sel[j].clock.next = self.clock.val();
            self.u_sel[j].d.next = self.u_sel[j].q.val();
        }
        self.go.next = !self.o_v.q.val() | self.m_axis.tready.val();
        self.acc.next = 0.into();

        // ---- U: trailing zero lanes out, the ICRC and its lanes. ----
        self.unz.next = bit_cast::<11, 8>(self.r_m.val()) << 5;
        // ICRC byte q sits at lane t - 4 + q (t = bytes to the frame's end
        // from this beat, when below B + 4): from the inputs, which are
        // registers, outside `go` (which reads `tready`), so a simulator
        // decodes them once per cycle, not again in the pass for the inputs.
        for q in 0..4 {
            self.sel[q].next = 0.into();
            if self.r_v.val() {
                for n in 0..B {
                    self.sel[q].next = self.sel[q]
                        .val()
                        .replace_bit(n, self.r_t.val() == (n + 4 - q).to_bits::<8>());
                }
            }
        }
        // The ICRC's matrix only where its lanes are (the other beats write
        // none of it: a simulator skips the matrix there).
        if self.r_v.val() & self.r_t.val().any() {
            for o in 0..32 {
                self.acc.next = self.acc.val().replace_bit(
                    o,
                    (self.crc.val() & self.c_unz[o].val().get_bits::<32>(self.unz.val().index()))
                        .xor(),
                );
            }
        }
        self.u_ic.d.next = !self.acc.val();
        if self.go.val() {
            self.u_v.d.next = self.r_v.val();
            self.u_last.d.next = self.r_last.val();
            self.u_data.d.next = self.r_data.val();
            self.u_keep.d.next = self.r_keep.val();
            // The ICRC only where its lanes are (`r_t` set).
            self.u_ic.en.next = self.r_v.val() & self.r_t.val().any();
            if self.r_v.val() {
                for q in 0..4 {
                    self.u_sel[q].d.next = self.sel[q].val();
                }
            }
        }

        // ---- O: the ICRC into its lanes; the output register. ----
        self.icw.next = 0.into();
        self.octet.next = 0.into();
        // Only a beat that holds ICRC lanes places its bytes (a simulator
        // skips the 4 x B choices in the others).
        if self.u_v.q.val()
            & (self.u_sel[0].q.val()
                | self.u_sel[1].q.val()
                | self.u_sel[2].q.val()
                | self.u_sel[3].q.val())
            .any()
        {
            for q in 0..4 {
                self.octet.next = self.u_ic.q.val().get_bits::<8>(24 - 8 * q);
                for n in 0..B {
                    if self.u_sel[q].q.val().get_bit(n) {
                        self.icw.next = self.icw.val()
                            | (bit_cast::<W, 8>(self.octet.val()) << (8 * n).to_bits::<16>());
                    }
                }
            }
        }
        self.o_data.d.next = self.u_data.q.val() | self.icw.val();
        if self.go.val() {
            self.o_v.d.next = self.u_v.q.val();
            if self.u_v.q.val() {
                self.o_data.en.next = true;
                self.o_keep.d.next = self.u_keep.q.val();
                self.o_last.d.next = self.u_last.q.val();
            }
        }
        self.m_axis.tvalid.next = self.o_v.q.val();
        self.m_axis.tdata.next = self.o_data.q.val();
        self.m_axis.tkeep.next = self.o_keep.q.val();
        self.m_axis.tlast.next = self.o_last.q.val();

        if self.rst.val() {
            self.u_v.d.next = false;
            self.o_v.d.next = false;
        }
    }
}
