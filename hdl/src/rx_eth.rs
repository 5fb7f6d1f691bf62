//! Receive front end ([`RxEth`]): Ethernet II (at most one 802.1Q tag),
//! IPv4 or IPv6, UDP to a configured port; hands the UDP payload, realigned
//! to lane 0, to [`crate::RxParser`] with the ICRC pseudo-header fields.
//!
//! # Interface
//! * `s_axis_*`: Ethernet frames from the MAC (FCS already stripped),
//!   `W`-bit beats, first byte in lane 0, `tkeep` packed.
//! * `m_axis_*` and `m_pseudo_*`: exactly [`crate::RxParser`]'s input: one
//!   UDP payload per frame, lane 0 first, and its pseudo-header fields
//!   (`m_pseudo_src_ip`/`dst_ip` with IPv4 mapped into IPv6 `::ffff:a.b.c.d`,
//!   network order, byte 0 in bits 127..120; ports; UDP length), valid with
//!   the frame's first beat and held until the next frame's first beat.
//!   `m_ecn` is the IP ECN field of the same frame (`0b11` = CE), same timing.
//! * `m_ev_valid`, `m_ev_reason`: one pulse per input frame, two cycles
//!   after its last beat, with its [`EthDrop`] code.
//! * `cfg_port_we`, `cfg_port`: the UDP destination port accepted
//!   (reset value `metaroce_proto::DEFAULT_UDP_PORT`).
//! * `cnt_sel`, `cnt_val`: frames per [`EthDrop`] code (32 bits), read one
//!   cycle after the select, like `RxCore`.
//!
//! # Checks (first failure wins)
//! The order is the one a layer-by-layer parse meets them in (`etherparse`'s
//! for the header layouts), then the rules MetaRoCE adds:
//!
//! 1. more than [`MAX_FRAME`] bytes → `TooLong`;
//! 2. shorter than the Ethernet header (14, or 18 with a tag) → `Truncated`;
//! 3. EtherType (after at most one 0x8100 tag) neither 0x0800 nor 0x86DD →
//!    `EtherType`;
//! 4. IPv4: fewer than 20 bytes → `Truncated`; version ≠ 4 or IHL < 5 →
//!    `BadIpHeader`; fewer than IHL·4 bytes → `Truncated`; total length <
//!    IHL·4 → `BadIpHeader`; fewer bytes than the total length →
//!    `Truncated`; header checksum wrong → `BadChecksum`; MF set or fragment
//!    offset ≠ 0 → `Fragment`; protocol ≠ 17 → `Protocol`.
//!    IPv6: fewer than 40 bytes → `Truncated`; version ≠ 6 → `BadIpHeader`;
//!    fewer bytes than 40 + payload length → `Truncated`; next header an
//!    extension header (0, 43, 44, 50, 51, 60, 135, 139, 140, 253, 254) →
//!    `ExtHeader`; next header ≠ 17 → `Protocol`;
//! 5. bytes after the IP packet in a frame longer than [`PAD_MAX`] →
//!    `TrailingBytes` (in shorter frames they are Ethernet padding, trimmed);
//! 6. IP payload shorter than 8, or UDP length ≠ IP payload length →
//!    `UdpLength`;
//! 7. UDP destination port ≠ the configured port → `Port`;
//! 8. no UDP payload → `NoPayload` (a stream frame cannot be empty).
//!
//! The UDP checksum is not checked (RoCEv2-style senders set it to 0; the
//! ICRC covers the datagram).
//!
//! # Structure
//! Store and forward: the first 128 bytes are captured in network order;
//! the payload is realigned on the way in (the previous beat's top bytes and
//! the current beat's first bytes, shifted by the header length mod the beat
//! size), trimmed to the IP length, and written to a frame FIFO. At the
//! frame's end (one cycle after its last beat) the verdict either commits
//! the frame and queues its pseudo-header fields, or rewinds the FIFO's write
//! pointer, so a dropped frame never reaches the output. The output side
//! reads committed beats, one per cycle. The FIFO holds two frames of
//! [`MAX_FRAME`] bytes, so while the consumer is ready the block takes one
//! beat every cycle.
//!
//! Hand-written Verilog (`rx_eth.v.in`): the FIFOs are arrays, and the
//! header fields sit at offsets that depend on the tag and the IHL, which
//! rust-hdl kernels cannot slice. No rust-hdl simulation model; verified
//! under Verilator (`metaroce-sim-tb`) against `etherparse`.

use rust_hdl::prelude::*;

