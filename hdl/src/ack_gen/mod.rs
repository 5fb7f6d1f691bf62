//! ACK generator: builds the ACK datagram for each entry of the path
//! tracker's pending-ACK queue ([`crate::RxPathTable`]), as the engine's
//! `Rx::poll_ack` and `Qp::poll_transmit` do, and streams it out.
//!
//! The datagram is the 32-byte base header (opcode ACK, flags `ECE` when a
//! CE mark arrived on the path since its last ACK, destination QPN = the
//! peer's, source QPN = the QP's, stream 0, the path, connection and path
//! PSN 0, timestamp = `now` when the ACK was taken from the queue), the
//! 64-byte ACK extension (`conn_cum`, `path_cum`, SACK, `echo_ts`,
//! `ce_count`, `rate_hint`, `credit`, `rx_count`) and the ICRC over the
//! pseudo-header (local IP, path's reply port, peer IP, peer UDP port, UDP
//! length) and those 96 bytes, computed with the functions of [`crate::icrc`].
//!
//! Coalescing is the engine's: a path is queued once however many packets
//! arrive before its ACK is taken, and the ACK carries its state at that
//! moment. An entry whose QP was no longer receiving at its last event
//! (`ak_live` low: a READ response failed the QP, as the engine's
//! `Qp::fail`) is dropped in cycle 1, as the engine's failed QP sends no
//! ACK. One ACK at a time: pop (cycle 0), build (cycle 1, registered),
//! then the beats from cycle 2 (13 beats at 64 bits, 2 at 512), the ICRC
//! computed from the beats before the last as they are taken; the next pop
//! is the cycle after the last beat is taken.
//!
//! **ACKs after the data.** An ACK acknowledges every packet the tracker
//! holds when the generator reads it (cycle 1: the events up to the pop
//! cycle), and its peer may complete a WRITE as soon as it arrives, so its
//! first beat waits until the DMA port has finished the writes of all those
//! packets. The block counts placed packets with a payload (`placed`, one
//! pulse per verdict event that starts a DMA write) and finished DMA writes
//! (`dma_done`, one pulse per last beat taken), both modulo 2^32; at the
//! pop it notes the placed count including that cycle's event, and shows
//! the ACK (`m_ack.tvalid`) once the finished count has reached it. The
//! placement FIFO writes in verdict order, so the wait is at most the DMA
//! of the packets ahead of it.
//!
//! Ports: `now` (64, the NIC clock in ns), the tracker's ACK port
//! (`aq_valid`, `aq_pop`, `ak_*`), the QP's table fields (`qpn`,
//! `peer_qpn`, `peer_ip`, `peer_port`, `rate`, `credit`, `local_ip`, from
//! `RxPlace`'s ACK read port, selected by `ak_qp`), and the output: an
//! AXI-Stream of the UDP payload with, held for the frame, the addressing
//! fields and ECE: the bus [`AckOut`] (`m_ack`).
//!
//! Native rust-hdl: the datagram and its ICRC are `AckDgram` (`dgram.rs`,
//! the frame register, loaded in cycle 1 and computed only then, and the
//! ICRC a beat at a time: a beat matrix and a pseudo-header chunk matrix of
//! constant rows, a reduction XOR per output bit, reading the beat shown,
//! its chunk and the CRC, all registers); this file holds the
//! queue's handshake, the wait for the data and the beats; rust-hdl's own
//! simulator runs the block (the test below, against `metaroce_proto`'s
//! parser); it is verified under Verilator inside [`crate::RxCore`].

use rust_hdl::prelude::*;

use crate::bus::AckOut;
use crate::helpers::{konst, native_block};
use dgram::AckDgram;

mod dgram;

/// Bytes of an ACK datagram: base header, ACK extension, ICRC.
pub const ACK_LEN: usize = 32 + 64 + 4;
/// Bits of the frame register: whole beats of the datagram at any width
/// (13 at 64 bits, 2 at 512: at most 1024 bits).
const FRAME_BITS: usize = 1024;

