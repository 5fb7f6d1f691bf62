//! Device discovery, contexts and queries: `ibv_get_device_list` … `ibv_query_gid_type`.

use std::cell::UnsafeCell;
use std::collections::BTreeSet;
use std::ffi::{c_char, c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::backend;
use crate::device::{self, Device};
use crate::ffi::{Errno, copy_cstr, guard, out, ret_int, ret_ptr, set_errno};
use crate::objects::{Ctx, lock, reg};
use crate::verbs::datapath;
use metaroce_driver::verbs::AsyncEvent;

/// Largest number of work requests per queue.
pub const MAX_QP_WR: u32 = 1 << 15;
/// Largest CQ.
pub const MAX_CQE: u32 = 1 << 22;
/// Largest inline payload.
pub const MAX_INLINE: u32 = 1024;
/// Vendor id reported by `ibv_query_device` ("MRC"; outside perftest's vendor tables, so
/// it uses plain `ibv_post_send`).
pub const VENDOR_ID: u32 = 0x4d_5243;
/// Vendor part id.
pub const VENDOR_PART_ID: u32 = 0x5200;

/// The soft NIC's MTU (the engine's default; the Verbs API does not report it).
const NIC_MTU: u32 = 4096;

/// The `ibv_mtu` value of the NIC's MTU.
fn mtu_enum(mtu: u32) -> c_int {
    match mtu {
        0..=383 => 1,
        384..=767 => 2,
        768..=1535 => 3,
        1536..=3071 => 4,
        _ => 5,
    }
}

/// `ibv_get_device_list`: every MetaRoCE device, NULL-terminated; free with
/// `ibv_free_device_list`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_device_list(num_devices: *mut c_int) -> *mut *mut ibv_device {
    ret_ptr(|| {
        let devs = device::devices();
        // SAFETY: calloc of n+1 pointers; NULL checked below.
        let list = unsafe { libc::calloc(devs.len() + 1, size_of::<*mut ibv_device>()) }
            .cast::<*mut ibv_device>();
        if list.is_null() {
            return Err(libc::ENOMEM);
        }
        for (i, d) in devs.iter().enumerate() {
            // SAFETY: `i < devs.len()`, inside the n+1 slots just allocated. The devices
            // live for the whole process, so handing out their addresses is sound.
            unsafe { *list.add(i) = (&raw const *d.c).cast_mut() };
        }
        // SAFETY: a non-NULL `num_devices` points to an int the caller owns.
        if let Some(n) = unsafe { num_devices.as_mut() } {
            *n = devs.len() as c_int;
        }
        lock(&LISTS).insert(list as usize);
        Ok(list)
    })
}

/// Lists handed out and not yet freed: only those are ever passed to `free`.
static LISTS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

/// `ibv_free_device_list` (anything but a live list is ignored).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_free_device_list(list: *mut *mut ibv_device) {
    guard((), || {
        if lock(&LISTS).remove(&(list as usize)) {
            // SAFETY: the list came from `ibv_get_device_list` (calloc) and is freed once.
            unsafe { libc::free(list.cast()) }
        }
    })
}

fn dev_arg(p: *const ibv_device) -> Result<&'static Device, Errno> {
    device::by_ptr(p).ok_or(libc::EINVAL)
}

/// `ibv_get_device_name`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_device_name(dev: *mut ibv_device) -> *const c_char {
    ret_ptr(|| Ok(dev_arg(dev)?.c.name.as_ptr().cast_mut()))
}

/// `ibv_get_device_guid` (big-endian, as stored).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_device_guid(dev: *mut ibv_device) -> u64 {
    guard(0, || match dev_arg(dev) {
        Ok(d) => d.guid,
        Err(e) => {
            set_errno(e);
            0
        }
    })
}

/// `ibv_get_device_index`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_device_index(dev: *mut ibv_device) -> c_int {
    guard(-1, || match dev_arg(dev) {
        Ok(d) => d.index as c_int,
        Err(e) => {
            set_errno(e);
            -1
        }
    })
}

