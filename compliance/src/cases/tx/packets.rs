//! The target's data packets and when it completes: every header field of a
//! multi-packet WRITE, the numbering of SENDs and immediates, completion only
//! once `conn_cum` passes (spec §3.1, §3.4, §5.2, §5.10).

use metaroce_proto::{Flags, Opcode};

use super::{ack_all, data, expect_wc, fill, no_wc, originals, post, write_op};
use crate::target::WorkOp;
use crate::{Ctx, REPLY_WAIT, Verdict, check};

/// §3.1, §3.4, §5.2: a multi-packet WRITE: opcodes, flags, offsets, addresses, PSNs, then completion.
pub fn tx_write_packets(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let mtu = ctx.dev.mtu() as usize;
    let len = 2 * mtu + 100;
    let src = fill(ctx, &c, len)?;
    post(ctx, &c, 1, write_op(0xABC0_0000), len as u32)?;
    let pk = originals(ctx, &c, 3, REPLY_WAIT);
    check!(
        pk.len() == 3,
        "{} packets for a WRITE of {len} bytes, expected 3",
        pk.len()
    );
    let mut got = vec![0u8; len];
    let mut per_path: std::collections::BTreeMap<u16, Vec<u32>> = Default::default();
    for (k, rx) in pk.iter().enumerate() {
        let r = rx.repr;
        let m = *rx.msg().expect("message");
        check!(r.opcode == Opcode::Write, "opcode {:?}", r.opcode);
        check!(
            r.dst_qpn == c.my_qpn && r.src_qpn == c.qpn,
            "QPNs {:#x}/{:#x}",
            r.dst_qpn,
            r.src_qpn
        );
        check!(
            r.conn_psn == c.target_psn.wrapping_add(k as u32),
            "conn PSN {:#x} of packet {k}",
            r.conn_psn
        );
        check!(
            m.msn == 0
                && m.msg_len == len as u32
                && m.rkey == 0x5151
                && m.imm == 0
                && m.recv_idx == 0,
            "{m:?}"
        );
        check!(
            m.offset as usize == k * mtu,
            "offset {} of packet {k}",
            m.offset
        );
        check!(
            m.remote_va == 0xABC0_0000 + u64::from(m.offset),
            "remote_va {:#x} at offset {}",
            m.remote_va,
            m.offset
        );
        check!(
            r.flags.contains(Flags::FIRST) == (k == 0),
            "FIRST on packet {k}"
        );
        check!(
            r.flags.contains(Flags::LAST) == (k == 2),
            "LAST on packet {k}"
        );
        check!(
            r.flags.contains(Flags::ACK_REQ) == (k == 2),
            "ACK_REQ on packet {k}"
        );
        check!(!r.flags.contains(Flags::RETX), "RETX on an original");
        check!(r.timestamp != 0, "timestamp 0");
        let off = m.offset as usize;
        got[off..off + rx.payload.len()].copy_from_slice(&rx.payload);
        per_path.entry(r.path).or_default().push(r.path_psn);
        c.mark(rx);
    }
    check!(got == src, "payload bytes differ from the source buffer");
    for (p, psns) in &per_path {
        check!(*p < 4, "path {p} beyond the QP's 4 paths");
        let want: Vec<u32> = (0..psns.len() as u32).collect();
        check!(
            *psns == want,
            "path {p}: path PSNs {psns:?}, expected consecutive from 0"
        );
    }
    no_wc(ctx, &c)?;
    ack_all(ctx, &c, 64)?;
    let wc = expect_wc(ctx, &c, 1, "SUCCESS")?;
    check!(wc[0].opcode == "WRITE" && wc[0].wr_id == 1, "{:?}", wc[0]);
    Ok(())
}

/// §5.10: a WRITE completes only when `conn_cum` passes it, not on a path-level acknowledgement.
pub fn tx_completion_needs_conn_cum(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    fill(ctx, &c, 100)?;
    post(ctx, &c, 5, write_op(0x1000), 100)?;
    let pk = data(ctx, &c, 1, REPLY_WAIT);
    check!(pk.len() == 1, "no data packet");
    c.marked
        .entry(pk[0].repr.path)
        .or_default()
        .insert(pk[0].repr.path_psn);
    // Path level only: path_cum covers it, conn_cum does not move (an RNR-refused packet looks like this).
    ack_all(ctx, &c, 64)?;
    no_wc(ctx, &c)?;
    c.mark(&pk[0]);
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 1, "SUCCESS").map(|_| ())
}

/// §3.4, §5.2: SEND, SEND_IMM and WRITE_IMM take consecutive MSNs and `recv_idx`, and carry the immediate.
pub fn tx_send_numbering(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    fill(ctx, &c, 16)?;
    post(ctx, &c, 1, WorkOp::Send, 16)?;
    post(ctx, &c, 2, WorkOp::SendImm { imm: 0xA1 }, 8)?;
    post(ctx, &c, 3, write_op(0x40), 4)?;
    post(
        ctx,
        &c,
        4,
        WorkOp::WriteImm {
            remote_va: 0x80,
            rkey: 7,
            imm: 0xB2,
        },
        4,
    )?;
    let mut pk = originals(ctx, &c, 4, REPLY_WAIT);
    check!(pk.len() == 4, "{} packets, expected 4", pk.len());
    pk.sort_by_key(|rx| rx.repr.conn_psn.wrapping_sub(c.target_psn));
    let ops: Vec<Opcode> = pk.iter().map(|rx| rx.repr.opcode).collect();
    check!(
        ops == [
            Opcode::Send,
            Opcode::SendImm,
            Opcode::Write,
            Opcode::WriteImm
        ],
        "opcodes {ops:?}: {:?}",
        pk.iter()
            .map(|rx| (
                rx.repr.conn_psn,
                rx.repr.path,
                rx.repr.path_psn,
                rx.repr.flags
            ))
            .collect::<Vec<_>>()
    );
    let m: Vec<_> = pk.iter().map(|rx| *rx.msg().expect("msg")).collect();
    check!(
        m.iter().map(|m| m.msn).eq(0..4),
        "MSNs {:?}",
        m.iter().map(|m| m.msn).collect::<Vec<_>>()
    );
    check!(
        m[0].recv_idx == 0 && m[1].recv_idx == 1 && m[2].recv_idx == 0 && m[3].recv_idx == 2,
        "recv_idx {m:?}"
    );
    check!(
        m[1].imm == 0xA1 && m[3].imm == 0xB2 && m[0].imm == 0,
        "immediates {m:?}"
    );
    check!(
        m[0].rkey == 0 && m[0].remote_va == 0 && m[3].rkey == 7 && m[3].remote_va == 0x80,
        "SEND/WRITE_IMM address fields {m:?}"
    );
    for rx in &pk {
        c.mark(rx);
    }
    ack_all(ctx, &c, 64)?;
    expect_wc(ctx, &c, 4, "SUCCESS").map(|_| ())
}
