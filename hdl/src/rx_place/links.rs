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

bus_pair! {
    /// The fields of a datagram that only the state-free checks read, in
    /// S1 or S2, driven by [`super::PlaceStage`] (its header fields travel
    /// in [`HdrOut`]).
    MetaOut = "MetaOut"
    /// [`MetaOut`] seen from the next stage or [`super::PlaceCheck`].
    / MetaIn = "MetaIn"
    []
    {
        /// A datagram is in the stage.
        valid: Out / In, Bit;
        /// Parser verdict: drop.
        drop: Out / In, Bit;
        /// Parser drop reason.
        reason: Out / In, Bits<3>;
        /// Datagram length.
        len: Out / In, Bits<16>;
        /// Source QPN.
        src_qpn: Out / In, Bits<32>;
        /// Source IP.
        src_ip: Out / In, Bits<128>;
        /// The remote address's low 3 bits (an atomic's alignment).
        va_low: Out / In, Bits<3>;
        /// Payload bytes (length - 68).
        pl: Out / In, Bits<16>;
        /// Offset + payload bytes (33 bits).
        end_off: Out / In, Bits<33>;
    }
}

bus_pair! {
    /// S2's state-free checks, registered in [`super::PlaceCheck`], for
    /// S3's verdict.
    ChecksOut = "ChecksOut"
    /// [`ChecksOut`] seen from [`super::PlaceDecide`].
    / ChecksIn = "ChecksIn"
    []
    {
        /// A code from the checks before the QP state (parser drop,
        /// unknown QP) is in `head`.
        head_hit: Out / In, Bit;
        /// That code.
        head: Out / In, Bits<5>;
        /// A code from the checks after the QP state and before the
        /// connection window (peer, path, opcode, stream) is in `mid`.
        mid_hit: Out / In, Bit;
        /// That code.
        mid: Out / In, Bits<5>;
        /// A PROBE that passed `mid` (its code is 12, 16 or 17).
        probe: Out / In, Bit;
        /// The length checks fail (13).
        bad_len: Out / In, Bit;
        /// A READ or atomic response.
        resp: Out / In, Bit;
        /// The response matches an outstanding READ (atomic) and fits it.
        rd_ok: Out / In, Bit;
        /// The MSN is before its stream's head (4 when new).
        msn_before: Out / In, Bit;
        /// The MSN is a window or more after its stream's head (23 when
        /// new).
        msn_far: Out / In, Bit;
        /// The opcode's own checks after the duplicate check (0: placed).
        tail: Out / In, Bits<5>;
        /// A READ request, atomic request or ATOMIC_RESP (tracked and
        /// accepted when handed up).
        fwmsg: Out / In, Bit;
    }
}
