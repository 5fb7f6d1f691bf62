//! The pair test: two engines over a seeded lossy, reordering, duplicating and
//! corrupting channel move mixed WRITE, WRITE_IMM, SEND and READ traffic over
//! several streams. Every byte is verified, every completion must arrive
//! exactly once and in posting order per stream.

mod support;

use std::collections::{BTreeMap, HashSet};

use metaroce_firmware::{Completion, Event, RecvWr, SendOp, SendWr, Sge, WcOpcode, WcStatus};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use support::{Channel, MEM_BASE, Pair, pattern};

const SLOT: u64 = 1 << 20;
const SLOTS: u64 = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    WriteImm,
    Send,
    Read,
}

#[derive(Debug)]
struct Outstanding {
    kind: Kind,
    slot: u64,
    len: u32,
    /// Completions still expected: (at A, at B).
    waiting_a: bool,
    waiting_b: bool,
}

/// Drives `count` messages through the pair and checks everything.
fn run_workload(pair: &mut Pair, seed: u64, count: u64, max_len: u32, window: usize) -> u64 {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xfeed);
    let mut free: Vec<u64> = (0..SLOTS).collect();
    let mut out: BTreeMap<u64, Outstanding> = BTreeMap::new();
    let mut seen: HashSet<(bool, u64)> = HashSet::new();
    let mut last_per_stream: BTreeMap<(bool, u16), u64> = BTreeMap::new();
    let mut next_id = 1u64;
    let mut finished = 0u64;
    let mut bytes = 0u64;
    let limit = 600_000_000_000; // simulated ns; generous, the test fails on it
    let mut scratch = vec![0u8; SLOT as usize];
    while finished < count {
        while next_id <= count && out.len() < window && !free.is_empty() {
            let id = next_id;
            next_id += 1;
            let slot = free.swap_remove(rng.gen_range(0..free.len()));
            out.insert(id, post_message(pair, &mut rng, id, slot, max_len));
        }
        let progressed = pair.run_until(limit, |p| {
            let (ea, eb) = p.events();
            let mut any = false;
            for (at_a, events) in [(true, ea), (false, eb)] {
                for e in events {
                    any = true;
                    let c = match e {
                        Event::Completion(c) => c,
                        other => panic!("unexpected {other:?}"),
                    };
                    check_completion(at_a, &c, &mut out, &mut seen, &mut last_per_stream);
                }
            }
            any
        });
        assert!(
            progressed,
            "no progress by {} ns: outstanding {:?}, drops A {:?} B {:?}",
            pair.now,
            out,
            pair.a.nic.drops(),
            pair.b.nic.drops()
        );
        let done: Vec<u64> = out
            .iter()
            .filter(|(_, o)| !o.waiting_a && !o.waiting_b)
            .map(|(&id, _)| id)
            .collect();
        for id in done {
            let o = out.remove(&id).unwrap();
            let addr = MEM_BASE + o.slot * SLOT;
            let len = o.len as usize;
            pattern(id, &mut scratch[..len]);
            let landed = if o.kind == Kind::Read {
                pair.a.mem.slice(addr, len)
            } else {
                pair.b.mem.slice(addr, len)
            };
            assert!(
                landed == &scratch[..len],
                "message {id} ({:?}, {len} B) corrupted",
                o.kind
            );
            free.push(o.slot);
            finished += 1;
            bytes += o.len as u64;
        }
    }
    bytes
}

/// Posts message `id` from A in `slot`: a random operation, length
/// (log-uniform, 1 byte to `max_len`) and stream, its pattern written to
/// its source and, for WRITE_IMM and SEND, B's receive posted.
fn post_message(
    pair: &mut Pair,
    rng: &mut SmallRng,
    id: u64,
    slot: u64,
    max_len: u32,
) -> Outstanding {
    let addr = MEM_BASE + slot * SLOT;
    // Log-uniform sizes from 1 byte to max_len.
    let len = (2f64.powf(rng.gen_range(0.0..(max_len as f64).log2())) as u32).clamp(1, max_len);
    let stream = rng.gen_range(0..8u16);
    let kind = [Kind::Write, Kind::WriteImm, Kind::Send, Kind::Read][rng.gen_range(0..4)];
    let sge = Sge {
        addr,
        len,
        lkey: pair.a.mr.lkey,
    };
    let op = match kind {
        Kind::Write => SendOp::Write {
            remote_va: addr,
            rkey: pair.b.mr.rkey,
        },
        Kind::WriteImm => SendOp::WriteImm {
            remote_va: addr,
            rkey: pair.b.mr.rkey,
            imm: id as u32,
        },
        Kind::Send => SendOp::Send,
        Kind::Read => SendOp::Read {
            remote_va: addr,
            rkey: pair.b.mr.rkey,
        },
    };
    let len_usize = len as usize;
    if kind == Kind::Read {
        pattern(id, pair.b.mem.slice_mut(addr, len_usize));
    } else {
        pattern(id, pair.a.mem.slice_mut(addr, len_usize));
    }
    if matches!(kind, Kind::WriteImm | Kind::Send) {
        let rsge = if kind == Kind::Send {
            Sge {
                addr,
                len: SLOT as u32,
                lkey: pair.b.mr.lkey,
            }
        } else {
            Sge {
                addr,
                len: 0,
                lkey: 0,
            }
        };
        pair.b
            .nic
            .post_recv(
                pair.b.qpn,
                RecvWr {
                    wr_id: id,
                    sgl: rsge.into(),
                    stream,
                },
            )
            .unwrap();
    }
    let wr = SendWr {
        wr_id: id,
        op,
        sgl: sge.into(),
        signaled: true,
        solicited: false,
        stream,
    };
    pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    Outstanding {
        kind,
        slot,
        len,
        waiting_a: true,
        waiting_b: matches!(kind, Kind::WriteImm | Kind::Send),
    }
}

