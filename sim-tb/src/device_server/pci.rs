//! The device's PCI face over vfio-user: its regions, interrupt indices and a small
//! configuration space (type-0 header, three memory BARs, an MSI-X capability), enough
//! for a VMM that enumerates the function (`docs/device.md` says what was tried).

use metaroce_driver::device::board;
use vfio_bindings::bindings::vfio::{
    VFIO_IRQ_INFO_EVENTFD, VFIO_REGION_INFO_FLAG_READ, VFIO_REGION_INFO_FLAG_WRITE,
    vfio_region_info,
};
use vfio_user::{IrqInfo, ServerRegion};

/// PCI vendor ID: 0x1234, the unregistered ID QEMU's own test devices use (a board
/// would carry its maker's).
pub(crate) const VENDOR_ID: u16 = 0x1234;
/// PCI device ID: "MR".
pub(crate) const DEVICE_ID: u16 = 0x4D52;
/// Bytes of configuration space.
pub(crate) const CONFIG_BYTES: usize = 256;
/// Bytes of the MSI-X BAR (table at 0, pending bits at [`MSIX_PBA`]).
pub(crate) const MSIX_BYTES: u32 = 4096;
/// Offset of the MSI-X pending-bit array in its BAR.
const MSIX_PBA: u32 = 0x800;
/// Offset of the MSI-X capability.
const MSIX_CAP: usize = 0x40;

/// Size of region `index`, 0 for none.
pub(crate) fn region_size(index: u32, bar0: u32) -> u32 {
    match index {
        board::REGION_BAR0 => bar0,
        board::REGION_BOARD_INFO => board::BOARD_INFO_BYTES,
        board::REGION_MSIX => MSIX_BYTES,
        board::REGION_CONFIG => CONFIG_BYTES as u32,
        _ => 0,
    }
}

/// The region table the server announces.
pub(crate) fn regions(bar0: u32) -> Vec<ServerRegion> {
    (0..board::REGION_COUNT)
        .map(|index| {
            let size = region_size(index, bar0);
            let flags = match index {
                0 if size == 0 => 0,
                board::REGION_BOARD_INFO => VFIO_REGION_INFO_FLAG_READ,
                _ if size > 0 => VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
                _ => 0,
            };
            ServerRegion {
                region_info: vfio_region_info {
                    argsz: size_of::<vfio_region_info>() as u32,
                    flags,
                    index,
                    cap_offset: 0,
                    size: size.into(),
                    offset: 0,
                },
                sparse_areas: Vec::new(),
                mmap_fd: None,
            }
        })
        .collect()
}

/// The interrupt indices: MSI-X with `vectors` vectors, the others empty.
pub(crate) fn irqs(vectors: u32) -> Vec<IrqInfo> {
    (0..board::IRQ_INDEX_COUNT)
        .map(|index| IrqInfo {
            index,
            flags: if index == board::IRQ_INDEX_MSIX {
                VFIO_IRQ_INFO_EVENTFD
            } else {
                0
            },
            count: if index == board::IRQ_INDEX_MSIX {
                vectors
            } else {
                0
            },
        })
        .collect()
}

/// Configuration space: the bytes and, per byte, which bits a write may change.
pub(crate) struct ConfigSpace {
    bytes: [u8; CONFIG_BYTES],
    writable: [u8; CONFIG_BYTES],
}

