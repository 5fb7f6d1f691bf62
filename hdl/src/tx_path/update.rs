//! The TX table's slot update: a slot's word after this cycle's events,
//! the engine's rules (`PathEntry::apply`), combinational, so the update
//! logic exists once rather than per slot. The RTT estimator and the loss
//! EWMA are [`super::est`]'s; the events of the walk, the ACK's end and
//! `Feedback`'s division arrive by bus ([`super::links`]).

use rust_hdl::prelude::*;

use super::est::{LossEwma, RttUpdate};
use super::links::{AckEndIn, DivEvIn, OpEvIn, WalkEvIn};
use super::slots::SLOT_BITS;

/// A slot's word after this cycle's events, the engine's rules
/// (`PathEntry::apply`), combinational. Every event is a bit; at most one
/// changes each field in a cycle; `Init` clears every field but `entropy`.
#[derive(LogicBlock, Default)]
pub(super) struct SlotUpdate {
    /// The word before.
    pub cur: Signal<In, Bits<SLOT_BITS>>,
    /// The taken operation's changes.
    pub op: OpEvIn,
    /// The walk's changes.
    pub walk: WalkEvIn,
    /// An ACK's end.
    pub ack_end: AckEndIn,
    /// `Feedback`'s division.
    pub div: DivEvIn,
    /// The word after.
    pub wdata: Signal<Out, Bits<SLOT_BITS>>,
    rtt_est: RttUpdate,
    loss_est: LossEwma,
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
}

impl Logic for SlotUpdate {
    #[hdl_gen]
    fn update(&mut self) {
        self.rtt_est.en.next = self.op.rtt.val();
        self.rtt_est.sample.next = self.op.rtt_sample.val();
        self.rtt_est.srtt.next = self.cur.val().get_bits::<32>(128);
        self.rtt_est.rttvar.next = self.cur.val().get_bits::<32>(160);
        self.rtt_est.valid.next = self.cur.val().get_bit(528);
        self.loss_est.loss.next = self.cur.val().get_bits::<32>(224);
        self.loss_est.up.next = self.walk.loss_up.val();
        self.loss_est.decay.next = self.ack_end.decay.val();
        self.n_next.next = self.cur.val().get_bits::<32>(0);
        self.n_una.next = self.cur.val().get_bits::<32>(32);
        self.n_infl.next = self.cur.val().get_bits::<32>(64);
        self.n_win.next = self.cur.val().get_bits::<32>(96);
        self.n_srtt.next = self.rtt_est.srtt_n.val();
        self.n_rttvar.next = self.rtt_est.rttvar_n.val();
        self.n_ecn.next = self.cur.val().get_bits::<32>(192);
        self.n_loss.next = self.loss_est.loss_n.val();
        self.n_samples.next = self.cur.val().get_bits::<32>(256);
        self.n_sent.next = self.cur.val().get_bits::<32>(288);
        self.n_retx.next = self.cur.val().get_bits::<32>(320);
        self.n_acked.next = self.cur.val().get_bits::<32>(352);
        self.n_lost.next = self.cur.val().get_bits::<32>(384);
        self.n_ce.next = self.cur.val().get_bits::<32>(416);
        self.n_repaths.next = self.cur.val().get_bits::<32>(448);
        self.n_tmo.next = self.cur.val().get_bits::<32>(480);
        self.n_entropy.next = self.cur.val().get_bits::<16>(512);
        self.n_rttok.next = self.rtt_est.valid_n.val();
        self.n_quar.next = self.cur.val().get_bit(529);
        self.n_backoff.next = self.cur.val().get_bits::<4>(530);
        self.n_lastce.next = self.cur.val().get_bits::<32>(534);

        // Sends.
        if self.op.next_inc.val() {
            self.n_next.next = self.n_next.val() + 1;
        }
        if self.op.data_sent.val() {
            self.n_infl.next = self.n_infl.val() + bit_cast::<32, 16>(self.op.len.val());
            self.n_sent.next = self.n_sent.val() + 1;
            if self.op.retx.val() {
                self.n_retx.next = self.n_retx.val() + 1;
            }
        }
        // Resolutions (ACK walk, Lose, Timeout) and the ACK's end.
        if self.walk.sub_len.val() {
            self.n_infl.next = self.n_infl.val() - bit_cast::<32, 16>(self.walk.e_len.val());
        }
        if self.walk.lost_one.val() {
            self.n_lost.next = self.n_lost.val() + 1;
        }
        if self.walk.una_set.val() {
            self.n_una.next = self.walk.una_new.val();
        }
        if self.ack_end.done.val() {
            self.n_acked.next = self.n_acked.val() + self.ack_end.pkts.val();
            if self.ack_end.probe_acked.val() {
                self.n_quar.next = false;
            }
        }
        // Feedback: CE count, then the ECN EWMA.
        if self.op.ce.val() {
            self.n_ce.next = self.n_ce.val() + self.op.new_ce.val();
            if self.op.ce_fresh.val() {
                self.n_lastce.next = self.op.ce_count.val();
            }
        }
        if self.div.done.val() {
            self.n_ecn.next = self.n_ecn.val() - (self.n_ecn.val() >> 4)
                + (bit_cast::<32, 17>(self.div.q.val()) >> 4);
            self.n_samples.next = self.n_samples.val() + self.div.samples_add.val();
        }
        // Window, moves, timeouts, Init.
        if self.op.win.val() {
            self.n_win.next = self.op.value.val();
        }
        if self.walk.tmo_end.val() {
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
        if self.op.repath.val() | self.walk.tmo_end.val() {
            self.n_entropy.next = self.op.entropy.val();
            self.n_ecn.next = 0.into();
            self.n_loss.next = 0.into();
            self.n_samples.next = 0.into();
            self.n_repaths.next = self.n_repaths.val() + 1;
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
        if self.op.init.val() {
            self.wdata.next = bit_cast::<SLOT_BITS, 16>(self.op.entropy.val()) << 512;
        }
    }
}
