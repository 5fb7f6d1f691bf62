//! What the RTL made of a receive case against what the engine makes of
//! it: verdicts, DMA writes, ACKs, receive completions, the regions the
//! writes land in, and the counters.

use std::collections::HashMap;
use std::iter::Peekable;
use std::slice;

use metaroce_firmware::{Completion, Event, MemoryRegion, WcOpcode, WcStatus};
use metaroce_proto::{Opcode, Packet, Repr};

use super::CoreRun;
use super::acks::{ack_diff, ack_fields, be_field};
use super::case::RxCase;
use super::engine::{Action, Engine, opcode_of, stream_of, verdict_of_drop};
use super::metaroce_hdl_codes::*;
use crate::rx_core::{CoreOutput, DmaWrite, RxCoreTb};
use crate::rx_parser::Frame;
use crate::tx_build::Addresses;

/// What the engine made of a datagram: its verdict code and the write it
/// made, if any ([`Engine::handle`]).
type Expected = (Option<u8>, Option<DmaWrite>);

/// One line describing a datagram for a mismatch report.
fn describe(f: &Frame) -> String {
    match Packet::new_checked(&f.bytes[..]).map(|p| Repr::parse(&p)) {
        Ok(Ok(r)) => format!(
            "{:?} {} B dst_qpn {:#x} src_qpn {:#x} path {} path_psn {} stream {} conn_psn {} ext {:?}",
            r.opcode,
            f.bytes.len(),
            r.dst_qpn,
            r.src_qpn,
            r.path,
            r.path_psn,
            r.stream,
            r.conn_psn,
            r.ext
        ),
        _ => format!(
            "unparsable {} B: {:02x?}",
            f.bytes.len(),
            &f.bytes[..f.bytes.len().min(16)]
        ),
    }
}

/// The engine taking the case's datagrams one by one, each after the
/// firmware's actions scheduled before it.
struct Replay<'a> {
    frames: &'a [Frame],
    ce: &'a [bool],
    schedule: Peekable<slice::Iter<'a, (usize, Action)>>,
    /// What the engine made of each datagram so far.
    expected: Vec<Expected>,
    /// The engine's successful receive completions and the datagram each
    /// came with.
    completions: Vec<(usize, Completion)>,
}

impl Replay<'_> {
    /// All datagrams taken.
    fn done(&self) -> bool {
        self.expected.len() == self.frames.len()
    }

    /// The next frame to the engine at time `now`, after the firmware's
    /// actions before it.
    fn next(&mut self, engine: &mut Engine, now: u64) {
        let i = self.expected.len();
        while let Some((_, a)) = self.schedule.next_if(|(at, _)| *at <= i) {
            engine.apply(*a);
        }
        let verdict = engine.handle(&self.frames[i], self.ce[i], now);
        for nic in &mut engine.nics {
            while let Some(ev) = nic.poll_event() {
                if let Event::Completion(c) = ev
                    && c.is_recv
                    && c.status == WcStatus::Success
                {
                    self.completions.push((i, c));
                }
            }
        }
        self.expected.push(verdict);
    }
}

impl RxCase {
    /// Compares what the RTL produced (`out`; its ACKs in `out.acks`, with
    /// their frame headers when `frame` gives the top's addresses) with the
    /// engine, then reads the RTL's counters from `tb`.
    pub(crate) fn compare(
        mut self,
        tb: &mut RxCoreTb,
        out: &CoreOutput,
        sim_secs: f64,
        frame: Option<&Addresses>,
    ) -> CoreRun {
        let (frames, ce, engine) = (&self.frames, &self.ce, &mut self.engine);
        let receives_posted = self
            .schedule
            .iter()
            .filter(|(_, a)| matches!(a, Action::Post(..)))
            .count() as u64;
        let mut run = CoreRun {
            packets: frames.len() as u64,
            ce_marked: ce.iter().filter(|&&c| c).count() as u64,
            cycles: out.cycles,
            beats: out.beats,
            bubbles: out.bubbles,
            sim_secs,
            receives_posted,
            placed_recv_by_stream: vec![0; RQ_STREAMS],
            ..CoreRun::default()
        };
        run.mismatches.extend(out.protocol_errors.iter().cloned());
        let mut replay = Replay {
            frames,
            ce,
            schedule: self.schedule.iter().peekable(),
            expected: Vec::with_capacity(frames.len()),
            completions: Vec::new(),
        };
        compare_acks(&mut replay, engine, out, frame, &mut run);
        let Replay {
            expected,
            completions,
            ..
        } = replay;
        for &v in &out.verdicts {
            run.by_verdict[usize::from(v & 31)] += 1;
        }
        let writes = compare_packets(frames, ce, &expected, out, &mut run);
        compare_completions(frames, out, &completions, &mut run);
        for extra in writes {
            run.mismatches.push(format!(
                "RTL wrote {} B at {:#x} that the engine did not",
                extra.data.len(),
                extra.addr
            ));
        }
        count_writes_outside_mr(frames, out, &engine.mrs, &mut run);
        compare_counters(tb, engine, &expected, &mut run);
        run
    }
}

