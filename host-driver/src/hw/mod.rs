//! The `device` backend: the host driver of a MetaRoCE hardware NIC.
//!
//! It sits on a [`Device`] (BAR0, DMA memory, interrupts; a vfio-user device process
//! or a board through kernel VFIO) and runs the firmware — the transport engine on
//! the hardware data path (`Datapath::Hardware`) — on the host CPU, in a progress
//! thread, the way `metaroce_sim_tb::hw_nic` runs it against a simulated `NicCore`:
//!
//! * [`regs`]: the register blocks found by walking BAR0's list, the `ID` block check;
//! * [`rings`]: the four queues in host memory, consumed by phase bit;
//! * [`tables`]: which table words to write for QPs, regions, receives and READs
//!   (shared with the simulator's firmware model);
//! * `firmware`: the engine driven through the device's queues (table words, TX
//!   table operations and descriptors in the TX queue, events and results from the
//!   event ring, firmware datagrams both ways);
//! * [`timing`]: where the wall time goes (engine, device accesses, the device
//!   process's model and socket), [`DeviceBackend::timing`];
//! * [`codes`]: every code, address and register offset, generated from
//!   `metaroce_hdl` at build time.
//!
//! The progress thread sleeps on the device's interrupt eventfds (vectors 0–2) and a
//! wake-up eventfd, and polls every [`DeviceConfig::poll_interval`] when the device
//! has no interrupts (or as a safety net). See `docs/driver.md`.

pub mod codes;
mod firmware;
pub mod regs;
pub mod rings;
pub mod tables;
pub mod timing;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use metaroce_firmware::datapath::Datapath;
use metaroce_firmware::{Nic, NicConfig, QpConfig, QpTransition};

use crate::backend::{Backend, Control, DatapathStats, EventSink};
use crate::device::board::BoardInfo;
use crate::device::vfio::VfioDevice;
use crate::device::{Device, DeviceError, VfioUserDevice};
use crate::eventfd::EventFd;
use crate::hostmem::MemoryMap;
use firmware::{Firmware, Progress};
use metaroce_udp::PollSet;
use regs::{Blocks, Identity};
use timing::{DeviceTiming, ns_since};

/// Errors of the device backend. Every message says what to check.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Raw device access failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The device is not the MetaRoCE NIC this driver is built for.
    #[error("{0}")]
    Identity(String),
    /// The device broke the queue or table protocol.
    #[error("device protocol: {0}")]
    Protocol(String),
    /// Creating the progress thread or an eventfd failed.
    #[error("{0}: {1}")]
    Io(&'static str, #[source] std::io::Error),
}

/// How to run a device.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// The NIC's own IP address and UDP port (from the device process's board
    /// information, or the board's configuration).
    pub local: SocketAddr,
    /// The NIC's Ethernet address.
    pub mac: [u8; 6],
    /// The next hop's Ethernet address.
    pub peer_mac: [u8; 6],
    /// Largest payload per packet.
    pub mtu: u32,
    /// Line rate the engine shares among its senders (ACK rate hint), Mbit/s.
    pub line_rate_mbps: u32,
    /// Engine seed.
    pub seed: u64,
    /// Paths of a QP created without its own configuration. The default, 4, lets the 4
    /// QP entries of the hardware each have their paths in its 16 TX table slots.
    pub paths: u16,
    /// The engine's time is CLOCK_MONOTONIC (the device process's `now`); false: time
    /// since start (a board with its own free-running clock, until it is read).
    pub monotonic_clock: bool,
    /// Longest sleep between two polls of the rings.
    pub poll_interval: Duration,
}

impl DeviceConfig {
    /// A NIC at `local` with locally administered MAC addresses, MTU 4096 and a
    /// 1 Gbit/s line.
    pub fn new(local: SocketAddr) -> Self {
        DeviceConfig {
            local,
            mac: [0x02, 0x4D, 0x52, 0, 0, 1],
            peer_mac: [0x02, 0x4D, 0x52, 0, 0, 2],
            mtu: 4096,
            line_rate_mbps: 1000,
            seed: 1,
            paths: 4,
            monotonic_clock: true,
            poll_interval: Duration::from_millis(1),
        }
    }
}

