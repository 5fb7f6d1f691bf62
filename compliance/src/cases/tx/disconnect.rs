//! The application disconnect: one DISCONNECT, the QP in ERR (spec §9.4).

use metaroce_proto::{Ext, Opcode};

use crate::target::QpStateName;
use crate::{Ctx, Fail, QUIET_WAIT, REPLY_WAIT, Verdict, check};

/// §9.4: an application disconnect sends one DISCONNECT (with the connection's
/// current PSNs, other fields 0) and the QP enters ERR.
pub fn tx_disconnect_sent_once(ctx: &mut Ctx) -> Verdict {
    let c = ctx.conn()?;
    ctx.dev.disconnect(c.qpn).map_err(Fail::Skip)?;
    let my = c.my_qpn;
    let d = ctx
        .peer
        .wait(REPLY_WAIT, |rx| {
            rx.repr.opcode == Opcode::Disconnect && rx.repr.dst_qpn == my
        })
        .ok_or_else(|| Fail::Fail("no DISCONNECT".into()))?;
    let r = d.repr;
    check!(r.src_qpn == c.qpn, "DISCONNECT src_qpn {:#x}", r.src_qpn);
    check!(
        r.stream == 0
            && r.path == 0
            && r.conn_psn == c.target_psn
            && r.path_psn == 0
            && r.flags.is_empty(),
        "DISCONNECT base header {r:?} (conn_psn: the target's next send PSN {:#x})",
        c.target_psn
    );
    let cm = metaroce_proto::CmRepr {
        initial_psn: c.next_conn_psn,
        ..Default::default()
    };
    check!(
        r.ext == Ext::Cm(cm),
        "DISCONNECT CM fields {:?} (want the target's conn_cum {:#x})",
        r.ext,
        c.next_conn_psn
    );
    ctx.silence(QUIET_WAIT)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(st == Some(QpStateName::Err), "QP state {st:?}");
    Ok(())
}
