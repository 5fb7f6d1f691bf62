//! BAR0 as the driver sees it: the register blocks found by walking the list, the
//! identification check, and typed access to a block's registers.
//!
//! Block types and register offsets come from [`super::codes::regs`] (generated from
//! `metaroce_hdl::host_if::regs`); a block's base comes only from the walk, so a
//! bitstream may add or move blocks.

use bitflags::bitflags;

use super::DriverError;
use super::codes::{core, regs, tx};
use crate::device::Device;

/// Longest block list the walk follows.
const MAX_BLOCKS: usize = 64;

bitflags! {
    /// `TXT.OP_STATUS`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct OpStatus: u32 {
        /// Issued, no result yet.
        const BUSY = 1;
        /// A result since the last `OP_GO`.
        const DONE = 1 << 1;
        /// `res_ok` of that result.
        const RES_OK = 1 << 2;
    }
}

bitflags! {
    /// `TXT.OP_CTRL` flag bits (above the code and slot fields); also bits 57..48 of a
    /// kind-2 TX queue entry's word 4.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct OpCtrl: u32 {
        /// `op_probe`.
        const PROBE = 1 << 7;
        /// `op_retx`.
        const RETX = 1 << 8;
        /// `op_rtt_valid`.
        const RTT_VALID = 1 << 9;
    }
}

/// `OP_CTRL` bits 6..3: `op_slot`.
pub const OP_SLOT_SHIFT: u32 = 3;

/// A queue's or ring's `CTRL.enable`.
pub const RING_ENABLE: u32 = 1;

/// The BAR offsets of the blocks the driver uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    /// `ID`.
    pub id: u32,
    /// `CFG`.
    pub cfg: u32,
    /// `CNT`.
    pub cnt: u32,
    /// `TXT`.
    pub txt: u32,
    /// `TXQ`.
    pub txq: u32,
    /// `FTQ`.
    pub ftq: u32,
    /// `EVQ`.
    pub evq: u32,
    /// `FRQ`.
    pub frq: u32,
    /// `IRQ`.
    pub irq: u32,
}

impl Blocks {
    /// Walks the block list from offset 0 and finds every block the driver needs by
    /// its type; unknown types are skipped.
    pub fn discover(dev: &mut dyn Device) -> Result<Blocks, DriverError> {
        let mut found: Vec<(u32, u32)> = Vec::new();
        let mut at = 0u32;
        for _ in 0..MAX_BLOCKS {
            let ty = dev.read32(at + u32::from(regs::HDR_TYPE))?;
            let next = dev.read32(at + u32::from(regs::HDR_NEXT))?;
            if ty >> 8 != regs::id::TYPE >> 8 {
                return Err(DriverError::Identity(format!(
                    "BAR0 offset {at:#x} holds type {ty:#010x}, not a MetaRoCE register \
                     block (0x4D5200nn): is this a MetaRoCE NIC, and is BAR0 mapped?"
                )));
            }
            found.push((ty, at));
            if next == 0 {
                break;
            }
            if next <= at || next >= dev.bar_size() {
                return Err(DriverError::Identity(format!(
                    "block list goes from {at:#x} to {next:#x} (BAR0 is {:#x} bytes)",
                    dev.bar_size()
                )));
            }
            at = next;
        }
        let find = |ty: u32, name: &str| {
            found
                .iter()
                .find(|&&(t, _)| t == ty)
                .map(|&(_, base)| base)
                .ok_or_else(|| {
                    DriverError::Identity(format!(
                        "no {name} block (type {ty:#010x}) in the block list {found:x?}"
                    ))
                })
        };
        Ok(Blocks {
            id: find(regs::id::TYPE, "ID")?,
            cfg: find(regs::cfg::TYPE, "CFG")?,
            cnt: find(regs::cnt::TYPE, "CNT")?,
            txt: find(regs::txt::TYPE, "TXT")?,
            txq: find(regs::txq::TYPE, "TXQ")?,
            ftq: find(regs::ftq::TYPE, "FTQ")?,
            evq: find(regs::evq::TYPE, "EVQ")?,
            frq: find(regs::frq::TYPE, "FRQ")?,
            irq: find(regs::irq::TYPE, "IRQ")?,
        })
    }
}

/// What the `ID` block says about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    /// `MAP_VERSION`.
    pub map_version: u32,
    /// `MAP_HASH`.
    pub map_hash: u32,
    /// `DEVICE_VERSION` (major << 16 | minor << 8 | patch).
    pub device_version: u32,
    /// `DATA_WIDTH`, bits.
    pub data_width: u32,
    /// `QPS`.
    pub qps: u32,
    /// `MRS`.
    pub mrs: u32,
    /// `TX_SLOTS`.
    pub tx_slots: u32,
    /// `PATHS`.
    pub paths: u32,
    /// `RQ`: streams with a ring \[15:0\], slots per ring \[31:16\].
    pub rq: u32,
    /// `FW_SLOT_BYTES`.
    pub fw_slot_bytes: u32,
    /// `IRQ_VECTORS`.
    pub irq_vectors: u32,
}

