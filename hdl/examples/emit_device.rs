//! Print the device top's Verilog (`HostIf` + `NicCore`):
//! `cargo run -p metaroce-hdl --example emit_device -- 512`.
fn main() {
    let width = std::env::args()
        .nth(1)
        .map(|w| w.parse().expect("width must be a number"))
        .unwrap_or(64);
    print!("{}", metaroce_hdl::nic_device_verilog(width));
}
