//! Verified traffic between two NICs, shared by `metaroce bench` and `metaroce demo`:
//! the operation, the generator that keeps messages in flight, and the receiver's
//! checks.
//!
//! Every message is verified at its destination when it completes: each slot holds a
//! fixed random pattern with the message number stamped every 1 KiB ([`Patterns`]), so
//! a misplaced, stale or corrupt byte fails the check.

use std::time::{Duration, Instant};

use anyhow::bail;
use clap::ValueEnum;
use metaroce_driver::verbs::*;
use serde::Serialize;

mod pair;
mod patterns;
mod rows;

pub use pair::{NicPair, NicPairSetup, Side};
pub(crate) use pair::{make_side, soft_context};
pub use patterns::Patterns;
pub use rows::{LossRow, PathRow, RelayRow, path_rows, relay_rows};

/// The operation a traffic run moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// RDMA WRITE.
    Write,
    /// SEND into posted receives.
    Send,
    /// RDMA READ.
    Read,
}

/// Outcome of a traffic run.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TrafficResult {
    /// Messages completed and verified.
    pub messages: u64,
    /// Payload bytes completed.
    pub bytes: u64,
    /// Seconds from first post to last completion.
    pub seconds: f64,
    /// Messages whose bytes did not match at the destination.
    pub mismatches: u64,
    /// Completions with an error status.
    pub errors: u64,
}

impl TrafficResult {
    /// Goodput in Gbit/s.
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.seconds.max(1e-9) / 1e9
    }
}

fn wait_any(cqs: &[&CompletionQueue], wcs: &mut Vec<Wc>) -> usize {
    let mut buf = [Wc::default(); 64];
    let mut n = 0;
    for cq in cqs {
        let k = cq.poll(&mut buf);
        wcs.extend_from_slice(&buf[..k]);
        n += k;
    }
    n
}

/// What a traffic run moves.
#[derive(Debug, Clone, Copy)]
pub struct TrafficSpec {
    /// Operation.
    pub op: Op,
    /// Message size, bytes.
    pub size: usize,
    /// Messages in flight.
    pub depth: usize,
    /// How long to keep posting.
    pub duration: Duration,
}

/// The receiver's buffer as the sender addresses it.
#[derive(Debug, Clone, Copy)]
pub struct Remote {
    /// Address of slot 0.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
}

/// Moves `op` messages of `size` bytes from A to B for `duration`, `depth` in flight,
/// verifying each; `tick` is called with the bytes done so far about every 100 ms.
pub fn run_traffic(
    pair: &NicPair,
    op: Op,
    size: usize,
    depth: usize,
    duration: Duration,
    tick: impl FnMut(u64),
) -> anyhow::Result<TrafficResult> {
    let remote = Remote {
        va: pair.b.mr.addr(),
        rkey: pair.b.mr.rkey(),
    };
    let t = TrafficSpec {
        op,
        size,
        depth,
        duration,
    };
    run_traffic_to(&pair.a, remote, Some(&pair.b), &t, tick).map(|(r, _)| r)
}

