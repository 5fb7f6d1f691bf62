//! MetaRoCE NIC data path described in [rust-hdl](https://crates.io/crates/rust-hdl),
//! emitted as Verilog.
//!
//! One module per concern, each with AXI-Stream style ports (`s_axis_*` in,
//! `m_axis_*` out) and the data width as a const generic, so the same
//! description builds 64-bit beats (1G/10G class) and 512-bit beats
//! (100G class).
//!
//! Receive side: [`RxEth`] parses Ethernet, IPv4/IPv6 and UDP and hands
//! the UDP payload and its pseudo-header fields to the receive core
//! [`RxCore`]: [`RxParser`] parses the MetaRoCE headers and checks the ICRC
//! ([`icrc`]); [`RxPlace`] looks up the QP and MR tables, makes the
//! engine's receive checks and places WRITE payloads as DMA writes;
//! [`RxPathTable`] tracks every (QP, path) (cumulative PSN + 256-bit SACK,
//! [`rx_path`]) and [`AckGen`] builds the ACKs from it ([`ack_gen`]).
//! [`NicRx`] is the front end and the core together. The per-path rules
//! alone are also a standalone block ([`rx_path_verilog`]).
//!
//! Transmit side: [`TxBuild`] turns firmware descriptors into
//! Ethernet/IP/UDP frames with the UDP source port rewritten to the path's
//! entropy and the ICRC computed after the rewrite; the per-path TX table
//! ([`TxPathTable`], [`tx_path_verilog`]) holds the sender's per-path state (path PSNs, the
//! ring of transmissions, RTT, ECN and loss estimates, in-flight bytes).
//!
//! Top: [`NicCore`] wires [`NicRx`], [`TxBuild`], the ACK framer
//! [`AckFrame`] (ACK datagrams → Ethernet/IPv4/UDP frames), the MAC
//! transmit arbiter [`TxArb`] and the TX table ([`TxPathTable`]).
//!
//! Device: [`NicDevice`] is [`HostIf`] (queues in host memory through a
//! generic DMA request interface, interrupts) and its BAR0 register file
//! [`host_if::RegFile`] (register map in [`host_if::regs`]) around
//! [`NicCore`].
//!
//! The `*_verilog` functions return each block's Verilog (top module
//! `top`); the `metaroce-sim-tb` crate Verilates them and checks them
//! against the engine and the wire format. `docs/hardware.md` describes
//! the interfaces and the table map.

pub mod ack_frame;
pub mod ack_gen;
pub mod ack_high;
pub mod ack_rx;
pub mod board;
pub mod bus;
pub mod census;
pub mod code_counters;
pub mod codegen;
pub mod fw_rx;
pub mod helpers;
pub mod host_if;
pub mod icrc;
pub mod mac;
pub mod nic_core;
pub mod nic_device;
pub mod nic_rx;
pub mod rx_core;
pub mod rx_eth;
pub mod rx_parser;
pub mod rx_path;
pub mod rx_place;
pub mod shim;
pub mod tx_arb;
pub mod tx_build;
pub mod tx_path;

pub use ack_frame::AckFrame;
pub use ack_gen::AckGen;
pub use ack_high::{AckHigh, SackTop};
pub use ack_rx::AckRx;
pub use fw_rx::FwRx;
pub use host_if::HostIf;
pub use mac::{MacRx, MacTx};
pub use nic_core::NicCore;
pub use nic_device::NicDevice;
pub use nic_rx::NicRx;
pub use rx_core::RxCore;
pub use rx_eth::{EthDrop, RxEth, RxEth64, RxEth512};
pub use rx_parser::{DropReason, RxParser, RxParser64, RxParser512};
pub use rx_path::{PathMark, PathVerdict, RxPathRegs, RxPathTable, rx_path_verilog};
pub use rx_place::{RxPlace, Verdict};
pub use tx_arb::TxArb;
pub use tx_build::TxBuild;
pub use tx_path::{TxOp, TxPathTable, tx_path_verilog};

use rust_hdl::core::prelude::*;

