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
//!   the addresses and the destination port (XOR matrices in two stages)
//!   moved to the end of a frame's first beat (below).
//! * **Descriptor side.** An accepted descriptor's MetaRoCE headers (lane
//!   order) and fetch request go into a 4-entry FIFO ([`LutRam`]s); the
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
//! stays on until reset) when a payload beat's `tkeep` or `tlast` disagrees.
//!
//! Native rust-hdl: kernels, rust-hdl's `RAM` (the entropy table) and one
//! custom leaf, [`LutRam`] (the FIFO), with a Rust model; rust-hdl's own
//! simulator runs the block (the tests below). Verified under Verilator
//! (`metaroce-sim-tb`) against the engine and `metaroce-proto`.

use rust_hdl::prelude::*;

use crate::bus::{AxisIn, AxisOut, CfgIn, DescIn, ReadReqOut};
use crate::helpers::{LutRam, konst, native_block};

use matrices::Matrices;

/// Entries of the per-path entropy table (the engine's `MAX_PATHS`); the
/// table is indexed by the low 6 bits of the descriptor's path.
pub const PATHS: usize = 64;

/// Cycles from a descriptor accepted (`s_desc_valid && s_desc_ready` at a
/// clock edge) to its frame's first beat on `m_axis` when the block is
/// idle and the payload arrives in time.
pub const FIRST_BEAT_LATENCY: usize = 9;

/// Cycles after a register write ([`cfg::REGS`]) during which the
/// registers derived from the configuration are recomputed and
/// `s_desc_ready` is low.
pub const CFG_SETTLE: usize = 7;

pub mod cfg;
mod matrices;
#[cfg(test)]
mod tests;

