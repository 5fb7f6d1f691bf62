//! The soft NIC (the engine on UDP sockets, `metaroce-driver`'s `soft` backend) as a
//! [`Target`], and deliberately broken variants of it for testing the suite itself.
//!
//! A broken variant puts a small datagram-mutating shim between the soft NIC and the
//! suite on the NIC's transmit side: the NIC's peer address is the shim, which
//! changes each datagram the way a faulty implementation would and forwards it to
//! the suite. The engine itself is untouched.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use metaroce_driver::backend::Backend;
use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::{
    Access, CompletionQueue, Context, MemoryRegion, ProtectionDomain, QpInit, QpState,
    QpTransition, QueuePair, RecvWr, RemoteEnd, SendOp, SendRequest, WcOpcode, WcStatus,
};
use metaroce_proto::{Opcode, Packet, PseudoHeader, Repr};

use crate::target::{
    Completion, Device, MrAccess, MrInfo, PeerParams, QpOptions, QpStateName, SendWork, Target,
    TargetResult,
};

/// A fault the shim injects into everything the soft NIC transmits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    /// Seals every datagram with a CRC over the UDP payload only, without the
    /// pseudo-header (§4).
    IcrcWithoutPseudoHeader,
    /// Writes each SACK byte of an ACK in reverse bit order (§3.5).
    SackBitOrderReversed,
    /// Doubles the path PSN of every data packet, as a sender that runs past its
    /// path window (§5.8) would number them.
    IgnoresPathWindow,
    /// Swallows REMOTE_ACCESS NACKs, as a receiver that skips the rkey and bounds
    /// check would never send them (§6.2 step 20).
    SkipsRkeyCheck,
    /// Flips a bit of every PARITY's payload, as a sender that XORs the wrong
    /// bytes would send it (§3.12).
    WrongParity,
}

impl Break {
    /// Every fault, for the self-test.
    pub const ALL: [Break; 5] = [
        Break::IcrcWithoutPseudoHeader,
        Break::SackBitOrderReversed,
        Break::IgnoresPathWindow,
        Break::SkipsRkeyCheck,
        Break::WrongParity,
    ];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Break::IcrcWithoutPseudoHeader => "icrc-without-pseudo-header",
            Break::SackBitOrderReversed => "sack-bit-order-reversed",
            Break::IgnoresPathWindow => "ignores-path-window",
            Break::SkipsRkeyCheck => "skips-rkey-check",
            Break::WrongParity => "wrong-parity",
        }
    }
}

/// The soft NIC, optionally broken by a [`Break`]: by default a fresh soft NIC on a
/// kernel-chosen port for every case; with [`SoftTarget::shared`] one soft NIC on a
/// fixed address for every case, as a device behind a control agent.
#[derive(Clone)]
pub struct SoftTarget {
    ip: IpAddr,
    broken: Option<Break>,
    shared: Option<Arc<SoftNic>>,
}

impl std::fmt::Debug for SoftTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftTarget")
            .field("ip", &self.ip)
            .field("broken", &self.broken)
            .field("shared", &self.shared.as_ref().map(|n| n.ctx.address()))
            .finish()
    }
}

impl SoftTarget {
    /// A correct soft NIC on `ip`, fresh for every case.
    pub fn new(ip: IpAddr) -> Self {
        SoftTarget {
            ip,
            broken: None,
            shared: None,
        }
    }

    /// A soft NIC on `ip`, fresh for every case, whose transmissions go through a
    /// faulty shim.
    pub fn broken(ip: IpAddr, fault: Break) -> Self {
        SoftTarget {
            ip,
            broken: Some(fault),
            shared: None,
        }
    }

    /// One soft NIC bound to `bind` (port 0: kernel-chosen) that every case shares,
    /// each with its own QPs and regions.
    pub fn shared(bind: SocketAddr) -> TargetResult<Self> {
        Ok(SoftTarget {
            ip: bind.ip(),
            broken: None,
            shared: Some(Arc::new(SoftNic::start(bind)?)),
        })
    }

    /// The shared NIC's address, if this target has one.
    pub fn shared_address(&self) -> Option<SocketAddr> {
        self.shared.as_ref().map(|n| n.ctx.address())
    }
}

/// One running soft NIC.
struct SoftNic {
    backend: Arc<SoftBackend>,
    pd: ProtectionDomain,
    ctx: Context,
}

