//! Hostile packets never touch memory and are counted by reason.

mod support;

use metaroce_firmware::{Access, Event, RxMeta, SendOp, SendWr, Sge};
use metaroce_proto::{Ext, Flags, MsgRepr, Opcode, Repr};
use support::{Channel, MEM_BASE, Pair, datagram};

/// A small region on B that hostile packets aim around.
const TARGET: u64 = MEM_BASE + (1 << 20);
const TARGET_LEN: u64 = 4096;

struct Bench {
    pair: Pair,
    rkey: u32,
}

fn bench() -> Bench {
    let mut pair = Pair::new(7, 8, Channel::default());
    let mr = pair
        .b
        .nic
        .register_mr(
            pair.b.pd,
            TARGET,
            TARGET_LEN,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE,
        )
        .unwrap();
    Bench {
        pair,
        rkey: mr.rkey,
    }
}

/// A valid WRITE from A to B's small region, as A's engine would build it.
fn write_repr(b: &Bench, remote_va: u64, len: u32) -> Repr {
    Repr {
        opcode: Opcode::Write,
        flags: Flags::FIRST | Flags::LAST,
        dst_qpn: b.pair.b.qpn,
        src_qpn: b.pair.a.qpn,
        stream: 0,
        path: 0,
        conn_psn: 1000,
        path_psn: 0,
        timestamp: 1,
        ext: Ext::Msg(MsgRepr {
            msn: 0,
            msg_len: len,
            remote_va,
            rkey: b.rkey,
            ..MsgRepr::default()
        }),
    }
}

fn meta(b: &Bench, src_port: u16) -> RxMeta {
    RxMeta {
        src_ip: b.pair.a.ip,
        src_port,
        dst_ip: b.pair.b.ip,
        dst_port: metaroce_proto::DEFAULT_UDP_PORT,
        ecn_ce: false,
    }
}

