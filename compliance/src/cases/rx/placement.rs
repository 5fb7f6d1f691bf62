//! Placement and connection tracking: WRITEs land where they say, once, across paths (spec §6).

use metaroce_proto::{Flags, MsgRepr, Opcode};

use super::pattern;
use crate::peer::Via;
use crate::{Ctx, Fail, Verdict, check};

/// §6.6: a WRITE lands at its `remote_va` and is accepted.
pub fn write_placed_and_accepted(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let data = pattern(200, 0x5a);
    let p = c.write(&mut ctx.peer, 1, 1000, &data);
    let (_, a) = ctx.send_and_ack(&c, &p)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "conn_cum {:#x}, expected {:#x}",
        a.conn_cum,
        c.next_conn_psn
    );
    check!(
        ctx.mem(&c, 1000, 200)? == data,
        "WRITE payload not placed at remote_va"
    );
    check!(
        ctx.mem(&c, 1200, 8)? == [0; 8],
        "bytes after the WRITE were touched"
    );
    Ok(())
}

/// §6.5, §6.6: packets of a message arriving out of order over several paths are placed and accepted.
pub fn out_of_order_cross_path_message(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let data = pattern(4 * 512, 7);
    let msn = c.take_msn(0);
    let mut pkts = Vec::new();
    for k in 0..4u32 {
        let m = MsgRepr {
            msn,
            msg_len: data.len() as u32,
            offset: k * 512,
            remote_va: c.mr.addr + 4096 + u64::from(k) * 512,
            rkey: c.mr.rkey,
            ..MsgRepr::default()
        };
        let mut flags = Flags::empty();
        if k == 0 {
            flags |= Flags::FIRST;
        }
        if k == 3 {
            flags |= Flags::LAST | Flags::ACK_REQ;
        }
        let chunk = &data[k as usize * 512..(k as usize + 1) * 512];
        pkts.push(
            c.data(&mut ctx.peer, Opcode::Write, k as u16, m, chunk)
                .with(|r| r.flags = flags),
        );
    }
    for i in [3usize, 1, 2] {
        ctx.send(&pkts[i])?;
    }
    let a = ctx.sync(&mut c, 20)?;
    check!(
        a.conn_cum == pkts[0].repr.conn_psn,
        "conn_cum {:#x} moved past a missing conn PSN",
        a.conn_cum
    );
    ctx.send(&pkts[0])?;
    let a = ctx.sync(&mut c, 20)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "conn_cum {:#x} after the gap was filled",
        a.conn_cum
    );
    check!(
        ctx.mem(&c, 4096, data.len())? == data,
        "message not placed correctly"
    );
    Ok(())
}

/// §6.5 step 18: a duplicated datagram is acknowledged again but placed once.
pub fn duplicate_not_placed_twice(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.write(&mut ctx.peer, 1, 0, b"first");
    ctx.send_and_ack(&c, &p)?;
    // Overwrite locally, then replay the same conn PSN with other bytes on another path.
    ctx.dev
        .write_mr(c.mr.handle, 0, b"LOCAL")
        .map_err(Fail::Error)?;
    let psn = c.take_path_psn(2);
    let mut dup = p.clone().with(|r| {
        r.path = 2;
        r.path_psn = psn;
        r.flags |= Flags::RETX;
    });
    dup.payload = b"again".to_vec();
    dup.repr.timestamp = ctx.peer.now_ns();
    dup.via = Via::Ent(2);
    let (_, a) = ctx.send_and_ack(&c, &dup)?;
    check!(
        a.path_cum == 1 && a.rx_count == 1,
        "the duplicate's path PSN was not acknowledged: {a:?}"
    );
    check!(
        ctx.mem(&c, 0, 5)? == b"LOCAL",
        "a duplicate conn PSN was placed again"
    );
    // The identical datagram twice on the same path: a path-level duplicate, marked again.
    let p2 = c.write(&mut ctx.peer, 6, 100, b"z");
    ctx.send(&p2)?;
    ctx.send(&p2)?;
    let a = ctx.sync(&mut c, 6)?;
    check!(
        a.rx_count == 3 && a.path_cum == 2,
        "path-level duplicate: rx_count {} path_cum {}",
        a.rx_count,
        a.path_cum
    );
    Ok(())
}

/// §6.5: `conn_cum` stops at the first conn PSN not accepted.
pub fn conn_cum_stops_at_gap(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let a = c.write(&mut ctx.peer, 0, 0, b"1");
    let _skipped = c.write(&mut ctx.peer, 0, 8, b"2");
    let b = c.write(&mut ctx.peer, 0, 16, b"3").with(|r| r.path_psn = 1);
    ctx.send(&a)?;
    ctx.send(&b)?;
    let (_, ack) = ctx.ack_at_least(&c, 0, b.repr.timestamp)?;
    check!(
        ack.conn_cum == a.repr.conn_psn.wrapping_add(1),
        "conn_cum {:#x}",
        ack.conn_cum
    );
    check!(
        ctx.mem(&c, 16, 1)? == b"3",
        "a packet after the gap was not placed on arrival"
    );
    Ok(())
}
