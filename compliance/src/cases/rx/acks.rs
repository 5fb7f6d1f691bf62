//! Acknowledgements: ACK fields, SACK, path and connection tracking, probes, ECN echo, the rate hint and credit (spec §3, §6).

use metaroce_proto::Flags;

use crate::peer::Via;
use crate::target::QpOptions;
use crate::{Ctx, Fail, Verdict, check};

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

/// §3.7, §6.3: a PROBE without the connection's current PSN (here half the
/// PSN space away, a blind guess) is dropped unanswered and slides no path,
/// however far ahead its path PSN.
pub fn probe_without_conn_psn_ignored(ctx: &mut Ctx) -> Verdict {
    let mut c = ctx.conn()?;
    let blind = c.probe(&mut ctx.peer, 5).with(|r| {
        r.conn_psn = r.conn_psn.wrapping_add(1 << 31);
        r.path_psn = 1 << 20;
    });
    ctx.send(&blind)?;
    ctx.silence(crate::QUIET_WAIT)?;
    // The suite's next PROBE on the path has path PSN 1: not slid, the
    // path still waits for PSN 0.
    let a = ctx.sync(&mut c, 5)?;
    check!(
        a.path_cum == 0 && a.rx_count == 1,
        "after a blind PROBE: path_cum {} rx_count {}",
        a.path_cum,
        a.rx_count
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

/// Rounds [`rate_hint_fair_share`] runs at most before it concludes that
/// the target never shares its line rate between two senders.
const FAIR_SHARE_ROUNDS: u64 = 20;

/// §6.9 (Policy): the rate hint divides the line rate among active senders.
///
/// Two connections count as active together only if the target sees their
/// packets within its 100 µs fair-share window on its own clock, which the
/// suite cannot stop: a target on a loaded host (a model stepped in real
/// time) may stall between two packets sent back to back. So the case runs
/// rounds: both connections idle for longer than the window (a sleep can
/// only make that longer), then one packet on each, back to back; a correct
/// target recounts at the first packet of each (a new sender changes
/// everyone's share at once). Every ACK must carry the whole or half the
/// line rate, and one must carry half within `FAIR_SHARE_ROUNDS` rounds.
/// The ACK of the second packet may still carry the share counted before
/// it (a hardware ACK generator with a rate register the firmware writes
/// after its own count): the next round's first ACK carries it then.
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
    let mut c2 = ctx.conn()?;
    let mut hints = Vec::new();
    for round in 1..=FAIR_SHARE_ROUNDS {
        // Well past the window: neither connection is active any more.
        std::thread::sleep(std::time::Duration::from_millis(1));
        let p1 = c1.write(&mut ctx.peer, 0, 8 * round, b"1");
        let p2 = c2.write(&mut ctx.peer, 0, 8 * round, b"2");
        ctx.send(&p1)?;
        ctx.send(&p2)?;
        let (_, a1) = ctx.ack_at_least(&c1, 0, p1.repr.timestamp)?;
        let (_, a2) = ctx.ack_at_least(&c2, 0, p2.repr.timestamp)?;
        for h in [a1.rate_hint, a2.rate_hint] {
            check!(
                h == rate || h == rate / 2,
                "two connections: rate_hint {h}, expected {rate} or {}",
                rate / 2
            );
            hints.push(h);
        }
        if hints.contains(&(rate / 2)) {
            return Ok(());
        }
    }
    Err(Fail::Fail(format!(
        "two active senders: rate hints {hints:?} in {FAIR_SHARE_ROUNDS} rounds, none {}",
        rate / 2
    )))
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
