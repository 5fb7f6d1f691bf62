//! The firmware transmit queue's engine: the datagrams the host queues
//! for the ACK framer's firmware port (`NicCore::s_fwtx_*`), as a native
//! rust-hdl block.
//!
//! [`FwTxQueue`] reads the queue's next entry (256-byte stride, at
//! `base + (cons mod 2^size_log2) · 256`) through the host interface's DMA
//! read arbiter in two requests: its 32-byte header (tag 2: destination
//! IP, UDP ports, length, reserved bits), then, when the header is good
//! (length 1 to [`crate::fw_rx::SLOT_BYTES`], reserved bits 0), the
//! datagram after it (tag 3). It takes the datagram whole before it hands
//! it to the framer (the completion stream never waits for the framer,
//! which may wait for the MAC, which may wait for a payload behind this
//! completion), then sends it a beat a cycle, lane 0 first, packed
//! `tkeep`. A bad header is skipped and counted. Either way the entry is
//! consumed (`adv` for a cycle, `cons` one up). The datagram is a
//! [`LutRam`] of its beats, the header four 64-bit words.
//!
//! rust-hdl's simulator runs it (the test below); under Verilator it is
//! part of [`crate::NicDevice`] (`metaroce-sim-tb`, `nic_device`).
//! `docs/hardware.md` §18 gives the entry format.

use rust_hdl::prelude::*;

use crate::bus::DatagramOut;

use crate::fw_rx::SLOT_BYTES;
use crate::helpers::{LutRam, konst, native_block};

/// Where [`FwTxQueue`] is with an entry.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum FtqState {
    /// No entry, or the queue disabled.
    Idle,
    /// The header's read waits for the arbiter.
    HeadReq,
    /// The header's completion beats.
    HeadRecv,
    /// The header is checked.
    Check,
    /// The datagram's read waits for the arbiter.
    DataReq,
    /// The datagram's completion beats.
    DataRecv,
    /// The datagram goes to the framer.
    Send,
}

/// Bits of the datagram buffer: [`SLOT_BYTES`].
const DATA_BITS: usize = 8 * SLOT_BYTES;

/// Header words (32 bytes).
const HDR_WORDS: usize = 4;

