//! The wire's tests: determinism, the loss, duplication and marking
//! fractions, reordering, serialisation and the path choice.

use super::config::{PathConfig, PathMap, splitmix64};
use super::headers::{ETH_LEN, IPV6_LEN, UDP_LEN};
use super::*;
use etherparse::{
    IpDscp, IpEcn, IpFragOffset, IpHeaders, Ipv4Header, Ipv4HeaderSlice, Ipv6FlowLabel, Ipv6Header,
    Ipv6HeaderSlice, PacketBuilder,
};

/// An Ethernet/IPv4/UDP frame from `port` with IP ECN `ecn`, carrying
/// `id` as its payload.
fn v4(port: u16, ecn: u8, id: u32) -> Vec<u8> {
    let header = Ipv4Header {
        dscp: IpDscp::try_new(26).expect("6 bits"),
        ecn: IpEcn::try_new(ecn).expect("2 bits"),
        identification: 0x1234 ^ id as u16,
        time_to_live: 64,
        source: [10, 0, 0, 1],
        destination: [10, 0, 0, 2],
        ..Default::default()
    };
    build(IpHeaders::Ipv4(header, Default::default()), port, id)
}

/// An Ethernet/IPv6/UDP frame from `port` with traffic class `tc`,
/// carrying `id` as its payload.
fn v6(port: u16, tc: u8, id: u32) -> Vec<u8> {
    let header = Ipv6Header {
        traffic_class: tc,
        flow_label: Ipv6FlowLabel::try_new(0xabcde).expect("20 bits"),
        hop_limit: 64,
        source: [0xfd; 16],
        destination: [0xfe; 16],
        ..Default::default()
    };
    build(IpHeaders::Ipv6(header, Default::default()), port, id)
}

fn build(ip: IpHeaders, port: u16, id: u32) -> Vec<u8> {
    let builder = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ip(ip)
        .udp(port, 4791);
    let payload = id.to_be_bytes();
    let mut out = Vec::with_capacity(builder.size(payload.len()));
    builder.write(&mut out, &payload).expect("build frame");
    out
}

/// The id a [`v4`]/[`v6`] frame carries.
fn id_of(frame: &[u8]) -> u32 {
    let tail: [u8; 4] = frame[frame.len() - 4..].try_into().expect("4 bytes");
    u32::from_be_bytes(tail)
}

fn path(delay_ns: u64, jitter_ns: u64) -> PathConfig {
    PathConfig {
        delay_ns,
        jitter_ns,
        ..Default::default()
    }
}

/// Everything that arrives at port `to`, with its arrival time.
fn drain(w: &mut Wire, to: usize) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(at) = w.next_arrival(to) {
        let frame = w.receive(to, at).expect("frame due");
        out.push((at, frame));
    }
    out
}

fn lossy_cfg() -> WireConfig {
    WireConfig::uniform(
        4,
        PathConfig {
            delay_ns: 1000,
            jitter_ns: 500,
            loss: 0.1,
            dup: 0.05,
            ecn_mark: 0.2,
        },
    )
}

fn run(seed: u64) -> (Vec<(u64, Vec<u8>)>, WireStats) {
    let mut w = Wire::new(lossy_cfg(), seed);
    for i in 0..2000u32 {
        w.send(0, u64::from(i) * 50, v4(i as u16, 2, i));
    }
    (
        drain(&mut w, 0)
            .into_iter()
            .chain(drain(&mut w, 1))
            .collect(),
        w.stats().clone(),
    )
}

#[test]
fn deterministic_for_a_seed() {
    let (a, sa) = run(42);
    let (b, sb) = run(42);
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    let (c, _) = run(43);
    assert_ne!(a, c);
    assert!(sa.total().lost > 0 && sa.total().duplicated > 0 && sa.total().ce_marked > 0);
}

#[test]
fn loss_and_dup_fractions() {
    let mut w = Wire::new(lossy_cfg(), 7);
    let n = 20_000u32;
    for i in 0..n {
        w.send(1, u64::from(i), v4(i as u16, 0, i));
    }
    let t = w.stats().direction(1);
    assert_eq!(t.sent, u64::from(n));
    assert_eq!(w.stats().direction(0), PathStats::default());
    let lost = t.lost as f64 / f64::from(n);
    let dup = t.duplicated as f64 / (t.sent - t.lost) as f64;
    assert!((lost - 0.1).abs() < 0.01, "loss fraction {lost}");
    assert!((dup - 0.05).abs() < 0.01, "dup fraction {dup}");
    assert_eq!(t.ce_marked, 0, "not-ECT frames are never marked");
    let got = drain(&mut w, 0);
    assert_eq!(got.len() as u64, t.sent - t.lost + t.duplicated);
    assert_eq!(w.in_flight(), 0);
    assert!(drain(&mut w, 1).is_empty());
}

