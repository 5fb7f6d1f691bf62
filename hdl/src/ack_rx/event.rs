//! The verdict events of [`AckRx`](super::AckRx) ([`AckRxEvent`]): an
//! ACK's event paired with its datagram's entry, decoded and sent to the
//! queue with its slot.

use rust_hdl::prelude::*;

use super::Q_BITS;
use super::links::{EntryIn, HitIn, PushOut};
use crate::AckHigh;
use crate::helpers::{konst, native_block};

native_block! {
    /// An event with verdict 10 (handed to the firmware) and opcode ACK:
    /// its datagram's entry decoded (network order to values) with the
    /// highest path PSN it reports ([`AckHigh`]), its slot searched, and
    /// pushed to the queue when the entry's path PSN and timestamp equal
    /// the event's (the pairing guard) and a slot holds it.
    AckRxEvent[SB]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: clears the counters."]
        rst: Signal<In, Bit>,
        #[doc = "Verdict event pulse."]
        ev_valid: Signal<In, Bit>,
        #[doc = "Its verdict code."]
        ev_code: Signal<In, Bits<5>>,
        #[doc = "Its opcode."]
        ev_opcode: Signal<In, Bits<8>>,
        #[doc = "Its path PSN."]
        ev_path_psn: Signal<In, Bits<32>>,
        #[doc = "Its timestamp."]
        ev_timestamp: Signal<In, Bits<64>>,
        #[doc = "Its datagram's entry."]
        s_entry: EntryIn,
        #[doc = "The slot map's answer."]
        s_hit: HitIn<SB>,
        #[doc = "The ACK to queue."]
        m_push: PushOut<SB>,
        #[doc = "Events whose entry differed (`cnt.pair_err`)."]
        pair_err: Signal<Out, Bits<32>>,
        #[doc = "ACKs with no slot (`cnt.unmapped`)."]
        unmapped: Signal<Out, Bits<32>>,
    }
    state {
        // The entry decoded (values), and the event's checks.
        octet: Signal<Local, Bits<8>>,
        e_psn: Signal<Local, Bits<32>>,
        e_ts: Signal<Local, Bits<64>>,
        e_conn: Signal<Local, Bits<32>>,
        e_cum: Signal<Local, Bits<32>>,
        e_echo: Signal<Local, Bits<64>>,
        e_ce: Signal<Local, Bits<32>>,
        e_rx: Signal<Local, Bits<32>>,
        e_ack: Signal<Local, Bit>,
        e_same: Signal<Local, Bit>,
        // The highest path PSN the ACK reports.
        highest: AckHigh,
        n_unmapped: DFF<Bits<32>>,
        n_pair_err: DFF<Bits<32>>,
    }
    consts {
        k_firmware: Constant<Bits<5>> = konst(crate::rx_place::Verdict::Firmware as usize),
        k_op_ack: Constant<Bits<8>> = konst(metaroce_proto::Opcode::Ack as usize),
    }
}

