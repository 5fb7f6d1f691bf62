//! The Wireshark dissector (`tools/wireshark/metaroce.lua`) under `tshark`: it must
//! decode every pinned vector and every packet of a relay capture of real soft-NIC
//! traffic (every opcode the engine sends), with the ICRC checked and no malformed
//! packet. Skipped, with a message, when `tshark` is not installed (scripts/deps.sh
//! installs it).

#[allow(dead_code)]
#[path = "../../proto/vectors/parse.rs"]
mod parse;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use metaroce_driver::backend::Backend;
use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::*;
use metaroce_relay::{Relay, RelayConfig, RelayHandle};

fn dissector() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/wireshark/metaroce.lua")
}

/// Whether `tshark` runs. Without it the tests fail, unless
/// `METAROCE_SKIP_TSHARK=1` opts out (then they print why and pass).
fn have_tshark() -> bool {
    let ok = Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("METAROCE_SKIP_TSHARK").is_some_and(|v| v == "1"),
            "tshark is not installed: run scripts/deps.sh (or apt-get install tshark), \
             or set METAROCE_SKIP_TSHARK=1 to skip the dissector's tests"
        );
        eprintln!("SKIPPED: tshark is not installed (METAROCE_SKIP_TSHARK=1)");
    }
    ok
}

/// One line per packet: `frame.number`, opcodes, ICRC verdicts, and whether Wireshark
/// flagged it malformed or with an error.
/// Wireshark's expert severity "Chat" (`PI_CHAT`): informational, such as
/// the UDP dissector's "possible traceroute" for a source port that happens
/// to fall in 33434–33534 (path entropy is random).
const CHAT: &str = "2097152";

/// No expert info above Chat in a `_ws.expert.severity` field list.
fn nothing_above_chat(severities: &str) -> bool {
    severities.split(',').all(|s| s.is_empty() || s == CHAT)
}

fn tshark(pcap: &Path) -> Vec<Vec<String>> {
    let out = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", dissector().display()))
        .args(["-r"])
        .arg(pcap)
        .args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=a"])
        .args([
            "-e",
            "frame.number",
            "-e",
            "metaroce.opcode",
            "-e",
            "metaroce.icrc.good",
        ])
        .args([
            "-e",
            "_ws.malformed",
            "-e",
            "_ws.expert.severity",
            "-e",
            "_ws.lua.text",
        ])
        .output()
        .expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    assert!(
        !stderr.contains("Lua: Error"),
        "the dissector failed to load: {stderr}"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

/// A classic pcap (LINKTYPE_RAW) of UDP datagrams with IPv4/IPv6 + UDP headers.
struct Pcap(Vec<u8>);

fn csum(mut acc: u32, b: &[u8]) -> u32 {
    for c in b.chunks(2) {
        acc += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

impl Pcap {
    fn new() -> Pcap {
        let mut h = Vec::new();
        h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        for w in [0u32, 0, 65535, 101] {
            h.extend_from_slice(&w.to_le_bytes());
        }
        Pcap(h)
    }

    fn add(&mut self, src: SocketAddr, dst: SocketAddr, payload: &[u8]) {
        let udp_len = (8 + payload.len()) as u16;
        let mut udp = Vec::new();
        udp.extend_from_slice(&src.port().to_be_bytes());
        udp.extend_from_slice(&dst.port().to_be_bytes());
        udp.extend_from_slice(&udp_len.to_be_bytes());
        udp.extend_from_slice(&[0, 0]);
        udp.extend_from_slice(payload);
        let mut pkt = Vec::new();
        match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let total = 20 + udp.len() as u16;
                let mut ip = vec![0x45, 0x02];
                ip.extend_from_slice(&total.to_be_bytes());
                ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]);
                ip.extend_from_slice(&s.octets());
                ip.extend_from_slice(&d.octets());
                let c = fold(csum(0, &ip));
                ip[10..12].copy_from_slice(&c.to_be_bytes());
                pkt.extend_from_slice(&ip);
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let mut ip = vec![0x60, 0x20, 0, 0];
                ip.extend_from_slice(&(udp.len() as u16).to_be_bytes());
                ip.extend_from_slice(&[17, 64]);
                ip.extend_from_slice(&s.octets());
                ip.extend_from_slice(&d.octets());
                // IPv6 needs the UDP checksum (RFC 8200).
                let mut acc = csum(0, &s.octets());
                acc = csum(acc, &d.octets());
                acc += u32::from(udp_len) + 17;
                let c = fold(csum(acc, &udp));
                udp[6..8].copy_from_slice(&if c == 0 { 0xffff } else { c }.to_be_bytes());
                pkt.extend_from_slice(&ip);
            }
            _ => panic!("mixed address families"),
        }
        pkt.extend_from_slice(&udp);
        let n = self.0.len() as u32; // any increasing timestamp
        for w in [
            1_700_000_000u32,
            n % 1_000_000,
            pkt.len() as u32,
            pkt.len() as u32,
        ] {
            self.0.extend_from_slice(&w.to_le_bytes());
        }
        self.0.extend_from_slice(&pkt);
    }
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("metaroce-{}-{name}", std::process::id()))
}

