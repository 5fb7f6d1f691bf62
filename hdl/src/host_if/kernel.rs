//! A block's kernel written as several `#[hdl_gen]` functions, one concern
//! each, that rust-hdl runs and emits as one kernel.
//!
//! rust-hdl takes one `update` per block. A block whose kernel wires many
//! concerns implements [`Part<N>`] once per concern (`#[hdl_gen] fn
//! update(&mut self)` in `impl Part<N> for Block`; the attribute writes the
//! part's `connect` and `hdl`), and its `Logic` calls the parts in order
//! and emits [`joined`] parts: one `always @(*)` block with the parts'
//! statements in that order, the Verilog of one `update` holding them all.

use rust_hdl::prelude::*;

/// Part `N` of a block's kernel.
pub(crate) trait Part<const N: usize> {
    /// The part's statements (rust-hdl's simulation).
    fn update(&mut self);
    /// Marks the signals the part drives as driven.
    fn connect(&mut self);
    /// The part's statements as Verilog (`Verilog::Combinatorial`).
    fn hdl(&self) -> Verilog;
}

/// The statements of kernel parts, in order, as one combinational block.
///
/// # Panics
/// If a part is not combinational.
pub(crate) fn joined(parts: impl IntoIterator<Item = Verilog>) -> Verilog {
    Verilog::Combinatorial(
        parts
            .into_iter()
            .flat_map(|p| match p {
                Verilog::Combinatorial(block) => block,
                _ => panic!("a kernel part is combinational"),
            })
            .collect(),
    )
}

/// `impl Logic` for `$ty<$g...>` whose kernel is its parts `$n...`, run and
/// emitted in that order.
macro_rules! kernel_of_parts {
    ($ty:ident [$($g:ident),*] $($n:literal)*) => {
        impl<$(const $g: usize),*> Logic for $ty<$($g),*> {
            fn update(&mut self) {
                $( <Self as $crate::host_if::kernel::Part<$n>>::update(self); )*
            }

            fn connect(&mut self) {
                $( <Self as $crate::host_if::kernel::Part<$n>>::connect(self); )*
            }

            fn hdl(&self) -> Verilog {
                $crate::host_if::kernel::joined([
                    $( <Self as $crate::host_if::kernel::Part<$n>>::hdl(self), )*
                ])
            }
        }
    };
}
pub(crate) use kernel_of_parts;
