//! rust-hdl's simulator runs the table against the engine's software
//! table entry (`metaroce_firmware::PathEntry`, the rules the firmware
//! applies when the table is in the engine): random operations on 4
//! slots, fate events taken at random, and after each operation its
//! result, its fate events in order and every port's view of the slot.

use std::sync::{Arc, Mutex};

use metaroce_firmware::{PathEntry, SlotFate, TableOp, TableOutcome};
use metaroce_proto::Sack;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_hdl::prelude::*;

use super::{TxOp, TxPathTable, VIEW_BITS};

type Uut = TxPathTable<2>;
const SLOTS: usize = 4;

/// One operation and what the engine says it does.
struct Step {
    slot: usize,
    op: TableOp,
    out: TableOutcome,
    fates: Vec<SlotFate>,
    /// The slot after it, in `cap_view`'s field order.
    view: [u64; 20],
    can_send: bool,
    rd_len: u16,
    last_ce: u32,
}

/// The engine entry's fields in `cap_view`'s order (counters' low 32
/// bits; `backoff` only while quarantined: the engine clears it when a
/// probe is acknowledged, the table when the next timeout sets it).
fn view(e: &PathEntry) -> [u64; 20] {
    let v = e.view();
    let lo = |x: u64| x & 0xFFFF_FFFF;
    [
        v.next_psn.into(),
        v.una.into(),
        v.inflight.into(),
        v.window.into(),
        v.rtt.srtt().unwrap_or(0),
        v.rtt.rttvar(),
        v.ecn_ewma.into(),
        v.loss_ewma.into(),
        v.samples.into(),
        lo(v.sent),
        lo(v.retransmitted),
        lo(v.acked),
        lo(v.lost),
        lo(v.ce_marked),
        lo(v.repaths),
        lo(v.timeouts),
        v.entropy.into(),
        v.rtt.srtt().is_some().into(),
        v.quarantined.into(),
        if v.quarantined { v.backoff.into() } else { 0 },
    ]
}

/// A random operation on a slot in state `e` (sends only while the ring
/// has room; ACKs mostly about what is in flight, some hostile).
fn random_op(rng: &mut StdRng, e: &PathEntry, last_ce: u32) -> TableOp {
    let v = e.view();
    let count = v.next_psn.wrapping_sub(v.una);
    let r: f64 = rng.r#gen();
    if r < 0.32 && count < 256 {
        TableOp::Send {
            conn_psn: rng.r#gen(),
            len: rng.gen_range(0..=4096),
            probe: rng.gen_bool(0.1),
            retx: rng.gen_bool(0.2),
        }
    } else if r < 0.55 {
        let hostile = rng.gen_bool(0.05);
        let path_cum = if hostile {
            rng.r#gen()
        } else {
            v.una
                .wrapping_add(rng.gen_range(0..=count + 1))
                .wrapping_sub(rng.gen_range(0..2))
        };
        let mut sack = Sack::default();
        let span = if hostile { 256 } else { (count + 4).min(256) };
        for _ in 0..rng.gen_range(0..6) {
            sack.set(rng.gen_range(0..span));
        }
        TableOp::Ack { path_cum, sack }
    } else if r < 0.67 {
        let acked = rng.gen_range(0..=20);
        let ce_count = if rng.gen_bool(0.1) {
            last_ce.wrapping_sub(rng.gen_range(1..100))
        } else {
            last_ce.wrapping_add(rng.gen_range(0..=acked + 2))
        };
        TableOp::Feedback {
            rtt_ns: rng.gen_bool(0.7).then(|| rng.gen_range(100..5_000_000)),
            ce_count,
            acked,
        }
    } else if r < 0.75 {
        TableOp::Lose {
            path_psn: v.una.wrapping_add(rng.gen_range(0..=count)),
        }
    } else if r < 0.81 {
        TableOp::Timeout {
            entropy: rng.r#gen(),
        }
    } else if r < 0.87 {
        TableOp::Move {
            entropy: rng.r#gen(),
        }
    } else if r < 0.98 {
        TableOp::Window {
            bytes: rng.gen_range(0..200_000),
        }
    } else {
        TableOp::Init {
            entropy: rng.r#gen(),
        }
    }
}

