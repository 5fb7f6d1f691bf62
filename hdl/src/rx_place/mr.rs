//! The MR table and its lookup ([`PlaceMr`]).

use rust_hdl::prelude::*;

use super::MRS;
use super::MrEntry;
use crate::bus::CfgIn;

/// The memory regions of [`RxPlace`](super::RxPlace) (table 1, `cfg::MR_*`:
/// valid and access; rkey and PD; base; length), written by the firmware
/// through `cfg`, with each MR's end (base + length, 65 bits, kept in 66 for the compare) summed when
/// the base or the length is written (one shared adder).
///
/// S1, the key lookup: every MR's key (with S1's own table write written
/// through) is compared with the four candidate keys at once (the rkey,
/// the receive's lkey, the lkeys of READ entries 0 and 1), and the opcode
/// and the READ match (`rd1`) only choose one of the four hit vectors; the
/// MR with the key (the last one when several have it) is registered as a
/// one-hot vector for S2, so S1 ends at the compare and the choice.
///
/// S2, the check: each MR's PD is compared with the QP's and its bounds
/// with the range S1 summed ([`PlaceSums`](super::PlaceSums)), all four
/// side by side from the table registers; the one-hot vector only picks a
/// result (and the MR's access bits). The registers hold S1's table write
/// by then, so S2 sees the MR as it was after S1's write, as the key
/// lookup did: a write in S2 or later is not seen.
#[derive(LogicBlock, Default)]
pub struct PlaceMr {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every MR invalid.
    pub rst: Signal<In, Bit>,
    /// Table write port (table 1).
    pub cfg: CfgIn<9>,
    /// S1: a datagram is here.
    pub en: Signal<In, Bit>,
    /// S1: opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// S1: outstanding-READ entry 1 matches (a READ_RESP uses its lkey,
    /// else entry 0's).
    pub rd1: Signal<In, Bit>,
    /// S1: the rkey (WRITE, WRITE_IMM, READ and atomic requests).
    pub rkey: Signal<In, Bits<32>>,
    /// S1: the receive's lkey (SEND, SEND_IMM and other opcodes).
    pub recv_lkey: Signal<In, Bits<32>>,
    /// S1: READ entry 0's lkey.
    pub lkey0: Signal<In, Bits<32>>,
    /// S1: READ entry 1's lkey.
    pub lkey1: Signal<In, Bits<32>>,
    /// S2: a datagram is here.
    pub en2: Signal<In, Bit>,
    /// S2: the QP's protection domain.
    pub q_pd: Signal<In, Bits<32>>,
    /// S2: the check's start address (65 bits, from S1's sums).
    pub maddr: Signal<In, Bits<65>>,
    /// S2: the check's end address (66 bits, from S1's sums).
    pub wend: Signal<In, Bits<66>>,
    /// S2 (registered in S1): an MR has the key.
    pub hit: Signal<Out, Bit>,
    /// S2: that MR's access bits.
    pub access: Signal<Out, Bits<4>>,
    /// S2: that MR's PD is the QP's.
    pub pd_ok: Signal<Out, Bit>,
    /// S2: the range lies inside that MR.
    pub in_range: Signal<Out, Bit>,
    // The table.
    mrs: [MrEntry; MRS],
    // S1's result: the MR with the key, one-hot.
    x_hit: DFF<Bit>,
    x_one: DFF<Bits<MRS>>,
    // S1 locals: per candidate key, the MRs with it.
    mw: Signal<Local, Bit>,
    hp: Signal<Local, Bits<MRS>>,
    hl: Signal<Local, Bits<MRS>>,
    h0: Signal<Local, Bits<MRS>>,
    h1: Signal<Local, Bits<MRS>>,
    hv: Signal<Local, Bits<MRS>>,
    one: Signal<Local, Bits<MRS>>,
    // S1: the written word's bits 31..0 against the four candidate keys
    // (for an MR whose key is written this cycle).
    dhits: Signal<Local, Bits<4>>,
    // Table writes: the kept one of base and length, the written MR's end.
    kept: Signal<Local, Bits<64>>,
    mend: Signal<Local, Bits<66>>,
    // S2 locals: per MR, PD and bounds.
    pd_v: Signal<Local, Bits<MRS>>,
    rng_v: Signal<Local, Bits<MRS>>,
}