native_block! {
    /// The firmware transmit queue's engine at `W`-bit beats (`B = W / 8`
    /// lanes; 64 or 512).
    FwTxQueue[W, B]
    check {
        W == 8 * B && (W == 64 || W == 512),
        "FwTxQueue<{W}, {B}>: 64 or 512 bits, W = 8 * B"
    }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: idle, `cons` and `bad` 0."]
        rst: Signal<In, Bit>,
        #[doc = "`FTQ.CTRL`: enabled."]
        ctrl: Signal<In, Bit>,
        #[doc = "`FTQ.PROD`: the host's producer index."]
        prod: Signal<In, Bits<32>>,
        #[doc = "`FTQ.BASE_HI:BASE_LO`: the ring's base address."]
        base: Signal<In, Bits<64>>,
        #[doc = "`FTQ.SIZE_LOG2`: log2 of the ring's entries."]
        size_log2: Signal<In, Bits<5>>,
        #[doc = "A header read waits for the DMA read arbiter (tag 2)."]
        req_hdr: Signal<Out, Bit>,
        #[doc = "A datagram read waits for the DMA read arbiter (tag 3)."]
        req_data: Signal<Out, Bit>,
        #[doc = "The arbiter issues the waiting read this cycle."]
        grant: Signal<In, Bit>,
        #[doc = "The read's host address (the header's while one waits, else the datagram's)."]
        addr: Signal<Out, Bits<64>>,
        #[doc = "The read's bytes (32 for the header, else the datagram's length)."]
        len: Signal<Out, Bits<16>>,
        #[doc = "DMA read completion: data."]
        c_tdata: Signal<In, Bits<W>>,
        #[doc = "DMA read completion: beat valid."]
        c_tvalid: Signal<In, Bit>,
        #[doc = "DMA read completion: the request's last beat."]
        c_tlast: Signal<In, Bit>,
        #[doc = "DMA read completion: the request's tag."]
        c_tag: Signal<In, Bits<4>>,
        #[doc = "The datagrams, with their addressing, to the ACK framer (`NicCore::s_fwtx`)."]
        m: DatagramOut<W, B>,
        #[doc = "`FTQ.CONS`: entries consumed (free-running)."]
        cons: Signal<Out, Bits<32>>,
        #[doc = "`CNT.FTQ_BAD`: entries skipped for a bad header."]
        bad: Signal<Out, Bits<32>>,
        #[doc = "An entry is consumed this cycle (the TX vector's count)."]
        adv: Signal<Out, Bit>,
    }
    state {
        seq: FtqSeq,
        hdr: [DFF<Bits<64>>; HDR_WORDS],
        data: LutRam<W, 5> = LutRam::with_words(DATA_BITS / W),
        // Temporaries: the entry's length, its header is bad, the bytes
        // left from the beat being sent, the ring's index mask, the
        // entry's address, a header or datagram beat comes.
        hdr_beat: Signal<Local, Bit>,
        data_beat: Signal<Local, Bit>,
        flen: Signal<Local, Bits<16>>,
        ebad: Signal<Local, Bit>,
        rem: Signal<Local, Bits<16>>,
        mask: Signal<Local, Bits<32>>,
        eaddr: Signal<Local, Bits<64>>,
    }
    consts {
        // Header word j comes in beat k_hbeat[j], at bit k_hlane[j].
        k_hbeat: [Constant<Bits<5>>; HDR_WORDS] =
            std::array::from_fn(|j| konst(j / (W / 64))),
        k_hlane: [Constant<Bits<16>>; HDR_WORDS] =
            std::array::from_fn(|j| konst(64 * (j % (W / 64)))),
        k_slot: Constant<Bits<16>> = konst(SLOT_BYTES),
        k_b: Constant<Bits<16>> = konst(B),
        k_b_shift: Constant<Bits<16>> = konst(B.trailing_zeros() as usize),
        k_one: Constant<Bits<32>> = konst(1),
        k_hdr_bytes: Constant<Bits<16>> = konst(8 * HDR_WORDS),
        k_hdr_tag: Constant<Bits<4>> = konst(usize::from(super::tag::FTQ_HDR)),
        k_data_tag: Constant<Bits<4>> = konst(usize::from(super::tag::FTQ_DATA)),
    }
}

impl<const W: usize, const B: usize> Logic for FwTxQueue<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        for j in 0..HDR_WORDS {
            self.hdr[j].clock.next = self.clock.val();
            self.hdr[j].d.next = self.hdr[j].q.val();
        }
        self.data.clock.next = self.clock.val();

        // ---- the entry: header fields, the read requests ----
        self.flen.next = self.hdr[2].q.val().get_bits::<16>(32);
        self.ebad.next = (self.flen.val() == 0)
            | (self.flen.val() > self.k_slot.val())
            | (self.hdr[2].q.val().get_bits::<16>(48) != 0)
            | (self.hdr[3].q.val() != 0);
        self.mask.next = (self.k_one.val() << self.size_log2.val()) - 1;
        self.eaddr.next =
            self.base.val() + (bit_cast::<64, 32>(self.seq.cons.val() & self.mask.val()) << 8);
        self.req_hdr.next = self.seq.st.val() == FtqState::HeadReq;
        self.req_data.next = self.seq.st.val() == FtqState::DataReq;
        self.addr.next = self.eaddr.val() + bit_cast::<64, 16>(self.k_hdr_bytes.val());
        self.len.next = self.flen.val();
        if self.seq.st.val() == FtqState::HeadReq {
            self.addr.next = self.eaddr.val();
            self.len.next = self.k_hdr_bytes.val();
        }

        // ---- to the framer ----
        self.rem.next =
            self.flen.val() - (bit_cast::<16, 5>(self.seq.beat.val()) << self.k_b_shift.val());
        self.data.read_address.next = self.seq.beat.val();
        self.m.tdata.next = self.data.read_data.val();
        self.m.tvalid.next = self.seq.st.val() == FtqState::Send;
        self.m.tlast.next = self.rem.val() <= self.k_b.val();
        self.m.tkeep.next = 0.into();
        for i in 0..B {
            self.m.tkeep.next = self
                .m
                .tkeep
                .val()
                .replace_bit(i, self.rem.val() > i.to_bits::<16>());
        }
        self.m.dst_ip.next = (bit_cast::<128, 64>(self.hdr[1].q.val()) << 64)
            | bit_cast::<128, 64>(self.hdr[0].q.val());
        self.m.src_port.next = self.hdr[2].q.val().get_bits::<16>(0);
        self.m.dst_port.next = self.hdr[2].q.val().get_bits::<16>(16);
        self.cons.next = self.seq.cons.val();
        self.bad.next = self.seq.bad.val();

        // ---- completion beats into the header words and the datagram ----
        self.data.write_address.next = self.seq.beat.val();
        self.data.write_data.next = self.c_tdata.val();
        self.data_beat.next = (self.seq.st.val() == FtqState::DataRecv)
            & self.c_tvalid.val()
            & (self.c_tag.val() == self.k_data_tag.val());
        self.data.write_enable.next = self.data_beat.val();
        self.hdr_beat.next = (self.seq.st.val() == FtqState::HeadRecv)
            & self.c_tvalid.val()
            & (self.c_tag.val() == self.k_hdr_tag.val());
        if self.hdr_beat.val() {
            for j in 0..HDR_WORDS {
                if self.seq.beat.val() == self.k_hbeat[j].val() {
                    self.hdr[j].d.next = self
                        .c_tdata
                        .val()
                        .get_bits::<64>(self.k_hlane[j].val().index());
                }
            }
        }
        self.seq.clock.next = self.clock.val();
        self.seq.rst.next = self.rst.val();
        self.seq.start.next = self.ctrl.val() & (self.seq.cons.val() != self.prod.val());
        self.seq.grant.next = self.grant.val();
        self.seq.hdr_beat.next = self.hdr_beat.val();
        self.seq.data_beat.next = self.data_beat.val();
        self.seq.c_tlast.next = self.c_tlast.val();
        self.seq.ebad.next = self.ebad.val();
        self.seq.m_tready.next = self.m.tready.val();
        self.seq.m_tlast.next = self.m.tlast.val();
        self.adv.next = self.seq.adv.val();
    }
}

