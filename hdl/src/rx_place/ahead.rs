//! S2's look-ahead of S3's connection-window tests ([`ConnAhead`]).

use rust_hdl::prelude::*;

/// The connection-window tests of the datagram entering S3, computed in S2
/// and registered, so the verdict's loop ([`PlaceDecide`](super::PlaceDecide)
/// → `take` → the new cumulative PSN) holds no subtraction: with `d` its
/// connection PSN `a` minus the QP's cumulative PSN as S3 will see it
/// (32-bit wrap-around), `oow` is `d` in [256, 2^31), `far` is `d`
/// outside [-256, 256] (a PROBE's test), and `dup` is `d` negative or the
/// PSN's bitmap bit set.
///
/// The cumulative PSN and bitmap S3 will see are the table's (`t_cum`,
/// `t_bm`, with this cycle's firmware write) unless S3 holds a datagram of
/// the same QP and no firmware write hits the QP's word 5 (`byp`): then
/// they are S3's result, which the verdict of S3 chooses late (`take`).
/// The four windows it can choose are known early but for the first clear
/// bit `z` (from the leading-ones counts): unchanged `{hi, lo}`, all 256
/// set `{hi+1, lo}`, the run wrapped `{hi+1, z}`, else `{hi, z}`. So `d`'s
/// upper 24 bits are `a[31:8] - hi - k` for `k` in 0..=2 (computed early,
/// with their tests), picked by the low byte's borrow (`a[7:0] < lo` or
/// `< z`, an 8-bit compare), and the bitmap bit is S3's bit with the
/// accepted PSN's bit set and the bits below the new low byte cleared.
#[derive(LogicBlock, Default)]
pub struct ConnAhead {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// S2: a datagram is here (load the registers).
    pub en: Signal<In, Bit>,
    /// S2: its connection PSN.
    pub psn: Signal<In, Bits<32>>,
    /// S2: the table's cumulative PSN of its QP (with the firmware write).
    pub t_cum: Signal<In, Bits<32>>,
    /// S2: the table's bitmap of its QP (with the firmware write).
    pub t_bm: Signal<In, Bits<256>>,
    /// S2 takes S3's result (same QP, no firmware write to word 5).
    pub byp: Signal<In, Bit>,
    /// S3: the cumulative PSN before the verdict.
    pub cum: Signal<In, Bits<32>>,
    /// S3: the bitmap before the verdict.
    pub bm: Signal<In, Bits<256>>,
    /// S3: the connection PSN's low byte.
    pub y_psn: Signal<In, Bits<8>>,
    /// S3: the PSN is accepted.
    pub take: Signal<In, Bit>,
    /// S3: the first clear bit (the new cumulative PSN's low byte).
    pub z: Signal<In, Bits<8>>,
    /// S3: all 256 bits set.
    pub all: Signal<In, Bit>,
    /// S3: the run wrapped past bit 255.
    pub wrap: Signal<In, Bit>,
    /// S3 (registered): connection PSN beyond the window.
    pub oow: Signal<Out, Bit>,
    /// S3 (registered): more than 256 from the cumulative PSN either way.
    pub far: Signal<Out, Bit>,
    /// S3 (registered): accepted before.
    pub dup: Signal<Out, Bit>,
    r_oow: DFF<Bit>,
    r_far: DFF<Bit>,
    r_dup: DFF<Bit>,
    // The table's `d`; the three upper halves and their tests (negative,
    // in [1, 2^23), 0, -1, 1).
    d: Signal<Local, Bits<32>>,
    dhi: Signal<Local, Bits<24>>,
    e0: Signal<Local, Bits<24>>,
    e1: Signal<Local, Bits<24>>,
    e2: Signal<Local, Bits<24>>,
    n: Signal<Local, Bits<3>>,
    w: Signal<Local, Bits<3>>,
    z0: Signal<Local, Bits<3>>,
    m1: Signal<Local, Bits<3>>,
    o1: Signal<Local, Bits<3>>,
    // The low byte's borrow and equality against `lo` and `z`, the bits
    // at the PSN, which `e` (0..=2) and the bitmap bit.
    alo: Signal<Local, Bits<8>>,
    bc: Signal<Local, Bit>,
    ec: Signal<Local, Bit>,
    bz: Signal<Local, Bit>,
    ez: Signal<Local, Bit>,
    bit_t: Signal<Local, Bit>,
    bit_y: Signal<Local, Bit>,
    bit_b: Signal<Local, Bit>,
    k: Signal<Local, Bits<2>>,
    lo0: Signal<Local, Bit>,
    bset: Signal<Local, Bit>,
    sn: Signal<Local, Bit>,
    sw: Signal<Local, Bit>,
    sz: Signal<Local, Bit>,
    so: Signal<Local, Bit>,
}

