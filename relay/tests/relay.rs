//! The relay over real loopback sockets, with soft-NIC endpoints on both sides.

use std::cell::{Cell, RefCell};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use metaroce_relay::{
    ForwardInfo, LINKTYPE_RAW, LinkConfig, PathConfig, PathMap, Relay, RelayConfig, RelayHandle,
};
use metaroce_udp::{Ecn, Endpoint, EndpointConfig, RxBatch, TxPacket};

const V4: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const V6: IpAddr = IpAddr::V6(Ipv6Addr::LOCALHOST);
/// Upper bound on any wait, only to avoid hanging on a bug.
const DEADLINE: Duration = Duration::from_secs(30);

fn nic(ip: IpAddr, paths: usize) -> Endpoint {
    let mut cfg = EndpointConfig::new(ip, 0, vec![0; paths]);
    cfg.gro = false;
    Endpoint::bind(&cfg).expect("bind NIC")
}

/// A v4 NIC with two entropy ports `p, p + 1` (so `Modulo` puts them on distinct paths).
fn nic_on_consecutive_ports() -> Endpoint {
    let base = 20_000 + (std::process::id() % 5000) as u16 * 2;
    (0..200u16)
        .find_map(|k| {
            let p = base + 4 * k;
            Endpoint::bind(&EndpointConfig::new(V4, 0, vec![p, p + 1])).ok()
        })
        .expect("two free consecutive ports")
}

/// A relay between NICs `a` and `b`: link 0 carries A→B, link 1 B→A.
fn relay_between(
    a: &Endpoint,
    b: &Endpoint,
    paths: Vec<PathConfig>,
    tune: impl FnOnce(&mut RelayConfig),
) -> RelayHandle {
    let ip = a.listen_addr().ip();
    let links = vec![
        LinkConfig {
            listen: SocketAddr::new(ip, 0),
            forward_to: b.listen_addr(),
        },
        LinkConfig {
            listen: SocketAddr::new(ip, 0),
            forward_to: a.listen_addr(),
        },
    ];
    let mut cfg = RelayConfig::new(links, paths);
    tune(&mut cfg);
    Relay::start(cfg).expect("start relay")
}

/// Sends one datagram per entry of `paths` from `from` to `to`; payload = 4-byte index + 4-byte path.
fn send_indexed(from: &Endpoint, to: SocketAddr, first: u32, paths: &[usize], len: usize) {
    let bufs: Vec<Vec<u8>> = paths
        .iter()
        .enumerate()
        .map(|(k, &p)| {
            let mut v = vec![0xa5u8; len.max(8)];
            v[..4].copy_from_slice(&(first + k as u32).to_be_bytes());
            v[4..8].copy_from_slice(&(p as u32).to_be_bytes());
            v
        })
        .collect();
    let pkts: Vec<TxPacket<'_>> = bufs
        .iter()
        .zip(paths)
        .map(|(data, &path)| TxPacket {
            path,
            dst: to,
            ecn: None,
            data,
        })
        .collect();
    let start = Instant::now();
    let mut done = 0;
    while done < pkts.len() {
        assert!(start.elapsed() < DEADLINE, "send stalled");
        let n = from.send(&pkts[done..]).expect("send");
        if n == 0 {
            from.wait(Some(Duration::from_millis(50)), Some(pkts[done].path))
                .expect("wait");
        }
        done += n;
    }
}

/// Receives until `done()` holds (or the deadline), calling `f` on each datagram.
fn drain(
    ep: &Endpoint,
    rx: &mut RxBatch,
    mut done: impl FnMut() -> bool,
    mut f: impl FnMut(&[u8], SocketAddr, Ecn),
) {
    let start = Instant::now();
    while start.elapsed() < DEADLINE {
        ep.wait(Some(Duration::from_millis(20)), None)
            .expect("wait");
        ep.recv(rx).expect("recv");
        for d in rx.datagrams() {
            f(d.data, d.src, d.ecn);
        }
        if done() {
            // Take whatever is still queued in the socket.
            while ep.recv(rx).expect("recv") > 0 {
                for d in rx.datagrams() {
                    f(d.data, d.src, d.ecn);
                }
            }
            return;
        }
    }
    panic!("relay did not settle before the deadline");
}

