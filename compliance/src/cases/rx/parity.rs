//! The target as a PARITY receiver (spec §3.2, §3.12, §6.10, v0.1.5): it
//! announces PARITY_OK and rebuilds the one packet of a group that did not
//! arrive; a target that does not drops the PARITY.

use metaroce_proto::{Ext, Flags, MsgRepr, Opcode};

use super::pattern;
use crate::peer::{Conn, Peer, Pkt, Via, xor_parity};
use crate::{Ctx, Fail, REPLY_WAIT, Verdict, check};

/// Payload bytes of every packet of the suite's messages but the last.
const STEP: usize = 512;
/// Offset of the messages in the target's region.
const AT: u64 = 8192;
/// Path the PARITY packets take (their data packets take paths 0..3).
const PARITY_PATH: u16 = 5;

/// §3.2, §6.10 (v0.1.5): a target whose ACKs carry PARITY_OK rebuilds the
/// lost last packet of a 3-packet WRITE_IMM from a PARITY: its ACK's
/// `conn_cum` passes the group, the data is placed, the receive completes
/// with the immediate, and the late original is a duplicate, not placed
/// again. With two packets of a group missing, the PARITY moves nothing
/// past them. A target without PARITY_OK drops the PARITY (`bad_opcode`)
/// and the case is skipped (optional).
pub fn parity_rebuilds_lost_packet(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    ctx.dev
        .post_recv(c.qpn, 11, c.mr.handle, 0, 4096, 0)
        .map_err(Fail::Skip)?;
    let data = pattern(2 * STEP + 100, 0x5A);
    let pk = message(&mut c, &mut ctx.peer, Opcode::WriteImm, 0xBEEF, AT, &data);
    ctx.send(&pk[0])?;
    let (ack_rx, a) = ctx.send_and_ack(&c, &pk[1])?;
    check!(
        a.conn_cum == pk[2].repr.conn_psn,
        "conn_cum {:#x} before the last packet arrived",
        a.conn_cum
    );
    let parity = parity_of(&mut c, &mut ctx.peer, &pk);
    if !ack_rx.repr.flags.contains(Flags::PARITY_OK) {
        ctx.send(&parity)?;
        let a = ctx.sync(&mut c, 20)?;
        check!(
            a.conn_cum == pk[2].repr.conn_psn,
            "conn_cum {:#x} moved on a PARITY by a target without PARITY_OK",
            a.conn_cum
        );
        ctx.expect_counter("bad_opcode", 1)?;
        return Err(Fail::Skip(
            "the target does not announce PARITY_OK (optional, v0.1.5)".into(),
        ));
    }
    let (rx, a) = ctx.send_and_ack(&c, &parity)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "conn_cum {:#x} after the PARITY, expected {:#x} (the lost packet rebuilt)",
        a.conn_cum,
        c.next_conn_psn
    );
    check!(
        rx.repr.flags.contains(Flags::PARITY_OK),
        "ACK flags {:?}: PARITY_OK missing",
        rx.repr.flags
    );
    check!(
        ctx.mem(&c, AT, data.len())? == data,
        "the rebuilt message is not placed correctly"
    );
    let wc = ctx.completions(c.qpn, 1, REPLY_WAIT);
    check!(
        wc.len() == 1 && wc[0].opcode == "RECV_RDMA_WITH_IMM" && wc[0].imm == Some(0xBEEF),
        "completions after the rebuild: {wc:?}"
    );
    // The late original, with other bytes: a duplicate, not placed.
    let path_psn = c.take_path_psn(3);
    let mut late = pk[2].clone().with(|r| {
        r.path = 3;
        r.path_psn = path_psn;
    });
    late.via = Via::Ent(3);
    late.payload.iter_mut().for_each(|b| *b = !*b);
    ctx.send_and_ack(&c, &late)?;
    check!(
        ctx.mem(&c, AT, data.len())? == data,
        "the late original was placed over the rebuilt packet"
    );
    two_missing(ctx, &mut c)
}

/// A 3-packet WRITE of which only the first packet arrived: its PARITY
/// rebuilds nothing, and `conn_cum` stays at the first missing packet until
/// the others arrive.
fn two_missing(ctx: &mut Ctx, c: &mut Conn) -> Verdict {
    let data = pattern(3 * STEP, 0x33);
    let at = AT + 4096;
    let pk = message(c, &mut ctx.peer, Opcode::Write, 0, at, &data);
    ctx.send(&pk[0])?;
    let parity = parity_of(c, &mut ctx.peer, &pk);
    let (_, a) = ctx.send_and_ack(c, &parity)?;
    check!(
        a.conn_cum == pk[1].repr.conn_psn,
        "conn_cum {:#x} after a PARITY with two packets of its group missing, expected {:#x}",
        a.conn_cum,
        pk[1].repr.conn_psn
    );
    ctx.send(&pk[1])?;
    ctx.send(&pk[2])?;
    let a = ctx.sync(c, 20)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "conn_cum {:#x} once the packets arrived",
        a.conn_cum
    );
    check!(
        ctx.mem(c, at, data.len())? == data,
        "message not placed correctly"
    );
    Ok(())
}

/// The packets of a message of `op` on stream 0 (a WRITE_IMM consumes the
/// next `recv_idx`) at `at` in the target's region: [`STEP`] bytes each, the
/// last shorter, packet `k` on path `k`.
fn message(c: &mut Conn, peer: &mut Peer, op: Opcode, imm: u32, at: u64, data: &[u8]) -> Vec<Pkt> {
    let msn = c.take_msn(0);
    let recv_idx = if op == Opcode::WriteImm {
        c.take_recv_idx(0)
    } else {
        0
    };
    let chunks: Vec<&[u8]> = data.chunks(STEP).collect();
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(k, chunk)| {
            let offset = (k * STEP) as u32;
            let m = MsgRepr {
                msn,
                recv_idx,
                msg_len: data.len() as u32,
                offset,
                remote_va: c.mr.addr + at + u64::from(offset),
                rkey: c.mr.rkey,
                imm,
            };
            let mut flags = Flags::empty();
            flags.set(Flags::FIRST, k == 0);
            flags.set(Flags::LAST | Flags::ACK_REQ, k + 1 == n);
            c.data(peer, op, k as u16, m, chunk)
                .with(|r| r.flags = flags)
        })
        .collect()
}

/// The PARITY of the packets `pk` of one message (spec §3.12), on
/// [`PARITY_PATH`] with its next path PSN and no conn PSN of its own.
fn parity_of(c: &mut Conn, peer: &mut Peer, pk: &[Pkt]) -> Pkt {
    let mut m = *pk[0].repr.msg().expect("data packet");
    m.recv_idx = pk.len() as u32;
    m.imm = 0;
    let path_psn = c.take_path_psn(PARITY_PATH);
    let payload = xor_parity(STEP, pk.iter().map(|p| p.payload.as_slice()));
    let mut p = pk[0].clone().with(|r| {
        r.opcode = Opcode::Parity;
        r.flags = Flags::empty();
        r.path = PARITY_PATH;
        r.path_psn = path_psn;
        r.timestamp = peer.now_ns();
    });
    p.repr.ext = Ext::Msg(m);
    p.payload = payload;
    p.via = Via::Ent(usize::from(PARITY_PATH));
    p
}