#[test]
fn failed_path_loses_exactly_its_frames() {
    let mut cfg = WireConfig::uniform(4, path(100, 50));
    cfg.paths[2].loss = 1.0;
    let map = cfg.path_map;
    let mut w = Wire::new(cfg, 1);
    let ports = 0..1000u16;
    for p in ports.clone() {
        w.send(0, u64::from(p), v4(p, 0, u32::from(p)));
    }
    let on_failed = ports.clone().filter(|&p| map.path_of(p, 4) == 2).count() as u64;
    assert!(on_failed > 0);
    let s = &w.stats().per_path[0];
    assert_eq!(s[2].lost, on_failed);
    assert_eq!(s[2].sent, on_failed);
    assert_eq!(w.stats().total().lost, on_failed);
    let mut got: Vec<u16> = drain(&mut w, 1)
        .iter()
        .map(|(_, f)| id_of(f) as u16)
        .collect();
    got.sort_unstable();
    let want: Vec<u16> = ports.filter(|&p| map.path_of(p, 4) != 2).collect();
    assert_eq!(got, want);
}

fn v4_checksum_ok(frame: &[u8]) -> bool {
    let h = Ipv4HeaderSlice::from_slice(&frame[ETH_LEN..]).expect("IPv4 header");
    h.header_checksum() == h.to_header().calc_header_checksum()
}

#[test]
fn ecn_marks_only_ect_ipv4_with_valid_checksum() {
    let mut w = Wire::new(
        WireConfig::uniform(
            2,
            PathConfig {
                ecn_mark: 1.0,
                ..path(10, 0)
            },
        ),
        3,
    );
    for (i, ecn) in [0u8, 1, 2, 3].into_iter().enumerate() {
        let frame = v4(1000 + i as u16, ecn, i as u32);
        assert!(v4_checksum_ok(&frame));
        w.send(0, 0, frame.clone());
        let got = w.receive(1, 10).expect("delivered");
        let h = Ipv4HeaderSlice::from_slice(&got[ETH_LEN..]).expect("IPv4 header");
        let want_ecn = if ecn == 0 { 0 } else { 3 };
        assert_eq!(h.ecn().value(), want_ecn, "ECN {ecn}");
        assert_eq!(h.dcp().value(), 26);
        assert!(v4_checksum_ok(&got), "checksum after marking ECN {ecn}");
        if ecn == 1 || ecn == 2 {
            assert_ne!(
                got[ETH_LEN + 10..ETH_LEN + 12],
                frame[ETH_LEN + 10..ETH_LEN + 12]
            );
        }
        // Nothing else changed.
        for (j, (a, b)) in got.iter().zip(&frame).enumerate() {
            if ![ETH_LEN + 1, ETH_LEN + 10, ETH_LEN + 11].contains(&j) {
                assert_eq!(a, b, "byte {j}");
            }
        }
    }
    assert_eq!(w.stats().total().ce_marked, 2);

    // A header whose checksum does not verify is left alone.
    let mut bad = v4(7, 2, 9);
    bad[ETH_LEN + 10] ^= 0x55;
    w.send(0, 0, bad.clone());
    assert_eq!(w.receive(1, 10), Some(bad));
    assert_eq!(w.stats().total().ce_marked, 2);
}

#[test]
fn ecn_marking_probability() {
    let cfg = WireConfig::uniform(
        1,
        PathConfig {
            ecn_mark: 0.3,
            ..path(0, 0)
        },
    );
    let mut w = Wire::new(cfg, 11);
    for i in 0..10_000u32 {
        w.send(0, 0, v4(5, 1, i));
    }
    let got = drain(&mut w, 1);
    let ce = got.iter().filter(|(_, f)| f[ETH_LEN + 1] & 3 == 3).count();
    assert_eq!(ce as u64, w.stats().total().ce_marked);
    assert!(got.iter().all(|(_, f)| v4_checksum_ok(f)));
    let frac = ce as f64 / 10_000.0;
    assert!((frac - 0.3).abs() < 0.02, "CE fraction {frac}");
}