impl SoftNic {
    fn start(bind: SocketAddr) -> TargetResult<SoftNic> {
        let mut cfg = SoftConfig::new(bind);
        cfg.entropy_sockets = 4;
        cfg.offloads = false;
        cfg.nic.line_rate_mbps = SOFT_LINE_RATE_MBPS;
        // Short linger so a device closes fast at the end of a case.
        cfg.nic.linger_max_ns = 1_000_000;
        let backend = SoftBackend::start(cfg).map_err(|e| e.to_string())?;
        let ctx = Context::open(Arc::clone(&backend));
        let pd = ctx.alloc_pd();
        Ok(SoftNic { backend, pd, ctx })
    }
}

/// The line rate the soft target's engine divides among active senders.
const SOFT_LINE_RATE_MBPS: u32 = 400_000;

impl Target for SoftTarget {
    fn name(&self) -> String {
        match self.broken {
            None => "soft".into(),
            Some(b) => format!("soft+{}", b.name()),
        }
    }

    fn open(&self) -> TargetResult<Box<dyn Device>> {
        let nic = match &self.shared {
            Some(nic) => Arc::clone(nic),
            None => Arc::new(SoftNic::start(SocketAddr::new(self.ip, 0))?),
        };
        let shim = match self.broken {
            Some(fault) => Some(Shim::start(self.ip, fault).map_err(|e| e.to_string())?),
            None => None,
        };
        Ok(Box::new(SoftDevice {
            qps: HashMap::new(),
            mrs: Vec::new(),
            shim,
            nic,
        }))
    }
}

struct SoftQp {
    qp: QueuePair,
    cq: CompletionQueue,
    opts: QpOptions,
}

struct SoftDevice {
    qps: HashMap<u32, SoftQp>,
    mrs: Vec<Option<MemoryRegion>>,
    shim: Option<Shim>,
    // Last, so QPs and regions are destroyed before the NIC.
    nic: Arc<SoftNic>,
}

impl SoftDevice {
    fn qp(&self, qpn: u32) -> TargetResult<&SoftQp> {
        self.qps.get(&qpn).ok_or_else(|| format!("no QP {qpn:#x}"))
    }
    fn mr(&self, handle: u32) -> TargetResult<&MemoryRegion> {
        self.mrs
            .get(handle as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("no MR {handle}"))
    }
}

/// The Verbs name of a completion status, as the suite reports it.
pub fn status_name(s: WcStatus) -> &'static str {
    match s {
        WcStatus::Success => "SUCCESS",
        WcStatus::LocLenErr => "LOC_LEN_ERR",
        WcStatus::LocQpOpErr => "LOC_QP_OP_ERR",
        WcStatus::LocProtErr => "LOC_PROT_ERR",
        WcStatus::WrFlushErr => "WR_FLUSH_ERR",
        WcStatus::BadRespErr => "BAD_RESP_ERR",
        WcStatus::RemInvReqErr => "REM_INV_REQ_ERR",
        WcStatus::RemAccessErr => "REM_ACCESS_ERR",
        WcStatus::RemOpErr => "REM_OP_ERR",
        WcStatus::RetryExcErr => "RETRY_EXC_ERR",
        WcStatus::RnrRetryExcErr => "RNR_RETRY_EXC_ERR",
    }
}

/// The Verbs name of a completion opcode, as the suite reports it.
pub fn opcode_name(o: WcOpcode) -> &'static str {
    match o {
        WcOpcode::Send => "SEND",
        WcOpcode::Write => "WRITE",
        WcOpcode::Read => "READ",
        WcOpcode::FetchAdd => "FETCH_ADD",
        WcOpcode::CompSwap => "COMP_SWAP",
        WcOpcode::Recv => "RECV",
        WcOpcode::RecvWriteImm => "RECV_RDMA_WITH_IMM",
    }
}

impl Device for SoftDevice {
    fn address(&self) -> SocketAddr {
        self.nic.ctx.address()
    }

    fn create_qp(&mut self, opts: &QpOptions) -> TargetResult<u32> {
        let cq = self.nic.ctx.create_cq(4096, None);
        let config = opts.qp_config(self.nic.ctx.default_qp_config());
        let mut init = QpInit::new(&cq, &cq);
        init.config = Some(config);
        let qp = self.nic.pd.create_qp(&init).map_err(|e| e.to_string())?;
        let qpn = qp.qpn();
        self.qps.insert(
            qpn,
            SoftQp {
                qp,
                cq,
                opts: *opts,
            },
        );
        Ok(qpn)
    }

