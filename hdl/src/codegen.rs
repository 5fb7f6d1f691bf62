//! Rust source for the constants other crates take from this one, so that none
//! of them restates a code, an address or a register offset: the build scripts of
//! `metaroce-sim-tb` (the benches) and `metaroce-driver` (the host driver) write
//! these strings into their `OUT_DIR` and `include!` them.
//!
//! Each function returns one file's text; [`FILES`] lists them by file name.

use std::fmt::Write as _;

/// A generator: one file's text.
pub type Generator = fn() -> String;

/// Every generated file: its name and its generator.
pub const FILES: &[(&str, Generator)] = &[
    ("drop_reasons.rs", drop_reasons),
    ("core_codes.rs", core_codes),
    ("path_codes.rs", path_codes),
    ("tx_ops.rs", tx_ops),
    ("host_regs.rs", host_regs),
    ("eth_reasons.rs", eth_reasons),
    ("tx_codes.rs", tx_codes),
    ("ack_rx_codes.rs", ack_rx_codes),
    ("mgmt_codes.rs", mgmt_codes),
];

/// `drop_reasons.rs`: the RX parser's `m_meta_reason` codes, taken from
/// `metaroce_hdl::DropReason` so no user restates them.
pub fn drop_reasons() -> String {
    use crate::DropReason as R;
    let mut rs = String::new();
    for (name, r) in [
        ("NONE", R::None),
        ("TRUNCATED", R::Truncated),
        ("BAD_VERSION", R::BadVersion),
        ("BAD_OPCODE", R::BadOpcode),
        ("UNEXPECTED_PAYLOAD", R::UnexpectedPayload),
        ("BAD_ICRC", R::BadIcrc),
    ] {
        writeln!(
            rs,
            "/// `DropReason::{r:?}`.\npub const {name}: u8 = {};",
            r as u8
        )
        .unwrap();
    }
    rs
}

