//! The ACK generator's datagram register and its ICRC: in the cycle `load`
//! is high it takes one pending-ACK entry and its QP's fields laid out as
//! the ACK datagram (base header and ACK extension) in lane order (datagram
//! byte `i` in lane `i`), and the pseudo-header; it shows the beat
//! [`super::AckGen`] sends (a register: beat 0 after the load, the next
//! beat after each take) and computes the ICRC a beat at a time from the
//! beats taken, ready for the last beat (lanes 96..99, big-endian).
//!
//! The ICRC as the beats leave (the scheme of [`crate::icrc`]'s receive
//! check): the CRC register starts at the initial value advanced over the
//! 40 pseudo-header bytes; each datagram beat taken goes through the beat
//! matrix, and beat `k` also adds pseudo-header chunk `k` (of
//! `chunks(B)`, zero bytes ahead of the first), advanced to the end of
//! that beat by the chunk matrix, the same for every `k`. The last beat's
//! ICRC is the register fed the datagram bytes before it in that beat
//! (none at 64 bits, 32 at 512), complemented and read big-endian. So the
//! datagram needs a beat-wide matrix instead of one over all its bytes and
//! the pseudo-header: every datagram has at least as many beats before its
//! last as the pseudo-header has chunks (12 and 5 at 64 bits, 1 and 1 at
//! 512).
//!
//! The two matrices read registers only: the beat shown, its chunk (a
//! register loaded with the next beat's chunk at each take) and the CRC
//! register, so the multiplexers that pick the next beat and chunk feed
//! those registers and not every XOR tree. The last beat's datagram bytes'
//! share of the ICRC is computed at the load into a register.
//!
//! Built for Verilator: the layout and the last beat's share of the ICRC
//! are computed only inside the branch that loads the register, the step
//! only inside the branch of a take (a simulator skips them in the other
//! cycles); the layout has the fields placed as big-endian 64-bit words
//! and each word byte-reversed by three swap steps over the whole vector,
//! the SACK (in lane order already) placed as it is.

use rust_hdl::prelude::*;

use super::{ACK_LEN, FRAME_BITS};
use crate::helpers::{konst, low_halves, native_block};
use crate::icrc::{Affine, advance, beat_map, chunk_map, chunk_offsets, chunks, feed, le32, rows};

/// Wire version the ACKs carry (`metaroce_proto::VERSION`).
const ACK_VERSION: usize = 1;
/// Opcode of an ACK (`metaroce_proto::Opcode::Ack`).
const ACK_OPCODE: usize = 0x10;
/// Bytes of the datagram before its ICRC.
const DG_BYTES: usize = ACK_LEN - 4;
/// Bits of the datagram before its ICRC.
const DG_BITS: usize = 8 * DG_BYTES;
/// Bytes of the pseudo-header.
const PH_BYTES: usize = 40;
/// Bits of the pseudo-header register: its 40 bytes (byte 0 at bits
/// 319..312) and zeros above, the padded chunks from the top at any width.
const PH_BITS: usize = 512;

/// The last beat's ICRC in lane order as a map of the CRC register (inputs
/// 0..32) and of that beat's lanes (inputs from 32): the register fed the
/// `tail` datagram bytes at the start of the beat, complemented, read
/// big-endian.
fn tail_map(b: usize, tail: usize) -> Affine {
    Affine::of(32 + 8 * b, |x| {
        (!feed(le32(x), &x[4..4 + tail])).swap_bytes()
    })
}

