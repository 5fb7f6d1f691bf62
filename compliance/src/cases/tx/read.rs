//! The target as a READ requester: the request's fields, completion once the
//! responses are placed; a response to no READ dropped (spec §3.4, §5.10, §6.8).

use metaroce_proto::{Flags, Opcode};

use super::{SRC, ack_all, data, expect_wc, post};
use crate::target::{QpStateName, WorkOp};
use crate::{Ctx, QUIET_WAIT, REPLY_WAIT, Verdict, check};

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
