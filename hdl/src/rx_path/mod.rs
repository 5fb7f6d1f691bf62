//! Per-path receive tracking: for each path, the cumulative path PSN
//! (`cum`, the first PSN not yet received), the 256-bit SACK bitmap above it
//! (bit `i` is PSN `cum + 1 + i`, as `metaroce_proto::Sack`), and the
//! received and CE-marked packet counters, updated per arrival with the
//! rules of the engine's `RxPath::mark` and `Rx::on_path_arrival`
//! ([`PathMark`], shared by both blocks here).
//!
//! * [`RxPathTable`]: the tracker of the receive core, one entry per
//!   (QP slot, path) in block RAM, with the ACK fields the engine keeps per
//!   path (echo timestamp, reply port, ECE) and the pending-ACK queue; its
//!   parts: the event's update (`PathLand`, `land.rs`), the queue and its
//!   ACK port (`PathAcks`, `acks.rs`), joined by the bus of `links.rs`;
//! * [`RxPathRegs`]: one QP's paths in registers, a standalone block that
//!   checks the mark rules alone ([`rx_path_verilog`], `metaroce-sim-tb`'s
//!   `rx_path` bench).
//!
//! Native rust-hdl: kernels, rust-hdl's `RAM` for the state and
//! `crate::helpers::LutRam` for the ACK queue; rust-hdl's own simulator runs both blocks
//! (the tests below, against the engine). Verified under Verilator
//! (`metaroce-sim-tb`) against the engine.

use rust_hdl::prelude::*;

use crate::rx_place::QPS;

/// Paths per QP: the engine's `metaroce_firmware::MAX_PATHS`.
pub const MAX_PATHS: usize = 64;

/// Verdict per arrival of the standalone tracker (`res_code`), the engine's
/// `PathMark`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PathVerdict {
    /// First arrival: state updated, counted.
    New = 0,
    /// Behind `cum` or already in the bitmap: counted, state unchanged.
    Duplicate = 1,
    /// 2^30 or more ahead of `cum`: dropped, nothing changes.
    OutOfWindow = 2,
}

impl PathVerdict {
    /// Every verdict.
    pub const ALL: [PathVerdict; 3] = [Self::New, Self::Duplicate, Self::OutOfWindow];
}

mod acks;
mod land;
mod lead_ones;
mod links;
mod mark;
mod norm;
mod regs;
#[cfg(test)]
mod tests;

pub use lead_ones::LeadOnes;
pub use mark::{MARK_STAGES, MarkMask, MarkPost, MarkPre, PathMark};
pub use regs::{PathFile, RxPathRegs};

use acks::PathAcks;
use land::PathLand;
use norm::PathNorm;

/// Verilog source of the standalone tracker ([`RxPathRegs`]) for `paths`
/// paths of one QP (a power of two, 2 to [`MAX_PATHS`]); top module `top`,
/// ports as the block's fields.
///
/// # Panics
/// If `paths` is not a power of two in 2..=[`MAX_PATHS`].
pub fn rx_path_verilog(paths: usize) -> String {
    fn emit<U: Block>(mut uut: U) -> String {
        uut.connect_all();
        generate_verilog(&uut)
    }
    match paths {
        2 => emit(RxPathRegs::<2, 1>::default()),
        4 => emit(RxPathRegs::<4, 2>::default()),
        8 => emit(RxPathRegs::<8, 3>::default()),
        16 => emit(RxPathRegs::<16, 4>::default()),
        32 => emit(RxPathRegs::<32, 5>::default()),
        64 => emit(RxPathRegs::<64, 6>::default()),
        other => panic!("unsupported path count {other}"),
    }
}

/// Entries of [`RxPathTable`]: one per (QP slot, path).
pub const ENTRIES: usize = QPS * MAX_PATHS;

/// Bits of an entry's state in RAM: {echo_ts\[63:0\], ce\[31:0\], rx\[31:0\],
/// sack\[255:0\], cum\[31:0\]}.
const SW: usize = 416;

