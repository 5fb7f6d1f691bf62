//! The generator's state: the frame being made ([`TxGen`]).

use rust_hdl::prelude::*;

use super::links::{CrcCtlOut, FrameIn, GenOut, HdrIn};
use super::{HDR_BITS, MR_BITS, NET_BITS, REV_BITS, V4_AT};
use crate::helpers::{EnReg, SWAPS_512, konst, low_halves, native_block};

native_block! {
    /// The frame [`TxBuild`](super::TxBuild)'s generator is making, at
    /// `W`-bit beats (`B = W / 8` lanes): its header in lane order (a
    /// shift register, one beat per beat, holding the MetaRoCE headers from
    /// byte 63 for both families: an IPv4 frame starts at byte 20, where
    /// the beat is read, so each bit chooses only between its load and the
    /// shift), down-counters of header bytes,
    /// bytes to the datagram, to the ICRC and to the frame's end, payload
    /// bytes not yet taken, the last payload beat taken, and the flags of
    /// the current beat (it holds payload lanes, payload is left to take,
    /// it is the frame's last). The counters move one beat on (saturating
    /// at 0) in each cycle the beat is made (`go`); the next frame loads
    /// when it is taken (`take`). Its outputs are registers, except the
    /// beat's `en` and `pay_in` and the ICRC's `valid`, which pass `go` and
    /// `pay` through.
    TxGen [W, B]
    check { W == 8 * B, "TxGen<{W}, {B}>: W = 8 * B" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: no frame is being made."]
        rst: Signal<In, Bit>,
        #[doc = "The current beat is made this cycle."]
        go: Signal<In, Bit>,
        #[doc = "The next frame is taken this cycle."]
        take: Signal<In, Bit>,
        #[doc = "A frame may be taken this cycle (from registers: `take` without the flow control; `take` implies it)."]
        load: Signal<In, Bit>,
        #[doc = "The payload beat offered (taken when `go` and `need`)."]
        pay: Signal<In, Bits<W>>,
        #[doc = "The next frame's header."]
        s_hdr: HdrIn,
        #[doc = "The next frame's lengths and CRC seed."]
        s_frame: FrameIn,
        #[doc = "A frame is being made."]
        active: Signal<Out, Bit>,
        #[doc = "The current beat takes a payload beat."]
        need: Signal<Out, Bit>,
        #[doc = "The current beat is its frame's last."]
        last: Signal<Out, Bit>,
        #[doc = "Payload bytes not yet taken."]
        prem: Signal<Out, Bits<16>>,
        #[doc = "What the current beat is made of."]
        m_beat: GenOut<W>,
        #[doc = "The current beat's place in its frame, for the ICRC."]
        m_crc: CrcCtlOut,
    }
    state {
        g_active: DFF<Bit>,
        g_first: DFF<Bit>,
        g_hdr: EnReg<Bits<HDR_BITS>>,
        g_hrem: DFF<Bits<8>>,
        g_drem: DFF<Bits<8>>,
        g_erem: DFF<Bits<16>>,
        g_trem: DFF<Bits<16>>,
        g_prem: DFF<Bits<16>>,
        g_pay: DFF<Bit>,
        g_pnz: DFF<Bit>,
        g_last: DFF<Bit>,
        g_kind: DFF<Bits<2>>,
        g_prev: DFF<Bits<W>>,
        g_s1: DFF<Bits<32>>,
        g_m: DFF<Bits<8>>,
        // The taken frame's Ethernet, IP and UDP headers, byte-reversed
        // into lane order.
        rev: Signal<Local, Bits<REV_BITS>>,
        // The header shift register a beat on.
        hsh: Signal<Local, Bits<HDR_BITS>>,
    }
    consts {
        c_w: Constant<Bits<16>> = konst(W),
        c_b: Constant<Bits<16>> = konst(B),
        c_b8: Constant<Bits<8>> = konst(B),
        c_b2: Constant<Bits<16>> = konst(2 * B),
        c_b2_8: Constant<Bits<8>> = konst(2 * B),
        c_bt: Constant<Bits<16>> = konst(B + 4),
        // The version byte after the Ethernet, IP and UDP headers.
        c_ver: Constant<Bits<HDR_BITS>> = Constant::new(Bits::from(1) << 496),
        c_v4_at: Constant<Bits<16>> = konst(V4_AT),
        // The swap steps of the byte reversal: the halves they move, by
        // how much.
        c_lo: [Constant<Bits<REV_BITS>>; 6] = SWAPS_512.map(low_halves),
        c_sh: [Constant<Bits<16>>; 6] = SWAPS_512.map(konst),
    }
}

