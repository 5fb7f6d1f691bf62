//! Real-socket tests of `metaroce-udp` on 127.0.0.1 and [::1].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use metaroce_udp::{
    BatchSocket, Ecn, Endpoint, EndpointConfig, Error, MAX_BATCH, RxBatch, SocketOptions, TxPacket,
};

const V4: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const V6: IpAddr = IpAddr::V6(Ipv6Addr::LOCALHOST);
/// Upper bound on any wait, only to avoid hanging on a bug.
const DEADLINE: Duration = Duration::from_secs(20);

fn endpoint(ip: IpAddr, paths: usize, gso: bool, gro: bool) -> Endpoint {
    let mut cfg = EndpointConfig::new(ip, 0, vec![0; paths]);
    cfg.gso = gso;
    cfg.gro = gro;
    Endpoint::bind(&cfg).expect("bind endpoint")
}

/// A datagram's payload: 8-byte sequence number, then bytes derived from it.
fn payload(seq: u64, len: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend((8..len).map(|i| (seq as usize * 31 + i * 7) as u8));
}

/// Receives until `want` datagrams arrived (or the deadline), calling `f` on each.
fn receive(
    ep: &Endpoint,
    rx: &mut RxBatch,
    want: usize,
    mut f: impl FnMut(&[u8], SocketAddr, Ecn),
) -> usize {
    let start = Instant::now();
    let mut got = 0;
    while got < want && start.elapsed() < DEADLINE {
        ep.wait(Some(Duration::from_millis(200)), None)
            .expect("wait");
        let n = ep.recv(rx).expect("recv");
        let mut seen = 0;
        for d in rx.datagrams() {
            f(d.data, d.src, d.ecn);
            seen += 1;
        }
        assert_eq!(seen, n, "recv count matches the iterated datagrams");
        got += n;
    }
    got
}

