//! The TX table's slot state: a slot's fields as one word in [`LutRam`]s
//! ([`SlotFile`]) and the engine's arithmetic on them ([`SlotUpdate`]).
//!
//! Word layout, low bit first: `next_psn` (0), `una` (32), `inflight`
//! (64), `window` (96), `srtt` (128), `rttvar` (160), `ecn_ewma` (192),
//! `loss_ewma` (224), `samples` (256), `sent` (288), `retransmitted` (320),
//! `acked` (352), `lost` (384), `ce_marked` (416), `repaths` (448),
//! `timeouts` (480), `entropy` (512, 16 bits), `rtt_valid` (528),
//! `quarantined` (529), `backoff` (530, 4 bits): bits 533..0 are the
//! capture port's view ([`super::VIEW_BITS`]); then the last `ce_count`
//! applied (534).

use rust_hdl::prelude::*;

use super::VIEW_BITS;
use crate::helpers::{LutRam, native_block};

/// Bits of a slot's word.
pub(super) const SLOT_BITS: usize = 566;

/// Bits of the check port's copy: {last ce_count, quarantined, una,
/// next_psn}.
const CK_BITS: usize = 97;

native_block! {
    /// The slots' words for `2^SB` slots: one write port (`ws`, which the
    /// working read port `cur` also reads) and three more read ports, each
    /// a [`LutRam`] written alike (asynchronous reads: a word written at a
    /// clock edge is read from the next cycle on).
    SlotFile[SB]
    check { (1..=6).contains(&SB), "SlotFile<{SB}>: 2 to 64 slots" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Write `wdata` at slot `ws` on the clock edge."]
        we: Signal<In, Bit>,
        #[doc = "Slot written and read on `cur`."]
        ws: Signal<In, Bits<SB>>,
        #[doc = "Word written."]
        wdata: Signal<In, Bits<SLOT_BITS>>,
        #[doc = "Slot `ws`'s word."]
        cur: Signal<Out, Bits<SLOT_BITS>>,
        #[doc = "Slot of the read port."]
        rd_slot: Signal<In, Bits<SB>>,
        #[doc = "Its view."]
        rd: Signal<Out, Bits<VIEW_BITS>>,
        #[doc = "Slot of the capture port."]
        cap_slot: Signal<In, Bits<SB>>,
        #[doc = "Its view."]
        cap: Signal<Out, Bits<VIEW_BITS>>,
        #[doc = "Slot of the check port."]
        ck_slot: Signal<In, Bits<SB>>,
        #[doc = "Its {last ce_count, quarantined, una, next_psn}."]
        ck: Signal<Out, Bits<CK_BITS>>,
    }
    state {
        work: LutRam<SLOT_BITS, SB>,
        rd_ram: LutRam<VIEW_BITS, SB>,
        cap_ram: LutRam<VIEW_BITS, SB>,
        ck_ram: LutRam<CK_BITS, SB>,
    }
    consts {}
}

impl<const SB: usize> Logic for SlotFile<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        self.work.clock.next = self.clock.val();
        self.work.write_enable.next = self.we.val();
        self.work.write_address.next = self.ws.val();
        self.work.write_data.next = self.wdata.val();
        self.work.read_address.next = self.ws.val();
        self.cur.next = self.work.read_data.val();
        self.rd_ram.clock.next = self.clock.val();
        self.rd_ram.write_enable.next = self.we.val();
        self.rd_ram.write_address.next = self.ws.val();
        self.rd_ram.write_data.next = self.wdata.val().get_bits::<VIEW_BITS>(0);
        self.rd_ram.read_address.next = self.rd_slot.val();
        self.rd.next = self.rd_ram.read_data.val();
        self.cap_ram.clock.next = self.clock.val();
        self.cap_ram.write_enable.next = self.we.val();
        self.cap_ram.write_address.next = self.ws.val();
        self.cap_ram.write_data.next = self.wdata.val().get_bits::<VIEW_BITS>(0);
        self.cap_ram.read_address.next = self.cap_slot.val();
        self.cap.next = self.cap_ram.read_data.val();
        self.ck_ram.clock.next = self.clock.val();
        self.ck_ram.write_enable.next = self.we.val();
        self.ck_ram.write_address.next = self.ws.val();
        self.ck_ram.write_data.next = bit_cast::<CK_BITS, 64>(self.wdata.val().get_bits::<64>(0))
            | (bit_cast::<CK_BITS, 1>(self.wdata.val().get_bits::<1>(529)) << 64)
            | (bit_cast::<CK_BITS, 32>(self.wdata.val().get_bits::<32>(534)) << 65);
        self.ck_ram.read_address.next = self.ck_slot.val();
        self.ck.next = self.ck_ram.read_data.val();
    }
}

