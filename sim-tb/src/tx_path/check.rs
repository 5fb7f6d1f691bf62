//! The random-operations run of the table against the engine.

use metaroce_firmware::SlotFate;
use rand::Rng;

use super::world::{Action, World};
use super::{Op, OpResult, SLOTS, TxPathTb, diff_result, diff_state};

/// Operation counts and cycles of a run, per [`Op`] kind (init, send,
/// ack, feedback, timeout, move, window, lose).
#[derive(Clone, Debug, Default)]
pub struct TxRun {
    /// Operations compared.
    pub ops: u64,
    /// Operations per kind.
    pub by_kind: [u64; 8],
    /// Cycles per kind (from the operation's cycle to its result).
    pub cycles_by_kind: [u64; 8],
    /// Longest operation per kind, cycles.
    pub max_cycles: [u64; 8],
    /// ACK operations by origin: receiver's latest, stale, hostile.
    pub acks: [u64; 3],
    /// Sends refused by the RTL because the ring was full.
    pub refused: u64,
    /// Operations after which the operated slot held 256 transmissions
    /// (the 256-PSN limit reached).
    pub full: u64,
    /// ACKs that ended a quarantine (a probe acknowledged).
    pub recovered: u64,
    /// RACK checks, and transmissions they declared lost.
    pub racks: [u64; 2],
    /// Fate events compared: acked, lost.
    pub fates: [u64; 2],
    /// Slot read-backs compared.
    pub reads: u64,
    /// Mismatches: operation and first differing field.
    pub mismatches: Vec<String>,
    /// Clock cycles in all.
    pub cycles: u64,
}

fn kind(op: &Op) -> usize {
    match op {
        Op::Init { .. } => 0,
        Op::Send { .. } => 1,
        Op::Ack { .. } => 2,
        Op::Feedback { .. } => 3,
        Op::Timeout { .. } => 4,
        Op::Move { .. } => 5,
        Op::Window { .. } => 6,
        Op::Lose { .. } => 7,
    }
}

/// Runs at least `ops` random operations (seed `seed`) through the RTL and
/// the engine, comparing after every operation its result, its fate events
/// and the read port of its slot and of one other slot; at the end every
/// slot.
pub fn run_against_engine(tb: &mut TxPathTb, ops: u64, seed: u64) -> TxRun {
    let mut w = World::new(seed);
    let mut run = TxRun::default();
    let start = tb.sim().cycles();
    // An ACK's feedback, due next.
    let mut pending: Option<(usize, Op)> = None;
    let mut n = 0u64;
    // Every slot becomes a fresh engine path with its window first.
    for slot in 0..SLOTS {
        let window = w.gold[slot].path().stats().window;
        for op in [
            Op::Init {
                entropy: 0xC000 + slot as u16,
            },
            Op::Window { window },
        ] {
            n += 1;
            if exec(tb, &mut w, &mut run, n, slot, &op).is_none() {
                return run;
            }
        }
        w.rtl_window[slot] = window;
    }
    while run.ops < ops {
        let (slot, action) = match pending.take() {
            Some((slot, op)) => (slot, Action::Op(op)),
            None => {
                let (slot, action, origin) = w.step();
                if let Some(o) = origin {
                    run.acks[o] += 1;
                }
                (slot, action)
            }
        };
        n += 1;
        let was_quarantined = w.gold[slot].path().stats().quarantined;
        match &action {
            Action::Op(op) => {
                let Some((got, want)) = exec(tb, &mut w, &mut run, n, slot, op) else {
                    break;
                };
                pending = after_op(&mut w, &mut run, slot, op, &got, &want).map(|fb| (slot, fb));
            }
            Action::Rack { delivered_sent_ns } => {
                if exec_rack(tb, &mut w, &mut run, n, slot, *delivered_sent_ns).is_none() {
                    break;
                }
            }
        }
        run.full += u64::from(w.gold[slot].path().slots_len() == 256);
        run.recovered += u64::from(was_quarantined && !w.gold[slot].path().stats().quarantined);
        // The firmware mirrors the engine controller's window.
        let window = w.gold[slot].path().stats().window;
        if window != w.rtl_window[slot] {
            n += 1;
            if exec(tb, &mut w, &mut run, n, slot, &Op::Window { window }).is_none() {
                break;
            }
            w.rtl_window[slot] = window;
        }
        let other = (n as usize * 7 + 3) % SLOTS;
        for q in [slot, other] {
            let len = w.rng.gen_range(0..=4096);
            let got = tb.read(q, len);
            run.reads += 1;
            if let Some(d) = diff_state(&got, &w.gold[q], len) {
                run.mismatches
                    .push(format!("op {n} slot {slot} {action:?}: slot {q} {d}"));
            }
        }
    }
    for q in 0..SLOTS {
        let got = tb.read(q, 1500);
        run.reads += 1;
        if let Some(d) = diff_state(&got, &w.gold[q], 1500) {
            run.mismatches.push(format!("end: slot {q} {d}"));
        }
    }
    run.mismatches.extend_from_slice(tb.capture_errors());
    run.cycles = tb.sim().cycles() - start;
    run
}

