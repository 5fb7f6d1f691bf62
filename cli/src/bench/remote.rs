//! `metaroce bench --server` / `--connect`: a two-process run, the sender here and the
//! receiver in another process, agreed over a line-based TCP exchange:
//!
//! ```text
//!   client: hello <op> <size> <depth> <qpn> <addr> <psn>
//!   server: ok <qpn> <addr> <psn> <va> <rkey>        (its QP is connected by then)
//!   client: done <messages posted>
//!   server: result <messages checked> <mismatches>
//! ```

use std::io::{BufRead, BufReader, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use metaroce_driver::verbs::*;
use serde::Serialize;

use super::{BenchArgs, finish, measured, path_table};
use crate::report;
use crate::traffic::{
    LossRow, NicPairSetup, Op, PathRow, Patterns, Remote, TrafficSpec, make_side, path_rows,
    prepare_receiver, receive, run_traffic_to, soft_context,
};

/// The operation as the exchange spells it.
fn op_name(op: Op) -> &'static str {
    match op {
        Op::Write => "write",
        Op::Send => "send",
        Op::Read => "read",
    }
}

/// The words of the peer's next line, which must start with `want`.
fn read_words(r: &mut impl BufRead, want: &str) -> anyhow::Result<Vec<String>> {
    let mut line = String::new();
    r.read_line(&mut line).context("reading from the peer")?;
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if words.first().map(String::as_str) != Some(want) {
        bail!("expected `{want} ...` from the peer, got {line:?}");
    }
    Ok(words)
}

/// Word `i` of a peer's line, parsed.
fn word<T: std::str::FromStr>(w: &[String], i: usize) -> anyhow::Result<T>
where
    T::Err: std::fmt::Display,
{
    let s = w.get(i).context("short line from the peer")?;
    s.parse()
        .map_err(|e| anyhow::anyhow!("bad field {s:?}: {e}"))
}

/// `--connect`: the sender here, the receiver the `--server` at `server`.
pub(super) fn client(
    args: &BenchArgs,
    setup: &NicPairSetup,
    server: SocketAddr,
) -> anyhow::Result<()> {
    let a = make_side(setup, soft_context(setup, 0xa11ce)?)?;
    let tcp = TcpStream::connect(server).with_context(|| format!("connecting to {server}"))?;
    tcp.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut w = tcp.try_clone()?;
    let mut r = BufReader::new(tcp);
    let me = a.qp.endpoint();
    let t = TrafficSpec {
        op: args.op,
        size: args.size as usize,
        depth: args.depth.max(1),
        duration: Duration::from_secs_f64(args.duration.max(0.1)),
    };
    let op = op_name(t.op);
    writeln!(
        w,
        "hello {op} {} {} {} {} {}",
        t.size, t.depth, me.qpn, me.addr, me.psn
    )?;
    let ok = read_words(&mut r, "ok")?;
    let peer = QpEndpoint {
        qpn: word(&ok, 1)?,
        addr: args.via.map_or_else(|| word(&ok, 2), Ok)?,
        psn: word(&ok, 3)?,
    };
    let remote = Remote {
        va: word(&ok, 4)?,
        rkey: word(&ok, 5)?,
    };
    a.qp.connect(&peer, &ConnectOptions::default())?;
    let mut posted = 0;
    let (mut res, cpu) = measured(&t, |tick| {
        let (res, n) = run_traffic_to(&a, remote, None, &t, tick)?;
        posted = n;
        Ok(res)
    })?;
    writeln!(w, "done {posted}")?;
    let result = read_words(&mut r, "result")?;
    let checked: u64 = word(&result, 1)?;
    res.mismatches += word::<u64>(&result, 2)?;
    if t.op != Op::Read && checked == 0 {
        bail!("the server checked nothing");
    }
    finish(args, &a, None, None, &res, cpu, None)
}

/// The `--server` side's report.
#[derive(Serialize)]
struct ServerReport {
    op: String,
    size: usize,
    messages_posted: u64,
    checked: u64,
    mismatches: u64,
    errors: u64,
    verified: bool,
    /// This side's transport counters (for READ it is the data sender).
    #[serde(flatten)]
    losses: LossRow,
    repaths: u64,
    /// Datagrams this NIC dropped, every reason (the engine's `Drops`).
    drops: u64,
    /// Per-path counters of this side's QP.
    path_stats: Vec<PathRow>,
}

