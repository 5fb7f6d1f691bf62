//! The target as a sender: packet contents, completion, retransmission, windows,
//! credit, RNR and NACK handling, forged ACKs, teardown (spec §5, §9.4).

use std::time::{Duration, Instant};

use metaroce_proto::{AckRepr, Ext, Flags, NackReason, Opcode};

use crate::peer::{Conn, Rx};
use crate::target::{QpOptions, QpStateName, SendWork, WorkOp};
use crate::{Ctx, Fail, QUIET_WAIT, REPLY_WAIT, Verdict, check};

/// Offset of the target's local source data in its region.
const SRC: u64 = 32768;
fn post(ctx: &mut Ctx, c: &Conn, wr_id: u64, op: WorkOp, len: u32) -> Verdict {
    let w = SendWork {
        wr_id,
        op,
        mr: c.mr.handle,
        offset: SRC,
        len,
        stream: 0,
        solicited: false,
    };
    ctx.dev.post_send(c.qpn, &w).map_err(Fail::Skip)
}

fn write_op(va: u64) -> WorkOp {
    WorkOp::Write {
        remote_va: va,
        rkey: 0x5151,
    }
}

fn fill(ctx: &mut Ctx, c: &Conn, len: usize) -> Result<Vec<u8>, Fail> {
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    ctx.dev
        .write_mr(c.mr.handle, SRC, &data)
        .map_err(Fail::Error)?;
    Ok(data)
}

/// Waits for `n` data packets from the target to `c`; with `originals_only`,
/// retransmissions (which a slow set-up may cause) are left out.
fn collect(ctx: &mut Ctx, c: &Conn, n: usize, wait: Duration, originals_only: bool) -> Vec<Rx> {
    let my = c.my_qpn;
    let deadline = Instant::now() + wait;
    let mut out = Vec::new();
    while out.len() < n {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break;
        };
        let next = ctx.peer.wait(left, |rx| {
            rx.repr.opcode.is_message()
                && rx.repr.dst_qpn == my
                && !(originals_only && rx.repr.flags.contains(Flags::RETX))
        });
        match next {
            Some(rx) => out.push(rx),
            None => break,
        }
    }
    out
}

/// Waits for `n` data packets (originals and retransmissions).
fn data(ctx: &mut Ctx, c: &Conn, n: usize, wait: Duration) -> Vec<Rx> {
    collect(ctx, c, n, wait, false)
}

/// Waits for `n` original data packets.
fn originals(ctx: &mut Ctx, c: &Conn, n: usize, wait: Duration) -> Vec<Rx> {
    collect(ctx, c, n, wait, true)
}

/// Posts a 20-byte WRITE and returns its one data packet.
fn one_write(ctx: &mut Ctx, c: &Conn) -> Result<Rx, Fail> {
    fill(ctx, c, 20)?;
    post(ctx, c, 1, write_op(0), 20)?;
    let mut pk = data(ctx, c, 1, REPLY_WAIT);
    check!(pk.len() == 1, "no data packet for a posted WRITE");
    Ok(pk.remove(0))
}

/// Acknowledges everything marked in `c` on every path it has seen.
fn ack_all(ctx: &mut Ctx, c: &Conn, credit: u32) -> Verdict {
    let paths: Vec<u16> = c.marked.keys().copied().collect();
    for p in paths {
        let a = c.ack(&mut ctx.peer, p, credit);
        ctx.send(&a)?;
    }
    Ok(())
}

fn expect_wc(
    ctx: &mut Ctx,
    c: &Conn,
    n: usize,
    status: &str,
) -> Result<Vec<crate::target::Completion>, Fail> {
    let wc = ctx.completions(c.qpn, n, REPLY_WAIT);
    check!(
        wc.len() == n,
        "{} completions, expected {n}: {wc:?}",
        wc.len()
    );
    check!(
        wc.iter().all(|w| w.status == status),
        "completions {wc:?}, expected {status}"
    );
    Ok(wc)
}

