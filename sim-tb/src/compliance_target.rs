//! The simulated hardware NIC as a compliance target
//! (`metaroce_compliance::Target`): a Verilated `NicCore` driven by its
//! firmware ([`HwNic`]) whose frames leave and enter through real UDP
//! sockets ([`UdpBridge`]), stepped against real time by a thread of its
//! own, so the black-box suite talks to the RTL over the wire exactly as it
//! talks to the soft NIC. The model lives and runs on that thread only; the
//! suite's calls run there as jobs between its clock cycles.
//!
//! The device's clock (`DeviceClock`) follows the wall clock while the
//! model is idle, so its timers run in real time as the suite waits; while
//! a frame or a job is on its way through the model each cycle takes one
//! clock period, however slowly a loaded host runs the model, so what the
//! NIC does with packets that arrive together (counting active senders,
//! sending a retransmission and its PROBE) takes nanoseconds on its clock,
//! as on a real NIC's, not whatever the host's scheduler made of it.
//!
//! What the RTL's tables impose, a case gets as an error from the call that
//! needs more (and the suite skips or fails it): 4 QPs and 4 memory regions
//! per device, 16 TX table slots (the paths of all QPs), a receive window of
//! 256 packets, receive rings on streams 0–3, and one peer (IP address and
//! UDP port) per device, set when the first QP connects.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::thread::JoinHandle;
use std::time::Instant;

use metaroce_compliance::soft::{opcode_name, status_name};
use metaroce_compliance::target::{
    Completion, Device, MrAccess, MrInfo, PeerParams, QpOptions, QpStateName, SendWork, Target,
    TargetResult,
};
use metaroce_firmware::{
    Access, Event, Memory, QpConfig, QpState, QpTransition, RecvWr, RemoteEnd, SendOp, SendWr, Sge,
};

use crate::hw_nic::{HwNic, HwNicConfig};
use crate::udp_bridge::{BridgeConfig, UdpBridge};

/// First address of the device's host memory.
const MEM_BASE: u64 = 0x1_0000_0000;
/// Bytes of host memory (the regions the suite registers come out of it).
const MEM_LEN: usize = 32 << 20;
/// Line rate the firmware shares in its ACKs' rate hints, Mbit/s.
const LINE_RATE_MBPS: u32 = 10_000;
/// Clock cycles the thread runs between looks at the sockets.
const CYCLES_PER_TURN: usize = 64;
/// The RTL's receive window, packets.
const RECV_WINDOW: u32 = 256;
/// Regions are aligned to this.
const MR_ALIGN: u64 = 64;
/// The model's clock period, ns.
const CLOCK_NS: u64 = 1;

/// The simulated hardware NIC as a compliance target (see the module docs).
#[derive(Debug, Clone)]
pub struct HwTarget {
    ip: IpAddr,
}

impl HwTarget {
    /// Devices on `ip` (a local address; each device binds its own port).
    pub fn new(ip: IpAddr) -> Self {
        HwTarget { ip }
    }
}

impl Target for HwTarget {
    fn name(&self) -> String {
        "device".into()
    }

    fn open(&self) -> TargetResult<Box<dyn Device>> {
        HwDevice::start(self.ip).map(|d| Box::new(d) as Box<dyn Device>)
    }
}

/// The device's time, ns since it opened (see the module docs): one clock
/// period a cycle while the model is busy, the wall clock while it is
/// idle; never going back, never ahead of the wall clock.
struct DeviceClock {
    start: Instant,
    now: u64,
}

impl DeviceClock {
    fn new() -> Self {
        DeviceClock {
            start: Instant::now(),
            now: 0,
        }
    }

    /// The time of the next cycle of a model that is `busy` (or not).
    fn tick(&mut self, busy: bool) -> u64 {
        let wall = (self.start.elapsed().as_nanos() as u64).max(self.now);
        self.now = if busy {
            (self.now + CLOCK_NS).min(wall)
        } else {
            wall
        };
        self.now
    }
}