/// Bits of an entry's state in the pipeline (S2, W1), the bitmap's shift
/// pending ([`PathMark`]): {echo_ts\[63:0\], ce\[31:0\], rx\[31:0\], k\[8:0\],
/// raw\[511:0\], cum\[31:0\]} (split, W1's `raw` is in two parts: `PathNorm`).
const UW: usize = 681;

/// The receive core's path tracker at `W`-bit beats: one entry per (QP
/// slot, path), address `qp << 6 | path`, in two block RAMs (rust-hdl
/// `RAM`, registered reads) with one write port (both written alike) and
/// one read port each: A for arrivals, B for ACKs.
///
/// Pipeline, one arrival per cycle, in step with `RxPlace`:
/// * S0: `rd_addr` (the packet's QP slot and path) is read from RAM A;
/// * S1: `rd_cum` is the entry's `cum`, forwarded from the S2 update in
///   flight (one-cycle mark only), then from the two updates not yet in
///   the RAM read of S0 (the write-back registers W1 and W2), so arrivals
///   on one entry see each other; `RxPlace` decides the path window from it;
/// * S2: the event (`ev_*`, `RxPlace`'s verdict event): when `ev_track`, the
///   entry is updated as `Rx::on_path_arrival` does ([`PathMark`],
///   `rx_count` + 1, `ce_count` + CE, echo timestamp = max, reply port,
///   ECE) into W1, and queued for an ACK unless already queued.
///   `ev_qhit` records `ev_conn_cum` as the QP's connection cumulative PSN
///   and `ev_live` as whether the QP still receives (sends ACKs);
/// * W1: the update is written to both RAMs (a register between the mark
///   and the RAMs' inputs); W2 holds it one more cycle for S1's forwarding.
///
/// The mark is one cycle (S2 to S2 through S1's forwarding) where tracked
/// datagrams can come back to back (`W` ≥ 128: a 36-byte datagram is 3
/// beats or fewer). At `W` = 64 (5 beats at least, so tracked events are
/// 5 cycles apart or more) it is split ([`PathMark::new`]): the update
/// reaches W1 [`MARK_STAGES`] cycles after the event, which an arrival's
/// S1 at least 4 cycles after it still sees through W1, and while an
/// arrival is in the stages the ACK queue shows empty (`aq_valid` low).
/// S1 then takes W1's state shifted as the RAMs get it, so the split
/// mark's input is always normalised.
/// The queue, the ECE flag and the entry's `seen` bit change with the
/// update; the QP's connection PSN and liveness at the event.
///
/// ACK port: `aq_valid` says the queue is not empty; `aq_pop` takes its
/// head, and in the next cycle (only) `ak_*` hold that entry's fields as of
/// before this cycle's arrival (so an arrival in the same cycle re-queues
/// it), its ECE flag (cleared), and its QP's connection cumulative PSN and
/// liveness.
#[derive(LogicBlock)]
pub struct RxPathTable<const W: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every entry back to zero, queue empty.
    pub rst: Signal<In, Bit>,
    /// S0: entry to read (`qp << 6 | path`).
    pub rd_addr: Signal<In, Bits<8>>,
    /// S0: a read this cycle (`RxPlace::trk_rd_en`); S1's forwarding mux
    /// and `rd_cum` are computed only after one (`rd_cum` is 0 otherwise).
    pub rd_en: Signal<In, Bit>,
    /// S1: that entry's cumulative path PSN.
    pub rd_cum: Signal<Out, Bits<32>>,
    /// S2: verdict event.
    pub ev_valid: Signal<In, Bit>,
    /// S2: the engine path-tracks this packet (not out of window).
    pub ev_track: Signal<In, Bit>,
    /// S2: the packet's QP was found; `ev_conn_cum` is valid.
    pub ev_qhit: Signal<In, Bit>,
    /// S2: path PSN.
    pub ev_psn: Signal<In, Bits<32>>,
    /// S2: sender timestamp.
    pub ev_ts: Signal<In, Bits<64>>,
    /// S2: UDP source port (the ACK's destination port).
    pub ev_port: Signal<In, Bits<16>>,
    /// S2: IP ECN CE mark.
    pub ev_ce: Signal<In, Bit>,
    /// S2: the QP's connection cumulative PSN after the verdict.
    pub ev_conn_cum: Signal<In, Bits<32>>,
    /// S2: the QP is still RTR or RTS after the verdict.
    pub ev_live: Signal<In, Bit>,
    /// An entry waits for an ACK.
    pub aq_valid: Signal<Out, Bit>,
    /// Take the head of the ACK queue.
    pub aq_pop: Signal<In, Bit>,
    /// ACK: QP slot.
    pub ak_qp: Signal<Out, Bits<2>>,
    /// ACK: path.
    pub ak_path: Signal<Out, Bits<6>>,
    /// ACK: cumulative path PSN.
    pub ak_cum: Signal<Out, Bits<32>>,
    /// ACK: SACK bitmap.
    pub ak_sack: Signal<Out, Bits<256>>,
    /// ACK: packets received on the path.
    pub ak_rx: Signal<Out, Bits<32>>,
    /// ACK: CE-marked packets received on the path.
    pub ak_ce: Signal<Out, Bits<32>>,
    /// ACK: largest timestamp received on the path.
    pub ak_ts: Signal<Out, Bits<64>>,
    /// ACK: UDP source port of the path's last packet.
    pub ak_port: Signal<Out, Bits<16>>,
    /// ACK: a CE mark arrived since the path's last ACK.
    pub ak_ece: Signal<Out, Bit>,
    /// ACK: the QP's connection cumulative PSN.
    pub ak_conn_cum: Signal<Out, Bits<32>>,
    /// ACK: the QP was still RTR or RTS at its last event (else no ACK:
    /// the engine's failed QP sends none).
    pub ak_live: Signal<Out, Bit>,
    // State RAM A (the state word), read by arrivals; RAM B is the ACKs'.
    ram_a: RAM<Bits<SW>, 8>,
    land: PathLand,
    acks: PathAcks,
    norm: PathNorm,
    c_split: Constant<Bit>,
    // S1: the address read in S0, and whether the entry was ever written.
    a1: DFF<Bits<8>>,
    rd_seen: DFF<Bit>,
    rd_v: DFF<Bit>,
    // S2: the entry and its state before the event.
    a2: DFF<Bits<8>>,
    old: DFF<Bits<UW>>,
    // Write-back: W1 (being written to the RAMs), W2 (written last edge).
    // W1 is loaded, and `wn` computed, only when valid: both are used only
    // then (the RAM writes, W2 and the ACK port's snapshot follow `w1_v`).
    // An arrival out of window changes nothing, as in the engine (RxPlace
    // tracks none, its path window being decided on the same `cum`).
    w1: DFF<Bits<{ UW + 16 }>>,
    w1_addr: DFF<Bits<8>>,
    w1_v: DFF<Bit>,
    w2: DFF<Bits<SW>>,
    w2_addr: DFF<Bits<8>>,
    w2_v: DFF<Bit>,
    // Per entry: written since reset.
    seen: DFF<Bits<ENTRIES>>,
    s1: Signal<Local, Bits<UW>>,
    nw: Signal<Local, Bits<SW>>,
    wn: Signal<Local, Bits<{ SW + 16 }>>,
}

