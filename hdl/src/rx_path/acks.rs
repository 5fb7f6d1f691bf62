//! [`PathAcks`]: the pending-ACK queue of [`super::RxPathTable`] and its
//! ACK port.

use rust_hdl::prelude::*;

use super::links::LandIn;
use super::{ENTRIES, SW};
use crate::helpers::LutRam;
use crate::rx_place::QPS;

/// The receive core's pending-ACK queue: each entry queued when an update
/// lands on it (`s_land`) unless already queued, so it never overflows;
/// its ECE flag (a CE mark since the entry's last ACK); per QP slot, the
/// connection cumulative PSN and liveness of the last event that found the
/// QP (`qhit`); and the entries' states for the ACKs in RAM B, written
/// with RAM A from the write-back register (`wb_*`).
///
/// `aq_valid` says the queue is not empty (and, split, no arrival is in
/// the mark's stages: its snapshot would miss the arrival); `aq_pop` takes
/// its head, and in the next cycle (only) `ak_*` hold that entry's fields
/// as of before this cycle's arrival (so an arrival in the same cycle
/// re-queues it: a pop in the same cycle as an arrival comes first).
#[derive(LogicBlock)]
pub struct PathAcks {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: queue empty, no ECE, every QP not live.
    pub rst: Signal<In, Bit>,
    /// The update landing this cycle.
    pub s_land: LandIn,
    /// Its entry was written since reset (the table's `seen` bit).
    pub land_seen: Signal<In, Bit>,
    /// Write-back: an entry's state is written this cycle.
    pub wb_v: Signal<In, Bit>,
    /// Write-back: its entry.
    pub wb_addr: Signal<In, Bits<8>>,
    /// Write-back: {reply port, state word}.
    pub wb: Signal<In, Bits<{ SW + 16 }>>,
    /// An event found its QP: record `conn` and `live` for slot `qp`.
    pub qhit: Signal<In, Bit>,
    /// The event's QP slot.
    pub qp: Signal<In, Bits<2>>,
    /// The QP's connection cumulative PSN after the event.
    pub conn: Signal<In, Bits<32>>,
    /// The QP still receives.
    pub live: Signal<In, Bit>,
    /// An entry waits for an ACK.
    pub aq_valid: Signal<Out, Bit>,
    /// Take the head of the queue.
    pub aq_pop: Signal<In, Bit>,
    /// ACK: QP slot.
    pub ak_qp: Signal<Out, Bits<2>>,
    /// ACK: path.
    pub ak_path: Signal<Out, Bits<6>>,
    /// ACK: {reply port, state word} of the entry.
    pub ak_state: Signal<Out, Bits<{ SW + 16 }>>,
    /// ACK: a CE mark arrived since the path's last ACK.
    pub ak_ece: Signal<Out, Bit>,
    /// ACK: the QP's connection cumulative PSN.
    pub ak_conn_cum: Signal<Out, Bits<32>>,
    /// ACK: the QP was still RTR or RTS at its last event.
    pub ak_live: Signal<Out, Bit>,
    ram_b: RAM<Bits<{ SW + 16 }>, 8>,
    c_split: Constant<Bit>,
    queue: LutRam<8, 8>,
    // Per entry: queued, CE since the last ACK. Not split, flip-flops
    // (a landing and a pop can meet: two writes a cycle). Split, in
    // distributed RAM (one write a cycle; read at the landing's entry and
    // at the head), valid only where the entry was written since reset
    // (`land_seen`; its first landing writes both).
    pend: DFF<Bits<ENTRIES>>,
    ece: DFF<Bits<ENTRIES>>,
    pend_m: LutRam<1, 8>,
    ece_m: LutRam<1, 8>,
    // Per QP slot: connection cumulative PSN, still receiving.
    conn_cum: [DFF<Bits<32>>; QPS],
    lv: DFF<Bits<QPS>>,
    q_wr: DFF<Bits<9>>,
    q_rd: DFF<Bits<9>>,
    // ACK fields taken at a pop; `k_fwd`: the entry's state is the write-back's.
    k_qp: DFF<Bits<2>>,
    k_path: DFF<Bits<6>>,
    k_ece: DFF<Bit>,
    k_conn: DFF<Bits<32>>,
    k_live: DFF<Bit>,
    k_fwd: DFF<Bit>,
    k_w: DFF<Bits<{ SW + 16 }>>,
    head: Signal<Local, Bits<8>>,
    pop: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    fl: Signal<Local, Bits<ENTRIES>>,
    // The landing's entry is queued; the head's ECE flag.
    queued: Signal<Local, Bit>,
    ece_h: Signal<Local, Bit>,
}

