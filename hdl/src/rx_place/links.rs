//! [`RxPlace`](super::RxPlace)'s internal bus: the verdict FIFO's head,
//! joined from [`super::PlaceVerdicts`] straight to [`super::PlaceOut`]
//! (one `X::join`, no path through the parent's kernel, whose logic
//! Verilator orders per kernel). `…Out` is the driver's side, `…In` the
//! receiver's ([`crate::bus`]'s `bus_pair!` declares both from one field
//! list).

use rust_hdl::prelude::*;

use crate::bus::bus_pair;

bus_pair! {
    /// The verdict FIFO's head, driven by [`super::PlaceVerdicts`].
    HeadOut = "HeadOut"
    /// [`HeadOut`] seen from [`super::PlaceOut`].
    / HeadIn = "HeadIn"
    []
    {
        /// The FIFO is not empty; its head:
        valid: Out / In, Bit;
        /// placed,
        place: Out / In, Bit;
        /// the frame has beats,
        beats: Out / In, Bit;
        /// payload bytes.
        len: Out / In, Bits<16>;
        /// Pop the head.
        pop: In / Out, Bit;
    }
}
