//! Atomics: fetch-and-add and compare-and-swap execute exactly once on a lossy,
//! duplicating multipath channel, answered with the value found, also by a
//! responder in RTR; the rules that refuse them.

mod support;

use metaroce_firmware::{
    Access, Completion, QpState, SendOp, SendWr, Sge, VerbsError, WcOpcode, WcStatus,
};
use support::{Channel, MEM_BASE, Pair, completions};

/// A signaled atomic whose found value lands at `local` (8 bytes) of A.
fn atomic(wr_id: u64, op: SendOp, local: u64, lkey: u32) -> SendWr {
    SendWr {
        wr_id,
        op,
        sgl: Sge {
            addr: local,
            len: 8,
            lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream: 0,
    }
}

fn word(mem: &metaroce_firmware::VecMemory, addr: u64) -> u64 {
    u64::from_ne_bytes(mem.slice(addr, 8).try_into().unwrap())
}

fn set_word(mem: &mut metaroce_firmware::VecMemory, addr: u64, v: u64) {
    mem.slice_mut(addr, 8).copy_from_slice(&v.to_ne_bytes());
}

/// Runs until A has `n` completions; returns them.
fn wait_a(pair: &mut Pair, n: usize, limit_ns: u64) -> Vec<Completion> {
    let mut done = Vec::new();
    let ok = pair.run_until(pair.now + limit_ns, |p| {
        done.extend(completions(p.events().0));
        done.len() >= n
    });
    assert!(ok, "{} of {n} completions: {done:?}", done.len());
    done
}

#[test]
fn fetch_adds_from_two_qps_execute_exactly_once_at_10_percent_loss_with_duplication() {
    let channel = Channel {
        loss: 0.1,
        duplicate: 0.1,
        ..Channel::default()
    };
    let mut pair = Pair::new(71, 8, channel);
    let extra = (
        pair.a.nic.create_qp(pair.a.pd, None).unwrap(),
        pair.b.nic.create_qp(pair.b.pd, None).unwrap(),
    );
    pair.connect_qps(extra.0, extra.1);
    let (lkey, rkey) = (pair.a.mr.lkey, pair.b.mr.rkey);
    let counter = MEM_BASE + 0x40;
    set_word(&mut pair.b.mem, counter, 1000);
    let (per_qp, add) = (200u64, 3u64);
    for i in 0..per_qp {
        for (k, qpn) in [pair.a.qpn, extra.0].into_iter().enumerate() {
            let id = 2 * i + k as u64;
            let op = SendOp::FetchAdd {
                remote_va: counter,
                rkey,
                add,
            };
            let wr = atomic(id, op, MEM_BASE + 0x1000 + id * 8, lkey);
            pair.a.nic.post_send(qpn, wr).unwrap();
        }
    }
    let done = wait_a(&mut pair, 2 * per_qp as usize, 5_000_000_000);
    assert!(pair.dropped_by_channel > 0, "the channel dropped nothing");
    assert!(pair.b.nic.stats().duplicates > 0, "no duplicate reached B");
    assert!(
        done.iter()
            .all(|c| (c.status, c.opcode, c.byte_len) == (WcStatus::Success, WcOpcode::FetchAdd, 8)),
        "{done:?}"
    );
    assert_eq!(
        word(&pair.b.mem, counter),
        1000 + 2 * per_qp * add,
        "executed once each"
    );
    // Each found a different value: 1000, 1003, ... in some interleaving.
    let mut found: Vec<u64> = (0..2 * per_qp)
        .map(|id| word(&pair.a.mem, MEM_BASE + 0x1000 + id * 8))
        .collect();
    found.sort_unstable();
    let want: Vec<u64> = (0..2 * per_qp).map(|k| 1000 + k * add).collect();
    assert_eq!(found, want);
}

#[test]
fn compare_and_swap_replaces_only_a_match_and_returns_what_it_found() {
    let mut pair = Pair::new(72, 4, Channel::default());
    let (lkey, rkey) = (pair.a.mr.lkey, pair.b.mr.rkey);
    let target = MEM_BASE + 0x80;
    set_word(&mut pair.b.mem, target, 7);
    let cas = |compare, swap| SendOp::CompareSwap {
        remote_va: target,
        rkey,
        compare,
        swap,
    };
    let local = MEM_BASE + 0x2000;
    pair.a
        .nic
        .post_send(pair.a.qpn, atomic(1, cas(5, 9), local, lkey))
        .unwrap();
    pair.a
        .nic
        .post_send(pair.a.qpn, atomic(2, cas(7, 11), local + 8, lkey))
        .unwrap();
    let done = wait_a(&mut pair, 2, 100_000_000);
    assert!(
        done.iter()
            .all(|c| (c.status, c.opcode) == (WcStatus::Success, WcOpcode::CompSwap))
    );
    assert_eq!(word(&pair.a.mem, local), 7, "no match: found 7, left alone");
    assert_eq!(word(&pair.a.mem, local + 8), 7, "match: found 7, swapped");
    assert_eq!(word(&pair.b.mem, target), 11);
}

#[test]
fn a_responder_in_rtr_answers_atomics() {
    let mut pair = Pair::responder_in_rtr(73, 4, Channel::default());
    let (lkey, rkey) = (pair.a.mr.lkey, pair.b.mr.rkey);
    let op = SendOp::FetchAdd {
        remote_va: MEM_BASE,
        rkey,
        add: 5,
    };
    for id in 0..3 {
        let wr = atomic(id, op, MEM_BASE + 8 * id, lkey);
        pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    }
    let done = wait_a(&mut pair, 3, 100_000_000);
    assert!(done.iter().all(|c| c.status == WcStatus::Success));
    assert_eq!(word(&pair.b.mem, MEM_BASE), 15);
    assert_eq!(pair.b.nic.qp_state(pair.b.qpn), Some(QpState::Rtr));
}

#[test]
fn atomics_are_refused_on_bad_buffers_alignment_and_rights() {
    let mut pair = Pair::new(74, 4, Channel::default());
    let (lkey, rkey) = (pair.a.mr.lkey, pair.b.mr.rkey);
    let fadd = |remote_va, rkey| SendOp::FetchAdd {
        remote_va,
        rkey,
        add: 1,
    };
    // The local buffer must be 8 bytes: refused at post, nothing changes.
    let mut wr = atomic(1, fadd(MEM_BASE, rkey), MEM_BASE, lkey);
    wr.sgl = Sge {
        addr: MEM_BASE,
        len: 4,
        lkey,
    }
    .into();
    assert_eq!(
        pair.a.nic.post_send(pair.a.qpn, wr),
        Err(VerbsError::InvalidArgument)
    );
    // A region without remote atomic access: REM_ACCESS_ERR.
    let pd = pair.b.pd;
    let plain = pair.b.nic.register_mr(
        pd,
        MEM_BASE,
        4096,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE,
    );
    let plain = plain.unwrap();
    let wr = atomic(2, fadd(MEM_BASE, plain.rkey), MEM_BASE, lkey);
    pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    let done = wait_a(&mut pair, 1, 100_000_000);
    assert_eq!(done[0].status, WcStatus::RemAccessErr);
    // A misaligned target: REM_INV_REQ_ERR.
    let mut pair = Pair::new(75, 4, Channel::default());
    let wr = atomic(
        3,
        fadd(MEM_BASE + 4, pair.b.mr.rkey),
        MEM_BASE,
        pair.a.mr.lkey,
    );
    pair.a.nic.post_send(pair.a.qpn, wr).unwrap();
    let done = wait_a(&mut pair, 1, 100_000_000);
    assert_eq!(done[0].status, WcStatus::RemInvReqErr);
    assert_eq!(word(&pair.b.mem, MEM_BASE), 0, "nothing executed");
}

#[test]
fn a_nic_without_atomics_refuses_them_and_drops_their_opcodes_as_unknown() {
    use metaroce_firmware::{Nic, NicConfig, QpTransition, RemoteEnd, RxMeta};
    use metaroce_proto::{Ext, Flags, MsgRepr, Opcode, Repr};
    let mut nic = Nic::new(NicConfig {
        atomics: false,
        ..NicConfig::default()
    });
    let pd = nic.alloc_pd();
    let mr = nic
        .register_mr(
            pd,
            MEM_BASE,
            4096,
            Access::LOCAL_WRITE | Access::REMOTE_ATOMIC,
        )
        .unwrap();
    let qpn = nic.create_qp(pd, None).unwrap();
    let op = SendOp::FetchAdd {
        remote_va: 0x1000,
        rkey: 1,
        add: 1,
    };
    let peer = RemoteEnd {
        qpn: 9,
        ip: "10.0.0.9".parse().unwrap(),
        udp_port: 4798,
        initial_psn: 0,
    };
    nic.modify_qp(qpn, QpTransition::Init).unwrap();
    nic.modify_qp(qpn, QpTransition::Rtr(peer)).unwrap();
    let rts = QpTransition::Rts {
        initial_psn: 0,
        retry_cnt: 7,
        rnr_retry: 7,
        timeout_ns: 1_000_000,
    };
    nic.modify_qp(qpn, rts).unwrap();
    assert_eq!(
        nic.post_send(qpn, atomic(1, op, MEM_BASE, mr.lkey)),
        Err(VerbsError::InvalidArgument)
    );
    // A peer's atomic that would be accepted with atomics is an unknown opcode.
    assert_eq!(nic.drops().bad_opcode, 0);
    let repr = Repr {
        opcode: Opcode::FetchAdd,
        flags: Flags::FIRST | Flags::LAST,
        dst_qpn: qpn,
        src_qpn: 9,
        stream: 0,
        path: 0,
        conn_psn: 0,
        path_psn: 0,
        timestamp: 1,
        ext: Ext::Msg(MsgRepr {
            msg_len: 8,
            remote_va: MEM_BASE,
            rkey: mr.rkey,
            ..MsgRepr::default()
        }),
    };
    let meta = RxMeta {
        src_ip: "10.0.0.9".parse().unwrap(),
        src_port: 50000,
        dst_ip: nic.config().local_ip,
        dst_port: nic.config().udp_port,
        ecn_ce: false,
    };
    let bytes = support::datagram(&repr, &1u64.to_be_bytes(), &meta);
    let mut mem = metaroce_firmware::VecMemory::new(MEM_BASE, 4096);
    nic.handle_datagram(0, &bytes, meta, &mut mem);
    assert_eq!(nic.drops().bad_opcode, 1);
}
