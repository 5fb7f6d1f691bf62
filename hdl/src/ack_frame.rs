//! ACK framer: the receive core's ACK datagrams (`m_ack_*`: UDP payload,
//! destination IP, UDP ports) become Ethernet II + IPv4 + UDP or Ethernet
//! II + IPv6 + UDP frames for the MAC.
//!
//! [`AckFrame`] stores one datagram (up to [`CAP_BYTES`]; the ACK
//! generator sends 100) with its addressing, then sends the header and the
//! datagram, one beat per cycle. The header, laid out as
//! [`crate::TxBuild`]'s, is built by Verilog functions: `ipv4_udp_hdr` (42 bytes, UDP
//! checksum 0, which the wire spec allows on IPv4) when the destination is
//! an IPv4-mapped address, else `ipv6_udp_hdr` (62 bytes: EtherType
//! 0x86DD, flow label 0, next header 17, hop limit = the TTL register)
//! with the UDP checksum computed, as the wire spec (§2.5) requires on
//! IPv6: the datagram's words are summed while it is captured, the
//! pseudo-header and UDP header are added when the frame is loaded. The
//! addresses, TTL and DSCP are the TX builder's registers (`reg_*`, the
//! local IPv6 address included), so the top has one configuration map;
//! the IP ECN field is ECT(0), as the engine sends its ACKs. While one
//! frame leaves, the next datagram is captured, so ACK frames follow each
//! other without an idle cycle.
//!
//! A second input, `s_fw_*`, takes the datagrams the firmware builds
//! whole (NACK, DISCONNECT) and frames them the same way: the framer
//! captures one datagram at a time, from the ACK generator when it has one
//! to start, else from the firmware, and holds that choice from the
//! datagram's first beat to its last.
//!
//! Every datagram is framed (no address is refused). Counters for the
//! firmware: `cnt_frames` (frames sent), `cnt_ece` (of which carried ECE),
//! `cnt_v6` (of which IPv6) and `cnt_fw` (of which the firmware's).
//!
//! Hand-written Verilog (`ack_frame.v.in`); verified under Verilator inside
//! [`crate::NicCore`].

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

/// Verilog function `ipv4_udp_hdr(dmac, smac, tos, ttl, sip, dip, sport,
/// dport, dlen)`: the 42-byte Ethernet II + IPv4 + UDP header in front of a
/// `dlen`-byte UDP payload, network order (byte 0 in bits 335..328): IPv4
/// version/IHL 0x45, ID 0, DF, protocol 17, header checksum computed (two
/// end-around carries); UDP checksum 0. The same
/// layout as [`crate::TxBuild`]'s frames. ANSI arguments on one line: `sim-tb`'s
/// port parser reads lines starting with `input` as ports.
const IPV4_UDP_HDR_FN: &str = "function [335:0] ipv4_udp_hdr(input [47:0] dmac, input [47:0] smac, input [7:0] tos, input [7:0] ttl, input [31:0] sip, input [31:0] dip, input [15:0] sport, input [15:0] dport, input [15:0] dlen);
    reg [31:0] s;
    begin
        s = {16'd0, 8'h45, tos} + {16'd0, dlen + 16'd28} + 32'h4000
            + {16'd0, ttl, 8'd17} + {16'd0, sip[31:16]} + {16'd0, sip[15:0]}
            + {16'd0, dip[31:16]} + {16'd0, dip[15:0]};
        s = {16'd0, s[15:0]} + {16'd0, s[31:16]};
        s = {16'd0, s[15:0]} + {16'd0, s[31:16]};
        ipv4_udp_hdr = {dmac, smac, 16'h0800,
            8'h45, tos, dlen + 16'd28, 16'h0000, 16'h4000, ttl, 8'd17, ~s[15:0], sip, dip,
            sport, dport, dlen + 16'd8, 16'h0000};
    end
endfunction
";

