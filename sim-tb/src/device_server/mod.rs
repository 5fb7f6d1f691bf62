//! The simulated board as a device process: the Verilated `NicDevice64` served over
//! **vfio-user** (rust-vmm's `vfio_user::Server`) on a Unix socket, its MAC port
//! bridged to a UDP socket (`docs/device.md`).
//!
//! * Regions ([`metaroce_driver::device::board`]): BAR0 (the register blocks, one
//!   aligned 32-bit word per access), the read-only board information (the MAC port's
//!   address, the device process's counters), the MSI-X BAR and PCI configuration
//!   space (`pci`).
//! * The model runs free on its own thread (`board`); socket requests reach it over a
//!   channel, in order. Its DMA is served from the memory the client mapped (`dma`).
//! * Interrupts: the MSI-X index, one vector per device vector, signalled on the
//!   client's eventfds.
//! * One client at a time (`Server::run` serves one connection); when it leaves, its DMA
//!   maps and interrupt routes are dropped and the model is reset, and the next
//!   connection is accepted.
//!
//! **Hostile input.** The crate parses the messages; this module guards it:
//! every region access, map, unmap and interrupt request is checked here (refused with
//! an error reply and counted); messages the crate itself refuses (unknown or
//! unsupported commands, bad region or interrupt indices) are counted through the
//! crate's `log` records; and a message that makes the crate panic (it does, on a
//! `VERSION` message whose size is shorter than its header or whose capability string
//! has no NUL: `vfio_user` 0.1.7 subtracts and unwraps) is caught per connection: the
//! connection is closed, counted, and the next one accepted.

pub(crate) mod board;
pub(crate) mod dma;
pub(crate) mod pci;

use std::cell::Cell;
use std::fs::File;
use std::io;
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use metaroce_driver::device::board::{self as layout, BoardCounter, BoardInfo};
use vfio_user::{DmaMapFlags, DmaUnmapFlags, Server, ServerBackend};

use crate::udp_bridge::BridgeConfig;
use board::{BoardConfig, Counters, Request};

/// BAR0's size: the register map's (`metaroce_hdl::host_if::regs::BAR_BYTES`).
pub const BAR0_BYTES: u32 = metaroce_hdl::host_if::regs::BAR_BYTES;
/// Interrupt vectors of the device (`ID.IRQ_VECTORS`).
pub const VECTORS: u32 = 3;
/// Wake-up connections `DeviceServer::stop` makes (5 ms apart) before it leaves a
/// serving thread behind.
const SHUTDOWN_TRIES: usize = 100;
/// How long a BAR read waits for the model before it is answered with an error.
const BAR_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How a device process is set up.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The Unix socket to listen on (must not exist, or be a stale socket).
    pub socket: PathBuf,
    /// The MAC port's UDP address (port 0: the kernel picks one).
    pub udp: SocketAddr,
    /// The NIC's Ethernet address.
    pub mac: [u8; 6],
    /// The next hop's Ethernet address.
    pub peer_mac: [u8; 6],
    /// Print each refused request on stderr.
    pub verbose: bool,
}

impl ServerConfig {
    /// A device on `socket` bridged to `udp`, with locally administered MAC addresses.
    pub fn new(socket: impl Into<PathBuf>, udp: SocketAddr) -> Self {
        ServerConfig {
            socket: socket.into(),
            udp,
            mac: [0x02, 0x4D, 0x52, 0x00, 0x00, 0x01],
            peer_mac: [0x02, 0x4D, 0x52, 0x00, 0x00, 0xFE],
            verbose: false,
        }
    }
}

/// Why a device process could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Another device process answers on the socket.
    #[error("{0} is in use by a running device process")]
    SocketInUse(PathBuf),
    /// The socket could not be set up.
    #[error("cannot listen on {0}: {1}")]
    Socket(PathBuf, String),
    /// The Verilated model could not be set up (`SimError::VerilatorMissing` on a
    /// machine without Verilator).
    #[error("the Verilated NicDevice64: {0}")]
    Model(#[source] crate::SimError),
    /// The UDP bridge or a thread could not be set up.
    #[error("{0}")]
    Board(String),
}

