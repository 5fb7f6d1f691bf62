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
//!   cycle after the select, like `RxCore`; a frame is counted one cycle
//!   after its `m_ev_valid`.
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
//!   a second one (both rust-hdl `RAM`s).
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
//! Native rust-hdl: kernels and rust-hdl's `RAM`, plus one custom leaf,
//! [`FrameRam`], with a Rust model (rust-hdl's own simulator runs the block:
//! the tests below). Verified under Verilator (`metaroce-sim-tb`) against
//! `etherparse`.

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};

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
/// Entries of the two record queues (`RAM` address bits below).
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

mod drop;
mod frame_ram;
#[cfg(test)]
mod tests;

pub use drop::EthDrop;
pub use frame_ram::FrameRam;

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
        // Frame buffer and record queues.
        fbuf: FrameRam<W>,
        cq: RAM<Bits<70>, QUEUE_BITS>,
        pq: RAM<Bits<306>, QUEUE_BITS>,
        // Input register and the registered ready.
        rdy: DFF<Bit>,
        i_v: DFF<Bit>,
        i_last: DFF<Bit>,
        i_data: DFF<Bits<W>>,
        i_keep: DFF<Bits<B>>,
        // Write side: beat index in the frame (saturating), the frame's
        // first buffer address, the write and free pointers, the captured
        // header, the tag flag, frames past their end not yet issued.
        bidx: DFF<Bits<16>>,
        fstart: DFF<Bits<16>>,
        wr_ptr: DFF<Bits<16>>,
        fr_ptr: DFF<Bits<16>>,
        hdr: DFF<Bits<HDR_BITS>>,
        hvlan: DFF<Bit>,
        nfr: DFF<Bits<8>>,
        // Frame end (the cycle after it, the header is complete).
        z_v: DFF<Bit>,
        z_tl: DFF<Bit>,
        z_beats: DFF<Bits<16>>,
        z_keep: DFF<Bits<B>>,
        z_start: DFF<Bits<16>>,
        z_end: DFF<Bits<16>>,
        // V1: EtherType, the IP/UDP window, the last beat's byte count.
        a_v: DFF<Bit>,
        a_vlan: DFF<Bit>,
        a_tl: DFF<Bit>,
        a_et: DFF<Bits<16>>,
        a_ipw: DFF<Bits<528>>,
        a_kc: DFF<Bits<16>>,
        a_beats: DFF<Bits<16>>,
        a_start: DFF<Bits<16>>,
        a_end: DFF<Bits<16>>,
        // V2: fields, checksum words summed in pairs.
        b_v: DFF<Bit>,
        b_vlan: DFF<Bit>,
        b_v4: DFF<Bit>,
        b_v6: DFF<Bit>,
        b_frag: DFF<Bit>,
        b_tl: DFF<Bit>,
        b_ver: DFF<Bits<4>>,
        b_ihl: DFF<Bits<4>>,
        b_len: DFF<Bits<16>>,
        b_tot: DFF<Bits<17>>,
        b_iphl: DFF<Bits<7>>,
        b_nh: DFF<Bits<8>>,
        b_ecn: DFF<Bits<2>>,
        b_src: DFF<Bits<128>>,
        b_dst: DFF<Bits<128>>,
        b_sport: DFF<Bits<16>>,
        b_dport: DFF<Bits<16>>,
        b_ulen: DFF<Bits<16>>,
        b_cks: DFF<Bits<16>>,
        b_s1: [DFF<Bits<17>>; 15],
        b_start: DFF<Bits<16>>,
        b_end: DFF<Bits<16>>,
        // V3: checksum to four partial sums, lengths.
        c_v: DFF<Bit>,
        c_vlan: DFF<Bit>,
        c_v4: DFF<Bit>,
        c_v6: DFF<Bit>,
        c_frag: DFF<Bit>,
        c_tl: DFF<Bit>,
        c_short: DFF<Bit>,
        c_ver: DFF<Bits<4>>,
        c_ihl: DFF<Bits<4>>,
        c_len: DFF<Bits<16>>,
        c_tot: DFF<Bits<17>>,
        c_iphl: DFF<Bits<7>>,
        c_nh: DFF<Bits<8>>,
        c_ps: DFF<Bits<306>>,
        c_cksn: DFF<Bits<16>>,
        c_cksm: DFF<Bits<16>>,
        c_s3: [DFF<Bits<19>>; 4],
        c_lip: DFF<Bits<17>>,
        c_start: DFF<Bits<16>>,
        c_end: DFF<Bits<16>>,
        // V4: the checksum sum, every rule as a registered bit.
        d_v: DFF<Bit>,
        d_v4: DFF<Bit>,
        d_rules: DFF<Bits<16>>,
        d_s5: DFF<Bits<21>>,
        d_hlen: DFF<Bits<16>>,
        d_plen: DFF<Bits<16>>,
        d_cksn: DFF<Bits<16>>,
        d_cksm: DFF<Bits<16>>,
        d_ps: DFF<Bits<306>>,
        d_start: DFF<Bits<16>>,
        d_end: DFF<Bits<16>>,
        // V5: checksum verdict, buffer addresses of the payload.
        e_v: DFF<Bit>,
        e_v4: DFF<Bit>,
        e_ok: DFF<Bit>,
        e_rules: DFF<Bits<16>>,
        e_first: DFF<Bits<16>>,
        e_hb: DFF<Bits<16>>,
        e_endb: DFF<Bits<16>>,
        e_q: DFF<Bits<4>>,
        e_plen: DFF<Bits<16>>,
        e_start: DFF<Bits<16>>,
        e_end: DFF<Bits<16>>,
        e_ps: DFF<Bits<306>>,
        // V6: the verdict and the records to queue.
        f_v: DFF<Bit>,
        f_acc: DFF<Bit>,
        f_single: DFF<Bit>,
        f_reason: DFF<Bits<4>>,
        f_first: DFF<Bits<16>>,
        f_last: DFF<Bits<16>>,
        f_end: DFF<Bits<16>>,
        f_q: DFF<Bits<4>>,
        f_plen: DFF<Bits<16>>,
        f_ps: DFF<Bits<306>>,
        ev_v: DFF<Bit>,
        ev_r: DFF<Bits<4>>,
        // Counters, their read register, the configured port.
        cnt: [DFF<Bits<32>>; CODES],
        cval: DFF<Bits<32>>,
        port: DFF<Bits<16>>,
        // Record queue pointers (6 bits for 32 entries); `c_wrd` is
        // `c_wr` a cycle late (a record is readable then).
        c_wr: DFF<Bits<6>>,
        c_wrd: DFF<Bits<6>>,
        c_rd: DFF<Bits<6>>,
        p_wr: DFF<Bits<6>>,
        p_rd: DFF<Bits<6>>,
        // Issue stage: inside an accepted frame, its next and last payload
        // beat addresses, its end.
        busy: DFF<Bit>,
        rd_addr: DFF<Bits<16>>,
        cur_last: DFF<Bits<16>>,
        cur_end: DFF<Bits<16>>,
        // The slot issued, beside the RAM register (s1) and the RAM output
        // register (s2).
        s1_v: DFF<Bit>,
        s1_first: DFF<Bit>,
        s1_last: DFF<Bit>,
        s1_q: DFF<Bits<4>>,
        s1_plen: DFF<Bits<16>>,
        s2_v: DFF<Bit>,
        s2_first: DFF<Bit>,
        s2_last: DFF<Bit>,
        s2_q: DFF<Bits<4>>,
        s2_plen: DFF<Bits<16>>,
        // Realigner: previous beat, shifts (bits) for it and for the
        // current beat, payload bytes left, a final beat pending, the next
        // beat out is the frame's first, the frame's pseudo fields.
        prev: DFF<Bits<W>>,
        ra: DFF<Bits<16>>,
        la: DFF<Bits<16>>,
        rem: DFF<Bits<16>>,
        pend: DFF<Bit>,
        firsto: DFF<Bit>,
        cur_ps: DFF<Bits<306>>,
        // Output registers.
        o_v: DFF<Bit>,
        o_last: DFF<Bit>,
        o_data: DFF<Bits<W>>,
        o_keep: DFF<Bits<B>>,
        ps_src: DFF<Bits<128>>,
        ps_dst: DFF<Bits<128>>,
        ps_sport: DFF<Bits<16>>,
        ps_dport: DFF<Bits<16>>,
        ps_ulen: DFF<Bits<16>>,
        ps_ecn: DFF<Bits<2>>,
        // Combinational temporaries.
        accept: Signal<Local, Bit>,
        first: Signal<Local, Bit>,
        we: Signal<Local, Bit>,
        wnext: Signal<Local, Bits<16>>,
        hnew: Signal<Local, Bits<HDR_BITS>>,
        used: Signal<Local, Bits<16>>,
        kc: Signal<Local, Bits<16>>,
        ipw: Signal<Local, Bits<528>>,
        v4: Signal<Local, Bit>,
        ihl: Signal<Local, Bits<4>>,
        udp: Signal<Local, Bits<48>>,
        word: Signal<Local, Bits<17>>,
        w16: Signal<Local, Bits<16>>,
        nw: Signal<Local, Bits<5>>,
        slot: Signal<Local, Bits<W>>,
        octet: Signal<Local, Bits<8>>,
        ip_a: Signal<Local, Bits<128>>,
        ip_b: Signal<Local, Bits<128>>,
        iphl17: Signal<Local, Bits<17>>,
        ulen17: Signal<Local, Bits<17>>,
        hb16: Signal<Local, Bits<16>>,
        l2: Signal<Local, Bits<17>>,
        fold: Signal<Local, Bits<17>>,
        reason: Signal<Local, Bits<4>>,
        rules: Signal<Local, Bits<16>>,
        head_v: Signal<Local, Bit>,
        pop: Signal<Local, Bit>,
        hrec: Signal<Local, Bits<70>>,
        slot_v: Signal<Local, Bit>,
        slot_first: Signal<Local, Bit>,
        slot_last: Signal<Local, Bit>,
        slot_addr: Signal<Local, Bits<16>>,
        adv: Signal<Local, Bit>,
        emit: Signal<Local, Bit>,
        edata: Signal<Local, Bits<W>>,
        ekeep: Signal<Local, Bits<B>>,
        crec: Signal<Local, Bits<70>>,
        pnext: Signal<Local, Bit>,
    }
    consts {
        c_lsh: [Constant<Bits<16>>; SLOTS] = slot_shifts(W).0,
        c_rsh: [Constant<Bits<16>>; SLOTS] = slot_shifts(W).1,
        c_vbeat: Constant<Bits<16>> = konst(HDR_FIRST / B),
        c_vbit: Constant<Bits<16>> = konst(8 * (HDR_FIRST % B)),
        c_maxb: Constant<Bits<16>> = konst(MAX_FRAME / B),
        c_lb: Constant<Bits<16>> = konst(B.trailing_zeros() as usize),
        c_b: Constant<Bits<16>> = konst(B),
        c_qmask: Constant<Bits<4>> = konst(B / 4 - 1),
        c_one_b: Constant<Bits<B>> = konst(1),
        c_all_b: Constant<Bits<B>> = Constant::new(Bits::<B>::mask()),
        c_fifo_lim: Constant<Bits<16>> = konst(fifo_depth(B) - FIFO_MARGIN),
        c_fr_lim: Constant<Bits<8>> = konst(FRAMES_MAX),
        c_port: Constant<Bits<16>> = konst(metaroce_proto::DEFAULT_UDP_PORT as usize),
        c_pad_max: Constant<Bits<16>> = konst(PAD_MAX),
        c_mapped: Constant<Bits<128>> = Constant::new(Bits::<128>::from(0xFFFFu64) << 32),
        c_truncated: Constant<Bits<4>> = konst(EthDrop::Truncated as usize),
        c_ether_type: Constant<Bits<4>> = konst(EthDrop::EtherType as usize),
        c_bad_ip_header: Constant<Bits<4>> = konst(EthDrop::BadIpHeader as usize),
        c_bad_checksum: Constant<Bits<4>> = konst(EthDrop::BadChecksum as usize),
        c_fragment: Constant<Bits<4>> = konst(EthDrop::Fragment as usize),
        c_ext_header: Constant<Bits<4>> = konst(EthDrop::ExtHeader as usize),
        c_protocol: Constant<Bits<4>> = konst(EthDrop::Protocol as usize),
        c_trailing: Constant<Bits<4>> = konst(EthDrop::TrailingBytes as usize),
        c_udp_length: Constant<Bits<4>> = konst(EthDrop::UdpLength as usize),
        c_port_drop: Constant<Bits<4>> = konst(EthDrop::Port as usize),
        c_no_payload: Constant<Bits<4>> = konst(EthDrop::NoPayload as usize),
        c_too_long: Constant<Bits<4>> = konst(EthDrop::TooLong as usize),
    }
}

