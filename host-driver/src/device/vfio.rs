//! A real board through the kernel's `vfio-pci` driver (`vfio-ioctls`, default
//! features off: no hypervisor).
//!
//! * the VFIO container (`/dev/vfio/vfio`, type-1 IOMMU) and the device's group;
//! * BAR0 (region 0) mapped into this process, honouring the region's sparse-mmap
//!   capability (areas that cannot be mapped go through `pread`/`pwrite` on the
//!   device fd); register accesses through `volatile`;
//! * DMA: [`DmaRegion`]s and registered application memory mapped in the IOMMU at
//!   IOVA = their address, page by page (registered buffers need not be page-aligned
//!   and may share pages; each page is mapped once and counted), sync no-ops;
//! * MSI-X vectors on eventfds; function reset.
//!
//! Before opening anything, [`VfioDevice::open`] checks the usual reasons a board is
//! not usable and names the one it finds: no device at the address, not bound to
//! `vfio-pci`, no IOMMU group, `/dev/vfio` missing, permission denied.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;

use bitflags::bitflags;
use vfio_bindings::bindings::vfio;
use vfio_ioctls::{VfioContainer, VfioDevice as RawVfioDevice, VfioOps, VfioRegionInfoCap};
use volatile::VolatilePtr;

use super::{Device, DeviceError, DmaRegion};
use crate::eventfd::EventFd;

const PAGE: u64 = 4096;
const BAR0: u32 = vfio::VFIO_PCI_BAR0_REGION_INDEX;
const MSIX: u32 = vfio::VFIO_PCI_MSIX_IRQ_INDEX;

bitflags! {
    /// `vfio_region_info.flags`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct RegionFlags: u32 {
        /// Readable.
        const READ = vfio::VFIO_REGION_INFO_FLAG_READ;
        /// Writable.
        const WRITE = vfio::VFIO_REGION_INFO_FLAG_WRITE;
        /// May be mmap'ed (then possibly only in the sparse-mmap areas).
        const MMAP = vfio::VFIO_REGION_INFO_FLAG_MMAP;
    }
}

/// Where the checks look (the real system, or a test's directory tree).
#[derive(Clone, Debug)]
pub struct VfioPaths {
    /// `/sys/bus/pci/devices`.
    pub pci_devices: PathBuf,
    /// `/dev/vfio`.
    pub dev_vfio: PathBuf,
}

impl Default for VfioPaths {
    fn default() -> Self {
        VfioPaths {
            pci_devices: "/sys/bus/pci/devices".into(),
            dev_vfio: "/dev/vfio".into(),
        }
    }
}

/// Checks that the PCI function `bdf` can be opened through VFIO; returns its IOMMU
/// group number. Each failure names its cause and the fix.
pub fn preflight(paths: &VfioPaths, bdf: &str) -> Result<u32, DeviceError> {
    let dev = paths.pci_devices.join(bdf);
    if !dev.exists() {
        return Err(DeviceError::NotFound(format!(
            "no PCI device at {bdf} ({} does not exist; `lspci -D` lists the addresses)",
            dev.display()
        )));
    }
    let driver = std::fs::read_link(dev.join("driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    match driver.as_deref() {
        Some("vfio-pci") => {}
        other => {
            let now = other.map_or("no driver".to_string(), |d| format!("driver {d}"));
            return Err(DeviceError::Unusable(format!(
                "{bdf} is bound to {now}, not vfio-pci: `echo vfio-pci > \
                 {0}/driver_override; echo {bdf} > {0}/driver/unbind; echo {bdf} > \
                 /sys/bus/pci/drivers_probe`",
                dev.display()
            )));
        }
    }
    let group = std::fs::read_link(dev.join("iommu_group"))
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse::<u32>().ok())
        .ok_or_else(|| {
            DeviceError::Unusable(format!(
                "{bdf} has no IOMMU group: turn the IOMMU on (intel_iommu=on or amd_iommu=on \
                 on the kernel command line)"
            ))
        })?;
    if !paths.dev_vfio.join("vfio").exists() {
        return Err(DeviceError::Unusable(format!(
            "{} is missing: load the VFIO modules (`modprobe vfio-pci`)",
            paths.dev_vfio.join("vfio").display()
        )));
    }
    let node = paths.dev_vfio.join(group.to_string());
    if let Err(e) = OpenOptions::new().read(true).write(true).open(&node) {
        return Err(open_error(&node, e));
    }
    Ok(group)
}

