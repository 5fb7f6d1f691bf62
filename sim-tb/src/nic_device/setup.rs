//! The driver's set-up of the device before the run: host memory for the
//! payloads and the MR region, the identification block and the bad BAR
//! accesses, the receive and TX builder tables, the rings.

use super::regs;
use super::tb::DeviceTb;
use crate::core_check::HostRxCase;
use crate::tx_build::{Addresses, NIC_CORE_TX_CFG, configure, configure_local_ip6};

/// The bad BAR accesses [`identify`] makes (`ID.BAR_BAD` must count them).
pub(super) const BAD_ACCESSES: u64 = 5;

/// Maps the engine's payload memory (`payload` at `base`, with its bytes)
/// and the MR region the core places into.
pub(super) fn map_memory(tb: &mut DeviceTb, base: u64, payload: &[u8], case: &HostRxCase) {
    tb.mem.map(base, payload.len() as u64);
    tb.mem.write(base, payload);
    tb.mem.map(case.mem_base, case.mem.len() as u64);
    tb.mr_range = (case.mem_base, case.mem_base + case.mem.len() as u64);
}

/// Checks the identification block, then makes [`BAD_ACCESSES`] bad
/// accesses: each reads 0 or changes nothing.
pub(super) fn identify(tb: &mut DeviceTb) {
    let id = regs::id::TYPE;
    for (name, off, want) in [
        ("MAP_VERSION", regs::id::MAP_VERSION, regs::MAP_VERSION),
        ("MAP_HASH", regs::id::MAP_HASH, regs::MAP_HASH),
        ("DATA_WIDTH", regs::id::DATA_WIDTH, 64),
        ("IRQ_VECTORS", regs::id::IRQ_VECTORS, 3),
        (
            "FW_SLOT_BYTES",
            regs::id::FW_SLOT_BYTES,
            regs::FW_SLOT_BYTES as u32,
        ),
    ] {
        let got = tb.bar_read(tb.reg(id, off));
        if got != want {
            tb.errors
                .push(format!("ID.{name}: {got:#x}, expected {want:#x}"));
        }
    }
    // Bad accesses: each reads 0 or changes nothing, and is counted.
    let scratch = tb.reg(id, regs::id::SCRATCH);
    tb.bar_write(scratch, 0x5A5A_1234);
    let width = tb.reg(id, regs::id::DATA_WIDTH);
    tb.bar_write(width, 512); // read-only: ignored
    tb.bar_write(0xFFFC, 0xDEAD_BEEF); // no register
    let unmapped = tb.bar_read(0x8000);
    let unaligned = tb.bar_read(scratch + 1);
    let last_reg = tb.bar_read(0xFFFC);
    let width_after = tb.bar_read(width);
    let scratch_after = tb.bar_read(scratch);
    for (what, got, want) in [
        ("read of 0x8000", unmapped, 0),
        ("unaligned read", unaligned, 0),
        ("read of 0xFFFC after a write", last_reg, 0),
        ("DATA_WIDTH after a write", width_after, 64),
        ("SCRATCH", scratch_after, 0x5A5A_1234),
    ] {
        if got != want {
            tb.errors
                .push(format!("{what}: {got:#x}, expected {want:#x}"));
        }
    }
}

/// Writes the tables through `CFG`: the receive core's (the engine's
/// set-up, `case.writes`) and the TX builder's (`addresses`), checks
/// `CFG.CFG_WRITES`, and sets the Ethernet port's UDP port.
pub(super) fn program_tables(tb: &mut DeviceTb, case: &HostRxCase, addresses: &Addresses) {
    for &(a, d) in &case.writes {
        tb.cfg_write(a, d);
    }
    let mut tx_cfg = Vec::new();
    configure(addresses, &mut |a: u8, d| {
        tx_cfg.push((NIC_CORE_TX_CFG | u16::from(a), d))
    });
    configure_local_ip6(std::net::Ipv6Addr::UNSPECIFIED, &mut |a: u8, d| {
        tx_cfg.push((NIC_CORE_TX_CFG | u16::from(a), d))
    });
    for (a, d) in tx_cfg {
        tb.cfg_write(a, d);
    }
    let cfg_writes = tb.bar_read(tb.reg(regs::cfg::TYPE, regs::cfg::CFG_WRITES));
    let expect_cfg = case.writes.len() as u32 + 5;
    if cfg_writes != expect_cfg {
        tb.errors.push(format!(
            "CFG.CFG_WRITES {cfg_writes}, the bench wrote {expect_cfg}"
        ));
    }
    tb.bar_write(
        tb.reg(regs::cfg::TYPE, regs::cfg::ETH_PORT),
        metaroce_proto::DEFAULT_UDP_PORT.into(),
    );
}

/// Sets the four rings up (TX queue, firmware TX queue, event ring,
/// firmware receive ring).
pub(super) fn program_rings(tb: &mut DeviceTb) {
    let (txq, ftq, evq, frq) = (tb.txq, tb.ftq, tb.evq, tb.frq);
    tb.set_ring(regs::txq::TYPE, txq);
    tb.set_ring(regs::ftq::TYPE, ftq);
    tb.set_ring(regs::evq::TYPE, evq);
    tb.set_ring(regs::frq::TYPE, frq);
}
