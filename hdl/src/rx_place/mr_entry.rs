//! One memory region of the MR table ([`MrEntry`]).

use rust_hdl::prelude::*;

use crate::bus::CfgIn;

/// One MR of [`PlaceMr`](super::PlaceMr)'s table (`cfg::MR_*` words 0–3:
/// valid and access; rkey and PD; base; length) with its end (base +
/// length, 65 bits, kept in 66 for the compare), written through `cfg`
/// (`we`: this entry is written; `addr`: the word), the end from the
/// table's one shared adder (`mend`) when the base or the length is
/// written.
///
/// S1: the entry's key, with this cycle's write to its valid bit or key
/// written through, against the four candidate keys (`hits`, bit `k` for
/// candidate `k`: the rkey, the receive's lkey, READ entry 0's and 1's
/// lkeys), combinational: the register's key is compared, and a key
/// written this cycle takes the written word's compares instead (`dhits`,
/// made once for every entry by [`PlaceMr`](super::PlaceMr)), so no write
/// multiplexer sits in front of each compare. S2: its PD against the QP's and its bounds
/// against the check's range, from the registers, combinational, 0 while
/// `en2` is low.
#[derive(LogicBlock, Default)]
pub struct MrEntry {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: invalid.
    pub rst: Signal<In, Bit>,
    /// This entry's write port (`addr`: the word).
    pub cfg: CfgIn<4>,
    /// The new end when the base or the length is written.
    pub mend: Signal<In, Bits<66>>,
    /// The base (for the shared adder).
    pub base: Signal<Out, Bits<64>>,
    /// The length (for the shared adder).
    pub len: Signal<Out, Bits<64>>,
    /// S1: the rkey.
    pub rkey: Signal<In, Bits<32>>,
    /// S1: the receive's lkey.
    pub recv_lkey: Signal<In, Bits<32>>,
    /// S1: READ entry 0's lkey.
    pub lkey0: Signal<In, Bits<32>>,
    /// S1: READ entry 1's lkey.
    pub lkey1: Signal<In, Bits<32>>,
    /// S1: the written word's bits 31..0 against the four candidate keys
    /// (bit order as `hits`; shared by every entry), for a key written
    /// this cycle.
    pub dhits: Signal<In, Bits<4>>,
    /// S1: the entry is valid with each candidate key (bit order above).
    pub hits: Signal<Out, Bits<4>>,
    /// S2: a datagram is here.
    pub en2: Signal<In, Bit>,
    /// S2: the QP's protection domain.
    pub q_pd: Signal<In, Bits<32>>,
    /// S2: the check's start address (bits 63..0).
    pub maddr: Signal<In, Bits<64>>,
    /// S2: the check's end address.
    pub wend: Signal<In, Bits<66>>,
    /// S2: the PD is the QP's.
    pub pd_ok: Signal<Out, Bit>,
    /// S2: the range lies inside the MR.
    pub in_range: Signal<Out, Bit>,
    /// The access bits.
    pub access: Signal<Out, Bits<4>>,
    r_valid: DFF<Bit>,
    r_access: DFF<Bits<4>>,
    r_rkey: DFF<Bits<32>>,
    r_pd: DFF<Bits<32>>,
    r_base: DFF<Bits<64>>,
    r_len: DFF<Bits<64>>,
    r_end: DFF<Bits<66>>,
    // S1: valid with this cycle's write through; the key is written this
    // cycle; the register's key against the four candidates.
    mv: Signal<Local, Bit>,
    wk: Signal<Local, Bit>,
    rhits: Signal<Local, Bits<4>>,
}

impl Logic for MrEntry {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_valid, r_access, r_rkey, r_pd, r_base, r_len, r_end
        );
        self.base.next = self.r_base.q.val();
        self.len.next = self.r_len.q.val();
        self.access.next = self.r_access.q.val();
        // ---- S1 ----
        // The key written through: the register's compares, or the
        // written word's (`dhits`) when this cycle writes the key.
        self.mv.next = self.r_valid.q.val();
        self.wk.next = false;
        if self.cfg.we.val() {
            if self.cfg.addr.val() == 0 {
                self.mv.next = self.cfg.data.val().get_bit(0);
            }
            if self.cfg.addr.val() == 1 {
                self.wk.next = true;
            }
        }
        self.rhits.next = 0.into();
        self.rhits.next = self
            .rhits
            .val()
            .replace_bit(0, self.r_rkey.q.val() == self.rkey.val());
        self.rhits.next = self
            .rhits
            .val()
            .replace_bit(1, self.r_rkey.q.val() == self.recv_lkey.val());
        self.rhits.next = self
            .rhits
            .val()
            .replace_bit(2, self.r_rkey.q.val() == self.lkey0.val());
        self.rhits.next = self
            .rhits
            .val()
            .replace_bit(3, self.r_rkey.q.val() == self.lkey1.val());
        self.hits.next = 0.into();
        if self.mv.val() {
            self.hits.next = self.rhits.val();
            if self.wk.val() {
                self.hits.next = self.dhits.val();
            }
        }
        // ---- S2 ----
        self.pd_ok.next = false;
        self.in_range.next = false;
        if self.en2.val() {
            self.pd_ok.next = self.r_pd.q.val() == self.q_pd.val();
            self.in_range.next =
                (self.maddr.val() >= self.r_base.q.val()) & (self.wend.val() <= self.r_end.q.val());
        }
        // ---- the write ----
        if self.cfg.we.val() {
            if self.cfg.addr.val() == 0 {
                self.r_valid.d.next = self.cfg.data.val().get_bit(0);
                self.r_access.d.next = self.cfg.data.val().get_bits::<4>(1);
            }
            if self.cfg.addr.val() == 1 {
                self.r_rkey.d.next = self.cfg.data.val().get_bits::<32>(0);
                self.r_pd.d.next = self.cfg.data.val().get_bits::<32>(32);
            }
            if self.cfg.addr.val() == 2 {
                self.r_base.d.next = self.cfg.data.val();
                self.r_end.d.next = self.mend.val();
            }
            if self.cfg.addr.val() == 3 {
                self.r_len.d.next = self.cfg.data.val();
                self.r_end.d.next = self.mend.val();
            }
        }
        if self.rst.val() {
            self.r_valid.d.next = false;
        }
    }
}
