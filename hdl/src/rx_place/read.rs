//! The outstanding-READ table and its lookup ([`PlaceReads`]).

use rust_hdl::prelude::*;

use super::QPS;
use crate::bus::CfgIn;
use crate::helpers::LutRam;

/// Words per QP of the outstanding-READ entries (QP words 9–14: entry 0
/// in 9..=11, entry 1 in 12..=14).
const WORDS: usize = 6;

/// The outstanding READs (and atomics) of [`RxPlace`](super::RxPlace):
/// per QP two entries of three QP words (`cfg::QP_READ*`: valid, atomic,
/// stream and MSN; the local address; length and lkey), written by the
/// firmware through `cfg`.
///
/// S1 reads the datagram's QP's six words from the table (`qi`, S1's
/// registered entry; the table holds every write up to S0's) and writes
/// its own cycle's write to that QP's words through, so S1 sees the entry
/// as it is after S1's write. From those words S1 matches the response
/// (`rd1`: entry 1 has the packet's stream and MSN and the response's kind;
/// `hit`: either entry does) and gives both entries' lkeys and addresses
/// (the MR lookup compares both lkeys, the sums use both addresses; `rd1`
/// only chooses). Registered for S2: `hit` and the matched entry's length.
#[derive(LogicBlock, Default)]
pub struct PlaceReads {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every entry invalid.
    pub rst: Signal<In, Bit>,
    /// Table write port (QP words 9–14 of table 0).
    pub cfg: CfgIn<9>,
    /// S1: a datagram is here.
    pub en1: Signal<In, Bit>,
    /// S1: its QP entry.
    pub qi: Signal<In, Bits<2>>,
    /// S1: stream id.
    pub stream: Signal<In, Bits<16>>,
    /// S1: MSN.
    pub msn: Signal<In, Bits<32>>,
    /// S1: opcode (0x0A, ATOMIC_RESP, matches atomic entries).
    pub opcode: Signal<In, Bits<8>>,
    /// S1: entry 1 matches (it wins over entry 0, as the engine's lookup of
    /// one (stream, MSN) finds one entry).
    pub rd1: Signal<Out, Bit>,
    /// S1: entry 0's lkey.
    pub lkey0: Signal<Out, Bits<32>>,
    /// S1: entry 1's lkey.
    pub lkey1: Signal<Out, Bits<32>>,
    /// S1: entry 0's local address.
    pub addr0: Signal<Out, Bits<64>>,
    /// S1: entry 1's local address.
    pub addr1: Signal<Out, Bits<64>>,
    /// S2 (registered): an entry matches.
    pub hit: Signal<Out, Bit>,
    /// S2 (registered): the matched entry's length (entry 0's when none).
    pub len: Signal<Out, Bits<32>>,
    // The table: QP q's word 9 + k at address q of `words[k]` (distributed
    // RAM, read at S1's QP); the entries' first words (k = 0, 3) read 0
    // until written after the reset (`wr`, bit 2q for entry 0, 2q + 1 for
    // entry 1).
    words: [LutRam<64, 2>; WORDS],
    wr: DFF<Bits<8>>,
    r_hit: DFF<Bit>,
    r_len: DFF<Bits<32>>,
    // S1: the QP's words with S1's write through.
    cur: [Signal<Local, Bits<64>>; WORDS],
    w1: Signal<Local, Bit>,
    x0: Signal<Local, Bits<64>>,
    x1: Signal<Local, Bits<64>>,
    m0: Signal<Local, Bit>,
    m1: Signal<Local, Bit>,
    // A table write to word 9 + k (per k).
    tw: Signal<Local, Bits<WORDS>>,
    // S1: the QP's words from the table.
    rd: [Signal<Local, Bits<64>>; WORDS],
}