/// Sends all of `pkts`, waiting for writability when the kernel pushes back.
fn send_all(ep: &Endpoint, pkts: &[TxPacket<'_>]) {
    let start = Instant::now();
    let mut done = 0;
    while done < pkts.len() {
        assert!(start.elapsed() < DEADLINE, "send stalled");
        let n = ep.send(&pkts[done..]).expect("send");
        if n == 0 {
            ep.wait(Some(Duration::from_millis(100)), Some(pkts[done].path))
                .expect("wait");
        }
        done += n;
    }
}

fn many_paths_batch(ip: IpAddr) {
    const PATHS: usize = 8;
    const COUNT: usize = 3000;
    let a = endpoint(ip, PATHS, true, false);
    let b = endpoint(ip, 1, true, false);
    let dst = b.listen_addr();
    let mut rx = b.new_rx_batch();
    let mut seen = vec![false; COUNT];
    let mut bufs: Vec<Vec<u8>> = (0..MAX_BATCH).map(|_| Vec::new()).collect();
    let mut received = 0;
    for chunk_start in (0..COUNT).step_by(MAX_BATCH) {
        let n = MAX_BATCH.min(COUNT - chunk_start);
        for (k, buf) in bufs.iter_mut().take(n).enumerate() {
            let seq = (chunk_start + k) as u64;
            payload(seq, 16 + (seq as usize * 37) % 1400, buf);
        }
        // Runs of 4 packets per path, so sendmmsg gets multi-message runs.
        let pkts: Vec<TxPacket<'_>> = bufs[..n]
            .iter()
            .enumerate()
            .map(|(k, buf)| TxPacket {
                path: ((chunk_start + k) / 4) % PATHS,
                dst,
                ecn: None,
                data: buf,
            })
            .collect();
        send_all(&a, &pkts);
        received += receive(&b, &mut rx, n, |data, src, ecn| {
            let seq = u64::from_be_bytes(data[..8].try_into().expect("8 bytes")) as usize;
            assert!(seq < COUNT, "sequence in range");
            assert!(!seen[seq], "no duplicate {seq}");
            seen[seq] = true;
            let mut want = Vec::new();
            payload(seq as u64, 16 + (seq * 37) % 1400, &mut want);
            assert_eq!(data, &want[..], "contents of {seq}");
            let path = (seq / 4) % PATHS;
            assert_eq!(
                src,
                SocketAddr::new(ip, a.src_port(path).expect("path")),
                "source of {seq}"
            );
            assert_eq!(ecn, Ecn::Ect0, "default ECN is ECT(0)");
        });
    }
    assert_eq!(received, COUNT);
    assert!(seen.iter().all(|&s| s));
}

#[test]
fn batch_send_receive_many_paths_v4() {
    many_paths_batch(V4);
}

#[test]
fn batch_send_receive_many_paths_v6() {
    many_paths_batch(V6);
}

#[test]
fn source_ports_are_the_configured_ones() {
    // Pick free ports by binding ephemeral sockets, then ask for them explicitly.
    let probe = endpoint(V4, 3, false, false);
    let ports: Vec<u16> = (0..3).map(|p| probe.src_port(p).expect("port")).collect();
    drop(probe);
    let a =
        Endpoint::bind(&EndpointConfig::new(V4, 0, ports.clone())).expect("bind explicit ports");
    let b = endpoint(V4, 1, false, false);
    for (path, port) in ports.iter().enumerate() {
        assert_eq!(a.src_port(path), Some(*port));
        let data = [path as u8; 10];
        let n = a
            .send(&[TxPacket {
                path,
                dst: b.listen_addr(),
                ecn: None,
                data: &data,
            }])
            .expect("send");
        assert_eq!(n, 1);
        let mut rx = b.new_rx_batch();
        let got = receive(&b, &mut rx, 1, |d, src, _| {
            assert_eq!(d, &data);
            assert_eq!(src.port(), *port);
        });
        assert_eq!(got, 1);
    }
}

fn ecn_read_back(ip: IpAddr) {
    let b = endpoint(ip, 1, false, false);
    // A socket whose TOS byte is 3: every datagram leaves CE-marked.
    let ce_opts = SocketOptions {
        ecn: Ecn::Ce,
        ..SocketOptions::default()
    };
    let ce_sock = BatchSocket::bind(SocketAddr::new(ip, 0), &ce_opts).expect("bind");
    let plain = BatchSocket::bind(SocketAddr::new(ip, 0), &SocketOptions::default()).expect("bind");
    let dst = b.listen_addr();
    let pkt = |ecn, data| TxPacket {
        path: 0,
        dst,
        ecn,
        data,
    };
    assert_eq!(
        ce_sock
            .send_batch(&[pkt(None, b"ce-socket")])
            .expect("send"),
        1
    );
    // Per-datagram overrides through the TOS / TCLASS cmsg.
    let sent = plain
        .send_batch(&[
            pkt(None, b"default"),
            pkt(Some(Ecn::Ce), b"override-ce"),
            pkt(Some(Ecn::NotEct), b"override-not-ect"),
            pkt(Some(Ecn::Ect1), b"override-ect1"),
        ])
        .expect("send");
    assert_eq!(sent, 4);
    let mut rx = b.new_rx_batch();
    let mut got = Vec::new();
    receive(&b, &mut rx, 5, |d, src, ecn| {
        got.push((d.to_vec(), src, ecn))
    });
    got.sort_by(|x, y| x.0.cmp(&y.0));
    let want = [
        (&b"ce-socket"[..], ce_sock.local_addr(), Ecn::Ce),
        (b"default", plain.local_addr(), Ecn::Ect0),
        (b"override-ce", plain.local_addr(), Ecn::Ce),
        (b"override-ect1", plain.local_addr(), Ecn::Ect1),
        (b"override-not-ect", plain.local_addr(), Ecn::NotEct),
    ];
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!((&g.0[..], g.1, g.2), w);
    }
}

#[test]
fn ecn_bits_read_back_v4() {
    ecn_read_back(V4);
}

#[test]
fn ecn_bits_read_back_v6() {
    ecn_read_back(V6);
}

/// 40 equal datagrams and a short tail to one destination: one GSO send. With GRO the
/// receiver gets merged reads that `datagrams()` splits back.
fn gso_roundtrip(ip: IpAddr, gro: bool) {
    const SEG: usize = 1200;
    const N: usize = 41;
    let a = endpoint(ip, 2, true, false);
    assert!(a.gso_enabled(), "this kernel supports UDP GSO on loopback");
    let b = endpoint(ip, 1, false, gro);
    assert_eq!(b.gro_enabled(), gro);
    let mut bufs = vec![Vec::new(); N];
    for (i, buf) in bufs.iter_mut().enumerate() {
        payload(i as u64, if i == N - 1 { 300 } else { SEG }, buf);
    }
    let pkts: Vec<TxPacket<'_>> = bufs
        .iter()
        .map(|data| TxPacket {
            path: 1,
            dst: b.listen_addr(),
            ecn: None,
            data,
        })
        .collect();
    send_all(&a, &pkts);
    assert!(a.gso_enabled(), "the kernel accepted the GSO send");
    let mut rx = b.new_rx_batch();
    let mut order = Vec::new();
    let mut merged = 0;
    let start = Instant::now();
    while order.len() < N && start.elapsed() < DEADLINE {
        b.wait(Some(Duration::from_millis(200)), None)
            .expect("wait");
        b.recv(&mut rx).expect("recv");
        merged += rx.merged_reads();
        for d in rx.datagrams() {
            let seq = u64::from_be_bytes(d.data[..8].try_into().expect("8 bytes"));
            let mut want = Vec::new();
            payload(
                seq,
                if seq as usize == N - 1 { 300 } else { SEG },
                &mut want,
            );
            assert_eq!(d.data, &want[..]);
            assert_eq!(d.src.port(), a.src_port(1).expect("port"));
            assert_eq!(d.ecn, Ecn::Ect0);
            order.push(seq);
        }
    }
    assert_eq!(
        order,
        (0..N as u64).collect::<Vec<_>>(),
        "all datagrams, in order"
    );
    if gro {
        assert!(merged > 0, "GRO merged the GSO send on loopback");
    } else {
        assert_eq!(merged, 0);
    }
}