/// The simulated NIC and its sockets, owned by the stepping thread.
struct Board {
    nic: HwNic,
    bridge: UdpBridge,
    clock: DeviceClock,
    /// Completions taken from the engine, by QP, until the suite polls them.
    completions: HashMap<u32, Vec<Completion>>,
}

/// A call of the suite, run on the board's thread.
type Job = Box<dyn FnOnce(&mut Board) + Send>;

impl Board {
    fn open(ip: IpAddr) -> TargetResult<Board> {
        let mac = [2, 0, 0, 0, 0, 1];
        let peer_mac = [2, 0, 0, 0, 0, 2];
        let bridge = UdpBridge::bind(BridgeConfig {
            mac,
            peer_mac,
            local: SocketAddr::new(ip, 0),
        })
        .map_err(|e| format!("binding the device's socket on {ip}: {e}"))?;
        let addr = bridge.local_addr();
        // The peer is set when a QP connects (`HwNic::set_peer`).
        let peer_ip = match ip {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => return Err("the simulated NIC's TX builder is IPv4 only".into()),
        };
        let nic = HwNic::new(HwNicConfig {
            mac,
            peer_mac,
            ip,
            peer_ip,
            udp_port: addr.port(),
            peer_udp_port: addr.port(),
            mem_base: MEM_BASE,
            mem_len: MEM_LEN,
            clock_ps: CLOCK_NS * 1_000,
            line_rate_mbps: LINE_RATE_MBPS,
            seed: u64::from(addr.port()),
        })
        .map_err(|e| e.to_string())?;
        Ok(Board {
            nic,
            bridge,
            clock: DeviceClock::new(),
            completions: HashMap::new(),
        })
    }

    /// Runs the model for a few cycles on the device's clock and moves
    /// frames both ways.
    fn turn(&mut self, out: &mut Vec<Vec<u8>>, inbox: &mut Vec<Vec<u8>>) {
        for _ in 0..CYCLES_PER_TURN {
            let now = self.clock.tick(self.nic.busy());
            self.nic.step_at(now, out);
            for f in out.drain(..) {
                self.bridge.send_frame(&f);
            }
        }
        self.bridge.poll_frames(inbox);
        for f in inbox.drain(..) {
            self.nic.receive_frame(f);
        }
        while let Some(e) = self.nic.poll_event() {
            if let Event::Completion(c) = e {
                self.completions
                    .entry(c.qpn)
                    .or_default()
                    .push(completion(&c));
            }
        }
    }

