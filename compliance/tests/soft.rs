//! The whole compliance suite against the soft NIC (what CI runs), and the test of
//! the tester: deliberately broken soft NICs must each fail named cases.

use metaroce_compliance::soft::{Break, SoftTarget};
use metaroce_compliance::{RunOptions, Status, run};

fn lo() -> std::net::IpAddr {
    "127.0.0.1".parse().unwrap()
}

#[test]
fn the_soft_nic_passes_the_whole_suite() {
    let report = run(&SoftTarget::new(lo()), &RunOptions::default());
    eprintln!("{}", report.to_table());
    assert!(report.total >= 60, "only {} cases", report.total);
    assert_eq!(report.failed, 0, "failures: {:#?}", report.failures);
    // The one case the soft NIC cannot run: it sends from a fixed pool of sockets, which
    // §2.3 allows for software endpoints. (A host without 127.0.0.2 also skips the two
    // cases that need a second local address.)
    let skipped: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Skipped && !c.message.contains("second local address"))
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(skipped, ["ack_source_port_follows_latest_packet"]);
}

/// Runs `cases` against the soft NIC broken by `fault` and checks every one fails.
fn caught(fault: Break, cases: &[&str]) {
    let opts = RunOptions {
        filter: cases.iter().map(|s| s.to_string()).collect(),
        ..RunOptions::default()
    };
    let report = run(&SoftTarget::broken(lo(), fault), &opts);
    eprintln!("{}", report.to_table());
    for name in cases {
        let c = report
            .case(name)
            .unwrap_or_else(|| panic!("case {name} did not run"));
        assert_eq!(
            c.status,
            Status::Failed,
            "{name} did not catch {fault:?}: {c:?}"
        );
    }
}

#[test]
fn a_target_sealing_without_the_pseudo_header_is_caught() {
    caught(
        Break::IcrcWithoutPseudoHeader,
        &["ack_fields", "tx_write_packets"],
    );
}

#[test]
fn a_target_with_a_wrong_sack_bit_order_is_caught() {
    caught(
        Break::SackBitOrderReversed,
        &["sack_bitmap_exact", "path_window_slides"],
    );
}

#[test]
fn a_target_ignoring_the_path_window_is_caught() {
    caught(Break::IgnoresPathWindow, &["tx_path_window_respected"]);
}

#[test]
fn a_target_skipping_the_rkey_check_is_caught() {
    caught(
        Break::SkipsRkeyCheck,
        &[
            "forged_rkey_refused",
            "out_of_bounds_write_refused",
            "overflowing_address_refused",
        ],
    );
}

#[test]
fn a_target_sending_a_wrong_parity_is_caught() {
    caught(Break::WrongParity, &["tx_parity_sent_when_due"]);
}

#[test]
fn the_suite_drives_a_shared_soft_nic_through_the_control_agent() {
    use metaroce_compliance::remote::{RemoteTarget, serve};
    let device = SoftTarget::shared("127.0.0.1:0".parse().unwrap()).unwrap();
    let udp = device.shared_address().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let agent = listener.local_addr().unwrap();
    std::thread::spawn(move || serve(listener, &device));
    let opts = RunOptions {
        parallel: 1,
        filter: std::env::var("COMPLIANCE_FILTER")
            .map(|f| vec![f])
            .unwrap_or_default(),
        ..RunOptions::default()
    };
    let report = run(&RemoteTarget { udp, agent }, &opts);
    eprintln!("{}", report.to_table());
    assert_eq!(report.failed, 0, "failures: {:#?}", report.failures);
    assert!(report.passed >= 75, "only {} passed", report.passed);
}

#[test]
fn the_soft_nic_passes_the_suite_over_ipv6() {
    let v6: std::net::IpAddr = "::1".parse().unwrap();
    if std::net::UdpSocket::bind((v6, 0)).is_err() {
        eprintln!("SKIPPED: no IPv6 loopback");
        return;
    }
    let opts = RunOptions {
        local_ip: v6,
        ..RunOptions::default()
    };
    let report = run(&SoftTarget::new(v6), &opts);
    eprintln!("{}", report.to_table());
    assert_eq!(report.failed, 0, "failures: {:#?}", report.failures);
    assert!(report.passed >= 75, "only {} passed", report.passed);
}
