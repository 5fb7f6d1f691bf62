use super::back::COUNTERS;
use super::*;
use std::sync::{Arc, Mutex};

/// Peer and local numbers of the test's QP and MR.
const QPN: u64 = 0x11;
const PEER: u64 = 0x22;
const PEER_IP: u64 = 0xffff_0a00_0002;
const RKEY: u64 = 0x77;
const PD: u64 = 5;
const BASE: u64 = 0x1000;

/// One datagram of the test: WRITE to `va` with `rkey` and connection
/// PSN `psn`, a 16-byte payload, to QPN `qpn`.
#[derive(Clone, Copy)]
struct Write {
    qpn: u64,
    psn: u64,
    rkey: u64,
    va: u64,
}

/// One cycle's inputs, at `W` bits (64 unless a test says otherwise).
type Step<const W: usize = 64, const B: usize = 8> =
    Box<dyn Fn(&mut RxPlace<W, B>) + Send + Sync + std::panic::RefUnwindSafe>;

/// What the block reported: verdict events `(code, conn_cum)`, DMA
/// beats `(first, addr, len, data, keep, last)` and counters by code.
#[derive(Default)]
struct Seen {
    events: Vec<(u64, u64)>,
    beats: Vec<(bool, u64, u64, u64, u64, bool)>,
    counters: Vec<u64>,
}

/// The test's QP (RTS, PD `PD`, one stream, cumulative PSN 100), its MR
/// (`RKEY`: REMOTE_WRITE over 4 KiB at `BASE`) and the MTU: one table
/// write per cycle.
fn setup<const W: usize, const B: usize>() -> Vec<Step<W, B>> {
    let qp = |w| u64::from(cfg::addr(cfg::QP, 0, w));
    let mr = |w| u64::from(cfg::addr(cfg::MR, 0, w));
    [
        (qp(cfg::QP_CTRL), 1 | u64::from(cfg::STATE_RTS) << 1),
        (qp(cfg::QP_QPNS), QPN | PEER << 32),
        (qp(cfg::QP_PEER_IP_HI), 0),
        (qp(cfg::QP_PEER_IP_LO), PEER_IP),
        (qp(cfg::QP_PD_STREAMS), PD | 1 << 32),
        (qp(cfg::QP_CONN_PSN), 100),
        // Valid, REMOTE_WRITE.
        (mr(cfg::MR_CTRL), 1 | 2 << 1),
        (mr(cfg::MR_KEY_PD), RKEY | PD << 32),
        (mr(cfg::MR_BASE), BASE),
        (mr(cfg::MR_LEN), 0x1000),
        (u64::from(cfg::addr(cfg::GLOBAL, 0, cfg::GLOBAL_MTU)), 4096),
    ]
    .into_iter()
    .map(|(a, d)| table_write(a, d))
    .collect()
}

/// One cycle with the table write `d` to `a`.
fn table_write<const W: usize, const B: usize>(a: u64, d: u64) -> Step<W, B> {
    Box::new(move |x| {
        x.cfg.we.next = true;
        x.cfg.addr.next = a.into();
        x.cfg.data.next = d.into();
    })
}

/// The MR entry's word `w` (`cfg::MR_*`).
fn mr_word(w: u8) -> u64 {
    u64::from(cfg::addr(cfg::MR, 0, w))
}

/// Datagram `n`'s three payload beats (16 bytes and the ICRC), one a cycle.
fn payload<const W: usize, const B: usize>(n: usize) -> Vec<Step<W, B>> {
    [(0u64, 0xffu64, false), (1, 0xff, false), (2, 0x0f, true)]
        .into_iter()
        .map(|(beat, keep, last)| -> Step<W, B> {
            Box::new(move |x| {
                x.s_axis.tvalid.next = true;
                x.s_axis.tdata.next = (n as u64 * 16 + beat).into();
                x.s_axis.tkeep.next = keep.into();
                x.s_axis.tlast.next = last;
            })
        })
        .collect()
}

