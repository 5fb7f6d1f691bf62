//! [`Device`] over vfio-user: a device process (`metaroce device serve`, the Verilated
//! board) reached through a Unix socket with this crate's vfio-user client
//! (`client`: every reply read header first, error replies are errors, replies have
//! a time limit).
//!
//! * BAR0 reads and writes are region reads and writes of region
//!   [`board::REGION_BAR0`] (one message and its reply each).
//! * [`Device::alloc_dma`]: a [`DmaRegion`] (a sealed memfd) whose fd is DMA-mapped at
//!   IOVA = its address, so the device process maps the same pages.
//! * [`Device::map_dma`]: the device process cannot reach this process's memory, so the
//!   range gets a shadow memfd mapped at IOVA = the application's address (a bounce
//!   buffer, like the kernel's swiotlb); [`Device::sync_for_device`] copies application
//!   bytes into the shadow and [`Device::sync_for_cpu`] copies them back.
//! * Interrupts: the eventfds go to the MSI-X index ([`board::IRQ_INDEX_MSIX`]).
//!
//! A request the device refuses (its error reply: a bad BAR access, a DMA map it
//! cannot make, a read its model did not serve in time) fails with
//! [`DeviceError::Transport`] and the connection goes on; a device that does not answer
//! within `client::REPLY_TIMEOUT` or answers out of step fails the request and every
//! later one. BAR accesses are still checked here before they are sent (an
//! out-of-range one is [`DeviceError::BadOffset`]).

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

mod client;

use client::Client;

use super::board::{self, BoardInfo};
use super::{Device, DeviceError, DmaRegion};
use crate::eventfd::EventFd;

/// A DMA mapping this backend made (by IOVA).
#[derive(Debug)]
enum Mapping {
    /// A [`DmaRegion`] handed to the caller (shared memory, nothing to copy).
    Region { len: u64 },
    /// Application memory behind a shadow memfd.
    Shadow { len: u64, shadow: DmaRegion },
}

impl Mapping {
    fn len(&self) -> u64 {
        match self {
            Mapping::Region { len } | Mapping::Shadow { len, .. } => *len,
        }
    }
}

/// A MetaRoCE device process reached over vfio-user (see the module docs).
pub struct VfioUserDevice {
    client: Client,
    path: PathBuf,
    bar_size: u32,
    irq_count: u32,
    maps: BTreeMap<u64, Mapping>,
}

impl std::fmt::Debug for VfioUserDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VfioUserDevice")
            .field("path", &self.path)
            .field("bar_size", &self.bar_size)
            .field("irq_count", &self.irq_count)
            .field("maps", &self.maps.len())
            .finish()
    }
}

impl VfioUserDevice {
    /// Connects to the device process listening at `path`. The device serves one
    /// client at a time: a second one waits until the first disconnects.
    pub fn connect(path: impl AsRef<Path>) -> Result<Self, DeviceError> {
        let path = path.as_ref().to_path_buf();
        let hint = || {
            format!(
                "no vfio-user device at {}: start one with `metaroce device serve --socket {}`",
                path.display(),
                path.display()
            )
        };
        if !path.exists() {
            return Err(DeviceError::NotFound(hint()));
        }
        let mut client = Client::connect(&path, client::REPLY_TIMEOUT)
            .map_err(|io| DeviceError::NotFound(format!("{} ({io})", hint())))?;
        client.negotiate()?;
        let bar = client.region_size(board::REGION_BAR0).ok();
        let info = client.region_size(board::REGION_BOARD_INFO).ok();
        let bar_size = match (bar, info) {
            (Some(b), Some(i))
                if b > 0 && b <= u64::from(u32::MAX) && i >= u64::from(board::BOARD_INFO_BYTES) =>
            {
                b as u32
            }
            _ => {
                return Err(DeviceError::Unusable(format!(
                    "{} is not a MetaRoCE device (BAR0 {bar:?} bytes, board info {info:?} bytes)",
                    path.display()
                )));
            }
        };
        let irq_count = client.irq_count(board::IRQ_INDEX_MSIX)?;
        let mut dev = VfioUserDevice {
            client,
            path,
            bar_size,
            irq_count,
            maps: BTreeMap::new(),
        };
        dev.board_info()?;
        Ok(dev)
    }

    /// Reads and parses the board-information region (address, counters).
    pub fn board_info(&mut self) -> Result<BoardInfo, DeviceError> {
        let mut b = vec![0u8; board::BOARD_INFO_BYTES as usize];
        self.client
            .region_read(board::REGION_BOARD_INFO, 0, &mut b)?;
        BoardInfo::parse(&b).ok_or_else(|| {
            DeviceError::Unusable(format!(
                "{}: the board-information region has no valid header",
                self.path.display()
            ))
        })
    }

    fn check(&self, offset: u32) -> Result<(), DeviceError> {
        if offset % 4 != 0 || offset.checked_add(4).is_none_or(|end| end > self.bar_size) {
            return Err(DeviceError::BadOffset {
                offset,
                size: self.bar_size,
            });
        }
        Ok(())
    }

    /// Removes mappings overlapping `[addr, addr + len)` that must be stale: memory at
    /// these addresses was just allocated here, so whatever was mapped there before has
    /// been freed without an unmap (a [`DmaRegion`] dropped while mapped).
    fn drop_stale(&mut self, addr: u64, len: u64) -> Result<(), DeviceError> {
        let stale: Vec<(u64, u64)> = self
            .maps
            .range(..addr.saturating_add(len))
            .filter(|(a, m)| a.saturating_add(m.len()) > addr)
            .map(|(a, m)| (*a, m.len()))
            .collect();
        for (a, l) in stale {
            self.unmap_dma(a, l as usize)?;
        }
        Ok(())
    }

