//! Forged ACKs the target must refuse or ignore: `conn_cum` beyond what was
//! sent, path PSNs never sent, a path it lacks (spec §5.5, §11); and the
//! MULTI_ACK a target that offers it must take (§3.11).

use metaroce_proto::{AckEntry, AckRepr, Ext, Flags, MultiAckRepr, Opcode};

use super::{ack_all, expect_wc, no_wc, one_write};
use crate::{Ctx, Fail, Verdict};

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

/// §3.11, §6.4 (v0.1.4): a target whose data packets carry MULTI_ACK_OK takes
/// a MULTI_ACK: one naming a path twice is malformed (`bad_format`) and
/// changes nothing; a well-formed one completes the WRITE it acknowledges.
pub fn tx_multi_ack_accepted(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let pk = one_write(ctx, &c)?;
    if !pk.repr.flags.contains(Flags::MULTI_ACK_OK) {
        return Err(Fail::Skip(
            "the target does not offer MULTI_ACK (optional, v0.1.4)".into(),
        ));
    }
    c.mark(&pk);
    let Ext::Ack(a) = c.ack(&mut ctx.peer, pk.repr.path, 64).repr.ext else {
        return Err(Fail::Error("the suite's ACK has no extension".into()));
    };
    let entry = AckEntry {
        path: pk.repr.path,
        ece: false,
        path_cum: a.path_cum,
        sack: a.sack,
        echo_ts: a.echo_ts,
        ce_count: a.ce_count,
        rx_count: a.rx_count,
    };
    let multi_ack = |ctx: &mut Ctx, entries: &[AckEntry]| {
        let head = MultiAckRepr {
            conn_cum: a.conn_cum,
            credit: a.credit,
            rate_hint: 0,
            count: entries.len() as u8,
        };
        let mut p = c.control(&mut ctx.peer, Opcode::MultiAck, Ext::MultiAck(head));
        for e in entries {
            let at = p.payload.len();
            p.payload.resize(at + e.wire_len(), 0);
            e.emit(&mut p.payload[at..])
                .map_err(|e| Fail::Error(format!("suite cannot emit its entry: {e}")))?;
        }
        ctx.send(&p)
    };
    multi_ack(ctx, &[entry, entry])?;
    no_wc(ctx, &c)?;
    ctx.expect_counter("bad_format", 1)?;
    multi_ack(ctx, &[entry])?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}