/// The metadata pulse of WRITE `w` (16 payload bytes).
fn meta<const W: usize, const B: usize>(w: Write) -> Step<W, B> {
    Box::new(move |x| {
        x.meta_valid.next = true;
        x.meta_drop.next = false;
        x.meta_reason.next = 0.into();
        x.meta_len.next = (68 + 16).into();
        x.meta_is_msg.next = true;
        x.meta_opcode.next = 0x01.into();
        x.meta_dst_qpn.next = w.qpn.into();
        x.meta_src_qpn.next = PEER.into();
        x.meta_src_ip.next = PEER_IP.into();
        x.meta_conn_psn.next = w.psn.into();
        x.meta_msg_len.next = 16.into();
        x.meta_remote_va.next = w.va.into();
        x.meta_rkey.next = w.rkey.into();
    })
}

/// A WRITE to the test's QP at `BASE`, the `n`-th 16 bytes.
fn write(psn: u64, rkey: u64, n: u64) -> Write {
    Write {
        qpn: QPN,
        psn,
        rkey,
        va: BASE + 16 * n,
    }
}

/// Runs `script` (one step per cycle) after a reset with the DMA port
/// always ready, then 12 idle cycles, then reads every counter.
fn run<const W: usize, const B: usize>(mut script: Vec<Step<W, B>>) -> Seen {
    for _ in 0..12 {
        script.push(Box::new(|_| {}));
    }
    // Each counter: `cnt.val` shows it after the edge that took `cnt.sel`.
    let count_from = script.len();
    for code in 0..COUNTERS as u64 {
        script.push(Box::new(move |x| x.cnt.sel.next = code.into()));
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let out = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<RxPlace<W, B>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<RxPlace<W, B>>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        x.m_dma.tready.next = true;
        for (k, step) in script.iter().enumerate() {
            x.cfg.we.next = false;
            x.s_axis.tvalid.next = false;
            x.meta_valid.next = false;
            step(&mut x);
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            let mut s = out.lock().unwrap();
            if x.m_ev.valid.val() {
                s.events.push((
                    x.m_ev.code.val().index() as u64,
                    x.m_ev_conn_cum.val().index() as u64,
                ));
            }
            if x.m_dma.tvalid.val() {
                s.beats.push((
                    x.m_dma.first.val(),
                    x.m_dma.addr.val().get_bits::<32>(0).index() as u64,
                    x.m_dma.len.val().index() as u64,
                    x.m_dma.tdata.val().get_bits::<32>(0).index() as u64,
                    x.m_dma.tkeep.val().get_bits::<8>(0).index() as u64,
                    x.m_dma.tlast.val(),
                ));
            }
            if k >= count_from {
                s.counters.push(x.cnt.val.val().index() as u64);
            }
        }
        sim.done(x)
    });
    sim.run(Box::new(RxPlace::<W, B>::default()), 100_000)
        .unwrap();
    Arc::try_unwrap(seen).ok().unwrap().into_inner().unwrap()
}

#[test]
fn rust_hdl_model_places_writes_and_tracks_the_connection_window() {
    let writes = [
        // Placed: the cumulative PSN moves to 101.
        Write {
            qpn: QPN,
            psn: 100,
            rkey: RKEY,
            va: BASE + 0x10,
        },
        // Duplicate.
        Write {
            qpn: QPN,
            psn: 100,
            rkey: RKEY,
            va: BASE + 0x10,
        },
        // Unknown rkey: remote access, PSN 101 not accepted.
        Write {
            qpn: QPN,
            psn: 101,
            rkey: RKEY + 1,
            va: BASE,
        },
        // Ahead of the cumulative PSN: placed, cum stays 101.
        Write {
            qpn: QPN,
            psn: 103,
            rkey: RKEY,
            va: BASE + 0x40,
        },
        // 101 then 102: cum to 102, then over 103 to 104.
        Write {
            qpn: QPN,
            psn: 101,
            rkey: RKEY,
            va: BASE + 0x20,
        },
        Write {
            qpn: QPN,
            psn: 102,
            rkey: RKEY,
            va: BASE + 0x30,
        },
        // No such QP.
        Write {
            qpn: QPN + 1,
            psn: 104,
            rkey: RKEY,
            va: BASE,
        },
    ];
    // Per cycle: table writes, then each datagram's payload beats and its
    // metadata after them.
    let mut script = setup::<64, 8>();
    for (n, w) in writes.iter().copied().enumerate() {
        script.extend(payload(n));
        script.push(meta(w));
    }
    let s = run(script);
    let codes: Vec<_> = s.events.iter().map(|e| e.0).collect();
    assert_eq!(codes, [0, 14, 15, 0, 0, 0, 6]);
    let cums: Vec<_> = s.events[..6].iter().map(|e| e.1).collect();
    assert_eq!(cums, [101, 101, 101, 101, 102, 104]);
    // The four placed writes, two beats each (the ICRC beat dropped).
    let firsts: Vec<_> = s.beats.iter().filter(|b| b.0).map(|b| (b.1, b.2)).collect();
    assert_eq!(
        firsts,
        [
            (BASE + 0x10, 16),
            (BASE + 0x40, 16),
            (BASE + 0x20, 16),
            (BASE + 0x30, 16)
        ]
    );
    assert_eq!(s.beats.len(), 8);
    assert!(
        s.beats
            .iter()
            .all(|b| b.4 == 0xff && b.5 == (b.3 % 16 == 1))
    );
    let mut counters = vec![0; COUNTERS];
    counters[Verdict::Placed as usize] = 4;
    counters[Verdict::Duplicate as usize] = 1;
    counters[Verdict::RemoteAccess as usize] = 1;
    counters[Verdict::UnknownQp as usize] = 1;
    assert_eq!(s.counters, counters);
}

