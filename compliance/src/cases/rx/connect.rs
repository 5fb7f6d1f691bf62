//! Connection opcodes: DISCONNECT and the connect handshake's opcodes on the data path (spec §9).

use metaroce_proto::{Ext, Opcode};

use crate::{Ctx, Fail, REPLY_WAIT, Verdict, check};

/// §9.4: a DISCONNECT without the connection's current PSNs (here all zero, a
/// blind guess) changes nothing and is not answered.
pub fn disconnect_without_psns_ignored(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let mut blind = c.control(
        &mut ctx.peer,
        Opcode::Disconnect,
        Ext::Cm(Default::default()),
    );
    // A send PSN far outside the window, whatever the target's PSNs are.
    blind.repr.conn_psn = c.next_conn_psn.wrapping_add(1 << 31);
    ctx.send(&blind)?;
    ctx.silence(crate::QUIET_WAIT)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(
        st == Some(crate::target::QpStateName::Rts),
        "QP state {st:?} after a DISCONNECT without the connection's PSNs"
    );
    ctx.sync(&mut c, 0).map(|_| ())
}

/// §9.4: a DISCONNECT from the peer moves the QP to ERR and flushes posted receives.
pub fn disconnect_received(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    ctx.dev
        .post_recv(c.qpn, 55, c.mr.handle, 0, 64, 0)
        .map_err(Fail::Skip)?;
    let d = c.disconnect(&mut ctx.peer);
    ctx.send(&d)?;
    let wc = ctx.completions(c.qpn, 1, REPLY_WAIT);
    check!(
        wc.len() == 1 && wc[0].status == "WR_FLUSH_ERR",
        "posted receive not flushed: {wc:?}"
    );
    let st = ctx.dev.qp_state(c.qpn);
    check!(
        st == Some(crate::target::QpStateName::Err),
        "QP state {st:?} after DISCONNECT"
    );
    // Nothing is sent in reply, and the QP no longer acknowledges.
    let p = c.probe(&mut ctx.peer, 0);
    ctx.send(&p)?;
    ctx.silence(crate::QUIET_WAIT)
}

/// §9.3: CONNECT and CONNECT_ACK to a connected QP are dropped; the QP stays usable.
pub fn connect_opcodes_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    for op in [Opcode::Connect, Opcode::ConnectAck] {
        let p = c.control(&mut ctx.peer, op, Ext::Cm(Default::default()));
        ctx.send(&p)?;
    }
    ctx.silence(crate::QUIET_WAIT)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(
        st == Some(crate::target::QpStateName::Rts),
        "QP state {st:?}"
    );
    ctx.expect_counter("qp_state", 2)?;
    ctx.sync(&mut c, 0).map(|_| ())
}
