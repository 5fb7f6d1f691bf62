//! The builder's configuration registers and what is derived from them
//! ([`TxRegs`]).

use rust_hdl::prelude::*;

use super::links::{AddrOut, RegsOut};
use super::matrices::PseudoRows;
use super::{CFG_SETTLE, PH_BYTES, SETTLE_BITS};
use crate::bus::CfgIn;
use crate::helpers::{SWAPS_128, konst, low_halves, native_block};

native_block! {
    /// The configuration side of [`TxBuild`](super::TxBuild) at `B`-lane
    /// beats: the registers written through `cfg` ([`super::cfg`]), the
    /// per-path entropy table (a rust-hdl `RAM`, read one cycle after
    /// `ent_addr`), and what depends on the registers alone
    /// ([`TxDerived`]), recomputed for [`CFG_SETTLE`] cycles after each
    /// register write. `busy` is high in a register write's cycle and
    /// while its results settle.
    TxRegs [B]
    check { (8..=64).contains(&B), "TxRegs<{B}>: B must be 8..=64 lanes" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Configuration write port ([`super::cfg::addr`])."]
        cfg: CfgIn<8>,
        #[doc = "The configured addressing ([`super::cfg::LOCAL`], [`super::cfg::PEER`], [`super::cfg::IPV4`], [`super::cfg::LOCAL_IPV6`], [`super::cfg::PEER_IPV6`])."]
        addr: AddrOut,
        #[doc = "The entropy table and what the descriptor side needs of the configuration."]
        side: RegsOut,
    }
    state {
        // The registers: local (`l_`) and peer (`p_`) addresses, IPv6,
        // UDP destination port, TTL / hop limit, DSCP.
        l_mac: DFF<Bits<48>>,
        p_mac: DFF<Bits<48>>,
        l_ip: DFF<Bits<32>>,
        p_ip: DFF<Bits<32>>,
        v6: DFF<Bit>,
        l_ip6: DFF<Bits<128>>,
        p_ip6: DFF<Bits<128>>,
        dst_port: DFF<Bits<16>>,
        hop: DFF<Bits<8>>,
        ds: DFF<Bits<6>>,
        ent: RAM<Bits<16>, 6>,
        // Counts down after a register write while the rest settles.
        upd: DFF<Bits<SETTLE_BITS>>,
        // What depends on the registers alone.
        derived: TxDerived<B>,
        // Combinational temporaries.
        regw: Signal<Local, Bit>,
    }
    consts {
        c_settle: Constant<Bits<SETTLE_BITS>> = konst(CFG_SETTLE),
        c_lo64: Constant<Bits<128>> = Constant::new(Bits::<128>::mask() >> 64),
        c_hi64: Constant<Bits<128>> = Constant::new(Bits::<128>::mask() << 64),
    }
}

