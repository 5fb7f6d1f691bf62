//! The target as a receiver: placement, acknowledgement, path and connection
//! tracking, send matching, NACKs (spec §3, §6).

use metaroce_proto::{Ext, Flags, MsgRepr, NackReason, Opcode};

use crate::peer::{Conn, Pkt, Via};
use crate::target::{MrAccess, QpOptions, QpStateName};
use crate::{Ctx, Fail, QUIET_WAIT, REPLY_WAIT, Verdict, check};

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

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

/// §3.5, §6.4: every field of the ACK for one packet.
pub fn ack_fields(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.write(&mut ctx.peer, 2, 0, b"abcd");
    let (rx, a) = ctx.send_and_ack(&c, &p)?;
    let r = rx.repr;
    check!(
        r.dst_qpn == c.my_qpn && r.src_qpn == c.qpn,
        "ACK QPNs {:#x}/{:#x}",
        r.dst_qpn,
        r.src_qpn
    );
    check!(
        r.stream == 0 && r.conn_psn == 0 && r.path_psn == 0,
        "ACK stream/conn_psn/path_psn not 0: {r:?}"
    );
    check!(!r.flags.contains(Flags::ECE), "ECE set without CE");
    check!(
        a.path_cum == 1 && a.sack.is_empty(),
        "path_cum {} sack {:?}",
        a.path_cum,
        a.sack
    );
    check!(
        a.echo_ts == p.repr.timestamp,
        "echo_ts {} expected {}",
        a.echo_ts,
        p.repr.timestamp
    );
    check!(
        a.ce_count == 0 && a.rx_count == 1,
        "ce_count {} rx_count {}",
        a.ce_count,
        a.rx_count
    );
    check!(
        a.credit == c.recv_window,
        "credit {} expected the receive window {}",
        a.credit,
        c.recv_window
    );
    check!(a.conn_cum == c.next_conn_psn, "conn_cum {:#x}", a.conn_cum);
    Ok(())
}

/// §2.3: the ACK of a path leaves from the source port of the latest packet marked on it.
pub fn ack_source_port_follows_latest_packet(ctx: &mut Ctx) -> Verdict {
    if !ctx.dev.chooses_source_ports() {
        return Err(Fail::Skip(
            "the target sends from a fixed set of source ports (allowed by §2.3)".into(),
        ));
    }
    let mut c = ctx.conn()?;
    let p = c.write(&mut ctx.peer, 3, 0, b"x").via(Via::Ent(1));
    ctx.send_and_ack(&c, &p)?;
    let p = c.write(&mut ctx.peer, 3, 8, b"y").via(Via::Ent(2));
    let (rx, _) = ctx.send_and_ack(&c, &p)?;
    let want = ctx.peer.source(Via::Ent(2)).map(|a| a.port());
    check!(
        Some(rx.from.port()) == want,
        "ACK from port {}, expected {:?}",
        rx.from.port(),
        want
    );
    Ok(())
}

/// §2.2, §2.3: replies go to the peer's configured port, whatever port data came from; any source port is accepted.
pub fn replies_go_to_configured_port(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    // Every entropy socket, one packet each: all accepted, all ACKs arrive on the
    // suite's MetaRoCE port (the only socket the suite reads).
    for i in 0..crate::peer::ENTROPY_SOCKETS {
        let p = c
            .write(&mut ctx.peer, i as u16, 64 * i as u64, b"port")
            .via(Via::Ent(i));
        ctx.send_and_ack(&c, &p)?;
    }
    let a = ctx.sync(&mut c, 9)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "not every source port was accepted: conn_cum {:#x}",
        a.conn_cum
    );
    Ok(())
}

/// §3.5: the exact SACK bitmap for the spec's example arrival pattern.
pub fn sack_bitmap_exact(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let path = 5;
    // Path PSNs 0..=5, then 8, 9, 17 (the example of §3.5).
    let mut last_ts = 0;
    for psn in [0u32, 1, 2, 3, 4, 5, 8, 9, 17] {
        let p = c
            .write(&mut ctx.peer, path, 16 * psn as u64, b"s")
            .with(|r| r.path_psn = psn);
        last_ts = p.repr.timestamp;
        ctx.send(&p)?;
    }
    let (_, a) = ctx.ack_at_least(&c, path, last_ts)?;
    let bytes = a.sack.to_bytes();
    check!(a.path_cum == 6, "path_cum {}, expected 6", a.path_cum);
    check!(
        bytes[0] == 0x06 && bytes[1] == 0x04 && bytes[2..].iter().all(|&b| b == 0),
        "SACK bytes {:02x?}, expected 06 04 00..",
        &bytes[..4]
    );
    check!(a.rx_count == 9, "rx_count {}", a.rx_count);
    Ok(())
}

