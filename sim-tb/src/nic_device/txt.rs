//! The per-path TX table operations: run through the `TXT` registers
//! before the run, posted in the TX queue during it (with the results and
//! slot views the table's rules give), and the checks of their fate events,
//! result entries and the slot read back at the end.

use metaroce_driver::hw::regs::OpStatus;
use metaroce_driver::hw::tables::{OpInputs, ResultEntry, SlotState};

use super::DeviceRun;
use super::consume::OpResult;
use super::regs;
use super::tb::DeviceTb;
// `TxOp` codes (generated from `metaroce_hdl::TxOp`).
use crate::tx_path::code as op;

/// The TX table slot of the operations through the registers.
const REG_SLOT: u32 = 5;
/// The TX table slot the queued operations work on (the register port's is 5).
pub(super) const QSLOT: usize = 6;
/// The connection PSN of the first queued `Send` (the queued `Lose` loses it).
const QPSN: u32 = 0x0012_3456;

/// A queued operation, the path PSN its result must carry (a `Send`) and the
/// slot's (entropy, next_psn, inflight, window, sent, lost) after it.
pub(super) type QueuedOp = (OpInputs, Option<u32>, [u32; 6]);

/// The TX table operations through BAR0: `Init`, `Window`, `Send`,
/// `Lose` on slot 5, read back; returns the connection PSN whose fate
/// event must come up.
pub(super) fn register_ops(tb: &mut DeviceTb) -> u32 {
    use regs::txt as t;
    let ty = t::TYPE;
    const PSN: u32 = 0x00AB_CDEF;
    issue(tb, op::INIT, 0, 0, 0xC123);
    issue(tb, op::WINDOW, 0, 0, 1 << 20);
    tb.bar_write(tb.reg(ty, t::RD_SLOT), REG_SLOT);
    let next = tb.bar_read(tb.reg(ty, t::RD_NEXT_PSN));
    let status = issue(tb, op::SEND, PSN, 1000, 0);
    let res_psn = tb.bar_read(tb.reg(ty, t::RES_PSN));
    if !status.contains(OpStatus::RES_OK) || res_psn != next {
        tb.errors.push(format!(
            "Send: OP_STATUS {status:?}, RES_PSN {res_psn}, RD_NEXT_PSN was {next}"
        ));
    }
    for (name, off, want) in [
        ("RD_ENTROPY", t::RD_ENTROPY, 0xC123),
        ("RD_NEXT_PSN", t::RD_NEXT_PSN, next.wrapping_add(1)),
        ("RD_INFLIGHT", t::RD_INFLIGHT, 1000),
        ("RD_SENT", t::RD_SENT, 1),
        ("RD_WINDOW", t::RD_WINDOW, 1 << 20),
    ] {
        let got = tb.bar_read(tb.reg(ty, off));
        if got != want {
            tb.errors
                .push(format!("TXT.{name} {got:#x}, expected {want:#x}"));
        }
    }
    issue(tb, op::LOSE, res_psn, 0, 0);
    for (name, off, want) in [
        ("RD_LOST", t::RD_LOST, 1),
        ("RD_INFLIGHT", t::RD_INFLIGHT, 0),
    ] {
        let got = tb.bar_read(tb.reg(ty, off));
        if got != want {
            tb.errors
                .push(format!("TXT.{name} after Lose {got}, expected {want}"));
        }
    }
    PSN
}

/// One operation through the `TXT` registers on [`REG_SLOT`], polled until
/// done; returns its `OP_STATUS`.
fn issue(tb: &mut DeviceTb, code: u8, psn: u32, len: u32, value: u32) -> OpStatus {
    use regs::txt as t;
    let ty = t::TYPE;
    tb.bar_write(tb.reg(ty, t::OP_CTRL), u32::from(code) | REG_SLOT << 3);
    tb.bar_write(tb.reg(ty, t::OP_PSN), psn);
    tb.bar_write(tb.reg(ty, t::OP_LEN), len);
    tb.bar_write(tb.reg(ty, t::OP_VALUE), value);
    tb.bar_write(tb.reg(ty, t::OP_GO), 1);
    let mut status = OpStatus::BUSY;
    for _ in 0..100 {
        status = OpStatus::from_bits_truncate(tb.bar_read(tb.reg(ty, t::OP_STATUS)));
        if !status.contains(OpStatus::BUSY) {
            break;
        }
    }
    if !status.contains(OpStatus::DONE) || status.contains(OpStatus::BUSY) {
        tb.errors
            .push(format!("TX table op {code}: OP_STATUS {status:?}"));
    }
    status
}