impl ConfigSpace {
    /// The function's header: BAR0 of `bar0` bytes, BAR2 the board information, BAR4
    /// the MSI-X table of `vectors` vectors.
    pub(crate) fn new(bar0: u32, vectors: u32) -> Self {
        let mut c = ConfigSpace {
            bytes: [0; CONFIG_BYTES],
            writable: [0; CONFIG_BYTES],
        };
        c.put(0x00, &VENDOR_ID.to_le_bytes());
        c.put(0x02, &DEVICE_ID.to_le_bytes());
        // Command: memory space, bus master, INTx disable are writable.
        c.writable[0x04] = 0x06;
        c.writable[0x05] = 0x04;
        // Status: a capability list.
        c.put(0x06, &0x0010u16.to_le_bytes());
        // Revision 1, class 02 (network) / 80 (other).
        c.put(0x08, &[1, 0x00, 0x80, 0x02]);
        // BARs 0, 2, 4: 32-bit, non-prefetchable memory; writable above their size.
        for (reg, size) in [
            (0x10, bar0),
            (0x18, board::BOARD_INFO_BYTES),
            (0x20, MSIX_BYTES),
        ] {
            c.writable[reg..reg + 4].copy_from_slice(&(!(size - 1)).to_le_bytes());
        }
        c.put(0x2C, &VENDOR_ID.to_le_bytes());
        c.put(0x2E, &DEVICE_ID.to_le_bytes());
        c.bytes[0x34] = MSIX_CAP as u8;
        // Interrupt line (writable), no INTx pin.
        c.writable[0x3C] = 0xFF;
        // MSI-X: table size − 1, enable and function mask writable; table and PBA in BAR4.
        c.put(MSIX_CAP, &[0x11, 0]);
        c.put(
            MSIX_CAP + 2,
            &(vectors.saturating_sub(1) as u16).to_le_bytes(),
        );
        c.writable[MSIX_CAP + 3] = 0xC0;
        c.put(MSIX_CAP + 4, &board::REGION_MSIX.to_le_bytes());
        c.put(MSIX_CAP + 8, &(MSIX_PBA | board::REGION_MSIX).to_le_bytes());
        c
    }

    fn put(&mut self, at: usize, b: &[u8]) {
        self.bytes[at..at + b.len()].copy_from_slice(b);
    }

    /// Reads `out.len()` bytes at `offset`; false if out of range.
    pub(crate) fn read(&self, offset: u64, out: &mut [u8]) -> bool {
        match range(offset, out.len()) {
            Some(r) => {
                out.copy_from_slice(&self.bytes[r]);
                true
            }
            None => false,
        }
    }

    /// Writes `data` at `offset`, each bit only where it is writable; false if out of
    /// range.
    pub(crate) fn write(&mut self, offset: u64, data: &[u8]) -> bool {
        let Some(r) = range(offset, data.len()) else {
            return false;
        };
        for (i, d) in r.zip(data) {
            let w = self.writable[i];
            self.bytes[i] = (self.bytes[i] & !w) | (d & w);
        }
        true
    }
}

fn range(offset: u64, len: usize) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(len)?;
    (len > 0 && end <= CONFIG_BYTES).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_size_themselves_and_read_only_bits_stay() {
        let mut c = ConfigSpace::new(1 << 16, 3);
        let mut w = [0u8; 4];
        assert!(c.read(0, &mut w));
        assert_eq!(
            u32::from_le_bytes(w),
            u32::from(DEVICE_ID) << 16 | u32::from(VENDOR_ID)
        );
        // BAR sizing: all ones in, the size mask out.
        assert!(c.write(0x10, &[0xFF; 4]));
        assert!(c.read(0x10, &mut w));
        assert_eq!(u32::from_le_bytes(w), !((1u32 << 16) - 1));
        // The vendor ID does not change.
        assert!(c.write(0, &[0; 2]));
        assert!(c.read(0, &mut w[..2]));
        assert_eq!(u16::from_le_bytes([w[0], w[1]]), VENDOR_ID);
        // MSI-X table size 3 (encoded 2), enable writable.
        assert!(c.write(0x42, &0x8000u16.to_le_bytes()));
        assert!(c.read(0x42, &mut w[..2]));
        assert_eq!(u16::from_le_bytes([w[0], w[1]]), 0x8002);
        assert!(!c.read(255, &mut w));
        assert!(!c.write(u64::MAX, &[1]));
    }
}
