//! The RX parser's reference check: random traffic (valid packets of every
//! opcode, truncated, bad-version, unknown-opcode, unexpected-payload and
//! bad-ICRC frames), the expected verdict and fields from `metaroce-proto`,
//! and a comparison of everything the RTL reported. The tests and
//! `metaroce hdl report` both run it.

use metaroce_proto::{BASE_LEN, Error, ICRC_LEN, Opcode, Packet, PseudoHeader};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::rx_parser::{Frame, RunOutput, RxMeta, RxParserTb, reason};

/// What the RTL must report for `frame`: `metaroce-proto`'s framing checks,
/// then its ICRC check (the engine's order), for every opcode of the spec
/// (the atomics included) but MULTI_ACK and PARITY, which the RTL does not
/// know (spec §1.4, v0.1.4 and v0.1.5: they are never sent to a peer on the
/// hardware data path).
pub fn expected_reason(frame: &Frame) -> u8 {
    let b = &frame.bytes;
    if b.len() >= BASE_LEN + ICRC_LEN
        && b[0] == metaroce_proto::VERSION
        && Opcode::try_from(b[1]).is_ok_and(Opcode::software_only)
    {
        return reason::BAD_OPCODE;
    }
    let packet = match Packet::new_checked(&frame.bytes[..]) {
        Ok(p) => p,
        Err(Error::Truncated { .. }) => return reason::TRUNCATED,
        Err(Error::BadVersion(_)) => return reason::BAD_VERSION,
        Err(Error::BadOpcode(_)) => return reason::BAD_OPCODE,
        Err(Error::UnexpectedPayload(..)) => return reason::UNEXPECTED_PAYLOAD,
        Err(e) => panic!("framing check returned {e:?}"),
    };
    match packet.verify_icrc(&frame.pseudo) {
        Ok(()) => reason::NONE,
        Err(_) => reason::BAD_ICRC,
    }
}

/// A MSG opcode (the atomics among them).
fn is_message(opcode: u8) -> bool {
    Opcode::try_from(opcode).is_ok_and(Opcode::is_message)
}

/// Bytes the parser strips: base + MSG extension for MSG opcodes, else base.
fn stripped(frame: &[u8]) -> usize {
    let msg = frame.len() > 1 && is_message(frame[1]);
    BASE_LEN + if msg { Opcode::Write.ext_len() } else { 0 }
}

/// Compares one frame's metadata with the reference; returns every
/// difference, first differing field first.
pub fn check_meta(frame: &Frame, got: &RxMeta) -> Vec<String> {
    let mut diffs = Vec::new();
    let mut cmp = |name: &str, got: u64, want: u64| {
        if got != want {
            diffs.push(format!("{name}: rtl {got:#x}, proto {want:#x}"));
        }
    };
    let bytes = &frame.bytes[..];
    let want_reason = expected_reason(frame);
    cmp("len", got.len.into(), bytes.len() as u64);
    cmp("reason", got.reason.into(), want_reason.into());
    cmp(
        "drop",
        got.drop.into(),
        (want_reason != reason::NONE).into(),
    );
    if bytes.len() < BASE_LEN {
        return diffs;
    }
    // The base header is all there, so its fields are defined even when the
    // frame is dropped for its version, opcode, length or ICRC.
    let p = Packet::new_unchecked(bytes);
    let b = p.base();
    cmp("version", got.version.into(), b.version.into());
    cmp("opcode", got.opcode.into(), b.opcode.into());
    cmp("is_msg", got.is_msg.into(), is_message(b.opcode).into());
    cmp("flags", got.flags.into(), b.flags.get().into());
    cmp("dst_qpn", got.dst_qpn.into(), b.dst_qpn.get().into());
    cmp("src_qpn", got.src_qpn.into(), b.src_qpn.get().into());
    cmp("stream", got.stream.into(), b.stream.get().into());
    cmp("path", got.path.into(), b.path.get().into());
    cmp("conn_psn", got.conn_psn.into(), b.conn_psn.get().into());
    cmp("path_psn", got.path_psn.into(), b.path_psn.get().into());
    cmp("timestamp", got.timestamp, b.timestamp.get());
    if want_reason == reason::NONE
        && let Some(m) = p.msg()
    {
        cmp("msn", got.msn.into(), m.msn.get().into());
        cmp("recv_idx", got.recv_idx.into(), m.recv_idx.get().into());
        cmp("msg_len", got.msg_len.into(), m.msg_len.get().into());
        cmp("offset", got.offset.into(), m.offset.get().into());
        cmp("remote_va", got.remote_va, m.remote_va.get());
        cmp("rkey", got.rkey.into(), m.rkey.get().into());
        cmp("imm", got.imm.into(), m.imm.get().into());
    }
    diffs
}

/// Hex dump of a frame's first bytes, for mismatch reports.
fn dump(frame: &Frame) -> String {
    let head: Vec<String> = frame
        .bytes
        .iter()
        .take(72)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{} B, src port {}, bytes {}{}",
        frame.bytes.len(),
        frame.pseudo.src_port,
        head.join(""),
        if frame.bytes.len() > 72 { "…" } else { "" }
    )
}

