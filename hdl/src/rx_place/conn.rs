//! The QPs' connection state: table and bypass ([`PlaceConn`]).

use rust_hdl::prelude::*;

use super::QPS;
use crate::bus::CfgIn;
use crate::helpers::LutRam;

/// Each QP's connection receive state in [`RxPlace`](super::RxPlace): its
/// state (QP word 0, bits 2..1), cumulative connection PSN (word 5) and
/// 256-bit bitmap of accepted PSNs above it, with the register that lets
/// back-to-back datagrams of one QP see each other:
///
/// * S2 (`x_*`) loads the state and window of its datagram's QP into S3's
///   registers (`state`, `cum`, `bm`, and `ge`, the mask of the bits at or
///   above `cum`'s, decoded from the loaded `cum`'s low byte): S3's own
///   result when S3 holds a datagram of the same QP, else the table; then
///   this cycle's firmware write to them (so one in S2 is seen).
/// * S3 (`y_*`) gives the state after the verdict (`fail`: ERR, 0) and the
///   window after it (`new_*`, from [`ConnAccept`](super::ConnAccept)),
///   then this cycle's firmware write (the firmware wins), to the table at
///   the cycle's edge, beside the firmware's write to another QP.
/// * S2 also shows the table's cumulative PSN and bitmap of its QP, with
///   this cycle's firmware write (`x_cum`, `x_bm`, combinational from
///   registers and ports), and whether it takes S3's result instead
///   (`byp`), for [`ConnAhead`](super::ConnAhead)'s window tests.
///
/// The bitmaps are one distributed RAM of four 256-bit words (written only
/// by S3, its address S3's QP register, so no write decode is in the
/// verdict's loop); the firmware's write to word 5 clears a QP's bitmap by
/// clearing its `live` bit (a bitmap reads 0 while its bit is clear; S3's
/// write sets it). Every output but `x_cum`, `x_bm` and `byp` is a
/// register.
#[derive(LogicBlock, Default)]
pub struct PlaceConn {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Table write port (QP words 0 and 5 of table 0; their data in bits
    /// 31..0).
    pub cfg: CfgIn<9, 32>,
    /// S2: a datagram is here.
    pub x_valid: Signal<In, Bit>,
    /// S2: its QP entry.
    pub x_qi: Signal<In, Bits<2>>,
    /// S3: a datagram is here.
    pub y_valid: Signal<In, Bit>,
    /// S3: its QP entry.
    pub y_qi: Signal<In, Bits<2>>,
    /// S3: the verdict fails the QP (ERR).
    pub fail: Signal<In, Bit>,
    /// S3: the cumulative connection PSN after the verdict.
    pub new_cum: Signal<In, Bits<32>>,
    /// S3: the bitmap after the verdict.
    pub new_bm: Signal<In, Bits<256>>,
    /// S3 (registered): the QP's state.
    pub state: Signal<Out, Bits<2>>,
    /// S3 (registered): its cumulative connection PSN.
    pub cum: Signal<Out, Bits<32>>,
    /// S3 (registered): its bitmap.
    pub bm: Signal<Out, Bits<256>>,
    /// S3 (registered): the bits at or above `cum`'s (`!0 << cum[7:0]`).
    pub ge: Signal<Out, Bits<256>>,
    /// S2: the table's cumulative PSN of its QP, with this cycle's
    /// firmware write (from registers and ports only).
    pub x_cum: Signal<Out, Bits<32>>,
    /// S2: the table's bitmap of its QP, with this cycle's firmware write.
    pub x_bm: Signal<Out, Bits<256>>,
    /// S2 takes S3's window: S3 holds a datagram of the same QP and no
    /// firmware write hits the QP's word 5.
    pub byp: Signal<Out, Bit>,
    // The table: state and cumulative PSN in registers, the bitmaps in a
    // distributed RAM, valid while their QP's `live` bit is set.
    q_state: [DFF<Bits<2>>; QPS],
    q_cum: [DFF<Bits<32>>; QPS],
    q_bm: LutRam<256, 2>,
    live: DFF<Bits<QPS>>,
    // S3's registers, loaded in S2 (the bypass).
    y_state: DFF<Bits<2>>,
    y_cum: DFF<Bits<32>>,
    y_bm: DFF<Bits<256>>,
    y_ge: DFF<Bits<256>>,
    // A firmware write to QP table words.
    s_cq: Signal<Local, Bit>,
    // S2 locals (the window of the QP entering S3: firmware write hits,
    // the table).
    s_x0: Signal<Local, Bit>,
    s_x5: Signal<Local, Bit>,
    s_xstate: Signal<Local, Bits<2>>,
    s_xcum: Signal<Local, Bits<32>>,
    s_xbm: Signal<Local, Bits<256>>,
    // The low byte of the cumulative PSN S3 gets, and its mask: per
    // 16-bit group, the bits at or above it in its group, the groups from
    // its group up, the group being built.
    s_nc: Signal<Local, Bits<8>>,
    s_xge: Signal<Local, Bits<256>>,
    g_lo: Signal<Local, Bits<16>>,
    g_hi: Signal<Local, Bits<16>>,
    g_grp: Signal<Local, Bits<16>>,
    // S3 locals (the window after the verdict, with this cycle's firmware
    // write).
    s_y0: Signal<Local, Bit>,
    s_y5: Signal<Local, Bit>,
    s_nstate: Signal<Local, Bits<2>>,
    s_ncum: Signal<Local, Bits<32>>,
    s_nbm: Signal<Local, Bits<256>>,
    // The `live` bits after this cycle's writes.
    s_live: Signal<Local, Bits<QPS>>,
}

impl Logic for PlaceConn {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, live, y_state, y_cum, y_bm, y_ge);
        for i in 0..QPS {
            self.q_state[i].clock.next = self.clock.val();
            self.q_state[i].d.next = self.q_state[i].q.val();
            self.q_cum[i].clock.next = self.clock.val();
            self.q_cum[i].d.next = self.q_cum[i].q.val();
        }
        self.state.next = self.y_state.q.val();
        self.cum.next = self.y_cum.q.val();
        self.bm.next = self.y_bm.q.val();
        self.ge.next = self.y_ge.q.val();
        // ---- S3: the QP's window and state after the verdict, then this
        // cycle's firmware write to them (the firmware wins): to the table,
        // and the next datagram's if of this QP ----
        self.s_cq.next = self.cfg.we.val() & (self.cfg.addr.val().get_bits::<3>(6) == 0);
        self.s_y0.next = self.s_cq.val()
            & (self.cfg.addr.val().get_bits::<2>(4) == self.y_qi.val())
            & (self.cfg.addr.val().get_bits::<4>(0) == 0);
        self.s_y5.next = self.s_cq.val()
            & (self.cfg.addr.val().get_bits::<2>(4) == self.y_qi.val())
            & (self.cfg.addr.val().get_bits::<4>(0) == 5);
        self.s_nstate.next = self.y_state.q.val();
        if self.fail.val() {
            self.s_nstate.next = 0.into();
        }
        self.s_ncum.next = self.new_cum.val();
        self.s_nbm.next = self.new_bm.val();
        if self.s_y0.val() {
            self.s_nstate.next = self.cfg.data.val().get_bits::<2>(1);
        }
        if self.s_y5.val() {
            self.s_ncum.next = self.cfg.data.val().get_bits::<32>(0);
            self.s_nbm.next = 0.into();
        }
        self.q_bm.clock.next = self.clock.val();
        self.q_bm.write_enable.next = self.y_valid.val();
        self.q_bm.write_address.next = self.y_qi.val();
        self.q_bm.write_data.next = self.s_nbm.val();