fn no_wc(ctx: &mut Ctx, c: &Conn) -> Verdict {
    let wc = ctx.completions(c.qpn, 1, QUIET_WAIT);
    check!(
        wc.is_empty(),
        "completion before the peer accepted the data: {wc:?}"
    );
    Ok(())
}

/// §3.1, §3.4, §5.2: a multi-packet WRITE: opcodes, flags, offsets, addresses, PSNs, then completion.
pub fn tx_write_packets(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let mtu = ctx.dev.mtu() as usize;
    let len = 2 * mtu + 100;
    let src = fill(ctx, &c, len)?;
    post(ctx, &c, 1, write_op(0xABC0_0000), len as u32)?;
    let pk = originals(ctx, &c, 3, REPLY_WAIT);
    check!(
        pk.len() == 3,
        "{} packets for a WRITE of {len} bytes, expected 3",
        pk.len()
    );
    let mut got = vec![0u8; len];
    let mut per_path: std::collections::BTreeMap<u16, Vec<u32>> = Default::default();
    for (k, rx) in pk.iter().enumerate() {
        let r = rx.repr;
        let m = *rx.msg().expect("message");
        check!(r.opcode == Opcode::Write, "opcode {:?}", r.opcode);
        check!(
            r.dst_qpn == c.my_qpn && r.src_qpn == c.qpn,
            "QPNs {:#x}/{:#x}",
            r.dst_qpn,
            r.src_qpn
        );
        check!(
            r.conn_psn == c.target_psn.wrapping_add(k as u32),
            "conn PSN {:#x} of packet {k}",
            r.conn_psn
        );
        check!(
            m.msn == 0
                && m.msg_len == len as u32
                && m.rkey == 0x5151
                && m.imm == 0
                && m.recv_idx == 0,
            "{m:?}"
        );
        check!(
            m.offset as usize == k * mtu,
            "offset {} of packet {k}",
            m.offset
        );
        check!(
            m.remote_va == 0xABC0_0000 + u64::from(m.offset),
            "remote_va {:#x} at offset {}",
            m.remote_va,
            m.offset
        );
        check!(
            r.flags.contains(Flags::FIRST) == (k == 0),
            "FIRST on packet {k}"
        );
        check!(
            r.flags.contains(Flags::LAST) == (k == 2),
            "LAST on packet {k}"
        );
        check!(
            r.flags.contains(Flags::ACK_REQ) == (k == 2),
            "ACK_REQ on packet {k}"
        );
        check!(!r.flags.contains(Flags::RETX), "RETX on an original");
        check!(r.timestamp != 0, "timestamp 0");
        let off = m.offset as usize;
        got[off..off + rx.payload.len()].copy_from_slice(&rx.payload);
        per_path.entry(r.path).or_default().push(r.path_psn);
        c.mark(rx);
    }
    check!(got == src, "payload bytes differ from the source buffer");
    for (p, psns) in &per_path {
        check!(*p < 4, "path {p} beyond the QP's 4 paths");
        let want: Vec<u32> = (0..psns.len() as u32).collect();
        check!(
            *psns == want,
            "path {p}: path PSNs {psns:?}, expected consecutive from 0"
        );
    }
    no_wc(ctx, &c)?;
    ack_all(ctx, &c, 64)?;
    let wc = expect_wc(ctx, &c, 1, "SUCCESS")?;
    check!(wc[0].opcode == "WRITE" && wc[0].wr_id == 1, "{:?}", wc[0]);
    Ok(())
}

