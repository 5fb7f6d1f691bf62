//! Print the host interface's Verilog alone (its `NicCore`-side ports as
//! top-level ports): `cargo run -p metaroce-hdl --example emit_host_if -- 64`.
fn main() {
    let width = std::env::args()
        .nth(1)
        .map(|w| w.parse().expect("width must be a number"))
        .unwrap_or(64);
    print!("{}", metaroce_hdl::host_if_verilog(width));
}
