//! Bad arguments: a clear error, and a suggestion for a typo.

use super::*;

#[test]
fn bad_arguments_get_clear_errors() {
    fails_with(&["no-such-command"], "unrecognized subcommand");
    fails_with(
        &["bench", "write", "--size", "0"],
        "--size must be positive",
    );
    fails_with(
        &["bench", "write", "--loss", "1.5"],
        "--loss must be in [0, 1)",
    );
    fails_with(&["sim", "loss", "--loss", "2"], "not a probability");
    fails_with(
        &["sim", "allreduce", "--hosts", "4"],
        "is not a multiple of --hosts-per-leaf",
    );
    fails_with(
        &["bench", "write", "--via", "127.0.0.1:7101"],
        "--nic-port and --via are for two-process runs",
    );
    fails_with(&["relay", "--link", "garbage"], "expected LISTEN=FORWARD");
    fails_with(&["compliance", "--target", "bogus"], "unknown target");
    fails_with(&["demo", "--loss", "lots"], "invalid value 'lots'");
}
/// A mistyped command, option or value is named, with the right spelling suggested.
#[test]
fn typos_get_a_suggestion() {
    fails_with(&["demoo"], "a similar subcommand exists: 'demo'");
    fails_with(&["sim", "los"], "a similar subcommand exists: 'loss'");
    fails_with(&["bench", "wirte"], "a similar value exists: 'write'");
    fails_with(
        &["bench", "write", "--sise", "4096"],
        "a similar argument exists: '--size'",
    );
    // (Without the `hdl` feature these commands take any arguments and say that the
    // build lacks them.)
    #[cfg(feature = "hdl")]
    {
        fails_with(
            &["hdl", "report", "--synth", "cor"],
            "a similar value exists: 'core'",
        );
        fails_with(&["device", "serv"], "a similar subcommand exists: 'serve'");
    }
}
