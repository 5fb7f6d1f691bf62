//! Fuzzes PARITY packets (spec §3.12, §6.10) through the engine's sans-IO
//! receive path: a receiving NIC gets some packets of a WRITE, a PARITY
//! over them (exact, or with one field or its payload changed by the
//! input), then more of the packets, in an order the input chooses. It must
//! never panic, and an exact PARITY must leave the message placed right
//! once all its packets arrived or were rebuilt (with one missing when the
//! PARITY arrives: rebuilt at once).
//!
//! Run: `cargo +nightly fuzz run parity -- -max_len=64` in `proto/fuzz` (the
//! first 15 bytes choose everything; no CI runs the fuzz targets).
#![no_main]

use core::net::{IpAddr, Ipv4Addr};
use libfuzzer_sys::fuzz_target;
use metaroce_firmware::loopback::datagram;
use metaroce_firmware::{
    Access, Nic, NicConfig, QpConfig, QpTransition, RemoteEnd, RxMeta, VecMemory,
};
use metaroce_proto::{DEFAULT_UDP_PORT, Ext, Flags, MsgRepr, Opcode, Repr};

/// The receiver's memory: base and length (all registered).
const BASE: u64 = 0x10_0000;
const LEN: usize = 64 << 10;
/// The fake sender's QPN and first conn PSN; the receiver's QPN is its own.
const PEER_QPN: u32 = 0x77;
const PEER_PSN: u32 = 1000;

/// Reads the input a byte at a time, zeros once it is used up.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
}

/// A receiving NIC with one QP in RTS facing the fake sender.
struct Receiver {
    nic: Nic,
    mem: VecMemory,
    qpn: u32,
    rkey: u32,
    now: u64,
    buf: Vec<u8>,
}

impl Receiver {
    fn new() -> Receiver {
        let cfg = NicConfig {
            local_ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            qp: QpConfig {
                paths: 4,
                streams: 2,
                ..QpConfig::default()
            },
            ..NicConfig::default()
        };
        let mut nic = Nic::new(cfg);
        let pd = nic.alloc_pd();
        let mr = nic
            .register_mr(
                pd,
                BASE,
                LEN as u64,
                Access::LOCAL_WRITE | Access::REMOTE_WRITE,
            )
            .expect("region");
        let qpn = nic.create_qp(pd, None).expect("QP");
        nic.modify_qp(qpn, QpTransition::Init).expect("INIT");
        let end = RemoteEnd {
            qpn: PEER_QPN,
            ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            udp_port: DEFAULT_UDP_PORT,
            initial_psn: PEER_PSN,
        };
        nic.modify_qp(qpn, QpTransition::Rtr(end)).expect("RTR");
        let rts = QpTransition::Rts {
            initial_psn: 5000,
            retry_cnt: 7,
            rnr_retry: 7,
            timeout_ns: 500_000,
        };
        nic.modify_qp(qpn, rts).expect("RTS");
        Receiver {
            nic,
            mem: VecMemory::new(BASE, LEN),
            qpn,
            rkey: mr.rkey,
            now: 1_000,
            buf: vec![0; 9000],
        }
    }

