//! The end-of-run race: a receiver destroys its QP (or closes its device) right after
//! its last receive completes, and the ACK of that last SEND is lost. The destroyed QP
//! lingers and answers the sender's retransmission, so the sender still completes.
//!
//! The receiver's ACKs cross a relay that drops everything until the QP is destroyed,
//! so the final ACK is always lost: without the linger the sender ends in
//! RETRY_EXC_ERR every time.

use std::net::SocketAddr;
use std::sync::mpsc;

use metaroce_driver::verbs::*;
use metaroce_relay::{LinkConfig, PathConfig, Relay, RelayConfig, RelayHandle};

use crate::{CaseKinds, Family, Side, pattern, wait_until, wait_wcs};

/// The ACK timeout: long enough that a loaded machine's hiccups do not exhaust the
/// retries while the ACKs are blackholed (the sender gives up after 15 timeouts without
/// an answer: 1 + 2 + 4 + 8); the receiver lingers 4 timeouts after its destroy. 50 ms,
/// or a slower kind's short timeout.
fn opts(p: &CaseKinds<'_>) -> ConnectOptions {
    let slowest =
        p.a.limits()
            .short_timeout_ns
            .max(p.b.limits().short_timeout_ns);
    ConnectOptions {
        retry_cnt: 3,
        rnr_retry: 0,
        timeout_ns: slowest.max(50_000_000),
    }
}

/// A relay on the loopback address (which no board takes: a board's ACKs leave from
/// the source port of what they acknowledge, bound on its own address) forwarding to
/// `to`.
fn relay_to(to: SocketAddr) -> RelayHandle {
    let mut cfg = RelayConfig::new(
        vec![LinkConfig {
            listen: SocketAddr::new(Family::V4.loopback(), 0),
            forward_to: to,
        }],
        vec![PathConfig::default(); 2],
    );
    cfg.reseal_icrc = true;
    cfg.seed = 7;
    Relay::start(cfg).expect("start relay")
}

/// Connects `a` → `b` through one relay and `b` → `a` through another (returned
/// second), which drops everything until restored. (Both directions cross a relay: a
/// NIC takes packets only from its peer's address.)
fn acks_through_blackholed_relay(
    a: &Side,
    b: &Side,
    opts: &ConnectOptions,
) -> (RelayHandle, RelayHandle) {
    let (data, acks) = (relay_to(b.ctx.address()), relay_to(a.ctx.address()));
    acks.execute("blackhole all").unwrap();
    let mut to_b = b.qp.endpoint();
    to_b.addr = data.listen_addrs()[0];
    let mut to_a = a.qp.endpoint();
    to_a.addr = acks.listen_addrs()[0];
    a.qp.connect(&to_b, opts).unwrap();
    b.qp.connect(&to_a, opts).unwrap();
    (data, acks)
}

fn blackholed(relay: &RelayHandle) -> u64 {
    relay.all_counters().iter().map(|c| c.blackholed).sum()
}

/// `b` receives one SEND from `a`, the ACK for it is dropped by the relay, and `a`
/// resends. (Waiting for the resend keeps a late ACK of `b`'s, sent after the relay
/// is restored on a loaded machine, from completing the SEND without one.)
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
    assert!(wait_until(|| blackholed(relay) > 0), "the ACK was dropped");
    assert!(
        wait_until(|| a.ctx.stats().retransmits > 0),
        "the sender resends while its ACKs are lost"
    );
}

/// The sender's SEND completes successfully (after its retransmissions).
fn the_sender_completes_after_resending(a: &Side) {
    let w = wait_wcs(&a.cq, 1);
    assert_eq!(w.len(), 1, "the sender completes");
    assert_eq!(w[0].status, WcStatus::Success, "{w:?}");
}

/// A QP destroyed right after its last receive answers the retransmission of it.
pub fn a_destroyed_qp_answers_the_retransmission_of_its_last_receive(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    let (_data, relay) = acks_through_blackholed_relay(&a, &b, &opts(p));
    last_send_received_and_its_ack_lost(&a, &b, &relay);

    drop(b.qp);
    relay.execute("restore all").unwrap();

    the_sender_completes_after_resending(&a);
    let mut wc = [Wc::default(); 4];
    assert_eq!(b.cq.poll(&mut wc), 0, "no completion after destroy");
}

/// Closing the whole device right after the last receive (like a program's exit)
/// still answers the sender; the close returns once the destroyed QP stopped
/// lingering.
pub fn closing_the_device_right_after_the_last_receive_still_answers_the_sender(p: &CaseKinds<'_>) {
    let Some((a, b)) = p.sides(&p.opts(Family::V4)) else {
        return;
    };
    let (_data, relay) = acks_through_blackholed_relay(&a, &b, &opts(p));
    last_send_received_and_its_ack_lost(&a, &b, &relay);

    let (destroyed_tx, destroyed) = mpsc::channel();
    let closer = std::thread::spawn(move || {
        // The whole side moves here; the rest of it goes when this thread ends.
        let b = b;
        drop(b.qp);
        destroyed_tx.send(()).unwrap();
    });
    destroyed.recv().unwrap();
    relay.execute("restore all").unwrap();

    the_sender_completes_after_resending(&a);
    closer.join().unwrap();
}