/// A running device process (see the module docs); [`DeviceServer::stop`] or drop ends
/// it and removes the socket.
pub struct DeviceServer {
    socket: PathBuf,
    udp: SocketAddr,
    info: BoardInfo,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    serve: Option<JoinHandle<()>>,
    board: Option<JoinHandle<()>>,
}

impl DeviceServer {
    /// Binds the socket and the UDP port, starts the model and serves clients on a
    /// thread of its own.
    pub fn start(cfg: ServerConfig) -> Result<Self, ServeError> {
        install_log_counter();
        remove_stale_socket(&cfg.socket)?;
        let server = Server::new(
            &cfg.socket,
            true,
            pci::irqs(VECTORS),
            pci::regions(BAR0_BYTES),
        )
        .map_err(|e| ServeError::Socket(cfg.socket.clone(), e.to_string()))?;
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let bridge = BridgeConfig {
            mac: cfg.mac,
            peer_mac: cfg.peer_mac,
            local: cfg.udp,
        };
        let (udp, board) = board::start(
            BoardConfig {
                bridge,
                vectors: VECTORS as usize,
            },
            counters.clone(),
            rx,
            stop.clone(),
        )?;
        let info = BoardInfo {
            addr: udp,
            mac: cfg.mac,
            peer_mac: cfg.peer_mac,
            counters: Vec::new(),
        };
        let backend = Backend {
            tx,
            counters: counters.clone(),
            info: info.clone(),
            config: pci::ConfigSpace::new(BAR0_BYTES, VECTORS),
            verbose: cfg.verbose,
        };
        let stop2 = stop.clone();
        let serve = std::thread::Builder::new()
            .name("metaroce-vfio-user".into())
            .spawn(move || serve(server, backend, &stop2))
            .map_err(|e| ServeError::Board(format!("spawning the server thread: {e}")))?;
        Ok(DeviceServer {
            socket: cfg.socket,
            udp,
            info,
            counters,
            stop,
            serve: Some(serve),
            board: Some(board),
        })
    }

    /// The Unix socket it listens on.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The MAC port's UDP address (the NIC's own address).
    pub fn udp_addr(&self) -> SocketAddr {
        self.udp
    }

    /// The board information with the counters now (what region 2 reads).
    pub fn board_info(&self) -> BoardInfo {
        BoardInfo {
            counters: self.counters.snapshot(),
            ..self.info.clone()
        }
    }

    /// Stops serving (the current client is cut off), stops the model and removes the
    /// socket; returns the final board information.
    pub fn stop(mut self) -> BoardInfo {
        self.shutdown();
        self.board_info()
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(board) = self.board.take() {
            let _ = board.join();
        }
        if let Some(serve) = self.serve.take() {
            // Wake the accept so the loop sees the flag: a connection of our own,
            // closed at once. A client still connected keeps the serving thread in its
            // read until it leaves (the crate owns that stream): the thread is then
            // left behind, its requests failing, and the socket removed here.
            for _ in 0..SHUTDOWN_TRIES {
                if serve.is_finished() {
                    break;
                }
                let _ = UnixStream::connect(&self.socket);
                std::thread::sleep(Duration::from_millis(5));
            }
            if serve.is_finished() {
                let _ = serve.join();
            }
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for DeviceServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Whether `fd` is an eventfd (what its `/proc/self/fd` link says).
fn is_eventfd(fd: &File) -> bool {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .is_ok_and(|l| l.as_os_str() == "anon_inode:[eventfd]")
}

/// A socket file left by a process that died: removed. A live one is an error.
fn remove_stale_socket(path: &Path) -> Result<(), ServeError> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        return Err(ServeError::Socket(
            path.to_path_buf(),
            "the path exists and is not a socket".into(),
        ));
    }
    if UnixStream::connect(path).is_ok() {
        return Err(ServeError::SocketInUse(path.to_path_buf()));
    }
    std::fs::remove_file(path).map_err(|e| ServeError::Socket(path.to_path_buf(), e.to_string()))
}

/// The accept loop: one connection at a time, each guarded against panics in the
/// protocol code; between connections the device is put back to its reset state.
fn serve(server: Server, mut backend: Backend, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| server.run(&mut backend)));
        backend.fold_protocol_errors();
        if stop.load(Ordering::SeqCst) {
            break;
        }
        backend.counters.add(BoardCounter::Connections, 1);
        match result {
            Ok(Ok(())) => {}
            Ok(Err(vfio_user::Error::SocketAccept(e))) => {
                backend.log(&format!("accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(50));
            }
            // The stream broke mid-message (the client died or sent a message shorter
            // than it said): the connection is over.
            Ok(Err(e)) => backend.log(&format!("connection ended: {e}")),
            Err(_) => {
                backend.counters.add(BoardCounter::BadMessages, 1);
                backend.log("a message made the protocol code panic: connection closed");
            }
        }
        backend.forget_client();
    }
}