/// `core_codes.rs`: the receive core's verdict codes and table map, taken
/// from `metaroce_hdl::rx_place` so no user restates them.
pub fn core_codes() -> String {
    use crate::rx_place::{
        CONN_WINDOW, MRS, MSN_STREAMS, QPS, READS, RQ_SLOTS, RQ_STREAMS, Verdict, cfg,
    };
    let mut rs = String::new();
    for v in Verdict::ALL {
        let name: String = format!("{v:?}")
            .chars()
            .flat_map(|c| {
                let sep = c.is_uppercase().then_some('_');
                sep.into_iter().chain(c.to_uppercase())
            })
            .collect();
        writeln!(
            rs,
            "/// `Verdict::{v:?}`.\npub const V{name}: u8 = {};",
            v as u8
        )
        .unwrap();
    }
    for (name, v) in [
        ("CFG_QP", cfg::QP),
        ("CFG_MR", cfg::MR),
        ("CFG_GLOBAL", cfg::GLOBAL),
        ("QP_CTRL", cfg::QP_CTRL),
        ("QP_QPNS", cfg::QP_QPNS),
        ("QP_PEER_IP_HI", cfg::QP_PEER_IP_HI),
        ("QP_PEER_IP_LO", cfg::QP_PEER_IP_LO),
        ("QP_PD_STREAMS", cfg::QP_PD_STREAMS),
        ("QP_CONN_PSN", cfg::QP_CONN_PSN),
        ("MR_CTRL", cfg::MR_CTRL),
        ("MR_KEY_PD", cfg::MR_KEY_PD),
        ("MR_BASE", cfg::MR_BASE),
        ("MR_LEN", cfg::MR_LEN),
        ("GLOBAL_MTU", cfg::GLOBAL_MTU),
        ("QP_PEER_PORT", cfg::QP_PEER_PORT),
        ("QP_RATE_CREDIT", cfg::QP_RATE_CREDIT),
        ("GLOBAL_LOCAL_IP_HI", cfg::GLOBAL_LOCAL_IP_HI),
        ("GLOBAL_LOCAL_IP_LO", cfg::GLOBAL_LOCAL_IP_LO),
        ("QP_STATE_INIT", cfg::STATE_IDLE),
        ("QP_STATE_RTR", cfg::STATE_RTR),
        ("QP_STATE_RTS", cfg::STATE_RTS),
        ("CFG_RQ", cfg::RQ),
        ("RQ_ADDR", cfg::RQ_ADDR),
        ("RQ_LEN_LKEY", cfg::RQ_LEN_LKEY),
        ("QP_READ_CTRL", cfg::qp_read(0, 0)),
        ("READ_ATOMIC_BIT", cfg::READ_ATOMIC_BIT),
        ("MSN_HEADS", cfg::MSN_HEADS),
    ] {
        writeln!(
            rs,
            "/// `rx_place::cfg` value.\npub const {name}: u8 = {v};"
        )
        .unwrap();
    }
    writeln!(
        rs,
        "/// Connection receive window of the RTL.\npub const CONN_WINDOW: u32 = {CONN_WINDOW};\n\
         /// Posted receives per QP in the RTL's ring.\npub const RQ_SLOTS: u32 = {rq};\n\
         /// Streams per QP with a receive ring in the RTL.\npub const RQ_STREAMS: usize = {rqs};\n\
         /// Outstanding-READ entries per QP.\npub const READS: usize = {reads};\n\
         /// Streams per QP with an MSN head in the RTL.\npub const MSN_STREAMS: usize = {msn_streams};\n\
         /// QP table entries.\npub const QPS: usize = {qps};\n\
         /// MR table entries.\npub const MRS: usize = {mrs};\n\
         /// `rx_place::cfg::addr`.\npub const fn cfg_addr(table: u8, entry: u8, word: u8) -> u8 {{ table << 6 | entry << 4 | word }}",
        rq = RQ_SLOTS,
        rqs = RQ_STREAMS,
        reads = READS,
        msn_streams = MSN_STREAMS,
        qps = QPS,
        mrs = MRS,
    )
    .unwrap();
    // `cfg::ring` is linear in its arguments: emitted as its base and strides.
    let base = cfg::ring(0, 0, 0, 0);
    let stride = [
        cfg::ring(1, 0, 0, 0),
        cfg::ring(0, 1, 0, 0),
        cfg::ring(0, 0, 1, 0),
        cfg::ring(0, 0, 0, 1),
    ]
    .map(|a| a - base);
    assert_eq!(
        cfg::ring(3, 3, 7, 1),
        base + 3 * stride[0] + 3 * stride[1] + 7 * stride[2] + stride[3]
    );
    writeln!(
        rs,
        "/// `rx_place::cfg::ring`: `word` of ring slot `slot` of `stream` of QP entry `qp`.\n\
         #[allow(clippy::identity_op)] // strides taken from `cfg::ring`; some are 1\n\
         pub const fn cfg_ring(qp: u8, stream: u8, slot: u8, word: u8) -> u16 {{\n\
         {base} + {} * qp as u16 + {} * stream as u16 + {} * slot as u16 + {} * word as u16\n}}",
        stride[0], stride[1], stride[2], stride[3]
    )
    .unwrap();
    rs
}

/// `path_codes.rs`: the path tracker's `res_code` values, taken from
/// `metaroce_hdl::PathVerdict` so no user restates them.
pub fn path_codes() -> String {
    let mut rs = String::new();
    for v in crate::PathVerdict::ALL {
        writeln!(
            rs,
            "/// `PathVerdict::{v:?}`.\npub const {}: u8 = {};",
            format!("{v:?}").to_uppercase(),
            v as u8
        )
        .unwrap();
    }
    rs
}

/// `tx_ops.rs`: the TX table's `op_code` values, taken from
/// `metaroce_hdl::TxOp` so no user restates them.
pub fn tx_ops() -> String {
    let mut rs = String::new();
    for op in crate::TxOp::ALL {
        writeln!(
            rs,
            "/// `TxOp::{op:?}`.\npub const {}: u8 = {};",
            format!("{op:?}").to_uppercase(),
            op as u8
        )
        .unwrap();
    }
    rs
}

