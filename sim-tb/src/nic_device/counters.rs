//! The end-of-run reads through BAR0: the device's counters against what
//! the host saw, the core's verdict counters, the TX queue consumed, the
//! queued slot read back, the interrupts, `ID.BAR_BAD`.

use super::consume::{Consumer, VerdictEv};
use super::setup::BAD_ACCESSES;
use super::tb::DeviceTb;
use super::txt::{self, QueuedOp};
use super::{DeviceRun, V_FIRMWARE, irq, regs};

/// Reads and checks every counter, in the order the bench reads them;
/// `stall` is the cycles the host ignored the event ring for.
pub(super) fn check(
    tb: &mut DeviceTb,
    run: &mut DeviceRun,
    cons: &Consumer,
    qops: &[QueuedOp],
    stall: u64,
) {
    run.rx_hold_cycles = counter(tb, regs::cnt::RX_HOLD);
    txt::check_last_view(tb, qops, cons.results.len(), &mut run.mismatches);
    counter_table(tb, run, qops.len() as u64);
    verdict_counters(tb, &cons.verdicts, &mut run.mismatches);
    let m = &mut run.mismatches;
    if stall > 0 && run.rx_hold_cycles == 0 {
        m.push("the host stalled the event ring but the MAC RX port was never held".into());
    }
    if u64::from(tb.txq.idx) != run.txq_entries
        || tb.bar_read(tb.reg(regs::txq::TYPE, regs::txq::CONS)) != tb.txq.idx
    {
        m.push("TX queue: not every entry consumed".into());
    }
    irq::check(tb, run);
    let bar_bad = tb.bar_read(tb.reg(regs::id::TYPE, regs::id::BAR_BAD));
    run.bar_bad = bar_bad.into();
    if run.bar_bad != BAD_ACCESSES {
        run.mismatches.push(format!(
            "ID.BAR_BAD {bar_bad}, the bench made {BAD_ACCESSES} bad accesses"
        ));
    }
}

/// The counter at offset `off` of the `CNT` block.
fn counter(tb: &mut DeviceTb, off: u16) -> u64 {
    u64::from(tb.bar_read(tb.reg(regs::cnt::TYPE, off)))
}

/// The `CNT` block's counters against the run's figures (`queued_ops` TX
/// table operations posted).
fn counter_table(tb: &mut DeviceTb, run: &mut DeviceRun, queued_ops: u64) {
    for (name, off, want) in [
        ("EV_LOST", regs::cnt::EV_LOST, 0),
        ("TXQ_OPS", regs::cnt::TXQ_OPS, queued_ops),
        ("TXQ_BAD", regs::cnt::TXQ_BAD, 1),
        ("FTQ_BAD", regs::cnt::FTQ_BAD, 2),
        ("DMA_BAD_TAG", regs::cnt::DMA_BAD_TAG, 0),
        // ACK frames and the firmware's frames: the framer counts both.
        (
            "ACK_FRAMES",
            regs::cnt::ACK_FRAMES,
            run.ack_frames + run.fw_tx_frames,
        ),
        ("FW_UP", regs::cnt::FW_UP, run.fw_rx),
        ("FW_TRUNC", regs::cnt::FW_TRUNC, run.fw_rx_cut),
        ("FWTX_FRAMES", regs::cnt::FWTX_FRAMES, run.fw_tx_frames),
        ("ETH_FRAMES", regs::cnt::ETH_FRAMES, run.rx_frames),
        ("ETH_DROPS", regs::cnt::ETH_DROPS, 0),
        ("TX_ERR", regs::cnt::TX_ERR, 0),
    ] {
        let got = counter(tb, off);
        if got != want {
            run.mismatches
                .push(format!("CNT.{name} = {got}, expected {want}"));
        }
    }
}

/// The verdict counters of the core, through `CNT_SEL`/`CNT_VAL`, against
/// the verdict events read.
fn verdict_counters(tb: &mut DeviceTb, verdicts: &[VerdictEv], m: &mut Vec<String>) {
    for code in [0u8, V_FIRMWARE] {
        tb.bar_write(tb.reg(regs::cnt::TYPE, regs::cnt::CNT_SEL), code.into());
        let got = counter(tb, regs::cnt::CNT_VAL);
        let want = verdicts.iter().filter(|v| v.code == code).count() as u64;
        if got != want {
            m.push(format!("verdict counter {code}: {got}, events {want}"));
        }
    }
}