/// The TX table operations the bench posts in the TX queue on [`QSLOT`], each
/// with the path PSN its result must carry (a `Send`) and the slot's (entropy,
/// next_psn, inflight, window, sent, lost) after it, by the table's rules
/// (`docs/hardware.md` §12).
pub(super) fn queued_ops() -> Vec<QueuedOp> {
    let none = OpInputs::default();
    let send = |psn, len| OpInputs {
        code: op::SEND,
        psn,
        len,
        ..none
    };
    vec![
        (
            OpInputs {
                code: op::INIT,
                value: 0xB0B5,
                ..none
            },
            None,
            [0xB0B5, 0, 0, 0, 0, 0],
        ),
        (
            OpInputs {
                code: op::WINDOW,
                value: 1 << 16,
                ..none
            },
            None,
            [0xB0B5, 0, 0, 1 << 16, 0, 0],
        ),
        (send(QPSN, 1000), Some(0), [0xB0B5, 1, 1000, 1 << 16, 1, 0]),
        (
            send(QPSN + 1, 500),
            Some(1),
            [0xB0B5, 2, 1500, 1 << 16, 2, 0],
        ),
        (
            OpInputs {
                code: op::LOSE,
                psn: 0,
                ..none
            },
            None,
            [0xB0B5, 2, 500, 1 << 16, 2, 1],
        ),
    ]
}

/// The fate events of the two `Lose`s (registers, then queue); the first
/// lost `fate_psn`.
pub(super) fn check_fates(fates: &[(bool, bool, u32)], fate_psn: u32, run: &mut DeviceRun) {
    run.fate_events = fates.len() as u64;
    let want_fates = [(false, true, fate_psn), (false, true, QPSN)];
    if fates != want_fates {
        run.mismatches
            .push(format!("fate events {fates:?}, expected {want_fates:?}"));
    }
}

/// The queued operations' results, in order, with their slot views.
pub(super) fn check_results(results: &[OpResult], qops: &[QueuedOp], run: &mut DeviceRun) {
    run.queued_ops.1 = results.len() as u64;
    for (k, ((a, b, nfates), (i, res_psn, want))) in results.iter().zip(qops).enumerate() {
        let r = ResultEntry::parse(a);
        let v = SlotState::from_event(a, b);
        let got = [
            u32::from(v.entropy),
            v.next_psn,
            v.inflight,
            v.window,
            v.sent,
            v.lost,
        ];
        // A Lose's fate comes before its result; the other results see only the
        // register port's.
        let fates_before = if i.code == op::LOSE { 2 } else { 1 };
        if r.slot != QSLOT
            || r.code != i.code
            || res_psn.is_some_and(|p| !r.ok || r.psn != p)
            || got != *want
            || *nfates != fates_before
        {
            run.mismatches.push(format!(
                "queued operation {k} (code {}): result slot {} code {} ok {} psn {}, \
                 view (entropy, next_psn, inflight, window, sent, lost) {got:?} after {nfates} fates; \
                 expected slot {QSLOT}, psn {res_psn:?}, view {want:?} after {fates_before} fates",
                i.code, r.slot, r.code, r.ok, r.psn
            ));
        }
    }
}

/// The last queued view against the slot through the register port
/// (`TXT.RD_*`), once every result came back.
pub(super) fn check_last_view(
    tb: &mut DeviceTb,
    qops: &[QueuedOp],
    results: usize,
    m: &mut Vec<String>,
) {
    let (Some((_, _, want)), true) = (qops.last(), results == qops.len()) else {
        return;
    };
    use regs::txt as t;
    tb.bar_write(tb.reg(t::TYPE, t::RD_SLOT), QSLOT as u32);
    let mut got = [0u32; 6];
    for (g, off) in got.iter_mut().zip([
        t::RD_ENTROPY,
        t::RD_NEXT_PSN,
        t::RD_INFLIGHT,
        t::RD_WINDOW,
        t::RD_SENT,
        t::RD_LOST,
    ]) {
        *g = tb.bar_read(tb.reg(t::TYPE, off));
    }
    if got != *want {
        m.push(format!(
            "slot {QSLOT} through TXT.RD_*: {got:?}, its last queued view {want:?}"
        ));
    }
}
