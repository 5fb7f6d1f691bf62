//! The devices the connection manager uses: one libibverbs context per device, opened
//! when an id is first bound to one of its addresses and kept for the life of the
//! process (as rdma-core's librdmacm does), with a protection domain shared by the ids
//! on it.
//!
//! MetaRoCE's libibverbs shows one device per host address, `metaroceN` being the N-th
//! address of [`metaroce_cabi::netif::host_addresses`]; the device of an address is found
//! by that index, then checked: its GID 0 must be the address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, OnceLock};

use metaroce_cabi::ffi::Errno;
use metaroce_cabi::netif;
use metaroce_cabi::registry::lock;

use crate::abi::{ibv_context, ibv_gid, ibv_pd, ibv_port_attr};
use crate::{addr, verbs};

/// The port every MetaRoCE device has.
pub const PORT: u8 = 1;

/// An opened device.
pub struct Device {
    /// The context (never closed).
    pub ctx: *mut ibv_context,
    /// Its port's GID 0.
    pub gid: ibv_gid,
    /// Its port (LID: the NIC's UDP port; active MTU).
    pub port: ibv_port_attr,
    /// The shared protection domain and how many ids use it.
    pd: Mutex<(usize, *mut ibv_pd)>,
}

// SAFETY: the context pointer is a handle libibverbs validates and synchronises itself;
// the PD pointer is only touched under the mutex.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl Device {
    /// Takes a reference on the shared protection domain (allocated by the first user).
    pub fn acquire_pd(&self) -> Result<*mut ibv_pd, Errno> {
        let mut pd = lock(&self.pd);
        if pd.1.is_null() {
            pd.1 = verbs::alloc_pd(self.ctx)?;
        }
        pd.0 += 1;
        Ok(pd.1)
    }

    /// Drops a reference; the last one frees the domain (if the program left nothing on
    /// it; otherwise it stays, as rdma-core's librdmacm would leak it too).
    pub fn release_pd(&self) {
        let mut pd = lock(&self.pd);
        pd.0 = pd.0.saturating_sub(1);
        if pd.0 == 0 && !pd.1.is_null() {
            let _ = verbs::dealloc_pd(pd.1);
            pd.1 = std::ptr::null_mut();
        }
    }
}

fn opened() -> &'static Mutex<HashMap<usize, Arc<Device>>> {
    static OPENED: OnceLock<Mutex<HashMap<usize, Arc<Device>>>> = OnceLock::new();
    OPENED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The device holding address `ip` (`ENODEV` when no device does).
pub fn for_ip(ip: IpAddr) -> Result<Arc<Device>, Errno> {
    let ip = netif::unmap(ip);
    let index = netif::device_index(ip).ok_or(libc::ENODEV)?;
    open(index, ip)
}

/// Every device (opening those not open yet); devices that fail to open are left out.
pub fn all() -> Vec<Arc<Device>> {
    netif::host_addresses()
        .iter()
        .enumerate()
        .filter_map(|(i, a)| open(i, a.ip).ok())
        .collect()
}

fn open(index: usize, ip: IpAddr) -> Result<Arc<Device>, Errno> {
    let mut map = lock(opened());
    if let Some(d) = map.get(&index) {
        return Ok(d.clone());
    }
    let ctx = verbs::open_device(&format!("metaroce{index}"))?;
    let checked = (|| {
        let gid = verbs::query_gid(ctx, PORT, 0)?;
        if gid != addr::gid_of(ip) {
            // The host's addresses changed since libibverbs listed them.
            return Err(libc::ENODEV);
        }
        Ok((gid, verbs::query_port(ctx, PORT)?))
    })();
    let (gid, port) = match checked {
        Ok(v) => v,
        Err(e) => {
            verbs::close_device(ctx);
            return Err(e);
        }
    };
    let dev = Arc::new(Device {
        ctx,
        gid,
        port,
        pd: Mutex::new((0, std::ptr::null_mut())),
    });
    map.insert(index, dev.clone());
    Ok(dev)
}
