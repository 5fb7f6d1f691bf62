use super::*;
use metaroce_firmware::{Nic, NicConfig, QpConfig, QpTransition, RemoteEnd, RxMeta, VecMemory};
use metaroce_proto::{Ext, Flags, Opcode, Packet, PseudoHeader, Repr, Sack};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};

#[test]
fn verilog_emits() {
    for paths in [4, 8, 64] {
        let v = rx_path_verilog(paths);
        let bits = paths.trailing_zeros() - 1;
        assert!(v.contains("module top("), "{paths}");
        assert!(v.contains(&format!("[{bits}:0] ev_path;")), "{paths}");
    }
    assert!(crate::rx_path_table_verilog().contains("module top("));
    assert_eq!(ENTRIES, 256);
}

/// A path's state as the engine's ACK for it reports it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct State {
    cum: u32,
    sack: Sack,
    rx: u32,
    ce: u32,
}

/// The engine: one QP in RTR, every arrival a PROBE (which only
/// touches the path tracker); its ACK carries the path's state.
struct Engine {
    nic: Nic,
    mem: VecMemory,
    qpn: u32,
    buf: Vec<u8>,
}

const PEER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const LOCAL: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const PEER_QPN: u32 = 0x55;

impl Engine {
    fn new() -> Self {
        let mut nic = Nic::new(NicConfig {
            local_ip: IpAddr::V4(LOCAL),
            qp: QpConfig::default(),
            ..NicConfig::default()
        });
        let pd = nic.alloc_pd();
        let qpn = nic.create_qp(pd, None).unwrap();
        nic.modify_qp(qpn, QpTransition::Init).unwrap();
        let remote = RemoteEnd {
            qpn: PEER_QPN,
            ip: IpAddr::V4(PEER),
            udp_port: metaroce_proto::DEFAULT_UDP_PORT,
            initial_psn: 0,
        };
        nic.modify_qp(qpn, QpTransition::Rtr(remote)).unwrap();
        let (mem, buf) = (VecMemory::new(0x1000, 4096), vec![0; 4096]);
        Engine { nic, mem, qpn, buf }
    }

    /// The arrival of `psn` on `path`: the path's state after it, or
    /// `None` when out of window (`path_window` moved, no ACK).
    fn arrive(&mut self, path: u16, psn: u32, ce: bool) -> Option<State> {
        let repr = Repr {
            opcode: Opcode::Probe,
            flags: Flags::ACK_REQ,
            dst_qpn: self.qpn,
            src_qpn: PEER_QPN,
            stream: 0,
            path,
            conn_psn: 0,
            path_psn: psn,
            timestamp: 0,
            ext: Ext::None,
        };
        let port = metaroce_proto::DEFAULT_UDP_PORT;
        let pseudo = PseudoHeader::new(IpAddr::V4(PEER), port, IpAddr::V4(LOCAL), port);
        let mut bytes = vec![0u8; repr.buffer_len(0)];
        repr.emit(&mut bytes, 0).unwrap();
        Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
        let meta = RxMeta {
            src_ip: IpAddr::V4(PEER),
            src_port: port,
            dst_ip: IpAddr::V4(LOCAL),
            dst_port: port,
            ecn_ce: ce,
        };
        let before = self.nic.drops().path_window;
        self.nic.handle_datagram(0, &bytes, meta, &mut self.mem);
        let oow = self.nic.drops().path_window != before;
        let mut state = None;
        while let Some(t) = self.nic.poll_transmit(0, &mut self.buf, &mut self.mem) {
            let p = Packet::new_checked(&self.buf[..t.len]).unwrap();
            if let Ok(Repr {
                opcode: Opcode::Ack,
                ext: Ext::Ack(a),
                ..
            }) = Repr::parse(&p)
            {
                state = Some(State {
                    cum: a.path_cum,
                    sack: a.sack,
                    rx: a.rx_count,
                    ce: a.ce_count,
                });
            }
        }
        assert_eq!(oow, state.is_none(), "an ACK unless out of window");
        state
    }
}

/// Random arrivals on `paths` paths, bursts on two of them so that
/// back-to-back events share state: in order, lost, reordered,
/// repeated, jumps of 257..600 and up to 2^30, stale, absurd.
fn arrivals(seed: u64, n: usize, paths: u16) -> Vec<(u16, u32, bool)> {
    let mut r = SmallRng::seed_from_u64(seed);
    let mut head = vec![0u32; paths as usize];
    (0..n)
        .map(|_| {
            let path = if r.gen_bool(0.6) {
                r.gen_range(0..2)
            } else {
                r.gen_range(0..paths)
            };
            let h = &mut head[path as usize];
            let psn = match r.gen_range(0..100) {
                0..=49 => {
                    *h = h.wrapping_add(1);
                    h.wrapping_sub(1)
                }
                50..=64 => {
                    *h = h.wrapping_add(r.gen_range(2..8));
                    h.wrapping_sub(1)
                }
                65..=79 => h.wrapping_sub(r.gen_range(1..64)),
                80..=86 => {
                    *h = h.wrapping_add(r.gen_range(257..600));
                    *h
                }
                87..=89 => {
                    *h = h.wrapping_add(r.gen_range(600..1 << 30));
                    *h
                }
                90..=95 => h.wrapping_sub(r.gen_range(1000..1 << 31)),
                _ => h.wrapping_add(r.gen_range(1 << 30..1 << 31)),
            };
            (path, psn, r.gen_bool(0.2))
        })
        .collect()
}

