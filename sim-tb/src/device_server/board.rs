//! The board: the Verilated `NicDevice64` clocked continuously on its own thread, its
//! host-side ports served from the client's mapped memory and its MAC port bridged to
//! UDP. Requests from the socket (BAR accesses, DMA maps, interrupt routing, reset)
//! arrive over a channel, in order, and are applied between cycles.
//!
//! Per cycle: at most one BAR access (a read's value is sent back when the model
//! answers, [`BAR_READ_LATENCY`] cycles later); DMA read requests are always taken and
//! answered in request order, beat by beat, with the bytes read from the client's
//! memory when the first beat goes out (an unmapped IOVA reads as zeros and counts in
//! `dma_unmapped_reads`); DMA write beats are always taken and applied as they come,
//! so the host sees them in issue order (a beat touching an unmapped IOVA writes
//! nothing and its request counts once in `dma_unmapped_writes`); an interrupt request
//! is taken at once and signals its vector's eventfd; frames from the MAC TX port go
//! to the UDP bridge, and received datagrams are fed to the MAC RX port. `now` is
//! `CLOCK_MONOTONIC` in nanoseconds, the host's own time base.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::time::Instant;

use metaroce_driver::device::board::{BoardCounter, MODEL_NS_SAMPLE};
use metaroce_driver::device::monotonic_ns;
use vm_memory::MmapRegion;

use super::ServeError;
use super::dma::{DmaMaps, Refusal};
use crate::device_port::{BAR_READ_LATENCY, DevicePorts, LANES};
use crate::udp_bridge::{BridgeConfig, UdpBridge};
use crate::{Model, Sim};

/// Cycles between two polls of the UDP socket.
const RX_POLL_CYCLES: u64 = 256;
/// Cycles between two updates of the shared cycle counter.
const PUBLISH_CYCLES: u64 = 1024;
/// DMA read requests the board holds before it stops taking more.
const MAX_READS: usize = 32;
/// Received frames the board holds before it stops polling the socket (the
/// kernel's socket buffer holds the rest, and drops past it as a full link would).
const MAX_RX_FRAMES: usize = 256;

/// The device process's counters, shared by the board thread and the socket side.
#[derive(Debug)]
pub(crate) struct Counters([AtomicU64; BoardCounter::ALL.len()]);