#[test]
fn ecn_marks_ipv6_traffic_class() {
    let cfg = WireConfig::uniform(
        1,
        PathConfig {
            ecn_mark: 1.0,
            ..path(0, 0)
        },
    );
    let mut w = Wire::new(cfg, 5);
    // DSCP 46 (EF) with each ECN value.
    for ecn in 0u8..4 {
        let tc = (46 << 2) | ecn;
        let frame = v6(4000, tc, u32::from(ecn));
        w.send(1, 0, frame.clone());
        let got = w.receive(0, 0).expect("delivered");
        let h = Ipv6HeaderSlice::from_slice(&got[ETH_LEN..]).expect("IPv6 header");
        let want = if ecn == 0 { tc } else { (46 << 2) | 3 };
        assert_eq!(h.traffic_class(), want, "ECN {ecn}");
        assert_eq!(h.flow_label().value(), 0xabcde);
        assert_eq!(got.len(), frame.len());
        let changed: Vec<usize> = (0..got.len()).filter(|&j| got[j] != frame[j]).collect();
        let want_changed = if ecn == 1 || ecn == 2 {
            vec![ETH_LEN + 1]
        } else {
            vec![]
        };
        assert_eq!(changed, want_changed);
    }
    assert_eq!(w.stats().direction(1).ce_marked, 2);
}

/// Pairs of frames (by id) that arrive in the opposite order to their
/// sending order.
fn inversions(ids: &[u32]) -> usize {
    ids.windows(2).filter(|w| w[0] > w[1]).count()
}

#[test]
fn jitter_reorders_and_no_jitter_keeps_order() {
    for (jitter, paths) in [(0, 1), (2000, 1), (0, 4)] {
        let mut w = Wire::new(WireConfig::uniform(paths, path(5000, jitter)), 9);
        for i in 0..1000u32 {
            // Four sends at each time stamp: ties must keep send order.
            w.send(0, u64::from(i / 4) * 100, v4(i as u16, 0, i));
        }
        let got = drain(&mut w, 1);
        assert_eq!(got.len(), 1000);
        let ids: Vec<u32> = got.iter().map(|(_, f)| id_of(f)).collect();
        let times: Vec<u64> = got.iter().map(|(t, _)| *t).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "earliest first");
        if jitter == 0 {
            assert_eq!(ids, (0..1000).collect::<Vec<_>>(), "{paths} paths");
            assert_eq!(times[0], 5000);
        } else {
            assert!(inversions(&ids) > 50, "{} inversions", inversions(&ids));
            assert!(
                times
                    .iter()
                    .all(|t| (5000..=24_900 + 5000 + 2000).contains(t))
            );
        }
    }
}

#[test]
fn receive_waits_for_arrival_and_inject_is_separate() {
    let mut w = Wire::new(WireConfig::uniform(2, path(300, 0)), 0);
    assert_eq!(w.next_arrival(1), None);
    assert_eq!(w.receive(1, u64::MAX), None);
    let f = v4(1, 0, 1);
    w.send(0, 100, f.clone());
    let junk = vec![0xff; 7];
    w.inject(1, 400, junk.clone());
    assert_eq!(w.in_flight(), 2);
    assert_eq!(w.next_arrival(1), Some(400));
    assert_eq!(w.next_arrival(0), None);
    assert_eq!(w.receive(1, 399), None);
    assert_eq!(w.receive(1, 400), Some(f));
    assert_eq!(w.receive(1, 400), Some(junk));
    assert_eq!(w.in_flight(), 0);
    assert_eq!(w.stats().injected, [0, 1]);
    assert_eq!(w.stats().total().sent, 1);
}

#[test]
fn rate_spaces_frames_on_a_link() {
    let mut cfg = WireConfig::uniform(2, path(1000, 0));
    cfg.path_map = PathMap::Modulo;
    cfg.rate_bits_per_ns = Some(8.0); // one byte per ns
    let mut w = Wire::new(cfg, 0);
    let len = v4(0, 0, 0).len();
    let slot = (len.max(MIN_FRAME) + LINK_OVERHEAD) as u64;
    // Ten frames at once on path 0, one on path 1.
    for i in 0..10u32 {
        w.send(0, 0, v4(0, 0, i));
    }
    w.send(0, 0, v4(1, 0, 99));
    let got = drain(&mut w, 1);
    let path0: Vec<u64> = got
        .iter()
        .filter(|(_, f)| id_of(f) != 99)
        .map(|(t, _)| *t)
        .collect();
    let want: Vec<u64> = (1..=10).map(|k| k * slot + 1000).collect();
    assert_eq!(path0, want);
    let path1 = got.iter().find(|(_, f)| id_of(f) == 99).expect("path 1");
    assert_eq!(path1.0, slot + 1000, "path 1 is a separate link");
    // The other direction is a separate link too.
    w.send(1, 0, v4(0, 0, 0));
    assert_eq!(w.next_arrival(0), Some(slot + 1000));
    // An idle link starts at the send time.
    w.send(0, 1_000_000, v4(0, 0, 0));
    assert_eq!(w.next_arrival(1), Some(1_000_000 + slot + 1000));
}