thread_local! {
    /// Messages the crate refused on this thread (its `log` error records), not yet
    /// added to a server's counters.
    static PROTOCOL_ERRORS: Cell<u64> = const { Cell::new(0) };
}

/// Counts the crate's error records (each is a refused message and its error reply).
struct LogCounter;

impl log::Log for LogCounter {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Error && m.target().starts_with("vfio_user")
    }

    fn log(&self, r: &log::Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        // A backend refusal is counted by the backend itself.
        if r.args().to_string().contains("Error from backend") {
            return;
        }
        PROTOCOL_ERRORS.with(|c| c.set(c.get() + 1));
    }

    fn flush(&self) {}
}

static LOG_COUNTER: LogCounter = LogCounter;

/// Installs the record counter as the process's logger (once; if the process has
/// another logger, the crate's refusals go uncounted).
fn install_log_counter() {
    if log::set_logger(&LOG_COUNTER).is_ok() {
        log::set_max_level(log::LevelFilter::Error);
    }
}

/// The socket side: checks every request and hands it to the board.
struct Backend {
    tx: Sender<Request>,
    counters: Arc<Counters>,
    info: BoardInfo,
    config: pci::ConfigSpace,
    verbose: bool,
}

impl Backend {
    fn log(&self, msg: &str) {
        if self.verbose {
            eprintln!("metaroce device: {msg}");
        }
    }

    /// Counts `c` and makes the error the client gets.
    fn refuse(&self, c: BoardCounter, msg: String) -> io::Error {
        self.counters.add(c, 1);
        self.log(&msg);
        io::Error::new(io::ErrorKind::InvalidInput, msg)
    }

    fn fold_protocol_errors(&self) {
        let n = PROTOCOL_ERRORS.with(|c| c.replace(0));
        self.counters.add(BoardCounter::BadMessages, n);
    }

    fn send(&self, r: Request) -> io::Result<()> {
        self.tx
            .send(r)
            .map_err(|_| io::Error::other("the board thread has stopped"))
    }

    /// A BAR0 access of `len` bytes at `offset`, checked: the BAR address.
    fn bar_addr(&self, offset: u64, len: usize, write: bool) -> io::Result<u16> {
        if len == 4 && offset % 4 == 0 && offset < u64::from(BAR0_BYTES) {
            return Ok(offset as u16);
        }
        Err(self.refuse(
            BoardCounter::BadRegionAccesses,
            format!(
                "BAR0 {} of {len} bytes at {offset:#x}: one aligned 32-bit word inside {BAR0_BYTES:#x} bytes only",
                if write { "write" } else { "read" }
            ),
        ))
    }