    /// The board's thread: jobs between turns, until the device goes.
    fn run(mut self, jobs: Receiver<Job>) {
        let (mut out, mut inbox) = (Vec::new(), Vec::new());
        loop {
            loop {
                match jobs.try_recv() {
                    Ok(job) => job(&mut self),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            self.turn(&mut out, &mut inbox);
        }
    }
}

/// One simulated NIC opened for a case.
struct HwDevice {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    addr: SocketAddr,
    pd: u32,
    /// Regions by handle: address, length, lkey (`None` once deregistered).
    mrs: Vec<Option<(u64, u64, u32)>>,
    next_addr: u64,
    /// Retry settings of each QP, given at RTS.
    opts: HashMap<u32, QpOptions>,
    /// The peer the device's TX builder points at.
    peer: Option<SocketAddr>,
}

impl HwDevice {
    fn start(ip: IpAddr) -> TargetResult<Self> {
        let (jobs, rx) = channel::<Job>();
        let (opened, opened_rx) = channel();
        let thread = std::thread::spawn(move || match Board::open(ip) {
            Ok(mut board) => {
                let pd = board.nic.alloc_pd();
                let _ = opened.send(Ok((board.bridge.local_addr(), pd)));
                board.run(rx);
            }
            Err(e) => {
                let _ = opened.send(Err(e));
            }
        });
        let (addr, pd) = opened_rx
            .recv()
            .map_err(|_| "the device's thread ended".to_string())??;
        Ok(HwDevice {
            jobs: Some(jobs),
            thread: Some(thread),
            addr,
            pd,
            mrs: Vec::new(),
            next_addr: MEM_BASE,
            opts: HashMap::new(),
            peer: None,
        })
    }

    /// Runs `f` on the board's thread and returns what it returns.
    fn call<R: Send + 'static>(&self, f: impl FnOnce(&mut Board) -> R + Send + 'static) -> R {
        let (tx, rx) = channel();
        let job: Job = Box::new(move |b| {
            let _ = tx.send(f(b));
        });
        self.jobs
            .as_ref()
            .expect("jobs until drop")
            .send(job)
            .expect("the device's thread runs until drop");
        rx.recv().expect("the device's thread answers every job")
    }

    fn mr(&self, handle: u32) -> TargetResult<(u64, u64, u32)> {
        self.mrs
            .get(handle as usize)
            .copied()
            .flatten()
            .ok_or_else(|| format!("no MR {handle}"))
    }

    /// The host address of `len` bytes at `offset` of region `mr`.
    fn at(&self, mr: u32, offset: u64, len: u64) -> TargetResult<(u64, u32)> {
        let (addr, mr_len, lkey) = self.mr(mr)?;
        if offset.checked_add(len).is_none_or(|end| end > mr_len) {
            return Err("outside the region".into());
        }
        Ok((addr + offset, lkey))
    }
}

impl Drop for HwDevice {
    fn drop(&mut self) {
        // The thread ends when its job channel closes.
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn completion(c: &metaroce_firmware::Completion) -> Completion {
    Completion {
        wr_id: c.wr_id,
        status: status_name(c.status).into(),
        opcode: opcode_name(c.opcode).into(),
        byte_len: c.byte_len,
        imm: c.imm,
    }
}

impl Device for HwDevice {
    fn address(&self) -> SocketAddr {
        self.addr
    }

    fn create_qp(&mut self, opts: &QpOptions) -> TargetResult<u32> {
        if opts.recv_window != RECV_WINDOW {
            return Err(format!(
                "the RTL's receive window is {RECV_WINDOW} packets, not {}",
                opts.recv_window
            ));
        }
        let cfg = opts.qp_config(QpConfig::default());
        let pd = self.pd;
        let qpn = self
            .call(move |b| b.nic.create_qp(pd, cfg))
            .map_err(|e| format!("{e:?} (the RTL has 4 QPs and 16 TX table slots)"))?;
        self.opts.insert(qpn, *opts);
        Ok(qpn)
    }

    fn connect(&mut self, qpn: u32, peer: &PeerParams, own_initial_psn: u32) -> TargetResult<()> {
        let opts = *self
            .opts
            .get(&qpn)
            .ok_or_else(|| format!("no QP {qpn:#x}"))?;
        self.connect_rtr(qpn, peer)?;
        let rts = QpTransition::Rts {
            initial_psn: own_initial_psn,
            retry_cnt: opts.retry_cnt,
            rnr_retry: opts.rnr_retry,
            timeout_ns: opts.timeout_ns,
        };
        self.call(move |b| b.nic.modify_qp(qpn, rts))
            .map_err(|e| format!("{e:?}"))
    }

    fn connect_rtr(&mut self, qpn: u32, peer: &PeerParams) -> TargetResult<()> {
        if !self.opts.contains_key(&qpn) {
            return Err(format!("no QP {qpn:#x}"));
        }
        if self.peer.is_some_and(|p| p != peer.addr) {
            return Err("the RTL's TX builder has one peer per device".into());
        }
        self.peer = Some(peer.addr);
        let remote = RemoteEnd {
            qpn: peer.qpn,
            ip: peer.addr.ip(),
            udp_port: peer.addr.port(),
            initial_psn: peer.initial_psn,
        };
        self.call(move |b| {
            b.nic.set_peer(remote.ip, remote.udp_port);
            b.nic.modify_qp(qpn, QpTransition::Init)?;
            b.nic.modify_qp(qpn, QpTransition::Rtr(remote))
        })
        .map_err(|e| format!("{e:?}"))
    }

    fn reg_mr(&mut self, len: u64, access: MrAccess) -> TargetResult<MrInfo> {
        let addr = self.next_addr;
        let end = addr
            .checked_add(len.max(1))
            .filter(|&e| e <= MEM_BASE + MEM_LEN as u64)
            .ok_or("out of the device's host memory")?;
        let mut a = Access::empty();
        a.set(Access::LOCAL_WRITE, access.local_write);
        a.set(Access::REMOTE_WRITE, access.remote_write);
        a.set(Access::REMOTE_READ, access.remote_read);
        a.set(Access::REMOTE_ATOMIC, access.remote_atomic);
        let pd = self.pd;
        let mr = self
            .call(move |b| {
                b.nic.mem_mut().slice_mut(addr, len as usize).fill(0);
                b.nic.register_mr(pd, addr, len, a)
            })
            .map_err(|e| format!("{e:?} (the RTL has 4 MR entries)"))?;
        self.next_addr = end.next_multiple_of(MR_ALIGN);
        self.mrs.push(Some((addr, len, mr.lkey)));
        Ok(MrInfo {
            handle: self.mrs.len() as u32 - 1,
            addr,
            len,
            rkey: mr.rkey,
        })
    }

    fn write_mr(&mut self, mr: u32, offset: u64, data: &[u8]) -> TargetResult<()> {
        let (addr, _) = self.at(mr, offset, data.len() as u64)?;
        let data = data.to_vec();
        self.call(move |b| b.nic.mem_mut().write(addr, &data));
        Ok(())
    }

    fn read_mr(&mut self, mr: u32, offset: u64, len: usize) -> TargetResult<Vec<u8>> {
        let (addr, _) = self.at(mr, offset, len as u64)?;
        Ok(self.call(move |b| b.nic.mem().slice(addr, len).to_vec()))
    }

    fn dereg_mr(&mut self, mr: u32) -> TargetResult<()> {
        let (_, _, lkey) = self.mr(mr)?;
        self.mrs[mr as usize] = None;
        if self.call(move |b| b.nic.deregister_mr(lkey)) {
            Ok(())
        } else {
            Err(format!("no MR {mr}"))
        }
    }

    fn post_send(&mut self, qpn: u32, w: &SendWork) -> TargetResult<()> {
        let (addr, lkey) = self.at(w.mr, w.offset, w.len.into())?;
        let op = SendOp::from(w.op);
        let wr = SendWr {
            wr_id: w.wr_id,
            op,
            sgl: Sge {
                addr,
                len: w.len,
                lkey,
            }
            .into(),
            signaled: true,
            solicited: w.solicited,
            stream: w.stream,
        };
        self.call(move |b| b.nic.post_send(qpn, wr))
            .map_err(|e| format!("{e:?}"))
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
        let (addr, lkey) = self.at(mr, offset, len.into())?;
        let wr = RecvWr {
            wr_id,
            sgl: Sge { addr, len, lkey }.into(),
            stream,
        };
        self.call(move |b| b.nic.post_recv(qpn, wr))
            .map_err(|e| format!("{e:?}"))
    }

    fn poll_completions(&mut self, qpn: u32) -> Vec<Completion> {
        self.call(move |b| b.completions.remove(&qpn).unwrap_or_default())
    }

    fn qp_state(&mut self, qpn: u32) -> Option<QpStateName> {
        Some(match self.call(move |b| b.nic.engine().qp_state(qpn))? {
            QpState::Reset => QpStateName::Reset,
            QpState::Init => QpStateName::Init,
            QpState::Rtr => QpStateName::Rtr,
            QpState::Rts => QpStateName::Rts,
            QpState::Error => QpStateName::Err,
        })
    }

    fn disconnect(&mut self, qpn: u32) -> TargetResult<()> {
        self.call(move |b| b.nic.disconnect(qpn))
            .map_err(|e| format!("{e:?}"))
    }

    fn mtu(&self) -> u32 {
        crate::hw_nic::MTU
    }

    /// The RTL checks and hands up atomics; the firmware executes them.
    fn atomics(&self) -> bool {
        true
    }

    fn line_rate_mbps(&self) -> Option<u32> {
        Some(LINE_RATE_MBPS)
    }
}