/// A slot's word after this cycle's events, the engine's rules
/// (`PathEntry::apply`, `RttEstimator::update`), combinational. Every
/// event is a bit; at most one changes each field in a cycle.
#[derive(LogicBlock, Default)]
pub(super) struct SlotUpdate {
    /// The word before.
    pub cur: Signal<In, Bits<SLOT_BITS>>,
    /// `Init`: every field 0 but `entropy`.
    pub init: Signal<In, Bit>,
    /// A send took a ring entry: `next_psn` + 1.
    pub next_inc: Signal<In, Bit>,
    /// It was data: `inflight` + `len`, `sent` + 1, `retransmitted` + `retx`.
    pub data_sent: Signal<In, Bit>,
    /// Its payload bytes.
    pub len: Signal<In, Bits<16>>,
    /// It was a retransmission.
    pub retx: Signal<In, Bit>,
    /// An RTT sample: `srtt`, `rttvar` (RFC 6298), `rtt_valid`.
    pub rtt: Signal<In, Bit>,
    /// The sample, ns.
    pub rtt_sample: Signal<In, Bits<32>>,
    /// Feedback: `ce_marked` + `new_ce`; the last `ce_count` if `ce_fresh`.
    pub ce: Signal<In, Bit>,
    /// The ACK's `ce_count` is not behind the last one.
    pub ce_fresh: Signal<In, Bit>,
    /// The ACK's `ce_count`.
    pub ce_count: Signal<In, Bits<32>>,
    /// CE marks it adds.
    pub new_ce: Signal<In, Bits<32>>,
    /// A move (`move_to`): `entropy`, EWMAs and `samples` 0, `repaths` + 1.
    pub repath: Signal<In, Bit>,
    /// A timeout's end: `timeouts` + 1, quarantined, backoff doubled.
    pub tmo_end: Signal<In, Bit>,
    /// Entropy for `init` and `repath`.
    pub entropy: Signal<In, Bits<16>>,
    /// `Window`: `window` = `value`.
    pub win: Signal<In, Bit>,
    /// The window.
    pub value: Signal<In, Bits<32>>,
    /// A data transmission resolved: `inflight` − `e_len`.
    pub sub_len: Signal<In, Bit>,
    /// Its payload bytes.
    pub e_len: Signal<In, Bits<16>>,
    /// It was lost: `lost` + 1.
    pub lost_one: Signal<In, Bit>,
    /// The loss EWMA takes a loss.
    pub loss_up: Signal<In, Bit>,
    /// `una` = `una_new`.
    pub una_set: Signal<In, Bit>,
    /// The new `una`.
    pub una_new: Signal<In, Bits<32>>,
    /// Loss-EWMA decays this cycle (up to 4 apply; 0: none).
    pub decay: Signal<In, Bits<9>>,
    /// An ACK's end: `acked` + `pkts`; a probe acknowledged ends quarantine.
    pub ack_done: Signal<In, Bit>,
    /// Data packets the ACK acknowledged.
    pub pkts: Signal<In, Bits<32>>,
    /// It acknowledged a probe.
    pub probe_acked: Signal<In, Bit>,
    /// Feedback's division done: ECN EWMA takes `q`, `samples` + `samples_add`.
    pub div_done: Signal<In, Bit>,
    /// The CE fraction, 16.16 (up to 1.0).
    pub q: Signal<In, Bits<17>>,
    /// Packets the ACK acknowledged.
    pub samples_add: Signal<In, Bits<32>>,
    /// The word after.
    pub wdata: Signal<Out, Bits<SLOT_BITS>>,
    n_next: Signal<Local, Bits<32>>,
    n_una: Signal<Local, Bits<32>>,
    n_infl: Signal<Local, Bits<32>>,
    n_win: Signal<Local, Bits<32>>,
    n_srtt: Signal<Local, Bits<32>>,
    n_rttvar: Signal<Local, Bits<32>>,
    n_ecn: Signal<Local, Bits<32>>,
    n_loss: Signal<Local, Bits<32>>,
    n_samples: Signal<Local, Bits<32>>,
    n_sent: Signal<Local, Bits<32>>,
    n_retx: Signal<Local, Bits<32>>,
    n_acked: Signal<Local, Bits<32>>,
    n_lost: Signal<Local, Bits<32>>,
    n_ce: Signal<Local, Bits<32>>,
    n_repaths: Signal<Local, Bits<32>>,
    n_tmo: Signal<Local, Bits<32>>,
    n_entropy: Signal<Local, Bits<16>>,
    n_rttok: Signal<Local, Bit>,
    n_quar: Signal<Local, Bit>,
    n_backoff: Signal<Local, Bits<4>>,
    n_lastce: Signal<Local, Bits<32>>,
    // RTT: |srtt − sample|, 3·rttvar + err, 7·srtt + sample.
    err: Signal<Local, Bits<32>>,
    v34: Signal<Local, Bits<34>>,
    m35: Signal<Local, Bits<35>>,
    // The loss EWMA after 0..4 decays (`ewma(x, 0)`).
    l0: Signal<Local, Bits<32>>,
    l1: Signal<Local, Bits<32>>,
    l2: Signal<Local, Bits<32>>,
    l3: Signal<Local, Bits<32>>,
    l4: Signal<Local, Bits<32>>,
}