/// `n` random operations (after an `Init` of every slot) and the engine's
/// answers.
fn steps(seed: u64, n: usize) -> Vec<Step> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut entries: Vec<PathEntry> = (0..SLOTS).map(|_| PathEntry::new(0)).collect();
    let mut last_ce = [0u32; SLOTS];
    (0..SLOTS + n)
        .map(|i| {
            let slot = if i < SLOTS {
                i
            } else {
                rng.gen_range(0..SLOTS)
            };
            let op = if i < SLOTS {
                TableOp::Init {
                    entropy: rng.r#gen(),
                }
            } else {
                random_op(&mut rng, &entries[slot], last_ce[slot])
            };
            match op {
                TableOp::Init { .. } => last_ce[slot] = 0,
                TableOp::Feedback { ce_count, .. }
                    if ce_count.wrapping_sub(last_ce[slot]) < 1 << 31 =>
                {
                    last_ce[slot] = ce_count
                }
                _ => {}
            }
            let mut fates = Vec::new();
            let out = entries[slot].apply(&op, |f| fates.push(f));
            let rd_len = rng.gen_range(0..=9000);
            Step {
                slot,
                op,
                out,
                fates,
                view: view(&entries[slot]),
                can_send: entries[slot].view().can_send(rd_len.into()),
                rd_len,
                last_ce: last_ce[slot],
            }
        })
        .collect()
}

/// Drives `op` on the operation port.
fn drive(x: &mut Uut, slot: usize, op: &TableOp) {
    let (code, psn, value) = match *op {
        TableOp::Init { entropy } => (TxOp::Init, 0, u32::from(entropy)),
        TableOp::Send { conn_psn, .. } => (TxOp::Send, conn_psn, 0),
        TableOp::Ack { path_cum, .. } => (TxOp::Ack, path_cum, 0),
        TableOp::Feedback { .. } => (TxOp::Feedback, 0, 0),
        TableOp::Timeout { entropy } => (TxOp::Timeout, 0, u32::from(entropy)),
        TableOp::Move { entropy } => (TxOp::Move, 0, u32::from(entropy)),
        TableOp::Window { bytes } => (TxOp::Window, 0, bytes),
        TableOp::Lose { path_psn } => (TxOp::Lose, path_psn, 0),
    };
    x.op.valid.next = true;
    x.op.code.next = (code as u64).into();
    x.op.slot.next = (slot as u64).into();
    x.op.psn.next = u64::from(psn).into();
    x.op.value.next = u64::from(value).into();
    if let TableOp::Send {
        len, probe, retx, ..
    } = *op
    {
        x.op.len.next = u64::from(len).into();
        x.op.probe.next = probe;
        x.op.retx.next = retx;
    }
    if let TableOp::Ack { sack, .. } = op {
        let mut bits = Bits::<256>::default();
        for i in 0..256 {
            bits = bits.replace_bit(i, sack.get(i as u32));
        }
        x.op.sack.next = bits;
    }
    if let TableOp::Feedback {
        rtt_ns,
        ce_count,
        acked,
    } = *op
    {
        x.op.rtt_valid.next = rtt_ns.is_some();
        x.op.rtt.next = rtt_ns.unwrap_or(0).into();
        x.op.ce_count.next = u64::from(ce_count).into();
        x.op.acked.next = u64::from(acked).into();
    }
}

/// The slot's fields on the `rd_*` port, in `cap_view`'s order.
fn rd_view(x: &Uut) -> [u64; 20] {
    let quar = x.rd.quarantined.val();
    [
        x.rd.next_psn.val().to_u64(),
        x.rd.una.val().to_u64(),
        x.rd.inflight.val().to_u64(),
        x.rd.window.val().to_u64(),
        x.rd.srtt.val().to_u64(),
        x.rd.rttvar.val().to_u64(),
        x.rd.ecn_ewma.val().to_u64(),
        x.rd.loss_ewma.val().to_u64(),
        x.rd.samples.val().to_u64(),
        x.rd.sent.val().to_u64(),
        x.rd.retransmitted.val().to_u64(),
        x.rd.acked.val().to_u64(),
        x.rd.lost.val().to_u64(),
        x.rd.ce_marked.val().to_u64(),
        x.rd.repaths.val().to_u64(),
        x.rd.timeouts.val().to_u64(),
        x.rd.entropy.val().to_u64(),
        x.rd.rtt_valid.val().into(),
        quar.into(),
        if quar { x.rd.backoff.val().to_u64() } else { 0 },
    ]
}

/// The same fields from `cap_view`.
fn cap_view(x: &Uut) -> [u64; 20] {
    let v: Bits<VIEW_BITS> = x.cap_view.val();
    let f = |i: usize| v.get_bits::<32>(32 * i).to_u64();
    let quar = v.get_bit(529);
    let mut out = [0u64; 20];
    for (i, o) in out.iter_mut().take(16).enumerate() {
        *o = f(i);
    }
    out[16] = v.get_bits::<16>(512).to_u64();
    out[17] = v.get_bit(528).into();
    out[18] = quar.into();
    out[19] = if quar {
        v.get_bits::<4>(530).to_u64()
    } else {
        0
    };
    out
}