impl<const W: usize> Default for RxPathTable<W> {
    fn default() -> Self {
        // Tracked datagrams (base header and ICRC at least) are this many
        // beats apart at W bits; split when the mark's stages fit between.
        let gap = (metaroce_proto::BASE_LEN + metaroce_proto::ICRC_LEN) * 8;
        let split = gap.div_ceil(W) >= MARK_STAGES + 2;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            rd_addr: Default::default(),
            rd_en: Default::default(),
            rd_cum: Default::default(),
            ev_valid: Default::default(),
            ev_track: Default::default(),
            ev_qhit: Default::default(),
            ev_psn: Default::default(),
            ev_ts: Default::default(),
            ev_port: Default::default(),
            ev_ce: Default::default(),
            ev_conn_cum: Default::default(),
            ev_live: Default::default(),
            aq_valid: Default::default(),
            aq_pop: Default::default(),
            ak_qp: Default::default(),
            ak_path: Default::default(),
            ak_cum: Default::default(),
            ak_sack: Default::default(),
            ak_rx: Default::default(),
            ak_ce: Default::default(),
            ak_ts: Default::default(),
            ak_port: Default::default(),
            ak_ece: Default::default(),
            ak_conn_cum: Default::default(),
            ak_live: Default::default(),
            ram_a: Default::default(),
            land: PathLand::new(split),
            acks: PathAcks::new(split),
            norm: PathNorm::new(split),
            c_split: Constant::new(split),
            a1: Default::default(),
            rd_seen: Default::default(),
            rd_v: Default::default(),
            a2: Default::default(),
            old: Default::default(),
            w1: Default::default(),
            w1_addr: Default::default(),
            w1_v: Default::default(),
            w2: Default::default(),
            w2_addr: Default::default(),
            w2_v: Default::default(),
            seen: Default::default(),
            s1: Default::default(),
            nw: Default::default(),
            wn: Default::default(),
        }
    }
}