/// `ibv_open_device`: starts the device's NIC on the configured backend.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_open_device(dev: *mut ibv_device) -> *mut ibv_context {
    ret_ptr(|| {
        let dev = dev_arg(dev)?;
        let verbs = backend::open(dev)?;
        // SAFETY: plain eventfd creation; the result is checked.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EMFILE));
        }
        // SAFETY: `efd` is a fresh descriptor nobody else owns.
        let async_fd = unsafe { OwnedFd::from_raw_fd(efd) };
        let mut ops: ibv_context_ops = zeroed_ops();
        ops.poll_cq = Some(datapath::poll_cq);
        ops.req_notify_cq = Some(datapath::req_notify_cq);
        ops.post_send = Some(datapath::post_send);
        ops.post_recv = Some(datapath::post_recv);
        ops.post_srq_recv = Some(datapath::post_srq_recv);
        let port = verbs.address().port();
        let mut ext_ops = [std::ptr::null_mut(); 39];
        ext_ops[VCTX_QUERY_DEVICE_EX] = query_device_ex as QueryDeviceExFn as *mut c_void;
        ext_ops[VCTX_CREATE_QP_EX] =
            crate::verbs::qp_ex::create_qp_ex as CreateQpExFn as *mut c_void;
        let ctx = Arc::new(Ctx {
            c: UnsafeCell::new(verbs_context {
                _ext_ops: ext_ops,
                sz: size_of::<verbs_context>(),
                context: ibv_context {
                    device: (&raw const *dev.c).cast_mut(),
                    ops,
                    cmd_fd: -1,
                    async_fd: async_fd.as_raw_fd(),
                    num_comp_vectors: 1,
                    mutex: libc::PTHREAD_MUTEX_INITIALIZER,
                    abi_compat: usize::MAX as *mut c_void,
                },
            }),
            dev,
            verbs,
            port,
            async_fd,
        });
        Ok(reg().contexts.insert(ctx))
    })
}

fn zeroed_ops() -> ibv_context_ops {
    ibv_context_ops {
        _before_poll_cq: [std::ptr::null_mut(); 11],
        poll_cq: None,
        req_notify_cq: None,
        _before_post_srq_recv: [std::ptr::null_mut(); 7],
        post_srq_recv: None,
        _before_post_send: [std::ptr::null_mut(); 4],
        post_send: None,
        post_recv: None,
        _after_post_recv: [std::ptr::null_mut(); 5],
    }
}

/// `ibv_close_device`: 0, or -1 with errno. As with rdma-core, resources still open
/// stay usable until destroyed (they keep the device's NIC alive).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_close_device(ctx: *mut ibv_context) -> c_int {
    neg1(ret_int(|| reg().contexts.remove_any(ctx).map(drop)))
}

/// Maps an errno result to the 0 / -1 convention of the older verbs.
pub fn neg1(r: c_int) -> c_int {
    if r == 0 { 0 } else { -1 }
}

