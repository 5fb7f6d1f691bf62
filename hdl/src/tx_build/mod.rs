//! TX frame builder: a firmware descriptor in, a complete Ethernet frame
//! out.
//!
//! [`TxBuild`] takes one descriptor per cycle (the MetaRoCE base header
//! fields, the MSG extension for opcodes 0x01..=0x06, the payload's host
//! address and length, ECN-capable), asks a DMA engine for the payload
//! (`m_rd`), takes it back as an AXI-Stream (`s_pay`) and streams out
//! Ethernet II + IPv4 + UDP + MetaRoCE headers + payload + ICRC
//! (`m_axis`), one beat per cycle. IPv4 or IPv6 ([`cfg::PEER`] bit 62):
//!
//! * **UDP source-port rewrite**: the UDP source port is the entry of a
//!   per-path entropy table ([`cfg::ENTROPY`], written by the firmware) for
//!   the descriptor's path, sampled when the descriptor is accepted;
//! * **ICRC after the rewrite**: CRC-32 over the 40-byte pseudo-header
//!   (with that source port) and the datagram, computed as the frame
//!   streams with fixed XOR matrices generated from [`crate::icrc`]'s
//!   golden `crc_byte`, appended big-endian;
//! * IPv4: header checksum computed, DF set, ID 0; IPv6: flow label 0;
//!   UDP checksum 0 on both (as RoCEv2 on IPv4; on IPv6 a checksum over
//!   the payload would need the whole frame before its header, and the
//!   ICRC covers the datagram); ECN ECT(0) when the descriptor says
//!   ECN-capable; TTL / hop limit and DSCP from [`cfg::PEER`].
//!
//! # Pipeline
//! Every cycle does at most a few LUT levels (`docs/hardware.md` §13 has
//! the stage table and the latencies):
//!
//! * **Configuration.** The registers written through `cfg_*`, and what
//!   depends on them alone, recomputed in registers for [`CFG_SETTLE`]
//!   cycles after each register write (no descriptor is taken meanwhile):
//!   the IPv4 header checksum of the configured words (an adder tree, then
//!   folded), one per ECN and header-size choice; the pseudo-header CRC of
//!   the addresses and the destination port (fed a byte a cycle) moved to
//!   the end of a frame's first beat (below).
//! * **Descriptor side.** An accepted descriptor's MetaRoCE headers (lane
//!   order) and fetch request go into a 4-entry FIFO (`LutRam`s, in `TxFifo`); the
//!   fetch request leaves from it ahead of the frame. Beside the FIFO, two
//!   stages work out the rest of the entry: D1 reads the path's entropy
//!   (the entropy table is a rust-hdl `RAM`) and computes the lengths and
//!   the IPv4 checksum (one end-around-carry add of the payload length to
//!   the configured sum); D2 adds the source port and UDP length to the
//!   pseudo-header CRC (one XOR matrix over 32 bits). The entry is ready
//!   for the generator the cycle after.
//! * **Generator.** Takes the head entry when the previous frame's last
//!   beat leaves it, builds its header in lane order (a shift register of
//!   126 bytes) and makes one beat per cycle: header lanes, then payload
//!   lanes realigned by the header length mod `B` (four constant shifts,
//!   one per header size), then zeros; lane masks come from down-counters
//!   (header, datagram start, ICRC start, frame end), compared lane by
//!   lane.
//! * **ICRC.** A: the beat and its lane masks registered; P: the beat's
//!   share of the CRC, the XOR matrix of the whole beat over its covered
//!   lanes (uncovered lanes zeroed); R: the CRC register, `Z·crc ^ share`
//!   (`Z` = the matrix of `B` zero bytes), seeded on a frame's first beat
//!   with the pseudo-header CRC moved back over the lanes before the
//!   datagram (so the zeroed header lanes count for nothing), held on
//!   beats past the datagram; U: the trailing zero lanes of the last
//!   covered beat taken back out (one matrix per count, chosen by the
//!   frame's count) and the CRC inverted; O: the ICRC bytes written into
//!   their lanes (in the last covered beat and possibly the next), the
//!   output register.
//!
//! All stages from A on advance together while the output register is
//! free or taken. Frames follow each other without an idle cycle.
//!
//! The fetch engine must return exactly `len` bytes per request, in
//! request order, packed, `tlast` on the last beat; `m_err` turns on (and
//! stays on until reset) when a payload beat's `tkeep` or `tlast` disagrees
//! (`TxPayCheck`, a cycle after the beat is taken).
//!
//! Native rust-hdl: kernels, rust-hdl's `RAM` (the entropy table) and one
//! custom leaf, `LutRam` (the FIFO, `helpers.rs`), with a Rust model; rust-hdl's own
//! simulator runs the block (the tests below). Verified under Verilator
//! (`metaroce-sim-tb`) against the engine and `metaroce-proto`.

use rust_hdl::prelude::*;

