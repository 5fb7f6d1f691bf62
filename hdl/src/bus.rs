//! The NIC's buses, each declared once as a rust-hdl interface
//! (`#[derive(LogicInterface)]`) and used as one port field at every level
//! that carries it ([`crate::RxCore`], [`crate::NicRx`], [`crate::NicCore`]
//! and, inside it, [`crate::AckGen`], [`crate::TxBuild`],
//! [`crate::AckFrame`], [`crate::TxArb`], [`crate::FwRx`],
//! [`crate::TxPathTable`]).
//!
//! A bus's direction is the owning block's view: `…Out` buses are driven by
//! the block (a master, `m_*`), `…In` buses by its user (a slave, `s_*`),
//! each with its handshake signal the other way. A parent passes a child's
//! bus through with one `X::link(&mut self.bus, &mut self.child.bus)` in
//! its `update`; a master meets its slave with one
//! `X::join(&mut self.a.m, &mut self.b.s)` (`#[join]` pairs). rust-hdl
//! emits a link as the child's port connected straight to the parent's
//! (no wire of its own), so a parent that also reads a bus it linked reads
//! its own port (`self.m_ev.valid`), not the child's.
//!
//! Port names: rust-hdl names a bus field `bus$field` in the Verilog
//! (`m_ev$valid`). Verilator writes `$` in a C++ identifier as `__024`
//! (`top->m_ev__024valid`); the Verilated benches (`metaroce-sim-tb`) name
//! the port `m_ev_valid`, `$` read as `_`, which is the flat name the port
//! had before the bus existed. [`crate::NicDevice`] keeps flat top-level
//! ports (external Verilog instantiates it).

use rust_hdl::prelude::*;