/// Checks a whole run: metadata per frame, payload per frame, stream rules.
/// Returns one line per mismatching frame (the frame, then its differences)
/// and per stream-rule violation; empty when the RTL agrees.
pub fn check_run(frames: &[Frame], out: &RunOutput) -> Vec<String> {
    let mut errors = out.protocol_errors.clone();
    if out.metas.len() != frames.len() {
        errors.push(format!(
            "{} metas for {} frames",
            out.metas.len(),
            frames.len()
        ));
    }
    let mut payloads = out.payloads.iter();
    for (i, (frame, meta)) in frames.iter().zip(&out.metas).enumerate() {
        let mut diffs = check_meta(frame, meta);
        let bytes = &frame.bytes;
        let skip = stripped(bytes);
        if bytes.len() > skip {
            match payloads.next() {
                Some(p) if p[..] == bytes[skip..] => {}
                Some(p) => diffs.push(format!(
                    "payload: {} B differ from the {} B after the headers",
                    p.len(),
                    bytes.len() - skip
                )),
                None => diffs.push("payload missing".into()),
            }
        }
        if !diffs.is_empty() {
            errors.push(format!("frame {i} ({}): {}", dump(frame), diffs.join("; ")));
        }
    }
    if payloads.next().is_some() {
        errors.push("more payload frames than expected".into());
    }
    errors
}

/// A random pseudo-header: IPv4 or IPv6 addresses, entropy source port,
/// MetaRoCE destination port.
pub fn random_pseudo(rng: &mut SmallRng) -> PseudoHeader {
    let mut ph = PseudoHeader {
        src_ip: rng.r#gen(),
        dst_ip: rng.r#gen(),
        src_port: rng.gen_range(metaroce_proto::ENTROPY_PORTS),
        dst_port: metaroce_proto::DEFAULT_UDP_PORT,
    };
    if rng.gen_bool(0.5) {
        for ip in [&mut ph.src_ip, &mut ph.dst_ip] {
            ip[..10].fill(0);
            ip[10..12].fill(0xff);
        }
    }
    ph
}

/// A well-formed, sealed packet: base header, extension, `payload` random
/// bytes and a correct ICRC for `pseudo`.
pub fn packet(rng: &mut SmallRng, opcode: u8, payload: usize, pseudo: &PseudoHeader) -> Vec<u8> {
    let ext = Opcode::try_from(opcode).map_or(0, Opcode::ext_len);
    let mut f = vec![0u8; BASE_LEN + ext + payload + ICRC_LEN];
    rng.fill(&mut f[..]);
    f[0] = metaroce_proto::VERSION;
    f[1] = opcode;
    Packet::new_unchecked(&mut f[..]).fill_icrc(pseudo);
    f
}

/// Random traffic: mostly valid packets of every opcode; about a third are
/// hostile (truncated, bad version, unknown opcode, unexpected payload, a
/// flipped bit, a rewritten source port) and some are MTU-sized.
pub fn random_frame(rng: &mut SmallRng) -> Frame {
    let op = if rng.gen_bool(0.05) {
        loop {
            let v: u8 = rng.r#gen();
            if Opcode::try_from(v).is_err() {
                break v;
            }
        }
    } else {
        Opcode::ALL[rng.gen_range(0..Opcode::ALL.len())] as u8
    };
    let has_payload = Opcode::try_from(op).is_ok_and(Opcode::has_payload);
    let payload = match (has_payload, rng.gen_range(0..10)) {
        (true, 0) => rng.gen_range(1000..=4096),
        (true, _) => rng.gen_range(0..=200),
        (false, 0) => rng.gen_range(1..=70),
        (false, _) => 0,
    };
    let mut pseudo = random_pseudo(rng);
    let mut f = packet(rng, op, payload, &pseudo);
    if rng.gen_bool(0.05) {
        f[0] = loop {
            let v: u8 = rng.r#gen();
            if v != metaroce_proto::VERSION {
                break v;
            }
        };
    }
    if rng.gen_bool(0.1) {
        let len = rng.gen_range(1..=f.len());
        f.truncate(len);
    }
    if rng.gen_bool(0.05) {
        let at = rng.gen_range(0..f.len());
        f[at] ^= 1 << rng.gen_range(0..8);
    }
    if rng.gen_bool(0.03) {
        // A switch or attacker rewrote the source port after sealing.
        pseudo.src_port ^= 1 << rng.gen_range(0..16);
    }
    Frame { bytes: f, pseudo }
}

/// Result of [`run_random`].
#[derive(Clone, Debug, Default)]
pub struct RandomRun {
    /// Frames sent and checked.
    pub frames: u64,
    /// Frames the reference drops.
    pub dropped: u64,
    /// Mismatch descriptions (empty when the RTL agrees).
    pub mismatches: Vec<String>,
    /// Clock cycles.
    pub cycles: u64,
    /// Input beats accepted.
    pub beats: u64,
    /// Cycles with the input offered and refused.
    pub bubbles: u64,
    /// Seconds the simulation itself took (not the traffic generation or
    /// the reference check; [`crate::SimTimer`]: CPU time).
    pub sim_secs: f64,
}

/// Sends `frames` [`random_frame`]s from `seed` through `tb` and checks
/// them. With `backpressure`, the source idles 20 % and the consumer stalls
/// 30 % of cycles (so bubbles are expected); without, both run flat out.
pub fn run_random(tb: &mut RxParserTb, frames: usize, seed: u64, backpressure: bool) -> RandomRun {
    let mut rng = SmallRng::seed_from_u64(seed);
    let traffic: Vec<Frame> = (0..frames).map(|_| random_frame(&mut rng)).collect();
    let dropped = traffic
        .iter()
        .filter(|f| expected_reason(f) != reason::NONE)
        .count() as u64;
    let mut knob_rng = SmallRng::seed_from_u64(seed ^ 0x6b6e_6f62);
    let started = crate::SimTimer::start();
    let out = tb.run(&traffic, &mut || {
        if backpressure {
            (knob_rng.gen_bool(0.8), knob_rng.gen_bool(0.7))
        } else {
            (true, true)
        }
    });
    let sim_secs = started.secs();
    RandomRun {
        frames: frames as u64,
        dropped,
        mismatches: check_run(&traffic, &out),
        cycles: out.cycles,
        beats: out.beats,
        bubbles: out.bubbles,
        sim_secs,
    }
}