impl<const B: usize> Logic for TxRegs<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, l_mac, p_mac, l_ip, p_ip, v6, l_ip6, p_ip6, dst_port, hop, ds, upd
        );
        self.derived.clock.next = self.clock.val();
        self.ent.read_clock.next = self.clock.val();
        self.ent.write_clock.next = self.clock.val();

        // ---- Writes. ----
        if self.upd.q.val() != 0 {
            self.upd.d.next = self.upd.q.val() - 1;
        }
        self.regw.next = self.cfg.we.val() & (self.cfg.addr.val().get_bits::<2>(6) == 0);
        if self.regw.val() {
            self.upd.d.next = self.c_settle.val();
        }
        if self.cfg.we.val() {
            if self.cfg.addr.val() == 0 {
                self.l_mac.d.next = self.cfg.data.val().get_bits::<48>(0);
                self.dst_port.d.next = self.cfg.data.val().get_bits::<16>(48);
            }
            if self.cfg.addr.val() == 1 {
                self.p_mac.d.next = self.cfg.data.val().get_bits::<48>(0);
                self.hop.d.next = self.cfg.data.val().get_bits::<8>(48);
                self.ds.d.next = self.cfg.data.val().get_bits::<6>(56);
                self.v6.d.next = self.cfg.data.val().get_bit(62);
            }
            if self.cfg.addr.val() == 2 {
                self.l_ip.d.next = self.cfg.data.val().get_bits::<32>(0);
                self.p_ip.d.next = self.cfg.data.val().get_bits::<32>(32);
            }
            if self.cfg.addr.val() == 3 {
                self.l_ip6.d.next = (self.l_ip6.q.val() & self.c_lo64.val())
                    | (bit_cast::<128, 64>(self.cfg.data.val()) << 64);
            }
            if self.cfg.addr.val() == 4 {
                self.l_ip6.d.next = (self.l_ip6.q.val() & self.c_hi64.val())
                    | bit_cast::<128, 64>(self.cfg.data.val());
            }
            if self.cfg.addr.val() == 5 {
                self.p_ip6.d.next = (self.p_ip6.q.val() & self.c_lo64.val())
                    | (bit_cast::<128, 64>(self.cfg.data.val()) << 64);
            }
            if self.cfg.addr.val() == 6 {
                self.p_ip6.d.next = (self.p_ip6.q.val() & self.c_hi64.val())
                    | bit_cast::<128, 64>(self.cfg.data.val());
            }
        }
        self.ent.write_enable.next =
            self.cfg.we.val() & (self.cfg.addr.val().get_bits::<2>(6) == 1);
        self.ent.write_address.next = self.cfg.addr.val().get_bits::<6>(0);
        self.ent.write_data.next = self.cfg.data.val().get_bits::<16>(0);
        self.ent.read_address.next = self.side.ent_addr.val();
        self.side.ent_data.next = self.ent.read_data.val();
        self.addr.local_mac.next = self.l_mac.q.val();
        self.addr.dport.next = self.dst_port.q.val();
        self.addr.peer_mac.next = self.p_mac.q.val();
        self.addr.ttl.next = self.hop.q.val();
        self.addr.dscp.next = self.ds.q.val();
        self.addr.ipv6.next = self.v6.q.val();
        self.side.ipv6.next = self.v6.q.val();
        self.addr.local_ip.next = self.l_ip.q.val();
        self.addr.peer_ip.next = self.p_ip.q.val();
        self.addr.local_ip6.next = self.l_ip6.q.val();
        self.addr.peer_ip6.next = self.p_ip6.q.val();
        self.side.busy.next = self.regw.val() | (self.upd.q.val() > 1);

        // ---- Derived (while `upd` counts). ----
        self.derived.left.next = self.upd.q.val();
        self.derived.ipv6.next = self.v6.q.val();
        self.derived.local_ip.next = self.l_ip.q.val();
        self.derived.peer_ip.next = self.p_ip.q.val();
        self.derived.local_ip6.next = self.l_ip6.q.val();
        self.derived.peer_ip6.next = self.p_ip6.q.val();
        self.derived.dport.next = self.dst_port.q.val();
        self.derived.ttl.next = self.hop.q.val();
        self.derived.dscp.next = self.ds.q.val();
        self.side.cks.next = self.derived.cks.val();
        self.side.cr_first.next = self.derived.cr_first.val();
    }
}

