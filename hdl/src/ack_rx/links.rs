//! [`AckRx`](super::AckRx)'s internal buses, one per hand-over between
//! its parts, each joined with one `X::join` in the parent's kernel.
//! `…Out` is the driver's side, `…In` the receiver's ([`crate::bus`]'s
//! `bus_pair!` declares both from one field list).

use rust_hdl::prelude::*;

use super::{PF_BITS, Q_BITS};
use crate::bus::bus_pair;

bus_pair! {
    /// The pairing FIFO's oldest entry (the datagram of the next event),
    /// driven by [`super::cap::AckRxCap`].
    EntryOut = "EntryOut"
    /// [`EntryOut`] seen from [`super::event::AckRxEvent`].
    / EntryIn = "EntryIn"
    []
    {
        /// Capture bytes 0..63 and `rx_count`, wire order.
        data: Out / In, Bits<PF_BITS>;
    }
}

bus_pair! {
    /// The slot map's answer to an ACK's event, driven by
    /// [`super::map::AckRxMap`].
    HitOut = "HitOut"
    /// [`HitOut`] seen from [`super::event::AckRxEvent`].
    / HitIn = "HitIn"
    [const SB: usize]
    {
        /// A valid slot holds the event's (QPN, path).
        hit: Out / In, Bit;
        /// The lowest such slot.
        slot: Out / In, Bits<SB>;
    }
}

bus_pair! {
    /// A slot map write, registered, driven by [`super::map::AckRxMap`]:
    /// the slot (re)mapped is a new path.
    RemapOut = "RemapOut"
    /// [`RemapOut`] seen from [`super::queue::AckRxQueue`].
    / RemapIn = "RemapIn"
    []
    {
        /// A map entry is written.
        we: Out / In, Bit;
        /// Its address.
        addr: Out / In, Bits<6>;
    }
}

bus_pair! {
    /// An ACK paired and mapped, to be queued, driven by
    /// [`super::event::AckRxEvent`].
    PushOut = "PushOut"
    /// [`PushOut`] seen from [`super::queue::AckRxQueue`].
    / PushIn = "PushIn"
    [const SB: usize]
    {
        /// Queue it.
        valid: Out / In, Bit;
        /// The queue entry (layout at [`super::Q_BITS`]).
        entry: Out / In, Bits<Q_BITS>;
        /// Its TX table slot.
        slot: Out / In, Bits<SB>;
    }
}

bus_pair! {
    /// The queue's head with its evidence check, driven by
    /// [`super::queue::AckRxQueue`].
    HeadOut = "HeadOut"
    /// [`HeadOut`] seen from [`super::ops::AckRxOps`].
    / HeadIn = "HeadIn"
    [const SB: usize]
    {
        /// The head's slot.
        slot: Out / In, Bits<SB>;
        /// Its `conn_cum`.
        conn_cum: Out / In, Bits<32>;
        /// Its `path_cum`.
        cum: Out / In, Bits<32>;
        /// Its SACK (as on the wire).
        sack: Out / In, Bits<256>;
        /// Its `echo_ts`.
        echo: Out / In, Bits<64>;
        /// Its `ce_count`.
        ce: Out / In, Bits<32>;
        /// Its slot's last `ce_count` (the table's check port).
        last_ce: Out / In, Bits<32>;
        /// Its slot is quarantined (the table's check port).
        quarantined: Out / In, Bit;
        /// The evidence check refuses it (a register: the check of the
        /// cycle before).
        refuse: Out / In, Bit;
        /// It is its slot's newest ACK (a register, as `refuse`).
        newest: Out / In, Bit;
        /// The firmware waits this cycle: it is the queue's turn and an ACK
        /// waits (from registers), so the head's check stays true.
        hold: Out / In, Bit;
        /// The head takes its turn now (popped if refused, else its
        /// `rx_count` kept as its slot's newest when it is).
        start: Out / In, Bit;
    }
}

bus_pair! {
    /// Where the table operations are, from their registers, driven by
    /// [`super::ops::AckRxOps`].
    TurnOut = "TurnOut"
    /// [`TurnOut`] seen from [`super::queue::AckRxQueue`].
    / TurnIn = "TurnIn"
    []
    {
        /// No operation of ours runs.
        idle: Out / In, Bit;
        /// The firmware had the last turn.
        hw_turn: Out / In, Bit;
        /// Our `Feedback` runs: its result ends the pair.
        fb: Out / In, Bit;
    }
}