#[test]
fn the_dissector_decodes_every_pinned_vector() {
    if !have_tshark() {
        return;
    }
    let vs = parse::load();
    let mut pcap = Pcap::new();
    for v in &vs {
        pcap.add(v.src, v.dst, &v.bytes);
    }
    let file = temp("vectors.pcap");
    std::fs::write(&file, &pcap.0).unwrap();
    let rows = tshark(&file);
    let _ = std::fs::remove_file(&file);
    assert_eq!(rows.len(), vs.len(), "tshark rows: {rows:?}");
    for (v, row) in vs.iter().zip(&rows) {
        let expect_op = v.fields.get("opcode").cloned().unwrap_or_default();
        match v.expect.as_str() {
            "ok" => {
                assert!(
                    !row[1].is_empty(),
                    "{}: not decoded as MetaRoCE: {row:?}",
                    v.name
                );
                assert_eq!(
                    row[2], "1",
                    "{} ({expect_op}): ICRC not reported good: {row:?}",
                    v.name
                );
                assert!(
                    row[3].is_empty() && nothing_above_chat(&row[4]),
                    "{}: flagged: {row:?}",
                    v.name
                );
            }
            "bad_icrc" => assert_eq!(row[2], "0", "{}: bad ICRC not reported: {row:?}", v.name),
            _ => assert!(
                !row[4].is_empty(),
                "{}: invalid packet not flagged: {row:?}",
                v.name
            ),
        }
    }
}

struct Nic {
    backend: Arc<SoftBackend>,
    ctx: Context,
    _pd: ProtectionDomain,
    cq: CompletionQueue,
    qp: QueuePair,
    mr: MemoryRegion,
}

fn nic() -> Nic {
    let mut cfg = SoftConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.nic.qp.paths = 4;
    cfg.entropy_sockets = 4;
    let backend = SoftBackend::start(cfg).unwrap();
    let ctx = Context::open(Arc::clone(&backend));
    let pd = ctx.alloc_pd();
    let cq = ctx.create_cq(256, None);
    let qp = pd.create_qp(&QpInit::new(&cq, &cq)).unwrap();
    let mr = pd
        .alloc_mr(
            1 << 20,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
        )
        .unwrap();
    Nic {
        backend,
        ctx,
        _pd: pd,
        cq,
        qp,
        mr,
    }
}

/// Waits until `cond` holds (up to 10 s); false if it never did.
fn wait_for(cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

fn wait_wc(n: &Nic, want: usize) -> Vec<Wc> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut out = Vec::new();
    let mut wc = [Wc::default(); 16];
    while out.len() < want && Instant::now() < deadline {
        let k = n.cq.poll(&mut wc);
        out.extend_from_slice(&wc[..k]);
        std::thread::sleep(Duration::from_micros(200));
    }
    out
}

/// The opcodes the relay capture must hold.
const CAPTURED_OPCODES: [&str; 10] = [
    "0x01", "0x02", "0x03", "0x04", "0x05", "0x06", "0x11", "0x12", "0x13", "0x22",
];

#[test]
fn the_dissector_decodes_a_relay_capture_of_every_opcode_the_engine_sends() {
    if !have_tshark() {
        return;
    }
    // The relay captures what it forwards, and whether a PROBE is among it
    // is a matter of timing (the outage's PROBEs are dropped; after it the
    // sender may recover before probing again, seen about one run in six
    // on a loaded machine), so a capture without one is followed by another
    // run (at most four); every packet of every run is checked.
    let mut rows = Vec::new();
    for run in 0..4 {
        rows.extend(relay_capture(run));
        if CAPTURED_OPCODES
            .iter()
            .all(|op| rows.iter().any(|row| row[1] == *op))
        {
            break;
        }
    }
    check_capture(&rows);
}

/// One run through a relay that captures: every message operation, an
/// outage until a PROBE, a DISCONNECT; tshark's rows of the capture.
fn relay_capture(run: u64) -> Vec<Vec<String>> {
    let (a, b) = (nic(), nic());
    let file = temp(&format!("relay-{run}.pcap"));
    let mut cfg = RelayConfig::between(b.ctx.address(), a.ctx.address(), 4, 0.0);
    cfg.seed = 11 + run;
    cfg.pcap = Some(file.clone());
    let relay = Relay::start(cfg).unwrap();
    let mut eb = b.qp.endpoint();
    eb.addr = relay.listen_addrs()[0];
    let mut ea = a.qp.endpoint();
    ea.addr = relay.listen_addrs()[1];
    a.qp.connect(&eb, &ConnectOptions::default()).unwrap();
    b.qp.connect(&ea, &ConnectOptions::default()).unwrap();

    every_message_op(&a, &b, &relay);
    outage_until_probe(&a, &b, &relay);
    disconnect(&a, &b, &relay);
    relay.stop().unwrap();

    let rows = tshark(&file);
    let _ = std::fs::remove_file(&file);
    rows
}

