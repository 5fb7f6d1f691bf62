//! Runtime state shared between the relay thread and its handle, counters, and the
//! line-based control protocol.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::RelayError;

/// Counters of one path (a snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounters {
    /// Datagrams hashed onto this path.
    pub received: u64,
    /// Datagrams sent on to their destination.
    pub forwarded: u64,
    /// Payload bytes forwarded.
    pub bytes: u64,
    /// Dropped by random loss.
    pub dropped_loss: u64,
    /// Dropped because the queue (or the relay's buffer pool) was full.
    pub dropped_queue: u64,
    /// Dropped because the path was blackholed.
    pub blackholed: u64,
    /// Forwarded with CE set by this path's marking.
    pub ce_marked: u64,
    /// Dropped because the send failed.
    pub send_errors: u64,
    /// Dropped because the ICRC did not verify (or it was no MetaRoCE packet), with
    /// `reseal_icrc` on.
    pub bad_icrc: u64,
    /// Extra copies queued by the path's duplication.
    pub duplicated: u64,
}

/// Live counters, written by the relay thread, read by anyone.
#[derive(Debug, Default)]
pub(crate) struct AtomicCounters {
    pub(crate) received: AtomicU64,
    pub(crate) forwarded: AtomicU64,
    pub(crate) bytes: AtomicU64,
    pub(crate) dropped_loss: AtomicU64,
    pub(crate) dropped_queue: AtomicU64,
    pub(crate) blackholed: AtomicU64,
    pub(crate) ce_marked: AtomicU64,
    pub(crate) send_errors: AtomicU64,
    pub(crate) bad_icrc: AtomicU64,
    pub(crate) duplicated: AtomicU64,
}

/// Adds one to a counter.
pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl AtomicCounters {
    fn snapshot(&self) -> PathCounters {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        PathCounters {
            received: r(&self.received),
            forwarded: r(&self.forwarded),
            bytes: r(&self.bytes),
            dropped_loss: r(&self.dropped_loss),
            dropped_queue: r(&self.dropped_queue),
            blackholed: r(&self.blackholed),
            ce_marked: r(&self.ce_marked),
            send_errors: r(&self.send_errors),
            bad_icrc: r(&self.bad_icrc),
            duplicated: r(&self.duplicated),
        }
    }
}

/// Run-time knobs and counters of one path.
#[derive(Debug)]
pub(crate) struct PathControl {
    pub(crate) blackholed: AtomicBool,
    /// Background load as `f64` bits: the share (0..1) of the rate it takes.
    load: AtomicU64,
    /// Random loss probability as `f64` bits.
    loss: AtomicU64,
    pub(crate) counters: AtomicCounters,
}

impl PathControl {
    pub(crate) fn new(loss: f64) -> Self {
        PathControl {
            blackholed: AtomicBool::new(false),
            load: AtomicU64::new(0f64.to_bits()),
            loss: AtomicU64::new(loss.to_bits()),
            counters: AtomicCounters::default(),
        }
    }

    pub(crate) fn load(&self) -> f64 {
        f64::from_bits(self.load.load(Ordering::Relaxed))
    }

    pub(crate) fn loss(&self) -> f64 {
        f64::from_bits(self.loss.load(Ordering::Relaxed))
    }
}

/// State shared by the relay thread and [`RelayHandle`](crate::RelayHandle).
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) stop: AtomicBool,
    pub(crate) paths: Vec<PathControl>,
}

/// A control command (one line of the control protocol).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    /// `blackhole <path|all>`: drop everything hashed onto the path(s).
    Blackhole(Target),
    /// `restore <path|all>`: undo `blackhole`.
    Restore(Target),
    /// `load <path|all> <share>`: background load taking `share` (0 ≤ share < 1) of the rate.
    Load(Target, f64),
    /// `loss <path|all> <p>`: set the random loss probability (0 ≤ p ≤ 1).
    Loss(Target, f64),
    /// `stats`: one line of counters per path.
    Stats,
    /// `help`: the command list.
    Help,
}

/// Which paths a command applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// One path, by index.
    Path(usize),
    /// Every path.
    All,
}

/// Text of the `help` command.
pub const HELP: &str = "commands: blackhole <path|all> | restore <path|all> | load <path|all> <share 0..1> | \
loss <path|all> <p 0..1> | stats | help";

impl Command {
    /// Parses one line (whitespace-separated words, case-insensitive command names).
    pub fn parse(line: &str) -> Result<Command, RelayError> {
        let bad = |m: &str| RelayError::Command(format!("{m}: {:?}", line.trim()));
        let mut words = line.split_whitespace();
        let cmd = words
            .next()
            .ok_or_else(|| bad("empty command"))?
            .to_ascii_lowercase();
        let mut target = || -> Result<Target, RelayError> {
            match words.next() {
                Some(w) if w.eq_ignore_ascii_case("all") => Ok(Target::All),
                Some(w) => w
                    .parse()
                    .map(Target::Path)
                    .map_err(|_| bad("bad path index")),
                None => Err(bad("missing path")),
            }
        };
        let parsed = match cmd.as_str() {
            "blackhole" => Command::Blackhole(target()?),
            "restore" => Command::Restore(target()?),
            "load" | "loss" => {
                let t = target()?;
                let v: f64 = words
                    .next()
                    .ok_or_else(|| bad("missing value"))?
                    .parse()
                    .map_err(|_| bad("bad number"))?;
                if cmd == "load" {
                    if !(0.0..1.0).contains(&v) {
                        return Err(bad("load must be in [0, 1)"));
                    }
                    Command::Load(t, v)
                } else {
                    if !(0.0..=1.0).contains(&v) {
                        return Err(bad("loss must be in [0, 1]"));
                    }
                    Command::Loss(t, v)
                }
            }
            "stats" => Command::Stats,
            "help" => Command::Help,
            _ => return Err(bad("unknown command")),
        };
        if words.next().is_some() {
            return Err(bad("trailing words"));
        }
        Ok(parsed)
    }
}

