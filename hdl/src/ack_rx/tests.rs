//! rust-hdl simulations of [`AckRx`]: true ACKs applied, the rest refused.

use super::*;
use crate::TxOp;
use metaroce_proto::Sack;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

const QPN: u32 = 0x11;
const PATH: u16 = 2;
const SLOT: u64 = 45;
const UNA: u64 = 100;
const NEXT_PSN: u64 = 200;
const NOW: u64 = 10_000;

/// One datagram on the tap and its event: opcode, path, the event's
/// path PSN (the datagram's unless the pairing is to break), the
/// ACK's `path_cum`, SACK bits, `echo_ts`, `ce_count`, `rx_count`.
#[derive(Clone)]
struct Gram {
    opcode: u64,
    path: u16,
    ev_psn_delta: u32,
    cum: u32,
    sack: Vec<usize>,
    echo: u64,
    ce: u32,
    rx: u32,
}

impl Gram {
    const PSN: u32 = 77;
    const TS: u64 = 0x0102_0304_0506_0708;
    const CONN_CUM: u32 = 0xC0C0;

    /// The ACK datagram's 100 bytes, fields in network order.
    fn bytes(&self) -> Vec<u8> {
        let mut b: Vec<u8> = (0..100).map(|i| i as u8 ^ 0x5A).collect();
        b[20..24].copy_from_slice(&Self::PSN.to_be_bytes());
        b[24..32].copy_from_slice(&Self::TS.to_be_bytes());
        b[32..36].copy_from_slice(&Self::CONN_CUM.to_be_bytes());
        b[36..40].copy_from_slice(&self.cum.to_be_bytes());
        b[40..72].fill(0);
        for &i in &self.sack {
            b[40 + i / 8] |= 1 << (i % 8);
        }
        b[72..80].copy_from_slice(&self.echo.to_be_bytes());
        b[80..84].copy_from_slice(&self.ce.to_be_bytes());
        b[92..96].copy_from_slice(&self.rx.to_be_bytes());
        b
    }
}

/// A table operation as the block issued it.
#[derive(Debug, PartialEq)]
enum Op {
    /// `Ack`: slot, `path_cum`, the SACK's low 64 bits.
    Ack(u64, u64, u64),
    /// `Feedback`: slot, RTT sample, CE count, packets acked.
    Feedback(u64, Option<u64>, u64, u64),
    /// A firmware operation the table took.
    Fw,
}

/// The firmware's operation in [`simulate`]'s busy runs: a `Send` on this slot.
const FW_SLOT: u64 = 3;

/// What the block did: operations, `m_done_*` (slot, packets, bytes,
/// `conn_cum`), counters (applied, unmapped, overflow, pair error,
/// refused).
#[derive(Debug, Default)]
struct Run {
    ops: Vec<Op>,
    done: Vec<(u64, u64, u64, u64)>,
    counters: [u64; 5],
}

