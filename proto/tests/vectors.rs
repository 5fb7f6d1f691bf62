//! The pinned test vectors (`proto/vectors/vectors.txt`, written by an independent
//! generator from docs/spec.md) against this crate's parse, emit and ICRC: a changed
//! field offset, byte order, flag bit, SACK bit order or ICRC pseudo-header term fails
//! here, because the expected bytes do not come from the code under test.

#[path = "../vectors/parse.rs"]
mod parse;

use metaroce_proto::{
    AckEntry, AckRepr, CmRepr, Error, Ext, Flags, MsgRepr, MultiAckRepr, NackReason, NackRepr,
    Opcode, Packet, PseudoHeader, Repr, Sack, ack_entries, compute_icrc, parse_datagram,
};
use parse::Vector;

fn pseudo(v: &Vector) -> PseudoHeader {
    PseudoHeader::new(v.src.ip(), v.src.port(), v.dst.ip(), v.dst.port())
}

fn opcode(v: &Vector) -> Opcode {
    let name = v.fields.get("opcode").expect("opcode");
    Opcode::ALL
        .into_iter()
        .find(|op| opcode_name(*op) == name)
        .unwrap_or_else(|| panic!("{}: opcode {name}", v.name))
}

fn opcode_name(op: Opcode) -> &'static str {
    match op {
        Opcode::Write => "WRITE",
        Opcode::WriteImm => "WRITE_IMM",
        Opcode::Send => "SEND",
        Opcode::SendImm => "SEND_IMM",
        Opcode::ReadReq => "READ_REQ",
        Opcode::ReadResp => "READ_RESP",
        Opcode::FetchAdd => "FETCH_ADD",
        Opcode::CompareSwap => "COMPARE_SWAP",
        Opcode::AtomicResp => "ATOMIC_RESP",
        Opcode::Ack => "ACK",
        Opcode::Nack => "NACK",
        Opcode::Probe => "PROBE",
        Opcode::MultiAck => "MULTI_ACK",
        Opcode::Parity => "PARITY",
        Opcode::Connect => "CONNECT",
        Opcode::ConnectAck => "CONNECT_ACK",
        Opcode::Disconnect => "DISCONNECT",
    }
}

/// The header meaning the vector file states, built without looking at its bytes.
fn expected_repr(v: &Vector) -> Repr {
    let u32f = |k: &str| u32::try_from(v.int_or0(k)).expect("32-bit field");
    let u16f = |k: &str| u16::try_from(v.int_or0(k)).expect("16-bit field");
    let op = opcode(v);
    let ext = match op {
        Opcode::Probe => Ext::None,
        Opcode::Ack => {
            let mut sack = Sack::new();
            if let Some(bits) = v.fields.get("sack_bits") {
                for b in bits.split_whitespace() {
                    sack.set(b.parse().expect("sack bit"));
                }
            }
            Ext::Ack(AckRepr {
                conn_cum: u32f("conn_cum"),
                path_cum: u32f("path_cum"),
                sack,
                echo_ts: v.int_or0("echo_ts"),
                ce_count: u32f("ce_count"),
                rate_hint: u32f("rate_hint"),
                credit: u32f("credit"),
                rx_count: u32f("rx_count"),
            })
        }
        Opcode::MultiAck => Ext::MultiAck(MultiAckRepr {
            conn_cum: u32f("conn_cum"),
            credit: u32f("credit"),
            rate_hint: u32f("rate_hint"),
            count: u8::try_from(v.int_or0("count")).expect("8-bit count"),
        }),
        Opcode::Nack => Ext::Nack(NackRepr {
            reason: NackReason::try_from(v.int_or0("reason") as u8).expect("reason"),
            conn_psn: u32f("nack_conn_psn"),
            msn: u32f("nack_msn"),
            detail: u32f("detail"),
        }),
        Opcode::Connect | Opcode::ConnectAck | Opcode::Disconnect => Ext::Cm(CmRepr {
            initial_psn: u32f("init_conn_psn"),
            paths: u16f("paths"),
            streams: u16f("streams"),
            mtu: u32f("mtu"),
            credit: u32f("cm_credit"),
            rate_mbps: u32f("line_rate"),
        }),
        _ => Ext::Msg(MsgRepr {
            msn: u32f("msn"),
            recv_idx: u32f("recv_idx"),
            msg_len: u32f("msg_len"),
            offset: u32f("offset"),
            remote_va: v.int_or0("remote_va"),
            rkey: u32f("rkey"),
            imm: u32f("imm"),
        }),
    };
    Repr {
        opcode: op,
        flags: Flags::from_bits_retain(u16f("flags")),
        dst_qpn: u32f("dst_qpn"),
        src_qpn: u32f("src_qpn"),
        stream: u16f("stream"),
        path: u16f("path"),
        conn_psn: u32f("conn_psn"),
        path_psn: u32f("path_psn"),
        timestamp: v.int_or0("timestamp"),
        ext,
    }
}

fn valid() -> Vec<Vector> {
    parse::load()
        .into_iter()
        .filter(|v| v.expect == "ok")
        .collect()
}

