//! Helpers for tests.

/// Installs Debian packages (as root, when apt-get exists); failures are left to the
/// caller's own checks.
pub fn apt_install(pkgs: &[&str]) {
    let quiet = |c: &mut std::process::Command| {
        c.env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(std::process::Stdio::null())
            .status()
    };
    let _ = quiet(std::process::Command::new("apt-get").args(["update", "-qq"]));
    let _ = quiet(
        std::process::Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(pkgs),
    );
}