/// Runs the engine in the RTL's order of verdict events and ACKs: before
/// each RTL ACK, every datagram whose verdict event came before the cycle
/// the ACK was taken, then the engine's next ACK of that QP compared with
/// it; then the rest of the datagrams, and no engine may have an ACK left.
fn compare_acks(
    replay: &mut Replay,
    engine: &mut Engine,
    out: &CoreOutput,
    frame: Option<&Addresses>,
    run: &mut CoreRun,
) {
    let cycle_of = |i: usize| out.event_cycles.get(i).copied().unwrap_or(out.cycles);
    for (k, ack) in out.acks.iter().enumerate() {
        let at = be_field(&ack.bytes, 24, 8);
        while !replay.done() && cycle_of(replay.expected.len()) < at {
            replay.next(engine, cycle_of(replay.expected.len()));
        }
        let qpn = be_field(&ack.bytes, 8, 4) as u32;
        let what = format!(
            "ACK {k} (QP {qpn:#x}, path {}, taken at cycle {at})",
            be_field(&ack.bytes, 14, 2)
        );
        let conn = engine.conns.iter().position(|c| c.qpn == qpn);
        match conn.and_then(|c| engine.next_ack(c, at)) {
            Some((t, want)) => {
                run.acks_checked += 1;
                if let Some(d) = ack_diff(ack, &t, &want, frame) {
                    run.mismatches.push(format!("{what}: {d}"));
                }
            }
            None => run
                .mismatches
                .push(format!("{what}: the engine has no ACK to send")),
        }
    }
    while !replay.done() {
        replay.next(engine, cycle_of(replay.expected.len()));
    }
    for c in 0..engine.conns.len() {
        if let Some((_, want)) = engine.next_ack(c, out.cycles) {
            run.mismatches.push(format!(
                "connection {c}: the engine still sends an ACK the RTL never sent: {:?}",
                ack_fields(&want)
            ));
        }
    }
}

/// Each datagram's RTL verdict and DMA write against the engine's, and the
/// tallies of what was placed and handed up. Returns the RTL's writes no
/// datagram accounted for.
fn compare_packets<'a>(
    frames: &[Frame],
    ce: &[bool],
    expected: &[Expected],
    out: &'a CoreOutput,
    run: &mut CoreRun,
) -> slice::Iter<'a, DmaWrite> {
    let mut writes = out.writes.iter();
    for (i, (f, (want, want_write))) in frames.iter().zip(expected).enumerate() {
        let got = out.verdicts.get(i).copied();
        let mut diff = None;
        if want.is_none() || got != *want {
            diff = Some(format!("verdict: rtl {got:?}, engine {want:?}"));
        }
        count_verdict(f, *want, run);
        if let Some(w) = want_write
            && let Some(d) = write_diff(writes.next(), w)
        {
            diff.get_or_insert(d);
        }
        if let Some(d) = diff {
            run.mismatches
                .push(format!("packet {i} ({}, CE {}): {d}", describe(f), ce[i]));
        }
    }
    writes
}

/// Tallies the engine's verdict `want` for the datagram `f`: atomics and
/// ATOMIC_RESPs handed up, placements by opcode and receive stream.
fn count_verdict(f: &Frame, want: Option<u8>, run: &mut CoreRun) {
    if want == Some(V_FIRMWARE) {
        match opcode_of(&f.bytes) {
            Some(Opcode::AtomicResp) => run.atomic_resps_handed_up += 1,
            Some(o) if o.is_atomic_request() => run.atomics_handed_up += 1,
            _ => {}
        }
    }
    if want == Some(V_PLACED) {
        run.placed += 1;
        let op = opcode_of(&f.bytes);
        match op {
            Some(Opcode::Send | Opcode::SendImm) => run.placed_send += 1,
            Some(Opcode::WriteImm) => run.placed_write_imm += 1,
            Some(Opcode::ReadResp) => run.placed_read_resp += 1,
            _ => {}
        }
        if op.is_some_and(|o| o.consumes_receive())
            && let Some(n) =
                stream_of(&f.bytes).and_then(|s| run.placed_recv_by_stream.get_mut(usize::from(s)))
        {
            *n += 1;
        }
    }
}

/// The RTL's next write (`got`) against the engine's `want`: `None` when
/// they agree.
fn write_diff(got: Option<&DmaWrite>, want: &DmaWrite) -> Option<String> {
    match got {
        Some(g) if g.addr != want.addr => Some(format!(
            "write addr: rtl {:#x}, engine {:#x}",
            g.addr, want.addr
        )),
        Some(g) if g.data != want.data => {
            let at = g.data.iter().zip(&want.data).position(|(a, b)| a != b);
            Some(format!(
                "write bytes: rtl {} B, engine {} B, first difference at {at:?}",
                g.data.len(),
                want.data.len()
            ))
        }
        Some(_) => None,
        None => Some("write missing in the RTL".into()),
    }
}