/// Arrivals that fill a path's whole window (`cum + 1 ..= cum + 256`, in
/// random order, in every other round all but one), then `cum + 257`: the
/// slide by one that moves `cum` over the full window (the mark's
/// `at_cum` without a count), or up to the hole. `rounds` rounds, on
/// paths 0..8 in turn.
fn window_edges(seed: u64, rounds: usize) -> Vec<(u16, u32, bool)> {
    let mut r = SmallRng::seed_from_u64(seed);
    let mut engine = Engine::new();
    let mut cum = [0u32; 8];
    let mut evs = Vec::new();
    for round in 0..rounds {
        let path = (round % 8) as u16;
        let c = cum[path as usize];
        let mut psns: Vec<u32> = (1..=256).map(|i| c.wrapping_add(i)).collect();
        for i in (1..psns.len()).rev() {
            psns.swap(i, r.gen_range(0..=i));
        }
        if round % 2 == 1 {
            psns.pop();
        }
        psns.push(c.wrapping_add(257));
        for psn in psns {
            let ce = r.gen_bool(0.2);
            if let Some(s) = engine.arrive(path, psn, ce) {
                cum[path as usize] = s.cum;
            }
            evs.push((path, psn, ce));
        }
    }
    evs
}

fn sack_bits(s: &Sack) -> Bits<256> {
    let mut b = Bits::<256>::default();
    for i in 0..256 {
        if s.get(i) {
            b = b.replace_bit(i as usize, true);
        }
    }
    b
}

#[test]
fn rust_hdl_model_of_the_standalone_tracker_matches_the_engine() {
    standalone_matches(arrivals(7, 1500, 8));
}

#[test]
fn a_full_window_slid_by_one_moves_cum_in_every_model() {
    let evs = window_edges(5, 6);
    standalone_matches(evs.clone());
    table_matches_engine::<512>(evs.clone(), 1, 3);
    table_matches_engine::<64>(evs, 5, 8);
}

/// The standalone tracker (8 paths) against the engine, event by event.
fn standalone_matches(evs: Vec<(u16, u32, bool)>) {
    type Uut = RxPathRegs<8, 3>;
    let mut engine = Engine::new();
    let expect: Vec<_> = evs
        .iter()
        .map(|&(p, psn, ce)| engine.arrive(p, psn, ce))
        .collect();
    let fails = Arc::new(Mutex::new(Vec::<String>::new()));
    let out = fails.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Uut>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Uut>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        let mut last: Vec<State> = vec![State::default(); 8];
        for (i, (&(path, psn, ce), want)) in evs.iter().zip(&expect).enumerate() {
            x.ev_valid.next = true;
            x.ev_path.next = (path as u64).into();
            x.ev_psn.next = (psn as u64).into();
            x.ev_ce.next = ce;
            x.rd_path.next = (path as u64).into();
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            x.ev_valid.next = false;
            x = sim.wait(1, x)?;
            let code = x.res_code.val().index() as u8;
            let now = match want {
                None => last[path as usize],
                Some(s) => *s,
            };
            let verdict = match want {
                None => PathVerdict::OutOfWindow,
                Some(s) if (s.cum, s.sack) == (last[path as usize].cum, last[path as usize].sack) => {
                    PathVerdict::Duplicate
                }
                Some(_) => PathVerdict::New,
            } as u8;
            let got = (
                x.rd_cum.val().index() as u32,
                x.rd_sack.val(),
                x.rd_rx_count.val().index() as u32,
                x.rd_ce_count.val().index() as u32,
            );
            if code != verdict
                || !x.res_valid.val()
                || got != (now.cum, sack_bits(&now.sack), now.rx, now.ce)
            {
                out.lock().unwrap().push(format!(
                    "event {i} (path {path}, psn {psn:#x}): code {code} want {verdict}, cum {:#x} want {:#x}",
                    got.0, now.cum
                ));
            }
            last[path as usize] = now;
        }
        sim.done(x)
    });
    sim.run(Box::new(Uut::default()), 100_000).unwrap();
    let f = fails.lock().unwrap();
    assert!(
        f.is_empty(),
        "{} mismatches, first: {:?}",
        f.len(),
        &f[..f.len().min(5)]
    );
}