/// §5.10: a WRITE completes only when `conn_cum` passes it, not on a path-level acknowledgement.
pub fn tx_completion_needs_conn_cum(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    fill(ctx, &c, 100)?;
    post(ctx, &c, 5, write_op(0x1000), 100)?;
    let pk = data(ctx, &c, 1, REPLY_WAIT);
    check!(pk.len() == 1, "no data packet");
    c.marked
        .entry(pk[0].repr.path)
        .or_default()
        .insert(pk[0].repr.path_psn);
    // Path level only: path_cum covers it, conn_cum does not move (an RNR-refused packet looks like this).
    ack_all(ctx, &c, 64)?;
    no_wc(ctx, &c)?;
    c.mark(&pk[0]);
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// §3.4, §5.2: SEND, SEND_IMM and WRITE_IMM take consecutive MSNs and `recv_idx`, and carry the immediate.
pub fn tx_send_numbering(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    fill(ctx, &c, 16)?;
    post(ctx, &c, 1, WorkOp::Send, 16)?;
    post(ctx, &c, 2, WorkOp::SendImm { imm: 0xA1 }, 8)?;
    post(ctx, &c, 3, write_op(0x40), 4)?;
    post(
        ctx,
        &c,
        4,
        WorkOp::WriteImm {
            remote_va: 0x80,
            rkey: 7,
            imm: 0xB2,
        },
        4,
    )?;
    let mut pk = originals(ctx, &c, 4, REPLY_WAIT);
    check!(pk.len() == 4, "{} packets, expected 4", pk.len());
    pk.sort_by_key(|rx| rx.repr.conn_psn.wrapping_sub(c.target_psn));
    let ops: Vec<Opcode> = pk.iter().map(|rx| rx.repr.opcode).collect();
    check!(
        ops == [
            Opcode::Send,
            Opcode::SendImm,
            Opcode::Write,
            Opcode::WriteImm
        ],
        "opcodes {ops:?}: {:?}",
        pk.iter()
            .map(|rx| (
                rx.repr.conn_psn,
                rx.repr.path,
                rx.repr.path_psn,
                rx.repr.flags
            ))
            .collect::<Vec<_>>()
    );
    let m: Vec<_> = pk.iter().map(|rx| *rx.msg().expect("msg")).collect();
    check!(
        m.iter().map(|m| m.msn).eq(0..4),
        "MSNs {:?}",
        m.iter().map(|m| m.msn).collect::<Vec<_>>()
    );
    check!(
        m[0].recv_idx == 0 && m[1].recv_idx == 1 && m[2].recv_idx == 0 && m[3].recv_idx == 2,
        "recv_idx {m:?}"
    );
    check!(
        m[1].imm == 0xA1 && m[3].imm == 0xB2 && m[0].imm == 0,
        "immediates {m:?}"
    );
    check!(
        m[0].rkey == 0 && m[0].remote_va == 0 && m[3].rkey == 7 && m[3].remote_va == 0x80,
        "SEND/WRITE_IMM address fields {m:?}"
    );
    for rx in &pk {
        c.mark(rx);
    }
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 4, "SUCCESS").map(|_| ())
}

/// §5.5 step 1, §5.6: a SACK gap on a path → exactly the missing packet is resent with RETX, same conn PSN and fields, fresh path PSN.
pub fn tx_retransmit_on_sack_gap(ctx: &mut Ctx) -> Verdict {
    let opts = QpOptions {
        paths: 1,
        // No path timeout however late a loaded host lets the suite's ACK
        // arrive: only the SACK gap may make the target resend.
        rto_initial_ns: 2 * REPLY_WAIT.as_nanos() as u64,
        ..QpOptions::default()
    };
    let mut c = ctx.conn_with(opts, 0x10, 0x20)?;
    let src = fill(ctx, &c, 400)?;
    for i in 0..4u64 {
        let w = SendWork {
            wr_id: i,
            op: write_op(0x9000 + 100 * i),
            mr: c.mr.handle,
            offset: SRC + 100 * i,
            len: 100,
            stream: 0,
            solicited: false,
        };
        ctx.dev.post_send(c.qpn, &w).map_err(Fail::Skip)?;
    }
    let pk = data(ctx, &c, 4, REPLY_WAIT);
    check!(pk.len() == 4, "{} packets", pk.len());
    let lost = pk
        .iter()
        .find(|rx| rx.repr.path_psn == 1)
        .cloned()
        .ok_or_else(|| Fail::Fail("no path PSN 1".into()))?;
    for rx in pk.iter().filter(|rx| rx.repr.path_psn != 1) {
        c.mark(rx);
    }
    ack_all(ctx, &c, 64)?;
    let re = data(ctx, &c, 1, REPLY_WAIT);
    check!(re.len() == 1, "no retransmission after a SACK gap");
    let (r, o) = (re[0].repr, lost.repr);
    check!(
        r.conn_psn == o.conn_psn,
        "resent conn PSN {:#x}, lost {:#x}",
        r.conn_psn,
        o.conn_psn
    );
    check!(
        r.flags == o.flags | Flags::RETX,
        "resent flags {:?}, original {:?}",
        r.flags,
        o.flags
    );
    check!(
        r.path_psn == 4,
        "resent path PSN {}, expected the next one (4)",
        r.path_psn
    );
    check!(
        re[0].msg() == lost.msg() && re[0].payload == lost.payload,
        "resent fields or payload differ"
    );
    check!(
        re[0].payload == src[100..200],
        "resent payload is not the source data"
    );
    c.mark(&re[0]);
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 4, "SUCCESS")?;
    let extra = data(ctx, &c, 1, QUIET_WAIT);
    check!(
        extra.is_empty(),
        "packets resent that were acknowledged: {:?}",
        extra[0].repr
    );
    Ok(())
}