fn total(relay: &RelayHandle, f: impl Fn(&metaroce_relay::PathCounters) -> u64) -> u64 {
    relay.all_counters().iter().map(f).sum()
}

/// Every datagram reaches the peer from the relay port of the path its source port hashes to.
fn mapping_preserved(ip: IpAddr) {
    let a = nic(ip, 6);
    let b = nic(ip, 2);
    let relay = relay_between(&a, &b, vec![PathConfig::default(); 4], |_| {});
    let to_b = relay.listen_addrs()[0];
    let paths: Vec<usize> = (0..600).map(|i| i % 6).collect();
    send_indexed(&a, to_b, 0, &paths, 200);
    let mut rx = b.new_rx_batch();
    let mut got = 0u64;
    drain(
        &b,
        &mut rx,
        || total(&relay, |c| c.forwarded) == 600,
        |data, src, ecn| {
            let a_path = u32::from_be_bytes(data[4..8].try_into().expect("4 bytes")) as usize;
            let relay_path = relay.path_of_port(a.src_port(a_path).expect("port"));
            assert_eq!(
                src,
                relay.path_addrs()[relay_path],
                "per-path source preserved"
            );
            assert_eq!(ecn, Ecn::Ect0, "the sender's ECN bits are kept");
            got += 1;
        },
    );
    assert_eq!(got, 600);
    // Counters per path match what the sender put on the entropy ports of that path.
    for (p, c) in relay.all_counters().iter().enumerate() {
        let want = paths
            .iter()
            .filter(|&&ap| relay.path_of_port(a.src_port(ap).unwrap()) == p)
            .count() as u64;
        assert_eq!((c.received, c.forwarded), (want, want), "path {p}");
        assert_eq!(c.bytes, want * 200);
    }
    // And the reverse link: B → relay link 1 → A.
    send_indexed(&b, relay.listen_addrs()[1], 0, &[1], 50);
    let mut rx = a.new_rx_batch();
    let mut back = None;
    drain(
        &a,
        &mut rx,
        || total(&relay, |c| c.forwarded) == 601,
        |d, src, _| back = Some((d.len(), src)),
    );
    let p = relay.path_of_port(b.src_port(1).unwrap());
    assert_eq!(back, Some((50, relay.path_addrs()[p])));
    relay.stop().expect("clean stop");
}

#[test]
fn per_path_mapping_preserved_v4() {
    mapping_preserved(V4);
}

#[test]
fn per_path_mapping_preserved_v6() {
    mapping_preserved(V6);
}

#[test]
fn random_loss_rate_within_bounds() {
    const N: u64 = 4000;
    const P: f64 = 0.1;
    let a = nic(V4, 4);
    let b = nic(V4, 1);
    let path = PathConfig {
        loss: P,
        ..PathConfig::default()
    };
    let relay = relay_between(&a, &b, vec![path; 2], |c| c.seed = 0x5eed);
    let to_b = relay.listen_addrs()[0];
    let mut rx = b.new_rx_batch();
    let received = Cell::new(0u64);
    let mut sent = 0u64;
    while sent < N {
        let chunk: Vec<usize> = (0..64.min(N - sent)).map(|i| i as usize % 4).collect();
        send_indexed(&a, to_b, sent as u32, &chunk, 100);
        sent += chunk.len() as u64;
        // Pace: wait until the relay has handled the chunk and B has read its share.
        drain(
            &b,
            &mut rx,
            || {
                let c = relay.all_counters();
                let handled: u64 = c.iter().map(|c| c.forwarded + c.dropped_loss).sum();
                handled == sent && received.get() == c.iter().map(|c| c.forwarded).sum::<u64>()
            },
            |_, _, _| received.set(received.get() + 1),
        );
    }
    let lost = total(&relay, |c| c.dropped_loss);
    let received = received.get();
    assert_eq!(
        received + lost,
        N,
        "every datagram is either forwarded or lost"
    );
    assert_eq!(
        total(&relay, |c| c.dropped_queue + c.blackholed + c.send_errors),
        0
    );
    // Binomial(4000, 0.1): mean 400, sd 19; accept ±5 sd.
    let sd = (N as f64 * P * (1.0 - P)).sqrt();
    let mean = N as f64 * P;
    assert!((lost as f64 - mean).abs() < 5.0 * sd, "lost {lost} of {N}");
    relay.stop().expect("clean stop");
}