    /// Delivers `repr` with `payload` from the fake sender's port for its
    /// path, then takes whatever the NIC sends (ACKs).
    fn deliver(&mut self, repr: &Repr, payload: &[u8]) {
        let meta = RxMeta {
            src_ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            src_port: 49152 + repr.path,
            dst_ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            dst_port: DEFAULT_UDP_PORT,
            ecn_ce: false,
        };
        let bytes = datagram(repr, payload, &meta);
        self.now += 1_000;
        self.nic
            .handle_datagram(self.now, &bytes, meta, &mut self.mem);
        while self
            .nic
            .poll_transmit(self.now, &mut self.buf, &mut self.mem)
            .is_some()
        {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let mut rx = Receiver::new();
    let (qpn, rkey) = (rx.qpn, rx.rkey);
    let pkts = 2 + u32::from(input.u8() % 7);
    let step = 1 + u32::from(input.u16() % 1024);
    let msg_len = (pkts - 1) * step + 1 + u32::from(input.u16()) % step;
    let at = BASE + u64::from(input.u16() % 8192);
    let seed = input.u8();
    let message: Vec<u8> = (0..msg_len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    let before = input.u8();
    let after = input.u8();
    let path_of = |k: u32| (k % 4) as u16;
    let mut path_psn = [0u32; 5];
    let mut next_path_psn = |path: u16| {
        let p = &mut path_psn[usize::from(path)];
        *p += 1;
        *p - 1
    };
    let packet = |k: u32, path_psn: u32| {
        let offset = k * step;
        let len = (msg_len - offset).min(step);
        let mut flags = Flags::empty();
        flags.set(Flags::FIRST, k == 0);
        flags.set(Flags::LAST | Flags::ACK_REQ, k + 1 == pkts);
        let repr = Repr {
            opcode: Opcode::Write,
            flags,
            dst_qpn: qpn,
            src_qpn: PEER_QPN,
            stream: 0,
            path: path_of(k),
            conn_psn: PEER_PSN + k,
            path_psn,
            timestamp: u64::from(k) + 1,
            ext: Ext::Msg(MsgRepr {
                msn: 0,
                msg_len,
                offset,
                remote_va: at + u64::from(offset),
                rkey,
                ..MsgRepr::default()
            }),
        };
        (repr, offset as usize..(offset + len) as usize)
    };
    for k in (0..pkts).filter(|k| before >> k & 1 == 1) {
        let (repr, bytes) = packet(k, next_path_psn(path_of(k)));
        rx.deliver(&repr, &message[bytes]);
    }
    // The PARITY over the whole message, then perhaps changed.
    let mut payload = vec![0u8; step as usize];
    for chunk in message.chunks(step as usize) {
        for (p, b) in payload.iter_mut().zip(chunk) {
            *p ^= b;
        }
    }
    let (mut parity, _) = packet(0, next_path_psn(4));
    parity.opcode = Opcode::Parity;
    parity.flags = Flags::empty();
    parity.path = 4;
    parity.timestamp = 100;
    let mut m = *parity.msg().expect("MSG extension");
    m.recv_idx = pkts;
    let change = input.u8();
    let value = input.u32();
    match change % 16 {
        0 => m.recv_idx = value,
        1 => m.offset = value,
        2 => m.msg_len = value,
        3 => parity.conn_psn = parity.conn_psn.wrapping_add(value),
        4 => m.msn = value,
        5 => m.remote_va = m.remote_va.wrapping_add(u64::from(value)),
        6 => m.rkey = value,
        7 => payload.resize(value as usize % 9000, value as u8),
        8 => parity.stream = value as u16,
        9 => parity.flags = Flags::from_bits_retain(value as u16),
        10 => {
            if let Some(b) = payload.get_mut(value as usize % step as usize) {
                *b ^= (value >> 24) as u8 | 1;
            }
        }
        _ => {}
    }
    let exact = change % 16 > 10;
    parity.ext = Ext::Msg(m);
    rx.deliver(&parity, &payload);
    let missing = (0..pkts).filter(|k| before >> k & 1 == 0).count();
    let placed = |rx: &Receiver| rx.mem.slice(at, msg_len as usize) == message.as_slice();
    if exact && missing == 1 {
        assert!(placed(&rx), "one packet missing: the PARITY rebuilt it");
        assert_eq!(rx.nic.stats().parity_rebuilt, 1);
    }
    for k in (0..pkts).filter(|k| after >> k & 1 == 1) {
        let (repr, bytes) = packet(k, next_path_psn(path_of(k)));
        rx.deliver(&repr, &message[bytes]);
    }
    if exact && (0..pkts).all(|k| (before | after) >> k & 1 == 1) {
        assert!(placed(&rx), "every packet arrived or was rebuilt");
    }
});
