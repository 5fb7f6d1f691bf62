//! Receive front end ([`RxEth`]): Ethernet II (at most one 802.1Q tag),
//! IPv4 or IPv6, UDP to a configured port; hands the UDP payload, realigned
//! to lane 0, to [`crate::RxParser`] with the ICRC pseudo-header fields.
//!
//! # Interface
//! * `s_axis_*`: Ethernet frames from the MAC (FCS already stripped),
//!   `W`-bit beats, first byte in lane 0, `tkeep` packed. `s_axis_tready`
//!   is a register (it depends on the buffer's fill only).
//! * `m_axis_*` and `m_pseudo_*`: exactly [`crate::RxParser`]'s input: one
//!   UDP payload per frame, lane 0 first, and its pseudo-header fields
//!   (`m_pseudo_src_ip`/`dst_ip` with IPv4 mapped into IPv6 `::ffff:a.b.c.d`,
//!   network order, byte 0 in bits 127..120; ports; UDP length), valid with
//!   the frame's first payload beat and held until the next frame's first
//!   beat. `m_ecn` is the IP ECN field of the same frame (`0b11` = CE), same
//!   timing. Every output is a register.
//! * `m_ev_valid`, `m_ev_reason`: one pulse per input frame, [`EV_LATENCY`]
//!   cycles after its last beat was accepted, with its [`EthDrop`] code.
//! * `cfg_port_we`, `cfg_port`: the UDP destination port accepted
//!   (reset value `metaroce_proto::DEFAULT_UDP_PORT`).
//! * `cnt_sel`, `cnt_val`: frames per [`EthDrop`] code (32 bits), read one
//!   cycle after the select, like `RxCore`; a frame is counted in the
//!   cycle after its `m_ev_valid` (the select shows the new count from the
//!   cycle after that).
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
//! Store and forward, pipelined so that no cycle does more than a couple
//! of adder or multiplexer levels (`docs/hardware.md` §10 has the stage
//! table):
//!
//! * **Write side.** Each accepted beat is registered, then written as it
//!   came into the frame buffer ([`FrameRam`], block RAM), headers and
//!   padding included, while bytes 12..83 of the frame are captured (in
//!   lane order) for the verdict. At most [`MAX_FRAME`] bytes of a frame
//!   are stored.
//! * **Verdict pipeline.** The cycle after a frame's last beat its captured
//!   header and length enter a six-stage pipeline (one frame per stage, so
//!   back-to-back one-beat frames are fine): header window and byte count;
//!   fields, the IPv4 header words summed in pairs; the rest of the
//!   checksum as an adder tree (two levels per stage); the length and
//!   header rules as separate registered conditions; the checksum folded
//!   and compared; the reason as a priority encoder of registered bits.
//!   The checksum is compared in lane order (the ones'-complement sum does
//!   not depend on byte order).
//! * **Records.** Each verdict queues a control record (accepted; where the
//!   payload starts and ends in the buffer; where the frame ends) in a
//!   32-entry queue, and for an accepted frame its pseudo-header fields in
//!   a second one (both [`BlockRam`](crate::helpers::BlockRam)s: block
//!   RAM, not the 188 distributed-RAM cells yosys gave the 32-word queues).
//! * **Read side.** An issue stage takes one record per cycle: a dropped
//!   frame frees its buffer space at once, an accepted one reads only the
//!   beats holding payload, one per cycle. The read goes through the block
//!   RAM and its output register, then a realigner joins the previous beat
//!   and the current one (the payload starts `H` ≡ 2 (mod 4) bytes in, so
//!   at 64 bits there are two shifts and at 512 bits sixteen, each a
//!   multiple of 4 bytes plus 2), counts the IP-derived payload length to
//!   trim padding and set `tlast`, and emits what is left of the last beat
//!   in the next cycle (which is never an output cycle of the next frame).
//!   Every stage of the read side advances together when the output
//!   register is free or taken.
//!
//! Reading costs one cycle per dropped frame and one per payload beat, so
//! the read side keeps up with the input whatever the frame mix, and while
//! the consumer is ready the block takes one beat every cycle. The buffer
//! holds two frames of [`MAX_FRAME`] bytes.
//!
//! # Sub-blocks
//! One concern each, every one in its own file, wired in [`RxEth`]'s
//! kernel: the stage-to-stage hand-overs are buses (`links.rs`) joined
//! child to child, the rest single assignments.
//!
//! * `write.rs` (`RxEthWrite`): input register, buffer write, header
//!   capture, frame end, `s_axis_tready`.
//! * `window.rs` (`RxEthWindow`, V1), `head.rs` (`RxEthHead`, V2),
//!   `pack.rs` (`RxEthPack`, V3), `rules.rs` (`RxEthRules`, V4, with the
//!   configured port), `decide.rs` (`RxEthDecide`, V5 and V6, the event);
//!   `cksum.rs` (`RxEthCksum`, a child of `RxEthHead`): the IPv4 header
//!   checksum beside V2 … V5.
//! * `queue.rs` (`RxEthQueue`, V7): the two record queues.
//! * the counters: frames per reason code ([`CodeCounters`]).
//! * `issue.rs` (`RxEthIssue`): the read side's issue stage and the slot
//!   beside the buffer's registers; `align.rs` (`RxEthAlign`): the
//!   realigner and the output registers; [`FrameRam`] the buffer.
//!
//! Native rust-hdl: kernels, plus custom leaves with a Rust model,
//! [`FrameRam`] and the queues' `BlockRam`s (rust-hdl's own simulator
//! runs the block: the tests below). Verified under Verilator (`metaroce-sim-tb`) against
//! `etherparse`.