/// A SEND refused for want of a receive (RNR NACKs), then at 5% loss (so
/// retransmissions, RETX, show up too) a WRITE, a SEND_IMM, a WRITE_IMM and
/// a READ, all completed.
fn every_message_op(a: &Nic, b: &Nic, relay: &RelayHandle) {
    // A SEND before its receive is posted: RNR NACKs until b posts it.
    for i in 0..3 {
        a.qp.post_send(&SendRequest::send(100 + i, a.mr.sge(0, 100)))
            .unwrap();
    }
    assert!(
        wait_for(|| b.ctx.drops().receiver_not_ready > 0),
        "no SEND was refused for lack of a receive"
    );
    for i in 0..5 {
        b.qp.post_recv(RecvWr {
            wr_id: 10 + i,
            sgl: b.mr.sge(65536 * (i as usize + 1), 65536).into(),
            stream: 0,
        })
        .unwrap();
    }
    for p in 0..4 {
        relay.set_loss(p, 0.05).unwrap();
    }
    let big = a.mr.sge(0, 64 << 10);
    a.qp.post_send(&SendRequest::write(2, big, b.mr.addr(), b.mr.rkey()))
        .unwrap();
    a.qp.post_send(&SendRequest::new(
        3,
        SendOp::SendImm { imm: 5 },
        Payload::Sge(a.mr.sge(0, 5000)),
    ))
    .unwrap();
    a.qp.post_send(&SendRequest::new(
        4,
        SendOp::WriteImm {
            remote_va: b.mr.addr(),
            rkey: b.mr.rkey(),
            imm: 6,
        },
        Payload::Sge(a.mr.sge(0, 300)),
    ))
    .unwrap();
    a.qp.post_send(&SendRequest::read(
        5,
        a.mr.sge(4096, 20000),
        b.mr.addr(),
        b.mr.rkey(),
    ))
    .unwrap();
    let wc = wait_wc(a, 7);
    assert_eq!(wc.len(), 7, "{wc:?}");
    assert!(wc.iter().all(|w| w.status == WcStatus::Success), "{wc:?}");
}

/// An outage of the whole fabric until the sender has sent a PROBE (well
/// inside the connection's retry budget): path RTOs fire, the paths are
/// quarantined, and PROBEs go out until the fabric is back.
fn outage_until_probe(a: &Nic, b: &Nic, relay: &RelayHandle) {
    let probes = a.ctx.stats().probes_sent;
    for p in 0..4 {
        relay.blackhole(p).unwrap();
    }
    for i in 0..8 {
        a.qp.post_send(&SendRequest::write(
            20 + i,
            a.mr.sge(0, 4096),
            b.mr.addr(),
            b.mr.rkey(),
        ))
        .unwrap();
    }
    assert!(
        wait_for(|| a.ctx.stats().probes_sent > probes),
        "no PROBE during the outage"
    );
    for p in 0..4 {
        relay.restore(p).unwrap();
    }
    let wc = wait_wc(a, 8);
    assert_eq!(wc.len(), 8, "{wc:?}");
    assert!(wc.iter().all(|w| w.status == WcStatus::Success), "{wc:?}");
}

/// A DISCONNECT from `a`, which reaches `b` through the relay.
fn disconnect(a: &Nic, b: &Nic, relay: &RelayHandle) {
    // The DISCONNECT is sent once and never repeated (§9.4): no loss for it.
    // (The relay draws a datagram's loss as it arrives, from the probability
    // `set_loss` has set by the time it returns.)
    for p in 0..4 {
        relay.set_loss(p, 0.0).unwrap();
    }
    let qpn = a.qp.qpn();
    a.backend.control(&mut |c| c.nic.disconnect(qpn).unwrap());
    // The peer's QP leaves RTS when the DISCONNECT reached it through the relay.
    assert!(
        wait_for(|| b.qp.state() == QpState::Error),
        "the DISCONNECT did not reach the peer"
    );
}

/// Every captured packet decoded as MetaRoCE with a good ICRC, nothing
/// malformed or above a chat-level expert note, and every opcode the engine
/// sends among them (between two engines its ACKs are MULTI_ACKs, spec §6.4;
/// the single-path ACK is among the pinned vectors).
fn check_capture(rows: &[Vec<String>]) {
    assert!(rows.len() > 20, "{} packets captured", rows.len());
    let mut seen = std::collections::BTreeSet::new();
    for row in rows {
        assert!(
            !row[1].is_empty(),
            "packet {} not decoded as MetaRoCE: {row:?}",
            row[0]
        );
        assert_eq!(row[2], "1", "packet {}: ICRC not good: {row:?}", row[0]);
        assert!(row[3].is_empty(), "packet {} malformed: {row:?}", row[0]);
        assert!(
            nothing_above_chat(&row[4]),
            "packet {} has an expert warning: {row:?}",
            row[0]
        );
        seen.insert(row[1].clone());
    }
    for op in CAPTURED_OPCODES {
        assert!(seen.contains(op), "no opcode {op} in the capture: {seen:?}");
    }
}
