//! Hostile and malformed input: every check of the validation order (spec §6.2),
//! the ICRC (§4), both PSN windows, forged control packets (§5.5, §5.11, §11).

use metaroce_proto::{AckRepr, Ext, Flags, MsgRepr, NackReason, Opcode};

use crate::peer::{Conn, Pkt, Seal, Via};
use crate::target::QpStateName;
use crate::{Ctx, QUIET_WAIT, Verdict, check};

/// The path hostile packets use; the PROBE that follows shows whether they were marked.
const P: u16 = 6;

/// Sends `bytes` (a hostile datagram on path `P` with path PSN 0), then a PROBE with
/// path PSN 1, and checks from its ACK that the datagram was dropped without being
/// marked or accepted, that nothing else came back, that memory is untouched, and
/// (if the target has counters) that `counter` counted it once.
/// `cum` is the `conn_cum` the target must still report.
fn dropped_unmarked(
    ctx: &mut Ctx,
    c: &mut Conn,
    bytes: &[u8],
    via: Via,
    counter: &str,
    cum: u32,
) -> Verdict {
    ctx.peer.send_raw(bytes, via)?;
    c.next_path_psn[P as usize] = 1;
    let a = ctx.sync(c, P)?;
    check!(
        a.path_cum == 0 && a.rx_count == 1,
        "the hostile packet was marked: path_cum {} rx_count {}",
        a.path_cum,
        a.rx_count
    );
    check!(
        a.conn_cum == cum,
        "the hostile packet was accepted: conn_cum {:#x}",
        a.conn_cum
    );
    let nack = ctx
        .peer
        .gather(QUIET_WAIT, |rx| rx.repr.opcode == Opcode::Nack);
    check!(
        nack.is_empty(),
        "a NACK answered a packet that must be dropped silently"
    );
    check!(
        ctx.mem(c, 0, 16)? == [0; 16],
        "the hostile packet touched memory"
    );
    ctx.expect_counter(counter, 1)
}

/// A 16-byte WRITE to offset 0 on path `P`, path PSN 0, the next conn PSN.
fn write0(ctx: &mut Ctx, c: &mut Conn) -> Pkt {
    c.write(&mut ctx.peer, P, 0, b"hostile payload!")
        .with(|r| r.path_psn = 0)
}

fn hostile(ctx: &mut Ctx, edit: impl FnOnce(&mut Conn, Pkt) -> Pkt, counter: &str) -> Verdict {
    let mut c = ctx.conn()?;
    let cum = c.next_conn_psn;
    let p = write0(ctx, &mut c);
    let p = edit(&mut c, p);
    let bytes = ctx.peer.bytes(&p)?;
    dropped_unmarked(ctx, &mut c, &bytes, p.via, counter, cum)
}

fn hostile_bytes(
    ctx: &mut Ctx,
    edit: impl FnOnce(&mut Vec<u8>),
    reseal: bool,
    counter: &str,
) -> Verdict {
    let mut c = ctx.conn()?;
    let cum = c.next_conn_psn;
    let p = write0(ctx, &mut c);
    let mut bytes = ctx.peer.bytes(&p)?;
    edit(&mut bytes);
    if reseal {
        ctx.peer.reseal(&mut bytes, p.via);
    }
    dropped_unmarked(ctx, &mut c, &bytes, p.via, counter, cum)
}

/// §4, §6.2 step 6: a flipped ICRC bit → dropped silently.
pub fn bad_icrc_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(ctx, |_, p| p.seal(Seal::Corrupt), "bad_icrc")
}

/// §4: the UDP source port is covered by the ICRC.
pub fn icrc_covers_source_port(ctx: &mut Ctx) -> Verdict {
    hostile(ctx, |_, p| p.seal(Seal::WrongSourcePort), "bad_icrc")
}

/// §4: an ICRC computed without the pseudo-header is wrong.
pub fn icrc_without_pseudo_header_refused(ctx: &mut Ctx) -> Verdict {
    hostile(ctx, |_, p| p.seal(Seal::NoPseudoHeader), "bad_icrc")
}

/// §4: a flipped payload bit is caught by the ICRC.
pub fn corrupted_payload_dropped(ctx: &mut Ctx) -> Verdict {
    hostile_bytes(ctx, |b| b[70] ^= 0x20, false, "bad_icrc")
}

/// §2.6, §6.2 step 1: fewer than 36 bytes → truncated.
pub fn truncated_below_base_header(ctx: &mut Ctx) -> Verdict {
    hostile_bytes(ctx, |b| b.truncate(35), false, "truncated")
}