impl<const W: usize, const B: usize> Logic for TxGen<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, g_active, g_first, g_hrem, g_drem, g_erem, g_trem, g_prem, g_pay, g_pnz,
            g_last, g_kind, g_prev, g_s1, g_m
        );
        // The header register loads under `go` and `take`, which read the
        // flow control's inputs; its value is chosen by `load`, from
        // registers (`EnReg`), so a simulator shifts or lays out the header
        // once per cycle, not again in the pass for the inputs. With
        // `load` high, `take` is `go` or no frame active, so the frame is
        // taken whenever the register loads; with `load` low, `take` is low.
        self.g_hdr.clock.next = self.clock.val();
        self.g_hdr.en.next = self.go.val() | self.take.val();
        self.active.next = self.g_active.q.val();
        self.need.next = self.g_active.q.val() & self.g_pay.q.val() & self.g_pnz.q.val();
        self.last.next = self.g_last.q.val();
        self.prem.next = self.g_prem.q.val();

        // ---- The current beat. ----
        self.m_beat.en.next = self.go.val();
        self.m_beat.hdr.next = self.g_hdr.q.val().get_bits::<W>(0);
        if !self.g_kind.q.val().get_bit(1) {
            self.m_beat.hdr.next = self.g_hdr.q.val().get_bits::<W>(self.c_v4_at.val().index());
        }
        self.m_beat.hrem.next = self.g_hrem.q.val();
        self.m_beat.drem.next = self.g_drem.q.val();
        self.m_beat.erem.next = self.g_erem.q.val();
        self.m_beat.trem.next = self.g_trem.q.val();
        self.m_beat.kind.next = self.g_kind.q.val();
        self.m_beat.prev.next = self.g_prev.q.val();
        self.m_beat.pay_in.next = self.pay.val();
        self.m_crc.valid.next = self.go.val();
        self.m_crc.first.next = self.g_first.q.val();
        self.m_crc.last.next = self.g_last.q.val();
        self.m_crc.hold.next = !self.g_erem.q.val().any();
        self.m_crc.t.next = 0.into();
        if self.g_trem.q.val() < self.c_bt.val() {
            self.m_crc.t.next = self.g_trem.q.val().get_bits::<8>(0);
        }
        self.m_crc.s1.next = self.g_s1.q.val();
        self.m_crc.m.next = self.g_m.q.val();

        // The header a beat on.
        self.hsh.next = self.g_hdr.q.val() >> self.c_w.val();

        // ---- One beat on: the flags are those of the next beat. ----
        if self.go.val() {
            self.g_first.d.next = false;
            self.g_pay.d.next = self.g_hrem.q.val() < self.c_b2_8.val();
            self.g_last.d.next = self.g_trem.q.val() <= self.c_b2.val();
            self.g_hrem.d.next = 0.into();
            if self.g_hrem.q.val() > self.c_b8.val() {
                self.g_hrem.d.next = self.g_hrem.q.val() - self.c_b8.val();
            }
            self.g_drem.d.next = 0.into();
            if self.g_drem.q.val() > self.c_b8.val() {
                self.g_drem.d.next = self.g_drem.q.val() - self.c_b8.val();
            }
            self.g_erem.d.next = 0.into();
            if self.g_erem.q.val() > self.c_b.val() {
                self.g_erem.d.next = self.g_erem.q.val() - self.c_b.val();
            }
            self.g_trem.d.next = 0.into();
            if self.g_trem.q.val() > self.c_b.val() {
                self.g_trem.d.next = self.g_trem.q.val() - self.c_b.val();
            }
            // `need`, recomputed from the registers: reading the output
            // back here would close a false loop through the parent's `go`
            // (Verilator UNOPTFLAT).
            if self.g_active.q.val() & self.g_pay.q.val() & self.g_pnz.q.val() {
                self.g_prev.d.next = self.pay.val();
                self.g_pnz.d.next = self.g_prem.q.val() > self.c_b.val();
                self.g_prem.d.next = 0.into();
                if self.g_prem.q.val() > self.c_b.val() {
                    self.g_prem.d.next = self.g_prem.q.val() - self.c_b.val();
                }
            }
            if self.g_last.q.val() {
                self.g_active.d.next = false;
            }
        }

        // ---- The next frame: its header in lane order, its counters. ----
        self.rev.next = 0.into();
        self.g_hdr.d.next = self.hsh.val();
        if self.load.val() {
            // Ethernet, IP and UDP bytes (the 62 bytes, left-aligned at the
            // top, reversed by six swap steps: byte 0 in lane 0, an IPv4
            // frame's first in lane 20), the version byte (62), then the
            // MetaRoCE headers.
            self.rev.next = bit_cast::<REV_BITS, NET_BITS>(self.s_hdr.net.val()) << 16;
            for k in 0..6 {
                self.rev.next = ((self.rev.val() & self.c_lo[k].val()) << self.c_sh[k].val())
                    | ((self.rev.val() >> self.c_sh[k].val()) & self.c_lo[k].val());
            }
            self.g_hdr.d.next = bit_cast::<HDR_BITS, REV_BITS>(self.rev.val())
                | self.c_ver.val()
                | (bit_cast::<HDR_BITS, MR_BITS>(self.s_hdr.mr.val()) << 504);
        }
        if self.take.val() {
            self.g_active.d.next = true;
            self.g_first.d.next = true;
            self.g_kind.d.next = self.s_hdr.kind.val();
            self.g_hrem.d.next = self.s_hdr.hlen.val();
            self.g_drem.d.next = self.s_hdr.dstart.val();
            self.g_prem.d.next = self.s_frame.plen.val();
            self.g_pnz.d.next = self.s_frame.plen.val().any();
            // A header is longer than a beat (B <= 64 lanes): the first
            // beat holds no payload and is not the last.
            self.g_pay.d.next = false;
            self.g_last.d.next = false;
            self.g_erem.d.next = self.s_frame.icrc.val();
            self.g_trem.d.next = self.s_frame.flen.val();
            self.g_m.d.next = self.s_frame.zeros.val();
            self.g_s1.d.next = self.s_frame.seed.val();
        }

        if self.rst.val() {
            self.g_active.d.next = false;
        }
    }
}