#[test]
fn rust_hdl_model_of_the_table_matches_the_engine() {
    // 512 bits: the mark in one cycle, arrivals mostly back to back.
    table_matches_engine::<512>(arrivals(11, 1200, 8), 1, 3);
}

#[test]
fn rust_hdl_model_of_the_split_table_matches_the_engine() {
    // 64 bits: the mark split over its stages, tracked arrivals at least
    // five cycles apart (a 36-byte datagram's beats), short dropped ones
    // in between.
    table_matches_engine::<64>(arrivals(11, 1200, 8), 5, 8);
}

/// Issue cycles (S0; S2 two cycles later) of `n` events, `gap` cycles
/// apart or (one in five) up to `max_gap`; the cycles of the untracked
/// datagrams between them; the cycle the run ends.
fn schedule(
    rng: &mut SmallRng,
    n: usize,
    gap: usize,
    max_gap: usize,
) -> (Vec<usize>, std::collections::BTreeSet<usize>, usize) {
    let mut at = Vec::new();
    let mut junk = std::collections::BTreeSet::new();
    let mut c = 0usize;
    for _ in 0..n {
        at.push(c);
        let step = if rng.gen_bool(0.8) {
            gap
        } else {
            rng.gen_range(gap + 1..=max_gap)
        };
        for j in c + 1..c + step {
            if rng.gen_bool(0.3) {
                junk.insert(j);
            }
        }
        c += step;
    }
    (at, junk, c + 2 + 300)
}

/// A tracked event's (cycle, path, (state, timestamp, port)) after it.
type Hist = (usize, u16, (State, u64, u16));

/// Checks the ACK popped in cycle `pc` (its fields shown now) against
/// its path's state after the events before `pc`; the mismatch, if any.
fn check_ack<const W: usize>(
    x: &RxPathTable<W>,
    hist: &[Hist],
    pc: usize,
    slot: u64,
) -> Option<String> {
    let p = x.ak_path.val().index() as u16;
    let want = hist
        .iter()
        .rev()
        .find(|h| h.1 == p && h.0 < pc)
        .map(|h| h.2)
        .unwrap_or_default();
    let got = (
        x.ak_cum.val().index() as u32,
        x.ak_sack.val(),
        x.ak_rx.val().index() as u32,
        x.ak_ce.val().index() as u32,
        x.ak_ts.val().to_u64(),
        x.ak_port.val().index() as u16,
    );
    let w = &want.0;
    (x.ak_qp.val().index() as u64 != slot
        || !x.ak_live.val()
        || got != (w.cum, sack_bits(&w.sack), w.rx, w.ce, want.1, want.2))
        .then(|| {
            format!(
                "ACK of path {p} popped in cycle {pc}: cum {:#x} rx {} want cum {:#x} rx {}",
                got.0, got.2, w.cum, w.rx
            )
        })
}