/// The sequencer of [`FwTxQueue`]: its state, beat and counters, and the
/// transitions the DMA read arbiter's grant and the framer's ready decide.
/// A block of its own so that `grant` and `m_tready` reach only these
/// registers' inputs and `adv`: the arbiter's grant depends on
/// `req_hdr`/`req_data` and the framer's ready on `m_tvalid`, and in one
/// kernel with those outputs Verilator would see a combinational loop.
#[derive(LogicBlock, Default)]
pub struct FtqSeq {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: idle, counters 0.
    pub rst: Signal<In, Bit>,
    /// The queue is enabled and holds an entry.
    pub start: Signal<In, Bit>,
    /// The arbiter issues the waiting read.
    pub grant: Signal<In, Bit>,
    /// A header beat comes.
    pub hdr_beat: Signal<In, Bit>,
    /// A datagram beat comes.
    pub data_beat: Signal<In, Bit>,
    /// The completion's last beat.
    pub c_tlast: Signal<In, Bit>,
    /// The header is bad.
    pub ebad: Signal<In, Bit>,
    /// The framer takes the beat.
    pub m_tready: Signal<In, Bit>,
    /// The beat is the datagram's last.
    pub m_tlast: Signal<In, Bit>,
    /// The state.
    pub st: Signal<Out, FtqState>,
    /// The beat.
    pub beat: Signal<Out, Bits<5>>,
    /// Entries consumed.
    pub cons: Signal<Out, Bits<32>>,
    /// Entries skipped.
    pub bad: Signal<Out, Bits<32>>,
    /// An entry is consumed this cycle.
    pub adv: Signal<Out, Bit>,
    s: DFF<FtqState>,
    b: DFF<Bits<5>>,
    n_cons: DFF<Bits<32>>,
    n_bad: DFF<Bits<32>>,
}