/// §2.6, §6.2 step 4: an extension cut short → truncated.
pub fn truncated_extension(ctx: &mut Ctx) -> Verdict {
    hostile_bytes(ctx, |b| b.truncate(60), true, "truncated")
}

/// §1.4, §6.2 step 2: version 2 → dropped, no reply.
pub fn unknown_version_dropped(ctx: &mut Ctx) -> Verdict {
    hostile_bytes(ctx, |b| b[0] = 2, true, "bad_version")
}

/// §3.3, §6.2 step 3: an unknown opcode → dropped.
pub fn unknown_opcode_dropped(ctx: &mut Ctx) -> Verdict {
    hostile_bytes(ctx, |b| b[1] = 0x07, true, "bad_opcode")
}

/// §2.6, §6.2 step 5: a PROBE with payload bytes → bad_format.
pub fn payload_on_probe_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let cum = c.next_conn_psn;
    let p = c.probe(&mut ctx.peer, P).with(|r| r.path_psn = 0);
    let mut bytes = ctx.peer.bytes(&p)?;
    bytes.splice(32..32, [1, 2, 3, 4]);
    ctx.peer.reseal(&mut bytes, p.via);
    dropped_unmarked(ctx, &mut c, &bytes, p.via, "bad_format", cum)
}

/// §2.6, §6.2 step 5: a READ_REQ with payload bytes → bad_format.
pub fn payload_on_read_request_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let cum = c.next_conn_psn;
    let p = c
        .read_req(&mut ctx.peer, P, 8, c.mr.addr, c.mr.rkey)
        .with(|r| r.path_psn = 0);
    let mut bytes = ctx.peer.bytes(&p)?;
    bytes.splice(64..64, [9; 8]);
    ctx.peer.reseal(&mut bytes, p.via);
    dropped_unmarked(ctx, &mut c, &bytes, p.via, "bad_format", cum)?;
    let resp = ctx
        .peer
        .gather(QUIET_WAIT, |rx| rx.repr.opcode == Opcode::ReadResp);
    check!(resp.is_empty(), "a malformed READ_REQ was executed");
    Ok(())
}

/// §6.2 step 8: a packet for a QPN that does not exist → dropped.
pub fn unknown_qp_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(
        ctx,
        |c, p| p.with(|r| r.dst_qpn = c.qpn ^ 0x00AB_0000),
        "unknown_qp",
    )
}

/// §6.2 step 10: a `src_qpn` other than the connected peer's → dropped.
pub fn wrong_peer_qpn_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(
        ctx,
        |c, p| p.with(|r| r.src_qpn = c.my_qpn + 1),
        "wrong_peer",
    )
}

/// §6.2 step 10, §11: the right QPNs from another IP address → dropped.
pub fn wrong_peer_address_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(ctx, |_, p| p.via(Via::Alien), "wrong_peer")
}

/// §6.2 step 11: path 64 → dropped.
pub fn path_64_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.write(&mut ctx.peer, 64, 0, b"path 64").via(Via::Ent(0));
    ctx.send(&p)?;
    let acks = ctx.peer.gather(QUIET_WAIT, |_| true);
    check!(
        acks.is_empty(),
        "a reply to a packet on path 64: {:?}",
        acks[0].repr
    );
    let a = ctx.sync(&mut c, 0)?;
    check!(
        a.conn_cum == p.repr.conn_psn,
        "a packet on path 64 was accepted"
    );
    check!(
        ctx.mem(&c, 0, 7)? == [0; 7],
        "a packet on path 64 was placed"
    );
    ctx.expect_counter("bad_path", 1)
}

/// §6.2 step 13: a stream the QP does not have → dropped, not marked.
pub fn bad_stream_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(ctx, |_, p| p.with(|r| r.stream = 4), "bad_stream")
}

/// §6.2 step 14, §6.5: a conn PSN at `conn_cum + W` → dropped, not marked.
pub fn conn_psn_beyond_window_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(
        ctx,
        |c, p| p.with(|r| r.conn_psn = c.my_initial_psn.wrapping_add(c.recv_window)),
        "conn_window",
    )
}

/// §6.2 step 14: a conn PSN 2^31 − 1 ahead (far future) → dropped, not marked.
pub fn conn_psn_far_future_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(
        ctx,
        |c, p| p.with(|r| r.conn_psn = c.my_initial_psn.wrapping_add(0x7FFF_FFFF)),
        "conn_window",
    )
}