#[test]
fn gso_send_arrives_as_datagrams_v4() {
    gso_roundtrip(V4, false);
}

#[test]
fn gso_send_gro_merged_and_split_v4() {
    gso_roundtrip(V4, true);
}

#[test]
fn gso_send_gro_merged_and_split_v6() {
    gso_roundtrip(V6, true);
}

#[test]
fn gro_socket_refuses_small_buffers() {
    let b = endpoint(V4, 1, false, true);
    let mut small = RxBatch::new(4, 2048);
    assert!(matches!(b.recv(&mut small), Err(Error::Invalid(_))));
}

#[test]
fn oversized_datagram_is_dropped_and_counted() {
    let mut cfg = EndpointConfig::new(V4, 0, vec![0]);
    cfg.gro = false;
    cfg.max_datagram = 512;
    let b = Endpoint::bind(&cfg).expect("bind");
    let a = endpoint(V4, 1, false, false);
    let big = [1u8; 2000];
    let small = [2u8; 100];
    let empty = [0u8; 0];
    let pkts: Vec<TxPacket<'_>> = [&big[..], &small[..], &empty[..]]
        .into_iter()
        .map(|data| TxPacket {
            path: 0,
            dst: b.listen_addr(),
            ecn: None,
            data,
        })
        .collect();
    assert_eq!(a.send(&pkts).expect("send"), 3);
    let mut rx = b.new_rx_batch();
    let mut got = Vec::new();
    receive(&b, &mut rx, 2, |d, _, _| got.push(d.to_vec()));
    assert_eq!(got, vec![small.to_vec(), Vec::new()]);
    assert_eq!(rx.truncated(), 1);
}

#[test]
fn bad_path_and_empty_config_are_errors() {
    let a = endpoint(V4, 2, false, false);
    let pkt = TxPacket {
        path: 2,
        dst: a.listen_addr(),
        ecn: None,
        data: b"x",
    };
    assert!(matches!(a.send(&[pkt]), Err(Error::Invalid(_))));
    assert!(a.wait(Some(Duration::ZERO), Some(5)).is_err());
    assert!(Endpoint::bind(&EndpointConfig::new(V4, 0, vec![])).is_err());
    // A v6 destination from a v4 socket is an OS error carried in the error.
    let v6dst = TxPacket {
        path: 0,
        dst: SocketAddr::new(V6, 9),
        ecn: None,
        data: b"x",
    };
    let err = a.send(&[v6dst]).expect_err("family mismatch");
    assert!(err.os_error().is_some());
}

#[test]
fn wait_times_out_when_idle_and_wakes_on_data() {
    let a = endpoint(V4, 1, false, false);
    let b = endpoint(V4, 1, false, false);
    let r = b.wait(Some(Duration::from_millis(20)), None).expect("wait");
    assert!(!r.readable);
    let w = a.wait(Some(Duration::ZERO), Some(0)).expect("wait");
    assert!(w.writable, "an idle UDP socket is writable");
    a.send(&[TxPacket {
        path: 0,
        dst: b.listen_addr(),
        ecn: None,
        data: b"wake",
    }])
    .expect("send");
    let r = b.wait(Some(DEADLINE), None).expect("wait");
    assert!(r.readable);
    // The single-socket wait agrees.
    let rx_sock = b.rx_socket();
    assert!(rx_sock.wait(false, Some(Duration::ZERO)).expect("wait"));
    assert!(
        a.tx_socket(0)
            .expect("path 0")
            .wait(true, Some(Duration::ZERO))
            .expect("wait")
    );
    let mut batch = b.new_rx_batch();
    assert_eq!(b.recv(&mut batch).expect("recv"), 1);
    assert!(
        !rx_sock.wait(false, Some(Duration::ZERO)).expect("wait"),
        "drained"
    );
}
