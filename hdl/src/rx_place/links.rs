//! [`RxPlace`](super::RxPlace)'s internal buses: the verdict FIFO's head,
//! joined from [`super::PlaceVerdicts`] straight to [`super::PlaceOut`]
//! (no path through the parent's kernel, whose logic Verilator orders per
//! kernel), and S3's header fields, from [`super::PlaceHdr`] to
//! [`super::PlaceEvent`]; one `X::join` each. `…Out` is the driver's side,
//! `…In` the receiver's ([`crate::bus`]'s `bus_pair!` declares both from
//! one field list).

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

bus_pair! {
    /// S3's copy of a datagram's header fields, driven by
    /// [`super::PlaceHdr`].
    HdrOut = "HdrOut"
    /// [`HdrOut`] seen from [`super::PlaceEvent`].
    / HdrIn = "HdrIn"
    []
    {
        /// The QP was found.
        qhit: Out / In, Bit;
        /// MSG opcode.
        is_msg: Out / In, Bit;
        /// Base header version.
        version: Out / In, Bits<8>;
        /// Opcode.
        opcode: Out / In, Bits<8>;
        /// Flags.
        flags: Out / In, Bits<16>;
        /// Destination QPN.
        dst_qpn: Out / In, Bits<32>;
        /// UDP source port.
        src_port: Out / In, Bits<16>;
        /// IP ECN CE mark.
        ce: Out / In, Bit;
        /// Stream id.
        stream: Out / In, Bits<16>;
        /// Path id.
        path: Out / In, Bits<16>;
        /// Connection PSN.
        conn_psn: Out / In, Bits<32>;
        /// Path PSN.
        path_psn: Out / In, Bits<32>;
        /// Sender timestamp.
        timestamp: Out / In, Bits<64>;
        /// MSN.
        msn: Out / In, Bits<32>;
        /// Posted-receive index.
        recv_idx: Out / In, Bits<32>;
        /// Message length.
        msg_len: Out / In, Bits<32>;
        /// Offset.
        offset: Out / In, Bits<32>;
        /// Immediate.
        imm: Out / In, Bits<32>;
    }
}