impl Logic for SlotUpdate {
    #[hdl_gen]
    fn update(&mut self) {
        self.n_next.next = self.cur.val().get_bits::<32>(0);
        self.n_una.next = self.cur.val().get_bits::<32>(32);
        self.n_infl.next = self.cur.val().get_bits::<32>(64);
        self.n_win.next = self.cur.val().get_bits::<32>(96);
        self.n_srtt.next = self.cur.val().get_bits::<32>(128);
        self.n_rttvar.next = self.cur.val().get_bits::<32>(160);
        self.n_ecn.next = self.cur.val().get_bits::<32>(192);
        self.n_loss.next = self.cur.val().get_bits::<32>(224);
        self.n_samples.next = self.cur.val().get_bits::<32>(256);
        self.n_sent.next = self.cur.val().get_bits::<32>(288);
        self.n_retx.next = self.cur.val().get_bits::<32>(320);
        self.n_acked.next = self.cur.val().get_bits::<32>(352);
        self.n_lost.next = self.cur.val().get_bits::<32>(384);
        self.n_ce.next = self.cur.val().get_bits::<32>(416);
        self.n_repaths.next = self.cur.val().get_bits::<32>(448);
        self.n_tmo.next = self.cur.val().get_bits::<32>(480);
        self.n_entropy.next = self.cur.val().get_bits::<16>(512);
        self.n_rttok.next = self.cur.val().get_bit(528);
        self.n_quar.next = self.cur.val().get_bit(529);
        self.n_backoff.next = self.cur.val().get_bits::<4>(530);
        self.n_lastce.next = self.cur.val().get_bits::<32>(534);

        // Sends.
        if self.next_inc.val() {
            self.n_next.next = self.n_next.val() + 1;
        }
        if self.data_sent.val() {
            self.n_infl.next = self.n_infl.val() + bit_cast::<32, 16>(self.len.val());
            self.n_sent.next = self.n_sent.val() + 1;
            if self.retx.val() {
                self.n_retx.next = self.n_retx.val() + 1;
            }
        }
        // Resolutions (ACK walk, Lose, Timeout) and the ACK's end.
        if self.sub_len.val() {
            self.n_infl.next = self.n_infl.val() - bit_cast::<32, 16>(self.e_len.val());
        }
        if self.lost_one.val() {
            self.n_lost.next = self.n_lost.val() + 1;
        }
        self.l0.next = self.cur.val().get_bits::<32>(224);
        self.l1.next = self.l0.val() - (self.l0.val() >> 4);
        self.l2.next = self.l1.val() - (self.l1.val() >> 4);
        self.l3.next = self.l2.val() - (self.l2.val() >> 4);
        self.l4.next = self.l3.val() - (self.l3.val() >> 4);
        if self.loss_up.val() {
            // ewma(x, 1.0) adds 1.0 >> 4.
            self.n_loss.next = self.l1.val() + 4096;
        }
        if self.decay.val() == 1 {
            self.n_loss.next = self.l1.val();
        } else if self.decay.val() == 2 {
            self.n_loss.next = self.l2.val();
        } else if self.decay.val() == 3 {
            self.n_loss.next = self.l3.val();
        } else if self.decay.val() != 0 {
            self.n_loss.next = self.l4.val();
        }
        if self.una_set.val() {
            self.n_una.next = self.una_new.val();
        }
        if self.ack_done.val() {
            self.n_acked.next = self.n_acked.val() + self.pkts.val();
            if self.probe_acked.val() {
                self.n_quar.next = false;
            }
        }
        // Feedback: RTT (RFC 6298), CE count, then the ECN EWMA.
        self.err.next = self.rtt_sample.val() - self.n_srtt.val();
        if self.n_srtt.val() > self.rtt_sample.val() {
            self.err.next = self.n_srtt.val() - self.rtt_sample.val();
        }
        self.v34.next = bit_cast::<34, 32>(self.n_rttvar.val())
            + (bit_cast::<34, 32>(self.n_rttvar.val()) << 1)
            + bit_cast::<34, 32>(self.err.val());
        self.m35.next = (bit_cast::<35, 32>(self.n_srtt.val()) << 3)
            - bit_cast::<35, 32>(self.n_srtt.val())
            + bit_cast::<35, 32>(self.rtt_sample.val());
        if self.rtt.val() {
            self.n_srtt.next = bit_cast::<32, 35>(self.m35.val() >> 3);
            self.n_rttvar.next = bit_cast::<32, 34>(self.v34.val() >> 2);
            if !self.n_rttok.val() {
                self.n_srtt.next = self.rtt_sample.val();
                self.n_rttvar.next = self.rtt_sample.val() >> 1;
            }
            self.n_rttok.next = true;
        }
        if self.ce.val() {
            self.n_ce.next = self.n_ce.val() + self.new_ce.val();
            if self.ce_fresh.val() {
                self.n_lastce.next = self.ce_count.val();
            }
        }
        if self.div_done.val() {
            self.n_ecn.next = self.n_ecn.val() - (self.n_ecn.val() >> 4)
                + (bit_cast::<32, 17>(self.q.val()) >> 4);
            self.n_samples.next = self.n_samples.val() + self.samples_add.val();
        }
        // Window, moves, timeouts, Init.
        if self.win.val() {
            self.n_win.next = self.value.val();
        }
        if self.tmo_end.val() {
            self.n_tmo.next = self.n_tmo.val() + 1;
            self.n_backoff.next = 1.into();
            if self.cur.val().get_bit(529) {
                self.n_backoff.next = 8.into();
                if self.cur.val().get_bits::<4>(530) < 4 {
                    self.n_backoff.next = bit_cast::<4, 3>(self.cur.val().get_bits::<3>(530)) << 1;
                }
            }
            self.n_quar.next = true;
        }
        if self.repath.val() {
            self.n_entropy.next = self.entropy.val();
            self.n_ecn.next = 0.into();
            self.n_loss.next = 0.into();
            self.n_samples.next = 0.into();
            self.n_repaths.next = self.n_repaths.val() + 1;
        }
        if self.init.val() {
            self.n_next.next = 0.into();
            self.n_una.next = 0.into();
            self.n_infl.next = 0.into();
            self.n_win.next = 0.into();
            self.n_srtt.next = 0.into();
            self.n_rttvar.next = 0.into();
            self.n_ecn.next = 0.into();
            self.n_loss.next = 0.into();
            self.n_samples.next = 0.into();
            self.n_sent.next = 0.into();
            self.n_retx.next = 0.into();
            self.n_acked.next = 0.into();
            self.n_lost.next = 0.into();
            self.n_ce.next = 0.into();
            self.n_repaths.next = 0.into();
            self.n_tmo.next = 0.into();
            self.n_entropy.next = self.entropy.val();
            self.n_rttok.next = false;
            self.n_quar.next = false;
            self.n_backoff.next = 0.into();
            self.n_lastce.next = 0.into();
        }
        self.wdata.next = bit_cast::<SLOT_BITS, 32>(self.n_next.val())
            | (bit_cast::<SLOT_BITS, 32>(self.n_una.val()) << 32)
            | (bit_cast::<SLOT_BITS, 32>(self.n_infl.val()) << 64)
            | (bit_cast::<SLOT_BITS, 32>(self.n_win.val()) << 96)
            | (bit_cast::<SLOT_BITS, 32>(self.n_srtt.val()) << 128)
            | (bit_cast::<SLOT_BITS, 32>(self.n_rttvar.val()) << 160)
            | (bit_cast::<SLOT_BITS, 32>(self.n_ecn.val()) << 192)
            | (bit_cast::<SLOT_BITS, 32>(self.n_loss.val()) << 224)
            | (bit_cast::<SLOT_BITS, 32>(self.n_samples.val()) << 256)
            | (bit_cast::<SLOT_BITS, 32>(self.n_sent.val()) << 288)
            | (bit_cast::<SLOT_BITS, 32>(self.n_retx.val()) << 320)
            | (bit_cast::<SLOT_BITS, 32>(self.n_acked.val()) << 352)
            | (bit_cast::<SLOT_BITS, 32>(self.n_lost.val()) << 384)
            | (bit_cast::<SLOT_BITS, 32>(self.n_ce.val()) << 416)
            | (bit_cast::<SLOT_BITS, 32>(self.n_repaths.val()) << 448)
            | (bit_cast::<SLOT_BITS, 32>(self.n_tmo.val()) << 480)
            | (bit_cast::<SLOT_BITS, 16>(self.n_entropy.val()) << 512)
            | (bit_cast::<SLOT_BITS, 1>(self.n_rttok.val().into()) << 528)
            | (bit_cast::<SLOT_BITS, 1>(self.n_quar.val().into()) << 529)
            | (bit_cast::<SLOT_BITS, 4>(self.n_backoff.val()) << 530)
            | (bit_cast::<SLOT_BITS, 32>(self.n_lastce.val()) << 534);
    }
}