/// Beats of an ACK datagram at `b` bytes a beat.
fn beats(b: usize) -> usize {
    ACK_LEN.div_ceil(b)
}

/// A constant of `N` bits with bits `0..n` set (a packed `tkeep` of `n`
/// lanes).
fn low_bits<const N: usize>(n: usize) -> Constant<Bits<N>> {
    Constant::new((0..n).fold(Bits::default(), |m, i| m.replace_bit(i, true)))
}

native_block! {
    /// The ACK generator at `W`-bit beats (`B = W / 8` lanes, 8 to 64).
    AckGen[W, B]
    check {
        W == 8 * B && B.is_power_of_two() && (8..=64).contains(&B),
        "AckGen<{W}, {B}>: W must be 8 * B, B 8 to 64"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset."]
        rst: Signal<In, Bit>,
        #[doc = "The NIC clock (ns): the ACK's timestamp."]
        now: Signal<In, Bits<64>>,
        #[doc = "The tracker has an entry waiting."]
        aq_valid: Signal<In, Bit>,
        #[doc = "Take it."]
        aq_pop: Signal<Out, Bit>,
        #[doc = "A verdict event placed a packet with a payload this cycle (its DMA write is still to come)."]
        placed: Signal<In, Bit>,
        #[doc = "The DMA port finished a write this cycle (its last beat was taken)."]
        dma_done: Signal<In, Bit>,
        #[doc = "Its path."]
        ak_path: Signal<In, Bits<6>>,
        #[doc = "Its QP still receives: send the ACK (else drop the entry)."]
        ak_live: Signal<In, Bit>,
        #[doc = "Cumulative path PSN."]
        ak_cum: Signal<In, Bits<32>>,
        #[doc = "SACK bitmap."]
        ak_sack: Signal<In, Bits<256>>,
        #[doc = "Packets received on the path."]
        ak_rx: Signal<In, Bits<32>>,
        #[doc = "CE-marked packets received on the path."]
        ak_ce: Signal<In, Bits<32>>,
        #[doc = "Echo timestamp."]
        ak_ts: Signal<In, Bits<64>>,
        #[doc = "Reply port (the ACK's UDP source port)."]
        ak_port: Signal<In, Bits<16>>,
        #[doc = "ECE flag."]
        ak_ece: Signal<In, Bit>,
        #[doc = "Connection cumulative PSN."]
        ak_conn_cum: Signal<In, Bits<32>>,
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
        #[doc = "ACK datagrams (the peer's IP and port, the path's reply port as source)."]
        m_ack: AckOut<W, B>,
    }
    state {
        // 0 idle, 1 load (build and ICRC), 2 send.
        phase: DFF<Bits<2>>,
        // ACKs after the data: placed packets with a payload, DMA writes
        // finished, and the placed count the ACK being built covers.
        placed_cnt: DFF<Bits<32>>,
        dma_cnt: DFF<Bits<32>>,
        fence: DFF<Bits<32>>,
        placed_next: Signal<Local, Bits<32>>,
        data_in: Signal<Local, Bit>,
        now_q: DFF<Bits<64>>,
        // The beat being shown.
        beat: DFF<Bits<8>>,
        dst_ip: DFF<Bits<128>>,
        src_port: DFF<Bits<16>>,
        dst_port: DFF<Bits<16>>,
        ece: DFF<Bit>,
        // The datagram in lane order, loaded in cycle 1, the beat shown
        // and the ICRC.
        dgram: AckDgram<W, B>,
    }
    consts {
        c_half: Constant<Bits<32>> = konst(1 << 31),
        c_nbm1: Constant<Bits<8>> = konst(beats(B) - 1),
        c_last_keep: Constant<Bits<B>> = low_bits(ACK_LEN - (beats(B) - 1) * B),
        c_icrc_at: Constant<Bits<16>> = konst(8 * (ACK_LEN - 4 - (beats(B) - 1) * B)),
        c_all_keep: Constant<Bits<B>> = low_bits(B),
    }
}