impl PathAcks {
    /// The queue beside a combinational mark, or a `split` one (whose
    /// landings never meet a pop: the re-queue of a popped entry is not built).
    pub fn new(split: bool) -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            s_land: Default::default(),
            land_seen: Default::default(),
            wb_v: Default::default(),
            wb_addr: Default::default(),
            wb: Default::default(),
            qhit: Default::default(),
            qp: Default::default(),
            conn: Default::default(),
            live: Default::default(),
            aq_valid: Default::default(),
            aq_pop: Default::default(),
            ak_qp: Default::default(),
            ak_path: Default::default(),
            ak_state: Default::default(),
            ak_ece: Default::default(),
            ak_conn_cum: Default::default(),
            ak_live: Default::default(),
            ram_b: Default::default(),
            c_split: Constant::new(split),
            queue: Default::default(),
            pend: Default::default(),
            ece: Default::default(),
            pend_m: Default::default(),
            ece_m: Default::default(),
            conn_cum: std::array::from_fn(|_| Default::default()),
            lv: Default::default(),
            q_wr: Default::default(),
            q_rd: Default::default(),
            k_qp: Default::default(),
            k_path: Default::default(),
            k_ece: Default::default(),
            k_conn: Default::default(),
            k_live: Default::default(),
            k_fwd: Default::default(),
            k_w: Default::default(),
            head: Default::default(),
            pop: Default::default(),
            push: Default::default(),
            fl: Default::default(),
            queued: Default::default(),
            ece_h: Default::default(),
        }
    }
}

