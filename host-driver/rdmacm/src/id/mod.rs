//! Connection identifiers (`rdma_cm_id`) and their state machine: the part the kernel's
//! RDMA CM plays for rdma-core's librdmacm, here in the library itself over TCP.
//!
//! Active side: resolve address → resolve route → `rdma_connect` sends a REQ on a TCP
//! connection to the port the passive side listens on → the REP arrives → (when the
//! program takes the event, as rdma-core does) the QP goes INIT → RTR → RTS with the
//! peer's QPN, PSN, GID and LID, an RTU goes back, and the program sees ESTABLISHED.
//! Passive side: a REQ on the listening port makes a new id and a CONNECT_REQUEST event;
//! `rdma_accept` moves its QP to RTS and sends the REP; the RTU makes ESTABLISHED.
//! `rdma_disconnect` moves the QP to ERR and sends a DREQ; the peer answers with a DREP
//! at once, and each side sees DISCONNECTED once.

use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use metaroce_cabi::ffi::Errno;
use metaroce_cabi::registry::{Object, Registry, lock};

use crate::abi::{
    self, IBV_QPS_ERR, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, event, ibv_qp, ibv_qp_attr,
    ibv_qp_init_attr, rdma_cm_event, rdma_cm_id, rdma_conn_param,
};
use crate::channel::{Channel, Pending};
use crate::conn::{Conn, Listener, bad_message};
use crate::device::{Device, PORT};
use crate::verbs;
use crate::wire::{Endpoint, Msg, pdata_max};

mod events;
mod qp;
mod resolve;

/// IB CM REJ reason: no one listens on that service (here: TCP connection refused).
pub const REJ_INVALID_SERVICE_ID: u16 = 8;
/// IB CM REJ reason: the address has no RDMA device on the passive side.
pub const REJ_INVALID_GID: u16 = 9;
/// IB CM REJ reason: the application rejected the connection.
pub const REJ_CONSUMER_DEFINED: u16 = 28;
/// IB CM REJ reason: vendor option not supported (`rdma_reject_ece`).
pub const REJ_VENDOR_OPTION_NOT_SUPPORTED: u16 = 35;
/// Local ACK timeout given to QPs unless `RDMA_OPTION_ID_ACK_TIMEOUT` says otherwise
/// (4.096 µs · 2^14 ≈ 67 ms, what `ibv_rc_pingpong` and perftest use).
pub const DEFAULT_ACK_TIMEOUT: u8 = 14;
/// How long a connection refused by TCP is tried again when the program gave
/// `rdma_resolve_route` no timeout of its own: the 2000 ms rdma-core's `rdma_create_ep`
/// gives it.
pub const DEFAULT_ROUTE_TIMEOUT: Duration = Duration::from_millis(2000);
/// Largest responder resources / initiator depth granted ("as many as the device
/// allows", `RDMA_MAX_RESP_RES`).
pub const MAX_RD_ATOMIC: u8 = 16;

/// Where an id is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Created.
    Idle,
    /// Bound to a local address.
    Bound,
    /// Destination address resolved.
    AddrResolved,
    /// Route resolved.
    RouteResolved,
    /// Listening.
    Listening,
    /// REQ sent (or about to be).
    Connecting,
    /// REP received, RTU not yet sent.
    RepReceived,
    /// REQ received, not answered.
    ReqReceived,
    /// REP sent, RTU not yet received.
    Accepting,
    /// Established.
    Connected,
    /// DREQ sent, DREP not yet received.
    DisconnectSent,
    /// Disconnected.
    Disconnected,
    /// Rejected, failed, or abandoned by the peer.
    Failed,
}

