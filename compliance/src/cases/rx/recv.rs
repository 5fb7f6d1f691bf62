//! Send matching: SEND and WRITE_IMM consume posted receives, RNR NACKs (spec §6).

use metaroce_proto::{Flags, MsgRepr, NackReason, Opcode};

use crate::peer::Via;
use crate::target::{MrAccess, QpOptions};
use crate::{Ctx, Fail, REPLY_WAIT, Verdict, check};

/// §6.7, §6.8: a SEND lands in the receive named by `recv_idx`, even out of order; completions come in order.
pub fn send_matches_recv_idx(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let mr = c.mr.handle;
    ctx.dev
        .post_recv(c.qpn, 100, mr, 8192, 64, 1)
        .map_err(Fail::Skip)?;
    ctx.dev
        .post_recv(c.qpn, 101, mr, 8192 + 64, 64, 1)
        .map_err(Fail::Skip)?;
    let s0 = c.send(&mut ctx.peer, 0, 1, b"zero", None);
    let s1 = c.send(&mut ctx.peer, 1, 1, b"one!", Some(0xC0FFEE));
    ctx.send(&s1)?;
    ctx.send(&s0)?;
    ctx.sync(&mut c, 30)?;
    let wc = ctx.completions(c.qpn, 2, REPLY_WAIT);
    check!(
        wc.len() == 2,
        "{} receive completions, expected 2: {wc:?}",
        wc.len()
    );
    check!(
        wc[0].wr_id == 100 && wc[1].wr_id == 101,
        "completion order {:?}",
        wc
    );
    check!(
        wc.iter()
            .all(|w| w.status == "SUCCESS" && w.opcode == "RECV"),
        "{wc:?}"
    );
    check!(wc[0].byte_len == 4 && wc[0].imm.is_none(), "{:?}", wc[0]);
    check!(
        wc[1].imm == Some(0xC0FFEE),
        "SEND_IMM immediate {:?}",
        wc[1].imm
    );
    check!(
        ctx.mem(&c, 8192, 4)? == b"zero" && ctx.mem(&c, 8192 + 64, 4)? == b"one!",
        "SEND data in the wrong buffer"
    );
    Ok(())
}

/// §6.8: WRITE_IMM places at its address and completes a receive as RECV_RDMA_WITH_IMM.
pub fn write_imm_consumes_receive(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    ctx.dev
        .post_recv(c.qpn, 7, c.mr.handle, 60000, 16, 0)
        .map_err(Fail::Skip)?;
    let msn = c.take_msn(0);
    let idx = c.take_recv_idx(0);
    let m = MsgRepr {
        msn,
        recv_idx: idx,
        msg_len: 3,
        remote_va: c.mr.addr + 300,
        rkey: c.mr.rkey,
        imm: 0xFEED,
        ..MsgRepr::default()
    };
    let p = c.data(&mut ctx.peer, Opcode::WriteImm, 0, m, b"imm");
    ctx.send_and_ack(&c, &p)?;
    let wc = ctx.completions(c.qpn, 1, REPLY_WAIT);
    check!(wc.len() == 1, "{} completions", wc.len());
    check!(
        wc[0].opcode == "RECV_RDMA_WITH_IMM" && wc[0].imm == Some(0xFEED),
        "{:?}",
        wc[0]
    );
    check!(
        ctx.mem(&c, 300, 3)? == b"imm",
        "WRITE_IMM not placed at remote_va"
    );
    Ok(())
}

/// §6.8: SOLICITED on a SEND reaches the receive completion path; a 0-byte SEND completes.
pub fn zero_byte_send_completes(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    ctx.dev
        .post_recv(c.qpn, 9, c.mr.handle, 0, 64, 0)
        .map_err(Fail::Skip)?;
    let p = c
        .send(&mut ctx.peer, 0, 0, b"", None)
        .with(|r| r.flags |= Flags::SOLICITED);
    ctx.send_and_ack(&c, &p)?;
    let wc = ctx.completions(c.qpn, 1, REPLY_WAIT);
    check!(
        wc.len() == 1 && wc[0].byte_len == 0 && wc[0].status == "SUCCESS",
        "{wc:?}"
    );
    Ok(())
}

