//! TX frame builder: a firmware descriptor in, a complete Ethernet frame
//! out.
//!
//! [`TxBuild`] takes one descriptor per cycle (the MetaRoCE base header
//! fields, the MSG extension for opcodes 0x01..=0x06, the payload's host
//! address and length, ECN-capable), asks a DMA engine for the payload
//! (`m_rd_*`), takes it back as an AXI-Stream (`s_pay_*`) and streams out
//! Ethernet II + IPv4 + UDP + MetaRoCE headers + payload + ICRC
//! (`m_axis_*`), one beat per cycle. IPv4 or IPv6 ([`cfg::PEER`] bit 62):
//!
//! * **UDP source-port rewrite**: the UDP source port is the entry of a
//!   per-path entropy table ([`cfg::ENTROPY`], written by the firmware) for
//!   the descriptor's path, sampled when the descriptor is accepted;
//! * **ICRC after the rewrite**: CRC-32 over the 40-byte pseudo-header
//!   (with that source port) and the datagram, computed as the frame
//!   streams with the CRC functions of [`crate::icrc`], appended big-endian;
//! * IPv4: header checksum computed, DF set, ID 0; IPv6: flow label 0;
//!   UDP checksum 0 on both (as RoCEv2 on IPv4; on IPv6 a checksum over
//!   the payload would need the whole frame before its header, and the
//!   ICRC covers the datagram); ECN ECT(0) when the descriptor says
//!   ECN-capable; TTL / hop limit and DSCP from [`cfg::PEER`].
//!
//! # Pipeline
//! descriptor FIFO (4 entries; the fetch request leaves from it, ahead of
//! the frame) → header stage (the next frame's 74- or 106-byte header and
//! the pseudo-header CRC, built while the current frame streams; 94 or 126
//! bytes with IPv6) →
//! generator (header bytes, then payload bytes realigned by the header
//! length mod `B`, ICRC lanes reserved) → output register (CRC over the
//! beat's datagram lanes, ICRC written into its lanes, possibly spilling
//! into one more beat). Frames follow each other without an idle cycle.
//!
//! The fetch engine must return exactly `len` bytes per request, in
//! request order, packed, `tlast` on the last beat; `m_err` turns on (and
//! stays on until reset) when a payload beat's `tkeep` or `tlast` disagrees.
//!
//! Hand-written Verilog (`tx_build.v.in`, arrays and byte loops that
//! rust-hdl kernels cannot express); no rust-hdl simulation model: it is
//! verified under Verilator only (`metaroce-sim-tb`, against the engine).

use rust_hdl::prelude::*;

use crate::icrc::{CRC_BYTE_FN, PSEUDO_CRC_FN, beat_crc_fn, crc_range_fn};