/// Verilator lint waivers the emitted Verilog needs on top of `-Wall`, each
/// with the reason. The Verilator build (`metaroce-sim-tb`) and
/// `metaroce hdl report` both use exactly this list.
pub const LINT_WAIVERS: &[(&str, &str)] = &[
    (
        "-Wno-WIDTH",
        "rust-hdl writes literals as 32/64-bit constants and indexes with 16-bit \
         constants, so nearly every assignment is width-mismatched on paper",
    ),
    (
        "-Wno-DECLFILENAME",
        "rust-hdl names the top module `top`; files are named after the model",
    ),
    (
        "-Wno-UNUSEDPARAM",
        "rust-hdl declares a state enum's values (`LogicState`) as localparams in \
         every module that holds the state, whether that module compares with them or not",
    ),
];

/// Data widths (bits per beat) that [`RxParser`] accepts.
pub const SUPPORTED_WIDTHS: [usize; 4] = [64, 128, 256, 512];

/// Verilog source of the RX parser for `width` bits per beat.
///
/// The top module is named `top`; its ports are the fields of
/// [`RxParser`] (`clock`, `rst`, `s_axis_*`, `m_axis_*`, `m_meta_*`).
///
/// # Panics
/// If `width` is not one of [`SUPPORTED_WIDTHS`].
pub fn rx_parser_verilog(width: usize) -> String {
    match width {
        64 => emit(RxParser::<64, 8>::default),
        128 => emit(RxParser::<128, 16>::default),
        256 => emit(RxParser::<256, 32>::default),
        512 => emit(RxParser::<512, 64>::default),
        other => panic!("unsupported RX parser width {other}; use one of {SUPPORTED_WIDTHS:?}"),
    }
}

/// Verilog source of the receive core ([`RxCore`]: parser, ICRC, tables,
/// checks, placement, path tracker, ACK generator) for `width` bits per beat; top module `top`.
///
/// # Panics
/// If `width` is not one of [`SUPPORTED_WIDTHS`].
pub fn rx_core_verilog(width: usize) -> String {
    match width {
        64 => emit(RxCore::<64, 8>::default),
        128 => emit(RxCore::<128, 16>::default),
        256 => emit(RxCore::<256, 32>::default),
        512 => emit(RxCore::<512, 64>::default),
        other => panic!("unsupported RX core width {other}; use one of {SUPPORTED_WIDTHS:?}"),
    }
}

/// Verilog source of the Ethernet/IP/UDP receive front end ([`RxEth`]) for
/// `width` bits per beat; top module `top`.
///
/// # Panics
/// If `width` is not 64 or 512.
pub fn rx_eth_verilog(width: usize) -> String {
    match width {
        64 => emit(RxEth::<64, 8>::default),
        512 => emit(RxEth::<512, 64>::default),
        other => panic!("unsupported RX front end width {other}; use 64 or 512"),
    }
}

/// Verilog source of the whole receive side from Ethernet frames
/// ([`NicRx`]: [`RxEth`] then [`RxCore`]) for `width` bits per beat; top
/// module `top`.
///
/// # Panics
/// If `width` is not 64 or 512.
pub fn nic_rx_verilog(width: usize) -> String {
    match width {
        64 => emit(NicRx::<64, 8>::default),
        512 => emit(NicRx::<512, 64>::default),
        other => panic!("unsupported receive-side width {other}; use 64 or 512"),
    }
}

/// Verilog source of the TX frame builder ([`TxBuild`]) for `width` bits
/// per beat; top module `top`.
///
/// # Panics
/// If `width` is not one of [`SUPPORTED_WIDTHS`].
pub fn tx_build_verilog(width: usize) -> String {
    match width {
        64 => emit(TxBuild::<64, 8>::default),
        128 => emit(TxBuild::<128, 16>::default),
        256 => emit(TxBuild::<256, 32>::default),
        512 => emit(TxBuild::<512, 64>::default),
        other => panic!("unsupported TX builder width {other}; use one of {SUPPORTED_WIDTHS:?}"),
    }
}

/// Verilog source of the placement block ([`RxPlace`]) alone at `width`
/// bits per beat, for per-block synthesis; top module `top`.
///
/// # Panics
/// If `width` is not one of [`SUPPORTED_WIDTHS`].
pub fn rx_place_verilog(width: usize) -> String {
    match width {
        64 => emit(RxPlace::<64, 8>::default),
        128 => emit(RxPlace::<128, 16>::default),
        256 => emit(RxPlace::<256, 32>::default),
        512 => emit(RxPlace::<512, 64>::default),
        other => panic!("unsupported RX placement width {other}; use one of {SUPPORTED_WIDTHS:?}"),
    }
}