use rust_hdl::prelude::*;

use crate::code_counters::CodeCounters;
use crate::helpers::native_block;

/// Longest frame accepted, bytes (a 9,198-byte jumbo IP packet plus the
/// Ethernet header and a tag, rounded up).
pub const MAX_FRAME: usize = 9216;
/// Frames up to this many bytes may carry bytes after the IP packet
/// (padding to the 60-byte minimum, plus a tag a switch inserted).
pub const PAD_MAX: usize = 64;
/// Cycles from a frame's last beat accepted on `s_axis` to its
/// `m_ev_valid` pulse.
pub const EV_LATENCY: usize = 8;
/// Cycles from a frame's last beat accepted on `s_axis` to its first
/// payload beat on `m_axis`, when the output is idle.
pub const OUT_LATENCY: usize = 14;
/// First frame byte captured for the verdict (bytes 0..11 are the MAC
/// addresses, which no rule reads).
const HDR_FIRST: usize = 12;
/// Bytes captured: 12..83, up to the end of a UDP header behind a tag and
/// a 60-byte IPv4 header.
const HDR_BITS: usize = 576;
/// Most beats that carry captured bytes (at 64 bits).
const SLOTS: usize = 11;
/// Entries of the two record queues (their address bits below).
const QUEUE_BITS: usize = 5;
/// Frames that may be past their last beat and not yet taken by the read
/// side before the input stops (the queue's 32 less what is in flight
/// between the check and the count).
const FRAMES_MAX: usize = (1 << QUEUE_BITS) - 6;
/// Buffer entries kept free (beats in flight between the fill check and
/// the write).
const FIFO_MARGIN: usize = 8;
/// Number of [`EthDrop`] codes (counters).
const CODES: usize = 13;

mod align;
mod cksum;
mod decide;
mod drop;
mod frame_ram;
mod head;
mod issue;
mod links;
mod pack;
mod queue;
mod rules;
#[cfg(test)]
mod tests;
mod window;
mod write;

use align::RxEthAlign;
use decide::RxEthDecide;
pub use drop::EthDrop;
pub use frame_ram::FrameRam;
use head::RxEthHead;
use issue::RxEthIssue;
use pack::RxEthPack;
use queue::RxEthQueue;
use rules::RxEthRules;
use window::RxEthWindow;
use write::RxEthWrite;

/// Depth of the frame buffer in beats: two [`MAX_FRAME`] frames plus
/// slack, rounded up to a power of two (4096 at 64 bits, 512 at 512).
pub const fn fifo_depth(bytes_per_beat: usize) -> usize {
    (2 * (MAX_FRAME.div_ceil(bytes_per_beat) + 4)).next_power_of_two()
}

