//! The standalone tracker's path states in registers ([`RxPathRegs`], [`PathFile`]).

use rust_hdl::prelude::*;

use super::PathMark;

/// One QP's `P` paths (`PB` = log2 `P` address bits) in registers, the
/// mark rules alone: one arrival per cycle (`ev_*`), its verdict
/// registered (`res_*`, the cycle after), a path's state on a
/// combinational read port (`rd_*`).
#[derive(LogicBlock)]
pub struct RxPathRegs<const P: usize, const PB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every path back to zero.
    pub rst: Signal<In, Bit>,
    /// An arrival this cycle.
    pub ev_valid: Signal<In, Bit>,
    /// Its path.
    pub ev_path: Signal<In, Bits<PB>>,
    /// Its path PSN.
    pub ev_psn: Signal<In, Bits<32>>,
    /// It was CE-marked.
    pub ev_ce: Signal<In, Bit>,
    /// A verdict (the cycle after an arrival).
    pub res_valid: Signal<Out, Bit>,
    /// The arrival's path.
    pub res_path: Signal<Out, Bits<PB>>,
    /// Its verdict ([`PathVerdict`](super::PathVerdict)).
    pub res_code: Signal<Out, Bits<2>>,
    /// Path to read.
    pub rd_path: Signal<In, Bits<PB>>,
    /// Its cumulative path PSN.
    pub rd_cum: Signal<Out, Bits<32>>,
    /// Its SACK bitmap.
    pub rd_sack: Signal<Out, Bits<256>>,
    /// Its received-packet count.
    pub rd_rx_count: Signal<Out, Bits<32>>,
    /// Its CE-marked packet count.
    pub rd_ce_count: Signal<Out, Bits<32>>,
    file: PathFile<P, PB>,
    v: DFF<Bit>,
    path: DFF<Bits<PB>>,
    code: DFF<Bits<2>>,
    mark: PathMark,
    c_lo: Constant<Bits<352>>,
    rx_n: Signal<Local, Bits<32>>,
    upd: Signal<Local, Bits<352>>,
    shifted: Signal<Local, Bits<256>>,
}

impl<const P: usize, const PB: usize> Default for RxPathRegs<P, PB> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            ev_valid: Default::default(),
            ev_path: Default::default(),
            ev_psn: Default::default(),
            ev_ce: Default::default(),
            res_valid: Default::default(),
            res_path: Default::default(),
            res_code: Default::default(),
            rd_path: Default::default(),
            rd_cum: Default::default(),
            rd_sack: Default::default(),
            rd_rx_count: Default::default(),
            rd_ce_count: Default::default(),
            file: Default::default(),
            v: Default::default(),
            path: Default::default(),
            code: Default::default(),
            mark: Default::default(),
            c_lo: Constant::new(Bits::<352>::mask() >> 32),
            rx_n: Default::default(),
            upd: Default::default(),
            shifted: Default::default(),
        }
    }
}

