//! `metaroce compliance`: the black-box conformance suite (`metaroce-compliance`)
//! against an implementation under test.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::Args;
use metaroce_compliance::soft::SoftTarget;
use metaroce_compliance::{RunOptions, run};

/// Options of `metaroce compliance`.
#[derive(Args, Debug)]
pub struct ComplianceArgs {
    /// Implementation under test: `soft` (a soft NIC started on loopback for each
    /// case), or `udp://HOST:PORT` (a remote endpoint; needs a control agent, see
    /// docs/compliance.md).
    #[arg(long, default_value = "soft")]
    target: String,
    /// Print one JSON document (passed, failed, skipped, failures with their spec
    /// sections, every case) on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write JUnit XML to this file.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Run only cases whose name contains this text (repeatable).
    #[arg(long)]
    filter: Vec<String>,
    /// Cases run at once (each on its own endpoint).
    #[arg(long, default_value_t = 8)]
    parallel: usize,
    /// List the cases with their spec sections and exit.
    #[arg(long)]
    list: bool,
}

/// Runs the command; the exit status is non-zero when a case failed.
pub fn run_cmd(args: &ComplianceArgs) -> anyhow::Result<()> {
    if args.list {
        for c in metaroce_compliance::cases::all() {
            println!("§{:<18} {:<42} {}", c.spec, c.name, c.title);
        }
        return Ok(());
    }
    let target = match args.target.as_str() {
        "soft" => SoftTarget::new("127.0.0.1".parse()?),
        t if t.starts_with("udp://") => bail!(
            "remote targets ({t}) need a control agent that creates QPs and memory regions \
             on the device; it is not implemented yet (docs/compliance.md, \"Testing a \
             vendor's NIC\"): implement metaroce_compliance::target::Target for the device"
        ),
        t => bail!("unknown target {t:?}: use soft or udp://HOST:PORT"),
    };
    let opts = RunOptions {
        filter: args.filter.clone(),
        parallel: args.parallel,
        ..RunOptions::default()
    };
    let report = run(&target, &opts);
    if let Some(path) = &args.junit {
        std::fs::write(path, report.to_junit())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    if report.failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
