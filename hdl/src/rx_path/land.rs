//! [`PathLand`]: stage S2 of [`super::RxPathTable`], an event's update of
//! its entry.

use rust_hdl::prelude::*;

use super::links::LandOut;
use super::{PathMark, UW};

/// S2 of the receive core's path tracker: for a tracked event
/// (`ev_valid & ev_track`), the entry's state before it (`old`, entry
/// `a2`) through the mark ([`PathMark`]), `rx_count` + 1, `ce_count` + CE
/// and echo timestamp = max, into the new state `upd` (0 when none lands).
///
/// What lands with the mark's result (`valid`): the counters, the entry,
/// the reply port and the CE mark; from S2, or, split
/// ([`PathLand::new`]), taken with the event and held until its result
/// ([`super::MARK_STAGES`] cycles later), `busy` meanwhile.
///
/// Every wide value is written out from the ports wherever it is used,
/// never through a local the stages share: Verilator splits a kernel into
/// groups of statements linked by the locals they share, and a shared
/// "tracked" local would tie the mark's inputs to its outputs (UNOPTFLAT).
#[derive(LogicBlock)]
pub struct PathLand {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no arrival in the mark's stages.
    pub rst: Signal<In, Bit>,
    /// Verdict event.
    pub ev_valid: Signal<In, Bit>,
    /// The event is path-tracked.
    pub ev_track: Signal<In, Bit>,
    /// Its path PSN.
    pub ev_psn: Signal<In, Bits<32>>,
    /// Its sender timestamp.
    pub ev_ts: Signal<In, Bits<64>>,
    /// Its UDP source port.
    pub ev_port: Signal<In, Bits<16>>,
    /// Its CE mark.
    pub ev_ce: Signal<In, Bit>,
    /// The entry's state before the event (S2's `old`).
    pub old: Signal<In, Bits<UW>>,
    /// The entry (`qp << 6 | path`).
    pub a2: Signal<In, Bits<8>>,
    /// The mark's result lands this cycle.
    pub valid: Signal<Out, Bit>,
    /// It is not out of window (the entry changes).
    pub ok: Signal<Out, Bit>,
    /// Its entry.
    pub addr: Signal<Out, Bits<8>>,
    /// Its reply port.
    pub port: Signal<Out, Bits<16>>,
    /// The entry's new state, the bitmap's shift pending (0 unless `valid`).
    pub upd: Signal<Out, Bits<UW>>,
    /// The landing, for the ACK queue.
    pub m_acks: LandOut,
    mark: PathMark,
    c_split: Constant<Bit>,
    // Split: S2's `got`, taken with a tracked event.
    cap: DFF<Bits<153>>,
    // Split: an arrival is in the mark's stages (after its event, up to
    // and including its result's cycle).
    busy: DFF<Bit>,
    rx_n: Signal<Local, Bits<32>>,
    ce_n: Signal<Local, Bits<32>>,
    ts_n: Signal<Local, Bits<64>>,
    // What lands: {ce, port[15:0], entry[7:0], ts[63:0], ce_count, rx_count}.
    got: Signal<Local, Bits<153>>,
}

impl PathLand {
    /// The stage with the mark combinational, or `split` into its stages.
    pub fn new(split: bool) -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            ev_valid: Default::default(),
            ev_track: Default::default(),
            ev_psn: Default::default(),
            ev_ts: Default::default(),
            ev_port: Default::default(),
            ev_ce: Default::default(),
            old: Default::default(),
            a2: Default::default(),
            valid: Default::default(),
            ok: Default::default(),
            addr: Default::default(),
            port: Default::default(),
            upd: Default::default(),
            m_acks: Default::default(),
            mark: PathMark::new(split),
            c_split: Constant::new(split),
            cap: Default::default(),
            busy: Default::default(),
            rx_n: Default::default(),
            ce_n: Default::default(),
            ts_n: Default::default(),
            got: Default::default(),
        }
    }
}

impl Logic for PathLand {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, cap, busy);
        self.mark.clock.next = self.clock.val();
        self.mark.rst.next = self.rst.val();
        self.mark.en.next = self.ev_valid.val() & self.ev_track.val();
        self.mark.cum.next = self.old.val().get_bits::<32>(0);
        self.mark.raw.next = self.old.val().get_bits::<512>(32);
        self.mark.k.next = self.old.val().get_bits::<9>(544);
        self.mark.psn.next = self.ev_psn.val();
        self.rx_n.next = 0.into();
        self.ce_n.next = 0.into();
        self.ts_n.next = 0.into();
        if self.ev_valid.val() & self.ev_track.val() {
            self.rx_n.next = self.old.val().get_bits::<32>(553) + 1;
            self.ce_n.next = self.old.val().get_bits::<32>(585);
            if self.ev_ce.val() {
                self.ce_n.next = self.old.val().get_bits::<32>(585) + 1;
            }
            self.ts_n.next = self.old.val().get_bits::<64>(617);
            if self.ev_ts.val() > self.old.val().get_bits::<64>(617) {
                self.ts_n.next = self.ev_ts.val();
            }
        }
        self.got.next = bit_cast::<153, 32>(self.rx_n.val())
            | (bit_cast::<153, 32>(self.ce_n.val()) << 32)
            | (bit_cast::<153, 64>(self.ts_n.val()) << 64)
            | (bit_cast::<153, 8>(self.a2.val()) << 128)
            | (bit_cast::<153, 16>(self.ev_port.val()) << 136);
        if self.ev_ce.val() {
            self.got.next = self.got.val().replace_bit(152, true);
        }
        if self.c_split.val() {
            if self.ev_valid.val() & self.ev_track.val() {
                self.cap.d.next = self.got.val();
                self.busy.d.next = true;
            }
            if self.mark.valid.val() {
                self.busy.d.next = false;
            }
            self.got.next = self.cap.q.val();
        }
        self.upd.next = 0.into();
        if self.mark.valid.val() {
            self.upd.next = bit_cast::<UW, 32>(self.mark.new_cum.val())
                | (bit_cast::<UW, 512>(self.mark.new_raw.val()) << 32)
                | (bit_cast::<UW, 9>(self.mark.new_k.val()) << 544)
                | (bit_cast::<UW, 128>(self.got.val().get_bits::<128>(0)) << 553);
        }
        self.valid.next = self.mark.valid.val();
        // (An arrival out of window changes nothing, as in the engine.)
        self.ok.next = self.mark.code.val() != 2;
        self.addr.next = self.got.val().get_bits::<8>(128);
        self.port.next = self.got.val().get_bits::<16>(136);
        self.m_acks.put.next = self.mark.valid.val() & (self.mark.code.val() != 2);
        self.m_acks.addr.next = self.got.val().get_bits::<8>(128);
        self.m_acks.ce.next = self.got.val().get_bit(152);
        self.m_acks.busy.next = self.busy.q.val();
        if self.rst.val() {
            self.busy.d.next = false;
        }
    }
}
