//! Verilator co-simulation of the MetaRoCE RTL.
//!
//! `build.rs` emits each `metaroce-hdl` module's Verilog, Verilates it and
//! compiles it with a small C++ shim. [`Sim`] is the safe, generic handle to
//! one model (ports by name, values as integers or little-endian bytes,
//! clocking, reset, VCD); per-module drivers ([`rx_parser::RxParserTb`],
//! [`rx_core::RxCoreTb`]) sit on top, and the reference checks
//! ([`rx_check`] against `metaroce-proto`, [`core_check`] against the
//! engine, also through the Ethernet front end as `NicRx`) on top of those;
//! [`rx_path`] drives the path tracker against the engine's ACKs,
//! [`rx_eth`] the Ethernet/IP/UDP front end against `etherparse` and
//! [`tx_path`] the per-path TX table against the engine's `TxPath`. On the
//! transmit side, [`tx_build::TxBuildTb`] drives the frame builder
//! (descriptors in, a host-memory model behind its fetch port, frames out)
//! and [`tx_check`] compares its frames with the engine's datagrams.
//! [`nic_core`] runs both checks at once through the NIC top. [`wire`] is
//! a seeded simulated Ethernet fabric (ECMP paths, delay, jitter, loss,
//! duplication, ECN marking) to join two NICs; [`udp_bridge`] joins one
//! NIC to real UDP sockets instead (a soft NIC, the relay). [`traffic`] is
//! the verified Verbs traffic both hardware harnesses run between two NICs
//! ([`hw_pair`]: two hardware NICs on a [`wire`]; `metaroce hdl interop`: a
//! hardware NIC and a soft NIC). [`device_server`] serves the device top
//! (`NicDevice`) over vfio-user as a device process. The `unsafe` code is in
//! the private `ffi` module, plus two system calls of the device process
//! (`clock_gettime`, the memfd seal check).
//!
//! Without Verilator installed the crate does not build, unless
//! `METAROCE_SKIP_VERILATOR=1` opts out: then [`Sim::new`] returns
//! [`SimError::VerilatorMissing`] and benches skip with its message, as they do for
//! a model `METAROCE_SIM_ONLY` leaves out ([`SimError::is_absent`]).

#[cfg(verilator)]
mod ffi;
#[cfg(not(verilator))]
#[path = "ffi_missing.rs"]
mod ffi;

pub mod ack_rx;
pub mod axis;
pub mod compliance_target;
pub mod core_check;
mod device_port;
pub mod device_server;
pub mod frame;
pub mod hw_nic;
pub mod hw_pair;
pub mod nic_core;
pub mod nic_device;
pub mod rx_check;
pub mod rx_core;
pub mod rx_eth;
pub mod rx_parser;
pub mod rx_path;
pub mod traffic;
pub mod tx_build;
pub mod tx_check;
pub mod tx_path;
pub mod udp_bridge;
pub mod wire;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The Verilated models this crate builds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Model {
    /// `metaroce_hdl::RxParser64`: 64-bit beats.
    RxParser64,
    /// `metaroce_hdl::RxParser512`: 512-bit beats.
    RxParser512,
    /// `metaroce_hdl::RxCore<64, 8>`: parser, ICRC, tables, placement.
    RxCore64,
    /// `metaroce_hdl::RxCore<512, 64>`.
    RxCore512,
    /// `metaroce_hdl::rx_path_verilog(8)`: per-path receive tracker, 8 paths.
    RxPath8,
    /// `metaroce_hdl::tx_path_verilog(16)`: per-path TX table, 16 slots.
    TxPath16,
    /// `metaroce_hdl::RxEth64`: Ethernet/IP/UDP front end, 64-bit beats.
    RxEth64,
    /// `metaroce_hdl::RxEth512`.
    RxEth512,
    /// `metaroce_hdl::NicRx<64, 8>`: front end then receive core.
    NicRx64,
    /// `metaroce_hdl::TxBuild<64, 8>`: TX frame builder.
    TxBuild64,
    /// `metaroce_hdl::TxBuild<512, 64>`.
    TxBuild512,
    /// `metaroce_hdl::NicCore<64, 8>`: the NIC top (receive side, ACK
    /// framer, TX builder, MAC arbiter, TX table).
    NicCore64,
    /// `metaroce_hdl::NicDevice<64, 8>`: the host interface (BAR0, queues
    /// in host memory, DMA, interrupts) around `NicCore`.
    NicDevice64,
}

