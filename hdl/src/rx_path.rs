//! Per-path receive tracker (`RxPath`): for each of `paths` paths, the
//! cumulative path PSN (`cum`, the first PSN not yet received), the 256-bit
//! SACK bitmap above it (bit `i` is PSN `cum + 1 + i`, as
//! `metaroce_proto::Sack`), and the received and CE-marked packet counters;
//! updated from one arrival event `(path, path_psn, ce)` per cycle with the
//! rules of the engine's `RxPath::mark` and `Rx::on_path_arrival`.
//!
//! Hand-written Verilog (`rx_path.v.in`): rust-hdl kernels cannot index
//! arrays of registers. The top module is `top`:
//!
//! * `ev_valid`, `ev_path`, `ev_psn` (32), `ev_ce`: one arrival per cycle;
//! * `res_valid`, `res_path`, `res_code` (2): the verdict
//!   ([`PathVerdict`]), registered, one cycle after the event;
//! * `rd_path` in, `rd_cum` (32), `rd_sack` (256), `rd_rx_count` (32),
//!   `rd_ce_count` (32) out: a path's current state (a mux of the
//!   registers, so it shows every event clocked so far): the fields an ACK
//!   carries.
//!
//! The whole update (a 256-bit variable shift for a slide, a count of
//! leading ones and a second shift, then a third for the advance over
//! `cum`) is one combinational cycle: correct, not timing-closed.

/// Largest number of paths the template is instantiated with here.
pub const MAX_PATHS: usize = 64;

/// Verdict per arrival (`res_code`), the engine's `PathMark`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PathVerdict {
    /// First arrival: state updated, counted.
    New = 0,
    /// Behind `cum` or already in the bitmap: counted, state unchanged.
    Duplicate = 1,
    /// 2^30 or more ahead of `cum`: dropped, nothing changes.
    OutOfWindow = 2,
}

impl PathVerdict {
    /// Every verdict.
    pub const ALL: [PathVerdict; 3] = [Self::New, Self::Duplicate, Self::OutOfWindow];
}

/// Verilog source of the tracker for `paths` paths (a power of two, 2 to
/// [`MAX_PATHS`]); top module `top`, `ev_path`/`rd_path` are
/// `log2(paths)` bits.
///
/// # Panics
/// If `paths` is not a power of two in 2..=[`MAX_PATHS`].
pub fn rx_path_verilog(paths: usize) -> String {
    assert!(
        paths.is_power_of_two() && (2..=MAX_PATHS).contains(&paths),
        "unsupported path count {paths}"
    );
    let bits = paths.trailing_zeros() as usize;
    include_str!("rx_path.v.in")
        .replace("@NPATHS@", &paths.to_string())
        .replace("@PWM1@", &(bits - 1).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_is_fully_substituted() {
        for paths in [2, 8, 64] {
            let v = rx_path_verilog(paths);
            assert!(!v.contains("@NPATHS@") && !v.contains("@PWM1@"));
            let bits = paths.trailing_zeros() - 1;
            assert!(v.contains(&format!("input wire [{bits}:0] ev_path;")));
            assert!(v.contains("module top("));
        }
    }
}
