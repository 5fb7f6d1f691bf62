//! [`RxEth`](super::RxEth)'s internal buses, one per hand-over between its
//! sub-blocks, each joined with one `X::join` in the parent's kernel.
//! `…Out` is the driver's side, `…In` the receiver's ([`crate::bus`]'s
//! `bus_pair!` declares both from one field list).

use rust_hdl::prelude::*;

use super::HDR_BITS;
use crate::bus::bus_pair;

bus_pair! {
    /// A frame's end, the cycle after its last beat was written, driven by
    /// [`super::write::RxEthWrite`].
    FrameOut = "FrameOut"
    /// [`FrameOut`] seen from [`super::window::RxEthWindow`].
    / FrameIn = "FrameIn"
    [const B: usize]
    {
        /// A frame ended (one cycle).
        v: Out / In, Bit;
        /// It was longer than `MAX_FRAME`.
        tl: Out / In, Bit;
        /// Its beats less one (saturating).
        beats: Out / In, Bits<16>;
        /// Its last beat's `tkeep`.
        keep: Out / In, Bits<B>;
        /// Its first buffer address.
        start: Out / In, Bits<16>;
        /// The buffer address after its last stored beat.
        end: Out / In, Bits<16>;
        /// Frame bytes 12..83 in lane order.
        hdr: Out / In, Bits<HDR_BITS>;
        /// It carries an 802.1Q tag.
        vlan: Out / In, Bit;
    }
}

