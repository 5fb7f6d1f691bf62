//! The TX frame builder against the golden models.
//!
//! * [`run_against_engine`]: a loopback pair of engines
//!   (`metaroce_firmware::loopback::Pair`, driven here datagram by
//!   datagram) carries WRITE, WRITE_IMM, SEND, SEND_IMM and READ work
//!   requests over 16 paths with loss, so retransmissions and probes
//!   appear. Every datagram side A sends with a base-only or MSG header
//!   becomes a descriptor (parsed with `metaroce_proto`; payload address =
//!   where the engine read the payload from its memory; entropy = the
//!   engine's UDP source port); the RTL's frame must equal Ethernet, IPv4
//!   and UDP headers (built with `etherparse`) followed by the engine's
//!   datagram, byte for byte.
//! * [`run_random`]: random descriptors of every data/READ opcode and
//!   PROBE, over IPv4 or IPv6, with the path's entropy rewritten before every packet; the
//!   reference datagram is `metaroce_proto`'s `Repr::emit` + `fill_icrc`
//!   with the new port, and the RTL's ICRC must verify with the new port
//!   and fail with the old one.
//! * [`run_line_rate`]: back-to-back MTU-size WRITEs with every stream
//!   ready: cycles per packet and bubbles.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use metaroce_firmware::loopback::{Channel, MEM_BASE, Pair};
use metaroce_firmware::{
    Event, Memory, QpConfig, QpState, RecvWr, RxMeta, SendOp, SendWr, Sge, Transmit, VecMemory,
};
use metaroce_proto::{BASE_LEN, Ext, Flags, ICRC_LEN, MsgRepr, Opcode, Packet, PseudoHeader, Repr};
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

use crate::SimError;
use crate::frame::Headers;
use crate::tx_build::{Addresses, Descriptor, Knob, TABLE_PATHS, TxBuildTb, TxItem, TxOutput};

/// Largest payload per packet (the engine's MTU).
pub const MTU: usize = 4096;

/// Result of one comparison run.
#[derive(Clone, Debug, Default)]
pub struct TxRun {
    /// Frames compared.
    pub packets: u64,
    /// Frames per opcode, by name.
    pub by_opcode: Vec<(String, u64)>,
    /// Retransmitted data packets among them (`RETX` flag).
    pub retransmissions: u64,
    /// Engine datagrams not for the TX builder (ACK, NACK, CM).
    pub skipped: u64,
    /// Mismatch descriptions: the packet and the first differing byte.
    pub mismatches: Vec<String>,
    /// RTL ICRCs that verified with the rewritten source port.
    pub icrc_ok_new_port: u64,
    /// RTL ICRCs that failed with the previous source port.
    pub icrc_fail_old_port: u64,
    /// Entropy table writes made.
    pub entropy_writes: u64,
    /// The run's interface counters.
    pub out: TxOutput,
    /// Seconds of the simulation alone ([`crate::SimTimer`]: CPU time).
    pub sim_secs: f64,
}

/// Local address of the random and line-rate runs.
const LOCAL: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// Peer address of the random and line-rate runs, chosen so that the IPv4
/// header of an ECN-capable MTU-size MSG packet (TTL 64, DSCP 26) sums to
/// 0x1FFFF: its checksum needs the second end-around carry.
const PEER: Ipv4Addr = Ipv4Addr::new(104, 0, 0, 35);
/// Local address of the IPv6 runs.
const LOCAL6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
/// Peer address of the IPv6 runs.
const PEER6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x4d52, 0, 0, 0, 0x77, 7);

/// The addresses both the RTL and the reference use.
fn addresses(local: IpAddr, peer: IpAddr, dst_port: u16) -> Addresses {
    Addresses {
        local_mac: [0x02, 0x4d, 0x52, 0x00, 0x00, 0x01],
        peer_mac: [0x02, 0x4d, 0x52, 0x00, 0x00, 0x02],
        local_ip: local,
        peer_ip: peer,
        dst_port,
        ttl: 64,
        dscp: 26,
    }
}

