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
///
/// Split ([`PlaceConn::new`] with `split` true, where a datagram whose
/// verdict reads the window is at least three cycles behind the one
/// before): the bitmap after the verdict comes a cycle later (S4,
/// [`ConnAccept`](super::ConnAccept) split), so the window goes into the
/// table at S4's edge, from S4's registers (`w_*`: the state and
/// cumulative PSN S3 computed, with S3's firmware write) and only when S3
/// accepted the PSN (`take`: a verdict that does not only rewrites what it
/// loaded). There is no bypass from S3: the datagram after is in S2 when
/// the table holds the window. Only a datagram the parser drops can come
/// closer (one or two cycles behind), and its verdict reads no window; its
/// event's state and cumulative PSN (`state`, `cum`) come from S4's
/// registers when S4 holds an update of its QP (in S3, one cycle behind;
/// loaded in S2, two cycles behind). `byp` is then always low.
#[derive(LogicBlock)]
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
    /// S3: the PSN is accepted (split: S4 writes the window only then).
    pub take: Signal<In, Bit>,
    /// S3: the verdict fails the QP (ERR).
    pub fail: Signal<In, Bit>,
    /// S3: the cumulative connection PSN after the verdict.
    pub new_cum: Signal<In, Bits<32>>,
    /// S3 (split: S4): the bitmap after the verdict.
    pub new_bm: Signal<In, Bits<256>>,
    /// S3 (registered; split: S4's result of the QP when it holds one): the
    /// QP's state.
    pub state: Signal<Out, Bits<2>>,
    /// S3 (registered; split: as `state`): its cumulative connection PSN.
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
    /// S2: the mask of the cumulative PSN S3 gets (`ge`'s next value; 0
    /// while `x_valid` is low).
    pub x_ge: Signal<Out, Bits<256>>,
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
    c_split: Constant<Bit>,
    // Split: S4's write of the window (state, cumulative PSN, firmware's
    // clear in S3) and its locals (this cycle's firmware write to word 5,
    // S4 of the QP in S2, in S3).
    w_v: DFF<Bit>,
    w_qi: DFF<Bits<2>>,
    w_state: DFF<Bits<2>>,
    w_cum: DFF<Bits<32>>,
    w_clr: DFF<Bit>,
    s_w5: Signal<Local, Bit>,
    s_wx: Signal<Local, Bit>,
    s_wy: Signal<Local, Bit>,
    // The bitmap's write: address, enable.
    s_bqi: Signal<Local, Bits<2>>,
    s_bwe: Signal<Local, Bit>,
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

impl PlaceConn {
    /// The window written back at S3's edge (`split` false) or S4's.
    pub fn new(split: bool) -> Self {
        Self {
            clock: Default::default(),
            cfg: Default::default(),
            x_valid: Default::default(),
            x_qi: Default::default(),
            y_valid: Default::default(),
            y_qi: Default::default(),
            take: Default::default(),
            fail: Default::default(),
            new_cum: Default::default(),
            new_bm: Default::default(),
            state: Default::default(),
            cum: Default::default(),
            bm: Default::default(),
            ge: Default::default(),
            x_cum: Default::default(),
            x_bm: Default::default(),
            x_ge: Default::default(),
            byp: Default::default(),
            q_state: Default::default(),
            q_cum: Default::default(),
            q_bm: Default::default(),
            live: Default::default(),
            y_state: Default::default(),
            y_cum: Default::default(),
            y_bm: Default::default(),
            y_ge: Default::default(),
            s_cq: Default::default(),
            s_x0: Default::default(),
            s_x5: Default::default(),
            s_xstate: Default::default(),
            s_xcum: Default::default(),
            s_xbm: Default::default(),
            s_nc: Default::default(),
            s_xge: Default::default(),
            g_lo: Default::default(),
            g_hi: Default::default(),
            g_grp: Default::default(),
            c_split: Constant::new(split),
            w_v: Default::default(),
            w_qi: Default::default(),
            w_state: Default::default(),
            w_cum: Default::default(),
            w_clr: Default::default(),
            s_w5: Default::default(),
            s_wx: Default::default(),
            s_wy: Default::default(),
            s_bqi: Default::default(),
            s_bwe: Default::default(),
            s_y0: Default::default(),
            s_y5: Default::default(),
            s_nstate: Default::default(),
            s_ncum: Default::default(),
            s_nbm: Default::default(),
            s_live: Default::default(),
        }
    }
}

