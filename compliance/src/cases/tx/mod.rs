//! The target as a sender: packet contents, completion, retransmission, windows,
//! credit, RNR and NACK handling, forged ACKs, teardown (spec §5, §9.4).

mod acks;
mod disconnect;
mod nacks;
mod packets;
mod parity;
mod read;
mod recovery;
mod windows;

pub use acks::{
    tx_ack_for_unknown_path_ignored, tx_ack_for_unsent_path_psns_refused, tx_forged_ack_ignored,
    tx_multi_ack_accepted,
};
pub use disconnect::tx_disconnect_sent_once;
pub use nacks::{
    tx_forged_nack_ignored, tx_invalid_request_nack_is_fatal, tx_remote_access_nack_is_fatal,
    tx_remote_operational_nack_is_fatal, tx_rnr_retry_waits,
};
pub use packets::{tx_completion_needs_conn_cum, tx_send_numbering, tx_write_packets};
pub use parity::tx_parity_sent_when_due;
pub use read::{tx_read_round_trip, unexpected_read_response_dropped};
pub use recovery::{tx_retransmit_after_timeout_and_probe, tx_retransmit_on_sack_gap};
pub use windows::{tx_credit_respected, tx_path_window_respected};

use std::time::{Duration, Instant};

use metaroce_proto::Flags;

use crate::peer::{Conn, Rx};
use crate::target::{SendWork, WorkOp};
use crate::{Ctx, Fail, QUIET_WAIT, REPLY_WAIT, Verdict, check};

/// Offset of the target's local source data in its region.
const SRC: u64 = 32768;

/// Posts work request `wr_id`: `op` over `len` bytes of the source data at [`SRC`], on stream 0.
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

/// A WRITE to `va` at the suite's side, with key 0x5151.
fn write_op(va: u64) -> WorkOp {
    WorkOp::Write {
        remote_va: va,
        rkey: 0x5151,
    }
}

/// Writes `len` bytes of a pattern as the source data at [`SRC`] and returns them.
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

/// Waits for `n` completions, all with `status`.
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

/// Checks that no completion comes while the peer has not accepted the data.
fn no_wc(ctx: &mut Ctx, c: &Conn) -> Verdict {
    let wc = ctx.completions(c.qpn, 1, QUIET_WAIT);
    check!(
        wc.is_empty(),
        "completion before the peer accepted the data: {wc:?}"
    );
    Ok(())
}