/// RTO of [`tx_retransmit_after_timeout_and_probe`]'s QP, ns.
const PROBE_CASE_RTO_NS: u64 = 2_000_000;

/// §5.7: a packet that is never acknowledged is resent (RETX, same conn PSN) after the path's RTO; the path is probed with a PROBE.
///
/// The first PROBE the suite sees need not be the first one sent: a PROBE
/// lost on its way (a UDP bridge that cannot bind its new source port) or
/// a second RTO on the target's clock (a model a loaded host stalled) makes
/// the next one the first to arrive. Each PROBE takes the path's next path
/// PSN and only an RTO after the one before goes out unanswered, so a
/// PROBE `k` path PSNs past the timed-out packet must carry a timestamp at
/// least `k` RTOs after that packet's (both on the target's clock).
pub fn tx_retransmit_after_timeout_and_probe(ctx: &mut Ctx) -> Verdict {
    let opts = QpOptions {
        paths: 2,
        rto_initial_ns: PROBE_CASE_RTO_NS,
        ..QpOptions::default()
    };
    let mut c = ctx.conn_with(opts, 0x10, 0x20)?;
    fill(ctx, &c, 10)?;
    post(ctx, &c, 1, write_op(0x100), 10)?;
    let first = data(ctx, &c, 1, REPLY_WAIT);
    check!(first.len() == 1, "no data packet");
    let o = first[0].repr;
    let re = data(ctx, &c, 1, REPLY_WAIT);
    check!(re.len() == 1, "no retransmission after the RTO");
    let r = re[0].repr;
    check!(
        r.conn_psn == o.conn_psn && r.flags.contains(Flags::RETX),
        "resent {r:?}"
    );
    let gap = r.timestamp.wrapping_sub(o.timestamp);
    check!(
        gap >= PROBE_CASE_RTO_NS,
        "resent {gap} ns after the original (sender clock), before the {PROBE_CASE_RTO_NS} ns RTO"
    );
    check!(
        r.path != o.path,
        "resent on path {} (path PSN {}), the path that timed out: it is quarantined and carries no data",
        r.path,
        r.path_psn
    );
    let my = c.my_qpn;
    let probe = ctx.peer.wait(REPLY_WAIT, |rx| {
        rx.repr.opcode == Opcode::Probe && rx.repr.dst_qpn == my
    });
    let probe = probe.ok_or_else(|| Fail::Fail("no PROBE on the timed-out path".into()))?;
    let p = probe.repr;
    check!(
        p.path == o.path,
        "PROBE on path {}, the RTO was on path {}",
        p.path,
        o.path
    );
    check!(
        p.flags == Flags::ACK_REQ && p.stream == 0,
        "PROBE header {p:?}"
    );
    check!(
        p.conn_psn == o.conn_psn.wrapping_add(1),
        "PROBE conn_psn {:#x}, expected the next conn PSN {:#x} (v0.1.3)",
        p.conn_psn,
        o.conn_psn.wrapping_add(1)
    );
    let k = p.path_psn.wrapping_sub(o.path_psn);
    let after = p.timestamp.wrapping_sub(o.timestamp);
    check!(
        k >= 1 && after >= u64::from(k) * PROBE_CASE_RTO_NS,
        "PROBE path PSN {} {after} ns after path PSN {} (sender clock): expected {} \
         (or one more per RTO of {PROBE_CASE_RTO_NS} ns since, PROBEs that went unanswered)",
        p.path_psn,
        o.path_psn,
        o.path_psn.wrapping_add(1)
    );
    c.mark(&re[0]);
    c.mark(&probe);
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// §5.8: a sender never sends path PSN x while a PSN before x − 255 is unresolved.
pub fn tx_path_window_respected(ctx: &mut Ctx) -> Verdict {
    let opts = QpOptions {
        paths: 1,
        // No path timeout (the one path quarantined, nothing more sent)
        // while the case waits for a slow target's 256 packets.
        rto_initial_ns: 2 * REPLY_WAIT.as_nanos() as u64,
        ..QpOptions::default()
    };
    let c = ctx.conn_with(opts, 0x10, 0x20)?;
    // 0-byte WRITEs never fill a congestion window: only the path window stops them.
    for i in 0..300 {
        post(ctx, &c, i, write_op(0x100), 0)?;
    }
    // The window's 256, then any beyond it.
    let mut pk = data(ctx, &c, 256, REPLY_WAIT);
    pk.extend(data(ctx, &c, 300 - 256, QUIET_WAIT));
    let max = pk.iter().map(|rx| rx.repr.path_psn).max().unwrap_or(0);
    check!(
        max < 256,
        "path PSN {max} sent while path PSN 0 was unresolved"
    );
    check!(
        pk.len() == 256,
        "{} packets before the window closed, expected 256; QP {:?}; completions {:?}",
        pk.len(),
        ctx.dev.qp_state(c.qpn),
        ctx.dev.poll_completions(c.qpn).first()
    );
    Ok(())
}

/// §5.4: new packets stay below `conn_cum + credit`.
pub fn tx_credit_respected(ctx: &mut Ctx) -> Verdict {
    let opts = QpOptions {
        paths: 1,
        rto_initial_ns: 400_000_000,
        ..QpOptions::default()
    };
    let mut c = ctx.conn_with(opts, 0x10, 0x20)?;
    fill(ctx, &c, 10)?;
    post(ctx, &c, 0, write_op(0), 10)?;
    let pk = data(ctx, &c, 1, REPLY_WAIT);
    check!(pk.len() == 1, "no data");
    c.mark(&pk[0]);
    ack_all(ctx, &c, 2)?;
    // Its completion shows the target took the ACK, and with it credit 2.
    expect_wc(ctx, &c, 1, "SUCCESS")?;
    for i in 1..=6 {
        post(ctx, &c, i, write_op(0), 10)?;
    }
    // Acknowledge every packet at the path level at once (so no path times out)
    // while conn_cum, and with it the credit limit, stays where it is.
    let limit = c.conn_cum().wrapping_add(2);
    let mut new = Vec::new();
    // Until the two the credit allows arrived, then any beyond them.
    let mut deadline = Instant::now() + REPLY_WAIT;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let my = c.my_qpn;
        let Some(rx) = ctx.peer.wait(left, |rx| {
            rx.repr.dst_qpn == my && rx.repr.opcode != Opcode::Ack
        }) else {
            break;
        };
        c.marked
            .entry(rx.repr.path)
            .or_default()
            .insert(rx.repr.path_psn);
        ack_all(ctx, &c, 2)?;
        if rx.repr.opcode.is_message() && !rx.repr.flags.contains(Flags::RETX) {
            new.push(rx);
            if new.len() == 2 {
                deadline = Instant::now() + QUIET_WAIT;
            }
        }
    }
    let over: Vec<u32> = new
        .iter()
        .map(|rx| rx.repr.conn_psn)
        .filter(|&p| p.wrapping_sub(limit) < 1 << 31)
        .collect();
    check!(
        over.is_empty(),
        "conn PSNs {over:x?} sent at or beyond conn_cum + credit = {limit:#x}"
    );
    check!(
        new.len() == 2,
        "{} new packets with credit 2, expected 2",
        new.len()
    );
    for rx in &new {
        c.mark(rx);
    }
    ack_all(ctx, &c, 64)?;
    let rest = data(ctx, &c, 4, REPLY_WAIT);
    check!(
        rest.len() == 4,
        "credit growing back released {} packets, expected 4",
        rest.len()
    );
    Ok(())
}

