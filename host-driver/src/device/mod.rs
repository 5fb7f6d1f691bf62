//! The host's view of a MetaRoCE hardware NIC: what the driver needs from a board,
//! whatever carries it.
//!
//! A [`Device`] is the raw access a PCIe function gives a userspace driver: 32-bit
//! register reads and writes in BAR0, memory the device can reach by DMA, interrupt
//! vectors signalled on eventfds, and a function reset. Two implementations carry it:
//!
//! * [`vfio_user`]: a device process (`metaroce device serve`, the Verilated NIC) over the
//!   vfio-user protocol — the protocol of QEMU's `vfio-user-pci` and libvfio-user;
//! * [`vfio`]: a real board bound to the kernel's `vfio-pci` driver;
//! * [`uart`]: a board without PCIe, over the management protocol on a serial line
//!   (its memory is the board's own, reached by copies: see there).
//!
//! Everything above this trait — discovering the register blocks, running the firmware
//! (the transport engine) on the host CPU, rings, tables, interrupts — is one driver,
//! so the `vfio_user` backend exercises all of it that a board would.
//!
//! **Addresses.** The device addresses host memory by IOVA. Both implementations map
//! memory at an IOVA equal to its virtual address in this process, so a buffer's
//! address means the same to the engine, the application and the device. Ring memory
//! comes from [`DmaRegion`] (shared with the device: nothing to synchronise). For
//! application memory registered with [`Device::map_dma`], a device that cannot reach
//! this process's memory directly (a vfio-user device process) works through a bounce
//! copy, like the kernel's swiotlb: the driver calls [`Device::sync_for_device`] before
//! the device reads a range and [`Device::sync_for_cpu`] after it wrote one; with an
//! IOMMU (kernel VFIO) both are no-ops.

pub mod board;
pub mod dma;
pub mod uart;
pub mod vfio;
pub mod vfio_user;

pub use dma::DmaRegion;
pub use vfio_user::VfioUserDevice;

use crate::eventfd::EventFd;

/// `CLOCK_MONOTONIC` in nanoseconds: the time base of a simulated device's `now` (the
/// device process clocks its model with it) and so of the engine the driver runs for
/// it, whose timestamps must agree with the device's.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec on our stack; the call only writes it.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// Errors of raw device access. Every message says what to check.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// No device at the given address or path.
    #[error("no such device: {0}")]
    NotFound(String),
    /// The device exists but cannot be used as asked (not bound to vfio-pci, no IOMMU
    /// group, permission denied, wrong kind of device, …).
    #[error("device unusable: {0}")]
    Unusable(String),
    /// A register access outside BAR0 or not 4-byte aligned.
    #[error("BAR0 access at {offset:#x} is out of range or unaligned (BAR0 is {size:#x} bytes)")]
    BadOffset {
        /// The byte offset asked for.
        offset: u32,
        /// BAR0's size.
        size: u32,
    },
    /// The transport to the device failed (socket closed, ioctl failed).
    #[error("device transport: {0}")]
    Transport(String),
    /// An operating-system error.
    #[error("{0}: {1}")]
    Io(&'static str, #[source] std::io::Error),
}

/// Raw access to one MetaRoCE device function (see the module docs).
///
/// Methods take `&mut self`: one driver thread owns a device.
pub trait Device: Send {
    /// Where the device is, for messages (`vfio-user:/tmp/nic0.sock`, `vfio:0000:01:00.0`).
    fn describe(&self) -> String;

    /// BAR0's size in bytes.
    fn bar_size(&self) -> u32;

    /// Reads the 32-bit register at byte `offset` of BAR0.
    fn read32(&mut self, offset: u32) -> Result<u32, DeviceError>;

    /// Writes the 32-bit register at byte `offset` of BAR0 (a posted write: it reaches
    /// the device in order with earlier writes).
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), DeviceError>;

    /// Allocates `len` bytes of zeroed memory shared with the device (rounded up to
    /// pages), mapped at IOVA = its address here; for rings and other driver memory.
    fn alloc_dma(&mut self, len: usize) -> Result<DmaRegion, DeviceError>;

    /// Makes `len` bytes of this process's memory at `addr` reachable by the device at
    /// IOVA `addr` (application memory being registered). The memory must stay valid
    /// until [`Device::unmap_dma`].
    fn map_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError>;

    /// Undoes [`Device::map_dma`] (or frees the mapping of a [`DmaRegion`] about to be
    /// dropped); the device can no longer reach the range.
    fn unmap_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError>;

    /// Makes the CPU's bytes of a mapped range visible to the device before it reads them.
    fn sync_for_device(&mut self, addr: u64, len: usize) -> Result<(), DeviceError>;

    /// Makes the device's writes to a mapped range visible to the CPU.
    fn sync_for_cpu(&mut self, addr: u64, len: usize) -> Result<(), DeviceError>;

    /// Number of interrupt vectors (MSI-X) the device has.
    fn irq_count(&self) -> u32;

    /// Routes vectors `0..fds.len()` to the eventfds: the device signals `fds[v]` when it
    /// raises vector `v`.
    fn enable_irqs(&mut self, fds: &[&EventFd]) -> Result<(), DeviceError>;

    /// Resets the function (registers to their reset values, queues disabled). DMA
    /// mappings stay.
    fn reset(&mut self) -> Result<(), DeviceError>;

    /// The board information of a simulated board (its address and the device
    /// process's counters, read now); `None` for a device that has none (a board).
    fn read_board_info(&mut self) -> Result<Option<board::BoardInfo>, DeviceError> {
        Ok(None)
    }
}