/// Header bytes by kind (`ipv6 << 1 | msg`): Ethernet + IPv4 or IPv6 +
/// UDP + the 32-byte base header, + the 32-byte MSG extension.
const HLEN: [usize; 4] = [74, 106, 94, 126];
/// First byte the ICRC covers (the UDP payload), IPv4 and IPv6.
const DSTART: [usize; 2] = [42, 62];
/// Bits of the header shift register (the longest header).
const HDR_BITS: usize = 8 * 126;
/// The MetaRoCE headers after the version byte, in lane order.
const MR_BITS: usize = 504;
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
    let mx = Matrices::<W>::new();
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
        // Configuration registers and the entropy table.
        local_mac: DFF<Bits<48>>,
        peer_mac: DFF<Bits<48>>,
        local_ip: DFF<Bits<32>>,
        peer_ip: DFF<Bits<32>>,
        ipv6: DFF<Bit>,
        local_ip6: DFF<Bits<128>>,
        peer_ip6: DFF<Bits<128>>,
        dport: DFF<Bits<16>>,
        ttl: DFF<Bits<8>>,
        dscp: DFF<Bits<6>>,
        ent: RAM<Bits<16>, 6>,
        // Derived from the configuration, recomputed while `upd` counts
        // down after a register write. IPv4 checksum: word pairs, their sum, the
        // folded sum, one per (ECN, MSG) choice.
        upd: DFF<Bits<4>>,
        ck_s1: DFF<Bits<17>>,
        ck_s2: DFF<Bits<17>>,
        ck_s3: DFF<Bits<17>>,
        ck_x: DFF<Bits<18>>,
        ck_y: DFF<Bits<17>>,
        ck_sum: DFF<Bits<19>>,
        ck_f: DFF<Bits<16>>,
        ck_v: [DFF<Bits<16>>; 4],
        // Pseudo-header CRC of the addresses and the destination port:
        // five partial matrices, the seed, the seed moved to the end of
        // the first beat.
        cr_p: [DFF<Bits<32>>; 5],
        cr_seed: DFF<Bits<32>>,
        cr_first: DFF<Bits<32>>,
        // FIFO: pointers (3 bits for 4 entries), entry ready bits, the
        // MetaRoCE headers, the fetch requests, the computed part.
        f_wr: DFF<Bits<3>>,
        f_fe: DFF<Bits<3>>,
        f_rd: DFF<Bits<3>>,
        f_ok: DFF<Bits<4>>,
        rdy: DFF<Bit>,
        f_mr: LutRam<MR_BITS, 2>,
        f_fetch: LutRam<80, 2>,
        f_side: LutRam<SIDE_BITS, 2>,
        // D1: the accepted descriptor's entry, lengths and flags.
        d1_v: DFF<Bit>,
        d1_idx: DFF<Bits<2>>,
        d1_plen: DFF<Bits<16>>,
        d1_msg: DFF<Bit>,
        d1_ecn: DFF<Bit>,
        // D2: lengths, checksum, source port.
        d2_v: DFF<Bit>,
        d2_idx: DFF<Bits<2>>,
        d2_plen: DFF<Bits<16>>,
        d2_msg: DFF<Bit>,
        d2_ecn: DFF<Bit>,
        d2_sport: DFF<Bits<16>>,
        d2_ulen: DFF<Bits<16>>,
        d2_l3: DFF<Bits<16>>,
        d2_cks: DFF<Bits<16>>,
        d2_end: DFF<Bits<16>>,
        d2_tend: DFF<Bits<16>>,
        // Generator: the frame being made, its header in lane order
        // (shifted one beat per beat), down-counters of header bytes,
        // bytes to the datagram, to the ICRC and to the frame's end,
        // payload bytes not yet taken, the last payload beat taken; flags
        // of the current beat: it holds payload lanes, payload is left to
        // take, it is the frame's last.
        g_active: DFF<Bit>,
        g_first: DFF<Bit>,
        g_hdr: DFF<Bits<HDR_BITS>>,
        g_hrem: DFF<Bits<8>>,
        g_drem: DFF<Bits<8>>,
        g_erem: DFF<Bits<16>>,
        g_trem: DFF<Bits<16>>,
        g_prem: DFF<Bits<16>>,
        g_pay: DFF<Bit>,
        g_pnz: DFF<Bit>,
        g_last: DFF<Bit>,
        g_kind: DFF<Bits<2>>,
        g_prev: DFF<Bits<W>>,
        g_s1: DFF<Bits<32>>,
        g_m: DFF<Bits<8>>,
        // The payload beat taken, checked a cycle later (`m_err`).
        e_v: DFF<Bit>,
        e_last: DFF<Bit>,
        e_keep: DFF<Bits<B>>,
        e_prem: DFF<Bits<16>>,
        err: DFF<Bit>,
        // A: the beat, its lane masks and the frame's CRC constants.
        a_v: DFF<Bit>,
        a_first: DFF<Bit>,
        a_last: DFF<Bit>,
        a_hold: DFF<Bit>,
        a_data: DFF<Bits<W>>,
        a_keep: DFF<Bits<B>>,
        a_cov: DFF<Bits<B>>,
        a_t: DFF<Bits<8>>,
        a_s1: DFF<Bits<32>>,
        a_m: DFF<Bits<8>>,
        // P: the beat's share of the CRC.
        p_v: DFF<Bit>,
        p_first: DFF<Bit>,
        p_last: DFF<Bit>,
        p_hold: DFF<Bit>,
        p_data: DFF<Bits<W>>,
        p_keep: DFF<Bits<B>>,
        p_t: DFF<Bits<8>>,
        p_s1: DFF<Bits<32>>,
        p_m: DFF<Bits<8>>,
        p_x: DFF<Bits<32>>,
        // R: the CRC register after the beat.
        r_v: DFF<Bit>,
        r_last: DFF<Bit>,
        r_data: DFF<Bits<W>>,
        r_keep: DFF<Bits<B>>,
        r_t: DFF<Bits<8>>,
        r_m: DFF<Bits<8>>,
        crc: DFF<Bits<32>>,
        // U: the ICRC and the lanes of its bytes 0..3.
        u_v: DFF<Bit>,
        u_last: DFF<Bit>,
        u_data: DFF<Bits<W>>,
        u_keep: DFF<Bits<B>>,
        u_ic: DFF<Bits<32>>,
        u_sel: [DFF<Bits<B>>; 4],
        // O: the output register.
        o_v: DFF<Bit>,
        o_last: DFF<Bit>,
        o_data: DFF<Bits<W>>,
        o_keep: DFF<Bits<B>>,
        // Combinational temporaries.
        src: Signal<Local, Bits<128>>,
        dst: Signal<Local, Bits<128>>,
        phv: Signal<Local, Bits<320>>,
        m32: Signal<Local, Bits<32>>,
        w32: Signal<Local, Bits<32>>,
        acc: Signal<Local, Bits<32>>,
        s17: Signal<Local, Bits<17>>,
        inc: Signal<Local, Bits<16>>,
        w16: Signal<Local, Bits<16>>,
        ones: Signal<Local, Bits<16>>,
        fill: Signal<Local, Bits<3>>,
        wr_n: Signal<Local, Bits<3>>,
        rd_n: Signal<Local, Bits<3>>,
        accept: Signal<Local, Bit>,
        regw: Signal<Local, Bit>,
        be: Signal<Local, Bits<MR_BITS>>,
        mr: Signal<Local, Bits<MR_BITS>>,
        okn: Signal<Local, Bits<4>>,
        fe_wait: Signal<Local, Bit>,
        kind: Signal<Local, Bits<2>>,
        m16: Signal<Local, Bits<16>>,
        side: Signal<Local, Bits<SIDE_BITS>>,
        head_ok: Signal<Local, Bit>,
        head: Signal<Local, Bits<SIDE_BITS>>,
        adv: Signal<Local, Bit>,
        need: Signal<Local, Bit>,
        go: Signal<Local, Bit>,
        take: Signal<Local, Bit>,
        hm: Signal<Local, Bits<B>>,
        em: Signal<Local, Bits<B>>,
        dm: Signal<Local, Bits<B>>,
        km: Signal<Local, Bits<B>>,
        pay: Signal<Local, Bits<W>>,
        beat: Signal<Local, Bits<W>>,
        lane: Signal<Local, Bits<W>>,
        tos: Signal<Local, Bits<8>>,
        h4: Signal<Local, Bits<336>>,
        h6: Signal<Local, Bits<496>>,
        hl: Signal<Local, Bits<HDR_BITS>>,
        wk: Signal<Local, Bits<B>>,
        cd: Signal<Local, Bits<W>>,
        unz: Signal<Local, Bits<11>>,
        icw: Signal<Local, Bits<W>>,
        octet: Signal<Local, Bits<8>>,
    }
    consts {
        c_settle: Constant<Bits<4>> = konst(CFG_SETTLE),
        c_w: Constant<Bits<16>> = konst(W),
        c_b: Constant<Bits<16>> = konst(B),
        c_b8: Constant<Bits<8>> = konst(B),
        c_b2: Constant<Bits<16>> = konst(2 * B),
        c_b2_8: Constant<Bits<8>> = konst(2 * B),
        c_bt: Constant<Bits<16>> = konst(B + 4),
        c_bm1: Constant<Bits<8>> = konst(B - 1),
        c_ff: Constant<Bits<W>> = konst(0xFF),
        c_lo64: Constant<Bits<128>> = Constant::new(Bits::<128>::mask() >> 64),
        c_hi64: Constant<Bits<128>> = Constant::new(Bits::<128>::mask() << 64),
        c_mapped: Constant<Bits<128>> = Constant::new(Bits::<128>::from(0xFFFFu64) << 32),
        c_fix4: Constant<Bits<336>> = Constant::new(
            (Bits::from(0x0800) << 224)
                | (Bits::from(0x45) << 216)
                | (Bits::from(0x4000) << 160)
                | (Bits::from(17) << 144),
        ),
        c_fix6: Constant<Bits<496>> = Constant::new(
            (Bits::from(0x86DD) << 384) | (Bits::from(6) << 380) | (Bits::from(17) << 328),
        ),
        c_ver4: Constant<Bits<HDR_BITS>> = Constant::new(Bits::from(1) << 336),
        c_ver6: Constant<Bits<HDR_BITS>> = Constant::new(Bits::from(1) << 496),
        c_hlen: [Constant<Bits<8>>; 4] = HLEN.map(konst),
        c_end: [Constant<Bits<16>>; 4] = HLEN.map(konst),
        c_tend: [Constant<Bits<16>>; 4] = HLEN.map(|h| konst(h + 4)),
        c_l3: [Constant<Bits<16>>; 4] = [64, 96, 44, 76].map(konst),
        c_ulen: [Constant<Bits<16>>; 2] = [44, 76].map(konst),
        c_dstart: [Constant<Bits<8>>; 2] = DSTART.map(konst),
        c_cka: [Constant<Bits<16>>; 4] = [64, 96, 66, 98].map(konst),
        c_psr: [Constant<Bits<16>>; 4] = HLEN.map(|h| konst(W - 8 * (h % B))),
        c_psl: [Constant<Bits<16>>; 4] = HLEN.map(|h| konst(8 * (h % B))),
        c_beat_z: [Constant<Bits<32>>; 32] = mx.beat_z,
        c_beat_d: [Constant<Bits<W>>; 32] = mx.beat_d,
        c_unz: [Constant<Bits<UNZ_BITS>>; 32] = mx.unz,
        c_ph: [Constant<Bits<64>>; 160] = mx.ph,
        c_seed0: Constant<Bits<32>> = mx.seed0,
        c_first4: [Constant<Bits<32>>; 32] = mx.first4,
        c_first6: [Constant<Bits<32>>; 32] = mx.first6,
        c_port4: [Constant<Bits<32>>; 32] = mx.port4,
        c_port6: [Constant<Bits<32>>; 32] = mx.port6,
    }
}

