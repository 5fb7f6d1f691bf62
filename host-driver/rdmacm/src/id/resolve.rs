//! Addresses and routes of an id: `rdma_bind_addr`, `rdma_resolve_addr` and
//! `rdma_resolve_route`, and the device, source and destination they give it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use metaroce_cabi::ffi::Errno;

use super::{Id, St, State, os};
use crate::abi::{event, ibv_sa_path_rec};
use crate::addr;
use crate::device::{self, PORT};

impl Id {
    /// Gives the id a device: `verbs`, `port_num`, the shared `pd`, the source GID.
    pub(super) fn attach_device(&self, st: &mut St, ip: IpAddr) -> Result<(), Errno> {
        if st.dev.is_some() {
            return Ok(());
        }
        let dev = device::for_ip(ip)?;
        let pd = dev.acquire_pd()?;
        let c = self.c();
        // SAFETY: writes plain fields of our live C view.
        unsafe {
            (*c).verbs = dev.ctx;
            (*c).port_num = PORT;
            (*c).pd = pd;
            (*c).route.addr.ibaddr.sgid = dev.gid;
        }
        st.dev = Some(dev);
        Ok(())
    }

    pub(super) fn set_src(&self, st: &mut St, a: SocketAddr) {
        st.src = Some(a);
        // SAFETY: writes a plain field of our live C view.
        unsafe { (*self.c()).route.addr.src = addr::to_c(a).0 };
    }

    pub(super) fn set_dst(&self, st: &mut St, a: SocketAddr) {
        st.dst = Some(a);
        // SAFETY: writes plain fields of our live C view.
        unsafe {
            (*self.c()).route.addr.dst = addr::to_c(a).0;
            (*self.c()).route.addr.ibaddr.dgid = addr::gid_of(a.ip());
        }
    }

    /// A TCP socket bound to `a` (the id's rdma_cm port).
    fn bind_socket(st: &St, a: SocketAddr) -> Result<socket2::Socket, Errno> {
        let s = socket2::Socket::new(socket2::Domain::for_address(a), socket2::Type::STREAM, None)
            .map_err(os)?;
        s.set_reuse_address(true).map_err(os)?;
        s.set_cloexec(true).map_err(os)?;
        if a.is_ipv6() {
            s.set_only_v6(st.afonly.unwrap_or(false)).map_err(os)?;
        }
        s.bind(&a.into()).map_err(os)?;
        Ok(s)
    }

    /// `rdma_bind_addr`.
    pub fn bind(&self, a: SocketAddr) -> Result<(), Errno> {
        let mut st = self.st();
        if st.state != State::Idle {
            return Err(libc::EINVAL);
        }
        if !a.ip().is_unspecified() {
            self.attach_device(&mut st, a.ip())?;
        }
        let s = Self::bind_socket(&st, a)?;
        let local = s.local_addr().ok().and_then(|l| l.as_socket()).unwrap_or(a);
        self.set_src(&mut st, local);
        st.socket = Some(s);
        st.state = State::Bound;
        Ok(())
    }

    /// `rdma_resolve_addr`: binds if needed, finds the device, queues ADDR_RESOLVED (or
    /// ADDR_ERROR when no device holds the source address).
    pub fn resolve_addr(
        self: &Arc<Self>,
        src: Option<SocketAddr>,
        dst: SocketAddr,
    ) -> Result<(), Errno> {
        let dst = addr::concrete_dst(dst);
        let mut st = self.st();
        if !matches!(st.state, State::Idle | State::Bound | State::AddrResolved) {
            return Err(libc::EINVAL);
        }
        let from = match (st.src, src) {
            (Some(bound), _) => bound,
            (None, Some(s)) => s,
            (None, None) => SocketAddr::new(
                match dst {
                    SocketAddr::V4(_) => std::net::Ipv4Addr::UNSPECIFIED.into(),
                    SocketAddr::V6(_) => std::net::Ipv6Addr::UNSPECIFIED.into(),
                },
                0,
            ),
        };
        let ip = if from.ip().is_unspecified() {
            match addr::route_source(dst.ip()) {
                Ok(ip) => ip,
                Err(e) => {
                    self.push(&st, self, event::ADDR_ERROR, -e);
                    return Ok(());
                }
            }
        } else {
            from.ip()
        };
        if let Err(e) = self.attach_device(&mut st, ip) {
            self.push(&st, self, event::ADDR_ERROR, -e);
            return Ok(());
        }
        if st.socket.is_none() {
            st.socket = Some(Self::bind_socket(&st, SocketAddr::new(ip, from.port()))?);
        }
        let port = st
            .socket
            .as_ref()
            .and_then(|s| s.local_addr().ok())
            .and_then(|l| l.as_socket())
            .map_or(from.port(), |l| l.port());
        self.set_src(&mut st, SocketAddr::new(ip, port));
        self.set_dst(&mut st, dst);
        st.state = State::AddrResolved;
        self.push(&st, self, event::ADDR_RESOLVED, 0);
        Ok(())
    }

    /// `rdma_resolve_route`: one path, over the device's port. `timeout` (the program's)
    /// bounds how long `rdma_connect` retries a refused connection.
    pub fn resolve_route(self: &Arc<Self>, timeout: Duration) -> Result<(), Errno> {
        let mut st = self.st();
        if !matches!(st.state, State::AddrResolved | State::RouteResolved) {
            return Err(libc::EINVAL);
        }
        st.route_timeout = timeout;
        let dev = st.dev.clone().ok_or(libc::EINVAL)?;
        let c = self.c();
        // SAFETY: reads and writes plain fields of our live C view; the path record is
        // ours (allocated once, freed in `destroy`).
        unsafe {
            if (*c).route.path_rec.is_null() {
                (*c).route.path_rec = Box::into_raw(Box::new(ibv_sa_path_rec::default()));
            }
            let p = &mut *(*c).route.path_rec;
            p.dgid = (*c).route.addr.ibaddr.dgid;
            p.sgid = dev.gid;
            p.slid = dev.port.lid.to_be();
            p.hop_limit = 64;
            p.traffic_class = st.tos;
            p.reversible = 1;
            p.numb_path = 1;
            p.pkey = 0xffff_u16.to_be();
            p.mtu_selector = 2;
            p.mtu = dev.port.active_mtu as u8;
            p.rate_selector = 2;
            p.packet_life_time_selector = 2;
            (*c).route.num_paths = 1;
        }
        st.state = State::RouteResolved;
        self.push(&st, self, event::ROUTE_RESOLVED, 0);
        Ok(())
    }
}