/// One engine QP behind QP slot 2; arrivals `evs` in RxPlace's timing (read in
/// S0, `cum` checked in S1, event in S2), `gap` cycles apart or up to
/// `max_gap`, and between them (where the gap leaves room) untracked
/// datagrams that read an entry and have an event too, as a truncated
/// frame does; ACKs popped at random and checked against the engine's
/// state after the events before the pop's cycle.
fn table_matches_engine<const W: usize>(evs: Vec<(u16, u32, bool)>, gap: usize, max_gap: usize) {
    let mut engine = Engine::new();
    let expect: Vec<_> = evs
        .iter()
        .map(|&(p, psn, ce)| engine.arrive(p, psn, ce))
        .collect();
    let fails = Arc::new(Mutex::new(Vec::<String>::new()));
    let out = fails.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<RxPathTable<W>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<RxPathTable<W>>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        let mut rng = SmallRng::seed_from_u64(3);
        let slot = 2u64;
        // State per path before each event, after the events so far.
        let mut cur: Vec<State> = vec![State::default(); 8];
        let mut before = Vec::new();
        let mut ts = vec![0u64; evs.len()];
        for (i, &(p, _, _)) in evs.iter().enumerate() {
            before.push(cur[p as usize]);
            ts[i] = rng.gen_range(0..1000);
            if let Some(s) = expect[i] {
                cur[p as usize] = s;
            }
        }
        // Issue cycle of each event (S0; S2 two cycles later), and of
        // the untracked datagrams between them.
        let (at, junk, end) = schedule(&mut rng, evs.len(), gap, max_gap);
        // (cycle, path, state, ts, port) after each tracked event.
        let mut hist: Vec<Hist> = Vec::new();
        let mut now: Vec<(State, u64, u16)> = vec![(State::default(), 0, 0); 8];
        let (mut s0, mut s1, mut s2) = (0usize, 0usize, 0usize);
        let mut popped: Option<usize> = None;
        for cycle in 0..end {
            // Inputs of this cycle.
            x.rd_addr.next = 0.into();
            x.rd_en.next = false;
            if s0 < evs.len() && at[s0] == cycle {
                x.rd_addr.next = ((slot << 6) | evs[s0].0 as u64).into();
                x.rd_en.next = true;
            }
            if junk.contains(&cycle) {
                x.rd_addr.next = rng.gen_range(0..256u64).into();
                x.rd_en.next = true;
            }
            x.ev_valid.next = cycle >= 2 && junk.contains(&(cycle - 2));
            x.ev_track.next = false;
            x.ev_qhit.next = false;
            x.ev_psn.next = rng.gen_range(0..u32::MAX as u64).into();
            let ev = s2 < evs.len() && at[s2] + 2 == cycle;
            if ev {
                let (_, psn, ce) = evs[s2];
                x.ev_valid.next = true;
                x.ev_track.next = expect[s2].is_some();
                x.ev_qhit.next = true;
                x.ev_psn.next = (psn as u64).into();
                x.ev_ts.next = ts[s2].into();
                x.ev_port.next = (1000 + s2 as u64).into();
                x.ev_ce.next = ce;
                x.ev_conn_cum.next = (s2 as u64).into();
                x.ev_live.next = true;
            }
            let pop = x.aq_valid.val() && rng.gen_bool(0.3);
            x.aq_pop.next = pop;
            x = sim.wait(1, x)?;
            // S1: the cum RxPlace sees.
            if s1 < evs.len() && at[s1] + 1 == cycle {
                let want = before[s1].cum;
                if x.rd_cum.val().index() as u32 != want {
                    out.lock().unwrap().push(format!(
                        "event {s1}: S1 cum {:#x} want {want:#x}",
                        x.rd_cum.val().index()
                    ));
                }
                s1 += 1;
            }
            // The ACK popped in the previous cycle.
            if let Some(pc) = popped.take() {
                out.lock().unwrap().extend(check_ack(&x, &hist, pc, slot));
            }
            if pop {
                popped = Some(cycle);
            }
            if s0 < evs.len() && at[s0] == cycle {
                s0 += 1;
            }
            if ev {
                let p = evs[s2].0 as usize;
                if let Some(s) = expect[s2] {
                    now[p] = (s, now[p].1.max(ts[s2]), 1000 + s2 as u16);
                    hist.push((cycle, p as u16, now[p]));
                }
                s2 += 1;
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        if x.aq_valid.val() {
            out.lock().unwrap().push("queue not drained".into());
        }
        sim.done(x)
    });
    sim.run(Box::new(RxPathTable::<W>::default()), 2_000_000)
        .unwrap();
    let f = fails.lock().unwrap();
    assert!(
        f.is_empty(),
        "{} mismatches, first: {:?}",
        f.len(),
        &f[..f.len().min(5)]
    );
}

#[test]
fn split_table_takes_no_ack_while_a_mark_is_in_its_stages() {
    // Path 1 of QP slot 0 queued by PSN 1; then PSN 0 (cum moves to 2)
    // with an ACK wanted in every cycle after its event: the queue shows
    // nothing for MARK_STAGES cycles, then the ACK includes PSN 0.
    let log = Arc::new(Mutex::new(Vec::<(bool, Option<(u32, u32)>)>::new()));
    let out = log.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<RxPathTable<64>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<RxPathTable<64>>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        let mut popped = false;
        for cycle in 0..24u32 {
            x.rd_en.next = cycle == 0 || cycle == 10;
            x.rd_addr.next = 1.into();
            x.ev_valid.next = cycle == 2 || cycle == 12;
            x.ev_track.next = true;
            x.ev_psn.next = if cycle == 2 { 1.into() } else { 0.into() };
            x.aq_pop.next = cycle > 12;
            x = sim.wait(1, x)?;
            let ack = popped.then(|| (x.ak_cum.val().index() as u32, x.ak_rx.val().index() as u32));
            popped = x.aq_pop.val() && x.aq_valid.val();
            if cycle > 12 {
                out.lock().unwrap().push((x.aq_valid.val(), ack));
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(RxPathTable::<64>::default()), 10_000)
        .unwrap();
    let log = log.lock().unwrap();
    let valid: Vec<bool> = log.iter().map(|l| l.0).collect();
    let acks: Vec<(u32, u32)> = log.iter().filter_map(|l| l.1).collect();
    let mut want = vec![false; MARK_STAGES];
    want.push(true);
    assert_eq!(
        &valid[..=MARK_STAGES],
        &want[..],
        "aq_valid from the cycle after the event"
    );
    assert!(!valid[MARK_STAGES + 1..].iter().any(|&v| v), "one ACK only");
    assert_eq!(acks, [(2, 2)], "the ACK (cum, rx_count) includes PSN 0");
}
