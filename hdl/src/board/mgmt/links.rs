//! [`MgmtEngine`](super::MgmtEngine)'s internal buses, one per hand-over
//! between its parts, each joined with one `X::join` in the engine's
//! kernel (`…Out` is the driver's side, `…In` the receiver's:
//! [`crate::bus`]'s `bus_pair!` declares both from one field list), and
//! the access side's BAR0 and memory ports, which the engine's flat ports
//! pass on.

use rust_hdl::prelude::*;

use crate::bus::bus_pair;

bus_pair! {
    /// A request as received, driven by [`super::recv::MgmtRecv`].
    RecvOut = "RecvOut"
    /// [`RecvOut`] seen from [`super::access::MgmtAccess`].
    / RecvIn = "RecvIn"
    []
    {
        /// The request's last CRC byte was taken: execute it (one clock).
        exec: Out / In, Bit;
        /// Its CRC checked (valid from `exec` on).
        crc_ok: Out / In, Bit;
        /// The header was refused (one clock): answer `why`, nothing done.
        refuse: Out / In, Bit;
        /// The refusal's status.
        why: Out / In, Bits<8>;
        /// A write's data byte is on `rx_data` this clock.
        data: Out / In, Bit;
        /// Its index in the request's data.
        idx: Out / In, Bits<8>;
        /// The header's op.
        op: Out / In, Bits<8>;
        /// The header's address.
        addr: Out / In, Bits<32>;
        /// The header's length.
        len: Out / In, Bits<16>;
        /// Bytes received outside a frame.
        n_junk: Out / In, Bits<32>;
        /// Bad frames.
        n_bad: Out / In, Bits<32>;
        /// Frames cut by the idle timeout.
        n_timeout: Out / In, Bits<32>;
        /// A frame's CRC was bad: count it.
        bad: In / Out, Bit;
        /// The response's last byte was sent: the next request may come.
        done: In / Out, Bit;
    }
}

bus_pair! {
    /// A request done, to answer, driven by [`super::access::MgmtAccess`].
    AnswerOut = "AnswerOut"
    /// [`AnswerOut`] seen from [`super::reply::MgmtReply`].
    / AnswerIn = "AnswerIn"
    []
    {
        /// Start the response (one clock).
        go: Out / In, Bit;
        /// Its status (with `go`).
        status: Out / In, Bits<8>;
        /// The request's op.
        op: Out / In, Bits<8>;
        /// The request's length.
        len: Out / In, Bits<16>;
        /// A register read's next byte (low byte first).
        word: Out / In, Bits<8>;
        /// That byte is sent this clock.
        shift: In / Out, Bit;
        /// Read the memory byte at `off` this clock.
        rd: In / Out, Bit;
        /// The byte's offset from the request's address.
        off: In / Out, Bits<16>;
        /// The response's last byte is sent this clock.
        done: In / Out, Bit;
    }
}

/// BAR0 as [`super::access::MgmtAccess`] drives it (the engine's `bar_*`).
#[derive(LogicInterface, Default)]
pub struct BarOut {
    /// Write: valid (one clock).
    pub wr_valid: Signal<Out, Bit>,
    /// Write: byte offset.
    pub wr_addr: Signal<Out, Bits<16>>,
    /// Write: value.
    pub wr_data: Signal<Out, Bits<32>>,
    /// Read: valid (one clock).
    pub rd_valid: Signal<Out, Bit>,
    /// Read: byte offset.
    pub rd_addr: Signal<Out, Bits<16>>,
    /// Read answer: valid.
    pub rd_resp_valid: Signal<In, Bit>,
    /// Read answer: value.
    pub rd_resp_data: Signal<In, Bits<32>>,
}

/// The memory byte port as [`super::access::MgmtAccess`] drives it (the
/// engine's `mem_*`; the byte a read asked for goes to
/// [`super::reply::MgmtReply`]).
#[derive(LogicInterface, Default)]
pub struct MemOut {
    /// An access this clock.
    pub valid: Signal<Out, Bit>,
    /// A write.
    pub write: Signal<Out, Bit>,
    /// Byte address.
    pub addr: Signal<Out, Bits<32>>,
    /// The byte to write.
    pub wdata: Signal<Out, Bits<8>>,
}