    /// DMA-maps `fd` (from offset 0) at `iova`; fails if the device refused it.
    fn map_fd(&mut self, iova: u64, len: u64, fd: i32) -> Result<(), DeviceError> {
        self.client
            .dma_map(iova, len, fd)
            .map_err(|e| DeviceError::Unusable(format!("DMA map of {len} bytes at {iova:#x}: {e}")))
    }

    /// The shadow of application range `[addr, addr + len)` and the offset of `addr` in it.
    fn shadow(&self, addr: u64, len: usize) -> Result<(&DmaRegion, usize), DeviceError> {
        let found = self
            .maps
            .range(..=addr)
            .next_back()
            .and_then(|(base, m)| match m {
                Mapping::Shadow { len: mlen, shadow }
                    if addr
                        .checked_add(len as u64)
                        .is_some_and(|end| end <= base + mlen) =>
                {
                    Some((shadow, (addr - base) as usize))
                }
                _ => None,
            });
        found.ok_or_else(|| {
            DeviceError::Unusable(format!(
                "sync of {len} bytes at {addr:#x}: not inside a range mapped with map_dma"
            ))
        })
    }
}

impl Device for VfioUserDevice {
    fn describe(&self) -> String {
        format!("vfio-user:{}", self.path.display())
    }

    fn bar_size(&self) -> u32 {
        self.bar_size
    }

    fn read32(&mut self, offset: u32) -> Result<u32, DeviceError> {
        self.check(offset)?;
        let mut b = [0u8; 4];
        self.client
            .region_read(board::REGION_BAR0, offset.into(), &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), DeviceError> {
        self.check(offset)?;
        self.client
            .region_write(board::REGION_BAR0, offset.into(), &value.to_le_bytes())
    }

    fn alloc_dma(&mut self, len: usize) -> Result<DmaRegion, DeviceError> {
        let region = DmaRegion::new(len)?;
        let (addr, len) = (region.addr(), region.len() as u64);
        self.drop_stale(addr, len)?;
        self.map_fd(addr, len, region.fd().as_raw_fd())?;
        self.maps.insert(addr, Mapping::Region { len });
        Ok(region)
    }

    fn map_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        let end = addr.checked_add(len as u64).filter(|_| len > 0);
        if end.is_none() {
            return Err(DeviceError::Unusable(format!(
                "map_dma of {len} bytes at {addr:#x}: empty or wrapping range"
            )));
        }
        let overlaps_shadow = self
            .maps
            .range(..addr + len as u64)
            .any(|(a, m)| a + m.len() > addr && matches!(m, Mapping::Shadow { .. }));
        if overlaps_shadow {
            return Err(DeviceError::Unusable(format!(
                "map_dma of {len} bytes at {addr:#x} overlaps a range already mapped"
            )));
        }
        self.drop_stale(addr, len as u64)?;
        let shadow = DmaRegion::new(len)?;
        self.map_fd(addr, len as u64, shadow.fd().as_raw_fd())?;
        self.maps.insert(
            addr,
            Mapping::Shadow {
                len: len as u64,
                shadow,
            },
        );
        Ok(())
    }

    fn unmap_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        match self.maps.get(&addr) {
            Some(m) if m.len() == len as u64 => {}
            Some(m) if matches!(m, Mapping::Region { .. }) && (len as u64) < m.len() => {}
            _ => {
                return Err(DeviceError::Unusable(format!(
                    "unmap_dma of {len} bytes at {addr:#x}: no such mapping"
                )));
            }
        }
        let m = self.maps.remove(&addr).expect("checked above");
        self.client.dma_unmap(addr, m.len())
    }

    fn sync_for_device(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        let (shadow, off) = self.shadow(addr, len)?;
        // SAFETY: `[addr, addr + len)` lies inside a range the caller registered with
        // `map_dma`, whose contract is that the memory stays valid and readable until
        // `unmap_dma`; it is only read here.
        let src = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
        shadow.write(off, src);
        Ok(())
    }

    fn sync_for_cpu(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        let (shadow, off) = self.shadow(addr, len)?;
        // SAFETY: as in `sync_for_device`; the caller asks for the device's bytes, so the
        // range is the application's buffer the device wrote, and nothing here holds a
        // reference into it across the copy.
        let dst = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
        shadow.read(off, dst);
        Ok(())
    }

    fn irq_count(&self) -> u32 {
        self.irq_count
    }

    fn enable_irqs(&mut self, fds: &[&EventFd]) -> Result<(), DeviceError> {
        if fds.len() as u64 > u64::from(self.irq_count) {
            return Err(DeviceError::Unusable(format!(
                "{} eventfds for {} interrupt vectors",
                fds.len(),
                self.irq_count
            )));
        }
        let raw: Vec<i32> = fds.iter().map(|f| f.as_raw_fd()).collect();
        self.client.set_irqs(
            board::IRQ_INDEX_MSIX,
            board::IRQ_SET_DATA_EVENTFD | board::IRQ_SET_ACTION_TRIGGER,
            0,
            &raw,
        )
    }

    fn reset(&mut self) -> Result<(), DeviceError> {
        self.client.reset()
    }

    fn read_board_info(&mut self) -> Result<Option<BoardInfo>, DeviceError> {
        self.board_info().map(Some)
    }
}

impl Drop for VfioUserDevice {
    fn drop(&mut self) {
        self.client.shutdown();
    }
}