/// Why a simulation could not be set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The crate was built on a machine without Verilator.
    VerilatorMissing,
    /// The model was left out of this build by `METAROCE_SIM_ONLY`.
    NotBuilt(Model),
    /// The model has no port of this name.
    NoSuchPort(String),
    /// The VCD file could not be opened.
    Trace(PathBuf),
}

impl SimError {
    /// True when the model is absent from this build (no Verilator, or left out by
    /// `METAROCE_SIM_ONLY`): benches skip instead of failing.
    pub fn is_absent(&self) -> bool {
        matches!(self, Self::VerilatorMissing | Self::NotBuilt(_))
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::VerilatorMissing => write!(f, "Verilator not found: apt-get install verilator"),
            Self::NotBuilt(m) => write!(f, "{m:?} not built: METAROCE_SIM_ONLY leaves it out"),
            Self::NoSuchPort(p) => write!(f, "no port named {p}"),
            Self::Trace(p) => write!(f, "cannot open VCD file {}", p.display()),
        }
    }
}

impl std::error::Error for SimError {}

/// A resolved port of a [`Sim`]: look it up once with [`Sim::port`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Port {
    id: usize,
    bits: usize,
}

impl Port {
    /// Width in bits.
    pub fn bits(&self) -> usize {
        self.bits
    }
}

/// One Verilated model instance.
pub struct Sim {
    handle: ffi::Handle,
    words: Vec<u32>,
    cycles: u64,
    /// Evaluated since the last input write and the last tick.
    settled: bool,
}

impl Sim {
    /// A fresh instance of `model` (registers at their initial values; call
    /// [`Sim::reset`] before use).
    pub fn new(model: Model) -> Result<Self, SimError> {
        let handle = ffi::Handle::new(model)?;
        let max_words = handle
            .ports()
            .iter()
            .map(|&(_, bits)| ffi::words_for(bits))
            .max()
            .unwrap_or(1);
        Ok(Self {
            handle,
            words: vec![0; max_words],
            cycles: 0,
            settled: false,
        })
    }

    /// The port called `name` (the rust-hdl field name).
    pub fn port(&self, name: &str) -> Result<Port, SimError> {
        self.handle
            .ports()
            .iter()
            .position(|&(n, _)| n == name)
            .map(|id| Port {
                id,
                bits: self.handle.ports()[id].1,
            })
            .ok_or_else(|| SimError::NoSuchPort(name.to_owned()))
    }

    /// Drives a port of at most 64 bits.
    ///
    /// # Panics
    /// If the port is wider than 64 bits or `value` does not fit in it.
    #[inline]
    pub fn set(&mut self, port: Port, value: u64) {
        assert!(port.bits <= 64, "use set_bytes for wide ports");
        assert!(
            port.bits == 64 || value >> port.bits == 0,
            "value {value:#x} does not fit {} bits",
            port.bits
        );
        self.settled = false;
        self.handle.set_u64(port.id, value);
    }

