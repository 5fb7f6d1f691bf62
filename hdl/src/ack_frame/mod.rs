//! ACK framer: the receive core's ACK datagrams (`m_ack_*`: UDP payload,
//! destination IP, UDP ports) become Ethernet II + IPv4 + UDP or Ethernet
//! II + IPv6 + UDP frames for the MAC.
//!
//! [`AckFrame`] stores one datagram (up to [`CAP_BYTES`]; the ACK
//! generator sends 100) with its addressing, then sends the header and the
//! datagram, one beat per cycle. The header is laid out as
//! [`crate::TxBuild`]'s: Ethernet II + IPv4 + UDP (42 bytes: version/IHL
//! 0x45, ID 0, DF, protocol 17, header checksum computed, UDP checksum 0,
//! which the wire spec allows on IPv4) when the destination is an
//! IPv4-mapped address, else Ethernet II + IPv6 + UDP (62 bytes:
//! EtherType 0x86DD, flow label 0, next header 17, hop limit = the TTL
//! register) with the UDP checksum computed, as the wire spec (§2.5)
//! requires on IPv6 (RFC 8200 §8.1: pseudo-header, UDP header and
//! payload; 0xFFFF where it comes out as 0). The addresses, TTL and DSCP
//! are the TX builder's registers (`reg_*`, the local IPv6 address
//! included), so the top has one configuration map; the IP ECN field is
//! ECT(0), as the engine sends its ACKs. While one frame leaves, the next
//! datagram is captured, so ACK frames follow each other without an idle
//! cycle.
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
//! # Pipeline
//! Three parts, one file each, joined by the buses of `links.rs`:
//!
//! * **Capture** (`cap.rs`). A beat at a time into a 128-byte register (beat `k` at
//!   bytes `k·B..`), with the plain sum of the beat's 16-bit words added to
//!   the datagram's (the IPv6 UDP checksum's payload part).
//! * **Checksums** (`cksum.rs`), two stages once the datagram is whole: C1 the partial
//!   sums (the IPv4 header's register words, its captured words; the IPv6
//!   pseudo-header's source words, destination words, and the payload sum
//!   with ports and lengths), C2 their sum folded twice (end-around carry)
//!   and complemented, into registers.
//! * **Load** (`out.rs`). After C2, when no frame leaves or the last beat of one
//!   leaves now, the header (lane order) and the datagram go into the
//!   output register, which then shifts down one beat per cycle: the
//!   datagram at byte 62 for both families, the IPv6 header from byte 0,
//!   the IPv4 header from byte 20, where the output then reads.
//!
//! With the output idle, a frame's first beat is therefore shown 4 cycles
//! after the cycle that takes the datagram's last beat (2 when the
//! checksums were summed where the frame loads, before issue #16); a frame
//! waiting for the previous one to leave starts right after it, as before. The checksums take the `reg_*` values of C1,
//! the frame those of its load: the registers are configuration, written
//! before traffic.
//!
//! Native rust-hdl; rust-hdl's own simulator runs the block (the test
//! below, whose frames `etherparse` checks); it is verified under
//! Verilator inside [`crate::NicCore`] (`core_check`, IPv4 and IPv6 runs).

use rust_hdl::prelude::*;

use crate::bus::{AckIn, AxisOut, DatagramIn};
use crate::helpers::native_block;

use cap::AckFrameCap;
use cksum::AckFrameCksum;
use out::AckFrameOut;

mod cap;
mod cksum;
mod links;
mod out;
#[cfg(test)]
mod tests;

/// Largest datagram the framer stores.
pub const CAP_BYTES: usize = 128;

/// Bits of the output register: the IPv6 header (62 bytes) and the largest
/// datagram, in whole beats of 8 to 64 bytes.
const OUT_BITS: usize = 8 * 192;
/// Bits of the capture register.
const CAP_BITS: usize = 8 * CAP_BYTES;
/// Beats of a full capture at the narrowest width (8 bytes).
const CAP_BEATS_MAX: usize = CAP_BYTES / 8;