/// The frame headers the TX builder configured with `a` puts in front of
/// a datagram from `src_port`, as the RTL sends them: UDP checksum 0,
/// ECT(0) when `ecn`; IPv4 with DF and ID 0; IPv6 with flow label 0.
pub fn headers(a: &Addresses, src_port: u16, ecn: bool) -> Headers {
    let mut h = Headers::new(
        a.local_mac,
        a.peer_mac,
        a.local_ip,
        a.peer_ip,
        (src_port, a.dst_port),
    );
    h.ttl = a.ttl;
    h.dscp = a.dscp;
    h.ecn = if ecn { 0b10 } else { 0 };
    h.udp_checksum = false;
    h
}

/// The reference frame of `datagram` sent from `src_port`: [`headers`]
/// (built by `etherparse`) followed by the datagram.
pub fn reference_frame(a: &Addresses, src_port: u16, datagram: &[u8], ecn: bool) -> Vec<u8> {
    headers(a, src_port, ecn)
        .frame(datagram)
        .expect("a datagram that fits")
}

/// [`headers`] for an ACK frame carrying `datagram`, as bytes: on IPv6
/// with the UDP checksum over the pseudo-header, the UDP header and
/// `datagram` filled in, as the wire spec (§2.5) wants and the ACK framer
/// sends; on IPv4 the checksum stays 0.
pub fn ack_headers(a: &Addresses, src_port: u16, datagram: &[u8], ecn: bool) -> Vec<u8> {
    let mut h = headers(a, src_port, ecn);
    h.udp_checksum = h.is_ipv6();
    h.bytes(datagram).expect("an ACK fits UDP")
}

/// Name of the field at byte `at` of an IPv4 (or, with `ipv6`, IPv6) frame
/// whose datagram has a `hdr`-byte MetaRoCE header and `payload` payload
/// bytes.
pub fn field_at(at: usize, ipv6: bool, hdr: usize, payload: usize) -> String {
    const ETH: &[(usize, &str)] = &[(6, "eth.dst"), (6, "eth.src"), (2, "eth.type")];
    const IPV6: &[(usize, &str)] = &[
        (4, "ip6.version_class_flow"),
        (2, "ip6.payload_len"),
        (1, "ip6.next_header"),
        (1, "ip6.hop_limit"),
        (16, "ip6.src"),
        (16, "ip6.dst"),
    ];
    const IPV4: &[(usize, &str)] = &[
        (1, "ip.version_ihl"),
        (1, "ip.dscp_ecn"),
        (2, "ip.total_len"),
        (2, "ip.id"),
        (2, "ip.flags_frag"),
        (1, "ip.ttl"),
        (1, "ip.protocol"),
        (2, "ip.checksum"),
        (4, "ip.src"),
        (4, "ip.dst"),
    ];
    const REST: &[(usize, &str)] = &[
        (2, "udp.src_port"),
        (2, "udp.dst_port"),
        (2, "udp.len"),
        (2, "udp.checksum"),
        (1, "base.version"),
        (1, "base.opcode"),
        (2, "base.flags"),
        (4, "base.dst_qpn"),
        (4, "base.src_qpn"),
        (2, "base.stream"),
        (2, "base.path"),
        (4, "base.conn_psn"),
        (4, "base.path_psn"),
        (8, "base.timestamp"),
        (4, "msg.msn"),
        (4, "msg.recv_idx"),
        (4, "msg.msg_len"),
        (4, "msg.offset"),
        (8, "msg.remote_va"),
        (4, "msg.rkey"),
        (4, "msg.imm"),
    ];
    let ip = if ipv6 { IPV6 } else { IPV4 };
    let fields = ETH.iter().chain(ip).chain(REST);
    let hdr_end = fields
        .clone()
        .take(ETH.len() + ip.len() + 4)
        .map(|f| f.0)
        .sum::<usize>()
        + hdr;
    if at < hdr_end {
        let mut start = 0;
        for (len, name) in fields {
            if at < start + len {
                return format!("{name} (byte {})", at - start);
            }
            start += len;
        }
    }
    if at < hdr_end + payload {
        return format!("payload[{}]", at - hdr_end);
    }
    if at < hdr_end + payload + ICRC_LEN {
        return format!("icrc (byte {})", at - hdr_end - payload);
    }
    "past the end".into()
}