#[test]
fn blackholed_path_forwards_nothing_until_restored() {
    let a = nic_on_consecutive_ports();
    let b = nic(V4, 1);
    let relay = relay_between(&a, &b, vec![PathConfig::default(); 2], |_| {});
    let to_b = relay.listen_addrs()[0];
    let dead = relay.path_of_port(a.src_port(1).unwrap());
    let live = relay.path_of_port(a.src_port(0).unwrap());
    assert_ne!(dead, live, "consecutive ports land on distinct paths");
    assert!(relay.execute("blackhole").is_err(), "a path is required");
    assert_eq!(
        relay
            .execute(&format!("blackhole {dead}"))
            .expect("command"),
        "ok"
    );
    let paths: Vec<usize> = (0..200).map(|i| i % 2).collect();
    send_indexed(&a, to_b, 0, &paths, 64);
    let mut rx = b.new_rx_batch();
    let mut from_paths = vec![0u64; 2];
    drain(
        &b,
        &mut rx,
        || {
            let d = relay.counters(dead).unwrap();
            let l = relay.counters(live).unwrap();
            d.blackholed == 100 && l.forwarded == 100
        },
        |data, _, _| from_paths[u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize] += 1,
    );
    assert_eq!(from_paths, vec![100, 0], "nothing from the blackholed path");
    let d = relay.counters(dead).unwrap();
    assert_eq!((d.received, d.forwarded, d.blackholed), (100, 0, 100));
    relay.restore(dead).expect("restore");
    send_indexed(&a, to_b, 1000, &[1; 10], 64);
    drain(
        &b,
        &mut rx,
        || relay.counters(dead).unwrap().forwarded == 10,
        |data, _, _| {
            assert_eq!(u32::from_be_bytes(data[4..8].try_into().unwrap()), 1);
        },
    );
    relay.stop().expect("clean stop");
}

#[test]
fn rate_limited_path_marks_ce_above_threshold_and_drops_at_queue_limit() {
    const N: usize = 300;
    let a = nic(V4, 1);
    let b = nic(V4, 1);
    let path = PathConfig {
        rate_bps: Some(20_000_000),
        burst_bytes: 4000,
        queue_bytes: 200_000,
        ecn_threshold_bytes: Some(20_000),
        ..PathConfig::default()
    };
    let relay = relay_between(&a, &b, vec![path], |_| {});
    let to_b = relay.listen_addrs()[0];
    // 300 × 1000 B at once: far above 20 Mbit/s, so the queue builds past the threshold
    // (marks) and past its limit (drops).
    send_indexed(&a, to_b, 0, &vec![0; N], 1000);
    let mut rx = b.new_rx_batch();
    let mut ce = 0u64;
    let mut first_ce = None;
    let got = Cell::new(0u64);
    drain(
        &b,
        &mut rx,
        || {
            let c = relay.counters(0).unwrap();
            c.received == N as u64
                && c.forwarded + c.dropped_queue == N as u64
                && got.get() == c.forwarded
        },
        |data, _, ecn| {
            let idx = u32::from_be_bytes(data[..4].try_into().unwrap());
            if ecn == Ecn::Ce {
                ce += 1;
                first_ce.get_or_insert(idx);
            } else {
                assert_eq!(ecn, Ecn::Ect0);
            }
            got.set(got.get() + 1);
        },
    );
    let c = relay.counters(0).unwrap();
    assert!(ce > 0, "some datagrams were marked");
    assert_eq!(ce, c.ce_marked, "every mark arrives as CE");
    assert!(c.dropped_queue > 0, "the 200 kB queue overflowed");
    // Below the threshold (20 kB ≈ 20 datagrams behind the burst) nothing is marked.
    assert!(first_ce.unwrap() >= 20, "first mark at {first_ce:?}");
    relay.stop().expect("clean stop");
}