/// Runs `grams` through rust-hdl's simulator of `AckRx<64, 8, 6>`
/// with slot 45 mapped to (`QPN`, `PATH`), each event 3 cycles after
/// its datagram's last beat, and a table that answers every operation
/// two cycles later (5 packets, 500 bytes acked) and takes none until
/// then. With `fw_busy` the firmware offers an operation in every cycle.
fn simulate(grams: Vec<Gram>, fw_busy: bool) -> Run {
    let run = Arc::new(Mutex::new(Run::default()));
    let result = run.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<AckRx<64, 8, 6>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<AckRx<64, 8, 6>>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        x.cfg.we.next = true;
        x.cfg.addr.next = SLOT.to_bits();
        x.cfg.data.next = cfg::word(QPN, PATH).to_bits();
        wait_clock_true!(sim, clock, x);
        wait_clock_false!(sim, clock, x);
        x.cfg.we.next = false;
        x.s_op.code.next = (TxOp::Send as u64).to_bits();
        x.s_op.slot.next = FW_SLOT.to_bits();
        x.ck.una.next = UNA.to_bits();
        x.ck.next_psn.next = NEXT_PSN.to_bits();
        x.now.next = NOW.to_bits();
        let beats: Vec<Vec<u8>> = grams.iter().map(Gram::bytes).collect();
        let (mut g, mut off) = (0usize, 0usize);
        let mut events: VecDeque<(usize, usize)> = VecDeque::new();
        let mut results: VecDeque<usize> = VecDeque::new();
        for cycle in 0..100 + 20 * grams.len() {
            // This cycle's inputs, settled before the outputs are read.
            x.s_tap.tvalid.next = false;
            if g < grams.len() {
                let mut beat = [0u8; 8];
                beat.copy_from_slice(&beats[g][off..off + 8]);
                x.s_tap.tdata.next = u64::from_le_bytes(beat).to_bits();
                x.s_tap.tvalid.next = true;
                off += 8;
                x.s_tap.tlast.next = off + 8 > beats[g].len();
                if off + 8 > beats[g].len() {
                    events.push_back((cycle + 3, g));
                    g += 1;
                    off = 0;
                }
            }
            x.s_tap.ev_valid.next = false;
            if events.front().is_some_and(|&(c, _)| c == cycle) {
                let (_, e) = events.pop_front().unwrap();
                let d = &grams[e];
                x.s_tap.ev_valid.next = true;
                x.s_tap.ev_code.next = 10u64.to_bits();
                x.s_tap.ev_opcode.next = d.opcode.to_bits();
                x.s_tap.ev_dst_qpn.next = u64::from(QPN).to_bits();
                x.s_tap.ev_path.next = u64::from(d.path).to_bits();
                x.s_tap.ev_path_psn.next = u64::from(Gram::PSN + d.ev_psn_delta).to_bits();
                x.s_tap.ev_timestamp.next = Gram::TS.to_bits();
            }
            x.s_res.valid.next = results.front() == Some(&cycle);
            if x.s_res.valid.next {
                results.pop_front();
            }
            x.m_op.ready.next = results.is_empty();
            x.s_op.valid.next = fw_busy;
            x.s_res.pkts.next = 5u64.to_bits();
            x.s_res.bytes.next = 500u64.to_bits();
            x = sim.wait(1, x)?;
            let mut r = run.lock().unwrap();
            // The table takes an operation when it is ready.
            let taken = x.m_op.valid.val() && x.m_op.ready.val();
            if taken && x.s_op.ready.val() {
                // The firmware's, taken as offered.
                assert_eq!(x.m_op.code.val().to_u64(), TxOp::Send as u64);
                assert_eq!(x.m_op.slot.val().to_u64(), FW_SLOT);
                r.ops.push(Op::Fw);
                results.push_back(cycle + 2);
            } else if taken {
                // The fields the table reads for the operation.
                let code = x.m_op.code.val().to_u64();
                let slot = x.m_op.slot.val().to_u64();
                r.ops.push(if code == TxOp::Ack as u64 {
                    Op::Ack(
                        slot,
                        x.m_op.psn.val().to_u64(),
                        x.m_op.sack.val().get_bits::<64>(0).to_u64(),
                    )
                } else {
                    let rtt = x.m_op.rtt_valid.val().then(|| x.m_op.rtt.val().to_u64());
                    Op::Feedback(
                        slot,
                        rtt,
                        x.m_op.ce_count.val().to_u64(),
                        x.m_op.acked.val().to_u64(),
                    )
                });
                results.push_back(cycle + 2);
            }
            if x.m_done.valid.val() {
                r.done.push((
                    x.m_done.slot.val().to_u64(),
                    x.m_done.pkts.val().to_u64(),
                    x.m_done.bytes.val().to_u64(),
                    x.m_done.conn_cum.val().to_u64(),
                ));
            }
            drop(r);
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        run.lock().unwrap().counters = [
            x.cnt.applied.val().to_u64(),
            x.cnt.unmapped.val().to_u64(),
            x.cnt.overflow.val().to_u64(),
            x.cnt.pair_err.val().to_u64(),
            x.cnt.refused.val().to_u64(),
        ];
        sim.done(x)
    });
    let mut uut = AckRx::<64, 8, 6>::default();
    uut.connect_all();
    sim.run(Box::new(uut), 100_000).unwrap();
    Arc::try_unwrap(result).unwrap().into_inner().unwrap()
}

