//! rust-hdl simulations of the MAC: [`MacTx`] into [`MacRx`] over GMII, or
//! GMII driven by the test, against the golden CRC.

use std::sync::{Arc, Mutex};

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::*;
use crate::icrc::crc_byte;

/// [`MacTx`] and [`MacRx`] back to back; with `inject` high the receiver
/// sees the test's GMII instead of the transmitter's, and `flip` is XORed
/// into every transmitted byte the receiver sees.
#[derive(LogicBlock, Default)]
struct Loop {
    clock: Signal<In, Clock>,
    rst: Signal<In, Bit>,
    s_tdata: Signal<In, Bits<8>>,
    s_tvalid: Signal<In, Bit>,
    s_tlast: Signal<In, Bit>,
    s_tready: Signal<Out, Bit>,
    m_tdata: Signal<Out, Bits<8>>,
    m_tvalid: Signal<Out, Bit>,
    m_tlast: Signal<Out, Bit>,
    m_tready: Signal<In, Bit>,
    wire_d: Signal<Out, Bits<8>>,
    wire_en: Signal<Out, Bit>,
    wire_er: Signal<Out, Bit>,
    flip: Signal<In, Bits<8>>,
    inject: Signal<In, Bit>,
    inj_d: Signal<In, Bits<8>>,
    inj_dv: Signal<In, Bit>,
    inj_er: Signal<In, Bit>,
    tx: MacTx,
    rx: MacRx,
}

impl Logic for Loop {
    #[hdl_gen]
    fn update(&mut self) {
        self.tx.clock.next = self.clock.val();
        self.rx.clock.next = self.clock.val();
        self.tx.rst.next = self.rst.val();
        self.rx.rst.next = self.rst.val();
        self.tx.s_axis_tdata.next = self.s_tdata.val();
        self.tx.s_axis_tvalid.next = self.s_tvalid.val();
        self.tx.s_axis_tlast.next = self.s_tlast.val();
        self.s_tready.next = self.tx.s_axis_tready.val();
        self.wire_d.next = self.tx.gmii_txd.val();
        self.wire_en.next = self.tx.gmii_tx_en.val();
        self.wire_er.next = self.tx.gmii_tx_er.val();
        if self.inject.val() {
            self.rx.gmii_rxd.next = self.inj_d.val();
            self.rx.gmii_rx_dv.next = self.inj_dv.val();
            self.rx.gmii_rx_er.next = self.inj_er.val();
        } else {
            self.rx.gmii_rxd.next = self.tx.gmii_txd.val() ^ self.flip.val();
            self.rx.gmii_rx_dv.next = self.tx.gmii_tx_en.val();
            self.rx.gmii_rx_er.next = self.tx.gmii_tx_er.val();
        }
        self.m_tdata.next = self.rx.m_axis_tdata.val();
        self.m_tvalid.next = self.rx.m_axis_tvalid.val();
        self.m_tlast.next = self.rx.m_axis_tlast.val();
        self.rx.m_axis_tready.next = self.m_tready.val();
    }
}

/// What one simulation saw.
#[derive(Default, Debug)]
struct Seen {
    /// Frames out of the receiver.
    frames: Vec<Vec<u8>>,
    /// The transmitter's GMII, one entry per clock: (byte, enable, error).
    wire: Vec<(u8, bool, bool)>,
    /// Receiver counters: frames, FCS errors, receive errors, runts, no room.
    rx: [u32; 5],
    /// Transmitter counters: frames, underruns.
    tx: [u32; 2],
}

/// One clock of the test's own GMII: (byte, data valid, error).
type Gmii = (u8, bool, bool);

/// A frame as a transmitter puts it on GMII: preamble, SFD, `body`, then
/// the FCS of `body` (its padding is the caller's).
fn on_wire(body: &[u8]) -> Vec<u8> {
    let fcs = !body.iter().fold(u32::MAX, |c, &b| crc_byte(c, b));
    let mut w = vec![0x55; 7];
    w.push(0xD5);
    w.extend_from_slice(body);
    w.extend_from_slice(&fcs.to_le_bytes());
    w
}

