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

/// A valid WRITE of [`PAYLOAD`] to the region's start, changed by `f`, as a
/// datagram from `m`.
fn write_with(b: &Bench, m: &RxMeta, f: impl FnOnce(&mut Repr)) -> Vec<u8> {
    let mut r = write_repr(b, TARGET, PAYLOAD.len() as u32);
    f(&mut r);
    datagram(&r, &PAYLOAD, m)
}

/// A PARITY over `count` packets of [`PAYLOAD`]'s length (a message of
/// 4 KiB at the region's start), changed by `f`, as a datagram from `m`.
fn parity_with(b: &Bench, m: &RxMeta, count: u32, f: impl FnOnce(&mut Repr)) -> Vec<u8> {
    let mut r = write_repr(b, TARGET, 4096);
    r.opcode = Opcode::Parity;
    r.flags = Flags::empty();
    msg(&mut r).recv_idx = count;
    f(&mut r);
    datagram(&r, &PAYLOAD, m)
}

/// The message extension of a WRITE built by [`write_repr`].
fn msg(r: &mut Repr) -> &mut MsgRepr {
    match r.ext {
        Ext::Msg(ref mut x) => x,
        _ => unreachable!("write_repr builds a WRITE"),
    }
}

/// The payload of the valid WRITE the hostile variants start from.
const PAYLOAD: [u8; 64] = [0xAB; 64];

/// A hostile variant of a valid WRITE: what it is, the drop counter it must
/// move, and how to build it (datagram and metadata) from the valid one's
/// metadata.
type Hostile = (
    &'static str,
    &'static str,
    fn(&Bench, RxMeta) -> (Vec<u8>, RxMeta),
);

/// Every hostile variant, one per validation step the engine applies.
fn hostile_variants() -> Vec<Hostile> {
    vec![
        ("bad ICRC", "bad_icrc", |b, m| {
            let mut bytes = write_with(b, &m, |_| {});
            let last = bytes.len() - 10;
            bytes[last] ^= 1;
            (bytes, m)
        }),
        ("forged rkey", "remote_access", |b, m| {
            (write_with(b, &m, |r| msg(r).rkey ^= 0x5555), m)
        }),
        ("out of bounds", "remote_access", |b, m| {
            (
                write_with(b, &m, |r| msg(r).remote_va = TARGET + TARGET_LEN - 32),
                m,
            )
        }),
        ("before the region", "remote_access", |b, m| {
            (write_with(b, &m, |r| msg(r).remote_va = TARGET - 1), m)
        }),
        ("unknown QP", "unknown_qp", |b, m| {
            (write_with(b, &m, |r| r.dst_qpn = 0xdead), m)
        }),
        ("wrong peer QPN", "wrong_peer", |b, m| {
            (write_with(b, &m, |r| r.src_qpn ^= 1), m)
        }),
        ("wrong peer address", "wrong_peer", |b, mut m| {
            m.src_ip = "10.9.9.9".parse().unwrap();
            (write_with(b, &m, |_| {}), m)
        }),
        ("conn PSN outside the window", "conn_window", |b, m| {
            (write_with(b, &m, |r| r.conn_psn = 1000 + 1_000_000), m)
        }),
        ("path id", "bad_path", |b, m| {
            (write_with(b, &m, |r| r.path = 200), m)
        }),
        ("path PSN far outside the window", "path_window", |b, m| {
            (write_with(b, &m, |r| r.path_psn = (1 << 30) + 100), m)
        }),
        ("payload above the MTU", "bad_length", |b, m| {
            (datagram(&write_repr(b, TARGET, 4097), &[1; 4097], &m), m)
        }),
        ("payload beyond msg_len", "bad_length", |b, m| {
            (write_with(b, &m, |r| msg(r).msg_len = 16), m)
        }),
        ("PARITY over one packet", "bad_format", |b, m| {
            (parity_with(b, &m, 1, |_| {}), m)
        }),
        ("PARITY over 65 packets", "bad_format", |b, m| {
            (parity_with(b, &m, 65, |_| {}), m)
        }),
        ("PARITY group beyond msg_len", "bad_length", |b, m| {
            (parity_with(b, &m, 2, |r| msg(r).msg_len = 64), m)
        }),
        ("PARITY group beyond the window", "conn_window", |b, m| {
            (parity_with(b, &m, 2, |r| r.conn_psn = 1000 + 4095), m)
        }),
        ("truncated", "truncated", |b, m| {
            (write_with(b, &m, |_| {})[..20].to_vec(), m)
        }),
        ("truncated extension", "truncated", |b, m| {
            (write_with(b, &m, |_| {})[..50].to_vec(), m)
        }),
        ("bad version", "bad_version", |b, m| {
            let mut bytes = write_with(b, &m, |_| {});
            bytes[0] = 2;
            (bytes, m)
        }),
        ("unknown opcode", "bad_opcode", |b, m| {
            let mut bytes = write_with(b, &m, |_| {});
            bytes[1] = 0x7e;
            (bytes, m)
        }),
        (
            "READ without remote read access",
            "remote_access",
            |b, m| {
                let mut read = write_repr(b, TARGET, 64);
                read.opcode = Opcode::ReadReq;
                msg(&mut read).msg_len = 64;
                (datagram(&read, &[], &m), m)
            },
        ),
    ]
}

#[test]
fn hostile_packets_never_touch_memory_and_are_counted() {
    let mut b = bench();
    let m = meta(&b, 50000);
    for (what, counter, build) in hostile_variants() {
        let (bytes, m) = build(&b, m);
        expect(&mut b, what, bytes, m, counter);
    }

    // The control: the same valid packet is placed, so the bench can fail.
    let valid = write_with(&b, &m, |_| {});
    let (moved, touched) = inject(&mut b, valid, m);
    assert!(
        touched && moved.is_empty(),
        "a valid WRITE must land: {moved:?}"
    );
    assert_eq!(b.pair.b.mem.slice(TARGET, 64), &PAYLOAD[..]);
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