impl Logic for PlaceReads {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_hit, r_len, wr);
        // A write to QP words 9..14 of the S1 datagram's QP.
        self.w1.next = self.cfg.we.val()
            & (self.cfg.addr.val().get_bits::<3>(6) == 0)
            & (self.cfg.addr.val().get_bits::<2>(4) == self.qi.val());
        self.tw.next = 0.into();
        for k in 0..6 {
            // The table write.
            if self.cfg.we.val()
                & (self.cfg.addr.val().get_bits::<3>(6) == 0)
                & (self.cfg.addr.val().get_bits::<4>(0).index() == k + 9)
            {
                self.tw.next = self.tw.val().replace_bit(k, true);
            }
            self.words[k].clock.next = self.clock.val();
            self.words[k].write_enable.next = self.tw.val().get_bit(k);
            self.words[k].write_address.next = self.cfg.addr.val().get_bits::<2>(4);
            self.words[k].write_data.next = self.cfg.data.val();
            self.words[k].read_address.next = self.qi.val();
            self.rd[k].next = self.words[k].read_data.val();
        }
        for q in 0..QPS {
            if self.cfg.addr.val().get_bits::<2>(4).index() == q {
                if self.tw.val().get_bit(0) {
                    self.wr.d.next = self.wr.q.val().replace_bit(2 * q, true);
                }
                if self.tw.val().get_bit(3) {
                    self.wr.d.next = self.wr.q.val().replace_bit(2 * q + 1, true);
                }
            }
            if self.qi.val().index() == q {
                if !self.wr.q.val().get_bit(2 * q) {
                    self.rd[0].next = 0.into();
                }
                if !self.wr.q.val().get_bit(2 * q + 1) {
                    self.rd[3].next = 0.into();
                }
            }
        }
        for k in 0..6 {
            // S1: this cycle's write through.
            self.cur[k].next = self.rd[k].val();
            if self.w1.val() & (self.cfg.addr.val().get_bits::<4>(0).index() == k + 9) {
                self.cur[k].next = self.cfg.data.val();
            }
        }
        // The match (`tx.reads[(stream, msn)]`, of the response's kind):
        // word 0 of an entry is {valid 63, atomic 62, stream 32..48, MSN},
        // compared whole with the word it must be; its unused bits 48..62
        // are taken from the entry itself (so the compare reads every bit
        // of the word and Verilator's lint finds none unread).
        self.x0.next = (bit_cast::<64, 14>(self.cur[0].val().get_bits::<14>(48)) << 48)
            | (bit_cast::<64, 16>(self.stream.val()) << 32)
            | bit_cast::<64, 32>(self.msn.val());
        self.x0.next = self.x0.val().replace_bit(63, true);
        self.x0.next = self.x0.val().replace_bit(62, self.opcode.val() == 0x0A);
        self.m0.next = self.cur[0].val() == self.x0.val();
        self.x1.next = (bit_cast::<64, 14>(self.cur[3].val().get_bits::<14>(48)) << 48)
            | (bit_cast::<64, 16>(self.stream.val()) << 32)
            | bit_cast::<64, 32>(self.msn.val());
        self.x1.next = self.x1.val().replace_bit(63, true);
        self.x1.next = self.x1.val().replace_bit(62, self.opcode.val() == 0x0A);
        self.m1.next = self.cur[3].val() == self.x1.val();
        self.rd1.next = self.m1.val();
        self.addr0.next = self.cur[1].val();
        self.addr1.next = self.cur[4].val();
        self.lkey0.next = self.cur[2].val().get_bits::<32>(32);
        self.lkey1.next = self.cur[5].val().get_bits::<32>(32);
        if self.en1.val() {
            self.r_hit.d.next = self.m0.val() | self.m1.val();
            self.r_len.d.next = self.cur[2].val().get_bits::<32>(0);
            if self.m1.val() {
                self.r_len.d.next = self.cur[5].val().get_bits::<32>(0);
            }
        }
        self.hit.next = self.r_hit.q.val();
        self.len.next = self.r_len.q.val();
        if self.rst.val() {
            self.wr.d.next = 0.into();
        }
    }
}