native_block! {
    /// What [`TxRegs`] derives from the configuration registers alone, for
    /// `B`-lane beats, recomputed in registers while `left` counts down
    /// after a register write: the IPv4 header checksum of the configured
    /// words (an adder tree, then folded), one per ECN and header-size
    /// choice, and the pseudo-header CRC of the addresses and the
    /// destination port, fed a byte a cycle (40 cycles: the configuration
    /// changes rarely, and one byte step is a small fraction of the matrices
    /// that took all 320 bits at once), then moved to the end of a frame's
    /// first beat.
    TxDerived [B]
    check { (8..=64).contains(&B), "TxDerived<{B}>: B must be 8..=64 lanes" }
    let rows = PseudoRows::new(B);
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Cycles of the recomputation left after a register write ([`CFG_SETTLE`] down to 1; 0: settled)."]
        left: Signal<In, Bits<SETTLE_BITS>>,
        #[doc = "IPv6, else IPv4."]
        ipv6: Signal<In, Bit>,
        #[doc = "Local IPv4 address."]
        local_ip: Signal<In, Bits<32>>,
        #[doc = "Peer IPv4 address."]
        peer_ip: Signal<In, Bits<32>>,
        #[doc = "Local IPv6 address."]
        local_ip6: Signal<In, Bits<128>>,
        #[doc = "Peer IPv6 address."]
        peer_ip6: Signal<In, Bits<128>>,
        #[doc = "UDP destination port."]
        dport: Signal<In, Bits<16>>,
        #[doc = "TTL / hop limit."]
        ttl: Signal<In, Bits<8>>,
        #[doc = "DSCP."]
        dscp: Signal<In, Bits<6>>,
        #[doc = "IPv4 header sums of everything but the payload length, ones' complement, one per `ecn << 1 | msg` at bits `16·j..`."]
        cks: Signal<Out, Bits<64>>,
        #[doc = "Pseudo-header CRC of the addresses and the destination port, moved to the end of a frame's first beat."]
        cr_first: Signal<Out, Bits<32>>,
    }
    state {
        // IPv4 checksum: word pairs, their sum, the folded sum, one per
        // (ECN, MSG) choice.
        ck_s1: DFF<Bits<17>>,
        ck_s2: DFF<Bits<17>>,
        ck_s3: DFF<Bits<17>>,
        ck_x: DFF<Bits<18>>,
        ck_y: DFF<Bits<17>>,
        ck_sum: DFF<Bits<19>>,
        ck_f: DFF<Bits<16>>,
        ck_v: [DFF<Bits<16>>; 4],
        // Pseudo-header CRC: the register fed the bytes so far, the seed
        // moved to the end of the first beat.
        crc: DFF<Bits<32>>,
        crc_first: DFF<Bits<32>>,
        // Combinational temporaries: the recomputation's cycle, the
        // pseudo-header's bytes (byte k at bits 8k) and this cycle's.
        en: Signal<Local, Bit>,
        k: Signal<Local, Bits<SETTLE_BITS>>,
        at: Signal<Local, Bits<9>>,
        src: Signal<Local, Bits<128>>,
        dst: Signal<Local, Bits<128>>,
        phb: Signal<Local, Bits<320>>,
        ph_byte: Signal<Local, Bits<8>>,
        cin: Signal<Local, Bits<32>>,
        m32: Signal<Local, Bits<32>>,
        acc: Signal<Local, Bits<32>>,
        s17: Signal<Local, Bits<17>>,
        inc: Signal<Local, Bits<16>>,
        w16: Signal<Local, Bits<16>>,
    }
    consts {
        c_mapped: Constant<Bits<128>> = Constant::new(Bits::<128>::from(0xFFFFu64) << 32),
        c_cka: [Constant<Bits<16>>; 4] = [64, 96, 66, 98].map(konst),
        c_settle: Constant<Bits<SETTLE_BITS>> = konst(CFG_SETTLE),
        c_bytes: Constant<Bits<SETTLE_BITS>> = konst(PH_BYTES),
        // The swap steps that reverse the bytes of 128 bits: halves they
        // move, by how much.
        c_lo: [Constant<Bits<128>>; 4] = SWAPS_128.map(low_halves),
        c_sh: [Constant<Bits<8>>; 4] = SWAPS_128.map(konst),
        c_ones: Constant<Bits<32>> = konst(u32::MAX as usize),
        c_byte_z: [Constant<Bits<32>>; 32] = rows.byte_z,
        c_byte_d: [Constant<Bits<8>>; 32] = rows.byte_d,
        c_first4: [Constant<Bits<32>>; 32] = rows.first4,
        c_first6: [Constant<Bits<32>>; 32] = rows.first6,
    }
}