/// §6.7, §3.6: no posted receive → NACK RNR with the configured delay; the packet is marked, not accepted.
pub fn rnr_nack(ctx: &mut Ctx) -> Verdict {
    let opts = QpOptions {
        rnr_delay_us: 250,
        ..QpOptions::default()
    };
    let mut c = ctx.conn_with(opts, 0x100, 0x200)?;
    let p = c.send(&mut ctx.peer, 3, 2, b"early", None).via(Via::Ent(3));
    ctx.send(&p)?;
    let (rx, n) = ctx.nack(&c)?;
    check!(
        n.reason == NackReason::ReceiverNotReady,
        "reason {:?}",
        n.reason
    );
    check!(
        n.detail == 250,
        "RNR detail {} µs, expected the QP's 250",
        n.detail
    );
    check!(
        n.conn_psn == p.repr.conn_psn,
        "NACK conn_psn {:#x}",
        n.conn_psn
    );
    let m = p.repr.msg().copied().unwrap_or_default();
    check!(n.msn == m.msn, "NACK msn {}", n.msn);
    let r = rx.repr;
    check!(r.dst_qpn == c.my_qpn && r.src_qpn == c.qpn, "NACK QPNs");
    check!(
        r.stream == 2 && r.path == 0 && r.conn_psn == 0 && r.path_psn == 0,
        "NACK base header {r:?}"
    );
    check!(r.flags.is_empty(), "NACK flags {:?}", r.flags);
    let a = ctx.sync(&mut c, 3)?;
    check!(
        a.path_cum == 2,
        "the refused packet's path PSN was not marked (path_cum {})",
        a.path_cum
    );
    check!(
        a.conn_cum == p.repr.conn_psn,
        "a refused packet was accepted"
    );
    Ok(())
}

/// §6.2, §6.7: after RNR, the same conn PSN is accepted once a receive is posted; the NACK left the QP in RTS.
pub fn rnr_then_retry_accepted(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.send(&mut ctx.peer, 0, 0, b"retry", None);
    ctx.send(&p)?;
    ctx.expect_nack(&c, NackReason::ReceiverNotReady, p.repr.conn_psn)?;
    ctx.dev
        .post_recv(c.qpn, 1, c.mr.handle, 512, 64, 0)
        .map_err(Fail::Skip)?;
    let psn = c.take_path_psn(1);
    let ts = ctx.peer.now_ns();
    let again = p.with(|r| {
        r.path = 1;
        r.path_psn = psn;
        r.flags |= Flags::RETX;
        r.timestamp = ts;
    });
    let (_, a) = ctx.send_and_ack(&c, &again)?;
    check!(a.conn_cum == c.next_conn_psn, "retried SEND not accepted");
    check!(ctx.mem(&c, 512, 5)? == b"retry", "retried SEND not placed");
    Ok(())
}

/// §6.2 step 21: a SEND longer than the posted receive → NACK INVALID_REQUEST.
pub fn send_longer_than_receive_refused(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    ctx.dev
        .post_recv(c.qpn, 1, c.mr.handle, 0, 8, 0)
        .map_err(Fail::Skip)?;
    let p = c.send(&mut ctx.peer, 0, 0, b"sixteen bytes!!!", None);
    ctx.send(&p)?;
    ctx.expect_nack(&c, NackReason::InvalidRequest, p.repr.conn_psn)?;
    check!(
        ctx.mem(&c, 0, 16)? == [0; 16],
        "an oversized SEND was placed"
    );
    Ok(())
}

/// §6.2 step 22: a SEND into a receive whose buffer is no longer registered → NACK REMOTE_OPERATIONAL.
pub fn send_into_deregistered_receive_refused(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let buf = ctx.dev.reg_mr(4096, MrAccess::ALL).map_err(Fail::Skip)?;
    ctx.dev
        .post_recv(c.qpn, 3, buf.handle, 0, 64, 0)
        .map_err(Fail::Skip)?;
    ctx.dev.dereg_mr(buf.handle).map_err(Fail::Skip)?;
    let p = c.send(&mut ctx.peer, 0, 0, b"nowhere", None);
    ctx.send(&p)?;
    ctx.expect_nack(&c, NackReason::RemoteOperational, p.repr.conn_psn)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(
        st == Some(crate::target::QpStateName::Rts),
        "QP state {st:?} after sending a NACK"
    );
    Ok(())
}

/// §6.7: for WRITE_IMM the receive check comes before the rkey check.
pub fn write_imm_rnr_before_rkey(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let msn = c.take_msn(0);
    let idx = c.take_recv_idx(0);
    let m = MsgRepr {
        msn,
        recv_idx: idx,
        msg_len: 2,
        remote_va: c.mr.addr,
        rkey: c.mr.rkey ^ 0xFFFF,
        imm: 1,
        ..MsgRepr::default()
    };
    let p = c.data(&mut ctx.peer, Opcode::WriteImm, 0, m, b"xx");
    ctx.send(&p)?;
    ctx.expect_nack(&c, NackReason::ReceiverNotReady, p.repr.conn_psn)?;
    Ok(())
}