#[test]
fn rust_hdl_model_applies_true_acks_and_refuses_the_rest() {
    let ack = |cum: u32, sack: Vec<usize>| Gram {
        opcode: metaroce_proto::Opcode::Ack as u64,
        path: PATH,
        ev_psn_delta: 0,
        cum,
        sack,
        echo: NOW - 1000,
        ce: 2,
        rx: 10,
    };
    let grams = vec![
        // Applied: highest reported 150 + 5 + 1 = 156, sent.
        ack(150, vec![0, 5]),
        // Refused: 150 + 100 + 1 = 251 was never sent (next 200).
        ack(150, vec![100]),
        // Unmapped path.
        Gram {
            path: PATH + 1,
            ..ack(150, vec![])
        },
        // The event is not this datagram's.
        Gram {
            ev_psn_delta: 1,
            ..ack(150, vec![])
        },
        // Not an ACK: ignored.
        Gram {
            opcode: 0x01,
            ..ack(150, vec![])
        },
        // Applied, not the newest (rx_count behind): the slot's last
        // CE count (0) instead of its own; no RTT (echo 0).
        Gram {
            rx: 9,
            echo: 0,
            ..ack(160, vec![])
        },
    ];
    // Alone on the table, and by turns with a firmware that offers an
    // operation in every cycle: the same ACKs applied and refused.
    for fw_busy in [false, true] {
        let run = simulate(grams.clone(), fw_busy);
        let ours: Vec<&Op> = run.ops.iter().filter(|op| **op != Op::Fw).collect();
        let sack_lo = (1u64 << 0) | (1 << 5);
        assert_eq!(
            ours,
            [
                &Op::Ack(SLOT, 150, sack_lo),
                &Op::Feedback(SLOT, Some(1000), 2, 5),
                &Op::Ack(SLOT, 160, 0),
                &Op::Feedback(SLOT, None, 0, 5),
            ]
        );
        let done = (SLOT, 5, 500, u64::from(Gram::CONN_CUM));
        assert_eq!(run.done, vec![done, done]);
        assert_eq!(run.counters, [2, 1, 0, 1, 1]);
        // Turns: between the two ACK pairs (and the refused ACK's turn)
        // the firmware had at least one operation taken, and it was never
        // held while the queue was empty (it has operations before the
        // first ACK and after the last).
        let acks: Vec<usize> = (0..run.ops.len())
            .filter(|&i| matches!(run.ops[i], Op::Ack(..)))
            .collect();
        let fw = |r: std::ops::Range<usize>| run.ops[r].iter().filter(|op| **op == Op::Fw).count();
        if fw_busy {
            assert!(fw(acks[0] + 2..acks[1]) >= 1, "{:?}", run.ops);
            assert!(
                fw(0..acks[0]) > 0 && fw(acks[1] + 2..run.ops.len()) > 10,
                "{:?}",
                run.ops
            );
        } else {
            assert_eq!(fw(0..run.ops.len()), 0);
        }
    }
}

#[test]
fn rust_hdl_model_refuses_by_the_highest_sack_bit() {
    // path_cum 150, una 100, next_psn 200: the highest reported PSN
    // 150 + h + 1 was sent exactly when the SACK's highest bit h is
    // below 49 (no bit: 149, sent). Each ACK is the slot's newest
    // with no CE marks, so only that decides.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xACE);
    let mut grams = Vec::new();
    let mut want = Vec::new();
    let mut refused = 0;
    let random: Vec<Option<usize>> = (0..20).map(|_| Some(rng.gen_range(0..256))).collect();
    for (k, top) in [None, Some(0), Some(48), Some(49), Some(255)]
        .into_iter()
        .chain(random)
        .enumerate()
    {
        let mut sack = Sack::default();
        let mut bits = Vec::new();
        if let Some(top) = top {
            for _ in 0..k % 4 {
                bits.push(rng.gen_range(0..=top));
            }
            bits.push(top);
        }
        for &i in &bits {
            sack.set(i as u32);
        }
        let high = sack.highest().map_or(149, |h| 151 + h);
        if u64::from(high) < NEXT_PSN {
            let lo = bits
                .iter()
                .filter(|&&i| i < 64)
                .fold(0u64, |m, &i| m | 1 << i);
            want.push(Op::Ack(SLOT, 150, lo));
        } else {
            refused += 1;
        }
        grams.push(Gram {
            opcode: metaroce_proto::Opcode::Ack as u64,
            path: PATH,
            ev_psn_delta: 0,
            cum: 150,
            sack: bits,
            echo: 0,
            ce: 0,
            rx: 10 * (k as u32 + 1),
        });
    }
    let n = grams.len() as u64;
    let run = simulate(grams, false);
    let acks: Vec<Op> = run
        .ops
        .into_iter()
        .filter(|op| matches!(op, Op::Ack(..)))
        .collect();
    assert_eq!(acks, want);
    assert!(refused > 0 && !want.is_empty());
    assert_eq!(run.counters, [n - refused, 0, 0, 0, refused]);
}
