//! Runs the whole suite against each deliberately broken soft NIC and prints which
//! cases catch it (the table in docs/compliance.md comes from this).

use metaroce_compliance::soft::{Break, SoftTarget};
use metaroce_compliance::{RunOptions, Status, run};

fn main() {
    let lo = "127.0.0.1".parse().unwrap();
    for fault in Break::ALL {
        let report = run(&SoftTarget::broken(lo, fault), &RunOptions::default());
        let failed: Vec<&str> = report
            .cases
            .iter()
            .filter(|c| c.status == Status::Failed)
            .map(|c| c.name.as_str())
            .collect();
        println!(
            "{}: {} of {} cases fail: {}",
            fault.name(),
            failed.len(),
            report.total,
            failed.join(", ")
        );
    }
}