fn device_attr(ctx: &Ctx) -> ibv_device_attr {
    let max_rd_atom =
        c_int::try_from(ctx.verbs.default_qp_config().max_rd_atomic).unwrap_or(c_int::MAX);
    let mut a = ibv_device_attr {
        fw_ver: [0; 64],
        node_guid: ctx.dev.guid,
        sys_image_guid: ctx.dev.guid,
        max_mr_size: 1 << 40,
        page_size_cap: 0xffff_f000,
        vendor_id: VENDOR_ID,
        vendor_part_id: VENDOR_PART_ID,
        hw_ver: 1,
        max_qp: 1 << 16,
        max_qp_wr: MAX_QP_WR as c_int,
        device_cap_flags: 0,
        max_sge: ctx.verbs.max_sge() as c_int,
        max_sge_rd: ctx.verbs.max_sge() as c_int,
        max_cq: 1 << 16,
        max_cqe: MAX_CQE as c_int,
        max_mr: 1 << 16,
        max_pd: 1 << 16,
        // READs and atomics a QP keeps in flight: the engine's limit (2 on the board's
        // READ table, 128 on a soft NIC).
        max_qp_rd_atom: max_rd_atom,
        max_ee_rd_atom: 0,
        max_res_rd_atom: 1 << 16,
        max_qp_init_rd_atom: max_rd_atom,
        max_ee_init_rd_atom: 0,
        // Atomics are executed one at a time by the NIC's engine (on the device,
        // its firmware): atomic with respect to each other, not to the CPU.
        atomic_cap: IBV_ATOMIC_HCA,
        max_ee: 0,
        max_rdd: 0,
        max_mw: 0,
        max_raw_ipv6_qp: 0,
        max_raw_ethy_qp: 0,
        max_mcast_grp: 0,
        max_mcast_qp_attach: 0,
        max_total_mcast_qp_attach: 0,
        max_ah: 0,
        max_fmr: 0,
        max_map_per_fmr: 0,
        max_srq: 1 << 16,
        max_srq_wr: MAX_QP_WR as c_int,
        max_srq_sge: ctx.verbs.max_sge() as c_int,
        max_pkeys: 1,
        local_ca_ack_delay: 16,
        phys_port_cnt: 1,
    };
    copy_cstr(
        &mut a.fw_ver,
        &format!(
            "metaroce-{} ({})",
            env!("CARGO_PKG_VERSION"),
            ctx.verbs.backend_name()
        ),
    );
    a
}

/// `verbs_context.query_device_ex`, behind the header's inline `ibv_query_device_ex`:
/// the attributes of `ibv_query_device`, and of the extended ones the one physical port
/// (`phys_port_cnt_ex`); everything else is zero, as the device has none of it (no ODP,
/// TSO, RSS, timestamps, device memory, tag matching, packet pacing). Fills
/// `attr_size` bytes, as much of the structure as the program's header has.
unsafe extern "C" fn query_device_ex(
    ctx: *mut ibv_context,
    _input: *const c_void,
    attr: *mut ibv_device_attr,
    attr_size: usize,
) -> c_int {
    ret_int(|| {
        let ctx = reg().contexts.get(ctx)?;
        if attr.is_null() || attr_size < size_of::<ibv_device_attr>() {
            return Err(libc::EINVAL);
        }
        let bytes = attr.cast::<u8>();
        // SAFETY: the program passed `attr_size` writable bytes at `attr` (its own
        // `struct ibv_device_attr_ex`), at least an `ibv_device_attr` (checked).
        unsafe {
            std::ptr::write_bytes(bytes, 0, attr_size);
            attr.write(device_attr(&ctx));
            if attr_size >= DEVICE_ATTR_EX_PHYS_PORT_CNT + 4 {
                bytes
                    .add(DEVICE_ATTR_EX_PHYS_PORT_CNT)
                    .cast::<u32>()
                    .write_unaligned(1);
            }
        }
        Ok(())
    })
}

/// `ibv_query_device`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_device(ctx: *mut ibv_context, attr: *mut ibv_device_attr) -> c_int {
    ret_int(|| {
        let ctx = reg().contexts.get(ctx)?;
        // SAFETY: a non-NULL `attr` points to a device attribute struct the caller owns.
        *unsafe { out(attr) }? = device_attr(&ctx);
        Ok(())
    })
}

fn port_attr(ctx: &Ctx) -> ibv_port_attr {
    let mtu = mtu_enum(NIC_MTU);
    ibv_port_attr {
        state: IBV_PORT_ACTIVE,
        max_mtu: mtu,
        active_mtu: mtu,
        gid_tbl_len: 1,
        port_cap_flags: 0,
        max_msg_sz: 1 << 31,
        bad_pkey_cntr: 0,
        qkey_viol_cntr: 0,
        pkey_tbl_len: 1,
        lid: ctx.port,
        sm_lid: 0,
        lmc: 0,
        max_vl_num: 1,
        sm_sl: 0,
        subnet_timeout: 0,
        init_type_reply: 0,
        // 4X EDR: 100 Gbit/s.
        active_width: 2,
        active_speed: 32,
        phys_state: 5,
        link_layer: IBV_LINK_LAYER_ETHERNET,
        flags: 0,
        port_cap_flags2: 0,
    }
}

