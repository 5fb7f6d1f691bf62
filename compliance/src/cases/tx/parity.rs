//! The target as a PARITY sender (spec §3.12, §5.6, v0.1.5): a PARITY only
//! while the peer's latest ACK carries PARITY_OK and after the connection
//! resent something, and then over a group of a WRITE's packets, with the
//! XOR of their payloads.

use metaroce_proto::{Flags, Opcode};

use super::{ack_all, expect_wc, fill, originals, post, write_op};
use crate::peer::{Conn, Rx, xor_parity};
use crate::target::QpOptions;
use crate::{Ctx, Fail, QUIET_WAIT, REPLY_WAIT, Verdict, check};

/// Packets of each WRITE of [`tx_parity_sent_when_due`]: a short message,
/// one group whatever the target's group size (at least 4).
const PACKETS: usize = 4;

/// §3.12, §5.6 (v0.1.5): a target sends no PARITY while its connection has
/// resent nothing, nor while the suite's latest ACK lacks PARITY_OK; once
/// both hold, a short WRITE is followed by a PARITY over a group of its
/// packets: conn PSN, offset and address of the group's first packet,
/// `recv_idx` = the group's packet count, a path PSN of its own, and the
/// XOR of the group's payloads (checked against the source data). Skipped
/// when the target sends no PARITY at all (optional, Policy).
pub fn tx_parity_sent_when_due(ctx: &mut Ctx) -> Verdict {
    let opts = QpOptions {
        paths: 1,
        // Only the suite's SACK gap may make the target resend (no path
        // timeout however slow a loaded host makes the suite's ACKs, before
        // the first RTT sample or after: a timeout would quarantine the
        // only path, which then carries PROBEs this case does not answer).
        rto_initial_ns: 2 * REPLY_WAIT.as_nanos() as u64,
        rto_min_ns: Some(2 * REPLY_WAIT.as_nanos() as u64),
        ..QpOptions::default()
    };
    let mut c = ctx.conn_with(opts, 0x10, 0x20)?;
    let mtu = ctx.dev.mtu() as usize;
    let len = (PACKETS - 1) * mtu + 100;
    let src = fill(ctx, &c, len)?;
    // A WRITE acknowledged with PARITY_OK: the peer rebuilds, but nothing
    // was resent yet. (Each WRITE is acknowledged at once, so no path
    // timeout makes the target resend or probe; a PARITY it sent would be
    // on its way before the ACK, and found after.)
    let pk = write(ctx, &c, 1, len)?;
    acknowledge(ctx, &mut c, &pk, true)?;
    expect_wc(ctx, &c, 1, "SUCCESS")?;
    // The next WRITE still gets no PARITY; the suite loses its second
    // packet, which the target resends.
    let pk = write(ctx, &c, 2, len)?;
    for rx in pk
        .iter()
        .filter(|rx| rx.repr.conn_psn != pk[1].repr.conn_psn)
    {
        c.mark(rx);
    }
    ack_all_with(ctx, &c, true)?;
    let re = resent(ctx, &c, pk[1].repr.conn_psn)?;
    acknowledge(ctx, &mut c, &[re], true)?;
    expect_wc(ctx, &c, 1, "SUCCESS")?;
    no_parity(ctx, &c, "before the connection resent anything")?;
    // The latest ACK without PARITY_OK: no PARITY.
    ack_all_with(ctx, &c, false)?;
    let pk = write(ctx, &c, 3, len)?;
    acknowledge(ctx, &mut c, &pk, false)?;
    expect_wc(ctx, &c, 1, "SUCCESS")?;
    no_parity(ctx, &c, "while the suite's latest ACK lacks PARITY_OK")?;
    // PARITY_OK again, after a resend: the PARITY is due.
    ack_all_with(ctx, &c, true)?;
    let pk = write(ctx, &c, 4, len)?;
    let my = c.my_qpn;
    let Some(parity) = ctx.peer.wait(REPLY_WAIT, |rx| {
        rx.repr.opcode == Opcode::Parity && rx.repr.dst_qpn == my
    }) else {
        return Err(Fail::Skip(
            "the target sends no PARITY (optional, v0.1.5)".into(),
        ));
    };
    check_parity(&parity, &pk, &src, 4 << 16)?;
    acknowledge(ctx, &mut c, &pk, true)?;
    c.mark(&parity);
    ack_all_with(ctx, &c, true)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// Posts WRITE `wr_id` of `len` bytes of the source data (to the suite's
/// address `wr_id << 16`) and returns its [`PACKETS`] original packets.
fn write(ctx: &mut Ctx, c: &Conn, wr_id: u64, len: usize) -> Result<Vec<Rx>, Fail> {
    post(ctx, c, wr_id, write_op(wr_id << 16), len as u32)?;
    let mut pk = originals(ctx, c, PACKETS, REPLY_WAIT);
    // In conn PSN order (datagrams from several sockets may overtake).
    pk.sort_by_key(|rx| rx.repr.conn_psn.wrapping_sub(c.target_psn));
    check!(
        pk.len() == PACKETS,
        "{} packets for WRITE {wr_id} of {len} bytes, expected {PACKETS}",
        pk.len()
    );
    Ok(pk)
}

/// The retransmission of the packet the suite lost, conn PSN `lost` (not
/// a resend of another that a late ACK made the target's RACK declare lost).
fn resent(ctx: &mut Ctx, c: &Conn, lost: u32) -> Result<Rx, Fail> {
    let my = c.my_qpn;
    ctx.peer
        .wait(REPLY_WAIT, |rx| {
            rx.repr.opcode == Opcode::Write
                && rx.repr.dst_qpn == my
                && rx.repr.flags.contains(Flags::RETX)
                && rx.repr.conn_psn == lost
        })
        .ok_or_else(|| Fail::Fail("no retransmission after a SACK gap".into()))
}

/// Marks `pk` received and acknowledges every path, with PARITY_OK if `ok`.
fn acknowledge(ctx: &mut Ctx, c: &mut Conn, pk: &[Rx], ok: bool) -> Verdict {
    for rx in pk {
        c.mark(rx);
    }
    ack_all_with(ctx, c, ok)
}

/// Acknowledges everything marked on every path, with PARITY_OK if `ok`.
fn ack_all_with(ctx: &mut Ctx, c: &Conn, ok: bool) -> Verdict {
    if !ok {
        return ack_all(ctx, c, 64);
    }
    let paths: Vec<u16> = c.marked.keys().copied().collect();
    for p in paths {
        let a = c
            .ack(&mut ctx.peer, p, 64)
            .with(|r| r.flags |= Flags::PARITY_OK);
        ctx.send(&a)?;
    }
    Ok(())
}

/// Fails if a PARITY to `c` arrives within [`QUIET_WAIT`] (or is stashed).
fn no_parity(ctx: &mut Ctx, c: &Conn, when: &str) -> Verdict {
    let my = c.my_qpn;
    let got = ctx.peer.gather(QUIET_WAIT, |rx| {
        rx.repr.opcode == Opcode::Parity && rx.repr.dst_qpn == my
    });
    check!(
        got.is_empty(),
        "a PARITY {when}: {:?}",
        got.first().map(|rx| rx.repr)
    );
    Ok(())
}

/// Checks a PARITY against the message's packets `pk` (in order) and its
/// source data `src`, written at the suite's address `va`.
fn check_parity(parity: &Rx, pk: &[Rx], src: &[u8], va: u64) -> Verdict {
    let r = parity.repr;
    let m = *parity
        .msg()
        .ok_or_else(|| Fail::Fail("PARITY without its MSG extension".into()))?;
    let step = parity.payload.len();
    let count = m.recv_idx as usize;
    check!(
        (2..=64).contains(&count) && step > 0,
        "PARITY over {count} packets of {step} bytes"
    );
    let first = pk.iter().position(|rx| rx.repr.conn_psn == r.conn_psn);
    let Some(first) = first else {
        return Err(Fail::Fail(format!(
            "PARITY conn PSN {:#x} is none of the message's",
            r.conn_psn
        )));
    };
    let group = pk.get(first..first + count).ok_or_else(|| {
        Fail::Fail(format!(
            "PARITY group of {count} from packet {first} reaches past the message"
        ))
    })?;
    let m0 = *pk[0].msg().expect("data packet");
    let g0 = *group[0].msg().expect("data packet");
    check!(
        m.msn == m0.msn
            && m.msg_len == m0.msg_len
            && m.offset == g0.offset
            && m.remote_va == va + u64::from(g0.offset)
            && m.rkey == m0.rkey
            && m.imm == 0
            && r.stream == pk[0].repr.stream,
        "PARITY fields {m:?} (stream {}), group's first packet {g0:?}",
        r.stream
    );
    for (k, rx) in group.iter().enumerate() {
        let o = rx.msg().expect("data packet").offset as usize;
        check!(
            o == g0.offset as usize + k * step
                && (rx.payload.len() == step || o + rx.payload.len() == src.len()),
            "packet {k} of the group at offset {o} with {} bytes: not a group of {step}-byte packets",
            rx.payload.len()
        );
    }
    check!(
        r.flags.difference(Flags::MULTI_ACK_OK).is_empty(),
        "PARITY flags {:?} (no SOLICITED was asked)",
        r.flags
    );
    let last = group[count - 1].repr;
    check!(
        r.path != last.path || r.path_psn.wrapping_sub(last.path_psn).wrapping_sub(1) < 1 << 31,
        "PARITY path PSN {} not after the group's last packet's {} on path {}",
        r.path_psn,
        last.path_psn,
        r.path
    );
    let start = g0.offset as usize;
    let want = xor_parity(
        step,
        (0..count).map(|k| &src[start + k * step..(start + (k + 1) * step).min(src.len())]),
    );
    check!(
        parity.payload == want,
        "PARITY payload is not the XOR of its group's source data"
    );
    Ok(())
}
