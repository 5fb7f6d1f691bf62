//! [`TxPathTable`](super::TxPathTable)'s internal buses: what the
//! operation's decode ([`super::decode::TxOpDecode`]), the ring walker
//! ([`super::ring::TxRing`]), the divider ([`super::div::TxDiv`]) and the
//! ACK totals ([`super::totals::TxTotals`]) tell the slot update
//! ([`super::update::SlotUpdate`]) and each other, each pair joined with
//! one `X::join` in the table's kernel, so no path runs through a
//! combinational block and back into the kernel that drives it (a false
//! combinational loop to Verilator). `…Out` is the driver's side, `…In`
//! the receiver's ([`crate::bus`]'s `bus_pair!`).

use rust_hdl::prelude::*;

use crate::bus::bus_pair;

bus_pair! {
    /// The walk's changes to the slot this cycle, driven by
    /// [`super::ring::TxRing`].
    WalkEvOut = "WalkEvOut"
    /// [`WalkEvOut`] seen from [`super::update::SlotUpdate`].
    / WalkEvIn = "WalkEvIn"
    []
    {
        /// A data transmission resolved: `inflight` − `e_len`.
        sub_len: Out / In, Bit;
        /// Its payload bytes.
        e_len: Out / In, Bits<16>;
        /// It was lost: `lost` + 1.
        lost_one: Out / In, Bit;
        /// The loss EWMA takes a loss.
        loss_up: Out / In, Bit;
        /// `una` = `una_new`.
        una_set: Out / In, Bit;
        /// The new `una`.
        una_new: Out / In, Bits<32>;
        /// The timeout's walk ends: `timeouts` + 1, quarantined, backoff
        /// doubled, and the move to its entropy.
        tmo_end: Out / In, Bit;
    }
}

bus_pair! {
    /// Entries the ACK walk acknowledges, driven by [`super::ring::TxRing`].
    AckedOut = "AckedOut"
    /// [`AckedOut`] seen from [`super::totals::TxTotals`].
    / AckedIn = "AckedIn"
    []
    {
        /// The walk acknowledges the entry this cycle.
        one: Out / In, Bit;
        /// It is a probe.
        probe: Out / In, Bit;
        /// Its payload bytes.
        len: Out / In, Bits<16>;
        /// The walk and the pop are over: the decays start.
        done: Out / In, Bit;
    }
}

bus_pair! {
    /// An ACK's end, driven by [`super::totals::TxTotals`].
    AckEndOut = "AckEndOut"
    /// [`AckEndOut`] seen from [`super::update::SlotUpdate`].
    / AckEndIn = "AckEndIn"
    []
    {
        /// Loss-EWMA decays this cycle (up to 4 apply; 0: none).
        decay: Out / In, Bits<9>;
        /// The ACK ends: `acked` + `pkts`; a probe acknowledged ends
        /// quarantine.
        done: Out / In, Bit;
        /// Data packets the ACK acknowledged.
        pkts: Out / In, Bits<32>;
        /// It acknowledged a probe.
        probe_acked: Out / In, Bit;
    }
}

bus_pair! {
    /// Feedback's division, driven by [`super::div::TxDiv`].
    DivEvOut = "DivEvOut"
    /// [`DivEvOut`] seen from [`super::update::SlotUpdate`].
    / DivEvIn = "DivEvIn"
    []
    {
        /// Done: ECN EWMA takes `q`, `samples` + `samples_add`.
        done: Out / In, Bit;
        /// The CE fraction, 16.16 (up to 1.0).
        q: Out / In, Bits<17>;
        /// Packets the ACK acknowledged.
        samples_add: Out / In, Bits<32>;
    }
}

bus_pair! {
    /// The taken operation as the ring sees it, driven by
    /// [`super::decode::TxOpDecode`].
    RingOpOut = "RingOpOut"
    /// [`RingOpOut`] seen from [`super::ring::TxRing`].
    / RingOpIn = "RingOpIn"
    [const SB: usize]
    {
        /// An operation is taken this cycle.
        accept: Out / In, Bit;
        /// Its code (`TxOp`).
        code: Out / In, Bits<3>;
        /// Its slot.
        slot: Out / In, Bits<SB>;
        /// Its `op_psn`.
        psn: Out / In, Bits<32>;
        /// Its `op_sack`.
        sack: Out / In, Bits<256>;
        /// Its `op_len`.
        len: Out / In, Bits<16>;
        /// Its `op_probe`.
        probe: Out / In, Bit;
        /// A send takes the ring entry at `next_psn`.
        send: Out / In, Bit;
    }
}

bus_pair! {
    /// The taken operation's changes to the slot, driven by
    /// [`super::decode::TxOpDecode`].
    OpEvOut = "OpEvOut"
    /// [`OpEvOut`] seen from [`super::update::SlotUpdate`].
    / OpEvIn = "OpEvIn"
    []
    {
        /// `Init`: every field 0 but `entropy`.
        init: Out / In, Bit;
        /// A send took a ring entry: `next_psn` + 1.
        next_inc: Out / In, Bit;
        /// It was data: `inflight` + `len`, `sent` + 1, `retransmitted` + `retx`.
        data_sent: Out / In, Bit;
        /// Its payload bytes.
        len: Out / In, Bits<16>;
        /// It was a retransmission.
        retx: Out / In, Bit;
        /// An RTT sample: `srtt`, `rttvar` (RFC 6298), `rtt_valid`.
        rtt: Out / In, Bit;
        /// The sample, ns.
        rtt_sample: Out / In, Bits<32>;
        /// Feedback: `ce_marked` + `new_ce`; the last `ce_count` if `ce_fresh`.
        ce: Out / In, Bit;
        /// The ACK's `ce_count` is not behind the last one.
        ce_fresh: Out / In, Bit;
        /// The ACK's `ce_count`.
        ce_count: Out / In, Bits<32>;
        /// CE marks it adds.
        new_ce: Out / In, Bits<32>;
        /// A `Move`: `entropy`, EWMAs and `samples` 0, `repaths` + 1.
        repath: Out / In, Bit;
        /// Entropy for `Init` and a move (a `Timeout`'s at its end).
        entropy: Out / In, Bits<16>;
        /// `Window`: `window` = `value`.
        win: Out / In, Bit;
        /// The window.
        value: Out / In, Bits<32>;
    }
}
