//! Authenticated mode on real sockets (spec §11.2): two NICs with the same key move
//! verified data and drop datagrams an attacker fires at them; a peer with another key
//! gets nothing through. A kind without authentication must refuse an authenticated QP.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use metaroce_driver::verbs::*;

use crate::{CaseKinds, Family, Side, SideOpts, connect_direct, pattern, write_all_pieces};

fn auth_opts(p: &CaseKinds<'_>, key: [u8; 32]) -> SideOpts {
    let mut o = p.opts(Family::V4);
    o.qp = Some(QpConfig {
        paths: 4,
        auth: Some(AuthKey(key)),
        ..QpConfig::default()
    });
    o
}

/// Both sides with authenticated QPs under `ka` and `kb`; `None` (skipped, saying
/// why) when a kind has no authentication, after checking that it refuses an
/// authenticated QP with EINVAL.
fn auth_sides(p: &CaseKinds<'_>, ka: [u8; 32], kb: [u8; 32]) -> Option<(Side, Side)> {
    for kind in [p.a, p.b] {
        let Some(why) = kind.limits().no_auth else {
            continue;
        };
        let Ok(side) = Side::start(kind, &p.opts(Family::V4)) else {
            continue;
        };
        let mut init = QpInit::new(&side.cq, &side.cq);
        init.config = auth_opts(p, ka).qp;
        let e = side.pd.create_qp(&init).expect_err("an authenticated QP");
        assert_eq!(e.errno(), 22, "refused with EINVAL: {e}");
        p.skip(format_args!(
            "{} refuses authenticated QPs: {why}",
            kind.name()
        ));
        return None;
    }
    Some((p.side_a(&auth_opts(p, ka))?, p.side_b(&auth_opts(p, kb))?))
}

/// Verified data gets through; 200 forged datagrams naming B's QP are dropped and
/// counted as bad tags, and nothing else is dropped.
pub fn authenticated_pair_moves_verified_data_and_drops_forgeries(p: &CaseKinds<'_>) {
    let Some((a, b)) = auth_sides(p, [9; 32], [9; 32]) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
    let bulk = p.bulk();
    let data = pattern(5, 2 * bulk);
    a.mr.write(0, &data);
    // An attacker on the host fires datagrams naming B's QP: a bare forged
    // WRITE-sized datagram, and the same with a made-up trailer.
    let attacker = UdpSocket::bind(SocketAddr::new(Family::V4.loopback(), 0)).unwrap();
    let mut forged = vec![0u8; 4096 + 92];
    forged[0] = 1;
    forged[4..8].copy_from_slice(&b.qp.qpn().to_be_bytes());
    forged[8..12].copy_from_slice(&a.qp.qpn().to_be_bytes());
    for i in 0..200u32 {
        forged[100] = i as u8;
        attacker.send_to(&forged, b.ctx.address()).unwrap();
    }
    write_all_pieces(&a, &b, bulk / 4, 8);
    assert!(b.mr.equals(0, &data), "WRITE data intact");
    let deadline = Instant::now() + Duration::from_secs(2);
    while b.ctx.drops().bad_tag < 200 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let d = b.ctx.drops();
    assert_eq!(d.bad_tag, 200, "{d:?}");
    assert_eq!(d.total(), 200, "nothing else dropped: {d:?}");
}

/// A peer under another key places nothing and its datagrams count as bad tags.
pub fn a_peer_with_another_key_gets_nothing_through(p: &CaseKinds<'_>) {
    let Some((a, b)) = auth_sides(p, [1; 32], [2; 32]) else {
        return;
    };
    connect_direct(&a, &b, &p.connect_options());
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
