//! `metaroce relay` (and its old name `fabric`): its life on stdin and its commands.

use super::*;

#[test]
fn relay_runs_until_stdin_closes_and_keeps_its_old_name() {
    let link = ["--link", "127.0.0.1:0=127.0.0.1:9"];
    let out = metaroce(&[&["relay"][..], &link].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("link 127.0.0.1:"));

    let old = metaroce(&[&["fabric"][..], &link].concat());
    assert!(old.status.success());
    assert!(String::from_utf8_lossy(&old.stderr).contains("now `metaroce relay`"));
}
#[test]
fn relay_commands_on_stdin_are_checked() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_metaroce"))
        .args(["relay", "--link", "127.0.0.1:0=127.0.0.1:9"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn relay");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"no-such-command 1\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let all = [out.stdout, out.stderr].concat();
    assert!(
        !String::from_utf8_lossy(&all).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&all)
    );
}