/// Compares one RTL frame with its reference; the first difference, named.
pub(crate) fn compare(got: &[u8], want: &[u8], d: &Descriptor, ipv6: bool) -> Option<String> {
    if got == want {
        return None;
    }
    let hdr = d.repr.header_len();
    let at = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    Some(format!(
        "{:?} path {} conn_psn {} {} B payload: rtl {} B, reference {} B, first difference at byte {at} \
         ({}): rtl {:02x?}, reference {:02x?}",
        d.repr.opcode,
        d.repr.path,
        d.repr.conn_psn,
        d.len,
        got.len(),
        want.len(),
        field_at(at, ipv6, hdr, usize::from(d.len)),
        got.get(at),
        want.get(at)
    ))
}

/// Runs `items` through a fresh RTL at `width` and compares each frame with
/// `want[i]`.
fn run_items(
    width: usize,
    a: &Addresses,
    items: &[TxItem],
    want: &[Vec<u8>],
    mem: &mut dyn Memory,
    knobs: crate::tx_build::Knobs<'_>,
    vcd: Option<&Path>,
) -> Result<TxRun, SimError> {
    let mut tb = TxBuildTb::new(width)?;
    if let Some(path) = vcd {
        tb.sim().trace(path)?;
    }
    tb.configure(a);
    let started = crate::SimTimer::start();
    let out = tb.run(items, mem, knobs);
    let mut run = TxRun {
        packets: out.frames.len() as u64,
        sim_secs: started.secs(),
        entropy_writes: out.entropy_writes,
        ..TxRun::default()
    };
    run.mismatches.extend(out.protocol_errors.iter().cloned());
    for (i, ((item, got), want)) in items.iter().zip(&out.frames).zip(want).enumerate() {
        if let Some(d) = compare(got, want, &item.desc, a.local_ip.is_ipv6()) {
            run.mismatches.push(format!("packet {i}: {d}"));
        }
        let name = format!("{:?}", item.desc.repr.opcode);
        match run.by_opcode.iter_mut().find(|(n, _)| *n == name) {
            Some((_, n)) => *n += 1,
            None => run.by_opcode.push((name, 1)),
        }
        run.retransmissions += u64::from(item.desc.repr.flags.contains(Flags::RETX));
    }
    run.out = out;
    Ok(run)
}

/// The addresses of the random and line-rate runs.
fn test_addresses(ipv6: bool) -> Addresses {
    let (local, peer) = if ipv6 {
        (LOCAL6.into(), PEER6.into())
    } else {
        (LOCAL.into(), PEER.into())
    };
    addresses(local, peer, metaroce_proto::DEFAULT_UDP_PORT)
}

/// Engine memory that logs every read (where the payload came from).
struct ReadLog<'a> {
    mem: &'a mut VecMemory,
    last: Option<(u64, usize)>,
}

impl Memory for ReadLog<'_> {
    fn write(&mut self, addr: u64, data: &[u8]) {
        self.mem.write(addr, data);
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) {
        self.last = Some((addr, out.len()));
        self.mem.read(addr, out);
    }
}

/// Bytes at the start of each side's memory that sources (A: WRITE/SEND
/// payloads; B: WRITE targets and receive buffers) use.
const AREA: u64 = 4 << 20;
/// Offset of A's READ destinations and B's READ sources.
const READ_AREA: u64 = 8 << 20;

