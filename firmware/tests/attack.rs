//! An attacker fires forged, replayed and modified datagrams at a running
//! pair, without and with authenticated mode (spec §11.2). Without it, a
//! forged WRITE that knows the connection's identifiers lands and a forged
//! DISCONNECT with its PSNs ends the connection; with it, every such packet
//! is a counted drop (`bad_tag`, `replayed`) that changes nothing, and the
//! legitimate transfers are verified.

mod support;

use metaroce_firmware::{Drops, Event, QpConfig, QpState, RxMeta, Stats};
use metaroce_proto::auth::{AUTH_TRAILER_LEN, AuthKey};
use metaroce_proto::{CmRepr, Ext, Flags, MsgRepr, Opcode, Packet, PseudoHeader, Repr};
use support::{Channel, MEM_BASE, Pair, pattern, write_wr};

const MSG: u32 = 16 << 10;
/// Where the forged WRITE aims on B (outside the legitimate messages).
const TARGET: u64 = MEM_BASE + (8 << 20);

fn pair(auth: bool) -> Pair {
    let qp = QpConfig {
        paths: 4,
        auth: auth.then_some(AuthKey([0x42; 32])),
        ..QpConfig::default()
    };
    let mut p = Pair::with_config(11, qp, Channel::default());
    p.capture = Some(Vec::new());
    p
}

/// A writes `n` messages of `MSG` bytes to B from message `first` on; runs
/// until all complete and checks B's copy.
fn transfer(p: &mut Pair, first: u64, n: u64) {
    for id in first..first + n {
        let addr = MEM_BASE + id * u64::from(MSG);
        pattern(id, p.a.mem.slice_mut(addr, MSG as usize));
        let wr = write_wr(p, id, addr, MSG);
        p.a.nic.post_send(p.a.qpn, wr).unwrap();
    }
    let mut done = 0;
    let until = p.now + 100_000_000;
    assert!(
        p.run_until(until, |p| {
            done += p.events().0.len() as u64;
            done >= n
        }),
        "transfer did not complete"
    );
    for id in first..first + n {
        let addr = MEM_BASE + id * u64::from(MSG);
        assert_eq!(
            p.b.mem.slice(addr, MSG as usize),
            p.a.mem.slice(addr, MSG as usize),
            "message {id} corrupted"
        );
    }
}

fn meta(p: &Pair, to_b: bool) -> RxMeta {
    let (src, dst) = if to_b { (&p.a, &p.b) } else { (&p.b, &p.a) };
    RxMeta {
        src_ip: src.ip,
        src_port: 50000,
        dst_ip: dst.ip,
        dst_port: metaroce_proto::DEFAULT_UDP_PORT,
        ecn_ce: false,
    }
}

/// Emits `repr` with `payload` and a valid ICRC, plus `trailer` bytes.
fn datagram(repr: &Repr, payload: &[u8], m: &RxMeta, trailer: &[u8]) -> Vec<u8> {
    let mut buf = support::datagram(repr, payload, m);
    buf.extend_from_slice(trailer);
    buf
}

/// What an attacker who knows the QPNs, the PSNs and the rkey (an insider,
/// stronger than a blind one) forges: a WRITE of 0xEE to B's memory on a
/// stream the transfer does not use, and a DISCONNECT to A with the
/// connection's current PSNs. `trailer`: what it appends (it has no key).
fn forgeries(p: &Pair, trailer: &[u8]) -> Vec<(bool, Vec<u8>, RxMeta)> {
    let b_cum = p.b.nic.debug_rx_conn_cum(p.b.qpn).unwrap();
    let a_cum = p.a.nic.debug_rx_conn_cum(p.a.qpn).unwrap();
    let write = Repr {
        opcode: Opcode::Write,
        flags: Flags::FIRST | Flags::LAST,
        dst_qpn: p.b.qpn,
        src_qpn: p.a.qpn,
        stream: 1,
        path: 63,
        conn_psn: b_cum,
        path_psn: 0,
        timestamp: 1,
        ext: Ext::Msg(MsgRepr {
            msn: 0,
            msg_len: 64,
            remote_va: TARGET,
            rkey: p.b.mr.rkey,
            ..MsgRepr::default()
        }),
    };
    let disconnect = Repr {
        opcode: Opcode::Disconnect,
        flags: Flags::empty(),
        dst_qpn: p.a.qpn,
        src_qpn: p.b.qpn,
        stream: 0,
        path: 0,
        conn_psn: a_cum,
        path_psn: 0,
        timestamp: 0,
        ext: Ext::Cm(CmRepr {
            initial_psn: b_cum,
            ..CmRepr::default()
        }),
    };
    let (mb, ma) = (meta(p, true), meta(p, false));
    vec![
        (true, datagram(&write, &[0xEE; 64], &mb, trailer), mb),
        (false, datagram(&disconnect, &[], &ma, trailer), ma),
    ]
}