    fn connect(&mut self, qpn: u32, peer: &PeerParams, own_initial_psn: u32) -> TargetResult<()> {
        self.connect_rtr(qpn, peer)?;
        let SoftQp { qp, opts, .. } = self.qp(qpn)?;
        let e = |e: metaroce_driver::verbs::Error| e.to_string();
        // The retry settings of QpOptions are given at RTS.
        qp.modify(QpTransition::Rts {
            initial_psn: own_initial_psn,
            retry_cnt: opts.retry_cnt,
            rnr_retry: opts.rnr_retry,
            timeout_ns: opts.timeout_ns,
        })
        .map_err(e)
    }

    fn atomics(&self) -> bool {
        true
    }

    fn connect_rtr(&mut self, qpn: u32, peer: &PeerParams) -> TargetResult<()> {
        let addr = match &self.shim {
            Some(shim) => shim.forward_to(peer.addr),
            None => peer.addr,
        };
        let SoftQp { qp, .. } = self.qp(qpn)?;
        let e = |e: metaroce_driver::verbs::Error| e.to_string();
        qp.modify(QpTransition::Init).map_err(e)?;
        qp.modify(QpTransition::Rtr(RemoteEnd {
            qpn: peer.qpn,
            ip: addr.ip(),
            udp_port: addr.port(),
            initial_psn: peer.initial_psn,
        }))
        .map_err(e)
    }

    fn reg_mr(&mut self, len: u64, access: MrAccess) -> TargetResult<MrInfo> {
        let mut a = Access::empty();
        a.set(Access::LOCAL_WRITE, access.local_write);
        a.set(Access::REMOTE_WRITE, access.remote_write);
        a.set(Access::REMOTE_READ, access.remote_read);
        a.set(Access::REMOTE_ATOMIC, access.remote_atomic);
        let mr = self
            .nic
            .pd
            .alloc_mr(len as usize, a)
            .map_err(|e| e.to_string())?;
        let info = MrInfo {
            handle: self.mrs.len() as u32,
            addr: mr.addr(),
            len,
            rkey: mr.rkey(),
        };
        self.mrs.push(Some(mr));
        Ok(info)
    }

    fn write_mr(&mut self, mr: u32, offset: u64, data: &[u8]) -> TargetResult<()> {
        if self.mr(mr)?.write(offset as usize, data) {
            Ok(())
        } else {
            Err("write outside the region".into())
        }
    }

    fn read_mr(&mut self, mr: u32, offset: u64, len: usize) -> TargetResult<Vec<u8>> {
        if len > self.mr(mr)?.len() {
            return Err("read longer than the region".into());
        }
        let mut out = vec![0; len];
        if self.mr(mr)?.read(offset as usize, &mut out) {
            Ok(out)
        } else {
            Err("read outside the region".into())
        }
    }

    fn post_send(&mut self, qpn: u32, w: &SendWork) -> TargetResult<()> {
        let sge = self.mr(w.mr)?.sge(w.offset as usize, w.len);
        let op = SendOp::from(w.op);
        let mut wr = SendRequest::new(w.wr_id, op, metaroce_driver::verbs::Payload::Sge(sge))
            .on_stream(w.stream);
        wr.solicited = w.solicited;
        self.qp(qpn)?.qp.post_send(&wr).map_err(|e| e.to_string())
    }

    fn post_recv(
        &mut self,
        qpn: u32,
        wr_id: u64,
        mr: u32,
        offset: u64,
        len: u32,
        stream: u16,
    ) -> TargetResult<()> {
        let sge = self.mr(mr)?.sge(offset as usize, len);
        self.qp(qpn)?
            .qp
            .post_recv(RecvWr {
                wr_id,
                sgl: sge.into(),
                stream,
            })
            .map_err(|e| e.to_string())
    }

    fn poll_completions(&mut self, qpn: u32) -> Vec<Completion> {
        let Ok(q) = self.qp(qpn) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut wc = [metaroce_driver::verbs::Wc::default(); 64];
        loop {
            let n = q.cq.poll(&mut wc);
            out.extend(wc[..n].iter().map(|c| Completion {
                wr_id: c.wr_id,
                status: status_name(c.status).into(),
                opcode: opcode_name(c.opcode).into(),
                byte_len: c.byte_len,
                imm: c.imm,
            }));
            if n < wc.len() {
                return out;
            }
        }
    }

    fn qp_state(&mut self, qpn: u32) -> Option<QpStateName> {
        let q = self.qps.get(&qpn)?;
        Some(match q.qp.state() {
            QpState::Reset => QpStateName::Reset,
            QpState::Init => QpStateName::Init,
            QpState::Rtr => QpStateName::Rtr,
            QpState::Rts => QpStateName::Rts,
            QpState::Error => QpStateName::Err,
        })
    }