/// Injects one datagram, runs the pair until quiet, and returns the drop
/// counters that moved (name, increase) and whether B's memory changed.
fn inject(b: &mut Bench, bytes: Vec<u8>, m: RxMeta) -> (Vec<(&'static str, u64)>, bool) {
    let before_mem = b.pair.b.mem.clone();
    let before = *b.pair.b.nic.drops();
    b.pair.inject_to_b(bytes, m);
    let until = b.pair.now + 1_000_000;
    b.pair.run_until(until, |_| false);
    let after = *b.pair.b.nic.drops();
    let moved = after
        .iter()
        .zip(before.iter())
        .filter(|((_, x), (_, y))| x != y)
        .map(|((n, x), (_, y))| (n, x - y))
        .collect();
    (moved, b.pair.b.mem != before_mem)
}

fn expect(b: &mut Bench, what: &str, bytes: Vec<u8>, m: RxMeta, counter: &str) {
    let (moved, touched) = inject(b, bytes, m);
    assert!(!touched, "{what}: memory was written");
    assert_eq!(
        moved,
        vec![(counter, 1)],
        "{what}: counters moved {moved:?}"
    );
}

#[test]
fn hostile_packets_never_touch_memory_and_are_counted() {
    let mut b = bench();
    let m = meta(&b, 50000);
    let payload = [0xAB; 64];

    let mut bytes = datagram(&write_repr(&b, TARGET, 64), &payload, &m);
    let last = bytes.len() - 10;
    bytes[last] ^= 1;
    expect(&mut b, "bad ICRC", bytes, m, "bad_icrc");

    let mut forged = write_repr(&b, TARGET, 64);
    if let Ext::Msg(ref mut x) = forged.ext {
        x.rkey ^= 0x5555;
    }
    expect(
        &mut b,
        "forged rkey",
        datagram(&forged, &payload, &m),
        m,
        "remote_access",
    );

    let past_end = write_repr(&b, TARGET + TARGET_LEN - 32, 64);
    expect(
        &mut b,
        "out of bounds",
        datagram(&past_end, &payload, &m),
        m,
        "remote_access",
    );
    let before_start = write_repr(&b, TARGET - 1, 64);
    expect(
        &mut b,
        "before the region",
        datagram(&before_start, &payload, &m),
        m,
        "remote_access",
    );

    let mut wrong_qp = write_repr(&b, TARGET, 64);
    wrong_qp.dst_qpn = 0xdead;
    expect(
        &mut b,
        "unknown QP",
        datagram(&wrong_qp, &payload, &m),
        m,
        "unknown_qp",
    );

    let mut wrong_peer = write_repr(&b, TARGET, 64);
    wrong_peer.src_qpn ^= 1;
    expect(
        &mut b,
        "wrong peer QPN",
        datagram(&wrong_peer, &payload, &m),
        m,
        "wrong_peer",
    );
    let mut spoofed = m;
    spoofed.src_ip = "10.9.9.9".parse().unwrap();
    let spoofed_bytes = datagram(&write_repr(&b, TARGET, 64), &payload, &spoofed);
    expect(
        &mut b,
        "wrong peer address",
        spoofed_bytes,
        spoofed,
        "wrong_peer",
    );

    let mut far = write_repr(&b, TARGET, 64);
    far.conn_psn = 1000 + 1_000_000;
    expect(
        &mut b,
        "conn PSN outside the window",
        datagram(&far, &payload, &m),
        m,
        "conn_window",
    );

    let mut bad_path = write_repr(&b, TARGET, 64);
    bad_path.path = 200;
    expect(
        &mut b,
        "path id",
        datagram(&bad_path, &payload, &m),
        m,
        "bad_path",
    );

    let mut jump = write_repr(&b, TARGET, 64);
    jump.path_psn = (1 << 30) + 100;
    expect(
        &mut b,
        "path PSN far outside the window",
        datagram(&jump, &payload, &m),
        m,
        "path_window",
    );

    let big = vec![1u8; 4097];
    let oversized = write_repr(&b, TARGET, 4097);
    expect(
        &mut b,
        "payload above the MTU",
        datagram(&oversized, &big, &m),
        m,
        "bad_length",
    );

    let beyond_msg = write_repr(&b, TARGET, 16);
    expect(
        &mut b,
        "payload beyond msg_len",
        datagram(&beyond_msg, &payload, &m),
        m,
        "bad_length",
    );

    let full = datagram(&write_repr(&b, TARGET, 64), &payload, &m);
    expect(&mut b, "truncated", full[..20].to_vec(), m, "truncated");
    expect(
        &mut b,
        "truncated extension",
        full[..50].to_vec(),
        m,
        "truncated",
    );
    let mut v2 = full.clone();
    v2[0] = 2;
    expect(&mut b, "bad version", v2, m, "bad_version");
    let mut op = full.clone();
    op[1] = 0x7e;
    expect(&mut b, "unknown opcode", op, m, "bad_opcode");

    let mut read = write_repr(&b, TARGET, 64);
    read.opcode = Opcode::ReadReq;
    if let Ext::Msg(ref mut x) = read.ext {
        x.msg_len = 64;
    }
    expect(
        &mut b,
        "READ without remote read access",
        datagram(&read, &[], &m),
        m,
        "remote_access",
    );

    // The control: the same valid packet is placed, so the bench can fail.
    let valid = datagram(&write_repr(&b, TARGET, 64), &payload, &m);
    let (moved, touched) = inject(&mut b, valid, m);
    assert!(
        touched && moved.is_empty(),
        "a valid WRITE must land: {moved:?}"
    );
    assert_eq!(b.pair.b.mem.slice(TARGET, 64), &payload[..]);
}

#[test]
fn a_read_response_that_does_not_fit_its_read_changes_nothing() {
    // B never hears the READ request; a forged response of the wrong length
    // arrives at A instead. It is matched to its READ before it takes a conn
    // PSN (spec §6.8): dropped, counted, and the READ still waits for the
    // real response.
    let channel = Channel {
        b_vanishes_at_ns: Some(0),
        ..Channel::default()
    };
    let mut pair = Pair::new(8, 8, channel);
    let dest = MEM_BASE + 4096;
    let read = SendWr {
        wr_id: 77,
        op: SendOp::Read {
            remote_va: MEM_BASE,
            rkey: pair.b.mr.rkey,
        },
        sgl: Sge {
            addr: dest,
            len: 64,
            lkey: pair.a.mr.lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream: 0,
    };
    pair.a.nic.post_send(pair.a.qpn, read).unwrap();
    let before = pair.a.mem.clone();
    let forged = Repr {
        opcode: Opcode::ReadResp,
        flags: Flags::FIRST | Flags::LAST,
        dst_qpn: pair.a.qpn,
        src_qpn: pair.b.qpn,
        stream: 0,
        path: 0,
        conn_psn: 5000,
        path_psn: 0,
        timestamp: 1,
        ext: Ext::Msg(MsgRepr {
            msn: 0,
            msg_len: 65,
            ..MsgRepr::default()
        }),
    };
    let m = RxMeta {
        src_ip: pair.b.ip,
        src_port: 50000,
        dst_ip: pair.a.ip,
        dst_port: metaroce_proto::DEFAULT_UDP_PORT,
        ecn_ce: false,
    };
    let cum_before = pair.a.nic.debug_rx_conn_cum(pair.a.qpn);
    pair.inject_to_a(datagram(&forged, &[0xEE; 64], &m), m);
    let mut events = Vec::new();
    pair.run_until(1_000_000, |p| {
        events.extend(p.events().0);
        events.iter().any(|e| matches!(e, Event::QpError { .. }))
    });
    assert!(
        !events.iter().any(|e| matches!(e, Event::QpError { .. })),
        "{events:?}"
    );
    assert_eq!(pair.a.nic.drops().unexpected_response, 1);
    assert_eq!(pair.a.nic.outstanding_reads(pair.a.qpn).count(), 1);
    assert_eq!(pair.a.nic.debug_rx_conn_cum(pair.a.qpn), cum_before);
    assert!(
        pair.a.mem == before,
        "a response that does not fit must not be placed"
    );
}