impl Identity {
    /// Reads the `ID` block.
    pub fn read(dev: &mut dyn Device, b: &Blocks) -> Result<Identity, DriverError> {
        let mut r = |off: u16| dev.read32(b.id + u32::from(off));
        use regs::id;
        Ok(Identity {
            map_version: r(id::MAP_VERSION)?,
            map_hash: r(id::MAP_HASH)?,
            device_version: r(id::DEVICE_VERSION)?,
            data_width: r(id::DATA_WIDTH)?,
            qps: r(id::QPS)?,
            mrs: r(id::MRS)?,
            tx_slots: r(id::TX_SLOTS)?,
            paths: r(id::PATHS)?,
            rq: r(id::RQ)?,
            fw_slot_bytes: r(id::FW_SLOT_BYTES)?,
            irq_vectors: r(id::IRQ_VECTORS)?,
        })
    }

    /// Checks the device against the driver's own copy of the register map and
    /// table sizes; every mismatch is named.
    pub fn check(&self) -> Result<(), DriverError> {
        let mut bad = Vec::new();
        if self.map_version != regs::MAP_VERSION {
            bad.push(format!(
                "register map version {} (the driver has {})",
                self.map_version,
                regs::MAP_VERSION
            ));
        }
        if self.map_hash != regs::MAP_HASH {
            bad.push(format!(
                "MAP_HASH {:#010x} (the driver's register map hashes to {:#010x}: \
                 driver and bitstream come from different metaroce-hdl versions)",
                self.map_hash,
                regs::MAP_HASH
            ));
        }
        if !matches!(self.data_width, 64 | 512) {
            bad.push(format!("data width {} bits (64 or 512)", self.data_width));
        }
        for (name, got, want) in [
            ("QP table entries", self.qps, core::QPS as u32),
            ("MR table entries", self.mrs, core::MRS as u32),
            ("entropy table entries", self.paths, tx::PATHS as u32),
            (
                "receive ring streams",
                self.rq & 0xFFFF,
                core::RQ_STREAMS as u32,
            ),
            ("receive ring slots", self.rq >> 16, core::RQ_SLOTS),
            (
                "firmware slot bytes",
                self.fw_slot_bytes,
                regs::FW_SLOT_BYTES as u32,
            ),
        ] {
            if got != want {
                bad.push(format!("{name} {got} (the driver is built for {want})"));
            }
        }
        if self.tx_slots == 0 || self.tx_slots > 1 << 4 {
            bad.push(format!("TX table slots {} (1..16)", self.tx_slots));
        }
        if (self.irq_vectors as usize) < regs::IRQ_TX + 1 {
            bad.push(format!(
                "{} interrupt vectors (at least {})",
                self.irq_vectors,
                regs::IRQ_TX + 1
            ));
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(DriverError::Identity(format!(
                "the device does not match this driver: {}",
                bad.join("; ")
            )))
        }
    }

