//! Output conventions shared by the commands: a table for people, or one
//! JSON document for programs; progress on stderr only when it is a terminal.

use std::io::IsTerminal;

use comfy_table::{Table, presets::UTF8_BORDERS_ONLY};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// Prints `value` as one JSON document, or the tables `human` builds.
pub fn emit<T: Serialize>(
    json: bool,
    value: &T,
    human: impl FnOnce() -> Vec<Table>,
) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(value)?);
    } else {
        for table in human() {
            println!("{table}");
        }
    }
    Ok(())
}

/// A table with a header row in the house style.
pub fn table<I, S>(header: I) -> Table
where
    I: IntoIterator<Item = S>,
    S: Into<comfy_table::Cell>,
{
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY).set_header(header);
    t
}

/// A progress bar on stderr, hidden unless stderr is a terminal.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(len),
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}
