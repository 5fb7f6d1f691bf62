//! Print the RX parser's Verilog: `cargo run -p metaroce-hdl --example emit_rx_parser -- 512`.
fn main() {
    let width = std::env::args()
        .nth(1)
        .map(|w| w.parse().expect("width must be a number"))
        .unwrap_or(64);
    print!("{}", metaroce_hdl::rx_parser_verilog(width));
}
