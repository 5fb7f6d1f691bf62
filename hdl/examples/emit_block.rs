//! Print one block's Verilog (top module `top`), for the per-block
//! synthesis and place-and-route flow (`bitstreams/ecp5/build.sh`):
//! `cargo run -p metaroce-hdl --example emit_block -- rx_eth 64`.
//!
//! Blocks: `rx_parser` (the default), `rx_eth`, `rx_core`, `rx_place`,
//! `nic_rx`, `tx_build`, `rx_path_table` (no width), `tx_path` (the width
//! argument is its slot count, 2 to 64), `nic_core`, `mac_tx`
//! and `mac_rx` (GMII, no width), `butterstick_nic` and `butterstick_echo`
//! (board tops); width 64 (the default) or 512; the vendor shims `axil_bar`,
//! `dma_read` and `dma_write` (512 bits, no width argument); `ack_gen` and
//! `ack_frame` (the ACK generator and framer alone, 64 or 512).
fn main() {
    let mut args = std::env::args().skip(1);
    let block = args.next().unwrap_or_else(|| "rx_parser".into());
    let width = args
        .next()
        .map(|w| w.parse().expect("width must be a number"))
        .unwrap_or(64);
    let verilog = match block.as_str() {
        "rx_parser" => metaroce_hdl::rx_parser_verilog(width),
        "rx_eth" => metaroce_hdl::rx_eth_verilog(width),
        "rx_core" => metaroce_hdl::rx_core_verilog(width),
        "rx_place" => metaroce_hdl::rx_place_verilog(width),
        "nic_rx" => metaroce_hdl::nic_rx_verilog(width),
        "tx_build" => metaroce_hdl::tx_build_verilog(width),
        "rx_path_table" => metaroce_hdl::rx_path_table_verilog(),
        "tx_path" => metaroce_hdl::tx_path_verilog(width),
        "nic_core" => metaroce_hdl::nic_core_verilog(width),
        "mac_tx" => metaroce_hdl::mac_tx_verilog(),
        "mac_rx" => metaroce_hdl::mac_rx_verilog(),
        "butterstick_nic" => metaroce_hdl::butterstick_nic_verilog(),
        "butterstick_echo" => metaroce_hdl::butterstick_echo_verilog(),
        "axil_bar" | "dma_read" | "dma_write" => metaroce_hdl::shim_verilog(&block),
        "ack_gen" if width == 512 => metaroce_hdl::emit(metaroce_hdl::AckGen::<512, 64>::default),
        "ack_gen" => metaroce_hdl::emit(metaroce_hdl::AckGen::<64, 8>::default),
        "ack_frame" if width == 512 => {
            metaroce_hdl::emit(metaroce_hdl::AckFrame::<512, 64>::default)
        }
        "ack_frame" => metaroce_hdl::emit(metaroce_hdl::AckFrame::<64, 8>::default),
        other => {
            eprintln!(
                "unknown block {other}: use rx_parser, rx_eth, rx_core, rx_place, nic_rx, tx_build, rx_path_table, tx_path, nic_core, mac_tx, mac_rx, butterstick_nic, butterstick_echo, axil_bar, dma_read, dma_write, ack_gen or ack_frame"
            );
            std::process::exit(2);
        }
    };
    print!("{verilog}");
}
