//! The end-of-run race: a receiver destroys its QP (or closes its device) right after its
//! last receive completes, and the ACK of that last SEND is lost. The destroyed QP
//! lingers and answers the sender's retransmission, so the sender still completes.
//!
//! The sender talks to the receiver directly; the receiver's ACKs cross a relay that
//! drops everything until the QP is destroyed, so the final ACK is always lost: without
//! the linger the sender ends in RETRY_EXC_ERR every time.

mod common;

use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Instant;

use common::*;
use metaroce_driver::verbs::*;
use metaroce_relay::{LinkConfig, PathConfig, Relay, RelayConfig, RelayHandle};

/// Long enough that a loaded machine's hiccups do not exhaust the retries while the
/// ACKs are blackholed (the sender gives up after 50 ms × (1 + 2 + 4 + 8) without an
/// answer); the receiver lingers 4 × 50 ms after its destroy.
const OPTS: ConnectOptions = ConnectOptions {
    retry_cnt: 3,
    rnr_retry: 0,
    timeout_ns: 50_000_000,
};

/// Connects `a` → `b` directly and `b` → `a` through a relay (returned), which drops
/// everything until restored.
fn acks_through_blackholed_relay(a: &Side, b: &Side) -> RelayHandle {
    let any = SocketAddr::new(a.ctx.address().ip(), 0);
    let mut cfg = RelayConfig::new(
        vec![LinkConfig {
            listen: any,
            forward_to: a.ctx.address(),
        }],
        vec![PathConfig::default(); 2],
    );
    cfg.reseal_icrc = true;
    cfg.seed = 7;
    let relay = Relay::start(cfg).expect("start relay");
    relay.execute("blackhole all").unwrap();
    let mut to_a = a.qp.endpoint();
    to_a.addr = relay.listen_addrs()[0];
    a.qp.connect(&b.qp.endpoint(), &OPTS).unwrap();
    b.qp.connect(&to_a, &OPTS).unwrap();
    relay
}

fn blackholed(relay: &RelayHandle) -> u64 {
    relay.all_counters().iter().map(|c| c.blackholed).sum()
}

/// `b` receives one SEND from `a`, and the ACK for it is dropped by the relay.
fn last_send_received_and_its_ack_lost(a: &Side, b: &Side, relay: &RelayHandle) {
    b.qp.post_recv(RecvWr {
        wr_id: 1,
        sgl: b.mr.sge(0, 4096).into(),
        stream: 0,
    })
    .unwrap();
    a.mr.write(0, &pattern(1, 4096));
    a.qp.post_send(&SendRequest::send(1, a.mr.sge(0, 4096)))
        .unwrap();
    let r = wait_wcs(&b.cq, 1);
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].status, r[0].byte_len), (WcStatus::Success, 4096));
    assert!(b.mr.equals(0, &pattern(1, 4096)));
    let start = Instant::now();
    while blackholed(relay) == 0 && start.elapsed() < DEADLINE {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    assert!(blackholed(relay) > 0, "the ACK was dropped");
}

#[test]
fn a_destroyed_qp_answers_the_retransmission_of_its_last_receive() {
    let a = side(&SideOpts::new("127.0.0.1"));
    let b = side(&SideOpts::new("127.0.0.1"));
    let relay = acks_through_blackholed_relay(&a, &b);
    last_send_received_and_its_ack_lost(&a, &b, &relay);

    let Side {
        ctx,
        pd,
        cq,
        qp,
        mr,
    } = b;
    drop(qp);
    relay.execute("restore all").unwrap();

    let w = wait_wcs(&a.cq, 1);
    assert_eq!(w.len(), 1, "the sender completes");
    assert_eq!(w[0].status, WcStatus::Success, "{w:?}");
    assert!(a.ctx.stats().retransmits > 0, "it had to resend");
    let mut wc = [Wc::default(); 4];
    assert_eq!(cq.poll(&mut wc), 0, "no completion after destroy");
    drop((mr, pd, cq, ctx));
}

#[test]
fn closing_the_device_right_after_the_last_receive_still_answers_the_sender() {
    let a = side(&SideOpts::new("127.0.0.1"));
    let b = side(&SideOpts::new("127.0.0.1"));
    let relay = acks_through_blackholed_relay(&a, &b);
    last_send_received_and_its_ack_lost(&a, &b, &relay);

    // Like a program's exit: destroy the QP, free everything, close the device (the
    // last reference). The close returns once the destroyed QP stopped lingering.
    let (destroyed_tx, destroyed) = mpsc::channel();
    let closer = std::thread::spawn(move || {
        let Side {
            ctx,
            pd,
            cq,
            qp,
            mr,
        } = b;
        drop(qp);
        destroyed_tx.send(()).unwrap();
        drop((mr, cq, pd, ctx));
    });
    destroyed.recv().unwrap();
    relay.execute("restore all").unwrap();

    let w = wait_wcs(&a.cq, 1);
    assert_eq!(w.len(), 1, "the sender completes");
    assert_eq!(w[0].status, WcStatus::Success, "{w:?}");
    assert!(a.ctx.stats().retransmits > 0, "it had to resend");
    closer.join().unwrap();
}