        // ---- S2: the bypass loads the window and state of its datagram's
        // QP for S3 ----
        self.s_x0.next = self.s_cq.val()
            & (self.cfg.addr.val().get_bits::<2>(4) == self.x_qi.val())
            & (self.cfg.addr.val().get_bits::<4>(0) == 0);
        self.s_x5.next = self.s_cq.val()
            & (self.cfg.addr.val().get_bits::<2>(4) == self.x_qi.val())
            & (self.cfg.addr.val().get_bits::<4>(0) == 5);
        self.q_bm.read_address.next = self.x_qi.val();
        self.s_xstate.next = 0.into();
        self.s_xcum.next = 0.into();
        self.s_xbm.next = 0.into();
        for i in 0..QPS {
            if self.x_qi.val().index() == i {
                self.s_xstate.next = self.q_state[i].q.val();
                self.s_xcum.next = self.q_cum[i].q.val();
                if self.live.q.val().get_bit(i) {
                    self.s_xbm.next = self.q_bm.read_data.val();
                }
            }
        }
        if self.s_x0.val() {
            self.s_xstate.next = self.cfg.data.val().get_bits::<2>(1);
        }
        if self.s_x5.val() {
            self.s_xcum.next = self.cfg.data.val().get_bits::<32>(0);
            self.s_xbm.next = 0.into();
        }
        self.x_cum.next = self.s_xcum.val();
        self.x_bm.next = self.s_xbm.val();
        self.byp.next =
            self.y_valid.val() & (self.y_qi.val() == self.x_qi.val()) & !self.s_x5.val();
        // S3's cumulative PSN, and the mask of the bits at or above its
        // low byte's (the mask travels with the window, so S3 need not
        // decode it).
        self.s_nc.next = self.s_xcum.val().get_bits::<8>(0);
        if self.y_valid.val() & (self.y_qi.val() == self.x_qi.val()) {
            self.s_nc.next = self.s_ncum.val().get_bits::<8>(0);
        }
        self.g_lo.next = 0.into();
        self.g_lo.next = (!self.g_lo.val()) << self.s_nc.val().get_bits::<4>(0);
        self.g_hi.next = 0.into();
        self.g_hi.next = (!self.g_hi.val()) << self.s_nc.val().get_bits::<4>(4);
        self.s_xge.next = 0.into();
        for h in 0..16 {
            self.g_grp.next = 0.into();
            if self.g_hi.val().get_bit(h) {
                self.g_grp.next = 0xFFFF.into();
            }
            if self.s_nc.val().get_bits::<4>(4).index() == h {
                self.g_grp.next = self.g_lo.val();
            }
            self.s_xge.next = self.s_xge.val()
                | (bit_cast::<256, 16>(self.g_grp.val()) << (16 * h).to_bits::<8>());
        }
        if self.x_valid.val() {
            self.y_state.d.next = self.s_xstate.val();
            self.y_cum.d.next = self.s_xcum.val();
            self.y_bm.d.next = self.s_xbm.val();
            self.y_ge.d.next = self.s_xge.val();
            if self.y_valid.val() & (self.y_qi.val() == self.x_qi.val()) {
                self.y_state.d.next = self.s_nstate.val();
                self.y_cum.d.next = self.s_ncum.val();
                self.y_bm.d.next = self.s_nbm.val();
            }
        }

        // ---- the table: S3's window (with its QP's firmware write), then
        // the firmware's writes to the other QPs ----
        self.s_live.next = self.live.q.val();
        if self.y_valid.val() {
            for i in 0..QPS {
                if self.y_qi.val().index() == i {
                    self.q_state[i].d.next = self.s_nstate.val();
                    self.q_cum[i].d.next = self.s_ncum.val();
                    self.s_live.next = self.s_live.val().replace_bit(i, true);
                }
            }
        }
        if self.s_cq.val() {
            for i in 0..QPS {
                if self.cfg.addr.val().get_bits::<2>(4).index() == i {
                    if self.cfg.addr.val().get_bits::<4>(0) == 0 {
                        self.q_state[i].d.next = self.cfg.data.val().get_bits::<2>(1);
                    }
                    if self.cfg.addr.val().get_bits::<4>(0) == 5 {
                        self.q_cum[i].d.next = self.cfg.data.val().get_bits::<32>(0);
                        self.s_live.next = self.s_live.val().replace_bit(i, false);
                    }
                }
            }
        }
        self.live.d.next = self.s_live.val();
    }
}
