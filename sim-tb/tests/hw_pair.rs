//! Two hardware NICs on a wire (`metaroce_sim_tb::hw_pair`): two Verilated
//! `NicCore`s, each driven by its firmware (the engine on the hardware data
//! path) with its own host memory, joined by a 4-path fabric; WRITE,
//! WRITE_IMM, SEND and READ traffic both ways (and FETCH_ADD in one run),
//! every byte and every completion checked. Skips without Verilator.

use metaroce_sim_tb::hw_pair::{PairConfig, PairReport, run_pair};

fn run(cfg: &PairConfig) -> Option<PairReport> {
    match run_pair(cfg) {
        Ok(r) => Some(r),
        Err(e) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Every message completed, every byte right, every completion once, no
/// QP error, and the RTL did the data path.
fn check(what: &str, r: &PairReport, messages: u64) {
    println!("{what}: {r:?}");
    assert!(r.finished, "{what}: not finished");
    assert_eq!(r.traffic.messages, messages, "{what}: messages");
    assert_eq!(r.traffic.bytes_wrong, 0, "{what}: wrong bytes");
    assert!(r.traffic.bytes_verified > 0, "{what}: nothing verified");
    assert_eq!(r.traffic.completions_error, 0, "{what}: completion errors");
    assert_eq!(
        r.traffic.atomic_errors, 0,
        "{what}: atomics not exactly once"
    );
    assert_eq!(r.traffic.qp_errors, 0, "{what}: QP errors");
    assert_eq!(r.interface_errors, 0, "{what}: interface errors");
    assert_eq!(r.mismatches_vs_engine, 0, "{what}: RTL and engine disagree");
    assert_eq!(r.fw_rx_mismatches, 0, "{what}: firmware receive queue");
    assert_eq!(r.fw_rx_truncated, 0, "{what}: datagrams cut");
    assert!(
        r.rtl_placed_packets > 0 && r.rtl_acks > 0,
        "{what}: RTL idle"
    );
    assert_eq!(
        r.firmware_acks, 0,
        "{what}: the firmware sent ACKs or NACKs"
    );
    // Received ACKs update the RTL's TX table (its ACK receiver), and the
    // firmware drives the table (sends, windows) itself.
    assert!(
        r.rtl_acks_applied > 0 && r.rtl_acks_applied * 100 >= r.acks_to_firmware * 99,
        "{what}: {} of {} ACKs applied by the RTL",
        r.rtl_acks_applied,
        r.acks_to_firmware
    );
    assert!(r.table_ops >= r.descriptors, "{what}: TX table not driven");
}

#[test]
fn lossless_mixed_traffic() {
    let cfg = PairConfig {
        messages: 60,
        max_size: 32 << 10,
        ..PairConfig::default()
    };
    if let Some(r) = run(&cfg) {
        check("lossless", &r, 60);
        assert_eq!(r.wire_lost, 0);
    }
}

#[test]
fn lossy_reordering_fabric() {
    let cfg = PairConfig {
        messages: 200,
        max_size: 64 << 10,
        loss: 0.02,
        dup: 0.01,
        ecn_mark: 0.05,
        jitter_ns: 3_000,
        seed: 7,
        ..PairConfig::default()
    };
    if let Some(r) = run(&cfg) {
        check("2% loss", &r, 200);
        assert!(r.wire_lost > 0 && r.retransmits > 0, "no loss exercised");
        // Losses are found from the TX table's fate events.
        assert!(
            r.sack_losses > 0,
            "no SACK gap found from the TX table's fates"
        );
        assert!(
            r.traffic.messages_by_opcode.iter().all(|&n| n > 0),
            "every opcode: {:?}",
            r.traffic.messages_by_opcode
        );
    }
}

/// FETCH_ADDs among the traffic over a lossy, duplicating fabric: the RTL
/// checks and hands them up, the firmware executes them, and each executes
/// exactly once (every value found new, every counter at the end the number
/// of FETCH_ADDs sent to it).
#[test]
fn atomics_execute_exactly_once_over_a_lossy_duplicating_fabric() {
    let cfg = PairConfig {
        messages: 300,
        max_size: 16 << 10,
        loss: 0.05,
        dup: 0.05,
        jitter_ns: 3_000,
        seed: 19,
        atomics: true,
        ..PairConfig::default()
    };
    if let Some(r) = run(&cfg) {
        check("atomics, 5% loss and duplication", &r, 300);
        assert!(
            r.traffic.fetch_adds > 10,
            "FETCH_ADDs: {}",
            r.traffic.fetch_adds
        );
        // Each FETCH_ADD is a request and a response the firmwares built.
        assert!(r.firmware_atomics >= 2 * r.traffic.fetch_adds);
        assert!(
            r.wire_lost > 0 && r.wire_duplicated > 0,
            "no loss or duplicates"
        );
    }
}

#[test]
fn megabyte_messages_at_five_percent_loss() {
    let cfg = PairConfig {
        messages: 6,
        max_size: 1 << 20,
        fixed_size: true,
        loss: 0.05,
        seed: 3,
        ..PairConfig::default()
    };
    if let Some(r) = run(&cfg) {
        check("1 MiB, 5% loss", &r, 6);
        assert!(
            r.traffic.bytes_verified >= 6 << 20,
            "every byte of every message"
        );
    }
}

#[test]
fn hostile_frames_change_nothing() {
    let cfg = PairConfig {
        messages: 150,
        max_size: 16 << 10,
        loss: 0.01,
        hostile: 0.2,
        seed: 11,
        ..PairConfig::default()
    };
    if let Some(r) = run(&cfg) {
        check("hostile frames", &r, 150);
        assert!(r.hostile_frames > 20, "hostile frames injected");
        assert!(
            r.rtl_dropped > 0 && r.rtl_duplicates > 0,
            "RTL counters moved"
        );
    }
}

/// Reading a counter clocks the model with every handshake closed: a frame
/// whose last beat was just taken is not taken again as one-beat frames
/// (the front end would count them `Truncated`).
#[test]
fn counter_reads_take_no_beat() {
    use metaroce_hdl::rx_eth::EthDrop;
    use metaroce_sim_tb::frame::udp_frame;
    use metaroce_sim_tb::hw_nic::{HwNic, HwNicConfig};
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};

    let ip = |last| IpAddr::V4(Ipv4Addr::new(10, 0, 0, last));
    let mut nic = match HwNic::new(HwNicConfig {
        mac: [2, 0, 0, 0, 0, 2],
        peer_mac: [2, 0, 0, 0, 0, 1],
        ip: ip(2),
        peer_ip: ip(1),
        udp_port: 4791,
        peer_udp_port: 4791,
        mem_base: 0x1_0000,
        mem_len: 4096,
        clock_ps: 4_000,
        line_rate_mbps: 16_000,
        seed: 1,
    }) {
        Ok(n) => n,
        Err(e) if e.is_absent() => return eprintln!("SKIP: {e}"),
        Err(e) => panic!("{e}"),
    };
    let mut out = Vec::new();
    while !nic.idle() {
        nic.step(&mut out);
    }
    // A frame to another UDP port: the front end drops it (`Port`).
    let frame = udp_frame(
        [2, 0, 0, 0, 0, 1],
        [2, 0, 0, 0, 0, 2],
        SocketAddr::new(ip(1), 5000),
        SocketAddr::new(ip(2), 4000),
        &[0x5a; 100],
        0,
    )
    .expect("a frame");
    nic.receive_frame(frame);
    // Stop right after the cycle that took the frame's last beat.
    while !nic.idle() {
        nic.step(&mut out);
    }
    for _ in 0..50 {
        nic.rtl_eth_counter(EthDrop::Truncated as u8);
    }
    for _ in 0..100 {
        nic.step(&mut out);
    }
    let counts: Vec<(EthDrop, u64)> = EthDrop::ALL
        .iter()
        .map(|&d| (d, nic.rtl_eth_counter(d as u8)))
        .filter(|&(_, n)| n > 0)
        .collect();
    assert_eq!(counts, [(EthDrop::Port, 1)], "front-end counters");
}