/// §6.3: filling a hole advances `path_cum` over every following marked PSN.
pub fn path_cum_advances_over_marked(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let path = 4;
    let mut ts = 0;
    for psn in [0u32, 2, 3, 5, 1] {
        let p = c
            .write(&mut ctx.peer, path, 16 * psn as u64, b"h")
            .with(|r| r.path_psn = psn);
        ts = p.repr.timestamp;
        ctx.send(&p)?;
    }
    let (_, a) = ctx.ack_at_least(&c, path, ts)?;
    check!(a.path_cum == 4, "path_cum {}, expected 4", a.path_cum);
    check!(
        a.sack.get(0) && a.sack.count() == 1,
        "SACK {:?}, expected only PSN 5 (bit 0)",
        a.sack
    );
    Ok(())
}

/// §1.2, §6.1: each path has its own path PSN sequence and receive state.
pub fn paths_are_tracked_independently(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    for i in 0..3 {
        let p = c.write(&mut ctx.peer, 7, 8 * i, b"a");
        ctx.send(&p)?;
    }
    let p = c
        .write(&mut ctx.peer, 12, 64, b"b")
        .with(|r| r.path_psn = 1); // PSN 0 of path 12 missing
    ctx.send(&p)?;
    let a7 = ctx.sync(&mut c, 7)?;
    let (_, a12) = ctx.ack_at_least(&c, 12, p.repr.timestamp)?;
    check!(
        a7.path_cum == 4 && a7.rx_count == 4,
        "path 7: path_cum {} rx_count {}",
        a7.path_cum,
        a7.rx_count
    );
    check!(
        a12.path_cum == 0 && a12.sack.get(0),
        "path 12: path_cum {} sack {:?}",
        a12.path_cum,
        a12.sack
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

/// §3.5, §6.3: `echo_ts` is the largest timestamp marked on the path.
pub fn echo_ts_is_the_largest(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p1 = c.write(&mut ctx.peer, 3, 0, b"t");
    let big = p1.repr.timestamp + 1_000_000_000;
    let p1 = p1.with(|r| r.timestamp = big);
    ctx.send_and_ack(&c, &p1)?;
    let p2 = c.write(&mut ctx.peer, 3, 8, b"u"); // an older clock value
    ctx.send(&p2)?;
    let p3 = c.probe(&mut ctx.peer, 3).with(|r| r.timestamp = big + 1);
    let (_, a) = ctx.send_and_ack(&c, &p3)?;
    check!(
        a.echo_ts == big + 1 && a.rx_count == 3,
        "echo_ts {} rx_count {}",
        a.echo_ts,
        a.rx_count
    );
    Ok(())
}

/// §2.4, §6.3, §4: a CE-marked packet is accepted (ECN is not covered by the ICRC), counted in `ce_count`, and ECE is echoed once.
pub fn ecn_echo(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c.write(&mut ctx.peer, 2, 0, b"ce").via(Via::Ce);
    let (rx, a) = ctx.send_and_ack(&c, &p)?;
    check!(
        a.conn_cum == c.next_conn_psn,
        "CE-marked packet not accepted"
    );
    check!(a.ce_count == 1, "ce_count {}, expected 1", a.ce_count);
    check!(
        rx.repr.flags.contains(Flags::ECE),
        "ECE not set after a CE mark"
    );
    let p = c.write(&mut ctx.peer, 2, 8, b"ok");
    let (rx, a) = ctx.send_and_ack(&c, &p)?;
    check!(
        a.ce_count == 1,
        "ce_count {} after an unmarked packet",
        a.ce_count
    );
    check!(
        !rx.repr.flags.contains(Flags::ECE),
        "ECE still set after an unmarked packet"
    );
    Ok(())
}

/// §3.7, §6.3: a PROBE is marked and acknowledged like data, and accepts nothing.
pub fn probe_is_marked_and_acked(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let a = ctx.sync(&mut c, 11)?;
    check!(
        a.path_cum == 1 && a.rx_count == 1,
        "PROBE: path_cum {} rx_count {}",
        a.path_cum,
        a.rx_count
    );
    check!(
        a.conn_cum == c.my_initial_psn,
        "a PROBE moved conn_cum to {:#x}",
        a.conn_cum
    );
    Ok(())
}

/// §6.3: a path PSN more than 256 ahead slides the window and releases what it passes.
pub fn path_window_slides(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let p = c
        .write(&mut ctx.peer, 1, 0, b"s")
        .with(|r| r.path_psn = 300);
    let (_, a) = ctx.send_and_ack(&c, &p)?;
    check!(
        a.path_cum == 44,
        "path_cum {}, expected 300 - 256 = 44",
        a.path_cum
    );
    check!(
        a.sack.get(255) && a.sack.count() == 1,
        "SACK {:?}, expected bit 255 only",
        a.sack
    );
    check!(a.conn_cum == c.next_conn_psn, "the packet was not accepted");
    Ok(())
}

/// §6.3: a path PSN before `path_cum` is a duplicate: marked again and acknowledged.
pub fn stale_path_psn_is_reacknowledged(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    ctx.sync(&mut c, 8)?;
    ctx.sync(&mut c, 8)?;
    let old = c.probe(&mut ctx.peer, 8).with(|r| r.path_psn = 0);
    let (_, a) = ctx.send_and_ack(&c, &old)?;
    check!(
        a.path_cum == 2 && a.rx_count == 3,
        "path_cum {} rx_count {}",
        a.path_cum,
        a.rx_count
    );
    Ok(())
}

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

/// §6.9 (Policy): the rate hint divides the line rate among active senders.
pub fn rate_hint_fair_share(ctx: &mut Ctx) -> Verdict {
    let Some(rate) = ctx.dev.line_rate_mbps() else {
        return Err(Fail::Skip(
            "the target does not report its line rate".into(),
        ));
    };
    let mut c1 = ctx.conn()?;
    let p = c1.write(&mut ctx.peer, 0, 0, b"1");
    let (_, a) = ctx.send_and_ack(&c1, &p)?;
    check!(
        a.rate_hint == rate,
        "one active sender: rate_hint {}, expected {rate}",
        a.rate_hint
    );
    // Let the fair-share window pass, then two senders.
    std::thread::sleep(std::time::Duration::from_millis(1));
    let mut c2 = ctx.conn()?;
    let p1 = c1.write(&mut ctx.peer, 0, 8, b"1");
    let p2 = c2.write(&mut ctx.peer, 0, 8, b"2");
    ctx.send(&p1)?;
    ctx.send(&p2)?;
    let (_, a2) = ctx.ack_at_least(&c2, 0, p2.repr.timestamp)?;
    std::thread::sleep(std::time::Duration::from_micros(200));
    let p3 = c2.write(&mut ctx.peer, 0, 16, b"3");
    let (_, a3) = ctx.send_and_ack(&c2, &p3)?;
    check!(
        a2.rate_hint == rate / 2 || a3.rate_hint == rate / 2,
        "two active senders: rate_hints {} and {}, expected {}",
        a2.rate_hint,
        a3.rate_hint,
        rate / 2
    );
    Ok(())
}

/// §3.5, §6.5: `credit` is the configured receive window.
pub fn credit_is_receive_window(ctx: &mut Ctx) -> Verdict {
    let opts = QpOptions {
        recv_window: 64,
        ..QpOptions::default()
    };
    let mut c = ctx.conn_with(opts, 0xFFFF_FFF0, 0x10)?;
    // Also crosses the 2^32 wrap of conn PSNs.
    for i in 0..20u64 {
        let p = c.write(&mut ctx.peer, (i % 3) as u16, i * 4, b"w");
        ctx.send(&p)?;
    }
    let a = ctx.sync(&mut c, 9)?;
    check!(a.credit == 64, "credit {}, expected 64", a.credit);
    check!(
        a.conn_cum == 4,
        "conn_cum {:#x} after wrapping, expected 0x4",
        a.conn_cum
    );
    Ok(())
}