impl Logic for FtqSeq {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s, b, n_cons, n_bad);
        self.st.next = self.s.q.val();
        self.beat.next = self.b.q.val();
        self.cons.next = self.n_cons.q.val();
        self.bad.next = self.n_bad.q.val();
        self.adv.next = ((self.s.q.val() == FtqState::Check) & self.ebad.val())
            | ((self.s.q.val() == FtqState::Send) & self.m_tready.val() & self.m_tlast.val());
        match self.s.q.val() {
            FtqState::Idle => {
                if self.start.val() {
                    self.s.d.next = FtqState::HeadReq;
                    self.b.d.next = 0.into();
                }
            }
            FtqState::HeadRecv => {
                if self.hdr_beat.val() {
                    self.b.d.next = self.b.q.val() + 1;
                    if self.c_tlast.val() {
                        self.b.d.next = 0.into();
                        self.s.d.next = FtqState::Check;
                    }
                }
            }
            FtqState::DataRecv => {
                if self.data_beat.val() {
                    self.b.d.next = self.b.q.val() + 1;
                    if self.c_tlast.val() {
                        self.b.d.next = 0.into();
                        self.s.d.next = FtqState::Send;
                    }
                }
            }
            FtqState::Check => {
                self.s.d.next = FtqState::DataReq;
                if self.ebad.val() {
                    self.n_bad.d.next = self.n_bad.q.val() + 1;
                    self.s.d.next = FtqState::Idle;
                }
            }
            FtqState::Send => {
                if self.m_tready.val() {
                    self.b.d.next = self.b.q.val() + 1;
                    if self.m_tlast.val() {
                        self.s.d.next = FtqState::Idle;
                    }
                }
            }
            _ => {
                // A read waits for the arbiter.
                if self.grant.val() & (self.s.q.val() == FtqState::HeadReq) {
                    self.s.d.next = FtqState::HeadRecv;
                }
                if self.grant.val() & (self.s.q.val() == FtqState::DataReq) {
                    self.s.d.next = FtqState::DataRecv;
                }
            }
        }
        if self.adv.val() {
            self.n_cons.d.next = self.n_cons.q.val() + 1;
        }
        if self.rst.val() {
            self.s.d.next = FtqState::Idle;
            self.b.d.next = 0.into();
            self.n_cons.d.next = 0.into();
            self.n_bad.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// Ring base address of the test (above 4 GiB, as the bench's).
    const BASE: u64 = 0x1_0000_0000;

    /// One firmware TX entry: destination IP, ports, datagram length (as
    /// the header says) and bytes.
    struct Entry {
        ip: u128,
        src: u16,
        dst: u16,
        len: u16,
        bytes: Vec<u8>,
    }

    impl Entry {
        /// The entry's 256 bytes in host memory.
        fn image(&self) -> Vec<u8> {
            let mut m = vec![0u8; 256];
            m[..16].copy_from_slice(&self.ip.to_le_bytes());
            m[16..18].copy_from_slice(&self.src.to_le_bytes());
            m[18..20].copy_from_slice(&self.dst.to_le_bytes());
            m[20..22].copy_from_slice(&self.len.to_le_bytes());
            m[32..32 + self.bytes.len()].copy_from_slice(&self.bytes);
            m
        }
    }

    /// One datagram the framer took: bytes, destination IP, ports.
    type Sent = (Vec<u8>, u128, u16, u16);

    /// What the block did: DMA reads (address, bytes, tag), datagrams
    /// sent, and `cons`, `bad` at the end.
    #[derive(Debug, Default)]
    struct Run {
        reads: Vec<(u64, u64, u64)>,
        sent: Vec<Sent>,
        cons: u64,
        bad: u64,
    }

    /// Runs the 64-bit block over `entries` (ring of 16, producer index
    /// at their count): the arbiter grants every third cycle, the
    /// completion of a read starts 3 cycles after it, the framer takes
    /// every other beat.
    fn simulate(entries: Vec<Entry>) -> Run {
        let mem: Vec<u8> = entries.iter().flat_map(Entry::image).collect();
        let n = entries.len() as u64;
        let run = Arc::new(Mutex::new(Run::default()));
        let result = run.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<FwTxQueue<64, 8>>| {
            x.clock.next = !x.clock.val()
        });
        sim.add_testbench(move |mut sim: Sim<FwTxQueue<64, 8>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            x.ctrl.next = true;
            x.prod.next = n.to_bits();
            x.base.next = BASE.to_bits();
            x.size_log2.next = 4.into();
            // Completion beats: (cycle from which it may go, data, last, tag).
            let mut beats: VecDeque<(usize, u64, bool, u64)> = VecDeque::new();
            let mut open: Vec<u8> = Vec::new();
            for cycle in 0..3000usize {
                let mut r = run.lock().unwrap();
                // Mid-cycle: the outputs show this cycle's state.
                let req = x.req_hdr.val() || x.req_data.val();
                x.grant.next = req && cycle % 3 == 0;
                if req && cycle % 3 == 0 {
                    let (addr, len) = (x.addr.val().to_u64(), x.len.val().to_u64());
                    let tag = if x.req_hdr.val() { 2 } else { 3 };
                    r.reads.push((addr, len, tag));
                    let off = (addr - BASE) as usize;
                    let chunks: Vec<&[u8]> = mem[off..off + len as usize].chunks(8).collect();
                    for (k, c) in chunks.iter().enumerate() {
                        let mut w = [0u8; 8];
                        w[..c.len()].copy_from_slice(c);
                        beats.push_back((
                            cycle + 3,
                            u64::from_le_bytes(w),
                            k + 1 == chunks.len(),
                            tag,
                        ));
                    }
                }
                x.c_tvalid.next = false;
                if beats.front().is_some_and(|b| b.0 <= cycle) {
                    let (_, data, last, tag) = beats.pop_front().unwrap();
                    x.c_tvalid.next = true;
                    x.c_tdata.next = data.to_bits();
                    x.c_tlast.next = last;
                    x.c_tag.next = tag.to_bits();
                }
                let ready = cycle % 2 == 0;
                x.m.tready.next = ready;
                if x.m.tvalid.val() && ready {
                    let k = x.m.tkeep.val().to_u64().count_ones() as usize;
                    open.extend_from_slice(&x.m.tdata.val().to_u64().to_le_bytes()[..k]);
                    if x.m.tlast.val() {
                        let ip = x.m.dst_ip.val();
                        let ip = u128::from(ip.get_bits::<64>(0).to_u64())
                            | u128::from(ip.get_bits::<64>(64).to_u64()) << 64;
                        r.sent.push((
                            std::mem::take(&mut open),
                            ip,
                            x.m.src_port.val().to_u64() as u16,
                            x.m.dst_port.val().to_u64() as u16,
                        ));
                    }
                }
                drop(r);
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            let mut r = run.lock().unwrap();
            r.cons = x.cons.val().to_u64();
            r.bad = x.bad.val().to_u64();
            drop(r);
            sim.done(x)
        });
        let mut uut = FwTxQueue::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 100_000).unwrap();
        Arc::try_unwrap(result).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_sends_good_entries_and_skips_bad_ones() {
        let entry = |d: usize, len: u16, body: usize| Entry {
            ip: 0xFE80_0000_0000_0000_0000_0000_0000_0001 + d as u128,
            src: 0x1000 + d as u16,
            dst: 4791,
            len,
            bytes: (0..body).map(|j| (d * 37 + j * 11) as u8).collect(),
        };
        let entries = vec![
            entry(0, 100, 100),
            // Length 0 and over a slot: skipped.
            entry(1, 0, 0),
            entry(2, 129, 129),
            entry(3, 1, 1),
            entry(4, 128, 128),
        ];
        let want: Vec<Sent> = entries
            .iter()
            .filter(|e| (1..=SLOT_BYTES).contains(&usize::from(e.len)))
            .map(|e| (e.bytes.clone(), e.ip, e.src, e.dst))
            .collect();
        let run = simulate(entries);
        assert_eq!(run.sent, want);
        assert_eq!((run.cons, run.bad), (5, 2));
        // A header read per entry, a datagram read per good one, each at
        // its entry's slot.
        let hdrs: Vec<_> = run.reads.iter().filter(|r| r.2 == 2).collect();
        assert_eq!(hdrs.len(), 5);
        for (i, r) in hdrs.iter().enumerate() {
            assert_eq!((r.0, r.1), (BASE + 256 * i as u64, 32));
        }
        let datas: Vec<_> = run
            .reads
            .iter()
            .filter(|r| r.2 == 3)
            .map(|r| (r.0, r.1))
            .collect();
        assert_eq!(
            datas,
            vec![
                (BASE + 32, 100),
                (BASE + 3 * 256 + 32, 1),
                (BASE + 4 * 256 + 32, 128)
            ]
        );
    }
}