/// Shifts that place beat `k`'s bytes at their position in the captured
/// header (bytes [`HDR_FIRST`].. in lane order): `(beat >> rsh) << lsh`.
fn slot_shifts(width: usize) -> ([Constant<Bits<16>>; SLOTS], [Constant<Bits<16>>; SLOTS]) {
    let at = |k: usize| (width * k) as i64 - (8 * HDR_FIRST) as i64;
    (
        std::array::from_fn(|k| Constant::new((at(k).max(0) as usize).to_bits())),
        std::array::from_fn(|k| Constant::new(((-at(k)).max(0) as usize).to_bits())),
    )
}

native_block! {
    /// The front end at `W`-bit beats (`B = W / 8` lanes; 64 or 512 bits).
    RxEth [W, B]
    check {
        W == 8 * B && (W == 64 || W == 512),
        "RxEth<{W}, {B}>: W must be 64 or 512 and B = W / 8"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: empties the buffer and the queues, zeroes the counters, restores the default port."]
        rst: Signal<In, Bit>,
        #[doc = "Ethernet frame beat data (lane 0 = first byte)."]
        s_axis_tdata: Signal<In, Bits<W>>,
        #[doc = "Byte enables (packed)."]
        s_axis_tkeep: Signal<In, Bits<B>>,
        #[doc = "Beat valid."]
        s_axis_tvalid: Signal<In, Bit>,
        #[doc = "The block takes the beat (a register)."]
        s_axis_tready: Signal<Out, Bit>,
        #[doc = "Last beat of the frame."]
        s_axis_tlast: Signal<In, Bit>,
        #[doc = "UDP payload beat data, lane 0 first."]
        m_axis_tdata: Signal<Out, Bits<W>>,
        #[doc = "Payload byte enables (packed)."]
        m_axis_tkeep: Signal<Out, Bits<B>>,
        #[doc = "Payload beat valid."]
        m_axis_tvalid: Signal<Out, Bit>,
        #[doc = "Consumer takes the beat."]
        m_axis_tready: Signal<In, Bit>,
        #[doc = "Last payload beat."]
        m_axis_tlast: Signal<Out, Bit>,
        #[doc = "Source IP (IPv4 mapped into IPv6), network order; valid from the frame's first payload beat until the next frame's."]
        m_pseudo_src_ip: Signal<Out, Bits<128>>,
        #[doc = "Destination IP, same format and timing."]
        m_pseudo_dst_ip: Signal<Out, Bits<128>>,
        #[doc = "UDP source port."]
        m_pseudo_src_port: Signal<Out, Bits<16>>,
        #[doc = "UDP destination port."]
        m_pseudo_dst_port: Signal<Out, Bits<16>>,
        #[doc = "UDP length (8 + payload bytes)."]
        m_pseudo_udp_len: Signal<Out, Bits<16>>,
        #[doc = "IP ECN field (`0b11` = CE), same timing."]
        m_ecn: Signal<Out, Bits<2>>,
        #[doc = "One pulse per input frame: its verdict is in `m_ev_reason`."]
        m_ev_valid: Signal<Out, Bit>,
        #[doc = "[`EthDrop`] code."]
        m_ev_reason: Signal<Out, Bits<4>>,
        #[doc = "Write `cfg_port` as the accepted UDP destination port."]
        cfg_port_we: Signal<In, Bit>,
        #[doc = "UDP destination port to accept."]
        cfg_port: Signal<In, Bits<16>>,
        #[doc = "Counter select (an [`EthDrop`] code)."]
        cnt_sel: Signal<In, Bits<4>>,
        #[doc = "The selected counter, one cycle after `cnt_sel`."]
        cnt_val: Signal<Out, Bits<32>>,
    }
    state {
        write: RxEthWrite<W, B>,
        window: RxEthWindow<B>,
        head: RxEthHead<B>,
        pack: RxEthPack,
        rules: RxEthRules,
        decide: RxEthDecide<B>,
        counters: CodeCounters<4, CODES>,
        queue: RxEthQueue,
        issue: RxEthIssue<W, B>,
        align: RxEthAlign<W, B>,
        adv: Signal<Local, Bit>,
    }
    consts {}
}

/// 64-bit beats.
pub type RxEth64 = RxEth<64, 8>;
/// 512-bit beats.
pub type RxEth512 = RxEth<512, 64>;

