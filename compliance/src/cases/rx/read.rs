//! READ and atomic requests: executed once, answered (spec §6).

use metaroce_proto::{Flags, MsgRepr, Opcode};

use super::pattern;
use crate::peer::{Conn, Pkt};
use crate::target::QpStateName;
use crate::{Ctx, Fail, QUIET_WAIT, REPLY_WAIT, Verdict, check};

/// §6.8, §3.4: a READ_REQ is executed: READ_RESP packets carry the READ's stream, MSN, length, offsets and rkey, and the data.
pub fn read_request_executed(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let data = pattern(3000, 0x33);
    ctx.dev
        .write_mr(c.mr.handle, 2048, &data)
        .map_err(Fail::Error)?;
    let p = c
        .read_req(&mut ctx.peer, 0, 3000, c.mr.addr + 2048, c.mr.rkey)
        .with(|r| r.stream = 3);
    ctx.send(&p)?;
    let psns = read_response(ctx, &mut c, &p, &data)?;
    check!(
        psns.iter().next() == Some(&c.target_psn),
        "READ_RESP conn PSNs {:?} do not start at the target's first PSN {:#x}",
        psns,
        c.target_psn
    );
    Ok(())
}

/// §9.1, §3.4: a QP left in RTR answers a READ_REQ, its responses numbered from
/// the request's `resp_psn`.
pub fn read_answered_in_rtr(ctx: &mut Ctx) -> Verdict {
    let resp_psn = 0x0047_1100;
    let mut c = ctx.conn_in_rtr(resp_psn)?;
    let data = pattern(9000, 0x71);
    ctx.dev
        .write_mr(c.mr.handle, 0, &data)
        .map_err(Fail::Error)?;
    let p = c.read_req(&mut ctx.peer, 0, 9000, c.mr.addr, c.mr.rkey);
    check!(
        p.repr.msg().is_some_and(|m| m.imm == resp_psn),
        "the suite's READ_REQ does not carry resp_psn"
    );
    ctx.send(&p)?;
    let psns = read_response(ctx, &mut c, &p, &data)?;
    let want: std::collections::BTreeSet<u32> = (0..3).map(|i| resp_psn + i).collect();
    check!(
        psns == want,
        "READ_RESP conn PSNs {psns:?}, want {want:?} (from resp_psn)"
    );
    check!(
        ctx.dev.qp_state(c.qpn) == Some(QpStateName::Rtr),
        "the QP left RTR"
    );
    Ok(())
}

/// Collects the READ_RESP packets answering `req` (marking each for the suite's
/// ACKs), checking their header fields and that together they carry `data`;
/// returns the conn PSNs they came with.
fn read_response(
    ctx: &mut Ctx,
    c: &mut Conn,
    req: &Pkt,
    data: &[u8],
) -> Result<std::collections::BTreeSet<u32>, Fail> {
    let m = req.repr.msg().copied().unwrap_or_default();
    let (stream, len) = (req.repr.stream, m.msg_len as usize);
    let mut got = vec![0u8; len];
    let mut seen = 0usize;
    let deadline = std::time::Instant::now() + REPLY_WAIT;
    let mut psns = std::collections::BTreeSet::new();
    while seen < len && std::time::Instant::now() < deadline {
        let Some(rx) = ctx
            .peer
            .wait(REPLY_WAIT, |rx| rx.repr.opcode == Opcode::ReadResp)
        else {
            break;
        };
        let r = rx.repr;
        let Some(rm) = rx.msg().copied() else { break };
        check!(
            r.stream == stream && rm.msn == m.msn,
            "READ_RESP stream {} msn {}",
            r.stream,
            rm.msn
        );
        check!(
            rm.msg_len == m.msg_len && rm.rkey == m.rkey,
            "READ_RESP msg_len {} rkey {:#x}",
            rm.msg_len,
            rm.rkey
        );
        check!(
            r.dst_qpn == c.my_qpn && r.src_qpn == c.qpn,
            "READ_RESP QPNs"
        );
        let off = rm.offset as usize;
        check!(off + rx.payload.len() <= len, "READ_RESP beyond the READ");
        got[off..off + rx.payload.len()].copy_from_slice(&rx.payload);
        check!(
            (rm.offset == 0) == r.flags.contains(Flags::FIRST),
            "FIRST flag at offset {}",
            rm.offset
        );
        let last = off + rx.payload.len() == len;
        check!(
            last == r.flags.contains(Flags::LAST),
            "LAST flag at offset {}",
            rm.offset
        );
        check!(
            !last || r.flags.contains(Flags::ACK_REQ),
            "LAST READ_RESP without ACK_REQ"
        );
        if psns.insert(r.conn_psn) {
            seen += rx.payload.len();
        }
        c.mark(&rx);
    }
    check!(
        seen == len && got == data,
        "READ response data wrong or incomplete ({seen} bytes)"
    );
    Ok(psns)
}