/// Every captured data packet towards B with one payload byte flipped and
/// the ICRC made valid again (it is not keyed), the trailer kept.
fn modified(p: &Pair, auth: bool) -> Vec<(bool, Vec<u8>, RxMeta)> {
    let cap = p.capture.as_ref().unwrap();
    cap.iter()
        .filter(|(to_b, bytes, _)| *to_b && bytes.len() > 1024)
        .map(|(_, bytes, m)| {
            let mut bytes = bytes.clone();
            let end = bytes.len() - if auth { AUTH_TRAILER_LEN } else { 0 };
            bytes[100] ^= 0x01;
            Packet::new_unchecked(&mut bytes[..end]).fill_icrc(&PseudoHeader::new(
                m.src_ip, m.src_port, m.dst_ip, m.dst_port,
            ));
            (true, bytes, *m)
        })
        .collect()
}

fn fire(p: &mut Pair, packets: Vec<(bool, Vec<u8>, RxMeta)>) {
    for (to_b, bytes, m) in packets {
        if to_b {
            p.inject_to_b(bytes, m);
        } else {
            p.inject_to_a(bytes, m);
        }
    }
    let until = p.now + 2_000_000;
    p.run_until(until, |_| false);
}

fn snapshot(p: &Pair) -> (Drops, Drops, Stats, Stats) {
    (
        *p.a.nic.drops(),
        *p.b.nic.drops(),
        *p.a.nic.stats(),
        *p.b.nic.stats(),
    )
}

#[test]
fn without_auth_an_insider_forgery_lands_and_ends_the_connection() {
    let mut p = pair(false);
    transfer(&mut p, 0, 16);
    let replayed: Vec<_> = p.capture.take().unwrap();
    p.capture = Some(replayed.clone());
    let modified = modified(&p, false);
    fire(&mut p, replayed);
    fire(&mut p, modified);
    assert_eq!(p.a.nic.qp_state(p.a.qpn), Some(QpState::Rts));
    // Replayed and modified copies of accepted packets are duplicates.
    assert!(p.b.nic.stats().duplicates > 0);
    let f = forgeries(&p, &[]);
    fire(&mut p, f);
    assert_eq!(
        p.b.mem.slice(TARGET, 64),
        &[0xEE; 64][..],
        "forged WRITE did not land"
    );
    assert_eq!(p.a.nic.qp_state(p.a.qpn), Some(QpState::Error));
}

#[test]
fn with_auth_forged_replayed_and_modified_packets_change_nothing() {
    let mut p = pair(true);
    transfer(&mut p, 0, 16);
    let replayed: Vec<_> = p.capture.take().unwrap();
    let n_replayed = replayed.len() as u64;
    p.capture = Some(replayed.clone());
    let modified = modified(&p, true);
    let n_modified = modified.len() as u64;
    assert!(n_replayed > 50 && n_modified > 50);
    p.capture = None;
    let before = snapshot(&p);
    let mem_before = p.b.mem.slice(TARGET, 64).to_vec();

    fire(&mut p, replayed);
    fire(&mut p, modified);
    // The forgeries without a trailer, and with a made-up one.
    let f = forgeries(&p, &[]);
    fire(&mut p, f);
    let f = forgeries(&p, &[0x5a; AUTH_TRAILER_LEN]);
    fire(&mut p, f);

    let after = snapshot(&p);
    let replays = (after.0.replayed - before.0.replayed) + (after.1.replayed - before.1.replayed);
    let bad_tags = (after.0.bad_tag - before.0.bad_tag) + (after.1.bad_tag - before.1.bad_tag);
    assert_eq!(replays, n_replayed);
    assert_eq!(bad_tags, n_modified + 4);
    // Nothing else moved: no other drop counter, no transport statistic.
    let others = |d: &Drops| d.total() - d.replayed - d.bad_tag;
    assert_eq!(others(&after.0), others(&before.0));
    assert_eq!(others(&after.1), others(&before.1));
    assert_eq!((after.2, after.3), (before.2, before.3));
    assert_eq!(p.b.mem.slice(TARGET, 64), &mem_before[..]);
    assert_eq!(p.a.nic.qp_state(p.a.qpn), Some(QpState::Rts));
    assert_eq!(p.b.nic.qp_state(p.b.qpn), Some(QpState::Rts));
    assert!(
        !p.events()
            .0
            .iter()
            .any(|e| matches!(e, Event::QpError { .. }))
    );

    // A million forged packets with made-up trailers: all counted, none taken.
    let m = meta(&p, true);
    let mut forged = forgeries(&p, &[0; AUTH_TRAILER_LEN]).swap_remove(0).1;
    let base = p.b.nic.drops().bad_tag;
    let tail = forged.len() - AUTH_TRAILER_LEN;
    for i in 0..1_000_000u64 {
        forged[tail..tail + 8].copy_from_slice(&(i + 1).to_be_bytes());
        forged[tail + 8..tail + 16]
            .copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
        p.b.nic.handle_datagram(p.now, &forged, m, &mut p.b.mem);
    }
    assert_eq!(p.b.nic.drops().bad_tag - base, 1_000_000);
    assert_eq!(*p.b.nic.stats(), after.3);
    assert_eq!(p.b.mem.slice(TARGET, 64), &mem_before[..]);

    // The connection still works.
    transfer(&mut p, 16, 16);
}
