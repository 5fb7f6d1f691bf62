//! A board reached over a serial line: [`UartDevice`], a [`Device`] that speaks the
//! management protocol of `docs/hardware.md` §19 (*The management path over a UART*)
//! on any byte stream, to the board's `MgmtEngine`.
//!
//! **Registers**: `read32`/`write32` are REG_READ/REG_WRITE requests, one round trip
//! each (about 1.3 ms at 115,200 bit/s: 12 and 7 bytes out and back).
//!
//! **Memory**: the device reaches only the board's own memory window (`LocalMem`,
//! `window` bytes). This process maps a shadow of it at [`WINDOW_BASE`]: a region
//! from [`Device::alloc_dma`] lives at `WINDOW_BASE + o` here and at board address
//! `o` (the board ignores the address bits above its window), so, as with the other
//! devices, a region's address is its device address. The shadow and the board are
//! two copies: [`Device::sync_for_device`] writes a range to the board
//! (MEM_WRITE, 256 bytes a frame), [`Device::sync_for_cpu`] reads it back
//! (MEM_READ). Nothing is shared, so ring memory needs the syncs too; the driver
//! above (`hw`) reads its rings without them and does not run over this device yet.
//!
//! **Application memory** ([`Device::map_dma`]) cannot be reached by the board: only
//! ranges inside a region of the window are accepted; others are refused with an
//! error that says so. Registering a buffer means allocating it from the window
//! and copying through the syncs — a copy-based NIC, and a limitation of a board
//! without PCIe.
//!
//! **No interrupts** ([`Device::irq_count`] is 0) and **no function reset** over the
//! line ([`Device::reset`] fails: reload the bitstream).
//!
//! **Errors**: a response that is missing (the stream's read returns nothing: a tty
//! opened by [`open_tty`] times out after 0.5 s), damaged or of the wrong op is a
//! [`DeviceError::Transport`]; a BAD_CRC answer (the board did nothing) is retried
//! twice. After a failure the device stays silent for the board's idle time
//! (at least 16 character times) before the next request, so the board has dropped
//! whatever it was reading.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::time::Duration;

use super::{Device, DeviceError, DmaRegion};
use crate::eventfd::EventFd;
use crate::hw::codes::mgmt::*;

/// Where this process maps the board's memory window ("MR" in the top bits).
pub const WINDOW_BASE: u64 = 0x4D52_0000_0000;
/// BAR0's size.
const BAR: u32 = 0x1_0000;
/// Allocation granule of the window.
const PAGE: usize = 4096;

/// A [`Device`] over the management protocol on a byte stream (see the module docs).
pub struct UartDevice<S> {
    link: S,
    what: String,
    window: usize,
    /// Regions handed out: board offset → (length, the region's memfd).
    regions: BTreeMap<usize, (usize, File)>,
    /// How long to stay silent after a failed exchange.
    quiet: Duration,
}

impl<S: Read + Write + Send> UartDevice<S> {
    /// A device on `link` whose board has `window` bytes of memory (a multiple of
    /// 4 KiB); `what` names it in messages; `quiet` is the silence after a failed
    /// exchange (longer than the board's idle timeout).
    pub fn new(link: S, what: &str, window: usize, quiet: Duration) -> Self {
        UartDevice {
            link,
            what: what.into(),
            window,
            regions: BTreeMap::new(),
            quiet,
        }
    }

    fn fail(&mut self, msg: String) -> DeviceError {
        std::thread::sleep(self.quiet);
        DeviceError::Transport(format!("{}: {msg}", self.what))
    }

    /// One request and its response's data (`want` bytes when OK).
    fn exchange(
        &mut self,
        op: u8,
        addr: u32,
        data: &[u8],
        len: usize,
        want: usize,
    ) -> Result<Vec<u8>, DeviceError> {
        let frame = request(op, addr, len as u16, data);
        for _ in 0..3 {
            self.link
                .write_all(&frame)
                .and_then(|()| self.link.flush())
                .map_err(|e| DeviceError::Io("writing to the management link", e))?;
            match read_response(&mut self.link, op, want) {
                Ok((OK, body)) => return Ok(body),
                Ok((BAD_CRC, _)) => continue,
                Ok((status, _)) => {
                    return Err(self.fail(format!("op {op} at {addr:#x}: status {status}")));
                }
                Err(msg) => return Err(self.fail(format!("op {op} at {addr:#x}: {msg}"))),
            }
        }
        Err(self.fail(format!(
            "op {op} at {addr:#x}: the board kept seeing a bad CRC"
        )))
    }

