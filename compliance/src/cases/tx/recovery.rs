//! Loss recovery: a SACK gap resends exactly the lost packet; a timeout
//! resends and probes the path (spec §5.5 to §5.7).

use metaroce_proto::{Flags, Opcode};

use super::{SRC, ack_all, data, expect_wc, fill, post, write_op};
use crate::target::{QpOptions, SendWork};
use crate::{Ctx, Fail, QUIET_WAIT, REPLY_WAIT, Verdict, check};

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
    // MULTI_ACK_OK (v0.1.4, §3.2) may be set besides ACK_REQ.
    check!(
        p.flags.difference(Flags::MULTI_ACK_OK) == Flags::ACK_REQ && p.stream == 0,
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
