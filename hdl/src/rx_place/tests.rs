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

/// One cycle's inputs.
type Step = Box<dyn Fn(&mut RxPlace<64, 8>)>;

/// What the block reported: verdict events `(code, conn_cum)`, DMA
/// beats `(first, addr, len, data, keep, last)` and counters by code.
#[derive(Default)]
struct Seen {
    events: Vec<(u64, u64)>,
    beats: Vec<(bool, u64, u64, u64, u64, bool)>,
    counters: Vec<u64>,
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
    let seen = Arc::new(Mutex::new(Seen::default()));
    let out = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<RxPlace<64, 8>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<RxPlace<64, 8>>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        x.m_dma_tready.next = true;
        let qp = |w| u64::from(cfg::addr(cfg::QP, 0, w));
        let mr = |w| u64::from(cfg::addr(cfg::MR, 0, w));
        let table = [
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
        ];
        // Per cycle: table writes, then each datagram's three payload
        // beats (16 bytes and the ICRC) and its metadata after them.
        let mut script: Vec<Step> = Vec::new();
        for (a, d) in table {
            script.push(Box::new(move |x| {
                x.cfg_we.next = true;
                x.cfg_addr.next = a.into();
                x.cfg_data.next = d.into();
            }));
        }
        for (n, w) in writes.iter().copied().enumerate() {
            for (beat, keep, last) in [(0u64, 0xffu64, false), (1, 0xff, false), (2, 0x0f, true)] {
                script.push(Box::new(move |x| {
                    x.s_tvalid.next = true;
                    x.s_tdata.next = (n as u64 * 16 + beat).into();
                    x.s_tkeep.next = keep.into();
                    x.s_tlast.next = last;
                }));
            }
            script.push(Box::new(move |x| {
                x.meta_valid.next = true;
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
            }));
        }
        for _ in 0..12 {
            script.push(Box::new(|_| {}));
        }
        // Each counter: `cnt_val` shows it after the edge that took `cnt_sel`.
        let count_from = script.len();
        for code in 0..COUNTERS as u64 {
            script.push(Box::new(move |x| x.cnt_sel.next = code.into()));
        }
        for (k, step) in script.iter().enumerate() {
            x.cfg_we.next = false;
            x.s_tvalid.next = false;
            x.meta_valid.next = false;
            step(&mut x);
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            let mut s = out.lock().unwrap();
            if x.m_ev_valid.val() {
                s.events.push((
                    x.m_ev_code.val().index() as u64,
                    x.m_ev_conn_cum.val().index() as u64,
                ));
            }
            if x.m_dma_tvalid.val() {
                s.beats.push((
                    x.m_dma_first.val(),
                    x.m_dma_addr.val().get_bits::<32>(0).index() as u64,
                    x.m_dma_len.val().index() as u64,
                    x.m_dma_tdata.val().get_bits::<32>(0).index() as u64,
                    x.m_dma_tkeep.val().index() as u64,
                    x.m_dma_tlast.val(),
                ));
            }
            if k >= count_from {
                s.counters.push(x.cnt_val.val().index() as u64);
            }
        }
        sim.done(x)
    });
    sim.run(Box::new(RxPlace::<64, 8>::default()), 100_000)
        .unwrap();
    let s = seen.lock().unwrap();
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