/// Verilog source of the receive core's path tracker ([`RxPathTable`])
/// alone, as the 64-bit core has it (the mark split over its stages), for
/// per-block synthesis; top module `top`.
pub fn rx_path_table_verilog() -> String {
    emit(RxPathTable::<64>::default)
}

/// Verilog source of the NIC top ([`NicCore`]: receive side, ACK framer,
/// TX builder, MAC transmit arbiter, 16-slot TX table) for `width` bits per
/// beat; top module `top`.
///
/// # Panics
/// If `width` is not 64 or 512.
pub fn nic_core_verilog(width: usize) -> String {
    match width {
        64 => emit(NicCore::<64, 8>::default),
        512 => emit(NicCore::<512, 64>::default),
        other => panic!("unsupported NIC top width {other}; use 64 or 512"),
    }
}

/// Verilog source of the device top ([`NicDevice`]: [`HostIf`] and its
/// register file around [`NicCore`]) for `width` bits per beat; top module `top`.
///
/// # Panics
/// If `width` is not 64 or 512.
pub fn nic_device_verilog(width: usize) -> String {
    match width {
        64 => emit(NicDevice::<64, 8>::default),
        512 => emit(NicDevice::<512, 64>::default),
        other => panic!("unsupported device width {other}; use 64 or 512"),
    }
}

/// Verilog source of the host interface alone ([`HostIf`] without its
/// register file [`host_if::RegFile`]: its ports toward `NicCore` and the
/// register file become top-level ports) for `width` bits per beat; top
/// module `top`. For synthesis figures of the block on its own.
///
/// # Panics
/// If `width` is not 64 or 512.
pub fn host_if_verilog(width: usize) -> String {
    match width {
        64 => emit(HostIf::<64, 8>::default),
        512 => emit(HostIf::<512, 64>::default),
        other => panic!("unsupported host interface width {other}; use 64 or 512"),
    }
}

/// Verilog source of the GMII transmit MAC ([`MacTx`]); top module `top`.
pub fn mac_tx_verilog() -> String {
    emit(MacTx::default)
}

/// Verilog source of the GMII receive MAC ([`MacRx`]); top module `top`.
pub fn mac_rx_verilog() -> String {
    emit(MacRx::default)
}

/// Verilog source of the ButterStick's NIC top
/// ([`board::butterstick::NicBoard`]); top module `top`, ports as its fields.
pub fn butterstick_nic_verilog() -> String {
    emit(board::butterstick::NicBoard::default)
}

/// Verilog source of the ButterStick's Ethernet echo top
/// ([`board::butterstick::EthEcho`]); top module `top`, ports as its fields.
pub fn butterstick_echo_verilog() -> String {
    emit(board::butterstick::EthEcho::default)
}

/// Verilog source of a vendor shim ([`shim`]) at 512 bits (the Alveo
/// project's width; the AXI4-Lite adapter has no width), top module `top`:
/// `axil_bar`, `dma_read` or `dma_write`.
///
/// # Panics
/// If `name` is none of those.
pub fn shim_verilog(name: &str) -> String {
    match name {
        "axil_bar" => emit(shim::AxilBar::default),
        "dma_read" => emit(shim::DmaRead::<512, 64, 1024>::default),
        "dma_write" => emit(shim::DmaWrite::<512, 64, 1024>::default),
        other => panic!("unknown shim {other}; use axil_bar, dma_read or dma_write"),
    }
}

/// Stack of the thread that builds and emits a block: the tops are
/// large values, built and moved on the stack (several MiB in a debug
/// build, beyond a test thread's 2 MiB).
const EMIT_STACK: usize = 256 << 20;

/// The Verilog of the block `make` builds, on a thread with `EMIT_STACK`
/// (for a part of a block that has no function of its own here).
pub fn emit<U: Block>(make: fn() -> U) -> String {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(EMIT_STACK)
            .spawn_scoped(s, || {
                let mut uut = make();
                uut.connect_all();
                generate_verilog(&uut)
            })
            .expect("spawn the emitting thread")
            .join()
            .expect("emit the Verilog")
    })
}
