//! The slot map of [`AckRx`](super::AckRx) ([`AckRxMap`]): which (QPN,
//! path) each TX table slot holds ([`cfg`](mod@super::cfg)), searched for
//! an ACK's event.

use rust_hdl::prelude::*;

use super::links::{HitOut, RemapOut};
use super::slot_regs;
use crate::bus::CfgIn;
use crate::helpers::{konst, native_block};

native_block! {
    /// The slot map of `2^SB` slots: registers searched by
    /// loop-and-compare (lowest matching slot wins; only an ACK's event
    /// searches). A write is registered first and applies one cycle after
    /// `cfg.we` (so no path runs from `cfg` to the table's operation port
    /// through the block).
    AckRxMap[SB]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: clears the map."]
        rst: Signal<In, Bit>,
        #[doc = "Slot map writes (entries beyond the slots ignored)."]
        cfg: CfgIn<6, 49>,
        #[doc = "The tap's event pulse: an ACK's searches."]
        ev_valid: Signal<In, Bit>,
        #[doc = "The event's verdict code (an ACK's is 10, handed to the firmware)."]
        ev_code: Signal<In, Bits<5>>,
        #[doc = "The event's opcode."]
        ev_opcode: Signal<In, Bits<8>>,
        #[doc = "The event's destination QPN, searched."]
        ev_dst_qpn: Signal<In, Bits<32>>,
        #[doc = "The event's path, searched."]
        ev_path: Signal<In, Bits<16>>,
        #[doc = "The slot holding the event's (QPN, path)."]
        m_hit: HitOut<SB>,
        #[doc = "The registered write: its slot is a new path."]
        m_remap: RemapOut,
    }
    state {
        // A slot map write, registered. TX table slot s holds (QPN,
        // path) when valid.
        map_we: DFF<Bit>,
        map_addr: DFF<Bits<6>>,
        map_word: DFF<Bits<49>>,
        map_valid: Vec<DFF<Bit>> = slot_regs(SB),
        map_qpn: Vec<DFF<Bits<32>>> = slot_regs(SB),
        map_path: Vec<DFF<Bits<16>>> = slot_regs(SB),
        hit: Signal<Local, Bit>,
        hit_slot: Signal<Local, Bits<SB>>,
    }
    consts {
        k_firmware: Constant<Bits<5>> = konst(crate::rx_place::Verdict::Firmware as usize),
        k_op_ack: Constant<Bits<8>> = konst(metaroce_proto::Opcode::Ack as usize),
    }
}

impl<const SB: usize> AckRxMap<SB> {
    /// Slots in the map.
    const N: usize = 1 << SB;
}

impl<const SB: usize> Logic for AckRxMap<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, map_we, map_addr, map_word);
        for i in 0..Self::N {
            self.map_valid[i].clock.next = self.clock.val();
            self.map_valid[i].d.next = self.map_valid[i].q.val();
            self.map_qpn[i].clock.next = self.clock.val();
            self.map_qpn[i].d.next = self.map_qpn[i].q.val();
            self.map_path[i].clock.next = self.clock.val();
            self.map_path[i].d.next = self.map_path[i].q.val();
        }
        self.map_we.d.next = self.cfg.we.val();
        self.map_addr.d.next = self.cfg.addr.val();
        self.map_word.d.next = self.cfg.data.val();
        if self.map_we.q.val() {
            for i in 0..Self::N {
                if self.map_addr.q.val() == i.to_bits::<6>() {
                    self.map_qpn[i].d.next = self.map_word.q.val().get_bits::<32>(0);
                    self.map_path[i].d.next = self.map_word.q.val().get_bits::<16>(32);
                    self.map_valid[i].d.next = self.map_word.q.val().get_bit(48);
                }
            }
        }
        self.m_remap.we.next = self.map_we.q.val();
        self.m_remap.addr.next = self.map_addr.q.val();
        self.hit.next = false;
        self.hit_slot.next = 0.into();
        // Its inputs are the tap's ports alone, so no path runs from the
        // decode through the search and back.
        if self.ev_valid.val()
            & (self.ev_code.val() == self.k_firmware.val())
            & (self.ev_opcode.val() == self.k_op_ack.val())
        {
            for i in 0..Self::N {
                if !self.hit.val()
                    & self.map_valid[i].q.val()
                    & (self.map_qpn[i].q.val() == self.ev_dst_qpn.val())
                    & (self.map_path[i].q.val() == self.ev_path.val())
                {
                    self.hit.next = true;
                    self.hit_slot.next = i.to_bits::<SB>();
                }
            }
        }
        self.m_hit.hit.next = self.hit.val();
        self.m_hit.slot.next = self.hit_slot.val();
        if self.rst.val() {
            for i in 0..Self::N {
                self.map_valid[i].d.next = false;
            }
        }
    }
}
