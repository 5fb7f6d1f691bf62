//! [`AckFrame`](super::AckFrame)'s internal buses, one per hand-over
//! between its parts, each joined with one `X::join` in the parent's
//! kernel. `…Out` is the driver's side, `…In` the receiver's
//! ([`crate::bus`]'s `bus_pair!` declares both from one field list).

use rust_hdl::prelude::*;

use super::CAP_BITS;
use crate::bus::bus_pair;

bus_pair! {
    /// The captured datagram's length and addressing, driven by
    /// [`super::cap::AckFrameCap`] from its registers (one way only, so
    /// it is joined to both [`super::cksum::AckFrameCksum`] and
    /// [`super::out::AckFrameOut`]).
    GramOut = "GramOut"
    /// [`GramOut`] seen from a reader.
    / GramIn = "GramIn"
    []
    {
        /// Bytes captured.
        n: Out / In, Bits<8>;
        /// Destination IP (IPv4 mapped into IPv6).
        dip: Out / In, Bits<128>;
        /// UDP source port.
        sport: Out / In, Bits<16>;
        /// UDP destination port.
        dport: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// What the checksums need besides [`GramOut`], driven by
    /// [`super::cap::AckFrameCap`].
    SumOut = "SumOut"
    /// [`SumOut`] seen from [`super::cksum::AckFrameCksum`].
    / SumIn = "SumIn"
    []
    {
        /// A whole datagram waits.
        full: Out / In, Bit;
        /// The plain sum of its 16-bit words.
        sum: Out / In, Bits<24>;
    }
}

bus_pair! {
    /// The captured datagram's bytes and marks, driven by
    /// [`super::cap::AckFrameCap`].
    BodyOut = "BodyOut"
    /// [`BodyOut`] seen from [`super::out::AckFrameOut`].
    / BodyIn = "BodyIn"
    []
    {
        /// The datagram, beat `k` at bytes `k·B..`.
        data: Out / In, Bits<CAP_BITS>;
        /// The ACK carried ECE.
        ece: Out / In, Bit;
        /// It came from the firmware.
        fw: Out / In, Bit;
        /// The frame loads: the capture is free for the next datagram.
        clear: In / Out, Bit;
    }
}

bus_pair! {
    /// The datagram's checksums, driven by
    /// [`super::cksum::AckFrameCksum`] from its registers.
    CksOut = "CksOut"
    /// [`CksOut`] seen from [`super::out::AckFrameOut`].
    / CksIn = "CksIn"
    []
    {
        /// Both are ready (C2 done).
        ready: Out / In, Bit;
        /// The IPv4 header checksum.
        ck4: Out / In, Bits<16>;
        /// The IPv6 UDP checksum.
        ck6: Out / In, Bits<16>;
        /// The frame loads: the stages start again.
        clear: In / Out, Bit;
    }
}
