//! RX parser: MetaRoCE base header (32 B) and MSG extension (32 B) at the
//! front of a UDP payload stream.
//!
//! # Interface
//! * `s_axis_*`: the UDP payload of one packet per AXI-Stream frame, first
//!   byte in lane 0 (`tdata[7:0]`), `tkeep` packed (only the last beat may be
//!   partial). The frame is at most 65535 bytes (a UDP payload); the packet
//!   length comes from counting bytes, so the ICRC trailer is included.
//!   An Ethernet/IPv4/UDP stripper goes in front of this module and drives
//!   `s_pseudo_*` (the ICRC pseudo-header fields: IP addresses mapped into
//!   IPv6, UDP ports, UDP length) while it sends the frame's first beat.
//! * `m_axis_*`: the frame with the parsed headers removed — 64 bytes (base +
//!   MSG) for MSG opcodes (0x01..=0x06 and the atomics 0x08..=0x0A), 32
//!   bytes (base only) for all other opcodes, so ACK/NACK/CM extensions reach
//!   their own parsers at the front of the stream. The 4-byte ICRC trailer stays at the end. A frame that has no
//!   bytes after the stripped headers emits no beats. Registered outputs;
//!   `s_axis_tready = !m_axis_tvalid | m_axis_tready`, so the parser takes one
//!   beat per cycle while the consumer is ready (0 bubbles).
//! * `m_meta_*`: one-cycle pulse `m_meta_valid` the cycle after the frame's
//!   last beat is accepted; the other `m_meta_*` outputs are valid while it is
//!   high and there is no back-pressure (the consumer queues them). MSG fields
//!   are meaningful when `m_meta_is_msg`, every field only when `!m_meta_drop`
//!   (a truncated frame leaves the missing bytes undefined).
//!
//! # Validation (first failure wins; the order of `metaroce_proto::Packet::check_len`)
//! 1. length < 32 + 4 (base header + ICRC) → [`DropReason::Truncated`];
//! 2. version ≠ 1 → [`DropReason::BadVersion`];
//! 3. unknown opcode → [`DropReason::BadOpcode`];
//! 4. length < 32 + extension(opcode) + 4 → [`DropReason::Truncated`];
//! 5. bytes after the extension on an opcode without payload (READ_REQ,
//!    ACK, NACK, PROBE, CM) → [`DropReason::UnexpectedPayload`];
//! 6. ICRC trailer ≠ CRC-32 over the pseudo-header and the covered bytes
//!    → [`DropReason::BadIcrc`] (the order of `metaroce_firmware::Nic`:
//!    framing first, then the ICRC).
//!
//! The ICRC is computed beat by beat as the frame streams through
//! ([`crate::icrc`]), so its verdict is ready with the other checks, one
//! cycle after the last beat.
//!
//! # Header capture
//! Every beat is byte-swapped so the first byte sits in the top lane, then
//! placed into a 512-bit register holding the first 64 bytes in network order
//! (byte 0 at bits 511..504). A field at byte offset `o` of `n` bytes is then
//! `hdr[512 - 8*(o+n) +: 8*n]`, one slice per field, at every width.
//!
//! # Sub-blocks
//! [`ParserHdr`] the header capture, [`ParserOut`] the payload path and
//! output register, [`ParserCheck`] the validation (combinational).

use crate::helpers::{ByteSwap, KeepCount};
use crate::icrc::IcrcCheck;
use rust_hdl::prelude::*;

mod check;
mod hdr;
mod out;
pub use check::ParserCheck;
pub use hdr::ParserHdr;
pub use out::ParserOut;

/// Version byte accepted by this parser (spec v0.1).
pub const VERSION: u8 = 1;

/// Why the parser flagged a frame for dropping (`m_meta_reason`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DropReason {
    /// Accepted.
    None = 0,
    /// Shorter than 32 + extension + 4 (ICRC) bytes.
    Truncated = 1,
    /// Version byte is not [`VERSION`].
    BadVersion = 2,
    /// Opcode not in the spec's table.
    BadOpcode = 3,
    /// Bytes after the extension on an opcode that carries no payload.
    UnexpectedPayload = 4,
    /// The ICRC trailer does not match the packet.
    BadIcrc = 5,
}