impl<const P: usize, const PB: usize> Logic for RxPathRegs<P, PB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, v, path, code);
        self.file.clock.next = self.clock.val();
        self.file.rst.next = self.rst.val();
        self.file.sel.next = self.ev_path.val();
        self.file.rd_sel.next = self.rd_path.val();
        self.mark.clock.next = self.clock.val();
        self.mark.rst.next = self.rst.val();
        self.mark.en.next = self.ev_valid.val();
        self.mark.cum.next = self.file.cur.val().get_bits::<32>(0);
        self.mark.raw.next = bit_cast::<512, 256>(self.file.cur.val().get_bits::<256>(32));
        self.mark.k.next = 0.into();
        self.mark.psn.next = self.ev_psn.val();
        // Counted unless out of window; the state moves when new.
        self.upd.next = bit_cast::<352, 288>(self.file.cur.val().get_bits::<288>(0));
        self.shifted.next = 0.into();
        if self.mark.valid.val() & (self.mark.code.val() == 0) {
            self.shifted.next =
                bit_cast::<256, 512>(self.mark.new_raw.val() >> self.mark.new_k.val());
            self.upd.next = bit_cast::<352, 32>(self.mark.new_cum.val())
                | (bit_cast::<352, 256>(self.shifted.val()) << 32);
        }
        // The count's + 1 in 32 bits (it wraps as the engine's), not 352.
        self.rx_n.next = self.file.cur.val().get_bits::<32>(288) + 1;
        self.upd.next = self.upd.val()
            | (bit_cast::<352, 32>(self.rx_n.val()) << 288)
            | (bit_cast::<352, 32>(self.file.cur.val().get_bits::<32>(320)) << 320);
        if self.ev_ce.val() {
            self.upd.next = (self.upd.val() & self.c_lo.val())
                | (bit_cast::<352, 32>(self.file.cur.val().get_bits::<32>(320) + 1) << 320);
        }
        self.file.we.next = self.mark.valid.val() & (self.mark.code.val() != 2);
        self.file.wdata.next = self.upd.val();
        self.v.d.next = self.mark.valid.val();
        self.path.d.next = self.ev_path.val();
        self.code.d.next = self.mark.code.val();
        if self.rst.val() {
            self.v.d.next = false;
            self.path.d.next = 0.into();
            self.code.d.next = 0.into();
        }
        self.res_valid.next = self.v.q.val();
        self.res_path.next = self.path.q.val();
        self.res_code.next = self.code.q.val();
        self.rd_cum.next = self.file.rd.val().get_bits::<32>(0);
        self.rd_sack.next = self.file.rd.val().get_bits::<256>(32);
        self.rd_rx_count.next = self.file.rd.val().get_bits::<32>(288);
        self.rd_ce_count.next = self.file.rd.val().get_bits::<32>(320);
    }
}

/// The path states of [`RxPathRegs`] ({ce\[31:0\], rx\[31:0\], sack\[255:0\],
/// cum\[31:0\]} per path): two combinational read ports, one write port.
#[derive(LogicBlock)]
pub struct PathFile<const P: usize, const PB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every state zero.
    pub rst: Signal<In, Bit>,
    /// Path of the event port (read and write).
    pub sel: Signal<In, Bits<PB>>,
    /// Its state.
    pub cur: Signal<Out, Bits<352>>,
    /// Write `wdata` to path `sel` at the clock edge.
    pub we: Signal<In, Bit>,
    /// Write data.
    pub wdata: Signal<In, Bits<352>>,
    /// Path of the read port.
    pub rd_sel: Signal<In, Bits<PB>>,
    /// Its state.
    pub rd: Signal<Out, Bits<352>>,
    st: [DFF<Bits<352>>; P],
}

impl<const P: usize, const PB: usize> Default for PathFile<P, PB> {
    fn default() -> Self {
        assert_eq!(1 << PB, P, "PathFile: P must be 2^PB");
        Self {
            clock: Default::default(),
            rst: Default::default(),
            sel: Default::default(),
            cur: Default::default(),
            we: Default::default(),
            wdata: Default::default(),
            rd_sel: Default::default(),
            rd: Default::default(),
            st: std::array::from_fn(|_| Default::default()),
        }
    }
}

impl<const P: usize, const PB: usize> Logic for PathFile<P, PB> {
    #[hdl_gen]
    fn update(&mut self) {
        self.cur.next = 0.into();
        self.rd.next = 0.into();
        for i in 0..P {
            self.st[i].clock.next = self.clock.val();
            self.st[i].d.next = self.st[i].q.val();
            if self.sel.val().index() == i {
                self.cur.next = self.st[i].q.val();
                if self.we.val() {
                    self.st[i].d.next = self.wdata.val();
                }
            }
            if self.rd_sel.val().index() == i {
                self.rd.next = self.st[i].q.val();
            }
            if self.rst.val() {
                self.st[i].d.next = 0.into();
            }
        }
    }
}
