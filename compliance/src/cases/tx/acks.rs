//! Forged ACKs the target must refuse or ignore: `conn_cum` beyond what was
//! sent, path PSNs never sent, a path it lacks (spec §5.5, §11).

use metaroce_proto::{AckRepr, Ext, Opcode};

use super::{ack_all, expect_wc, no_wc, one_write};
use crate::{Ctx, Verdict};

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
