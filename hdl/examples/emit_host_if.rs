//! Print the host interface's Verilog alone (its `NicCore`-side ports as
//! top-level ports), or one of its parts alone (`reg_file`: the BAR0
//! register file; `ev_ring`: the event FIFOs and the event ring's writer):
//! `cargo run -p metaroce-hdl --example emit_host_if -- 64 [reg_file|ev_ring]`.
use metaroce_hdl::emit;
use metaroce_hdl::host_if::{EvRing, RegFile};

fn main() {
    let mut args = std::env::args().skip(1);
    let width = args
        .next()
        .map(|w| w.parse().expect("width must be a number"))
        .unwrap_or(64);
    let verilog = match (args.next().as_deref(), width) {
        (None, w) => metaroce_hdl::host_if_verilog(w),
        (Some("reg_file"), 64) => emit(RegFile::<64>::default),
        (Some("reg_file"), 512) => emit(RegFile::<512>::default),
        (Some("ev_ring"), 64) => emit(EvRing::<64, 8>::default),
        (Some("ev_ring"), 512) => emit(EvRing::<512, 64>::default),
        (part, w) => {
            panic!("unknown part {part:?} at width {w}: use reg_file or ev_ring, 64 or 512")
        }
    };
    print!("{verilog}");
}