impl DropReason {
    /// The reason for an `m_meta_reason` value, `None` for codes the RTL
    /// never produces.
    pub fn from_code(code: u8) -> Option<Self> {
        [
            Self::None,
            Self::Truncated,
            Self::BadVersion,
            Self::BadOpcode,
            Self::UnexpectedPayload,
            Self::BadIcrc,
        ]
        .into_iter()
        .find(|r| *r as u8 == code)
    }
}

/// The RX parser with `W`-bit beats (`B = W / 8` byte lanes).
///
/// Widths 64, 128, 256 and 512 are accepted (checked in `connect`): the
/// 64-byte header region must be a whole number of beats, or one beat.
#[derive(LogicBlock)]
pub struct RxParser<const W: usize, const B: usize> {
    /// Clock; everything is on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub rst: Signal<In, Bit>,
    /// Input beat data (lane 0 = first byte).
    pub s_axis_tdata: Signal<In, Bits<W>>,
    /// Input byte enables (packed).
    pub s_axis_tkeep: Signal<In, Bits<B>>,
    /// Input beat valid.
    pub s_axis_tvalid: Signal<In, Bit>,
    /// Parser can take a beat this cycle.
    pub s_axis_tready: Signal<Out, Bit>,
    /// Last beat of the frame.
    pub s_axis_tlast: Signal<In, Bit>,
    /// ICRC pseudo-header: source IP (IPv4 mapped into IPv6), network
    /// order; sampled with the frame's first beat, like all `s_pseudo_*`.
    pub s_pseudo_src_ip: Signal<In, Bits<128>>,
    /// ICRC pseudo-header: destination IP.
    pub s_pseudo_dst_ip: Signal<In, Bits<128>>,
    /// ICRC pseudo-header: UDP source port.
    pub s_pseudo_src_port: Signal<In, Bits<16>>,
    /// ICRC pseudo-header: UDP destination port.
    pub s_pseudo_dst_port: Signal<In, Bits<16>>,
    /// ICRC pseudo-header: UDP length (8 + frame bytes).
    pub s_pseudo_udp_len: Signal<In, Bits<16>>,
    /// Payload beat data (after the stripped headers).
    pub m_axis_tdata: Signal<Out, Bits<W>>,
    /// Payload byte enables (packed).
    pub m_axis_tkeep: Signal<Out, Bits<B>>,
    /// Payload beat valid.
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// Consumer takes the payload beat.
    pub m_axis_tready: Signal<In, Bit>,
    /// Last payload beat of the frame.
    pub m_axis_tlast: Signal<Out, Bit>,
    /// One-cycle pulse: a frame has ended, metadata below is valid.
    pub m_meta_valid: Signal<Out, Bit>,
    /// The frame must be dropped (`m_meta_reason != 0`).
    pub m_meta_drop: Signal<Out, Bit>,
    /// [`DropReason`] code.
    pub m_meta_reason: Signal<Out, Bits<3>>,
    /// Frame length in bytes (UDP payload length, ICRC included).
    pub m_meta_len: Signal<Out, Bits<16>>,
    /// `s_pseudo_src_ip` of the frame (for the peer check).
    pub m_meta_src_ip: Signal<Out, Bits<128>>,
    /// Opcode is a MSG opcode (0x01..=0x06, 0x08..=0x0A): the MSG fields are valid.
    pub m_meta_is_msg: Signal<Out, Bit>,
    /// Base header: version.
    pub m_meta_version: Signal<Out, Bits<8>>,
    /// Base header: opcode.
    pub m_meta_opcode: Signal<Out, Bits<8>>,
    /// Base header: flags.
    pub m_meta_flags: Signal<Out, Bits<16>>,
    /// Base header: destination QPN.
    pub m_meta_dst_qpn: Signal<Out, Bits<32>>,
    /// Base header: source QPN.
    pub m_meta_src_qpn: Signal<Out, Bits<32>>,
    /// Base header: stream id.
    pub m_meta_stream: Signal<Out, Bits<16>>,
    /// Base header: path index.
    pub m_meta_path: Signal<Out, Bits<16>>,
    /// Base header: connection PSN.
    pub m_meta_conn_psn: Signal<Out, Bits<32>>,
    /// Base header: path PSN.
    pub m_meta_path_psn: Signal<Out, Bits<32>>,
    /// Base header: sender timestamp (ns).
    pub m_meta_timestamp: Signal<Out, Bits<64>>,
    /// MSG: message sequence number.
    pub m_meta_msn: Signal<Out, Bits<32>>,
    /// MSG: posted-receive index.
    pub m_meta_recv_idx: Signal<Out, Bits<32>>,
    /// MSG: message length.
    pub m_meta_msg_len: Signal<Out, Bits<32>>,
    /// MSG: offset of this packet's payload in the message.
    pub m_meta_offset: Signal<Out, Bits<32>>,
    /// MSG: remote virtual address.
    pub m_meta_remote_va: Signal<Out, Bits<64>>,
    /// MSG: remote key.
    pub m_meta_rkey: Signal<Out, Bits<32>>,
    /// MSG: immediate data.
    pub m_meta_imm: Signal<Out, Bits<32>>,