/// The error for a VFIO node that would not open.
fn open_error(node: &Path, e: std::io::Error) -> DeviceError {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => DeviceError::Unusable(format!(
            "permission denied on {}: run as root or give the user read/write on it \
             (udev rule or chown), and raise `ulimit -l` for the memory it pins",
            node.display()
        )),
        std::io::ErrorKind::NotFound => DeviceError::Unusable(format!(
            "{} is missing: is the group bound to vfio-pci (every device in it)?",
            node.display()
        )),
        _ => DeviceError::Io("open VFIO group", e),
    }
}

/// One mmap'ed part of BAR0.
struct Mapped {
    /// Offset in BAR0.
    offset: u64,
    len: u64,
    ptr: NonNull<u8>,
}

/// A MetaRoCE board bound to `vfio-pci`.
pub struct VfioDevice {
    bdf: String,
    container: Arc<VfioContainer>,
    dev: RawVfioDevice,
    bar_size: u32,
    bar: Vec<Mapped>,
    /// Pages mapped in the IOMMU, with how many mappings hold each.
    pages: BTreeMap<u64, u32>,
}

// SAFETY: the BAR pointers refer to a device mapping owned by this value and are only
// used through volatile accesses from `&mut self` methods.
unsafe impl Send for VfioDevice {}

impl std::fmt::Debug for VfioDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VfioDevice")
            .field("bdf", &self.bdf)
            .finish()
    }
}

fn vfio_err(what: &'static str) -> impl Fn(vfio_ioctls::VfioError) -> DeviceError {
    move |e| DeviceError::Transport(format!("{what}: {e}"))
}

impl VfioDevice {
    /// Opens the PCI function `bdf` (`0000:01:00.0`) through VFIO and maps BAR0.
    pub fn open(bdf: &str) -> Result<VfioDevice, DeviceError> {
        let paths = VfioPaths::default();
        preflight(&paths, bdf)?;
        let container = Arc::new(VfioContainer::new(None).map_err(vfio_err("VFIO container"))?);
        let ops: Arc<dyn VfioOps> = container.clone();
        let dev = RawVfioDevice::new(&paths.pci_devices.join(bdf), ops, false)
            .map_err(vfio_err("VFIO device"))?;
        let size = dev.get_region_size(BAR0);
        let bar_size = u32::try_from(size)
            .ok()
            .filter(|&s| s >= 0x1000)
            .ok_or_else(|| {
                DeviceError::Unusable(format!(
                    "{bdf}: BAR0 is {size:#x} bytes, not a MetaRoCE BAR"
                ))
            })?;
        let mut d = VfioDevice {
            bdf: bdf.into(),
            container,
            dev,
            bar_size,
            bar: Vec::new(),
            pages: BTreeMap::new(),
        };
        d.map_bar()?;
        Ok(d)
    }