impl<const B: usize> Logic for TxDerived<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ck_s1, ck_s2, ck_s3, ck_x, ck_y, ck_sum, ck_f, crc, crc_first
        );
        for j in 0..4 {
            self.ck_v[j].clock.next = self.clock.val();
            self.ck_v[j].d.next = self.ck_v[j].q.val();
        }
        self.cks.next = bit_cast::<64, 16>(self.ck_v[0].q.val())
            | (bit_cast::<64, 16>(self.ck_v[1].q.val()) << 16)
            | (bit_cast::<64, 16>(self.ck_v[2].q.val()) << 32)
            | (bit_cast::<64, 16>(self.ck_v[3].q.val()) << 48);
        self.cr_first.next = self.crc_first.q.val();

        self.en.next = self.left.val().any();
        self.k.next = self.c_settle.val() - self.left.val();
        self.at.next = bit_cast::<9, SETTLE_BITS>(self.k.val()) << 3;
        self.src.next = 0.into();
        self.dst.next = 0.into();
        self.phb.next = 0.into();
        self.ph_byte.next = 0.into();
        self.cin.next = 0.into();
        self.m32.next = 0.into();
        self.acc.next = 0.into();
        self.s17.next = 0.into();
        self.inc.next = 0.into();
        self.w16.next = 0.into();
        if self.en.val() {
            // IPv4 header words that do not depend on the descriptor:
            // 0x4500 | DSCP << 2, 0x4000 (DF), TTL << 8 | 17, addresses.
            self.ck_s1.d.next = bit_cast::<17, 16>(self.local_ip.val().get_bits::<16>(16))
                + bit_cast::<17, 16>(self.local_ip.val().get_bits::<16>(0));
            self.ck_s2.d.next = bit_cast::<17, 16>(self.peer_ip.val().get_bits::<16>(16))
                + bit_cast::<17, 16>(self.peer_ip.val().get_bits::<16>(0));
            self.ck_s3.d.next = ((bit_cast::<17, 8>(self.ttl.val()) << 8)
                | (bit_cast::<17, 6>(self.dscp.val()) << 2))
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
            // Pseudo-header CRC: byte k into the register (from the initial
            // value at k = 0) for k < 40, then the seed moved to the end of
            // a frame's first beat.
            if self.k.val() < self.c_bytes.val() {
                // The pseudo-header's addresses (only while its bytes are
                // fed: a simulator skips the reversal in the other cycles):
                // IPv6, or IPv4 mapped into IPv6.
                if self.ipv6.val() {
                    self.src.next = self.local_ip6.val();
                    self.dst.next = self.peer_ip6.val();
                } else {
                    self.src.next = bit_cast::<128, 32>(self.local_ip.val()) | self.c_mapped.val();
                    self.dst.next = bit_cast::<128, 32>(self.peer_ip.val()) | self.c_mapped.val();
                }
                // Bytes 0..15 the source address, 16..31 the destination (both in
                // network order: byte-reversed by four swap steps), 34..35 the
                // destination port; the source port and the UDP length (32..33,
                // 36..37) are the descriptor side's.
                self.phb.next = (bit_cast::<320, 8>(self.dport.val().get_bits::<8>(8)) << 272)
                    | (bit_cast::<320, 8>(self.dport.val().get_bits::<8>(0)) << 280);
                for s in 0..4 {
                    self.src.next = ((self.src.val() & self.c_lo[s].val()) << self.c_sh[s].val())
                        | ((self.src.val() >> self.c_sh[s].val()) & self.c_lo[s].val());
                    self.dst.next = ((self.dst.val() & self.c_lo[s].val()) << self.c_sh[s].val())
                        | ((self.dst.val() >> self.c_sh[s].val()) & self.c_lo[s].val());
                }
                self.phb.next = self.phb.val()
                    | bit_cast::<320, 128>(self.src.val())
                    | (bit_cast::<320, 128>(self.dst.val()) << 128);
                self.ph_byte.next = self.phb.val().get_bits::<8>(self.at.val().index());
                self.cin.next = self.crc.q.val();
                if !self.k.val().any() {
                    self.cin.next = self.c_ones.val();
                }
                self.acc.next = 0.into();
                for o in 0..32 {
                    self.acc.next = self.acc.val().replace_bit(
                        o,
                        (self.cin.val() & self.c_byte_z[o].val()).xor()
                            ^ (self.ph_byte.val() & self.c_byte_d[o].val()).xor(),
                    );
                }
                self.crc.d.next = self.acc.val();
            } else {
                self.acc.next = 0.into();
                for o in 0..32 {
                    self.m32.next = self.c_first4[o].val();
                    if self.ipv6.val() {
                        self.m32.next = self.c_first6[o].val();
                    }
                    self.acc.next = self
                        .acc
                        .val()
                        .replace_bit(o, (self.crc.q.val() & self.m32.val()).xor());
                }
                self.crc_first.d.next = self.acc.val();
            }
        }
    }
}