/// The codes and cumulative PSNs of `s`'s events.
fn verdicts(s: &Seen) -> (Vec<u64>, Vec<u64>) {
    s.events.iter().copied().unzip()
}

#[test]
fn rust_hdl_model_looks_the_mr_up_with_a_table_write_between_the_stages() {
    let mut script = setup::<64, 8>();
    // Deregistered while the WRITE is in S1 (the MR lookup): remote access.
    script.extend(payload(0));
    script.push(meta(write(100, RKEY, 0)));
    script.push(table_write(mr_word(cfg::MR_CTRL), 0));
    // Valid again under its old key; the WRITE names a new key, written
    // while it is in S1: placed.
    script.push(table_write(mr_word(cfg::MR_CTRL), 1 | 2 << 1));
    script.extend(payload(1));
    script.push(meta(write(100, RKEY + 1, 1)));
    script.push(table_write(mr_word(cfg::MR_KEY_PD), (RKEY + 1) | PD << 32));
    // Deregistered in the WRITE's S2 (its MR looked up in S1): placed.
    script.extend(payload(2));
    script.push(meta(write(101, RKEY + 1, 2)));
    script.push(Box::new(|_| {}));
    script.push(table_write(mr_word(cfg::MR_CTRL), 0));
    let s = run(script);
    assert_eq!(verdicts(&s), (vec![15, 0, 0], vec![100, 101, 102]));
    let firsts: Vec<_> = s.beats.iter().filter(|b| b.0).map(|b| b.1).collect();
    assert_eq!(firsts, [BASE + 16, BASE + 32]);
}

/// Cycles from one datagram's metadata to the next in the back-to-back
/// tests at `W` bits: consecutive at 512; 3 at 64, the least for which
/// the window's update is split over S3 and S4 (a datagram the parser does
/// not drop is 5 beats or more there).
fn gap<const W: usize>() -> usize {
    if W == 64 { 3 } else { 1 }
}

/// The metadata pulses of `ws`, [`gap`] cycles apart.
fn metas<const W: usize, const B: usize>(ws: impl IntoIterator<Item = Write>) -> Vec<Step<W, B>> {
    let mut v: Vec<Step<W, B>> = Vec::new();
    for w in ws {
        v.push(meta(w));
        for _ in 1..gap::<W>() {
            v.push(Box::new(|_| {}));
        }
    }
    v
}

/// Four WRITEs of one QP as close as `W` allows: each verdict sees the
/// connection state its predecessor left.
fn previous_verdict_back_to_back<const W: usize, const B: usize>() {
    let mut script = setup::<W, B>();
    for n in 0..4 {
        script.extend(payload(n));
    }
    let psns = [100, 100, 101, 101].into_iter().enumerate();
    script.extend(metas(psns.map(|(n, psn)| write(psn, RKEY, n as u64))));
    let s = run(script);
    assert_eq!(verdicts(&s), (vec![0, 14, 0, 14], vec![101, 101, 102, 102]));
}

#[test]
fn rust_hdl_model_sees_the_previous_verdict_of_the_qp_back_to_back() {
    previous_verdict_back_to_back::<64, 8>();
    previous_verdict_back_to_back::<512, 64>();
}