impl<const W: usize, const B: usize> Logic for AckGen<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, phase, placed_cnt, dma_cnt, fence, now_q, beat, dst_ip, src_port,
            dst_port, ece
        );
        // The ACK waits until the DMA writes of the packets it covers are
        // done (counts modulo 2^32). Written out again where the beat
        // advances: a temporary shared by the two would make Verilator see
        // a loop through the consumer's `tready`.
        self.m_ack.tvalid.next = (self.phase.q.val() == 2)
            & ((self.dma_cnt.q.val() - self.fence.q.val()) < self.c_half.val());
        self.m_ack.tdata.next = self.dgram.shown.val();
        if self.beat.q.val() == self.c_nbm1.val() {
            self.m_ack.tdata.next = self.dgram.shown.val()
                | (bit_cast::<W, 32>(self.dgram.icrc.val()) << self.c_icrc_at.val());
        }
        self.m_ack.tlast.next = self.beat.q.val() == self.c_nbm1.val();
        self.m_ack.tkeep.next = self.c_all_keep.val();
        if self.beat.q.val() == self.c_nbm1.val() {
            self.m_ack.tkeep.next = self.c_last_keep.val();
        }
        self.aq_pop.next = (self.phase.q.val() == 0) & self.aq_valid.val();
        self.m_ack.dst_ip.next = self.dst_ip.q.val();
        self.m_ack.src_port.next = self.src_port.q.val();
        self.m_ack.dst_port.next = self.dst_port.q.val();
        self.m_ack.ece.next = self.ece.q.val();

        // The datagram of the entry the tracker shows, with the timestamp
        // taken with it, loaded in cycle 1 unless the entry is dropped.
        self.dgram.clock.next = self.clock.val();
        self.dgram.load.next = (self.phase.q.val() == 1) & self.ak_live.val();
        self.dgram.path.next = self.ak_path.val();
        self.dgram.cum.next = self.ak_cum.val();
        self.dgram.sack.next = self.ak_sack.val();
        self.dgram.rx.next = self.ak_rx.val();
        self.dgram.ce.next = self.ak_ce.val();
        self.dgram.ts.next = self.ak_ts.val();
        self.dgram.port.next = self.ak_port.val();
        self.dgram.ece.next = self.ak_ece.val();
        self.dgram.conn_cum.next = self.ak_conn_cum.val();
        self.dgram.now.next = self.now_q.q.val();
        self.dgram.qpn.next = self.qpn.val();
        self.dgram.peer_qpn.next = self.peer_qpn.val();
        self.dgram.peer_ip.next = self.peer_ip.val();
        self.dgram.peer_port.next = self.peer_port.val();
        self.dgram.rate.next = self.rate.val();
        self.dgram.credit.next = self.credit.val();
        self.dgram.local_ip.next = self.local_ip.val();

        self.placed_next.next = self.placed_cnt.q.val();
        if self.placed.val() {
            self.placed_next.next = self.placed_cnt.q.val() + 1;
        }
        self.placed_cnt.d.next = self.placed_next.val();
        if self.dma_done.val() {
            self.dma_cnt.d.next = self.dma_cnt.q.val() + 1;
        }
        self.data_in.next = (self.dma_cnt.q.val() - self.fence.q.val()) < self.c_half.val();
        // The beats before the last into the ICRC as they are taken.
        self.dgram.take.next = (self.phase.q.val() == 2)
            & self.m_ack.tready.val()
            & self.data_in.val()
            & (self.beat.q.val() != self.c_nbm1.val());
        self.dgram.beat.next = self.beat.q.val();
        if self.phase.q.val() == 0 {
            if self.aq_valid.val() {
                self.now_q.d.next = self.now.val();
                self.fence.d.next = self.placed_next.val();
                self.phase.d.next = 1.into();
            }
        } else if self.phase.q.val() == 1 {
            if !self.ak_live.val() {
                self.phase.d.next = 0.into();
            } else {
                self.dst_ip.d.next = self.peer_ip.val();
                self.src_port.d.next = self.ak_port.val();
                self.dst_port.d.next = self.peer_port.val();
                self.ece.d.next = self.ak_ece.val();
                self.beat.d.next = 0.into();
                self.phase.d.next = 2.into();
            }
        } else if self.m_ack.tready.val() & self.data_in.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            if self.beat.q.val() == self.c_nbm1.val() {
                self.phase.d.next = 0.into();
            }
        }
        if self.rst.val() {
            self.phase.d.next = 0.into();
            self.placed_cnt.d.next = 0.into();
            self.dma_cnt.d.next = 0.into();
            self.fence.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaroce_proto::{AckRepr, Ext, Flags, Opcode, PseudoHeader, Repr, Sack, parse_datagram};
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    use std::sync::{Arc, Mutex};

    /// One tracker entry and its QP's fields.
    #[derive(Clone)]
    struct Entry {
        path: u16,
        live: bool,
        ack: AckRepr,
        port: u16,
        ece: bool,
        qpn: u32,
        peer_qpn: u32,
        peer: Ipv4Addr,
        peer_port: u16,
    }

    const LOCAL: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const NOW: u64 = 0x1122_3344_5566;

    fn ip_bits(ip: Ipv4Addr) -> Bits<128> {
        let v6: Ipv6Addr = ip.to_ipv6_mapped();
        let v = u128::from(v6);
        bit_cast::<128, 64>((v as u64).to_bits())
            | (bit_cast::<128, 64>(((v >> 64) as u64).to_bits()) << 64)
    }

    /// What came out: each datagram's bytes, the addressing it was shown
    /// with (peer, source and destination port, ECE), and the cycle of its
    /// first beat.
    type Out = Vec<(Vec<u8>, (Bits<128>, u64, u64, bool), u64)>;

    /// Runs `entries` through rust-hdl's simulator of `AckGen<64, 8>`,
    /// one popped at a time, its fields shown until its frame is built; a
    /// packet with a payload is placed in the cycle of the first pop and
    /// its DMA write finishes at cycle `dma_at`; the consumer takes two
    /// beats of three.
    fn simulate(entries: Vec<Entry>, dma_at: u64) -> Out {
        let out = Arc::new(Mutex::new(Vec::new()));
        let result = out.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<AckGen<64, 8>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<AckGen<64, 8>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            x.now.next = NOW.to_bits();
            x.local_ip.next = ip_bits(LOCAL);
            let (mut next, mut open, mut first_at) = (0usize, Vec::new(), 0u64);
            // The entry popped last cycle, which the tracker still shows.
            let mut loading: Option<usize> = None;
            for cycle in 0..400u64 {
                let e = &entries[loading.unwrap_or(next).min(entries.len() - 1)];
                x.aq_valid.next = next < entries.len();
                x.placed.next = cycle == 0;
                x.dma_done.next = cycle == dma_at;
                x.ak_path.next = u64::from(e.path).to_bits();
                x.ak_live.next = e.live;
                x.ak_cum.next = u64::from(e.ack.path_cum).to_bits();
                let mut sack = Bits::<256>::default();
                for i in 0..256 {
                    sack = sack.replace_bit(i, e.ack.sack.get(i as u32));
                }
                x.ak_sack.next = sack;
                x.ak_rx.next = u64::from(e.ack.rx_count).to_bits();
                x.ak_ce.next = u64::from(e.ack.ce_count).to_bits();
                x.ak_ts.next = e.ack.echo_ts.to_bits();
                x.ak_port.next = u64::from(e.port).to_bits();
                x.ak_ece.next = e.ece;
                x.ak_conn_cum.next = u64::from(e.ack.conn_cum).to_bits();
                x.qpn.next = u64::from(e.qpn).to_bits();
                x.peer_qpn.next = u64::from(e.peer_qpn).to_bits();
                x.peer_ip.next = ip_bits(e.peer);
                x.peer_port.next = u64::from(e.peer_port).to_bits();
                x.rate.next = u64::from(e.ack.rate_hint).to_bits();
                x.credit.next = u64::from(e.ack.credit).to_bits();
                x.m_ack.tready.next = cycle % 3 != 2;
                x = sim.wait(1, x)?;
                // The entry goes at its pop; it is shown one cycle more,
                // while the frame is built.
                loading = None;
                if x.aq_pop.val() {
                    loading = Some(next);
                    next += 1;
                }
                if x.m_ack.tvalid.val() && x.m_ack.tready.val() {
                    if open.is_empty() {
                        first_at = cycle;
                    }
                    let n = x.m_ack.tkeep.val().to_u64().count_ones() as usize;
                    open.extend_from_slice(&x.m_ack.tdata.val().to_u64().to_le_bytes()[..n]);
                    if x.m_ack.tlast.val() {
                        let addr = (
                            x.m_ack.dst_ip.val(),
                            x.m_ack.src_port.val().to_u64(),
                            x.m_ack.dst_port.val().to_u64(),
                            x.m_ack.ece.val(),
                        );
                        out.lock()
                            .unwrap()
                            .push((std::mem::take(&mut open), addr, first_at));
                    }
                }
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            sim.done(x)
        });
        let mut uut = AckGen::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 1_000_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_builds_acks_the_parser_accepts() {
        let mut sack = Sack::default();
        for i in [0, 7, 8, 100, 255] {
            sack.set(i);
        }
        let entry = |k: u32, live: bool| Entry {
            path: 3 + k as u16,
            live,
            ack: AckRepr {
                conn_cum: 0x1000 + k,
                path_cum: 0x2000 + k,
                sack,
                echo_ts: 0xAB_CDEF_0123 + u64::from(k),
                ce_count: 5 + k,
                rate_hint: 25_000,
                credit: 64 + k,
                rx_count: 77 + k,
            },
            port: 0xC000 + k as u16,
            ece: k % 2 == 1,
            qpn: 0x11 + k,
            peer_qpn: 0x22 + k,
            peer: Ipv4Addr::new(10, 0, 0, 2 + k as u8),
            peer_port: 4791,
        };
        // The second entry's QP no longer receives: no ACK.
        let entries = vec![
            entry(0, true),
            entry(1, false),
            entry(2, true),
            entry(3, true),
        ];
        let dma_at = 30;
        let out = simulate(entries.clone(), dma_at);
        let sent: Vec<&Entry> = entries.iter().filter(|e| e.live).collect();
        assert_eq!(out.len(), sent.len());
        // The first ACK waits for the DMA write of the packet placed
        // before it.
        assert!(out[0].2 > dma_at, "first beat at {}", out[0].2);
        for ((bytes, addr, _), e) in out.iter().zip(sent) {
            assert_eq!(bytes.len(), ACK_LEN);
            let pseudo =
                PseudoHeader::new(IpAddr::V4(LOCAL), e.port, IpAddr::V4(e.peer), e.peer_port);
            let (repr, payload) = parse_datagram(bytes, &pseudo).expect("ACK parses, ICRC right");
            assert!(payload.is_empty());
            let want = Repr {
                opcode: Opcode::Ack,
                flags: if e.ece { Flags::ECE } else { Flags::empty() },
                dst_qpn: e.peer_qpn,
                src_qpn: e.qpn,
                stream: 0,
                path: e.path,
                conn_psn: 0,
                path_psn: 0,
                timestamp: NOW,
                ext: Ext::Ack(e.ack),
            };
            assert_eq!(repr, want);
            let want_addr = (
                ip_bits(e.peer),
                u64::from(e.port),
                u64::from(e.peer_port),
                e.ece,
            );
            assert_eq!(*addr, want_addr);
        }
    }
}