/// Verilog function `ipv4_udp_hdr(dmac, smac, tos, ttl, sip, dip, sport,
/// dport, dlen)`: the 42-byte Ethernet II + IPv4 + UDP header in front of a
/// `dlen`-byte UDP payload, network order (byte 0 in bits 335..328): IPv4
/// version/IHL 0x45, ID 0, DF, protocol 17, header checksum computed (two
/// end-around carries); UDP checksum 0. Shared by [`TxBuild`] and the ACK
/// framer ([`crate::AckFrame`]). ANSI arguments on one line: `sim-tb`'s
/// port parser reads lines starting with `input` as ports.
pub(crate) const IPV4_UDP_HDR_FN: &str = "function [335:0] ipv4_udp_hdr(input [47:0] dmac, input [47:0] smac, input [7:0] tos, input [7:0] ttl, input [31:0] sip, input [31:0] dip, input [15:0] sport, input [15:0] dport, input [15:0] dlen);
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
/// length `dlen + 8` and checksum `csum` (the TX builder passes 0, the ACK
/// framer the computed one). Shared by [`TxBuild`] and the ACK framer; one
/// line of arguments, as [`IPV4_UDP_HDR_FN`].
pub(crate) const IPV6_UDP_HDR_FN: &str = "function [495:0] ipv6_udp_hdr(input [47:0] dmac, input [47:0] smac, input [7:0] tc, input [7:0] hop, input [127:0] sip, input [127:0] dip, input [15:0] sport, input [15:0] dport, input [15:0] dlen, input [15:0] csum);
    ipv6_udp_hdr = {dmac, smac, 16'h86DD, 4'd6, tc, 20'd0, dlen + 16'd8, 8'd17, hop, sip, dip,
                    sport, dport, dlen + 16'd8, csum};
endfunction
";

/// Entries of the per-path entropy table (the engine's `MAX_PATHS`); the
/// table is indexed by the low 6 bits of the descriptor's path.
pub const PATHS: usize = 64;

/// Configuration write port map: `cfg_addr = table << 6 | entry`, 64-bit
/// data, write-only. Writes take effect the next cycle; registers are not
/// cleared by reset.
pub mod cfg {
    /// Table select: registers.
    pub const REGS: u8 = 0;
    /// Table select: entropy table, entry = path, bits 15..0 = UDP source port.
    pub const ENTROPY: u8 = 1;
    /// Register 0: bits 47..0 local MAC (network order, first byte in
    /// bits 47..40), bits 63..48 UDP destination port.
    pub const LOCAL: u8 = 0;
    /// Register 1: bits 47..0 peer MAC, bits 55..48 IPv4 TTL / IPv6 hop
    /// limit, bits 61..56 DSCP, bit 62 IPv6 (else IPv4). Change it only
    /// while no frame is in flight.
    pub const PEER: u8 = 1;
    /// Bit of [`PEER`] that selects IPv6.
    pub const PEER_IPV6_BIT: u32 = 62;
    /// Register 2: bits 31..0 local IPv4 address, bits 63..32 peer IPv4
    /// address (first byte in the top bits of each).
    pub const IPV4: u8 = 2;
    /// Registers 3 and 4: local IPv6 address bits 127..64 and 63..0
    /// (first byte in the top bits).
    pub const LOCAL_IPV6: u8 = 3;
    /// Registers 5 and 6: peer IPv6 address bits 127..64 and 63..0.
    pub const PEER_IPV6: u8 = 5;

    /// The `cfg_addr` of `entry` in `table`.
    pub const fn addr(table: u8, entry: u8) -> u8 {
        table << 6 | entry
    }
}

/// The TX builder at `W`-bit beats (`B = W / 8` lanes). Streams use lane 0
/// for the first byte and packed `tkeep`.
#[derive(LogicBlock, Default)]
pub struct TxBuild<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empties the FIFO and the pipeline, clears `m_err`.
    pub rst: Signal<In, Bit>,
    /// Configuration write strobe.
    pub cfg_we: Signal<In, Bit>,
    /// Configuration address ([`cfg::addr`]).
    pub cfg_addr: Signal<In, Bits<8>>,
    /// Configuration data.
    pub cfg_data: Signal<In, Bits<64>>,
    /// Descriptor valid.
    pub s_desc_valid: Signal<In, Bit>,
    /// Descriptor taken (the FIFO has room).
    pub s_desc_ready: Signal<Out, Bit>,
    /// Opcode; 0x01..=0x06 carry the MSG extension.
    pub s_desc_opcode: Signal<In, Bits<8>>,
    /// Base-header flags.
    pub s_desc_flags: Signal<In, Bits<16>>,
    /// Destination QPN.
    pub s_desc_dst_qpn: Signal<In, Bits<32>>,
    /// Source QPN.
    pub s_desc_src_qpn: Signal<In, Bits<32>>,
    /// Stream id.
    pub s_desc_stream: Signal<In, Bits<16>>,
    /// Path index: selects the entropy (UDP source port).
    pub s_desc_path: Signal<In, Bits<16>>,
    /// Connection PSN.
    pub s_desc_conn_psn: Signal<In, Bits<32>>,
    /// Path PSN.
    pub s_desc_path_psn: Signal<In, Bits<32>>,
    /// Timestamp (ns).
    pub s_desc_timestamp: Signal<In, Bits<64>>,
    /// MSG: message sequence number.
    pub s_desc_msn: Signal<In, Bits<32>>,
    /// MSG: receive index.
    pub s_desc_recv_idx: Signal<In, Bits<32>>,
    /// MSG: message length.
    pub s_desc_msg_len: Signal<In, Bits<32>>,
    /// MSG: offset of the payload in the message.
    pub s_desc_offset: Signal<In, Bits<32>>,
    /// MSG: remote address.
    pub s_desc_remote_va: Signal<In, Bits<64>>,
    /// MSG: rkey.
    pub s_desc_rkey: Signal<In, Bits<32>>,
    /// MSG: immediate data.
    pub s_desc_imm: Signal<In, Bits<32>>,
    /// Payload bytes (0: no fetch).
    pub s_desc_len: Signal<In, Bits<16>>,
    /// Host address of the payload.
    pub s_desc_addr: Signal<In, Bits<64>>,
    /// Send ECN-capable: ECT(0) in the IPv4 header.
    pub s_desc_ecn: Signal<In, Bit>,
    /// Fetch request valid.
    pub m_rd_valid: Signal<Out, Bit>,
    /// Fetch request taken.
    pub m_rd_ready: Signal<In, Bit>,
    /// Fetch request: host address.
    pub m_rd_addr: Signal<Out, Bits<64>>,
    /// Fetch request: bytes.
    pub m_rd_len: Signal<Out, Bits<16>>,
    /// Fetched payload data.
    pub s_pay_tdata: Signal<In, Bits<W>>,
    /// Fetched payload byte enables (packed).
    pub s_pay_tkeep: Signal<In, Bits<B>>,
    /// Fetched payload beat valid.
    pub s_pay_tvalid: Signal<In, Bit>,
    /// Fetched payload beat taken.
    pub s_pay_tready: Signal<Out, Bit>,
    /// Last beat of a fetch.
    pub s_pay_tlast: Signal<In, Bit>,
    /// Frame data.
    pub m_axis_tdata: Signal<Out, Bits<W>>,
    /// Frame byte enables (packed).
    pub m_axis_tkeep: Signal<Out, Bits<B>>,
    /// Frame beat valid.
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// Frame beat taken.
    pub m_axis_tready: Signal<In, Bit>,
    /// Last beat of a frame.
    pub m_axis_tlast: Signal<Out, Bit>,
    /// Sticky: a fetched beat's `tkeep`/`tlast` disagreed with the request.
    pub m_err: Signal<Out, Bit>,
    /// Configured local MAC ([`cfg::LOCAL`]), for other frame sources of
    /// the same port (the ACK framer).
    pub reg_local_mac: Signal<Out, Bits<48>>,
    /// Configured peer (next-hop) MAC ([`cfg::PEER`]).
    pub reg_peer_mac: Signal<Out, Bits<48>>,
    /// Configured local IPv4 address ([`cfg::IPV4`]).
    pub reg_local_ip: Signal<Out, Bits<32>>,
    /// Configured local IPv6 address ([`cfg::LOCAL_IPV6`]).
    pub reg_local_ip6: Signal<Out, Bits<128>>,
    /// Configured TTL / hop limit ([`cfg::PEER`]).
    pub reg_ttl: Signal<Out, Bits<8>>,
    /// Configured DSCP ([`cfg::PEER`]).
    pub reg_dscp: Signal<Out, Bits<6>>,
}

