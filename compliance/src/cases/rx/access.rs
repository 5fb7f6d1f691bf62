//! Remote access checks: forged rkeys, bounds and permissions never touch memory (spec §6).

use metaroce_proto::{MsgRepr, NackReason, Opcode};

use crate::target::MrAccess;
use crate::{Ctx, Fail, Verdict, check};

fn remote_access_case(
    ctx: &mut Ctx,
    tweak: impl FnOnce(&mut MsgRepr, &crate::target::MrInfo),
) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c
        .write(&mut ctx.peer, 2, 0, b"forged")
        .msg(|m| tweak(m, &c.mr));
    ctx.send(&p)?;
    ctx.expect_nack(&c, NackReason::RemoteAccess, p.repr.conn_psn)?;
    check!(ctx.mem(&c, 0, 6)? == [0; 6], "refused WRITE touched memory");
    let before = ctx.counter("remote_access");
    check!(
        before.is_none_or(|v| v == 1),
        "remote_access counter {before:?}"
    );
    // A NACK does not change the state of the QP that sends it (§6.7): a later
    // valid packet is accepted, once the refused conn PSN is resent validly.
    let psn = c.take_path_psn(2);
    let ts = ctx.peer.now_ns();
    let fixed = c.write(&mut ctx.peer, 2, 0, b"valid!").with(|r| {
        r.conn_psn = p.repr.conn_psn;
        r.path_psn = psn;
        r.timestamp = ts;
    });
    c.next_conn_psn = p.repr.conn_psn.wrapping_add(1);
    c.next_path_psn[2] = psn.wrapping_add(1);
    let (_, a) = ctx.send_and_ack(&c, &fixed)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "QP no longer accepts after sending a NACK"
    );
    Ok(())
}

/// §6.2 step 20: a WRITE with a forged rkey → NACK REMOTE_ACCESS, nothing written.
pub fn forged_rkey_refused(ctx: &mut Ctx) -> Verdict {
    remote_access_case(ctx, |m, mr| m.rkey = mr.rkey ^ 0x00FF_0000)
}

/// §6.2 step 20: a WRITE past the end of the region → NACK REMOTE_ACCESS.
pub fn out_of_bounds_write_refused(ctx: &mut Ctx) -> Verdict {
    remote_access_case(ctx, |m, mr| m.remote_va = mr.addr + mr.len - 3)
}

/// §6.2 step 20, §11: an address range that overflows 64 bits → NACK REMOTE_ACCESS.
pub fn overflowing_address_refused(ctx: &mut Ctx) -> Verdict {
    remote_access_case(ctx, |m, _| m.remote_va = u64::MAX - 2)
}

/// §6.2 step 20: a WRITE before the start of the region → NACK REMOTE_ACCESS.
pub fn address_below_region_refused(ctx: &mut Ctx) -> Verdict {
    remote_access_case(ctx, |m, mr| m.remote_va = mr.addr.wrapping_sub(4))
}

/// §6.2 step 20: a region without REMOTE_WRITE refuses WRITEs.
pub fn write_without_permission_refused(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let ro = ctx
        .dev
        .reg_mr(
            4096,
            MrAccess {
                local_write: true,
                remote_write: false,
                remote_read: true,
                remote_atomic: false,
            },
        )
        .map_err(Fail::Skip)?;
    let p = c.write(&mut ctx.peer, 0, 0, b"nope").msg(|m| {
        m.remote_va = ro.addr;
        m.rkey = ro.rkey;
    });
    ctx.send(&p)?;
    ctx.expect_nack(&c, NackReason::RemoteAccess, p.repr.conn_psn)?;
    let mem = ctx.dev.read_mr(ro.handle, 0, 4).map_err(Fail::Error)?;
    check!(mem == [0; 4], "read-only region written");
    Ok(())
}

/// §6.2 step 20: a READ_REQ with a forged rkey → NACK REMOTE_ACCESS, no response.
pub fn read_with_forged_rkey_refused(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.read_req(
        &mut ctx.peer,
        0,
        64,
        c.mr.addr,
        c.mr.rkey.wrapping_add(0x100),
    );
    ctx.send(&p)?;
    ctx.expect_nack(&c, NackReason::RemoteAccess, p.repr.conn_psn)?;
    let resp = ctx
        .peer
        .gather(crate::QUIET_WAIT, |rx| rx.repr.opcode == Opcode::ReadResp);
    check!(resp.is_empty(), "READ_RESP sent for a refused READ");
    Ok(())
}