    /// `[offset, offset + len)` inside a region of `size` bytes, checked.
    fn in_region(&self, region: u32, offset: u64, len: usize, size: u32) -> io::Result<usize> {
        match offset.checked_add(len as u64) {
            Some(end) if len > 0 && end <= u64::from(size) => Ok(offset as usize),
            _ => Err(self.refuse(
                BoardCounter::BadRegionAccesses,
                format!("region {region}: {len} bytes at {offset:#x} outside its {size} bytes"),
            )),
        }
    }

    /// The client left: its maps and interrupt routes go, and the model is reset.
    fn forget_client(&mut self) {
        let (reply, done) = mpsc::channel();
        let _ = self.send(Request::Unmap {
            iova: 0,
            len: None,
            reply,
        });
        let _ = done.recv();
        let _ = self.send(Request::SetIrqs {
            start: 0,
            fds: (0..VECTORS).map(|_| None).collect(),
        });
        let (reply, done) = mpsc::channel();
        let _ = self.send(Request::Reset { reply });
        let _ = done.recv();
        self.config = pci::ConfigSpace::new(BAR0_BYTES, VECTORS);
    }
}

impl ServerBackend for Backend {
    fn region_read(&mut self, region: u32, offset: u64, data: &mut [u8]) -> io::Result<()> {
        match region {
            layout::REGION_BAR0 => {
                let t = Instant::now();
                let addr = self.bar_addr(offset, data.len(), false)?;
                let (reply, value) = mpsc::channel();
                self.send(Request::BarRead { addr, reply })?;
                let v = value
                    .recv_timeout(BAR_READ_TIMEOUT)
                    .map_err(|_| io::Error::other("the model did not answer the BAR read"))?;
                data.copy_from_slice(&v.to_le_bytes());
                self.counters
                    .add(BoardCounter::SocketNs, t.elapsed().as_nanos() as u64);
                Ok(())
            }
            layout::REGION_BOARD_INFO => {
                let at = self.in_region(region, offset, data.len(), layout::BOARD_INFO_BYTES)?;
                self.fold_protocol_errors();
                let bytes = BoardInfo {
                    counters: self.counters.snapshot(),
                    ..self.info.clone()
                }
                .encode();
                data.copy_from_slice(&bytes[at..at + data.len()]);
                Ok(())
            }
            layout::REGION_MSIX => {
                // The table is the VMM's to emulate; the device keeps none.
                self.in_region(region, offset, data.len(), pci::MSIX_BYTES)?;
                data.fill(0);
                Ok(())
            }
            layout::REGION_CONFIG => {
                if self.config.read(offset, data) {
                    Ok(())
                } else {
                    Err(self.refuse(
                        BoardCounter::BadRegionAccesses,
                        format!("config space read of {} bytes at {offset:#x}", data.len()),
                    ))
                }
            }
            _ => Err(self.refuse(
                BoardCounter::BadRegionAccesses,
                format!("read of region {region}, which is empty"),
            )),
        }
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> io::Result<()> {
        match region {
            layout::REGION_BAR0 => {
                let t = Instant::now();
                let addr = self.bar_addr(offset, data.len(), true)?;
                let value = u32::from_le_bytes(data.try_into().expect("4 bytes, checked"));
                let r = self.send(Request::BarWrite { addr, value });
                self.counters
                    .add(BoardCounter::SocketNs, t.elapsed().as_nanos() as u64);
                r
            }
            layout::REGION_MSIX => {
                self.in_region(region, offset, data.len(), pci::MSIX_BYTES)?;
                Ok(())
            }
            layout::REGION_CONFIG => {
                if self.config.write(offset, data) {
                    Ok(())
                } else {
                    Err(self.refuse(
                        BoardCounter::BadRegionAccesses,
                        format!("config space write of {} bytes at {offset:#x}", data.len()),
                    ))
                }
            }
            _ => Err(self.refuse(
                BoardCounter::BadRegionAccesses,
                format!("write to region {region}, which is read-only or empty"),
            )),
        }
    }

    fn dma_map(
        &mut self,
        _flags: DmaMapFlags,
        offset: u64,
        address: u64,
        size: u64,
        fd: Option<File>,
    ) -> io::Result<()> {
        let refused =
            |msg: String| format!("DMA map of {size:#x} bytes at IOVA {address:#x}: {msg}");
        let Some(fd) = fd else {
            return Err(self.refuse(
                BoardCounter::DmaMapsRefused,
                refused(
                    "no file descriptor (DMA_READ/DMA_WRITE messages are not supported)".into(),
                ),
            ));
        };
        let mem = dma::map_file(fd, offset, size)
            .map_err(|e| self.refuse(BoardCounter::DmaMapsRefused, refused(e)))?;
        let (reply, done) = mpsc::channel();
        self.send(Request::Map {
            iova: address,
            mem,
            reply,
        })?;
        match done.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.refuse(BoardCounter::DmaMapsRefused, refused(e))),
            Err(_) => Err(io::Error::other("the board thread has stopped")),
        }
    }

    fn dma_unmap(&mut self, flags: DmaUnmapFlags, address: u64, size: u64) -> io::Result<()> {
        let all = flags.contains(DmaUnmapFlags::UNMAP_ALL);
        let (reply, done) = mpsc::channel();
        self.send(Request::Unmap {
            iova: address,
            len: (!all).then_some(size),
            reply,
        })?;
        match done.recv() {
            Ok(true) => Ok(()),
            Ok(false) if all => Ok(()),
            Ok(false) => Err(self.refuse(
                BoardCounter::BadMessages,
                format!("DMA unmap of {size:#x} bytes at {address:#x}: no such map"),
            )),
            Err(_) => Err(io::Error::other("the board thread has stopped")),
        }
    }

    fn reset(&mut self) -> io::Result<()> {
        let (reply, done) = mpsc::channel();
        self.send(Request::Reset { reply })?;
        done.recv()
            .map_err(|_| io::Error::other("the board thread has stopped"))
    }

    fn set_irqs(
        &mut self,
        index: u32,
        flags: u32,
        start: u32,
        count: u32,
        fds: Vec<File>,
    ) -> io::Result<()> {
        let trigger = flags & layout::IRQ_SET_ACTION_TRIGGER != 0;
        let none = flags & layout::IRQ_SET_DATA_NONE != 0;
        let eventfd = flags & layout::IRQ_SET_DATA_EVENTFD != 0;
        if trigger && none && count == 0 && fds.is_empty() {
            // Disables the index.
            if index == layout::IRQ_INDEX_MSIX {
                self.send(Request::SetIrqs {
                    start: 0,
                    fds: (0..VECTORS).map(|_| None).collect(),
                })?;
            }
            return Ok(());
        }
        let fits = start.checked_add(count).is_some_and(|end| end <= VECTORS);
        if index != layout::IRQ_INDEX_MSIX
            || !trigger
            || !eventfd
            || !fits
            || fds.len() != count as usize
        {
            return Err(self.refuse(
                BoardCounter::BadMessages,
                format!(
                    "SET_IRQS index {index} flags {flags:#x} vectors {start}+{count} with {} fds: only MSI-X eventfd triggers for vectors 0..{VECTORS}",
                    fds.len()
                ),
            ));
        }
        if let Some(i) = fds.iter().position(|fd| !is_eventfd(fd)) {
            // The board writes 8 bytes to a vector's fd per interrupt: into a pipe
            // nobody reads it would block (and stop the model) once the pipe is full.
            return Err(self.refuse(
                BoardCounter::BadMessages,
                format!(
                    "SET_IRQS vector {}: the fd is not an eventfd",
                    start as usize + i
                ),
            ));
        }
        self.send(Request::SetIrqs {
            start: start as usize,
            fds: fds.into_iter().map(Some).collect(),
        })
    }
}