/// [`run_traffic`] from `a` to `remote`; `b` is the receiving side when it lives in this
/// process (it then checks every message; otherwise the receiver does, see
/// `metaroce bench --server`).
/// Returns the result and the number of messages posted.
pub fn run_traffic_to(
    a: &Side,
    remote: Remote,
    b: Option<&Side>,
    t: &TrafficSpec,
    mut tick: impl FnMut(u64),
) -> anyhow::Result<(TrafficResult, u64)> {
    let (op, size, duration) = (t.op, t.size, t.duration);
    let depth = t.depth.max(1);
    // SEND: B keeps twice the sender's depth of receives posted, so a message never
    // waits for a receive (message m lands in B's slot m % recv_slots).
    let recv_slots = 2 * depth;
    let slots = recv_slots.max(depth);
    if a.mr.len() < slots * size || b.is_some_and(|b| b.mr.len() < slots * size) {
        bail!("registered memory too small for {slots} slots of {size} bytes");
    }
    let mut pat = Patterns::new(size, slots);
    if let Some(b) = b {
        prepare_receiver(b, &mut pat, t)?;
    } else if op == Op::Read {
        // The remote receiver filled slot s with message s.
        for s in 0..depth {
            pat.remember(s, s as u64);
        }
    }
    let post = |pat: &mut Patterns, m: u64| -> anyhow::Result<()> {
        let s = (m % depth as u64) as usize;
        let off = s * size;
        let va = remote.va + off as u64;
        let wr = match op {
            Op::Write => {
                pat.fill(&a.mr, off, s, m);
                SendRequest::write(m, a.mr.sge(off, size as u32), va, remote.rkey)
            }
            Op::Send => {
                pat.fill(&a.mr, off, s, m);
                let mut wr = SendRequest::send(m, a.mr.sge(off, size as u32));
                wr.op = SendOp::SendImm { imm: m as u32 };
                wr
            }
            Op::Read => SendRequest::read(m, a.mr.sge(off, size as u32), va, remote.rkey),
        };
        a.qp.post_send(&wr)?;
        Ok(())
    };

    let mut res = TrafficResult::default();
    let start = Instant::now();
    let mut next = 0u64;
    for _ in 0..depth {
        post(&mut pat, next)?;
        next += 1;
    }
    let mut in_flight = depth as u64;
    let mut recv_next = 0u64;
    let mut wcs = Vec::with_capacity(256);
    let mut last_tick = start;
    // After `duration`, stop posting and drain; give up on stragglers after 10 s more.
    let drain_limit = duration + Duration::from_secs(10);
    let mut cqs = vec![&a.cq];
    cqs.extend(b.map(|b| &b.cq));
    while in_flight > 0 || (op == Op::Send && b.is_some() && recv_next < next) {
        let elapsed = start.elapsed();
        if elapsed > drain_limit {
            bail!("{in_flight} messages did not complete in time");
        }
        wcs.clear();
        if wait_any(&cqs, &mut wcs) == 0 {
            std::thread::sleep(Duration::from_micros(20));
            continue;
        }
        for wc in &wcs {
            if wc.status != WcStatus::Success {
                res.errors += 1;
                if wc.opcode != WcOpcode::Recv {
                    in_flight -= 1;
                }
                continue;
            }
            match (wc.opcode, b) {
                (WcOpcode::Recv, Some(b)) => {
                    let ok = receive(b, &mut pat, t, recv_next, wc)?;
                    recv_next += 1;
                    res.mismatches += u64::from(!ok);
                }
                (WcOpcode::Recv, None) => {}
                _ => {
                    let m = wc.wr_id;
                    let s = (m % depth as u64) as usize;
                    // The slot is refilled only after this check.
                    let ok = match (op, b) {
                        (Op::Write, Some(b)) => pat.check_filled(&b.mr, s * size, s),
                        (Op::Read, _) => pat.check_filled(&a.mr, s * size, s),
                        // Checked at the receiver.
                        (Op::Write, None) | (Op::Send, _) => true,
                    };
                    res.mismatches += u64::from(!ok);
                    res.messages += 1;
                    res.bytes += size as u64;
                    in_flight -= 1;
                    if start.elapsed() < duration {
                        post(&mut pat, next)?;
                        next += 1;
                        in_flight += 1;
                    }
                }
            }
        }
        if last_tick.elapsed() >= Duration::from_millis(100) {
            last_tick = Instant::now();
            tick(res.bytes);
        }
    }
    res.seconds = start.elapsed().as_secs_f64();
    tick(res.bytes);
    Ok((res, next))
}

/// Gets the receiving side ready: READ sources filled, SEND receives posted.
pub fn prepare_receiver(b: &Side, pat: &mut Patterns, t: &TrafficSpec) -> anyhow::Result<()> {
    let (size, depth) = (t.size, t.depth.max(1));
    if t.op == Op::Read {
        // B holds fixed contents; A reads them back slot by slot.
        for s in 0..depth {
            pat.fill(&b.mr, s * size, s, s as u64);
        }
    }
    if t.op == Op::Send {
        for s in 0..2 * depth {
            b.qp.post_recv(RecvWr {
                wr_id: s as u64,
                sgl: b.mr.sge(s * size, size as u32).into(),
                stream: 0,
            })?;
        }
    }
    Ok(())
}

/// Checks receive number `m` (one stream: receives complete in order; the immediate
/// says which message arrived) and posts its buffer again; true if it verified.
pub fn receive(
    b: &Side,
    pat: &mut Patterns,
    t: &TrafficSpec,
    m: u64,
    wc: &Wc,
) -> anyhow::Result<bool> {
    let (size, depth) = (t.size, t.depth.max(1) as u64);
    let rs = (m % (2 * depth)) as usize;
    let ok = wc.imm == Some(m as u32)
        && wc.byte_len as usize == size
        && pat.check(&b.mr, rs * size, (m % depth) as usize, m);
    b.qp.post_recv(RecvWr {
        wr_id: rs as u64,
        sgl: b.mr.sge(rs * size, size as u32).into(),
        stream: 0,
    })?;
    Ok(ok)
}