impl Logic for PlaceConn {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, live, y_state, y_cum, y_bm, y_ge, w_v, w_qi, w_state, w_cum, w_clr
        );
        for i in 0..QPS {
            self.q_state[i].clock.next = self.clock.val();
            self.q_state[i].d.next = self.q_state[i].q.val();
            self.q_cum[i].clock.next = self.clock.val();
            self.q_cum[i].d.next = self.q_cum[i].q.val();
        }
        // Split: S4 holds an update of the QP in S3 (one cycle behind) or
        // in S2 (two cycles behind).
        self.s_wy.next =
            self.c_split.val() & self.w_v.q.val() & (self.w_qi.q.val() == self.y_qi.val());
        self.s_wx.next =
            self.c_split.val() & self.w_v.q.val() & (self.w_qi.q.val() == self.x_qi.val());
        // (The outputs read no local that S3's update below reads, so the
        // verdict's use of them is no combinational loop to Verilator.)
        self.state.next = self.y_state.q.val();
        self.cum.next = self.y_cum.q.val();
        if self.c_split.val() & self.w_v.q.val() & (self.w_qi.q.val() == self.y_qi.val()) {
            self.state.next = self.w_state.q.val();
            self.cum.next = self.w_cum.q.val();
        }
        self.bm.next = self.y_bm.q.val();
        self.ge.next = self.y_ge.q.val();
        // ---- S3: the QP's window and state after the verdict, then this
        // cycle's firmware write to them (the firmware wins): to the table
        // (split: to S4), and the next datagram's if of this QP ----
        self.s_cq.next = self.cfg.we.val() & (self.cfg.addr.val().get_bits::<3>(6) == 0);
        self.s_y0.next = self.s_cq.val()
            & (self.cfg.addr.val().get_bits::<2>(4) == self.y_qi.val())
            & (self.cfg.addr.val().get_bits::<4>(0) == 0);
        self.s_y5.next = self.s_cq.val()
            & (self.cfg.addr.val().get_bits::<2>(4) == self.y_qi.val())
            & (self.cfg.addr.val().get_bits::<4>(0) == 5);
        self.s_nstate.next = self.y_state.q.val();
        if self.s_wy.val() {
            self.s_nstate.next = self.w_state.q.val();
        }
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
        self.w_v.d.next = self.c_split.val() & self.y_valid.val() & self.take.val();
        if self.c_split.val() & self.y_valid.val() {
            self.w_qi.d.next = self.y_qi.val();
            self.w_state.d.next = self.s_nstate.val();
            self.w_cum.d.next = self.s_ncum.val();
            self.w_clr.d.next = self.s_y5.val();
        }
        // ---- split, S4: the bitmap after the verdict (a cycle later), with
        // S3's and this cycle's firmware write to word 5 ----
        self.s_w5.next = self.s_cq.val()
            & (self.cfg.addr.val().get_bits::<2>(4) == self.w_qi.q.val())
            & (self.cfg.addr.val().get_bits::<4>(0) == 5);
        self.s_bqi.next = self.y_qi.val();
        self.s_bwe.next = self.y_valid.val();
        if self.c_split.val() {
            self.s_bqi.next = self.w_qi.q.val();
            self.s_bwe.next = self.w_v.q.val();
            self.s_nbm.next = self.new_bm.val();
            if self.w_clr.q.val() | self.s_w5.val() {
                self.s_nbm.next = 0.into();
            }
        }
        self.q_bm.clock.next = self.clock.val();
        self.q_bm.write_enable.next = self.s_bwe.val();
        self.q_bm.write_address.next = self.s_bqi.val();
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
        if self.s_wx.val() {
            self.s_xstate.next = self.w_state.q.val();
            self.s_xcum.next = self.w_cum.q.val();
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
        self.byp.next = !self.c_split.val()
            & self.y_valid.val()
            & (self.y_qi.val() == self.x_qi.val())
            & !self.s_x5.val();
        // S3's cumulative PSN, and the mask of the bits at or above its
        // low byte's (the mask travels with the window, so S3 need not
        // decode it).
        self.s_nc.next = self.s_xcum.val().get_bits::<8>(0);
        if !self.c_split.val() & self.y_valid.val() & (self.y_qi.val() == self.x_qi.val()) {
            self.s_nc.next = self.s_ncum.val().get_bits::<8>(0);
        }
        // Only while S2 holds a datagram (0 otherwise): S3 loads the mask
        // only then, and ConnAccept reads `x_ge` only then (a simulator
        // skips the 16 group shifts in the other cycles).
        self.g_lo.next = 0.into();
        self.g_hi.next = 0.into();
        self.g_grp.next = 0.into();
        self.s_xge.next = 0.into();
        if self.x_valid.val() {
            self.g_lo.next = (!self.g_lo.val()) << self.s_nc.val().get_bits::<4>(0);
            self.g_hi.next = (!self.g_hi.val()) << self.s_nc.val().get_bits::<4>(4);
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
        }
        self.x_ge.next = self.s_xge.val();
        if self.x_valid.val() {
            self.y_state.d.next = self.s_xstate.val();
            self.y_cum.d.next = self.s_xcum.val();
            self.y_bm.d.next = self.s_xbm.val();
            self.y_ge.d.next = self.s_xge.val();
            if !self.c_split.val() & self.y_valid.val() & (self.y_qi.val() == self.x_qi.val()) {
                self.y_state.d.next = self.s_nstate.val();
                self.y_cum.d.next = self.s_ncum.val();
                self.y_bm.d.next = self.s_nbm.val();
            }
        }

        // ---- the table: S3's window (split: S4's, when S3 accepted the
        // PSN) with its QP's firmware write, then the firmware's writes to
        // the other QPs ----
        self.s_live.next = self.live.q.val();
        if !self.c_split.val() & self.y_valid.val() {
            for i in 0..QPS {
                if self.y_qi.val().index() == i {
                    self.q_state[i].d.next = self.s_nstate.val();
                    self.q_cum[i].d.next = self.s_ncum.val();
                    self.s_live.next = self.s_live.val().replace_bit(i, true);
                }
            }
        }
        if self.w_v.q.val() {
            for i in 0..QPS {
                if self.w_qi.q.val().index() == i {
                    self.q_state[i].d.next = self.w_state.q.val();
                    self.q_cum[i].d.next = self.w_cum.q.val();
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
