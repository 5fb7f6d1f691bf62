//! The register table: the blocks of BAR0 in list order and their
//! registers, the one source of truth of [`super`].

use super::{
    Access, Reg, RegBlock, TYPE_CFG, TYPE_CNT, TYPE_EVQ, TYPE_FRQ, TYPE_FTQ, TYPE_ID, TYPE_IRQ,
    TYPE_TXQ, TYPE_TXT,
};

const fn rw(name: &'static str, offset: u16, bits: u32, doc: &'static str) -> Reg {
    Reg {
        name,
        offset,
        access: Access::Rw { bits, reset: 0 },
        doc,
    }
}

const fn ro(name: &'static str, offset: u16, src: &'static str, doc: &'static str) -> Reg {
    Reg {
        name,
        offset,
        access: Access::Ro(src),
        doc,
    }
}

const fn id(name: &'static str, offset: u16, doc: &'static str) -> Reg {
    Reg {
        name,
        offset,
        access: Access::Id,
        doc,
    }
}

const fn wo(name: &'static str, offset: u16, doc: &'static str) -> Reg {
    Reg {
        name,
        offset,
        access: Access::Wo,
        doc,
    }
}

const ID_REGS: &[Reg] = &[
    id(
        "MAP_VERSION",
        0x0C,
        "register map version (`regs::MAP_VERSION`)",
    ),
    id(
        "MAP_HASH",
        0x10,
        "FNV-1a hash of this register map's text (`regs::map_hash`): the driver checks it against its own copy",
    ),
    id(
        "DEVICE_VERSION",
        0x14,
        "`metaroce-hdl` version: major << 16 | minor << 8 | patch",
    ),
    id("DATA_WIDTH", 0x18, "data path width in bits (64 or 512)"),
    id("QPS", 0x1C, "QP table entries"),
    id("MRS", 0x20, "MR table entries"),
    id("TX_SLOTS", 0x24, "per-path TX table slots"),
    id("PATHS", 0x28, "entropy table entries (paths)"),
    id(
        "RQ",
        0x2C,
        "receive rings: streams with a ring [15:0], slots per ring [31:16]",
    ),
    id(
        "FW_SLOT_BYTES",
        0x30,
        "bytes of a datagram the firmware receive ring carries",
    ),
    id("IRQ_VECTORS", 0x34, "interrupt vectors"),
    ro(
        "BAR_BAD",
        0x38,
        "cnt_bar_bad",
        "BAR accesses to no register (reads return 0) and writes to read-only registers (ignored)",
    ),
    rw("SCRATCH", 0x3C, 32, "scratch register (bring-up checks)"),
];

const CFG_REGS: &[Reg] = &[
    rw(
        "CFG_ADDR",
        0x0C,
        10,
        "`cfg_addr` of the next table write (`docs/hardware.md` §6, §14)",
    ),
    rw("CFG_DATA_LO", 0x10, 32, "`cfg_data` bits 31..0"),
    wo(
        "CFG_DATA_HI",
        0x14,
        "`cfg_data` bits 63..32; the write issues the table write (`CFG_ADDR`, `CFG_DATA_HI:CFG_DATA_LO`)",
    ),
    wo(
        "ETH_PORT",
        0x18,
        "bits 15..0: the UDP port the Ethernet front end accepts",
    ),
    ro(
        "CFG_WRITES",
        0x1C,
        "cnt_cfg_writes",
        "table writes issued (from `CFG_DATA_HI` and from TX queue entries of kind 1)",
    ),
];