impl Logic for PathAcks {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, pend, ece, lv, q_wr, q_rd, k_qp, k_path, k_ece, k_conn, k_live, k_fwd, k_w
        );
        for i in 0..QPS {
            self.conn_cum[i].clock.next = self.clock.val();
            self.conn_cum[i].d.next = self.conn_cum[i].q.val();
        }
        self.ram_b.read_clock.next = self.clock.val();
        self.ram_b.write_clock.next = self.clock.val();
        self.queue.clock.next = self.clock.val();
        self.pend_m.clock.next = self.clock.val();
        self.ece_m.clock.next = self.clock.val();
        self.ram_b.write_enable.next = self.wb_v.val();
        self.ram_b.write_address.next = self.wb_addr.val();
        self.ram_b.write_data.next = self.wb.val();
        if self.qhit.val() {
            for i in 0..QPS {
                if self.qp.val().index() == i {
                    self.conn_cum[i].d.next = self.conn.val();
                }
            }
            self.lv.d.next = self
                .lv
                .q
                .val()
                .replace_bit(self.qp.val().index(), self.live.val());
        }

        // The queue: a pop in the same cycle as an arrival comes first.
        self.head.next = self.queue.read_data.val();
        self.aq_valid.next = (self.q_wr.q.val() != self.q_rd.q.val()) & !self.s_land.busy.val();
        self.pop.next =
            self.aq_pop.val() & (self.q_wr.q.val() != self.q_rd.q.val()) & !self.s_land.busy.val();
        self.pend_m.read_address.next = self.s_land.addr.val();
        // The head from the queue's port, not `head`: a local shared with
        // the RAM's read would be a loop to Verilator (UNOPTFLAT).
        self.ece_m.read_address.next = self.queue.read_data.val();
        self.queued.next = self.pend.q.val().get_bit(self.s_land.addr.val().index());
        self.ece_h.next = self.ece.q.val().get_bit(self.queue.read_data.val().index());
        if self.c_split.val() {
            self.queued.next = self.land_seen.val() & self.pend_m.read_data.val().any();
            self.ece_h.next = self.ece_m.read_data.val().any();
        }
        // (Split, a landing never meets a pop: `busy` holds the queue.)
        self.push.next = self.s_land.put.val()
            & (!self.queued.val()
                | (!self.c_split.val()
                    & self.pop.val()
                    & (self.head.val() == self.s_land.addr.val())));
        self.queue.read_address.next = self.q_rd.q.val().get_bits::<8>(0);
        self.queue.write_enable.next = self.push.val();
        self.queue.write_address.next = self.q_wr.q.val().get_bits::<8>(0);
        self.queue.write_data.next = self.s_land.addr.val();
        self.ram_b.read_address.next = self.head.val();
        if self.push.val() {
            self.q_wr.d.next = self.q_wr.q.val() + 1;
        }
        // Split: one write a cycle, the landing's (queued; its CE mark,
        // and no CE at its entry's first landing) or the pop's (neither).
        self.pend_m.write_enable.next = false;
        self.pend_m.write_address.next = self.head.val();
        self.pend_m.write_data.next = 0.into();
        self.ece_m.write_enable.next = false;
        self.ece_m.write_address.next = self.head.val();
        self.ece_m.write_data.next = 0.into();
        self.fl.next = 0.into();
        if self.c_split.val() {
            self.pend_m.write_enable.next = self.s_land.put.val() | self.pop.val();
            self.ece_m.write_enable.next = self.pop.val()
                | (self.s_land.put.val() & (self.s_land.ce.val() | !self.land_seen.val()));
            if self.s_land.put.val() {
                self.pend_m.write_address.next = self.s_land.addr.val();
                self.pend_m.write_data.next = 1.into();
                self.ece_m.write_address.next = self.s_land.addr.val();
                if self.s_land.ce.val() {
                    self.ece_m.write_data.next = 1.into();
                }
            }
        } else {
            self.fl.next = self.pend.q.val();
            if self.pop.val() {
                self.fl.next = self.fl.val().replace_bit(self.head.val().index(), false);
            }
            if self.push.val() {
                self.fl.next = self
                    .fl
                    .val()
                    .replace_bit(self.s_land.addr.val().index(), true);
            }
            self.pend.d.next = self.fl.val();
            self.fl.next = self.ece.q.val();
            if self.pop.val() {
                self.fl.next = self.fl.val().replace_bit(self.head.val().index(), false);
            }
            if self.s_land.put.val() & self.s_land.ce.val() {
                self.fl.next = self
                    .fl
                    .val()
                    .replace_bit(self.s_land.addr.val().index(), true);
            }
            self.ece.d.next = self.fl.val();
        }

        // The ACK port: the head's fields, taken at a pop.
        if self.pop.val() {
            self.q_rd.d.next = self.q_rd.q.val() + 1;
            self.k_qp.d.next = self.head.val().get_bits::<2>(6);
            self.k_path.d.next = self.head.val().get_bits::<6>(0);
            self.k_ece.d.next = self.ece_h.val();
            for i in 0..QPS {
                if self.head.val().get_bits::<2>(6).index() == i {
                    self.k_conn.d.next = self.conn_cum[i].q.val();
                }
            }
            self.k_live.d.next = self
                .lv
                .q
                .val()
                .get_bit(self.head.val().get_bits::<2>(6).index());
            self.k_fwd.d.next = self.wb_v.val() & (self.wb_addr.val() == self.head.val());
            self.k_w.d.next = self.wb.val();
        }
        self.ak_state.next = self.ram_b.read_data.val();
        if self.k_fwd.q.val() {
            self.ak_state.next = self.k_w.q.val();
        }
        self.ak_qp.next = self.k_qp.q.val();
        self.ak_path.next = self.k_path.q.val();
        self.ak_ece.next = self.k_ece.q.val();
        self.ak_conn_cum.next = self.k_conn.q.val();
        self.ak_live.next = self.k_live.q.val();

        if self.rst.val() {
            self.pend.d.next = 0.into();
            self.ece.d.next = 0.into();
            self.lv.d.next = 0.into();
            self.q_wr.d.next = 0.into();
            self.q_rd.d.next = 0.into();
        }
    }
}
