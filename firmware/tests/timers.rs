//! The engine's timers cost what its active QPs cost: a NIC with a thousand
//! idle connections of 8 paths each does exactly the timer work of one without
//! them (`Nic::timer_work`), where a scan of every path of every QP on every
//! poll would cost thousands of path visits per poll.

mod support;

use metaroce_firmware::{Event, Nic, QpTransition, RemoteEnd, SendOp, SendWr, Sge, WcStatus};
use support::{Channel, MEM_BASE, Pair, Side};

/// Paths of every QP (the active one and the idle ones).
const PATHS: u16 = 8;

/// Moves `qpn` of `local` to RTS towards `remote_qpn` of `remote`.
fn connect(local: &mut Side, qpn: u32, remote: &Side, remote_qpn: u32) {
    let nic = &mut local.nic;
    nic.modify_qp(qpn, QpTransition::Init).unwrap();
    let end = RemoteEnd {
        qpn: remote_qpn,
        ip: remote.ip,
        udp_port: remote.nic.config().udp_port,
        initial_psn: 0,
    };
    nic.modify_qp(qpn, QpTransition::Rtr(end)).unwrap();
    nic.modify_qp(
        qpn,
        QpTransition::Rts {
            initial_psn: 0,
            retry_cnt: 7,
            rnr_retry: 7,
            timeout_ns: 500_000,
        },
    )
    .unwrap();
}

/// What one run measured.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    /// Timer work of both NICs during the transfer.
    work: u64,
    /// Simulation steps (each polls both NICs' timers at least twice).
    steps: u64,
    /// Timers that fired at A: path timeouts and RACK losses.
    fired: u64,
}

/// Connects `idle` more QP pairs of [`PATHS`] paths between the two NICs and
/// leaves them idle, then moves 16 WRITEs of 64 KiB over the first QP at 2 %
/// loss, so path timers and RACK fire.
fn run(idle: usize) -> Run {
    let channel = Channel {
        loss: 0.02,
        ..Channel::default()
    };
    let mut pair = Pair::new(11, PATHS, channel);
    for _ in 0..idle {
        let qa = pair.a.nic.create_qp(pair.a.pd, None).unwrap();
        let qb = pair.b.nic.create_qp(pair.b.pd, None).unwrap();
        connect(&mut pair.a, qa, &pair.b, qb);
        connect(&mut pair.b, qb, &pair.a, qa);
    }
    // Connecting queued every QP once for a transmit turn; take those turns
    // (nothing to send yet) before counting.
    let mut buf = vec![0u8; 9000];
    for side in [&mut pair.a, &mut pair.b] {
        assert!(side.nic.poll_transmit(0, &mut buf, &mut side.mem).is_none());
    }
    let work = |pair: &Pair| pair.a.nic.timer_work() + pair.b.nic.timer_work();
    let before = work(&pair);
    const COUNT: u64 = 16;
    const LEN: u32 = 64 << 10;
    for i in 0..COUNT {
        let addr = MEM_BASE + i * u64::from(LEN);
        let wr = SendWr {
            wr_id: i,
            op: SendOp::Write {
                remote_va: addr,
                rkey: pair.b.mr.rkey,
            },
            sgl: Sge {
                addr,
                len: LEN,
                lkey: pair.a.mr.lkey,
            }
            .into(),
            signaled: true,
            solicited: false,
            stream: 0,
        };
        pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    }
    let mut done = 0;
    let mut steps = 0;
    while done < COUNT {
        assert!(pair.step(), "the transfer stalled");
        steps += 1;
        for e in std::iter::from_fn(|| pair.a.nic.poll_event()) {
            match e {
                Event::Completion(c) if c.status == WcStatus::Success => done += 1,
                other => panic!("unexpected event {other:?}"),
            }
        }
    }
    let stats = pair.a.nic.stats();
    Run {
        work: work(&pair) - before,
        steps,
        fired: stats.quarantines + stats.rack_losses,
    }
}

#[test]
fn idle_qps_cost_no_timer_work() {
    let alone = run(0);
    let crowded = run(1000);
    assert!(alone.fired > 0, "no timer fired: {alone:?}");
    assert!(alone.work > 0);
    // The same transfer, step by step: idle QPs add no timer work at all.
    assert_eq!(crowded, alone);
    // A scan would visit 1,000 QPs of 8 paths at every poll of either NIC.
    let scan_per_step = 2 * 1000 * (1 + u64::from(PATHS));
    assert!(
        crowded.work * 100 < crowded.steps * scan_per_step,
        "{crowded:?}"
    );
}

#[test]
fn a_qp_leaving_rts_leaves_the_timer_index() {
    // A's QP has data in flight (armed timers); moving it to ERR and
    // destroying B's must leave no timer behind on either NIC.
    let mut pair = Pair::new(3, PATHS, Channel::default());
    let wr = SendWr {
        wr_id: 1,
        op: SendOp::Write {
            remote_va: MEM_BASE,
            rkey: pair.b.mr.rkey,
        },
        sgl: Sge {
            addr: MEM_BASE,
            len: 1 << 20,
            lkey: pair.a.mr.lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream: 0,
    };
    pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    let mut buf = vec![0u8; 9000];
    while pair
        .a
        .nic
        .poll_transmit(0, &mut buf, &mut pair.a.mem)
        .is_some()
    {}
    assert!(pair.a.nic.poll_timeout().is_some(), "nothing armed");
    pair.a
        .nic
        .modify_qp(pair.a.qpn, QpTransition::Error)
        .unwrap();
    assert_eq!(pair.a.nic.poll_timeout(), None);
    let (b, qpn) = (&mut pair.b.nic, pair.b.qpn);
    b.destroy_qp(qpn).unwrap();
    // B's QP lingers: due at once to start its clock, then at its end.
    assert_eq!(b.poll_timeout(), Some(0));
    drain(b, 1_000);
    let end = b.poll_timeout().expect("linger timer");
    drain(b, end);
    assert_eq!(b.poll_timeout(), None);
    assert_eq!(b.lingering_qps(), 0);
}

fn drain(nic: &mut Nic, now: u64) {
    let mut mem = metaroce_firmware::VecMemory::new(MEM_BASE, 4096);
    nic.handle_timeout(now, &mut mem);
}