/// Verilog function `ipv6_udp_hdr(dmac, smac, tc, hop, sip, dip, sport,
/// dport, dlen, csum)`: the 62-byte Ethernet II + IPv6 + UDP header in
/// front of a `dlen`-byte UDP payload, network order (byte 0 in bits
/// 495..488): EtherType 0x86DD, version 6, traffic class `tc`, flow label
/// 0, payload length `dlen + 8`, next header 17, hop limit `hop`; UDP
/// length `dlen + 8` and checksum `csum` (the framer passes the computed one). One line of arguments, as [`IPV4_UDP_HDR_FN`].
const IPV6_UDP_HDR_FN: &str = "function [495:0] ipv6_udp_hdr(input [47:0] dmac, input [47:0] smac, input [7:0] tc, input [7:0] hop, input [127:0] sip, input [127:0] dip, input [15:0] sport, input [15:0] dport, input [15:0] dlen, input [15:0] csum);
    ipv6_udp_hdr = {dmac, smac, 16'h86DD, 4'd6, tc, 20'd0, dlen + 16'd8, 8'd17, hop, sip, dip,
                    sport, dport, dlen + 16'd8, csum};
endfunction
";

/// Largest datagram the framer stores.
pub const CAP_BYTES: usize = 128;

/// The ACK framer at `W`-bit beats (`B = W / 8` lanes, 8 to 64).
#[derive(LogicBlock, Default)]
pub struct AckFrame<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: drops the stored datagram and the frame in
    /// flight, clears the counters.
    pub rst: Signal<In, Bit>,
    /// ACK datagram beats.
    pub s_ack_tdata: Signal<In, Bits<W>>,
    /// ACK byte enables (packed).
    pub s_ack_tkeep: Signal<In, Bits<B>>,
    /// ACK beat valid.
    pub s_ack_tvalid: Signal<In, Bit>,
    /// The framer takes the beat.
    pub s_ack_tready: Signal<Out, Bit>,
    /// Last beat of the datagram.
    pub s_ack_tlast: Signal<In, Bit>,
    /// Destination IP (IPv6, or IPv4 mapped into IPv6: selects the
    /// frame's IP version), sampled with the first beat.
    pub s_ack_dst_ip: Signal<In, Bits<128>>,
    /// UDP source port, sampled with the first beat.
    pub s_ack_src_port: Signal<In, Bits<16>>,
    /// UDP destination port, sampled with the first beat.
    pub s_ack_dst_port: Signal<In, Bits<16>>,
    /// The ACK carries ECE (counted), sampled with the first beat.
    pub s_ack_ece: Signal<In, Bit>,
    /// Local MAC (Ethernet source).
    pub reg_local_mac: Signal<In, Bits<48>>,
    /// Next-hop MAC (Ethernet destination).
    pub reg_peer_mac: Signal<In, Bits<48>>,
    /// Local IPv4 address (IP source).
    pub reg_local_ip: Signal<In, Bits<32>>,
    /// Local IPv6 address (IPv6 source).
    pub reg_local_ip6: Signal<In, Bits<128>>,
    /// IPv4 TTL / IPv6 hop limit.
    pub reg_ttl: Signal<In, Bits<8>>,
    /// DSCP (IPv4 TOS / IPv6 traffic class bits 7..2).
    pub reg_dscp: Signal<In, Bits<6>>,
    /// Frame data.
    pub m_axis_tdata: Signal<Out, Bits<W>>,
    /// Frame byte enables (packed).
    pub m_axis_tkeep: Signal<Out, Bits<B>>,
    /// Frame beat valid.
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// Frame beat taken.
    pub m_axis_tready: Signal<In, Bit>,
    /// Last beat of the frame.
    pub m_axis_tlast: Signal<Out, Bit>,
    /// ACK frames sent (IPv4 and IPv6).
    pub cnt_frames: Signal<Out, Bits<32>>,
    /// ACK frames sent whose ACK carried ECE.
    pub cnt_ece: Signal<Out, Bits<32>>,
    /// ACK frames sent as IPv6 (destination not IPv4-mapped).
    pub cnt_v6: Signal<Out, Bits<32>>,
    /// Firmware datagram beats (up to [`CAP_BYTES`] a datagram).
    pub s_fw_tdata: Signal<In, Bits<W>>,
    /// Firmware byte enables (packed).
    pub s_fw_tkeep: Signal<In, Bits<B>>,
    /// Firmware beat valid.
    pub s_fw_tvalid: Signal<In, Bit>,
    /// The framer takes the firmware's beat.
    pub s_fw_tready: Signal<Out, Bit>,
    /// Last beat of the firmware's datagram.
    pub s_fw_tlast: Signal<In, Bit>,
    /// Its destination IP (IPv6, or IPv4 mapped), with the first beat.
    pub s_fw_dst_ip: Signal<In, Bits<128>>,
    /// Its UDP source port, with the first beat.
    pub s_fw_src_port: Signal<In, Bits<16>>,
    /// Its UDP destination port, with the first beat.
    pub s_fw_dst_port: Signal<In, Bits<16>>,
    /// Frames sent of datagrams from the firmware.
    pub cnt_fw: Signal<Out, Bits<32>>,
}

impl<const W: usize, const B: usize> Logic for AckFrame<W, B> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "AckFrame: W must be 8 * B");
        assert!(
            B.is_power_of_two() && (8..=64).contains(&B),
            "AckFrame: B must be 8, 16, 32 or 64"
        );
        self.s_ack_tready.connect();
        self.m_axis_tdata.connect();
        self.m_axis_tkeep.connect();
        self.m_axis_tvalid.connect();
        self.m_axis_tlast.connect();
        self.cnt_frames.connect();
        self.cnt_ece.connect();
        self.cnt_v6.connect();
        self.s_fw_tready.connect();
        self.cnt_fw.connect();
    }

    fn hdl(&self) -> Verilog {
        // Output buffer: the longer (IPv6) header + largest datagram,
        // whole beats.
        let out_bytes = (62 + CAP_BYTES).div_ceil(B) * B;
        hand_written(
            include_str!("ack_frame.v.in")
                .replace("@HDR_FN@", &format!("{IPV4_UDP_HDR_FN}{IPV6_UDP_HDR_FN}"))
                .replace("@CAPB@", &CAP_BYTES.to_string())
                .replace("@OUTB@", &out_bytes.to_string())
                .replace("@WM1@", &(W - 1).to_string())
                .replace("@W@", &W.to_string())
                .replace("@B@", &B.to_string()),
        )
    }
}