/// Declares a bus and its mirror (the same bus seen from its other end:
/// every direction flipped) from one field list, each field with its
/// direction in the first and in the second (`valid: Out / In, Bit;`),
/// the pair joined to each other (`#[join]`, which takes the names as
/// strings). `@beats Out / In;` among the fields stands for the
/// AXI-Stream beats (`tdata` of `W` bits, `tkeep` of `B`, `tvalid`,
/// `tready` the other way, `tlast`) in that place, with the first bus's
/// direction for the data; the bus must have `const W` and `const B`.
macro_rules! bus_pair {
    (
        $(#[doc = $adoc:literal])*
        $a:ident = $an:literal
        $(#[doc = $bdoc:literal])*
        / $b:ident = $bn:literal
        [$(const $g:ident : usize $(= $gd:literal)?),*]
        {
            $( $(#[doc = $fdoc:literal])* $f:ident : $da:ident / $db:ident, $t:ty; )*
            $(
                @beats $sa:ident / $sb:ident;
                $( $(#[doc = $hdoc:literal])* $h:ident : $ha:ident / $hb:ident, $ht:ty; )*
            )?
        }
    ) => {
        $crate::bus::bus_pair!(@one [$(#[doc = $adoc])*] $a $bn [$(const $g: usize $(= $gd)?),*]
            { $( [$(#[doc = $fdoc])*] $f: $da, $t; )* }
            $( { $sa $sb } { $( [$(#[doc = $hdoc])*] $h: $ha, $ht; )* } )?);
        $crate::bus::bus_pair!(@one [$(#[doc = $bdoc])*] $b $an [$(const $g: usize $(= $gd)?),*]
            { $( [$(#[doc = $fdoc])*] $f: $db, $t; )* }
            $( { $sb $sa } { $( [$(#[doc = $hdoc])*] $h: $hb, $ht; )* } )?);
    };
    // One side: its doc, name, the other side's name, generics, fields
    // before the beats, then (if any) the beats' two directions and the
    // fields after them.
    (@one [$(#[$doc:meta])*] $name:ident $join:literal [$($gen:tt)*]
        { $( [$(#[$fm:meta])*] $f:ident : $d:ident, $t:ty; )* }
        $( { $bd:ident $br:ident } { $( [$(#[$hm:meta])*] $h:ident : $hd:ident, $ht:ty; )* } )?
    ) => {
        $(#[$doc])*
        #[derive(LogicInterface, Default)]
        #[join = $join]
        pub struct $name<$($gen)*> {
            $( $(#[$fm])* pub $f: Signal<$d, $t>, )*
            $(
                /// Beat data, lane 0 first.
                pub tdata: Signal<$bd, Bits<W>>,
                /// Byte enables (packed).
                pub tkeep: Signal<$bd, Bits<B>>,
                /// Beat valid.
                pub tvalid: Signal<$bd, Bit>,
                /// The receiver takes the beat.
                pub tready: Signal<$br, Bit>,
                /// Last beat (of the frame, datagram or write).
                pub tlast: Signal<$bd, Bit>,
                $( $(#[$hm])* pub $h: Signal<$hd, $ht>, )*
            )?
        }
    };
}
pub(crate) use bus_pair;

bus_pair! {
    /// AXI-Stream beats driven by the block (frames, datagrams, payload).
    AxisOut = "AxisOut"
    /// AXI-Stream beats into the block: [`AxisOut`] seen from its receiver.
    / AxisIn = "AxisIn"
    [const W: usize, const B: usize]
    {
        @beats Out / In;
    }
}

bus_pair! {
    /// Configuration write port with an `A`-bit address and `D`-bit data
    /// (64 unless the map's words are narrower; table and register
    /// maps: `crate::rx_place::cfg`, `crate::nic_core::CFG_TX_BIT`).
    CfgIn = "CfgIn"
    /// A configuration write port seen from its writer: [`CfgIn`] mirrored.
    / CfgOut = "CfgOut"
    [const A: usize, const D: usize = 64]
    {
        /// Write strobe.
        we: In / Out, Bit;
        /// Write address.
        addr: In / Out, Bits<A>;
        /// Write data (`D` bits: a map whose words are narrower takes only those).
        data: In / Out, Bits<D>;
    }
}

bus_pair! {
    /// Counter read port: a select with `S` bits, the counter one cycle later.
    CounterPort = "CounterPort"
    /// A counter read port seen from its reader: [`CounterPort`] mirrored.
    / CounterRead = "CounterRead"
    [const S: usize]
    {
        /// Counter select.
        sel: In / Out, Bits<S>;
        /// Selected counter (one cycle after `sel`).
        val: Out / In, Bits<32>;
    }
}

/// ICRC pseudo-header of the datagram whose first beat enters the
/// receive core (sampled with that beat).
#[derive(LogicInterface, Default)]
pub struct PseudoIn {
    /// Source IP (IPv4 mapped into IPv6).
    pub src_ip: Signal<In, Bits<128>>,
    /// Destination IP (IPv4 mapped into IPv6).
    pub dst_ip: Signal<In, Bits<128>>,
    /// UDP source port (also the ACK's destination port).
    pub src_port: Signal<In, Bits<16>>,
    /// UDP destination port.
    pub dst_port: Signal<In, Bits<16>>,
    /// UDP length.
    pub udp_len: Signal<In, Bits<16>>,
}

bus_pair! {
    /// DMA write of placed payload: address and length with the first beat,
    /// then the data beats.
    DmaWriteOut = "DmaWriteOut"
    /// DMA writes into the block that takes them: [`DmaWriteOut`] mirrored.
    / DmaWriteIn = "DmaWriteIn"
    [const W: usize, const B: usize]
    {
        /// First beat: `addr` and `len` are valid.
        first: Out / In, Bit;
        /// Host address of the write.
        addr: Out / In, Bits<64>;
        /// Bytes of the write.
        len: Out / In, Bits<16>;
        @beats Out / In;
    }
}

bus_pair! {
    /// Verdict events of the receive core: one `valid` pulse per datagram with
    /// its `crate::rx_place::Verdict` code and header fields.
    VerdictOut = "VerdictOut"
    /// Verdict events seen from their user: [`VerdictOut`] mirrored.
    / VerdictIn = "VerdictIn"
    []
    {
        /// Verdict pulse, one per datagram (the fields below are valid with it).
        valid: Out / In, Bit;
        /// Verdict code (`crate::rx_place::Verdict`).
        code: Out / In, Bits<5>;
        /// Base header version.
        version: Out / In, Bits<8>;
        /// Opcode.
        opcode: Out / In, Bits<8>;
        /// Flags.
        flags: Out / In, Bits<16>;
        /// Destination QPN.
        dst_qpn: Out / In, Bits<32>;
        /// Path id.
        path: Out / In, Bits<16>;
        /// Path PSN.
        path_psn: Out / In, Bits<32>;
        /// Sender timestamp.
        timestamp: Out / In, Bits<64>;
        /// MSG message sequence number.
        msn: Out / In, Bits<32>;
        /// MSG posted-receive index.
        recv_idx: Out / In, Bits<32>;
        /// MSG immediate data.
        imm: Out / In, Bits<32>;
        /// Stream id.
        stream: Out / In, Bits<16>;
        /// Connection PSN (a NACK's `conn_psn`).
        conn_psn: Out / In, Bits<32>;
        /// UDP source port (a NACK's destination port).
        src_port: Out / In, Bits<16>;
        /// MSG offset.
        offset: Out / In, Bits<32>;
        /// MSG message length.
        msg_len: Out / In, Bits<32>;
        /// Payload bytes (0 for other than MSG opcodes).
        len: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// ACK datagrams of the receive core: UDP payload beats and, held for the
    /// datagram, its addressing and ECE mark.
    AckOut = "AckOut"
    /// ACK datagrams into the ACK framer: [`AckOut`] seen from its receiver
    /// (the addressing and ECE sampled with the first beat).
    / AckIn = "AckIn"
    [const W: usize, const B: usize]
    {
        @beats Out / In;
        /// Destination IP (IPv4 mapped into IPv6).
        dst_ip: Out / In, Bits<128>;
        /// UDP source port.
        src_port: Out / In, Bits<16>;
        /// UDP destination port.
        dst_port: Out / In, Bits<16>;
        /// The ACK carries ECE.
        ece: Out / In, Bit;
    }
}

bus_pair! {
    /// Whole UDP datagrams the firmware built (NACK, DISCONNECT), into the
    /// ACK framer: payload beats and, with the first beat, the addressing.
    DatagramIn = "DatagramIn"
    /// Whole datagrams seen from their source: [`DatagramIn`] mirrored.
    / DatagramOut = "DatagramOut"
    [const W: usize, const B: usize]
    {
        @beats In / Out;
        /// Destination IP (IPv6, or IPv4 mapped into IPv6), with the first beat.
        dst_ip: In / Out, Bits<128>;
        /// UDP source port, with the first beat.
        src_port: In / Out, Bits<16>;
        /// UDP destination port, with the first beat.
        dst_port: In / Out, Bits<16>;
    }
}

bus_pair! {
    /// The firmware receive queue's output: the datagrams handed up, with
    /// their length, truncation mark and UDP source port.
    FwRxOut = "FwRxOut"
    /// The firmware receive queue's output seen from its reader: [`FwRxOut`] mirrored.
    / FwRxIn = "FwRxIn"
    [const W: usize, const B: usize]
    {
        @beats Out / In;
        /// The datagram's length in bytes.
        len: Out / In, Bits<16>;
        /// Only the datagram's first bytes came up.
        trunc: Out / In, Bit;
        /// The datagram's UDP source port.
        src_port: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// The Ethernet front end's per-frame events (`crate::EthDrop` codes).
    EthEvOut = "EthEvOut"
    /// The Ethernet front end's events seen from their user: [`EthEvOut`] mirrored.
    / EthEvIn = "EthEvIn"
    []
    {
        /// One pulse per Ethernet frame.
        valid: Out / In, Bit;
        /// Its `crate::EthDrop` code.
        reason: Out / In, Bits<4>;
    }
}

bus_pair! {
    /// A copy of the beats the receive core takes (no back-pressure).
    TapOut = "TapOut"
    /// The receive core's input tap seen from a block that watches it.
    / TapIn = "TapIn"
    [const W: usize, const B: usize]
    {
        /// Beat data.
        tdata: Out / In, Bits<W>;
        /// Byte enables (packed).
        tkeep: Out / In, Bits<B>;
        /// The core takes a beat this cycle.
        tvalid: Out / In, Bit;
        /// It is the datagram's last beat.
        tlast: Out / In, Bit;
    }
}

bus_pair! {
    /// Send descriptors into the TX builder: one datagram's header fields and
    /// where its payload is in host memory.
    DescIn = "DescIn"
    /// Send descriptors seen from their source: [`DescIn`] mirrored.
    / DescOut = "DescOut"
    []
    {
        /// Descriptor valid.
        valid: In / Out, Bit;
        /// The builder takes the descriptor.
        ready: Out / In, Bit;
        /// Opcode; 0x01..=0x06 carry the MSG extension.
        opcode: In / Out, Bits<8>;
        /// Base-header flags.
        flags: In / Out, Bits<16>;
        /// Destination QPN.
        dst_qpn: In / Out, Bits<32>;
        /// Source QPN.
        src_qpn: In / Out, Bits<32>;
        /// Stream id.
        stream: In / Out, Bits<16>;
        /// Path index: selects the entropy (UDP source port).
        path: In / Out, Bits<16>;
        /// Connection PSN.
        conn_psn: In / Out, Bits<32>;
        /// Path PSN.
        path_psn: In / Out, Bits<32>;
        /// Timestamp (ns).
        timestamp: In / Out, Bits<64>;
        /// MSG: message sequence number.
        msn: In / Out, Bits<32>;
        /// MSG: receive index.
        recv_idx: In / Out, Bits<32>;
        /// MSG: message length.
        msg_len: In / Out, Bits<32>;
        /// MSG: offset of the payload in the message.
        offset: In / Out, Bits<32>;
        /// MSG: remote address.
        remote_va: In / Out, Bits<64>;
        /// MSG: rkey.
        rkey: In / Out, Bits<32>;
        /// MSG: immediate data.
        imm: In / Out, Bits<32>;
        /// Payload bytes (0: no fetch).
        len: In / Out, Bits<16>;
        /// Host address of the payload.
        addr: In / Out, Bits<64>;
        /// Send ECN-capable: ECT(0) in the IP header.
        ecn: In / Out, Bit;
    }
}

bus_pair! {
    /// Payload fetch requests (host memory reads) of the TX builder; the data
    /// comes back on an [`AxisIn`].
    ReadReqOut = "ReadReqOut"
    /// Payload fetch requests seen from the memory side: [`ReadReqOut`] mirrored.
    / ReadReqIn = "ReadReqIn"
    []
    {
        /// Request valid.
        valid: Out / In, Bit;
        /// The memory takes the request.
        ready: In / Out, Bit;
        /// Host address.
        addr: Out / In, Bits<64>;
        /// Bytes.
        len: Out / In, Bits<16>;
    }
}

bus_pair! {
    /// Read port of the per-path TX table (`crate::TxPathTable`): a slot (of
    /// `SB` bits) in, its state out, combinationally.
    TxReadPort = "TxReadPort"
    /// The TX table's read port seen from its reader: [`TxReadPort`] mirrored.
    / TxRead = "TxRead"
    [const SB: usize]
    {
        /// Slot to read.
        slot: In / Out, Bits<SB>;
        /// Length for `can_send`.
        len: In / Out, Bits<16>;
        /// Entropy (UDP source port).
        entropy: Out / In, Bits<16>;
        /// Next path PSN.
        next_psn: Out / In, Bits<32>;
        /// Oldest unresolved path PSN.
        una: Out / In, Bits<32>;
        /// Bytes in flight.
        inflight: Out / In, Bits<32>;
        /// Window (bytes).
        window: Out / In, Bits<32>;
        /// Smoothed RTT, ns.
        srtt: Out / In, Bits<32>;
        /// RTT variation, ns.
        rttvar: Out / In, Bits<32>;
        /// An RTT sample was taken.
        rtt_valid: Out / In, Bit;
        /// ECN EWMA (16.16).
        ecn_ewma: Out / In, Bits<32>;
        /// Loss EWMA (16.16).
        loss_ewma: Out / In, Bits<32>;
        /// Acked packets since the last move.
        samples: Out / In, Bits<32>;
        /// Data packets sent.
        sent: Out / In, Bits<32>;
        /// Retransmissions sent.
        retransmitted: Out / In, Bits<32>;
        /// Packets acknowledged.
        acked: Out / In, Bits<32>;
        /// Packets lost.
        lost: Out / In, Bits<32>;
        /// CE marks counted.
        ce_marked: Out / In, Bits<32>;
        /// Moves.
        repaths: Out / In, Bits<32>;
        /// Timeouts.
        timeouts: Out / In, Bits<32>;
        /// Quarantined.
        quarantined: Out / In, Bit;
        /// Probe backoff multiplier.
        backoff: Out / In, Bits<4>;
        /// `TxPath::can_send(len)`.
        can_send: Out / In, Bit;
    }
}

bus_pair! {
    /// Fate events of the per-path TX table: each transmission, once acked or
    /// lost, with its connection PSN.
    FateOut = "FateOut"
    /// TX table fate events seen from their user: [`FateOut`] mirrored.
    / FateIn = "FateIn"
    []
    {
        /// Fate event valid.
        valid: Out / In, Bit;
        /// The firmware takes the event.
        ready: In / Out, Bit;
        /// Lost (1) or acked (0).
        lost: Out / In, Bit;
        /// Connection PSN of the transmission.
        conn_psn: Out / In, Bits<32>;
    }
}

bus_pair! {
    /// Operation port of the per-path TX table (`crate::TxPathTable`, the
    /// `crate::TxOp` codes): one operation taken when `valid` meets `ready`,
    /// its operands with it.
    TxOpIn = "TxOpIn"
    /// TX table operations seen from their issuer: [`TxOpIn`] mirrored.
    / TxOpOut = "TxOpOut"
    [const SB: usize]
    {
        /// Operation valid.
        valid: In / Out, Bit;
        /// The table takes an operation (none running).
        ready: Out / In, Bit;
        /// Operation (`crate::TxOp`).
        code: In / Out, Bits<3>;
        /// Slot operated on.
        slot: In / Out, Bits<SB>;
        /// `Send`: connection PSN; `Ack`: `path_cum`; `Lose`: path PSN.
        psn: In / Out, Bits<32>;
        /// `Send`: payload bytes.
        len: In / Out, Bits<16>;
        /// `Send`: a probe.
        probe: In / Out, Bit;
        /// `Send`: a retransmission.
        retx: In / Out, Bit;
        /// `Ack`: SACK bitmap.
        sack: In / Out, Bits<256>;
        /// `Feedback`: an RTT sample is given.
        rtt_valid: In / Out, Bit;
        /// `Feedback`: RTT sample, ns.
        rtt: In / Out, Bits<32>;
        /// `Feedback`: the ACK's cumulative CE count.
        ce_count: In / Out, Bits<32>;
        /// `Feedback`: packets the ACK acknowledged.
        acked: In / Out, Bits<32>;
        /// `Init`/`Timeout`/`Move`: entropy; `Window`: window in bytes.
        value: In / Out, Bits<32>;
    }
}

bus_pair! {
    /// Results of the per-path TX table's operations: one `valid` pulse per
    /// operation done, its results with it.
    TxResOut = "TxResOut"
    /// TX table results seen from the operation's issuer: [`TxResOut`] mirrored.
    / TxResIn = "TxResIn"
    []
    {
        /// Pulse: the operation is done.
        valid: Out / In, Bit;
        /// `Send`: the ring had room.
        ok: Out / In, Bit;
        /// `Send`: path PSN assigned.
        psn: Out / In, Bits<32>;
        /// `Ack`: data packets acknowledged.
        pkts: Out / In, Bits<32>;
        /// `Ack`: bytes acknowledged.
        bytes: Out / In, Bits<32>;
    }
}

bus_pair! {
    /// Check port of the per-path TX table: what the ACK receiver's evidence
    /// check reads of a slot (`crate::ack_rx`), combinationally.
    TxCheckPort = "TxCheckPort"
    /// The TX table's check port seen from its reader: [`TxCheckPort`] mirrored.
    / TxCheck = "TxCheck"
    [const SB: usize]
    {
        /// Slot to show.
        slot: In / Out, Bits<SB>;
        /// Its `una`.
        una: Out / In, Bits<32>;
        /// Its `next_psn`.
        next_psn: Out / In, Bits<32>;
        /// The last `ce_count` applied on it.
        last_ce: Out / In, Bits<32>;
        /// It is quarantined.
        quarantined: Out / In, Bit;
    }
}

bus_pair! {
    /// ACKs the ACK receiver applied to the TX table (`crate::AckRx`): one
    /// `valid` pulse per ACK, for the firmware's congestion controller and
    /// connection state.
    AckDoneOut = "AckDoneOut"
    /// Applied ACKs seen from their user: [`AckDoneOut`] mirrored.
    / AckDoneIn = "AckDoneIn"
    [const SB: usize]
    {
        /// Pulse: an ACK was applied.
        valid: Out / In, Bit;
        /// Its TX table slot.
        slot: Out / In, Bits<SB>;
        /// Data packets it acknowledged.
        pkts: Out / In, Bits<32>;
        /// Bytes it acknowledged.
        bytes: Out / In, Bits<32>;
        /// The ACK's `conn_cum`.
        conn_cum: Out / In, Bits<32>;
    }
}

bus_pair! {
    /// The ACK receiver's counters (`crate::AckRx`).
    AckRxCntOut = "AckRxCntOut"
    /// The ACK receiver's counters seen from their reader: [`AckRxCntOut`]
    /// mirrored.
    / AckRxCntIn = "AckRxCntIn"
    []
    {
        /// ACKs applied.
        applied: Out / In, Bits<32>;
        /// Valid ACKs whose (QPN, path) has no slot (left to the firmware).
        unmapped: Out / In, Bits<32>;
        /// ACKs dropped because the queue (16) was full.
        overflow: Out / In, Bits<32>;
        /// Events whose path PSN or timestamp differed from the captured
        /// datagram's (not applied; 0 unless the pairing broke).
        pair_err: Out / In, Bits<32>;
        /// ACKs refused by the evidence check (spec §5.5 step 0: nothing
        /// applied, no done pulse); counted in the cycle after the refused
        /// ACK's turn.
        refused: Out / In, Bits<32>;
    }
}

/// What the ACK receiver (`crate::AckRx`) watches of the receive core:
/// the beats the core takes (no byte enables: an ACK fills every lane of
/// the bytes it keeps) and, one per datagram in order, the verdict event
/// fields that pair an event with its datagram and route an ACK.
#[derive(LogicInterface, Default)]
pub struct AckTapIn<const W: usize> {
    /// Beat data.
    pub tdata: Signal<In, Bits<W>>,
    /// The core takes a beat this cycle.
    pub tvalid: Signal<In, Bit>,
    /// It is the datagram's last beat.
    pub tlast: Signal<In, Bit>,
    /// Verdict event pulse (one per datagram, in order).
    pub ev_valid: Signal<In, Bit>,
    /// Its verdict code.
    pub ev_code: Signal<In, Bits<5>>,
    /// Its opcode.
    pub ev_opcode: Signal<In, Bits<8>>,
    /// Its destination QPN.
    pub ev_dst_qpn: Signal<In, Bits<32>>,
    /// Its path.
    pub ev_path: Signal<In, Bits<16>>,
    /// Its path PSN (the pairing guard).
    pub ev_path_psn: Signal<In, Bits<32>>,
    /// Its timestamp (the pairing guard).
    pub ev_timestamp: Signal<In, Bits<64>>,
}