/// §6.2 step 18, §6.5: a stale conn PSN (before `conn_cum`) is acknowledged at the path level, not placed.
pub fn stale_conn_psn_not_placed(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = write0(ctx, &mut c).with(|r| r.conn_psn = c.my_initial_psn.wrapping_sub(1000));
    c.next_conn_psn = c.my_initial_psn;
    let (_, a) = ctx.send_and_ack(&c, &p)?;
    check!(
        a.path_cum == 1,
        "a stale conn PSN's path PSN was not marked"
    );
    check!(
        a.conn_cum == c.my_initial_psn,
        "conn_cum moved: {:#x}",
        a.conn_cum
    );
    check!(
        ctx.mem(&c, 0, 16)? == [0; 16],
        "a stale conn PSN was placed"
    );
    Ok(())
}

/// §6.2 step 15, §2.6: a payload larger than the mtu (an oversized packet) → dropped, not marked.
pub fn payload_over_mtu_dropped(ctx: &mut Ctx) -> Verdict {
    let mtu = ctx.dev.mtu() as usize;
    let mut c = ctx.conn()?;
    let cum = c.next_conn_psn;
    let big = vec![0xEE; mtu + 1];
    let p = c.write(&mut ctx.peer, P, 0, &big).with(|r| r.path_psn = 0);
    let bytes = ctx.peer.bytes(&p)?;
    dropped_unmarked(ctx, &mut c, &bytes, p.via, "bad_length", cum)
}

/// §6.2 step 15: `offset + payload > msg_len` → dropped, not marked.
pub fn payload_beyond_msg_len_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(ctx, |_, p| p.msg(|m| m.offset = 8), "bad_length")
}

/// §6.2 step 15: `offset + payload` overflowing 32 bits → dropped, not marked.
pub fn offset_overflow_dropped(ctx: &mut Ctx) -> Verdict {
    hostile(
        ctx,
        |_, p| {
            p.msg(|m| {
                m.offset = u32::MAX - 4;
                m.msg_len = u32::MAX;
            })
        },
        "bad_length",
    )
}

/// §6.2 step 15: a READ_REQ with a non-zero offset → dropped, not marked.
pub fn read_request_with_offset_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let cum = c.next_conn_psn;
    let p = c
        .read_req(&mut ctx.peer, P, 8, c.mr.addr, c.mr.rkey)
        .with(|r| r.path_psn = 0)
        .msg(|m| m.offset = 4);
    let bytes = ctx.peer.bytes(&p)?;
    dropped_unmarked(ctx, &mut c, &bytes, p.via, "bad_length", cum)
}

/// §6.2 step 16: a packet whose `msg_len` disagrees with earlier packets of its MSN → dropped, not marked.
pub fn inconsistent_message_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let msn = c.take_msn(0);
    let m = MsgRepr {
        msn,
        msg_len: 64,
        remote_va: c.mr.addr + 1024,
        rkey: c.mr.rkey,
        ..MsgRepr::default()
    };
    let first = c.data(&mut ctx.peer, Opcode::Write, 1, m, &[1; 32]);
    ctx.send_and_ack(&c, &first)?;
    let cum = c.next_conn_psn;
    let second = c
        .data(&mut ctx.peer, Opcode::Write, P, m, &[2; 32])
        .with(|r| r.path_psn = 0)
        .msg(|m| {
            m.offset = 32;
            m.msg_len = 96;
            m.remote_va += 32;
        });
    let bytes = ctx.peer.bytes(&second)?;
    dropped_unmarked(ctx, &mut c, &bytes, second.via, "bad_format", cum)
}

/// §6.2 step 16: a new packet for an MSN the stream already retired → dropped, not marked.
pub fn retired_msn_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.write(&mut ctx.peer, 1, 4096, b"done");
    ctx.send_and_ack(&c, &p)?;
    let cum = c.next_conn_psn;
    let again = write0(ctx, &mut c).msg(|m| m.msn = 0);
    let bytes = ctx.peer.bytes(&again)?;
    dropped_unmarked(ctx, &mut c, &bytes, again.via, "bad_format", cum)
}