impl Logic for ConnAhead {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_oow, r_far, r_dup);
        self.oow.next = self.r_oow.q.val();
        self.far.next = self.r_far.q.val();
        self.dup.next = self.r_dup.q.val();
        self.d.next = 0.into();
        self.dhi.next = 0.into();
        self.e0.next = 0.into();
        self.e1.next = 0.into();
        self.e2.next = 0.into();
        self.n.next = 0.into();
        self.w.next = 0.into();
        self.z0.next = 0.into();
        self.m1.next = 0.into();
        self.o1.next = 0.into();
        self.alo.next = self.psn.val().get_bits::<8>(0);
        self.bc.next = false;
        self.ec.next = false;
        self.bz.next = false;
        self.ez.next = false;
        self.bit_t.next = false;
        self.bit_y.next = false;
        self.bit_b.next = false;
        self.k.next = 0.into();
        self.lo0.next = false;
        self.bset.next = false;
        self.sn.next = false;
        self.sw.next = false;
        self.sz.next = false;
        self.so.next = false;
        if self.en.val() {
            // ---- early: from registers and the table ----
            self.d.next = self.psn.val() - self.t_cum.val();
            self.dhi.next = self.d.val().get_bits::<24>(8);
            self.bit_t.next = self.t_bm.val().get_bit(self.alo.val().index());
            self.e0.next = self.psn.val().get_bits::<24>(8) - self.cum.val().get_bits::<24>(8);
            self.e1.next = self.e0.val() - 1;
            self.e2.next = self.e0.val() - 2;
            self.n.next = self.n.val().replace_bit(0, self.e0.val().get_bit(23));
            self.n.next = self.n.val().replace_bit(1, self.e1.val().get_bit(23));
            self.n.next = self.n.val().replace_bit(2, self.e2.val().get_bit(23));
            self.w.next = self
                .w
                .val()
                .replace_bit(0, self.e0.val().get_bits::<23>(0).any());
            self.w.next = self
                .w
                .val()
                .replace_bit(1, self.e1.val().get_bits::<23>(0).any());
            self.w.next = self
                .w
                .val()
                .replace_bit(2, self.e2.val().get_bits::<23>(0).any());
            self.w.next = self.w.val() & !self.n.val();
            self.z0.next = self.z0.val().replace_bit(0, self.e0.val() == 0);
            self.z0.next = self.z0.val().replace_bit(1, self.e1.val() == 0);
            self.z0.next = self.z0.val().replace_bit(2, self.e2.val() == 0);
            self.m1.next = self.m1.val().replace_bit(0, self.e0.val() == 0xFF_FFFF);
            self.m1.next = self.m1.val().replace_bit(1, self.e1.val() == 0xFF_FFFF);
            self.m1.next = self.m1.val().replace_bit(2, self.e2.val() == 0xFF_FFFF);
            self.o1.next = self.o1.val().replace_bit(0, self.e0.val() == 1);
            self.o1.next = self.o1.val().replace_bit(1, self.e1.val() == 1);
            self.o1.next = self.o1.val().replace_bit(2, self.e2.val() == 1);
            self.bc.next = self.alo.val() < self.cum.val().get_bits::<8>(0);
            self.ec.next = self.alo.val() == self.cum.val().get_bits::<8>(0);
            self.bit_y.next = self.bm.val().get_bit(self.alo.val().index());
            // ---- late: the first clear bit, then the verdict ----
            self.bz.next = self.alo.val() < self.z.val();
            self.ez.next = self.alo.val() == self.z.val();
            // Unchanged: `{hi, lo}`, the bit as it is.
            if self.bc.val() {
                self.k.next = 1.into();
            }
            self.lo0.next = self.ec.val();
            self.bset.next = self.bit_y.val();
            // Accepted: the PSN's bit set, the bits below the new low byte
            // cleared (below `lo` and from `z` when the run wrapped, from
            // `lo` up to `z` otherwise).
            self.bit_b.next = self.bit_y.val() | (self.alo.val() == self.y_psn.val());
            if self.take.val() {
                self.lo0.next = self.ez.val();
                self.k.next = 0.into();
                if self.bz.val() {
                    self.k.next = 1.into();
                }
                if self.all.val() {
                    self.k.next = 1.into();
                    if self.bc.val() {
                        self.k.next = 2.into();
                    }
                    self.lo0.next = self.ec.val();
                    self.bset.next = false;
                } else if self.wrap.val() {
                    self.k.next = self.k.val() + 1;
                    self.bset.next = self.bit_b.val() & self.bc.val() & !self.bz.val();
                } else {
                    self.bset.next = self.bit_b.val() & (self.bc.val() | !self.bz.val());
                }
            }
            self.sn.next = self.n.val().get_bit(self.k.val().index());
            self.sw.next = self.w.val().get_bit(self.k.val().index());
            self.sz.next = self.z0.val().get_bit(self.k.val().index())
                | self.m1.val().get_bit(self.k.val().index());
            self.so.next = self.o1.val().get_bit(self.k.val().index());
            if !self.byp.val() {
                // The table's window: `d` itself.
                self.sn.next = self.d.val().get_bit(31);
                self.sw.next = !self.d.val().get_bit(31) & self.dhi.val().get_bits::<23>(0).any();
                self.sz.next = (self.dhi.val() == 0) | (self.dhi.val() == 0xFF_FFFF);
                self.so.next = self.dhi.val() == 1;
                self.lo0.next = self.d.val().get_bits::<8>(0) == 0;
                self.bset.next = self.bit_t.val();
            }
            self.r_oow.d.next = self.sw.val();
            self.r_far.d.next = !(self.sz.val() | (self.so.val() & self.lo0.val()));
            self.r_dup.d.next = self.sn.val() | self.bset.val();
        }
    }
}
