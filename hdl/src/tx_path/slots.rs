//! The TX table's slot words: a slot's fields as one word in [`LutRam`]s
//! ([`SlotFile`]), with the read ports that show them (`rd_*` with
//! `TxPath::can_send`, `ck_*`; combinational: a word written at a clock
//! edge is read from the next cycle on). The engine's arithmetic on the
//! word is [`super::update::SlotUpdate`]; the capture port's word is a
//! register of the table's control ([`super::TxPathTable`]).
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
use crate::bus::{TxCheckPort, TxReadPort};
use crate::helpers::{LutRam, native_block};

/// Bits of a slot's word.
pub(super) const SLOT_BITS: usize = 566;

/// Bits of the check port's copy: {last ce_count, quarantined, una,
/// next_psn}.
const CK_BITS: usize = 97;

native_block! {
    /// The slots' words for `2^SB` slots: one write port (`ws`, which the
    /// working read port `cur` also reads) and two more read ports, each
    /// a [`LutRam`] written alike (asynchronous reads: a word written at a
    /// clock edge is read from the next cycle on), the `rd` and `ck` ports'
    /// words split into their fields.
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
        #[doc = "Read port: a slot's fields and `TxPath::can_send(rd_len)`."]
        rd: TxReadPort<SB>,
        #[doc = "Check port: a slot's `una`, `next_psn`, last CE count, `quarantined`."]
        ck: TxCheckPort<SB>,
    }
    state {
        work: LutRam<SLOT_BITS, SB>,
        rd_ram: LutRam<VIEW_BITS, SB>,
        ck_ram: LutRam<CK_BITS, SB>,
        // The read port's word, its PSN count and window sum.
        rd_w: Signal<Local, Bits<VIEW_BITS>>,
        rd_count: Signal<Local, Bits<32>>,
        rd_sum: Signal<Local, Bits<33>>,
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
        self.rd_ram.read_address.next = self.rd.slot.val();
        self.rd_w.next = self.rd_ram.read_data.val();
        self.ck_ram.clock.next = self.clock.val();
        self.ck_ram.write_enable.next = self.we.val();
        self.ck_ram.write_address.next = self.ws.val();
        self.ck_ram.write_data.next = bit_cast::<CK_BITS, 64>(self.wdata.val().get_bits::<64>(0))
            | (bit_cast::<CK_BITS, 1>(self.wdata.val().get_bits::<1>(529)) << 64)
            | (bit_cast::<CK_BITS, 32>(self.wdata.val().get_bits::<32>(534)) << 65);
        self.ck_ram.read_address.next = self.ck.slot.val();
        self.ck.next_psn.next = self.ck_ram.read_data.val().get_bits::<32>(0);
        self.ck.una.next = self.ck_ram.read_data.val().get_bits::<32>(32);
        self.ck.quarantined.next = self.ck_ram.read_data.val().get_bit(64);
        self.ck.last_ce.next = self.ck_ram.read_data.val().get_bits::<32>(65);

        // The read port's fields, and `TxPath::can_send`.
        self.rd.next_psn.next = self.rd_w.val().get_bits::<32>(0);
        self.rd.una.next = self.rd_w.val().get_bits::<32>(32);
        self.rd.inflight.next = self.rd_w.val().get_bits::<32>(64);
        self.rd.window.next = self.rd_w.val().get_bits::<32>(96);
        self.rd.srtt.next = self.rd_w.val().get_bits::<32>(128);
        self.rd.rttvar.next = self.rd_w.val().get_bits::<32>(160);
        self.rd.ecn_ewma.next = self.rd_w.val().get_bits::<32>(192);
        self.rd.loss_ewma.next = self.rd_w.val().get_bits::<32>(224);
        self.rd.samples.next = self.rd_w.val().get_bits::<32>(256);
        self.rd.sent.next = self.rd_w.val().get_bits::<32>(288);
        self.rd.retransmitted.next = self.rd_w.val().get_bits::<32>(320);
        self.rd.acked.next = self.rd_w.val().get_bits::<32>(352);
        self.rd.lost.next = self.rd_w.val().get_bits::<32>(384);
        self.rd.ce_marked.next = self.rd_w.val().get_bits::<32>(416);
        self.rd.repaths.next = self.rd_w.val().get_bits::<32>(448);
        self.rd.timeouts.next = self.rd_w.val().get_bits::<32>(480);
        self.rd.entropy.next = self.rd_w.val().get_bits::<16>(512);
        self.rd.rtt_valid.next = self.rd_w.val().get_bit(528);
        self.rd.quarantined.next = self.rd_w.val().get_bit(529);
        self.rd.backoff.next = self.rd_w.val().get_bits::<4>(530);
        self.rd_count.next = self.rd_w.val().get_bits::<32>(0) - self.rd_w.val().get_bits::<32>(32);
        self.rd_sum.next = bit_cast::<33, 32>(self.rd_w.val().get_bits::<32>(64))
            + bit_cast::<33, 16>(self.rd.len.val());
        self.rd.can_send.next = !self.rd_w.val().get_bit(529)
            & (self.rd_count.val() < 256)
            & ((self.rd_w.val().get_bits::<32>(64) == 0)
                | (self.rd_sum.val() <= bit_cast::<33, 32>(self.rd_w.val().get_bits::<32>(96))));
    }
}