impl Default for Counters {
    fn default() -> Self {
        Counters(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl Counters {
    /// Adds `n` to counter `c`.
    pub(crate) fn add(&self, c: BoardCounter, n: u64) {
        self.0[c.index()].fetch_add(n, Ordering::Relaxed);
    }

    /// Sets counter `c`.
    fn set(&self, c: BoardCounter, v: u64) {
        self.0[c.index()].store(v, Ordering::Relaxed);
    }

    /// Counter `c`.
    pub(crate) fn get(&self, c: BoardCounter) -> u64 {
        self.0[c.index()].load(Ordering::Relaxed)
    }

    /// Every counter, in board-information order.
    pub(crate) fn snapshot(&self) -> Vec<u64> {
        BoardCounter::ALL.iter().map(|&c| self.get(c)).collect()
    }
}

/// A request from the socket side.
pub(crate) enum Request {
    /// A BAR0 write (posted).
    BarWrite { addr: u16, value: u32 },
    /// A BAR0 read; the value goes back on `reply`.
    BarRead { addr: u16, reply: Sender<u32> },
    /// A checked mapping of client memory at `iova`.
    Map {
        iova: u64,
        mem: MmapRegion,
        reply: Sender<Result<(), Refusal>>,
    },
    /// Removes the map at `iova` of `len` bytes (all maps if `len` is `None`); replies
    /// whether there was one.
    Unmap {
        iova: u64,
        len: Option<u64>,
        reply: Sender<bool>,
    },
    /// Routes vectors `start..start + fds.len()` to the eventfds (`None`: unrouted).
    SetIrqs {
        start: usize,
        fds: Vec<Option<File>>,
    },
    /// Resets the model (maps and interrupt routing stay).
    Reset { reply: Sender<()> },
}

/// How the board is set up.
#[derive(Clone, Debug)]
pub(crate) struct BoardConfig {
    pub(crate) bridge: BridgeConfig,
    pub(crate) vectors: usize,
}

/// A DMA read request in flight.
struct ReadReq {
    addr: u64,
    len: usize,
    tag: u8,
    data: Option<Vec<u8>>,
    sent: usize,
}

/// The board thread's state.
struct Board {
    sim: Sim,
    p: DevicePorts,
    bridge: UdpBridge,
    counters: Arc<Counters>,
    maps: DmaMaps,
    irq_fds: Vec<Option<File>>,
    bar_reads: VecDeque<(u64, Sender<u32>)>,
    reads: VecDeque<ReadReq>,
    /// The completion beat on the port: (bytes, last, tag).
    cpl: Option<([u8; LANES], usize, bool, u8)>,
    /// The DMA write in progress: (address, length, bytes done, refused).
    write: Option<(u64, usize, usize, bool)>,
    rx_frames: VecDeque<Vec<u8>>,
    rx_off: usize,
    tx_cur: Vec<u8>,
    polled: Vec<Vec<u8>>,
    cycle: u64,
    /// Cycles in which a port moved something.
    busy_cycles: u64,
    /// Nanoseconds in `eval` and `tick` of the timed cycles (one in
    /// [`MODEL_NS_SAMPLE`]).
    sampled_ns: u64,
}

/// Starts the board thread: binds the bridge, builds and resets the model, and clocks
/// it until `requests` closes or `stop` is set. Returns the bridge's address once it runs.
pub(crate) fn start(
    cfg: BoardConfig,
    counters: Arc<Counters>,
    requests: Receiver<Request>,
    stop: Arc<AtomicBool>,
) -> Result<(SocketAddr, std::thread::JoinHandle<()>), ServeError> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("metaroce-board".into())
        .spawn(move || {
            let board = Board::new(&cfg, counters);
            match board {
                Ok(mut b) => {
                    let _ = ready_tx.send(Ok(b.bridge.local_addr()));
                    b.run(&requests, &stop);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            }
        })
        .map_err(|e| ServeError::Board(format!("spawning the board thread: {e}")))?;
    match ready_rx.recv() {
        Ok(Ok(addr)) => Ok((addr, handle)),
        Ok(Err(e)) => {
            let _ = handle.join();
            Err(e)
        }
        Err(_) => Err(ServeError::Board(
            "the board thread died while starting".into(),
        )),
    }
}

impl Board {
    fn new(cfg: &BoardConfig, counters: Arc<Counters>) -> Result<Self, ServeError> {
        let bridge = UdpBridge::bind(cfg.bridge.clone()).map_err(|e| {
            ServeError::Board(format!(
                "binding the MAC port's UDP socket {}: {e}",
                cfg.bridge.local
            ))
        })?;
        let mut sim = Sim::new(Model::NicDevice64).map_err(ServeError::Model)?;
        let p = DevicePorts::new(&sim).map_err(ServeError::Model)?;
        sim.reset().map_err(ServeError::Model)?;
        Ok(Board {
            sim,
            p,
            bridge,
            counters,
            maps: DmaMaps::default(),
            irq_fds: (0..cfg.vectors).map(|_| None).collect(),
            bar_reads: VecDeque::new(),
            reads: VecDeque::new(),
            cpl: None,
            write: None,
            rx_frames: VecDeque::new(),
            rx_off: 0,
            tx_cur: Vec::new(),
            polled: Vec::new(),
            cycle: 0,
            busy_cycles: 0,
            sampled_ns: 0,
        })
    }

    fn run(&mut self, requests: &Receiver<Request>, stop: &AtomicBool) {
        loop {
            if self.cycle % PUBLISH_CYCLES == 0 && stop.load(Ordering::Relaxed) {
                self.publish();
                return;
            }
            let mut bar = None;
            loop {
                match requests.try_recv() {
                    Ok(Request::BarWrite { addr, value }) => {
                        bar = Some((addr, Some(value), None));
                        break;
                    }
                    Ok(Request::BarRead { addr, reply }) => {
                        bar = Some((addr, None, Some(reply)));
                        break;
                    }
                    Ok(r) => self.control(r),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        self.publish();
                        return;
                    }
                }
            }
            self.step(bar);
        }
    }

    /// A request that takes no cycle of the BAR port.
    fn control(&mut self, r: Request) {
        match r {
            Request::Map { iova, mem, reply } => {
                let _ = reply.send(self.maps.insert(iova, mem));
            }
            Request::Unmap { iova, len, reply } => {
                let found = match len {
                    Some(len) => self.maps.remove(iova, len),
                    None => {
                        let any = self.maps.len() > 0;
                        self.maps.clear();
                        any
                    }
                };
                let _ = reply.send(found);
            }
            Request::SetIrqs { start, fds } => {
                for (i, fd) in fds.into_iter().enumerate() {
                    if let Some(slot) = self.irq_fds.get_mut(start + i) {
                        *slot = fd;
                    }
                }
            }
            Request::Reset { reply } => {
                // Whatever was in flight belongs to the old state.
                self.reads.clear();
                self.cpl = None;
                self.write = None;
                self.tx_cur.clear();
                self.rx_off = 0;
                self.bar_reads.clear();
                let _ = self.sim.reset();
                self.counters.add(BoardCounter::Resets, 1);
                let _ = reply.send(());
            }
            Request::BarWrite { .. } | Request::BarRead { .. } => {
                unreachable!("BAR requests are taken by `run`")
            }
        }
    }

    fn publish(&mut self) {
        self.counters.set(BoardCounter::Cycles, self.cycle);
        self.counters
            .set(BoardCounter::BusyCycles, self.busy_cycles);
        self.counters
            .set(BoardCounter::ModelNs, self.sampled_ns * MODEL_NS_SAMPLE);
        let b = self.bridge.counters();
        self.counters.set(
            BoardCounter::FramesDropped,
            b.non_udp_frames + b.bad_checksums + b.wrong_source + b.bind_failures + b.send_errors,
        );
    }

    /// One clock cycle with at most one BAR access: drive every input port,
    /// evaluate, take this cycle's handshakes, then the clock edge.
    fn step(&mut self, bar: Option<(u16, Option<u32>, Option<Sender<u32>>)>) {
        if self.cycle % PUBLISH_CYCLES == 0 {
            self.publish();
        }
        if self.rx_frames.len() < MAX_RX_FRAMES && self.cycle % RX_POLL_CYCLES == 0 {
            self.bridge.poll_frames(&mut self.polled);
            let n = self.polled.len();
            self.rx_frames.extend(self.polled.drain(..));
            self.counters.add(BoardCounter::FramesIn, n as u64);
        }
        self.sim.set(self.p.now, monotonic_ns());
        let bar_access = bar.is_some();
        self.drive_bar(bar);
        let rx_valid = self.drive_mac_rx();
        self.drive_completion();
        let take_reads = self.reads.len() < MAX_READS;
        let (p, sim) = (&self.p, &mut self.sim);
        p.tx.set_ready(sim, true);
        sim.set(p.dmar_ready, take_reads.into());
        p.dmaw.set_ready(sim, true);
        sim.set(p.irq_ready, 1);
        let timed = self.cycle % MODEL_NS_SAMPLE == 0;
        let t = timed.then(Instant::now);
        sim.eval();
        let mut eval_ns = t.map_or(0, |t| t.elapsed().as_nanos() as u64);
        let busy = bar_access
            || rx_valid
            || self.cpl.is_some()
            || p.tx.valid(sim)
            || sim.get(p.dmar_valid) == 1
            || p.dmaw.valid(sim)
            || sim.get(p.irq_valid) == 1;

        self.take_bar_read();
        if rx_valid {
            self.take_mac_rx();
        }
        let frame_done = self.take_mac_tx();
        if take_reads {
            self.take_read_request();
        }
        if self.cpl.is_some() && self.p.dmac.ready(&mut self.sim) {
            self.cpl = None;
        }
        self.take_dma_write();
        self.take_irq();
        let t = timed.then(Instant::now);
        self.sim.tick();
        if let Some(t) = t {
            eval_ns += t.elapsed().as_nanos() as u64;
            self.sampled_ns += eval_ns;
        }
        self.busy_cycles += u64::from(busy);
        self.cycle += 1;
        if let Some(f) = frame_done {
            self.bridge.send_frame(&f);
            self.counters.add(BoardCounter::FramesOut, 1);
        }
    }

    /// The BAR port: a write, or a read whose reply waits [`BAR_READ_LATENCY`].
    fn drive_bar(&mut self, bar: Option<(u16, Option<u32>, Option<Sender<u32>>)>) {
        let (mut wv, mut wa, mut wd, mut rv, mut ra) = (0, 0, 0, 0, 0);
        if let Some((addr, value, reply)) = bar {
            match (value, reply) {
                (Some(v), _) => (wv, wa, wd) = (1, addr, v),
                (None, Some(reply)) => {
                    (rv, ra) = (1, addr);
                    self.bar_reads
                        .push_back((self.cycle + BAR_READ_LATENCY, reply));
                }
                (None, None) => {}
            }
        }
        let (p, sim) = (&self.p, &mut self.sim);
        sim.set(p.bar_wr_valid, wv);
        sim.set(p.bar_wr_addr, wa.into());
        sim.set(p.bar_wr_data, wd.into());
        sim.set(p.bar_rd_valid, rv);
        sim.set(p.bar_rd_addr, ra.into());
    }

    /// MAC RX: the next beat of the oldest frame; whether there is one.
    fn drive_mac_rx(&mut self) -> bool {
        let (p, sim) = (&self.p, &mut self.sim);
        match self.rx_frames.front() {
            Some(f) => {
                let end = (self.rx_off + LANES).min(f.len());
                p.rx.offer(sim, &f[self.rx_off..end], end - self.rx_off, end == f.len());
                true
            }
            None => {
                p.rx.idle(sim);
                false
            }
        }
    }

    /// Read completions, in request order: the current beat, or the next one
    /// read from the mapped memory (zeros, counted, where nothing is mapped).
    fn drive_completion(&mut self) {
        if self.cpl.is_none() {
            if let Some(r) = self.reads.front_mut() {
                let data = r.data.get_or_insert_with(|| {
                    let mut d = vec![0u8; r.len];
                    if !self.maps.read(r.addr, &mut d) {
                        d.fill(0);
                        self.counters.add(BoardCounter::DmaUnmappedReads, 1);
                    }
                    d
                });
                let n = (r.len - r.sent).min(LANES);
                let mut beat = [0u8; LANES];
                beat[..n].copy_from_slice(&data[r.sent..r.sent + n]);
                r.sent += n;
                let last = r.sent >= r.len;
                self.cpl = Some((beat, n, last, r.tag));
                if last {
                    self.reads.pop_front();
                }
            }
        }
        let (p, sim) = (&self.p, &mut self.sim);
        match &self.cpl {
            Some((beat, n, last, tag)) => {
                p.dmac.offer(sim, &beat[..*n], *n, *last);
                sim.set(p.dmac_tag, (*tag).into());
            }
            None => p.dmac.idle(sim),
        }
    }

    /// A BAR read's answer goes to the oldest waiting reader.
    fn take_bar_read(&mut self) {
        if self.sim.get(self.p.bar_rd_resp_valid) == 1 {
            let v = self.sim.get(self.p.bar_rd_resp_data) as u32;
            if let Some((_, reply)) = self.bar_reads.pop_front() {
                let _ = reply.send(v);
            }
        }
    }

    /// MAC RX beat taken: on to the next beat, or the next frame.
    fn take_mac_rx(&mut self) {
        if self.p.rx.ready(&mut self.sim) {
            self.rx_off += LANES;
            if self
                .rx_frames
                .front()
                .is_some_and(|f| self.rx_off >= f.len())
            {
                self.rx_frames.pop_front();
                self.rx_off = 0;
            }
        }
    }

    /// MAC TX beat (always taken); the whole frame after its last beat.
    fn take_mac_tx(&mut self) -> Option<Vec<u8>> {
        let last = self.p.tx.take(&mut self.sim, &mut self.tx_cur)?;
        last.then(|| std::mem::take(&mut self.tx_cur))
    }

    /// A DMA read request, queued for its completions.
    fn take_read_request(&mut self) {
        let (p, sim) = (&self.p, &mut self.sim);
        if sim.get(p.dmar_valid) == 1 {
            self.reads.push_back(ReadReq {
                addr: sim.get(p.dmar_addr),
                // The contract says at least one byte; a zero would never complete.
                len: (sim.get(p.dmar_len) as usize).max(1),
                tag: sim.get(p.dmar_tag) as u8,
                data: None,
                sent: 0,
            });
        }
    }

    /// A DMA write beat into the mapped memory (a write reaching unmapped
    /// memory is counted once and its bytes dropped).
    fn take_dma_write(&mut self) {
        let (p, sim) = (&self.p, &mut self.sim);
        let mut beat = [0u8; LANES];
        let Some((n, last)) = p.dmaw.read_beat(sim, &mut beat) else {
            return;
        };
        if sim.get(p.dmaw_first) == 1 || self.write.is_none() {
            self.write = Some((sim.get(p.dmaw_addr), sim.get(p.dmaw_len) as usize, 0, false));
        }
        if let Some((addr, _len, done, refused)) = self.write.as_mut() {
            let at = addr.wrapping_add(*done as u64);
            if !self.maps.write(at, &beat[..n]) && !*refused {
                *refused = true;
                self.counters.add(BoardCounter::DmaUnmappedWrites, 1);
            }
            *done += n;
        }
        if last {
            self.write = None;
        }
    }

    /// An interrupt request, signalled on its vector's eventfd.
    fn take_irq(&mut self) {
        if self.sim.get(self.p.irq_valid) != 1 {
            return;
        }
        let v = self.sim.get(self.p.irq_vector) as usize;
        match self.irq_fds.get_mut(v).and_then(Option::as_mut) {
            Some(fd) => {
                let _ = fd.write(&1u64.to_ne_bytes());
                self.counters.add(BoardCounter::Interrupts, 1);
            }
            None => self.counters.add(BoardCounter::InterruptsUnrouted, 1),
        }
    }
}