/// `host_regs.rs`: the device's BAR0 register map and queue constants,
/// taken from `metaroce_hdl::host_if` so neither the host-interface bench nor the driver
/// restates them: per block a module with `TYPE` and each register's
/// offset *within the block* (users find the blocks' bases by walking
/// the list, as a driver does), and the list itself as `BLOCKS` (type,
/// base) for the walk's check.
pub fn host_regs() -> String {
    use crate::host_if::{self as h, regs};
    let mut rs = String::new();
    writeln!(
        rs,
        "/// `regs::map_hash()`.\npub const MAP_HASH: u32 = {:#x};\n\
         /// `regs::MAP_VERSION`.\npub const MAP_VERSION: u32 = {};\n\
         /// Header word offsets.\npub const HDR_TYPE: u16 = {};\n/// Version word.\npub const HDR_VERSION: u16 = {};\n\
         /// Next-block word.\npub const HDR_NEXT: u16 = {};",
        regs::map_hash(),
        regs::MAP_VERSION,
        regs::HDR_TYPE,
        regs::HDR_VERSION,
        regs::HDR_NEXT
    )
    .unwrap();
    let list: Vec<String> = regs::BLOCKS
        .iter()
        .map(|b| format!("({:#x}, {:#x})", b.type_id, b.base))
        .collect();
    writeln!(
        rs,
        "/// Every block's (type, base), in list order.\npub const BLOCKS: &[(u32, u16)] = &[{}];",
        list.join(", ")
    )
    .unwrap();
    for b in regs::BLOCKS {
        writeln!(
            rs,
            "/// Block `{}`.\npub mod {} {{\n    /// Type word.\n    pub const TYPE: u32 = {:#x};",
            b.name,
            b.name.to_lowercase(),
            b.type_id
        )
        .unwrap();
        for r in b.regs {
            writeln!(
                rs,
                "    /// `{}` (offset in the block).\n    pub const {}: u16 = {:#x};",
                r.name, r.name, r.offset
            )
            .unwrap();
        }
        rs.push_str("}\n");
    }
    for (name, v) in [
        ("EV_VERDICT", h::ev_type::VERDICT),
        ("EV_ACKRX", h::ev_type::ACKRX),
        ("EV_FATE", h::ev_type::FATE),
        ("EV_OP_RESULT", h::ev_type::OP_RESULT),
        ("EV_VIEW", h::ev_type::VIEW),
        ("TXQ_DESC", h::txq_kind::DESC),
        ("TXQ_CFG", h::txq_kind::CFG),
        ("TXQ_TABLE_OP", h::txq_kind::TABLE_OP),
        ("TAG_TXQ", h::tag::TXQ),
        ("TAG_PAYLOAD", h::tag::PAYLOAD),
        ("TAG_FTQ_HDR", h::tag::FTQ_HDR),
        ("TAG_FTQ_DATA", h::tag::FTQ_DATA),
    ] {
        writeln!(rs, "/// `host_if` constant.\npub const {name}: u8 = {v};").unwrap();
    }
    for (name, v) in [
        ("TXQ_ENTRY", h::TXQ_ENTRY),
        ("FTQ_ENTRY", h::FTQ_ENTRY),
        ("EVQ_ENTRY", h::EVQ_ENTRY),
        ("FRQ_ENTRY", h::FRQ_ENTRY),
        ("EV_HOLD", h::EV_HOLD),
        ("IRQ_EVQ", regs::IRQ_EVQ),
        ("IRQ_FRQ", regs::IRQ_FRQ),
        ("IRQ_TX", regs::IRQ_TX),
        ("FW_SLOT_BYTES", crate::fw_rx::SLOT_BYTES),
    ] {
        writeln!(
            rs,
            "/// `host_if` constant.\npub const {name}: usize = {v};"
        )
        .unwrap();
    }
    rs
}

/// `eth_reasons.rs`: the RX front end's `m_ev_reason` codes and limits,
/// taken from `metaroce_hdl::rx_eth` so no user restates them.
pub fn eth_reasons() -> String {
    use crate::rx_eth::{EthDrop, MAX_FRAME, PAD_MAX};
    let mut rs = String::new();
    for r in EthDrop::ALL {
        writeln!(
            rs,
            "/// `EthDrop::{r:?}`.\npub const {}: u8 = {};",
            r.const_name(),
            r as u8
        )
        .unwrap();
    }
    writeln!(
        rs,
        "/// Number of reason codes.\npub const COUNT: usize = {};\n\
         /// `rx_eth::MAX_FRAME`.\npub const MAX_FRAME: usize = {MAX_FRAME};\n\
         /// `rx_eth::PAD_MAX`.\npub const PAD_MAX: usize = {PAD_MAX};",
        EthDrop::ALL.len()
    )
    .unwrap();
    rs
}