impl DeviceConfig {
    /// The NIC a board's information describes: its bridged address and its MAC
    /// addresses.
    pub fn for_board(b: &BoardInfo) -> Self {
        DeviceConfig {
            mac: b.mac,
            peer_mac: b.peer_mac,
            ..DeviceConfig::new(b.addr)
        }
    }
}

/// Counters of the driver (not of the engine).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Descriptors posted (kind-0 TX queue entries).
    pub descriptors: u64,
    /// Entropy writes posted before a descriptor (kind-1 entries).
    pub entropy_writes: u64,
    /// Table words written (kind-1 TX queue entries).
    pub cfg_writes: u64,
    /// Firmware datagrams posted (firmware TX queue).
    pub firmware_frames: u64,
    /// Event ring entries read.
    pub events: u64,
    /// Placed packets with a payload.
    pub placed: u64,
    /// Other verdict events (duplicates, probes, and refusals, which the engine's drop
    /// counters also count by reason).
    pub other_events: u64,
    /// Datagrams from the firmware receive ring handed to the engine.
    pub fw_rx: u64,
    /// Firmware receive entries cut to the slot (not processed).
    pub fw_rx_truncated: u64,
    /// ACKs the device's ACK receiver applied (event type 2).
    pub hw_acks: u64,
    /// TX table operations posted (kind-2 TX queue entries).
    pub table_ops: u64,
    /// A QP or region the device's tables had no room for.
    pub table_full: u64,
    /// Device reports that make no sense, descriptors for another peer than the TX
    /// builder's, table operations without a slot.
    pub interface_errors: u64,
}

/// A device [`open_device`] opened, with its board information when it has some.
pub struct OpenedDevice {
    /// The device.
    pub device: Box<dyn Device>,
    /// What a simulated board says about itself (its address, MAC addresses); a real
    /// board has none (its address is configuration).
    pub board: Option<BoardInfo>,
}

/// Opens the device `spec` names: `vfio:BDF` (a board bound to `vfio-pci`, e.g.
/// `vfio:0000:01:00.0`) or the path of a vfio-user device process's socket.
pub fn open_device(spec: &str) -> Result<OpenedDevice, DriverError> {
    Ok(match spec.strip_prefix("vfio:") {
        Some(bdf) => OpenedDevice {
            device: Box::new(VfioDevice::open(bdf)?),
            board: None,
        },
        None => {
            let mut d = VfioUserDevice::connect(spec)?;
            let board = Some(d.board_info()?);
            OpenedDevice {
                device: Box::new(d),
                board,
            }
        }
    })
}

/// What the progress thread and control operations share.
struct Core {
    nic: Nic,
    memory: MemoryMap,
    fw: Firmware,
    /// The first error of the datapath (it stops).
    failed: Option<String>,
}

struct Shared {
    core: Mutex<Core>,
    started: Instant,
    sink: RwLock<Option<Arc<dyn EventSink>>>,
    stop: AtomicBool,
    closing: AtomicBool,
    wake: EventFd,
    irqs: Vec<EventFd>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn deliver(&self, core: &mut Core) {
        let sink = self.sink.read().unwrap_or_else(|p| p.into_inner());
        while let Some(ev) = core.fw.events.pop_front() {
            if let Some(s) = sink.as_ref() {
                s.deliver(ev);
            }
        }
    }

    /// Stops the datapath on a device error: records the first error, moves every QP
    /// to ERR so the engine flushes its outstanding work, delivers those completions
    /// and then the fatal event. Nothing touches the device any more.
    fn fail(&self, core: &mut Core, why: String) {
        if core.failed.is_some() {
            return;
        }
        let qpns: Vec<u32> = core.nic.qpns().collect();
        for qpn in qpns {
            // A QP already in ERR or RESET has nothing to flush.
            let _ = core.nic.modify_qp(qpn, QpTransition::Error);
        }
        self.flush_engine_events(core);
        if let Some(s) = self.sink.read().unwrap_or_else(|p| p.into_inner()).as_ref() {
            s.device_fatal(&why);
        }
        core.failed = Some(why);
    }

    /// Hands the engine's events to the application without the device (after a
    /// failure: the flushed completions of work posted since).
    fn flush_engine_events(&self, core: &mut Core) {
        while let Some(e) = core.nic.poll_event() {
            core.fw.events.push_back(e);
        }
        self.deliver(core);
    }
}