/// Runs `frames` into the transmitter (its bytes back to back unless `gap`
/// says after which byte of which frame to leave one clock empty), with
/// `flip[i]` XORed into the receiver's copy of wire clock `i` (when
/// `inject` is empty) or the receiver fed `inject` instead. The consumer is
/// ready in the clocks where `ready` says so.
fn simulate(
    frames: Vec<Vec<u8>>,
    gap: Option<(usize, usize)>,
    flip: Vec<(usize, u8)>,
    inject: Vec<Gmii>,
    ready: fn(usize) -> bool,
) -> Seen {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let result = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Loop>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Loop>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        x.inject.next = !inject.is_empty();
        let (mut frame, mut off, mut open) = (0usize, 0usize, Vec::new());
        let mut held = false;
        let mut clock = 0usize;
        let mut quiet = 0;
        while quiet < 200 && clock < 100_000 {
            // Inputs set now take effect at the next edge; `val()` still
            // reads the old ones, so the handshakes use the values set.
            let ready = ready(clock);
            x.m_tready.next = ready;
            let mut s = seen.lock().unwrap();
            s.wire.push((
                x.wire_d.val().index() as u8,
                x.wire_en.val(),
                x.wire_er.val(),
            ));
            if x.m_tvalid.val() && ready {
                open.push(x.m_tdata.val().index() as u8);
                if x.m_tlast.val() {
                    s.frames.push(std::mem::take(&mut open));
                }
            }
            drop(s);
            x.flip.next = flip
                .iter()
                .find(|&&(at, _)| at == clock)
                .map_or(0, |&(_, f)| f)
                .to_bits();
            let (d, dv, er) = inject.get(clock).copied().unwrap_or_default();
            x.inj_d.next = d.to_bits();
            x.inj_dv.next = dv;
            x.inj_er.next = er;
            // One byte offered; taken at the edge when `s_tready` is high.
            let skip = gap == Some((frame, off)) && !held;
            let valid = frame < frames.len() && !skip;
            x.s_tvalid.next = valid;
            if frame < frames.len() {
                x.s_tdata.next = frames[frame][off].to_bits();
                x.s_tlast.next = off + 1 == frames[frame].len();
            }
            let taken = x.s_tready.val() && valid;
            held |= skip && x.s_tready.val();
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            clock += 1;
            if taken {
                off += 1;
                if off == frames[frame].len() {
                    frame += 1;
                    off = 0;
                }
            }
            let busy =
                frame < frames.len() || clock < inject.len() || x.wire_en.val() || x.m_tvalid.val();
            quiet = if busy { 0 } else { quiet + 1 };
        }
        let mut s = seen.lock().unwrap();
        s.rx = [
            x.rx.frames.val(),
            x.rx.fcs_errors.val(),
            x.rx.rx_errors.val(),
            x.rx.runts.val(),
            x.rx.no_room.val(),
        ]
        .map(|v| v.index() as u32);
        s.tx = [x.tx.frames.val(), x.tx.underruns.val()].map(|v| v.index() as u32);
        drop(s);
        sim.done(x)
    });
    let mut uut = Loop::default();
    uut.connect_all();
    sim.run(Box::new(uut), 10_000_000).unwrap();
    Arc::try_unwrap(result).unwrap().into_inner().unwrap()
}

/// A consumer that is always ready.
fn always(_: usize) -> bool {
    true
}