impl<const W: usize, const B: usize> Logic for TxBuild<W, B> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "TxBuild: W must be 8 * B");
        assert!(
            B.is_power_of_two() && B >= 8,
            "TxBuild: B must be 8, 16, 32 or 64"
        );
        self.s_desc_ready.connect();
        self.m_rd_valid.connect();
        self.m_rd_addr.connect();
        self.m_rd_len.connect();
        self.s_pay_tready.connect();
        self.m_axis_tdata.connect();
        self.m_axis_tkeep.connect();
        self.m_axis_tvalid.connect();
        self.m_axis_tlast.connect();
        self.m_err.connect();
        self.reg_local_mac.connect();
        self.reg_peer_mac.connect();
        self.reg_local_ip.connect();
        self.reg_local_ip6.connect();
        self.reg_ttl.connect();
        self.reg_dscp.connect();
    }

    fn hdl(&self) -> Verilog {
        let fns = format!(
            "{CRC_BYTE_FN}{PSEUDO_CRC_FN}{}{}{IPV4_UDP_HDR_FN}{IPV6_UDP_HDR_FN}",
            crc_range_fn(B),
            beat_crc_fn("beat_crc", B)
        );
        Verilog::Custom(
            include_str!("tx_build.v.in")
                .replace("@CRC_FNS@", &fns)
                .replace("@WM1@", &(W - 1).to_string())
                .replace("@BM1@", &(B - 1).to_string())
                .replace("@W@", &W.to_string())
                .replace("@B@", &B.to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn template_is_fully_substituted_at_every_width() {
        for w in crate::SUPPORTED_WIDTHS {
            let v = crate::tx_build_verilog(w);
            for p in ["@CRC_FNS@", "@WM1@", "@BM1@", "@W@", "@B@"] {
                assert!(!v.contains(p), "{p} left at {w}");
            }
            assert!(v.contains(&format!("reg [{}:0] a_data;", w - 1)));
        }
    }
}