/// As close as `W` allows: 102 waits in the bitmap, 101 moves the
/// cumulative PSN over it, then 102 and 100 are duplicates (one by the
/// bitmap's cleared run, one below the cumulative PSN).
fn window_back_to_back<const W: usize, const B: usize>() {
    let mut script = setup::<W, B>();
    for n in 0..5 {
        script.extend(payload(n));
    }
    let psns = [100, 102, 101, 102, 100].into_iter().enumerate();
    script.extend(metas(psns.map(|(n, psn)| write(psn, RKEY, n as u64))));
    let s = run(script);
    assert_eq!(
        verdicts(&s),
        (vec![0, 0, 0, 14, 14], vec![101, 101, 103, 103, 103])
    );
}

#[test]
fn rust_hdl_model_forwards_the_connection_window_between_back_to_back_verdicts() {
    window_back_to_back::<64, 8>();
    window_back_to_back::<512, 64>();
}

/// The metadata pulse of an 8-byte frame, dropped by the parser
/// (truncated), whose stale header fields are those of `w`: at 64 bits
/// such a frame (one beat, no payload beats) can follow the one before by
/// a single cycle.
fn dropped(w: Write) -> Step {
    Box::new(move |x| {
        meta(w)(x);
        x.meta_drop.next = true;
        x.meta_reason.next = 1.into();
        x.meta_len.next = 8.into();
    })
}

#[test]
fn rust_hdl_model_reports_the_window_to_a_dropped_frame_right_behind() {
    let mut script = setup::<64, 8>();
    // A WRITE, then a truncated frame of its QP one cycle behind it (its
    // S3 beside the WRITE's S4), then at 102 one two cycles behind (its S2
    // there): each event carries the window after the WRITE.
    for (n, psn, behind) in [(0, 100, 1), (1, 101, 2)] {
        script.extend(payload(n));
        script.push(meta(write(psn, RKEY, n as u64)));
        for _ in 1..behind {
            script.push(Box::new(|_| {}));
        }
        script.push(dropped(write(psn, RKEY, n as u64)));
    }
    // Then the next PSN: placed (the dropped frames wrote no window).
    script.extend(payload(2));
    script.push(meta(write(102, RKEY, 2)));
    let s = run(script);
    assert_eq!(
        verdicts(&s),
        (vec![0, 1, 0, 1, 0], vec![101, 101, 102, 102, 103])
    );
}

/// The QP entry's word `w` (`cfg::QP_*`).
fn qp_word(w: u8) -> u64 {
    u64::from(cfg::addr(cfg::QP, 0, w))
}

/// WRITE `n` at `psn`, then `idle` idle cycles, then the table write of
/// `d` to `a`: with `idle` 1 it lands while the WRITE is in S2, with 2 in
/// S3 (its verdict cycle).
fn write_then_table(n: usize, psn: u64, idle: usize, a: u64, d: u64) -> Vec<Step> {
    let mut v = payload(n);
    v.push(meta(write(psn, RKEY, n as u64)));
    for _ in 0..idle {
        v.push(Box::new(|_| {}));
    }
    v.push(table_write(a, d));
    v
}

#[test]
fn rust_hdl_model_sees_the_qp_state_written_in_s2_not_in_s3() {
    let err = 1 | u64::from(cfg::STATE_IDLE) << 1;
    let rts = 1 | u64::from(cfg::STATE_RTS) << 1;
    let mut script = setup::<64, 8>();
    // Moved out of RTS in S2: the verdict (S3) sees it.
    script.extend(write_then_table(0, 100, 1, qp_word(cfg::QP_CTRL), err));
    script.push(table_write(qp_word(cfg::QP_CTRL), rts));
    // In S3: too late, placed; the firmware's write wins over nothing
    // (the verdict does not touch the state), so the next WRITE is refused.
    script.extend(write_then_table(1, 100, 2, qp_word(cfg::QP_CTRL), err));
    script.extend(payload(2));
    script.push(meta(write(101, RKEY, 2)));
    let s = run(script);
    assert_eq!(verdicts(&s), (vec![7, 0, 7], vec![100, 101, 101]));
}