const CNT_REGS: &[Reg] = &[
    rw(
        "CNT_SEL",
        0x0C,
        5,
        "receive core counter select (verdict code)",
    ),
    ro("CNT_VAL", 0x10, "c_cnt_val", "the selected verdict counter"),
    rw(
        "ETH_CNT_SEL",
        0x14,
        4,
        "front end counter select (`EthDrop` code)",
    ),
    ro(
        "ETH_CNT_VAL",
        0x18,
        "c_eth_cnt_val",
        "the selected front end counter",
    ),
    ro("ACK_FRAMES", 0x1C, "c_ack_cnt_frames", "ACK frames sent"),
    ro("ACK_ECE", 0x20, "c_ack_cnt_ece", "of which with ECE"),
    ro("ACK_V6", 0x24, "c_ack_cnt_v6", "of which IPv6"),
    ro(
        "ACKRX_APPLIED",
        0x28,
        "c_ackrx_cnt_applied",
        "ACKs the ACK receiver applied to the TX table",
    ),
    ro(
        "ACKRX_UNMAPPED",
        0x2C,
        "c_ackrx_cnt_unmapped",
        "ACKs for an unmapped (QPN, path)",
    ),
    ro(
        "ACKRX_OVERFLOW",
        0x30,
        "c_ackrx_cnt_overflow",
        "ACKs the ACK receiver dropped (queue full)",
    ),
    ro(
        "ACKRX_PAIR_ERR",
        0x34,
        "c_ackrx_cnt_pair_err",
        "ACKs whose event did not match the tapped datagram",
    ),
    ro(
        "FW_UP",
        0x38,
        "c_fw_cnt_up",
        "datagrams handed to the firmware",
    ),
    ro(
        "FW_TRUNC",
        0x3C,
        "c_fw_cnt_trunc",
        "of which cut to 128 bytes",
    ),
    ro(
        "FWTX_FRAMES",
        0x40,
        "c_fwtx_cnt_frames",
        "frames of firmware datagrams sent",
    ),
    ro(
        "TX_ERR",
        0x44,
        "tx_err",
        "bit 0: sticky, a payload beat disagreed with its fetch request",
    ),
    ro(
        "ETH_FRAMES",
        0x48,
        "cnt_eth_frames",
        "Ethernet frames the front end decided on",
    ),
    ro(
        "ETH_DROPS",
        0x4C,
        "cnt_eth_drops",
        "of which dropped (any `EthDrop` code but 0)",
    ),
    ro(
        "RX_HOLD",
        0x50,
        "cnt_rx_hold",
        "cycles the MAC RX port was held because the event FIFOs were filling (back-pressure)",
    ),
    ro(
        "EV_LOST",
        0x54,
        "cnt_ev_lost",
        "events lost to a full event FIFO, or placement addresses to a full address FIFO (0 by design; a non-zero value is a bug)",
    ),
    ro(
        "TXQ_BAD",
        0x58,
        "cnt_txq_bad",
        "TX queue entries skipped: unknown kind or reserved bits set",
    ),
    ro(
        "FTQ_BAD",
        0x5C,
        "cnt_ftq_bad",
        "firmware TX entries skipped: length 0 or over 128, or reserved bits set",
    ),
    ro(
        "DMA_BAD_TAG",
        0x60,
        "cnt_bad_tag",
        "read completion beats with a tag no request carries (dropped)",
    ),
    ro(
        "TXQ_OPS",
        0x64,
        "cnt_txq_ops",
        "TX table operations taken from the TX queue (kind 2)",
    ),
    ro(
        "ACKRX_REFUSED",
        0x68,
        "c_ackrx_cnt_refused",
        "ACKs the ACK receiver refused as impossible (spec §5.5 step 0)",
    ),
];

