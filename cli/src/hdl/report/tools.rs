//! The tools `metaroce hdl report` runs: Verilator's lint and yosys.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use super::{NO_VERILATOR, NO_YOSYS, Synthesis};
use crate::report;

/// `verilator --lint-only -Wall` with the documented waivers; returns the
/// number of warnings.
pub(super) fn lint(path: &Path) -> anyhow::Result<u64> {
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", "top"])
        .args(metaroce_hdl::LINT_WAIVERS.iter().map(|(flag, _)| flag))
        .arg(path)
        .output()
        .context(NO_VERILATOR)?;
    let text = String::from_utf8_lossy(&out.stderr);
    let warnings = text.lines().filter(|l| l.starts_with("%Warning")).count() as u64;
    let errors = text.lines().filter(|l| l.starts_with("%Error")).count();
    if !out.status.success() && warnings == 0 && errors > 0 {
        bail!("Verilator lint failed on {}:\n{text}", path.display());
    }
    Ok(warnings)
}

/// yosys `synth_ecp5 -nowidelut` (the mapping the bitstream flow uses) and
/// its cell counts. The script stops before the
/// `check` stage: its first pass, `autoname`, only renames nets and takes
/// longer than the whole synthesis on the 512-bit blocks (yosys 0.23).
pub(super) fn synthesise(path: &Path, width: usize) -> anyhow::Result<Synthesis> {
    let bar = report::progress(1, &format!("{width}-bit yosys"));
    let stat = path.with_extension("stat");
    let started = Instant::now();
    let out = Command::new("yosys")
        .arg("-q")
        .arg("-p")
        .arg(format!(
            "read_verilog {}; synth_ecp5 -nowidelut -top top -run :check; tee -q -o {} stat",
            path.display(),
            stat.display()
        ))
        .output()
        .context(NO_YOSYS)?;
    bar.finish_and_clear();
    if !out.status.success() {
        bail!(
            "yosys failed on {}:\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(&stat)?;
    Ok(parse_stat(&text, started.elapsed().as_secs_f64()))
}

/// Cell counts from yosys `stat` output.
fn parse_stat(text: &str, seconds: f64) -> Synthesis {
    let mut s = Synthesis {
        seconds,
        ..Synthesis::default()
    };
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        let (Some(first), Some(last)) = (words.next(), line.split_whitespace().last()) else {
            continue;
        };
        let Ok(n) = last.parse::<u64>() else { continue };
        match first {
            "LUT4" => s.luts += n,
            "TRELLIS_FF" => s.ffs += n,
            "CCU2C" => s.carry_cells += n,
            "PFUMX" | "L6MUX21" => s.mux_cells += n,
            "DP16KD" => s.ebr += n,
            "TRELLIS_DPR16X4" => s.lut_ram += n,
            "MULT18X18D" => s.dsp += n,
            _ if line.starts_with("Number of cells:") => s.cells = n,
            _ => {}
        }
    }
    s.memories = s.ebr + s.lut_ram;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_output_is_parsed() {
        let text = "=== top ===\n   Number of cells:              11779\n     CCU2C   184\n     \
                    L6MUX21 1250\n     LUT4 7055\n     PFUMX 2582\n     TRELLIS_FF 708\n     DP16KD 2\n     \
                    TRELLIS_DPR16X4 5\n     MULT18X18D 4\n";
        let s = parse_stat(text, 1.0);
        assert_eq!(
            (
                s.cells,
                s.luts,
                s.ffs,
                s.carry_cells,
                s.mux_cells,
                s.memories
            ),
            (11779, 7055, 708, 184, 3832, 7)
        );
        assert_eq!((s.ebr, s.lut_ram, s.dsp), (2, 5, 4));
    }
}