fn check_port(port: u32) -> Result<(), Errno> {
    if port == 1 { Ok(()) } else { Err(libc::EINVAL) }
}

/// `ibv_query_port` (reached through the header's `___ibv_query_port` wrapper, which
/// passes a full `struct ibv_port_attr`). The LID is the NIC's UDP port: programs
/// exchange it with the QPN and GID, and it comes back as `ah_attr.dlid`.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_port(
    ctx: *mut ibv_context,
    port: u8,
    attr: *mut ibv_port_attr,
) -> c_int {
    ret_int(|| {
        let ctx = reg().contexts.get(ctx)?;
        check_port(port.into())?;
        // SAFETY: a non-NULL `attr` points to a port attribute struct the caller owns.
        *unsafe { out(attr) }? = port_attr(&ctx);
        Ok(())
    })
}

fn gid_entry(ctx: &Ctx, port: u32, index: u32) -> Result<ibv_gid_entry, Errno> {
    check_port(port)?;
    if index != 0 {
        return Err(libc::ENODATA);
    }
    Ok(ibv_gid_entry {
        // The NIC's own address: the device's, or a device process's (a simulated
        // board has an address of its own).
        gid: device::ip_to_gid(ctx.verbs.address().ip()),
        gid_index: 0,
        port_num: 1,
        gid_type: IBV_GID_TYPE_ROCE_V2,
        ndev_ifindex: ctx.dev.ifindex,
    })
}

/// `ibv_query_gid`: 0, or -1 with errno.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_gid(
    ctx: *mut ibv_context,
    port: u8,
    index: c_int,
    gid: *mut ibv_gid,
) -> c_int {
    neg1(ret_int(|| {
        let ctx = reg().contexts.get(ctx)?;
        let index = u32::try_from(index).map_err(|_| libc::EINVAL)?;
        let e = gid_entry(&ctx, port.into(), index)?;
        // SAFETY: a non-NULL `gid` points to a GID the caller owns.
        *unsafe { out(gid) }? = e.gid;
        Ok(())
    }))
}

/// `_ibv_query_gid_ex` (behind the inline `ibv_query_gid_ex`).
#[unsafe(no_mangle)]
pub extern "C" fn _ibv_query_gid_ex(
    ctx: *mut ibv_context,
    port: u32,
    index: u32,
    entry: *mut ibv_gid_entry,
    flags: u32,
    entry_size: usize,
) -> c_int {
    ret_int(|| {
        let ctx = reg().contexts.get(ctx)?;
        if flags != 0 || entry_size < size_of::<ibv_gid_entry>() {
            return Err(libc::EINVAL);
        }
        let e = gid_entry(&ctx, port, index)?;
        // SAFETY: a non-NULL `entry` points to at least `entry_size` bytes.
        *unsafe { out(entry) }? = e;
        Ok(())
    })
}

/// `_ibv_query_gid_table` (behind the inline `ibv_query_gid_table`): entries written,
/// or a negative errno.
#[unsafe(no_mangle)]
pub extern "C" fn _ibv_query_gid_table(
    ctx: *mut ibv_context,
    entries: *mut ibv_gid_entry,
    max_entries: usize,
    flags: u32,
    entry_size: usize,
) -> isize {
    let r = guard(Err(libc::EIO), || {
        let ctx = reg().contexts.get(ctx)?;
        if flags != 0 || entry_size < size_of::<ibv_gid_entry>() || entries.is_null() {
            return Err(libc::EINVAL);
        }
        if max_entries == 0 {
            return Err(libc::EINVAL);
        }
        // SAFETY: `entries` is non-NULL and holds at least one entry (max_entries ≥ 1).
        unsafe { *entries = gid_entry(&ctx, 1, 0)? };
        Ok(1)
    });
    r.unwrap_or_else(|e| {
        set_errno(e);
        -(e as isize)
    })
}

