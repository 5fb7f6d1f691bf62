//! Event channels, ids, and the connection operations.

use std::ffi::{c_int, c_void};

use metaroce_cabi::ffi::{guard, out, ret_minus_one, ret_ptr};
use metaroce_cabi::registry::Object;

use super::{bytes, id_arg};
use crate::abi::{event, rdma_cm_event, rdma_cm_id, rdma_conn_param, rdma_event_channel};
use crate::addr;
use crate::channel::Channel;
use crate::id::{Id, REJ_CONSUMER_DEFINED, REJ_VENDOR_OPTION_NOT_SUPPORTED, State, reg};

/// `rdma_create_event_channel`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_create_event_channel() -> *mut rdma_event_channel {
    ret_ptr(|| Ok(reg().channels.insert(Channel::new()?)))
}

/// `rdma_destroy_event_channel` (its descriptor closes once no id uses it).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_destroy_event_channel(channel: *mut rdma_event_channel) {
    guard((), || {
        let _ = reg().channels.remove_any(channel);
    })
}

/// `rdma_create_id`: `RDMA_PS_TCP` and `RDMA_PS_IB` (RC QPs); a NULL channel makes a
/// synchronous id. Datagram port spaces fail with `EOPNOTSUPP`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_create_id(
    channel: *mut rdma_event_channel,
    id: *mut *mut rdma_cm_id,
    context: *mut c_void,
    ps: c_int,
) -> c_int {
    ret_minus_one(|| {
        // SAFETY: a non-NULL `id` points to the caller's handle slot.
        let slot = unsafe { out(id) }?;
        let ch = if channel.is_null() {
            None
        } else {
            Some(reg().channels.get(channel)?)
        };
        *slot = Id::create(ch, context, ps)?;
        Ok(())
    })
}

/// `rdma_destroy_id`: waits until every event of the id handed out was acknowledged.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_destroy_id(id: *mut rdma_cm_id) -> c_int {
    ret_minus_one(|| {
        reg().ids.remove_any(id)?.destroy();
        Ok(())
    })
}

/// `rdma_bind_addr`: reserves the rdma_cm port (a TCP port) on the address; a specific
/// address also gives the id its device.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_bind_addr(id: *mut rdma_cm_id, a: *mut libc::sockaddr) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: the caller passes a socket address of the family it names.
        let a = unsafe { addr::from_c(a) }?;
        id.bind(a)
    })
}

/// `rdma_resolve_addr`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_resolve_addr(
    id: *mut rdma_cm_id,
    src: *mut libc::sockaddr,
    dst: *mut libc::sockaddr,
    _timeout_ms: c_int,
) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        let src = if src.is_null() {
            None
        } else {
            // SAFETY: the caller passes a socket address of the family it names.
            Some(unsafe { addr::from_c(src) }?)
        };
        // SAFETY: as above.
        let dst = unsafe { addr::from_c(dst) }?;
        id.resolve_addr(src, dst)?;
        id.complete()
    })
}

/// `rdma_resolve_route`. The timeout (negative counts as 0) bounds how long
/// `rdma_connect` retries a connection refused because nobody listens yet.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_resolve_route(id: *mut rdma_cm_id, timeout_ms: c_int) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        let timeout = std::time::Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
        id.resolve_route(timeout)?;
        id.complete()
    })
}

/// The program's connection parameters and private data.
///
/// # Safety
/// A non-NULL `p` must point to a valid `rdma_conn_param` whose private data pointer
/// covers its length.
unsafe fn conn_param<'a>(p: *const rdma_conn_param) -> (Option<&'a rdma_conn_param>, &'a [u8]) {
    // SAFETY: forwarded to the caller.
    let p = unsafe { p.as_ref() };
    // SAFETY: forwarded to the caller.
    let data = p.map_or(&[][..], |p| unsafe {
        bytes(p.private_data, usize::from(p.private_data_len))
    });
    (p, data)
}

/// `rdma_connect`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_connect(id: *mut rdma_cm_id, param: *mut rdma_conn_param) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: the caller passes NULL or valid connection parameters.
        let (p, data) = unsafe { conn_param(param) };
        id.connect(p, data)?;
        id.complete()
    })
}

/// `rdma_establish`: after CONNECT_RESPONSE on an id without a QP.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_establish(id: *mut rdma_cm_id) -> c_int {
    ret_minus_one(|| id_arg(id)?.establish())
}

/// `rdma_listen`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_listen(id: *mut rdma_cm_id, backlog: c_int) -> c_int {
    ret_minus_one(|| id_arg(id)?.listen(backlog))
}

/// `rdma_get_request`: the next connection request of a synchronous listening id, with
/// a QP made for it when `rdma_create_ep` was given QP attributes.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_get_request(listen: *mut rdma_cm_id, id: *mut *mut rdma_cm_id) -> c_int {
    ret_minus_one(|| {
        let l = id_arg(listen)?;
        // SAFETY: a non-NULL `id` points to the caller's handle slot.
        let slot = unsafe { out(id) }?;
        let (sync, channel, qp_init) = {
            let st = l.st();
            (st.sync, st.channel.clone(), st.qp_init)
        };
        if !sync {
            return Err(libc::EINVAL);
        }
        l.ack_own_event();
        let c = l.c();
        let ev = Id::next_event(&channel)?;
        // SAFETY: `ev` is the live event just handed out.
        let (kind, status, new) = unsafe { ((*ev).event, (*ev).status, (*ev).id) };
        let fail = |e| {
            // SAFETY: as above: the event stays with the listening id.
            unsafe { (*c).event = ev };
            Err(e)
        };
        match (kind, status) {
            (event::REJECTED, _) => return fail(libc::ECONNREFUSED),
            (_, s) if s != 0 => return fail(s.abs()),
            (event::CONNECT_REQUEST, _) => {}
            _ => return fail(libc::EINVAL),
        }
        if let Some(mut attr) = qp_init {
            let child = id_arg(new)?;
            // SAFETY: reads a plain field of the listening id's C view.
            let pd = unsafe { (*c).pd };
            if let Err(e) = super::qp::create_qp(&child, pd, &mut attr) {
                return fail(e);
            }
        }
        // SAFETY: `new` is the live new id; its `event` field is ours to set.
        unsafe { (*new).event = ev };
        *slot = new;
        Ok(())
    })
}

