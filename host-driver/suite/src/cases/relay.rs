//! Through the relay on real sockets: integrity under loss, reordering and duplication;
//! malformed datagrams; a vanished peer.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use metaroce_driver::verbs::*;
use metaroce_relay::{LinkConfig, PathConfig, Relay, RelayConfig, RelayHandle};

use crate::{CaseKinds, Family, Side, pattern, wait_until, wait_wcs, write_all_pieces};

/// A relay between `a` and `b` (ICRC re-seal on) on the family's loopback address
/// (which no board takes), and both QPs connected through it.
fn through_relay(
    a: &Side,
    b: &Side,
    family: Family,
    paths: Vec<PathConfig>,
    opts: &ConnectOptions,
) -> RelayHandle {
    let any = SocketAddr::new(family.loopback(), 0);
    let mut cfg = RelayConfig::new(
        vec![
            LinkConfig {
                listen: any,
                forward_to: b.ctx.address(),
            },
            LinkConfig {
                listen: any,
                forward_to: a.ctx.address(),
            },
        ],
        paths,
    );
    cfg.reseal_icrc = true;
    cfg.seed = 7;
    let relay = Relay::start(cfg).expect("start relay");
    let (to_b, to_a) = (relay.listen_addrs()[0], relay.listen_addrs()[1]);
    let mut eb = b.qp.endpoint();
    eb.addr = to_b;
    let mut ea = a.qp.endpoint();
    ea.addr = to_a;
    a.qp.connect(&eb, opts).unwrap();
    b.qp.connect(&ea, opts).unwrap();
    relay
}

/// Paths with different delays (so packets reorder across them), loss and duplication.
fn rough_paths(n: usize, loss: f64, duplicate: f64) -> Vec<PathConfig> {
    (0..n)
        .map(|i| PathConfig {
            loss,
            duplicate,
            delay: Duration::from_micros(50 * i as u64),
            ..PathConfig::default()
        })
        .collect()
}

/// 4 bulk transfers of WRITEs in 16 messages (repeated to at least 4 MiB), SENDs of
/// 20,000 bytes (64 with the soft NIC's bulk of 1 MiB), then a READ, across 3% loss
/// and 2% duplication on 4 paths of different delays: every byte intact, losses
/// repaired, duplicates recognised, every ICRC verified.
pub fn integrity(p: &CaseKinds<'_>, family: Family) {
    let bulk = p.bulk();
    let mut o = p.opts(family);
    o.paths = 8;
    o.mem = 8 * bulk;
    let Some((a, b)) = p.sides(&o) else {
        return;
    };
    let relay = through_relay(
        &a,
        &b,
        family,
        rough_paths(4, 0.03, 0.02),
        &p.connect_options(),
    );

    // At least 4 MiB of WRITEs in rounds (a NIC with a small bulk repeats them), so
    // that 3% loss surely meets A's data and not only B's ACKs: a kind with 64 KiB
    // bulks sends about 1,000 data packets of 4 KiB; none lost has a chance below 10^-13.
    let rounds = (4usize << 20).div_ceil(4 * bulk);
    let mut data = Vec::new();
    for round in 0..rounds {
        data = pattern(42 + round as u64, 4 * bulk);
        a.mr.write(0, &data);
        write_all_pieces(&a, &b, bulk / 4, 16);
        assert!(wait_until(|| b.mr.equals(0, &data)), "WRITE data intact");
    }

    let base = 4 * bulk;
    let sends = (2 * bulk / 32768).min(64);
    for i in 0..sends as u64 {
        let off = base + (i as usize) * 32768;
        b.qp.post_recv(RecvWr {
            wr_id: 1000 + i,
            sgl: b.mr.sge(off, 32768).into(),
            stream: 0,
        })
        .unwrap();
        let msg = pattern(1000 + i, 20_000);
        a.mr.write(off, &msg);
        a.qp.post_send(&SendRequest::send(1000 + i, a.mr.sge(off, 20_000)))
            .unwrap();
    }
    assert_eq!(wait_wcs(&a.cq, sends).len(), sends);
    let recvs = wait_wcs(&b.cq, sends);
    assert_eq!(recvs.len(), sends);
    for (i, r) in recvs.iter().enumerate() {
        // One stream: receives complete in order.
        assert_eq!(
            (r.wr_id, r.status, r.byte_len),
            (1000 + i as u64, WcStatus::Success, 20_000)
        );
        let off = base + i * 32768;
        assert!(
            b.mr.equals(off, &pattern(1000 + i as u64, 20_000)),
            "SEND {i} intact"
        );
    }

    let rd = SendRequest::read(7, a.mr.sge(6 * bulk, bulk as u32), b.mr.addr(), b.mr.rkey());
    a.qp.post_send(&rd).unwrap();
    let w = wait_wcs(&a.cq, 1);
    assert_eq!(w[0].status, WcStatus::Success);
    assert!(a.mr.equals(6 * bulk, &data[..bulk]), "READ data intact");

    let c = relay.all_counters();
    let lost: u64 = c.iter().map(|p| p.dropped_loss).sum();
    let dup: u64 = c.iter().map(|p| p.duplicated).sum();
    assert!(
        lost > 0 && dup > 0,
        "the relay did drop and duplicate: {c:?}"
    );
    assert!(a.ctx.stats().retransmits > 0, "losses were repaired");
    assert!(b.ctx.stats().duplicates > 0, "duplicates were recognised");
    assert_eq!(
        c.iter().map(|p| p.bad_icrc).sum::<u64>(),
        0,
        "every ICRC verified"
    );
    let (da, db) = (a.ctx.drops(), b.ctx.drops());
    assert_eq!(
        da.bad_icrc + db.bad_icrc,
        0,
        "re-sealed ICRCs verify at the NICs"
    );
}