impl<const W: usize, const B: usize> Logic for RxEth<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        self.write.clock.next = self.clock.val();
        self.window.clock.next = self.clock.val();
        self.head.clock.next = self.clock.val();
        self.pack.clock.next = self.clock.val();
        self.rules.clock.next = self.clock.val();
        self.decide.clock.next = self.clock.val();
        self.counters.clock.next = self.clock.val();
        self.queue.clock.next = self.clock.val();
        self.issue.clock.next = self.clock.val();
        self.align.clock.next = self.clock.val();
        self.write.rst.next = self.rst.val();
        self.window.rst.next = self.rst.val();
        self.head.rst.next = self.rst.val();
        self.pack.rst.next = self.rst.val();
        self.rules.rst.next = self.rst.val();
        self.decide.rst.next = self.rst.val();
        self.counters.rst.next = self.rst.val();
        self.queue.rst.next = self.rst.val();
        self.issue.rst.next = self.rst.val();
        self.align.rst.next = self.rst.val();

        // ---- Write side: input, buffer write, header capture. ----
        self.write.s_axis.tdata.next = self.s_axis_tdata.val();
        self.write.s_axis.tkeep.next = self.s_axis_tkeep.val();
        self.write.s_axis.tvalid.next = self.s_axis_tvalid.val();
        self.write.s_axis.tlast.next = self.s_axis_tlast.val();
        self.s_axis_tready.next = self.write.s_axis.tready.val();
        links::BufOut::<W>::join(&mut self.write.m_buf, &mut self.issue.s_buf);

        // ---- Verdict: V1 … V6 (the checksum, beside V2 … V5, in `head`). ----
        links::FrameOut::<B>::join(&mut self.write.m_frame, &mut self.window.s_frame);
        links::WindowOut::join(&mut self.window.m_win, &mut self.head.s_win);
        links::FieldsOut::join(&mut self.head.m_fields, &mut self.pack.s_fields);
        links::PackedOut::join(&mut self.pack.m_v3, &mut self.rules.s_v3);
        self.rules.cfg_port_we.next = self.cfg_port_we.val();
        self.rules.cfg_port.next = self.cfg_port.val();
        links::RulesOut::join(&mut self.rules.m_rules, &mut self.decide.s_rules);
        self.decide.ok.next = self.head.ok.val();
        self.m_ev_valid.next = self.decide.ev_valid.val();
        self.m_ev_reason.next = self.decide.ev_reason.val();
        self.counters.valid.next = self.decide.ev_valid.val();
        self.counters.code.next = self.decide.ev_reason.val();
        self.counters.cnt.sel.next = self.cnt_sel.val();
        self.cnt_val.next = self.counters.cnt.val.val();

        // ---- Records (V7), read side. ----
        links::RecordOut::join(&mut self.decide.m_rec, &mut self.queue.s_rec);
        links::HeadOut::join(&mut self.queue.m_head, &mut self.issue.s_head);
        links::PsOut::join(&mut self.queue.m_ps, &mut self.align.s_ps);
        links::FreeOut::join(&mut self.issue.m_free, &mut self.write.s_free);
        links::SlotOut::<W>::join(&mut self.issue.m_slot, &mut self.align.s_slot);
        // Every stage of the read side advances when the output register
        // is free or taken.
        self.adv.next = !self.align.tvalid.val() | self.m_axis_tready.val();
        self.issue.adv.next = self.adv.val();
        self.align.adv.next = self.adv.val();
        self.m_axis_tvalid.next = self.align.tvalid.val();
        self.m_axis_tdata.next = self.align.tdata.val();
        self.m_axis_tkeep.next = self.align.tkeep.val();
        self.m_axis_tlast.next = self.align.tlast.val();
        self.m_pseudo_src_ip.next = self.align.src_ip.val();
        self.m_pseudo_dst_ip.next = self.align.dst_ip.val();
        self.m_pseudo_src_port.next = self.align.src_port.val();
        self.m_pseudo_dst_port.next = self.align.dst_port.val();
        self.m_pseudo_udp_len.next = self.align.udp_len.val();
        self.m_ecn.next = self.align.ecn.val();
    }
}
