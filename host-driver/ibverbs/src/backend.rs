//! The one place this library meets a NIC implementation: opening a device on the
//! backend chosen by `METAROCE_IBV_BACKEND`, and registering application memory.
//! Everything else goes through the backend-neutral Verbs API of `metaroce-driver`.
//!
//! Environment:
//! * `METAROCE_IBV_BACKEND` — `soft` (the default): the software NIC over UDP sockets;
//!   `device`: a MetaRoCE hardware NIC through the host driver (`metaroce_driver::hw`).
//! * `METAROCE_IBV_DEVICE` — with `device`: which one, `vfio:BDF` (a board bound to
//!   `vfio-pci`) or the path of a vfio-user device process's socket.
//! * `METAROCE_IBV_DEVICE_ADDR` — with `device` on a board without board information
//!   (`vfio:`): its own `ip:port` (default: the device's address and port 4791); a
//!   vfio-user device process says its own.
//! * `METAROCE_IBV_PORT` — UDP port of the first device context the process opens (the
//!   next ones take the following ports); unset or 0: the kernel picks one.
//! * `METAROCE_IBV_AUTH_KEY` — 64 hex digits: every QP runs in authenticated mode with
//!   this connection key (both ends must set the same key; spec §11.2).
//! * `METAROCE_IBV_BUSY_POLL` — `1`: the soft NIC's progress thread spins instead of
//!   sleeping when idle (lower latency, one core busy).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, Ordering};

use metaroce_driver::hostmem::HostBuffer;
use metaroce_driver::hw::DeviceBackend;
use metaroce_driver::soft::{SoftBackend, SoftConfig, SoftError};
use metaroce_driver::verbs::{Access, Context, MemoryRegion, ProtectionDomain};

use crate::device::Device;
use crate::ffi::Errno;

/// Reads an environment variable, if set and valid UTF-8.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Opens `dev` on the configured backend.
pub fn open(dev: &Device) -> Result<Context, Errno> {
    match env("METAROCE_IBV_BACKEND").as_deref().unwrap_or("soft") {
        "soft" => open_soft(dev),
        "device" => open_device(dev),
        _ => Err(libc::ENODEV),
    }
}

/// Says why a context could not be opened (programs only say "couldn't get
/// context"; a failed write to stderr is ignored).
fn complain(what: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "libibverbs (metaroce): {what}");
}

fn open_device(dev: &Device) -> Result<Context, Errno> {
    let Some(spec) = env("METAROCE_IBV_DEVICE") else {
        complain(format_args!(
            "METAROCE_IBV_BACKEND=device needs METAROCE_IBV_DEVICE (vfio:BDF or a socket path)"
        ));
        return Err(libc::ENODEV);
    };
    let local = match env("METAROCE_IBV_DEVICE_ADDR") {
        Some(a) => Some(a.parse().map_err(|_| {
            complain(format_args!("METAROCE_IBV_DEVICE_ADDR={a} is not ip:port"));
            libc::EINVAL
        })?),
        None => Some(SocketAddr::new(dev.ip, 4791)),
    };
    let backend = DeviceBackend::open(&spec, local, |_| {}).map_err(|e| {
        complain(format_args!("cannot start the device {spec}: {e}"));
        libc::ENODEV
    })?;
    Ok(Context::open(backend))
}

fn open_soft(dev: &Device) -> Result<Context, Errno> {
    static NEXT_PORT: AtomicU16 = AtomicU16::new(0);
    let base: u16 = env("METAROCE_IBV_PORT")
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let port = if base == 0 {
        0
    } else {
        base.wrapping_add(NEXT_PORT.fetch_add(1, Ordering::Relaxed))
    };
    let bind = SocketAddr::new(dev.ip, port);
    let mut cfg = SoftConfig::new(bind);
    cfg.busy_poll = env("METAROCE_IBV_BUSY_POLL").as_deref() == Some("1");
    let backend = SoftBackend::start(cfg).map_err(|e| {
        complain(format_args!("cannot start the soft NIC on {bind}: {e}"));
        // The OS error when there is one (e.g. EADDRINUSE: the fixed port is taken).
        match &e {
            SoftError::Udp(u) => u.os_error().and_then(std::io::Error::raw_os_error),
            SoftError::Io(_, io) => io.raw_os_error(),
        }
        .unwrap_or(libc::EADDRNOTAVAIL)
    })?;
    Ok(Context::open(backend))
}

/// Registers `len` bytes of application memory at `addr` in `pd`, in place.
///
/// # Safety
/// `addr..addr + len` must stay valid for reads and writes until the region is dropped
/// (the `ibv_reg_mr` contract).
pub unsafe fn register(
    pd: &ProtectionDomain,
    addr: *mut u8,
    len: usize,
    access: Access,
) -> Result<MemoryRegion, Errno> {
    // SAFETY: forwarded to the caller (the `ibv_reg_mr` contract): the range stays
    // valid until the region, which holds the buffer, is deregistered.
    let buf = unsafe { HostBuffer::from_raw_parts(addr, len) }.ok_or(libc::EINVAL)?;
    pd.reg_mr(buf, access).map_err(|e| e.errno())
}