#[test]
fn not_ect_traffic_is_never_marked() {
    let a = nic(V4, 1);
    let b = nic(V4, 1);
    let path = PathConfig {
        rate_bps: Some(10_000_000),
        ecn_threshold_bytes: Some(0),
        ..PathConfig::default()
    };
    let relay = relay_between(&a, &b, vec![path], |_| {});
    let raw = UdpSocket::bind((V4, 0)).unwrap(); // TOS 0: Not-ECT
    for i in 0..20u8 {
        raw.send_to(&[i; 500], relay.listen_addrs()[0]).unwrap();
    }
    let mut rx = b.new_rx_batch();
    let got = Cell::new(0);
    drain(
        &b,
        &mut rx,
        || got.get() == 20,
        |_, _, ecn| {
            assert_eq!(ecn, Ecn::NotEct);
            got.set(got.get() + 1);
        },
    );
    assert_eq!(relay.counters(0).unwrap().ce_marked, 0);
}

#[test]
fn delay_and_background_load_still_deliver_everything() {
    let a = nic(V4, 1);
    let b = nic(V4, 1);
    let path = PathConfig {
        rate_bps: Some(50_000_000),
        delay: Duration::from_millis(5),
        ..PathConfig::default()
    };
    let relay = relay_between(&a, &b, vec![path], |c| {
        c.path_map = PathMap::Hash { seed: 9 }
    });
    relay.set_load(0, 0.5).expect("load");
    assert!(relay.set_load(0, 1.0).is_err());
    assert!(relay.set_loss(3, 0.1).is_err());
    send_indexed(&a, relay.listen_addrs()[0], 0, &[0; 100], 1200);
    let mut rx = b.new_rx_batch();
    let order = RefCell::new(Vec::new());
    drain(
        &b,
        &mut rx,
        || order.borrow().len() == 100 && relay.counters(0).unwrap().forwarded == 100,
        |d, _, _| {
            order
                .borrow_mut()
                .push(u32::from_be_bytes(d[..4].try_into().unwrap()))
        },
    );
    assert_eq!(
        order.into_inner(),
        (0..100).collect::<Vec<_>>(),
        "one path is FIFO"
    );
    let stats = relay.execute("stats").expect("stats");
    assert!(stats.contains("forwarded=100"), "{stats}");
    assert!(stats.contains("load=0.5"), "{stats}");
}

#[test]
fn control_socket_runs_commands() {
    let a = nic(V4, 1);
    let b = nic(V4, 1);
    let relay = relay_between(&a, &b, vec![PathConfig::default(); 3], |c| {
        c.control = Some(SocketAddr::new(V4, 0));
    });
    let ctl = UdpSocket::bind((V4, 0)).unwrap();
    ctl.set_read_timeout(Some(DEADLINE)).unwrap();
    ctl.send_to(
        b"blackhole 2\nloss 1 0.25\nfly\nstats\n",
        relay.control_addr().unwrap(),
    )
    .unwrap();
    let mut buf = [0u8; 4096];
    let n = ctl.recv(&mut buf).expect("reply");
    let reply = std::str::from_utf8(&buf[..n]).unwrap();
    let lines: Vec<&str> = reply.lines().collect();
    assert_eq!(lines[0], "ok");
    assert_eq!(lines[1], "ok");
    assert!(lines[2].starts_with("error: bad command"), "{reply}");
    assert!(lines[3].starts_with("path 0 "), "{reply}");
    assert!(lines[4].contains("loss=0.25"), "{reply}");
    assert!(
        lines[5].starts_with("path 2 ") && lines[5].contains("blackhole=1"),
        "{reply}"
    );
}