    swap: ByteSwap<W, B>,
    keep_count: KeepCount<B>,
    icrc: IcrcCheck<W, B>,
    // Beats accepted in the current frame (saturating); 0 = next beat is first.
    beat_idx: DFF<Bits<16>>,
    // Bytes accepted in the current frame before this beat.
    byte_cnt: DFF<Bits<16>>,
    // First 64 bytes of the frame, network order (byte 0 at the top),
    // its opcode class and source IP.
    capture: ParserHdr<W>,
    // Length of the frame that just ended.
    len_r: DFF<Bits<16>>,
    meta_v: DFF<Bit>,
    // The payload path and the validation.
    out: ParserOut<W, B>,
    check: ParserCheck,

    first: Signal<Local, Bit>,
    accept: Signal<Local, Bit>,
    out_free: Signal<Local, Bit>,
    cur_op: Signal<Local, Bits<8>>,
    cur_msg: Signal<Local, Bit>,
    op: Signal<Local, Bits<8>>,

    c_beat_bytes: Constant<Bits<16>>,
    c_op_pos: Constant<Bits<16>>,
}

/// 64-bit beats (1G/10G class).
pub type RxParser64 = RxParser<64, 8>;
/// 512-bit beats (100G class).
pub type RxParser512 = RxParser<512, 64>;

impl<const W: usize, const B: usize> Default for RxParser<W, B> {
    fn default() -> Self {
        assert!(
            W == 8 * B && crate::SUPPORTED_WIDTHS.contains(&W),
            "RxParser<{W}, {B}>: W must be 64, 128, 256 or 512 and B = W / 8"
        );
        Self {
            clock: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            s_pseudo_src_ip: Default::default(),
            s_pseudo_dst_ip: Default::default(),
            s_pseudo_src_port: Default::default(),
            s_pseudo_dst_port: Default::default(),
            s_pseudo_udp_len: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            m_meta_valid: Default::default(),
            m_meta_drop: Default::default(),
            m_meta_reason: Default::default(),
            m_meta_len: Default::default(),
            m_meta_src_ip: Default::default(),
            m_meta_is_msg: Default::default(),
            m_meta_version: Default::default(),
            m_meta_opcode: Default::default(),
            m_meta_flags: Default::default(),
            m_meta_dst_qpn: Default::default(),
            m_meta_src_qpn: Default::default(),
            m_meta_stream: Default::default(),
            m_meta_path: Default::default(),
            m_meta_conn_psn: Default::default(),
            m_meta_path_psn: Default::default(),
            m_meta_timestamp: Default::default(),
            m_meta_msn: Default::default(),
            m_meta_recv_idx: Default::default(),
            m_meta_msg_len: Default::default(),
            m_meta_offset: Default::default(),
            m_meta_remote_va: Default::default(),
            m_meta_rkey: Default::default(),
            m_meta_imm: Default::default(),
            swap: Default::default(),
            keep_count: Default::default(),
            icrc: Default::default(),
            beat_idx: Default::default(),
            byte_cnt: Default::default(),
            capture: Default::default(),
            len_r: Default::default(),
            meta_v: Default::default(),
            out: Default::default(),
            check: Default::default(),
            first: Default::default(),
            accept: Default::default(),
            out_free: Default::default(),
            cur_op: Default::default(),
            cur_msg: Default::default(),
            op: Default::default(),
            c_beat_bytes: Constant::new(B.to_bits()),
            c_op_pos: Constant::new((W - 16).to_bits()),
        }
    }
}