/// The mutable state of an id.
pub struct St {
    /// Its event channel.
    pub channel: Arc<Channel>,
    /// Created without a channel: operations wait for their event.
    pub sync: bool,
    /// Where it is.
    pub state: State,
    /// Its device (holds a reference on the device's shared PD).
    pub dev: Option<Arc<Device>>,
    /// Local address.
    pub src: Option<SocketAddr>,
    /// Remote address.
    pub dst: Option<SocketAddr>,
    /// A socket bound to `src`, not yet connected or listening.
    pub socket: Option<socket2::Socket>,
    /// The accept thread of a listening id.
    pub listener: Option<Listener>,
    /// The connection to the peer.
    pub conn: Option<Arc<Conn>>,
    /// The PSN this end starts sending with.
    pub psn: u32,
    /// The peer, from its REQ or REP.
    pub peer: Option<Endpoint>,
    /// RDMA reads/atomics accepted at once (QP `max_dest_rd_atomic`).
    pub responder_resources: u8,
    /// RDMA reads/atomics issued at once (QP `max_rd_atomic`).
    pub initiator_depth: u8,
    /// Transport retries (QP `retry_cnt`).
    pub retry_count: u8,
    /// RNR retries (QP `rnr_retry`).
    pub rnr_retry_count: u8,
    /// `RDMA_OPTION_ID_TOS`.
    pub tos: u8,
    /// The timeout the program gave `rdma_resolve_route`: how long `rdma_connect` tries
    /// again a TCP connection refused (a listener not yet there) before REJECTED.
    pub route_timeout: Duration,
    /// `RDMA_OPTION_ID_ACK_TIMEOUT`.
    pub ack_timeout: Option<u8>,
    /// `RDMA_OPTION_ID_AFONLY`.
    pub afonly: Option<bool>,
    /// `rdma_create_ep` on a passive id: the QP to make for each request.
    pub qp_init: Option<ibv_qp_init_attr>,
    /// `rdma_create_ep`: private data put before the program's on connect.
    pub connect_data: Vec<u8>,
    /// `rdma_set_local_ece`.
    pub local_ece: (u32, u32),
    /// The peer's ECE.
    pub remote_ece: (u32, u32),
    /// A DISCONNECTED event was queued.
    pub disconnect_queued: bool,
    /// The DISCONNECTED event was handed to the program.
    pub disconnect_delivered: bool,
    /// `rdma_destroy_id` ran.
    pub destroyed: bool,
}

/// A connection identifier.
pub struct Id {
    c: UnsafeCell<rdma_cm_id>,
    st: Mutex<St>,
    /// Events handed to the program and not yet acknowledged.
    unacked: Mutex<usize>,
    acked: Condvar,
}

// SAFETY: the C view is written by this library (under `st` or before publication) and
// read or written by the program as librdmacm allows; the rest is Sync.
unsafe impl Sync for Id {}
// SAFETY: as above; the raw pointers in the C view are plain addresses.
unsafe impl Send for Id {}

impl Object for Id {
    type C = rdma_cm_id;
    fn c_ptr(&self) -> *mut rdma_cm_id {
        self.c.get()
    }
}

/// An event handed to the program.
pub struct Event {
    c: UnsafeCell<rdma_cm_event>,
    /// Storage of the private data `c.param.conn.private_data` points at.
    _pdata: Box<[u8]>,
    /// The id whose unacknowledged count this event holds.
    owner: Arc<Id>,
}

// SAFETY: the C view is written before publication and only read afterwards.
unsafe impl Sync for Event {}
// SAFETY: as above.
unsafe impl Send for Event {}

impl Object for Event {
    type C = rdma_cm_event;
    fn c_ptr(&self) -> *mut rdma_cm_event {
        self.c.get()
    }
}

/// The live objects behind C handles.
pub struct Registries {
    /// Ids.
    pub ids: Registry<Id>,
    /// Event channels.
    pub channels: Registry<Channel>,
    /// Events handed out and not acknowledged.
    pub events: Registry<Event>,
}

/// The process's registries.
pub fn reg() -> &'static Registries {
    static R: OnceLock<Registries> = OnceLock::new();
    R.get_or_init(|| Registries {
        ids: Registry::default(),
        channels: Registry::default(),
        events: Registry::default(),
    })
}

fn random_psn() -> u32 {
    let mut b = [0u8; 4];
    // SAFETY: getrandom writes at most 4 bytes into `b`.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), 4, 0) };
    if n != 4 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        b = t.to_ne_bytes();
    }
    u32::from_ne_bytes(b) & 0xff_ffff
}

