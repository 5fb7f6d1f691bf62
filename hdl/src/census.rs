//! How much of an emitted design is hand-written Verilog: the modules that
//! carry [`HAND_WRITTEN`] (this crate's templates and custom leaves)
//! against the rest (what rust-hdl generated from kernels, and its own
//! library leaves such as `DFF` and `RAM`), each distinct module counted
//! once: rust-hdl emits one module per instance, named by its place in the
//! hierarchy, so instances of one block with the same parameters have the
//! same body. `metaroce hdl report` prints it for the 64-bit device.

use std::collections::BTreeSet;

use crate::helpers::HAND_WRITTEN;

/// Distinct modules and their lines in one emitted design.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Distinct modules from rust-hdl: generated from kernels, or its
    /// library's leaves.
    pub rust_hdl_modules: usize,
    /// Distinct hand-written modules: Verilog templates and the small
    /// custom leaves (each with a Rust model).
    pub custom_modules: usize,
    /// Lines of the distinct rust-hdl modules (header to `endmodule`).
    pub rust_hdl_lines: usize,
    /// Lines of the distinct hand-written modules (header to `endmodule`).
    pub custom_lines: usize,
}

impl Census {
    /// Counts the modules of `verilog`, one emitted design.
    pub fn of(verilog: &str) -> Self {
        let mut seen = BTreeSet::new();
        let mut census = Census::default();
        let all = modules(verilog);
        for module in &all {
            // The header and `endmodule // name` lines name the instance.
            if !seen.insert(&module[1..module.len() - 1]) {
                continue;
            }
            if module.iter().any(|l| l.trim() == HAND_WRITTEN) {
                census.custom_modules += 1;
                census.custom_lines += module.len();
            } else {
                census.rust_hdl_modules += 1;
                census.rust_hdl_lines += module.len();
            }
        }
        census
    }

    /// Custom lines as a fraction of all distinct modules' lines.
    pub fn custom_fraction(&self) -> f64 {
        let all = self.custom_lines + self.rust_hdl_lines;
        if all == 0 {
            0.0
        } else {
            self.custom_lines as f64 / all as f64
        }
    }
}

/// The lines of each `module` … `endmodule` of `verilog` (lines outside
/// a module are skipped).
fn modules(verilog: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let mut open: Option<Vec<&str>> = None;
    for line in verilog.lines() {
        if line.starts_with("module ") {
            open = Some(Vec::new());
        }
        if let Some(m) = open.as_mut() {
            m.push(line);
            if line.starts_with("endmodule") {
                out.extend(open.take());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "module top(a);\n    // Update code\n    assign a = 1;\nendmodule // top\n\
        module top$x(b);\n    // metaroce: hand-written Verilog\n    assign b = 0;\nendmodule // top$x\n\
        module top$y(b);\n    // metaroce: hand-written Verilog\n    assign b = 0;\nendmodule // top$y\n";

    #[test]
    fn counts_each_distinct_module_once_by_kind() {
        let c = Census::of(TWO);
        assert_eq!(
            c,
            Census {
                rust_hdl_modules: 1,
                custom_modules: 1,
                rust_hdl_lines: 4,
                custom_lines: 4,
            }
        );
        assert_eq!(c.custom_fraction(), 0.5);
    }

    #[test]
    fn the_device_has_both_kinds_and_every_module_is_counted() {
        let v = crate::nic_device_verilog(64);
        let c = Census::of(&v);
        eprintln!(
            "NicDevice-64: {c:?}, custom fraction {:.3}",
            c.custom_fraction()
        );
        let all = modules(&v);
        assert_eq!(
            all.len(),
            v.lines().filter(|l| l.starts_with("module ")).count()
        );
        let distinct: BTreeSet<_> = all.iter().map(|m| &m[1..m.len() - 1]).collect();
        assert_eq!(c.custom_modules + c.rust_hdl_modules, distinct.len());
        assert!(c.custom_modules > 0 && c.rust_hdl_modules > 0, "{c:?}");
        let lines: usize = all.iter().map(Vec::len).sum();
        assert!(c.custom_lines + c.rust_hdl_lines <= lines);
    }
}
