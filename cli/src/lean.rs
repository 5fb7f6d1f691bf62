//! What a `metaroce` built without the `hdl` feature answers for the commands
//! that need the Verilated models (`hdl`, `device`).

use clap::Args;

/// Whatever arguments were given to a command this build does not have.
#[derive(Args, Debug)]
pub struct Unavailable {
    /// Ignored.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

/// The error for `metaroce <command>` in a build without the `hdl` feature.
pub fn unavailable(command: &str) -> anyhow::Result<()> {
    anyhow::bail!(
        "`metaroce {command}` needs the Verilated NIC models, and this metaroce was built \
         without the `hdl` feature; build it with `cargo build -p metaroce-cli` \
         (the default features, which need Verilator: apt-get install verilator)"
    )
}