impl Shared {
    /// Counters of `path`.
    pub(crate) fn counters(&self, path: usize) -> Option<PathCounters> {
        self.paths.get(path).map(|p| p.counters.snapshot())
    }

    /// The paths a target names, or an error for an unknown index.
    fn targets(&self, t: Target) -> Result<std::ops::Range<usize>, RelayError> {
        match t {
            Target::All => Ok(0..self.paths.len()),
            Target::Path(p) if p < self.paths.len() => Ok(p..p + 1),
            Target::Path(p) => Err(RelayError::Command(format!(
                "no path {p} (the relay has {})",
                self.paths.len()
            ))),
        }
    }

    /// Applies a command; returns its text reply (`ok`, the stats table or the help).
    pub(crate) fn apply(&self, cmd: Command) -> Result<String, RelayError> {
        match cmd {
            Command::Blackhole(t) | Command::Restore(t) => {
                let on = matches!(cmd, Command::Blackhole(_));
                for p in self.targets(t)? {
                    self.paths[p].blackholed.store(on, Ordering::Relaxed);
                }
            }
            Command::Load(t, v) => {
                if !(0.0..1.0).contains(&v) {
                    return Err(RelayError::Command(format!("load {v} not in [0, 1)")));
                }
                for p in self.targets(t)? {
                    self.paths[p].load.store(v.to_bits(), Ordering::Relaxed);
                }
            }
            Command::Loss(t, v) => {
                if !(0.0..=1.0).contains(&v) {
                    return Err(RelayError::Command(format!("loss {v} not in [0, 1]")));
                }
                for p in self.targets(t)? {
                    self.paths[p].loss.store(v.to_bits(), Ordering::Relaxed);
                }
            }
            Command::Stats => return Ok(self.stats_text()),
            Command::Help => return Ok(HELP.to_string()),
        }
        Ok("ok".to_string())
    }

    /// One line per path: `path <i> <name>=<value> ...`.
    fn stats_text(&self) -> String {
        let mut s = String::new();
        for (i, p) in self.paths.iter().enumerate() {
            let c = p.counters.snapshot();
            let _ = writeln!(
                s,
                "path {i} received={} forwarded={} bytes={} dropped_loss={} dropped_queue={} blackholed={} \
ce_marked={} send_errors={} bad_icrc={} duplicated={} blackhole={} load={} loss={}",
                c.received,
                c.forwarded,
                c.bytes,
                c.dropped_loss,
                c.dropped_queue,
                c.blackholed,
                c.ce_marked,
                c.send_errors,
                c.bad_icrc,
                c.duplicated,
                u8::from(p.blackholed.load(Ordering::Relaxed)),
                p.load(),
                p.loss(),
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(n: usize) -> Shared {
        Shared {
            stop: AtomicBool::new(false),
            paths: (0..n).map(|_| PathControl::new(0.0)).collect(),
        }
    }

    #[test]
    fn parses_commands() {
        assert_eq!(
            Command::parse("blackhole 3").unwrap(),
            Command::Blackhole(Target::Path(3))
        );
        assert_eq!(
            Command::parse("  RESTORE all ").unwrap(),
            Command::Restore(Target::All)
        );
        assert_eq!(
            Command::parse("load 1 0.5").unwrap(),
            Command::Load(Target::Path(1), 0.5)
        );
        assert_eq!(
            Command::parse("loss all 0.01").unwrap(),
            Command::Loss(Target::All, 0.01)
        );
        assert_eq!(Command::parse("stats").unwrap(), Command::Stats);
        assert_eq!(Command::parse("help").unwrap(), Command::Help);
    }

    #[test]
    fn rejects_bad_commands() {
        for line in [
            "",
            "fly 1",
            "blackhole",
            "blackhole x",
            "blackhole -1",
            "load 1",
            "load 1 1.0",
            "load 1 NaN",
            "loss 0 1.5",
            "loss 0 -0.1",
            "stats now",
        ] {
            assert!(Command::parse(line).is_err(), "{line:?} should be rejected");
        }
    }

    #[test]
    fn apply_changes_state_and_checks_range() {
        let s = shared(3);
        s.apply(Command::Blackhole(Target::Path(1))).unwrap();
        assert!(s.paths[1].blackholed.load(Ordering::Relaxed));
        assert!(!s.paths[0].blackholed.load(Ordering::Relaxed));
        s.apply(Command::Load(Target::All, 0.25)).unwrap();
        assert!(s.paths.iter().all(|p| p.load() == 0.25));
        s.apply(Command::Loss(Target::Path(2), 0.5)).unwrap();
        assert_eq!(s.paths[2].loss(), 0.5);
        s.apply(Command::Restore(Target::All)).unwrap();
        assert!(
            s.paths
                .iter()
                .all(|p| !p.blackholed.load(Ordering::Relaxed))
        );
        assert!(s.apply(Command::Blackhole(Target::Path(3))).is_err());
        assert!(s.apply(Command::Load(Target::Path(0), 2.0)).is_err());
        let stats = s.apply(Command::Stats).unwrap();
        assert_eq!(stats.lines().count(), 3);
        assert!(stats.starts_with("path 0 received=0 forwarded=0"));
    }
}