/// Runs `steps` on the table; the mismatches and the cycles it took.
fn run(steps: Vec<Step>, seed: u64) -> (Vec<String>, u64) {
    let fails = Arc::new(Mutex::new((Vec::<String>::new(), 0u64)));
    let out = fails.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Uut>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Uut>| {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        let mut cycles = 0u64;
        for (i, s) in steps.iter().enumerate() {
            let mut bad = Vec::new();
            if !x.op.ready.val() {
                bad.push("op_ready low while idle".to_string());
            }
            drive(&mut x, s.slot, &s.op);
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            x.op.valid.next = false;
            let mut fates = Vec::new();
            let mut n = 0;
            while !x.res.valid.val() && n < 2000 {
                let ready = rng.gen_bool(0.7);
                x.m_fate.ready.next = ready;
                if ready && x.m_fate.valid.val() {
                    let conn_psn = x.m_fate.conn_psn.val().to_u64() as u32;
                    fates.push(if x.m_fate.lost.val() {
                        SlotFate::Lost { conn_psn }
                    } else {
                        SlotFate::Acked { conn_psn }
                    });
                }
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
                n += 1;
            }
            cycles += n + 1;
            let got = (
                x.res.ok.val(),
                x.res.psn.val().to_u64() as u32,
                x.res.pkts.val().to_u64() as u32,
                x.res.bytes.val().to_u64() as u32,
            );
            if got != (s.out.ok, s.out.psn, s.out.pkts, s.out.bytes) {
                bad.push(format!("result {got:?}, engine {:?}", s.out));
            }
            if fates != s.fates {
                bad.push(format!("fates {fates:?}, engine {:?}", s.fates));
            }
            x.rd.slot.next = (s.slot as u64).into();
            x.ck.slot.next = (s.slot as u64).into();
            x.rd.len.next = u64::from(s.rd_len).into();
            x = sim.wait(1, x)?;
            if rd_view(&x) != s.view {
                bad.push(format!("rd {:?}, engine {:?}", rd_view(&x), s.view));
            }
            if cap_view(&x) != s.view {
                bad.push(format!("cap {:?}, engine {:?}", cap_view(&x), s.view));
            }
            if x.rd.can_send.val() != s.can_send {
                bad.push(format!("can_send({}) {}", s.rd_len, x.rd.can_send.val()));
            }
            let ck = (
                x.ck.next_psn.val().to_u64(),
                x.ck.una.val().to_u64(),
                x.ck.quarantined.val(),
                x.ck.last_ce.val().to_u64() as u32,
            );
            if ck != (s.view[0], s.view[1], s.view[18] == 1, s.last_ce) {
                bad.push(format!("check port {ck:?}"));
            }
            if !bad.is_empty() {
                out.lock().unwrap().0.push(format!(
                    "op {i} (slot {}, {:?}): {}",
                    s.slot,
                    s.op,
                    bad.join("; ")
                ));
            }
        }
        out.lock().unwrap().1 = cycles;
        sim.done(x)
    });
    sim.run(Box::new(Uut::default()), 100_000_000).unwrap();
    let f = fails.lock().unwrap();
    (f.0.clone(), f.1)
}

#[test]
fn tx_path_rust_hdl_model_matches_the_engine() {
    let steps = steps(0x7AB1E, 1500);
    let n = steps.len();
    let count = |pred: fn(&TableOp) -> bool| steps.iter().filter(|s| pred(&s.op)).count();
    let loses = count(|o| matches!(o, TableOp::Lose { .. }));
    let timeouts = count(|o| matches!(o, TableOp::Timeout { .. }));
    let fated = steps.iter().filter(|s| !s.fates.is_empty()).count();
    let acked_pkts: u32 = steps.iter().map(|s| s.out.pkts).sum();
    let (fails, cycles) = run(steps, 5);
    assert!(
        fails.is_empty(),
        "{} mismatches, first: {:#?}",
        fails.len(),
        &fails[..fails.len().min(3)]
    );
    // The sequence exercises every operation, fates and acknowledgements.
    assert!(
        loses > 50 && timeouts > 50,
        "{loses} Lose, {timeouts} Timeout"
    );
    assert!(fated > 100, "{fated} operations with fate events");
    assert!(acked_pkts > 100, "{acked_pkts} packets acknowledged");
    eprintln!("{n} operations in {cycles} cycles");
}

#[test]
fn tx_path_verilog_emits_each_slot_count_with_its_slot_width() {
    for (slots, bits) in [(4, 2), (64, 6)] {
        let v = super::tx_path_verilog(slots);
        assert!(v.contains("module top("), "{slots} slots");
        let msb = bits - 1;
        assert!(
            v.contains(&format!("input wire  [{msb}:0] op$slot;")),
            "{slots} slots"
        );
    }
}