native_block! {
    /// The ACK framer at `W`-bit beats (`B = W / 8` lanes, 8 to 64).
    AckFrame[W, B]
    check {
        W == 8 * B && B.is_power_of_two() && (8..=64).contains(&B),
        "AckFrame<{W}, {B}>: B must be 8, 16, 32 or 64 and W = 8 * B"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: drops the stored datagram and the frame in flight, clears the counters."]
        rst: Signal<In, Bit>,
        #[doc = "ACK datagrams (addressing and ECE sampled with the first beat; the destination IP selects the frame's IP version)."]
        s_ack: AckIn<W, B>,
        #[doc = "Local MAC (Ethernet source)."]
        reg_local_mac: Signal<In, Bits<48>>,
        #[doc = "Next-hop MAC (Ethernet destination)."]
        reg_peer_mac: Signal<In, Bits<48>>,
        #[doc = "Local IPv4 address (IP source)."]
        reg_local_ip: Signal<In, Bits<32>>,
        #[doc = "Local IPv6 address (IPv6 source)."]
        reg_local_ip6: Signal<In, Bits<128>>,
        #[doc = "IPv4 TTL / IPv6 hop limit."]
        reg_ttl: Signal<In, Bits<8>>,
        #[doc = "DSCP (IPv4 TOS / IPv6 traffic class bits 7..2)."]
        reg_dscp: Signal<In, Bits<6>>,
        #[doc = "Frames (packed `tkeep`)."]
        m_axis: AxisOut<W, B>,
        #[doc = "ACK frames sent (IPv4 and IPv6)."]
        cnt_frames: Signal<Out, Bits<32>>,
        #[doc = "ACK frames sent whose ACK carried ECE."]
        cnt_ece: Signal<Out, Bits<32>>,
        #[doc = "ACK frames sent as IPv6 (destination not IPv4-mapped)."]
        cnt_v6: Signal<Out, Bits<32>>,
        #[doc = "Firmware datagrams (up to [`CAP_BYTES`] each)."]
        s_fw: DatagramIn<W, B>,
        #[doc = "Frames sent of datagrams from the firmware."]
        cnt_fw: Signal<Out, Bits<32>>,
    }
    state {
        cap: AckFrameCap<W, B>,
        cksum: AckFrameCksum,
        out: AckFrameOut<W, B>,
    }
    consts {}
}

impl<const W: usize, const B: usize> Logic for AckFrame<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.cap.clock.next = self.clock.val();
        self.cksum.clock.next = self.clock.val();
        self.out.clock.next = self.clock.val();
        self.cap.rst.next = self.rst.val();
        self.cksum.rst.next = self.rst.val();
        self.out.rst.next = self.rst.val();
        AckIn::<W, B>::link(&mut self.s_ack, &mut self.cap.s_ack);
        DatagramIn::<W, B>::link(&mut self.s_fw, &mut self.cap.s_fw);
        AxisOut::<W, B>::link(&mut self.m_axis, &mut self.out.m_axis);
        // The captured datagram to the checksums and the output (its
        // length and addressing to both), the checksums to the output;
        // the output's load frees the capture and restarts the checksums.
        links::GramOut::join(&mut self.cap.m_gram, &mut self.cksum.s_gram);
        links::GramOut::join(&mut self.cap.m_gram, &mut self.out.s_gram);
        links::SumOut::join(&mut self.cap.m_sum, &mut self.cksum.s_sum);
        links::BodyOut::join(&mut self.cap.m_body, &mut self.out.s_body);
        links::CksOut::join(&mut self.cksum.m_cks, &mut self.out.s_cks);
        self.cksum.reg_local_ip.next = self.reg_local_ip.val();
        self.cksum.reg_local_ip6.next = self.reg_local_ip6.val();
        self.cksum.reg_ttl.next = self.reg_ttl.val();
        self.cksum.reg_dscp.next = self.reg_dscp.val();
        self.out.reg_local_mac.next = self.reg_local_mac.val();
        self.out.reg_peer_mac.next = self.reg_peer_mac.val();
        self.out.reg_local_ip.next = self.reg_local_ip.val();
        self.out.reg_local_ip6.next = self.reg_local_ip6.val();
        self.out.reg_ttl.next = self.reg_ttl.val();
        self.out.reg_dscp.next = self.reg_dscp.val();
        self.cnt_frames.next = self.out.cnt_frames.val();
        self.cnt_ece.next = self.out.cnt_ece.val();
        self.cnt_v6.next = self.out.cnt_v6.val();
        self.cnt_fw.next = self.out.cnt_fw.val();
    }
}
