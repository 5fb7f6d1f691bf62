//! Device bench: the Verilated `NicDevice` (host interface + `NicCore`, 64
//! bits) driven as a host drives a NIC, through BAR0, queues in host
//! memory, DMA and interrupts (`metaroce_sim_tb::nic_device`). Skips
//! without Verilator.

use metaroce_sim_tb::assert_no_mismatches;
use metaroce_sim_tb::nic_device::{DeviceRun, Knobs, run};

fn go(what: &str, knobs: Knobs, seed: u64, stall: u64) -> Option<DeviceRun> {
    let r = match run(1_500, 60, 400, seed, knobs, stall) {
        Ok(r) => r,
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    println!(
        "64-bit NicDevice, {what}: {} blocks; {} datagrams in, {} verdict events ({} checked against \
         the engine, {} placements), {} firmware receive entries ({} cut), {} fate events; \
         {} TX table operations queued, {} results; {} TX queue entries, {} data frames + {} firmware frames + {} ACK frames out; event ring \
         {} laps, fill up to {}, MAC RX held {} cycles; interrupts {:?} for entries {:?}; \
         BAR_BAD {}; {} cycles in {:.2} s; {} mismatches",
        r.blocks,
        r.rx_frames,
        r.verdict_events,
        r.verdicts_checked,
        r.placements,
        r.fw_rx,
        r.fw_rx_cut,
        r.fate_events,
        r.queued_ops.0,
        r.queued_ops.1,
        r.txq_entries,
        r.data_frames,
        r.fw_tx_frames,
        r.ack_frames,
        r.evq_laps,
        r.evq_max_fill,
        r.rx_hold_cycles,
        r.irqs,
        r.irq_entries,
        r.bar_bad,
        r.cycles,
        r.sim_secs,
        r.mismatches.len()
    );
    assert_no_mismatches(what, &r.mismatches);
    Some(r)
}

#[test]
fn host_drives_the_device_through_bar_queues_dma_and_interrupts() {
    let Some(r) = go(
        "ports always ready, host stalls the event ring",
        Knobs::FAST,
        0xD0,
        20_000,
    ) else {
        return;
    };
    assert!(r.rx_hold_cycles > 0, "back-pressure never reached the MAC");
    assert!(r.evq_laps > 2, "the event ring never wrapped");
    assert!(
        r.fw_rx_cut > 0 && r.fw_rx > r.fw_rx_cut,
        "cut and whole datagrams handed up"
    );
    assert!(r.irqs.iter().all(|&n| n > 0), "every vector interrupts");
    assert!(r.irqs[0] < r.irq_entries[0], "event interrupts coalesced");
}

#[test]
fn device_under_stalls_everywhere() {
    go(
        "stalls on every port, 100-cycle reads",
        Knobs::STALLS,
        0xD1,
        0,
    );
}
