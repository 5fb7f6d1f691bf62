//! What limits new packets: the path window and the peer's credit (spec §5.4,
//! §5.8).

use std::time::Instant;

use metaroce_proto::{Flags, Opcode};

use super::{ack_all, data, expect_wc, fill, post, write_op};
use crate::target::QpOptions;
use crate::{Ctx, QUIET_WAIT, REPLY_WAIT, Verdict, check};

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
        // No path timeout, before the first RTT sample or after, while the
        // case acknowledges as packets come.
        rto_initial_ns: 400_000_000,
        rto_min_ns: Some(400_000_000),
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