/// Longest frame accepted, bytes (a 9,198-byte jumbo IP packet plus the
/// Ethernet header and a tag, rounded up).
pub const MAX_FRAME: usize = 9216;
/// Frames up to this many bytes may carry bytes after the IP packet
/// (padding to the 60-byte minimum, plus a tag a switch inserted).
pub const PAD_MAX: usize = 64;
/// Bytes of each frame's start captured for header parsing.
const HDR_BYTES: usize = 128;
/// Entries of the queue of committed frames' fields.
const QUEUE: usize = 32;

/// Why the front end dropped a frame (`m_ev_reason`, counter index).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EthDrop {
    /// Accepted: the UDP payload goes to the output.
    Accepted = 0,
    /// The frame ends before a header, or before the IP length.
    Truncated = 1,
    /// Not IPv4 or IPv6 (after at most one 802.1Q tag).
    EtherType = 2,
    /// IP version wrong, IPv4 IHL < 5 or total length < header length.
    BadIpHeader = 3,
    /// IPv4 header checksum wrong.
    BadChecksum = 4,
    /// IPv4 fragment (MF set or offset ≠ 0).
    Fragment = 5,
    /// IPv6 extension header.
    ExtHeader = 6,
    /// Not UDP.
    Protocol = 7,
    /// Bytes after the IP packet in a frame longer than [`PAD_MAX`].
    TrailingBytes = 8,
    /// UDP length disagrees with the IP length, or no room for a UDP header.
    UdpLength = 9,
    /// UDP destination port is not the configured one.
    Port = 10,
    /// Empty UDP payload.
    NoPayload = 11,
    /// Longer than [`MAX_FRAME`].
    TooLong = 12,
}

impl EthDrop {
    /// Every code, by value.
    pub const ALL: [EthDrop; 13] = [
        Self::Accepted,
        Self::Truncated,
        Self::EtherType,
        Self::BadIpHeader,
        Self::BadChecksum,
        Self::Fragment,
        Self::ExtHeader,
        Self::Protocol,
        Self::TrailingBytes,
        Self::UdpLength,
        Self::Port,
        Self::NoPayload,
        Self::TooLong,
    ];

    /// The reason with code `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// `SCREAMING_SNAKE` name (Verilog localparams, bench constants).
    pub fn const_name(self) -> String {
        format!("{self:?}")
            .chars()
            .enumerate()
            .flat_map(|(i, c)| {
                let sep = (i > 0 && c.is_uppercase()).then_some('_');
                sep.into_iter().chain(c.to_uppercase())
            })
            .collect()
    }
}

/// The front end at `W`-bit beats (`B = W / 8` lanes; 64 or 512 bits).
#[derive(LogicBlock, Default)]
pub struct RxEth<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empties the FIFOs, zeroes the counters, restores
    /// the default port.
    pub rst: Signal<In, Bit>,
    /// Ethernet frame beat data (lane 0 = first byte).
    pub s_axis_tdata: Signal<In, Bits<W>>,
    /// Byte enables (packed).
    pub s_axis_tkeep: Signal<In, Bits<B>>,
    /// Beat valid.
    pub s_axis_tvalid: Signal<In, Bit>,
    /// The block takes the beat.
    pub s_axis_tready: Signal<Out, Bit>,
    /// Last beat of the frame.
    pub s_axis_tlast: Signal<In, Bit>,
    /// UDP payload beat data, lane 0 first.
    pub m_axis_tdata: Signal<Out, Bits<W>>,
    /// Payload byte enables (packed).
    pub m_axis_tkeep: Signal<Out, Bits<B>>,
    /// Payload beat valid.
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// Consumer takes the beat.
    pub m_axis_tready: Signal<In, Bit>,
    /// Last payload beat.
    pub m_axis_tlast: Signal<Out, Bit>,
    /// Source IP (IPv4 mapped into IPv6), network order; valid from the
    /// frame's first payload beat until the next frame's.
    pub m_pseudo_src_ip: Signal<Out, Bits<128>>,
    /// Destination IP, same format and timing.
    pub m_pseudo_dst_ip: Signal<Out, Bits<128>>,
    /// UDP source port.
    pub m_pseudo_src_port: Signal<Out, Bits<16>>,
    /// UDP destination port.
    pub m_pseudo_dst_port: Signal<Out, Bits<16>>,
    /// UDP length (8 + payload bytes).
    pub m_pseudo_udp_len: Signal<Out, Bits<16>>,
    /// IP ECN field (`0b11` = CE), same timing.
    pub m_ecn: Signal<Out, Bits<2>>,
    /// One pulse per input frame: its verdict is in `m_ev_reason`.
    pub m_ev_valid: Signal<Out, Bit>,
    /// [`EthDrop`] code.
    pub m_ev_reason: Signal<Out, Bits<4>>,
    /// Write `cfg_port` as the accepted UDP destination port.
    pub cfg_port_we: Signal<In, Bit>,
    /// UDP destination port to accept.
    pub cfg_port: Signal<In, Bits<16>>,
    /// Counter select (an [`EthDrop`] code).
    pub cnt_sel: Signal<In, Bits<4>>,
    /// The selected counter, one cycle after `cnt_sel`.
    pub cnt_val: Signal<Out, Bits<32>>,
}

