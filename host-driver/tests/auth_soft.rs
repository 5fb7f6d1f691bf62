//! Authenticated mode on real sockets (spec §11.2): two soft NICs with the
//! same key move verified data and drop datagrams an attacker fires at them;
//! a peer with another key gets nothing through.

mod common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use common::*;
use metaroce_driver::verbs::*;

fn auth_side(key: [u8; 32]) -> Side {
    let mut o = SideOpts::new("127.0.0.1");
    o.qp = Some(QpConfig {
        paths: 4,
        auth: Some(AuthKey(key)),
        ..QpConfig::default()
    });
    side(&o)
}

#[test]
fn authenticated_pair_moves_verified_data_and_drops_forgeries() {
    let (a, b) = (auth_side([9; 32]), auth_side([9; 32]));
    connect_direct(&a, &b, &ConnectOptions::default());
    let data = pattern(5, 2 << 20);
    a.mr.write(0, &data);
    // An attacker on the host fires datagrams naming B's QP: a bare forged
    // WRITE-sized datagram, and the same with a made-up trailer.
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut forged = vec![0u8; 4096 + 92];
    forged[0] = 1;
    forged[4..8].copy_from_slice(&b.qp.qpn().to_be_bytes());
    forged[8..12].copy_from_slice(&a.qp.qpn().to_be_bytes());
    for i in 0..200u32 {
        forged[100] = i as u8;
        attacker.send_to(&forged, b.ctx.address()).unwrap();
    }
    for i in 0..8u64 {
        let off = (i as usize) << 18;
        let wr = SendRequest::write(
            i,
            a.mr.sge(off, 1 << 18),
            b.mr.addr() + off as u64,
            b.mr.rkey(),
        );
        a.qp.post_send(&wr).unwrap();
    }
    let wcs = wait_wcs(&a.cq, 8);
    assert!(
        wcs.len() == 8 && wcs.iter().all(|w| w.status == WcStatus::Success),
        "{wcs:?}"
    );
    assert!(b.mr.equals(0, &data), "WRITE data intact");
    let deadline = Instant::now() + Duration::from_secs(2);
    while b.ctx.drops().bad_tag < 200 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let d = b.ctx.drops();
    assert_eq!(d.bad_tag, 200, "{d:?}");
    assert_eq!(d.total(), 200, "nothing else dropped: {d:?}");
}

#[test]
fn a_peer_with_another_key_gets_nothing_through() {
    let (a, b) = (auth_side([1; 32]), auth_side([2; 32]));
    connect_direct(&a, &b, &ConnectOptions::default());
    a.mr.write(0, &[7; 4096]);
    let wr = SendRequest::write(1, a.mr.sge(0, 4096), b.mr.addr(), b.mr.rkey());
    a.qp.post_send(&wr).unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while b.ctx.drops().bad_tag == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(b.ctx.drops().bad_tag > 0);
    assert!(b.mr.equals(0, &[0; 4096]), "nothing placed");
}
