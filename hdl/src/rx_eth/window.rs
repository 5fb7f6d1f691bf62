//! Verdict stage V1 of [`RxEth`](super::RxEth) ([`RxEthWindow`]): where
//! the IP header is.

use rust_hdl::prelude::*;

use super::links::{FrameIn, WindowOut};
use crate::helpers::native_block;

native_block! {
    /// V1 (registers, t + 2, the cycle after the frame's end is on
    /// `s_frame`): the EtherType after at most one tag, the 66-byte IP/UDP
    /// window behind 14 or 18 bytes (byte o at bit 8·o), the last beat's
    /// byte count.
    RxEthWindow [B]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: the stage empties."]
        rst: Signal<In, Bit>,
        #[doc = "The frame that ended."]
        s_frame: FrameIn<B>,
        #[doc = "The stage's registers."]
        m_win: WindowOut,
    }
    state {
        a_v: DFF<Bit>,
        a_vlan: DFF<Bit>,
        a_tl: DFF<Bit>,
        a_et: DFF<Bits<16>>,
        a_ipw: DFF<Bits<528>>,
        a_kc: DFF<Bits<16>>,
        a_beats: DFF<Bits<16>>,
        a_start: DFF<Bits<16>>,
        a_end: DFF<Bits<16>>,
        kc: Signal<Local, Bits<16>>,
    }
    consts {}
}

impl<const B: usize> Logic for RxEthWindow<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, a_v, a_vlan, a_tl, a_et, a_ipw, a_kc, a_beats, a_start, a_end
        );
        self.a_v.d.next = self.s_frame.v.val();
        // The window loads with a frame's end only (`v`), and holds
        // otherwise: V2 reads it with `v` (its checksum reads the held
        // window then, as it read the same window before).
        self.kc.next = 0.into();
        if self.s_frame.v.val() {
            self.a_vlan.d.next = self.s_frame.vlan.val();
            self.a_tl.d.next = self.s_frame.tl.val();
            self.a_beats.d.next = self.s_frame.beats.val();
            self.a_start.d.next = self.s_frame.start.val();
            self.a_end.d.next = self.s_frame.end.val();
            if self.s_frame.vlan.val() {
                self.a_et.d.next = self.s_frame.hdr.val().get_bits::<16>(32);
                self.a_ipw.d.next = self.s_frame.hdr.val().get_bits::<528>(48);
            } else {
                self.a_et.d.next = self.s_frame.hdr.val().get_bits::<16>(0);
                self.a_ipw.d.next = self.s_frame.hdr.val().get_bits::<528>(16);
            }
            // The last beat's bytes (`tkeep` is packed).
            for i in 0..B {
                if self.s_frame.keep.val().get_bit(i) {
                    self.kc.next = (i + 1).to_bits::<16>();
                }
            }
            self.a_kc.d.next = self.kc.val();
        }
        self.m_win.v.next = self.a_v.q.val();
        self.m_win.vlan.next = self.a_vlan.q.val();
        self.m_win.tl.next = self.a_tl.q.val();
        self.m_win.et.next = self.a_et.q.val();
        self.m_win.ipw.next = self.a_ipw.q.val();
        self.m_win.kc.next = self.a_kc.q.val();
        self.m_win.beats.next = self.a_beats.q.val();
        self.m_win.start.next = self.a_start.q.val();
        self.m_win.end.next = self.a_end.q.val();
        if self.rst.val() {
            self.a_v.d.next = false;
        }
    }
}