    /// Maps what of BAR0 may be mapped: the whole region, or its sparse-mmap areas.
    fn map_bar(&mut self) -> Result<(), DeviceError> {
        let flags = RegionFlags::from_bits_truncate(self.dev.get_region_flags(BAR0));
        if !flags.contains(RegionFlags::MMAP) {
            return Ok(());
        }
        let mut areas = vec![(0, u64::from(self.bar_size))];
        for cap in self.dev.get_region_caps(BAR0) {
            if let VfioRegionInfoCap::SparseMmap(s) = cap {
                areas = s.areas.iter().map(|a| (a.offset, a.size)).collect();
            }
        }
        let base = self.dev.get_region_offset(BAR0);
        for (offset, len) in areas {
            if len == 0 {
                continue;
            }
            let Ok(file_offset) = libc::off_t::try_from(base + offset) else {
                continue;
            };
            // SAFETY: maps `len` bytes of the device fd at the region's offset, as
            // VFIO describes it; the mapping is checked and unmapped in `drop`.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    self.dev.as_raw_fd(),
                    file_offset,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(DeviceError::Io(
                    "mmap of BAR0",
                    std::io::Error::last_os_error(),
                ));
            }
            if let Some(ptr) = NonNull::new(p.cast::<u8>()) {
                self.bar.push(Mapped { offset, len, ptr });
            }
        }
        Ok(())
    }

    fn check(&self, offset: u32) -> Result<(), DeviceError> {
        if offset % 4 != 0 || offset.checked_add(4).is_none_or(|e| e > self.bar_size) {
            return Err(DeviceError::BadOffset {
                offset,
                size: self.bar_size,
            });
        }
        Ok(())
    }

    /// The mapped register at `offset`, if that part of BAR0 is mapped.
    fn reg(&mut self, offset: u32) -> Option<VolatilePtr<'_, u32>> {
        let o = u64::from(offset);
        let m = self
            .bar
            .iter()
            .find(|m| o >= m.offset && o + 4 <= m.offset + m.len)?;
        // SAFETY: in the mapping (checked above), 4-byte aligned (checked by the
        // caller; mappings are page-aligned), valid while `self` lives.
        let p = unsafe { m.ptr.add((o - m.offset) as usize).cast::<u32>() };
        // SAFETY: a device register: only volatile reads and writes touch it.
        Some(unsafe { VolatilePtr::new(p) })
    }

    /// Maps the pages of `addr..addr + len` that are not mapped yet.
    fn map_pages(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        for page in page_range(addr, len) {
            let n = self.pages.entry(page).or_insert(0);
            if *n == 0 {
                // SAFETY: the caller keeps `addr..addr + len` valid until it unmaps it
                // (the `Device::map_dma` contract); the device only reaches it by DMA.
                unsafe {
                    self.container
                        .vfio_dma_map(page, PAGE as usize, page as *mut u8)
                        .map_err(vfio_err("VFIO DMA map"))?;
                }
            }
            *n += 1;
        }
        Ok(())
    }

    fn unmap_pages(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        for page in page_range(addr, len) {
            let Some(n) = self.pages.get_mut(&page) else {
                continue;
            };
            *n -= 1;
            if *n == 0 {
                self.pages.remove(&page);
                self.container
                    .vfio_dma_unmap(page, PAGE as usize)
                    .map_err(vfio_err("VFIO DMA unmap"))?;
            }
        }
        Ok(())
    }
}

/// The pages holding `addr..addr + len`.
fn page_range(addr: u64, len: usize) -> impl Iterator<Item = u64> {
    let first = addr / PAGE * PAGE;
    let end = addr.saturating_add(len as u64).div_ceil(PAGE) * PAGE;
    (first..end).step_by(PAGE as usize)
}

impl Drop for VfioDevice {
    fn drop(&mut self) {
        for m in self.bar.drain(..) {
            // SAFETY: unmapping exactly a mapping made in `map_bar`, once.
            unsafe { libc::munmap(m.ptr.as_ptr().cast(), m.len as usize) };
        }
        for &page in self.pages.keys() {
            let _ = self.container.vfio_dma_unmap(page, PAGE as usize);
        }
    }
}

impl Device for VfioDevice {
    fn describe(&self) -> String {
        format!("vfio:{}", self.bdf)
    }

    fn bar_size(&self) -> u32 {
        self.bar_size
    }

    fn read32(&mut self, offset: u32) -> Result<u32, DeviceError> {
        self.check(offset)?;
        if let Some(r) = self.reg(offset) {
            return Ok(r.read());
        }
        let mut b = [0u8; 4];
        self.dev.region_read(BAR0, &mut b, offset.into());
        Ok(u32::from_le_bytes(b))
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), DeviceError> {
        self.check(offset)?;
        if let Some(r) = self.reg(offset) {
            r.write(value);
            return Ok(());
        }
        self.dev
            .region_write(BAR0, &value.to_le_bytes(), offset.into());
        Ok(())
    }

    fn alloc_dma(&mut self, len: usize) -> Result<DmaRegion, DeviceError> {
        let r = DmaRegion::new(len)?;
        self.map_pages(r.addr(), r.len())?;
        Ok(r)
    }