/// 64-bit beats.
pub type RxEth64 = RxEth<64, 8>;
/// 512-bit beats.
pub type RxEth512 = RxEth<512, 64>;

impl<const W: usize, const B: usize> Logic for RxEth<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, rdy, i_v, i_last, i_data, i_keep, bidx, fstart, wr_ptr, fr_ptr, hdr,
            hvlan, nfr, z_v, z_tl, z_beats, z_keep, z_start, z_end, a_v, a_vlan, a_tl, a_et, a_ipw,
            a_kc, a_beats, a_start, a_end, b_v, b_vlan, b_v4, b_v6, b_frag, b_tl, b_ver, b_ihl,
            b_len, b_tot, b_iphl, b_nh, b_ecn, b_src, b_dst, b_sport, b_dport, b_ulen, b_cks,
            b_start, b_end, c_v, c_vlan, c_v4, c_v6, c_frag, c_tl, c_short, c_ver, c_ihl, c_len,
            c_tot, c_iphl, c_nh, c_ps, c_cksn, c_cksm, c_lip, c_start, c_end, d_v, d_v4, d_rules,
            d_s5, d_hlen, d_plen, d_cksn, d_cksm, d_ps, d_start, d_end, e_v, e_v4, e_ok, e_rules,
            e_first, e_hb, e_endb, e_q, e_plen, e_start, e_end, e_ps, f_v, f_acc, f_single,
            f_reason, f_first, f_last, f_end, f_q, f_plen, f_ps, ev_v, ev_r, cval, port, c_wr,
            c_wrd, c_rd, p_wr, p_rd, busy, rd_addr, cur_last, cur_end, s1_v, s1_first, s1_last,
            s1_q, s1_plen, s2_v, s2_first, s2_last, s2_q, s2_plen, prev, ra, la, rem, pend, firsto,
            cur_ps, o_v, o_last, o_data, o_keep, ps_src, ps_dst, ps_sport, ps_dport, ps_ulen,
            ps_ecn
        );
        for j in 0..15 {
            self.b_s1[j].clock.next = self.clock.val();
            self.b_s1[j].d.next = self.b_s1[j].q.val();
        }
        for j in 0..4 {
            self.c_s3[j].clock.next = self.clock.val();
            self.c_s3[j].d.next = self.c_s3[j].q.val();
        }
        for j in 0..CODES {
            self.cnt[j].clock.next = self.clock.val();
            self.cnt[j].d.next = self.cnt[j].q.val();
        }
        self.fbuf.clock.next = self.clock.val();
        self.cq.read_clock.next = self.clock.val();
        self.cq.write_clock.next = self.clock.val();
        self.pq.read_clock.next = self.clock.val();
        self.pq.write_clock.next = self.clock.val();

        // ---- Input register; ready from the buffer and queue fill. ----
        self.s_axis_tready.next = self.rdy.q.val();
        self.accept.next = self.s_axis_tvalid.val() & self.rdy.q.val();
        self.i_v.d.next = self.accept.val();
        self.i_data.d.next = self.s_axis_tdata.val();
        self.i_keep.d.next = self.s_axis_tkeep.val();
        self.i_last.d.next = self.s_axis_tlast.val();

        // ---- Write side: the beat as it came, the header capture. ----
        self.first.next = self.bidx.q.val() == 0;
        self.we.next = self.i_v.q.val() & (self.bidx.q.val() < self.c_maxb.val());
        self.wnext.next = self.wr_ptr.q.val();
        if self.we.val() {
            self.wnext.next = self.wr_ptr.q.val() + 1;
        }
        self.wr_ptr.d.next = self.wnext.val();
        self.fbuf.write_enable.next = self.we.val();
        self.fbuf.write_address.next = self.wr_ptr.q.val();
        self.fbuf.write_data.next = self.i_data.q.val();
        // Bytes 12..83 in lane order: beat k lands at bit 8 * (B * k - 12)
        // (a first beat clears the rest; at 512 bits beats 2.. shift out).
        self.hnew.next = self.hdr.q.val();
        self.slot.next = 0.into();
        if self.first.val() {
            self.hnew.next = 0.into();
        }
        for k in 0..SLOTS {
            if self.bidx.q.val() == k.to_bits::<16>() {
                self.slot.next = self.i_data.q.val() >> self.c_rsh[k].val();
                self.hnew.next = self.hnew.val()
                    | (bit_cast::<HDR_BITS, W>(self.slot.val()) << self.c_lsh[k].val());
            }
        }
        if self.i_v.q.val() {
            self.hdr.d.next = self.hnew.val();
            if self.bidx.q.val() == self.c_vbeat.val() {
                self.hvlan.d.next = self
                    .i_data
                    .q
                    .val()
                    .get_bits::<16>(self.c_vbit.val().index())
                    == 0x0081;
            }
            if self.first.val() {
                self.fstart.d.next = self.wr_ptr.q.val();
            }
            if self.i_last.q.val() {
                self.bidx.d.next = 0.into();
            } else if !self.bidx.q.val().all() {
                self.bidx.d.next = self.bidx.q.val() + 1;
            }
        }
        // The frame's end: its beat count, last `tkeep`, buffer span.
        self.z_v.d.next = self.i_v.q.val() & self.i_last.q.val();
        self.z_tl.d.next = self.bidx.q.val() >= self.c_maxb.val();
        self.z_beats.d.next = self.bidx.q.val();
        self.z_keep.d.next = self.i_keep.q.val();
        self.z_start.d.next = self.fstart.q.val();
        if self.first.val() {
            self.z_start.d.next = self.wr_ptr.q.val();
        }
        self.z_end.d.next = self.wnext.val();

        // ---- V1: EtherType, the IP/UDP window, the last beat's bytes. ----
        self.a_v.d.next = self.z_v.q.val();
        self.a_vlan.d.next = self.hvlan.q.val();
        self.a_tl.d.next = self.z_tl.q.val();
        self.a_beats.d.next = self.z_beats.q.val();
        self.a_start.d.next = self.z_start.q.val();
        self.a_end.d.next = self.z_end.q.val();
        if self.hvlan.q.val() {
            self.a_et.d.next = self.hdr.q.val().get_bits::<16>(32);
            self.a_ipw.d.next = self.hdr.q.val().get_bits::<528>(48);
        } else {
            self.a_et.d.next = self.hdr.q.val().get_bits::<16>(0);
            self.a_ipw.d.next = self.hdr.q.val().get_bits::<528>(16);
        }
        self.kc.next = 0.into();
        for i in 0..B {
            if self.z_keep.q.val().get_bit(i) {
                self.kc.next = (i + 1).to_bits::<16>();
            }
        }
        self.a_kc.d.next = self.kc.val();

        // ---- V2: header fields (network order), checksum word pairs. ----
        // `ipw` is the frame from the IP header on, byte o at bit 8 * o.
        self.ipw.next = self.a_ipw.q.val();
        self.v4.next = self.a_et.q.val() == 0x0008;
        self.ihl.next = self.ipw.val().get_bits::<4>(0);
        self.b_v.d.next = self.a_v.q.val();
        self.b_vlan.d.next = self.a_vlan.q.val();
        self.b_tl.d.next = self.a_tl.q.val();
        self.b_start.d.next = self.a_start.q.val();
        self.b_end.d.next = self.a_end.q.val();
        self.b_v4.d.next = self.v4.val();
        self.b_v6.d.next = self.a_et.q.val() == 0xDD86;
        self.b_ihl.d.next = self.ihl.val();
        self.b_ver.d.next = self.ipw.val().get_bits::<4>(4);
        self.b_len.d.next = (self.a_beats.q.val() << self.c_lb.val()) + self.a_kc.q.val();
        // IPv4 flags and fragment offset (bytes 6-7): MF, offset ≠ 0.
        self.b_frag.d.next = self.ipw.val().get_bit(53)
            | self.ipw.val().get_bits::<5>(48).any()
            | self.ipw.val().get_bits::<8>(56).any();
        self.b_cks.d.next = self.ipw.val().get_bits::<16>(80);
        // Addresses, byte-reversed into network order.
        self.ip_a.next = 0.into();
        self.ip_b.next = 0.into();
        self.octet.next = 0.into();
        if self.v4.val() {
            self.b_tot.d.next = (bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(16)) << 8)
                | bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(24));
            self.b_iphl.d.next = bit_cast::<7, 4>(self.ihl.val()) << 2;
            self.b_nh.d.next = self.ipw.val().get_bits::<8>(72);
            self.b_ecn.d.next = self.ipw.val().get_bits::<2>(8);
            for j in 0..4 {
                self.octet.next = self.ipw.val().get_bits::<8>(96 + 8 * j);
                self.ip_a.next = self.ip_a.val()
                    | (bit_cast::<128, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<8>());
                self.octet.next = self.ipw.val().get_bits::<8>(128 + 8 * j);
                self.ip_b.next = self.ip_b.val()
                    | (bit_cast::<128, 8>(self.octet.val()) << (24 - 8 * j).to_bits::<8>());
            }
            self.ip_a.next = self.ip_a.val() | self.c_mapped.val();
            self.ip_b.next = self.ip_b.val() | self.c_mapped.val();
        } else {
            self.b_tot.d.next = ((bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(32)) << 8)
                | bit_cast::<17, 8>(self.ipw.val().get_bits::<8>(40)))
                + 40;
            self.b_iphl.d.next = 40.into();
            self.b_nh.d.next = self.ipw.val().get_bits::<8>(48);
            self.b_ecn.d.next = self.ipw.val().get_bits::<2>(12);
            for j in 0..16 {
                self.octet.next = self.ipw.val().get_bits::<8>(64 + 8 * j);
                self.ip_a.next = self.ip_a.val()
                    | (bit_cast::<128, 8>(self.octet.val()) << (120 - 8 * j).to_bits::<8>());
                self.octet.next = self.ipw.val().get_bits::<8>(192 + 8 * j);
                self.ip_b.next = self.ip_b.val()
                    | (bit_cast::<128, 8>(self.octet.val()) << (120 - 8 * j).to_bits::<8>());
            }
        }
        self.b_src.d.next = self.ip_a.val();
        self.b_dst.d.next = self.ip_b.val();
        // The UDP header right after the IP header (IHL·4 or 40 bytes in).
        self.udp.next = self.ipw.val().get_bits::<48>(320);
        if self.v4.val() {
            self.udp.next = 0.into();
            for j in 5..16 {
                if self.ihl.val() == j.to_bits::<4>() {
                    self.udp.next = self.ipw.val().get_bits::<48>(32 * j);
                }
            }
        }
        self.b_sport.d.next = (bit_cast::<16, 8>(self.udp.val().get_bits::<8>(0)) << 8)
            | bit_cast::<16, 8>(self.udp.val().get_bits::<8>(8));
        self.b_dport.d.next = (bit_cast::<16, 8>(self.udp.val().get_bits::<8>(16)) << 8)
            | bit_cast::<16, 8>(self.udp.val().get_bits::<8>(24));
        self.b_ulen.d.next = (bit_cast::<16, 8>(self.udp.val().get_bits::<8>(32)) << 8)
            | bit_cast::<16, 8>(self.udp.val().get_bits::<8>(40));
        // IPv4 header checksum, first adder level: the header's words in
        // lane order (the checksum word and words past IHL·4 bytes as 0),
        // summed in pairs.
        self.nw.next = bit_cast::<5, 4>(self.ihl.val()) << 1;
        for j in 0..15 {
            self.w16.next = 0.into();
            if ((2 * j) != 5) & ((2 * j).to_bits::<5>() < self.nw.val()) {
                self.w16.next = self.ipw.val().get_bits::<16>(32 * j);
            }
            self.word.next = bit_cast::<17, 16>(self.w16.val());
            self.w16.next = 0.into();
            if ((2 * j + 1) != 5) & ((2 * j + 1).to_bits::<5>() < self.nw.val()) {
                self.w16.next = self.ipw.val().get_bits::<16>(32 * j + 16);
            }
            self.b_s1[j].d.next = self.word.val() + bit_cast::<17, 16>(self.w16.val());
        }

        // ---- V3: two more adder levels, the pseudo fields packed. ----
        self.c_v.d.next = self.b_v.q.val();
        self.c_vlan.d.next = self.b_vlan.q.val();
        self.c_v4.d.next = self.b_v4.q.val();
        self.c_v6.d.next = self.b_v6.q.val();
        self.c_frag.d.next = self.b_frag.q.val();
        self.c_tl.d.next = self.b_tl.q.val();
        self.c_ver.d.next = self.b_ver.q.val();
        self.c_ihl.d.next = self.b_ihl.q.val();
        self.c_len.d.next = self.b_len.q.val();
        self.c_tot.d.next = self.b_tot.q.val();
        self.c_iphl.d.next = self.b_iphl.q.val();
        self.c_nh.d.next = self.b_nh.q.val();
        self.c_start.d.next = self.b_start.q.val();
        self.c_end.d.next = self.b_end.q.val();
        self.c_ps.d.next = bit_cast::<306, 128>(self.b_src.q.val())
            | (bit_cast::<306, 128>(self.b_dst.q.val()) << 128)
            | (bit_cast::<306, 16>(self.b_sport.q.val()) << 256)
            | (bit_cast::<306, 16>(self.b_dport.q.val()) << 272)
            | (bit_cast::<306, 16>(self.b_ulen.q.val()) << 288)
            | (bit_cast::<306, 2>(self.b_ecn.q.val()) << 304);
        self.c_cksn.d.next = !self.b_cks.q.val();
        self.c_cksm.d.next = !self.b_cks.q.val() - 1;
        self.l2.next = 14.into();
        if self.b_vlan.q.val() {
            self.l2.next = 18.into();
        }
        self.c_lip.d.next = bit_cast::<17, 16>(self.b_len.q.val()) - self.l2.val();
        self.c_short.d.next =
            (self.b_len.q.val() < 14) | (self.b_vlan.q.val() & (self.b_len.q.val() < 18));
        self.c_s3[0].d.next = (bit_cast::<19, 17>(self.b_s1[0].q.val())
            + bit_cast::<19, 17>(self.b_s1[1].q.val()))
            + (bit_cast::<19, 17>(self.b_s1[2].q.val()) + bit_cast::<19, 17>(self.b_s1[3].q.val()));
        self.c_s3[1].d.next = (bit_cast::<19, 17>(self.b_s1[4].q.val())
            + bit_cast::<19, 17>(self.b_s1[5].q.val()))
            + (bit_cast::<19, 17>(self.b_s1[6].q.val()) + bit_cast::<19, 17>(self.b_s1[7].q.val()));
        self.c_s3[2].d.next = (bit_cast::<19, 17>(self.b_s1[8].q.val())
            + bit_cast::<19, 17>(self.b_s1[9].q.val()))
            + (bit_cast::<19, 17>(self.b_s1[10].q.val())
                + bit_cast::<19, 17>(self.b_s1[11].q.val()));
        self.c_s3[3].d.next = (bit_cast::<19, 17>(self.b_s1[12].q.val())
            + bit_cast::<19, 17>(self.b_s1[13].q.val()))
            + bit_cast::<19, 17>(self.b_s1[14].q.val());

        // ---- V4: the checksum sum, every rule as a registered bit. ----
        self.d_v.d.next = self.c_v.q.val();
        self.d_v4.d.next = self.c_v4.q.val();
        // Rules, one bit each, in the order the verdict tries them: too
        // long 0, short for Ethernet 1, EtherType 2, short for IPv4 3 and
        // IPv6 4, bad version/IHL 5, short for IHL 6, total < IHL 7, short
        // for the total 8, fragment 9, extension header 10, protocol 11,
        // trailing bytes 12, UDP length 13, port 14, no payload 15 (the
        // checksum comes between 8 and 9, a stage later).
        self.rules.next = 0.into();
        self.rules.next = self.rules.val().replace_bit(0, self.c_tl.q.val());
        self.rules.next = self.rules.val().replace_bit(1, self.c_short.q.val());
        self.d_cksn.d.next = self.c_cksn.q.val();
        self.d_cksm.d.next = self.c_cksm.q.val();
        self.d_ps.d.next = self.c_ps.q.val();
        self.d_start.d.next = self.c_start.q.val();
        self.d_end.d.next = self.c_end.q.val();
        self.d_s5.d.next = (bit_cast::<21, 19>(self.c_s3[0].q.val())
            + bit_cast::<21, 19>(self.c_s3[1].q.val()))
            + (bit_cast::<21, 19>(self.c_s3[2].q.val()) + bit_cast::<21, 19>(self.c_s3[3].q.val()));
        self.iphl17.next = bit_cast::<17, 7>(self.c_iphl.q.val());
        self.rules.next = self
            .rules
            .val()
            .replace_bit(2, !self.c_v4.q.val() & !self.c_v6.q.val());
        self.rules.next = self
            .rules
            .val()
            .replace_bit(3, self.c_v4.q.val() & (self.c_lip.q.val() < 20));
        self.rules.next = self
            .rules
            .val()
            .replace_bit(4, self.c_v6.q.val() & (self.c_lip.q.val() < 40));
        if self.c_v4.q.val() {
            self.rules.next = self
                .rules
                .val()
                .replace_bit(5, (self.c_ver.q.val() != 4) | (self.c_ihl.q.val() < 5));
        } else {
            self.rules.next = self.rules.val().replace_bit(5, self.c_ver.q.val() != 6);
        }
        self.rules.next = self
            .rules
            .val()
            .replace_bit(6, self.c_lip.q.val() < self.iphl17.val());
        self.rules.next = self
            .rules
            .val()
            .replace_bit(7, self.c_tot.q.val() < self.iphl17.val());
        self.rules.next = self
            .rules
            .val()
            .replace_bit(8, self.c_lip.q.val() < self.c_tot.q.val());
        self.rules.next = self
            .rules
            .val()
            .replace_bit(9, self.c_v4.q.val() & self.c_frag.q.val());
        self.rules.next = self.rules.val().replace_bit(
            10,
            self.c_v6.q.val()
                & ((self.c_nh.q.val() == 0)
                    | (self.c_nh.q.val() == 43)
                    | (self.c_nh.q.val() == 44)
                    | (self.c_nh.q.val() == 50)
                    | (self.c_nh.q.val() == 51)
                    | (self.c_nh.q.val() == 60)
                    | (self.c_nh.q.val() == 135)
                    | (self.c_nh.q.val() == 139)
                    | (self.c_nh.q.val() == 140)
                    | (self.c_nh.q.val() == 253)
                    | (self.c_nh.q.val() == 254)),
        );
        self.rules.next = self.rules.val().replace_bit(11, self.c_nh.q.val() != 17);
        self.rules.next = self.rules.val().replace_bit(
            12,
            (self.c_lip.q.val() > self.c_tot.q.val()) & (self.c_len.q.val() > self.c_pad_max.val()),
        );
        self.ulen17.next = bit_cast::<17, 16>(self.c_ps.q.val().get_bits::<16>(288));
        self.rules.next = self.rules.val().replace_bit(
            13,
            (self.c_tot.q.val() < (self.iphl17.val() + 8))
                | (self.ulen17.val() != (self.c_tot.q.val() - self.iphl17.val())),
        );
        self.rules.next = self.rules.val().replace_bit(
            14,
            self.c_ps.q.val().get_bits::<16>(272) != self.port.q.val(),
        );
        self.rules.next = self
            .rules
            .val()
            .replace_bit(15, self.c_tot.q.val() == (self.iphl17.val() + 8));
        self.d_rules.d.next = self.rules.val();
        self.l2.next = 14.into();
        if self.c_vlan.q.val() {
            self.l2.next = 18.into();
        }
        self.d_hlen.d.next =
            (bit_cast::<16, 17>(self.l2.val()) + bit_cast::<16, 7>(self.c_iphl.q.val())) + 8;
        self.d_plen.d.next =
            (bit_cast::<16, 17>(self.c_tot.q.val()) - bit_cast::<16, 7>(self.c_iphl.q.val())) - 8;

        // ---- V5: checksum verdict; where the payload is in the buffer. ----
        self.e_v.d.next = self.d_v.q.val();
        self.e_v4.d.next = self.d_v4.q.val();
        self.e_rules.d.next = self.d_rules.q.val();
        self.e_plen.d.next = self.d_plen.q.val();
        self.e_start.d.next = self.d_start.q.val();
        self.e_end.d.next = self.d_end.q.val();
        self.e_ps.d.next = self.d_ps.q.val();
        // The ones'-complement sum is the 21-bit sum with its carries
        // folded back in; `~fold == checksum` is compared as `fold ==
        // ~checksum` (no end-around carry) or `fold == ~checksum - 1`.
        self.fold.next = bit_cast::<17, 16>(self.d_s5.q.val().get_bits::<16>(0))
            + bit_cast::<17, 5>(self.d_s5.q.val().get_bits::<5>(16));
        if self.fold.val().get_bit(16) {
            self.e_ok.d.next = self.fold.val().get_bits::<16>(0) == self.d_cksm.q.val();
        } else {
            self.e_ok.d.next = self.fold.val().get_bits::<16>(0) == self.d_cksn.q.val();
        }
        self.hb16.next = self.d_hlen.q.val() >> self.c_lb.val();
        self.e_hb.d.next = self.hb16.val();
        self.e_first.d.next = self.d_start.q.val() + self.hb16.val();
        self.e_endb.d.next = (self.d_hlen.q.val() + self.d_plen.q.val()) - 1;
        self.e_q.d.next = bit_cast::<4, 16>(self.d_hlen.q.val() >> 2) & self.c_qmask.val();

        // ---- V6: the reason (first failure wins) and the records. ----
        self.reason.next = 0.into();
        if self.e_rules.q.val().get_bit(0) {
            self.reason.next = self.c_too_long.val();
        } else if self.e_rules.q.val().get_bit(1) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_rules.q.val().get_bit(2) {
            self.reason.next = self.c_ether_type.val();
        } else if self.e_rules.q.val().get_bit(3) | self.e_rules.q.val().get_bit(4) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_rules.q.val().get_bit(5) {
            self.reason.next = self.c_bad_ip_header.val();
        } else if self.e_rules.q.val().get_bit(6) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_rules.q.val().get_bit(7) {
            self.reason.next = self.c_bad_ip_header.val();
        } else if self.e_rules.q.val().get_bit(8) {
            self.reason.next = self.c_truncated.val();
        } else if self.e_v4.q.val() & !self.e_ok.q.val() {
            self.reason.next = self.c_bad_checksum.val();
        } else if self.e_rules.q.val().get_bit(9) {
            self.reason.next = self.c_fragment.val();
        } else if self.e_rules.q.val().get_bit(10) {
            self.reason.next = self.c_ext_header.val();
        } else if self.e_rules.q.val().get_bit(11) {
            self.reason.next = self.c_protocol.val();
        } else if self.e_rules.q.val().get_bit(12) {
            self.reason.next = self.c_trailing.val();
        } else if self.e_rules.q.val().get_bit(13) {
            self.reason.next = self.c_udp_length.val();
        } else if self.e_rules.q.val().get_bit(14) {
            self.reason.next = self.c_port_drop.val();
        } else if self.e_rules.q.val().get_bit(15) {
            self.reason.next = self.c_no_payload.val();
        }
        self.ev_v.d.next = self.e_v.q.val();
        self.ev_r.d.next = self.reason.val();
        self.m_ev_valid.next = self.ev_v.q.val();
        self.m_ev_reason.next = self.ev_r.q.val();
        self.f_v.d.next = self.e_v.q.val();
        self.f_reason.d.next = self.reason.val();
        self.f_acc.d.next = self.reason.val() == 0;
        self.hb16.next = self.e_endb.q.val() >> self.c_lb.val();
        self.f_single.d.next = self.e_hb.q.val() == self.hb16.val();
        self.f_first.d.next = self.e_first.q.val();
        self.f_last.d.next = self.e_start.q.val() + self.hb16.val();
        self.f_end.d.next = self.e_end.q.val();
        self.f_q.d.next = self.e_q.q.val();
        self.f_plen.d.next = self.e_plen.q.val();
        self.f_ps.d.next = self.e_ps.q.val();

        // ---- V7: queue the records; count the frame. ----
        // Control record: accepted [0], one payload beat [1], first [2..18),
        // last [18..34) payload beat and end [34..50) in the buffer, shift
        // code [50..54), payload bytes [54..70).
        self.crec.next = (bit_cast::<70, 16>(self.f_first.q.val()) << 2)
            | (bit_cast::<70, 16>(self.f_last.q.val()) << 18)
            | (bit_cast::<70, 16>(self.f_end.q.val()) << 34)
            | (bit_cast::<70, 4>(self.f_q.q.val()) << 50)
            | (bit_cast::<70, 16>(self.f_plen.q.val()) << 54);
        if self.f_acc.q.val() {
            self.crec.next = self.crec.val() | 1;
        }
        if self.f_single.q.val() {
            self.crec.next = self.crec.val() | 2;
        }
        self.cq.write_enable.next = self.f_v.q.val();
        self.cq.write_address.next = bit_cast::<QUEUE_BITS, 6>(self.c_wr.q.val());
        self.cq.write_data.next = self.crec.val();
        self.pq.write_enable.next = self.f_v.q.val() & self.f_acc.q.val();
        self.pq.write_address.next = bit_cast::<QUEUE_BITS, 6>(self.p_wr.q.val());
        self.pq.write_data.next = self.f_ps.q.val();
        if self.f_v.q.val() {
            self.c_wr.d.next = self.c_wr.q.val() + 1;
            if self.f_acc.q.val() {
                self.p_wr.d.next = self.p_wr.q.val() + 1;
            }
        }
        self.c_wrd.d.next = self.c_wr.q.val();
        for j in 0..CODES {
            if self.f_v.q.val() & (self.f_reason.q.val() == j.to_bits::<4>()) {
                self.cnt[j].d.next = self.cnt[j].q.val() + 1;
            }
        }
        self.cval.d.next = 0.into();
        for j in 0..CODES {
            if self.cnt_sel.val() == j.to_bits::<4>() {
                self.cval.d.next = self.cnt[j].q.val();
            }
        }
        self.cnt_val.next = self.cval.q.val();
        if self.cfg_port_we.val() {
            self.port.d.next = self.cfg_port.val();
        }

        // ---- Read side: every stage advances when the output is free. ----
        self.adv.next = !self.o_v.q.val() | self.m_axis_tready.val();
        // Issue: one record or one payload beat per cycle.
        self.hrec.next = self.cq.read_data.val();
        self.head_v.next = self.c_rd.q.val() != self.c_wrd.q.val();
        self.pop.next = false;
        self.slot_v.next = false;
        self.slot_first.next = false;
        self.slot_last.next = false;
        self.slot_addr.next = self.rd_addr.q.val();
        if self.adv.val() {
            if self.busy.q.val() {
                self.slot_v.next = true;
                self.slot_last.next = self.rd_addr.q.val() == self.cur_last.q.val();
                self.rd_addr.d.next = self.rd_addr.q.val() + 1;
                if self.slot_last.val() {
                    self.busy.d.next = false;
                    self.fr_ptr.d.next = self.cur_end.q.val();
                }
            } else if self.head_v.val() {
                self.pop.next = true;
                if self.hrec.val().get_bit(0) {
                    self.slot_v.next = true;
                    self.slot_first.next = true;
                    self.slot_last.next = self.hrec.val().get_bit(1);
                    self.slot_addr.next = self.hrec.val().get_bits::<16>(2);
                    if self.hrec.val().get_bit(1) {
                        self.fr_ptr.d.next = self.hrec.val().get_bits::<16>(34);
                    } else {
                        self.busy.d.next = true;
                        self.rd_addr.d.next = self.hrec.val().get_bits::<16>(2) + 1;
                        self.cur_last.d.next = self.hrec.val().get_bits::<16>(18);
                        self.cur_end.d.next = self.hrec.val().get_bits::<16>(34);
                    }
                } else {
                    // Dropped: its buffer space is free at once.
                    self.fr_ptr.d.next = self.hrec.val().get_bits::<16>(34);
                }
            }
            self.s1_v.d.next = self.slot_v.val();
            self.s1_first.d.next = self.slot_first.val();
            self.s1_last.d.next = self.slot_last.val();
            self.s1_q.d.next = self.hrec.val().get_bits::<4>(50) & self.c_qmask.val();
            self.s1_plen.d.next = self.hrec.val().get_bits::<16>(54);
            self.s2_v.d.next = self.s1_v.q.val();
            self.s2_first.d.next = self.s1_first.q.val();
            self.s2_last.d.next = self.s1_last.q.val();
            self.s2_q.d.next = self.s1_q.q.val();
            self.s2_plen.d.next = self.s1_plen.q.val();
        }
        self.fbuf.read_enable.next = self.adv.val();
        self.fbuf.read_address.next = self.slot_addr.val();
        // The record queue's head is on its read port; a pop presents the
        // next address at once.
        if self.pop.val() {
            self.c_rd.d.next = self.c_rd.q.val() + 1;
            self.cq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.c_rd.q.val() + 1);
        } else {
            self.cq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.c_rd.q.val());
        }
        // Realign: the previous beat from byte `off` = 2 + 4q on, then the
        // current beat's first `off` bytes.
        self.pnext.next = self.adv.val() & self.s2_v.q.val() & self.s2_first.q.val();
        self.emit.next = false;
        self.edata.next = (self.prev.q.val() >> 16) >> self.ra.q.val();
        if self.adv.val() {
            self.o_v.d.next = false;
            if self.s2_v.q.val() {
                if self.s2_first.q.val() {
                    // The previous frame's last beat, if still to go.
                    self.emit.next = self.pend.q.val();
                    self.ra.d.next = bit_cast::<16, 4>(self.s2_q.q.val()) << 5;
                    self.la.d.next = bit_cast::<16, 4>(self.c_qmask.val() - self.s2_q.q.val()) << 5;
                    self.rem.d.next = self.s2_plen.q.val();
                    self.pend.d.next = self.s2_last.q.val();
                    self.cur_ps.d.next = self.pq.read_data.val();
                } else {
                    self.emit.next = true;
                    self.edata.next =
                        self.edata.val() | ((self.fbuf.read_data.val() << 16) << self.la.q.val());
                    self.rem.d.next = self.rem.q.val() - self.c_b.val();
                    self.pend.d.next = self.s2_last.q.val() & (self.rem.q.val() > self.c_b.val());
                }
                self.prev.d.next = self.fbuf.read_data.val();
            } else if self.pend.q.val() {
                self.emit.next = true;
                self.pend.d.next = false;
            }
        }
        if self.rem.q.val() >= self.c_b.val() {
            self.ekeep.next = self.c_all_b.val();
        } else {
            self.ekeep.next = (self.c_one_b.val() << self.rem.q.val()) - 1;
        }
        if self.emit.val() {
            self.o_v.d.next = true;
            self.o_data.d.next = self.edata.val();
            self.o_keep.d.next = self.ekeep.val();
            self.o_last.d.next = self.rem.q.val() <= self.c_b.val();
            if self.firsto.q.val() {
                self.ps_src.d.next = self.cur_ps.q.val().get_bits::<128>(0);
                self.ps_dst.d.next = self.cur_ps.q.val().get_bits::<128>(128);
                self.ps_sport.d.next = self.cur_ps.q.val().get_bits::<16>(256);
                self.ps_dport.d.next = self.cur_ps.q.val().get_bits::<16>(272);
                self.ps_ulen.d.next = self.cur_ps.q.val().get_bits::<16>(288);
                self.ps_ecn.d.next = self.cur_ps.q.val().get_bits::<2>(304);
                self.firsto.d.next = false;
            }
        }
        if self.pnext.val() {
            self.firsto.d.next = true;
            self.p_rd.d.next = self.p_rd.q.val() + 1;
            self.pq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.p_rd.q.val() + 1);
        } else {
            self.pq.read_address.next = bit_cast::<QUEUE_BITS, 6>(self.p_rd.q.val());
        }
        self.m_axis_tvalid.next = self.o_v.q.val();
        self.m_axis_tdata.next = self.o_data.q.val();
        self.m_axis_tkeep.next = self.o_keep.q.val();
        self.m_axis_tlast.next = self.o_last.q.val();
        self.m_pseudo_src_ip.next = self.ps_src.q.val();
        self.m_pseudo_dst_ip.next = self.ps_dst.q.val();
        self.m_pseudo_src_port.next = self.ps_sport.q.val();
        self.m_pseudo_dst_port.next = self.ps_dport.q.val();
        self.m_pseudo_udp_len.next = self.ps_ulen.q.val();
        self.m_ecn.next = self.ps_ecn.q.val();

        // ---- Flow control: frames past their end, buffer fill. ----
        if self.i_v.q.val() & self.i_last.q.val() {
            if !self.pop.val() {
                self.nfr.d.next = self.nfr.q.val() + 1;
            }
        } else if self.pop.val() {
            self.nfr.d.next = self.nfr.q.val() - 1;
        }
        self.used.next = self.wr_ptr.q.val() - self.fr_ptr.q.val();
        self.rdy.d.next =
            (self.used.val() < self.c_fifo_lim.val()) & (self.nfr.q.val() < self.c_fr_lim.val());

        if self.rst.val() {
            self.rdy.d.next = false;
            self.i_v.d.next = false;
            self.bidx.d.next = 0.into();
            self.wr_ptr.d.next = 0.into();
            self.fr_ptr.d.next = 0.into();
            self.nfr.d.next = 0.into();
            self.z_v.d.next = false;
            self.a_v.d.next = false;
            self.b_v.d.next = false;
            self.c_v.d.next = false;
            self.d_v.d.next = false;
            self.e_v.d.next = false;
            self.f_v.d.next = false;
            self.ev_v.d.next = false;
            for j in 0..CODES {
                self.cnt[j].d.next = 0.into();
            }
            self.port.d.next = self.c_port.val();
            self.c_wr.d.next = 0.into();
            self.c_wrd.d.next = 0.into();
            self.c_rd.d.next = 0.into();
            self.p_wr.d.next = 0.into();
            self.p_rd.d.next = 0.into();
            self.busy.d.next = false;
            self.s1_v.d.next = false;
            self.s2_v.d.next = false;
            self.pend.d.next = false;
            self.firsto.d.next = false;
            self.o_v.d.next = false;
        }
    }
}