/// Runs operation number `n`, `op` on `slot`, in the RTL and the engine and
/// compares the results; `None` when the RTL did not finish it.
fn exec(
    tb: &mut TxPathTb,
    w: &mut World,
    run: &mut TxRun,
    n: u64,
    slot: usize,
    op: &Op,
) -> Option<(OpResult, OpResult)> {
    let want = w.gold[slot].apply(op, w.now_ns);
    let (got, cycles) = match tb.run(slot, op) {
        Ok(r) => r,
        Err(e) => {
            run.mismatches
                .push(format!("op {n} slot {slot} {op:?}: {e}"));
            return None;
        }
    };
    let k = kind(op);
    run.ops += 1;
    run.by_kind[k] += 1;
    run.cycles_by_kind[k] += cycles;
    run.max_cycles[k] = run.max_cycles[k].max(cycles);
    if let Some(d) = diff_result(&got, &want) {
        run.mismatches
            .push(format!("op {n} slot {slot} {op:?}: {d}"));
    }
    for f in &got.fates {
        run.fates[usize::from(matches!(f, SlotFate::Lost { .. }))] += 1;
    }
    Some((got, want))
}

/// A RACK check on `slot` as operation `n`: the engine's `on_rack`, and one
/// `Lose` on the RTL per transmission it declared lost (one for the next
/// path PSN, which must change nothing, when there is none); compares the
/// fate events. `None` when the RTL did not finish an operation.
fn exec_rack(
    tb: &mut TxPathTb,
    w: &mut World,
    run: &mut TxRun,
    n: u64,
    slot: usize,
    delivered_sent_ns: u64,
) -> Option<()> {
    let want = OpResult {
        ok: true,
        fates: w.gold[slot].rack(w.now_ns, delivered_sent_ns),
        ..OpResult::default()
    };
    run.racks[0] += 1;
    run.racks[1] += want.fates.len() as u64;
    let mut psns = Vec::new();
    for f in &want.fates {
        let psn = match f {
            SlotFate::Lost { conn_psn } => w.psn_of[slot].get(conn_psn),
            SlotFate::Acked { .. } => None,
        };
        match psn {
            Some(&p) => psns.push(p),
            None => run
                .mismatches
                .push(format!("op {n} slot {slot}: RACK reported {f:?}")),
        }
    }
    if psns.is_empty() {
        psns.push(w.gold[slot].next_psn);
    }
    let mut got = OpResult {
        ok: true,
        ..OpResult::default()
    };
    for path_psn in psns {
        let op = Op::Lose { path_psn };
        let (r, cycles) = match tb.run(slot, &op) {
            Ok(r) => r,
            Err(e) => {
                run.mismatches
                    .push(format!("op {n} slot {slot} {op:?}: {e}"));
                return None;
            }
        };
        run.ops += 1;
        run.by_kind[7] += 1;
        run.cycles_by_kind[7] += cycles;
        run.max_cycles[7] = run.max_cycles[7].max(cycles);
        got.ok &= r.ok;
        got.pkts += r.pkts;
        got.bytes += r.bytes;
        got.fates.extend(r.fates);
    }
    run.fates[1] += got.fates.len() as u64;
    if let Some(d) = diff_result(&got, &want) {
        run.mismatches
            .push(format!("op {n} slot {slot} RACK at {}: {d}", w.now_ns));
    }
    Some(())
}

/// The world's side of a finished operation: a send enters the network
/// (8% are lost); an ACK is usually followed by its feedback, returned.
fn after_op(
    w: &mut World,
    run: &mut TxRun,
    slot: usize,
    op: &Op,
    got: &OpResult,
    want: &OpResult,
) -> Option<Op> {
    match *op {
        Op::Send {
            conn_psn, probe, ..
        } => {
            run.refused += u64::from(!got.ok);
            if got.ok && !probe {
                w.psn_of[slot].insert(conn_psn, got.psn);
            }
            if got.ok && !w.rng.gen_bool(0.08) {
                w.net[slot].push(got.psn);
            }
            None
        }
        Op::Ack { .. } if w.rng.gen_bool(0.85) => {
            // The engine's order: the ACK, then its feedback.
            let ce = w.history[slot].last().map_or(0, |a| a.ce_count);
            Some(Op::Feedback {
                rtt_ns: w.rtt(),
                ce_count: ce.wrapping_add(w.ce_offset[slot]),
                acked: want.pkts,
                bytes: want.bytes,
            })
        }
        _ => None,
    }
}