#[test]
fn rust_hdl_model_sees_the_window_written_in_s2_and_the_mr_only_up_to_s1() {
    let mut script = setup::<64, 8>();
    // The cumulative PSN moved to 105 in S2: the WRITE at 100 is a duplicate.
    script.extend(write_then_table(0, 100, 1, qp_word(cfg::QP_CONN_PSN), 105));
    // Moved to 200 in S3: the WRITE at 105 is placed (cum 106 in its
    // event), then the firmware's write wins: 106 is a duplicate.
    script.extend(write_then_table(1, 105, 2, qp_word(cfg::QP_CONN_PSN), 200));
    script.extend(payload(2));
    script.push(meta(write(106, RKEY, 2)));
    // The MR deregistered in S2: looked up in S1, placed.
    script.extend(write_then_table(3, 200, 1, mr_word(cfg::MR_CTRL), 0));
    let s = run(script);
    assert_eq!(verdicts(&s), (vec![14, 0, 14, 0], vec![105, 106, 200, 201]));
}

/// A second QP (entry 1, QPN `QPN + 1`, cumulative PSN 500) beside the
/// test's, with the same peer, PD and stream.
fn second_qp<const W: usize, const B: usize>() -> Vec<Step<W, B>> {
    let qp = |w| u64::from(cfg::addr(cfg::QP, 1, w));
    [
        (qp(cfg::QP_CTRL), 1 | u64::from(cfg::STATE_RTS) << 1),
        (qp(cfg::QP_QPNS), (QPN + 1) | PEER << 32),
        (qp(cfg::QP_PEER_IP_HI), 0),
        (qp(cfg::QP_PEER_IP_LO), PEER_IP),
        (qp(cfg::QP_PD_STREAMS), PD | 1 << 32),
        (qp(cfg::QP_CONN_PSN), 500),
    ]
    .into_iter()
    .map(|(a, d)| table_write(a, d))
    .collect()
}

/// The two QPs in turn, as close as `W` allows: each verdict's window is
/// in the table while the other QP's datagram is decided, so the next
/// datagram of the QP takes it from there (unsplit: once from the pending
/// write-back).
fn pending_write_back<const W: usize, const B: usize>() {
    let mut script = setup::<W, B>();
    script.extend(second_qp());
    for n in 0..6 {
        script.extend(payload(n));
    }
    let psns = [(QPN, 100), (QPN + 1, 500), (QPN, 100), (QPN + 1, 500)];
    let psns = psns.into_iter().chain([(QPN, 101), (QPN + 1, 501)]);
    script.extend(metas(psns.enumerate().map(|(n, (qpn, psn))| Write {
        qpn,
        psn,
        rkey: RKEY,
        va: BASE + 16 * n as u64,
    })));
    let s = run(script);
    assert_eq!(
        verdicts(&s),
        (vec![0, 0, 14, 14, 0, 0], vec![101, 501, 101, 501, 102, 502])
    );
}

#[test]
fn rust_hdl_model_forwards_the_window_whose_write_back_is_pending() {
    pending_write_back::<64, 8>();
    pending_write_back::<512, 64>();
}

#[test]
fn rust_hdl_model_lets_the_firmware_win_over_the_pending_write_back() {
    let mut script = setup::<64, 8>();
    // Moved to 300 in the cycle after the WRITE's verdict (once its
    // window's write-back): the firmware's value stays, the WRITE at 300
    // is placed.
    script.extend(write_then_table(0, 100, 3, qp_word(cfg::QP_CONN_PSN), 300));
    script.extend(payload(1));
    script.push(meta(write(300, RKEY, 1)));
    let s = run(script);
    assert_eq!(verdicts(&s), (vec![0, 0], vec![101, 301]));
}

/// A 16-byte WRITE of the test's QP at `va` with connection PSN `psn`.
fn write_at(psn: u64, va: u64) -> Write {
    Write {
        qpn: QPN,
        psn,
        rkey: RKEY,
        va,
    }
}