use crate::bus::{AxisIn, AxisOut, CfgIn, DescIn, ReadReqOut};
use crate::helpers::native_block;

use beat::TxBeat;
use crc_pipe::TxCrcPipe;
use fifo::TxFifo;
use generator::TxGen;
use header::TxHeader;
use pay_check::TxPayCheck;
use regs::TxRegs;

/// Entries of the per-path entropy table (the engine's `MAX_PATHS`); the
/// table is indexed by the low 6 bits of the descriptor's path.
pub const PATHS: usize = 64;

/// Cycles from a descriptor accepted (`s_desc_valid && s_desc_ready` at a
/// clock edge) to its frame's first beat on `m_axis` when the block is
/// idle and the payload arrives in time.
pub const FIRST_BEAT_LATENCY: usize = 9;

/// Cycles after a register write ([`cfg::REGS`]) during which the
/// registers derived from the configuration are recomputed and
/// `s_desc_ready` is low: the pseudo-header's 40 bytes a cycle each, its
/// CRC moved to the first beat's end, and two to spare (the results are
/// read from the cycle `s_desc_ready` rises).
pub const CFG_SETTLE: usize = PH_BYTES + 3;
/// Bytes of the pseudo-header.
const PH_BYTES: usize = 40;
/// Bits of the count of [`CFG_SETTLE`] cycles.
const SETTLE_BITS: usize = 6;

mod beat;
pub mod cfg;
mod crc_pipe;
mod fifo;
mod fifo_ptrs;
mod generator;
mod header;
mod links;
mod matrices;
mod pay_check;
mod regs;
mod side;
#[cfg(test)]
mod tests;

/// Header bytes by kind (`ipv6 << 1 | msg`): Ethernet + IPv4 or IPv6 +
/// UDP + the 32-byte base header, + the 32-byte MSG extension.
const HLEN: [usize; 4] = [74, 106, 94, 126];
/// First byte the ICRC covers (the UDP payload), IPv4 and IPv6.
const DSTART: [usize; 2] = [42, 62];
/// Where an IPv4 frame starts in the header shift register: the 20 bytes
/// the IPv6 header is longer by (the MetaRoCE headers sit at the same place
/// for both families).
const V4_AT: usize = 8 * 20;
/// Bits of the header shift register (the longest header).
const HDR_BITS: usize = 8 * 126;
/// Bits of the Ethernet, IP and UDP headers (IPv6, the longer).
const NET_BITS: usize = 8 * 62;
/// The MetaRoCE headers after the version byte, in lane order.
const MR_BITS: usize = 504;
/// Bits of the byte reversals into lane order (64 bytes: the 62 or 63
/// header bytes, then zeros).
const REV_BITS: usize = 512;
/// Bits of an entry's computed part (layout at `side` in the kernel).
const SIDE_BITS: usize = 154;
/// Bits of the un-zero table row: 32 per trailing-zero count, up to 64 lanes.
const UNZ_BITS: usize = 2048;

native_block! {
    /// The TX builder at `W`-bit beats (`B = W / 8` lanes; 8, 16, 32 or
    /// 64). Streams use lane 0 for the first byte and packed `tkeep`.
    TxBuild [W, B]
    check {
        W == 8 * B && B.is_power_of_two() && (8..=64).contains(&B),
        "TxBuild<{W}, {B}>: B must be 8, 16, 32 or 64 and W = 8 * B"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the FIFO and the pipeline, clears `m_err`."]
        rst: Signal<In, Bit>,
        #[doc = "Configuration write port ([`cfg::addr`])."]
        cfg: CfgIn<8>,
        #[doc = "Send descriptors (taken while the FIFO has room and no register write is in its cycle or settling, [`CFG_SETTLE`])."]
        s_desc: DescIn,
        #[doc = "Payload fetch requests."]
        m_rd: ReadReqOut,
        #[doc = "Fetched payload (`tlast`: the last beat of a fetch)."]
        s_pay: AxisIn<W, B>,
        #[doc = "Frames (packed `tkeep`)."]
        m_axis: AxisOut<W, B>,
        #[doc = "Sticky: a fetched beat's `tkeep`/`tlast` disagreed with the request."]
        m_err: Signal<Out, Bit>,
        #[doc = "Configured local MAC ([`cfg::LOCAL`]), for other frame sources of the same port (the ACK framer)."]
        reg_local_mac: Signal<Out, Bits<48>>,
        #[doc = "Configured peer (next-hop) MAC ([`cfg::PEER`])."]
        reg_peer_mac: Signal<Out, Bits<48>>,
        #[doc = "Configured local IPv4 address ([`cfg::IPV4`])."]
        reg_local_ip: Signal<Out, Bits<32>>,
        #[doc = "Configured local IPv6 address ([`cfg::LOCAL_IPV6`])."]
        reg_local_ip6: Signal<Out, Bits<128>>,
        #[doc = "Configured TTL / hop limit ([`cfg::PEER`])."]
        reg_ttl: Signal<Out, Bits<8>>,
        #[doc = "Configured DSCP ([`cfg::PEER`])."]
        reg_dscp: Signal<Out, Bits<6>>,
    }
    state {
        regs: TxRegs<B>,
        fifo: TxFifo<B>,
        header: TxHeader,
        beat: TxBeat<W, B>,
        crc: TxCrcPipe<W, B>,
        // The generator: the frame being made.
        frame: TxGen<W, B>,
        // The payload beat taken, checked a cycle later (`m_err`).
        pay_check: TxPayCheck<B>,
        // Combinational temporaries.
        adv: Signal<Local, Bit>,
        go: Signal<Local, Bit>,
        take: Signal<Local, Bit>,
    }
    consts {}
}