native_block! {
    /// The ACK datagram, registered, and its ICRC computed from the beats
    /// sent (`W`-bit beats, `B = W / 8` lanes): one beat matrix and one
    /// pseudo-header chunk matrix, constant rows, a reduction XOR per
    /// output bit, both reading registers (the beat shown and its chunk).
    AckDgram[W, B]
    let step = beat_map(B);
    let pend = chunk_map(B);
    let tail = tail_map(B, DG_BYTES % B);
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Take the datagram of the inputs this cycle."]
        load: Signal<In, Bit>,
        #[doc = "The beat shown, before the last, is taken this cycle."]
        take: Signal<In, Bit>,
        #[doc = "The index of the beat shown."]
        beat: Signal<In, Bits<8>>,
        #[doc = "The path."]
        path: Signal<In, Bits<6>>,
        #[doc = "Cumulative path PSN."]
        cum: Signal<In, Bits<32>>,
        #[doc = "SACK bitmap."]
        sack: Signal<In, Bits<256>>,
        #[doc = "Packets received on the path."]
        rx: Signal<In, Bits<32>>,
        #[doc = "CE-marked packets received on the path."]
        ce: Signal<In, Bits<32>>,
        #[doc = "Echo timestamp."]
        ts: Signal<In, Bits<64>>,
        #[doc = "Reply port (the ACK's UDP source port)."]
        port: Signal<In, Bits<16>>,
        #[doc = "ECE flag."]
        ece: Signal<In, Bit>,
        #[doc = "Connection cumulative PSN."]
        conn_cum: Signal<In, Bits<32>>,
        #[doc = "The ACK's timestamp (`now` when it was taken)."]
        now: Signal<In, Bits<64>>,
        #[doc = "The QP's QPN."]
        qpn: Signal<In, Bits<32>>,
        #[doc = "The peer's QPN."]
        peer_qpn: Signal<In, Bits<32>>,
        #[doc = "The peer's IP (IPv4 mapped into IPv6)."]
        peer_ip: Signal<In, Bits<128>>,
        #[doc = "The peer's UDP port."]
        peer_port: Signal<In, Bits<16>>,
        #[doc = "Rate hint (Mbit/s)."]
        rate: Signal<In, Bits<32>>,
        #[doc = "Credit (packets)."]
        credit: Signal<In, Bits<32>>,
        #[doc = "The local IP."]
        local_ip: Signal<In, Bits<128>>,
        #[doc = "The lanes of the beat shown (beat 0 after a load, the next after each take; zero from lane 96)."]
        shown: Signal<Out, Bits<W>>,
        #[doc = "The ICRC in lane order, once every beat before the last is taken; 0 while `beat` is not the last (a simulator evaluates its matrix for the last beat only)."]
        icrc: Signal<Out, Bits<32>>,
    }
    state {
        // The datagram (big-endian words, then lanes; then frame-wide) and
        // the pseudo-header as loaded, the last beat's lanes as loaded, the
        // matrix results; the registers: datagram, pseudo-header, the beat
        // shown and its pseudo-header chunk (zero from chunk `chunks(B)`),
        // the last beat's lanes' share of the ICRC, CRC.
        dg: Signal<Local, Bits<DG_BITS>>,
        wide: Signal<Local, Bits<FRAME_BITS>>,
        phl: Signal<Local, Bits<PH_BITS>>,
        last: Signal<Local, Bits<W>>,
        part: Signal<Local, Bits<32>>,
        acc: Signal<Local, Bits<32>>,
        fin: Signal<Local, Bits<32>>,
        at: Signal<Local, Bits<10>>,
        frame: DFF<Bits<FRAME_BITS>>,
        ph: DFF<Bits<PH_BITS>>,
        beat_q: DFF<Bits<W>>,
        chunk: DFF<Bits<W>>,
        tail_q: DFF<Bits<32>>,
        crc: DFF<Bits<32>>,
    }
    consts {
        c_step_z: [Constant<Bits<32>>; 32] = rows(&step, 0),
        c_step_d: [Constant<Bits<W>>; 32] = rows(&step, 32),
        c_pend: [Constant<Bits<W>>; 32] = rows(&pend, 0),
        c_tail_z: [Constant<Bits<32>>; 32] = rows(&tail, 0),
        c_tail_d: [Constant<Bits<W>>; 32] = rows(&tail, 32),
        c_tail0: Constant<Bits<32>> = konst(tail.k as usize),
        c_wshift: Constant<Bits<4>> = konst(B.trailing_zeros() as usize + 3),
        c_last_at: Constant<Bits<16>> = konst(W * (DG_BYTES / B)),
        // The last beat's index.
        c_last_beat: Constant<Bits<8>> = konst(DG_BYTES / B),
        c_chunk_at: [Constant<Bits<16>>; 8] = chunk_offsets(W),
        c_crc0: Constant<Bits<32>> = konst(advance(u32::MAX, PH_BYTES as isize) as usize),
        c_head: Constant<Bits<DG_BITS>> = konst((ACK_VERSION << 56) | (ACK_OPCODE << 48)),
        c_ece: Constant<Bits<DG_BITS>> = konst(1 << 37),
        c_udp_len: Constant<Bits<PH_BITS>> = konst((8 + ACK_LEN) << 16),
        c_lo32: Constant<Bits<DG_BITS>> = low_halves(32),
        c_lo16: Constant<Bits<DG_BITS>> = low_halves(16),
        c_lo8: Constant<Bits<DG_BITS>> = low_halves(8),
    }
}