/// 64-bit beats.
pub type TxBuild64 = TxBuild<64, 8>;
/// 512-bit beats.
pub type TxBuild512 = TxBuild<512, 64>;

impl<const W: usize, const B: usize> Logic for TxBuild<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, local_mac, peer_mac, local_ip, peer_ip, ipv6, local_ip6, peer_ip6, dport,
            ttl, dscp, upd, rdy, ck_s1, ck_s2, ck_s3, ck_x, ck_y, ck_sum, ck_f, cr_seed, cr_first,
            f_wr, f_fe, f_rd, f_ok, d1_v, d1_idx, d1_plen, d1_msg, d1_ecn, d2_v, d2_idx, d2_plen,
            d2_msg, d2_ecn, d2_sport, d2_ulen, d2_l3, d2_cks, d2_end, d2_tend, g_active, g_first,
            g_hdr, g_hrem, g_drem, g_erem, g_trem, g_prem, g_pay, g_pnz, g_last, g_kind, g_prev,
            g_s1, g_m, e_v, e_last, e_keep, e_prem, err, a_v, a_first, a_last, a_hold, a_data,
            a_keep, a_cov, a_t, a_s1, a_m, p_v, p_first, p_last, p_hold, p_data, p_keep, p_t, p_s1,
            p_m, p_x, r_v, r_last, r_data, r_keep, r_t, r_m, crc, u_v, u_last, u_data, u_keep,
            u_ic, o_v, o_last, o_data, o_keep
        );
        for j in 0..4 {
            self.ck_v[j].clock.next = self.clock.val();
            self.ck_v[j].d.next = self.ck_v[j].q.val();
            self.u_sel[j].clock.next = self.clock.val();
            self.u_sel[j].d.next = self.u_sel[j].q.val();
        }
        for j in 0..5 {
            self.cr_p[j].clock.next = self.clock.val();
            self.cr_p[j].d.next = self.cr_p[j].q.val();
        }
        self.ent.read_clock.next = self.clock.val();
        self.ent.write_clock.next = self.clock.val();
        self.f_mr.clock.next = self.clock.val();
        self.f_fetch.clock.next = self.clock.val();
        self.f_side.clock.next = self.clock.val();

        // ---- Configuration writes. ----
        if self.upd.q.val() != 0 {
            self.upd.d.next = self.upd.q.val() - 1;
        }
        self.regw.next = self.cfg.we.val() & (self.cfg.addr.val().get_bits::<2>(6) == 0);
        if self.regw.val() {
            self.upd.d.next = self.c_settle.val();
        }
        if self.cfg.we.val() {
            if self.cfg.addr.val() == 0 {
                self.local_mac.d.next = self.cfg.data.val().get_bits::<48>(0);
                self.dport.d.next = self.cfg.data.val().get_bits::<16>(48);
            }
            if self.cfg.addr.val() == 1 {
                self.peer_mac.d.next = self.cfg.data.val().get_bits::<48>(0);
                self.ttl.d.next = self.cfg.data.val().get_bits::<8>(48);
                self.dscp.d.next = self.cfg.data.val().get_bits::<6>(56);
                self.ipv6.d.next = self.cfg.data.val().get_bit(62);
            }
            if self.cfg.addr.val() == 2 {
                self.local_ip.d.next = self.cfg.data.val().get_bits::<32>(0);
                self.peer_ip.d.next = self.cfg.data.val().get_bits::<32>(32);
            }
            if self.cfg.addr.val() == 3 {
                self.local_ip6.d.next = (self.local_ip6.q.val() & self.c_lo64.val())
                    | (bit_cast::<128, 64>(self.cfg.data.val()) << 64);
            }
            if self.cfg.addr.val() == 4 {
                self.local_ip6.d.next = (self.local_ip6.q.val() & self.c_hi64.val())
                    | bit_cast::<128, 64>(self.cfg.data.val());
            }
            if self.cfg.addr.val() == 5 {
                self.peer_ip6.d.next = (self.peer_ip6.q.val() & self.c_lo64.val())
                    | (bit_cast::<128, 64>(self.cfg.data.val()) << 64);
            }
            if self.cfg.addr.val() == 6 {
                self.peer_ip6.d.next = (self.peer_ip6.q.val() & self.c_hi64.val())
                    | bit_cast::<128, 64>(self.cfg.data.val());
            }
        }
        self.ent.write_enable.next =
            self.cfg.we.val() & (self.cfg.addr.val().get_bits::<2>(6) == 1);
        self.ent.write_address.next = self.cfg.addr.val().get_bits::<6>(0);
        self.ent.write_data.next = self.cfg.data.val().get_bits::<16>(0);
        self.reg_local_mac.next = self.local_mac.q.val();
        self.reg_peer_mac.next = self.peer_mac.q.val();
        self.reg_local_ip.next = self.local_ip.q.val();
        self.reg_local_ip6.next = self.local_ip6.q.val();
        self.reg_ttl.next = self.ttl.q.val();
        self.reg_dscp.next = self.dscp.q.val();

        // ---- Derived from the configuration (while `upd` counts). ----
        // The pseudo-header's addresses: IPv6, or IPv4 mapped into IPv6.
        if self.ipv6.q.val() {
            self.src.next = self.local_ip6.q.val();
            self.dst.next = self.peer_ip6.q.val();
        } else {
            self.src.next = bit_cast::<128, 32>(self.local_ip.q.val()) | self.c_mapped.val();
            self.dst.next = bit_cast::<128, 32>(self.peer_ip.q.val()) | self.c_mapped.val();
        }
        self.phv.next = bit_cast::<320, 128>(self.src.val())
            | (bit_cast::<320, 128>(self.dst.val()) << 128)
            | (bit_cast::<320, 16>(self.dport.q.val()) << 256);
        self.m32.next = 0.into();
        self.acc.next = 0.into();
        self.s17.next = 0.into();
        self.inc.next = 0.into();
        self.w16.next = 0.into();
        self.octet.next = 0.into();
        if self.upd.q.val() != 0 {
            // IPv4 header words that do not depend on the descriptor:
            // 0x4500 | DSCP << 2, 0x4000 (DF), TTL << 8 | 17, addresses.
            self.ck_s1.d.next = bit_cast::<17, 16>(self.local_ip.q.val().get_bits::<16>(16))
                + bit_cast::<17, 16>(self.local_ip.q.val().get_bits::<16>(0));
            self.ck_s2.d.next = bit_cast::<17, 16>(self.peer_ip.q.val().get_bits::<16>(16))
                + bit_cast::<17, 16>(self.peer_ip.q.val().get_bits::<16>(0));
            self.ck_s3.d.next = ((bit_cast::<17, 8>(self.ttl.q.val()) << 8)
                | (bit_cast::<17, 6>(self.dscp.q.val()) << 2))
                + 0x8511;
            self.ck_x.d.next =
                bit_cast::<18, 17>(self.ck_s1.q.val()) + bit_cast::<18, 17>(self.ck_s2.q.val());
            self.ck_y.d.next = self.ck_s3.q.val();
            self.ck_sum.d.next =
                bit_cast::<19, 18>(self.ck_x.q.val()) + bit_cast::<19, 17>(self.ck_y.q.val());
            // Ones'-complement fold, end-around carry as a second adder
            // beside the first, selected by the first's carry.
            self.s17.next = bit_cast::<17, 16>(self.ck_sum.q.val().get_bits::<16>(0))
                + bit_cast::<17, 3>(self.ck_sum.q.val().get_bits::<3>(16));
            self.inc.next = self.s17.val().get_bits::<16>(0) + 1;
            if self.s17.val().get_bit(16) {
                self.ck_f.d.next = self.inc.val();
            } else {
                self.ck_f.d.next = self.s17.val().get_bits::<16>(0);
            }
            // + the rest of the header that is known before the payload
            // length: ECN (2), 64 + 32 · MSG (the total length less the
            // payload), one register per (ECN, MSG).
            for j in 0..4 {
                self.w16.next = self.c_cka[j].val();
                self.s17.next =
                    bit_cast::<17, 16>(self.ck_f.q.val()) + bit_cast::<17, 16>(self.w16.val());
                self.inc.next = self.s17.val().get_bits::<16>(0) + 1;
                if self.s17.val().get_bit(16) {
                    self.ck_v[j].d.next = self.inc.val();
                } else {
                    self.ck_v[j].d.next = self.s17.val().get_bits::<16>(0);
                }
            }
            // Pseudo-header CRC: five partial matrices of 64 inputs, the
            // seed, the seed moved to the end of a frame's first beat.
            for g in 0..5 {
                self.acc.next = 0.into();
                for o in 0..32 {
                    self.acc.next = self.acc.val().replace_bit(
                        o,
                        (self.phv.val().get_bits::<64>(64 * g) & self.c_ph[32 * g + o].val()).xor(),
                    );
                }
                self.cr_p[g].d.next = self.acc.val();
            }
            self.cr_seed.d.next = self.c_seed0.val()
                ^ self.cr_p[0].q.val()
                ^ self.cr_p[1].q.val()
                ^ self.cr_p[2].q.val()
                ^ self.cr_p[3].q.val()
                ^ self.cr_p[4].q.val();
            self.acc.next = 0.into();
            for o in 0..32 {
                self.m32.next = self.c_first4[o].val();
                if self.ipv6.q.val() {
                    self.m32.next = self.c_first6[o].val();
                }
                self.acc.next = self
                    .acc
                    .val()
                    .replace_bit(o, (self.cr_seed.q.val() & self.m32.val()).xor());
            }
            self.cr_first.d.next = self.acc.val();
        }

        // ---- Descriptor in: the FIFO entry, D1. ----
        // `s_desc_ready` is a register (set below), so that no path runs
        // from this block's inputs to it.
        self.s_desc.ready.next = self.rdy.q.val();
        self.accept.next = self.s_desc.valid.val() & self.rdy.q.val();
        self.be.next = 0.into();
        self.mr.next = 0.into();
        if self.accept.val() {
            // The headers after the version byte, network order (first
            // byte in the top bits), then in lane order.
            self.be.next = (bit_cast::<MR_BITS, 8>(self.s_desc.opcode.val()) << 496)
                | (bit_cast::<MR_BITS, 16>(self.s_desc.flags.val()) << 480)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.dst_qpn.val()) << 448)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.src_qpn.val()) << 416)
                | (bit_cast::<MR_BITS, 16>(self.s_desc.stream.val()) << 400)
                | (bit_cast::<MR_BITS, 16>(self.s_desc.path.val()) << 384)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.conn_psn.val()) << 352)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.path_psn.val()) << 320)
                | (bit_cast::<MR_BITS, 64>(self.s_desc.timestamp.val()) << 256)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.msn.val()) << 224)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.recv_idx.val()) << 192)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.msg_len.val()) << 160)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.offset.val()) << 128)
                | (bit_cast::<MR_BITS, 64>(self.s_desc.remote_va.val()) << 64)
                | (bit_cast::<MR_BITS, 32>(self.s_desc.rkey.val()) << 32)
                | bit_cast::<MR_BITS, 32>(self.s_desc.imm.val());
            for j in 0..63 {
                self.octet.next = self.be.val().get_bits::<8>(496 - 8 * j);
                self.mr.next = self.mr.val()
                    | (bit_cast::<MR_BITS, 8>(self.octet.val()) << (8 * j).to_bits::<16>());
            }
        }
        self.f_mr.write_enable.next = self.accept.val();
        self.f_mr.write_address.next = self.f_wr.q.val().get_bits::<2>(0);
        self.f_mr.write_data.next = self.mr.val();
        self.f_fetch.write_enable.next = self.accept.val();
        self.f_fetch.write_address.next = self.f_wr.q.val().get_bits::<2>(0);
        self.f_fetch.write_data.next = bit_cast::<80, 64>(self.s_desc.addr.val())
            | (bit_cast::<80, 16>(self.s_desc.len.val()) << 64);
        self.ent.read_address.next = self.s_desc.path.val().get_bits::<6>(0);
        self.okn.next = self.f_ok.q.val();
        self.d1_v.d.next = self.accept.val();
        if self.accept.val() {
            self.f_wr.d.next = self.f_wr.q.val() + 1;
            self.okn.next = self
                .okn
                .val()
                .replace_bit(self.f_wr.q.val().get_bits::<2>(0).index(), false);
            self.d1_idx.d.next = self.f_wr.q.val().get_bits::<2>(0);
            self.d1_plen.d.next = self.s_desc.len.val();
            self.d1_msg.d.next =
                (self.s_desc.opcode.val() >= 0x01) & (self.s_desc.opcode.val() <= 0x06);
            self.d1_ecn.d.next = self.s_desc.ecn.val();
        }

        // ---- Fetch requests, from the FIFO ahead of the frame. ----
        self.f_fetch.read_address.next = self.f_fe.q.val().get_bits::<2>(0);
        // The outputs read registers and the FIFO only: Verilator splits
        // them off this block, so no loop appears through a DMA engine
        // whose `m_rd_ready` depends on `m_rd_valid`.
        self.m_rd.addr.next = self.f_fetch.read_data.val().get_bits::<64>(0);
        self.m_rd.len.next = self.f_fetch.read_data.val().get_bits::<16>(64);
        self.m_rd.valid.next = (self.f_fe.q.val() != self.f_wr.q.val())
            & self.f_fetch.read_data.val().get_bits::<16>(64).any();
        self.fe_wait.next = self.f_fe.q.val() != self.f_wr.q.val();
        if self.fe_wait.val()
            & (!self.f_fetch.read_data.val().get_bits::<16>(64).any() | self.m_rd.ready.val())
        {
            self.f_fe.d.next = self.f_fe.q.val() + 1;
        }

        // ---- D1 -> D2: entropy, lengths, IPv4 checksum. ----
        self.kind.next = bit_cast::<2, 1>(self.d1_msg.q.val().into());
        if self.ipv6.q.val() {
            self.kind.next = self.kind.val() | 2;
        }
        self.d2_v.d.next = self.d1_v.q.val();
        self.ones.next = 0.into();
        if self.d1_v.q.val() {
            self.d2_idx.d.next = self.d1_idx.q.val();
            self.d2_plen.d.next = self.d1_plen.q.val();
            self.d2_msg.d.next = self.d1_msg.q.val();
            self.d2_ecn.d.next = self.d1_ecn.q.val();
            self.d2_sport.d.next = self.ent.read_data.val();
            if self.d1_msg.q.val() {
                self.d2_ulen.d.next = self.d1_plen.q.val() + self.c_ulen[1].val();
            } else {
                self.d2_ulen.d.next = self.d1_plen.q.val() + self.c_ulen[0].val();
            }
            for j in 0..4 {
                if self.kind.val() == j.to_bits::<2>() {
                    self.d2_l3.d.next = self.d1_plen.q.val() + self.c_l3[j].val();
                    self.d2_end.d.next = self.d1_plen.q.val() + self.c_end[j].val();
                    self.d2_tend.d.next = self.d1_plen.q.val() + self.c_tend[j].val();
                }
            }
            // The checksum: the configured sum for this (ECN, MSG) plus
            // the payload length, ones' complement, inverted.
            for j in 0..4 {
                if (bit_cast::<2, 1>(self.d1_msg.q.val().into())
                    | (bit_cast::<2, 1>(self.d1_ecn.q.val().into()) << 1))
                    == j.to_bits::<2>()
                {
                    self.w16.next = self.ck_v[j].q.val();
                    self.s17.next = bit_cast::<17, 16>(self.w16.val())
                        + bit_cast::<17, 16>(self.d1_plen.q.val());
                }
            }
            self.inc.next = self.s17.val().get_bits::<16>(0) + 1;
            if self.s17.val().get_bit(16) {
                self.ones.next = self.inc.val();
            } else {
                self.ones.next = self.s17.val().get_bits::<16>(0);
            }
            self.d2_cks.d.next = !self.ones.val();
        }

        // ---- D2 -> the entry's computed part. ----
        // Layout: payload bytes [0, 16), source port [16, 32), UDP length
        // [32, 48), IP length field [48, 64), IPv4 checksum [64, 80),
        // ICRC offset [80, 96), frame length [96, 112), trailing zero
        // lanes of the last covered beat [112, 120), CRC seed [120, 152),
        // ECN [152], MSG [153].
        self.m16.next = 0.into();
        self.w32.next = 0.into();
        self.side.next = 0.into();
        self.acc.next = 0.into();
        if self.d2_v.q.val() {
            self.m16.next = 0 - self.d2_end.q.val();
            self.w32.next = bit_cast::<32, 16>(self.d2_sport.q.val())
                | (bit_cast::<32, 16>(self.d2_ulen.q.val()) << 16);
            for o in 0..32 {
                self.m32.next = self.c_port4[o].val();
                if self.ipv6.q.val() {
                    self.m32.next = self.c_port6[o].val();
                }
                self.acc.next = self
                    .acc
                    .val()
                    .replace_bit(o, (self.w32.val() & self.m32.val()).xor());
            }
            self.side.next = bit_cast::<SIDE_BITS, 16>(self.d2_plen.q.val())
                | (bit_cast::<SIDE_BITS, 16>(self.d2_sport.q.val()) << 16)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_ulen.q.val()) << 32)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_l3.q.val()) << 48)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_cks.q.val()) << 64)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_end.q.val()) << 80)
                | (bit_cast::<SIDE_BITS, 16>(self.d2_tend.q.val()) << 96)
                | (bit_cast::<SIDE_BITS, 8>(bit_cast::<8, 16>(self.m16.val()) & self.c_bm1.val())
                    << 112)
                | (bit_cast::<SIDE_BITS, 32>(self.acc.val() ^ self.cr_first.q.val()) << 120)
                | (bit_cast::<SIDE_BITS, 1>(self.d2_ecn.q.val().into()) << 152)
                | (bit_cast::<SIDE_BITS, 1>(self.d2_msg.q.val().into()) << 153);
            self.okn.next = self
                .okn
                .val()
                .replace_bit(self.d2_idx.q.val().index(), true);
        }
        self.f_side.write_enable.next = self.d2_v.q.val();
        self.f_side.write_address.next = self.d2_idx.q.val();
        self.f_side.write_data.next = self.side.val();
        self.f_ok.d.next = self.okn.val();

        // ---- Generator. ----
        self.f_mr.read_address.next = self.f_rd.q.val().get_bits::<2>(0);
        self.f_side.read_address.next = self.f_rd.q.val().get_bits::<2>(0);
        self.head.next = self.f_side.read_data.val();
        self.head_ok.next = (self.f_rd.q.val() != self.f_fe.q.val())
            & self
                .f_ok
                .q
                .val()
                .get_bit(self.f_rd.q.val().get_bits::<2>(0).index());
        self.adv.next = !self.o_v.q.val() | self.m_axis.tready.val();
        self.need.next = self.g_active.q.val() & self.g_pay.q.val() & self.g_pnz.q.val();
        self.go.next =
            self.g_active.q.val() & self.adv.val() & (!self.need.val() | self.s_pay.tvalid.val());
        self.s_pay.tready.next = self.go.val() & self.need.val();
        self.take.next =
            self.head_ok.val() & (!self.g_active.q.val() | (self.go.val() & self.g_last.q.val()));

        // The beat: header lanes, payload lanes before the ICRC, zeros.
        self.hm.next = 0.into();
        self.em.next = 0.into();
        self.dm.next = 0.into();
        self.km.next = 0.into();
        self.pay.next = 0.into();
        self.beat.next = 0.into();
        self.lane.next = 0.into();
        if self.go.val() {
            for i in 0..B {
                self.hm.next = self
                    .hm
                    .val()
                    .replace_bit(i, self.g_hrem.q.val() > i.to_bits::<8>());
                self.em.next = self
                    .em
                    .val()
                    .replace_bit(i, self.g_erem.q.val() > i.to_bits::<16>());
                self.dm.next = self
                    .dm
                    .val()
                    .replace_bit(i, self.g_drem.q.val() > i.to_bits::<8>());
                self.km.next = self
                    .km
                    .val()
                    .replace_bit(i, self.g_trem.q.val() > i.to_bits::<16>());
            }
            // Payload byte j sits at frame offset hlen + j: the previous
            // payload beat's top lanes, then this one's bottom lanes.
            for j in 0..4 {
                if self.g_kind.q.val() == j.to_bits::<2>() {
                    self.pay.next = (self.g_prev.q.val() >> self.c_psr[j].val())
                        | (self.s_pay.tdata.val() << self.c_psl[j].val());
                }
            }
            for i in 0..B {
                self.lane.next = self.c_ff.val() << (8 * i).to_bits::<16>();
                if self.hm.val().get_bit(i) {
                    self.beat.next =
                        self.beat.val() | (self.g_hdr.q.val().get_bits::<W>(0) & self.lane.val());
                } else if self.em.val().get_bit(i) {
                    self.beat.next = self.beat.val() | (self.pay.val() & self.lane.val());
                }
            }
        }
        if self.adv.val() {
            self.a_v.d.next = self.go.val();
        }
        if self.go.val() {
            self.a_data.d.next = self.beat.val();
            self.a_keep.d.next = self.km.val();
            self.a_cov.d.next = self.em.val() & !self.dm.val();
            self.a_first.d.next = self.g_first.q.val();
            self.a_last.d.next = self.g_last.q.val();
            self.a_hold.d.next = !self.g_erem.q.val().any();
            self.a_t.d.next = 0.into();
            if self.g_trem.q.val() < self.c_bt.val() {
                self.a_t.d.next = self.g_trem.q.val().get_bits::<8>(0);
            }
            self.a_s1.d.next = self.g_s1.q.val();
            self.a_m.d.next = self.g_m.q.val();
            // The counters move one beat on (saturating at 0); the flags
            // are those of the next beat.
            self.g_first.d.next = false;
            self.g_pay.d.next = self.g_hrem.q.val() < self.c_b2_8.val();
            self.g_last.d.next = self.g_trem.q.val() <= self.c_b2.val();
            self.g_hdr.d.next = self.g_hdr.q.val() >> self.c_w.val();
            self.g_hrem.d.next = 0.into();
            if self.g_hrem.q.val() > self.c_b8.val() {
                self.g_hrem.d.next = self.g_hrem.q.val() - self.c_b8.val();
            }
            self.g_drem.d.next = 0.into();
            if self.g_drem.q.val() > self.c_b8.val() {
                self.g_drem.d.next = self.g_drem.q.val() - self.c_b8.val();
            }
            self.g_erem.d.next = 0.into();
            if self.g_erem.q.val() > self.c_b.val() {
                self.g_erem.d.next = self.g_erem.q.val() - self.c_b.val();
            }
            self.g_trem.d.next = 0.into();
            if self.g_trem.q.val() > self.c_b.val() {
                self.g_trem.d.next = self.g_trem.q.val() - self.c_b.val();
            }
            if self.need.val() {
                self.g_prev.d.next = self.s_pay.tdata.val();
                self.g_pnz.d.next = self.g_prem.q.val() > self.c_b.val();
                self.g_prem.d.next = 0.into();
                if self.g_prem.q.val() > self.c_b.val() {
                    self.g_prem.d.next = self.g_prem.q.val() - self.c_b.val();
                }
            }
            if self.g_last.q.val() {
                self.g_active.d.next = false;
            }
        }
        // The payload beat taken is checked against the request a cycle
        // later: `tkeep` packed to the bytes left, `tlast` on the last.
        self.e_v.d.next = self.go.val() & self.need.val();
        self.e_keep.d.next = self.s_pay.tkeep.val();
        self.e_last.d.next = self.s_pay.tlast.val();
        self.e_prem.d.next = self.g_prem.q.val();
        self.wk.next = 0.into();
        for i in 0..B {
            self.wk.next = self
                .wk
                .val()
                .replace_bit(i, self.e_prem.q.val() > i.to_bits::<16>());
        }
        if self.e_v.q.val()
            & ((self.e_keep.q.val() != self.wk.val())
                | (self.e_last.q.val() != (self.e_prem.q.val() <= self.c_b.val())))
        {
            self.err.d.next = true;
        }
        self.m_err.next = self.err.q.val();

        // The next frame: its header in lane order, its counters.
        self.tos.next = 0.into();
        self.h4.next = 0.into();
        self.h6.next = 0.into();
        self.hl.next = 0.into();
        self.octet.next = 0.into();
        if self.take.val() {
            self.f_rd.d.next = self.f_rd.q.val() + 1;
            self.g_active.d.next = true;
            self.g_first.d.next = true;
            self.tos.next = bit_cast::<8, 6>(self.dscp.q.val()) << 2;
            if self.head.val().get_bit(152) {
                self.tos.next = self.tos.val() | 2;
            }
            if self.ipv6.q.val() {
                // Ethernet, IPv6 (version 6, traffic class, flow label 0,
                // payload length, next header 17, hop limit), UDP:
                // network order, first byte in the top bits.
                self.h6.next = (bit_cast::<496, 48>(self.peer_mac.q.val()) << 448)
                    | (bit_cast::<496, 48>(self.local_mac.q.val()) << 400)
                    | self.c_fix6.val()
                    | (bit_cast::<496, 8>(self.tos.val()) << 372)
                    | (bit_cast::<496, 16>(self.head.val().get_bits::<16>(48)) << 336)
                    | (bit_cast::<496, 8>(self.ttl.q.val()) << 320)
                    | (bit_cast::<496, 128>(self.local_ip6.q.val()) << 192)
                    | (bit_cast::<496, 128>(self.peer_ip6.q.val()) << 64)
                    | (bit_cast::<496, 16>(self.head.val().get_bits::<16>(16)) << 48)
                    | (bit_cast::<496, 16>(self.dport.q.val()) << 32)
                    | (bit_cast::<496, 16>(self.head.val().get_bits::<16>(32)) << 16);
                for j in 0..62 {
                    self.octet.next = self.h6.val().get_bits::<8>(488 - 8 * j);
                    self.hl.next = self.hl.val()
                        | (bit_cast::<HDR_BITS, 8>(self.octet.val()) << (8 * j).to_bits::<16>());
                }
                // The version byte, then the headers from the FIFO.
                self.hl.next = self.hl.val()
                    | self.c_ver6.val()
                    | (bit_cast::<HDR_BITS, MR_BITS>(self.f_mr.read_data.val()) << 504);
                self.g_drem.d.next = self.c_dstart[1].val();
            } else {
                // Ethernet, IPv4 (0x45, TOS, total length, ID 0, DF,
                // TTL, protocol 17, checksum, addresses), UDP.
                self.h4.next = (bit_cast::<336, 48>(self.peer_mac.q.val()) << 288)
                    | (bit_cast::<336, 48>(self.local_mac.q.val()) << 240)
                    | self.c_fix4.val()
                    | (bit_cast::<336, 8>(self.tos.val()) << 208)
                    | (bit_cast::<336, 16>(self.head.val().get_bits::<16>(48)) << 192)
                    | (bit_cast::<336, 8>(self.ttl.q.val()) << 152)
                    | (bit_cast::<336, 16>(self.head.val().get_bits::<16>(64)) << 128)
                    | (bit_cast::<336, 32>(self.local_ip.q.val()) << 96)
                    | (bit_cast::<336, 32>(self.peer_ip.q.val()) << 64)
                    | (bit_cast::<336, 16>(self.head.val().get_bits::<16>(16)) << 48)
                    | (bit_cast::<336, 16>(self.dport.q.val()) << 32)
                    | (bit_cast::<336, 16>(self.head.val().get_bits::<16>(32)) << 16);
                for j in 0..42 {
                    self.octet.next = self.h4.val().get_bits::<8>(328 - 8 * j);
                    self.hl.next = self.hl.val()
                        | (bit_cast::<HDR_BITS, 8>(self.octet.val()) << (8 * j).to_bits::<16>());
                }
                self.hl.next = self.hl.val()
                    | self.c_ver4.val()
                    | (bit_cast::<HDR_BITS, MR_BITS>(self.f_mr.read_data.val()) << 344);
                self.g_drem.d.next = self.c_dstart[0].val();
            }
            self.g_hdr.d.next = self.hl.val();
            self.g_kind.d.next = bit_cast::<2, 1>(self.head.val().get_bit(153).into());
            if self.ipv6.q.val() {
                self.g_kind.d.next = bit_cast::<2, 1>(self.head.val().get_bit(153).into()) | 2;
            }
            if self.head.val().get_bit(153) {
                if self.ipv6.q.val() {
                    self.g_hrem.d.next = self.c_hlen[3].val();
                } else {
                    self.g_hrem.d.next = self.c_hlen[1].val();
                }
            } else if self.ipv6.q.val() {
                self.g_hrem.d.next = self.c_hlen[2].val();
            } else {
                self.g_hrem.d.next = self.c_hlen[0].val();
            }
            self.g_prem.d.next = self.head.val().get_bits::<16>(0);
            self.g_pnz.d.next = self.head.val().get_bits::<16>(0).any();
            // A header is longer than a beat (B <= 64 lanes): the first
            // beat holds no payload and is not the last.
            self.g_pay.d.next = false;
            self.g_last.d.next = false;
            self.g_erem.d.next = self.head.val().get_bits::<16>(80);
            self.g_trem.d.next = self.head.val().get_bits::<16>(96);
            self.g_m.d.next = self.head.val().get_bits::<8>(112);
            self.g_s1.d.next = self.head.val().get_bits::<32>(120);
        }

        // ---- P: the beat's share of the CRC over its covered lanes. ----
        self.cd.next = 0.into();
        self.acc.next = 0.into();
        if self.adv.val() {
            self.p_v.d.next = self.a_v.q.val();
            self.p_first.d.next = self.a_first.q.val();
            self.p_last.d.next = self.a_last.q.val();
            self.p_hold.d.next = self.a_hold.q.val();
            self.p_data.d.next = self.a_data.q.val();
            self.p_keep.d.next = self.a_keep.q.val();
            self.p_t.d.next = self.a_t.q.val();
            self.p_s1.d.next = self.a_s1.q.val();
            self.p_m.d.next = self.a_m.q.val();
            if self.a_v.q.val() {
                for i in 0..B {
                    if self.a_cov.q.val().get_bit(i) {
                        self.cd.next = self.cd.val()
                            | (self.a_data.q.val() & (self.c_ff.val() << (8 * i).to_bits::<16>()));
                    }
                }
                for o in 0..32 {
                    self.acc.next = self
                        .acc
                        .val()
                        .replace_bit(o, (self.cd.val() & self.c_beat_d[o].val()).xor());
                }
                self.p_x.d.next = self.acc.val();
            }
        }

        // ---- R: the CRC register. ----
        if self.adv.val() {
            self.r_v.d.next = self.p_v.q.val();
            self.r_last.d.next = self.p_last.q.val();
            self.r_data.d.next = self.p_data.q.val();
            self.r_keep.d.next = self.p_keep.q.val();
            self.r_t.d.next = self.p_t.q.val();
            self.r_m.d.next = self.p_m.q.val();
            if self.p_v.q.val() {
                if self.p_first.q.val() {
                    self.crc.d.next = self.p_s1.q.val() ^ self.p_x.q.val();
                } else if !self.p_hold.q.val() {
                    self.acc.next = 0.into();
                    for o in 0..32 {
                        self.acc.next = self
                            .acc
                            .val()
                            .replace_bit(o, (self.crc.q.val() & self.c_beat_z[o].val()).xor());
                    }
                    self.crc.d.next = self.acc.val() ^ self.p_x.q.val();
                }
            }
        }

        // ---- U: trailing zero lanes out, the ICRC and its lanes. ----
        self.unz.next = bit_cast::<11, 8>(self.r_m.q.val()) << 5;
        if self.adv.val() {
            self.u_v.d.next = self.r_v.q.val();
            self.u_last.d.next = self.r_last.q.val();
            self.u_data.d.next = self.r_data.q.val();
            self.u_keep.d.next = self.r_keep.q.val();
            if self.r_v.q.val() {
                self.acc.next = 0.into();
                for o in 0..32 {
                    self.acc.next = self.acc.val().replace_bit(
                        o,
                        (self.crc.q.val()
                            & self.c_unz[o].val().get_bits::<32>(self.unz.val().index()))
                        .xor(),
                    );
                }
                self.u_ic.d.next = !self.acc.val();
                // ICRC byte q sits at lane t - 4 + q (t = bytes to the
                // frame's end from this beat, when below B + 4).
                for q in 0..4 {
                    self.wk.next = 0.into();
                    for n in 0..B {
                        self.wk.next = self
                            .wk
                            .val()
                            .replace_bit(n, self.r_t.q.val() == (n + 4 - q).to_bits::<8>());
                    }
                    self.u_sel[q].d.next = self.wk.val();
                }
            }
        }

        // ---- O: the ICRC into its lanes; the output register. ----
        self.icw.next = 0.into();
        if self.adv.val() {
            self.o_v.d.next = self.u_v.q.val();
            if self.u_v.q.val() {
                for q in 0..4 {
                    self.octet.next = self.u_ic.q.val().get_bits::<8>(24 - 8 * q);
                    for n in 0..B {
                        if self.u_sel[q].q.val().get_bit(n) {
                            self.icw.next = self.icw.val()
                                | (bit_cast::<W, 8>(self.octet.val()) << (8 * n).to_bits::<16>());
                        }
                    }
                }
                self.o_data.d.next = self.u_data.q.val() | self.icw.val();
                self.o_keep.d.next = self.u_keep.q.val();
                self.o_last.d.next = self.u_last.q.val();
            }
        }
        self.m_axis.tvalid.next = self.o_v.q.val();
        self.m_axis.tdata.next = self.o_data.q.val();
        self.m_axis.tkeep.next = self.o_keep.q.val();
        self.m_axis.tlast.next = self.o_last.q.val();

        // Room for a descriptor next cycle: the FIFO's fill after this
        // cycle's accept and take, and no register write in this cycle or
        // settling after it.
        self.wr_n.next = self.f_wr.q.val();
        if self.accept.val() {
            self.wr_n.next = self.f_wr.q.val() + 1;
        }
        self.rd_n.next = self.f_rd.q.val();
        if self.take.val() {
            self.rd_n.next = self.f_rd.q.val() + 1;
        }
        self.fill.next = self.wr_n.val() - self.rd_n.val();
        self.rdy.d.next = (self.fill.val() != 4) & !self.regw.val() & (self.upd.q.val() <= 1);

        if self.rst.val() {
            self.rdy.d.next = !self.regw.val() & (self.upd.q.val() <= 1);
            self.f_wr.d.next = 0.into();
            self.f_fe.d.next = 0.into();
            self.f_rd.d.next = 0.into();
            self.f_ok.d.next = 0.into();
            self.d1_v.d.next = false;
            self.d2_v.d.next = false;
            self.g_active.d.next = false;
            self.e_v.d.next = false;
            self.err.d.next = false;
            self.a_v.d.next = false;
            self.p_v.d.next = false;
            self.r_v.d.next = false;
            self.u_v.d.next = false;
            self.o_v.d.next = false;
        }
    }
}