/// The client's `hello` line: the traffic it will run and its QP's endpoint
/// (its address replaced by `via` when the server reaches it through a relay).
fn parse_hello(
    hello: &[String],
    via: Option<SocketAddr>,
) -> anyhow::Result<(TrafficSpec, QpEndpoint)> {
    let op = match word::<String>(hello, 1)?.as_str() {
        "write" => Op::Write,
        "send" => Op::Send,
        "read" => Op::Read,
        other => bail!("unknown operation {other:?}"),
    };
    let t = TrafficSpec {
        op,
        size: word(hello, 2)?,
        depth: word::<usize>(hello, 3)?.max(1),
        duration: Duration::ZERO,
    };
    if t.size == 0 || t.size > 1 << 30 || t.depth > 4096 {
        bail!("unreasonable size or depth from the client");
    }
    let peer = QpEndpoint {
        qpn: word(hello, 4)?,
        addr: via.map_or_else(|| word(hello, 5), Ok)?,
        psn: word(hello, 6)?,
    };
    Ok((t, peer))
}

/// The server's summary as a table.
fn server_table(rep: &ServerReport) -> comfy_table::Table {
    let mut tb = report::table(["server", "value"]);
    tb.add_row(vec![
        "operation".to_string(),
        format!("{} {} B", rep.op, rep.size),
    ]);
    tb.add_row(vec![
        "messages posted".to_string(),
        rep.messages_posted.to_string(),
    ]);
    tb.add_row(vec![
        "checked here".to_string(),
        format!(
            "{} ({} mismatches, {} errors)",
            rep.checked, rep.mismatches, rep.errors
        ),
    ]);
    tb.add_row(vec!["retransmits".to_string(), rep.losses.describe()]);
    tb.add_row(vec!["repaths".to_string(), rep.repaths.to_string()]);
    tb.add_row(vec!["drops here".to_string(), rep.drops.to_string()]);
    tb
}

/// `--server`: waits for one client and is its receiver, checking every message.
pub(super) fn serve(args: &BenchArgs, setup: &NicPairSetup) -> anyhow::Result<()> {
    let listener = TcpListener::bind(SocketAddr::new(args.ip, args.port))?;
    eprintln!(
        "metaroce bench server: waiting on {}",
        listener.local_addr()?
    );
    let (tcp, _) = listener.accept()?;
    let mut w = tcp.try_clone()?;
    let mut r = BufReader::new(tcp);
    let (t, peer) = parse_hello(&read_words(&mut r, "hello")?, args.via)?;
    let op = t.op;
    let mut setup = setup.clone();
    setup.mem = t.size * t.depth * 2;
    let b = make_side(&setup, soft_context(&setup, 0xb0b)?)?;
    b.qp.connect(&peer, &ConnectOptions::default())?;
    let mut pat = Patterns::new(t.size, 2 * t.depth);
    prepare_receiver(&b, &mut pat, &t)?;
    let me = b.qp.endpoint();
    writeln!(
        w,
        "ok {} {} {} {} {}",
        me.qpn,
        me.addr,
        me.psn,
        b.mr.addr(),
        b.mr.rkey()
    )?;
    // The `done` line arrives while receives are being checked.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_words(&mut r, "done").and_then(|d| word::<u64>(&d, 1)));
    });
    let (mut checked, mut mismatches, mut errors, mut next) = (0u64, 0u64, 0u64, 0u64);
    let mut posted: Option<(u64, Instant)> = None;
    let mut wcs = [Wc::default(); 64];
    loop {
        let n = b.cq.poll(&mut wcs);
        for wc in &wcs[..n] {
            if wc.status != WcStatus::Success {
                errors += 1;
            } else if wc.opcode == WcOpcode::Recv {
                mismatches += u64::from(!receive(&b, &mut pat, &t, next, wc)?);
                checked += 1;
                next += 1;
            }
        }
        if posted.is_none() {
            match rx.try_recv() {
                Ok(done) => posted = Some((done?, Instant::now())),
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => bail!("client vanished"),
            }
        }
        if let Some((total, since)) = posted
            && (op != Op::Send || next >= total || since.elapsed() > Duration::from_secs(10))
        {
            break;
        }
        if n == 0 {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    let total = posted.map_or(0, |(t, _)| t);
    if op == Op::Write {
        // Each slot holds the last message written into it.
        let depth = t.depth as u64;
        for s in 0..depth.min(total) {
            let m = s + depth * ((total - 1 - s) / depth);
            let s = s as usize;
            mismatches += u64::from(!pat.check(&b.mr, s * t.size, s, m));
            checked += 1;
        }
    }
    if op == Op::Send && next < total {
        mismatches += total - next;
    }
    writeln!(w, "result {checked} {mismatches}")?;
    let stats = b.ctx.stats();
    let rep = ServerReport {
        op: op_name(op).to_string(),
        size: t.size,
        messages_posted: total,
        checked,
        mismatches,
        errors,
        verified: mismatches == 0 && errors == 0,
        losses: LossRow::sum([&stats]),
        repaths: stats.repaths,
        drops: b.ctx.drops().total(),
        path_stats: path_rows(&b.qp),
    };
    report::emit(args.json, &rep, || {
        vec![server_table(&rep), path_table(&rep.path_stats)]
    })?;
    if !rep.verified {
        bail!("data verification failed");
    }
    Ok(())
}