#[test]
fn path_of_follows_the_udp_source_port() {
    // SplitMix64 known answer: the generator's first output from state 0.
    assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
    let seed = 0x5eed;
    let mut cfg = WireConfig::uniform(4, PathConfig::default());
    cfg.path_map = PathMap::Hash { seed };
    let w = Wire::new(cfg, 0);
    let mut count = [0usize; 4];
    for port in 0..1000u16 {
        let want = (splitmix64(u64::from(port) ^ seed) % 4) as usize;
        assert_eq!(w.path_of(&v4(port, 0, 0)), want);
        assert_eq!(w.path_of(&v6(port, 0, 0)), want);
        count[want] += 1;
    }
    assert!(count.iter().all(|&c| c > 150), "spread {count:?}");
    assert_eq!(PathMap::Modulo.path_of(4794, 4), 2);
    assert_eq!(PathMap::Hash { seed: 1 }.path_of(3, 0), 0);
}

#[test]
fn frames_without_udp_take_path_0() {
    let cfg = WireConfig {
        paths: vec![
            PathConfig {
                ecn_mark: 1.0,
                ..path(10, 0)
            };
            4
        ],
        path_map: PathMap::Modulo,
        rate_bits_per_ns: None,
    };
    let mut w = Wire::new(cfg, 0);
    let full = v4(3, 2, 0);
    assert_eq!(w.path_of(&full), 3);
    let ip_end = ETH_LEN + Ipv4Header::MIN_LEN;
    // (frame, whether its IP header is complete and so is marked CE).
    let mut frames: Vec<(Vec<u8>, bool)> = (0..ip_end + UDP_LEN)
        .map(|n| (full[..n].to_vec(), n >= ip_end))
        .collect();
    // Non-first fragment (no UDP header in it).
    let frag = Ipv4Header {
        ecn: IpEcn::try_new(2).expect("2 bits"),
        source: [1, 2, 3, 4],
        destination: [5, 6, 7, 8],
        fragment_offset: IpFragOffset::try_new(8).expect("13 bits"),
        ..Default::default()
    };
    frames.push((build(IpHeaders::Ipv4(frag, Default::default()), 3, 0), true));
    // Not IP (ARP), and IPv4 with a bad IHL.
    let mut arp = full.clone();
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    frames.push((arp, false));
    let mut bad_ihl = full.clone();
    bad_ihl[ETH_LEN] = 0x43;
    frames.push((bad_ihl, false));
    // IPv6 cut anywhere before the end of the UDP header, and with
    // IPv4's version nibble.
    let six = v6(3, 2, 0);
    assert_eq!(w.path_of(&six), 3);
    let six_end = ETH_LEN + IPV6_LEN;
    frames.extend((ETH_LEN..six_end + UDP_LEN).map(|n| (six[..n].to_vec(), n >= six_end)));
    let mut six_as_four = six.clone();
    six_as_four[ETH_LEN] = 0x45;
    frames.push((six_as_four, false));
    for (f, _) in &frames {
        assert_eq!(w.path_of(f), 0, "{f:02x?}");
        w.send(0, 0, f.clone());
    }
    let got = drain(&mut w, 1);
    assert_eq!(got.len(), frames.len());
    for ((_, g), (f, marked)) in got.iter().zip(&frames) {
        assert_eq!(g.len(), f.len());
        if !marked {
            assert_eq!(g, f);
        } else if f[ETH_LEN] >> 4 == 4 {
            assert_eq!(g[ETH_LEN + 1] & 3, 3);
            assert!(v4_checksum_ok(g));
        } else {
            assert_eq!(g[ETH_LEN + 1] >> 4 & 3, 3);
        }
    }
    let marked = frames.iter().filter(|(_, m)| *m).count() as u64;
    assert_eq!(w.stats().total().ce_marked, marked);
}