/// `rdma_accept`: the id's QP (if any) goes INIT → RTR → RTS, then the REP is sent.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_accept(id: *mut rdma_cm_id, param: *mut rdma_conn_param) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: the caller passes NULL or valid connection parameters.
        let (p, data) = unsafe { conn_param(param) };
        id.accept(p, data)?;
        id.complete()
    })
}

fn reject(id: *mut rdma_cm_id, data: *const c_void, len: u8, reason: u16) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        // SAFETY: the caller passes `len` readable bytes of private data (or NULL).
        id.reject(unsafe { bytes(data, usize::from(len)) }, reason)
    })
}

/// `rdma_reject`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_reject(id: *mut rdma_cm_id, data: *const c_void, len: u8) -> c_int {
    reject(id, data, len, REJ_CONSUMER_DEFINED)
}

/// `rdma_reject_ece`: a rejection for unsupported ECE options.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_reject_ece(id: *mut rdma_cm_id, data: *const c_void, len: u8) -> c_int {
    reject(id, data, len, REJ_VENDOR_OPTION_NOT_SUPPORTED)
}

/// `rdma_notify`: nothing to do (no kernel timers to stop); fails on ids that are not
/// being connected or connected.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_notify(id: *mut rdma_cm_id, _event: c_int) -> c_int {
    ret_minus_one(|| match id_arg(id)?.st().state {
        State::Accepting | State::RepReceived | State::Connected => Ok(()),
        _ => Err(libc::EINVAL),
    })
}

/// `rdma_disconnect`: the QP to ERR, then a DREQ to the peer.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_disconnect(id: *mut rdma_cm_id) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        if id.disconnect()? {
            id.complete()?;
        }
        Ok(())
    })
}

/// `rdma_get_cm_event`: blocks for the next event unless the channel's descriptor is
/// non-blocking (then `EAGAIN`).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_get_cm_event(
    channel: *mut rdma_event_channel,
    ev: *mut *mut rdma_cm_event,
) -> c_int {
    ret_minus_one(|| {
        let ch = reg().channels.get(channel)?;
        // SAFETY: a non-NULL `ev` points to the caller's event slot.
        let slot = unsafe { out(ev) }?;
        *slot = Id::next_event(&ch)?;
        Ok(())
    })
}

/// `rdma_ack_cm_event`.
#[unsafe(no_mangle)]
pub extern "C" fn rdma_ack_cm_event(ev: *mut rdma_cm_event) -> c_int {
    ret_minus_one(|| Id::ack(ev))
}

/// `rdma_migrate_id` (NULL channel: synchronous use).
#[unsafe(no_mangle)]
pub extern "C" fn rdma_migrate_id(id: *mut rdma_cm_id, channel: *mut rdma_event_channel) -> c_int {
    ret_minus_one(|| {
        let id = id_arg(id)?;
        let to = if channel.is_null() {
            None
        } else {
            Some(reg().channels.get(channel)?)
        };
        id.migrate(to)
    })
}

/// Checks a handle the way the other functions do (for `rdma_get_src_port` and such,
/// which cannot report errors).
pub fn with_id<R: Copy>(id: *mut rdma_cm_id, default: R, f: impl FnOnce(&rdma_cm_id) -> R) -> R {
    guard(default, || match id_arg(id) {
        // SAFETY: the id is live; its C view is read only.
        Ok(id) => f(unsafe { &*id.c_ptr() }),
        Err(_) => default,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errno() -> c_int {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }

    #[test]
    fn bad_handles_fail_cleanly() {
        assert_eq!(rdma_destroy_id(std::ptr::null_mut()), -1);
        assert_eq!(errno(), libc::EINVAL);
        let mut bogus = 0u64;
        assert_eq!(rdma_listen((&raw mut bogus).cast(), 1), -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(rdma_ack_cm_event(std::ptr::null_mut()), -1);
        let mut ev = std::ptr::null_mut();
        assert_eq!(rdma_get_cm_event(std::ptr::null_mut(), &mut ev), -1);
        assert_eq!(
            rdma_create_id(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0x106
            ),
            -1
        );
        assert_eq!(errno(), libc::EINVAL);
    }

    #[test]
    fn datagram_port_spaces_are_refused() {
        let ch = rdma_create_event_channel();
        assert!(!ch.is_null());
        let mut id = std::ptr::null_mut();
        assert_eq!(
            rdma_create_id(ch, &mut id, std::ptr::null_mut(), crate::abi::RDMA_PS_UDP),
            -1
        );
        assert_eq!(errno(), libc::EOPNOTSUPP);
        assert_eq!(
            rdma_create_id(ch, &mut id, std::ptr::null_mut(), crate::abi::RDMA_PS_TCP),
            0
        );
        // Operations out of order fail with EINVAL, never crash or hang.
        assert_eq!(rdma_resolve_route(id, 100), -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(rdma_connect(id, std::ptr::null_mut()), -1);
        assert_eq!(rdma_accept(id, std::ptr::null_mut()), -1);
        assert_eq!(rdma_disconnect(id), -1);
        assert_eq!(rdma_destroy_id(id), 0);
        rdma_destroy_event_channel(ch);
    }
}