    /// The region holding `[addr, addr + len)`: the range's board offset, its offset
    /// in the region, and the region's memfd.
    fn range(&self, addr: u64, len: usize) -> Result<(usize, usize, File), DeviceError> {
        let found = addr
            .checked_sub(WINDOW_BASE)
            .and_then(|o| usize::try_from(o).ok())
            .and_then(|off| {
                let (&start, (rlen, file)) = self.regions.range(..=off).next_back()?;
                (off + len <= start + rlen).then_some((off, off - start, file))
            });
        let (off, in_region, file) = found.ok_or_else(|| {
            DeviceError::Unusable(format!(
                "{addr:#x}+{len} is not board memory: the board reaches only regions from alloc_dma"
            ))
        })?;
        let file = file
            .try_clone()
            .map_err(|e| DeviceError::Io("memfd dup", e))?;
        Ok((off, in_region, file))
    }
}

/// A request frame: header, data, CRC-32.
fn request(op: u8, addr: u32, len: u16, data: &[u8]) -> Vec<u8> {
    let mut f = vec![SYNC_REQ, op];
    f.extend_from_slice(&addr.to_le_bytes());
    f.extend_from_slice(&len.to_le_bytes());
    f.extend_from_slice(data);
    let crc = crc32fast::hash(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// Reads one response to `op`: its status and data (`want` bytes when OK).
fn read_response(link: &mut impl Read, op: u8, want: usize) -> Result<(u8, Vec<u8>), String> {
    let mut byte = [0u8; 1];
    // Up to a frame's worth of stray bytes before the sync.
    for skipped in 0.. {
        if skipped > MAX_BURST + 16 {
            return Err("no response sync".into());
        }
        match link.read(&mut byte) {
            Ok(1) if byte[0] == SYNC_RESP => break,
            Ok(1) => {}
            Ok(_) => return Err("no response (timeout)".into()),
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let mut head = [0u8; 2];
    link.read_exact(&mut head)
        .map_err(|e| format!("response header: {e}"))?;
    let [rop, status] = head;
    let n = if status == OK { want } else { 0 };
    let mut rest = vec![0u8; n + 4];
    link.read_exact(&mut rest)
        .map_err(|e| format!("response body: {e}"))?;
    let mut all = vec![SYNC_RESP, rop, status];
    all.extend_from_slice(&rest[..n]);
    let crc = u32::from_le_bytes(rest[n..].try_into().expect("4 bytes"));
    if crc32fast::hash(&all) != crc {
        return Err("response CRC wrong".into());
    }
    if rop != op {
        return Err(format!("response to op {rop}, not {op}"));
    }
    rest.truncate(n);
    Ok((status, rest))
}

impl<S: Read + Write + Send> Device for UartDevice<S> {
    fn describe(&self) -> String {
        format!("uart:{}", self.what)
    }

    fn bar_size(&self) -> u32 {
        BAR
    }

    fn read32(&mut self, offset: u32) -> Result<u32, DeviceError> {
        check(offset)?;
        let v = self.exchange(REG_READ, offset, &[], 4, 4)?;
        Ok(u32::from_le_bytes(v.try_into().expect("4 bytes")))
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), DeviceError> {
        check(offset)?;
        self.exchange(REG_WRITE, offset, &value.to_le_bytes(), 4, 0)
            .map(drop)
    }

    fn alloc_dma(&mut self, len: usize) -> Result<DmaRegion, DeviceError> {
        let len = len.max(1).div_ceil(PAGE) * PAGE;
        // First fit between the regions handed out.
        let mut at = 0;
        for (&start, &(rlen, _)) in &self.regions {
            if start - at >= len {
                break;
            }
            at = start + rlen;
        }
        if at + len > self.window {
            return Err(DeviceError::Unusable(format!(
                "{len} bytes do not fit in the board's {}-byte memory window",
                self.window
            )));
        }
        let region = DmaRegion::new_at(WINDOW_BASE + at as u64, len)?;
        let file = File::from(
            region
                .fd()
                .try_clone_to_owned()
                .map_err(|e| DeviceError::Io("memfd dup", e))?,
        );
        self.regions.insert(at, (len, file));
        // Zeroed on the board too.
        self.sync_for_device(region.addr(), len)?;
        Ok(region)
    }

    fn map_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        self.range(addr, len).map(drop)
    }

    fn unmap_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        let (off, _, _) = self.range(addr, len)?;
        if self
            .regions
            .get(&off)
            .is_some_and(|r| r.0 == len.div_ceil(PAGE) * PAGE)
        {
            self.regions.remove(&off);
        }
        Ok(())
    }

    fn sync_for_device(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        let (off, in_region, file) = self.range(addr, len)?;
        let mut buf = vec![0u8; MAX_BURST];
        for at in (0..len).step_by(MAX_BURST) {
            let n = (len - at).min(MAX_BURST);
            file.read_exact_at(&mut buf[..n], (in_region + at) as u64)
                .map_err(|e| DeviceError::Io("reading DMA memory", e))?;
            self.exchange(MEM_WRITE, (off + at) as u32, &buf[..n], n, 0)?;
        }
        Ok(())
    }

    fn sync_for_cpu(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        let (off, in_region, file) = self.range(addr, len)?;
        for at in (0..len).step_by(MAX_BURST) {
            let n = (len - at).min(MAX_BURST);
            let bytes = self.exchange(MEM_READ, (off + at) as u32, &[], n, n)?;
            file.write_all_at(&bytes, (in_region + at) as u64)
                .map_err(|e| DeviceError::Io("writing DMA memory", e))?;
        }
        Ok(())
    }

    fn irq_count(&self) -> u32 {
        0
    }

    fn enable_irqs(&mut self, fds: &[&EventFd]) -> Result<(), DeviceError> {
        if fds.is_empty() {
            return Ok(());
        }
        Err(DeviceError::Unusable(format!(
            "{}: no interrupts over the management UART",
            self.what
        )))
    }

    fn reset(&mut self) -> Result<(), DeviceError> {
        Err(DeviceError::Unusable(format!(
            "{}: no function reset over the management UART (reload the bitstream)",
            self.what
        )))
    }
}

/// A BAR0 offset the protocol can carry: 4-byte aligned, inside BAR0.
fn check(offset: u32) -> Result<(), DeviceError> {
    if offset % 4 != 0 || offset >= BAR {
        return Err(DeviceError::BadOffset { offset, size: BAR });
    }
    Ok(())
}

/// Opens a serial port (`/dev/ttyUSB0`) in raw mode, 8N1 at `baud` (one of
/// 115200, 230400, 460800, 921600, 1000000, 2000000, 3000000), reads timing out
/// after 0.5 s, for [`UartDevice::new`].
pub fn open_tty(path: &str, baud: u32) -> Result<File, DeviceError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let speed = match baud {
        115_200 => libc::B115200,
        230_400 => libc::B230400,
        460_800 => libc::B460800,
        921_600 => libc::B921600,
        1_000_000 => libc::B1000000,
        2_000_000 => libc::B2000000,
        3_000_000 => libc::B3000000,
        _ => {
            return Err(DeviceError::Unusable(format!(
                "{baud} bit/s: not a rate open_tty knows"
            )));
        }
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        // Not our controlling terminal.
        .custom_flags(libc::O_NOCTTY)
        .open(path)
        .map_err(|e| DeviceError::Io("opening the serial port", e))?;
    // SAFETY: an all-zero termios is a valid value for tcgetattr to fill.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the call; `t` is ours to write; results checked.
    let ok = unsafe {
        libc::tcgetattr(fd, &mut t) == 0 && {
            libc::cfmakeraw(&mut t);
            t.c_cflag |= libc::CLOCAL | libc::CREAD;
            t.c_cflag &= !(libc::CSTOPB | libc::PARENB | libc::CRTSCTS);
            t.c_cc[libc::VMIN] = 0;
            t.c_cc[libc::VTIME] = 5;
            libc::cfsetspeed(&mut t, speed) == 0 && libc::tcsetattr(fd, libc::TCSANOW, &t) == 0
        }
    };
    if !ok {
        return Err(DeviceError::Io(
            "setting the serial port raw",
            std::io::Error::last_os_error(),
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests;