/// One random work request from A, with the receive it needs posted on B.
fn post_one(pair: &mut Pair, rng: &mut SmallRng, wr_id: u64) -> bool {
    let len = match rng.gen_range(0..10) {
        0..=2 => rng.gen_range(0..=256),
        3..=7 => rng.gen_range(257..=MTU as u32),
        _ => rng.gen_range(MTU as u32 + 1..=3 * MTU as u32),
    };
    let stream = rng.gen_range(0..4u16);
    let src = MEM_BASE + rng.gen_range(0..AREA - u64::from(len));
    let dst = MEM_BASE + rng.gen_range(0..AREA - u64::from(len));
    let (rkey, imm) = (pair.b.mr.rkey, rng.r#gen());
    let (op, sge_addr) = match rng.gen_range(0..5) {
        0 => (
            SendOp::Write {
                remote_va: dst,
                rkey,
            },
            src,
        ),
        1 => (
            SendOp::WriteImm {
                remote_va: dst,
                rkey,
                imm,
            },
            src,
        ),
        2 => (SendOp::Send, src),
        3 => (SendOp::SendImm { imm }, src),
        _ => (
            SendOp::Read {
                remote_va: MEM_BASE + READ_AREA + rng.gen_range(0..AREA - u64::from(len)),
                rkey,
            },
            MEM_BASE + READ_AREA + rng.gen_range(0..AREA - u64::from(len)),
        ),
    };
    if matches!(
        op,
        SendOp::Send | SendOp::SendImm { .. } | SendOp::WriteImm { .. }
    ) {
        let recv = RecvWr {
            wr_id,
            sgl: Sge {
                addr: dst,
                len: 3 * MTU as u32,
                lkey: pair.b.mr.lkey,
            }
            .into(),
            stream,
        };
        if pair.b.nic.post_recv(pair.b.qpn, recv).is_err() {
            return false;
        }
    }
    let wr = SendWr {
        wr_id,
        op,
        sgl: Sge {
            addr: sge_addr,
            len,
            lkey: pair.a.mr.lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream,
    };
    pair.a.nic.post_send(pair.a.qpn, wr).is_ok()
}

/// One datagram side A sent.
struct Sent {
    t: Transmit,
    bytes: Vec<u8>,
    read: Option<(u64, usize)>,
}

/// Drives a loopback pair until A has sent `packets` datagrams for the TX
/// builder (besides its ACKs); A→B datagrams are dropped with probability
/// `loss`.
fn engine_traffic(seed: u64, packets: usize, loss: f64) -> (Pair, Vec<Sent>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    // The traffic of the hardware data path: no PARITY (spec §3.12).
    let qp = QpConfig {
        paths: 16,
        streams: 8,
        parity_group: 0,
        ..QpConfig::default()
    };
    let mut pair = Pair::with_config(seed, qp, Channel::default());
    let mut fill = vec![0u8; AREA as usize];
    rng.fill_bytes(&mut fill);
    pair.a.mem.write(MEM_BASE, &fill);
    rng.fill_bytes(&mut fill);
    pair.b.mem.write(MEM_BASE + READ_AREA, &fill);
    let mut sent = Vec::with_capacity(packets);
    let mut buf = vec![0u8; 9000];
    let (mut now, mut outstanding, mut wr_id) = (0u64, 0usize, 0u64);
    let mut to_b = Vec::new();
    let mut data = 0;
    while data < packets {
        while outstanding < 8 {
            wr_id += 1;
            if !post_one(&mut pair, &mut rng, wr_id) {
                break;
            }
            outstanding += 1;
        }
        loop {
            let mut log = ReadLog {
                mem: &mut pair.a.mem,
                last: None,
            };
            let Some(t) = pair.a.nic.poll_transmit(now, &mut buf, &mut log) else {
                break;
            };
            let read = log.last;
            let bytes = buf[..t.len].to_vec();
            if !rng.gen_bool(loss) {
                to_b.push((bytes.clone(), t));
            }
            let s = Sent { t, bytes, read };
            data += usize::from(matches!(descriptor_of(&s), Ok(Some(_))));
            sent.push(s);
        }
        for (bytes, t) in to_b.drain(..) {
            let meta = RxMeta {
                src_ip: pair.a.ip,
                src_port: t.src_port,
                dst_ip: t.dst_ip,
                dst_port: t.dst_port,
                ecn_ce: false,
            };
            pair.b
                .nic
                .handle_datagram(now, &bytes, meta, &mut pair.b.mem);
        }
        while let Some(t) = pair.b.nic.poll_transmit(now, &mut buf, &mut pair.b.mem) {
            let meta = RxMeta {
                src_ip: pair.b.ip,
                src_port: t.src_port,
                dst_ip: t.dst_ip,
                dst_port: t.dst_port,
                ecn_ce: false,
            };
            pair.a
                .nic
                .handle_datagram(now, &buf[..t.len], meta, &mut pair.a.mem);
        }
        now += 2_000;
        for side in [&mut pair.a, &mut pair.b] {
            if side.nic.poll_timeout().is_some_and(|t| t <= now) {
                side.nic.handle_timeout(now, &mut side.mem);
            }
            while let Some(e) = side.nic.poll_event() {
                match e {
                    // Only A posts sends.
                    Event::Completion(c) if !c.is_recv => {
                        outstanding = outstanding.saturating_sub(1);
                    }
                    Event::QpError { qpn, status } => panic!("QP {qpn:#x} failed: {status:?}"),
                    _ => {}
                }
            }
        }
        assert_eq!(pair.a.nic.qp_state(pair.a.qpn), Some(QpState::Rts));
    }
    (pair, sent)
}

/// The descriptor for an engine datagram, if it is one the TX builder
/// makes (base-only or MSG header); `None` for ACK, NACK and CM.
fn descriptor_of(s: &Sent) -> Result<Option<Descriptor>, String> {
    let packet =
        Packet::new_checked(&s.bytes[..]).map_err(|e| format!("engine datagram: {e:?}"))?;
    let repr = Repr::parse(&packet).map_err(|e| format!("engine datagram: {e:?}"))?;
    if !matches!(repr.ext, Ext::None | Ext::Msg(_)) {
        return Ok(None);
    }
    let payload = packet.payload();
    let addr = match s.read {
        Some((addr, len)) if len == payload.len() => addr,
        _ if payload.is_empty() => 0,
        other => {
            return Err(format!(
                "payload of {} B but engine read {other:?}",
                payload.len()
            ));
        }
    };
    Ok(Some(Descriptor {
        repr,
        len: payload.len() as u16,
        addr,
        ecn: s.t.ecn_capable,
    }))
}

/// Engine traffic (at least `packets` data and PROBE datagrams from A,
/// `loss` of A's datagrams dropped on the way to B) through the RTL at
/// `width`. With `backpressure`, the descriptor source idles 10 %, the
/// fetch port refuses requests 20 %, the fetch stream idles 20 % and the
/// output stalls 25 % of cycles.
pub fn run_against_engine(
    width: usize,
    packets: usize,
    seed: u64,
    loss: f64,
    backpressure: bool,
    vcd: Option<&Path>,
) -> Result<TxRun, SimError> {
    // Fail fast without Verilator, before generating traffic.
    drop(TxBuildTb::new(width)?);
    let EngineItems {
        mut pair,
        addresses: a,
        items,
        want,
        skipped,
        errors: bench_errors,
    } = EngineItems::new(seed, packets, loss);
    let mut knobs = tx_knobs(seed, backpressure);
    let mut run = run_items(width, &a, &items, &want, &mut pair.a.mem, &mut knobs, vcd)?;
    run.skipped = skipped;
    run.mismatches.extend(bench_errors);
    Ok(run)
}

/// The descriptors of engine traffic and their reference frames.
pub(crate) struct EngineItems {
    /// The engines (side A's memory holds the payloads).
    pub(crate) pair: Pair,
    /// The addresses the RTL is configured with (A's address to B's).
    pub(crate) addresses: Addresses,
    /// One descriptor per data or PROBE datagram A sent.
    pub(crate) items: Vec<TxItem>,
    /// Its reference frame: `etherparse` headers + the engine's datagram.
    pub(crate) want: Vec<Vec<u8>>,
    /// A's datagrams that are not descriptors (ACK, NACK, CM).
    pub(crate) skipped: u64,
    /// Engine datagrams the bench could not turn into descriptors.
    pub(crate) errors: Vec<String>,
}

impl EngineItems {
    /// At least `packets` descriptors from engine traffic (`loss` of A's
    /// datagrams dropped on the way to B).
    pub(crate) fn new(seed: u64, packets: usize, loss: f64) -> Self {
        let (pair, sent) = engine_traffic(seed, packets, loss);
        let a = addresses(pair.a.ip, pair.b.ip, pair.b.nic.config().udp_port);
        let mut e = EngineItems {
            pair,
            addresses: a,
            items: Vec::new(),
            want: Vec::new(),
            skipped: 0,
            errors: Vec::new(),
        };
        for s in &sent {
            match descriptor_of(s) {
                Ok(Some(desc)) => {
                    assert_eq!(s.t.dst_ip, e.pair.b.ip, "one peer");
                    assert_eq!(s.t.dst_port, a.dst_port, "one port");
                    e.want
                        .push(reference_frame(&a, s.t.src_port, &s.bytes, s.t.ecn_capable));
                    e.items.push(TxItem {
                        desc,
                        entropy: s.t.src_port,
                    });
                }
                Ok(None) => e.skipped += 1,
                Err(err) => e.errors.push(err),
            }
        }
        e
    }
}

/// Per-cycle knobs of [`run_against_engine`]: with `backpressure`, the
/// descriptor source idles 10 %, fetch requests are refused 20 %, the
/// fetch stream idles 20 % and the output stalls 25 % of cycles.
pub(crate) fn tx_knobs(seed: u64, backpressure: bool) -> impl FnMut() -> Knob {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x7B);
    move || {
        if backpressure {
            Knob {
                offer: rng.gen_bool(0.9),
                fetch_ready: rng.gen_bool(0.8),
                pay_valid: rng.gen_bool(0.8),
                out_ready: rng.gen_bool(0.75),
            }
        } else {
            Knob::ALWAYS
        }
    }
}
/// A random descriptor: any data/READ opcode or PROBE, random header
/// fields, a payload of 0..=MTU bytes where the opcode has one.
fn random_desc(rng: &mut SmallRng, mem_base: u64, mem_len: usize) -> Descriptor {
    const OPS: [Opcode; 7] = [
        Opcode::Write,
        Opcode::WriteImm,
        Opcode::Send,
        Opcode::SendImm,
        Opcode::ReadReq,
        Opcode::ReadResp,
        Opcode::Probe,
    ];
    let opcode = OPS[rng.gen_range(0..OPS.len())];
    let len = if !opcode.has_payload() {
        0
    } else {
        match rng.gen_range(0..10) {
            0 => 0,
            1..=4 => rng.gen_range(1..=256),
            5 => MTU,
            _ => rng.gen_range(257..=MTU),
        }
    };
    let ext = if opcode.is_message() {
        Ext::Msg(MsgRepr {
            msn: rng.r#gen(),
            recv_idx: rng.r#gen(),
            msg_len: rng.r#gen(),
            offset: rng.r#gen(),
            remote_va: rng.r#gen(),
            rkey: rng.r#gen(),
            imm: rng.r#gen(),
        })
    } else {
        Ext::None
    };
    let path = if rng.gen_bool(0.1) {
        rng.r#gen()
    } else {
        rng.gen_range(0..TABLE_PATHS as u16)
    };
    Descriptor {
        repr: Repr {
            opcode,
            flags: Flags::from_bits_retain(rng.r#gen()),
            dst_qpn: rng.r#gen(),
            src_qpn: rng.r#gen(),
            stream: rng.r#gen(),
            path,
            conn_psn: rng.r#gen(),
            path_psn: rng.r#gen(),
            timestamp: rng.r#gen(),
            ext,
        },
        len: len as u16,
        addr: mem_base + rng.gen_range(0..=(mem_len - len) as u64),
        ecn: rng.gen_bool(0.5),
    }
}

/// `packets` random descriptors through the RTL at `width`, the entropy
/// of each packet's path rewritten to a new port just before it. Besides
/// the byte comparison with `metaroce_proto`'s datagram, the RTL's ICRC
/// must verify (`Packet::verify_icrc`) with the new port and fail with the
/// port the path had before. IPv6 frames with `ipv6`, else IPv4.
pub fn run_random(width: usize, packets: usize, seed: u64, ipv6: bool) -> Result<TxRun, SimError> {
    const BASE: u64 = 0x8000_0000;
    const LEN: usize = 64 << 10;
    drop(TxBuildTb::new(width)?);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut mem = VecMemory::new(BASE, LEN);
    let mut fill = vec![0u8; LEN];
    rng.fill_bytes(&mut fill);
    mem.write(BASE, &fill);
    let a = test_addresses(ipv6);
    let pseudo = |port| PseudoHeader::new(a.local_ip, port, a.peer_ip, a.dst_port);
    let mut table = [None::<u16>; TABLE_PATHS];
    let (mut items, mut want, mut old_ports) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..packets {
        let desc = random_desc(&mut rng, BASE, LEN);
        let slot = &mut table[usize::from(desc.repr.path) % TABLE_PATHS];
        let old = *slot;
        let entropy = loop {
            let p = rng.gen_range(metaroce_proto::ENTROPY_PORTS);
            if Some(p) != old {
                break p;
            }
        };
        *slot = Some(entropy);
        let len = usize::from(desc.len);
        let mut dgram = vec![0u8; desc.repr.buffer_len(len)];
        desc.repr.emit(&mut dgram, len).expect("emit");
        let hdr = desc.repr.header_len();
        mem.read(desc.addr, &mut dgram[hdr..hdr + len]);
        Packet::new_unchecked(&mut dgram[..]).fill_icrc(&pseudo(entropy));
        want.push(reference_frame(&a, entropy, &dgram, desc.ecn));
        items.push(TxItem { desc, entropy });
        old_ports.push(old);
    }
    let mut knobs = || Knob::ALWAYS;
    let mut run = run_items(width, &a, &items, &want, &mut mem, &mut knobs, None)?;
    for ((item, frame), old) in items.iter().zip(&run.out.frames).zip(&old_ports) {
        let Some(dgram) = frame
            .get(headers(&a, 0, false).header_len()..)
            .filter(|d| d.len() >= BASE_LEN + ICRC_LEN)
        else {
            continue;
        };
        let packet = Packet::new_unchecked(dgram);
        if packet.verify_icrc(&pseudo(item.entropy)).is_ok() {
            run.icrc_ok_new_port += 1;
        }
        if let Some(old) = old {
            if packet.verify_icrc(&pseudo(*old)).is_err() {
                run.icrc_fail_old_port += 1;
            }
        }
    }
    Ok(run)
}

/// Result of [`run_line_rate`].
#[derive(Clone, Debug, Default)]
pub struct LineRate {
    /// Frames.
    pub packets: u64,
    /// Beats per frame on the wire: ceil((106 + 4096 + 4) / lanes), 126
    /// bytes of headers with IPv6.
    pub beats_per_frame: u64,
    /// Cycles from the first frame's first beat to the last frame's last,
    /// per frame.
    pub cycles_per_packet: f64,
    /// Idle output cycles inside frames.
    pub bubbles_in_frame: u64,
    /// Idle output cycles between frames.
    pub bubbles_between: u64,
    /// Frames that differ from the reference (they are checked too).
    pub mismatches: Vec<String>,
}

/// `packets` back-to-back WRITEs of an MTU (4096 B) each over 8 paths,
/// descriptor source, fetch stream and output always ready. The frames are
/// compared with `metaroce_proto`'s datagrams too. IPv6 with `ipv6`.
pub fn run_line_rate(
    width: usize,
    packets: usize,
    seed: u64,
    ipv6: bool,
) -> Result<LineRate, SimError> {
    const BASE: u64 = 0x8000_0000;
    drop(TxBuildTb::new(width)?);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut mem = VecMemory::new(BASE, 2 * MTU);
    let mut fill = vec![0u8; 2 * MTU];
    rng.fill_bytes(&mut fill);
    mem.write(BASE, &fill);
    let a = test_addresses(ipv6);
    let (mut items, mut want) = (Vec::new(), Vec::new());
    for i in 0..packets {
        let mut desc = random_desc(&mut rng, BASE, MTU);
        desc.repr.opcode = Opcode::Write;
        if !matches!(desc.repr.ext, Ext::Msg(_)) {
            desc.repr.ext = Ext::Msg(MsgRepr::default());
        }
        desc.repr.path = (i % 8) as u16;
        desc.len = MTU as u16;
        desc.addr = BASE + rng.gen_range(0..=MTU as u64);
        let entropy = 49152 + desc.repr.path;
        let mut dgram = vec![0u8; desc.repr.buffer_len(MTU)];
        desc.repr.emit(&mut dgram, MTU).expect("emit");
        let hdr = desc.repr.header_len();
        mem.read(desc.addr, &mut dgram[hdr..hdr + MTU]);
        let pseudo = PseudoHeader::new(a.local_ip, entropy, a.peer_ip, a.dst_port);
        Packet::new_unchecked(&mut dgram[..]).fill_icrc(&pseudo);
        want.push(reference_frame(&a, entropy, &dgram, desc.ecn));
        items.push(TxItem { desc, entropy });
    }
    let mut knobs = || Knob::ALWAYS;
    let run = run_items(width, &a, &items, &want, &mut mem, &mut knobs, None)?;
    let lanes = width / 8;
    Ok(LineRate {
        packets: run.packets,
        beats_per_frame: (headers(&a, 0, false).header_len() + 64 + MTU + ICRC_LEN).div_ceil(lanes)
            as u64,
        cycles_per_packet: run.out.span as f64 / run.packets.max(1) as f64,
        bubbles_in_frame: run.out.bubbles_in_frame,
        bubbles_between: run.out.bubbles_between,
        mismatches: run.mismatches,
    })
}