/// `tx_codes.rs`: the TX builder's configuration map, taken from
/// `metaroce_hdl::tx_build::cfg` so no user restates it.
pub fn tx_codes() -> String {
    use crate::tx_build::{PATHS, cfg};
    let mut rs = String::new();
    for (name, v) in [
        ("CFG_REGS", cfg::REGS),
        ("CFG_ENTROPY", cfg::ENTROPY),
        ("REG_LOCAL", cfg::LOCAL),
        ("REG_PEER", cfg::PEER),
        ("REG_IPV4", cfg::IPV4),
        ("REG_LOCAL_IPV6", cfg::LOCAL_IPV6),
        ("REG_PEER_IPV6", cfg::PEER_IPV6),
    ] {
        writeln!(
            rs,
            "/// `tx_build::cfg` value.\npub const {name}: u8 = {v};"
        )
        .unwrap();
    }
    writeln!(
        rs,
        "/// Entropy table entries.\npub const PATHS: usize = {PATHS};\n\
         /// `tx_build::cfg::PEER_IPV6_BIT`.\npub const PEER_IPV6_BIT: u32 = {};\n\
         /// `tx_build::cfg::addr`.\npub const fn cfg_addr(table: u8, entry: u8) -> u8 {{ table << 6 | entry }}",
        cfg::PEER_IPV6_BIT
    )
    .unwrap();
    writeln!(
        rs,
        "/// `nic_core::CFG_TX_BIT`: NicCore `cfg_addr` bit selecting this map.\n\
         pub const CFG_TX_BIT: u32 = {};",
        crate::nic_core::CFG_TX_BIT
    )
    .unwrap();
    rs
}

/// `ack_rx_codes.rs`: the ACK receiver's slot-map address and word layout.
pub fn ack_rx_codes() -> String {
    use crate::ack_rx::cfg;
    let rs = format!(
        "/// `nic_core::ack_rx_cfg_addr(0)`: slot-map entry of slot 0.\n\
         pub const SLOT_MAP_CFG: u16 = {};\n\
         /// `ack_rx::cfg::PATH_SHIFT`.\npub const MAP_PATH_SHIFT: u32 = {};\n\
         /// `ack_rx::cfg::VALID_BIT`.\npub const MAP_VALID_BIT: u32 = {};\n",
        crate::nic_core::ack_rx_cfg_addr(0),
        cfg::PATH_SHIFT,
        cfg::VALID_BIT,
    );
    rs
}

/// `mgmt_codes.rs`: the management protocol's constants, taken from
/// `metaroce_hdl::board::mgmt::proto` so the driver's UART device does not
/// restate them.
pub fn mgmt_codes() -> String {
    use crate::board::mgmt::proto as p;
    let mut rs = String::new();
    for (name, ty, v) in [
        ("SYNC_REQ", "u8", u64::from(p::SYNC_REQ)),
        ("SYNC_RESP", "u8", u64::from(p::SYNC_RESP)),
        ("REG_READ", "u8", u64::from(p::REG_READ)),
        ("REG_WRITE", "u8", u64::from(p::REG_WRITE)),
        ("MEM_READ", "u8", u64::from(p::MEM_READ)),
        ("MEM_WRITE", "u8", u64::from(p::MEM_WRITE)),
        ("OK", "u8", u64::from(p::OK)),
        ("BAD_CRC", "u8", u64::from(p::BAD_CRC)),
        ("BAD_OP", "u8", u64::from(p::BAD_OP)),
        ("BAD_ARG", "u8", u64::from(p::BAD_ARG)),
        ("MAX_BURST", "usize", p::MAX_BURST as u64),
        ("HEADER", "usize", p::HEADER as u64),
        ("CNT_JUNK", "u32", u64::from(p::CNT_JUNK)),
        ("CNT_BAD", "u32", u64::from(p::CNT_BAD)),
        ("CNT_TIMEOUT", "u32", u64::from(p::CNT_TIMEOUT)),
    ] {
        writeln!(
            rs,
            "/// `board::mgmt::proto::{name}`.\npub const {name}: {ty} = {v:#x};"
        )
        .unwrap();
    }
    rs
}
