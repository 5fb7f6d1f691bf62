//! Checks of what the linker made and of the ABI mirrors: the symbols a shared object
//! exports, the values of C layout expressions against the installed headers, and the
//! Debian packages those checks need.

use std::path::Path;
use std::process::{Command, Stdio};

/// The global, defined, versioned symbols a shared object exports, as sorted
/// "VERSION symbol" lines (read with `objdump -T`), and whether anything of Rust's
/// leaked out.
pub fn exported_symbols(so: &Path) -> Result<(Vec<String>, bool), String> {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(so)
        .output()
        .map_err(|e| format!("running objdump: {e}"))?;
    if !out.status.success() {
        return Err(format!("objdump -T {} failed", so.display()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut syms: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" g ") && !l.contains("*UND*"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (ver, name) = (f.get(f.len().wrapping_sub(2))?, f.last()?);
            (*ver != *name).then(|| format!("{ver} {name}"))
        })
        .collect();
    syms.sort();
    Ok((syms, text.contains("rust_")))
}

/// The value of each C expression (`sizeof(...)`, `offsetof(...)`) compiled against the
/// installed headers `includes`, in order.
pub fn c_values(includes: &[&str], exprs: &[&str]) -> Result<Vec<usize>, String> {
    let mut src = String::from("#include <stdio.h>\n#include <stddef.h>\n");
    for h in includes {
        src.push_str(&format!("#include <{h}>\n"));
    }
    src.push_str("int main(void) {\n");
    for e in exprs {
        src.push_str(&format!("  printf(\"%zu\\n\", (size_t)({e}));\n"));
    }
    src.push_str("  return 0;\n}\n");
    let dir = std::env::temp_dir().join(format!(
        "metaroce-layout-{}-{}",
        std::process::id(),
        includes.join("-").replace('/', "_")
    ));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let c = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&c, src).map_err(|e| e.to_string())?;
    let st = Command::new("cc")
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .status()
        .map_err(|e| format!("running cc: {e}"))?;
    let out = st
        .success()
        .then(|| Command::new(&exe).output())
        .transpose()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.ok_or("compiling the layout probe failed")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().map_err(|_| format!("bad probe output {l:?}")))
        .collect()
}

/// Installs Debian packages (as root, when apt-get exists); failures are left to the
/// caller's own checks.
pub fn apt_install(pkgs: &[&str]) {
    let quiet = |c: &mut Command| {
        c.env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
    };
    let _ = quiet(Command::new("apt-get").args(["update", "-qq"]));
    let _ = quiet(
        Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(pkgs),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_values_reads_the_headers() {
        let v = c_values(&["stdint.h"], &["sizeof(uint32_t)", "sizeof(uint64_t)"]).unwrap();
        assert_eq!(v, [4, 8]);
        assert!(c_values(&["no/such/header.h"], &["1"]).is_err());
    }
}