/// A MetaRoCE hardware NIC: the engine on the host CPU driving a [`Device`].
pub struct DeviceBackend {
    shared: Arc<Shared>,
    addr: SocketAddr,
    identity: Identity,
    describe: String,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for DeviceBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBackend")
            .field("device", &self.describe)
            .field("addr", &self.addr)
            .finish()
    }
}

impl DeviceBackend {
    /// Opens `spec` ([`open_device`]) and starts the driver on it. The NIC's own
    /// address and MAC addresses come from the board information when the device has
    /// some, else `local` must give the address; `adjust` sets the rest.
    pub fn open(
        spec: &str,
        local: Option<SocketAddr>,
        adjust: impl FnOnce(&mut DeviceConfig),
    ) -> Result<Arc<DeviceBackend>, DriverError> {
        let opened = open_device(spec)?;
        let mut cfg = match (&opened.board, local) {
            (Some(b), _) => DeviceConfig::for_board(b),
            (None, Some(addr)) => DeviceConfig::new(addr),
            (None, None) => {
                return Err(DriverError::Identity(format!(
                    "{spec} has no board information: give the NIC's own IP address and \
                     UDP port"
                )));
            }
        };
        adjust(&mut cfg);
        DeviceBackend::start(opened.device, cfg)
    }

    /// Resets the device, walks its register blocks, checks its identity, sets up
    /// the rings, tables and interrupts, and starts the progress thread.
    pub fn start(
        mut dev: Box<dyn Device>,
        cfg: DeviceConfig,
    ) -> Result<Arc<DeviceBackend>, DriverError> {
        let describe = dev.describe();
        dev.reset()?;
        let blocks = Blocks::discover(dev.as_mut())?;
        let identity = Identity::read(dev.as_mut(), &blocks)?;
        identity.check()?;
        // First light: the scratch register holds what it is given.
        let scratch = blocks.id + u32::from(codes::regs::id::SCRATCH);
        dev.write32(scratch, 0x4D52_0CE0)?;
        if dev.read32(scratch)? != 0x4D52_0CE0 {
            return Err(DriverError::Identity(format!(
                "{describe}: SCRATCH does not hold a written value (BAR0 writes lost?)"
            )));
        }
        let mut irqs = Vec::new();
        for _ in 0..=codes::regs::IRQ_TX {
            irqs.push(EventFd::new().map_err(|e| DriverError::Io("eventfd", e))?);
        }
        let refs: Vec<&EventFd> = irqs.iter().collect();
        // No interrupts: the thread polls.
        let irqs = match dev.enable_irqs(&refs) {
            Ok(()) => irqs,
            Err(_) => Vec::new(),
        };
        let nic = Nic::new(NicConfig {
            local_ip: cfg.local.ip(),
            udp_port: cfg.local.port(),
            mtu: cfg.mtu,
            line_rate_mbps: cfg.line_rate_mbps,
            seed: cfg.seed,
            qp: QpConfig {
                paths: cfg.paths,
                recv_window: codes::core::CONN_WINDOW,
                max_rd_atomic: codes::core::READS as u32,
                ..QpConfig::default()
            },
            datapath: Datapath::Hardware,
            ..NicConfig::default()
        });
        let addr = cfg.local;
        let poll = cfg.poll_interval;
        let fw = Firmware::start(dev, blocks, identity.tx_slots as usize, cfg)?;
        let shared = Arc::new(Shared {
            core: Mutex::new(Core {
                nic,
                memory: MemoryMap::default(),
                fw,
                failed: None,
            }),
            started: Instant::now(),
            sink: RwLock::new(None),
            stop: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            wake: EventFd::new().map_err(|e| DriverError::Io("eventfd", e))?,
            irqs,
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(format!("metaroce-device-{}", addr.port()))
            .spawn(move || progress(&worker, poll))
            .map_err(|e| DriverError::Io("spawn progress thread", e))?;
        Ok(Arc::new(DeviceBackend {
            shared,
            addr,
            identity,
            describe,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// What the device's `ID` block said.
    pub fn identity(&self) -> Identity {
        self.identity
    }

    /// The driver's counters.
    pub fn stats(&self) -> DriverStats {
        self.shared.lock().fw.stats
    }

    /// The datapath's first error, if it stopped on one.
    pub fn failure(&self) -> Option<String> {
        self.shared.lock().failed.clone()
    }

    /// Where the wall time went since the driver started (running totals; take two
    /// and [`DeviceTiming::since`] for a run): the driver's counters, and the device
    /// process's (read from its board information now) when it has some.
    pub fn timing(&self) -> Result<DeviceTiming, DriverError> {
        let mut core = self.shared.lock();
        let mut t = DeviceTiming {
            wall_ns: ns_since(self.shared.started),
            driver: core.fw.time,
            device: core.fw.dev.calls,
            ..DeviceTiming::default()
        };
        if let Some(b) = core.fw.dev.read_board_info()? {
            t.set_board(&b);
        }
        Ok(t)
    }
}

/// How long the progress thread waits for table results before it checks, with one
/// register read, that the device still answers.
const LIVENESS_PROBE: Duration = Duration::from_millis(100);

/// The progress thread: firmware rounds until stopped; sleeps on the interrupt and
/// wake-up eventfds (at most `poll` at a time) when a round found nothing.
fn progress(shared: &Shared, poll: Duration) {
    let mut set = PollSet::new();
    set.add(&shared.wake);
    for fd in &shared.irqs {
        set.add(fd);
    }
    let mut close_deadline: Option<Instant> = None;
    // Since when the thread has waited for table results without any arriving.
    let mut waiting_since: Option<Instant> = None;
    while !shared.stop.load(Ordering::SeqCst) {
        let closing = shared.closing.load(Ordering::SeqCst);
        let (progress, next_timer, done) = {
            let mut guard = shared.lock();
            let core = &mut *guard;
            if core.failed.is_some() {
                return;
            }
            let r = core.fw.round(&mut core.nic, &mut core.memory);
            let progress = match r {
                Ok(p) => p,
                Err(e) => {
                    shared.fail(core, e.to_string());
                    return;
                }
            };
            shared.deliver(core);
            // Reading the queues' CONS is a BAR round trip: only when closing.
            let drained = !closing || core.fw.drained().unwrap_or(true);
            (
                progress,
                core.nic.poll_timeout(),
                drained && core.nic.lingering_qps() == 0,
            )
        };
        if closing {
            let linger = Duration::from_millis(200);
            let deadline = *close_deadline.get_or_insert_with(|| Instant::now() + linger);
            if (done && progress == Progress::Idle) || Instant::now() >= deadline {
                return;
            }
        }
        if progress != Progress::Waiting {
            waiting_since = None;
        } else if waiting_since.get_or_insert_with(Instant::now).elapsed() >= LIVENESS_PROBE {
            // Results that do not come may mean the device is gone: one register
            // read tells (a live device answers it, however slow its results).
            waiting_since = Some(Instant::now());
            let mut core = shared.lock();
            if let Err(e) = core.fw.drained() {
                shared.fail(&mut core, format!("waiting for table results: {e}"));
                return;
            }
        }
        let wait = match progress {
            Progress::Busy => continue,
            // Table results come within model cycles: the event interrupt (or the
            // next poll, without interrupts) brings them.
            Progress::Waiting if shared.irqs.is_empty() => {
                std::thread::yield_now();
                continue;
            }
            Progress::Waiting => poll,
            Progress::Idle => {
                let now = crate::device::monotonic_ns();
                next_timer
                    .map_or(poll, |t| Duration::from_nanos(t.saturating_sub(now)))
                    .min(poll)
            }
        };
        let t = Instant::now();
        // A failed ppoll just ends the nap early.
        let _ = set.wait(Some(wait));
        shared.wake.drain();
        for fd in &shared.irqs {
            fd.drain();
        }
        let slept = ns_since(t);
        let mut core = shared.lock();
        match progress {
            Progress::Waiting => core.fw.time.wait_ns += slept,
            _ => core.fw.time.idle_ns += slept,
        }
    }
}

impl Backend for DeviceBackend {
    fn name(&self) -> &'static str {
        "device"
    }

    fn address(&self) -> SocketAddr {
        self.addr
    }

    fn control(&self, op: &mut dyn FnMut(Control<'_>)) {
        {
            let mut guard = self.shared.lock();
            let core = &mut *guard;
            let t = Instant::now();
            op(Control {
                nic: &mut core.nic,
                memory: &mut core.memory,
            });
            let ns = ns_since(t);
            core.fw.time.engine_ns += ns;
            core.fw.time.busy_ns += ns;
            if core.failed.is_some() {
                // The device is gone: the engine's answers (flushed completions of
                // work posted since) reach the application without it.
                self.shared.flush_engine_events(core);
            } else {
                let r = core
                    .fw
                    .follow_engine(&mut core.nic)
                    .and_then(|()| core.fw.doorbells());
                match r {
                    Ok(()) => self.shared.deliver(core),
                    Err(e) => self.shared.fail(core, e.to_string()),
                }
            }
        }
        self.shared.wake.signal();
    }

    fn set_event_sink(&self, sink: Arc<dyn EventSink>) {
        *self.shared.sink.write().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    fn datapath_stats(&self) -> DatapathStats {
        let s = self.stats();
        DatapathStats {
            tx_datagrams: s.descriptors + s.firmware_frames,
            rx_datagrams: s.placed + s.other_events + s.fw_rx,
            ..DatapathStats::default()
        }
    }

    /// Stops the progress thread once what is queued went to the device and no
    /// destroyed QP lingers (at most 200 ms), then resets the device.
    fn shutdown(&self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        self.shared.wake.signal();
        let t = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = t {
            // A panicked progress thread has nothing left to clean up.
            let _ = t.join();
            // Quiesce the device: no more DMA into memory about to be freed.
            let _ = self.shared.lock().fw.dev.reset();
        }
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

impl Drop for DeviceBackend {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codes::regs;
    use regs_tests::FakeBar;

    use super::regs::tests as regs_tests;

    fn local() -> SocketAddr {
        "127.0.0.1:4791".parse().expect("address")
    }

    #[test]
    fn bring_up_programs_the_rings_and_the_port() {
        let bar = FakeBar::with_rings();
        let be = DeviceBackend::start(Box::new(bar), DeviceConfig::new(local())).expect("start");
        assert_eq!(be.name(), "device");
        assert_eq!(be.identity().data_width, 64);
        let mut core = be.shared.lock();
        assert!(core.failed.is_none(), "{:?}", core.failed);
        let dev = &mut core.fw.dev;
        let cfg = FakeBar::base(regs::cfg::TYPE);
        assert_eq!(
            dev.read32(cfg + u32::from(regs::cfg::ETH_PORT)).unwrap(),
            4791
        );
        for ty in [
            regs::txq::TYPE,
            regs::ftq::TYPE,
            regs::evq::TYPE,
            regs::frq::TYPE,
        ] {
            let b = FakeBar::base(ty);
            assert_eq!(
                dev.read32(b + u32::from(regs::txq::CTRL)).unwrap(),
                1,
                "{ty:#x}"
            );
            let base = u64::from(dev.read32(b + u32::from(regs::txq::BASE_LO)).unwrap())
                | u64::from(dev.read32(b + u32::from(regs::txq::BASE_HI)).unwrap()) << 32;
            let log2 = dev.read32(b + u32::from(regs::txq::SIZE_LOG2)).unwrap();
            let bytes = 1u64 << (log2 + dev.read32(b + u32::from(regs::txq::ENTRY_LOG2)).unwrap());
            assert!(base != 0 && base % bytes == 0, "ring {ty:#x} at {base:#x}");
        }
        // Three table words at bring-up (MTU, local address), in the TX queue.
        let txq = FakeBar::base(regs::txq::TYPE);
        assert_eq!(dev.read32(txq + u32::from(regs::txq::PROD)).unwrap(), 3);
        assert_eq!(core.fw.stats.cfg_writes, 3);
        drop(core);
        be.shutdown();
    }

    #[test]
    fn bring_up_refuses_a_foreign_register_map() {
        let mut bar = FakeBar::with_rings();
        bar.set(0, regs::id::MAP_VERSION, regs::MAP_VERSION + 1);
        let e = DeviceBackend::start(Box::new(bar), DeviceConfig::new(local()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("register map version"), "{e}");
    }

    #[test]
    fn open_device_names_what_it_cannot_open() {
        let e = open_device("/nonexistent/nic.sock")
            .err()
            .expect("no socket")
            .to_string();
        assert!(
            e.contains("no vfio-user device at /nonexistent/nic.sock"),
            "{e}"
        );
        let e = open_device("vfio:0000:ff:1f.7")
            .err()
            .expect("no board")
            .to_string();
        assert!(e.contains("no PCI device at 0000:ff:1f.7"), "{e}");
    }
}