bus_pair! {
    /// A frame's IP/UDP window after V1, driven by
    /// [`super::window::RxEthWindow`].
    WindowOut = "WindowOut"
    /// [`WindowOut`] seen from [`super::head::RxEthHead`].
    / WindowIn = "WindowIn"
    []
    {
        /// A frame is in the stage.
        v: Out / In, Bit;
        /// 802.1Q tag.
        vlan: Out / In, Bit;
        /// Longer than `MAX_FRAME`.
        tl: Out / In, Bit;
        /// EtherType (lane order).
        et: Out / In, Bits<16>;
        /// The frame from the IP header on, byte o at bit 8·o.
        ipw: Out / In, Bits<528>;
        /// Bytes in the last beat.
        kc: Out / In, Bits<16>;
        /// Beats less one (saturating).
        beats: Out / In, Bits<16>;
        /// First buffer address.
        start: Out / In, Bits<16>;
        /// Buffer address after the frame.
        end: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// The frame buffer's write port, driven by [`super::write::RxEthWrite`].
    BufOut = "BufOut"
    /// [`BufOut`] seen from [`super::issue::RxEthIssue`], which holds the buffer.
    / BufIn = "BufIn"
    [const W: usize]
    {
        /// Write strobe.
        we: Out / In, Bit;
        /// Write address.
        addr: Out / In, Bits<16>;
        /// Write data (a beat as it came).
        data: Out / In, Bits<W>;
    }
}

bus_pair! {
    /// What the read side gives back to the write side, driven by
    /// [`super::issue::RxEthIssue`].
    FreeOut = "FreeOut"
    /// [`FreeOut`] seen from [`super::write::RxEthWrite`].
    / FreeIn = "FreeIn"
    []
    {
        /// The buffer is free from here on to the write pointer.
        fr_ptr: Out / In, Bits<16>;
        /// A record left the queue this cycle.
        pop: Out / In, Bit;
    }
}

bus_pair! {
    /// A frame's header fields after V2, driven by [`super::head::RxEthHead`].
    FieldsOut = "FieldsOut"
    /// [`FieldsOut`] seen from [`super::pack::RxEthPack`].
    / FieldsIn = "FieldsIn"
    []
    {
        /// A frame is in the stage.
        v: Out / In, Bit;
        /// 802.1Q tag.
        vlan: Out / In, Bit;
        /// EtherType IPv4.
        v4: Out / In, Bit;
        /// EtherType IPv6.
        v6: Out / In, Bit;
        /// IPv4 MF set or fragment offset ≠ 0.
        frag: Out / In, Bit;
        /// Longer than `MAX_FRAME`.
        tl: Out / In, Bit;
        /// IP version.
        ver: Out / In, Bits<4>;
        /// IPv4 IHL.
        ihl: Out / In, Bits<4>;
        /// Frame bytes (stored part).
        len: Out / In, Bits<16>;
        /// IP total length (IPv6: 40 + payload length).
        tot: Out / In, Bits<17>;
        /// IP header bytes (IHL·4 or 40).
        iphl: Out / In, Bits<7>;
        /// IPv4 protocol / IPv6 next header.
        nh: Out / In, Bits<8>;
        /// IP ECN field.
        ecn: Out / In, Bits<2>;
        /// Source IP (IPv4 mapped), network order.
        src: Out / In, Bits<128>;
        /// Destination IP, network order.
        dst: Out / In, Bits<128>;
        /// UDP source port.
        sport: Out / In, Bits<16>;
        /// UDP destination port.
        dport: Out / In, Bits<16>;
        /// UDP length.
        ulen: Out / In, Bits<16>;
        /// First buffer address.
        start: Out / In, Bits<16>;
        /// Buffer address after the frame.
        end: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// A frame after V3, driven by [`super::pack::RxEthPack`].
    PackedOut = "PackedOut"
    /// [`PackedOut`] seen from [`super::rules::RxEthRules`].
    / PackedIn = "PackedIn"
    []
    {
        /// A frame is in the stage.
        v: Out / In, Bit;
        /// 802.1Q tag.
        vlan: Out / In, Bit;
        /// EtherType IPv4.
        v4: Out / In, Bit;
        /// EtherType IPv6.
        v6: Out / In, Bit;
        /// IPv4 MF set or fragment offset ≠ 0.
        frag: Out / In, Bit;
        /// Longer than `MAX_FRAME`.
        tl: Out / In, Bit;
        /// Shorter than its Ethernet header.
        short: Out / In, Bit;
        /// IP version.
        ver: Out / In, Bits<4>;
        /// IPv4 IHL.
        ihl: Out / In, Bits<4>;
        /// Frame bytes (stored part).
        len: Out / In, Bits<16>;
        /// IP total length (IPv6: 40 + payload length).
        tot: Out / In, Bits<17>;
        /// IP header bytes.
        iphl: Out / In, Bits<7>;
        /// IPv4 protocol / IPv6 next header.
        nh: Out / In, Bits<8>;
        /// The pseudo fields, packed (the queue's layout).
        ps: Out / In, Bits<306>;
        /// Frame bytes from the IP header on.
        lip: Out / In, Bits<17>;
        /// First buffer address.
        start: Out / In, Bits<16>;
        /// Buffer address after the frame.
        end: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// A frame's rule bits and lengths after V4, driven by
    /// [`super::rules::RxEthRules`].
    RulesOut = "RulesOut"
    /// [`RulesOut`] seen from [`super::decide::RxEthDecide`].
    / RulesIn = "RulesIn"
    []
    {
        /// A frame is in the stage.
        v: Out / In, Bit;
        /// IPv4 (its checksum counts).
        v4: Out / In, Bit;
        /// One bit per rule, in the order the verdict tries them.
        rules: Out / In, Bits<16>;
        /// Bytes before the UDP payload.
        hlen: Out / In, Bits<16>;
        /// UDP payload bytes (from the IP length).
        plen: Out / In, Bits<16>;
        /// The pseudo fields, packed (the queue's layout).
        ps: Out / In, Bits<306>;
        /// First buffer address.
        start: Out / In, Bits<16>;
        /// Buffer address after the frame.
        end: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// A frame's records after V6, driven by [`super::decide::RxEthDecide`].
    RecordOut = "RecordOut"
    /// [`RecordOut`] seen from [`super::queue::RxEthQueue`].
    / RecordIn = "RecordIn"
    []
    {
        /// A frame is in the stage.
        v: Out / In, Bit;
        /// Accepted.
        acc: Out / In, Bit;
        /// Its payload is in one buffer beat.
        single: Out / In, Bit;
        /// Buffer address of the first payload beat.
        first: Out / In, Bits<16>;
        /// Buffer address of the last payload beat.
        last: Out / In, Bits<16>;
        /// Buffer address after the frame.
        end: Out / In, Bits<16>;
        /// Realignment shift code.
        q: Out / In, Bits<4>;
        /// UDP payload bytes.
        plen: Out / In, Bits<16>;
        /// The pseudo fields, packed.
        ps: Out / In, Bits<306>;
    }
}

bus_pair! {
    /// The control record queue's head, driven by [`super::queue::RxEthQueue`].
    HeadOut = "HeadOut"
    /// [`HeadOut`] seen from [`super::issue::RxEthIssue`], which pops it.
    / HeadIn = "HeadIn"
    []
    {
        /// The head record (layout in [`super::queue`]).
        rec: Out / In, Bits<70>;
        /// The queue holds a record.
        valid: Out / In, Bit;
        /// Take the head record this cycle.
        pop: In / Out, Bit;
    }
}

bus_pair! {
    /// The pseudo-field queue's head, driven by [`super::queue::RxEthQueue`].
    PsOut = "PsOut"
    /// [`PsOut`] seen from [`super::align::RxEthAlign`], which pops it.
    / PsIn = "PsIn"
    []
    {
        /// The head entry's pseudo fields, packed.
        ps: Out / In, Bits<306>;
        /// Take the head entry this cycle.
        pop: In / Out, Bit;
    }
}

bus_pair! {
    /// The buffer slot beside the frame buffer's output register, and that
    /// register, driven by [`super::issue::RxEthIssue`].
    SlotOut = "SlotOut"
    /// [`SlotOut`] seen from [`super::align::RxEthAlign`].
    / SlotIn = "SlotIn"
    [const W: usize]
    {
        /// The buffer's output holds a payload beat.
        v: Out / In, Bit;
        /// It is its frame's first.
        first: Out / In, Bit;
        /// It is its frame's last.
        last: Out / In, Bit;
        /// The frame's realignment shift code.
        q: Out / In, Bits<4>;
        /// The frame's payload bytes.
        plen: Out / In, Bits<16>;
        /// The buffer's output: the slot's beat.
        data: Out / In, Bits<W>;
    }
}