impl Logic for PlaceMr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, x_hit, x_one);
        self.mw.next = self.cfg.we.val() & (self.cfg.addr.val().get_bits::<3>(6) == 1);
        // Table writes: the written MR's end is the new base plus its
        // length, or its base plus the new length (one adder).
        self.kept.next = 0.into();
        for i in 0..MRS {
            if self.cfg.addr.val().get_bits::<2>(4).index() == i {
                self.kept.next = self.mrs[i].base.val();
                if self.cfg.addr.val().get_bits::<4>(0) == 2 {
                    self.kept.next = self.mrs[i].len.val();
                }
            }
        }
        self.mend.next =
            bit_cast::<66, 64>(self.cfg.data.val()) + bit_cast::<66, 64>(self.kept.val());
        self.dhits.next = 0.into();
        self.dhits.next = self
            .dhits
            .val()
            .replace_bit(0, self.cfg.data.val().get_bits::<32>(0) == self.rkey.val());
        self.dhits.next = self.dhits.val().replace_bit(
            1,
            self.cfg.data.val().get_bits::<32>(0) == self.recv_lkey.val(),
        );
        self.dhits.next = self
            .dhits
            .val()
            .replace_bit(2, self.cfg.data.val().get_bits::<32>(0) == self.lkey0.val());
        self.dhits.next = self
            .dhits
            .val()
            .replace_bit(3, self.cfg.data.val().get_bits::<32>(0) == self.lkey1.val());
        for i in 0..MRS {
            self.mrs[i].dhits.next = self.dhits.val();
            self.mrs[i].clock.next = self.clock.val();
            self.mrs[i].rst.next = self.rst.val();
            self.mrs[i].cfg.we.next =
                self.mw.val() & (self.cfg.addr.val().get_bits::<2>(4).index() == i);
            self.mrs[i].cfg.addr.next = self.cfg.addr.val().get_bits::<4>(0);
            self.mrs[i].cfg.data.next = self.cfg.data.val();
            self.mrs[i].mend.next = self.mend.val();
            self.mrs[i].rkey.next = self.rkey.val();
            self.mrs[i].recv_lkey.next = self.recv_lkey.val();
            self.mrs[i].lkey0.next = self.lkey0.val();
            self.mrs[i].lkey1.next = self.lkey1.val();
            self.mrs[i].en2.next = self.en2.val();
            self.mrs[i].q_pd.next = self.q_pd.val();
            self.mrs[i].maddr.next = self.maddr.val().get_bits::<64>(0);
            self.mrs[i].wend.next = self.wend.val();
        }

        // ---- S1: every MR's key (written through) against the four
        // candidate keys ----
        self.hp.next = 0.into();
        self.hl.next = 0.into();
        self.h0.next = 0.into();
        self.h1.next = 0.into();
        for i in 0..MRS {
            self.hp.next = self
                .hp
                .val()
                .replace_bit(i, self.mrs[i].hits.val().get_bit(0));
            self.hl.next = self
                .hl
                .val()
                .replace_bit(i, self.mrs[i].hits.val().get_bit(1));
            self.h0.next = self
                .h0
                .val()
                .replace_bit(i, self.mrs[i].hits.val().get_bit(2));
            self.h1.next = self
                .h1
                .val()
                .replace_bit(i, self.mrs[i].hits.val().get_bit(3));
        }
        // The key's hits: the rkey's for WRITE, WRITE_IMM, READ and atomic
        // requests, the matched READ's lkey for a READ_RESP (entry 0's when
        // none matches: then unused), else the receive's lkey.
        self.hv.next = self.hl.val();
        if self.opcode.val() == 0x06 {
            self.hv.next = self.h0.val();
            if self.rd1.val() {
                self.hv.next = self.h1.val();
            }
        }
        if (self.opcode.val() == 0x01)
            | (self.opcode.val() == 0x02)
            | (self.opcode.val() == 0x05)
            | (self.opcode.val() == 0x08)
            | (self.opcode.val() == 0x09)
        {
            self.hv.next = self.hp.val();
        }
        // The last MR with the key, one-hot.
        self.one.next = 0.into();
        for i in 0..MRS {
            if self.hv.val().get_bit(i) {
                self.one.next = 0.into();
                self.one.next = self.one.val().replace_bit(i, true);
            }
        }
        if self.en.val() {
            self.x_hit.d.next = self.hv.val().any();
            self.x_one.d.next = self.one.val();
        }

        // ---- S2: the chosen MR's PD, bounds and access, from the table ----
        self.pd_v.next = 0.into();
        self.rng_v.next = 0.into();
        self.access.next = 0.into();
        if self.en2.val() {
            for i in 0..MRS {
                self.pd_v.next = self.pd_v.val().replace_bit(i, self.mrs[i].pd_ok.val());
                self.rng_v.next = self.rng_v.val().replace_bit(i, self.mrs[i].in_range.val());
                if self.x_one.q.val().get_bit(i) {
                    self.access.next = self.mrs[i].access.val();
                }
            }
        }
        self.hit.next = self.x_hit.q.val();
        self.pd_ok.next = (self.pd_v.val() & self.x_one.q.val()).any();
        self.in_range.next =
            !self.maddr.val().get_bit(64) & (self.rng_v.val() & self.x_one.q.val()).any();
    }
}