/// Datagrams straight at B (too short, garbage, a plausible header with a wrong ICRC)
/// are dropped and counted; the relay does not forward one whose ICRC fails; the
/// connection still works.
pub fn malformed_datagrams_are_dropped_and_counted(p: &CaseKinds<'_>) {
    let family = Family::V4;
    let Some((a, b)) = p.sides(&p.opts(family)) else {
        return;
    };
    let relay = through_relay(
        &a,
        &b,
        family,
        rough_paths(2, 0.0, 0.0),
        &p.connect_options(),
    );
    let rogue = UdpSocket::bind(SocketAddr::new(family.loopback(), 0)).unwrap();

    // Straight at the NIC: too short, garbage of MetaRoCE size, a real-looking header
    // with a wrong ICRC.
    let mut garbage = pattern(3, 200);
    rogue.send_to(&[1, 2, 3], b.ctx.address()).unwrap();
    rogue.send_to(&garbage, b.ctx.address()).unwrap();
    garbage[0] = 0x10; // plausible version nibble
    rogue.send_to(&garbage, b.ctx.address()).unwrap();
    // At the relay: must not be forwarded (the ICRC does not verify).
    rogue.send_to(&garbage, relay.listen_addrs()[0]).unwrap();

    let bad_icrc = || relay.all_counters().iter().map(|c| c.bad_icrc).sum::<u64>();
    wait_until(|| b.ctx.drops().total() >= 3);
    assert_eq!(b.ctx.drops().total(), 3, "{:?}", b.ctx.drops());
    wait_until(|| bad_icrc() >= 1);
    assert_eq!(bad_icrc(), 1);
    assert_eq!(
        relay
            .all_counters()
            .iter()
            .map(|c| c.forwarded)
            .sum::<u64>(),
        0
    );

    // The connection still works afterwards.
    a.mr.write(0, b"still fine");
    a.qp.post_send(&SendRequest::write(
        1,
        a.mr.sge(0, 10),
        b.mr.addr(),
        b.mr.rkey(),
    ))
    .unwrap();
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::Success);
    assert!(wait_until(|| b.mr.equals(0, b"still fine")));
    assert_eq!(b.ctx.drops().total(), 3, "{:?}", b.ctx.drops());
}

/// After the peer vanishes (everything towards it blackholed, its NIC closed), the
/// outstanding WRITEs end in RETRY_EXC_ERR (then flushed), the QP goes to ERR with a
/// fatal event, and posting to it is EINVAL.
pub fn vanished_peer_ends_in_retry_exceeded(p: &CaseKinds<'_>) {
    let family = Family::V4;
    let Some((a, b)) = p.sides(&p.opts(family)) else {
        return;
    };
    let opts = ConnectOptions {
        retry_cnt: 2,
        rnr_retry: 0,
        // Short, but well above both NICs' round trip on a loaded machine.
        timeout_ns: p
            .a
            .limits()
            .short_timeout_ns
            .max(p.b.limits().short_timeout_ns),
    };
    let relay = through_relay(&a, &b, family, rough_paths(2, 0.0, 0.0), &opts);
    a.mr.write(0, b"before");
    a.qp.post_send(&SendRequest::write(
        1,
        a.mr.sge(0, 6),
        b.mr.addr(),
        b.mr.rkey(),
    ))
    .unwrap();
    assert_eq!(wait_wcs(&a.cq, 1)[0].status, WcStatus::Success);

    // The peer vanishes: everything towards it is dropped from now on.
    relay.execute("blackhole all").unwrap();
    drop(b);
    for i in 0..3u64 {
        a.qp.post_send(&SendRequest::write(10 + i, a.mr.sge(0, 4096), 0x1000, 1))
            .unwrap();
    }
    let wcs = wait_wcs(&a.cq, 3);
    assert_eq!(wcs.len(), 3, "every outstanding request completes");
    assert_eq!(wcs[0].status, WcStatus::RetryExcErr, "{wcs:?}");
    assert!(
        wcs[1..]
            .iter()
            .all(|w| matches!(w.status, WcStatus::RetryExcErr | WcStatus::WrFlushErr))
    );
    assert_eq!(a.qp.state(), QpState::Error);
    assert_eq!(
        a.ctx.poll_async_event(),
        Some(AsyncEvent::QpFatal {
            qp_num: a.qp.qpn(),
            status: WcStatus::RetryExcErr
        })
    );
    // Posting to a QP in ERR is refused with EINVAL.
    let e =
        a.qp.post_send(&SendRequest::write(20, a.mr.sge(0, 1), 0, 0))
            .unwrap_err();
    assert_eq!(e.errno(), 22);
}
