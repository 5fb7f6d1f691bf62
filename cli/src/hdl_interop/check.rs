//! The run's counters and what a run expects of them: the disagreements.

use std::collections::BTreeMap;

use metaroce_hdl::rx_eth::EthDrop;
use metaroce_hdl::rx_place::Verdict;
use metaroce_relay::RelayHandle;
use metaroce_sim_tb::hw_nic::HwNic;

use super::{InteropConfig, InteropReport, RelayReport, RtlReport};

/// The relay's path counters, summed over its paths.
pub(super) fn relay_report(h: &RelayHandle) -> RelayReport {
    let c = h.all_counters();
    let sum = |f: fn(&metaroce_relay::PathCounters) -> u64| c.iter().map(f).sum();
    RelayReport {
        forwarded: sum(|p| p.forwarded),
        dropped_loss: sum(|p| p.dropped_loss),
        dropped_queue: sum(|p| p.dropped_queue),
        bad_icrc: sum(|p| p.bad_icrc),
        send_errors: sum(|p| p.send_errors),
    }
}

/// The counters with a nonzero value, by name.
pub(super) fn nonzero<'a>(it: impl Iterator<Item = (&'a str, u64)>) -> BTreeMap<String, u64> {
    it.filter(|&(_, v)| v > 0)
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The RTL NIC's counters (reads clock the model: call when it is idle).
pub(super) fn rtl_report(nic: &mut HwNic) -> RtlReport {
    let c = nic.counters();
    let s = *nic.engine().stats();
    let verdicts: Vec<(String, u64)> = Verdict::ALL
        .iter()
        .map(|&v| (format!("{v:?}"), nic.rtl_counter(v as u8)))
        .collect();
    let eth: Vec<(String, u64)> = EthDrop::ALL
        .iter()
        .filter(|&&d| d != EthDrop::Accepted)
        .map(|&d| (format!("{d:?}"), nic.rtl_eth_counter(d as u8)))
        .collect();
    let owned = |v: &[(String, u64)]| nonzero(v.iter().map(|(k, n)| (k.as_str(), *n)));
    RtlReport {
        placed: c.rtl_placed,
        firmware_packets: c.firmware_data,
        ack_frames: nic.rtl_ack_frames(),
        firmware_frames: c.firmware_frames,
        acks_to_firmware: c.firmware_acks_in,
        descriptors: c.descriptors,
        mac_tx_frames: c.mac_tx_frames,
        mac_rx_frames: c.mac_rx_frames,
        retransmits: s.retransmits,
        interface_errors: c.interface_errors,
        hw_disagreements: s.hw_disagreements,
        verdicts: owned(&verdicts),
        eth_drops: owned(&eth),
        firmware_drops: nonzero(nic.engine().drops().iter()),
    }
}

/// Verdicts that are part of normal operation on a lossy, reordering
/// fabric: placed, handed to the firmware, duplicates of retransmitted
/// packets, path probes.
const NORMAL_VERDICTS: [Verdict; 4] = [
    Verdict::Placed,
    Verdict::Firmware,
    Verdict::Duplicate,
    Verdict::Probe,
];

/// The RTL's verdicts and the drop reasons (of the soft NIC and the RTL's
/// firmware) that a run with `cfg` expects.
pub(super) fn expected(cfg: &InteropConfig) -> (Vec<String>, Vec<&'static str>) {
    let mut verdicts: Vec<Verdict> = NORMAL_VERDICTS.to_vec();
    let mut drops = Vec::new();
    if cfg.late_receives {
        verdicts.push(Verdict::Rnr);
        drops.push("receiver_not_ready");
    }
    (verdicts.iter().map(|v| format!("{v:?}")).collect(), drops)
}

/// One line per counter that shows a disagreement.
pub(super) fn disagreements(cfg: &InteropConfig, r: &InteropReport) -> Vec<String> {
    let (verdicts, drops) = expected(cfg);
    let mut d = Vec::new();
    for (k, v) in &r.soft.drops {
        if !drops.contains(&k.as_str()) {
            d.push(format!("soft NIC dropped {v} datagrams: {k}"));
        }
    }
    for (k, v) in &r.rtl.verdicts {
        if !verdicts.contains(k) {
            d.push(format!("RTL verdict {k}: {v} packets"));
        }
    }
    for (k, v) in &r.rtl.eth_drops {
        d.push(format!("RTL front end dropped {v} frames: {k}"));
    }
    for (k, v) in &r.rtl.firmware_drops {
        if !drops.contains(&k.as_str()) {
            d.push(format!("RTL firmware dropped {v} datagrams: {k}"));
        }
    }
    let b = &r.bridge;
    for (what, v) in [
        (
            "RTL frames whose source port could not be bound",
            b.bind_failures,
        ),
        ("RTL frames with a bad IP/UDP checksum", b.bad_checksums),
        ("RTL frames from another IP than the NIC's", b.wrong_source),
        ("RTL frames that were no UDP", b.non_udp_frames),
        ("RTL frames the socket refused", b.send_errors),
        ("bridge receive errors", b.receive_errors),
        ("RTL interface errors", r.rtl.interface_errors),
        (
            "FETCH_ADDs not executed exactly once",
            r.traffic.atomic_errors,
        ),
        (
            "RTL verdicts the engine disagreed with",
            r.rtl.hw_disagreements,
        ),
    ] {
        if v > 0 {
            d.push(format!("{what}: {v}"));
        }
    }
    if let Some(relay) = &r.relay {
        if relay.bad_icrc > 0 {
            d.push(format!(
                "relay: {} datagrams with a bad ICRC",
                relay.bad_icrc
            ));
        }
        if relay.send_errors > 0 {
            d.push(format!("relay: {} send errors", relay.send_errors));
        }
    }
    d
}