/// Each receive completion of the engine must be one the firmware can
/// build from the RTL's events (`m_ev_*` of a placed datagram of that QP,
/// stream and receive, at or before the completing one).
fn compare_completions(
    frames: &[Frame],
    out: &CoreOutput,
    completions: &[(usize, Completion)],
    run: &mut CoreRun,
) {
    let mut placed_recvs = HashMap::<_, Vec<usize>>::new();
    for (j, f) in frames.iter().enumerate() {
        if let (Some(&V_PLACED), Some(e)) = (out.verdicts.get(j), out.events.get(j)) {
            let qpn = be_field(&f.bytes, 4, 4) as u32;
            placed_recvs
                .entry((qpn, e.stream, e.recv_idx))
                .or_default()
                .push(j);
        }
    }
    for (i, c) in completions {
        let write_imm = c.opcode == WcOpcode::RecvWriteImm;
        let fits = |j: &usize| {
            let e = &out.events[*j];
            *j <= *i
                && e.msg_len == c.byte_len
                && (e.opcode == Opcode::WriteImm as u8) == write_imm
                && c.imm.is_none_or(|imm| e.imm == imm)
        };
        let key = (c.qpn, c.stream, c.wr_id as u32);
        if placed_recvs.get(&key).is_some_and(|js| js.iter().any(fits)) {
            run.completions_checked += 1;
        } else {
            run.mismatches.push(format!(
                "packet {i}: the engine's completion {c:?} is in no placed RTL event \
                 (opcode, stream, recv_idx, imm, msg_len)"
            ));
        }
    }
}

/// Each RTL write belongs to the next datagram the RTL placed with a
/// payload: a WRITE's must be inside the region with REMOTE_WRITE, a
/// SEND's or READ response's inside one with LOCAL_WRITE (the QP's PD).
fn count_writes_outside_mr(
    frames: &[Frame],
    out: &CoreOutput,
    mrs: &[MemoryRegion; 4],
    run: &mut CoreRun,
) {
    let placed_ops = frames
        .iter()
        .zip(&out.verdicts)
        .filter(|(f, v)| **v == V_PLACED && f.bytes.len() > 68)
        .map(|(f, _)| opcode_of(&f.bytes));
    for (w, op) in out
        .writes
        .iter()
        .zip(placed_ops.chain(std::iter::repeat(None)))
    {
        let allowed = match op {
            Some(Opcode::Send | Opcode::SendImm | Opcode::ReadResp) => &mrs[..2],
            _ => &mrs[..1],
        };
        let end = w.addr.checked_add(w.data.len() as u64);
        if !allowed
            .iter()
            .any(|r| w.addr >= r.addr && end.is_some_and(|e| e <= r.addr + r.len))
        {
            run.writes_outside_mr += 1;
        }
    }
}

/// The RTL's per-verdict counters (read from `tb`) against the engine's
/// (the PROBEs it accepted have no engine counter: their verdicts are
/// compared per datagram).
fn compare_counters(tb: &mut RxCoreTb, engine: &Engine, expected: &[Expected], run: &mut CoreRun) {
    let (drops, stats) = engine.totals();
    let mut want_counts = [0u64; 32];
    for (name, n) in drops {
        if let Some(v) = verdict_of_drop(name) {
            want_counts[usize::from(v)] += n;
        }
    }
    want_counts[usize::from(V_DUPLICATE)] = stats.duplicates;
    // Accepted atomics are handed up (verdict 10), the rest placed.
    let handed_up = expected
        .iter()
        .filter(|(v, _)| *v == Some(V_FIRMWARE))
        .count() as u64;
    want_counts[usize::from(V_FIRMWARE)] = handed_up;
    want_counts[usize::from(V_PLACED)] = stats.data_accepted - handed_up;
    // The engine's `remote_access` and `unexpected_response` counters
    // hold two RTL verdicts each: split them as the packets were.
    for (whole, part) in [
        (V_REMOTE_ACCESS, V_REMOTE_OPERATIONAL),
        (V_UNEXPECTED_RESPONSE, V_BAD_RESPONSE),
    ] {
        let n = expected.iter().filter(|(v, _)| *v == Some(part)).count() as u64;
        want_counts[usize::from(whole)] -= n.min(want_counts[usize::from(whole)]);
        want_counts[usize::from(part)] = n;
    }
    want_counts[usize::from(V_PROBE)] =
        expected.iter().filter(|(v, _)| *v == Some(V_PROBE)).count() as u64;
    for code in 0..32u8 {
        let got = tb.counter(code);
        if got != want_counts[usize::from(code)] {
            run.mismatches.push(format!(
                "counter {code}: rtl {got}, engine {}",
                want_counts[usize::from(code)]
            ));
        }
    }
}
