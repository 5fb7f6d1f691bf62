//! The hardware NIC's constants, generated at build time by
//! `metaroce_hdl::codegen` from the RTL's own tables (`build.rs`): nothing here is
//! written by hand.

/// The receive core's verdict codes and table map (`metaroce_hdl::rx_place`).
pub mod core {
    include!(concat!(env!("OUT_DIR"), "/core_codes.rs"));
}

/// The TX builder's configuration map (`metaroce_hdl::tx_build::cfg`).
pub mod tx {
    include!(concat!(env!("OUT_DIR"), "/tx_codes.rs"));
}

/// The ACK receiver's slot map (`metaroce_hdl::ack_rx::cfg`).
pub mod ack_rx {
    include!(concat!(env!("OUT_DIR"), "/ack_rx_codes.rs"));
}

/// The TX table's operation codes (`metaroce_hdl::TxOp`).
pub mod tx_op {
    include!(concat!(env!("OUT_DIR"), "/tx_ops.rs"));
}

/// The device's BAR0 register map and queue constants (`metaroce_hdl::host_if`).
pub mod regs {
    include!(concat!(env!("OUT_DIR"), "/host_regs.rs"));
}

/// The management protocol over a UART (`metaroce_hdl::board::mgmt::proto`).
pub mod mgmt {
    include!(concat!(env!("OUT_DIR"), "/mgmt_codes.rs"));
}