/// 64-bit beats.
pub type RxEth64 = RxEth<64, 8>;
/// 512-bit beats.
pub type RxEth512 = RxEth<512, 64>;

/// Depth of the frame FIFO in beats: two [`MAX_FRAME`] frames plus slack,
/// rounded up to a power of two.
pub const fn fifo_depth(bytes_per_beat: usize) -> usize {
    (2 * (MAX_FRAME.div_ceil(bytes_per_beat) + 4)).next_power_of_two()
}

impl<const W: usize, const B: usize> Logic for RxEth<W, B> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert!(
            W == 8 * B && (W == 64 || W == 512),
            "RxEth<{W}, {B}>: W must be 64 or 512 and B = W / 8"
        );
        self.s_axis_tready.connect();
        self.m_axis_tdata.connect();
        self.m_axis_tkeep.connect();
        self.m_axis_tvalid.connect();
        self.m_axis_tlast.connect();
        self.m_pseudo_src_ip.connect();
        self.m_pseudo_dst_ip.connect();
        self.m_pseudo_src_port.connect();
        self.m_pseudo_dst_port.connect();
        self.m_pseudo_udp_len.connect();
        self.m_ecn.connect();
        self.m_ev_valid.connect();
        self.m_ev_reason.connect();
        self.cnt_val.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(rx_eth_body(W))
    }
}

/// The module body for `width` bits per beat (the template with every
/// `@NAME@` replaced).
fn rx_eth_body(width: usize) -> String {
    let b = width / 8;
    let lb = b.trailing_zeros() as usize;
    let depth = fifo_depth(b);
    let dbits = depth.trailing_zeros() as usize;
    let mbits = QUEUE.trailing_zeros() as usize;
    let reasons = EthDrop::ALL
        .iter()
        .map(|r| format!("R_{} = 4'd{}", r.const_name(), *r as u8))
        .collect::<Vec<_>>()
        .join(", ");
    let subs: [(&str, String); 17] = [
        ("@REASONS@", format!("localparam [3:0] {reasons};")),
        ("@WM1@", (width - 1).to_string()),
        ("@BM1@", (b - 1).to_string()),
        ("@LBM1@", (lb - 1).to_string()),
        ("@LB@", lb.to_string()),
        ("@DEPTH@", depth.to_string()),
        ("@DBITS@", dbits.to_string()),
        ("@DBM1@", (dbits - 1).to_string()),
        ("@MDEPTH@", QUEUE.to_string()),
        ("@MBITS@", mbits.to_string()),
        ("@MBM1@", (mbits - 1).to_string()),
        ("@MAX_FRAME@", MAX_FRAME.to_string()),
        ("@PAD_MAX@", format!("16'd{PAD_MAX}")),
        ("@PORT@", metaroce_proto::DEFAULT_UDP_PORT.to_string()),
        // Beats before bytes 0..23 (tag, EtherType, IP lengths) are captured.
        ("@READY@", 24usize.div_ceil(b).to_string()),
        ("@HDR_BEATS@", (HDR_BYTES / b).to_string()),
        ("@W@", width.to_string()),
    ];
    let mut text = include_str!("rx_eth.v.in").to_string();
    for (key, value) in &subs {
        text = text.replace(key, value);
    }
    text.replace("@B@", &b.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_round_trip_and_name() {
        for r in EthDrop::ALL {
            assert_eq!(EthDrop::from_code(r as u8), Some(r));
        }
        assert_eq!(EthDrop::from_code(13), None);
        assert_eq!(EthDrop::BadIpHeader.const_name(), "BAD_IP_HEADER");
    }

    #[test]
    fn template_is_fully_substituted() {
        for w in [64, 512] {
            let v = crate::rx_eth_verilog(w);
            // Placeholders are `@NAME@`; only Verilog's own `@(` may stay.
            assert!(
                v.match_indices('@')
                    .all(|(i, _)| v[i + 1..].starts_with('(')),
                "width {w}: placeholder left"
            );
            assert!(v.contains("module top("), "width {w}");
        }
    }
}
