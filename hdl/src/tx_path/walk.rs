//! The TX table's ring walker: what the entry at path PSN `p` means to the
//! running `Ack`, `Timeout` or `Lose` (the engine's `PathEntry::apply`
//! rules), combinational. The ACK's view of `p` comes as two distances
//! that [`super::TxRing`] keeps in registers and steps with `p`
//! (`p − path_cum − 1` and `p − highest`), so no subtraction runs in the
//! walk's cycle.

use rust_hdl::prelude::*;

/// The walker's decisions at one ring entry. (Whether the firmware takes
/// the fate event is not an input: a top may make `m_fate_ready` from
/// `m_fate_valid`, and Verilator orders a kernel as one block.)
#[derive(LogicBlock, Default)]
pub struct TxWalk {
    /// An `Ack` (walk or pop) runs.
    pub in_ack: Signal<In, Bit>,
    /// A `Timeout` runs.
    pub in_tmo: Signal<In, Bit>,
    /// A `Lose` runs (its one entry).
    pub in_lose: Signal<In, Bit>,
    /// Path PSN of the entry.
    pub p: Signal<In, Bits<32>>,
    /// `p − path_cum − 1` of the running ACK (mod 2^32): its SACK bit's
    /// index when below 256.
    pub dm1: Signal<In, Bits<32>>,
    /// `p − highest` (mod 2^32), `highest` the highest path PSN the ACK
    /// knows.
    pub dh: Signal<In, Bits<32>>,
    /// The ACK's SACK bitmap.
    pub sack: Signal<In, Bits<256>>,
    /// The ACK walk has not yet gone beyond the highest PSN the ACK knows.
    pub walking: Signal<In, Bit>,
    /// Every entry walked so far is resolved.
    pub pfx: Signal<In, Bit>,
    /// The slot's `next_psn`.
    pub next_psn: Signal<In, Bits<32>>,
    /// The slot's `una`.
    pub una: Signal<In, Bits<32>>,
    /// The ring entry is unresolved.
    pub live: Signal<In, Bit>,
    /// It is a probe.
    pub probe: Signal<In, Bit>,
    /// `p` is `next_psn`: nothing more to walk.
    pub at_end: Signal<Out, Bit>,
    /// The ACK acknowledges `p` (behind `path_cum` or SACKed).
    pub is_acked: Signal<Out, Bit>,
    /// The ACK walks the entry.
    pub walk_now: Signal<Out, Bit>,
    /// It resolves it (acked, or lost as a later PSN arrived).
    pub resolve: Signal<Out, Bit>,
    /// The timeout walks the entry.
    pub tmo_now: Signal<Out, Bit>,
    /// `Lose` finds an unresolved data transmission at `p`.
    pub lose_now: Signal<Out, Bit>,
    /// After the walk, the ACK pops the resolved entry.
    pub pop_on: Signal<Out, Bit>,
    /// A fate event for the entry.
    pub fate_valid: Signal<Out, Bit>,
    /// It is a loss.
    pub fate_lost: Signal<Out, Bit>,
    beyond: Signal<Local, Bit>,
    behind: Signal<Local, Bit>,
    dm1_lo: Signal<Local, Bits<8>>,
}

impl Logic for TxWalk {
    #[hdl_gen]
    fn update(&mut self) {
        self.at_end.next = self.p.val() == self.next_psn.val();
        // Beyond everything the ACK knows: p after `highest`.
        self.beyond.next = !self.dh.val().get_bit(31) & self.dh.val().any();
        // Acknowledged: before `path_cum` (p − cum negative: dm1 negative
        // and not −1), or its SACK bit (dm1) set.
        self.behind.next = self.dm1.val().get_bit(31) & !self.dm1.val().all();
        self.dm1_lo.next = self.dm1.val().get_bits::<8>(0);
        self.is_acked.next = self.behind.val()
            | (!self.dm1.val().get_bits::<24>(8).any()
                & self.sack.val().get_bit(self.dm1_lo.val().index()));
        self.walk_now.next =
            self.in_ack.val() & !self.at_end.val() & self.walking.val() & !self.beyond.val();
        // A live entry short of the highest PSN (`dh` ≠ 0) that is not
        // acknowledged is lost.
        self.resolve.next =
            self.walk_now.val() & self.live.val() & (self.is_acked.val() | self.dh.val().any());
        self.tmo_now.next = self.in_tmo.val() & !self.at_end.val();
        self.lose_now.next = self.in_lose.val()
            & ((self.p.val() - self.una.val()) < (self.next_psn.val() - self.una.val()))
            & self.live.val()
            & !self.probe.val();
        self.fate_valid.next = (self.resolve.val() & !self.probe.val())
            | ((self.tmo_now.val() | self.lose_now.val()) & self.live.val() & !self.probe.val());
        self.fate_lost.next = self.tmo_now.val() | self.lose_now.val() | !self.is_acked.val();
        self.pop_on.next = self.in_ack.val()
            & !self.at_end.val()
            & !self.walk_now.val()
            & self.pfx.val()
            & !self.live.val();
    }
}