/// §6.8, §3.3: a FETCH_ADD executes once and its ATOMIC_RESP carries the value it
/// found; the same request again (a retransmission) changes nothing, and any
/// repeated response carries the same conn PSN and value.
pub fn atomic_executed_once(ctx: &mut Ctx) -> Verdict {
    if !ctx.dev.atomics() {
        return Err(Fail::Skip("the target has no atomics".into()));
    }
    let mut c = ctx.conn()?;
    let off = (8 - c.mr.addr % 8) % 8 + 64;
    let start = 0x0102_0304_0506_0708u64.to_be_bytes();
    ctx.dev
        .write_mr(c.mr.handle, off, &start)
        .map_err(Fail::Error)?;
    let msn = c.take_msn(0);
    let m = MsgRepr {
        msn,
        msg_len: 8,
        remote_va: c.mr.addr + off,
        rkey: c.mr.rkey,
        imm: c.conn_cum(),
        ..MsgRepr::default()
    };
    let p = c.data(&mut ctx.peer, Opcode::FetchAdd, 0, m, &5u64.to_be_bytes());
    ctx.send(&p)?;
    let is_resp = |rx: &crate::peer::Rx| rx.repr.opcode == Opcode::AtomicResp;
    let rx = ctx
        .peer
        .wait(REPLY_WAIT, is_resp)
        .ok_or_else(|| Fail::Fail("no ATOMIC_RESP".into()))?;
    let rm = rx.msg().copied().unwrap_or_default();
    check!(
        rm.msn == msn && rm.msg_len == 8 && rm.rkey == c.mr.rkey && rx.payload.len() == 8,
        "ATOMIC_RESP msn {} msg_len {} rkey {:#x} with {} bytes",
        rm.msn,
        rm.msg_len,
        rm.rkey,
        rx.payload.len()
    );
    let found = u64::from_be_bytes(rx.payload[..8].try_into().unwrap_or_default());
    // The target's memory holds its host's byte order, which the suite learns here.
    let le = found == u64::from_le_bytes(start);
    check!(
        le || found == u64::from_be_bytes(start),
        "ATOMIC_RESP value {found:#x} is not the 8 bytes written"
    );
    c.mark(&rx);
    let first = rx.repr.conn_psn;
    ctx.send(&p)?;
    while let Some(again) = ctx.peer.wait(QUIET_WAIT, is_resp) {
        check!(
            again.repr.conn_psn == first && again.payload == rx.payload,
            "a second ATOMIC_RESP (conn PSN {:#x}, value {:02x?}) after a repeated request",
            again.repr.conn_psn,
            again.payload
        );
    }
    let now = ctx.dev.read_mr(c.mr.handle, off, 8).map_err(Fail::Error)?;
    let want = found.wrapping_add(5);
    let want = if le {
        want.to_le_bytes()
    } else {
        want.to_be_bytes()
    };
    check!(
        now == want,
        "target holds {now:02x?}, want {want:02x?}: executed other than once"
    );
    Ok(())
}

/// §6.8: a 0-byte READ is answered with one empty READ_RESP with FIRST | LAST | ACK_REQ.
pub fn zero_byte_read_answered(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.read_req(&mut ctx.peer, 0, 0, 0, 0);
    let msn = p.repr.msg().map_or(0, |m| m.msn);
    ctx.send(&p)?;
    let rx = ctx
        .peer
        .wait(REPLY_WAIT, |rx| rx.repr.opcode == Opcode::ReadResp)
        .ok_or_else(|| Fail::Fail("no READ_RESP for a 0-byte READ".into()))?;
    let want = Flags::FIRST | Flags::LAST | Flags::ACK_REQ;
    check!(
        rx.payload.is_empty() && rx.repr.flags.contains(want),
        "{:?} with {} bytes",
        rx.repr.flags,
        rx.payload.len()
    );
    check!(
        rx.msg().is_some_and(|m| m.msg_len == 0 && m.msn == msn),
        "{:?}",
        rx.msg()
    );
    Ok(())
}