#[test]
fn rust_hdl_model_checks_the_mr_bounds_with_base_and_length_written_in_s1() {
    let mut script = setup::<64, 8>();
    // The MR's last 16 bytes: placed; 8 bytes past its end: remote access.
    script.extend(payload(0));
    script.push(meta(write_at(100, BASE + 0xff0)));
    script.extend(payload(1));
    script.push(meta(write_at(101, BASE + 0xff8)));
    // Past the end, the MR's length grown by 16 while the WRITE is in S1
    // (its end, summed when the length is written, goes through): placed.
    script.extend(payload(2));
    script.push(meta(write_at(101, BASE + 0x1000)));
    script.push(table_write(mr_word(cfg::MR_LEN), 0x1010));
    // Before the base, the base moved down by 16 in S1: placed.
    script.extend(payload(3));
    script.push(meta(write_at(102, BASE - 0x10)));
    script.push(table_write(mr_word(cfg::MR_BASE), BASE - 0x10));
    let s = run(script);
    assert_eq!(verdicts(&s), (vec![0, 15, 0, 0], vec![101, 101, 102, 103]));
    let firsts: Vec<_> = s.beats.iter().filter(|b| b.0).map(|b| b.1).collect();
    assert_eq!(firsts, [BASE + 0xff0, BASE + 0x1000, BASE - 0x10]);
}

/// The engine's connection window (`ConnBitmap`, 256 PSNs) for
/// [`rust_hdl_model_counts_the_window_of_back_to_back_verdicts`]: the
/// verdict code and cumulative PSN after each WRITE's PSN.
struct Window {
    cum: u32,
    bits: [bool; 256],
}

impl Window {
    /// Accepts `psn` if new: `(code, cumulative PSN after)`.
    fn accept(&mut self, psn: u32) -> (u64, u64) {
        let d = psn.wrapping_sub(self.cum);
        let code = if d >= 1 << 31 || (d < 256 && self.bits[psn as usize % 256]) {
            14
        } else if d >= 256 {
            12
        } else {
            self.bits[psn as usize % 256] = true;
            while self.bits[self.cum as usize % 256] {
                self.bits[self.cum as usize % 256] = false;
                self.cum = self.cum.wrapping_add(1);
            }
            0
        };
        (code, u64::from(self.cum))
    }
}

/// Random PSNs of one QP, in bursts of 8 as close as `W` allows, against
/// [`Window`].
fn random_window<const W: usize, const B: usize>() {
    use rand::{Rng, SeedableRng, rngs::SmallRng};
    let mut rng = SmallRng::seed_from_u64(37);
    // The cumulative PSN starts below 256 so the runs wrap past bit 255.
    let mut script = setup::<W, B>();
    script.push(table_write(qp_word(cfg::QP_CONN_PSN), 230));
    let mut w = Window {
        cum: 230,
        bits: [false; 256],
    };
    // Near the cumulative PSN (duplicates, runs, the next PSN back to
    // back: S2's count of S3's window after its update), now and then
    // beyond the window; then every PSN of one window but the cumulative
    // one, that one (a run of 256) and the next ones back to back.
    let mut psns: Vec<u32> = Vec::new();
    let mut cum = w.cum;
    for _ in 0..240 {
        let r: i64 = if rng.gen_range(0..16) == 0 {
            rng.gen_range(200..300)
        } else {
            rng.gen_range(-3..10)
        };
        let psn = (i64::from(cum) + r) as u32;
        psns.push(psn);
        cum = w.accept(psn).1 as u32;
    }
    let mut all: Vec<u32> = (1..256).map(|k| cum + k).collect();
    for i in (1..all.len()).rev() {
        all.swap(i, rng.gen_range(0..=i));
    }
    psns.extend(all);
    psns.extend([cum, cum + 256, cum + 258, cum + 257, cum + 259]);
    let mut w = Window {
        cum: 230,
        bits: [false; 256],
    };
    let want: Vec<(u64, u64)> = psns.iter().map(|&p| w.accept(p)).collect();
    // Bursts of 8: their payloads, then their metadata [`gap`] cycles
    // apart.
    for (b, burst) in psns.chunks(8).enumerate() {
        for k in 0..burst.len() {
            script.extend(payload(8 * b + k));
        }
        script.extend(metas(burst.iter().enumerate().map(|(k, &psn)| {
            let n = (8 * b + k) as u64;
            Write {
                qpn: QPN,
                psn: u64::from(psn),
                rkey: RKEY,
                va: BASE + 16 * (n % 256),
            }
        })));
    }
    let s = run(script);
    assert_eq!(s.events.len(), want.len());
    for (k, (got, want)) in s.events.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "datagram {k}, PSN {}", psns[k]);
    }
}

#[test]
fn rust_hdl_model_counts_the_window_of_back_to_back_verdicts() {
    random_window::<64, 8>();
    random_window::<512, 64>();
}