/// §6.2 step 17, §6.3: a path PSN 2^30 ahead of `path_cum` (far future) → dropped.
pub fn path_psn_far_future_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = write0(ctx, &mut c).with(|r| r.path_psn = 1 << 30);
    ctx.send(&p)?;
    let ack = ctx.peer.gather(QUIET_WAIT, |rx| {
        rx.repr.opcode == metaroce_proto::Opcode::Ack
    });
    check!(
        ack.is_empty(),
        "a packet 2^30 ahead on its path was acknowledged"
    );
    c.next_path_psn[P as usize] = 0;
    let a = ctx.sync(&mut c, P)?;
    check!(
        a.path_cum == 1 && a.rx_count == 1,
        "path_cum {} rx_count {}",
        a.path_cum,
        a.rx_count
    );
    check!(
        a.conn_cum == c.my_initial_psn,
        "a packet refused at step 17 was accepted"
    );
    ctx.expect_counter("path_window", 1)
}

/// §6.3: a path PSN 2^30 − 1 ahead is still inside the window: accepted, the window slides.
pub fn path_psn_at_window_edge_accepted(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let edge = (1u32 << 30) - 1;
    let p = write0(ctx, &mut c).with(|r| r.path_psn = edge);
    let (_, a) = ctx.send_and_ack(&c, &p)?;
    check!(
        a.path_cum == edge - 256,
        "path_cum {}, expected {}",
        a.path_cum,
        edge - 256
    );
    check!(a.conn_cum == c.next_conn_psn, "not accepted");
    Ok(())
}

/// §6.4: nothing is sent in reply to an ACK, a NACK or a forged DISCONNECT from another host.
pub fn no_reply_to_control_packets(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let ack = c.control(&mut ctx.peer, Opcode::Ack, Ext::Ack(AckRepr::default()));
    let nack = c.nack(&mut ctx.peer, NackReason::ReceiverNotReady, 0x1234, 1);
    let disc = c
        .control(
            &mut ctx.peer,
            Opcode::Disconnect,
            Ext::Cm(Default::default()),
        )
        .via(Via::Alien);
    ctx.send(&ack)?;
    ctx.send(&nack)?;
    ctx.send(&disc)?;
    ctx.silence(QUIET_WAIT)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(
        st == Some(QpStateName::Rts),
        "QP state {st:?} after a forged DISCONNECT from another address"
    );
    ctx.sync(&mut c, 0).map(|_| ())
}

/// §3.6, §6.2 step 7: a NACK with an unknown reason is dropped; the QP stays in RTS.
pub fn nack_with_unknown_reason_dropped(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let nack = c.nack(&mut ctx.peer, NackReason::RemoteAccess, c.target_psn, 0);
    let mut bytes = ctx.peer.bytes(&nack)?;
    bytes[32] = 9;
    ctx.peer.reseal(&mut bytes, nack.via);
    ctx.peer.send_raw(&bytes, nack.via)?;
    ctx.silence(QUIET_WAIT)?;
    let st = ctx.dev.qp_state(c.qpn);
    check!(st == Some(QpStateName::Rts), "QP state {st:?}");
    ctx.expect_counter("bad_format", 1)?;
    ctx.sync(&mut c, 0).map(|_| ())
}

/// §3.12, §6.10 (v0.1.5): a malformed PARITY is dropped before anything is
/// marked: a group of one packet (`bad_format`), a group reaching past its
/// message (`bad_length`). A target whose ACKs lack PARITY_OK drops any
/// PARITY as `bad_opcode`.
pub fn malformed_parity_dropped(ctx: &mut Ctx) -> Verdict {
    let cases: [(u32, u32, &str); 2] = [(1, 4096, "bad_format"), (3, 1000, "bad_length")];
    for (count, msg_len, counter) in cases {
        let mut c = ctx.conn()?;
        let w = c.write(&mut ctx.peer, 1, 100, b"announce");
        let (rx, _) = ctx.send_and_ack(&c, &w)?;
        let rebuilds = rx.repr.flags.contains(Flags::PARITY_OK);
        let cum = c.next_conn_psn;
        let m = MsgRepr {
            msn: c.take_msn(0),
            recv_idx: count,
            msg_len,
            remote_va: c.mr.addr,
            rkey: c.mr.rkey,
            ..MsgRepr::default()
        };
        let mut p = c
            .data(&mut ctx.peer, Opcode::Parity, P, m, &[0x77; 512])
            .with(|r| {
                r.flags = Flags::empty();
                r.path_psn = 0;
            });
        // A PARITY takes no conn PSN: it names its group's first.
        p.repr.conn_psn = cum;
        c.next_conn_psn = cum;
        let bytes = ctx.peer.bytes(&p)?;
        let counter = if rebuilds { counter } else { "bad_opcode" };
        dropped_unmarked(ctx, &mut c, &bytes, p.via, counter, cum)?;
        if !rebuilds {
            break;
        }
    }
    Ok(())
}