impl<const W: usize, const B: usize> Logic for RxParser<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, beat_idx, byte_cnt, len_r, meta_v);
        self.swap.data_in.next = self.s_axis_tdata.val();
        self.keep_count.keep.next = self.s_axis_tkeep.val();

        // Handshake: take a beat whenever the output register is free or
        // drains this cycle.
        self.out_free.next = !self.out.m_tvalid.val() | self.m_axis_tready.val();
        self.s_axis_tready.next = self.out_free.val();
        self.accept.next = self.s_axis_tvalid.val() & self.out_free.val();
        self.first.next = self.beat_idx.q.val() == 0;
        self.icrc.beat.next = self.accept.val();
        self.icrc.offer.next = self.s_axis_tvalid.val();

        // ICRC, beat by beat; the pseudo-header seeds the first beat. Its
        // verdict holds from the cycle after the last beat until the next
        // beat is accepted, which covers the metadata cycle.
        self.icrc.clock.next = self.clock.val();
        self.icrc.src_ip.next = self.s_pseudo_src_ip.val();
        self.icrc.dst_ip.next = self.s_pseudo_dst_ip.val();
        self.icrc.src_port.next = self.s_pseudo_src_port.val();
        self.icrc.dst_port.next = self.s_pseudo_dst_port.val();
        self.icrc.udp_len.next = self.s_pseudo_udp_len.val();
        self.icrc.data.next = self.s_axis_tdata.val();
        self.icrc.count.next = self.keep_count.count.val();
        self.icrc.first.next = self.first.val();
        self.icrc.check.next = self.meta_v.q.val();

        // Opcode class: from the beat itself on the first beat, latched after.
        self.cur_op.next = self
            .swap
            .data_out
            .val()
            .get_bits::<8>(self.c_op_pos.val().index());
        if self.first.val() {
            self.cur_msg.next = ((self.cur_op.val() >= 0x01) & (self.cur_op.val() <= 0x06))
                | ((self.cur_op.val() >= 0x08) & (self.cur_op.val() <= 0x0A));
        } else {
            self.cur_msg.next = self.capture.msg.val();
        }
        self.meta_v.d.next = false;

        if self.accept.val() {
            if self.s_axis_tlast.val() {
                self.beat_idx.d.next = 0.into();
                self.byte_cnt.d.next = 0.into();
                self.len_r.d.next = self.byte_cnt.q.val() + self.keep_count.count.val();
                self.meta_v.d.next = true;
            } else {
                if !self.beat_idx.q.val().all() {
                    self.beat_idx.d.next = self.beat_idx.q.val() + 1;
                }
                self.byte_cnt.d.next = self.byte_cnt.q.val() + self.c_beat_bytes.val();
            }
        }

        // Header capture into network order.
        self.capture.clock.next = self.clock.val();
        self.capture.accept.next = self.accept.val();
        self.capture.beat_idx.next = self.beat_idx.q.val();
        self.capture.swapped.next = self.swap.data_out.val();
        self.capture.msg_in.next = self.cur_msg.val();
        self.capture.src_ip_in.next = self.s_pseudo_src_ip.val();

        // Payload: from the beats after the stripped headers.
        self.out.clock.next = self.clock.val();
        self.out.rst.next = self.rst.val();
        self.out.accept.next = self.accept.val();
        self.out.first.next = self.first.val();
        self.out.msg.next = self.cur_msg.val();
        self.out.beat_idx.next = self.beat_idx.q.val();
        self.out.tdata.next = self.s_axis_tdata.val();
        self.out.tkeep.next = self.s_axis_tkeep.val();
        self.out.tlast.next = self.s_axis_tlast.val();
        self.out.ready.next = self.m_axis_tready.val();
        self.m_axis_tdata.next = self.out.m_tdata.val();
        self.m_axis_tkeep.next = self.out.m_tkeep.val();
        self.m_axis_tvalid.next = self.out.m_tvalid.val();
        self.m_axis_tlast.next = self.out.m_tlast.val();

        // Metadata: slices of the captured header (see module docs).
        self.op.next = self.capture.hdr.val().get_bits::<8>(496);
        self.m_meta_valid.next = self.meta_v.q.val();
        self.m_meta_len.next = self.len_r.q.val();
        self.m_meta_src_ip.next = self.capture.src_ip.val();
        self.m_meta_version.next = self.capture.hdr.val().get_bits::<8>(504);
        self.m_meta_opcode.next = self.op.val();
        self.m_meta_flags.next = self.capture.hdr.val().get_bits::<16>(480);
        self.m_meta_dst_qpn.next = self.capture.hdr.val().get_bits::<32>(448);
        self.m_meta_src_qpn.next = self.capture.hdr.val().get_bits::<32>(416);
        self.m_meta_stream.next = self.capture.hdr.val().get_bits::<16>(400);
        self.m_meta_path.next = self.capture.hdr.val().get_bits::<16>(384);
        self.m_meta_conn_psn.next = self.capture.hdr.val().get_bits::<32>(352);
        self.m_meta_path_psn.next = self.capture.hdr.val().get_bits::<32>(320);
        self.m_meta_timestamp.next = self.capture.hdr.val().get_bits::<64>(256);
        self.m_meta_msn.next = self.capture.hdr.val().get_bits::<32>(224);
        self.m_meta_recv_idx.next = self.capture.hdr.val().get_bits::<32>(192);
        self.m_meta_msg_len.next = self.capture.hdr.val().get_bits::<32>(160);
        self.m_meta_offset.next = self.capture.hdr.val().get_bits::<32>(128);
        self.m_meta_remote_va.next = self.capture.hdr.val().get_bits::<64>(64);
        self.m_meta_rkey.next = self.capture.hdr.val().get_bits::<32>(32);
        self.m_meta_imm.next = self.capture.hdr.val().get_bits::<32>(0);

        // Validation of the frame that ended.
        self.check.version.next = self.capture.hdr.val().get_bits::<8>(504);
        self.check.op.next = self.op.val();
        self.check.len.next = self.len_r.q.val();
        self.check.icrc_ok.next = self.icrc.ok.val();
        self.m_meta_is_msg.next = self.check.is_msg.val();
        self.m_meta_reason.next = self.check.reason.val();
        self.m_meta_drop.next = self.check.drop.val();

        if self.rst.val() {
            self.beat_idx.d.next = 0.into();
            self.byte_cnt.d.next = 0.into();
            self.meta_v.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_reason_codes_round_trip() {
        for r in [
            DropReason::None,
            DropReason::Truncated,
            DropReason::BadVersion,
            DropReason::BadOpcode,
            DropReason::UnexpectedPayload,
            DropReason::BadIcrc,
        ] {
            assert_eq!(DropReason::from_code(r as u8), Some(r));
        }
        assert_eq!(DropReason::from_code(7), None);
    }

    #[test]
    fn verilog_emits_at_every_supported_width() {
        for w in crate::SUPPORTED_WIDTHS {
            let v = crate::rx_parser_verilog(w);
            assert!(v.contains("module top("), "width {w}");
            assert!(
                v.contains(&format!("input wire  [{}:0] s_axis_tdata;", w - 1)),
                "width {w}"
            );
        }
    }
}