const TXT_REGS: &[Reg] = &[
    rw(
        "OP_CTRL",
        0x0C,
        10,
        "[2:0] `op_code` (`TxOp`), [6:3] `op_slot`, [7] `op_probe`, [8] `op_retx`, [9] `op_rtt_valid`",
    ),
    rw("OP_PSN", 0x10, 32, "`op_psn`"),
    rw("OP_LEN", 0x14, 16, "`op_len`"),
    rw("OP_RTT", 0x18, 32, "`op_rtt`"),
    rw("OP_CE_COUNT", 0x1C, 32, "`op_ce_count`"),
    rw("OP_ACKED", 0x20, 32, "`op_acked`"),
    rw("OP_VALUE", 0x24, 32, "`op_value`"),
    rw("OP_SACK0", 0x28, 32, "`op_sack` bits 31..0"),
    rw("OP_SACK1", 0x2C, 32, "`op_sack` bits 63..32"),
    rw("OP_SACK2", 0x30, 32, "`op_sack` bits 95..64"),
    rw("OP_SACK3", 0x34, 32, "`op_sack` bits 127..96"),
    rw("OP_SACK4", 0x38, 32, "`op_sack` bits 159..128"),
    rw("OP_SACK5", 0x3C, 32, "`op_sack` bits 191..160"),
    rw("OP_SACK6", 0x40, 32, "`op_sack` bits 223..192"),
    rw("OP_SACK7", 0x44, 32, "`op_sack` bits 255..224"),
    wo(
        "OP_GO",
        0x48,
        "issues the operation in the `OP_*` registers (ignored while `OP_STATUS.busy`)",
    ),
    ro(
        "OP_STATUS",
        0x4C,
        "op_status",
        "[0] busy (issued, no result yet), [1] done (a result since the last `OP_GO`), [2] `res_ok`",
    ),
    ro(
        "RES_PSN",
        0x50,
        "op_res_psn",
        "`res_psn` of the last operation",
    ),
    ro(
        "RES_PKTS",
        0x54,
        "op_res_pkts",
        "`res_pkts` of the last operation",
    ),
    ro(
        "RES_BYTES",
        0x58,
        "op_res_bytes",
        "`res_bytes` of the last operation",
    ),
    rw(
        "RD_SLOT",
        0x5C,
        4,
        "`rd_slot`: the slot the `RD_*` registers show",
    ),
    rw(
        "RD_LEN",
        0x60,
        16,
        "`rd_len`: the length `RD_FLAGS.can_send` is for",
    ),
    ro("RD_ENTROPY", 0x64, "rd_entropy", "`rd_entropy`"),
    ro("RD_NEXT_PSN", 0x68, "c_rd_next_psn", "`rd_next_psn`"),
    ro("RD_UNA", 0x6C, "c_rd_una", "`rd_una`"),
    ro("RD_INFLIGHT", 0x70, "c_rd_inflight", "`rd_inflight`"),
    ro("RD_WINDOW", 0x74, "c_rd_window", "`rd_window`"),
    ro("RD_SRTT", 0x78, "c_rd_srtt", "`rd_srtt`"),
    ro("RD_RTTVAR", 0x7C, "c_rd_rttvar", "`rd_rttvar`"),
    ro("RD_ECN_EWMA", 0x80, "c_rd_ecn_ewma", "`rd_ecn_ewma`"),
    ro("RD_LOSS_EWMA", 0x84, "c_rd_loss_ewma", "`rd_loss_ewma`"),
    ro("RD_SAMPLES", 0x88, "c_rd_samples", "`rd_samples`"),
    ro("RD_SENT", 0x8C, "c_rd_sent", "`rd_sent`"),
    ro(
        "RD_RETRANSMITTED",
        0x90,
        "c_rd_retransmitted",
        "`rd_retransmitted`",
    ),
    ro("RD_ACKED", 0x94, "c_rd_acked", "`rd_acked`"),
    ro("RD_LOST", 0x98, "c_rd_lost", "`rd_lost`"),
    ro("RD_CE_MARKED", 0x9C, "c_rd_ce_marked", "`rd_ce_marked`"),
    ro("RD_REPATHS", 0xA0, "c_rd_repaths", "`rd_repaths`"),
    ro("RD_TIMEOUTS", 0xA4, "c_rd_timeouts", "`rd_timeouts`"),
    ro(
        "RD_FLAGS",
        0xA8,
        "rd_flags",
        "[0] `rd_rtt_valid`, [1] `rd_quarantined`, [5:2] `rd_backoff`, [6] `rd_can_send`",
    ),
];

/// The registers of a host → device queue (the host produces).
macro_rules! host_queue {
    ($cons:literal, $stride:literal) => {
        &[
            rw(
                "BASE_LO",
                0x0C,
                32,
                "ring base address bits 31..0 (aligned to the ring's size)",
            ),
            rw("BASE_HI", 0x10, 32, "ring base address bits 63..32"),
            rw(
                "SIZE_LOG2",
                0x14,
                5,
                "log2 of the ring's entries (0..16); set while disabled",
            ),
            rw("CTRL", 0x18, 1, "bit 0: enable"),
            rw(
                "PROD",
                0x1C,
                32,
                "producer index (free-running): the doorbell; the host writes it after the entries",
            ),
            ro(
                "CONS",
                0x20,
                $cons,
                "consumer index (free-running): entries before it are taken and may be rewritten",
            ),
            ro(
                "ENTRY_LOG2",
                0x24,
                $stride,
                "log2 of the entry stride in bytes",
            ),
        ]
    };
}

/// The registers of a device → host ring (the device produces).
macro_rules! device_ring {
    ($prod:literal, $stride:literal) => {
        &[
            rw("BASE_LO", 0x0C, 32, "ring base address bits 31..0 (aligned to the ring's size)"),
            rw("BASE_HI", 0x10, 32, "ring base address bits 63..32"),
            rw(
                "SIZE_LOG2",
                0x14,
                5,
                "log2 of the ring's entries (0..16); set while disabled",
            ),
            rw("CTRL", 0x18, 1, "bit 0: enable"),
            ro(
                "PROD",
                0x1C,
                $prod,
                "producer index (free-running): entries before it are written (their phase bit too)",
            ),
            rw(
                "CONS",
                0x20,
                32,
                "consumer index (free-running): the host writes it when it has read the entries before it",
            ),
            ro("ENTRY_LOG2", 0x24, $stride, "log2 of the entry stride in bytes"),
        ]
    };
}