/// 64-bit beats.
pub type TxBuild64 = TxBuild<64, 8>;
/// 512-bit beats.
pub type TxBuild512 = TxBuild<512, 64>;

impl<const W: usize, const B: usize> Logic for TxBuild<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.regs.clock.next = self.clock.val();
        self.fifo.clock.next = self.clock.val();
        self.frame.clock.next = self.clock.val();
        self.crc.clock.next = self.clock.val();
        self.pay_check.clock.next = self.clock.val();
        self.fifo.rst.next = self.rst.val();
        self.frame.rst.next = self.rst.val();
        self.crc.rst.next = self.rst.val();
        self.pay_check.rst.next = self.rst.val();

        // ---- Configuration, descriptor side, output. ----
        CfgIn::<8>::link(&mut self.cfg, &mut self.regs.cfg);
        DescIn::link(&mut self.s_desc, &mut self.fifo.s_desc);
        ReadReqOut::link(&mut self.m_rd, &mut self.fifo.m_rd);
        AxisOut::<W, B>::link(&mut self.m_axis, &mut self.crc.m_axis);
        links::RegsOut::join(&mut self.regs.side, &mut self.fifo.regs);
        self.reg_local_mac.next = self.regs.addr.local_mac.val();
        self.reg_peer_mac.next = self.regs.addr.peer_mac.val();
        self.reg_local_ip.next = self.regs.addr.local_ip.val();
        self.reg_local_ip6.next = self.regs.addr.local_ip6.val();
        self.reg_ttl.next = self.regs.addr.ttl.val();
        self.reg_dscp.next = self.regs.addr.dscp.val();
        // The next frame's headers and fields, the beat and its place in
        // the frame: wired straight from their sources (no path through
        // this kernel and back).
        links::HeadOut::join(&mut self.fifo.head, &mut self.header.head);
        links::AddrOut::join(&mut self.regs.addr, &mut self.header.addr);
        links::HdrOut::join(&mut self.header.m_hdr, &mut self.frame.s_hdr);
        links::FrameOut::join(&mut self.fifo.m_frame, &mut self.frame.s_frame);
        links::GenOut::<W>::join(&mut self.frame.m_beat, &mut self.beat.s_gen);
        links::BeatOut::<W, B>::join(&mut self.beat.m_beat, &mut self.crc.s_beat);
        links::CrcCtlOut::join(&mut self.frame.m_crc, &mut self.crc.s_ctl);

        // ---- Handshakes. ----
        // The generator and the stages behind it move while the output
        // register is free or taken, and the payload beat the current beat
        // needs is offered; the next frame is taken when the FIFO's head is
        // ready and the current frame's last beat leaves (or none is being
        // made).
        self.adv.next = !self.m_axis.tvalid.val() | self.m_axis.tready.val();
        self.crc.adv.next = self.adv.val();
        self.go.next = self.frame.active.val()
            & self.adv.val()
            & (!self.frame.need.val() | self.s_pay.tvalid.val());
        self.s_pay.tready.next = self.go.val() & self.frame.need.val();
        self.take.next = self.fifo.head_ok.val()
            & (!self.frame.active.val() | (self.go.val() & self.frame.last.val()));
        self.fifo.take.next = self.take.val();
        // The header is laid out when a frame may be taken: `take` without
        // the flow control (`go`), so from registers only.
        self.header.load.next =
            self.fifo.head_ok.val() & (!self.frame.active.val() | self.frame.last.val());
        self.frame.go.next = self.go.val();
        self.frame.take.next = self.take.val();
        self.frame.load.next = self.header.load.val();
        self.frame.pay.next = self.s_pay.tdata.val();

        // The payload beat taken is checked against the request.
        self.pay_check.take.next = self.go.val() & self.frame.need.val();
        self.pay_check.keep.next = self.s_pay.tkeep.val();
        self.pay_check.last.next = self.s_pay.tlast.val();
        self.pay_check.left.next = self.frame.prem.val();
        self.m_err.next = self.pay_check.err.val();
    }
}
