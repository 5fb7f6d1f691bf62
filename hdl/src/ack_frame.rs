//! ACK framer: the receive core's ACK datagrams (`m_ack_*`: UDP payload,
//! destination IP, UDP ports) become Ethernet II + IPv4 + UDP frames for
//! the MAC.
//!
//! [`AckFrame`] stores one datagram (up to [`CAP_BYTES`]; the ACK
//! generator sends 100) with its addressing, then sends the 42-byte header
//! built by the same Verilog function as [`crate::TxBuild`]'s
//! (`ipv4_udp_hdr`) followed by the datagram, one beat per cycle. The
//! addresses, TTL and DSCP are the TX builder's registers (`reg_*`), so
//! the top has one configuration map; the IP ECN field is ECT(0), as the
//! engine sends its ACKs. While one frame leaves, the next datagram is
//! captured, so ACK frames follow each other without an idle cycle.
//!
//! IPv4 only: an ACK whose destination is not an IPv4-mapped address is
//! dropped and counted (`cnt_not_v4`). Counters `cnt_frames` (frames sent)
//! and `cnt_ece` (of which carried ECE) are for the firmware.
//!
//! Hand-written Verilog (`ack_frame.v.in`); verified under Verilator inside
//! [`crate::NicCore`].

use rust_hdl::prelude::*;

use crate::tx_build::IPV4_UDP_HDR_FN;

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
    /// Destination IP (IPv4 mapped into IPv6), sampled with the first beat.
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
    /// IPv4 TTL.
    pub reg_ttl: Signal<In, Bits<8>>,
    /// DSCP.
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
    /// ACK frames sent.
    pub cnt_frames: Signal<Out, Bits<32>>,
    /// ACK frames sent whose ACK carried ECE.
    pub cnt_ece: Signal<Out, Bits<32>>,
    /// ACKs dropped: destination not IPv4.
    pub cnt_not_v4: Signal<Out, Bits<32>>,
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
        self.cnt_not_v4.connect();
    }

    fn hdl(&self) -> Verilog {
        // Output buffer: header + largest datagram, whole beats.
        let out_bytes = (42 + CAP_BYTES).div_ceil(B) * B;
        Verilog::Custom(
            include_str!("ack_frame.v.in")
                .replace("@HDR_FN@", IPV4_UDP_HDR_FN)
                .replace("@CAPB@", &CAP_BYTES.to_string())
                .replace("@OUTB@", &out_bytes.to_string())
                .replace("@WM1@", &(W - 1).to_string())
                .replace("@W@", &W.to_string())
                .replace("@B@", &B.to_string()),
        )
    }
}
