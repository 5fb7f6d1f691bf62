//! rust-hdl simulation of [`EvRing`]: every event written in order, with its phase.

use super::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Ring base address of the test (above 4 GiB, as the bench's).
const BASE: u64 = 0x3_0000_0000;
/// Entries of the test's ring (`size_log2` 2).
const RING: u64 = 4;
/// Cycle until which the host consumes nothing (`cons` 0).
const FREE_AT: usize = 400;
/// Cycles the test runs.
const CYCLES: usize = 2000;

/// A 64-byte event entry, bytes in the order they are written.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Entry([u8; 64]);

impl Entry {
    fn zero() -> Self {
        Entry([0; 64])
    }
    /// Sets bits `at..at + width` to `v`.
    fn put(&mut self, at: usize, width: usize, v: u64) {
        for i in 0..width {
            let (byte, bit) = ((at + i) / 8, (at + i) % 8);
            self.0[byte] &= !(1 << bit);
            self.0[byte] |= (((v >> i) & 1) as u8) << bit;
        }
    }
    fn get(&self, at: usize, width: usize) -> u64 {
        (0..width).fold(0, |v, i| {
            v | (u64::from(self.0[(at + i) / 8] >> ((at + i) % 8) & 1) << i)
        })
    }
}

/// A verdict event's fields, widths and offsets in its entry (the
/// ports' order of `EvRing`, the layout of `docs/hardware.md` §18).
const EV_FIELDS: [(usize, usize); 17] = [
    (416, 5),  // code
    (40, 8),   // version
    (32, 8),   // opcode
    (48, 16),  // flags
    (0, 32),   // dst_qpn
    (96, 16),  // path
    (64, 32),  // path_psn
    (128, 64), // timestamp
    (192, 32), // msn
    (224, 32), // recv_idx
    (256, 32), // imm
    (112, 16), // stream
    (288, 32), // conn_psn
    (400, 16), // src_port
    (320, 32), // offset
    (352, 32), // msg_len
    (384, 16), // len
];

/// Event `k`'s field `f` (within the field's width): a placed packet
/// with a payload (code 0, length not 0) when `k % 3 == 0`.
fn ev_field(k: usize, f: usize) -> u64 {
    let (_, width) = EV_FIELDS[f];
    let v = match f {
        0 => (k % 3 != 0) as u64 * (1 + k as u64 % 5),
        16 => (k % 3 == 0) as u64 * (100 + k as u64),
        _ => (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (f * 3),
    };
    if width == 64 {
        v
    } else {
        v & ((1 << width) - 1)
    }
}

/// Event `k`'s placement write address (when it has one): one of
/// them does not fit in 48 bits.
fn pl_addr(k: usize) -> u64 {
    if k == 9 {
        1 << 50
    } else {
        0x0000_ABCD_0000_0000 + 0x1_0000 * k as u64 + 0x40
    }
}

/// Slot view `j` of the results.
fn view_bit(j: usize, i: usize) -> bool {
    (i * 7 + j * 13) % 5 == 0
}

/// What the core offers to the TX-table FIFO.
#[derive(Clone, Copy)]
enum Tt {
    /// A fate: lost, hw, conn_psn.
    Fate(bool, bool, u32),
    /// An ACK receiver result `j`: slot, pkts, bytes, conn_cum.
    Ackrx(usize, u8, u32, u32, u32),
    /// A queued operation's result `j`: code, ok, slot, psn, pkts, bytes.
    Qres(usize, u8, bool, u8, u32, u32, u32),
}

/// The TX-table entries `t` becomes (a result and its view entry).
fn tt_entries(t: Tt) -> Vec<Entry> {
    let mut e = Entry::zero();
    let view = |e: &mut Entry, j: usize| -> Entry {
        for i in 0..VIEW_LO {
            e.put(128 + i, 1, view_bit(j, i).into());
        }
        let mut v = Entry::zero();
        for i in VIEW_LO..VIEW_BITS {
            v.put(i - VIEW_LO, 1, view_bit(j, i).into());
        }
        v.put(504, 4, ev_type::VIEW.into());
        v
    };
    match t {
        Tt::Fate(lost, hw, psn) => {
            e.put(0, 32, psn.into());
            e.put(32, 1, lost.into());
            e.put(33, 1, hw.into());
            e.put(504, 4, ev_type::FATE.into());
            vec![e]
        }
        Tt::Ackrx(j, slot, pkts, bytes, cum) => {
            e.put(0, 32, pkts.into());
            e.put(32, 32, bytes.into());
            e.put(64, 32, cum.into());
            e.put(96, 4, slot.into());
            e.put(504, 4, ev_type::ACKRX.into());
            let v = view(&mut e, j);
            vec![e, v]
        }
        Tt::Qres(j, code, ok, slot, psn, pkts, bytes) => {
            e.put(0, 32, pkts.into());
            e.put(32, 32, bytes.into());
            e.put(64, 32, psn.into());
            e.put(96, 4, slot.into());
            e.put(100, 1, ok.into());
            e.put(101, 3, code.into());
            e.put(504, 4, ev_type::OP_RESULT.into());
            let v = view(&mut e, j);
            vec![e, v]
        }
    }
}

/// One event entry the block wrote: its address, bytes, and the cycle
/// of its first beat.
#[derive(Debug)]
struct Written {
    addr: u64,
    entry: Entry,
    cycle: usize,
    cons: u64,
}

/// What the block did.
#[derive(Debug, Default)]
struct Run {
    written: Vec<Written>,
    /// The TX-table entries as offered, in the order taken.
    tt_want: Vec<Entry>,
    /// The cycle each placement write's last beat was taken, by event.
    pl_done: Vec<(usize, usize)>,
    held: bool,
    prod: u64,
    incs: u64,
    lost: u64,
}

/// Sets a wide input from its bits.
fn wide<const N: usize>(bit: impl Fn(usize) -> bool) -> Bits<N> {
    (0..N).fold(Bits::default(), |b, i| b.replace_bit(i, bit(i)))
}

/// Drives verdict event `k` (none when `None`) onto the block's `ev_*`.
fn drive_verdict(x: &mut EvRing<64, 8>, k: Option<usize>) {
    x.ev.valid.next = k.is_some();
    let f = |i: usize| ev_field(k.unwrap_or(0), i);
    x.ev.code.next = f(0).to_bits();
    x.ev.version.next = f(1).to_bits();
    x.ev.opcode.next = f(2).to_bits();
    x.ev.flags.next = f(3).to_bits();
    x.ev.dst_qpn.next = f(4).to_bits();
    x.ev.path.next = f(5).to_bits();
    x.ev.path_psn.next = f(6).to_bits();
    x.ev.timestamp.next = f(7).to_bits();
    x.ev.msn.next = f(8).to_bits();
    x.ev.recv_idx.next = f(9).to_bits();
    x.ev.imm.next = f(10).to_bits();
    x.ev.stream.next = f(11).to_bits();
    x.ev.conn_psn.next = f(12).to_bits();
    x.ev.src_port.next = f(13).to_bits();
    x.ev.offset.next = f(14).to_bits();
    x.ev.msg_len.next = f(15).to_bits();
    x.ev.len.next = f(16).to_bits();
}

/// Drives the fate due by `cycle` (the first waiting) and the result due
/// at `cycle`, if any; returns them.
fn drive_tts(
    x: &mut EvRing<64, 8>,
    tts: &VecDeque<(usize, Tt)>,
    cycle: usize,
) -> (Option<Tt>, Option<Tt>) {
    x.fate.valid.next = false;
    x.ackrx.valid.next = false;
    x.qres_valid.next = false;
    let mut fate = None;
    let mut res = None;
    for &(at, t) in tts.iter().filter(|(at, _)| *at <= cycle) {
        match t {
            Tt::Fate(lost, hw, psn) if fate.is_none() => {
                fate = Some(t);
                x.fate.valid.next = true;
                x.fate.lost.next = lost;
                x.fate_hw.next = hw;
                x.fate.conn_psn.next = u64::from(psn).to_bits();
            }
            Tt::Ackrx(j, slot, pkts, bytes, cum) if at == cycle => {
                res = Some(t);
                x.ackrx.valid.next = true;
                x.ackrx.slot.next = u64::from(slot).to_bits();
                x.ackrx.pkts.next = u64::from(pkts).to_bits();
                x.ackrx.bytes.next = u64::from(bytes).to_bits();
                x.ackrx.conn_cum.next = u64::from(cum).to_bits();
                x.cap_view.next = wide(|i| view_bit(j, i));
            }
            Tt::Qres(j, code, ok, slot, psn, pkts, bytes) if at == cycle => {
                res = Some(t);
                x.qres_valid.next = true;
                x.qop_code.next = u64::from(code).to_bits();
                x.res_ok.next = ok;
                x.qop_slot.next = u64::from(slot).to_bits();
                x.res_psn.next = u64::from(psn).to_bits();
                x.res_pkts.next = u64::from(pkts).to_bits();
                x.res_bytes.next = u64::from(bytes).to_bits();
                x.cap_view.next = wide(|i| view_bit(j, i));
            }
            _ => {}
        }
    }
    (fate, res)
}

/// Takes the event writer's beat the DMA port accepts at `cycle` into
/// `open` (a new request on its first beat); true on the entry's last.
fn take_beat(
    x: &EvRing<64, 8>,
    open: &mut Option<Written>,
    ev_beat: &mut usize,
    cycle: usize,
    cons: u64,
) -> bool {
    assert!(x.w.tvalid.val(), "the event writer's request broke off");
    assert_eq!(
        (x.w.len.val().to_u64(), x.w.tkeep.val().to_u64()),
        (64, 0xFF)
    );
    if x.w.first.val() {
        assert!(open.is_none(), "a request started inside another");
        *open = Some(Written {
            addr: x.w.addr.val().to_u64(),
            entry: Entry::zero(),
            cycle,
            cons,
        });
    }
    let w = open.as_mut().expect("a beat outside a request");
    w.entry.0[8 * *ev_beat..8 * *ev_beat + 8]
        .copy_from_slice(&x.w.tdata.val().to_u64().to_le_bytes());
    *ev_beat += 1;
    if x.w.tlast.val() {
        assert_eq!(*ev_beat, 8, "an entry is 8 beats");
    }
    x.w.tlast.val()
}

/// Runs the 64-bit block: `EVENTS` verdict events, a burst while the
/// ring is stalled; fates, ACK results and queued operations' results
/// (some in the cycle a fate is taken); placement writes before and
/// after their events; the DMA port taking two cycles of three, one
/// request at a time; the host consuming nothing until `FREE_AT`, then
/// moving `cons` to `prod` every 7 cycles.
fn simulate(events: usize, tts: Vec<(usize, Tt)>) -> Run {
    let run = Arc::new(Mutex::new(Run::default()));
    let result = run.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<EvRing<64, 8>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<EvRing<64, 8>>| {
        let mut x = sim.init()?;
        // The ring's registers; a reset in the first two cycles.
        x.ctrl.next = true;
        x.base.next = BASE.to_bits();
        x.size_log2.next = 2.into();
        let ev_at = |k: usize| 10 + 3 * k;
        // Placement writes (two beats each) of the placed packets, in
        // their order: the first four before their event, the rest
        // after it.
        let mut pls: VecDeque<(usize, usize)> = (0..events)
            .filter(|k| k % 3 == 0)
            .map(|k| (if k < 12 { ev_at(k) - 5 } else { ev_at(k) + 40 }, k))
            .collect();
        let mut tts: VecDeque<(usize, Tt)> = tts.iter().copied().collect();
        let (mut pl_beat, mut ev_beat, mut owner, mut cons) = (0usize, 0usize, 0u8, 0u64);
        let mut open: Option<Written> = None;
        for cycle in 0..CYCLES {
            let mut r = run.lock().unwrap();
            x.rst.next = cycle < 2;
            if cycle >= FREE_AT && cycle % 7 == 0 {
                cons = x.prod.val().to_u64();
            }
            x.cons.next = cons.to_bits();
            // A verdict event.
            let k = (cycle >= 10 && (cycle - 10) % 3 == 0).then(|| (cycle - 10) / 3);
            let k = k.filter(|&k| k < events);
            drive_verdict(&mut x, k);
            // Fates wait for `fate_ready`; results come when due.
            let (fate, res) = drive_tts(&mut x, &tts, cycle);
            // The DMA write arbiter: a request at a time, the
            // placement first; the port takes two beats of three.
            let pl = pls.front().copied().filter(|&(at, _)| at <= cycle);
            if owner == 0 {
                owner = if pl.is_some() {
                    1
                } else if x.w.tvalid.val() {
                    2
                } else {
                    0
                };
            }
            let ready = cycle % 3 != 1;
            x.pl_tvalid.next = owner == 1;
            x.pl_first.next = pl_beat == 0;
            x.pl_tlast.next = pl_beat == 1;
            x.pl_addr.next = pl_addr(pl.map_or(0, |p| p.1)).to_bits();
            x.pl_tready.next = owner == 1 && ready;
            x.w.tready.next = owner == 2 && ready;
            x = sim.wait(1, x)?;
            r.held |= x.hold.val();
            if x.inc.val() {
                r.incs += 1;
            }
            if x.fate.valid.val() && x.fate.ready.val() {
                r.tt_want.extend(tt_entries(fate.unwrap()));
                let i = tts.iter().position(|(_, t)| matches!(t, Tt::Fate(..)));
                tts.remove(i.unwrap());
            }
            if let Some(t) = res {
                r.tt_want.extend(tt_entries(t));
                let i = tts
                    .iter()
                    .position(|(at, t)| *at == cycle && !matches!(t, Tt::Fate(..)));
                tts.remove(i.unwrap());
            }
            if owner == 1 && ready {
                pl_beat += 1;
                if pl_beat == 2 {
                    r.pl_done.push((pl.unwrap().1, cycle));
                    pls.pop_front();
                    (pl_beat, owner) = (0, 0);
                }
            }
            if owner == 2 && ready && take_beat(&x, &mut open, &mut ev_beat, cycle, cons) {
                r.written.extend(open.take());
                (ev_beat, owner) = (0, 0);
            }
            drop(r);
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        let mut r = run.lock().unwrap();
        r.prod = x.prod.val().to_u64();
        r.lost = x.lost.val().to_u64();
        drop(r);
        sim.done(x)
    });
    let mut uut = EvRing::<64, 8>::default();
    uut.connect_all();
    sim.run(Box::new(uut), 200_000).unwrap();
    Arc::try_unwrap(result).unwrap().into_inner().unwrap()
}

/// Verdict event `k`'s entry (without its index and phase), its
/// placement write's address in it when it has one in 48 bits.
fn verdict_entry(k: usize) -> Entry {
    let mut e = Entry::zero();
    for (f, &(at, width)) in EV_FIELDS.iter().enumerate() {
        e.put(at, width, ev_field(k, f));
    }
    if k % 3 == 0 && pl_addr(k) >> 48 == 0 {
        e.put(421, 1, 1);
        e.put(424, 24, pl_addr(k));
        e.put(480, 24, pl_addr(k) >> 24);
    }
    e.put(504, 4, ev_type::VERDICT.into());
    e
}

#[test]
fn rust_hdl_model_writes_every_event_in_order_with_its_phase_and_waits_for_room() {
    const EVENTS: usize = 24;
    let tts = vec![
        // A fate and a queued result in one cycle: the result waits
        // in the skid; another result in the next cycle waits too.
        (20, Tt::Fate(true, false, 0x1111_0001)),
        (20, Tt::Qres(0, 3, true, 5, 0x2222_0002, 7, 9000)),
        (21, Tt::Ackrx(1, 9, 3, 4096, 0x3333_0003)),
        (45, Tt::Fate(false, true, 0x1111_0004)),
        (70, Tt::Ackrx(2, 2, 1, 1024, 0x3333_0005)),
        (95, Tt::Fate(true, true, 0x1111_0006)),
        (95, Tt::Ackrx(3, 15, 8, 65536, 0x3333_0007)),
        (130, Tt::Qres(4, 1, false, 0, 0x2222_0008, 0, 0)),
        (160, Tt::Fate(false, false, 0x1111_0009)),
        (500, Tt::Ackrx(5, 4, 2, 2048, 0x3333_000A)),
        (501, Tt::Fate(false, true, 0x1111_000B)),
    ];
    let run = simulate(EVENTS, tts);
    let n = run.written.len();
    assert_eq!(n, EVENTS + run.tt_want.len(), "every event written once");
    assert_eq!((run.prod, run.incs, run.lost), (n as u64, n as u64, 0));
    assert!(run.held, "the verdict FIFO never reached the MAC RX hold");
    let (mut verdicts, mut tts) = (Vec::new(), Vec::new());
    for (i, w) in run.written.iter().enumerate() {
        // Its slot, index and phase: 1 on the first lap, 0 on the second...
        assert_eq!(w.addr, BASE + 64 * (i as u64 % RING), "entry {i}'s address");
        assert_eq!(w.entry.get(448, 32), i as u64, "entry {i}'s index");
        assert_eq!(
            w.entry.get(511, 1),
            (i as u64 / RING + 1) % 2,
            "entry {i}'s phase"
        );
        // ... written only with room: the host's `cons` gives it.
        assert!(
            i as u64 - w.cons < RING,
            "entry {i} overwrote an unread one"
        );
        // A result's view entry follows it.
        let ty = w.entry.get(504, 4);
        let next = run.written.get(i + 1).map(|w| w.entry.get(504, 4));
        if ty == u64::from(ev_type::ACKRX) || ty == u64::from(ev_type::OP_RESULT) {
            assert_eq!(next, Some(u64::from(ev_type::VIEW)), "entry {i}'s view");
        }
        let mut e = w.entry.clone();
        e.put(448, 32, 0);
        e.put(511, 1, 0);
        if e.get(504, 4) == u64::from(ev_type::VERDICT) {
            verdicts.push((e, w.cycle));
        } else {
            tts.push(e);
        }
    }
    assert!(
        run.written[RING as usize].cycle > FREE_AT,
        "the ring's room held nothing"
    );
    for (k, (e, cycle)) in verdicts.iter().enumerate() {
        assert_eq!(*e, verdict_entry(k), "verdict event {k}");
        // A placed packet's event comes after its placement write.
        if let Some(&(_, done)) = run.pl_done.iter().find(|p| p.0 == k) {
            assert!(*cycle > done, "event {k} before its placement write");
        }
    }
    assert_eq!(verdicts.len(), EVENTS);
    assert_eq!(
        tts, run.tt_want,
        "the TX-table entries, each result's view after it"
    );
}