    /// Drives a port from little-endian bytes (byte 0 = bits 7..0, i.e.
    /// AXI-Stream lane order); missing bytes are zero.
    ///
    /// # Panics
    /// If more bytes are given than the port holds.
    #[inline]
    pub fn set_bytes(&mut self, port: Port, bytes: &[u8]) {
        let n = ffi::words_for(port.bits);
        assert!(
            bytes.len() <= 4 * n,
            "{} bytes for a {}-bit port",
            bytes.len(),
            port.bits
        );
        self.settled = false;
        if port.bits <= 64 {
            let mut le = [0u8; 8];
            le[..bytes.len()].copy_from_slice(bytes);
            self.handle.set_u64(port.id, u64::from_le_bytes(le));
            return;
        }
        self.words[..n].fill(0);
        for (w, chunk) in self.words.iter_mut().zip(bytes.chunks(4)) {
            let mut le = [0u8; 4];
            le[..chunk.len()].copy_from_slice(chunk);
            *w = u32::from_le_bytes(le);
        }
        self.handle.set_words(port.id, &self.words);
    }

    /// Reads a port of at most 64 bits.
    ///
    /// # Panics
    /// If the port is wider than 64 bits.
    #[inline]
    pub fn get(&mut self, port: Port) -> u64 {
        assert!(port.bits <= 64, "use get_bytes for wide ports");
        self.handle.get_u64(port.id)
    }

    /// Reads a port as little-endian bytes into `out` (up to its length).
    #[inline]
    pub fn get_bytes(&mut self, port: Port, out: &mut [u8]) {
        let n = ffi::words_for(port.bits);
        let take = out.len().min(4 * n);
        if port.bits <= 64 {
            // Byte by byte: a copy of a run-time length would be a call.
            let le = self.handle.get_u64(port.id).to_le_bytes();
            for (o, b) in out[..take].iter_mut().zip(le) {
                *o = b;
            }
            return;
        }
        self.handle.get_words(port.id, &mut self.words);
        for (i, b) in out[..take].iter_mut().enumerate() {
            *b = self.words[i / 4].to_le_bytes()[i % 4];
        }
    }

    /// Settles combinational logic after inputs changed.
    pub fn eval(&mut self) {
        self.handle.eval();
        self.settled = true;
    }

    /// One clock cycle (`clock` low then high); registers take their inputs.
    pub fn tick(&mut self) {
        self.handle.tick(self.settled);
        self.settled = false;
        self.cycles += 1;
    }

    /// Clock cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Holds the model's `rst` port high for two cycles, then low.
    pub fn reset(&mut self) -> Result<(), SimError> {
        let rst = self.port("rst")?;
        self.set(rst, 1);
        self.tick();
        self.tick();
        self.set(rst, 0);
        self.eval();
        Ok(())
    }

    /// Dumps every later cycle to a VCD file at `path`.
    pub fn trace(&mut self, path: &Path) -> Result<(), SimError> {
        self.handle.trace_open(path)
    }
}

/// Test helper: prints the first 20 of `mismatches` and panics with their
/// count if there are any; `what` names the run.
pub fn assert_no_mismatches(what: &str, mismatches: &[String]) {
    for m in mismatches.iter().take(20) {
        eprintln!("  {m}");
    }
    assert!(
        mismatches.is_empty(),
        "{what}: {} mismatches",
        mismatches.len()
    );
}

/// Measures the time a simulation run takes: the calling thread's CPU time
/// where Linux reports it (`/proc/thread-self/schedstat`), else wall-clock
/// time. The benches' `sim_secs`, and so the speeds they report, use it: on
/// a machine shared with other jobs the figure is the simulator's own, not
/// how long the thread waited for a core.
pub struct SimTimer {
    wall: Instant,
    cpu_ns: Option<u64>,
}

impl SimTimer {
    /// Starts measuring.
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu_ns: thread_cpu_ns(),
        }
    }

    /// Seconds since [`SimTimer::start`] (CPU time if it was available at
    /// both ends).
    pub fn secs(&self) -> f64 {
        match (self.cpu_ns, thread_cpu_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e9,
            _ => self.wall.elapsed().as_secs_f64(),
        }
    }
}

/// CPU time of the calling thread in nanoseconds (Linux).
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