impl<const SB: usize> Logic for AckRxEvent<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, n_unmapped, n_pair_err);
        self.e_ack.next = self.ev_valid.val()
            & (self.ev_code.val() == self.k_firmware.val())
            & (self.ev_opcode.val() == self.k_op_ack.val());
        self.octet.next = 0.into();
        self.e_psn.next = 0.into();
        self.e_ts.next = 0.into();
        self.e_conn.next = 0.into();
        self.e_cum.next = 0.into();
        self.e_echo.next = 0.into();
        self.e_ce.next = 0.into();
        self.e_rx.next = 0.into();
        if self.e_ack.val() {
            // Big-endian wire bytes (lane order) to values.
            for j in 0..4 {
                self.octet.next = self.s_entry.data.val().get_bits::<8>(8 * j);
                self.e_psn.next = self.e_psn.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.s_entry.data.val().get_bits::<8>(96 + 8 * j);
                self.e_conn.next = self.e_conn.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.s_entry.data.val().get_bits::<8>(128 + 8 * j);
                self.e_cum.next = self.e_cum.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.s_entry.data.val().get_bits::<8>(480 + 8 * j);
                self.e_ce.next = self.e_ce.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
                self.octet.next = self.s_entry.data.val().get_bits::<8>(512 + 8 * j);
                self.e_rx.next = self.e_rx.val()
                    | (bit_cast::<32, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<16>());
            }
            for j in 0..8 {
                self.octet.next = self.s_entry.data.val().get_bits::<8>(32 + 8 * j);
                self.e_ts.next = self.e_ts.val()
                    | (bit_cast::<64, 8>(self.octet.val()) << (56 - 8 * j).to_bits::<16>());
                self.octet.next = self.s_entry.data.val().get_bits::<8>(416 + 8 * j);
                self.e_echo.next = self.e_echo.val()
                    | (bit_cast::<64, 8>(self.octet.val()) << (56 - 8 * j).to_bits::<16>());
            }
        }
        // The event is the captured datagram's (the check guards the pairing).
        self.e_same.next = (self.e_psn.val() == self.ev_path_psn.val())
            & (self.e_ts.val() == self.ev_timestamp.val());
        // The highest path PSN it reports (`AckHigh`; only an ACK's event
        // computes it). Its inputs come from ports alone, not from the
        // decode above (whose shared `octet` temporary would tie them to
        // the queue entry that reads the output: Verilator would see a
        // loop), so Verilator orders them apart.
        self.highest.en.next = self.ev_valid.val()
            & (self.ev_code.val() == self.k_firmware.val())
            & (self.ev_opcode.val() == self.k_op_ack.val());
        self.highest.cum.next = (bit_cast::<32, 8>(self.s_entry.data.val().get_bits::<8>(128))
            << 24)
            | (bit_cast::<32, 8>(self.s_entry.data.val().get_bits::<8>(136)) << 16)
            | (bit_cast::<32, 8>(self.s_entry.data.val().get_bits::<8>(144)) << 8)
            | bit_cast::<32, 8>(self.s_entry.data.val().get_bits::<8>(152));
        self.highest.sack.next = self.s_entry.data.val().get_bits::<256>(160);
        self.m_push.valid.next = self.e_ack.val() & self.e_same.val() & self.s_hit.hit.val();
        self.m_push.slot.next = self.s_hit.slot.val();
        // The decoded fields are 0 without an ACK's event (the SACK is
        // wired through): a simulator lays them into the word only then.
        self.m_push.entry.next =
            bit_cast::<Q_BITS, 256>(self.s_entry.data.val().get_bits::<256>(160)) << 64;
        if self.e_ack.val() {
            self.m_push.entry.next = self.m_push.entry.val()
                | bit_cast::<Q_BITS, 32>(self.e_conn.val())
                | (bit_cast::<Q_BITS, 32>(self.e_cum.val()) << 32)
                | (bit_cast::<Q_BITS, 64>(self.e_echo.val()) << 320)
                | (bit_cast::<Q_BITS, 32>(self.e_ce.val()) << 384)
                | (bit_cast::<Q_BITS, 32>(self.e_rx.val()) << 416)
                | (bit_cast::<Q_BITS, 32>(self.highest.high.val()) << 448);
        }
        if self.e_ack.val() {
            if !self.e_same.val() {
                self.n_pair_err.d.next = self.n_pair_err.q.val() + 1;
            } else if !self.s_hit.hit.val() {
                self.n_unmapped.d.next = self.n_unmapped.q.val() + 1;
            }
        }
        self.pair_err.next = self.n_pair_err.q.val();
        self.unmapped.next = self.n_unmapped.q.val();
        if self.rst.val() {
            self.n_pair_err.d.next = 0.into();
            self.n_unmapped.d.next = 0.into();
        }
    }
}