#[test]
fn every_opcode_has_a_pinned_vector() {
    let vs = valid();
    assert!(
        vs.iter().all(|v| !v.spec.is_empty()),
        "a vector without its spec section"
    );
    for op in Opcode::ALL {
        assert!(
            vs.iter().any(|v| opcode(v) == op),
            "no vector for {}",
            opcode_name(op)
        );
    }
}

#[test]
fn the_spec_worked_example_is_pinned() {
    // docs/spec.md §3.10, copied from the spec text rather than from the file.
    let vs = parse::load();
    let icrc = |name: &str| {
        vs.iter()
            .find(|v| v.name == name)
            .and_then(|v| v.int("icrc"))
            .unwrap_or_else(|| panic!("vector {name} missing"))
    };
    assert_eq!(icrc("spec_3_10_write"), 0xF4DE_6CD8);
    assert_eq!(icrc("spec_3_10_write_port_50011"), 0x5923_50AC);
    assert_eq!(icrc("spec_3_10_ack"), 0xE230_3E36);
}

#[test]
fn pseudo_header_is_byte_exact() {
    // docs/spec.md §3.10: the 40-byte pseudo-header of the 84-byte WRITE.
    let expected: [u8; 40] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
        0xff, 10, 0, 0, 2, 0xc3, 0x5a, 0x12, 0xbe, 0x00, 0x5c, 0x00, 0x00,
    ];
    let p = PseudoHeader::new(
        "10.0.0.1".parse().unwrap(),
        50010,
        "10.0.0.2".parse().unwrap(),
        4798,
    );
    assert_eq!(p.bytes(84), expected);
}

#[test]
fn pinned_icrc_matches_compute_icrc() {
    for v in valid() {
        let want = v.int("icrc").expect("icrc") as u32;
        let carried = u32::from_be_bytes(v.bytes[v.bytes.len() - 4..].try_into().unwrap());
        assert_eq!(carried, want, "{}: trailer", v.name);
        assert_eq!(
            compute_icrc(&pseudo(&v), &v.bytes),
            want,
            "{}: ICRC",
            v.name
        );
    }
}

#[test]
fn pinned_datagrams_parse_to_their_fields() {
    for v in valid() {
        let (repr, payload) =
            parse_datagram(&v.bytes, &pseudo(&v)).unwrap_or_else(|e| panic!("{}: {e}", v.name));
        let want = expected_repr(&v);
        assert_eq!(repr, want, "{}", v.name);
        assert_eq!(
            payload.len() as u64,
            v.int_or0("payload_len"),
            "{}: payload length",
            v.name
        );
    }
}

#[test]
fn emitting_the_fields_gives_the_pinned_bytes() {
    for v in valid() {
        let repr = expected_repr(&v);
        let payload_len = v.int_or0("payload_len") as usize;
        let mut buf = vec![0u8; repr.buffer_len(payload_len)];
        let len = repr
            .emit(&mut buf, payload_len)
            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert_eq!(len, v.bytes.len(), "{}: length", v.name);
        let h = repr.header_len();
        buf[h..h + payload_len].copy_from_slice(&v.bytes[h..h + payload_len]);
        Packet::new_unchecked(&mut buf[..]).fill_icrc(&pseudo(&v));
        assert_eq!(buf, v.bytes, "{}: emitted bytes", v.name);
    }
}

#[test]
fn the_pinned_multi_ack_entries_read_back() {
    // gen_vectors.py's `multi_ack_two_paths`, values copied from it.
    let v = valid()
        .into_iter()
        .find(|v| v.name == "multi_ack_two_paths")
        .expect("vector");
    let (_, entries) = parse_datagram(&v.bytes, &pseudo(&v)).expect("parses");
    let mut sack = Sack::new();
    [1, 2, 10].into_iter().for_each(|b| sack.set(b));
    let want = [
        AckEntry {
            path: 3,
            path_cum: 6,
            echo_ts: 1_000_000_000,
            rx_count: 6,
            ..AckEntry::default()
        },
        AckEntry {
            path: 63,
            ece: true,
            path_cum: 6,
            sack,
            echo_ts: 0x1122_3344_5566_7788,
            ce_count: 1,
            rx_count: 9,
        },
    ];
    assert_eq!(ack_entries(entries).collect::<Vec<_>>(), want);
    let mut out = vec![0u8; entries.len()];
    let at = want[0].emit(&mut out).unwrap();
    want[1].emit(&mut out[at..]).unwrap();
    assert_eq!(out, entries);
}

#[test]
fn invalid_vectors_fail_the_check_they_name() {
    let mut seen = 0;
    for v in parse::load().into_iter().filter(|v| v.expect != "ok") {
        let err = parse_datagram(&v.bytes, &pseudo(&v)).expect_err(&v.name);
        let ok = match v.expect.as_str() {
            "truncated" => matches!(err, Error::Truncated { .. }),
            "bad_version" => matches!(err, Error::BadVersion(_)),
            "bad_opcode" => matches!(err, Error::BadOpcode(_)),
            "bad_icrc" => matches!(err, Error::BadIcrc { .. }),
            "bad_format" => matches!(err, Error::UnexpectedPayload(..) | Error::BadField(_)),
            other => panic!("{}: unknown expectation {other}", v.name),
        };
        assert!(ok, "{}: expected {}, got {err:?}", v.name, v.expect);
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} invalid vectors");
}
