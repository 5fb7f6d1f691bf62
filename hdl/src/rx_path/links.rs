//! [`RxPathTable`](super::RxPathTable)'s internal bus between its S2 stage
//! ([`super::land::PathLand`]) and its ACK queue ([`super::acks::PathAcks`]),
//! joined with one `X::join` in the table's kernel. `…Out` is the driver's
//! side, `…In` the receiver's ([`crate::bus`]'s `bus_pair!` declares both
//! from one field list).

use rust_hdl::prelude::*;

use crate::bus::bus_pair;

bus_pair! {
    /// An update landing (the mark's result), as the ACK queue needs it,
    /// driven by [`super::land::PathLand`].
    LandOut = "LandOut"
    /// [`LandOut`] seen from [`super::acks::PathAcks`].
    / LandIn = "LandIn"
    []
    {
        /// An update lands this cycle (not out of window): queue its entry.
        put: Out / In, Bit;
        /// Its entry (`qp << 6 | path`).
        addr: Out / In, Bits<8>;
        /// Its arrival was CE-marked.
        ce: Out / In, Bit;
        /// Split: an arrival is in the mark's stages (no ACK is taken).
        busy: Out / In, Bit;
    }
}
