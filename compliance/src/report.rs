//! Results of a run: the human table, the JSON document and JUnit XML.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

/// Outcome of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The target behaved as the spec says.
    Passed,
    /// It did not (or the case could not run).
    Failed,
    /// The target cannot be set up for this case.
    Skipped,
}

/// One case's result.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// Case name.
    pub name: String,
    /// Spec section(s) checked.
    pub spec: String,
    /// What the case checks.
    pub title: String,
    /// Outcome.
    pub status: Status,
    /// Why it failed or was skipped; empty when it passed.
    pub message: String,
    /// Run time.
    #[serde(serialize_with = "secs")]
    pub duration: Duration,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// A failure as listed in the JSON document.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// Case name.
    pub name: String,
    /// Spec section(s) the target violated.
    pub spec: String,
    /// What went wrong.
    pub message: String,
}

/// The result of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Target name.
    pub target: String,
    /// Cases run.
    pub total: usize,
    /// Cases passed.
    pub passed: usize,
    /// Cases failed.
    pub failed: usize,
    /// Cases skipped.
    pub skipped: usize,
    /// Every failure with its spec section.
    pub failures: Vec<Failure>,
    /// Wall time of the run, s.
    #[serde(serialize_with = "secs")]
    pub duration: Duration,
    /// Every case.
    pub cases: Vec<CaseResult>,
}

impl Report {
    /// Summarises case results.
    pub fn new(target: String, cases: Vec<CaseResult>, duration: Duration) -> Report {
        let count = |s| cases.iter().filter(|c| c.status == s).count();
        Report {
            target,
            total: cases.len(),
            passed: count(Status::Passed),
            failed: count(Status::Failed),
            skipped: count(Status::Skipped),
            failures: cases
                .iter()
                .filter(|c| c.status == Status::Failed)
                .map(|c| Failure {
                    name: c.name.clone(),
                    spec: c.spec.clone(),
                    message: c.message.clone(),
                })
                .collect(),
            duration,
            cases,
        }
    }

    /// The result of case `name`, if it ran.
    pub fn case(&self, name: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|c| c.name == name)
    }

    /// The JSON document (`--json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// JUnit XML: one `testsuite`, one `testcase` per case, classname = spec section.
    pub fn to_junit(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            x,
            "<testsuite name=\"metaroce-compliance ({})\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            xml(&self.target),
            self.total,
            self.failed,
            self.skipped,
            self.duration.as_secs_f64()
        );
        for c in &self.cases {
            let _ = write!(
                x,
                "  <testcase classname=\"spec {}\" name=\"{}\" time=\"{:.3}\"",
                xml(&c.spec),
                xml(&c.name),
                c.duration.as_secs_f64()
            );
            match c.status {
                Status::Passed => x.push_str("/>\n"),
                Status::Failed => {
                    let _ = writeln!(
                        x,
                        ">\n    <failure message=\"{}\">spec §{}: {}</failure>\n  </testcase>",
                        xml(&c.message),
                        xml(&c.spec),
                        xml(&c.title)
                    );
                }
                Status::Skipped => {
                    let _ = writeln!(
                        x,
                        ">\n    <skipped message=\"{}\"/>\n  </testcase>",
                        xml(&c.message)
                    );
                }
            }
        }
        x.push_str("</testsuite>\n");
        x
    }

    /// The human table.
    pub fn to_table(&self) -> String {
        let mut t = String::new();
        for c in &self.cases {
            let mark = match c.status {
                Status::Passed => "pass",
                Status::Failed => "FAIL",
                Status::Skipped => "skip",
            };
            let _ = writeln!(t, "{mark}  §{:<14} {:<44} {}", c.spec, c.name, c.message);
        }
        let _ = writeln!(
            t,
            "\n{}: {} passed, {} failed, {} skipped of {} in {:.1} s",
            self.target,
            self.passed,
            self.failed,
            self.skipped,
            self.total,
            self.duration.as_secs_f64()
        );
        t
    }
}

/// Escapes text for XML attributes and content; drops characters XML 1.0 forbids.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_escapes_markup_and_control_characters() {
        let case = CaseResult {
            name: "a<b".into(),
            spec: "6.2".into(),
            title: "t".into(),
            status: Status::Failed,
            message: "x & \"y\"\u{1}".into(),
            duration: Duration::ZERO,
        };
        let r = Report::new("soft".into(), vec![case], Duration::ZERO);
        let x = r.to_junit();
        assert!(x.contains("name=\"a&lt;b\""));
        assert!(x.contains("message=\"x &amp; &quot;y&quot;\""));
        assert_eq!(r.failed, 1);
        assert_eq!(r.failures[0].spec, "6.2");
    }
}