    /// `DEVICE_VERSION` as `major.minor.patch`.
    pub fn version_string(&self) -> String {
        let v = self.device_version;
        format!("{}.{}.{}", v >> 16, v >> 8 & 0xFF, v & 0xFF)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::device::{DeviceError, DmaRegion};
    use crate::eventfd::EventFd;
    use std::collections::HashMap;

    /// A register file with the block list and a correct `ID` block (no device
    /// behind it): for the discovery and identification checks.
    pub(crate) struct FakeBar {
        pub(crate) regs: HashMap<u32, u32>,
    }

    impl FakeBar {
        pub(crate) fn new() -> Self {
            let mut regs = HashMap::new();
            for (i, &(ty, base)) in regs::BLOCKS.iter().enumerate() {
                let base = u32::from(base);
                let next = regs::BLOCKS.get(i + 1).map_or(0, |b| u32::from(b.1));
                regs.insert(base + u32::from(regs::HDR_TYPE), ty);
                regs.insert(base + u32::from(regs::HDR_VERSION), 1);
                regs.insert(base + u32::from(regs::HDR_NEXT), next);
            }
            let mut f = FakeBar { regs };
            use regs::id;
            for (off, v) in [
                (id::MAP_VERSION, regs::MAP_VERSION),
                (id::MAP_HASH, regs::MAP_HASH),
                (id::DEVICE_VERSION, 0x0001_0000),
                (id::DATA_WIDTH, 64),
                (id::QPS, core::QPS as u32),
                (id::MRS, core::MRS as u32),
                (id::TX_SLOTS, 16),
                (id::PATHS, tx::PATHS as u32),
                (id::RQ, core::RQ_STREAMS as u32 | core::RQ_SLOTS << 16),
                (id::FW_SLOT_BYTES, regs::FW_SLOT_BYTES as u32),
                (id::IRQ_VECTORS, 3),
            ] {
                f.set(0, off, v);
            }
            f
        }

        /// The base of the block of type `ty` in the register table.
        pub(crate) fn base(ty: u32) -> u32 {
            regs::BLOCKS
                .iter()
                .find(|b| b.0 == ty)
                .map_or(0, |b| u32::from(b.1))
        }

        /// With each ring's `ENTRY_LOG2` as the device reports it.
        pub(crate) fn with_rings() -> Self {
            let mut f = FakeBar::new();
            for (ty, entry) in [
                (regs::txq::TYPE, regs::TXQ_ENTRY),
                (regs::ftq::TYPE, regs::FTQ_ENTRY),
                (regs::evq::TYPE, regs::EVQ_ENTRY),
                (regs::frq::TYPE, regs::FRQ_ENTRY),
            ] {
                f.set(
                    Self::base(ty),
                    regs::txq::ENTRY_LOG2,
                    entry.trailing_zeros(),
                );
            }
            f
        }

        pub(crate) fn set(&mut self, base: u32, off: u16, v: u32) {
            self.regs.insert(base + u32::from(off), v);
        }
    }

    impl Device for FakeBar {
        fn describe(&self) -> String {
            "fake".into()
        }
        fn bar_size(&self) -> u32 {
            0x1_0000
        }
        fn read32(&mut self, offset: u32) -> Result<u32, DeviceError> {
            Ok(self.regs.get(&offset).copied().unwrap_or(0))
        }
        fn write32(&mut self, offset: u32, value: u32) -> Result<(), DeviceError> {
            self.regs.insert(offset, value);
            Ok(())
        }
        fn alloc_dma(&mut self, len: usize) -> Result<DmaRegion, DeviceError> {
            DmaRegion::new(len)
        }
        fn map_dma(&mut self, _: u64, _: usize) -> Result<(), DeviceError> {
            Ok(())
        }
        fn unmap_dma(&mut self, _: u64, _: usize) -> Result<(), DeviceError> {
            Ok(())
        }
        fn sync_for_device(&mut self, _: u64, _: usize) -> Result<(), DeviceError> {
            Ok(())
        }
        fn sync_for_cpu(&mut self, _: u64, _: usize) -> Result<(), DeviceError> {
            Ok(())
        }
        fn irq_count(&self) -> u32 {
            3
        }
        fn enable_irqs(&mut self, _: &[&EventFd]) -> Result<(), DeviceError> {
            Ok(())
        }
        fn reset(&mut self) -> Result<(), DeviceError> {
            Ok(())
        }
    }

    #[test]
    fn discovery_finds_the_blocks_by_type() {
        let mut bar = FakeBar::new();
        let b = Blocks::discover(&mut bar).expect("walk");
        let at = |ty| u32::from(regs::BLOCKS.iter().find(|x| x.0 == ty).unwrap().1);
        assert_eq!(b.txt, at(regs::txt::TYPE));
        assert_eq!(b.irq, at(regs::irq::TYPE));
        let id = Identity::read(&mut bar, &b).expect("read");
        assert!(id.check().is_ok());
    }

    #[test]
    fn discovery_names_what_is_wrong() {
        // Nothing at BAR0.
        let mut empty = FakeBar {
            regs: HashMap::new(),
        };
        let e = Blocks::discover(&mut empty).unwrap_err().to_string();
        assert!(e.contains("not a MetaRoCE register block"), "{e}");
        // A list that loops back.
        let mut bar = FakeBar::new();
        bar.set(0, regs::HDR_NEXT, 0);
        let e = Blocks::discover(&mut bar).unwrap_err().to_string();
        assert!(e.contains("no CFG block"), "{e}");
        let mut bar = FakeBar::new();
        let second = u32::from(regs::BLOCKS[1].1);
        bar.set(second, regs::HDR_NEXT, 0);
        bar.set(0, regs::HDR_NEXT, second);
        bar.set(second, regs::HDR_NEXT, second);
        let e = Blocks::discover(&mut bar).unwrap_err().to_string();
        assert!(e.contains("block list goes from"), "{e}");
    }

    #[test]
    fn identity_check_names_each_mismatch() {
        let mut bar = FakeBar::new();
        bar.set(0, regs::id::MAP_HASH, regs::MAP_HASH ^ 1);
        bar.set(0, regs::id::QPS, 99);
        bar.set(0, regs::id::IRQ_VECTORS, 1);
        let b = Blocks::discover(&mut bar).expect("walk");
        let e = Identity::read(&mut bar, &b)
            .expect("read")
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("MAP_HASH"), "{e}");
        assert!(e.contains("QP table entries 99"), "{e}");
        assert!(e.contains("1 interrupt vectors"), "{e}");
        assert!(!e.contains("data width"), "{e}");
    }
}
