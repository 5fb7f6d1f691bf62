//! Per-path receive tracking: for each path, the cumulative path PSN
//! (`cum`, the first PSN not yet received), the 256-bit SACK bitmap above it
//! (bit `i` is PSN `cum + 1 + i`, as `metaroce_proto::Sack`), and the
//! received and CE-marked packet counters, updated per arrival with the
//! rules of the engine's `RxPath::mark` and `Rx::on_path_arrival`
//! (Verilog function `path_mark`, `rx_path_mark.v.in`, shared by both
//! blocks here).
//!
//! * [`RxPathTable`]: the tracker of the receive core, one entry per
//!   (QP slot, path) in RAM, with the ACK fields the engine keeps per path
//!   (echo timestamp, reply port, ECE) and the pending-ACK queue;
//! * [`rx_path_verilog`]: one QP's paths in registers, a standalone module
//!   that checks the mark rules alone (`metaroce-sim-tb`'s `rx_path` bench).
//!
//! Hand-written Verilog: rust-hdl kernels cannot index arrays of registers.

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

use crate::helpers::LEAD_ONES_FN;
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

/// Verilog source of the standalone tracker for `paths` paths of one QP (a
/// power of two, 2 to [`MAX_PATHS`]), state in registers; top module `top`:
///
/// * `ev_valid`, `ev_path`, `ev_psn` (32), `ev_ce`: one arrival per cycle;
/// * `res_valid`, `res_path`, `res_code` (2): the verdict
///   ([`PathVerdict`]), registered, one cycle after the event;
/// * `rd_path` in, `rd_cum` (32), `rd_sack` (256), `rd_rx_count` (32),
///   `rd_ce_count` (32) out: a path's current state (a mux of the
///   registers).
///
/// # Panics
/// If `paths` is not a power of two in 2..=[`MAX_PATHS`].
pub fn rx_path_verilog(paths: usize) -> String {
    assert!(
        paths.is_power_of_two() && (2..=MAX_PATHS).contains(&paths),
        "unsupported path count {paths}"
    );
    let bits = paths.trailing_zeros() as usize;
    include_str!("rx_path.v.in")
        .replace("@MARK@", &path_mark_fn())
        .replace("@NPATHS@", &paths.to_string())
        .replace("@PWM1@", &(bits - 1).to_string())
}

/// `rx_path_mark.v.in` with the `lead_ones` function it uses.
fn path_mark_fn() -> String {
    include_str!("rx_path_mark.v.in").replace("@LEAD_ONES@", LEAD_ONES_FN)
}

/// Entries of [`RxPathTable`]: one per (QP slot, path).
pub const ENTRIES: usize = QPS * MAX_PATHS;

/// The receive core's path tracker: one entry per (QP slot, path), address
/// `qp << 6 | path`, in two RAMs with one write port (both written alike)
/// and one read port each: A for arrivals, B for ACKs.
///
/// Pipeline, one arrival per cycle, in step with `RxPlace`:
/// * S0: `rd_addr` (the packet's QP slot and path) is read from RAM A;
/// * S1: `rd_cum` is the entry's `cum`, forwarded from the write of the
///   previous edge and from the S2 update in flight, so back-to-back
///   arrivals on one entry see each other; `RxPlace` decides the path
///   window from it;
/// * S2: the event (`ev_*`, `RxPlace`'s verdict event): when `ev_track`, the
///   entry is updated as `Rx::on_path_arrival` does (mark, `rx_count` + 1,
///   `ce_count` + CE, echo timestamp = max, reply port, ECE) and written
///   to both RAMs, and queued for an ACK unless already queued.
///   `ev_qhit` records `ev_conn_cum` as the QP's connection cumulative PSN
///   and `ev_live` as whether the QP still receives (sends ACKs).
///
/// ACK port: `aq_valid` says the queue is not empty; `aq_pop` takes its
/// head, and the next cycle `ak_*` hold that entry's fields as of before
/// this cycle's arrival (so an arrival in the same cycle re-queues it), its
/// ECE flag (cleared), and its QP's connection cumulative PSN and liveness.
#[derive(LogicBlock, Default)]
pub struct RxPathTable {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every entry back to zero, queue empty.
    pub rst: Signal<In, Bit>,
    /// S0: entry to read (`qp << 6 | path`).
    pub rd_addr: Signal<In, Bits<8>>,
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
}

impl Logic for RxPathTable {
    /// No rust-hdl model: verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.rd_cum.connect();
        self.aq_valid.connect();
        self.ak_qp.connect();
        self.ak_path.connect();
        self.ak_cum.connect();
        self.ak_sack.connect();
        self.ak_rx.connect();
        self.ak_ce.connect();
        self.ak_ts.connect();
        self.ak_port.connect();
        self.ak_ece.connect();
        self.ak_conn_cum.connect();
        self.ak_live.connect();
    }

    fn hdl(&self) -> Verilog {
        let pbits = MAX_PATHS.trailing_zeros() as usize;
        let abits = ENTRIES.trailing_zeros() as usize;
        hand_written(
            include_str!("rx_path_table.v.in")
                .replace("@MARK@", &path_mark_fn())
                .replace("@ENTRIES@", &ENTRIES.to_string())
                .replace("@QPS@", &QPS.to_string())
                .replace("@ABITS@", &abits.to_string())
                .replace("@AM1@", &(abits - 1).to_string())
                .replace("@PBITS@", &pbits.to_string())
                .replace("@PM1@", &(pbits - 1).to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A placeholder left over: `@` followed by a capital letter.
    fn placeholder(v: &str) -> bool {
        v.split('@')
            .skip(1)
            .any(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
    }

    #[test]
    fn templates_are_fully_substituted() {
        for paths in [2, 8, 64] {
            let v = rx_path_verilog(paths);
            assert!(!placeholder(&v));
            let bits = paths.trailing_zeros() - 1;
            assert!(v.contains(&format!("input wire [{bits}:0] ev_path;")));
            assert!(v.contains("module top("));
        }
        let Verilog::Custom(body) = RxPathTable::default().hdl() else {
            panic!("custom Verilog");
        };
        assert!(!placeholder(&body));
        assert_eq!(ENTRIES, 256);
    }
}