#[test]
fn rewrite_hook_sees_each_forwarded_datagram() {
    let a = nic(V4, 1);
    let b = nic(V4, 1);
    let b_addr = b.listen_addr();
    let relay = relay_between(&a, &b, vec![PathConfig::default(); 2], |c| {
        c.rewrite = Some(Box::new(move |buf: &mut [u8], info: &ForwardInfo| {
            // Stamp the path and the destination port into the payload tail.
            let n = buf.len();
            buf[n - 1] = info.path as u8;
            buf[n - 3..n - 1].copy_from_slice(&info.dst.port().to_be_bytes());
            assert_eq!(info.dst, b_addr);
        }));
    });
    send_indexed(&a, relay.listen_addrs()[0], 0, &[0; 5], 40);
    let mut rx = b.new_rx_batch();
    let got = Cell::new(0);
    let want_path = relay.path_of_port(a.src_port(0).unwrap()) as u8;
    drain(
        &b,
        &mut rx,
        || got.get() == 5,
        |d, src, _| {
            assert_eq!(d[39], want_path);
            assert_eq!(&d[37..39], &b_addr.port().to_be_bytes());
            assert_eq!(src, relay.path_addrs()[want_path as usize]);
            got.set(got.get() + 1);
        },
    );
}

#[test]
fn pcap_file_parses() {
    let a = nic(V4, 1);
    let b = nic(V4, 1);
    let file =
        std::env::temp_dir().join(format!("metaroce-relay-test-{}.pcap", std::process::id()));
    let f2 = file.clone();
    let relay = relay_between(&a, &b, vec![PathConfig::default()], move |c| {
        c.pcap = Some(f2)
    });
    send_indexed(&a, relay.listen_addrs()[0], 0, &[0; 10], 300);
    let mut rx = b.new_rx_batch();
    let got = Cell::new(0);
    drain(
        &b,
        &mut rx,
        || got.get() == 10,
        |_, _, _| got.set(got.get() + 1),
    );
    let from = relay.path_addrs()[0];
    relay.stop().expect("clean stop flushes the pcap");

    let bytes = std::fs::read(&file).expect("pcap written");
    std::fs::remove_file(&file).ok();
    let mut reader = pcap_file::pcap::PcapReader::new(&bytes[..]).expect("pcap header");
    assert_eq!(u32::from(reader.header().datalink), LINKTYPE_RAW);
    let mut records = 0u32;
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.expect("record");
        let d = &pkt.data;
        assert_eq!(d.len(), 20 + 8 + 300);
        assert_eq!(d[0], 0x45, "IPv4, 20-byte header");
        assert_eq!(d[1] & 3, Ecn::Ect0.bits(), "ECN bits recorded");
        assert_eq!(d[9], 17, "UDP");
        assert_eq!(u16::from_be_bytes([d[20], d[21]]), from.port());
        assert_eq!(u16::from_be_bytes([d[22], d[23]]), b.listen_addr().port());
        assert_eq!(
            u32::from_be_bytes(d[28..32].try_into().unwrap()),
            records,
            "payload in order"
        );
        // The IPv4 header checksum verifies: the one's-complement sum is 0xffff.
        let mut sum: u32 = d[..20]
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(sum, 0xffff);
        records += 1;
    }
    assert_eq!(records, 10);
}

#[test]
fn bad_configs_are_rejected() {
    let link = LinkConfig {
        listen: SocketAddr::new(V4, 0),
        forward_to: SocketAddr::new(V4, 9),
    };
    assert!(Relay::start(RelayConfig::new(vec![], vec![PathConfig::default()])).is_err());
    assert!(Relay::start(RelayConfig::new(vec![link], vec![])).is_err());
    let lossy = PathConfig {
        loss: 1.5,
        ..PathConfig::default()
    };
    assert!(Relay::start(RelayConfig::new(vec![link], vec![lossy])).is_err());
    let v6 = LinkConfig {
        listen: SocketAddr::new(V4, 0),
        forward_to: SocketAddr::new(V6, 9),
    };
    assert!(Relay::start(RelayConfig::new(vec![v6], vec![PathConfig::default()])).is_err());
}