    fn map_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        self.map_pages(addr, len)
    }

    fn unmap_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        self.unmap_pages(addr, len)
    }

    /// A no-op: behind the IOMMU the device reads this process's memory itself.
    fn sync_for_device(&mut self, _addr: u64, _len: usize) -> Result<(), DeviceError> {
        Ok(())
    }

    /// A no-op: behind the IOMMU the device writes this process's memory itself.
    fn sync_for_cpu(&mut self, _addr: u64, _len: usize) -> Result<(), DeviceError> {
        Ok(())
    }

    fn irq_count(&self) -> u32 {
        self.dev.get_irq_info(MSIX).map_or(0, |i| i.count)
    }

    fn enable_irqs(&mut self, fds: &[&EventFd]) -> Result<(), DeviceError> {
        let mut owned = Vec::new();
        for fd in fds {
            // SAFETY: `dup` of a descriptor we hold; the result is checked and owned
            // by the `vmm_sys_util` eventfd below.
            let dup = unsafe { libc::dup(fd.as_raw_fd()) };
            if dup < 0 {
                return Err(DeviceError::Io(
                    "dup eventfd",
                    std::io::Error::last_os_error(),
                ));
            }
            // SAFETY: `dup` is a fresh descriptor of an eventfd, owned from here on.
            owned.push(unsafe { vmm_sys_util::eventfd::EventFd::from_raw_fd(dup) });
        }
        self.dev
            .enable_msix(owned.iter().collect())
            .map_err(vfio_err("enable MSI-X"))
    }

    fn reset(&mut self) -> Result<(), DeviceError> {
        self.dev.reset();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fake sysfs and /dev/vfio under a temporary directory.
    struct Tree {
        root: PathBuf,
        paths: VfioPaths,
    }

    impl Tree {
        fn new(name: &str) -> Tree {
            let root =
                std::env::temp_dir().join(format!("metaroce-vfio-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            let paths = VfioPaths {
                pci_devices: root.join("sys/bus/pci/devices"),
                dev_vfio: root.join("dev/vfio"),
            };
            std::fs::create_dir_all(&paths.pci_devices).expect("mkdir");
            Tree { root, paths }
        }

        /// A device at `bdf` bound to `driver`, in IOMMU group `group`.
        fn device(&self, bdf: &str, driver: Option<&str>, group: Option<u32>) {
            let dev = self.paths.pci_devices.join(bdf);
            std::fs::create_dir_all(&dev).expect("mkdir");
            if let Some(d) = driver {
                let target = self.root.join("sys/bus/pci/drivers").join(d);
                std::fs::create_dir_all(&target).expect("mkdir");
                symlink(&target, dev.join("driver")).expect("symlink");
            }
            if let Some(g) = group {
                let target = self
                    .root
                    .join("sys/kernel/iommu_groups")
                    .join(g.to_string());
                std::fs::create_dir_all(&target).expect("mkdir");
                symlink(&target, dev.join("iommu_group")).expect("symlink");
            }
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    const BDF: &str = "0000:01:00.0";

    fn err(t: &Tree) -> String {
        preflight(&t.paths, BDF).unwrap_err().to_string()
    }

    #[test]
    fn each_reason_a_board_is_unusable_is_named() {
        let t = Tree::new("reasons");
        assert!(
            err(&t).contains("no PCI device at 0000:01:00.0"),
            "{}",
            err(&t)
        );

        t.device(BDF, Some("nvme"), Some(7));
        let e = err(&t);
        assert!(e.contains("bound to driver nvme, not vfio-pci"), "{e}");

        let t = Tree::new("nodriver");
        t.device(BDF, None, Some(7));
        assert!(err(&t).contains("bound to no driver"), "{}", err(&t));

        let t = Tree::new("nogroup");
        t.device(BDF, Some("vfio-pci"), None);
        assert!(err(&t).contains("no IOMMU group"), "{}", err(&t));

        let t = Tree::new("nodev");
        t.device(BDF, Some("vfio-pci"), Some(7));
        assert!(err(&t).contains("dev/vfio/vfio is missing"), "{}", err(&t));

        std::fs::create_dir_all(&t.paths.dev_vfio).expect("mkdir");
        std::fs::write(t.paths.dev_vfio.join("vfio"), b"").expect("node");
        assert!(err(&t).contains("dev/vfio/7 is missing"), "{}", err(&t));

        std::fs::write(t.paths.dev_vfio.join("7"), b"").expect("node");
        assert_eq!(preflight(&t.paths, BDF).expect("usable"), 7);
    }

    #[test]
    fn permission_denied_says_what_to_do() {
        let e = open_error(
            Path::new("/dev/vfio/7"),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        )
        .to_string();
        assert!(e.contains("permission denied on /dev/vfio/7"), "{e}");
        assert!(e.contains("ulimit -l"), "{e}");
    }

    #[test]
    fn no_board_here_fails_cleanly() {
        // This machine has no MetaRoCE board: opening one is an error, not a panic.
        assert!(VfioDevice::open("0000:ff:1f.7").is_err());
    }

    #[test]
    fn pages_cover_unaligned_ranges() {
        let p: Vec<u64> = page_range(4000, 200).collect();
        assert_eq!(p, [0, 4096]);
        assert_eq!(page_range(8192, 4096).count(), 1);
    }
}