impl<const W: usize> Logic for RxPathTable<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, a1, rd_seen, rd_v, a2, old, w1, w1_addr, w1_v, w2, w2_addr, w2_v, seen
        );
        self.ram_a.read_clock.next = self.clock.val();
        self.ram_a.write_clock.next = self.clock.val();
        self.land.clock.next = self.clock.val();
        self.acks.clock.next = self.clock.val();
        self.land.rst.next = self.rst.val();
        self.acks.rst.next = self.rst.val();

        // ---- S2: the event's update of its entry (`land`). ----
        self.land.ev_valid.next = self.ev_valid.val();
        self.land.ev_track.next = self.ev_track.val();
        self.land.ev_psn.next = self.ev_psn.val();
        self.land.ev_ts.next = self.ev_ts.val();
        self.land.ev_port.next = self.ev_port.val();
        self.land.ev_ce.next = self.ev_ce.val();
        self.land.old.next = self.old.q.val();
        self.land.a2.next = self.a2.q.val();
        links::LandOut::join(&mut self.land.m_acks, &mut self.acks.s_land);

        // ---- Write-back: W1 applies the pending shift (`wn` is 0 unless `w1_v`). ----
        if self.land.valid.val() {
            self.w1.d.next = bit_cast::<{ UW + 16 }, UW>(self.land.upd.val())
                | (bit_cast::<{ UW + 16 }, 16>(self.land.port.val()) << 681);
        }
        self.w1_addr.d.next = self.land.addr.val();
        self.w1_v.d.next = self.land.valid.val() & self.land.ok.val();
        self.norm.en.next = self.w1_v.q.val();
        self.norm.raw.next = self.w1.q.val().get_bits::<512>(32);
        self.norm.k.next = self.w1.q.val().get_bits::<9>(544);
        self.wn.next = 0.into();
        if self.w1_v.q.val() {
            self.wn.next = bit_cast::<{ SW + 16 }, 32>(self.w1.q.val().get_bits::<32>(0))
                | (bit_cast::<{ SW + 16 }, 256>(self.norm.out.val()) << 32)
                | (bit_cast::<{ SW + 16 }, 144>(self.w1.q.val().get_bits::<144>(553)) << 288);
        }
        // ---- S1: the freshest state of the entry read in S0 (after a read only). ----
        self.nw.next = 0.into();
        self.s1.next = 0.into();
        if self.rd_v.q.val() {
            if self.rd_seen.q.val() {
                self.nw.next = self.ram_a.read_data.val();
            }
            if self.w2_v.q.val() & (self.w2_addr.q.val() == self.a1.q.val()) {
                self.nw.next = self.w2.q.val();
            }
            // Split, W1's state shifted too: S2's state is normalised (k = 0).
            if self.c_split.val() & self.w1_v.q.val() & (self.w1_addr.q.val() == self.a1.q.val()) {
                self.nw.next = self.wn.val().get_bits::<SW>(0);
            }
            self.s1.next = bit_cast::<UW, 288>(self.nw.val().get_bits::<288>(0))
                | (bit_cast::<UW, 128>(self.nw.val().get_bits::<128>(288)) << 553);
            if !self.c_split.val() & self.w1_v.q.val() & (self.w1_addr.q.val() == self.a1.q.val()) {
                self.s1.next = self.w1.q.val().get_bits::<UW>(0);
            }
            // (Split, the next arrival on the entry comes after W1.)
            if !self.c_split.val()
                & self.ev_valid.val()
                & self.ev_track.val()
                & (self.a2.q.val() == self.a1.q.val())
            {
                self.s1.next = self.land.upd.val();
            }
        }
        self.rd_cum.next = self.s1.val().get_bits::<32>(0);
        self.old.d.next = self.s1.val();
        self.a2.d.next = self.a1.q.val();
        // ---- S0: read. ----
        self.a1.d.next = self.rd_addr.val();
        self.rd_v.d.next = self.rd_en.val();
        self.rd_seen.d.next = self.seen.q.val().get_bit(self.rd_addr.val().index());
        self.ram_a.read_address.next = self.rd_addr.val();
        self.w2.d.next = self.wn.val().get_bits::<SW>(0);
        self.w2_addr.d.next = self.w1_addr.q.val();
        self.w2_v.d.next = self.w1_v.q.val();
        self.ram_a.write_enable.next = self.w1_v.q.val();
        self.ram_a.write_address.next = self.w1_addr.q.val();
        self.ram_a.write_data.next = self.wn.val().get_bits::<SW>(0);
        if self.land.valid.val() & self.land.ok.val() {
            self.seen.d.next = self
                .seen
                .q
                .val()
                .replace_bit(self.land.addr.val().index(), true);
        }

        // ---- ACK queue and port (`acks`), RAM B written with RAM A. ----
        self.acks.land_seen.next = self.seen.q.val().get_bit(self.land.addr.val().index());
        self.acks.wb_v.next = self.w1_v.q.val();
        self.acks.wb_addr.next = self.w1_addr.q.val();
        self.acks.wb.next = self.wn.val();
        self.acks.qhit.next = self.ev_valid.val() & self.ev_qhit.val();
        self.acks.qp.next = self.a2.q.val().get_bits::<2>(6);
        self.acks.conn.next = self.ev_conn_cum.val();
        self.acks.live.next = self.ev_live.val();
        self.acks.aq_pop.next = self.aq_pop.val();
        self.aq_valid.next = self.acks.aq_valid.val();
        self.ak_qp.next = self.acks.ak_qp.val();
        self.ak_path.next = self.acks.ak_path.val();
        self.ak_ece.next = self.acks.ak_ece.val();
        self.ak_conn_cum.next = self.acks.ak_conn_cum.val();
        self.ak_live.next = self.acks.ak_live.val();
        self.ak_cum.next = self.acks.ak_state.val().get_bits::<32>(0);
        self.ak_sack.next = self.acks.ak_state.val().get_bits::<256>(32);
        self.ak_rx.next = self.acks.ak_state.val().get_bits::<32>(288);
        self.ak_ce.next = self.acks.ak_state.val().get_bits::<32>(320);
        self.ak_ts.next = self.acks.ak_state.val().get_bits::<64>(352);
        self.ak_port.next = self.acks.ak_state.val().get_bits::<16>(416);

        if self.rst.val() {
            self.seen.d.next = 0.into();
            self.w1_v.d.next = false;
            self.w2_v.d.next = false;
        }
    }
}