/// A channel of its own for a synchronous id (reachable from C like any other).
fn private_channel() -> Result<Arc<Channel>, Errno> {
    let c = Channel::new()?;
    reg().channels.insert(c.clone());
    Ok(c)
}

/// What an event reports of the peer's REQ or REP (`event->param.conn`): its view
/// reversed (what it issues, this end accepts), the QPN, and the retry count in force.
fn reported(e: &Endpoint, retry_count: u8) -> rdma_conn_param {
    rdma_conn_param {
        responder_resources: e.initiator_depth,
        initiator_depth: e.responder_resources,
        flow_control: e.flow_control,
        retry_count,
        rnr_retry_count: e.rnr_retry_count,
        srq: e.srq,
        qp_num: e.qpn,
        ..Default::default()
    }
}

fn os(e: std::io::Error) -> Errno {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl Id {
    fn new(channel: Arc<Channel>, sync: bool, context: *mut c_void, ps: c_int) -> Arc<Id> {
        // SAFETY: all-zero is a valid `rdma_cm_id` (NULL pointers, zero addresses).
        let mut c: rdma_cm_id = unsafe { std::mem::zeroed() };
        c.channel = channel.c_ptr();
        c.context = context;
        c.ps = ps;
        c.qp_type = abi::IBV_QPT_RC;
        c.route.addr.ibaddr.pkey = 0xffff_u16.to_be();
        Arc::new(Id {
            c: UnsafeCell::new(c),
            st: Mutex::new(St {
                channel,
                sync,
                state: State::Idle,
                dev: None,
                src: None,
                dst: None,
                socket: None,
                listener: None,
                conn: None,
                psn: random_psn(),
                peer: None,
                responder_resources: 0,
                initiator_depth: 0,
                retry_count: 7,
                rnr_retry_count: 7,
                tos: 0,
                route_timeout: DEFAULT_ROUTE_TIMEOUT,
                ack_timeout: None,
                afonly: None,
                qp_init: None,
                connect_data: Vec::new(),
                local_ece: (0, 0),
                remote_ece: (0, 0),
                disconnect_queued: false,
                disconnect_delivered: false,
                destroyed: false,
            }),
            unacked: Mutex::new(0),
            acked: Condvar::new(),
        })
    }

    /// `rdma_create_id`: a new id on `channel` (NULL: a private one, synchronous use).
    pub fn create(
        channel: Option<Arc<Channel>>,
        context: *mut c_void,
        ps: c_int,
    ) -> Result<*mut rdma_cm_id, Errno> {
        if ps != abi::RDMA_PS_TCP && ps != abi::RDMA_PS_IB {
            // Datagram port spaces need UD QPs, which MetaRoCE does not have.
            return Err(libc::EOPNOTSUPP);
        }
        let (channel, sync) = match channel {
            Some(c) => (c, false),
            None => (private_channel()?, true),
        };
        Ok(reg().ids.insert(Id::new(channel, sync, context, ps)))
    }

    /// An id for unit tests of other modules.
    #[cfg(test)]
    pub fn for_test(channel: Arc<Channel>) -> Arc<Id> {
        Id::new(channel, false, std::ptr::null_mut(), abi::RDMA_PS_TCP)
    }

    /// The C view.
    pub fn c(&self) -> *mut rdma_cm_id {
        self.c.get()
    }

    /// Locks the state.
    pub fn st(&self) -> MutexGuard<'_, St> {
        lock(&self.st)
    }

    /// The id's QP, if `rdma_create_qp` made one.
    pub fn qp(&self) -> *mut ibv_qp {
        // SAFETY: reads a pointer field of our live C view.
        unsafe { (*self.c()).qp }
    }

    /// What this end says about itself in a REQ or REP.
    fn endpoint(&self, st: &St, qpn: u32, srq: u8, pdata: Vec<u8>) -> Result<Endpoint, Errno> {
        let dev = st.dev.as_ref().ok_or(libc::EINVAL)?;
        Ok(Endpoint {
            qpn,
            psn: st.psn,
            gid: dev.gid.raw,
            lid: dev.port.lid,
            mtu: u8::try_from(dev.port.active_mtu).unwrap_or(0),
            responder_resources: st.responder_resources,
            initiator_depth: st.initiator_depth,
            flow_control: 0,
            retry_count: st.retry_count,
            rnr_retry_count: st.rnr_retry_count,
            srq,
            ece_vendor: st.local_ece.0,
            ece_options: st.local_ece.1,
            pdata,
        })
    }

    /// The QP number and SRQ flag to announce: the id's QP's, or the program's.
    fn qp_identity(&self, param: Option<&rdma_conn_param>) -> Result<(u32, u8), Errno> {
        let qp = self.qp();
        if qp.is_null() {
            let p = param.ok_or(libc::EINVAL)?;
            return Ok((p.qp_num & 0xff_ffff, p.srq));
        }
        // SAFETY: the id's QP is a live QP of libibverbs; its leading fields follow the ABI.
        let (qpn, srq) = unsafe { ((*qp).qp_num, !(*qp).srq.is_null()) };
        Ok((qpn, u8::from(srq)))
    }

    /// `rdma_connect`: sends the REQ (from a connection thread; returns at once). A TCP
    /// connection refused is tried again until the route timeout has passed, and only
    /// then reported as REJECTED: a passive side may be between two listeners on the
    /// port. perftest's `-R` server destroys the listener of its parameter exchange and
    /// listens again for the test's QPs while its client already connects; a kernel CM
    /// has the same gap, only much shorter, and perftest's own retry after a REJECTED
    /// reuses the ids and channel it has just destroyed.
    pub fn connect(
        self: &Arc<Self>,
        param: Option<&rdma_conn_param>,
        pdata: &[u8],
    ) -> Result<(), Errno> {
        let mut st = self.st();
        if st.state != State::RouteResolved {
            return Err(libc::EINVAL);
        }
        let mut data = st.connect_data.clone();
        data.extend_from_slice(pdata);
        if data.len() > pdata_max::REQ {
            return Err(libc::EINVAL);
        }
        let (qpn, srq) = self.qp_identity(param)?;
        let max = |v: u8| {
            if v == abi::RDMA_MAX_RESP_RES {
                MAX_RD_ATOMIC
            } else {
                v.min(MAX_RD_ATOMIC)
            }
        };
        st.initiator_depth = max(param.map_or(abi::RDMA_MAX_INIT_DEPTH, |p| p.initiator_depth));
        st.responder_resources =
            max(param.map_or(abi::RDMA_MAX_RESP_RES, |p| p.responder_resources));
        st.retry_count = param.map_or(7, |p| p.retry_count.min(7));
        st.rnr_retry_count = param.map_or(7, |p| p.rnr_retry_count.min(7));
        let req = Msg::Req(self.endpoint(&st, qpn, srq, data)?);
        let sock = st.socket.take().ok_or(libc::EINVAL)?;
        let dst = st.dst.ok_or(libc::EINVAL)?;
        st.connect_data.clear();
        st.state = State::Connecting;
        let deadline = Instant::now() + st.route_timeout;
        let me = self.clone();
        std::thread::Builder::new()
            .name("rdmacm-conn".into())
            .spawn(move || crate::conn::connect(sock, dst, deadline, req, me))
            .map_err(os)?;
        Ok(())
    }

    /// Whether `rdma_connect`'s connection is still wanted (the id neither destroyed nor
    /// failed).
    pub fn still_connecting(&self) -> bool {
        let st = self.st();
        !st.destroyed && st.state == State::Connecting
    }

    /// The TCP connection of `rdma_connect` failed (for good).
    pub fn on_connect_failed(self: &Arc<Self>, errno: Errno) {
        let mut st = self.st();
        if st.destroyed || st.state != State::Connecting {
            return;
        }
        st.state = State::Failed;
        if errno == libc::ECONNREFUSED {
            // No one listens there: what the kernel reports for a REQ to no listener.
            let reason = c_int::from(REJ_INVALID_SERVICE_ID);
            self.push(&st, self, event::REJECTED, reason);
        } else {
            self.push(&st, self, event::UNREACHABLE, -errno);
        }
    }

    /// The TCP connection of `rdma_connect` is up: sends the REQ. False: the id is gone.
    pub fn on_connected(self: &Arc<Self>, conn: Arc<Conn>, req: &Msg) -> bool {
        let mut st = self.st();
        if st.destroyed || st.state != State::Connecting {
            return false;
        }
        if let Some(local) = conn.local() {
            self.set_src(&mut st, local);
        }
        if let Err(e) = conn.send(req) {
            st.state = State::Failed;
            self.push(&st, self, event::UNREACHABLE, -e);
            return false;
        }
        st.conn = Some(conn);
        true
    }

    /// A REQ arrived on a connection to `listener`: makes the new id and queues the
    /// CONNECT_REQUEST. None when the request was refused.
    pub fn incoming(listener: &Arc<Id>, conn: Arc<Conn>, req: Endpoint) -> Option<Arc<Id>> {
        let lst = listener.st();
        if lst.destroyed || lst.state != State::Listening {
            let _ = conn.send(&Msg::Rej {
                reason: REJ_INVALID_SERVICE_ID,
                pdata: Vec::new(),
            });
            conn.close();
            return None;
        }
        // SAFETY: reads a plain field of the listener's live C view.
        let ps = unsafe { (*listener.c()).ps };
        let child = Id::new(lst.channel.clone(), false, std::ptr::null_mut(), ps);
        let (Some(local), Some(peer)) = (conn.local(), conn.peer) else {
            conn.close();
            return None;
        };
        {
            let mut st = child.st();
            if let Err(e) = child.attach_device(&mut st, local.ip()) {
                drop(st);
                bad_message(
                    Some(peer),
                    format_args!("no RDMA device for {local}: errno {e}"),
                );
                let _ = conn.send(&Msg::Rej {
                    reason: REJ_INVALID_GID,
                    pdata: Vec::new(),
                });
                conn.close();
                return None;
            }
            child.set_src(
                &mut st,
                SocketAddr::new(metaroce_cabi::netif::unmap(local.ip()), local.port()),
            );
            child.set_dst(
                &mut st,
                SocketAddr::new(metaroce_cabi::netif::unmap(peer.ip()), peer.port()),
            );
            // The REQ's view reversed: what the peer issues, this end must accept.
            st.responder_resources = req.initiator_depth.min(MAX_RD_ATOMIC);
            st.initiator_depth = req.responder_resources.min(MAX_RD_ATOMIC);
            st.retry_count = req.retry_count.min(7);
            st.rnr_retry_count = req.rnr_retry_count.min(7);
            st.remote_ece = (req.ece_vendor, req.ece_options);
            st.conn = Some(conn);
            st.state = State::ReqReceived;
            st.peer = Some(req.clone());
        }
        reg().ids.insert(child.clone());
        lst.channel.push(Pending {
            id: child.clone(),
            listener: Some(listener.clone()),
            kind: event::CONNECT_REQUEST,
            status: 0,
            param: reported(&req, req.retry_count),
            pdata: req.pdata,
        });
        Some(child)
    }

    /// `rdma_listen`.
    pub fn listen(self: &Arc<Self>, backlog: c_int) -> Result<(), Errno> {
        let mut st = self.st();
        if st.state == State::Idle {
            drop(st);
            self.bind(SocketAddr::from(([0, 0, 0, 0], 0)))?;
            st = self.st();
        }
        if st.state != State::Bound {
            return Err(libc::EINVAL);
        }
        let sock = st.socket.take().ok_or(libc::EINVAL)?;
        st.listener = Some(Listener::start(sock, backlog, self.clone())?);
        st.state = State::Listening;
        Ok(())
    }

    /// `rdma_accept`: the QP (if any) to RTS, then the REP.
    pub fn accept(
        self: &Arc<Self>,
        param: Option<&rdma_conn_param>,
        pdata: &[u8],
    ) -> Result<(), Errno> {
        let mut st = self.st();
        if st.state != State::ReqReceived {
            return Err(libc::EINVAL);
        }
        if pdata.len() > pdata_max::REP {
            return Err(libc::EINVAL);
        }
        let (qpn, srq) = self.qp_identity(param)?;
        if let Some(p) = param {
            if p.initiator_depth != abi::RDMA_MAX_INIT_DEPTH {
                st.initiator_depth = p.initiator_depth.min(MAX_RD_ATOMIC);
            }
            if p.responder_resources != abi::RDMA_MAX_RESP_RES {
                st.responder_resources = p.responder_resources.min(MAX_RD_ATOMIC);
            }
        }
        self.to_rts(&st)?;
        let mut rep = self.endpoint(&st, qpn, srq, pdata.to_vec())?;
        rep.retry_count = 0;
        rep.rnr_retry_count = param.map_or(7, |p| p.rnr_retry_count.min(7));
        rep.flow_control = param.map_or(0, |p| p.flow_control);
        let conn = st.conn.clone().ok_or(libc::ECONNRESET)?;
        if let Err(e) = conn.send(&Msg::Rep(rep)) {
            let _ = self.qp_to_err();
            st.state = State::Failed;
            return Err(e);
        }
        st.state = State::Accepting;
        Ok(())
    }

    /// `rdma_reject` (`reason`: 28, or 35 for `rdma_reject_ece`).
    pub fn reject(&self, pdata: &[u8], reason: u16) -> Result<(), Errno> {
        let mut st = self.st();
        if !matches!(st.state, State::ReqReceived | State::RepReceived) {
            return Err(libc::EINVAL);
        }
        if pdata.len() > pdata_max::REJ {
            return Err(libc::EINVAL);
        }
        let conn = st.conn.take().ok_or(libc::ECONNRESET)?;
        let sent = conn.send(&Msg::Rej {
            reason,
            pdata: pdata.to_vec(),
        });
        conn.close();
        st.state = State::Failed;
        sent
    }

    /// `rdma_establish`: the program moved its own QP to RTS; send the RTU.
    pub fn establish(&self) -> Result<(), Errno> {
        if !self.qp().is_null() {
            return Err(libc::EINVAL);
        }
        let mut st = self.st();
        if st.state != State::RepReceived {
            return Err(libc::EINVAL);
        }
        st.conn.clone().ok_or(libc::ECONNRESET)?.send(&Msg::Rtu)?;
        st.state = State::Connected;
        Ok(())
    }

    /// `rdma_disconnect`: the QP to ERR, then a DREQ. Returns whether a DISCONNECTED
    /// event for this call is still to come (synchronous ids wait for it).
    pub fn disconnect(&self) -> Result<bool, Errno> {
        let mut st = self.st();
        if st.dev.is_none() {
            return Err(libc::EINVAL);
        }
        match st.state {
            State::Connected | State::Accepting | State::RepReceived => {
                self.qp_to_err()?;
                if let Some(c) = &st.conn {
                    // A peer that already went away disconnects through its EOF.
                    let _ = c.send(&Msg::Dreq);
                }
                st.state = State::DisconnectSent;
                Ok(true)
            }
            State::DisconnectSent | State::Disconnected => {
                self.qp_to_err()?;
                Ok(st.disconnect_queued && !st.disconnect_delivered)
            }
            _ => Err(libc::EINVAL),
        }
    }

    /// A message from the peer.
    pub fn on_message(self: &Arc<Self>, m: Msg) {
        let mut st = self.st();
        if st.destroyed {
            return;
        }
        let peer = st.conn.as_ref().and_then(|c| c.peer);
        match (m, st.state) {
            (Msg::Rep(rep), State::Connecting) => {
                // The REP's view reversed, as for a REQ.
                st.initiator_depth = rep.responder_resources.min(st.initiator_depth);
                st.responder_resources = rep.initiator_depth.min(st.responder_resources);
                st.rnr_retry_count = rep.rnr_retry_count.min(7);
                st.remote_ece = (rep.ece_vendor, rep.ece_options);
                let param = reported(&rep, st.retry_count);
                let pdata = rep.pdata.clone();
                st.peer = Some(rep);
                st.state = State::RepReceived;
                self.push_with(&st, self, event::CONNECT_RESPONSE, 0, param, pdata);
            }
            (Msg::Rtu, State::Accepting) => {
                st.state = State::Connected;
                self.push(&st, self, event::ESTABLISHED, 0);
            }
            (
                Msg::Rej { reason, pdata },
                State::Connecting | State::Accepting | State::RepReceived,
            ) => {
                st.state = State::Failed;
                let (kind, status) = (event::REJECTED, c_int::from(reason));
                self.push_with(&st, self, kind, status, rdma_conn_param::default(), pdata);
            }
            (Msg::Dreq, s) => {
                if let Some(c) = &st.conn {
                    let _ = c.send(&Msg::Drep);
                }
                if matches!(
                    s,
                    State::Connected
                        | State::Accepting
                        | State::RepReceived
                        | State::DisconnectSent
                ) {
                    self.queue_disconnected(&mut st);
                }
            }
            (Msg::Drep, State::DisconnectSent) => self.queue_disconnected(&mut st),
            // The DREP to a DREQ that crossed the peer's.
            (Msg::Drep, State::Disconnected) => {}
            (m, s) => bad_message(peer, format_args!("{m:?} unexpected in state {s:?}")),
        }
    }

    fn queue_disconnected(self: &Arc<Self>, st: &mut St) {
        st.state = State::Disconnected;
        if !st.disconnect_queued {
            st.disconnect_queued = true;
            self.push(st, self, event::DISCONNECTED, 0);
        }
    }

    /// The connection to the peer ended.
    pub fn on_closed(self: &Arc<Self>) {
        let mut st = self.st();
        if st.destroyed {
            return;
        }
        match st.state {
            State::Connecting | State::Accepting => {
                st.state = State::Failed;
                self.push(&st, self, event::CONNECT_ERROR, -libc::ECONNRESET);
            }
            State::RepReceived | State::Connected | State::DisconnectSent => {
                self.queue_disconnected(&mut st)
            }
            State::ReqReceived => st.state = State::Failed,
            _ => {}
        }
    }

    /// Ends an id the program never saw (a request whose listener went away).
    fn abandon(&self) {
        let mut st = self.st();
        st.destroyed = true;
        if let Some(c) = st.conn.take() {
            let _ = c.send(&Msg::Rej {
                reason: REJ_CONSUMER_DEFINED,
                pdata: Vec::new(),
            });
            c.close();
        }
        if let Some(d) = st.dev.take() {
            d.release_pd();
        }
        drop(st);
        let _ = reg().ids.remove_any(self.c());
    }

    /// `rdma_destroy_id`: says goodbye to the peer, stops listening, drops queued events,
    /// waits for handed-out events to be acknowledged, frees.
    pub fn destroy(self: Arc<Self>) {
        let me = Arc::as_ptr(&self);
        let (listener, channel, orphans) = {
            let mut st = self.st();
            st.destroyed = true;
            if let Some(c) = st.conn.take() {
                let farewell = match st.state {
                    State::ReqReceived => Some(Msg::Rej {
                        reason: REJ_CONSUMER_DEFINED,
                        pdata: Vec::new(),
                    }),
                    State::Connected | State::Accepting | State::RepReceived => Some(Msg::Dreq),
                    _ => None,
                };
                if let Some(m) = farewell {
                    let _ = c.send(&m);
                }
                c.close();
            }
            st.socket = None;
            let mine = |p: &Pending| {
                std::ptr::eq(Arc::as_ptr(&p.id), me)
                    || p.listener
                        .as_ref()
                        .is_some_and(|l| std::ptr::eq(Arc::as_ptr(l), me))
            };
            let orphans = st.channel.take_where(mine);
            (st.listener.take(), st.channel.clone(), orphans)
        };
        if let Some(l) = listener {
            l.stop();
        }
        for p in orphans {
            if !std::ptr::eq(Arc::as_ptr(&p.id), me) {
                p.id.abandon();
            }
        }
        self.ack_own_event();
        self.wait_acked();
        let c = self.c();
        let mut st = self.st();
        if let Some(d) = st.dev.take() {
            d.release_pd();
        }
        // SAFETY: the path record was allocated by `resolve_route` with Box and is freed
        // once; the program may not use the id after destroying it.
        unsafe {
            let p = std::mem::replace(&mut (*c).route.path_rec, std::ptr::null_mut());
            if !p.is_null() {
                drop(Box::from_raw(p));
            }
        }
        if st.sync {
            let _ = reg().channels.remove_any(channel.c_ptr());
        }
    }
}