impl<const W: usize, const B: usize> Logic for AckDgram<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, frame, ph, beat_q, chunk, tail_q, crc);
        self.shown.next = self.beat_q.q.val();
        // The last beat's ICRC: the register and the share of that beat's
        // datagram lanes, taken at the load (zero where the datagram ends
        // on a beat boundary).
        self.fin.next = 0.into();
        self.icrc.next = 0.into();
        if self.beat.val() == self.c_last_beat.val() {
            for o in 0..32 {
                self.fin.next = self
                    .fin
                    .val()
                    .replace_bit(o, (self.crc.q.val() & self.c_tail_z[o].val()).xor());
            }
            self.icrc.next = self.fin.val() ^ self.tail_q.q.val() ^ self.c_tail0.val();
        }
        self.dg.next = 0.into();
        self.wide.next = 0.into();
        self.phl.next = 0.into();
        self.last.next = 0.into();
        self.part.next = 0.into();
        self.acc.next = 0.into();
        self.at.next = bit_cast::<10, 8>(self.beat.val() + 1) << self.c_wshift.val();
        if self.take.val() {
            // The beat shown and its chunk into the register; the next
            // beat and its chunk (if any) shown.
            for o in 0..32 {
                self.acc.next = self.acc.val().replace_bit(
                    o,
                    (self.crc.q.val() & self.c_step_z[o].val()).xor()
                        ^ (self.beat_q.q.val() & self.c_step_d[o].val()).xor()
                        ^ (self.chunk.q.val() & self.c_pend[o].val()).xor(),
                );
            }
            self.crc.d.next = self.acc.val();
            self.beat_q.d.next = self.frame.q.val().get_bits::<W>(self.at.val().index());
            self.chunk.d.next = 0.into();
            for k in 0..(chunks(B) - 1) {
                if self.beat.val() == k.to_bits::<8>() {
                    self.chunk.d.next = self
                        .ph
                        .q
                        .val()
                        .get_bits::<W>(self.c_chunk_at[k + 1].val().index());
                }
            }
        }
        if self.load.val() {
            // The datagram as big-endian 64-bit words, word k = bytes
            // 8k..8k+7: base header (stream, connection and path PSN zero;
            // timestamp = when the ACK was taken), ACK extension without
            // the SACK (words 5..8).
            self.dg.next = self.c_head.val()
                | bit_cast::<DG_BITS, 32>(self.peer_qpn.val())
                | (bit_cast::<DG_BITS, 6>(self.path.val()) << 64)
                | (bit_cast::<DG_BITS, 32>(self.qpn.val()) << 96)
                | (bit_cast::<DG_BITS, 64>(self.now.val()) << 192)
                | (bit_cast::<DG_BITS, 32>(self.cum.val()) << 256)
                | (bit_cast::<DG_BITS, 32>(self.conn_cum.val()) << 288)
                | (bit_cast::<DG_BITS, 64>(self.ts.val()) << 576)
                | (bit_cast::<DG_BITS, 32>(self.rate.val()) << 640)
                | (bit_cast::<DG_BITS, 32>(self.ce.val()) << 672)
                | (bit_cast::<DG_BITS, 32>(self.rx.val()) << 704)
                | (bit_cast::<DG_BITS, 32>(self.credit.val()) << 736);
            if self.ece.val() {
                self.dg.next = self.dg.val() | self.c_ece.val();
            }
            // Lane order: each word byte-reversed (halves, then quarters,
            // then bytes swapped), and the SACK, byte 0 (bits 7..0) first.
            self.dg.next = ((self.dg.val() & self.c_lo32.val()) << 32)
                | ((self.dg.val() >> 32) & self.c_lo32.val());
            self.dg.next = ((self.dg.val() & self.c_lo16.val()) << 16)
                | ((self.dg.val() >> 16) & self.c_lo16.val());
            self.dg.next = ((self.dg.val() & self.c_lo8.val()) << 8)
                | ((self.dg.val() >> 8) & self.c_lo8.val());
            self.dg.next = self.dg.val() | (bit_cast::<DG_BITS, 256>(self.sack.val()) << 320);
            self.wide.next = bit_cast::<FRAME_BITS, DG_BITS>(self.dg.val());
            self.frame.d.next = self.wide.val();
            self.beat_q.d.next = bit_cast::<W, DG_BITS>(self.dg.val());
            // The last beat's datagram lanes through their part of the
            // ICRC map.
            self.last.next = self.wide.val().get_bits::<W>(self.c_last_at.val().index());
            for o in 0..32 {
                self.part.next = self
                    .part
                    .val()
                    .replace_bit(o, (self.last.val() & self.c_tail_d[o].val()).xor());
            }
            self.tail_q.d.next = self.part.val();
            // The pseudo-header: local IP, peer IP, reply port, peer port,
            // UDP length, 0, and its first chunk; the CRC register at its
            // end.
            self.phl.next = self.c_udp_len.val()
                | (bit_cast::<PH_BITS, 16>(self.peer_port.val()) << 32)
                | (bit_cast::<PH_BITS, 16>(self.port.val()) << 48)
                | (bit_cast::<PH_BITS, 128>(self.peer_ip.val()) << 64)
                | (bit_cast::<PH_BITS, 128>(self.local_ip.val()) << 192);
            self.ph.d.next = self.phl.val();
            self.chunk.d.next = self
                .phl
                .val()
                .get_bits::<W>(self.c_chunk_at[0].val().index());
            self.crc.d.next = self.c_crc0.val();
        }
    }
}