/// Random frames of the given lengths.
fn frames(lens: &[usize], seed: u64) -> Vec<Vec<u8>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    lens.iter()
        .map(|&n| (0..n).map(|_| rng.r#gen()).collect())
        .collect()
}

/// `f` padded with zeros to the minimum a transmitter sends.
fn padded(f: &[u8]) -> Vec<u8> {
    let mut p = f.to_vec();
    p.resize(p.len().max(MIN_PAYLOAD), 0);
    p
}

/// The enabled runs of the transmitter's GMII: each frame's bytes, and the
/// idle clocks before it.
fn bursts(wire: &[(u8, bool, bool)]) -> Vec<(usize, Vec<u8>)> {
    let mut out: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut idle = 0;
    for (i, &(d, en, _)) in wire.iter().enumerate() {
        if en {
            if i == 0 || !wire[i - 1].1 {
                out.push((idle, Vec::new()));
            }
            out.last_mut().expect("a burst").1.push(d);
            idle = 0;
        } else {
            idle += 1;
        }
    }
    out
}

#[test]
fn frames_cross_the_wire_with_preamble_padding_fcs_and_gap() {
    let sent = frames(&[14, 59, 60, 61, 64, 100, 1500, 4000, 1, 333], 1);
    let seen = simulate(sent.clone(), None, Vec::new(), Vec::new(), always);
    let want: Vec<Vec<u8>> = sent.iter().map(|f| padded(f)).collect();
    let wire = bursts(&seen.wire);
    assert_eq!(wire.len(), sent.len());
    for (i, (idle, bytes)) in wire.iter().enumerate() {
        assert_eq!(bytes, &on_wire(&want[i]), "frame {i} on the wire");
        if i > 0 {
            assert!(*idle >= 12, "gap before frame {i}: {idle} clocks");
        }
    }
    assert!(seen.wire.iter().all(|w| !w.2), "no transmit error");
    assert_eq!(seen.frames, want);
    assert_eq!(seen.rx, [sent.len() as u32, 0, 0, 0, 0]);
    assert_eq!(seen.tx, [sent.len() as u32, 0]);
}

#[test]
fn a_corrupted_byte_or_an_underrun_loses_only_its_frame() {
    let sent = frames(&[100, 100, 100, 100], 2);
    // Frame 1's 30th data byte (after 8 preamble clocks) flipped on the
    // way: the clock of its first byte on the wire, from a clean run.
    let clean = simulate(sent.clone(), None, Vec::new(), Vec::new(), always).wire;
    let start1 = (1..clean.len())
        .filter(|&i| clean[i].1 && !clean[i - 1].1)
        .nth(1)
        .expect("two frames");
    let seen = simulate(
        sent.clone(),
        None,
        vec![(start1 + 8 + 30, 0x10)],
        Vec::new(),
        always,
    );
    assert_eq!(
        seen.frames,
        vec![sent[0].clone(), sent[2].clone(), sent[3].clone()]
    );
    assert_eq!(seen.rx, [3, 1, 0, 0, 0]);
    // Frame 2 starved for one clock after its 50th byte: sent with a
    // transmit error, dropped by the receiver as such.
    let seen = simulate(sent.clone(), Some((2, 50)), Vec::new(), Vec::new(), always);
    assert_eq!(seen.tx, [4, 1]);
    assert!(
        seen.wire.iter().any(|w| w.2),
        "the underrun is a transmit error"
    );
    assert_eq!(
        seen.frames,
        vec![sent[0].clone(), sent[1].clone(), sent[3].clone()]
    );
    assert_eq!(seen.rx, [3, 0, 1, 0, 0]);
}

/// GMII clocks carrying `wire` with data valid, then `idle` idle clocks.
fn gmii(wire: &[u8], idle: usize) -> Vec<Gmii> {
    let mut g: Vec<Gmii> = wire.iter().map(|&d| (d, true, false)).collect();
    g.extend(std::iter::repeat_n((0, false, false), idle));
    g
}

#[test]
fn runts_stray_bytes_short_preambles_and_back_to_back_frames() {
    let f = frames(&[60, 59, 80, 64], 3);
    let mut line = gmii(&on_wire(&f[0]), 1);
    // A runt: 59 bytes and the FCS (63).
    line.extend(gmii(&on_wire(&f[1]), 12));
    // Bytes without a preamble, then a frame whose preamble lost 5 bytes.
    line.extend(gmii(&[0x12, 0x34, 0x56], 3));
    line.extend(gmii(&on_wire(&f[2])[5..], 12));
    // A receive error in a frame's middle.
    let mut bad = gmii(&on_wire(&f[3]), 12);
    bad[40].2 = true;
    line.extend(bad);
    let seen = simulate(Vec::new(), None, Vec::new(), line, always);
    assert_eq!(seen.frames, vec![f[0].clone(), f[2].clone()]);
    assert_eq!(seen.rx, [2, 0, 1, 1, 0]);
}

#[test]
fn a_full_buffer_drops_whole_frames_and_keeps_the_rest() {
    // Five 1,000-byte frames into 4 KiB while the consumer waits: four fit
    // (4,000 bytes of data, each FCS overwritten), the fifth has no room;
    // all four leave intact once the consumer is ready.
    let f = frames(&[1000, 1000, 1000, 1000, 1000], 4);
    let line: Vec<Gmii> = f.iter().flat_map(|b| gmii(&on_wire(b), 12)).collect();
    // Not ready until the five frames are in (5 × 1,024 clocks and more).
    assert!(line.len() < 5_500);
    let seen = simulate(Vec::new(), None, Vec::new(), line, |c| c >= 5_500);
    assert_eq!(seen.frames, f[..4].to_vec());
    assert_eq!(seen.rx, [4, 0, 0, 0, 1]);
}

#[test]
fn a_consumer_that_pauses_gets_every_byte_once() {
    // Ready in a pseudo-random 5 clocks of 8: the output and skid
    // registers must neither lose nor repeat a byte across the pauses.
    let sent = frames(&[60, 61, 200, 64, 1000, 77], 5);
    let seen = simulate(sent.clone(), None, Vec::new(), Vec::new(), |c| {
        (c.wrapping_mul(2_654_435_761) >> 7) % 8 < 5
    });
    assert_eq!(
        seen.frames,
        sent.iter().map(|f| padded(f)).collect::<Vec<_>>()
    );
    assert_eq!(seen.rx, [sent.len() as u32, 0, 0, 0, 0]);
}