    fn disconnect(&mut self, qpn: u32) -> TargetResult<()> {
        self.qp(qpn)?;
        let mut res = Ok(());
        self.nic.backend.control(&mut |c| {
            res = c.nic.disconnect(qpn).map_err(|e| e.to_string());
        });
        res
    }

    fn dereg_mr(&mut self, mr: u32) -> TargetResult<()> {
        match self.mrs.get_mut(mr as usize).and_then(Option::take) {
            Some(_) => Ok(()),
            None => Err(format!("no MR {mr}")),
        }
    }

    fn drop_counters(&mut self) -> Option<Vec<(String, u64)>> {
        Some(
            self.nic
                .ctx
                .drops()
                .iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    fn line_rate_mbps(&self) -> Option<u32> {
        Some(SOFT_LINE_RATE_MBPS)
    }

    fn chooses_source_ports(&self) -> bool {
        // The soft backend sends from a fixed pool of entropy sockets (§2.3 allows it).
        false
    }
}

impl Drop for SoftDevice {
    fn drop(&mut self) {
        self.qps.clear();
        self.mrs.clear();
        if let Some(shim) = self.shim.take() {
            shim.stop();
        }
    }
}

/// The datagram-mutating forwarder of a broken target.
struct Shim {
    socket: Arc<UdpSocket>,
    forward: Arc<Mutex<Option<SocketAddr>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Shim {
    fn start(ip: IpAddr, fault: Break) -> std::io::Result<Shim> {
        let socket = Arc::new(UdpSocket::bind(SocketAddr::new(ip, 0))?);
        socket.set_read_timeout(Some(Duration::from_millis(20)))?;
        let forward = Arc::new(Mutex::new(None::<SocketAddr>));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, f, st) = (Arc::clone(&socket), Arc::clone(&forward), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("compliance-shim".into())
            .spawn(move || {
                let mut buf = vec![0u8; 65536];
                let me = s.local_addr().ok();
                while !st.load(Ordering::Relaxed) {
                    let Ok(n) = s.recv(&mut buf) else { continue };
                    let to = *f.lock().unwrap_or_else(|p| p.into_inner());
                    let (Some(to), Some(me)) = (to, me) else {
                        continue;
                    };
                    if let Some(out) = mutate(fault, &buf[..n], me, to) {
                        let _ = s.send_to(&out, to);
                    }
                }
            })?;
        Ok(Shim {
            socket,
            forward,
            stop,
            thread: Some(thread),
        })
    }

    /// Forwards to `peer` from now on; returns the address the NIC must send to.
    fn forward_to(&self, peer: SocketAddr) -> SocketAddr {
        *self.forward.lock().unwrap_or_else(|p| p.into_inner()) = Some(peer);
        self.socket
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::new(peer.ip(), 0))
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Applies `fault` to one datagram the NIC sent; `None` swallows it.
fn mutate(fault: Break, data: &[u8], from: SocketAddr, to: SocketAddr) -> Option<Vec<u8>> {
    let mut out = data.to_vec();
    let pseudo = PseudoHeader::new(from.ip(), from.port(), to.ip(), to.port());
    let Ok(packet) = Packet::new_checked(&out[..]) else {
        return Some(out);
    };
    let Ok(repr) = Repr::parse(&packet) else {
        return Some(out);
    };
    let payload_len = packet.payload().len();
    match fault {
        Break::IcrcWithoutPseudoHeader => {
            let n = out.len();
            let crc = crc32fast::hash(&out[..n - 4]);
            out[n - 4..].copy_from_slice(&crc.to_be_bytes());
            return Some(out);
        }
        Break::SackBitOrderReversed => {
            if repr.opcode == Opcode::Ack {
                for b in &mut out[40..72] {
                    *b = b.reverse_bits();
                }
            }
        }
        Break::IgnoresPathWindow => {
            if repr.opcode.is_message() {
                let mut r = repr;
                r.path_psn = r.path_psn.wrapping_mul(2);
                r.emit(&mut out, payload_len).ok()?;
            }
        }
        Break::WrongParity => {
            if repr.opcode == Opcode::Parity && payload_len > 0 {
                let at = repr.header_len();
                out[at] ^= 0x01;
            }
        }
        Break::SkipsRkeyCheck => {
            if let metaroce_proto::Ext::Nack(n) = repr.ext {
                if n.reason == metaroce_proto::NackReason::RemoteAccess {
                    return None;
                }
            }
        }
    }
    Packet::new_unchecked(&mut out[..]).fill_icrc(&pseudo);
    Some(out)
}