const TXQ_REGS: &[Reg] = host_queue!("txq_cons", "32'd7");
const FTQ_REGS: &[Reg] = host_queue!("ftq_cons", "32'd8");
const EVQ_REGS: &[Reg] = device_ring!("evq_prod", "32'd6");
const FRQ_REGS: &[Reg] = device_ring!("frq_prod", "32'd8");

/// The registers of one interrupt vector.
macro_rules! vector {
    ($n:literal, $ctrl:literal, $holdoff:literal, $coal:literal, $count:literal, $src:literal) => {
        [
            rw(
                concat!("CTRL", $n),
                $ctrl,
                1,
                concat!("vector ", $n, ": bit 0 enable"),
            ),
            rw(
                concat!("HOLDOFF", $n),
                $holdoff,
                24,
                concat!(
                    "vector ",
                    $n,
                    ": cycles an entry may wait for its interrupt (0: none)"
                ),
            ),
            rw(
                concat!("COALESCE", $n),
                $coal,
                16,
                concat!(
                    "vector ",
                    $n,
                    ": entries that raise the interrupt at once (0: the timer alone)"
                ),
            ),
            ro(
                concat!("COUNT", $n),
                $count,
                $src,
                concat!("vector ", $n, ": interrupts raised"),
            ),
        ]
    };
}

const IRQ_REGS: &[Reg] = &{
    let a = vector!("0", 0x0C, 0x10, 0x14, 0x18, "irq_count0");
    let b = vector!("1", 0x1C, 0x20, 0x24, 0x28, "irq_count1");
    let c = vector!("2", 0x2C, 0x30, 0x34, 0x38, "irq_count2");
    [
        a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], c[0], c[1], c[2], c[3],
    ]
};

/// The register blocks, in list order (each one's `NEXT` is the following
/// block's base; the last one's is 0).
pub const BLOCKS: &[RegBlock] = &[
    RegBlock {
        name: "ID",
        type_id: TYPE_ID,
        version: 1,
        base: 0x0000,
        doc: "identification: versions, widths and table sizes",
        regs: ID_REGS,
    },
    RegBlock {
        name: "CFG",
        type_id: TYPE_CFG,
        version: 1,
        base: 0x0100,
        doc: "the firmware's table port (`cfg_we/addr/data` of `NicCore`) and the front end's UDP port",
        regs: CFG_REGS,
    },
    RegBlock {
        name: "CNT",
        type_id: TYPE_CNT,
        version: 1,
        base: 0x0200,
        doc: "counters of `NicCore` and of the host interface",
        regs: CNT_REGS,
    },
    RegBlock {
        name: "TXT",
        type_id: TYPE_TXT,
        version: 1,
        base: 0x0300,
        doc: "per-path TX table through registers (bring-up and slow path): one operation at a time (`op_*` → `res_*`; it waits while one from the TX queue runs) and the read port (`rd_*`)",
        regs: TXT_REGS,
    },
    RegBlock {
        name: "TXQ",
        type_id: TYPE_TXQ,
        version: 1,
        base: 0x0400,
        doc: "TX queue: 128-byte entries the device fetches and executes in order: descriptors, table writes and TX table operations (results in the event ring)",
        regs: TXQ_REGS,
    },
    RegBlock {
        name: "FTQ",
        type_id: TYPE_FTQ,
        version: 1,
        base: 0x0440,
        doc: "firmware transmit queue: 256-byte entries (a datagram for the ACK framer) the device fetches",
        regs: FTQ_REGS,
    },
    RegBlock {
        name: "EVQ",
        type_id: TYPE_EVQ,
        version: 1,
        base: 0x0480,
        doc: "event ring: 64-byte entries the device writes (verdicts with placement addresses, ACK receiver results and queued TX table operations' results with their slot views, fates)",
        regs: EVQ_REGS,
    },
    RegBlock {
        name: "FRQ",
        type_id: TYPE_FRQ,
        version: 1,
        base: 0x04C0,
        doc: "firmware receive ring: 256-byte entries the device writes (the datagrams of verdict 10)",
        regs: FRQ_REGS,
    },
    RegBlock {
        name: "IRQ",
        type_id: TYPE_IRQ,
        version: 1,
        base: 0x0500,
        doc: "interrupt vectors (0 event ring, 1 firmware receive ring, 2 TX queues consumed) with moderation",
        regs: IRQ_REGS,
    },
];