/// Checks completion `c` (at A when `at_a`) against the outstanding
/// message it names: success, no duplicate, in order per stream, the
/// right opcode and length; marks that side done.
fn check_completion(
    at_a: bool,
    c: &Completion,
    out: &mut BTreeMap<u64, Outstanding>,
    seen: &mut HashSet<(bool, u64)>,
    last_per_stream: &mut BTreeMap<(bool, u16), u64>,
) {
    assert_eq!(c.status, WcStatus::Success, "completion {c:?}");
    assert!(seen.insert((at_a, c.wr_id)), "duplicate completion {c:?}");
    let last = last_per_stream.entry((at_a, c.stream)).or_insert(0);
    assert!(
        c.wr_id > *last,
        "out-of-order completion on stream {}: {} after {}",
        c.stream,
        c.wr_id,
        *last
    );
    *last = c.wr_id;
    let o = out
        .get_mut(&c.wr_id)
        .unwrap_or_else(|| panic!("unexpected completion {c:?}"));
    if at_a {
        let want = match o.kind {
            Kind::Write | Kind::WriteImm => WcOpcode::Write,
            Kind::Send => WcOpcode::Send,
            Kind::Read => WcOpcode::Read,
        };
        assert_eq!(c.opcode, want);
        o.waiting_a = false;
    } else {
        assert_eq!(c.byte_len, o.len, "receive length");
        if o.kind == Kind::WriteImm {
            assert_eq!(
                (c.opcode, c.imm),
                (WcOpcode::RecvWriteImm, Some(c.wr_id as u32))
            );
        } else {
            assert_eq!((c.opcode, c.imm), (WcOpcode::Recv, None));
        }
        o.waiting_b = false;
    }
}

fn check_run(seed: u64, paths: u16, loss: f64, count: u64, max_len: u32) -> Pair {
    let channel = Channel {
        loss,
        duplicate: 0.01,
        corrupt: 0.005,
        ..Channel::default()
    };
    check_channel(seed, paths, channel, count, max_len)
}

fn check_channel(seed: u64, paths: u16, channel: Channel, count: u64, max_len: u32) -> Pair {
    let mut pair = Pair::new(seed, paths, channel);
    run_workload(&mut pair, seed, count, max_len, 24);
    // Nothing hostile was injected: every drop is explained by the channel.
    let drops_b = pair.b.nic.drops();
    assert_eq!(
        drops_b.remote_access + drops_b.unknown_qp + drops_b.wrong_peer,
        0,
        "{drops_b:?}"
    );
    pair
}

#[test]
fn lossless_single_path() {
    let pair = check_channel(1, 1, Channel::default(), 300, 256 << 10);
    assert_eq!(
        pair.a.nic.stats().retransmits + pair.b.nic.stats().retransmits,
        0
    );
    assert_eq!(pair.b.nic.drops().total(), 0);
}

#[test]
fn lossy_single_path() {
    check_run(2, 1, 0.05, 300, 256 << 10);
}

#[test]
fn one_percent_loss_eight_paths() {
    check_run(3, 8, 0.01, 400, 1 << 20);
}

#[test]
fn twenty_percent_loss_sixty_four_paths() {
    check_run(4, 64, 0.20, 300, 256 << 10);
}

#[test]
fn twenty_percent_loss_four_paths() {
    let pair = check_run(5, 4, 0.20, 300, 128 << 10);
    assert!(
        pair.a.nic.stats().sack_losses > 0,
        "losses must be repaired through the SACK bitmap"
    );
}

/// The headline check of the protocol core: 10,000 messages of mixed sizes
/// (1 B – 1 MiB) at 10% loss over 8 paths.
#[test]
fn ten_thousand_mixed_messages_at_ten_percent_loss_over_eight_paths() {
    let channel = Channel {
        loss: 0.10,
        duplicate: 0.01,
        corrupt: 0.005,
        ..Channel::default()
    };
    let mut pair = Pair::new(42, 8, channel);
    let bytes = run_workload(&mut pair, 42, 10_000, 1 << 20, 24);
    let s = pair.a.nic.stats();
    eprintln!(
        "10k messages, {bytes} bytes in {} µs simulated: {} data packets, {} retransmissions sent; losses found by SACK {}, by timeout {}; {} repaths",
        pair.now / 1000,
        s.data_sent,
        s.retransmits,
        s.sack_losses,
        s.timeout_losses,
        s.repaths
    );
    assert!(
        pair.b.nic.drops().bad_icrc > 0,
        "the channel corrupted packets; the ICRC must have caught them"
    );
}