/// §5.11, §3.6: an RNR NACK makes the sender resend that packet (RETX, same conn PSN) after `detail` µs.
pub fn tx_rnr_retry_waits(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    fill(ctx, &c, 20)?;
    post(ctx, &c, 1, WorkOp::Send, 20)?;
    let pk = data(ctx, &c, 1, REPLY_WAIT);
    check!(pk.len() == 1, "no SEND");
    let o = pk[0].repr;
    c.marked.entry(o.path).or_default().insert(o.path_psn);
    ack_all(ctx, &c, 64)?;
    let nack = c.nack(
        &mut ctx.peer,
        NackReason::ReceiverNotReady,
        o.conn_psn,
        5000,
    );
    let t = Instant::now();
    ctx.send(&nack)?;
    let re = data(ctx, &c, 1, REPLY_WAIT);
    check!(re.len() == 1, "no retry after RNR");
    let r = re[0].repr;
    check!(
        re[0].at.duration_since(t) >= Duration::from_micros(4500),
        "retried {:?} after the NACK, before 5000 µs",
        re[0].at.duration_since(t)
    );
    check!(
        r.conn_psn == o.conn_psn && r.flags.contains(Flags::RETX),
        "retry {r:?}"
    );
    c.mark(&re[0]);
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

fn fatal_nack(ctx: &mut Ctx, reason: NackReason, status: &str) -> Verdict {
    let c = ctx.conn()?;
    fill(ctx, &c, 20)?;
    post(ctx, &c, 1, write_op(0), 20)?;
    post(ctx, &c, 2, write_op(0), 20)?;
    // Packets of different messages may arrive in any order (another path, or a
    // resend of a lost first one): the NACK goes to the first message's packet, the
    // earliest conn PSN of the two.
    let pk = data(ctx, &c, 2, REPLY_WAIT);
    let first = pk
        .iter()
        .map(|p| p.repr.conn_psn)
        .min_by_key(|psn| psn.wrapping_sub(c.target_psn))
        .ok_or_else(|| Fail::Fail("no data".into()))?;
    let nack = c.nack(&mut ctx.peer, reason, first, 0);
    ctx.send(&nack)?;
    let wc = ctx.completions(c.qpn, 2, REPLY_WAIT);
    check!(
        wc.len() == 2,
        "{} completions after a fatal NACK: {wc:?}",
        wc.len()
    );
    check!(
        wc[0].wr_id == 1 && wc[0].status == status,
        "first completion {:?}, expected {status}",
        wc[0]
    );
    check!(
        wc[1].status == "WR_FLUSH_ERR",
        "second completion {:?}, expected WR_FLUSH_ERR",
        wc[1]
    );
    let st = ctx.dev.qp_state(c.qpn);
    check!(
        st == Some(QpStateName::Err),
        "QP state {st:?} after a fatal NACK"
    );
    Ok(())
}

/// §5.11, §5.12: NACK REMOTE_ACCESS fails the work request with REM_ACCESS_ERR and the QP enters ERR, flushing the rest.
pub fn tx_remote_access_nack_is_fatal(ctx: &mut Ctx) -> Verdict {
    fatal_nack(ctx, NackReason::RemoteAccess, "REM_ACCESS_ERR")
}

/// §5.11: NACK INVALID_REQUEST → REM_INV_REQ_ERR, QP → ERR.
pub fn tx_invalid_request_nack_is_fatal(ctx: &mut Ctx) -> Verdict {
    fatal_nack(ctx, NackReason::InvalidRequest, "REM_INV_REQ_ERR")
}

/// §5.11: NACK REMOTE_OPERATIONAL → REM_OP_ERR, QP → ERR.
pub fn tx_remote_operational_nack_is_fatal(ctx: &mut Ctx) -> Verdict {
    fatal_nack(ctx, NackReason::RemoteOperational, "REM_OP_ERR")
}

/// §5.11: a NACK matching no unaccepted conn PSN is ignored.
pub fn tx_forged_nack_ignored(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let pk = [one_write(ctx, &c)?];
    let nack = c.nack(
        &mut ctx.peer,
        NackReason::RemoteAccess,
        pk[0].repr.conn_psn.wrapping_add(100),
        0,
    );
    ctx.send(&nack)?;
    no_wc(ctx, &c)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(
        st == Some(QpStateName::Rts),
        "QP state {st:?} after a NACK for a conn PSN never sent"
    );
    c.mark(&pk[0]);
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// §5.5 step 7, §11: an ACK whose `conn_cum` is beyond what was sent changes nothing.
pub fn tx_forged_ack_ignored(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let pk = [one_write(ctx, &c)?];
    let forged = AckRepr {
        conn_cum: c.target_psn.wrapping_add(1000),
        credit: 64,
        ..AckRepr::default()
    };
    let a = c
        .control(&mut ctx.peer, Opcode::Ack, Ext::Ack(forged))
        .with(|r| r.path = 63);
    ctx.send(&a)?;
    let a = c
        .control(&mut ctx.peer, Opcode::Ack, Ext::Ack(forged))
        .with(|r| r.path = pk[0].repr.path);
    ctx.send(&a)?;
    no_wc(ctx, &c)?;
    c.mark(&pk[0]);
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// §5.5 step 0: an ACK that reports path PSNs never sent is refused whole,
/// even with a true `conn_cum`.
pub fn tx_ack_for_unsent_path_psns_refused(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let pk = [one_write(ctx, &c)?];
    c.mark(&pk[0]);
    let path = pk[0].repr.path;
    let mut forged = c.ack(&mut ctx.peer, path, 64);
    if let Ext::Ack(a) = &mut forged.repr.ext {
        a.path_cum = pk[0].repr.path_psn.wrapping_add(10);
    }
    ctx.send(&forged)?;
    no_wc(ctx, &c)?;
    ctx.expect_counter("bad_ack", 1)?;
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// §5.5: an ACK for a path the sender does not have is ignored, conn_cum included.
pub fn tx_ack_for_unknown_path_ignored(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let pk = [one_write(ctx, &c)?];
    c.mark(&pk[0]);
    let a = c
        .ack(&mut ctx.peer, pk[0].repr.path, 64)
        .with(|r| r.path = 40);
    ctx.send(&a)?;
    no_wc(ctx, &c)?;
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// §9.4: an application disconnect sends one DISCONNECT (with the connection's
/// current PSNs, other fields 0) and the QP enters ERR.
pub fn tx_disconnect_sent_once(ctx: &mut Ctx) -> Verdict {
    let c = ctx.conn()?;
    ctx.dev.disconnect(c.qpn).map_err(Fail::Skip)?;
    let my = c.my_qpn;
    let d = ctx
        .peer
        .wait(REPLY_WAIT, |rx| {
            rx.repr.opcode == Opcode::Disconnect && rx.repr.dst_qpn == my
        })
        .ok_or_else(|| Fail::Fail("no DISCONNECT".into()))?;
    let r = d.repr;
    check!(r.src_qpn == c.qpn, "DISCONNECT src_qpn {:#x}", r.src_qpn);
    check!(
        r.stream == 0
            && r.path == 0
            && r.conn_psn == c.target_psn
            && r.path_psn == 0
            && r.flags.is_empty(),
        "DISCONNECT base header {r:?} (conn_psn: the target's next send PSN {:#x})",
        c.target_psn
    );
    let cm = metaroce_proto::CmRepr {
        initial_psn: c.next_conn_psn,
        ..Default::default()
    };
    check!(
        r.ext == Ext::Cm(cm),
        "DISCONNECT CM fields {:?} (want the target's conn_cum {:#x})",
        r.ext,
        c.next_conn_psn
    );
    ctx.silence(QUIET_WAIT)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(st == Some(QpStateName::Err), "QP state {st:?}");
    Ok(())
}

/// §3.4, §5.10, §6.8: a READ: the READ_REQ's fields, and completion once the responses are placed.
pub fn tx_read_round_trip(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let len = 5000u32;
    post(
        ctx,
        &c,
        9,
        WorkOp::Read {
            remote_va: 0x7777_0000,
            rkey: 0x99,
        },
        len,
    )?;
    let pk = data(ctx, &c, 1, REPLY_WAIT);
    check!(
        pk.len() == 1 && pk[0].repr.opcode == Opcode::ReadReq,
        "no READ_REQ"
    );
    let r = pk[0].repr;
    let m = *pk[0].msg().expect("msg");
    check!(
        m.msg_len == len && m.remote_va == 0x7777_0000 && m.rkey == 0x99 && m.offset == 0,
        "READ_REQ {m:?}"
    );
    check!(pk[0].payload.is_empty(), "READ_REQ with payload");
    check!(
        r.flags
            .contains(Flags::FIRST | Flags::LAST | Flags::ACK_REQ),
        "READ_REQ flags {:?}",
        r.flags
    );
    c.mark(&pk[0]);
    ack_all(ctx, &c, 64)?;
    let body: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
    let mtu = ctx.dev.mtu();
    let mut off = 0u32;
    let mut path = 0;
    while off < len {
        let n = mtu.min(len - off);
        let mm = metaroce_proto::MsgRepr {
            offset: off,
            remote_va: 0,
            ..m
        };
        let p = c
            .data(
                &mut ctx.peer,
                Opcode::ReadResp,
                path,
                mm,
                &body[off as usize..(off + n) as usize],
            )
            .with(|r| {
                r.flags = Flags::empty();
                if off == 0 {
                    r.flags |= Flags::FIRST;
                }
                if off + n == len {
                    r.flags |= Flags::LAST | Flags::ACK_REQ;
                }
            });
        ctx.send(&p)?;
        off += n;
        path += 1;
    }
    let wc = expect_wc(ctx, &c, 1, "SUCCESS")?;
    check!(wc[0].opcode == "READ" && wc[0].wr_id == 9, "{:?}", wc[0]);
    let placed = ctx.mem(&c, SRC, len as usize)?;
    check!(
        placed == body,
        "READ response not placed in the local buffer"
    );
    Ok(())
}

/// §6.2 step 16a, §6.8: a READ_RESP matching no outstanding READ is dropped
/// before it is marked or takes its conn PSN: the real packet with that conn
/// PSN is still accepted.
pub fn unexpected_read_response_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let m = metaroce_proto::MsgRepr {
        msn: 77,
        msg_len: 4,
        ..Default::default()
    };
    let p = c.data(&mut ctx.peer, Opcode::ReadResp, 2, m, b"junk");
    ctx.send(&p)?;
    ctx.silence(QUIET_WAIT)?;
    check!(
        ctx.mem(&c, 0, 4)? == [0; 4],
        "an unexpected READ_RESP was placed"
    );
    let st = ctx.dev.qp_state(c.qpn);
    check!(st == Some(QpStateName::Rts), "QP state {st:?}");
    ctx.expect_counter("unexpected_response", 1)?;
    // The forged response did not consume its conn PSN: a WRITE with it lands.
    c.next_conn_psn = p.repr.conn_psn;
    let w = c.write(&mut ctx.peer, 2, 0, b"real");
    let (_, a) = ctx.send_and_ack(&c, &w)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "the conn PSN of an unmatched READ_RESP was taken (conn_cum {:#x})",
        a.conn_cum
    );
    check!(ctx.mem(&c, 0, 4)? == b"real", "the WRITE was not placed");
    Ok(())
}