/// `ibv_query_gid_type`: every GID is RoCE v2, reported in the sysfs numbering this
/// private verb uses (`IBV_GID_TYPE_SYSFS_ROCE_V2` = 1).
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_gid_type(
    ctx: *mut ibv_context,
    port: u8,
    index: u32,
    gid_type: *mut u32,
) -> c_int {
    neg1(ret_int(|| {
        let ctx = reg().contexts.get(ctx)?;
        gid_entry(&ctx, port.into(), index)?;
        // SAFETY: a non-NULL `gid_type` points to the caller's enum.
        *unsafe { out(gid_type) }? = IBV_GID_TYPE_SYSFS_ROCE_V2;
        Ok(())
    }))
}

/// `ibv_query_pkey`: one P_Key, the default 0xffff. 0, or -1 with errno.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_query_pkey(
    ctx: *mut ibv_context,
    port: u8,
    index: c_int,
    pkey: *mut u16,
) -> c_int {
    neg1(ret_int(|| {
        reg().contexts.get(ctx)?;
        check_port(port.into())?;
        if index != 0 {
            return Err(libc::EINVAL);
        }
        // SAFETY: a non-NULL `pkey` points to the caller's u16.
        *unsafe { out(pkey) }? = 0xffff_u16.to_be();
        Ok(())
    }))
}

/// `ibv_get_pkey_index`: the index of a P_Key, or -1.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_pkey_index(ctx: *mut ibv_context, port: u8, pkey: u16) -> c_int {
    guard(-1, || {
        let known = reg().contexts.get(ctx).is_ok() && port == 1;
        if known && u16::from_be(pkey) == 0xffff {
            0
        } else {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `ibv_get_async_event`: blocks until the context has an asynchronous event (a QP
/// that failed on its own, an SRQ below its limit, a device that failed), or returns -1 with `EAGAIN` at once when the program made
/// `async_fd` non-blocking. 0, or -1 with errno.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_get_async_event(ctx: *mut ibv_context, event: *mut ibv_async_event) -> c_int {
    neg1(ret_int(|| {
        let ctx = reg().contexts.get(ctx)?;
        // SAFETY: a non-NULL `event` points to the caller's event struct.
        let event = unsafe { out(event) }?;
        loop {
            if let Some(ev) = ctx.verbs.poll_async_event() {
                (event.element, event.event_type) = match ev {
                    AsyncEvent::QpFatal { qp_num, .. } => {
                        (datapath::qp_by_num(&ctx, qp_num).cast(), IBV_EVENT_QP_FATAL)
                    }
                    AsyncEvent::SrqLimitReached { srq } => (
                        crate::verbs::srq::srq_by_num(&ctx, srq).cast(),
                        IBV_EVENT_SRQ_LIMIT_REACHED,
                    ),
                    AsyncEvent::DeviceFatal => (std::ptr::null_mut(), IBV_EVENT_DEVICE_FATAL),
                };
                return Ok(());
            }
            // SAFETY: F_GETFL on the context's own descriptor.
            let flags = unsafe { libc::fcntl(ctx.async_fd.as_raw_fd(), libc::F_GETFL) };
            if flags >= 0 && flags & libc::O_NONBLOCK != 0 {
                return Err(libc::EAGAIN);
            }
            // The Verbs API reports these events by polling only: check every 10 ms.
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }))
}

/// `ibv_ack_async_event`: nothing to release.
#[unsafe(no_mangle)]
pub extern "C" fn ibv_ack_async_event(_event: *mut ibv_async_event) {}

/// The context object behind a handle (for the other modules).
pub fn ctx_of(p: *const ibv_context) -> Result<Arc<Ctx>, Errno> {
    reg().contexts.get(p)
}
