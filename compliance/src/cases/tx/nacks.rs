//! NACKs the target receives: RNR retried after its delay, the fatal reasons
//! failing the QP, a NACK for a conn PSN never sent ignored (spec §5.11, §5.12).

use std::time::{Duration, Instant};

use metaroce_proto::{Flags, NackReason};

use super::{ack_all, data, expect_wc, fill, no_wc, one_write, post, write_op};
use crate::target::{QpStateName, WorkOp};
use crate::{Ctx, Fail, REPLY_WAIT, Verdict, check};

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

/// A NACK with a fatal `reason` on the first of two WRITEs: that one completes
/// with `status`, the other is flushed, and the QP enters ERR.
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
